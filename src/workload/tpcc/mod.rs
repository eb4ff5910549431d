//! TPC-C (TPC Benchmark C, revision 5.11): the schema, the random rules, the loader and the
//! consistency checks; the transactions come next.
//!
//! # Layout
//!
//! - [`rows`]: the nine tables' rows with every field of clause 1.3, encoded to fixed-size
//!   payloads (fixed offsets, little-endian numbers, zero-padded text at the spec's max width).
//! - [`random`]: NURand with its C-Load / C-Run constants (2.1.6), a-strings, n-strings, zip
//!   codes, "ORIGINAL" data, last names from syllables (4.3.2).
//! - [`mix`]: the five transaction types ([`TxnType`]), the mixes that draw them ([`TpccMix`]:
//!   `full`, `np`, custom lists), Stock-Level's isolation and the home-warehouse binding.
//! - [`schema`]: table ids, cardinalities (1.2, 4.3.3.1), [`TpccConfig`] (warehouses, spare order
//!   slots for inserts) and [`TpccLayout`], the key -> record-id arithmetic for every table.
//!   Fixed composite keys (warehouse, district, customer, stock, item) and the insert tables'
//!   keys (order, new-order, order-line, history) map to records densely, so point lookups need
//!   no index structure at all.
//! - [`customer_index`]: CUSTOMER by last name, a static structure built at load time.
//! - [`load`]: the loader (4.3.3.1), parallel over districts, stock ranges and item ranges,
//!   deterministic for a seed; [`memory`] reports bytes per warehouse.
//! - [`consistency`]: the consistency conditions 3.3.2.1-7 on a quiescent database
//!   ([`check_consistency`]), run after a run or after loading.
//!
//! The general-purpose concurrent hash index is [`crate::index::HashIndex`]; TPC-C's own keys do
//! not need it (above), but workloads with sparse keys do.
//!
//! # Still to come (issue 4)
//!
//! 1. An ordered index shared by all protocols, with range scans, inserts and deletes and phantom
//!    protection (leaf versions or key-range locks): ORDER by (w, d, c, o) for Order-Status,
//!    NEW-ORDER oldest per district for Delivery, ORDER-LINE ranges for Stock-Level.
//! 2. Inserts and deletes in the `Protocol` trait (a slot's visibility decided by the protocol;
//!    today a slot is vacant when its first 8 bytes are zero, [`crate::storage::is_vacant`]).
//! 3. The five transactions (New-Order, Payment, Order-Status, Delivery, Stock-Level), the full
//!    and no-Payment (np) mixes, the `Workload` impl (holding [`LoadedTpcc`] and C-Run constants
//!    from [`NuRandConstants::for_run`]), CLI flags (`--workload tpcc --warehouses N
//!    --mix full|np`) with validation before loading, per-type reports; calling
//!    [`check_consistency`] after a run.

pub mod consistency;
pub mod customer_index;
pub mod load;
pub mod mix;
pub mod random;
pub mod request;
pub mod rows;
pub mod schema;
mod txns;
mod workload;

pub use consistency::{ConsistencyReport, check_consistency};
pub use customer_index::CustomersByLastName;
pub use load::{LoadParams, LoadedTpcc, TpccMemory, create_and_load, load, memory};
pub use mix::{MixError, StockLevelIsolation, TXN_NAMES, TpccMix, TxnType, WarehouseBinding};
pub use random::NuRandConstants;
pub use schema::{MAX_WAREHOUSES, TpccConfig, TpccLayout, spare_orders_for};
pub use workload::Tpcc;

#[cfg(test)]
mod tests;
