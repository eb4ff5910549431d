//! The executor's configuration: protocol-independent options of how transactions are driven.
//!
//! It lives here, below the executor, so that configuration (which builds it) and the executor
//! (which reads it) share it without configuration importing the executor.

use std::time::Duration;

/// How the executor runs (protocol-independent options).
#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// Worker threads.
    pub threads: usize,
    /// Measured time.
    pub duration: Duration,
    /// Warm-up before measuring (not counted).
    pub warmup: Duration,
    /// Seed; worker `i` draws from `FastRng::for_worker(seed, i)`.
    pub seed: u64,
    /// Record histories for the serializability checker.
    pub record_history: bool,
    /// With `record_history`: the most operations the histories record, all workers together;
    /// past it recording stops (with a warning) and the run goes on unchecked. `--check-limit`,
    /// by default sized from the available memory (see `config::memory`); `u64::MAX` for no
    /// limit; 0 without `record_history`.
    pub check_limit_ops: u64,
    /// AdaptiveBackoff before retries.
    pub adaptive_backoff: bool,
    /// ReadPhaseExtension: artificial delay at the end of every read phase, ns.
    pub read_phase_extension_ns: u64,
    /// Pin worker `i` to core `i % cores` where the OS allows.
    pub pin_threads: bool,
    /// CoreSlice: when workers outnumber cores, a worker that has run this long since it last
    /// gave up its core yields between two transactions (`--core-slice-us`; zero: never).
    pub core_slice: Duration,
    /// CoreSeats: when workers outnumber cores and `core_slice` is not zero, one seat per core,
    /// and only a worker holding a seat runs transactions; it hands the seat to a queued worker
    /// between two transactions once it has run `core_slice` (`exec::core_seats`). False:
    /// CoreSlice's yields alone (`--no-core-seats`).
    pub core_seats: bool,
}

/// Which execution model drives the transaction programs (`--executor`, `--queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Executor {
    /// One transaction in flight per worker thread, run in place (stored procedures).
    #[default]
    Thread,
    /// SGPM coroutines: each worker thread keeps up to `queue` transactions in flight and switches
    /// between them on conflict or completion; each in-flight transaction is a protocol worker.
    Coro {
        /// Transactions in flight per thread (Q >= 1).
        queue: usize,
    },
}

impl Executor {
    /// The stable name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Executor::Thread => "thread",
            Executor::Coro { .. } => "coro",
        }
    }

    /// Transactions in flight per thread: 1 for the thread executor.
    pub fn queue(self) -> usize {
        match self {
            Executor::Thread => 1,
            Executor::Coro { queue } => queue,
        }
    }

    /// Protocol workers for `threads` threads: every in-flight transaction is one.
    pub fn workers(self, threads: usize) -> usize {
        threads * self.queue()
    }
}

/// Open-loop offered load (`--rate`, `--arrival`): transactions arrive on a clock instead of each
/// worker starting its next one when the last commits, and latency counts from the arrival.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenLoop {
    /// Arrivals per second across all workers.
    pub rate_tps: f64,
    /// How arrivals are spaced.
    pub arrival: ArrivalProcess,
}

/// How open-loop arrivals are spaced in time (`--arrival`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalProcess {
    /// Exponential gaps: a Poisson process, what independent clients produce (the default).
    #[default]
    Poisson,
    /// Equal gaps of exactly 1 / rate, staggered across workers: no burstiness at all.
    Uniform,
}

impl ArrivalProcess {
    /// The stable name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ArrivalProcess::Poisson => "poisson",
            ArrivalProcess::Uniform => "uniform",
        }
    }
}
