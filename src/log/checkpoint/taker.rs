//! The checkpointer thread: a fuzzy checkpoint every `--checkpoint-s` (the steps are in the
//! module docs of `checkpoint`).

use super::file::{CheckpointHeader, CheckpointWriter};
use crate::log::Logger;
use crate::log::device::LogDevice;
use crate::log::dir::{Directory, DiskDirectory};
use crate::log::files::{checkpoint_name, checkpoint_tmp_name};
use crate::storage::stamp::{STAMP_BYTES, seq_word};
use crate::storage::{Database, RecordId};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Test-only deliberate bugs of the checkpointer (module docs of `checkpoint`).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum CheckpointMutant {
    /// The real checkpointer.
    #[default]
    None,
    /// Segments below this checkpoint's start are removed right after the copy, before the
    /// checkpoint is complete on disk.
    TruncateBeforeDurable,
    /// The `.tmp` is renamed into place (and the directory synced) before its bytes are synced:
    /// power loss in between leaves a `.ckpt` that is not complete.
    RenameBeforeSync,
}

/// Test-only: the moments of a checkpoint a test may act at (`power_tests.rs` cuts the
/// simulated directory there).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckpointStep {
    /// Halfway through the first table's copy.
    MidCopy,
    /// The `.tmp` is synced, not yet renamed.
    Synced,
    /// Renamed, the directory not yet synced.
    Renamed,
    /// The directory synced: the checkpoint is complete.
    DirSynced,
}

/// A [`LogDevice`] as the checkpoint writer's output, counting its bytes.
struct DeviceWriter {
    device: Box<dyn LogDevice>,
    bytes: u64,
}

impl std::io::Write for DeviceWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.device.append(buf)?;
        self.bytes += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the checkpointer did over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CheckpointStats {
    /// Complete checkpoints written.
    pub checkpoints: u64,
    /// Records in the last one.
    pub last_records: u64,
    /// Bytes of the last one.
    pub last_bytes: u64,
    /// Seconds the last one took, rotation to directory sync.
    pub last_s: f64,
    /// Log segments removed.
    pub segments_removed: u64,
}

/// How one checkpoint ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Complete on disk, with this start epoch.
    Complete {
        /// Its start epoch.
        start_epoch: u64,
    },
    /// The run ended (or the log failed) first; its `.tmp` was removed.
    Abandoned,
}

/// Takes a checkpoint of `db` every interval while the log runs.
pub struct Checkpointer<'a, M> {
    log: &'a Logger,
    db: &'a Database<M>,
    /// Where its files go.
    files: Arc<dyn Directory>,
    interval: Duration,
    /// Start epochs of the complete checkpoints, by number (`first` first).
    starts: Mutex<Vec<u64>>,
    /// The number of `starts[0]`: 1, or a resumed log's restart checkpoint.
    first: u64,
    /// Entries of `starts` this checkpointer did not take (the restart checkpoint's).
    inherited: usize,
    records: AtomicU64,
    bytes: AtomicU64,
    nanos: AtomicU64,
    removed: AtomicU64,
    /// Test-only: the deliberate bug this checkpointer runs with.
    #[cfg(test)]
    pub(crate) mutant: CheckpointMutant,
    /// Test-only: stop after writing and syncing the `.tmp`, before the rename (as a crash
    /// there would), leaving it in place.
    #[cfg(test)]
    pub(crate) stop_before_rename: bool,
    /// Test-only: a pause halfway through the first table's copy, so that epochs pass and
    /// records already copied are written again while the copy runs.
    #[cfg(test)]
    pub(crate) pause_mid_copy: Option<Duration>,
    /// Test-only: called at each [`CheckpointStep`].
    #[cfg(test)]
    #[allow(clippy::type_complexity)]
    pub(crate) on_step: Option<Box<dyn Fn(CheckpointStep) + Send + Sync + 'a>>,
}

impl<'a, M: Sync> Checkpointer<'a, M> {
    /// A checkpointer of `db`, whose log is `log` (with segments) in `dir`.
    pub fn new(log: &'a Logger, db: &'a Database<M>, dir: &Path, interval: Duration) -> Self {
        Checkpointer {
            log,
            db,
            files: Arc::new(DiskDirectory(dir.to_path_buf())),
            interval,
            starts: Mutex::new(Vec::new()),
            first: 1,
            inherited: 0,
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
            removed: AtomicU64::new(0),
            #[cfg(test)]
            mutant: CheckpointMutant::None,
            #[cfg(test)]
            stop_before_rename: false,
            #[cfg(test)]
            pause_mid_copy: None,
            #[cfg(test)]
            on_step: None,
        }
    }

    /// The same checkpointer writing its files to `files` (tests: a simulated directory).
    pub fn in_directory(mut self, files: Arc<dyn Directory>) -> Self {
        self.files = files;
        self
    }

    #[cfg(test)]
    fn step(&self, step: CheckpointStep) {
        if let Some(f) = &self.on_step {
            f(step);
        }
    }

    /// The same checkpointer for a log resumed after a restart (`resume.rs`), whose restart
    /// checkpoint `number` (with start epoch `start_epoch`) is complete in `dir`: it counts
    /// as the previous checkpoint, and the next one is `number + 1`.
    pub fn after(mut self, number: u64, start_epoch: u64) -> Self {
        self.first = number;
        self.inherited = 1;
        *self.starts.get_mut().expect("starts lock") = vec![start_epoch];
        self
    }

    /// The thread's loop: a checkpoint every interval until the log stops. An I/O error stops
    /// the log (and so the run), as a log write error does; what is durable stays.
    pub fn run(&self) {
        let mut next = Instant::now() + self.interval;
        loop {
            // Short sleeps, so the end of the run is noticed quickly.
            while Instant::now() < next {
                if self.log.is_stopping() || self.log.failure().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5).min(self.interval));
            }
            match self.take() {
                Ok(Taken::Complete { .. }) => {}
                Ok(Taken::Abandoned) => return,
                Err(why) => {
                    self.log.fail(why);
                    return;
                }
            }
            next = Instant::now() + self.interval;
        }
    }

    /// What it did so far.
    pub fn stats(&self) -> CheckpointStats {
        // Relaxed: report counters, read after the thread ended (the scope's join orders them).
        CheckpointStats {
            checkpoints: (self.starts.lock().expect("starts lock").len() - self.inherited) as u64,
            last_records: self.records.load(Ordering::Relaxed),
            last_bytes: self.bytes.load(Ordering::Relaxed),
            last_s: self.nanos.load(Ordering::Relaxed) as f64 / 1e9,
            segments_removed: self.removed.load(Ordering::Relaxed),
        }
    }

    /// Waits until the durable frontier reaches `epoch`; false when the log stopped first.
    fn wait_durable(&self, epoch: u64) -> bool {
        // A flush with nothing new to write still runs for it (an idle flusher parks).
        self.log.request_durable(epoch);
        while self.log.clock().durable() < epoch {
            if self.log.is_stopping() || self.log.failure().is_some() {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    }

    /// Takes the next checkpoint (module docs of `checkpoint`, steps 1 to 6).
    pub fn take(&self) -> Result<Taken, String> {
        let began = Instant::now();
        let number = self.starts.lock().expect("starts lock").len() as u64 + self.first;
        // 1. Rotate, and wait until every closed segment's transactions are durable.
        let closed_max = self.log.rotate()?;
        if !self.wait_durable(closed_max) {
            return Ok(Taken::Abandoned);
        }
        // 2. The start epoch. `durable` is an Acquire load pairing with the flusher's Release
        //    publication, which follows the close that waited for every committer at or
        //    below it: their installs happen before everything below.
        let start_epoch = self.log.clock().durable() + 1;
        let tmp = checkpoint_tmp_name(number);
        let io = |what: &str, e: std::io::Error| format!("checkpoint {number}: {what} {tmp}: {e}");
        // A `.tmp` a crashed checkpointer left is never read: start it afresh.
        let _ = self.files.remove(&tmp);
        let device = self.files.create(&tmp).map_err(|e| io("creating", e))?;
        let file = DeviceWriter { device, bytes: 0 };
        let header = CheckpointHeader {
            run_id: self.log.run_id(),
            number,
            start_epoch,
        };
        let mut out =
            CheckpointWriter::new(std::io::BufWriter::with_capacity(1 << 20, file), &header)
                .map_err(|e| io("writing", e))?;
        // 3. The copy.
        self.copy(&mut out).map_err(|e| io("writing", e))?;
        #[cfg(test)]
        if self.mutant == CheckpointMutant::TruncateBeforeDurable {
            self.truncate_below(start_epoch)?;
        }
        // 4. The end epoch, durable before the checkpoint counts. Relaxed suffices: each
        //    version copied was installed by a transaction that had loaded `current` (its
        //    epoch) before its install, which happens before our copy (the seqlock's Acquire),
        //    so read-read coherence gives a value at least that epoch.
        let end_epoch = self.log.clock().current();
        if !self.wait_durable(end_epoch) {
            drop(out);
            let _ = self.files.remove(&tmp);
            return Ok(Taken::Abandoned);
        }
        // 5. Trailer, sync, rename, directory sync.
        let records = out.records();
        let buffered = out.finish(end_epoch).map_err(|e| io("writing", e))?;
        let mut file = buffered
            .into_inner()
            .map_err(|e| io("writing", e.into_error()))?;
        let done = checkpoint_name(number);
        let sync_dir = || {
            self.files
                .sync()
                .map_err(|e| format!("checkpoint {number}: syncing the directory: {e}"))
        };
        #[cfg(test)]
        let renamed_early = self.mutant == CheckpointMutant::RenameBeforeSync;
        #[cfg(not(test))]
        let renamed_early = false;
        if renamed_early {
            self.files
                .rename(&tmp, &done)
                .map_err(|e| io("renaming", e))?;
            sync_dir()?;
            #[cfg(test)]
            self.step(CheckpointStep::Renamed);
        }
        file.device.sync().map_err(|e| io("syncing", e))?;
        let bytes = file.bytes;
        drop(file);
        #[cfg(test)]
        self.step(CheckpointStep::Synced);
        #[cfg(test)]
        if self.stop_before_rename {
            return Ok(Taken::Abandoned);
        }
        if !renamed_early {
            self.files
                .rename(&tmp, &done)
                .map_err(|e| io("renaming", e))?;
            #[cfg(test)]
            self.step(CheckpointStep::Renamed);
            sync_dir()?;
        }
        #[cfg(test)]
        self.step(CheckpointStep::DirSynced);
        let (previous_start, taken) = {
            let mut starts = self.starts.lock().expect("starts lock");
            starts.push(start_epoch);
            (starts.len().checked_sub(2).map(|i| starts[i]), starts.len())
        };
        // 6. Keep two checkpoints: drop what only the one before the previous needed.
        if let Some(previous_start) = previous_start {
            self.truncate_below(previous_start)?;
            // The one before the previous is this checkpointer's own (a resumed log's first
            // one follows its restart checkpoint, the only one left in the directory).
            if taken > 2 {
                let old = checkpoint_name(number - 2);
                self.files
                    .remove(&old)
                    .and_then(|()| self.files.sync())
                    .map_err(|e| format!("removing {old}: {e}"))?;
            }
        }
        // Relaxed: report counters (`stats`).
        self.records.store(records, Ordering::Relaxed);
        self.bytes.store(bytes, Ordering::Relaxed);
        self.nanos
            .store(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(Taken::Complete { start_epoch })
    }

    fn truncate_below(&self, epoch: u64) -> Result<(), String> {
        let n = self
            .log
            .remove_segments_below(epoch)
            .map_err(|e| format!("removing log segments: {e}"))?;
        // Relaxed: a report counter.
        self.removed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Step 3: every record of every stamped table whose seq is above 0, and the ranges a
    /// growing table retired (deleted for good: `file.rs`), chunk by chunk.
    fn copy<W: std::io::Write>(&self, out: &mut CheckpointWriter<W>) -> std::io::Result<()> {
        let mut buf = Vec::new();
        for (t, table) in self.db.tables().iter().enumerate() {
            if !table.is_stamped() {
                continue;
            }
            let stored = table.stored_bytes();
            let seq_at = seq_word(stored);
            buf.resize(stored, 0);
            let per = table.records_per_chunk();
            let mut lo = 0;
            while lo < table.len() {
                let hi = (lo + per).min(table.len());
                self.copy_chunk(t as u32, table, lo..hi, seq_at, &mut buf, out)?;
                lo = hi;
            }
        }
        Ok(())
    }

    /// One chunk's records. A record whose chunk is retired, before or while it is read, is
    /// written as part of a vacant range instead: the chunk's memory may be reused for other
    /// records once retired, so a copy read after the retirement may be another record's
    /// (the re-check after each copy catches that: retirement precedes any reuse). A chunk
    /// never allocated and not retired holds nothing written yet: any write to it comes after
    /// the copy began, so of an epoch at or above the start.
    fn copy_chunk<W: std::io::Write>(
        &self,
        t: u32,
        table: &crate::storage::Table<M>,
        rids: std::ops::Range<u64>,
        seq_at: usize,
        buf: &mut [u8],
        out: &mut CheckpointWriter<W>,
    ) -> std::io::Result<()> {
        let end = rids.end;
        for rid in rids {
            #[cfg(test)]
            if t == 0 && rid == table.len() / 2 {
                if let Some(pause) = self.pause_mid_copy {
                    std::thread::sleep(pause);
                }
                self.step(CheckpointStep::MidCopy);
            }
            if table.is_retired(RecordId(rid)) {
                return out.push_vacant(t, rid..end);
            }
            let Some(rec) = table.peek(RecordId(rid)) else {
                if table.is_retired(RecordId(rid)) {
                    return out.push_vacant(t, rid..end);
                }
                return Ok(()); // never allocated
            };
            let mut spins = 0u32;
            let seq = loop {
                if let Some(seq) = rec.payload.load_seqlocked(buf, seq_at) {
                    break seq;
                }
                // An install in progress: a few stores, unless its worker was descheduled
                // (more threads than cores), so give the CPU away soon.
                spins += 1;
                if spins < 16 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            };
            if table.is_retired(RecordId(rid)) {
                return out.push_vacant(t, rid..end);
            }
            if seq > 0 {
                out.push(t, rid, seq, &buf[..buf.len() - STAMP_BYTES])?;
            }
        }
        Ok(())
    }
}
