//! History capture for the serializability checker.
//!
//! In check mode a workload stamps every payload it writes with a [`Version`]: the writer's
//! transaction id and a per-record sequence number (one more than the version it overwrote). Reads
//! report the version they saw. The checker therefore needs no help from the protocol it judges:
//! versions are identified by the data itself.
//!
//! Each worker keeps a [`WorkerHistory`]: the committed transactions and their operations, in flat
//! vectors. An attempt's operations are staged in the `Txn` and appended only on commit.

/// Bytes one recorded operation costs in a history: the unit of the memory estimate for check
/// mode (`--check-limit` operations, see `config`).
pub const HIST_OP_BYTES: usize = 16;

/// Bytes a payload needs to carry a version stamp (writer id, then sequence number, little endian).
pub const STAMP_BYTES: usize = 16;

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

    /// Reads the stamp from the first [`STAMP_BYTES`] of a payload.
    pub fn decode(payload: &[u8]) -> Version {
        let writer = u64::from_le_bytes(payload[0..8].try_into().expect("8 bytes"));
        let seq = u64::from_le_bytes(payload[8..16].try_into().expect("8 bytes"));
        Version { writer, seq }
    }

    /// Writes the stamp into the first [`STAMP_BYTES`] of a payload.
    pub fn encode(self, payload: &mut [u8]) {
        payload[0..8].copy_from_slice(&self.writer.to_le_bytes());
        payload[8..16].copy_from_slice(&self.seq.to_le_bytes());
    }
}

/// What one operation of a committed transaction did to one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistOp {
    /// The transaction read `version` of `key`.
    Read { key: u64, version: Version },
    /// The transaction wrote `version` of `key`. A blind write does not know the version it
    /// overwrote; it carries `seq == Version::UNKNOWN_SEQ`.
    Write { key: u64, version: Version },
}

impl Version {
    /// Sequence number of a blind write (the writer did not read the version it replaced).
    pub const UNKNOWN_SEQ: u64 = u64::MAX;
}

/// A key for the checker: table id in the top 16 bits, record id below.
pub fn history_key(table: u32, rid: u64) -> u64 {
    (u64::from(table) << 48) | rid
}

/// One committed transaction: its id and its operations (a range of the worker's op vector).
#[derive(Debug, Clone, Copy)]
pub struct CommittedTxn {
    /// Unique transaction id (per attempt; never `Version::INITIAL_WRITER`).
    pub id: u64,
    start: u32,
    len: u32,
}

/// The committed transactions of one worker, in commit order.
#[derive(Debug, Default, Clone)]
pub struct WorkerHistory {
    txns: Vec<CommittedTxn>,
    ops: Vec<HistOp>,
}

impl WorkerHistory {
    /// Appends a committed transaction with its operations.
    pub fn commit(&mut self, id: u64, ops: &[HistOp]) {
        let start = u32::try_from(self.ops.len()).expect("history fits in u32 ops per worker");
        self.ops.extend_from_slice(ops);
        self.txns.push(CommittedTxn {
            id,
            start,
            len: ops.len() as u32,
        });
    }

    /// Committed transactions in commit order.
    pub fn txns(&self) -> &[CommittedTxn] {
        &self.txns
    }

    /// The operations of `t`.
    pub fn ops(&self, t: &CommittedTxn) -> &[HistOp] {
        &self.ops[t.start as usize..(t.start + t.len) as usize]
    }

    /// Number of committed transactions.
    pub fn len(&self) -> usize {
        self.txns.len()
    }

    /// Whether nothing committed.
    pub fn is_empty(&self) -> bool {
        self.txns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_round_trips() {
        let mut p = [0u8; 20];
        let v = Version {
            writer: 0xdead_beef,
            seq: 42,
        };
        v.encode(&mut p);
        assert_eq!(Version::decode(&p), v);
    }

    #[test]
    fn worker_history_slices_ops() {
        let mut h = WorkerHistory::default();
        let r = HistOp::Read {
            key: 1,
            version: Version { writer: 0, seq: 0 },
        };
        h.commit(7, &[r, r]);
        h.commit(8, &[r]);
        assert_eq!(h.len(), 2);
        assert_eq!(h.ops(&h.txns()[0]).len(), 2);
        assert_eq!(h.ops(&h.txns()[1]).len(), 1);
        assert_eq!(h.txns()[1].id, 8);
    }
}
