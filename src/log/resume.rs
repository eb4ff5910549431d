//! Continuing a log directory after a restart (`txbench serve --log DIR` on a directory a
//! previous server logged to): recover into the new server's database, then start a new
//! generation of the same run's log, so that the directory always recovers to the last state
//! acknowledged durable, through any number of restarts.
//!
//! # Why the old files are not simply appended to
//!
//! The old files may hold transactions beyond the durable frontier (written, never
//! acknowledged) and torn tails. Recovery drops both only because nothing in the directory
//! vouches for them: epoch markers written later, above their epochs, would make a later
//! recovery replay them (markers above them would raise the frontier past them), and a torn
//! segment ends its log, which would hide every segment written after it. So a
//! restart turns the recovered state into a checkpoint and leaves the old files behind:
//!
//! 1. `E` = the highest epoch any old file names (a transaction, a marker, a segment header,
//!    a checkpoint's end): every transaction in the old files, replayed or not, has an epoch
//!    at most `E`.
//! 2. Write the recovered database as checkpoint `N + 1` (`N` the highest number in the
//!    directory) with start epoch `E + 1` and end epoch `F`, the frontier recovery found (its
//!    versions are of epochs at most `F`); sync it, rename it into place, sync the directory.
//! 3. Create every log's next segment (numbered after its last), whose header says the
//!    log's earlier segments reached marker `E` and hold epochs up to `E` (the marker as
//!    if one flush of `E` had written every log, the flush before it `F`:
//!    [`EpochMarker`]); each synced with the directory.
//! 4. Remove the old segments, each log's oldest first, then the other checkpoints and any
//!    `.tmp`; sync the directory.
//! 5. Commits take epochs from `E + 1` on ([`EpochClock::starting_at`]), and each record's
//!    next version continues from the seq recovery left it with.
//!
//! # A crash during a restart recovers the same state
//!
//! - Before step 2 completes the old files are untouched (a `.tmp` is never read).
//! - From then on checkpoint `N + 1` is the newest and always chosen: its end epoch `F` is at
//!   or below the frontier (the old files give `F`, removing a log's oldest segments keeps
//!   its last marker, which the next segment's header carries, and a new segment's header says
//!   `E`), each log's segments stay consecutive (oldest removed first), and replay from
//!   `E + 1` needs none of the old ones. It holds the recovered state, and replay finds
//!   nothing: no old file holds an epoch above `E`, and the new segments hold no transaction
//!   yet. (An end epoch of `E` instead of `F` would leave the checkpoint unusable while a torn
//!   old segment, which ends its log, hides the new segment's marker; and removing
//!   segments in any order left a gap the test caught: "log 0's segments 1 and 3 are
//!   not consecutive".)
//! - After step 4 the directory is checkpoint `N + 1` and the new segments: what a running
//!   log with checkpoints looks like, so the next recovery starts from `N + 1` (or from a
//!   newer checkpoint) and replays what the new server logged.
//!
//! [`EpochClock::starting_at`]: super::EpochClock::starting_at

use super::checkpoint::file::{CheckpointHeader, CheckpointWriter, read_checkpoint};
use super::device::LogDevice;
use super::files::{
    SegmentFiles, SegmentStore, checkpoint_file, checkpoint_tmp_file, parse_checkpoint_name,
    parse_segment_name, segment_file, sync_dir,
};
use super::format::{EpochMarker, Frame, FrameReader, SegmentHeader};
use super::recover::{LogDir, Recovery, execute, plan};
use super::{LogError, LogSettings, Logger};
use crate::storage::stamp::{STAMP_BYTES, seq_word};
use crate::storage::{Database, RecordId};
use std::path::Path;

/// Where a resumed log starts: the restart checkpoint, and the first epoch of the new
/// generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPoint {
    /// The restart checkpoint's number (step 2 of the module docs).
    pub checkpoint: u64,
    /// Its start epoch, `E + 1`: the first epoch the new generation commits in.
    pub first_epoch: u64,
    /// Records it holds (those written since the load).
    pub records: u64,
    /// Old files removed (segments, checkpoints, `.tmp`s).
    pub files_removed: usize,
}

/// A log directory resumed: what recovery found, where the new generation starts, and its
/// log, ready for the server's sessions.
pub struct Resumed {
    /// What recovery found and did.
    pub recovery: Recovery,
    /// The restart checkpoint and the new generation's first epoch.
    pub restart: RestartPoint,
    /// The new generation's log.
    pub logger: Logger,
}

/// Why a log directory could not be resumed (after it was found recoverable).
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// An entry does not fit the database (a log of another configuration).
    #[error(transparent)]
    Replay(#[from] super::recover::ReplayError),
    /// Writing the restart checkpoint or the new segments, or removing the old files, failed.
    #[error("{0}")]
    Io(#[from] LogError),
    /// No complete checkpoint has its logs, and the logs from the load are gone.
    #[error(transparent)]
    NoStart(#[from] super::recover::NoStart),
}

/// The highest epoch any file of `log` in `dir` names (step 1 of the module docs).
pub fn highest_epoch(log: &LogDir, dir: &Path) -> u64 {
    let mut highest = 0;
    for l in &log.logs {
        for (_, file) in &l.segments {
            for frame in FrameReader::new(&file.bytes) {
                let e = match frame {
                    Frame::FileHeader(h) => h.prev_marker.epoch.max(h.prev_max_epoch),
                    Frame::Txn(t) => t.epoch,
                    Frame::Epoch(m) => m.epoch,
                    Frame::Undo(u) => u.epoch,
                };
                highest = highest.max(e);
            }
        }
    }
    for &n in &log.checkpoints {
        if let Ok(bytes) = std::fs::read(checkpoint_file(dir, n))
            && let Ok(c) = read_checkpoint(&bytes)
        {
            highest = highest
                .max(c.end_epoch)
                .max(c.header.start_epoch.saturating_sub(1));
        }
    }
    highest
}

/// Recovers `log` (read from `dir`) into `db`, a database loaded as the manifest's run was and
/// built with stamps, and starts the log's next generation in `dir` for the manifest's
/// workers and logs with `settings` (module docs). `db` must not be in use yet: the restart checkpoint is a
/// plain copy of it.
pub fn resume<M: Sync>(
    db: &Database<M>,
    dir: &Path,
    log: &LogDir,
    settings: &LogSettings,
    read_s: f64,
) -> Result<Resumed, ResumeError> {
    let resumed = resume_until(db, dir, log, settings, read_s, Stop::Never)?;
    Ok(resumed.expect("a restart that never stops completes"))
}

/// Where a restart stops (module docs, steps): `Never` in use; tests stop earlier, as a crash
/// there would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Only the tests stop a restart early.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Stop {
    /// Complete the restart.
    Never,
    /// After step 2 (the restart checkpoint is complete).
    AfterCheckpoint,
    /// After step 3 (the new segments exist).
    AfterSegments,
    /// In step 4, after removing this many old files (and syncing the directory).
    AfterRemoving(usize),
}

/// [`resume`], stopping at `stop` (`None` then).
pub(crate) fn resume_until<M: Sync>(
    db: &Database<M>,
    dir: &Path,
    log: &LogDir,
    settings: &LogSettings,
    read_s: f64,
    stop: Stop,
) -> Result<Option<Resumed>, ResumeError> {
    let workers = log.manifest.workers;
    let logs = log.manifest.logs;
    let run_id = log.manifest.run_id;
    let start = plan(log, dir)?;
    let recovery = execute(db, log, start, read_s, &|_| {})?;
    // 1.
    let highest = highest_epoch(log, dir);
    let first_epoch = highest + 1;
    // 2.
    let number = log.checkpoints.first().copied().unwrap_or(0) + 1;
    let records = write_restart_checkpoint(
        db,
        dir,
        &CheckpointHeader {
            run_id,
            number,
            start_epoch: first_epoch,
        },
        recovery.frontier,
    )?;
    if stop == Stop::AfterCheckpoint {
        return Ok(None);
    }
    // 3.
    let mut store = SegmentFiles::on_disk(dir);
    let mut devices: Vec<Box<dyn LogDevice>> = Vec::with_capacity(logs);
    let mut numbers = Vec::with_capacity(logs);
    // As if one flush of epoch `E` had written every log, the flush before it `F`.
    let marker = EpochMarker {
        epoch: highest,
        files: u32::try_from(logs).expect("logs fit in u32"),
        below: recovery.frontier,
    };
    for l in &log.logs {
        let segment = l.segments.last().map_or(0, |(n, _)| n + 1);
        let header = SegmentHeader {
            log: l.log as u32,
            run_id,
            segment,
            prev_max_epoch: highest,
            prev_marker: marker,
        };
        let device = store
            .open(&header)
            .map_err(|e| LogError::io(&segment_file(dir, l.log, segment), e))?;
        devices.push(device);
        numbers.push(segment);
    }
    if stop == Stop::AfterSegments {
        return Ok(None);
    }
    // 4.
    let most = match stop {
        Stop::AfterRemoving(n) => n,
        _ => usize::MAX,
    };
    let files_removed = remove_old_files(dir, &numbers, number, most)?;
    if most != usize::MAX {
        return Ok(None);
    }
    // 5.
    let mut logger = Logger::new(devices, workers, settings.sync, settings.group).resumed_from(
        first_epoch,
        marker,
        &numbers,
        run_id,
    );
    if settings.checkpoint.is_some() {
        logger = logger.with_segments(Box::new(store), run_id);
    }
    Ok(Some(Resumed {
        recovery,
        restart: RestartPoint {
            checkpoint: number,
            first_epoch,
            records,
            files_removed,
        },
        logger,
    }))
}

/// Step 2: every record of every stamped table whose seq is above 0 (the rest are as loaded),
/// as checkpoint `header.number` with `end_epoch`, complete on disk when it returns. A plain
/// copy, not the checkpointer's fuzzy one: no session runs yet, and the workloads a server
/// logs have no growing tables, so no chunk is retired.
fn write_restart_checkpoint<M>(
    db: &Database<M>,
    dir: &Path,
    header: &CheckpointHeader,
    end_epoch: u64,
) -> Result<u64, LogError> {
    let tmp = checkpoint_tmp_file(dir, header.number);
    let io = |e: std::io::Error| LogError::io(&tmp, e);
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut out = CheckpointWriter::new(std::io::BufWriter::with_capacity(1 << 20, file), header)
        .map_err(io)?;
    let mut buf = Vec::new();
    for (t, table) in db.tables().iter().enumerate() {
        if !table.is_stamped() {
            continue;
        }
        let stored = table.stored_bytes();
        let seq_at = seq_word(stored);
        buf.resize(stored, 0);
        for rid in 0..table.len() {
            let Some(rec) = table.peek(RecordId(rid)) else {
                continue; // never allocated: as loaded
            };
            let seq = rec
                .payload
                .load_seqlocked(&mut buf, seq_at)
                .expect("no install runs while a server restarts");
            if seq > 0 {
                out.push(t as u32, rid, seq, &buf[..stored - STAMP_BYTES])
                    .map_err(io)?;
            }
        }
    }
    let records = out.records();
    let file = out
        .finish(end_epoch)
        .map_err(io)?
        .into_inner()
        .map_err(|e| io(e.into_error()))?;
    file.sync_data().map_err(io)?;
    drop(file);
    let done = checkpoint_file(dir, header.number);
    std::fs::rename(&tmp, &done).map_err(|e| LogError::io(&done, e))?;
    sync_dir(dir)?;
    Ok(records)
}

/// Step 4: removes every segment of log `l` numbered below `kept[l]`, oldest first (a crash
/// part-way leaves each log's segments consecutive), then every checkpoint but
/// `checkpoint` and every `.tmp` (at most `most` files in all: tests stop part-way); then
/// syncs the directory. Returns how many were removed.
fn remove_old_files(
    dir: &Path,
    kept: &[u32],
    checkpoint: u64,
    most: usize,
) -> Result<usize, LogError> {
    let mut segments = Vec::new();
    let mut others = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| LogError::io(dir, e))? {
        let entry = entry.map_err(|e| LogError::io(dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        match parse_segment_name(&name) {
            Some((l, n)) if kept.get(l).is_none_or(|&k| n < k) => {
                segments.push((l, n, entry.path()));
            }
            Some(_) => {}
            None => {
                if parse_checkpoint_name(&name).is_some_and(|n| n != checkpoint)
                    || (name.starts_with("checkpoint-") && name.ends_with(".tmp"))
                {
                    others.push(entry.path());
                }
            }
        }
    }
    segments.sort_unstable();
    let mut removed = 0;
    for path in segments.into_iter().map(|(_, _, p)| p).chain(others) {
        if removed == most {
            break;
        }
        std::fs::remove_file(&path).map_err(|e| LogError::io(&path, e))?;
        removed += 1;
    }
    sync_dir(dir)?;
    Ok(removed)
}

#[cfg(test)]
mod tests;
