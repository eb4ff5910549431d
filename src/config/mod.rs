//! Run configuration: the command line (clap) and the validated [`RunConfig`] built from it.
//!
//! Every parameter is checked here, once, before any work starts; an invalid one produces a
//! [`ConfigError`] naming the parameter, the value given and the allowed range. Nothing past this
//! point panics on user input.
//!
//! Files: `cli.rs` (the clap flags), `presets.rs` (workload presets and names), `validate/`
//! (flags to [`RunConfig`], every range check, one file per area), `tpcc.rs` (the TPC-C flags' checks, called from
//! `validate/`), `memory/` (the run's memory estimate against what the process may use now),
//! `exec.rs` (the executor's options, [`ExecConfig`]: here rather than in `exec` so that
//! configuration never imports the executor), this file (the validated configuration and its
//! error type).

mod cli;
mod describe;
mod exec;
mod experiment_cli;
mod interactive;
pub mod lists;
pub mod memory;
mod presets;
mod report_record;
mod serve_cli;
mod tpcc;
mod unused;
mod validate;
pub mod whole;

pub use cli::{
    CSchedHelpArg, Cli, Command, ExecutorArg, KeyDistArg, LockWaitArg, LogSyncArg, MoccLockArg,
    MoccTemperatureArg, PlorPriorityArg, RecoverArgs, RunArgs,
};
pub use describe::describe_run;
pub use exec::{ArrivalProcess, ExecConfig, Executor, OpenLoop};
pub use experiment_cli::{CompareArgs, MergeArgs, PlotArgs, ReportArgs, SweepArgs};
pub use interactive::Interactive;
pub use presets::{PRESETS, WORKLOADS, preset};
pub use serve_cli::{PingArgs, ServeArgs, ServeConfig, ServeConfigError, serve_manifest_args};
pub use validate::parse_protocols;

use crate::protocol::{ProtocolKind, ProtocolOptions, UnknownProtocol};
use crate::workload::WorkloadConfig;
use clap::ValueEnum;
use serde::Serialize;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// A human-readable table.
    Table,
    /// One JSON object per run per line.
    Json,
    /// CSV with a header row.
    Csv,
}

/// A parameter the user gave that txbench cannot run with.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// A value outside its allowed range.
    #[error("invalid value '{value}' for --{param}: allowed {allowed}")]
    OutOfRange {
        /// Flag name without dashes.
        param: &'static str,
        /// What was given.
        value: String,
        /// The allowed range, in words.
        allowed: String,
    },
    /// A run whose memory estimate does not fit in what the process may use (see [`memory`]).
    #[error(
        "--{param} {value} needs about {needed} of memory, and {available} is available \
         ({limit}; a run may plan for {pct}% of it); {fits}",
        pct = memory::USABLE_PERCENT
    )]
    TooLarge {
        /// Flag name without dashes: the parameter to lower.
        param: &'static str,
        /// What was given (or the default it took).
        value: String,
        /// The run's estimate.
        needed: memory::Bytes,
        /// Memory available now.
        available: memory::Bytes,
        /// The limit that sets `available`.
        limit: memory::MemorySource,
        /// The most that fits with the other parameters unchanged, in words.
        fits: String,
    },
    /// A flag that needs another flag.
    #[error("--{param} applies only with --{needs}")]
    NeedsFlag {
        /// Flag name without dashes.
        param: &'static str,
        /// The flag it needs, without dashes.
        needs: &'static str,
    },
    /// A flag that does not apply to the chosen workload.
    #[error("--{param} does not apply to --workload {workload}")]
    NotForWorkload {
        /// Flag name without dashes.
        param: &'static str,
        /// The workload chosen.
        workload: &'static str,
    },
    /// A protocol name txbench does not know.
    #[error("invalid value for --protocol: {0}")]
    UnknownProtocol(String),
    /// A protocol that schedules from declared access sets, on a workload that cannot declare
    /// them.
    #[error(
        "invalid value '{protocol}' for --protocol with this workload: {protocol} schedules \
         transactions from access sets declared before they run, and {why}"
    )]
    CannotDeclare {
        /// The protocol's name.
        protocol: &'static str,
        /// Why the workload cannot declare, and what would work.
        why: String,
    },
    /// A name not in a fixed set (workload, preset).
    #[error("invalid value '{value}' for --{param}: allowed one of {allowed}")]
    UnknownName {
        /// Flag name without dashes.
        param: &'static str,
        /// What was given.
        value: String,
        /// The allowed names.
        allowed: String,
    },
    /// A protocol that lets other transactions see its writes before it commits (2PL with
    /// early release), on a workload whose transactions may abort by their own logic.
    #[error(
        "invalid value '{protocol}' for --protocol with this workload: {protocol} releases each \
         lock before commit, so other transactions may read a write before its transaction \
         commits, which is only serializable when no transaction aborts, and {why}"
    )]
    UserAborts {
        /// The protocol's name.
        protocol: &'static str,
        /// Which aborts the workload has, and what would work.
        why: String,
    },
    /// `--log` with a directory that cannot take a new log, or with a run it cannot log.
    #[error("invalid value for --log: {0}")]
    Log(String),
}

impl From<UnknownProtocol> for ConfigError {
    fn from(e: UnknownProtocol) -> Self {
        ConfigError::UnknownProtocol(e.to_string())
    }
}

/// A validated run: every field within range.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Protocols to run, in order.
    pub protocols: Vec<ProtocolKind>,
    /// The preset the workload started from, if any.
    pub preset: Option<String>,
    /// The workload and its parameters.
    pub workload: WorkloadConfig,
    /// Executor parameters.
    pub exec: ExecConfig,
    /// Protocol options.
    pub options: ProtocolOptions,
    /// Run the checker.
    pub check: bool,
    /// Runs per protocol.
    pub repeat: usize,
    /// Output format.
    pub format: Format,
    /// The execution model (`--executor`, `--queue`).
    pub executor: Executor,
    /// Open-loop offered load (`--rate`, `--arrival`); `None` for the closed loop (each worker
    /// starts its next transaction when the last one ends).
    pub open_loop: Option<OpenLoop>,
    /// Most bytes the tables may hold (`--table-memory-mb`, or what validation found free for
    /// them); a run that needs more stops early (`storage::TableMemory`).
    pub table_memory_bytes: u64,
    /// What the runner shows on stderr while it loads, runs and checks (`--progress`); not a
    /// parameter of the measurement.
    pub progress: crate::metrics::progress::ProgressMode,
    /// Interactive transactions (`--interactive`, `--connect`): clients send each operation
    /// to a server; `None` runs the programs in process.
    pub interactive: Option<Interactive>,
    /// The redo log (`--log`, `--log-sync`, `--log-group-us`); `None` without `--log`.
    pub log: Option<crate::log::LogSettings>,
}

/// Largest thread count accepted.
pub const MAX_THREADS: usize = 1024;
/// Largest `--queue` (transactions in flight per thread under `--executor coro`) accepted.
pub const MAX_QUEUE: usize = 1024;
/// Largest number of protocol workers (threads x queue) accepted.
pub const MAX_WORKERS: usize = 1024;
/// Largest payload accepted, bytes.
pub const MAX_PAYLOAD: usize = 65_536;
