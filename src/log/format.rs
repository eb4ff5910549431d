//! The bytes of a log file: checksummed frames, each a file header, a committed transaction's
//! redo records, an epoch marker, or (an undo log) an attempt's before-images and outcome.
//!
//! ```text
//!  frame (all integers little-endian)
//! +-----------+-------------+------+---------------------------+
//! | len (u32) | crc32c (u32)| kind | body (len - 1 bytes)      |
//! +-----------+-------------+------+---------------------------+
//!              ^ CRC-32C of kind and body (the `len` bytes after the header)
//!
//!  kind 1, file header: magic "TXBLOG01" (u64), format (u32), log (u32), run id (u64),
//!          segment (u32), earlier segments' highest transaction epoch (u64), earlier
//!          segments' last epoch marker (the marker's three fields, 20 bytes)
//!  kind 2, transaction: epoch (u64), txn id (u64), entries (u32), then per entry:
//!          table (u32), bytes (u32), record id (u64), seq (u64), then `bytes` bytes:
//!          - a whole row (the top bit of `bytes` clear), or
//!          - a delta (top bit set; `bytes` counts without it): runs of (word offset u16,
//!            words u16, the new words), the words of the row that differ from version
//!            `seq - 1`, which is never the loaded version (seq 0)
//!  kind 3, epoch marker: epoch (u64), files (u32), below (u64): every transaction of this
//!          file with an epoch at or below `epoch` is written before the marker; the flush
//!          that wrote it wrote the same marker to `files` logs (those with
//!          something new), and `below` is the epoch of the flush before it
//!  kind 4, undo attempt (`--log-kind undo` only): epoch (u64), txn id (u64), entries (u32),
//!          outcome (u8: 1 committed, 0 aborted), then entries laid out as kind 2's, each the
//!          record's before-image: the whole row of version `seq` as the attempt found it
//!          before its first write to the record (never a delta)
//! ```
//!
//! An undo log holds kinds 1, 3 and 4 (its manifest says `"kind": "undo"`); a redo log holds
//! kinds 1 to 3. The format version is shared: a redo log's bytes are unchanged, and a reader
//! is told an undo log by its manifest before it reads a frame.
//!
//! A flush writes a marker only to the logs that have something new ([`EpochMarker`] says
//! how recovery still finds the frontier).
//!
//! A log is a sequence of segment files (`files.rs`), holding the transactions of the
//! workers it serves (worker `w`'s go to log `w % logs`); the header's last two fields
//! carry what the earlier segments knew, so recovery needs none of the segments a checkpoint
//! made obsolete (`checkpoint.rs`). Checkpoint files use the same frames with their own kinds
//! (`checkpoint/file.rs`).
//!
//! # Deltas
//!
//! A TPC-C update changes a few words of a row of hundreds of bytes (a stock row's quantity
//! and counters, a customer's balance), and whole rows made its log 3.4 KB per transaction,
//! the largest share of what logging cost (the page cache's copy, the checksum, the
//! captures). An update of a record whose previous version is itself a logged one is
//! therefore logged as a delta when that is smaller: only the words that changed. Replay
//! stays a merge without a global log order: a delta applies only to exactly the version it
//! was taken against (seq one less), and one that comes before that version (in
//! another log, replayed on another thread) waits for a last, ordered pass
//! (`recover.rs`). A delta is never taken against the loaded version (seq 0), whose bytes a
//! recovery's own load need not repeat (TPC-C's load dates). Checkpoints hold whole rows only.
//!
//! One CRC covers a whole transaction, so a transaction is in a file whole or not at all: a
//! reader stops at the first frame whose length runs past the end, whose checksum fails, or
//! whose body does not parse (a torn or corrupted tail), and names its offset. CRC-32C
//! (Castagnoli) is the checksum storage systems use for this (iSCSI, ext4 metadata, RocksDB's
//! WAL): x86-64 computes it in hardware (SSE 4.2's `crc32` instruction, which the `crc32c`
//! crate uses), several GB/s per core, so checksumming costs replay little.

use crate::sync::atomic::{AtomicU64, Ordering};

/// The first eight bytes of every log file's header frame.
pub const MAGIC: u64 = u64::from_le_bytes(*b"TXBLOG01");
/// The format this build writes and reads.
pub const FORMAT_VERSION: u32 = 5;
/// Bytes before a frame's kind: length and checksum.
pub const FRAME_HEADER: usize = 8;
/// Bytes of a transaction's header after the kind: epoch, txn id, entry count.
pub const TXN_HEADER: usize = 20;
/// Bytes of an entry's header: table, length, record id, seq.
pub const ENTRY_HEADER: usize = 24;
/// Largest frame body a reader accepts (a length past it is a corrupted length word).
pub const MAX_FRAME: usize = 1 << 30;

/// Frame kinds.
const KIND_FILE_HEADER: u8 = 1;
const KIND_TXN: u8 = 2;
const KIND_EPOCH: u8 = 3;
const KIND_UNDO: u8 = 4;
/// Bytes of an undo frame's header after the kind: a transaction's header and the outcome.
pub const UNDO_HEADER: usize = TXN_HEADER + 1;

/// CRC-32C of `bytes`.
#[inline]
pub fn checksum(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Starts a frame of `kind` at the end of `buf`; returns where it starts, for [`end_frame`].
#[inline]
pub(crate) fn begin_frame(buf: &mut Vec<u8>, kind: u8) -> usize {
    let start = buf.len();
    buf.extend_from_slice(&[0; FRAME_HEADER]);
    buf.push(kind);
    start
}

/// Fills in the length and checksum of the frame that starts at `start` and ends at the end of
/// `buf`.
#[inline]
pub(crate) fn end_frame(buf: &mut [u8], start: usize) {
    let body = &buf[start + FRAME_HEADER..];
    let len = u32::try_from(body.len()).expect("a frame fits in u32");
    let crc = checksum(body);
    buf[start..start + 4].copy_from_slice(&len.to_le_bytes());
    buf[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Appends the header frame of log `log`'s first segment.
pub fn write_file_header(buf: &mut Vec<u8>, log: u32, run_id: u64) {
    write_segment_header(buf, &SegmentHeader::first(log, run_id));
}

/// What a segment file's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The log this segment belongs to.
    pub log: u32,
    /// The run that wrote it.
    pub run_id: u64,
    /// The segment's number in its log (0 first).
    pub segment: u32,
    /// The highest epoch of any transaction in the log's earlier segments (0: none): a
    /// checkpoint whose start epoch is above it needs none of them.
    pub prev_max_epoch: u64,
    /// The last epoch marker the earlier segments hold ([`EpochMarker::NONE`]: none): the
    /// log is durable up to it even once they are removed.
    pub prev_marker: EpochMarker,
}

/// What one group flush vouches for, written as the same marker to every log it
/// wrote (a log with nothing new gets none).
///
/// # The durable frontier
///
/// A flush of epoch `epoch` runs only after the flush before it (epoch `below`) completed:
/// every log it wrote was synced. A log the flush skips had nothing new, so it holds all of
/// its workers' transactions of epochs at or below `epoch` already. So, with `M` the highest
/// marker epoch of any log:
///
/// - if `M.files` logs end with marker `M`, the flush of `M` completed, and every log holds
///   its workers' transactions of epochs at or below `M`: the frontier is `M.epoch`;
/// - otherwise a crash cut that flush short (some of its logs lack the marker), and the frontier
///   is `M.below`, which the completed flush before it made durable in every log.
///
/// ([`frontier`]). With a marker in every log at every flush (`files` the number of logs,
/// as a restart's new segments say) this is the least last marker over the logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EpochMarker {
    /// The epoch the flush closed.
    pub epoch: u64,
    /// How many logs the flush wrote this marker to.
    pub files: u32,
    /// The epoch of the flush before (durable in every log once this flush began).
    pub below: u64,
}

impl EpochMarker {
    /// No marker yet: a log that has not been flushed.
    pub const NONE: EpochMarker = EpochMarker {
        epoch: 0,
        files: 0,
        below: 0,
    };
}

/// The durable frontier of logs whose last markers are `last` (one per log; a log's
/// last marker is the one of highest epoch in its log or, failing any, its first segment
/// header's): [`EpochMarker`] gives the rule.
///
/// Markers of one epoch written by one flush agree; those of a restart's new segments
/// (`resume.rs`) may differ from an old flush's of the same epoch, and any of them that
/// counts its logs complete, or else the highest `below`, decides (a restart's checkpoint
/// needs only a frontier at or above its end epoch, which both give).
pub fn frontier(last: &[EpochMarker]) -> u64 {
    let Some(top) = last.iter().map(|m| m.epoch).max() else {
        return 0;
    };
    #[cfg(test)]
    if super::mutant::is(super::mutant::LogMutant::FrontierAtTheTop) {
        return top;
    }
    let at_top = || last.iter().filter(|m| m.epoch == top);
    let ended = at_top().count();
    if at_top().any(|m| ended >= m.files as usize) {
        top
    } else {
        at_top().map(|m| m.below).max().unwrap_or(0)
    }
}

impl SegmentHeader {
    /// The header of log `log`'s first segment.
    pub fn first(log: u32, run_id: u64) -> Self {
        SegmentHeader {
            log,
            run_id,
            segment: 0,
            prev_max_epoch: 0,
            prev_marker: EpochMarker::NONE,
        }
    }
}

/// Bytes of a file header's body after the kind.
const FILE_HEADER_BODY: usize = 56;
/// Bytes of an epoch marker's body after the kind.
const MARKER_BODY: usize = 20;

/// Appends a segment's header frame.
pub fn write_segment_header(buf: &mut Vec<u8>, h: &SegmentHeader) {
    let start = begin_frame(buf, KIND_FILE_HEADER);
    buf.extend_from_slice(&MAGIC.to_le_bytes());
    buf.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    buf.extend_from_slice(&h.log.to_le_bytes());
    buf.extend_from_slice(&h.run_id.to_le_bytes());
    buf.extend_from_slice(&h.segment.to_le_bytes());
    buf.extend_from_slice(&h.prev_max_epoch.to_le_bytes());
    push_marker(buf, &h.prev_marker);
    end_frame(buf, start);
}

fn push_marker(buf: &mut Vec<u8>, m: &EpochMarker) {
    buf.extend_from_slice(&m.epoch.to_le_bytes());
    buf.extend_from_slice(&m.files.to_le_bytes());
    buf.extend_from_slice(&m.below.to_le_bytes());
}

fn marker_at(b: &[u8], at: usize) -> Option<EpochMarker> {
    Some(EpochMarker {
        epoch: u64_at(b, at)?,
        files: u32_at(b, at + 8)?,
        below: u64_at(b, at + 12)?,
    })
}

/// Appends an epoch marker frame.
pub fn write_epoch_marker(buf: &mut Vec<u8>, m: &EpochMarker) {
    let start = begin_frame(buf, KIND_EPOCH);
    push_marker(buf, m);
    end_frame(buf, start);
}

/// Appends a transaction frame whose `count` entries are already encoded in `entries`
/// ([`push_entry`]).
#[inline]
pub fn write_txn(buf: &mut Vec<u8>, epoch: u64, txn_id: u64, count: u32, entries: &[u8]) {
    let start = begin_frame(buf, KIND_TXN);
    buf.extend_from_slice(&epoch.to_le_bytes());
    buf.extend_from_slice(&txn_id.to_le_bytes());
    buf.extend_from_slice(&count.to_le_bytes());
    buf.extend_from_slice(entries);
    end_frame(buf, start);
}

/// Appends an undo frame: attempt `txn_id`'s `count` before-images, already encoded in
/// `entries` ([`push_before_image`]), and whether it committed.
#[inline]
pub fn write_undo(
    buf: &mut Vec<u8>,
    epoch: u64,
    txn_id: u64,
    committed: bool,
    count: u32,
    entries: &[u8],
) {
    let start = begin_frame(buf, KIND_UNDO);
    buf.extend_from_slice(&epoch.to_le_bytes());
    buf.extend_from_slice(&txn_id.to_le_bytes());
    buf.extend_from_slice(&count.to_le_bytes());
    buf.push(u8::from(committed));
    buf.extend_from_slice(entries);
    end_frame(buf, start);
}

/// Appends one before-image entry of record `rid` of table `table` to an entry arena: `fill`
/// copies the record's whole payload, `payload` bytes whose last
/// [`STAMP_BYTES`](crate::storage::stamp::STAMP_BYTES) are its stamp, into the slice it is
/// given, straight into the arena (one copy); the entry keeps the row and takes its seq from
/// the stamp's seq word (word `seq_word` of the payload), so row and seq are one version's as
/// long as the caller holds the record. Returns the entry's offset.
#[inline]
pub fn push_before_image(
    arena: &mut Vec<u8>,
    table: u32,
    rid: u64,
    payload: usize,
    seq_word: usize,
    fill: impl FnOnce(&mut [u8]),
) -> usize {
    let row = payload - crate::storage::stamp::STAMP_BYTES;
    let len = row_len(row);
    let at = arena.len();
    // The seq is filled in from the stamp below, once the payload is copied.
    push_entry_header(arena, table, len, rid, 0);
    let body = arena.len();
    arena.resize(body + payload, 0);
    fill(&mut arena[body..]);
    let seq_bytes = body + 8 * seq_word;
    let seq: [u8; 8] = arena[seq_bytes..seq_bytes + 8]
        .try_into()
        .expect("eight bytes");
    arena[body - 8..body].copy_from_slice(&seq);
    arena.truncate(body + row);
    at
}

/// Appends one entry, the whole `row` of version `seq` of record `rid` of table `table`, to
/// an entry arena; returns the entry's offset in it.
#[inline]
pub fn push_entry(arena: &mut Vec<u8>, table: u32, rid: u64, seq: u64, row: &[u8]) -> usize {
    let at = arena.len();
    push_entry_header(arena, table, row_len(row.len()), rid, seq);
    arena.extend_from_slice(row);
    at
}

/// A whole row's length field: the row's bytes, which must leave the delta bit clear.
#[inline]
fn row_len(bytes: usize) -> u32 {
    u32::try_from(bytes)
        .ok()
        .filter(|len| len & DELTA == 0)
        .expect("a row fits in 31 bits")
}

/// An entry's header, in one append (one capacity check instead of four): table, length
/// field, record id, seq.
#[inline(always)]
fn push_entry_header(arena: &mut Vec<u8>, table: u32, len: u32, rid: u64, seq: u64) {
    let mut h = [0u8; ENTRY_HEADER];
    h[..4].copy_from_slice(&table.to_le_bytes());
    h[4..8].copy_from_slice(&len.to_le_bytes());
    h[8..16].copy_from_slice(&rid.to_le_bytes());
    h[16..].copy_from_slice(&seq.to_le_bytes());
    arena.extend_from_slice(&h);
}

/// One frame, read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A file's first frame.
    FileHeader(SegmentHeader),
    /// A committed transaction.
    Txn(TxnFrame<'a>),
    /// Every transaction of this file with an epoch at or below the marker's precedes it.
    Epoch(EpochMarker),
    /// An attempt's before-images and outcome (an undo log).
    Undo(UndoFrame<'a>),
}

/// An undo frame: the attempt, its outcome, and its before-images (the entries of a
/// [`TxnFrame`], each the row of version `seq` before the attempt wrote the record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoFrame<'a> {
    /// The attempt's epoch: its commit epoch, or for an abort the epoch current when it
    /// ended.
    pub epoch: u64,
    /// Its attempt id (`Txn::id`).
    pub txn_id: u64,
    /// Whether it committed.
    pub committed: bool,
    /// The before-images, as a transaction frame's entries.
    pub images: TxnFrame<'a>,
}

/// A transaction frame: its epoch, id and entries (already checked to parse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnFrame<'a> {
    /// The epoch it committed in.
    pub epoch: u64,
    /// Its attempt id (`Txn::id`).
    pub txn_id: u64,
    /// Number of entries.
    pub count: u32,
    entries: &'a [u8],
}

/// The top bit of an entry's length word: the entry is a delta (module docs).
const DELTA: u32 = 1 << 31;
/// Bytes of a delta run's header: word offset and word count, u16 each.
const RUN_HEADER: usize = 4;

/// Appends a delta entry for `row` (whole words) of record `rid` of table `table`, replacing
/// the version `old` (the same length), when the delta is smaller than the row
/// ([`Entry::delta`]); returns its offset, or `None` with the arena unchanged (log the whole
/// row instead).
#[inline]
pub fn push_delta(
    arena: &mut Vec<u8>,
    table: u32,
    rid: u64,
    seq: u64,
    row: &[u8],
    old: &[u8],
) -> Option<usize> {
    if old.len() != row.len() || old.len() % 8 != 0 {
        return None;
    }
    let old_words: Vec<AtomicU64> = old
        .chunks_exact(8)
        .map(|w| AtomicU64::new(u64::from_le_bytes(w.try_into().expect("8-byte chunk"))))
        .collect();
    push_delta_with(arena, table, rid, seq, row, &old_words)
}

/// [`push_delta`] with the replaced version given as the words it lies in (`old`, at least as
/// many as `row` has, little-endian, as a record's payload holds them), so a caller holding a
/// record diffs it where it lies instead of copying it out first. The caller must hold the
/// record exclusively: nobody stores to `old` while it is read. Rows of more than
/// [`MAX_DELTA_WORDS`] words are logged whole.
#[inline]
pub fn push_delta_with(
    arena: &mut Vec<u8>,
    table: u32,
    rid: u64,
    seq: u64,
    row: &[u8],
    old: &[AtomicU64],
) -> Option<usize> {
    let words = row.len() / 8;
    if row.len() % 8 != 0 || words > MAX_DELTA_WORDS || old.len() < words {
        return None;
    }
    // First a bitmap of the changed words, 64 words to a mask; then the runs are read off it.
    let mut changed = [0u64; MAX_DELTA_WORDS / 64];
    for (block, mask) in changed.iter_mut().enumerate().take(words.div_ceil(64)) {
        let (first, end) = (64 * block, words.min(64 * block + 64));
        *mask = changed_words(&row[8 * first..8 * end], &old[first..end]);
    }
    let at = arena.len();
    // The length field is filled in at the end, when the runs are known.
    push_entry_header(arena, table, 0, rid, seq);
    let body = arena.len();
    let mut from = 0;
    while let Some(first) = next_bit(&changed, from, true, words) {
        let end = next_bit(&changed, first, false, words).unwrap_or(words);
        if !push_run(arena, body, row, first, end) {
            arena.truncate(at);
            return None;
        }
        from = end;
    }
    let len = u32::try_from(arena.len() - body).expect("smaller than the row") | DELTA;
    arena[at + 4..at + 8].copy_from_slice(&len.to_le_bytes());
    Some(at)
}

/// The mask of the words of `row` (at most 64 words' bytes) that differ from `old` (as many
/// words): bit `i` for word `i`. Four words a step, each step's four bits at fixed shifts and
/// merged with one variable shift: per word a load of each side, a compare and a set, with no
/// branch and no per-word index arithmetic (a word at a time, with the mask's position taken
/// modulo 64 each word, cost twice the instructions; docs/RESULTS.md).
#[inline(always)]
fn changed_words(row: &[u8], old: &[AtomicU64]) -> u64 {
    // Relaxed: the caller holds the record exclusively (`push_delta_with`), so no store races
    // these loads; they read the version the caller's own ordering made visible.
    let differs = |word: &[u8], old: &AtomicU64| {
        u64::from(
            u64::from_le_bytes(word.try_into().expect("8-byte chunk"))
                != old.load(Ordering::Relaxed),
        )
    };
    let mut mask = 0u64;
    let mut shift = 0;
    let mut rows = row.chunks_exact(32);
    let mut olds = old.chunks_exact(4);
    for (r, o) in (&mut rows).zip(&mut olds) {
        let four = differs(&r[..8], &o[0])
            | differs(&r[8..16], &o[1]) << 1
            | differs(&r[16..24], &o[2]) << 2
            | differs(&r[24..32], &o[3]) << 3;
        mask |= four << shift;
        shift += 4;
    }
    for (r, o) in rows.remainder().chunks_exact(8).zip(olds.remainder()) {
        mask |= differs(r, o) << shift;
        shift += 1;
    }
    mask
}

/// Most words of a row [`push_delta_with`] diffs (4 KiB; a larger row is logged whole): its
/// bitmap of changed words lives on the stack, and clearing it costs two vector stores.
pub const MAX_DELTA_WORDS: usize = 512;

/// The first word at or after `from` and before `words` whose bit in `masks` is `set` (one
/// bit per word, word `i` at bit `i % 64` of mask `i / 64`), or `None`.
#[inline]
fn next_bit(masks: &[u64], from: usize, set: bool, words: usize) -> Option<usize> {
    let mut i = from;
    while i < words {
        let mask = masks[i / 64];
        let rest = if set { mask } else { !mask } >> (i % 64);
        if rest != 0 {
            let at = i + rest.trailing_zeros() as usize;
            return (at < words).then_some(at);
        }
        i = (i / 64 + 1) * 64;
    }
    None
}

/// Appends the run of `row`'s words `first..end` to a delta whose runs begin at `body`;
/// false, appending nothing, when the delta would no longer be smaller than the row.
#[inline]
fn push_run(arena: &mut Vec<u8>, body: usize, row: &[u8], first: usize, end: usize) -> bool {
    if arena.len() - body + RUN_HEADER + 8 * (end - first) >= row.len() {
        return false;
    }
    // Both fit in u16: the row's word count does.
    let mut h = [0u8; RUN_HEADER];
    h[..2].copy_from_slice(&(first as u16).to_le_bytes());
    h[2..].copy_from_slice(&((end - first) as u16).to_le_bytes());
    arena.extend_from_slice(&h);
    arena.extend_from_slice(&row[8 * first..8 * end]);
    true
}

/// One record written by a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Table index.
    pub table: u32,
    /// Record id.
    pub rid: u64,
    /// The version's place in the record's history: replay keeps the highest.
    pub seq: u64,
    /// The row (padded to a word), or a delta's runs ([`Entry::delta`]).
    pub row: &'a [u8],
    /// Whether `row` holds a delta against version `seq - 1` ([`Entry::runs`]) rather than
    /// the whole row.
    pub delta: bool,
}

impl<'a> Entry<'a> {
    /// A delta's runs: each the first word it replaces and the new words' bytes (checked to
    /// parse when the frame was read).
    pub fn runs(&self) -> impl Iterator<Item = (usize, &'a [u8])> + 'a {
        let mut rest = if self.delta { self.row } else { &[] };
        std::iter::from_fn(move || {
            let (first, bytes, tail) = parse_run(rest)?;
            rest = tail;
            Some((first, bytes))
        })
    }
}

/// One run of a delta: its first word, its new words' bytes, and the rest.
fn parse_run(b: &[u8]) -> Option<(usize, &[u8], &[u8])> {
    let first = usize::from(u16::from_le_bytes(b.get(0..2)?.try_into().ok()?));
    let words = usize::from(u16::from_le_bytes(b.get(2..4)?.try_into().ok()?));
    let bytes = b.get(RUN_HEADER..RUN_HEADER + 8 * words)?;
    Some((first, bytes, &b[RUN_HEADER + 8 * words..]))
}

impl<'a> TxnFrame<'a> {
    /// The entries, in install order.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'a>> + 'a {
        let mut rest = self.entries;
        (0..self.count).map(move |_| {
            let (entry, tail) = parse_entry(rest).expect("checked when the frame was read");
            rest = tail;
            entry
        })
    }
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

pub(crate) fn parse_entry(b: &[u8]) -> Option<(Entry<'_>, &[u8])> {
    let table = u32_at(b, 0)?;
    let len_word = u32_at(b, 4)?;
    let delta = len_word & DELTA != 0;
    let len = (len_word & !DELTA) as usize;
    let rid = u64_at(b, 8)?;
    let seq = u64_at(b, 16)?;
    let row = b.get(ENTRY_HEADER..ENTRY_HEADER + len)?;
    if delta {
        // Every run whole, and a predecessor to apply to.
        let mut rest = row;
        while !rest.is_empty() {
            rest = parse_run(rest)?.2;
        }
        if seq < 2 {
            return None;
        }
    }
    Some((
        Entry {
            table,
            rid,
            seq,
            row,
            delta,
        },
        &b[ENTRY_HEADER + len..],
    ))
}

/// Why a reader stopped before the end of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Torn {
    /// The frame's length runs past the end of the file (a write cut short).
    Truncated,
    /// The frame's checksum does not match its bytes.
    Checksum,
    /// The checksum matched but the body does not parse (or a length word is absurd).
    Malformed,
}

impl std::fmt::Display for Torn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Torn::Truncated => "frame cut short",
            Torn::Checksum => "checksum mismatch",
            Torn::Malformed => "malformed frame",
        })
    }
}

/// Reads the frames of one file's bytes in order, stopping at the first bad one.
pub struct FrameReader<'a> {
    bytes: &'a [u8],
    at: usize,
    stopped: Option<Torn>,
}

impl<'a> FrameReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        FrameReader {
            bytes,
            at: 0,
            stopped: None,
        }
    }

    /// Offset of the first byte not yet read: after the last good frame once the reader ended.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// Why the reader stopped before the end, if it did.
    pub fn torn(&self) -> Option<Torn> {
        self.stopped
    }

    fn read_frame(&self) -> Result<(Frame<'a>, usize), Torn> {
        let (kind, rest, frame_len) = read_raw_frame(&self.bytes[self.at..])?;
        let frame = match kind {
            KIND_FILE_HEADER => {
                if rest.len() != FILE_HEADER_BODY || u64_at(rest, 0) != Some(MAGIC) {
                    return Err(Torn::Malformed);
                }
                if u32_at(rest, 8) != Some(FORMAT_VERSION) {
                    return Err(Torn::Malformed);
                }
                let field = |at| u64_at(rest, at).ok_or(Torn::Malformed);
                Frame::FileHeader(SegmentHeader {
                    log: u32_at(rest, 12).ok_or(Torn::Malformed)?,
                    run_id: field(16)?,
                    segment: u32_at(rest, 24).ok_or(Torn::Malformed)?,
                    prev_max_epoch: field(28)?,
                    prev_marker: marker_at(rest, 36).ok_or(Torn::Malformed)?,
                })
            }
            KIND_EPOCH if rest.len() == MARKER_BODY => {
                Frame::Epoch(marker_at(rest, 0).ok_or(Torn::Malformed)?)
            }
            KIND_TXN => Frame::Txn(parse_txn(rest, rest.get(TXN_HEADER..).unwrap_or(&[]))?),
            KIND_UNDO => {
                let committed = match rest.get(TXN_HEADER) {
                    Some(0) => false,
                    Some(1) => true,
                    _ => return Err(Torn::Malformed),
                };
                let images = parse_txn(rest, &rest[UNDO_HEADER..])?;
                if images.entries().any(|e| e.delta) {
                    return Err(Torn::Malformed);
                }
                Frame::Undo(UndoFrame {
                    epoch: images.epoch,
                    txn_id: images.txn_id,
                    committed,
                    images,
                })
            }
            _ => return Err(Torn::Malformed),
        };
        Ok((frame, frame_len))
    }
}

/// A transaction frame whose header (epoch, txn id, count) starts `header` and whose entries are
/// `entries`, every entry checked to parse.
fn parse_txn<'a>(header: &'a [u8], entries: &'a [u8]) -> Result<TxnFrame<'a>, Torn> {
    let epoch = u64_at(header, 0).ok_or(Torn::Malformed)?;
    let txn_id = u64_at(header, 8).ok_or(Torn::Malformed)?;
    let count = u32_at(header, 16).ok_or(Torn::Malformed)?;
    let mut tail = entries;
    for _ in 0..count {
        tail = parse_entry(tail).ok_or(Torn::Malformed)?.1;
    }
    if !tail.is_empty() {
        return Err(Torn::Malformed);
    }
    Ok(TxnFrame {
        epoch,
        txn_id,
        count,
        entries,
    })
}

/// The frame at the start of `b`, checked for length and checksum: its kind, the body after
/// the kind, and the frame's whole length.
pub(crate) fn read_raw_frame(b: &[u8]) -> Result<(u8, &[u8], usize), Torn> {
    let (Some(len), Some(crc)) = (u32_at(b, 0), u32_at(b, 4)) else {
        return Err(Torn::Truncated);
    };
    let len = len as usize;
    if len == 0 || len > MAX_FRAME {
        return Err(Torn::Malformed);
    }
    let Some(body) = b.get(FRAME_HEADER..FRAME_HEADER + len) else {
        return Err(Torn::Truncated);
    };
    if checksum(body) != crc {
        return Err(Torn::Checksum);
    }
    Ok((body[0], &body[1..], FRAME_HEADER + len))
}

impl<'a> Iterator for FrameReader<'a> {
    type Item = Frame<'a>;

    fn next(&mut self) -> Option<Frame<'a>> {
        if self.stopped.is_some() || self.at == self.bytes.len() {
            return None;
        }
        match self.read_frame() {
            Ok((frame, len)) => {
                self.at += len;
                Some(frame)
            }
            Err(why) => {
                self.stopped = Some(why);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: EpochMarker = EpochMarker {
        epoch: 1,
        files: 3,
        below: 0,
    };

    fn sample() -> (Vec<u8>, Vec<usize>) {
        let mut buf = Vec::new();
        let mut ends = Vec::new();
        write_file_header(&mut buf, 3, 77);
        ends.push(buf.len());
        let mut arena = Vec::new();
        push_entry(&mut arena, 0, 5, 1, &[1; 16]);
        push_entry(&mut arena, 2, 9, 4, &[2; 8]);
        write_txn(&mut buf, 1, 0x100, 2, &arena);
        ends.push(buf.len());
        write_epoch_marker(&mut buf, &MARKER);
        ends.push(buf.len());
        (buf, ends)
    }

    #[test]
    fn frames_round_trip() {
        let (buf, _) = sample();
        let frames: Vec<_> = FrameReader::new(&buf).collect();
        assert_eq!(frames[0], Frame::FileHeader(SegmentHeader::first(3, 77)));
        let Frame::Txn(t) = frames[1] else {
            panic!("{:?}", frames[1])
        };
        assert_eq!((t.epoch, t.txn_id, t.count), (1, 0x100, 2));
        let e: Vec<_> = t.entries().collect();
        assert_eq!(
            (e[0].table, e[0].rid, e[0].seq, e[0].row),
            (0, 5, 1, &[1; 16][..])
        );
        assert_eq!(
            (e[1].table, e[1].rid, e[1].seq, e[1].row),
            (2, 9, 4, &[2; 8][..])
        );
        assert_eq!(frames[2], Frame::Epoch(MARKER));
        assert_eq!(frames.len(), 3);
    }

    /// A file cut at every byte offset reads back exactly the frames that end at or before the
    /// cut, and the reader's offset is the end of the last of them.
    #[test]
    fn a_tail_torn_at_every_offset_keeps_the_whole_frames_before_it() {
        let (buf, ends) = sample();
        for cut in 0..=buf.len() {
            let mut r = FrameReader::new(&buf[..cut]);
            let n = r.by_ref().count();
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(n, whole, "cut at {cut}");
            assert_eq!(r.offset(), if whole == 0 { 0 } else { ends[whole - 1] });
            assert_eq!(r.torn().is_some(), r.offset() != cut, "cut at {cut}");
        }
    }

    /// Flipping any one bit of a file stops the reader at or before the frame holding it.
    #[test]
    fn a_flipped_bit_stops_the_reader_at_its_frame() {
        let (buf, ends) = sample();
        for byte in 0..buf.len() {
            for bit in [0, 3, 7] {
                let mut bad = buf.clone();
                bad[byte] ^= 1 << bit;
                let mut r = FrameReader::new(&bad);
                let n = r.by_ref().count();
                let frame = ends.iter().filter(|&&e| e <= byte).count();
                assert!(n <= frame, "byte {byte} bit {bit}: read {n} frames");
                assert!(r.torn().is_some(), "byte {byte} bit {bit}");
            }
        }
    }

    fn marker(epoch: u64, files: u32, below: u64) -> EpochMarker {
        EpochMarker {
            epoch,
            files,
            below,
        }
    }

    /// A delta holds only the words that changed, in runs, and reads back as them; one no
    /// smaller than the row is refused with the arena unchanged; a delta against the loaded
    /// version (seq 1) does not parse.
    #[test]
    fn a_delta_holds_the_changed_words_and_only_when_smaller() {
        let old = [1u64, 2, 3, 4, 5, 6, 7, 8];
        let mut new = old;
        new[1] = 20;
        new[2] = 30;
        new[6] = 70;
        let row: Vec<u8> = new.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut arena = vec![0xFF];
        let old_bytes: Vec<u8> = old.iter().flat_map(|w| w.to_le_bytes()).collect();
        let at = push_delta(&mut arena, 2, 9, 5, &row, &old_bytes).expect("smaller");
        let (e, rest) = parse_entry(&arena[at..]).expect("parses");
        assert!(rest.is_empty() && e.delta);
        assert_eq!(
            (e.table, e.rid, e.seq, e.row.len()),
            (2, 9, 5, 2 * RUN_HEADER + 24)
        );
        let runs: Vec<(usize, Vec<u64>)> = e
            .runs()
            .map(|(first, b)| {
                let words = b
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap()));
                (first, words.collect())
            })
            .collect();
        assert_eq!(runs, vec![(1, vec![20, 30]), (6, vec![70])]);
        // Every word changed: the whole row is smaller.
        let before = arena.clone();
        let flipped: Vec<u8> = row.iter().map(|b| !b).collect();
        assert_eq!(push_delta(&mut arena, 2, 9, 6, &row, &flipped), None);
        assert_eq!(arena, before);
        // Against the loaded version: malformed.
        let mut loaded = Vec::new();
        let at = push_delta(&mut loaded, 2, 9, 1, &row, &old_bytes).expect("smaller");
        assert!(parse_entry(&loaded[at..]).is_none());
        // A run that reaches the row's last word is closed by the end of the row.
        let mut tail = old;
        tail[7] = 80;
        let row: Vec<u8> = tail.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut arena = Vec::new();
        let at = push_delta(&mut arena, 2, 9, 5, &row, &old_bytes).expect("smaller");
        let (e, _) = parse_entry(&arena[at..]).expect("parses");
        let runs: Vec<(usize, usize)> = e.runs().map(|(first, w)| (first, w.len())).collect();
        assert_eq!(runs, vec![(7, 8)]);
        // Fewer old words than the row has: no delta, the arena unchanged.
        let short = cells(&old[..7]);
        assert_eq!(push_delta_with(&mut arena, 2, 9, 6, &row, &short), None);
        assert_eq!(arena.len(), at + ENTRY_HEADER + RUN_HEADER + 8);
    }

    /// `words` as a record's payload holds them.
    fn cells(words: &[u64]) -> Vec<AtomicU64> {
        words.iter().map(|&w| AtomicU64::new(w)).collect()
    }

    /// Deltas of rows of every size around the bitmap's 64-word blocks and its four-word
    /// steps, with runs that start, end and cross block boundaries: each run covers exactly
    /// the changed words, and a row past [`MAX_DELTA_WORDS`] gets no delta.
    #[test]
    fn delta_runs_are_exactly_the_changed_words_across_blocks() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for words in [
            1usize, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 66, 67, 127, 128, 129, 200,
        ] {
            for pattern in 0..40 {
                let old: Vec<u64> = (0..words as u64).collect();
                let mut new = old.clone();
                // Pattern 0 changes nothing; the others change runs of random length.
                for _ in 0..pattern % 6 {
                    let first = (next() as usize) % words;
                    let len = 1 + (next() as usize) % 70;
                    for w in new.iter_mut().skip(first).take(len) {
                        *w = !*w;
                    }
                }
                let row: Vec<u8> = new.iter().flat_map(|w| w.to_le_bytes()).collect();
                let differs: Vec<bool> = old.iter().zip(&new).map(|(a, b)| a != b).collect();
                let runs = (0..words)
                    .filter(|&i| differs[i] && (i == 0 || !differs[i - 1]))
                    .count();
                let changed = differs.iter().filter(|&&d| d).count();
                let mut arena = Vec::new();
                let Some(at) = push_delta_with(&mut arena, 1, 2, 3, &row, &cells(&old)) else {
                    // Only when the runs would be no smaller than the row.
                    assert!(runs * RUN_HEADER + 8 * changed >= row.len());
                    assert!(arena.is_empty());
                    continue;
                };
                assert!(runs * RUN_HEADER + 8 * changed < row.len());
                let (e, rest) = parse_entry(&arena[at..]).expect("parses");
                assert!(rest.is_empty() && e.delta);
                let mut covered = vec![false; words];
                let mut applied = old.clone();
                let mut last_end = None;
                for (first, bytes) in e.runs() {
                    let n = bytes.len() / 8;
                    assert!(n > 0);
                    assert_ne!(last_end, Some(first), "adjacent runs are one run");
                    for k in 0..n {
                        covered[first + k] = true;
                        applied[first + k] =
                            u64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().unwrap());
                    }
                    last_end = Some(first + n);
                }
                assert_eq!(applied, new, "{words} words, pattern {pattern}");
                for i in 0..words {
                    assert_eq!(covered[i], old[i] != new[i], "word {i} of {words}");
                }
            }
        }
        let big = vec![0u8; 8 * (MAX_DELTA_WORDS + 1)];
        let mut arena = Vec::new();
        let old = cells(&[1u64; MAX_DELTA_WORDS + 1]);
        assert_eq!(push_delta_with(&mut arena, 0, 0, 2, &big, &old), None);
    }

    /// A payload of `row` followed by a stamp naming `seq` (writer 9, a checksum word).
    fn stamped(row: &[u8], seq: u64) -> Vec<u8> {
        let mut p = row.to_vec();
        for w in [9u64, seq, 0xC0FFEE] {
            p.extend_from_slice(&w.to_le_bytes());
        }
        p
    }

    /// An undo frame reads back with its outcome and its before-images, each the row without
    /// its stamp and the seq from the stamp's seq word; every prefix of it and every flipped
    /// bit is refused; a delta among its entries, or an outcome byte other than 0 or 1, is
    /// malformed.
    #[test]
    fn undo_frames_round_trip_with_their_outcome_and_images() {
        let word = crate::storage::stamp::seq_word;
        let (a, b) = (stamped(&[5; 16], 7), stamped(&[6; 8], 0));
        let mut arena = Vec::new();
        push_before_image(&mut arena, 1, 11, a.len(), word(a.len()), |out| {
            out.copy_from_slice(&a)
        });
        push_before_image(&mut arena, 3, 12, b.len(), word(b.len()), |out| {
            out.copy_from_slice(&b)
        });
        let mut buf = Vec::new();
        write_undo(&mut buf, 4, 0x200, true, 2, &arena);
        let one = buf.len();
        write_undo(&mut buf, 5, 0x201, false, 0, &[]);
        let frames: Vec<_> = FrameReader::new(&buf).collect();
        let [Frame::Undo(c), Frame::Undo(d)] = frames[..] else {
            panic!("{frames:?}")
        };
        assert_eq!((c.epoch, c.txn_id, c.committed), (4, 0x200, true));
        assert_eq!(
            (d.epoch, d.txn_id, d.committed, d.images.count),
            (5, 0x201, false, 0)
        );
        let e: Vec<_> = c
            .images
            .entries()
            .map(|e| (e.table, e.rid, e.seq, e.row.to_vec(), e.delta))
            .collect();
        assert_eq!(
            e,
            vec![
                (1, 11, 7, vec![5; 16], false),
                (3, 12, 0, vec![6; 8], false)
            ]
        );
        for cut in 0..one {
            assert_eq!(FrameReader::new(&buf[..cut]).count(), 0, "cut at {cut}");
        }
        for byte in 0..one {
            let mut bad = buf[..one].to_vec();
            bad[byte] ^= 0x10;
            assert_eq!(FrameReader::new(&bad).count(), 0, "byte {byte}");
        }
        // A delta is never a before-image.
        let old: Vec<u8> = (0..64).collect();
        let mut new = old.clone();
        new[8] ^= 1;
        let mut deltas = Vec::new();
        push_delta(&mut deltas, 0, 11, 3, &new, &old).expect("smaller");
        let mut bad = Vec::new();
        write_undo(&mut bad, 4, 0x200, true, 1, &deltas);
        let mut r = FrameReader::new(&bad);
        assert_eq!(r.by_ref().count(), 0);
        assert_eq!(r.torn(), Some(Torn::Malformed));
        // Outcome 2: malformed (the checksum is recomputed, so only the parse can refuse it).
        let mut two = Vec::new();
        let start = begin_frame(&mut two, KIND_UNDO);
        two.extend_from_slice(&[0; TXN_HEADER]);
        two.push(2);
        end_frame(&mut two, start);
        let mut r = FrameReader::new(&two);
        assert_eq!(r.by_ref().count(), 0);
        assert_eq!(r.torn(), Some(Torn::Malformed));
    }

    /// A header's marker reads back with all three fields.
    #[test]
    fn a_segment_header_carries_the_last_marker() {
        let h = SegmentHeader {
            log: 2,
            run_id: 9,
            segment: 4,
            prev_max_epoch: 17,
            prev_marker: marker(19, 2, 18),
        };
        let mut buf = Vec::new();
        write_segment_header(&mut buf, &h);
        let frames: Vec<_> = FrameReader::new(&buf).collect();
        assert_eq!(frames, vec![Frame::FileHeader(h)]);
    }

    /// The frontier: the last flush's epoch when every log it wrote ends with its marker, else
    /// the flush before it; logs the flush skipped do not hold it back.
    #[test]
    fn the_frontier_counts_the_logs_the_last_flush_wrote() {
        assert_eq!(frontier(&[]), 0);
        assert_eq!(frontier(&[EpochMarker::NONE; 3]), 0);
        // Flush 7 wrote logs 0 and 2 (log 1 had nothing since flush 3).
        let done = [marker(7, 2, 5), marker(3, 1, 2), marker(7, 2, 5)];
        assert_eq!(frontier(&done), 7);
        // Cut short: log 2's write of flush 7 was lost, it ends at flush 5.
        let cut = [marker(7, 2, 5), marker(3, 1, 2), marker(5, 3, 3)];
        assert_eq!(frontier(&cut), 5);
        // A flush that wrote one log (the others idle) completes with that one.
        assert_eq!(frontier(&[marker(9, 1, 7), EpochMarker::NONE]), 9);
        // Every log written at every flush: the least last marker.
        assert_eq!(frontier(&[marker(4, 2, 3), marker(3, 2, 2)]), 3);
    }
}
