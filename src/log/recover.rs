//! Replay: read a log directory's files in parallel, find the durable frontier, and apply every
//! transaction at or below it to a database, last writer (highest seq) wins per record.
//!
//! Two passes, each with one thread per file:
//!
//! 1. *Scan*: check every frame (length, CRC-32C, structure) from the start, stop at the first
//!    bad one (a torn or corrupted tail) and note where and why, and the file's last epoch
//!    marker. The frontier is the least last marker over the files: every file holds, in its
//!    valid prefix, all of its transactions at or below it (`writer.rs`).
//! 2. *Apply*: walk each valid prefix again and apply the entries of transactions at or below
//!    the frontier. A record's latch ([`ReplayLatch`], the recovery database's record metadata)
//!    makes compare-and-store of one record atomic between the threads; the entry with the
//!    higher seq wins whatever order the files are replayed in.
//!
//! Transactions above the frontier are skipped whole (none was acknowledged: a transaction is
//! acknowledged only once its epoch is durable), so no transaction is ever partly applied.

use super::LogError;
use super::files::{Manifest, read_manifest, worker_file};
use super::format::{Frame, FrameReader, Torn};
use crate::storage::stamp::{STAMP_BYTES, seq_word};
use crate::storage::{Database, RecordId};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The record metadata of a database being recovered: a latch replay threads take around the
/// compare-and-store of one record.
#[derive(Default)]
pub struct ReplayLatch(AtomicBool);

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

/// Reads a log directory: its manifest and every worker's file.
pub fn read_log_dir(dir: &Path) -> Result<(Manifest, Vec<LogFile>), LogError> {
    let manifest = read_manifest(dir)?;
    let files = (0..manifest.workers)
        .map(|w| {
            let path = worker_file(dir, w);
            // A missing file: the run was stopped while it created the log (the manifest comes
            // first); it reads as empty (`scan_file`).
            let bytes = match std::fs::read(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                read => read.map_err(|e| LogError::io(&path, e))?,
            };
            Ok(LogFile { path, bytes })
        })
        .collect::<Result<Vec<_>, LogError>>()?;
    Ok((manifest, files))
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
    /// The last epoch marker in the valid prefix (0: none).
    pub last_marker: u64,
    /// What is wrong with the file's header, if anything (another run's file, another worker's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_problem: Option<String>,
}

/// Scans one file's bytes (pass 1).
pub fn scan_file(name: &str, bytes: &[u8], worker: usize, run_id: u64) -> FileScan {
    let mut reader = FrameReader::new(bytes);
    let (mut txns, mut last_marker) = (0, 0);
    let mut header_problem = None;
    let mut first = true;
    for frame in reader.by_ref() {
        match frame {
            Frame::FileHeader {
                worker: w,
                run_id: r,
            } => {
                if !first {
                    header_problem = Some("a second file header".to_string());
                } else if w as usize != worker || r != run_id {
                    header_problem = Some(format!(
                        "header names worker {w} of run {r}, the manifest worker {worker} of run \
                         {run_id}"
                    ));
                }
            }
            Frame::Txn(_) => txns += 1,
            Frame::Epoch(e) => last_marker = last_marker.max(e),
        }
        if first && !matches!(frame, Frame::FileHeader { .. }) {
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
        last_marker,
        header_problem,
    }
}

/// What replay did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplayStats {
    /// Transactions applied (at or below the frontier).
    pub txns_applied: u64,
    /// Transactions in valid prefixes but above the frontier (never acknowledged), skipped.
    pub txns_beyond_frontier: u64,
    /// Entries whose version was stored.
    pub entries_stored: u64,
    /// Entries an entry with a higher seq had already superseded.
    pub entries_superseded: u64,
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

/// Applies one file's transactions at or below `frontier` (pass 2); `valid` is the file's
/// scanned valid prefix. `on_txn` sees the id of each transaction applied.
pub fn replay_file(
    db: &Database<ReplayLatch>,
    name: &str,
    valid: &[u8],
    frontier: u64,
    mut on_txn: impl FnMut(u64),
) -> Result<ReplayStats, ReplayError> {
    let mut stats = ReplayStats::default();
    let tables = db.tables();
    for frame in FrameReader::new(valid) {
        let Frame::Txn(t) = frame else { continue };
        if t.epoch > frontier {
            stats.txns_beyond_frontier += 1;
            continue;
        }
        for e in t.entries() {
            let bad = |why| ReplayError {
                file: name.to_string(),
                table: e.table,
                rid: e.rid,
                why,
            };
            let table = tables
                .get(e.table as usize)
                .ok_or_else(|| bad("no such table"))?;
            if !table.is_stamped() || e.row.len() + STAMP_BYTES != table.stored_bytes() {
                return Err(bad("row size differs from the table's"));
            }
            let rec = table
                .get(RecordId(e.rid))
                .ok_or_else(|| bad("no such record, or no memory for it"))?;
            let seq_at = seq_word(table.stored_bytes());
            rec.meta().lock();
            if rec.payload.word(seq_at) < e.seq {
                rec.payload.store(e.row);
                rec.payload.store_word(seq_at, e.seq);
                stats.entries_stored += 1;
            } else {
                stats.entries_superseded += 1;
            }
            rec.meta().unlock();
        }
        stats.txns_applied += 1;
        on_txn(t.txn_id);
    }
    Ok(stats)
}

/// What a recovery found and did.
#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    /// Per file, what the scan found.
    pub files: Vec<FileScan>,
    /// The durable frontier: the least last epoch marker.
    pub frontier: u64,
    /// What replay did.
    pub replay: ReplayStats,
    /// Log bytes read.
    pub bytes: u64,
    /// Seconds reading the files from disk.
    pub read_s: f64,
    /// Seconds scanning and applying.
    pub replay_s: f64,
    /// Log bytes per second of scanning and applying, in GB/s (10^9 bytes).
    pub replay_gb_per_s: f64,
    /// Entries (records) applied or superseded per second of scanning and applying.
    pub records_per_s: f64,
}

/// Recovers `files` (of a run with `run_id`) into `db`, a database loaded as the run's was:
/// scan, frontier, apply, each file on its own thread. `on_txn` sees every applied transaction
/// id (from several threads).
pub fn recover_into(
    db: &Database<ReplayLatch>,
    files: &[LogFile],
    run_id: u64,
    read_s: f64,
    on_txn: &(dyn Fn(u64) + Sync),
) -> Result<Recovery, ReplayError> {
    let started = Instant::now();
    let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    let scans: Vec<FileScan> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .zip(&names)
            .enumerate()
            .map(|(w, (f, name))| s.spawn(move || scan_file(name, &f.bytes, w, run_id)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("scan thread panicked"))
            .collect()
    });
    let frontier = scans.iter().map(|s| s.last_marker).min().unwrap_or(0);
    let results: Vec<Result<ReplayStats, ReplayError>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .zip(&scans)
            .zip(&names)
            .map(|((f, scan), name)| {
                let valid = &f.bytes[..scan.valid_bytes as usize];
                s.spawn(move || replay_file(db, name, valid, frontier, on_txn))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("replay thread panicked"))
            .collect()
    });
    let mut replay = ReplayStats::default();
    for r in results {
        let r = r?;
        replay.txns_applied += r.txns_applied;
        replay.txns_beyond_frontier += r.txns_beyond_frontier;
        replay.entries_stored += r.entries_stored;
        replay.entries_superseded += r.entries_superseded;
    }
    let replay_s = started.elapsed().as_secs_f64().max(1e-9);
    let bytes: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    Ok(Recovery {
        files: scans,
        frontier,
        bytes,
        read_s,
        replay_s,
        replay_gb_per_s: bytes as f64 / replay_s / 1e9,
        records_per_s: (replay.entries_stored + replay.entries_superseded) as f64 / replay_s,
        replay,
    })
}
