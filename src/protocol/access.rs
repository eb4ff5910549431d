//! Read and write sets shared by every protocol.
//!
//! The containers are shared (fairness: CCBench's "local datasets"); what each entry remembers is
//! the protocol's choice (`E`: an observed TID word, a timestamp pair, a lock mode). Both are reused
//! across transactions: `clear` keeps capacity, so a warmed-up worker allocates nothing.

use super::WriteKind;
use crate::log::EpochClock;
use crate::storage::stamp;
use crate::storage::{Payload, Record};
use std::sync::Arc;

/// Records a transaction read, each with protocol-specific state `E`.
///
/// Lookups by record ([`find`](Self::find)) are linear while the set is small and hashed once it
/// holds more than `LINEAR_LOOKUP` entries: locking protocols look up every read (is this
/// record locked already?), and a linear search made TPC-C's Stock-Level, about 400 reads,
/// quadratic. The hash index is an open-addressing table of entry positions stamped with a
/// generation, so `clear` is O(1) and a warmed-up worker allocates nothing.
pub struct ReadSet<'db, M, E> {
    entries: Vec<(Record<'db, M>, E)>,
    index: PositionIndex,
}

/// Entries up to which lookups scan a set linearly (cheaper than hashing for a few entries).
pub const LINEAR_LOOKUP: usize = 16;

/// Hashed positions of records in a read or write set, used once the set holds more than
/// `LINEAR_LOOKUP` entries: an open-addressing table of `generation << 32 | (position + 1)`
/// words, where a word of another generation is an empty slot, so clearing is O(1). The set
/// passes a function from position to record address; the first position of a record wins.
struct PositionIndex {
    slots: Vec<u64>,
    /// The current generation (never 0, so zeroed slots are empty).
    generation: u32,
}

impl Default for PositionIndex {
    fn default() -> Self {
        PositionIndex {
            slots: Vec::new(),
            generation: 1,
        }
    }
}

impl PositionIndex {
    /// Makes every slot empty (O(1) except when the generation counter wraps).
    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.fill(0);
            self.generation = 1;
        }
    }

    /// Position `n - 1` was just appended to a set of `n` entries: index it, building or growing
    /// the table first when needed (at four slots per entry).
    fn appended(&mut self, n: usize, key: impl Fn(usize) -> usize) {
        if n <= LINEAR_LOOKUP {
            return;
        }
        if n == LINEAR_LOOKUP + 1 || 2 * n > self.slots.len() {
            self.rebuild(n, key);
        } else {
            self.insert(n - 1, key);
        }
    }

    /// Indexes positions `0..n` afresh (after growth, or after the set reordered its entries).
    fn rebuild(&mut self, n: usize, key: impl Fn(usize) -> usize) {
        let want = (4 * n).next_power_of_two();
        if self.slots.len() < want {
            self.slots = vec![0; want];
            self.generation = 1;
        } else {
            self.clear();
        }
        for i in 0..n {
            self.insert(i, &key);
        }
    }

    /// The slot a record address probes first.
    #[inline]
    fn home_slot(&self, addr: usize) -> usize {
        // Records are 64-byte aligned: drop the zero bits, then Fibonacci hashing.
        let h = ((addr >> 6) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// Enters position `i` unless an earlier position has the same record.
    fn insert(&mut self, i: usize, key: impl Fn(usize) -> usize) {
        let addr = key(i);
        let mask = self.slots.len() - 1;
        let mut at = self.home_slot(addr);
        loop {
            let slot = self.slots[at];
            if (slot >> 32) as u32 != self.generation {
                self.slots[at] = (u64::from(self.generation) << 32) | (i as u64 + 1);
                return;
            }
            if key((slot as u32 - 1) as usize) == addr {
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// The first position of the record at `addr` in a set of `n` entries.
    #[inline]
    fn find(&self, n: usize, addr: usize, key: impl Fn(usize) -> usize) -> Option<usize> {
        if n <= LINEAR_LOOKUP {
            return (0..n).find(|&i| key(i) == addr);
        }
        let mask = self.slots.len() - 1;
        let mut at = self.home_slot(addr);
        loop {
            let slot = self.slots[at];
            if (slot >> 32) as u32 != self.generation {
                return None;
            }
            let j = (slot as u32 - 1) as usize;
            if key(j) == addr {
                return Some(j);
            }
            at = (at + 1) & mask;
        }
    }
}

impl<M, E> Default for ReadSet<'_, M, E> {
    fn default() -> Self {
        ReadSet {
            entries: Vec::with_capacity(64),
            index: PositionIndex::default(),
        }
    }
}

impl<'db, M, E> ReadSet<'db, M, E> {
    /// Remembers a read.
    #[inline]
    pub fn push(&mut self, rec: Record<'db, M>, state: E) {
        self.entries.push((rec, state));
        let entries = &self.entries;
        self.index
            .appended(entries.len(), |i| entries[i].0.order_key());
    }

    /// Forgets every entry, keeping capacity.
    #[inline]
    pub fn clear(&mut self) {
        if self.entries.len() > LINEAR_LOOKUP {
            self.index.clear();
        }
        self.entries.clear();
    }

    /// Position of the first entry for `rec`.
    #[inline]
    fn position(&self, rec: &Record<'db, M>) -> Option<usize> {
        let entries = &self.entries;
        self.index
            .find(entries.len(), rec.order_key(), |i| entries[i].0.order_key())
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

    /// The entries in read order, mutable state (the records stay: the index refers to them).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&Record<'db, M>, &mut E)> {
        self.entries.iter_mut().map(|(r, e)| (&*r, e))
    }

    /// The state of the first entry for `rec`, if it was read.
    #[inline]
    pub fn find(&self, rec: &Record<'db, M>) -> Option<&E> {
        self.position(rec).map(|i| &self.entries[i].1)
    }

    /// The mutable state of the first entry for `rec`, if it was read.
    #[inline]
    pub fn find_mut(&mut self, rec: &Record<'db, M>) -> Option<&mut E> {
        self.position(rec).map(|i| &mut self.entries[i].1)
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
    /// With a log: the record's table, which its log entry names ([`InstallLog::set_table`]).
    table: u32,
}

/// Check mode: the version order, as the shared install path saw it.
///
/// For each install, the record (its [`Record::order_key`]) and the seq its new version got: one
/// more than the seq of the version it replaced, read from the record's stamp while the protocol
/// holds the record exclusively (see `storage::stamp`). This is the only help the checker takes
/// from the engine: with it, blind writes are ordered like read-modify-writes. The transaction
/// handle enables the log in check mode, clears it when an attempt begins and reads it when the
/// attempt commits; disabled, it costs one predictable branch per install.
///
/// A protocol that installs versions anywhere but [`WriteSet::install`] must [`record`] each
/// install here itself, or the checker reports its writes as `unordered_write`s.
///
/// [`record`]: InstallLog::record
///
/// # The undo log's hook
///
/// With an undo log (`--log-kind undo`, [`InstallLog::enable_undo`]), [`WriteSet::put`] copies
/// the record's committed row, its before-image, into a reused arena ([`UndoCapture`]) at an
/// attempt's first write to the record, before the write is buffered; the redo capture then
/// only takes the attempt's epoch at its first install, and copies no rows. The `Txn` handle
/// appends the before-images to the worker's log when the attempt ends, committed or aborted
/// (`crate::log`, "Undo logging").
///
/// # The redo log's hook
///
/// With a redo log (`--log`, [`InstallLog::enable_redo`]) the same path is the log's one hook
/// (`crate::log`): the first install of an attempt takes the attempt's epoch from the log's
/// [`EpochClock`] *before* any of its writes becomes visible, and every install copies the row
/// it writes, with the record id and the seq just given, into a reused arena
/// ([`RedoCapture`]). The `Txn` handle appends the arena to the worker's log when the attempt
/// commits, and abandons it when it aborts. No protocol code is involved.
///
/// Each entry names its record's table. Records do not know their table, so the handle names
/// it ([`InstallLog::set_table`]) before each write operation, [`WriteSet::put`] keeps it in
/// the write's entry, and the capture writes it into the log entry: no lookup at commit.
#[derive(Debug, Default)]
pub struct InstallLog {
    /// Installs stamp their versions' seqs (check mode or a log).
    enabled: bool,
    /// Installs are recorded for the checker (check mode).
    recording: bool,
    installs: Vec<(usize, u64)>,
    /// With a log: the table of the write being buffered.
    table: u32,
    redo: Option<RedoCapture>,
    undo: Option<UndoCapture>,
}

/// The before-images of one attempt's writes, for the undo log ([`InstallLog`]).
#[derive(Debug, Default)]
pub struct UndoCapture {
    /// Entries in the log's format, tables not yet named (`log::format::push_before_image`).
    entries: Vec<u8>,
    /// Per entry: the record's order key and the entry's offset in `entries`.
    at: Vec<(usize, usize)>,
}

impl UndoCapture {
    /// Copies `payload`, the committed row of record `rid` (order key `key`) of table
    /// `table`, which the caller holds exclusively, as a before-image: one copy, straight into
    /// the arena.
    #[inline]
    fn capture(&mut self, key: usize, table: u32, rid: u64, payload: &Payload<'_>) {
        let len = payload.len();
        let at = crate::log::format::push_before_image(
            &mut self.entries,
            table,
            rid,
            len,
            stamp::seq_word(len),
            |out| payload.load(out),
        );
        self.at.push((key, at));
    }

    /// The entries and, per entry, its record's order key and offset.
    pub fn parts(&self) -> (&[u8], &[(usize, usize)]) {
        (&self.entries, &self.at)
    }

    /// Forgets the attempt's before-images (appended to the log, or a new attempt begins).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.at.clear();
    }
}

/// What one attempt's installs wrote, for the redo log ([`InstallLog`]).
pub struct RedoCapture {
    clock: Arc<EpochClock>,
    worker: usize,
    /// The attempt's epoch, taken at its first install; `None` before it.
    epoch: Option<u64>,
    /// Entries in the log's format (`log::format::push_entry`).
    entries: Vec<u8>,
    /// Per entry: the record's order key and the entry's offset in `entries`.
    at: Vec<(usize, usize)>,
    /// Whether installs copy their rows (a redo log); an undo log takes only the epoch here.
    rows: bool,
}

impl std::fmt::Debug for RedoCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedoCapture")
            .field("worker", &self.worker)
            .field("epoch", &self.epoch)
            .field("entries", &self.at.len())
            .finish()
    }
}

impl RedoCapture {
    /// The attempt's epoch (`None`: it installed nothing).
    pub fn epoch(&self) -> Option<u64> {
        self.epoch
    }

    /// The entries and, per entry, its record's order key and offset.
    pub fn parts(&self) -> (&[u8], &[(usize, usize)]) {
        (&self.entries, &self.at)
    }

    /// The attempt's entries are in the worker's log buffer, or were abandoned: leave the
    /// epoch and forget them.
    pub fn finish(&mut self) {
        if self.epoch.take().is_some() {
            self.clock.leave(self.worker);
        }
        self.entries.clear();
        self.at.clear();
    }
}

impl InstallLog {
    /// Turns recording on (check mode).
    pub fn enable(&mut self) {
        self.enabled = true;
        self.recording = true;
    }

    /// With a log: the records of the writes buffered from now on belong to table `table`
    /// (the `Txn` handle names it before each write operation; [`InstallLog`]).
    #[inline]
    pub fn set_table(&mut self, table: u32) {
        self.table = table;
    }

    /// Turns the redo log's capture on for worker `worker` of a log whose epochs `clock`
    /// keeps (and recording, which gives every version its seq).
    pub fn enable_redo(&mut self, clock: Arc<EpochClock>, worker: usize) {
        self.enabled = true;
        self.redo = Some(RedoCapture {
            clock,
            worker,
            epoch: None,
            entries: Vec::with_capacity(4096),
            at: Vec::with_capacity(64),
            rows: true,
        });
    }

    /// Turns the undo log's capture on for worker `worker` of a log whose epochs `clock`
    /// keeps: each attempt's first write to a record copies its before-image
    /// ([`WriteSet::put`]), and installs take the attempt's epoch (for the durable
    /// acknowledgement of its commit) but copy no rows.
    pub fn enable_undo(&mut self, clock: Arc<EpochClock>, worker: usize) {
        self.enable_redo(clock, worker);
        if let Some(r) = &mut self.redo {
            r.rows = false;
        }
        self.undo = Some(UndoCapture {
            entries: Vec::with_capacity(4096),
            at: Vec::with_capacity(64),
        });
    }

    /// The undo capture, when an undo log is on.
    pub fn undo(&mut self) -> Option<&mut UndoCapture> {
        self.undo.as_mut()
    }

    /// Both captures, when a log is on (the undo one only for an undo log).
    pub fn captures(&mut self) -> (Option<&mut RedoCapture>, Option<&mut UndoCapture>) {
        (self.redo.as_mut(), self.undo.as_mut())
    }

    /// The redo capture, when a log is on.
    pub fn redo(&mut self) -> Option<&mut RedoCapture> {
        self.redo.as_mut()
    }

    /// With a redo log: notes an install of `row` into record `rid` (order key `key`) of
    /// table `table` as version `seq`, taking the attempt's epoch first if this is its first install. Called
    /// before the row is stored, while `old` still holds version `seq - 1` (the caller holds
    /// the record exclusively): a version after the first logged one goes into the log as a
    /// delta against it when that is smaller (`log::format`, "Deltas"). A delete (a vacant
    /// row) is logged whole: a record deleted for good may reach recovery as a checkpoint's
    /// vacant range, which holds none of its versions, and the whole delete then supersedes
    /// any delta of that record the replay could not place.
    #[inline]
    fn capture(
        &mut self,
        key: usize,
        table: u32,
        rid: u64,
        seq: u64,
        row: &[u8],
        old: &Payload<'_>,
    ) {
        if let Some(r) = &mut self.redo {
            if r.epoch.is_none() {
                r.epoch = Some(r.clock.enter(r.worker));
            }
            if !r.rows {
                return; // an undo log: the before-image was taken at the write
            }
            use crate::log::format::{push_delta_with, push_entry};
            // The replaced version is diffed in place, a word at a time: the caller holds the
            // record exclusively, so its words are that version until the store.
            // Neither side vacant: a delete is logged whole (above), and a row inserted where
            // a deleted one was differs from the vacant row in every word.
            let delta = if seq >= 2 && !crate::storage::is_vacant(row) && !old.is_vacant() {
                push_delta_with(&mut r.entries, table, rid, seq, row, old.word_cells())
            } else {
                None
            };
            let at = delta.unwrap_or_else(|| push_entry(&mut r.entries, table, rid, seq, row));
            r.at.push((key, at));
        }
    }

    /// Whether installs are recorded.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Forgets the recorded installs (a new attempt begins), and any redo capture.
    pub fn clear(&mut self) {
        self.installs.clear();
        if let Some(r) = &mut self.redo {
            r.finish();
        }
        if let Some(u) = &mut self.undo {
            u.clear();
        }
    }

    /// Check mode: notes that the record at `order_key` got a version with `seq`.
    pub fn record(&mut self, order_key: usize, seq: u64) {
        if self.recording {
            self.installs.push((order_key, seq));
        }
    }

    /// The recorded installs, in install order.
    pub fn installs(&self) -> &[(usize, u64)] {
        &self.installs
    }
}

/// Buffered writes with their new payloads stored back to back in one reused byte arena.
///
/// Every read checks the write set first (read-your-own-writes), so lookups are hashed past
/// `LINEAR_LOOKUP` entries, as in [`ReadSet`].
pub struct WriteSet<'db, M, E> {
    entries: Vec<WriteEntry<'db, M, E>>,
    data: Vec<u8>,
    index: PositionIndex,
    /// Check mode: the seqs that installs gave their versions.
    log: InstallLog,
}

impl<M, E> Default for WriteSet<'_, M, E> {
    fn default() -> Self {
        WriteSet {
            entries: Vec::with_capacity(64),
            data: Vec::with_capacity(64 * 128),
            index: PositionIndex::default(),
            log: InstallLog::default(),
        }
    }
}

impl<'db, M, E> WriteSet<'db, M, E> {
    /// Buffers a write of `data` to `rec`. If `rec` is already in the set, its payload and kind
    /// are replaced and its state kept; returns the entry's index either way.
    ///
    /// With an undo log, the first write of `rec` copies its before-image first
    /// ([`InstallLog`], "The undo log's hook"): the caller holds `rec` exclusively (only
    /// protocols that do are run with an undo log: `log::LogKind::supports`), so the row is
    /// the committed one and stays so until the attempt ends.
    #[inline]
    pub fn put(&mut self, rec: Record<'db, M>, kind: WriteKind, data: &[u8], state: E) -> usize {
        if let Some(i) = self.position(&rec) {
            let off = self.entries[i].offset;
            self.data[off..off + data.len()].copy_from_slice(data);
            self.entries[i].kind = kind;
            return i;
        }
        // One predictable branch without a log: `enabled` is the check-mode flag the install
        // path tests anyway.
        if self.log.enabled
            && let Some(u) = &mut self.log.undo
        {
            u.capture(rec.order_key(), self.log.table, rec.rid.0, &rec.payload);
        }
        let offset = self.data.len();
        self.data.extend_from_slice(data);
        self.entries.push(WriteEntry {
            rec,
            kind,
            state,
            offset,
            table: self.log.table,
        });
        let entries = &self.entries;
        self.index
            .appended(entries.len(), |i| entries[i].rec.order_key());
        self.entries.len() - 1
    }

    /// Index of the entry for `rec`, if buffered.
    #[inline]
    pub fn position(&self, rec: &Record<'db, M>) -> Option<usize> {
        let entries = &self.entries;
        self.index.find(entries.len(), rec.order_key(), |i| {
            entries[i].rec.order_key()
        })
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

    /// Installs entry `i`'s new payload into its record. The caller holds whatever protects the
    /// record from other writers (its exclusive lock): in check mode the new version's seq is
    /// derived here from the version it replaces, which is only an order if installs of one
    /// record never overlap ([`InstallLog`]).
    #[inline]
    pub fn install(&mut self, i: usize) {
        let e = &self.entries[i];
        let (rec, start, end) = (e.rec, e.offset, e.offset + e.rec.payload.len());
        let table = e.table;
        if self.log.is_enabled() {
            let word = stamp::seq_word(rec.payload.len());
            let seq = rec.payload.word(word).wrapping_add(1);
            self.data[start + 8 * word..start + 8 * word + 8].copy_from_slice(&seq.to_le_bytes());
            self.log.record(rec.order_key(), seq);
            // Before the store: the epoch is taken before the write is visible (`crate::log`).
            self.log.capture(
                rec.order_key(),
                table,
                rec.rid.0,
                seq,
                &self.data[start..end - stamp::STAMP_BYTES],
                &rec.payload,
            );
            if self.log.redo.is_some() {
                // With a log, the seq word doubles as a seqlock, so a reader holding no
                // protocol lock (the checkpointer) can copy a consistent (row, seq) pair
                // (`log::checkpoint`). Check mode alone keeps the plain store: a reader that
                // races an install there (NoCC, a mutant) must show the checker a torn copy,
                // not the seqlock's mark.
                rec.payload.install_seqlocked(&self.data[start..end], word);
                return;
            }
        }
        rec.payload.store(&self.data[start..end]);
    }

    /// Installs every entry in set order ([`WriteSet::install`]; the caller holds what protects
    /// each record from other writers). Protocols that write in place at commit, under locks
    /// or a schedule that keeps conflicting transactions out, commit with this. The entries
    /// stay until the caller clears the set.
    #[inline]
    pub fn install_all(&mut self) {
        for i in 0..self.entries.len() {
            self.install(i);
        }
    }

    /// A read in place, for protocols whose locks or schedule keep other writers out of `rec`
    /// while the transaction runs: this transaction's own buffered write if there is one
    /// ([`WriteSet::read_own`]), or else the record's payload.
    #[inline]
    pub fn read_in_place(&self, rec: &Record<'db, M>, out: &mut [u8]) {
        if !self.read_own(rec, out) {
            rec.payload.load(out);
        }
    }

    /// Check mode: the log of this set's installs ([`InstallLog`]).
    pub fn install_log(&mut self) -> &mut InstallLog {
        &mut self.log
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
        if self.entries.len() > LINEAR_LOOKUP {
            let entries = &self.entries;
            self.index
                .rebuild(entries.len(), |i| entries[i].rec.order_key());
        }
    }

    /// Sorts entries by `key` (Cicada's SortWriteSetByContention), keeping lookups valid.
    pub fn sort_by_key<K: Ord>(&mut self, key: impl FnMut(&WriteEntry<'db, M, E>) -> K) {
        self.entries.sort_unstable_by_key(key);
        if self.entries.len() > LINEAR_LOOKUP {
            let entries = &self.entries;
            self.index
                .rebuild(entries.len(), |i| entries[i].rec.order_key());
        }
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
        if self.entries.len() > LINEAR_LOOKUP {
            self.index.clear();
        }
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

    /// An in-place read sees the transaction's own buffered write, else the record; installing
    /// all writes stores every buffered payload and leaves the set to the caller to clear.
    #[test]
    fn in_place_reads_and_install_all() {
        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 3,
            payload_bytes: 2,
        });
        let (r0, r1, r2) = (
            t.get(RecordId(0)).unwrap(),
            t.get(RecordId(1)).unwrap(),
            t.get(RecordId(2)).unwrap(),
        );
        r2.payload.store(&[7, 7]);
        let mut ws: WriteSet<'_, (), ()> = WriteSet::default();
        ws.put(r1, WriteKind::Blind, &[1, 1], ());
        ws.put(r0, WriteKind::Blind, &[5, 5], ());
        let mut out = [0u8; 2];
        ws.read_in_place(&r1, &mut out);
        assert_eq!(out, [1, 1], "own buffered write");
        ws.read_in_place(&r2, &mut out);
        assert_eq!(out, [7, 7], "the record itself");
        ws.install_all();
        assert_eq!(ws.len(), 2, "install_all does not clear");
        for (rec, want) in [(r0, [5, 5]), (r1, [1, 1]), (r2, [7, 7])] {
            rec.payload.load(&mut out);
            assert_eq!(out, want, "record {:?}", rec.rid);
        }
    }

    /// Lookups agree with a linear search at every size, small (linear) and large (hashed),
    /// across clears (generations) and with repeated records (the first entry wins).
    #[test]
    fn find_matches_a_linear_search_at_every_size() {
        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 1000,
            payload_bytes: 8,
        });
        let mut rs: ReadSet<'_, (), u64> = ReadSet::default();
        let mut rng = crate::random::FastRng::new(3);
        for round in 0..300u64 {
            rs.clear();
            let n = rng.below(400) as usize;
            let mut expected: std::collections::HashMap<u64, u64> = Default::default();
            for i in 0..n {
                let rid = rng.below(500);
                rs.push(t.get(RecordId(rid)).unwrap(), round * 1000 + i as u64);
                expected.entry(rid).or_insert(round * 1000 + i as u64);
            }
            for rid in 0..1000 {
                let rec = t.get(RecordId(rid)).unwrap();
                assert_eq!(
                    rs.find(&rec),
                    expected.get(&rid),
                    "round {round}, rid {rid}"
                );
            }
            if let Some((&rid, &first)) = expected.iter().next() {
                let rec = t.get(RecordId(rid)).unwrap();
                *rs.find_mut(&rec).unwrap() += 1;
                assert_eq!(rs.find(&rec), Some(&(first + 1)));
            }
        }
    }

    /// Write-set lookups stay right past the linear range, across puts of known records and
    /// after sorting (which reorders the entries under the index).
    #[test]
    fn write_set_positions_survive_growth_and_sorting() {
        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 200,
            payload_bytes: 8,
        });
        let mut ws: WriteSet<'_, (), ()> = WriteSet::default();
        for round in 0..3u64 {
            ws.clear();
            for rid in (0..100u64).rev() {
                let rec = t.get(RecordId(rid * 2)).unwrap();
                ws.put(rec, WriteKind::Blind, &(rid + round).to_le_bytes(), ());
            }
            let rec = t.get(RecordId(10)).unwrap();
            ws.put(rec, WriteKind::Blind, &[7; 8], ());
            assert_eq!(ws.len(), 100, "a second put replaces");
            for sorted in [false, true] {
                if sorted {
                    ws.sort_by_record();
                }
                let mut out = [0u8; 8];
                for rid in 0..200u64 {
                    let rec = t.get(RecordId(rid)).unwrap();
                    let i = ws.position(&rec);
                    assert_eq!(i.is_some(), rid % 2 == 0, "rid {rid}");
                    if let Some(i) = i {
                        assert_eq!(ws.entries()[i].rec.rid, RecordId(rid));
                        assert!(ws.read_own(&rec, &mut out));
                        let want = if rid == 10 {
                            [7; 8]
                        } else {
                            (rid / 2 + round).to_le_bytes()
                        };
                        assert_eq!(out, want);
                    }
                }
            }
        }
    }
}
