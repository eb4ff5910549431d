//! Ordered indexes owned by the database, next to the tables whose records they point at.
//!
//! A workload declares its indexes ([`IndexSpec`]: a name and the table the index's record ids
//! belong to); the database creates them empty with the tables, the workload's loader fills them,
//! and transactions reach them only through [`Txn`](crate::txn::Txn)'s index operations, which
//! make index changes transactional (see `txn/index_ops.rs`). Like tables, indexes are shared by
//! every protocol: no protocol builds its own access method.

use super::TableId;
use crate::index::OrderedIndex;

/// An index's position in the database (the order of [`Database::with_indexes`]' specs).
///
/// [`Database::with_indexes`]: super::Database::with_indexes
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexId(pub u32);

/// Declares an ordered index over one table.
#[derive(Debug, Clone)]
pub struct IndexSpec {
    /// Name for reports.
    pub name: String,
    /// The table every record id in the index belongs to.
    pub table: TableId,
    /// The index key of a (present) row of `table`. An entry counts as present only when its
    /// row is present and has the entry's key: a slot may be refilled with a row of another key
    /// while an entry of an aborted insert still points at it (TPC-C: an aborted New-Order's
    /// (customer, order) entry, whose order slot the next New-Order fills for another customer).
    pub key_of: fn(&[u8]) -> u64,
}

/// Key of the end sentinel every index must hold: a present record at `u64::MAX`, so that every
/// range has a present entry after it (the "next key" a scan reads to protect the gap after its
/// range, see `txn/index_ops.rs`). Workloads use keys below it.
pub const END_SENTINEL_KEY: u64 = u64::MAX;

/// An ordered index and the table its entries point into.
pub struct TableIndex {
    /// What the workload declared.
    pub spec: IndexSpec,
    /// The key -> record id map (shared by all workers).
    pub map: OrderedIndex,
}

impl TableIndex {
    /// An empty index for `spec`.
    pub fn new(spec: IndexSpec) -> Self {
        TableIndex {
            spec,
            map: OrderedIndex::new(),
        }
    }
}
