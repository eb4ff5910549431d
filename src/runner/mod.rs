//! Runs one configured experiment: for each protocol, build the database, run the executor,
//! check if asked, and summarise. The protocol is chosen here, once per run, by matching the
//! closed [`ProtocolKind`] set; everything below is monomorphised for that protocol.
//!
//! This file is the dispatch: from a configuration's workload and protocol list to the typed
//! runs. One run (database, executor, checker, report) is `one_run.rs`; the thread that samples
//! versions and rates while it runs is `sampling.rs`; runs whose protocol is a server's
//! (`--connect`) are `connected.rs`.

mod connected;
mod one_run;
mod sampling;

pub use one_run::run_named;

use crate::config::{Interactive, RunConfig};
use crate::exec::interactive::client::SessionError;
use crate::exec::interactive::clients::ClientsError;
use crate::exec::interactive::wire::ErrorCode;
use crate::metrics::machine::MachineInfo;
use crate::metrics::report::{ProtocolLabel, RunReport};
use crate::protocol::{Protocol, ProtocolKind, ProtocolOptions, ProtocolVisitor};
use crate::storage::TableAllocError;
use crate::storage::versions::VersionMemoryExhausted;
use crate::workload::Workload;
use crate::workload::WorkloadConfig;
use crate::workload::long_scan::LongScan;
use crate::workload::shifting::Shifting;
use crate::workload::tpcc::Tpcc;
use crate::workload::write_skew::WriteSkew;
use crate::workload::ycsb::Ycsb;

/// Why a run produced no report. The library never ends the process: the `txbench` binary turns
/// these into its exit status ([`RunError::exit_code`]).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The tables could not be allocated (configuration validation estimates memory first, so
    /// this is the backstop).
    #[error(transparent)]
    Tables(#[from] TableAllocError),
    /// A multi-version protocol's versions needed more memory than the cap; the run stopped
    /// within a poll interval of reaching it.
    #[error(transparent)]
    VersionMemory(#[from] VersionMemoryExhausted),
    /// The log could not be created (`--log`: the directory changed since validation, or
    /// files cannot be created in it).
    #[error("--log: {0}")]
    LogCreate(#[from] crate::log::LogError),
    /// Writing or syncing the log failed during the run (a full disk): the run stopped, and
    /// the log keeps every transaction acknowledged before.
    #[error("{0}")]
    LogFailed(String),
    /// An interactive run's clients could not reach the server, lost it, or found it serving
    /// other tables.
    #[error(transparent)]
    Interactive(#[from] ClientsError),
}

impl RunError {
    /// The exit status the binary ends with: 2 for tables that cannot be allocated (the
    /// configuration asks for more than the machine has), a server serving other tables than
    /// the configured workload's, or `--check` against a server that records no history, 1 for
    /// a run that ran out of version memory or lost its server.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Tables(_)
            | RunError::LogCreate(_)
            | RunError::Interactive(ClientsError::Tables { .. })
            | RunError::Interactive(ClientsError::Verdict(SessionError::Server {
                code: ErrorCode::NotCheckable,
                ..
            })) => 2,
            RunError::VersionMemory(_) | RunError::LogFailed(_) | RunError::Interactive(_) => 1,
        }
    }
}

/// Runs every protocol of `cfg`, `cfg.repeat` rounds of all protocols in order (interleaving the
/// protocols keeps slow drifts of a shared machine from favouring one), calling `on_report` after
/// each run. Stops at the first run that fails ([`RunError`]), and, after Ctrl-C
/// ([`interrupt`](crate::interrupt)), before the next run, returning the runs finished.
pub fn run_all(
    cfg: &RunConfig,
    on_report: impl FnMut(&RunReport),
) -> Result<Vec<RunReport>, RunError> {
    match &cfg.workload {
        WorkloadConfig::Ycsb(c) => run_rounds(cfg, &Ycsb::new(c.clone()), on_report),
        WorkloadConfig::LongScan(c) => run_rounds(cfg, &LongScan::new(c.clone()), on_report),
        WorkloadConfig::Tpcc(c) => run_rounds(cfg, &Tpcc::new(c.clone()), on_report),
        WorkloadConfig::WriteSkew(c) => run_rounds(cfg, &WriteSkew::new(c.clone()), on_report),
        WorkloadConfig::Shifting(c) => run_rounds(cfg, &Shifting::new(c.clone()), on_report),
    }
}

fn run_rounds<W: Workload>(
    cfg: &RunConfig,
    workload: &W,
    mut on_report: impl FnMut(&RunReport),
) -> Result<Vec<RunReport>, RunError> {
    let machine = MachineInfo::detect();
    let mut reports = Vec::with_capacity(cfg.protocols.len() * cfg.repeat);
    for round in 0..cfg.repeat {
        for &kind in &cfg.protocols {
            // Ctrl-C: the runs finished so far are the result.
            if crate::interrupt::interrupted() {
                return Ok(reports);
            }
            let mut report = run_protocol(kind, cfg, workload, &machine)?;
            report.round = round;
            on_report(&report);
            reports.push(report);
        }
    }
    Ok(reports)
}

/// Runs `workload` once on protocol `kind` (the type [`ProtocolKind::visit`] names for it).
pub fn run_protocol<W: Workload>(
    kind: ProtocolKind,
    cfg: &RunConfig,
    workload: &W,
    machine: &MachineInfo,
) -> Result<RunReport, RunError> {
    if let Some(Interactive::Connect { addr, token }) = &cfg.interactive {
        // The protocol runs on the server; `kind` only names it in the report.
        return connected::run_connected(kind, addr, token.as_deref(), cfg, workload, machine);
    }
    /// Builds the visited protocol and runs it.
    struct RunOnce<'a, W> {
        kind: ProtocolKind,
        cfg: &'a RunConfig,
        workload: &'a W,
        machine: &'a MachineInfo,
    }
    impl<W: Workload> ProtocolVisitor for RunOnce<'_, W> {
        type Output = Result<RunReport, RunError>;
        fn visit<P: Protocol>(self, build: fn(&ProtocolOptions) -> P) -> Self::Output {
            let protocol = build(&self.cfg.options);
            run_with(self.kind, protocol, self.cfg, self.workload, self.machine)
        }
    }
    let run = RunOnce {
        kind,
        cfg,
        workload,
        machine,
    };
    kind.visit(&cfg.options, run)
}

/// Runs `workload` on `protocol` with the executor and builds the report.
pub fn run_with<P: Protocol, W: Workload>(
    kind: ProtocolKind,
    protocol: P,
    cfg: &RunConfig,
    workload: &W,
    machine: &MachineInfo,
) -> Result<RunReport, RunError> {
    run_named(
        &ProtocolLabel::for_run(kind, &cfg.options),
        protocol,
        cfg,
        workload,
        machine,
    )
}

/// Runs a protocol that is not one of txbench's own (not a [`ProtocolKind`]; for example one a
/// researcher defines in their own crate, as `examples/custom_protocol.rs` does) on `cfg`'s
/// workload: `cfg.repeat` rounds, each on a fresh database with a protocol from
/// `make(cfg)`, through the same executor, checker (with `cfg.check`) and reports as the
/// built-in protocols, the reports named by `label`. `cfg.protocols` is not consulted (run those
/// with [`run_all`]); validation used them to size memory.
pub fn run_custom<P: Protocol>(
    label: &ProtocolLabel,
    cfg: &RunConfig,
    make: impl Fn(&RunConfig) -> P,
    mut on_report: impl FnMut(&RunReport),
) -> Result<Vec<RunReport>, RunError> {
    fn rounds<P: Protocol, W: Workload>(
        label: &ProtocolLabel,
        cfg: &RunConfig,
        workload: &W,
        make: impl Fn(&RunConfig) -> P,
        on_report: &mut impl FnMut(&RunReport),
    ) -> Result<Vec<RunReport>, RunError> {
        let machine = MachineInfo::detect();
        let mut reports = Vec::with_capacity(cfg.repeat);
        for round in 0..cfg.repeat {
            let mut report = run_named(label, make(cfg), cfg, workload, &machine)?;
            report.round = round;
            on_report(&report);
            reports.push(report);
        }
        Ok(reports)
    }
    let on = &mut on_report;
    match &cfg.workload {
        WorkloadConfig::Ycsb(c) => rounds(label, cfg, &Ycsb::new(c.clone()), make, on),
        WorkloadConfig::LongScan(c) => rounds(label, cfg, &LongScan::new(c.clone()), make, on),
        WorkloadConfig::Tpcc(c) => rounds(label, cfg, &Tpcc::new(c.clone()), make, on),
        WorkloadConfig::WriteSkew(c) => rounds(label, cfg, &WriteSkew::new(c.clone()), make, on),
        WorkloadConfig::Shifting(c) => rounds(label, cfg, &Shifting::new(c.clone()), make, on),
    }
}
