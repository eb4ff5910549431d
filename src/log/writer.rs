//! The redo log of one run: a buffer per worker, the log files they are written to (worker
//! `w`'s to log `w % logs`, `--log-files`), a flusher that closes epochs, and the durable
//! acknowledgement.
//!
//! Hot path: a committing worker encodes its transaction into its own buffer under its own
//! lock, which only the flusher also takes, once per flush (no lock shared between workers).
//! The flusher, every `--log-group-us` while something is pending (and, with `--log-sync txn`,
//! whenever a committer asks):
//!
//! 1. closes the current epoch `e` ([`EpochClock::close`]: no worker still commits in it);
//! 2. swaps out the buffer of every worker that appended since the last flush; the logs of
//!    those workers are the *dirty* logs, and each gets after its workers' bytes an epoch
//!    marker `e` that says how many logs this flush writes and the epoch of the flush before
//!    ([`format::EpochMarker`]);
//! 3. writes each dirty log's bytes (its workers' buffers and the marker, in one vectored
//!    write), then syncs it (`fdatasync`; not with `--log-sync none`): with a core to spare
//!    for each, the first on the flusher's own thread and each other one on a thread of its
//!    own, otherwise all in turn on the flusher's;
//! 4. publishes `e` as durable.
//!
//! # The flusher's priority
//!
//! The flusher sleeps most of the time and works for well under a millisecond per flush, but
//! every durable acknowledgement waits for it. When the workers keep every core busy, a
//! flusher woken at normal priority waits for the scheduler to give it a core, up to a time
//! slice at each wake-up: at 2 workers on 2 cores the durable acknowledgement's p99 was 9 ms
//! against a 2 ms group interval. So when there are at least as many workers as cores, the
//! flusher asks for real-time priority (`SCHED_FIFO`, the lowest level, 1), as SiloR gives its
//! loggers cores of their own: it then runs as soon as it wakes, and the p99 fell to 2.6 ms
//! (docs/RESULTS.md, "The flusher's priority"). With a core to spare it stays at normal
//! priority: the scheduler then wakes it on the idle core, where a real-time flusher is woken
//! on the core it slept on and preempts the worker there (1 worker on 2 cores lost about 15%
//! of its throughput to that on the disk). The kernel's real-time throttling bounds what a
//! runaway real-time thread could take, and every wait inside a flush sleeps or parks after a
//! short spin. Without the privilege (`CAP_SYS_NICE` or an `RLIMIT_RTPRIO` allowance) the
//! flusher runs at normal priority; the report says which (`log.flusher_realtime`).
//!
//! # Logs shared by workers
//!
//! One flush syncs each dirty log once, so the logs, not the workers, set how many syncs a
//! flush costs: at 2 workers on one disk, a log each made every flush two `fdatasync`s in
//! turn (and two ext4 journal commits), one log for both makes it one (docs/RESULTS.md, "One
//! log file per eight workers"). Workers still append to buffers of their own under their own
//! locks: only the flusher puts several workers' bytes into one file. Within a log, a flush
//! writes its workers' transactions in worker order, so a log is not in commit order;
//! replay needs none (`log/mod.rs`).
//!
//! A log with nothing new is neither written nor synced: it holds every transaction of its
//! workers with an epoch at or below `e` already, and recovery's frontier rule
//! ([`format::EpochMarker`]) counts on exactly that. When no log is dirty and nobody waits for
//! an epoch ([`Logger::request_durable`]), the flusher does not flush at all: it parks until a
//! worker appends (which unparks it) or the run ends, so an idle log costs no CPU. A flush that
//! must advance the frontier with no log dirty (a checkpoint waiting for its end epoch) writes
//! its marker to log 0 only. A write or sync error (a full disk) stops the log:
//! nothing after the last durable epoch is acknowledged, the run stops, and the files keep
//! their valid prefix.
//!
//! # Segments
//!
//! With a [`SegmentStore`] (a run with `--checkpoint-s`), each log is a sequence of segment
//! files. [`Logger::rotate`] (called by the checkpointer, under the flush lock, so between two
//! flushes) starts a new segment for every log; the flusher tracks the highest transaction
//! epoch written to each segment, and [`Logger::remove_segments_below`] deletes a log's
//! oldest closed segments while every transaction in them has an epoch below a
//! durable checkpoint's start (`checkpoint.rs` says why that loses nothing).

use super::device::LogDevice;
use super::epoch::EpochClock;
use super::files::SegmentStore;
use super::format::{self, EpochMarker};
use super::{LogSettings, LogSync};
use crossbeam_utils::CachePadded;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::Duration;

/// One worker's pending bytes.
#[derive(Default)]
struct WorkerBuffer {
    bytes: Vec<u8>,
    /// Transactions appended, all run (committed attempts, for an undo log).
    txns: u64,
    /// Aborted attempts appended, all run (an undo log only).
    aborted: u64,
    /// The highest epoch among the transactions in `bytes` (0: none).
    max_epoch: u64,
}

/// One log's current segment, as the flusher knows it.
#[derive(Debug, Clone, Copy, Default)]
struct SegmentState {
    /// Its number.
    number: u32,
    /// The highest epoch of a transaction written to it (0: none).
    max_epoch: u64,
    /// The highest epoch of a transaction in the log's earlier segments.
    prev_max_epoch: u64,
    /// The last epoch marker written to the log.
    last_marker: EpochMarker,
}

/// A segment no longer written, until it is removed.
#[derive(Debug, Clone, Copy)]
struct ClosedSegment {
    log: usize,
    number: u32,
    max_epoch: u64,
}

/// What only the flusher (or a rotation, under the same lock) touches: per log, its device,
/// the buffers swapped out of its workers, its epoch marker and the segment being written.
struct FlushState {
    devices: Vec<Box<dyn LogDevice>>,
    /// Per log, per worker of the log (worker `log + k * logs` at `k`): the bytes swapped out
    /// of that worker's buffer (kept, emptied, for the next swap).
    spare: Vec<Vec<Vec<u8>>>,
    /// Per log: the epoch marker this flush appends after its workers' bytes.
    markers: Vec<Vec<u8>>,
    segments: Vec<SegmentState>,
    /// Per log: the highest epoch of a transaction this flush writes to it (0: none).
    log_epochs: Vec<u64>,
    /// Per log: whether this flush writes it.
    dirty: Vec<bool>,
    /// How long the flushes and their syncs took.
    timings: FlushTimings,
}

/// How long the flusher's work took, in nanoseconds: each flush from the epoch's close to its
/// publication as durable, and each `fdatasync` call alone. A durable acknowledgement waits
/// at most a group interval and two flushes (the flusher sleeps an interval after each), so
/// with these in the report a run shows whether its durable latency is the disk's (the syncs)
/// or the flusher's (docs/METRICS.md).
#[derive(Debug, Clone)]
pub struct FlushTimings {
    /// Each flush that completed, close to publication.
    pub flush_ns: hdrhistogram::Histogram<u64>,
    /// Each `fdatasync` that succeeded.
    pub fsync_ns: hdrhistogram::Histogram<u64>,
}

impl Default for FlushTimings {
    fn default() -> Self {
        // 1 us to 100 s at 3 significant digits, as the latency histograms of the workers.
        let histogram = || {
            hdrhistogram::Histogram::new_with_bounds(1_000, 100_000_000_000, 3)
                .expect("valid histogram bounds")
        };
        FlushTimings {
            flush_ns: histogram(),
            fsync_ns: histogram(),
        }
    }
}

impl FlushTimings {
    fn record(h: &mut hdrhistogram::Histogram<u64>, took: Duration) {
        // Saturates: a sync slower than the histogram's 100 s bound counts as 100 s.
        h.saturating_record(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX));
    }
}

/// Asks for real-time priority (`SCHED_FIFO` at level 1) for the calling thread; whether it
/// was granted (module docs, "The flusher's priority").
fn raise_to_realtime() -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: `sched_setscheduler` reads the `sched_param` it is given, a valid value on this
    // stack for the call's duration; pid 0 is the calling thread. It changes no memory of ours.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// What the log did over a run, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LogStats {
    /// Transactions logged (each with at least one write; for an undo log, committed ones).
    pub txns: u64,
    /// Aborted attempts logged (an undo log: their before-images were written anyway).
    pub aborted: u64,
    /// Bytes written to the log files (headers and markers included).
    pub bytes: u64,
    /// Flushes (epochs closed).
    pub flushes: u64,
    /// Log files written, summed over the flushes (each such write ends with an epoch marker;
    /// a log with nothing new is skipped).
    pub file_writes: u64,
    /// `fdatasync` calls.
    pub fsyncs: u64,
    /// The durable frontier at the end.
    pub durable_epoch: u64,
    /// Whether the flusher ran at real-time priority (module docs, "The flusher's priority").
    pub flusher_realtime: bool,
}

/// The redo log of one run (module docs).
pub struct Logger {
    clock: Arc<EpochClock>,
    buffers: Box<[CachePadded<Mutex<WorkerBuffer>>]>,
    /// How many logs (files) the workers' buffers are written to.
    logs: usize,
    flush: Mutex<FlushState>,
    sync: LogSync,
    group: Duration,
    /// Set by the first write or sync error; the log stops there.
    failure: OnceLock<String>,
    stopping: AtomicBool,
    /// Written under the flush lock; read for reports.
    bytes: AtomicU64,
    flushes: AtomicU64,
    file_writes: AtomicU64,
    fsyncs: AtomicU64,
    /// The flusher's thread, once [`Logger::run_flusher`] runs (for unparking it).
    flusher: OnceLock<Thread>,
    /// Whether the flusher is parked, or about to park, with nothing pending. Written by the
    /// flusher; read by appenders and requesters, which unpark it.
    flusher_idle: CachePadded<AtomicBool>,
    /// The highest epoch someone other than a committer waits to see durable
    /// ([`Logger::request_durable`]): pending work for the flusher while above the frontier.
    wanted: AtomicU64,
    /// The highest epoch of a transaction some flush has written. A worker may enter the
    /// next epoch and append after a flush closed its epoch but before it took the worker's
    /// buffer; that flush writes the transaction yet publishes only the closed epoch, and the
    /// buffer it leaves is empty. While this is above the frontier the flusher has work (one
    /// more flush publishes it), or the worker, waiting for its epoch, would wait forever on
    /// a parked flusher.
    written_through: AtomicU64,
    /// Crash tests: one file per worker listing the ids of acknowledged transactions.
    acks: Option<Box<[Mutex<std::fs::File>]>>,
    /// Creates and removes segment files (`None`: one file per log, never rotated).
    store: Option<Mutex<Box<dyn SegmentStore>>>,
    /// The run's id, for new segments' headers.
    run_id: u64,
    /// Segments rotated away from and not yet removed, oldest first.
    closed: Mutex<Vec<ClosedSegment>>,
    /// What the workers append (`--log-kind`).
    kind: super::LogKind,
    /// The machine's cores: a flush gives logs writer threads of their own only when there
    /// are cores to spare for them (`Logger::flush`).
    cores: usize,
    /// Whether the flusher got real-time priority (module docs, "The flusher's priority").
    flusher_realtime: AtomicBool,
}

impl Logger {
    /// A log of `workers` workers over `devices` (one per log, at least one and at most one
    /// per worker, each already holding its file header), with `sync` and a group interval of
    /// `group`. Worker `w` writes to log `w % devices.len()`.
    pub fn new(
        devices: Vec<Box<dyn LogDevice>>,
        workers: usize,
        sync: LogSync,
        group: Duration,
    ) -> Self {
        let logs = devices.len();
        assert!(
            (1..=workers.max(1)).contains(&logs),
            "{logs} logs for {workers} workers"
        );
        Logger {
            clock: Arc::new(EpochClock::new(workers)),
            buffers: (0..workers)
                .map(|_| CachePadded::new(Mutex::new(WorkerBuffer::default())))
                .collect(),
            logs,
            flush: Mutex::new(FlushState {
                devices,
                spare: (0..logs)
                    .map(|log| (log..workers).step_by(logs).map(|_| Vec::new()).collect())
                    .collect(),
                markers: vec![Vec::new(); logs],
                segments: vec![SegmentState::default(); logs],
                log_epochs: vec![0; logs],
                dirty: vec![false; logs],
                timings: FlushTimings::default(),
            }),
            sync,
            group,
            failure: OnceLock::new(),
            stopping: AtomicBool::new(false),
            bytes: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            file_writes: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
            flusher: OnceLock::new(),
            flusher_idle: CachePadded::new(AtomicBool::new(false)),
            wanted: AtomicU64::new(0),
            written_through: AtomicU64::new(0),
            acks: None,
            store: None,
            run_id: 0,
            closed: Mutex::new(Vec::new()),
            kind: super::LogKind::Redo,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            flusher_realtime: AtomicBool::new(false),
        }
    }

    /// Tests: the same log as if the machine had `cores` cores (a flush's writer threads
    /// depend on them).
    #[cfg(test)]
    pub(crate) fn with_cores(mut self, cores: usize) -> Self {
        self.cores = cores;
        self
    }

    /// Whether a flush may give `extra` logs a writer thread each: when the machine has a core
    /// for each of them beside every worker and the flusher.
    fn spare_cores_for(&self, extra: usize) -> bool {
        extra > 0 && self.cores >= self.buffers.len() + 1 + extra
    }

    /// The same log with segment files from `store` for the run `run_id`: [`Logger::rotate`]
    /// and [`Logger::remove_segments_below`] work (module docs).
    pub fn with_segments(mut self, store: Box<dyn SegmentStore>, run_id: u64) -> Self {
        self.store = Some(Mutex::new(store));
        self.run_id = run_id;
        self
    }

    /// The same log continuing a directory after a restart (`resume.rs`): its devices are
    /// log `l`'s segment `segments[l]` of the run `run_id`, whose header says the earlier
    /// segments reached marker `last_marker` (of epoch `first_epoch - 1`) and hold no later
    /// epoch; commits take epochs from `first_epoch` on, and every earlier epoch counts as
    /// durable (the restart checkpoint holds them).
    pub fn resumed_from(
        mut self,
        first_epoch: u64,
        last_marker: EpochMarker,
        segments: &[u32],
        run_id: u64,
    ) -> Self {
        assert_eq!(
            last_marker.epoch,
            first_epoch - 1,
            "the marker below the first epoch"
        );
        let workers = self.buffers.len();
        assert_eq!(segments.len(), self.logs, "one segment per log");
        self.clock = Arc::new(EpochClock::starting_at(workers, first_epoch));
        let st = self.flush.get_mut().expect("flush lock");
        for (state, &number) in st.segments.iter_mut().zip(segments) {
            *state = SegmentState {
                number,
                max_epoch: 0,
                prev_max_epoch: first_epoch - 1,
                last_marker,
            };
        }
        self.run_id = run_id;
        self
    }

    /// How many logs (files) the workers' transactions are written to.
    pub fn logs(&self) -> usize {
        self.logs
    }

    /// Whether the log has segments (checkpoints can truncate it).
    pub fn has_segments(&self) -> bool {
        self.store.is_some()
    }

    /// Starts a new segment for every log (module docs) and returns the highest
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
        for log in 0..st.segments.len() {
            let old = st.segments[log];
            let header = format::SegmentHeader {
                log: log as u32,
                run_id: self.run_id,
                segment: old.number + 1,
                prev_max_epoch: old.prev_max_epoch.max(old.max_epoch),
                prev_marker: old.last_marker,
            };
            match store.open(&header) {
                Ok(device) => st.devices[log] = device,
                Err(e) => {
                    let why = format!(
                        "starting segment {} of log {log} failed ({e}); the log stopped at \
                         durable epoch {}",
                        header.segment,
                        self.clock.durable()
                    );
                    let _ = self.failure.set(why.clone());
                    return Err(why);
                }
            }
            st.segments[log] = SegmentState {
                number: header.segment,
                max_epoch: 0,
                prev_max_epoch: header.prev_max_epoch,
                last_marker: old.last_marker,
            };
            highest = highest.max(header.prev_max_epoch);
            closed.push(ClosedSegment {
                log,
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

    /// Removes, per log, its oldest closed segments while every transaction in them has an
    /// epoch below `epoch` (a durable checkpoint's start), then syncs the directory. Returns
    /// how many were removed.
    pub fn remove_segments_below(&self, epoch: u64) -> std::io::Result<usize> {
        let Some(store) = &self.store else {
            return Ok(0);
        };
        // Lock order, as in `rotate`: the store, then the closed list.
        let mut store = store.lock().expect("segment store lock");
        let mut closed = self.closed.lock().expect("closed segments lock");
        let mut blocked = vec![false; self.logs];
        let mut removed = 0;
        let mut kept = Vec::with_capacity(closed.len());
        // Oldest first, and a log's removals stop at its first segment still needed, so the
        // segments left are consecutive.
        for seg in closed.drain(..) {
            if !blocked[seg.log] && seg.max_epoch < epoch {
                store.remove(seg.log, seg.number)?;
                removed += 1;
            } else {
                blocked[seg.log] = true;
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

    /// What the workers append: redo entries at commit, or before-images
    /// ([`Logger::append_undo`]).
    pub fn kind(&self) -> super::LogKind {
        self.kind
    }

    /// The log as one of `kind` (a new log is a redo log).
    pub fn with_kind(mut self, kind: super::LogKind) -> Self {
        self.kind = kind;
        self
    }

    /// Appends a committed transaction of `worker`: `count` entries already encoded in
    /// `entries` ([`format::push_entry`]), committed in `epoch`.
    #[inline]
    pub fn append_txn(&self, worker: usize, epoch: u64, txn_id: u64, count: u32, entries: &[u8]) {
        {
            let mut b = self.buffers[worker].lock().expect("log buffer lock");
            format::write_txn(&mut b.bytes, epoch, txn_id, count, entries);
            b.txns += 1;
            b.max_epoch = b.max_epoch.max(epoch);
        }
        // SeqCst: the flusher stores `flusher_idle` before it looks at this buffer (under its
        // lock) in `pending`. Either its look comes after our unlock and sees the bytes, or
        // our lock came after its unlock, so after its store, and this load sees it.
        if self.flusher_idle.load(Ordering::SeqCst) {
            self.wake_flusher();
        }
    }

    /// Appends an undo frame of `worker` (`crate::log`, "Undo logging"): the before-images of
    /// attempt `txn_id`, `count` entries already encoded in `entries`
    /// ([`format::push_before_image`]), and whether it committed, in `epoch`.
    #[inline]
    pub fn append_undo(
        &self,
        worker: usize,
        epoch: u64,
        txn_id: u64,
        committed: bool,
        count: u32,
        entries: &[u8],
    ) {
        {
            let mut b = self.buffers[worker].lock().expect("log buffer lock");
            format::write_undo(&mut b.bytes, epoch, txn_id, committed, count, entries);
            if committed {
                b.txns += 1;
            } else {
                b.aborted += 1;
            }
            b.max_epoch = b.max_epoch.max(epoch);
        }
        // SeqCst: as in `append_txn`.
        if self.flusher_idle.load(Ordering::SeqCst) {
            self.wake_flusher();
        }
    }

    /// Asks the flusher to make `epoch` durable even if no log has anything new (a
    /// checkpoint's end epoch, which recovery must see a marker for); the caller then waits
    /// for [`EpochClock::durable`] to reach it.
    pub fn request_durable(&self, epoch: u64) {
        // SeqCst: a Dekker pair with `park_while_idle` (we store `wanted` then load
        // `flusher_idle`; it stores `flusher_idle` then loads `wanted`), so one of us sees the
        // other's store.
        self.wanted.fetch_max(epoch, Ordering::SeqCst);
        if self.flusher_idle.load(Ordering::SeqCst) {
            self.wake_flusher();
        }
    }

    fn wake_flusher(&self) {
        if let Some(t) = self.flusher.get() {
            t.unpark();
        }
    }

    /// Whether a flush has work: a worker's buffer holds a transaction, a transaction already
    /// written belongs to an epoch beyond the frontier, or someone waits for an epoch beyond
    /// the frontier.
    fn pending(&self) -> bool {
        let durable = self.clock.durable();
        // SeqCst: `request_durable`'s Dekker pair. Relaxed for `written_through`: in group
        // mode only the flusher flushes while the run lasts, so it reads its own store (in
        // txn mode every committer flushes its own epoch and nobody parks on this).
        self.wanted.load(Ordering::SeqCst) > durable
            || self.written_through.load(Ordering::Relaxed) > durable
            || self
                .buffers
                .iter()
                .any(|b| !b.lock().expect("log buffer lock").bytes.is_empty())
    }

    /// The flusher with nothing pending: parks until an appender or a requester unparks it,
    /// or the run ends.
    fn park_while_idle(&self) {
        // SeqCst: the store comes before `pending`'s loads and buffer locks (the Dekker pairs
        // of `append_txn` and `request_durable`).
        self.flusher_idle.store(true, Ordering::SeqCst);
        while !self.is_stopping() && !self.pending() {
            // An unpark between `pending` and here leaves the token: park returns at once.
            std::thread::park();
        }
        // Relaxed: only a hint to appenders; a stale `true` costs them one needless unpark.
        self.flusher_idle.store(false, Ordering::Relaxed);
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
        let started = std::time::Instant::now();
        let below = self.clock.durable();
        let epoch = self.clock.close();
        #[cfg(test)]
        if super::mutant::is(super::mutant::LogMutant::PublishBeforeSync) {
            self.clock.publish_durable(epoch);
        }
        let FlushState {
            devices,
            spare,
            markers,
            segments,
            log_epochs,
            dirty,
            timings,
        } = &mut *st;
        let logs = devices.len();
        log_epochs.fill(0);
        dirty.fill(false);
        for (w, buffer) in self.buffers.iter().enumerate() {
            let log = w % logs;
            let mut b = buffer.lock().expect("log buffer lock");
            if !b.bytes.is_empty() {
                // The worker keeps appending to the emptied spare; the flush writes its bytes.
                std::mem::swap(&mut b.bytes, &mut spare[log][w / logs]);
                log_epochs[log] = log_epochs[log].max(std::mem::take(&mut b.max_epoch));
                dirty[log] = true;
            }
        }
        // Relaxed: see `written_through` and `pending`.
        let newest = log_epochs.iter().copied().max().unwrap_or(0);
        self.written_through.fetch_max(newest, Ordering::Relaxed);
        let mut files = dirty.iter().filter(|d| **d).count() as u32;
        if files == 0 {
            // Nothing new anywhere, yet the frontier must move (a checkpoint waits for it, or
            // the run ends): one log carries the marker.
            dirty[0] = true;
            files = 1;
        }
        let marker = EpochMarker {
            epoch,
            files,
            below,
        };
        let sync = self.sync != LogSync::None;
        type Job<'a> = (
            &'a mut Box<dyn LogDevice>,
            &'a mut [Vec<u8>],
            &'a mut Vec<u8>,
        );
        let mut jobs: Vec<Job> = devices
            .iter_mut()
            .zip(spare.iter_mut())
            .zip(markers.iter_mut())
            .zip(dirty.iter())
            .filter(|(_, dirty)| **dirty)
            .map(|(((device, parts), marker), _)| (device, parts.as_mut_slice(), marker))
            .collect();
        for (_, _, out) in jobs.iter_mut() {
            format::write_epoch_marker(out, &marker);
        }
        // The marker last: it vouches for every transaction of its epoch before it in the
        // file, so a tear inside the workers' bytes leaves the log's previous marker last.
        #[cfg(test)]
        let marker_first = super::mutant::is(super::mutant::LogMutant::MarkerFirst);
        #[cfg(not(test))]
        let marker_first = false;
        // Each log's bytes written (its workers' swapped-out buffers, then the marker, in one
        // vectored write) and, with sync, how long its sync took.
        let write = move |(device, parts, marker): Job| {
            let mut bytes: Vec<&[u8]> = parts
                .iter()
                .filter(|p| !p.is_empty())
                .map(Vec::as_slice)
                .collect();
            if marker_first {
                bytes.insert(0, marker);
            } else {
                bytes.push(marker);
            }
            device.append_parts(&bytes)?;
            let n = bytes.iter().map(|b| b.len() as u64).sum();
            for part in parts.iter_mut() {
                part.clear();
            }
            marker.clear();
            let mut took = None;
            if sync {
                let t = std::time::Instant::now();
                device.sync()?;
                took = Some(t.elapsed());
            }
            Ok::<(u64, Option<Duration>), std::io::Error>((n, took))
        };
        // With a core to spare for each, the first log on this thread and each other one on a
        // thread of its own: a sync costs milliseconds on a disk, and one file's does not wait
        // for another's (the acknowledgement waits for the slowest, not the sum). Without
        // them, all on this thread: a thread spawned while the workers hold every core waits
        // milliseconds for one (the scheduler places a new thread behind the running ones),
        // which delayed every durable acknowledgement by 2-8 ms at 2 workers on 2 cores
        // (docs/RESULTS.md, "The flusher's writer threads"). One dirty log spawns nothing.
        let first = jobs.pop().expect("at least one log carries the marker");
        let results: Vec<std::io::Result<(u64, Option<Duration>)>> =
            if self.spare_cores_for(jobs.len()) {
                std::thread::scope(|s| {
                    let handles: Vec<_> = jobs
                        .into_iter()
                        .map(|job| s.spawn(move || write(job)))
                        .collect();
                    let mut results = vec![write(first)];
                    results.extend(
                        handles
                            .into_iter()
                            .map(|h| h.join().expect("log writer thread panicked")),
                    );
                    results
                })
            } else {
                let mut results = vec![write(first)];
                results.extend(jobs.into_iter().map(write));
                results
            };
        self.finish_flush(
            results, marker, segments, log_epochs, dirty, timings, started,
        )
    }

    /// The end of a flush that began at `started`: counts what was written and times it and,
    /// when every write succeeded, publishes the closed epoch as durable; otherwise records the
    /// failure. Returns false once the log has failed.
    #[allow(clippy::too_many_arguments)]
    fn finish_flush(
        &self,
        results: Vec<std::io::Result<(u64, Option<Duration>)>>,
        marker: EpochMarker,
        segments: &mut [SegmentState],
        log_epochs: &[u64],
        dirty: &[bool],
        timings: &mut FlushTimings,
        started: std::time::Instant,
    ) -> bool {
        let epoch = marker.epoch;
        let mut first_error = None;
        for r in results {
            match r {
                // Relaxed: counters for the report, read after the run.
                Ok((n, synced)) => {
                    self.bytes.fetch_add(n, Ordering::Relaxed);
                    self.file_writes.fetch_add(1, Ordering::Relaxed);
                    if let Some(took) = synced {
                        self.fsyncs.fetch_add(1, Ordering::Relaxed);
                        FlushTimings::record(&mut timings.fsync_ns, took);
                    }
                }
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        // Written (or partly: a failed log never rotates again) to the current segments.
        for ((seg, max_epoch), dirty) in
            segments.iter_mut().zip(log_epochs.iter()).zip(dirty.iter())
        {
            if *dirty {
                seg.max_epoch = seg.max_epoch.max(*max_epoch);
            }
        }
        match first_error {
            None => {
                for (seg, dirty) in segments.iter_mut().zip(dirty.iter()) {
                    if *dirty {
                        seg.last_marker = marker;
                    }
                }
                self.flushes.fetch_add(1, Ordering::Relaxed);
                self.clock.publish_durable(epoch);
                FlushTimings::record(&mut timings.flush_ns, started.elapsed());
                true
            }
            Some(e) => {
                let _ = self.failure.set(format!(
                    "writing the log failed ({e}); the log stopped at durable epoch {}, and \
                     every transaction acknowledged before is in it",
                    self.clock.durable()
                ));
                false
            }
        }
    }

    /// The flusher's loop until [`Logger::finish`]: a flush every group interval while
    /// something is pending, parked while nothing is (module docs).
    pub fn run_flusher(&self) {
        let _ = self.flusher.set(std::thread::current());
        // Only with no core to spare beside the workers (module docs, "The flusher's
        // priority"). Relaxed: read for the report after the run.
        let realtime = self.buffers.len() >= self.cores && raise_to_realtime();
        self.flusher_realtime.store(realtime, Ordering::Relaxed);
        while !self.is_stopping() {
            std::thread::sleep(self.group);
            if !self.pending() {
                // Woken by an append: the next flush is a group interval later, as when busy.
                self.park_while_idle();
                continue;
            }
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
        #[cfg(test)]
        if super::mutant::is(super::mutant::LogMutant::AcknowledgeBeforeDurable) {
            return self.clock.current();
        }
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
        self.wake_flusher();
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
            aborted: self
                .buffers
                .iter()
                .map(|b| b.lock().expect("log buffer lock").aborted)
                .sum(),
            bytes: self.bytes.load(Ordering::Relaxed),
            flushes: self.flushes.load(Ordering::Relaxed),
            file_writes: self.file_writes.load(Ordering::Relaxed),
            fsyncs: self.fsyncs.load(Ordering::Relaxed),
            durable_epoch: self.clock.durable(),
            flusher_realtime: self.flusher_realtime.load(Ordering::Relaxed),
        }
    }

    /// How long the flushes and syncs so far took (a copy, taken under the flush lock).
    pub fn flush_timings(&self) -> FlushTimings {
        self.flush.lock().expect("flush lock").timings.clone()
    }

    /// A log in `settings.dir` for `workers` workers (writing to
    /// [`LogSettings::logs_for`] logs) of the run whose command line is `run_args`
    /// ([`super::files::create_log_files`]).
    pub fn create(
        settings: &LogSettings,
        workers: usize,
        run_args: &[String],
    ) -> Result<Logger, super::LogError> {
        let logs = settings.logs_for(workers);
        let (devices, run_id) =
            super::files::create_log_files(&settings.dir, workers, logs, run_args, settings.kind)?;
        let mut logger =
            Logger::new(devices, workers, settings.sync, settings.group).with_kind(settings.kind);
        if settings.checkpoint.is_some() {
            logger = logger.with_segments(
                Box::new(super::files::SegmentFiles::on_disk(&settings.dir)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::device::MemDevice;
    use crate::log::mutant::{self, LogMutant};
    use crate::log::recover::scan_file;

    const WORKERS: usize = 8;

    /// `WORKERS` simulated devices, each holding its synced header, and a group-committed log
    /// over them with a short interval.
    fn log_on_devices() -> (Vec<MemDevice>, Logger) {
        let devices: Vec<MemDevice> = (0..WORKERS)
            .map(|w| {
                let mut d = MemDevice::default();
                let mut header = Vec::new();
                format::write_file_header(&mut header, w as u32, 7);
                d.append(&header).expect("header");
                d.sync().expect("sync");
                d
            })
            .collect();
        let boxed = devices
            .iter()
            .map(|d| Box::new(d.clone()) as Box<dyn LogDevice>)
            .collect();
        let log = Logger::new(boxed, WORKERS, LogSync::Group, Duration::from_micros(200));
        (devices, log)
    }

    /// The frontier recovery would find on `devices` after a crash now (their synced bytes).
    fn recovered_frontier(devices: &[MemDevice]) -> u64 {
        let markers: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(w, d)| scan_file("f", &d.crash(), w, 7).marker)
            .collect();
        format::frontier(&markers)
    }

    fn syncs(devices: &[MemDevice]) -> Vec<u64> {
        devices
            .iter()
            .map(|d| d.0.lock().expect("device").syncs)
            .collect()
    }

    /// Worker `w` commits one (empty) transaction and waits until it is durable.
    fn commit(log: &Logger, w: usize, id: u64) -> u64 {
        let epoch = log.clock().enter(w);
        log.append_txn(w, epoch, id, 0, &[]);
        log.clock().leave(w);
        assert!(log.wait_durable(epoch), "the log failed");
        epoch
    }

    /// A flush writes and syncs only the logs with something new, and an idle log is neither
    /// written nor synced: over many group intervals with nothing appended, no device sees a
    /// sync. Recovery's frontier still reaches the last flush.
    #[test]
    fn only_logs_with_something_new_are_written_and_an_idle_log_syncs_nothing() {
        let (devices, log) = log_on_devices();
        std::thread::scope(|s| {
            s.spawn(|| log.run_flusher());
            let before = syncs(&devices);
            let epoch = commit(&log, 3, 1);
            let after = syncs(&devices);
            for w in 0..WORKERS {
                let expected = before[w] + u64::from(w == 3);
                assert_eq!(after[w], expected, "syncs of worker {w}'s device");
            }
            // Idle: 50 group intervals with nothing appended.
            std::thread::sleep(Duration::from_millis(10));
            assert_eq!(syncs(&devices), after, "an idle log synced");
            let epoch2 = commit(&log, 5, 2);
            assert!(epoch2 > epoch);
            let again = syncs(&devices);
            for w in 0..WORKERS {
                let expected = after[w] + u64::from(w == 5);
                assert_eq!(again[w], expected, "syncs of worker {w}'s device");
            }
            log.finish().expect("finish");
        });
        assert_eq!(
            recovered_frontier(&devices),
            log.clock().durable(),
            "recovery's frontier is the last flush's epoch"
        );
    }

    /// Every flush and every sync is timed, once each: the report's flush and fsync latencies
    /// count exactly the flushes and syncs of the log's counters; without sync none is timed.
    #[test]
    fn every_flush_and_sync_is_timed_once() {
        let (_devices, log) = log_on_devices();
        for id in 1..=3 {
            let epoch = log.clock().enter(1);
            log.append_txn(1, epoch, id, 0, &[]);
            log.append_txn(6, epoch, id + 10, 0, &[]);
            log.clock().leave(1);
            assert!(log.flush(None), "the log failed");
        }
        let (stats, timings) = (log.stats(), log.flush_timings());
        assert_eq!(stats.flushes, 3);
        assert_eq!(stats.fsyncs, 6, "two logs synced per flush");
        assert_eq!(timings.flush_ns.len(), stats.flushes);
        assert_eq!(timings.fsync_ns.len(), stats.fsyncs);
        assert!(timings.flush_ns.max() >= timings.fsync_ns.min());

        let unsynced = Logger::new(
            vec![Box::new(MemDevice::default()) as Box<dyn LogDevice>],
            1,
            LogSync::None,
            Duration::from_micros(200),
        );
        let epoch = unsynced.clock().enter(0);
        unsynced.append_txn(0, epoch, 1, 0, &[]);
        unsynced.clock().leave(0);
        assert!(unsynced.flush(None));
        let timings = unsynced.flush_timings();
        assert_eq!((timings.flush_ns.len(), timings.fsync_ns.len()), (1, 0));
    }

    /// `workers` workers on `logs` simulated devices (worker `w` on device `w % logs`), each
    /// device holding its synced header; a group-committed log over them.
    fn shared_logs(workers: usize, logs: usize) -> (Vec<MemDevice>, Logger) {
        let devices: Vec<MemDevice> = (0..logs)
            .map(|l| {
                let mut d = MemDevice::default();
                let mut header = Vec::new();
                format::write_file_header(&mut header, l as u32, 7);
                d.append(&header).expect("header");
                d.sync().expect("sync");
                d
            })
            .collect();
        let boxed = devices
            .iter()
            .map(|d| Box::new(d.clone()) as Box<dyn LogDevice>)
            .collect();
        let log = Logger::new(boxed, workers, LogSync::Group, Duration::from_micros(200));
        (devices, log)
    }

    /// The ids of the transactions recovery would replay from `files` (log `l` at `l`).
    fn replayed(files: &[Vec<u8>]) -> std::collections::HashSet<u64> {
        let scans: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(l, f)| scan_file("f", f, l, 7))
            .collect();
        let frontier = format::frontier(&scans.iter().map(|s| s.marker).collect::<Vec<_>>());
        let mut ids = std::collections::HashSet::new();
        for (f, s) in files.iter().zip(&scans) {
            for frame in format::FrameReader::new(&f[..s.valid_bytes as usize]) {
                if let format::Frame::Txn(t) = frame
                    && t.epoch <= frontier
                {
                    ids.insert(t.txn_id);
                }
            }
        }
        ids
    }

    /// Workers sharing a log: a flush writes each log with something new once (its workers'
    /// bytes and one marker) and syncs it once; a log whose workers were idle is neither
    /// written nor synced; recovery replays every worker's transactions.
    #[test]
    fn a_flush_writes_and_syncs_each_shared_log_once() {
        let (devices, log) = shared_logs(5, 2);
        // Workers 0, 2 and 4 write to log 0; 1 and 3 to log 1.
        let mut id = 0;
        for w in [0, 2, 4, 1] {
            id += 1;
            let epoch = log.clock().enter(w);
            log.append_txn(w, epoch, id, 0, &[]);
            log.clock().leave(w);
        }
        assert!(log.flush(None));
        assert_eq!(syncs(&devices), vec![2, 2], "header, then one sync per log");
        let stats = log.stats();
        assert_eq!((stats.file_writes, stats.fsyncs), (2, 2), "{stats:?}");
        // Only log 0's workers now: log 1 is not touched.
        for w in [2, 4] {
            id += 1;
            let epoch = log.clock().enter(w);
            log.append_txn(w, epoch, id, 0, &[]);
            log.clock().leave(w);
        }
        assert!(log.flush(None));
        assert_eq!(syncs(&devices), vec![3, 2]);
        let files: Vec<Vec<u8>> = devices.iter().map(MemDevice::crash).collect();
        assert_eq!(replayed(&files), (1..=id).collect());
        let last = scan_file("f", &files[0], 0, 7).marker;
        assert_eq!((last.epoch, last.files), (log.clock().durable(), 1));
    }

    /// Power lost while a shared log's flush was written: whatever prefix of it survives,
    /// recovery replays exactly the flushes that completed, every transaction of them and none
    /// of the torn one (whose transactions, of one epoch, may depend on each other in any
    /// order, so a part of them is not a state any serial order passes through). Returns what
    /// went wrong, with `mutant` on.
    fn a_torn_shared_log_keeps_what_was_acknowledged(mutant: LogMutant) -> Result<(), String> {
        let (devices, log) = shared_logs(3, 1);
        let mut id = 0;
        let mut commit_all = || {
            for w in 0..3 {
                id += 1;
                let epoch = log.clock().enter(w);
                log.append_txn(w, epoch, id, 0, &[]);
                log.clock().leave(w);
            }
        };
        commit_all();
        assert!(log.flush(None));
        let before = devices[0].crash().len();
        commit_all();
        mutant::set(mutant);
        let flushed = log.flush(None);
        mutant::set(LogMutant::None);
        assert!(flushed);
        let written = devices[0].crash();
        // Every prefix from the first flush's end to the second's: power lost mid-write.
        for at in before..=written.len() {
            let survivors = replayed(&[written[..at].to_vec()]);
            let completed: std::collections::HashSet<u64> = if at == written.len() {
                (1..=6).collect()
            } else {
                (1..=3).collect()
            };
            if survivors != completed {
                return Err(format!(
                    "torn at {at} of {}: replayed {survivors:?}, the completed flushes hold \
                     {completed:?}",
                    written.len()
                ));
            }
        }
        Ok(())
    }

    #[test]
    fn power_loss_inside_a_shared_logs_flush_loses_nothing_acknowledged() {
        assert_eq!(
            a_torn_shared_log_keeps_what_was_acknowledged(LogMutant::None),
            Ok(())
        );
        let caught = a_torn_shared_log_keeps_what_was_acknowledged(LogMutant::MarkerFirst);
        eprintln!("MarkerFirst: {caught:?}");
        assert!(
            caught.is_err(),
            "a marker ahead of its workers' bytes was not caught"
        );
    }

    /// Waits, yielding, until `done` holds (a bounded number of tries, so a bug fails the test
    /// rather than hanging it).
    fn until(what: &str, done: impl Fn() -> bool) {
        for _ in 0..10_000_000u64 {
            if done() {
                return;
            }
            std::thread::yield_now();
        }
        panic!("never: {what}");
    }

    /// Power lost in the middle of a flush: worker 0's log took the flush's transaction and
    /// marker and synced them; worker 1's write failed (its disk filled) before its sync. No
    /// transaction of that epoch may be acknowledged, and recovery must stop at the flush
    /// before: worker 0's last marker is the highest, but it names two logs and only one ends
    /// with it. Returns what went wrong, if anything, with `mutant` on (`log::mutant`: each
    /// must be caught here).
    ///
    /// With `cores` cores, many (each log gets a writer thread of its own) or one (the flusher
    /// writes them in turn).
    fn a_flush_cut_between_two_logs_is_not_durable(
        mutant: LogMutant,
        cores: usize,
    ) -> Result<(), String> {
        let (devices, log) = log_on_devices();
        let log = log.with_cores(cores);
        // Flush by hand (no flusher thread), so both commits fall into the same flush.
        let commit_both = |first_id: u64| {
            for (w, id) in [(0, first_id), (1, first_id + 1)] {
                let epoch = log.clock().enter(w);
                log.append_txn(w, epoch, id, 0, &[]);
                log.clock().leave(w);
            }
        };
        commit_both(1);
        assert!(log.flush(None), "the first flush");
        let durable = log.clock().durable();
        {
            let mut d = devices[1].0.lock().expect("device");
            d.capacity = Some(d.written.len() + 1);
        }
        commit_both(3);
        mutant::set(mutant);
        let flushed = log.flush(None);
        let acknowledged = log.acknowledged_through();
        let recovered = recovered_frontier(&devices);
        mutant::set(LogMutant::None);
        assert!(!flushed, "worker 1's write must fail");
        let top = scan_file("f", &devices[0].crash(), 0, 7).marker.epoch;
        assert!(top > durable, "worker 0's log holds the cut flush's marker");
        if acknowledged > recovered {
            return Err(format!(
                "acknowledged through epoch {acknowledged}, recovered only to {recovered}"
            ));
        }
        if recovered != durable {
            return Err(format!(
                "recovered frontier {recovered}, but only epoch {durable} was durable"
            ));
        }
        Ok(())
    }

    #[test]
    fn recovery_stops_before_a_flush_that_power_loss_cut_between_two_logs() {
        for cores in [1, 64] {
            assert_eq!(
                a_flush_cut_between_two_logs_is_not_durable(LogMutant::None, cores),
                Ok(()),
                "{cores} cores"
            );
        }
    }

    #[test]
    fn the_log_mutants_are_caught_by_a_flush_cut_between_two_logs() {
        for m in [
            LogMutant::FrontierAtTheTop,
            LogMutant::PublishBeforeSync,
            LogMutant::AcknowledgeBeforeDurable,
        ] {
            for cores in [1, 64] {
                let caught = a_flush_cut_between_two_logs_is_not_durable(m, cores);
                eprintln!("{m:?}, {cores} cores: {caught:?}");
                assert!(caught.is_err(), "{m:?} was not caught with {cores} cores");
            }
        }
    }

    /// A worker that enters the next epoch after a flush closed its epoch, and appends before
    /// that flush takes its buffer, has its transaction written by a flush that publishes
    /// only the closed epoch, leaving every buffer empty. The flusher must still publish the
    /// worker's epoch rather than park: the worker waits for it (the end of a run waited
    /// forever on a 2-core machine under load before `written_through`).
    #[test]
    fn a_transaction_written_ahead_of_its_epoch_is_made_durable_by_the_next_flush() {
        let (devices, log) = log_on_devices();
        std::thread::scope(|s| {
            s.spawn(|| log.run_flusher());
            until("the flusher parks", || {
                log.flusher_idle.load(Ordering::SeqCst)
            });
            // The interleaving, without racing for it: the next flush closes `current`, so a
            // transaction of `current + 1` in the buffer is the worker that entered early.
            let ahead = log.clock().current() + 1;
            log.append_txn(4, ahead, 1, 0, &[]);
            // Bounded, and the flusher stopped before asserting: a panic inside the scope
            // would wait forever for a parked flusher to end.
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while log.clock().durable() < ahead && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(100));
            }
            let durable = log.clock().durable();
            log.finish().expect("finish");
            assert!(
                durable >= ahead,
                "epoch {ahead} never durable (frontier {durable})"
            );
        });
        assert!(recovered_frontier(&devices) >= 2);
    }

    /// With nothing pending the flusher parks: no flush at all (not even of an empty epoch);
    /// an append unparks it, and so does a request for an epoch with nothing new to write,
    /// which one marker in worker 0's log makes durable (so recovery's frontier reaches it).
    #[test]
    fn an_idle_flusher_parks_and_appends_and_requests_wake_it() {
        let (devices, log) = log_on_devices();
        std::thread::scope(|s| {
            s.spawn(|| log.run_flusher());
            until("the flusher parks", || {
                log.flusher_idle.load(Ordering::SeqCst)
            });
            std::thread::sleep(Duration::from_millis(5));
            let idle = log.stats();
            assert_eq!((idle.flushes, idle.file_writes, idle.fsyncs), (0, 0, 0));
            commit(&log, 6, 1);
            let one = log.stats();
            assert_eq!((one.file_writes, one.fsyncs), (1, 1), "{one:?}");
            until("the flusher parks again", || {
                log.flusher_idle.load(Ordering::SeqCst)
            });
            let wanted = log.clock().current();
            log.request_durable(wanted);
            until("the requested epoch is durable", || {
                log.clock().durable() >= wanted
            });
            let two = log.stats();
            assert_eq!((two.file_writes, two.fsyncs), (2, 2), "{two:?}");
            assert_eq!(
                devices[0].0.lock().expect("device").syncs,
                2,
                "header, marker"
            );
            log.finish().expect("finish");
        });
        assert_eq!(recovered_frontier(&devices), log.clock().durable());
    }
}
