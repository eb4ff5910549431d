//! The redo log of one run: a buffer and a file per worker, a flusher that closes epochs, and
//! the durable acknowledgement.
//!
//! Hot path: a committing worker encodes its transaction into its own buffer under its own
//! lock, which only the flusher also takes, once per flush (no lock shared between workers).
//! The flusher, every `--log-group-us` (and, with `--log-sync txn`, whenever a committer asks):
//!
//! 1. closes the current epoch `e` ([`EpochClock::close`]: no worker still commits in it);
//! 2. appends an epoch marker `e` to every worker's buffer and swaps the buffer out;
//! 3. writes each to its file, then syncs every file (`fdatasync`; not with `--log-sync none`);
//! 4. publishes `e` as durable.
//!
//! Every file therefore holds, before its marker `e`, every transaction of its worker with an
//! epoch at or below `e`, and recovery's frontier is the least last marker over the files.
//! A write or sync error (a full disk) stops the log: nothing after the last durable epoch is
//! acknowledged, the run stops, and the files keep their valid prefix.
//!
//! # Segments
//!
//! With a [`SegmentStore`] (a run with `--checkpoint-s`), each worker's log is a sequence of
//! segment files. [`Logger::rotate`] (called by the checkpointer, under the flush lock, so
//! between two flushes) starts a new segment for every worker; the flusher tracks the highest
//! transaction epoch written to each segment, and [`Logger::remove_segments_below`] deletes a
//! worker's oldest closed segments while every transaction in them has an epoch below a
//! durable checkpoint's start (`checkpoint.rs` says why that loses nothing).

use super::device::LogDevice;
use super::epoch::EpochClock;
use super::files::SegmentStore;
use super::format;
use super::{LogSettings, LogSync};
use crossbeam_utils::CachePadded;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// One worker's pending bytes.
#[derive(Default)]
struct WorkerBuffer {
    bytes: Vec<u8>,
    /// Transactions appended, all run.
    txns: u64,
    /// The highest epoch among the transactions in `bytes` (0: none).
    max_epoch: u64,
}

/// One worker's current segment, as the flusher knows it.
#[derive(Debug, Clone, Copy, Default)]
struct SegmentState {
    /// Its number.
    number: u32,
    /// The highest epoch of a transaction written to it (0: none).
    max_epoch: u64,
    /// The highest epoch of a transaction in the worker's earlier segments.
    prev_max_epoch: u64,
    /// The last epoch marker written to the worker's log.
    last_marker: u64,
}

/// A segment no longer written, until it is removed.
#[derive(Debug, Clone, Copy)]
struct ClosedSegment {
    worker: usize,
    number: u32,
    max_epoch: u64,
}

/// What only the flusher (or a rotation, under the same lock) touches: the devices, the
/// buffers swapped out of the workers, and the segments being written.
struct FlushState {
    devices: Vec<Box<dyn LogDevice>>,
    spare: Vec<Vec<u8>>,
    segments: Vec<SegmentState>,
    /// The swapped-out buffers' highest epochs, per worker.
    spare_epochs: Vec<u64>,
}

/// What the log did over a run, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LogStats {
    /// Transactions logged (each with at least one write).
    pub txns: u64,
    /// Bytes written to the log files (headers and markers included).
    pub bytes: u64,
    /// Flushes (epochs closed).
    pub flushes: u64,
    /// `fdatasync` calls.
    pub fsyncs: u64,
    /// The durable frontier at the end.
    pub durable_epoch: u64,
}

/// The redo log of one run (module docs).
pub struct Logger {
    clock: Arc<EpochClock>,
    buffers: Box<[CachePadded<Mutex<WorkerBuffer>>]>,
    flush: Mutex<FlushState>,
    sync: LogSync,
    group: Duration,
    /// Set by the first write or sync error; the log stops there.
    failure: OnceLock<String>,
    stopping: AtomicBool,
    /// Written under the flush lock; read for reports.
    bytes: AtomicU64,
    flushes: AtomicU64,
    fsyncs: AtomicU64,
    /// Crash tests: one file per worker listing the ids of acknowledged transactions.
    acks: Option<Box<[Mutex<std::fs::File>]>>,
    /// Creates and removes segment files (`None`: one file per worker, never rotated).
    store: Option<Mutex<Box<dyn SegmentStore>>>,
    /// The run's id, for new segments' headers.
    run_id: u64,
    /// Segments rotated away from and not yet removed, oldest first.
    closed: Mutex<Vec<ClosedSegment>>,
}

impl Logger {
    /// A log over `devices` (one per worker, each already holding its file header), with
    /// `sync` and a group interval of `group`.
    pub fn new(devices: Vec<Box<dyn LogDevice>>, sync: LogSync, group: Duration) -> Self {
        let workers = devices.len();
        Logger {
            clock: Arc::new(EpochClock::new(workers)),
            buffers: (0..workers)
                .map(|_| CachePadded::new(Mutex::new(WorkerBuffer::default())))
                .collect(),
            flush: Mutex::new(FlushState {
                devices,
                spare: (0..workers).map(|_| Vec::new()).collect(),
                segments: vec![SegmentState::default(); workers],
                spare_epochs: vec![0; workers],
            }),
            sync,
            group,
            failure: OnceLock::new(),
            stopping: AtomicBool::new(false),
            bytes: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
            acks: None,
            store: None,
            run_id: 0,
            closed: Mutex::new(Vec::new()),
        }
    }

    /// The same log with segment files from `store` for the run `run_id`: [`Logger::rotate`]
    /// and [`Logger::remove_segments_below`] work (module docs).
    pub fn with_segments(mut self, store: Box<dyn SegmentStore>, run_id: u64) -> Self {
        self.store = Some(Mutex::new(store));
        self.run_id = run_id;
        self
    }

    /// The same log continuing a directory after a restart (`resume.rs`): its devices are
    /// worker `w`'s segment `segments[w]` of the run `run_id`, whose header says the earlier
    /// segments reached marker `first_epoch - 1` and hold no later epoch; commits take epochs
    /// from `first_epoch` on, and every earlier epoch counts as durable (the restart checkpoint
    /// holds them).
    pub fn resumed_from(mut self, first_epoch: u64, segments: &[u32], run_id: u64) -> Self {
        let workers = self.buffers.len();
        assert_eq!(segments.len(), workers, "one segment per worker");
        self.clock = Arc::new(EpochClock::starting_at(workers, first_epoch));
        let st = self.flush.get_mut().expect("flush lock");
        for (state, &number) in st.segments.iter_mut().zip(segments) {
            *state = SegmentState {
                number,
                max_epoch: 0,
                prev_max_epoch: first_epoch - 1,
                last_marker: first_epoch - 1,
            };
        }
        self.run_id = run_id;
        self
    }

    /// Whether the log has segments (checkpoints can truncate it).
    pub fn has_segments(&self) -> bool {
        self.store.is_some()
    }

    /// Starts a new segment for every worker (module docs) and returns the highest
    /// transaction epoch in any segment closed so far: once that epoch is durable, a
    /// checkpoint started after it needs none of them. Runs under the flush lock, so no flush
    /// is half-written to the old segments; the new ones are created and synced (with their
    /// directory) before any byte goes to them. An error stops the log, like a write error.
    pub fn rotate(&self) -> Result<u64, String> {
        let Some(store) = &self.store else {
            return Err("the log has no segments".to_string());
        };
        let mut st = self.flush.lock().expect("flush lock");
        if let Some(f) = self.failure.get() {
            return Err(f.clone());
        }
        let mut store = store.lock().expect("segment store lock");
        let mut closed = Vec::with_capacity(st.segments.len());
        let mut highest = 0;
        for w in 0..st.segments.len() {
            let old = st.segments[w];
            let header = format::SegmentHeader {
                worker: w as u32,
                run_id: self.run_id,
                segment: old.number + 1,
                prev_max_epoch: old.prev_max_epoch.max(old.max_epoch),
                prev_marker: old.last_marker,
            };
            match store.open(&header) {
                Ok(device) => st.devices[w] = device,
                Err(e) => {
                    let why = format!(
                        "starting log segment {} of worker {w} failed ({e}); the log stopped at                          durable epoch {}",
                        header.segment,
                        self.clock.durable()
                    );
                    let _ = self.failure.set(why.clone());
                    return Err(why);
                }
            }
            st.segments[w] = SegmentState {
                number: header.segment,
                max_epoch: 0,
                prev_max_epoch: header.prev_max_epoch,
                last_marker: old.last_marker,
            };
            highest = highest.max(header.prev_max_epoch);
            closed.push(ClosedSegment {
                worker: w,
                number: old.number,
                max_epoch: old.max_epoch,
            });
        }
        self.closed
            .lock()
            .expect("closed segments lock")
            .extend(closed);
        Ok(highest)
    }

    /// Removes, per worker, its oldest closed segments while every transaction in them has an
    /// epoch below `epoch` (a durable checkpoint's start), then syncs the directory. Returns
    /// how many were removed.
    pub fn remove_segments_below(&self, epoch: u64) -> std::io::Result<usize> {
        let Some(store) = &self.store else {
            return Ok(0);
        };
        // Lock order, as in `rotate`: the store, then the closed list.
        let mut store = store.lock().expect("segment store lock");
        let mut closed = self.closed.lock().expect("closed segments lock");
        let mut blocked = vec![false; self.buffers.len()];
        let mut removed = 0;
        let mut kept = Vec::with_capacity(closed.len());
        // Oldest first, and a worker's removals stop at its first segment still needed, so
        // the segments left are consecutive.
        for seg in closed.drain(..) {
            if !blocked[seg.worker] && seg.max_epoch < epoch {
                store.remove(seg.worker, seg.number)?;
                removed += 1;
            } else {
                blocked[seg.worker] = true;
                kept.push(seg);
            }
        }
        *closed = kept;
        if removed > 0 {
            store.sync()?;
        }
        Ok(removed)
    }

    /// Crash tests: after each durable acknowledgement, the worker appends its transaction's
    /// id and epoch to `ack-W.txt` in `dir` (one per line, written after the acknowledgement).
    pub fn record_acks_in(&mut self, dir: &std::path::Path) -> std::io::Result<()> {
        let files = (0..self.buffers.len())
            .map(|w| std::fs::File::create(dir.join(format!("ack-{w}.txt"))).map(Mutex::new))
            .collect::<std::io::Result<Vec<_>>>()?;
        self.acks = Some(files.into_boxed_slice());
        Ok(())
    }

    /// The log's epoch clock (the install path takes epochs from it).
    pub fn clock(&self) -> &Arc<EpochClock> {
        &self.clock
    }

    /// How the log syncs.
    pub fn sync_mode(&self) -> LogSync {
        self.sync
    }

    /// Appends a committed transaction of `worker`: `count` entries already encoded in
    /// `entries` ([`format::push_entry`]), committed in `epoch`.
    #[inline]
    pub fn append_txn(&self, worker: usize, epoch: u64, txn_id: u64, count: u32, entries: &[u8]) {
        let mut b = self.buffers[worker].lock().expect("log buffer lock");
        format::write_txn(&mut b.bytes, epoch, txn_id, count, entries);
        b.txns += 1;
        b.max_epoch = b.max_epoch.max(epoch);
    }

    /// Closes an epoch and makes it durable (module docs). With `at_least`, does nothing when
    /// that epoch is durable already (a committer that another flush served). Returns false
    /// once the log has failed.
    pub fn flush(&self, at_least: Option<u64>) -> bool {
        let mut st = self.flush.lock().expect("flush lock");
        if self.failure.get().is_some() {
            return false;
        }
        if at_least.is_some_and(|e| self.clock.durable() >= e) {
            return true;
        }
        let epoch = self.clock.close();
        let FlushState {
            devices,
            spare,
            segments,
            spare_epochs,
        } = &mut *st;
        for ((buffer, out), max_epoch) in self
            .buffers
            .iter()
            .zip(spare.iter_mut())
            .zip(spare_epochs.iter_mut())
        {
            let mut b = buffer.lock().expect("log buffer lock");
            format::write_epoch_marker(&mut b.bytes, epoch);
            std::mem::swap(&mut b.bytes, out);
            *max_epoch = std::mem::take(&mut b.max_epoch);
        }
        // Each file on its own thread: a sync costs milliseconds on a disk, and one file's
        // does not wait for another's (the acknowledgement waits for the slowest, not the sum).
        let sync = self.sync != LogSync::None;
        let result: std::io::Result<()> = std::thread::scope(|s| {
            let handles: Vec<_> = devices
                .iter_mut()
                .zip(spare.iter_mut())
                .map(|(device, out)| {
                    s.spawn(move || {
                        device.append(out)?;
                        let n = out.len() as u64;
                        out.clear();
                        if sync {
                            device.sync()?;
                        }
                        Ok::<u64, std::io::Error>(n)
                    })
                })
                .collect();
            let mut first_error = None;
            for h in handles {
                match h.join().expect("log writer thread panicked") {
                    // Relaxed: counters for the report, read after the run.
                    Ok(n) => {
                        self.bytes.fetch_add(n, Ordering::Relaxed);
                        if sync {
                            self.fsyncs.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(e) => first_error = first_error.or(Some(e)),
                }
            }
            first_error.map_or(Ok(()), Err)
        });
        // Written (or partly: a failed log never rotates again) to the current segments.
        for (seg, max_epoch) in segments.iter_mut().zip(spare_epochs.iter()) {
            seg.max_epoch = seg.max_epoch.max(*max_epoch);
        }
        match result {
            Ok(()) => {
                for seg in segments.iter_mut() {
                    seg.last_marker = epoch;
                }
                self.flushes.fetch_add(1, Ordering::Relaxed);
                self.clock.publish_durable(epoch);
                true
            }
            Err(e) => {
                let _ = self.failure.set(format!(
                    "writing the log failed ({e}); the log stopped at durable epoch {}, and \
                     every transaction acknowledged before is in it",
                    self.clock.durable()
                ));
                false
            }
        }
    }

    /// The flusher's loop: a flush every group interval until [`Logger::finish`].
    pub fn run_flusher(&self) {
        while !self.stopping.load(Ordering::Acquire) {
            std::thread::sleep(self.group);
            if !self.flush(None) {
                return;
            }
        }
    }

    /// Waits until the transaction that committed in `epoch` is durable, as `--log-sync` says:
    /// at once without sync, until a flush covers it (group), or after flushing it now (txn).
    /// Returns false when the log failed first (the transaction is not acknowledged).
    pub fn wait_durable(&self, epoch: u64) -> bool {
        match self.sync {
            LogSync::None => true,
            LogSync::Txn => self.flush(Some(epoch)),
            LogSync::Group => {
                let mut spins = 0u32;
                while self.clock.durable() < epoch {
                    if self.failure.get().is_some() {
                        return false;
                    }
                    spins += 1;
                    if spins < 32 {
                        std::thread::yield_now();
                    } else {
                        // Group commit waits up to an interval: sleep, but finely.
                        std::thread::sleep(Duration::from_micros(20));
                    }
                }
                true
            }
        }
    }

    /// The epoch up to which commits may be acknowledged now: the durable frontier, or every
    /// epoch without sync.
    #[inline]
    pub fn acknowledged_through(&self) -> u64 {
        match self.sync {
            LogSync::None => u64::MAX,
            LogSync::Group | LogSync::Txn => self.clock.durable(),
        }
    }

    /// Crash tests: notes that `worker`'s transaction `txn_id` of `epoch` was acknowledged
    /// (a line `ID EPOCH`: the epoch tells a test whether recovery replays it or a checkpoint
    /// holds it).
    pub fn acknowledged(&self, worker: usize, txn_id: u64, epoch: u64) {
        if let Some(acks) = &self.acks {
            let mut f = acks[worker].lock().expect("ack file lock");
            // One write per line: a kill leaves whole lines (or a cut last one, which readers
            // skip); an error here only loses an ack, which the test tolerates.
            let _ = f.write_all(format!("{txn_id} {epoch}\n").as_bytes());
        }
    }

    /// Whether the run's end was signalled ([`Logger::finish`]).
    pub fn is_stopping(&self) -> bool {
        // Acquire: pairs with `finish`'s Release (nothing more than the flag is read).
        self.stopping.load(Ordering::Acquire)
    }

    /// Stops the log with `why` (a checkpoint's I/O error): nothing more is acknowledged.
    pub fn fail(&self, why: String) {
        let _ = self.failure.set(why);
    }

    /// The run's id (the segment and checkpoint headers carry it).
    pub fn run_id(&self) -> u64 {
        self.run_id
    }

    /// The first write or sync error, if the log stopped.
    pub fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    /// Ends the run's log: stops the flusher's loop and flushes and syncs what is left.
    /// Returns the failure, if the log stopped early.
    pub fn finish(&self) -> Result<(), String> {
        self.stopping.store(true, Ordering::Release);
        if self.flush(None) && self.sync == LogSync::None {
            let mut st = self.flush.lock().expect("flush lock");
            for device in st.devices.iter_mut() {
                if let Err(e) = device.sync() {
                    let _ = self.failure.set(format!("syncing the log failed ({e})"));
                    break;
                }
            }
        }
        match self.failure() {
            Some(f) => Err(f.to_string()),
            None => Ok(()),
        }
    }

    /// What the log did so far.
    pub fn stats(&self) -> LogStats {
        LogStats {
            txns: self
                .buffers
                .iter()
                .map(|b| b.lock().expect("log buffer lock").txns)
                .sum(),
            bytes: self.bytes.load(Ordering::Relaxed),
            flushes: self.flushes.load(Ordering::Relaxed),
            fsyncs: self.fsyncs.load(Ordering::Relaxed),
            durable_epoch: self.clock.durable(),
        }
    }

    /// A log in `settings.dir` for `workers` workers of the run whose command line is
    /// `run_args` ([`super::files::create_log_files`]).
    pub fn create(
        settings: &LogSettings,
        workers: usize,
        run_args: &[String],
    ) -> Result<Logger, super::LogError> {
        let (devices, run_id) = super::files::create_log_files(&settings.dir, workers, run_args)?;
        let mut logger = Logger::new(devices, settings.sync, settings.group);
        if settings.checkpoint.is_some() {
            logger = logger.with_segments(
                Box::new(super::files::SegmentFiles {
                    dir: settings.dir.clone(),
                }),
                run_id,
            );
        }
        if let Some(dir) = &settings.acks {
            logger
                .record_acks_in(dir)
                .map_err(|e| super::LogError::io(dir, e))?;
        }
        Ok(logger)
    }
}
