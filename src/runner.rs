//! Runs one configured experiment: for each protocol, build the database, run the executor,
//! check if asked, and summarise. The protocol is chosen here, once per run, by matching the
//! closed [`ProtocolKind`] set; everything below is monomorphised for that protocol.

use crate::check;
use crate::config::Executor;
use crate::config::{Interactive, RunConfig};
use crate::exec::interactive::client::{Session, SessionError};
use crate::exec::interactive::clients::{ClientsError, ClientsOutcome, run_clients};
use crate::exec::interactive::loopback::run_loopback;
use crate::exec::interactive::wire::ErrorCode;
use crate::exec::{run_coro_sampled, run_threads_sampled};
use crate::log::Logger;
use crate::metrics::cpu_load::{CpuSnapshot, OtherLoad};
use crate::metrics::log_report::LogReport;
use crate::metrics::machine::MachineInfo;
use crate::metrics::progress::{LOG_EVERY, Phase};
use crate::metrics::rate_series::{self, RateCounters, RateTotals};
use crate::metrics::report::{ProtocolLabel, RunReport};
use crate::metrics::sampler;
use crate::metrics::version_series::VersionSample;
use crate::protocol::{Protocol, ProtocolKind, ProtocolOptions, ProtocolVisitor, parts};
use crate::storage::versions::VersionMemoryExhausted;
use crate::storage::{Database, TableAllocError};
use crate::workload::Workload;
use crate::workload::WorkloadConfig;
use crate::workload::long_scan::LongScan;
use crate::workload::shifting::Shifting;
use crate::workload::tpcc::Tpcc;
use crate::workload::write_skew::WriteSkew;
use crate::workload::ycsb::Ycsb;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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
        return run_connected(kind, addr, token.as_deref(), cfg, workload, machine);
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

/// [`run_with`] for any protocol, its reports named by `label`.
pub fn run_named<P: Protocol, W: Workload>(
    label: &ProtocolLabel,
    protocol: P,
    cfg: &RunConfig,
    workload: &W,
    machine: &MachineInfo,
) -> Result<RunReport, RunError> {
    if P::DECLARED_SET.is_some() {
        if let Err(why) = workload.declares_access_sets() {
            panic!(
                "{}: {why} (configuration validation should have rejected this)",
                label.name
            );
        }
    }
    let (tables, indexes) = (workload.tables(), workload.indexes());
    // A logged run's rows carry the stamp too: its seq orders replay (`crate::log`).
    let stamped = cfg.check || cfg.log.is_some();
    let loading = Phase::start(cfg.progress, &label.name, "loading the tables", LOG_EVERY);
    let db: Database<P::RecordMeta> =
        Database::try_build_growable(&tables, &indexes, stamped, &workload.growable_tables())?;
    workload.load(&db);
    drop(loading);
    // Growth from here on counts against the cap (loading was sized by validation).
    db.table_memory()
        .set_cap(usize::try_from(cfg.table_memory_bytes).unwrap_or(usize::MAX));
    if cfg.check {
        db.stamp_loaded_rows();
    }
    let logger = match &cfg.log {
        Some(settings) => Some(Logger::create(
            settings,
            cfg.exec.threads,
            &settings.run_args,
        )?),
        None => None,
    };
    workload.run_starts(cfg.exec.warmup + cfg.exec.duration);
    let logging_since = std::time::Instant::now();
    let running = Phase::start(
        cfg.progress,
        &label.name,
        &format!(
            "running ({} s warm-up + {} s measured)",
            cfg.exec.warmup.as_secs_f64(),
            cfg.exec.duration.as_secs_f64()
        ),
        LOG_EVERY,
    );
    let cpu_before = CpuSnapshot::take();
    let mut interactive = None;
    // Interactive clients count in the loopback's client loop, not in these slots: no series.
    let rates = cfg
        .interactive
        .is_none()
        .then(|| RateCounters::new(cfg.exec.threads));
    let (outcome, version_samples, rate_samples) = std::thread::scope(|s| {
        if let Some(log) = &logger {
            s.spawn(|| log.run_flusher());
        }
        let ran = sample_while(&protocol, cfg, rates.as_ref(), || {
            match (&cfg.interactive, cfg.executor) {
                (Some(Interactive::Loopback { rtt_us }), _) => {
                    let rtt = Duration::from_micros(*rtt_us);
                    run_loopback(&protocol, &db, workload, &cfg.exec, rtt).map(|o| {
                        interactive = Some(InteractiveStats::new(&o.clients));
                        o.clients.exec
                    })
                }
                (_, Executor::Thread) => Ok(run_threads_sampled(
                    &protocol,
                    &db,
                    workload,
                    &cfg.exec,
                    cfg.open_loop,
                    logger.as_ref(),
                    rates.as_ref(),
                )),
                (_, Executor::Coro { queue }) => Ok(run_coro_sampled(
                    &protocol,
                    &db,
                    workload,
                    &cfg.exec,
                    queue,
                    rates.as_ref(),
                )),
            }
        });
        // Ends the flusher's loop (the scope then joins it) and makes the rest durable.
        if let Some(log) = &logger {
            let _ = log.finish();
        }
        ran
    });
    drop(running);
    let others = cpu_before
        .zip(CpuSnapshot::take())
        .and_then(|(before, after)| before.others_until(&after));
    let outcome = outcome?;
    let log_report = match (&logger, &cfg.log) {
        (Some(log), Some(settings)) => {
            if let Some(failure) = log.failure() {
                return Err(RunError::LogFailed(failure.to_string()));
            }
            Some(log_report(
                log,
                settings,
                &outcome.workers,
                logging_since.elapsed(),
            ))
        }
        _ => None,
    };
    if let Some(e) = parts::version_memory_exhausted(&protocol) {
        return Err(e.into());
    }
    let check = cfg.check.then(|| {
        let checking = Phase::start(cfg.progress, &label.name, "checking", LOG_EVERY);
        let mut report =
            check::check_with_progress(&outcome.histories, &mut |step| checking.set_detail(step));
        checking.set_detail("consistency conditions");
        if let Some(consistency) = workload.check_consistency(&db) {
            report.add_consistency(consistency);
        }
        report
    });
    let versions = parts::version_stats(&protocol);
    let protocol_stats = P::RUN_HOOKS.stats(&protocol);
    drop(protocol);
    let mut report = RunReport::build_named(
        label,
        &cfg.report_context(workload),
        &outcome.workers,
        outcome.measured,
        check,
        machine,
    );
    report.warnings = workload.after_run();
    if let Some(why) = db.table_memory().first_refusal() {
        report.warnings.push(format!(
            "the run stopped early, after {:.2} s measured: {why}; the results cover the run up \
             to there. The cap is --table-memory-mb (default: what validation found free for \
             the tables before the run)",
            outcome.measured.as_secs_f64()
        ));
    }
    report.versions = versions;
    report.log = log_report;
    report.version_samples = version_samples;
    report.rate_samples = rate_series::intervals(&rate_samples, workload.txn_types().len());
    report.growing_tables = db
        .tables()
        .iter()
        .filter_map(|t| t.growing_stats())
        .collect();
    report.protocol_stats = protocol_stats
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect();
    report.other_processes_cores = others.map(|o| o.cores);
    if let Some(load) = others.filter(OtherLoad::busy) {
        report.warnings.push(format!(
            "the machine was busy: other processes kept {:.2} of its {} cores busy on average \
             while the workers ran (/proc/stat); this run's numbers are low and noisy. Compare \
             protocols measured in one run (their rounds interleave), or rerun on an idle machine",
            load.cores, machine.cores
        ));
    }
    if let Some(stats) = &interactive {
        stats.add_to(&mut report);
    }
    if let Some(w) = open_loop_warning(&report) {
        report.warnings.push(w);
    }
    if let Some(bug) = report.deterministic_abort_bug() {
        report.warnings.push(bug);
    }
    if let Some(c) = report.check.as_ref().filter(|c| c.workers_truncated > 0) {
        report.warnings.push(format!(
            "--check-limit {} reached: {} of {} workers stopped recording before the run ended; \
             the check covers {} transactions",
            cfg.exec.check_limit_ops, c.workers_truncated, cfg.exec.threads, c.transactions
        ));
    }
    Ok(report)
}

/// The log's numbers for the report: its counters over `elapsed` (the whole run) and the
/// workers' durable acknowledgement latencies.
fn log_report(
    log: &Logger,
    settings: &crate::log::LogSettings,
    workers: &[crate::metrics::WorkerStats],
    elapsed: Duration,
) -> LogReport {
    let stats = log.stats();
    let mut durable = crate::metrics::WorkerStats::new(1).durable_latency;
    for w in workers {
        durable
            .add(&w.durable_latency)
            .expect("histograms of equal bounds");
    }
    let per = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    LogReport {
        dir: settings.dir.display().to_string(),
        sync: settings.sync.name(),
        group_us: settings.group.as_micros() as u64,
        txns_logged: stats.txns,
        bytes: stats.bytes,
        bytes_per_txn: per(stats.bytes, stats.txns),
        flushes: stats.flushes,
        fsyncs: stats.fsyncs,
        fsyncs_per_s: stats.fsyncs as f64 / elapsed.as_secs_f64().max(1e-9),
        txns_per_fsync: per(stats.txns, stats.fsyncs),
        durable_epoch: stats.durable_epoch,
        acknowledged: durable.len(),
        durable_latency_us: crate::metrics::LatencySummary::from_histogram(&durable),
    }
}

/// What an open-loop run's numbers do not say by themselves: an offered rate that expects (almost)
/// no arrivals in the measured period measured nothing; one the system could not keep up with
/// (achieved below 90% of offered, over enough arrivals to tell) saturated it, and its latencies
/// then grow with the run's length (the queue of arrivals grows), so they describe the run, not
/// the protocol at that load.
fn open_loop_warning(r: &RunReport) -> Option<String> {
    let offered = r.offered_tps?;
    let expected = offered * r.measured_s;
    if expected < 10.0 {
        return Some(format!(
            "--rate {offered} offers about {expected:.3} transactions over the {:.2} s measured: \
             too few to measure ({} committed); raise --rate or --duration",
            r.measured_s, r.commits
        ));
    }
    (r.throughput_tps < 0.9 * offered).then(|| {
        format!(
            "saturated: {offered:.0} txn/s offered, {:.0} achieved ({:.1}%); arrivals queued \
             faster than they ran, so the latencies include a queue that grew all run",
            r.throughput_tps,
            100.0 * r.throughput_tps / offered
        )
    })
}

/// Runs `run` (the executor) and meanwhile, on a thread of its own, samples every
/// `--sample-ms` ([`sampler`]): a multi-version protocol's versions (one that reports
/// [`Protocol::MULTI_VERSION`]; none for a single-version protocol) and, given `rates`, the
/// workers' live commit and abort counts ([`rate_series`]; the snapshots are empty without). The
/// sampler sleeps between samples and reads per-worker counts, so the workers do not pay for it.
fn sample_while<P: Protocol, T>(
    protocol: &P,
    cfg: &RunConfig,
    rates: Option<&RateCounters>,
    run: impl FnOnce() -> T,
) -> (T, Vec<VersionSample>, Vec<(f64, RateTotals)>) {
    let versions = P::MULTI_VERSION.is_some();
    if !versions && rates.is_none() {
        return (run(), Vec::new(), Vec::new());
    }
    let every = Duration::from_millis(cfg.options.mv.version_sample_ms);
    let expected = (cfg.exec.warmup + cfg.exec.duration).as_millis()
        / u128::from(cfg.options.mv.version_sample_ms.max(1));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            sampler::sample_until(
                every,
                usize::try_from(expected).unwrap_or(usize::MAX),
                &stop,
                |t| {
                    let v = versions.then(|| {
                        VersionSample::of(t, parts::version_stats(protocol).unwrap_or_default())
                    });
                    (v, (t, rates.map(RateCounters::totals).unwrap_or_default()))
                },
            )
        });
        let outcome = run();
        // Release: pairs with the sampler's Acquire, after the workers joined.
        stop.store(true, Ordering::Release);
        sampler.thread().unpark();
        let samples = sampler.join().expect("the sampler panicked");
        let version_samples = samples.iter().filter_map(|(v, _)| *v).collect();
        let rate_snapshots = if rates.is_some() {
            samples.iter().map(|(_, r)| *r).collect()
        } else {
            Vec::new()
        };
        (outcome, version_samples, rate_snapshots)
    })
}

/// Runs `workload`'s clients against the server at `addr` (`--connect`): the protocol is the
/// server's (`kind` names it in the report), and so is the history: with `--check` the server
/// (`txbench serve --check`) checks it and a last session asks for its verdict.
fn run_connected<W: Workload>(
    kind: ProtocolKind,
    addr: &str,
    token: Option<&str>,
    cfg: &RunConfig,
    workload: &W,
    machine: &MachineInfo,
) -> Result<RunReport, RunError> {
    let declare = kind.needs_declared_set();
    let outcome = run_clients(addr, token, workload, &cfg.exec, declare)?;
    let check = if cfg.check {
        Some(server_verdict(addr, token).map_err(ClientsError::Verdict)?)
    } else {
        None
    };
    let mut report = RunReport::build_named(
        &ProtocolLabel::for_run(kind, &cfg.options),
        &cfg.report_context(workload),
        &outcome.exec.workers,
        outcome.exec.measured,
        check,
        machine,
    );
    InteractiveStats::new(&outcome).add_to(&mut report);
    Ok(report)
}

/// The checker's verdict from the server at `addr`, asked by a session of its own once the run's
/// clients are gone. Their sessions end on the server a moment after they disconnect, so a
/// server with no handle free yet refuses the connection as busy: that is retried a bounded
/// number of times, a fraction of a second apart.
fn server_verdict(addr: &str, token: Option<&str>) -> Result<check::CheckReport, SessionError> {
    const TRIES: u32 = 100;
    let mut tries = 0;
    loop {
        tries += 1;
        match Session::connect(addr, token) {
            Ok(mut s) => return s.verdict(),
            Err(SessionError::Server {
                code: ErrorCode::Busy,
                ..
            }) if tries < TRIES => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e),
        }
    }
}

/// What an interactive run adds to its report, in `protocol_stats` under `interactive.`
/// (docs/METRICS.md): the bare round trip, the operations' round trips, and the split of the
/// committed transactions' time into network and queueing versus server-side work.
struct InteractiveStats {
    values: [(&'static str, f64); 8],
}

impl InteractiveStats {
    fn new(o: &ClientsOutcome) -> InteractiveStats {
        let us = |ns: f64| ns / 1e3;
        let per_txn = |v: u64| {
            if o.commits == 0 {
                0.0
            } else {
                v as f64 / o.commits as f64
            }
        };
        let ping = o.ping_ns as f64;
        let op_p50 = o.op_ns.value_at_quantile(0.5) as f64;
        InteractiveStats {
            values: [
                ("interactive.ping_us", us(ping)),
                ("interactive.op_p50_us", us(op_p50)),
                (
                    "interactive.op_p99_us",
                    us(o.op_ns.value_at_quantile(0.99) as f64),
                ),
                (
                    "interactive.op_over_ping",
                    if ping > 0.0 { op_p50 / ping } else { 0.0 },
                ),
                ("interactive.round_trips_per_txn", per_txn(o.round_trips)),
                ("interactive.network_us_per_txn", us(per_txn(o.network_ns))),
                (
                    "interactive.server_us_per_txn",
                    us(per_txn(o.txn_ns.saturating_sub(o.network_ns))),
                ),
                ("interactive.ops_measured", o.op_ns.len() as f64),
            ],
        }
    }

    fn add_to(&self, report: &mut RunReport) {
        for (name, value) in self.values {
            report.protocol_stats.insert(name.to_string(), value);
        }
    }
}
