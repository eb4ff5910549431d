//! Read and write sets shared by every protocol.
//!
//! The containers are shared (fairness: CCBench's "local datasets"); what each entry remembers is
//! the protocol's choice (`E`: an observed TID word, a timestamp pair, a lock mode). Both are reused
//! across transactions: `clear` keeps capacity, so a warmed-up worker allocates nothing.

use super::WriteKind;
use crate::storage::Record;

/// Records a transaction read, each with protocol-specific state `E`.
pub struct ReadSet<'db, M, E> {
    entries: Vec<(Record<'db, M>, E)>,
}

impl<M, E> Default for ReadSet<'_, M, E> {
    fn default() -> Self {
        ReadSet {
            entries: Vec::with_capacity(64),
        }
    }
}

impl<'db, M, E> ReadSet<'db, M, E> {
    /// Remembers a read.
    #[inline]
    pub fn push(&mut self, rec: Record<'db, M>, state: E) {
        self.entries.push((rec, state));
    }

    /// Forgets every entry, keeping capacity.
    #[inline]
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The most recent entry.
    #[inline]
    pub fn last(&self) -> Option<(&Record<'db, M>, &E)> {
        self.entries.last().map(|(r, e)| (r, e))
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in read order.
    pub fn iter(&self) -> impl Iterator<Item = &(Record<'db, M>, E)> {
        self.entries.iter()
    }

    /// The entries in read order, mutable state.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut (Record<'db, M>, E)> {
        self.entries.iter_mut()
    }

    /// The entry for `rec`, if it was read.
    pub fn find(&self, rec: &Record<'db, M>) -> Option<&E> {
        let key = rec.order_key();
        self.entries
            .iter()
            .find(|(r, _)| r.order_key() == key)
            .map(|(_, e)| e)
    }
}

/// One buffered write: the record, the kind, protocol state `E`, and where its new payload sits in
/// the write set's data arena.
pub struct WriteEntry<'db, M, E> {
    /// The record written.
    pub rec: Record<'db, M>,
    /// Blind or read-modify-write.
    pub kind: WriteKind,
    /// Protocol-specific state (lock held, observed version).
    pub state: E,
    offset: usize,
}

/// Buffered writes with their new payloads stored back to back in one reused byte arena.
pub struct WriteSet<'db, M, E> {
    entries: Vec<WriteEntry<'db, M, E>>,
    data: Vec<u8>,
}

impl<M, E> Default for WriteSet<'_, M, E> {
    fn default() -> Self {
        WriteSet {
            entries: Vec::with_capacity(64),
            data: Vec::with_capacity(64 * 128),
        }
    }
}

impl<'db, M, E> WriteSet<'db, M, E> {
    /// Buffers a write of `data` to `rec`. If `rec` is already in the set, its payload and kind
    /// are replaced and its state kept; returns the entry's index either way.
    pub fn put(&mut self, rec: Record<'db, M>, kind: WriteKind, data: &[u8], state: E) -> usize {
        if let Some(i) = self.position(&rec) {
            let off = self.entries[i].offset;
            self.data[off..off + data.len()].copy_from_slice(data);
            self.entries[i].kind = kind;
            return i;
        }
        let offset = self.data.len();
        self.data.extend_from_slice(data);
        self.entries.push(WriteEntry {
            rec,
            kind,
            state,
            offset,
        });
        self.entries.len() - 1
    }

    /// Index of the entry for `rec`, if buffered.
    #[inline]
    pub fn position(&self, rec: &Record<'db, M>) -> Option<usize> {
        let key = rec.order_key();
        self.entries.iter().position(|e| e.rec.order_key() == key)
    }

    /// Read-your-own-writes, shared by every protocol: if `rec` is buffered, copies its new
    /// payload into `out` and returns true. Skips the scan when nothing is buffered.
    #[inline]
    pub fn read_own(&self, rec: &Record<'db, M>, out: &mut [u8]) -> bool {
        if self.entries.is_empty() {
            return false;
        }
        match self.position(rec) {
            Some(i) => {
                out.copy_from_slice(self.data(i));
                true
            }
            None => false,
        }
    }

    /// The new payload of entry `i`.
    #[inline]
    pub fn data(&self, i: usize) -> &[u8] {
        let e = &self.entries[i];
        &self.data[e.offset..e.offset + e.rec.payload.len()]
    }

    /// Installs entry `i`'s new payload into its record (the caller holds whatever protects it).
    #[inline]
    pub fn install(&self, i: usize) {
        self.entries[i].rec.payload.store(self.data(i));
    }

    /// The entries.
    pub fn entries(&self) -> &[WriteEntry<'db, M, E>] {
        &self.entries
    }

    /// The entries, mutable state.
    pub fn entries_mut(&mut self) -> &mut [WriteEntry<'db, M, E>] {
        &mut self.entries
    }

    /// Sorts entries into the global record order (lock order for deadlock freedom).
    pub fn sort_by_record(&mut self) {
        self.entries.sort_unstable_by_key(|e| e.rec.order_key());
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets every entry and payload, keeping capacity.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.data.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{RecordId, Table, TableSpec};

    #[test]
    fn put_replaces_and_sort_keeps_data() {
        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 4,
            payload_bytes: 3,
        });
        let mut ws: WriteSet<'_, (), u8> = WriteSet::default();
        let r2 = t.get(RecordId(2)).unwrap();
        let r0 = t.get(RecordId(0)).unwrap();
        ws.put(r2, WriteKind::Blind, &[2, 2, 2], 20);
        ws.put(r0, WriteKind::Blind, &[0, 0, 0], 0);
        ws.put(r2, WriteKind::ReadModifyWrite, &[9, 9, 9], 99);
        assert_eq!(ws.len(), 2);
        ws.sort_by_record();
        assert_eq!(ws.entries()[0].rec.rid, RecordId(0));
        assert_eq!(ws.data(1), &[9, 9, 9]);
        assert_eq!(ws.entries()[1].state, 20);
        assert_eq!(ws.entries()[1].kind, WriteKind::ReadModifyWrite);
        ws.install(1);
        let mut out = [0u8; 3];
        r2.payload.load(&mut out);
        assert_eq!(out, [9, 9, 9]);
        ws.clear();
        assert!(ws.is_empty());
    }
}
