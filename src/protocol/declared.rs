//! Declared access sets: what a transaction will read and write, stated before it runs.
//!
//! Deterministic protocols (Ord-Lock, DecentSched, C-Sched, Calvin) schedule a transaction from
//! its access set before its program runs, then let the program read and write in place without
//! further concurrency control. The workload states the set
//! ([`Workload::declare`](crate::workload::Workload::declare)) into an [`AccessSet`]; the
//! transaction handle resolves it to records ([`DeclaredRecord`]: one entry per record, in the
//! global record order, a record both read and written declared once as written) and hands the
//! resolved list to [`DeclaredSet::schedule`](super::parts::DeclaredSet::schedule) before the program's first
//! operation.
//!
//! # Covers
//!
//! Some accesses cannot be named before the program runs but are protected by a declared write
//! all the same: TPC-C New-Order inserts rows in slots named by the order id it takes from its
//! district row, and every access to those slots in the NP mix is by a transaction that writes
//! that district row. A *cover* states such a range of records ([`AccessSet::cover`]): the
//! protocol does not schedule it, and in check mode an access inside it is allowed. A workload
//! that declares a cover promises that every transaction touching the range declares a write of
//! the covering record (the workload's docs say why the promise holds).
//!
//! # Check mode
//!
//! With a declared set in force, the handle checks every access against it (a read needs the
//! record declared or covered, a write needs it declared written or covered) and panics naming
//! the access otherwise: a deterministic protocol reads in place without a lock, so an undeclared
//! access would be a silent race, and the program that makes it is a workload bug.

use crate::ids::{RecordId, TableId};
use crate::storage::Record;
use std::ops::Range;

/// How a transaction accesses a declared record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessMode {
    /// Only reads it.
    Read,
    /// Writes it (a read of it too, if any).
    Write,
}

impl AccessMode {
    /// Whether two accesses of one record by two transactions conflict (one of them writes).
    #[inline]
    pub fn conflicts_with(self, other: AccessMode) -> bool {
        self == AccessMode::Write || other == AccessMode::Write
    }
}

/// One declared access: a record of a table, read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeclaredAccess {
    /// The table.
    pub table: TableId,
    /// The record.
    pub rid: RecordId,
    /// Read or write.
    pub mode: AccessMode,
}

/// A range of records whose accesses a declared write covers (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cover {
    /// The table.
    pub table: TableId,
    /// The record ids covered.
    pub rids: Range<u64>,
}

/// A transaction's declared access set, as the workload states it (duplicates allowed: the
/// handle merges them). Reused across transactions: no allocation once warm.
#[derive(Debug, Clone, Default)]
pub struct AccessSet {
    accesses: Vec<DeclaredAccess>,
    covers: Vec<Cover>,
}

impl AccessSet {
    /// Empties the set for the next transaction.
    pub fn clear(&mut self) {
        self.accesses.clear();
        self.covers.clear();
    }

    /// Declares a read of `(table, rid)`.
    #[inline]
    pub fn read(&mut self, table: TableId, rid: RecordId) {
        self.push(table, rid, AccessMode::Read);
    }

    /// Declares a write (or read-modify-write) of `(table, rid)`.
    #[inline]
    pub fn write(&mut self, table: TableId, rid: RecordId) {
        self.push(table, rid, AccessMode::Write);
    }

    /// Declares an access of `(table, rid)` in `mode`.
    #[inline]
    pub fn push(&mut self, table: TableId, rid: RecordId, mode: AccessMode) {
        self.accesses.push(DeclaredAccess { table, rid, mode });
    }

    /// States that the records `rids` of `table` are covered by a write declared in this set
    /// (module docs): the caller must also declare that write.
    pub fn cover(&mut self, table: TableId, rids: Range<u64>) {
        self.covers.push(Cover { table, rids });
    }

    /// The declared accesses, as stated.
    pub fn accesses(&self) -> &[DeclaredAccess] {
        &self.accesses
    }

    /// The covered ranges.
    pub fn covers(&self) -> &[Cover] {
        &self.covers
    }

    /// Whether an access of `(table, rid)` that writes (`write`) or only reads is allowed: the
    /// record is declared in a mode that permits it, or covered.
    pub fn permits(&self, table: TableId, rid: RecordId, write: bool) -> bool {
        self.accesses
            .iter()
            .any(|a| a.table == table && a.rid == rid && (!write || a.mode == AccessMode::Write))
            || self
                .covers
                .iter()
                .any(|c| c.table == table && c.rids.contains(&rid.0))
    }
}

/// One record of a resolved declared set: the record, and whether the transaction writes it.
pub struct DeclaredRecord<'db, M> {
    /// The record.
    pub record: Record<'db, M>,
    /// Write if any declared access of it writes.
    pub mode: AccessMode,
    /// The table (for hashing and diagnostics).
    pub table: TableId,
}

impl<M> Clone for DeclaredRecord<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for DeclaredRecord<'_, M> {}

impl<M> DeclaredRecord<'_, M> {
    /// A key naming the record across tables, stable for the run (its address).
    #[inline]
    pub fn key(&self) -> usize {
        self.record.order_key()
    }
}

/// Sorts `records` by the global record order and merges duplicates (a record read and written
/// becomes written), in place.
pub fn merge_declared<M>(records: &mut Vec<DeclaredRecord<'_, M>>) {
    records.sort_unstable_by_key(|r| (r.key(), std::cmp::Reverse(r.mode)));
    // After the sort, the first entry of each record carries its strongest mode.
    records.dedup_by_key(|r| r.key());
}

/// Test helper for the deterministic protocols' unit tests: the merged declared set of records
/// `ids` (with their modes) of `table`, as table 0.
#[cfg(test)]
pub(crate) fn declared_records<'a, M>(
    table: &'a crate::storage::Table<M>,
    ids: &[(u64, AccessMode)],
) -> Vec<DeclaredRecord<'a, M>> {
    let mut v: Vec<_> = ids
        .iter()
        .map(|&(i, mode)| DeclaredRecord {
            record: table.get(RecordId(i)).expect("test record in range"),
            mode,
            table: TableId(0),
        })
        .collect();
    merge_declared(&mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Table, TableSpec};

    #[test]
    fn merging_keeps_one_entry_per_record_and_the_write() {
        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 4,
            payload_bytes: 8,
        });
        let rec = |i, mode| DeclaredRecord {
            record: t.get(RecordId(i)).unwrap(),
            mode,
            table: TableId(0),
        };
        let mut v = vec![
            rec(3, AccessMode::Read),
            rec(1, AccessMode::Read),
            rec(3, AccessMode::Write),
            rec(1, AccessMode::Read),
            rec(0, AccessMode::Write),
        ];
        merge_declared(&mut v);
        let got: Vec<_> = v.iter().map(|r| (r.record.rid.0, r.mode)).collect();
        assert_eq!(
            got,
            [
                (0, AccessMode::Write),
                (1, AccessMode::Read),
                (3, AccessMode::Write)
            ]
        );
    }

    #[test]
    fn permits_follows_modes_and_covers() {
        let mut s = AccessSet::default();
        s.read(TableId(0), RecordId(1));
        s.write(TableId(0), RecordId(2));
        s.cover(TableId(1), 10..20);
        assert!(s.permits(TableId(0), RecordId(1), false));
        assert!(!s.permits(TableId(0), RecordId(1), true));
        assert!(s.permits(TableId(0), RecordId(2), true));
        assert!(!s.permits(TableId(0), RecordId(3), false));
        assert!(s.permits(TableId(1), RecordId(19), true));
        assert!(!s.permits(TableId(1), RecordId(20), false));
        assert!(!s.permits(TableId(0), RecordId(15), false));
        s.clear();
        assert!(!s.permits(TableId(0), RecordId(2), false));
    }
}
