//! One run of one protocol: build and load the database, start the log and the sampler, run
//! the executor, check the history if asked, and build the report with its warnings.

use super::RunError;
use super::connected::InteractiveStats;
use super::sampling::sample_while;
use crate::check;
use crate::config::Executor;
use crate::config::{Interactive, RunConfig};
use crate::exec::interactive::loopback::run_loopback;
use crate::exec::{run_coro_sampled, run_threads_sampled};
use crate::log::Logger;
use crate::log::checkpoint::Checkpointer;
use crate::metrics::cpu_load::{CpuSnapshot, OtherLoad};
use crate::metrics::log_report::{CheckpointReport, LogReport};
use crate::metrics::machine::MachineInfo;
use crate::metrics::progress::{LOG_EVERY, Phase};
use crate::metrics::rate_series::{self, RateCounters};
use crate::metrics::report::{ProtocolLabel, RunReport};
use crate::protocol::{Protocol, parts};
use crate::storage::Database;
use crate::workload::Workload;
use std::time::Duration;

/// [`run_with`](super::run_with) for any protocol, its reports named by `label`.
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
        // One log file per protocol worker: a coroutine run has `queue` per thread.
        Some(settings) => Some(Logger::create(
            settings,
            cfg.executor.workers(cfg.exec.threads),
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
    let checkpointer = match (&logger, &cfg.log) {
        (Some(log), Some(settings)) => settings
            .checkpoint
            .map(|every| Checkpointer::new(log, &db, &settings.dir, every)),
        _ => None,
    };
    let (outcome, version_samples, rate_samples) = std::thread::scope(|s| {
        if let Some(log) = &logger {
            s.spawn(|| log.run_flusher());
        }
        if let Some(c) = &checkpointer {
            s.spawn(|| c.run());
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
                    logger.as_ref(),
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
            let mut report = log_report(log, settings, &outcome.workers, logging_since.elapsed());
            report.checkpoints = checkpointer.as_ref().map(|c| {
                let st = c.stats();
                CheckpointReport {
                    interval_s: settings.checkpoint.map_or(0.0, |d| d.as_secs_f64()),
                    checkpoints: st.checkpoints,
                    last_records: st.last_records,
                    last_bytes: st.last_bytes,
                    last_s: st.last_s,
                    segments_removed: st.segments_removed,
                }
            });
            Some(report)
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
    let timings = log.flush_timings();
    let mut durable = crate::metrics::WorkerStats::new(1).durable_latency;
    for w in workers {
        durable
            .add(&w.durable_latency)
            .expect("histograms of equal bounds");
    }
    let per = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    LogReport {
        dir: settings.dir.display().to_string(),
        kind: settings.kind.name(),
        sync: settings.sync.name(),
        group_us: settings.group.as_micros() as u64,
        files: log.logs(),
        txns_logged: stats.txns,
        aborted_logged: stats.aborted,
        bytes: stats.bytes,
        bytes_per_txn: per(stats.bytes, stats.txns),
        flushes: stats.flushes,
        fsyncs: stats.fsyncs,
        fsyncs_per_s: stats.fsyncs as f64 / elapsed.as_secs_f64().max(1e-9),
        txns_per_fsync: per(stats.txns, stats.fsyncs),
        durable_epoch: stats.durable_epoch,
        flusher_realtime: stats.flusher_realtime,
        acknowledged: durable.len(),
        durable_latency_us: crate::metrics::LatencySummary::from_histogram(&durable),
        flush_latency_us: crate::metrics::LatencySummary::from_histogram(&timings.flush_ns),
        fsync_latency_us: crate::metrics::LatencySummary::from_histogram(&timings.fsync_ns),
        checkpoints: None,
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
