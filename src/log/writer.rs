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

use super::device::LogDevice;
use super::epoch::EpochClock;
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
}

/// What only the flusher touches: the devices and the buffers swapped out of the workers.
struct FlushState {
    devices: Vec<Box<dyn LogDevice>>,
    spare: Vec<Vec<u8>>,
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
            }),
            sync,
            group,
            failure: OnceLock::new(),
            stopping: AtomicBool::new(false),
            bytes: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
            acks: None,
        }
    }

    /// Crash tests: after each durable acknowledgement, the worker appends its transaction's
    /// id to `ack-W.txt` in `dir` (one id per line, written after the acknowledgement).
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
        let FlushState { devices, spare } = &mut *st;
        for (buffer, out) in self.buffers.iter().zip(spare.iter_mut()) {
            let mut b = buffer.lock().expect("log buffer lock");
            format::write_epoch_marker(&mut b.bytes, epoch);
            std::mem::swap(&mut b.bytes, out);
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
        match result {
            Ok(()) => {
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

    /// Crash tests: notes that `worker`'s transaction `txn_id` was acknowledged.
    pub fn acknowledged(&self, worker: usize, txn_id: u64) {
        if let Some(acks) = &self.acks {
            let mut f = acks[worker].lock().expect("ack file lock");
            // One write per line: a kill leaves whole lines (or a cut last one, which readers
            // skip); an error here only loses an ack, which the test tolerates.
            let _ = f.write_all(format!("{txn_id}\n").as_bytes());
        }
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
        let devices = super::files::create_log_files(&settings.dir, workers, run_args)?;
        let mut logger = Logger::new(devices, settings.sync, settings.group);
        if let Some(dir) = &settings.acks {
            logger
                .record_acks_in(dir)
                .map_err(|e| super::LogError::io(dir, e))?;
        }
        Ok(logger)
    }
}
