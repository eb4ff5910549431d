//! Durability: redo (value) logging with epoch-based group commit, and recovery; and undo
//! logging (`--log-kind undo`), which measures what PLOR's figure 14 measures.
//!
//! # Where the log hooks in
//!
//! One shared hook, no protocol code: [`WriteSet::install`](crate::protocol::WriteSet::install),
//! which every protocol calls while it holds a record exclusively, after validation and before
//! the write is visible, hands each install to the worker's
//! [`InstallLog`](crate::protocol::InstallLog). With a log, the install log:
//!
//! - takes the transaction's epoch from the [`EpochClock`] at its first install (`epoch.rs`
//!   says why that epoch orders every dependency);
//! - gives the new version the next seq of its record (the check-mode stamp's seq word, which a
//!   logged run's tables carry: `storage::stamp`), exactly the version order the checker uses;
//! - copies the row it installs, with its record id and seq, into a reused arena.
//!
//! When the attempt commits, the `Txn` handle names each entry's table and appends the
//! transaction to its worker's buffer ([`Logger::append_txn`]); the executor then waits for
//! the durable acknowledgement ([`Logger::wait_durable`]). The log thus sees exactly the
//! installs the checker sees, for every protocol.
//!
//! # Replay needs no global order
//!
//! Each entry carries its record's seq, a total order of that record's versions given by the
//! install path while the record was held exclusively. Workers append to buffers of their own
//! (no lock shared on the hot path); the flusher writes them to the logs, worker `w`'s to log
//! `w % logs` (`--log-files`, after SiloR's loggers). Recovery (`recover.rs`) replays each
//! log on its own thread and keeps, per record, the entry with the highest seq (a
//! last-writer-wins merge), for the transactions at or below the durable frontier, which the
//! logs' last epoch markers give (`format::EpochMarker`; `writer.rs`).
//!
//! # Checkpoints
//!
//! With `--checkpoint-s`, a checkpointer thread beside the flusher takes a fuzzy checkpoint
//! of every record's (row, seq) while the workload runs, and each log is split into
//! segment files, so segments a durable checkpoint made obsolete are removed; recovery starts
//! from the newest complete checkpoint and replays from its start epoch (`checkpoint/mod.rs`
//! gives the argument).
//!
//! # Undo logging (`--log-kind undo`)
//!
//! PLOR (section 5, figure 14) compares redo logging with undo logging, where "the old version
//! of a record is logged immediately before modifying it", so an abort wastes its logging. With
//! `--log-kind undo` the second hook is [`WriteSet::put`](crate::protocol::WriteSet::put), the
//! write path every supporting protocol shares: the first write of an attempt to a record copies
//! the record's current committed row, its *before-image*, with its record id and seq, into a
//! reused arena of the worker ([`UndoCapture`](crate::protocol::UndoCapture)). That copy is made
//! in the read phase while the writer holds the record exclusively, so it lengthens the lock
//! holding time exactly where undo logging does. When the attempt ends, committed or aborted,
//! the `Txn` handle appends its before-images to the worker's log buffer as one undo frame
//! marked with the outcome ([`Logger::append_undo`]; `format.rs`, kind 4); a commit then waits
//! for the durable acknowledgement as under redo. No redo entries are written: this is the
//! paper's cost, not a recoverable log. The tables live in DRAM, and before-images alone cannot
//! rebuild them after a crash, so `txbench recover` refuses an undo log (the manifest records
//! the kind) and points to `--log-kind redo`.
//!
//! Only protocols that hold a record exclusively from their first write to it until the
//! attempt ends support undo ([`LogKind::supports`]): the before-image is then the committed
//! row, stable until the attempt releases it. txbench's 2PL and PLOR buffer the write itself
//! and install it at commit, but their locks make the read-phase copy cost what the paper's
//! in-place writes cost. Optimistic and multi-version protocols write nothing in place before
//! commit (PLOR does not evaluate them under undo either), and a record they buffer a write for
//! is not held, so they are refused.
//!
//! Files: `format.rs` (the bytes), `epoch.rs` (the clock), `writer.rs` (buffers, flusher,
//! acknowledgement, segments), `files.rs` (the directory, its manifest, segment and
//! checkpoint names), `device.rs` (files, and a simulated device that loses unsynced bytes),
//! `dir.rs` (where segments and checkpoints are created, renamed and removed: the file system,
//! or a simulated directory that loses unsynced entries),
//! `checkpoint/` (the checkpointer and its file format), `recover.rs` (replay), `resume.rs`
//! (a restarted server's log: recovered, then continued in the same directory).

pub mod checkpoint;
pub mod device;
pub mod dir;
pub mod epoch;
pub mod files;
pub mod format;
pub mod recover;
pub mod resume;
pub mod writer;

/// Test-only mutants of the log's durability rules, per thread (a test that flushes and
/// recovers on its own thread turns one on; other tests are not affected). Each is one line
/// of the code it breaks; `writer.rs`'s power-loss test
/// (`a_flush_cut_between_two_logs_is_not_durable`) must catch every one (docs/TESTING.md).
#[cfg(test)]
pub(crate) mod mutant {
    /// Which rule is broken.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum LogMutant {
        /// None.
        None,
        /// Recovery's frontier is the highest marker's epoch even when the flush that wrote it
        /// was cut short (`format::frontier` without counting the logs the flush wrote).
        FrontierAtTheTop,
        /// A flush publishes its epoch durable before writing and syncing the logs.
        PublishBeforeSync,
        /// Commits are acknowledged through the epoch now open, durable or not
        /// (`Logger::acknowledged_through`).
        AcknowledgeBeforeDurable,
        /// Replay applies a delta onto whatever older version the record holds, not only the
        /// version it was taken against (`recover.rs`; caught by its delta-order test).
        DeltaOntoAnyVersion,
        /// A flush writes a log's epoch marker ahead of its workers' bytes instead of after
        /// them (`Logger::flush`; caught by `writer.rs`'s torn shared-log test).
        MarkerFirst,
    }

    thread_local! {
        static ON: std::cell::Cell<LogMutant> = const { std::cell::Cell::new(LogMutant::None) };
    }

    /// Whether `m` is on for this thread.
    pub(crate) fn is(m: LogMutant) -> bool {
        ON.with(std::cell::Cell::get) == m
    }

    /// Turns `m` on for this thread (`LogMutant::None`: off).
    pub(crate) fn set(m: LogMutant) {
        ON.with(|on| on.set(m));
    }
}

pub use epoch::EpochClock;
pub use writer::{LogStats, Logger};

use std::path::{Path, PathBuf};
use std::time::Duration;

/// When a committed transaction is acknowledged (`--log-sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogSync {
    /// At once: the log is written every group interval but never synced (durable only once
    /// the run ends cleanly).
    None,
    /// When a group flush that closed its epoch has synced every file (`--log-group-us`).
    Group,
    /// After a flush, with sync, that the transaction itself started once it committed.
    Txn,
}

impl LogSync {
    /// The flag value.
    pub fn name(self) -> &'static str {
        match self {
            LogSync::None => "none",
            LogSync::Group => "group",
            LogSync::Txn => "txn",
        }
    }
}

/// The default group interval (`--log-group-us`): SiloR's epochs are 40 ms; a few
/// milliseconds keeps the acknowledgement latency near an fsync.
pub const DEFAULT_GROUP_US: u64 = 2_000;

/// What the log holds (`--log-kind`; module docs, "Undo logging").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogKind {
    /// Each committed transaction's new rows, appended at commit: recoverable.
    #[default]
    Redo,
    /// Each attempt's before-images, captured at its writes in the read phase, and its outcome:
    /// PLOR's undo-logging cost, not recoverable (the tables are in DRAM).
    Undo,
}

impl LogKind {
    /// The flag value.
    pub fn name(self) -> &'static str {
        match self {
            LogKind::Redo => "redo",
            LogKind::Undo => "undo",
        }
    }

    /// The protocols an undo log supports: those that hold a record exclusively from their
    /// first write to it in the read phase until the attempt ends (2PL's three rules, PLOR
    /// without delayed write-lock acquisition, 2PL with early release, whose write is in place)
    /// or whose schedule holds every declared record for the whole attempt (Ord-Lock, C-Sched,
    /// Calvin's ticket variant, DecentSched), so the before-image copied at the write is the
    /// committed row. PLOR's `--plor-dwa` takes its write locks at commit and is refused
    /// separately.
    pub const UNDO_PROTOCOLS: [crate::protocol::ProtocolKind; 9] = {
        use crate::protocol::ProtocolKind as P;
        [
            P::NoWait,
            P::WaitDie,
            P::WoundWait,
            P::Plor,
            P::TwoPlEr,
            P::OrdLock,
            P::CSched,
            P::CalvinTicket,
            P::DecentSched,
        ]
    };

    /// Whether a log of this kind can be written by `protocol`.
    pub fn supports(self, protocol: crate::protocol::ProtocolKind) -> bool {
        self == LogKind::Redo || Self::UNDO_PROTOCOLS.contains(&protocol)
    }
}

/// The log's part of a run's configuration (`--log`, `--log-sync`, `--log-group-us`).
#[derive(Debug, Clone, PartialEq)]
pub struct LogSettings {
    /// The directory the log goes in.
    pub dir: PathBuf,
    /// `--log-kind`: redo (recoverable) or undo (PLOR's figure 14 cost).
    pub kind: LogKind,
    /// When commits are acknowledged.
    pub sync: LogSync,
    /// The group interval.
    pub group: Duration,
    /// Crash tests (`--log-acks`): where acknowledged transaction ids are listed.
    pub acks: Option<PathBuf>,
    /// `--log-files`: how many logs the workers write to (`None`: [`default_logs`]).
    pub files: Option<usize>,
    /// `--checkpoint-s`: the interval between checkpoints (`None`: no checkpoints, one
    /// segment per log that grows with the run).
    pub checkpoint: Option<Duration>,
    /// The run's `txbench run` arguments without the log's own flags, for the manifest
    /// (recovery rebuilds the loaded database from them); the binary fills them in.
    pub run_args: Vec<String>,
}

impl LogSettings {
    /// How many logs `workers` workers write to: `--log-files`, or [`default_logs`].
    pub fn logs_for(&self, workers: usize) -> usize {
        self.files
            .unwrap_or_else(|| default_logs(workers))
            .clamp(1, workers.max(1))
    }
}

/// Workers per log by default (`--log-files`). Each flush writes and syncs every log with
/// something new, one `fdatasync` per log; on one disk the syncs of one flush serve one
/// acknowledgement, so fewer logs mean fewer syncs (at 2 workers on this project's 2-core VM,
/// one log for both took the flush from two syncs to one; docs/RESULTS.md, "One log file per
/// eight workers"). SiloR gives each logger a group of workers (its 32-core runs had a few
/// loggers); replay reads each log on a thread of its own, so many workers still get several.
pub const WORKERS_PER_LOG: usize = 8;

/// The default number of logs for `workers` workers: one per [`WORKERS_PER_LOG`].
pub fn default_logs(workers: usize) -> usize {
    workers.div_ceil(WORKERS_PER_LOG).max(1)
}

/// The arguments of a `txbench run` command line (`argv` without the program and `run`)
/// less the log's own flags and their values, for a log's manifest.
pub fn run_args_without_log_flags(argv: &[String]) -> Vec<String> {
    const LOG_FLAGS: [&str; 7] = [
        "--log",
        "--log-kind",
        "--log-sync",
        "--log-group-us",
        "--log-acks",
        "--log-files",
        "--checkpoint-s",
    ];
    let mut out = Vec::with_capacity(argv.len());
    let mut skip_value = false;
    for a in argv {
        if skip_value {
            skip_value = false;
            continue;
        }
        if LOG_FLAGS.contains(&a.as_str()) {
            skip_value = true;
            continue;
        }
        if LOG_FLAGS.iter().any(|f| a.starts_with(&format!("{f}="))) {
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// Why a log could not be created or read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The directory does not exist.
    #[error("log directory {0} does not exist (create it first)")]
    Missing(PathBuf),
    /// The path is not a directory.
    #[error("log directory {0} is not a directory")]
    NotADirectory(PathBuf),
    /// The directory holds a log already.
    #[error(
        "log directory {0} holds another run's log (manifest.json, log-*.log or \
         checkpoint-*); recover it with `txbench recover`, or choose an empty directory"
    )]
    HoldsLog(PathBuf),
    /// A file cannot be created in the directory.
    #[error("log directory {dir} is not writable: {why}")]
    NotWritable {
        /// The directory.
        dir: PathBuf,
        /// The system's reason.
        why: String,
    },
    /// An I/O error on a path.
    #[error("{path}: {why}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The system's reason.
        why: String,
    },
    /// No manifest: not a log directory.
    #[error("{0} holds no log (no manifest.json)")]
    NoManifest(PathBuf),
    /// An undo log: before-images cannot rebuild in-memory tables.
    #[error(
        "{0} holds an undo log (--log-kind undo): before-images and commit marks cannot rebuild \
         the in-memory tables after a crash; log with --log-kind redo (the default) to recover"
    )]
    UndoLog(PathBuf),
    /// The manifest does not parse.
    #[error("{path}: not a txbench log manifest: {why}")]
    BadManifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

impl LogError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        LogError::Io {
            path: path.to_path_buf(),
            why: e.to_string(),
        }
    }
}
