//! History capture for the serializability checker.
//!
//! In check mode every table carries a version stamp after each row (`storage::stamp`): the
//! writer's transaction id, the version's seq in the record's history, and a checksum of the row.
//! The transaction handle (`txn`) reports, for every read, the writer of the version it saw
//! (checking the row against the stamp's checksum), and for every write the seq that the shared
//! install path gave it. Neither workloads nor protocols take part: versions are identified by the
//! data, and ordered by the install path while the protocol holds the record.
//!
//! Each worker keeps a [`WorkerHistory`]: its committed transactions and their operations, in
//! flat vectors, [`HIST_OP_BYTES`] per operation. An attempt's operations are staged in the `Txn`
//! and appended only on commit. A history has an operation budget; once a commit would exceed it,
//! recording stops for that worker (and the check covers a prefix of the run, see
//! [`WorkerHistory::stopped_at`]).

/// Bytes one recorded operation takes ([`HistOp`]).
pub const HIST_OP_BYTES: usize = std::mem::size_of::<HistOp>();

/// Bytes one committed transaction takes besides its operations.
pub const HIST_TXN_BYTES: usize = std::mem::size_of::<CommittedTxn>();

/// Bytes a checked run plans per recorded operation (`--check-limit`'s unit in the memory
/// estimate): the history's [`HIST_OP_BYTES`], the vectors' growth slack, its share of the
/// transaction records, and the checker's working set (flattened reads and writes, edges, the
/// graph), measured at about 90 bytes per operation on YCSB (docs/RESULTS.md).
pub const CHECK_BYTES_PER_OP: usize = 128;

/// A version of one record: who wrote it, and its position in the record's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    /// Transaction id of the writer; [`Version::INITIAL_WRITER`] for the loaded version.
    pub writer: u64,
    /// Number of versions before this one (the loaded version is 0).
    pub seq: u64,
}

impl Version {
    /// Writer id of the version the loader created.
    pub const INITIAL_WRITER: u64 = 0;

    /// Seq of a write whose install was not recorded (a protocol that installs outside the
    /// shared install path without reporting it).
    pub const UNKNOWN_SEQ: u64 = u64::MAX;
}

/// What kind of operation a [`HistOp`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Read a version whose row matched its stamp; the op's word is the version's writer.
    Read,
    /// Wrote a version; the op's word is its seq.
    Write,
    /// Read a copy whose row does not match its stamp (part of one version, part of another);
    /// the word is the writer the stamp named.
    TornRead,
    /// Read a version that never went through the install path (its seq still said
    /// "uninstalled": an intermediate or in-place write); the word is its writer.
    UninstalledRead,
}

/// One operation of a committed transaction, packed into two words: the record's history key
/// with the kind in its top two bits, and the writer (reads) or seq (writes).
///
/// ```text
///  key_kind: | kind (2) | table (14) | record id (48) |      word: writer or seq (64)
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct HistOp {
    key_kind: u64,
    word: u64,
}

const KIND_SHIFT: u32 = 62;
const KEY_MASK: u64 = (1 << KIND_SHIFT) - 1;

impl HistOp {
    fn new(kind: OpKind, key: u64, word: u64) -> HistOp {
        debug_assert!(key <= KEY_MASK, "history keys use 62 bits");
        let kind = match kind {
            OpKind::Read => 0,
            OpKind::Write => 1,
            OpKind::TornRead => 2,
            OpKind::UninstalledRead => 3,
        };
        HistOp {
            key_kind: (kind << KIND_SHIFT) | key,
            word,
        }
    }

    /// A read of the version of `key` written by `writer` (0: the loaded version).
    pub fn read(key: u64, writer: u64) -> HistOp {
        HistOp::new(OpKind::Read, key, writer)
    }

    /// A write of `key`'s version `seq` ([`Version::UNKNOWN_SEQ`] until its install is known).
    pub fn write(key: u64, seq: u64) -> HistOp {
        HistOp::new(OpKind::Write, key, seq)
    }

    /// A read of `key` whose copy did not match its stamp, which named `writer`.
    pub fn torn_read(key: u64, writer: u64) -> HistOp {
        HistOp::new(OpKind::TornRead, key, writer)
    }

    /// A read of a version of `key` by `writer` that was never installed.
    pub fn uninstalled_read(key: u64, writer: u64) -> HistOp {
        HistOp::new(OpKind::UninstalledRead, key, writer)
    }

    /// The kind.
    #[inline]
    pub fn kind(&self) -> OpKind {
        match self.key_kind >> KIND_SHIFT {
            0 => OpKind::Read,
            1 => OpKind::Write,
            2 => OpKind::TornRead,
            _ => OpKind::UninstalledRead,
        }
    }

    /// The record's history key ([`history_key`]).
    #[inline]
    pub fn key(&self) -> u64 {
        self.key_kind & KEY_MASK
    }

    /// The writer (reads) or seq (writes).
    #[inline]
    pub fn word(&self) -> u64 {
        self.word
    }

    /// The same operation with another word (a write's seq, once its install is known).
    #[inline]
    pub fn with_word(self, word: u64) -> HistOp {
        HistOp { word, ..self }
    }
}

impl std::fmt::Debug for HistOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}({:#x}, {})", self.kind(), self.key(), self.word)
    }
}

/// A key for the checker: table id in bits 48..62, record id below.
pub fn history_key(table: u32, rid: u64) -> u64 {
    debug_assert!(table < (1 << 14) && rid < (1 << 48));
    (u64::from(table) << 48) | rid
}

/// The table id and record id of a [`history_key`].
pub fn split_history_key(key: u64) -> (u32, u64) {
    ((key >> 48) as u32, key & ((1 << 48) - 1))
}

/// Id of attempt number `attempt` (counted from 1) of worker `worker`: worker + 1 in the top 24
/// bits, the attempt number below. Never [`Version::INITIAL_WRITER`]; a worker's ids grow.
pub fn txn_id(worker: usize, attempt: u64) -> u64 {
    ((worker as u64 + 1) << 40) | (attempt & ((1 << 40) - 1))
}

/// The worker part of a [`txn_id`].
pub fn worker_tag(id: u64) -> u64 {
    id >> 40
}

/// One committed transaction: its id and its operations (a range of the worker's op vector).
#[derive(Debug, Clone, Copy)]
pub struct CommittedTxn {
    /// Unique transaction id (per attempt; never `Version::INITIAL_WRITER`).
    pub id: u64,
    start: u32,
    len: u32,
}

/// The committed transactions of one worker, in commit order, up to an operation budget.
#[derive(Debug, Clone)]
pub struct WorkerHistory {
    txns: Vec<CommittedTxn>,
    ops: Vec<HistOp>,
    /// Most operations this history keeps.
    budget: usize,
    /// Id of the first committed transaction that was not recorded, once the budget ran out.
    stopped_at: Option<u64>,
}

impl Default for WorkerHistory {
    fn default() -> Self {
        WorkerHistory::with_budget(u32::MAX as usize)
    }
}

impl WorkerHistory {
    /// An empty history that keeps at most `budget` operations (at most `u32::MAX`).
    pub fn with_budget(budget: usize) -> Self {
        WorkerHistory {
            txns: Vec::new(),
            ops: Vec::new(),
            budget: budget.min(u32::MAX as usize),
            stopped_at: None,
        }
    }

    /// Appends a committed transaction with its operations, kept sorted (so the checker finds a
    /// transaction's write of a key by binary search), unless they do not fit in the budget:
    /// then recording stops for good (returns false).
    pub fn commit(&mut self, id: u64, ops: &[HistOp]) -> bool {
        if self.stopped_at.is_some() {
            return false;
        }
        if self.ops.len() + ops.len() > self.budget {
            self.stopped_at = Some(id);
            return false;
        }
        let start = self.ops.len() as u32;
        self.ops.extend_from_slice(ops);
        self.ops[start as usize..].sort_unstable();
        self.txns.push(CommittedTxn {
            id,
            start,
            len: ops.len() as u32,
        });
        true
    }

    /// Whether recording still goes on (the budget has not run out).
    #[inline]
    pub fn is_recording(&self) -> bool {
        self.stopped_at.is_none()
    }

    /// The first transaction this worker committed without recording it (its ids grow, so
    /// every later one is unrecorded too), if the budget ran out.
    pub fn stopped_at(&self) -> Option<u64> {
        self.stopped_at
    }

    /// Committed transactions in commit order.
    pub fn txns(&self) -> &[CommittedTxn] {
        &self.txns
    }

    /// The operations of `t`.
    pub fn ops(&self, t: &CommittedTxn) -> &[HistOp] {
        &self.ops[t.start as usize..(t.start + t.len) as usize]
    }

    /// Number of committed transactions recorded.
    pub fn len(&self) -> usize {
        self.txns.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.txns.is_empty()
    }

    /// Number of operations recorded.
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// Bytes the recorded history occupies (its vectors' capacity).
    pub fn memory_bytes(&self) -> usize {
        self.ops.capacity() * HIST_OP_BYTES + self.txns.capacity() * HIST_TXN_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_pack_into_two_words() {
        assert_eq!(HIST_OP_BYTES, 16);
        let key = history_key(9, (1 << 48) - 1);
        for (op, kind) in [
            (HistOp::read(key, 7), OpKind::Read),
            (HistOp::write(key, u64::MAX), OpKind::Write),
            (HistOp::torn_read(key, 1), OpKind::TornRead),
            (HistOp::uninstalled_read(key, 2), OpKind::UninstalledRead),
        ] {
            assert_eq!(op.kind(), kind);
            assert_eq!(op.key(), key);
        }
        assert_eq!(HistOp::write(key, 3).with_word(4).word(), 4);
    }

    #[test]
    fn worker_history_slices_ops_and_stops_at_its_budget() {
        let mut h = WorkerHistory::with_budget(3);
        let r = HistOp::read(1, 0);
        assert!(h.commit(7, &[r, r]));
        assert!(h.commit(8, &[r]));
        assert_eq!(h.len(), 2);
        assert_eq!(h.ops(&h.txns()[0]).len(), 2);
        assert_eq!(h.ops(&h.txns()[1]).len(), 1);
        assert_eq!(h.txns()[1].id, 8);
        assert!(h.is_recording());
        assert!(!h.commit(9, &[r]), "over budget");
        assert!(!h.commit(10, &[]), "stopped for good");
        assert_eq!(h.stopped_at(), Some(9));
        assert_eq!(h.len(), 2);
    }
}
