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
}
