//! TPC-C (TPC Benchmark C, revision 5.11): schema, random rules, loader, the five transactions,
//! the mixes and the consistency checks, run by every protocol through the `Workload` trait
//! ([`Tpcc`]; `txbench run --workload tpcc`).
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
//!   slots for inserts, mix, options), [`TpccLayout`] (key -> record-id arithmetic) and the two
//!   ordered indexes with their key encodings.
//! - [`customer_index`]: CUSTOMER by last name, a static structure built at load time.
//! - [`mod@load`]: the loader (4.3.3.1), parallel over districts, stock ranges and item ranges,
//!   deterministic for a seed; it also fills the indexes; [`memory`] reports bytes per warehouse.
//! - [`request`]: each transaction's input (2.4.1 .. 2.8.1), drawn by the worker.
//! - `txns/`: New-Order, Payment, Order-Status, Delivery, Stock-Level, one file each.
//! - `workload.rs`: [`Tpcc`], the `Workload` impl.
//! - `rebuild.rs`: what a database recovered from a log needs besides its rows before it runs
//!   transactions (the indexes' entries, NEW-ORDER's retired slots, the HISTORY counters).
//! - [`consistency`]: the consistency conditions 3.3.2.1-12 on a quiescent database
//!   ([`check_consistency`]; 11 in a form that also holds after Deliveries), run by `--check`
//!   after a run and by the tests.
//!
//! # Where rows live, and which accesses need an index
//!
//! Keys are dense, so a key maps to its record by arithmetic ([`TpccLayout`]), including the
//! rows New-Order and Payment insert (ORDER, NEW-ORDER and ORDER-LINE slots belong to an order
//! id; HISTORY slots are handed out per district). Only two accesses search:
//!
//! - Delivery's oldest undelivered order of a district: the ordered index NEW-ORDER by
//!   (w, d, o), `scan_first`, then the row is deleted and its entry removed after commit;
//! - Order-Status's latest order of a customer: the ordered index ORDER by (w, d, c, o),
//!   `scan_last`.
//!
//! Both go through [`Txn`](crate::txn::Txn)'s phantom-safe scans (see `txn/index_ops.rs`: every
//! scanned entry's record is read through the protocol up to the first present entry after the
//! range, and inserts and deletes write the records after their key), so every protocol protects
//! them with its own record-level concurrency control. Each district has a sentinel entry at the
//! end of its range in both indexes, so a New-Order's insert at the tail of its district writes
//! the district's sentinel rather than the next district's oldest order. Stock-Level's 20 recent
//! orders and their lines are found by arithmetic from D_NEXT_O_ID, which the transaction reads,
//! so they need no scan. CUSTOMER by last name never changes during a run.
//!
//! Tables are preallocated ([`TpccConfig::spare_orders_per_district`]); a run that uses up a
//! district's slots makes the affected transactions do nothing (user aborts) and the report
//! carries a warning.

pub mod consistency;
pub mod customer_index;
mod declare;
pub mod load;
pub mod mix;
pub mod random;
mod rebuild;
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
