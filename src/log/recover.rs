//! Replay: read a log directory's files in parallel, find the durable frontier, and apply every
//! transaction at or below it to a database, last writer (highest seq) wins per record; with
//! checkpoints, first the newest complete checkpoint whose logs are all there, then only the
//! transactions from its start epoch (`checkpoint` module docs: why that is exact).
//!
//! Two passes, the scan with one thread per file, the apply with one thread per core taking
//! pieces of every file in turn ([`REPLAY_PIECE_BYTES`]):
//!
//! 1. *Scan*: check every frame (length, CRC-32C, structure) from the start, stop at the first
//!    bad one (a torn or corrupted tail) and note where and why, and the file's last epoch
//!    marker. A log is its segments in order, up to the first that stops early (a later one
//!    holds only epochs above what the torn one lost); its last marker is the highest there,
//!    or one the first segment's header names. The frontier follows from the logs' last
//!    markers ([`EpochMarker`]): the last flush's epoch when every log it wrote ends with its
//!    marker, else the epoch of the flush before; every log holds all of its workers'
//!    transactions at or below it (`writer.rs`).
//! 2. *Apply*: walk each valid prefix again, piece by piece, and apply the entries of
//!    transactions at or below the frontier. A latch per record ([`ReplayLatches`], striped over the records, so any
//!    database can be recovered into, whatever its record metadata: `txbench recover`'s, or
//!    a restarting server's under its protocol) makes compare-and-store of one record atomic
//!    between the threads; the entry with the higher seq wins whatever order the files are
//!    replayed in.
//!
//! Transactions above the frontier are skipped whole (none was acknowledged: a transaction is
//! acknowledged only once its epoch is durable), so no transaction is ever partly applied.

use super::LogError;
use super::checkpoint::file::{CheckpointContents, frame_entries, read_checkpoint};
use super::files::{
    Manifest, checkpoint_file, parse_checkpoint_name, parse_segment_name, read_manifest,
};
use super::format::{Entry, EpochMarker, Frame, FrameReader, SegmentHeader, Torn};
use crate::storage::stamp::{STAMP_BYTES, seq_word};
use crate::storage::{Database, RecordId};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A latch replay threads take around the compare-and-store of one record; also the record
/// metadata of `txbench recover`'s database, which needs none of its own.
#[derive(Default)]
pub struct ReplayLatch(AtomicBool);

/// The latches of one recovery: record `(table, rid)` takes stripe `hash(table, rid)`. Two
/// records may share a stripe (a thread then waits for a copy it did not need to), never one
/// record two stripes; a replayer holds one latch at a time, so no deadlock.
pub struct ReplayLatches(Box<[ReplayLatch]>);

impl Default for ReplayLatches {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayLatches {
    /// Stripes: enough that replay threads (one per file) rarely meet.
    const STRIPES: usize = 4096;

    /// Every stripe free.
    pub fn new() -> Self {
        ReplayLatches((0..Self::STRIPES).map(|_| ReplayLatch::default()).collect())
    }

    fn of(&self, table: u32, rid: u64) -> &ReplayLatch {
        // Fibonacci hashing of the pair: consecutive records land on different stripes.
        let h = (rid ^ (u64::from(table) << 48)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        &self.0[(h >> 52) as usize % Self::STRIPES]
    }
}

impl ReplayLatch {
    fn lock(&self) {
        // Acquire: pairs with `unlock`'s Release, so the last replayer's stores are seen.
        while self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Held for one record's copy; with more threads than cores the holder may be
            // descheduled, so do not spin long.
            std::thread::yield_now();
        }
    }

    fn unlock(&self) {
        // Release: this replayer's stores happen before the next holder's loads.
        self.0.store(false, Ordering::Release);
    }
}

/// One log file, read.
pub struct LogFile {
    /// Its path.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// One log: its segment files present, in order (numbers consecutive or not: the
/// scan checks).
pub struct SegmentedLog {
    /// The log's number (worker `w` writes to log `w % logs`).
    pub log: usize,
    /// (segment number, file), ascending.
    pub segments: Vec<(u32, LogFile)>,
}

/// A log directory, read: its manifest, every log's segments, and its complete checkpoints'
/// numbers, newest first.
pub struct LogDir {
    /// The manifest.
    pub manifest: Manifest,
    /// One per log of the manifest.
    pub logs: Vec<SegmentedLog>,
    /// Numbers of `checkpoint-N.ckpt` files, newest first.
    pub checkpoints: Vec<u64>,
}

/// Reads a log directory: its manifest, every log's segment files, and which checkpoints
/// it holds (their files are read when chosen).
pub fn read_log_dir(dir: &Path) -> Result<LogDir, LogError> {
    let manifest = read_manifest(dir)?;
    if manifest.kind == super::LogKind::Undo {
        return Err(LogError::UndoLog(dir.to_path_buf()));
    }
    let mut logs: Vec<SegmentedLog> = (0..manifest.logs)
        .map(|log| SegmentedLog {
            log,
            segments: Vec::new(),
        })
        .collect();
    let mut checkpoints = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| LogError::io(dir, e))? {
        let entry = entry.map_err(|e| LogError::io(dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if let Some(n) = parse_checkpoint_name(&name) {
            checkpoints.push(n);
        } else if let Some((l, seg)) = parse_segment_name(&name)
            && l < logs.len()
        {
            let path = entry.path();
            let bytes = std::fs::read(&path).map_err(|e| LogError::io(&path, e))?;
            logs[l].segments.push((seg, LogFile { path, bytes }));
        }
    }
    for l in &mut logs {
        l.segments.sort_by_key(|(n, _)| *n);
    }
    checkpoints.sort_unstable_by(|a, b| b.cmp(a));
    Ok(LogDir {
        manifest,
        logs,
        checkpoints,
    })
}

/// What the scan found in one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileScan {
    /// The file.
    pub file: String,
    /// Its length.
    pub bytes: u64,
    /// Bytes of whole, valid frames from the start: where reading stopped.
    pub valid_bytes: u64,
    /// Why reading stopped before the end (`None`: the file ended cleanly).
    pub stopped: Option<String>,
    /// Transactions in the valid prefix.
    pub txns: u64,
    /// The epoch of the last marker in the valid prefix, or of the one its header says the
    /// log's earlier segments reached (0: none).
    pub last_marker: u64,
    /// That marker whole (what its flush wrote, for the frontier).
    #[serde(skip)]
    pub marker: EpochMarker,
    /// What is wrong with the file's header, if anything (another run's file, another log's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_problem: Option<String>,
    /// The header, when it read.
    #[serde(skip)]
    pub header: Option<SegmentHeader>,
    /// Frame boundaries inside the valid prefix, about [`REPLAY_PIECE_BYTES`] apart: replay
    /// applies the pieces between them in parallel.
    #[serde(skip)]
    pub splits: Vec<u64>,
}

/// About how many bytes of a log file one replay task applies. Logs shared by several workers
/// (`--log-files`) are few, often one: replaying each file on one thread left the other cores
/// idle, so a file is cut at frame boundaries into pieces, and every core takes pieces from
/// all files. Order within a file does not matter to replay (highest seq wins; a delta that
/// comes before its version waits for the last pass).
pub const REPLAY_PIECE_BYTES: u64 = 4 << 20;

/// [`REPLAY_PIECE_BYTES`], or in tests a smaller size a test asked for (for every recovery in
/// the process meanwhile: smaller pieces change no result, only the order of replay).
fn replay_piece_bytes() -> u64 {
    #[cfg(test)]
    {
        // Relaxed: a size hint; any value read gives a correct replay.
        let asked = tests::PIECE_BYTES.load(Ordering::Relaxed);
        if asked > 0 {
            return asked;
        }
    }
    REPLAY_PIECE_BYTES
}

/// Scans one file's bytes (pass 1): a segment of log `log` of the run `run_id`.
pub fn scan_file(name: &str, bytes: &[u8], log: usize, run_id: u64) -> FileScan {
    let mut reader = FrameReader::new(bytes);
    let (mut txns, mut marker) = (0, EpochMarker::NONE);
    let mut header_problem = None;
    let mut header = None;
    let mut first = true;
    let mut splits = Vec::new();
    let mut piece_start = 0;
    let piece_bytes = replay_piece_bytes();
    loop {
        let at = reader.offset() as u64;
        let Some(frame) = reader.next() else { break };
        if at - piece_start >= piece_bytes {
            splits.push(at);
            piece_start = at;
        }
        match frame {
            Frame::FileHeader(h) => {
                if !first {
                    header_problem = Some("a second file header".to_string());
                } else if h.log as usize != log || h.run_id != run_id {
                    header_problem = Some(format!(
                        "header names log {} of run {}, the file name log {log} of run \
                         {run_id}",
                        h.log, h.run_id
                    ));
                } else {
                    header = Some(h);
                    marker = h.prev_marker;
                }
            }
            Frame::Txn(_) => txns += 1,
            Frame::Epoch(m) if m.epoch >= marker.epoch => marker = m,
            Frame::Epoch(_) => {}
            // Not in a redo log; `read_log_dir` refuses an undo log before any scan.
            Frame::Undo(_) => {}
        }
        if first && !matches!(frame, Frame::FileHeader(_)) {
            header_problem = Some("no file header".to_string());
        }
        first = false;
    }
    // No whole frame at all: the run stopped before writing the file's header (a kill or a
    // power loss while the log was being created), so the file holds no transaction and its
    // last marker, 0, keeps the frontier at 0: nothing is replayed, which is right, since no
    // transaction can be acknowledged before every file exists.
    FileScan {
        file: name.to_string(),
        bytes: bytes.len() as u64,
        valid_bytes: reader.offset() as u64,
        stopped: if bytes.is_empty() {
            Some("empty or missing: the run stopped before writing it".to_string())
        } else {
            reader
                .torn()
                .map(|t: Torn| format!("{t} at offset {}", reader.offset()))
        },
        txns,
        last_marker: marker.epoch,
        marker,
        header_problem,
        header,
        splits,
    }
}

/// What replay did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplayStats {
    /// Transactions applied (from the replay's first epoch up to the frontier).
    pub txns_applied: u64,
    /// Transactions in valid prefixes but above the frontier (never acknowledged), skipped.
    pub txns_beyond_frontier: u64,
    /// Transactions below the checkpoint's start epoch (it holds their writes), skipped.
    pub txns_below_checkpoint: u64,
    /// Entries whose version was stored.
    pub entries_stored: u64,
    /// Entries an entry with a higher seq had already superseded.
    pub entries_superseded: u64,
    /// Delta entries (`format`, "Deltas") among those stored or superseded.
    pub deltas: u64,
    /// Deltas that came before the version they were taken against (it was in another log,
    /// replayed on another thread) and were applied in the last, ordered pass.
    pub deltas_deferred: u64,
}

/// Why an entry could not be applied: the log does not fit the database the manifest describes.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}: entry for table {table} record {rid} ({why})")]
pub struct ReplayError {
    /// The file.
    pub file: String,
    /// The entry's table.
    pub table: u32,
    /// The entry's record.
    pub rid: u64,
    /// What does not fit.
    pub why: &'static str,
}

/// One file's replay: what it did and the deltas it deferred ([`replay_file`]).
type ReplayResult<'a> = Result<(ReplayStats, Vec<Entry<'a>>), ReplayError>;

/// What became of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applied {
    Stored,
    /// The record holds this version or a later one already.
    Superseded,
    /// A delta whose predecessor is not there yet: to apply once every file is replayed.
    Deferred,
}

/// Stores entry `e` (of file `name`) into `db` unless the record holds this seq or a higher
/// one already; a delta only onto the version it was taken against (seq one less).
fn apply_entry<M>(
    db: &Database<M>,
    latches: &ReplayLatches,
    name: &str,
    e: &Entry<'_>,
) -> Result<Applied, ReplayError> {
    let bad = |why| ReplayError {
        file: name.to_string(),
        table: e.table,
        rid: e.rid,
        why,
    };
    let table = db
        .tables()
        .get(e.table as usize)
        .ok_or_else(|| bad("no such table"))?;
    let row_bytes = table.stored_bytes().saturating_sub(STAMP_BYTES);
    if !table.is_stamped() || (!e.delta && e.row.len() != row_bytes) {
        return Err(bad("row size differs from the table's"));
    }
    if e.runs()
        .any(|(first, bytes)| 8 * first + bytes.len() > row_bytes)
    {
        return Err(bad("a delta's words run past the table's row"));
    }
    let rec = table
        .get(RecordId(e.rid))
        .ok_or_else(|| bad("no such record, or no memory for it"))?;
    let seq_at = seq_word(table.stored_bytes());
    let latch = latches.of(e.table, e.rid);
    latch.lock();
    let have = rec.payload.word(seq_at);
    let applied = if have >= e.seq {
        Applied::Superseded
    } else if !e.delta {
        rec.payload.store(e.row);
        rec.payload.store_word(seq_at, e.seq);
        Applied::Stored
    } else if have + 1 == e.seq || delta_mutant_applies_any() {
        for (first, bytes) in e.runs() {
            for (k, word) in bytes.chunks_exact(8).enumerate() {
                rec.payload.store_word(
                    first + k,
                    u64::from_le_bytes(word.try_into().expect("8 bytes")),
                );
            }
        }
        rec.payload.store_word(seq_at, e.seq);
        Applied::Stored
    } else {
        Applied::Deferred
    };
    latch.unlock();
    Ok(applied)
}

/// Test-only mutant `DeltaOntoAnyVersion`: a delta applies onto whatever older version the
/// record holds, not only the one it was taken against.
#[cfg(test)]
fn delta_mutant_applies_any() -> bool {
    super::mutant::is(super::mutant::LogMutant::DeltaOntoAnyVersion)
}

#[cfg(not(test))]
#[inline(always)]
fn delta_mutant_applies_any() -> bool {
    false
}

/// Applies one file's transactions with epochs in `from..=frontier` (pass 2); `valid` is the
/// file's scanned valid prefix. `on_txn` sees the id of each transaction applied. Returns,
/// besides what it did, the deltas that came before their predecessor, for the last, ordered
/// pass (`apply_deferred`).
pub fn replay_file<'a, M>(
    db: &Database<M>,
    latches: &ReplayLatches,
    name: &str,
    valid: &'a [u8],
    from: u64,
    frontier: u64,
    mut on_txn: impl FnMut(u64),
) -> Result<(ReplayStats, Vec<Entry<'a>>), ReplayError> {
    let mut stats = ReplayStats::default();
    let mut deferred = Vec::new();
    for frame in FrameReader::new(valid) {
        let Frame::Txn(t) = frame else { continue };
        if t.epoch > frontier {
            stats.txns_beyond_frontier += 1;
            continue;
        }
        if t.epoch < from {
            stats.txns_below_checkpoint += 1;
            continue;
        }
        for e in t.entries() {
            stats.deltas += u64::from(e.delta);
            match apply_entry(db, latches, name, &e)? {
                Applied::Stored => stats.entries_stored += 1,
                Applied::Superseded => stats.entries_superseded += 1,
                Applied::Deferred => deferred.push(e),
            }
        }
        stats.txns_applied += 1;
        on_txn(t.txn_id);
    }
    Ok((stats, deferred))
}

/// The last pass: the deltas every file deferred (`(file, entry)`), in seq order per record,
/// each onto the version before it, which some file's replay has stored by now, or the
/// deferred delta before it in this pass. A delta whose predecessor is still missing means a
/// log that does not hold the history it claims: an error, never a guess.
fn apply_deferred<M>(
    db: &Database<M>,
    latches: &ReplayLatches,
    mut deferred: Vec<(&str, Entry<'_>)>,
    stats: &mut ReplayStats,
) -> Result<(), ReplayError> {
    deferred.sort_unstable_by_key(|(_, e)| (e.table, e.rid, e.seq));
    stats.deltas_deferred = deferred.len() as u64;
    for (name, e) in deferred {
        match apply_entry(db, latches, name, &e)? {
            Applied::Stored => stats.entries_stored += 1,
            Applied::Superseded => stats.entries_superseded += 1,
            Applied::Deferred => {
                return Err(ReplayError {
                    file: name.to_string(),
                    table: e.table,
                    rid: e.rid,
                    why: "a delta's previous version is in no log or checkpoint replayed",
                });
            }
        }
    }
    Ok(())
}

/// The checkpoint a recovery started from.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointUsed {
    /// Its file.
    pub file: String,
    /// Its number.
    pub number: u64,
    /// Its start epoch: replay began there.
    pub start_epoch: u64,
    /// Its end epoch.
    pub end_epoch: u64,
    /// Records it held.
    pub records: u64,
    /// Records stored from it (the rest a replayed entry had already superseded).
    pub records_stored: u64,
    /// Its size.
    pub bytes: u64,
}

/// What a recovery found and did.
#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    /// Per segment file, what the scan found.
    pub files: Vec<FileScan>,
    /// The durable frontier, from the logs' last epoch markers
    /// ([`EpochMarker`]).
    pub frontier: u64,
    /// The checkpoint loaded first (`None`: replay started from the load).
    pub checkpoint: Option<CheckpointUsed>,
    /// Newer checkpoints passed over, each with why (a torn or corrupted file names the byte
    /// offset).
    pub checkpoints_skipped: Vec<String>,
    /// The first epoch replayed.
    pub replay_from: u64,
    /// What replay did.
    pub replay: ReplayStats,
    /// Log and checkpoint bytes read.
    pub bytes: u64,
    /// Seconds reading the files from disk.
    pub read_s: f64,
    /// Seconds scanning and applying.
    pub replay_s: f64,
    /// Bytes per second of scanning and applying, in GB/s (10^9 bytes).
    pub replay_gb_per_s: f64,
    /// Entries (records) applied or superseded per second of scanning and applying.
    pub records_per_s: f64,
}

/// Why no recovery could start: no complete checkpoint has all its logs, and the logs from the
/// load are gone too.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no starting point: {0}")]
pub struct NoStart(pub String);

/// One segment to scan and replay.
struct Segment<'a> {
    log: usize,
    number: u32,
    name: String,
    bytes: &'a [u8],
}

/// What recovery will do, decided before the database is loaded ([`plan`]).
pub struct Plan {
    scans: Vec<FileScan>,
    /// Per scan: whether it is in its log (not past a torn segment).
    replayed: Vec<bool>,
    frontier: u64,
    from: u64,
    /// The chosen checkpoint's path and bytes.
    checkpoint: Option<(String, Vec<u8>)>,
    skipped: Vec<String>,
    started: Instant,
}

impl Plan {
    /// The checkpoint chosen, if any, and why newer ones were not.
    pub fn checkpoint_notes(&self) -> &[String] {
        &self.skipped
    }
}

/// Per log: the first segment's number, what its header says came before, and whether the
/// segments up to the last one replayed are consecutive.
struct LogCoverage {
    first: Option<(u32, u64)>,
    gap: Option<String>,
}

/// Whether the logs hold every transaction from epoch `from` on, for every log; or what is
/// missing.
fn covered(coverage: &[LogCoverage], from: u64) -> Result<(), String> {
    for (l, c) in coverage.iter().enumerate() {
        if let Some(gap) = &c.gap {
            return Err(gap.clone());
        }
        match c.first {
            // No file at all: the run stopped while creating its log (the manifest comes
            // first), so the log's last marker, 0, keeps the frontier at 0 and nothing
            // is needed (the current segment is never removed).
            None => {}
            Some((0, _)) => {}
            Some((n, prev_max)) if prev_max < from => {
                let _ = n;
            }
            Some((n, prev_max)) => {
                return Err(format!(
                    "log {l}'s segments before {n} were removed, and they hold epochs up to \
                     {prev_max}, at or above {from}"
                ));
            }
        }
    }
    Ok(())
}

fn scan_all(segments: &[Segment<'_>], run_id: u64) -> Vec<FileScan> {
    std::thread::scope(|s| {
        let handles: Vec<_> = segments
            .iter()
            .map(|seg| s.spawn(move || scan_file(&seg.name, seg.bytes, seg.log, run_id)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("scan thread panicked"))
            .collect()
    })
}

/// Scans `segments` (grouped by log, ascending) and finds per log its valid segments (up to
/// the first torn one), its last marker and its coverage.
fn scan_logs(
    segments: &[Segment<'_>],
    logs: usize,
    run_id: u64,
) -> (Vec<FileScan>, Vec<bool>, u64, Vec<LogCoverage>) {
    let mut scans = scan_all(segments, run_id);
    let mut replayed = vec![false; segments.len()];
    let mut markers = vec![EpochMarker::NONE; logs];
    let mut coverage: Vec<LogCoverage> = (0..logs)
        .map(|_| LogCoverage {
            first: None,
            gap: None,
        })
        .collect();
    let mut ended = vec![false; logs];
    let mut has_log = vec![false; logs];
    let mut last_number: Vec<Option<u32>> = vec![None; logs];
    for (i, seg) in segments.iter().enumerate() {
        let w = seg.log;
        if ended[w] {
            continue;
        }
        let scan = &mut scans[i];
        if let Some(h) = scan.header
            && h.segment != seg.number
        {
            scan.header_problem = Some(format!(
                "header says segment {}, the file name {}",
                h.segment, seg.number
            ));
        }
        let c = &mut coverage[w];
        match last_number[w] {
            None => {
                c.first = Some((seg.number, scan.header.map_or(0, |h| h.prev_max_epoch)));
            }
            Some(prev) if prev + 1 != seg.number => {
                c.gap = Some(format!(
                    "log {w}'s segments {prev} and {} are not consecutive",
                    seg.number
                ));
            }
            Some(_) => {}
        }
        last_number[w] = Some(seg.number);
        replayed[i] = true;
        has_log[w] |= scan.header.is_some();
        if scan.marker.epoch >= markers[w].epoch {
            markers[w] = scan.marker;
        }
        // A torn segment ends its log: what follows holds only epochs above what
        // the tear lost, all above the frontier.
        if scan.stopped.is_some() {
            ended[w] = true;
        }
    }
    // A log without a segment (none, or none whose header reads: the run stopped while
    // creating its files, before any flush) vouches for nothing, as its marker 0 did when every
    // flush marked every log: nothing is replayed.
    let frontier = if has_log.iter().all(|&h| h) {
        super::format::frontier(&markers)
    } else {
        0
    };
    (scans, replayed, frontier, coverage)
}

fn segments_of(dir: &LogDir) -> Vec<Segment<'_>> {
    dir.logs
        .iter()
        .flat_map(|l| {
            l.segments.iter().map(move |(n, f)| Segment {
                log: l.log,
                number: *n,
                name: f.path.display().to_string(),
                bytes: &f.bytes,
            })
        })
        .collect()
}

/// Decides where recovery starts (module docs): the newest complete checkpoint of this run
/// that is durable and whose logs are all there; else the load, if the logs from the start
/// are; else [`NoStart`], naming each checkpoint's problem (a damaged file: its byte offset).
pub fn plan(dir: &LogDir, path: &Path) -> Result<Plan, NoStart> {
    let started = Instant::now();
    let segments = segments_of(dir);
    let run_id = dir.manifest.run_id;
    let (scans, replayed, frontier, coverage) = scan_logs(&segments, dir.manifest.logs, run_id);
    let mut skipped = Vec::new();
    for &n in &dir.checkpoints {
        let file = checkpoint_file(path, n);
        let name = file.display().to_string();
        let bytes = match std::fs::read(&file) {
            Ok(b) => b,
            Err(e) => {
                skipped.push(format!("{name}: {e}"));
                continue;
            }
        };
        let usable = match read_checkpoint(&bytes) {
            Err(fault) => Err(fault.to_string()),
            Ok(c) if c.header.run_id != run_id => Err(format!(
                "it belongs to run {}, the log to run {run_id}",
                c.header.run_id
            )),
            Ok(c) if c.end_epoch > frontier => Err(format!(
                "its end epoch {} is beyond the durable frontier {frontier}",
                c.end_epoch
            )),
            Ok(c) => covered(&coverage, super::checkpoint::replay_from(&c))
                .map(|()| super::checkpoint::replay_from(&c)),
        };
        match usable {
            Ok(from) => {
                return Ok(Plan {
                    scans,
                    replayed,
                    frontier,
                    from,
                    checkpoint: Some((name, bytes)),
                    skipped,
                    started,
                });
            }
            Err(why) => skipped.push(format!("{name}: {why}")),
        }
    }
    match covered(&coverage, super::epoch::FIRST_EPOCH) {
        Ok(()) => Ok(Plan {
            scans,
            replayed,
            frontier,
            from: super::epoch::FIRST_EPOCH,
            checkpoint: None,
            skipped,
            started,
        }),
        Err(why) => {
            skipped.push(format!("replaying from the load: {why}"));
            Err(NoStart(skipped.join("; ")))
        }
    }
}

/// Carries out `plan` on `db`, a database loaded as the run's was (built with stamps) and not
/// in use: the checkpoint's records, then every log's transactions from the plan's first
/// epoch to the frontier, each segment on its own thread. `on_txn` sees every replayed
/// transaction id (from several threads).
pub fn execute<M: Sync>(
    db: &Database<M>,
    dir: &LogDir,
    plan: Plan,
    read_s: f64,
    on_txn: &(dyn Fn(u64) + Sync),
) -> Result<Recovery, ReplayError> {
    let started = plan.started;
    let segments = segments_of(dir);
    let latches = &ReplayLatches::new();
    let mut bytes: u64 = segments.iter().map(|s| s.bytes.len() as u64).sum();
    let checkpoint = match &plan.checkpoint {
        None => None,
        Some((name, raw)) => {
            bytes += raw.len() as u64;
            let c = read_checkpoint(raw).expect("checked by the plan");
            let stored = apply_checkpoint(db, latches, name, &c)?;
            Some(CheckpointUsed {
                file: name.clone(),
                number: c.header.number,
                start_epoch: c.header.start_epoch,
                end_epoch: c.end_epoch,
                records: c.records,
                records_stored: stored,
                bytes: raw.len() as u64,
            })
        }
    };
    let (from, frontier) = (plan.from, plan.frontier);
    // Every replayed segment's valid prefix in pieces (`REPLAY_PIECE_BYTES`), taken in turn
    // by a thread per core.
    let pieces: Vec<(&str, &[u8])> = segments
        .iter()
        .zip(&plan.scans)
        .zip(&plan.replayed)
        .filter(|(_, replayed)| **replayed)
        .flat_map(|((seg, scan), _)| {
            let bounds: Vec<usize> = std::iter::once(0)
                .chain(scan.splits.iter().map(|&at| at as usize))
                .chain(std::iter::once(scan.valid_bytes as usize))
                .collect();
            let name = seg.name.as_str();
            let bytes = seg.bytes;
            (0..bounds.len() - 1).map(move |i| (name, &bytes[bounds[i]..bounds[i + 1]]))
        })
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(pieces.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(&str, ReplayResult<'_>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (pieces, next) = (&pieces, &next);
                s.spawn(move || {
                    let mut done = Vec::new();
                    // Relaxed: only hands out indexes; the pieces are read-only.
                    while let Some(&(name, piece)) =
                        pieces.get(next.fetch_add(1, Ordering::Relaxed))
                    {
                        let r = replay_file(db, latches, name, piece, from, frontier, on_txn);
                        let failed = r.is_err();
                        done.push((name, r));
                        if failed {
                            break;
                        }
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("replay thread panicked"))
            .collect()
    });
    let mut replay = ReplayStats::default();
    let mut deferred = Vec::new();
    for (name, r) in results {
        let (r, later) = r?;
        replay.txns_applied += r.txns_applied;
        replay.txns_beyond_frontier += r.txns_beyond_frontier;
        replay.txns_below_checkpoint += r.txns_below_checkpoint;
        replay.entries_stored += r.entries_stored;
        replay.entries_superseded += r.entries_superseded;
        replay.deltas += r.deltas;
        deferred.extend(later.into_iter().map(|e| (name, e)));
    }
    apply_deferred(db, latches, deferred, &mut replay)?;
    let replay_s = started.elapsed().as_secs_f64().max(1e-9);
    let records = replay.entries_stored
        + replay.entries_superseded
        + checkpoint.as_ref().map_or(0, |c| c.records);
    Ok(Recovery {
        files: plan.scans,
        frontier,
        checkpoint,
        checkpoints_skipped: plan.skipped,
        replay_from: from,
        bytes,
        read_s,
        replay_s,
        replay_gb_per_s: bytes as f64 / replay_s / 1e9,
        records_per_s: records as f64 / replay_s,
        replay,
    })
}

/// Stores a checkpoint's records, its frames split over a few threads; returns how many were
/// stored (highest seq wins here too, so the order against replay does not matter).
fn apply_checkpoint<M: Sync>(
    db: &Database<M>,
    latches: &ReplayLatches,
    name: &str,
    c: &CheckpointContents<'_>,
) -> Result<u64, ReplayError> {
    // Vacant ranges first: rows of the load that were deleted for good (checkpoint
    // `file.rs`). Only a record still at seq 0 is cleared; any logged version replayed later
    // has a higher seq and wins, as it would over the deletion's own version.
    for (t, rids) in &c.vacant {
        let bad = |rid, why| ReplayError {
            file: name.to_string(),
            table: *t,
            rid,
            why,
        };
        let table = db
            .tables()
            .get(*t as usize)
            .ok_or_else(|| bad(rids.start, "no such table"))?;
        let zeros = vec![0u8; table.stored_bytes().saturating_sub(STAMP_BYTES)];
        let seq_at = seq_word(table.stored_bytes());
        for rid in rids.clone() {
            if table.is_retired(RecordId(rid)) {
                // Retired by the load as well (TPC-C's NEW-ORDER slots of the orders delivered
                // before it): vacant for good here too, and `get` gives no record for it.
                continue;
            }
            let rec = table
                .get(RecordId(rid))
                .ok_or_else(|| bad(rid, "no such record, or no memory for it"))?;
            let latch = latches.of(*t, rid);
            latch.lock();
            if rec.payload.word(seq_at) == 0 {
                rec.payload.store(&zeros);
            }
            latch.unlock();
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let frames = c.frames();
    let per = frames.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = frames
            .chunks(per)
            .map(|chunk| {
                s.spawn(move || {
                    let mut stored = 0;
                    for &(count, bytes) in chunk {
                        for e in frame_entries(count, bytes) {
                            if e.delta {
                                return Err(ReplayError {
                                    file: name.to_string(),
                                    table: e.table,
                                    rid: e.rid,
                                    why: "a delta in a checkpoint (it holds whole rows only)",
                                });
                            }
                            stored +=
                                u64::from(apply_entry(db, latches, name, &e)? == Applied::Stored);
                        }
                    }
                    Ok(stored)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("checkpoint thread panicked"))
            .sum()
    })
}

/// Recovers `files` (one per log, each its log's only segment, of a run with `run_id`)
/// into `db`, a database loaded as the run's was, from the load (no checkpoint). `on_txn`
/// sees every applied transaction id (from several threads).
pub fn recover_into<M: Sync>(
    db: &Database<M>,
    files: &[LogFile],
    run_id: u64,
    read_s: f64,
    on_txn: &(dyn Fn(u64) + Sync),
) -> Result<Recovery, ReplayError> {
    let dir = LogDir {
        manifest: Manifest {
            format: super::format::FORMAT_VERSION,
            run_id,
            workers: files.len(),
            logs: files.len(),
            args: Vec::new(),
            kind: super::LogKind::Redo,
        },
        logs: files
            .iter()
            .enumerate()
            .map(|(log, f)| SegmentedLog {
                log,
                segments: vec![(
                    0,
                    LogFile {
                        path: f.path.clone(),
                        bytes: f.bytes.clone(),
                    },
                )],
            })
            .collect(),
        checkpoints: Vec::new(),
    };
    let plan = plan(&dir, Path::new(".")).expect("segment 0 of every log is there");
    execute(db, &dir, plan, read_s, on_txn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Cli, Command};
    use crate::log::format::{push_delta, push_entry, write_txn};
    use crate::log::mutant::{self, LogMutant};
    use crate::workload::{Workload, WorkloadConfig, ycsb::Ycsb};
    use clap::Parser;

    /// Eight YCSB records of 32 bytes, loaded and stamped as recovery loads them.
    fn loaded() -> Database<ReplayLatch> {
        let argv = [
            "txbench",
            "run",
            "-w",
            "ycsb",
            "--records",
            "8",
            "--ops",
            "4",
            "--payload",
            "32",
        ];
        let Command::Run(args) = Cli::try_parse_from(argv).expect("flags").command else {
            unreachable!("a run")
        };
        let WorkloadConfig::Ycsb(c) = args.validate().expect("valid").workload else {
            unreachable!("ycsb")
        };
        let w = Ycsb::new(c);
        let db = Database::try_build(&w.tables(), &w.indexes(), true).expect("tables");
        w.load(&db);
        db
    }

    const RID: u64 = 3;

    /// A transaction frame of one entry for record [`RID`] of table 0: the whole `row` as
    /// version `seq`, or with `old`, a delta against `old`.
    fn txn(seq: u64, row: &[u64; 4], old: Option<&[u64; 4]>) -> Vec<u8> {
        let bytes: Vec<u8> = row.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut arena = Vec::new();
        match old {
            Some(old) => {
                let old: Vec<u8> = old.iter().flat_map(|w| w.to_le_bytes()).collect();
                push_delta(&mut arena, 0, RID, seq, &bytes, &old).expect("smaller");
            }
            None => {
                push_entry(&mut arena, 0, RID, seq, &bytes);
            }
        }
        let mut frame = Vec::new();
        write_txn(&mut frame, 1, seq, 1, &arena);
        frame
    }

    /// Record [`RID`]'s row words and seq.
    fn row_of(db: &Database<ReplayLatch>) -> ([u64; 4], u64) {
        let rec = db.tables()[0].get(RecordId(RID)).expect("record");
        let seq_at = seq_word(db.tables()[0].stored_bytes());
        (
            std::array::from_fn(|i| rec.payload.word(i)),
            rec.payload.word(seq_at),
        )
    }

    /// Versions 1 (whole), 2 (a delta) in log 1 and 3 (a delta) in log 0, with
    /// log 0's file replayed first: version 3's delta comes before the version it was taken
    /// against and must wait for the ordered pass. Returns the record's final row and seq.
    fn replay_out_of_order() -> Result<([u64; 4], u64), ReplayError> {
        let v1 = [0x11; 4];
        let v2 = [0xAA, 0x11, 0x11, 0x11];
        let v3 = [0xAA, 0xBB, 0x11, 0x11];
        let worker0 = txn(3, &v3, Some(&v2));
        let mut worker1 = txn(1, &v1, None);
        worker1.extend(txn(2, &v2, Some(&v1)));
        let db = loaded();
        let latches = ReplayLatches::new();
        let mut stats = ReplayStats::default();
        let mut deferred = Vec::new();
        for (name, file) in [("w0", &worker0), ("w1", &worker1)] {
            let (s, later) = replay_file(&db, &latches, name, file, 1, 1, |_| {})?;
            stats.deltas += s.deltas;
            deferred.extend(later.into_iter().map(|e| (name, e)));
        }
        apply_deferred(&db, &latches, deferred, &mut stats)?;
        assert_eq!(stats.deltas, 2);
        Ok(row_of(&db))
    }

    #[test]
    fn a_delta_before_its_predecessor_waits_for_the_ordered_pass() {
        assert_eq!(
            replay_out_of_order().expect("replays"),
            ([0xAA, 0xBB, 0x11, 0x11], 3)
        );
    }

    /// The mutant applies version 3's delta onto the loaded version; versions 1 and 2 are
    /// then superseded and the record keeps the loaded words beside the delta's.
    #[test]
    fn the_delta_onto_any_version_mutant_is_caught() {
        mutant::set(LogMutant::DeltaOntoAnyVersion);
        let out = replay_out_of_order();
        mutant::set(LogMutant::None);
        let (row, seq) = out.expect("replays");
        eprintln!("DeltaOntoAnyVersion: row {row:x?} seq {seq}");
        assert_ne!(row, [0xAA, 0xBB, 0x11, 0x11], "the mutant was not caught");
    }

    /// A smaller replay piece for the test that asks for one ([`replay_piece_bytes`]).
    pub(super) static PIECE_BYTES: std::sync::atomic::AtomicU64 =
        std::sync::atomic::AtomicU64::new(0);

    /// One log cut into many pieces, replayed by every core in any order: a record's chain of
    /// 300 versions (a whole row, then deltas each changing one word) still ends at its last
    /// version, whatever piece each delta's predecessor was in.
    #[test]
    fn a_log_cut_into_pieces_replays_to_its_last_version() {
        let mut file = Vec::new();
        crate::log::format::write_file_header(&mut file, 0, 7);
        let mut row = [0x11u64; 4];
        file.extend(txn(1, &row, None));
        for seq in 2..=300u64 {
            let old = row;
            row[(seq % 4) as usize] = seq;
            file.extend(txn(seq, &row, Some(&old)));
        }
        crate::log::format::write_epoch_marker(
            &mut file,
            &EpochMarker {
                epoch: 1,
                files: 1,
                below: 0,
            },
        );
        let db = loaded();
        PIECE_BYTES.store(200, Ordering::Relaxed);
        let rec = recover_into(
            &db,
            &[LogFile {
                path: PathBuf::from("log-000-000000.log"),
                bytes: file,
            }],
            7,
            0.0,
            &|_| {},
        );
        PIECE_BYTES.store(0, Ordering::Relaxed);
        let rec = rec.expect("replays");
        assert!(
            rec.files[0].splits.len() > 50,
            "{} pieces",
            rec.files[0].splits.len()
        );
        assert_eq!(rec.replay.txns_applied, 300);
        assert_eq!(row_of(&db), (row, 300));
    }

    /// A delta whose previous version no file holds is an error naming the file and record.
    #[test]
    fn a_delta_without_its_predecessor_is_an_error() {
        let db = loaded();
        let latches = ReplayLatches::new();
        let frame = txn(
            3,
            &[0xAA, 0xBB, 0x11, 0x11],
            Some(&[0xAA, 0x11, 0x11, 0x11]),
        );
        let (mut stats, later) =
            replay_file(&db, &latches, "w0", &frame, 1, 1, |_| {}).expect("scans");
        let deferred = later.into_iter().map(|e| ("w0", e)).collect();
        let err = apply_deferred(&db, &latches, deferred, &mut stats).expect_err("no predecessor");
        assert_eq!((err.file.as_str(), err.table, err.rid), ("w0", 0, RID));
    }
}
