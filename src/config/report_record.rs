//! What a run's reports record about it ([`RunContext`]): the configuration as the reports'
//! `config` field holds it, the executor and the open loop. Built here, beside the
//! configuration, so that metrics needs no configuration type.

use super::{Executor, RunConfig};
use crate::metrics::report::RunContext;
use crate::protocol::ProtocolOptions;
use crate::workload::{Workload, WorkloadConfig};
use serde::Serialize;

/// The configuration as recorded in reports.
#[derive(Serialize)]
struct ConfigRecord<'a> {
    workload: &'a str,
    preset: &'a Option<String>,
    #[serde(flatten)]
    params: &'a WorkloadConfig,
    threads: usize,
    duration_s: f64,
    warmup_s: f64,
    seed: u64,
    check: bool,
    /// `--check-limit` (what it defaulted to when not given); absent without `--check`.
    #[serde(skip_serializing_if = "Option::is_none")]
    check_limit_ops: Option<u64>,
    repeat: usize,
    adaptive_backoff: bool,
    read_phase_extension_ns: u64,
    pin_threads: bool,
    /// `--core-slice-us` (0: off).
    core_slice_us: u64,
    /// Whether CoreSeats was on (`--no-core-seats`); it acts only with more workers than cores.
    core_seats: bool,
    options: &'a ProtocolOptions,
    /// `--rate`: offered transactions per second (open loop); absent in a closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_tps: Option<f64>,
    /// `--arrival`, with `--rate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    arrival: Option<&'static str>,
}

impl RunConfig {
    /// What a report of this run of `workload` records about it.
    pub fn report_context<W: Workload>(&self, workload: &W) -> RunContext {
        let cfg = self;
        let config = ConfigRecord {
            workload: workload.name(),
            preset: &cfg.preset,
            params: &cfg.workload,
            threads: cfg.exec.threads,
            duration_s: cfg.exec.duration.as_secs_f64(),
            warmup_s: cfg.exec.warmup.as_secs_f64(),
            seed: cfg.exec.seed,
            check: cfg.check,
            check_limit_ops: cfg.check.then_some(cfg.exec.check_limit_ops),
            repeat: cfg.repeat,
            adaptive_backoff: cfg.exec.adaptive_backoff,
            read_phase_extension_ns: cfg.exec.read_phase_extension_ns,
            pin_threads: cfg.exec.pin_threads,
            core_slice_us: u64::try_from(cfg.exec.core_slice.as_micros()).unwrap_or(u64::MAX),
            core_seats: cfg.exec.core_seats,
            options: &cfg.options,
            rate_tps: cfg.open_loop.map(|o| o.rate_tps),
            arrival: cfg.open_loop.map(|o| o.arrival.name()),
        };
        RunContext {
            workload: workload.name(),
            txn_types: workload.txn_types(),
            config: serde_json::to_value(config).expect("config serialises"),
            threads: cfg.exec.threads,
            executor: cfg.executor.name(),
            queue: cfg.executor.queue(),
            reports_signals: matches!(cfg.executor, Executor::Coro { .. }),
            offered_tps: cfg.open_loop.map(|o| o.rate_tps),
            arrival: cfg.open_loop.map(|o| o.arrival.name()),
        }
    }
}
