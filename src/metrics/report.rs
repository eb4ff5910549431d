//! Reports: one [`RunReport`] per (protocol, workload) run, printed as a table, JSON lines or CSV.
//!
//! Field and column names are part of txbench's interface (scripts rely on them): `protocol`,
//! `protocol_serializable`, `workload`, `threads`, `commits`, `aborts`, `throughput_tps`,
//! `abort_ratio`, `latency_us` (`p50`, `p90`, `p99`, `p999`, `max`), `config`, `machine`, and
//! `check` in check mode, whose `passed` is the verdict.
//!
//! Two answers must never be confused: whether a protocol is *meant* to be serializable (its
//! class, `protocol_serializable`: false only for `nocc`) and whether this run *was* found
//! serializable (`check.passed`: no dependency cycle, no anomaly, no violated consistency
//! condition). Every output names them apart, and says "not checked" for what a run did not check.

use super::machine::MachineInfo;
use super::rate_series::RateSample;
use super::repeat_spread::{compact_with_range, with_range};
use super::version_series::VersionSample;
use super::{AttemptSummary, LatencySummary, Phase, TypeStats, WorkerStats};
use crate::check::CheckReport;
use crate::config::RunConfig;
use crate::protocol::{Abort, ProtocolKind};
use crate::storage::GrowingTableStats;
use crate::storage::versions::VersionStats;
use crate::workload::Workload;
use comfy_table::{Cell, CellAlignment, Table, presets};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

/// Results of one transaction type.
#[derive(Debug, Clone, Serialize)]
pub struct TypeReport {
    /// Type name.
    pub name: String,
    /// Committed transactions.
    pub commits: u64,
    /// Aborted attempts.
    pub aborts: u64,
    /// Commits per second.
    pub throughput_tps: f64,
    /// aborts / (commits + aborts).
    pub abort_ratio: f64,
    /// End-to-end latency.
    pub latency_us: LatencySummary,
    /// Attempts per committed transaction.
    pub attempts: AttemptSummary,
}

/// Everything one run measured, with its configuration and machine.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Protocol name.
    pub protocol: String,
    /// Whether the protocol is designed to guarantee serializability (`nocc` is not): its class,
    /// not a verdict on this run (that is `check.passed`).
    pub protocol_serializable: bool,
    /// Workload name.
    pub workload: String,
    /// Worker threads.
    pub threads: usize,
    /// Which of the `--repeat` rounds this run was (0-based).
    pub round: usize,
    /// Measured seconds.
    pub measured_s: f64,
    /// Committed transactions in the measured period.
    pub commits: u64,
    /// Aborted attempts in the measured period.
    pub aborts: u64,
    /// Commits per second.
    pub throughput_tps: f64,
    /// aborts / (commits + aborts).
    pub abort_ratio: f64,
    /// End-to-end latency over all types.
    pub latency_us: LatencySummary,
    /// Attempts per committed transaction over all types (starvation: `max`).
    pub attempts: AttemptSummary,
    /// Aborts by reason (reasons with zero aborts omitted).
    pub aborts_by_reason: BTreeMap<&'static str, u64>,
    /// Share of worker time per phase (execute, wait, commit, abort), summing to 1.
    pub phase_share: BTreeMap<&'static str, f64>,
    /// Per transaction type.
    pub types: Vec<TypeReport>,
    /// Every parameter of the run.
    pub config: serde_json::Value,
    /// The machine.
    pub machine: MachineInfo,
    /// Serializability check (with `--check`), serialised with its verdict `passed` first.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "check_with_verdict"
    )]
    pub check: Option<CheckReport>,
    /// What the workload warns about after the run (e.g. TPC-C running out of spare order
    /// slots); empty when all went as configured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// With `--log`: what the redo log wrote and synced, and the durable acknowledgement
    /// latency ([`LogReport`](super::log_report::LogReport)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<super::log_report::LogReport>,
    /// Multi-version protocols: live versions and version memory at the end of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<VersionStats>,
    /// The sweep point this run belongs to: each swept parameter (flag name without dashes) and
    /// its value here, in sweep order; empty (and not serialised) for a run outside a sweep.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub point: Vec<(String, String)>,
    /// The execution model: `thread` or `coro` (`--executor`).
    pub executor: &'static str,
    /// Transactions in flight per thread (`--queue`; 1 under the thread executor).
    pub queue: usize,
    /// SGPM scheduling signals counted during measure, by name (`ag`: an operation waited and
    /// the coroutine switched; `rr`, `sf`, `ml`, `nb`: what a retried abort did; `nt`: a
    /// transaction aborted for good). Counted by the coroutine executor only; empty under the
    /// thread executor.
    pub signals: BTreeMap<&'static str, u64>,
    /// Waits during measure that parked a thread, and parks that ended by their timeout instead
    /// of a wake ([`WaitCounts`](super::WaitCounts)); both executors.
    pub waits: super::WaitCounts,
    /// Statistics only this protocol has ([`RunHooks::stats`](crate::protocol::parts::RunHooks::stats):
    /// C-Sched's scheduler core and grants), by name; empty for most protocols.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub protocol_stats: BTreeMap<String, f64>,
    /// Deterministic protocols (scheduled from declared access sets): attempts that
    /// opportunistic execution ran again in their scheduled place because something they read
    /// changed ([`Abort::Reexecute`]); never counted in `aborts` or `abort_ratio`, which for
    /// these protocols count user aborts only. Absent for every other protocol.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reexecutions: Option<u64>,
    /// The protocol's form reruns conflicts by design ([`ProtocolLabel::reruns_conflicts`]):
    /// its `lock_conflict` aborts are not a bug.
    #[serde(skip)]
    pub reruns_conflicts: bool,
    /// Cores that other processes kept busy on average while the workers ran (CPU time from
    /// `/proc/stat` less this process's own; [`cpu_load`](super::cpu_load)); absent where
    /// `/proc` cannot be read. Above a quarter of a core the run carries a warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_processes_cores: Option<f64>,
    /// Open loop (`--rate`): the offered load, transactions arriving per second across all
    /// workers; `throughput_tps` is the achieved load. Absent in a closed-loop run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_tps: Option<f64>,
    /// Open loop: the arrival process (`poisson` or `uniform`); absent in a closed-loop run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival: Option<&'static str>,
    /// The end-to-end latency distribution over all types: `[quantile, us]` pairs from the
    /// minimum (quantile 0) through 99.999% at eight points per decade of the tail, then the
    /// maximum (quantile 1); see [`latency_distribution`](super::latency_distribution). Empty
    /// (and not serialised) when nothing committed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency_cdf_us: Vec<[f64; 2]>,
    /// The tables that grow, at the end of the run: the memory each holds and, for a table that
    /// retires its deleted slots (TPC-C's NEW-ORDER), the chunks retired and reused (`storage`,
    /// "Slots freed by deletes"). Empty (and not serialised) when no table grows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub growing_tables: Vec<GrowingTableStats>,
    /// Multi-version protocols: live versions and version memory over the run, one sample every
    /// `--sample-ms` from just before the workers start (warm-up included;
    /// [`version_series`](super::version_series)). Empty (and not serialised) for single-version
    /// protocols.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub version_samples: Vec<VersionSample>,
    /// Throughput and abort ratio per `--sample-ms` interval, from just before the workers
    /// start (warm-up included, where they read zero: only measured attempts count, so the
    /// intervals add up to `commits` and `aborts`; [`rate_series`](super::rate_series)). Empty
    /// (and not serialised) for interactive runs, whose clients count in another process.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rate_samples: Vec<RateSample>,
    /// With `--repeat`, the min-max of the runs a [`medians`] report stands for (shown beside
    /// the medians in the table); `None` for a single run. Not serialised: each run has its row.
    #[serde(skip)]
    pub spread: Option<super::repeat_spread::RepeatSpread>,
}

/// Serialises `check` as the [`CheckReport`]'s fields preceded by `passed`, the verdict
/// ([`CheckReport::is_serializable`]), so that JSON readers need not recompute it.
fn check_with_verdict<S: Serializer>(check: &Option<CheckReport>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct WithVerdict<'a> {
        passed: bool,
        #[serde(flatten)]
        report: &'a CheckReport,
    }
    match check {
        Some(c) => WithVerdict {
            passed: c.is_serializable(),
            report: c,
        }
        .serialize(s),
        None => s.serialize_none(),
    }
}

/// The configuration as recorded in reports.
#[derive(Serialize)]
struct ConfigRecord<'a> {
    workload: &'a str,
    preset: &'a Option<String>,
    #[serde(flatten)]
    params: &'a crate::workload::WorkloadConfig,
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
    options: &'a crate::protocol::ProtocolOptions,
    /// `--rate`: offered transactions per second (open loop); absent in a closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_tps: Option<f64>,
    /// `--arrival`, with `--rate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    arrival: Option<&'static str>,
}

fn ratio(aborts: u64, commits: u64) -> f64 {
    if aborts + commits == 0 {
        0.0
    } else {
        aborts as f64 / (aborts + commits) as f64
    }
}

/// What reports call a protocol: its name and whether it is designed to be serializable. Every
/// [`ProtocolKind`] has one; a protocol defined outside txbench (`runner::run_custom`) names
/// itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolLabel {
    /// The name in every report (`protocol`).
    pub name: String,
    /// Whether the protocol is designed to guarantee serializability (`protocol_serializable`):
    /// a serializable protocol's failed check makes `txbench run` exit 1.
    pub serializable: bool,
    /// Whether the protocol is scheduled from declared access sets (a deterministic protocol):
    /// its report counts re-executions apart from aborts.
    pub declared_sets: bool,
    /// A deterministic protocol in a form that reruns a conflicting transaction in a later batch
    /// instead of waiting (Calvin's `--calvin-no-wait`, SGPM's Calvin_NW): its `lock_conflict`
    /// aborts are its design, not a scheduling bug.
    pub reruns_conflicts: bool,
}

impl ProtocolLabel {
    /// A label for a protocol that is not a [`ProtocolKind`].
    pub fn new(name: impl Into<String>, serializable: bool) -> Self {
        ProtocolLabel {
            name: name.into(),
            serializable,
            declared_sets: false,
            reruns_conflicts: false,
        }
    }
}

impl From<ProtocolKind> for ProtocolLabel {
    fn from(kind: ProtocolKind) -> Self {
        ProtocolLabel {
            declared_sets: kind.needs_declared_set(),
            ..ProtocolLabel::new(kind.name(), kind.is_serializable())
        }
    }
}

impl ProtocolLabel {
    /// The label of `kind` run with `options` (which may select a rerunning form).
    pub fn for_run(kind: ProtocolKind, options: &crate::protocol::ProtocolOptions) -> Self {
        ProtocolLabel {
            reruns_conflicts: kind == ProtocolKind::Calvin && options.calvin.no_wait,
            ..ProtocolLabel::from(kind)
        }
    }
}

impl RunReport {
    /// Summarises what the workers of one run measured (`workers`, over a measured period of
    /// `measured`).
    pub fn build<W: Workload>(
        kind: ProtocolKind,
        cfg: &RunConfig,
        workload: &W,
        workers: &[WorkerStats],
        measured: Duration,
        check: Option<CheckReport>,
        machine: &MachineInfo,
    ) -> RunReport {
        let label = ProtocolLabel::for_run(kind, &cfg.options);
        Self::build_named(&label, cfg, workload, workers, measured, check, machine)
    }

    /// [`RunReport::build`] for any protocol, named by `label`.
    pub fn build_named<W: Workload>(
        label: &ProtocolLabel,
        cfg: &RunConfig,
        workload: &W,
        workers: &[WorkerStats],
        measured: Duration,
        check: Option<CheckReport>,
        machine: &MachineInfo,
    ) -> RunReport {
        let names = workload.txn_types();
        let mut merged = WorkerStats::new(names.len());
        for w in workers {
            merged.merge(w);
        }
        let secs = measured.as_secs_f64().max(1e-9);
        let mut total = TypeStats::default();
        let types = merged
            .types
            .iter()
            .zip(names)
            .map(|(t, name)| {
                total.merge(t);
                TypeReport {
                    name: name.to_string(),
                    commits: t.commits,
                    aborts: t.total_aborts(),
                    throughput_tps: t.commits as f64 / secs,
                    abort_ratio: ratio(t.total_aborts(), t.commits),
                    latency_us: LatencySummary::from_histogram(&t.latency),
                    attempts: AttemptSummary::from_histogram(&t.attempts),
                }
            })
            .collect();
        let aborts_by_reason = Abort::ALL
            .iter()
            .filter(|a| total.aborts[a.index()] > 0)
            .map(|a| (a.name(), total.aborts[a.index()]))
            .collect();
        let phase_total: u64 = merged.phase_ns.iter().sum();
        let phase_share = Phase::ALL
            .iter()
            .map(|p| {
                let share = if phase_total == 0 {
                    0.0
                } else {
                    merged.phase_ns[*p as usize] as f64 / phase_total as f64
                };
                (p.name(), share)
            })
            .collect();
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
            options: &cfg.options,
            rate_tps: cfg.open_loop.map(|o| o.rate_tps),
            arrival: cfg.open_loop.map(|o| o.arrival.name()),
        };
        let aborts = total.total_aborts();
        RunReport {
            protocol: label.name.clone(),
            protocol_serializable: label.serializable,
            workload: workload.name().to_string(),
            threads: cfg.exec.threads,
            round: 0,
            measured_s: secs,
            commits: total.commits,
            aborts,
            throughput_tps: total.commits as f64 / secs,
            abort_ratio: ratio(aborts, total.commits),
            latency_us: LatencySummary::from_histogram(&total.latency),
            attempts: AttemptSummary::from_histogram(&total.attempts),
            aborts_by_reason,
            phase_share,
            types,
            config: serde_json::to_value(config).expect("config serialises"),
            machine: machine.clone(),
            check,
            warnings: Vec::new(),
            versions: None,
            log: None,
            point: Vec::new(),
            executor: cfg.executor.name(),
            queue: cfg.executor.queue(),
            signals: match cfg.executor {
                crate::config::Executor::Thread => BTreeMap::new(),
                crate::config::Executor::Coro { .. } => crate::protocol::signal::Signal::ALL
                    .iter()
                    .map(|s| (s.name(), merged.signals[s.index()]))
                    .collect(),
            },
            waits: merged.waits,
            protocol_stats: BTreeMap::new(),
            reexecutions: label.declared_sets.then_some(total.reexecutions),
            reruns_conflicts: label.reruns_conflicts,
            other_processes_cores: None,
            offered_tps: cfg.open_loop.map(|o| o.rate_tps),
            arrival: cfg.open_loop.map(|o| o.arrival.name()),
            latency_cdf_us: super::latency_distribution(&total.latency),
            growing_tables: Vec::new(),
            version_samples: Vec::new(),
            rate_samples: Vec::new(),
            spread: None,
        }
    }

    /// The bug a deterministic protocol's run shows when it aborted for a concurrency-control
    /// reason: such a protocol schedules every transaction from its declared access set so that
    /// nothing conflicting runs concurrently, so its only aborts are the workload's own (user
    /// aborts). `None` for a clean run and for every other protocol.
    pub fn deterministic_abort_bug(&self) -> Option<String> {
        self.reexecutions?;
        let cc: Vec<String> = self
            .aborts_by_reason
            .iter()
            .filter(|(name, _)| **name != Abort::User.name())
            .filter(|(name, _)| !(self.reruns_conflicts && **name == Abort::LockConflict.name()))
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        (!cc.is_empty()).then(|| {
            format!(
                "BUG: deterministic protocol {} aborted attempts for concurrency-control reasons \
                 ({}); its abort ratio must count user aborts only",
                self.protocol,
                cc.join(", ")
            )
        })
    }

    /// The report as a JSON object: [`Self::to_json_line`] parsed.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::from_str(&self.to_json_line()).expect("a report line is JSON")
    }

    /// One JSON object on one line, fields in the struct's order, with the txbench build that
    /// measured it last (`txbench`: `version`, `commit`, as a sweep's rows carry); the latency
    /// percentiles of a run that committed nothing are `null` (an empty histogram has none).
    pub fn to_json_line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("report serialises");
        if self.commits == 0 {
            // Every summary of an empty histogram (the run's and its types') is all zeros.
            let zeros = serde_json::to_string(&LatencySummary::default()).expect("serialises");
            let nulls = zeros.replace("0.0", "null");
            line = line.replace(
                &format!("\"latency_us\":{zeros}"),
                &format!("\"latency_us\":{nulls}"),
            );
        }
        let build = serde_json::to_string(&crate::experiment::results::BuildInfo::current())
            .expect("build info serialises");
        line.pop();
        line.push_str(&format!(",\"txbench\":{build}}}"));
        line
    }

    /// A latency percentile for a table: `-` when the run committed nothing.
    pub fn latency_cell(&self, us: f64) -> String {
        if self.commits == 0 {
            "-".to_string()
        } else {
            format!("{us:.1}")
        }
    }
}

/// CSV columns, in order (stable).
pub const CSV_COLUMNS: &[&str] = &[
    "protocol",
    "protocol_serializable",
    "workload",
    "threads",
    "round",
    "commits",
    "aborts",
    "throughput_tps",
    "abort_ratio",
    "p50_us",
    "p90_us",
    "p99_us",
    "p999_us",
    "max_us",
    "check_transactions",
    "check_cycles",
    "check_anomalies",
    "check_conditions_checked",
    "check_consistency_violations",
    "check_passed",
    "config",
    "point",
    "executor",
    "queue",
    "reexecutions",
    "offered_tps",
];

/// Writes reports as CSV with a header row. The `check_*` cells are empty for a run without
/// `--check`, and `check_conditions_checked` / `check_consistency_violations` also for a workload
/// without consistency conditions (only TPC-C has them); `check_passed` is the verdict.
pub fn write_csv(out: impl Write, reports: &[RunReport]) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    // After the fixed columns, one per parameter of the run (the `config` object's leaves, as
    // dotted paths: `theta`, `options.mocc.threshold`), so that a spreadsheet filters by any.
    let params: Vec<BTreeMap<String, String>> =
        reports.iter().map(|r| config_leaves(&r.config)).collect();
    let mut names: Vec<&String> = params.iter().flat_map(|p| p.keys()).collect();
    names.sort();
    names.dedup();
    let header = CSV_COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(names.iter().map(|n| format!("config.{n}")));
    w.write_record(header)?;
    for (r, own) in reports.iter().zip(&params) {
        let l = &r.latency_us;
        let check = |f: fn(&CheckReport) -> Option<String>| {
            r.check.as_ref().and_then(f).unwrap_or_default()
        };
        // Nothing committed: no latency was measured, and an empty cell says so (not 0.00).
        let latency = |us: f64| {
            if r.commits == 0 {
                String::new()
            } else {
                format!("{us:.2}")
            }
        };
        w.write_record(
            [
                r.protocol.clone(),
                r.protocol_serializable.to_string(),
                r.workload.clone(),
                r.threads.to_string(),
                r.round.to_string(),
                r.commits.to_string(),
                r.aborts.to_string(),
                format!("{:.1}", r.throughput_tps),
                format!("{:.6}", r.abort_ratio),
                latency(l.p50),
                latency(l.p90),
                latency(l.p99),
                latency(l.p999),
                latency(l.max),
                check(|c| Some(c.transactions.to_string())),
                check(|c| Some(c.cycles.to_string())),
                check(|c| Some(c.anomalies.to_string())),
                check(|c| c.conditions_checked.map(|n| n.to_string())),
                check(|c| c.consistency_violations.map(|n| n.to_string())),
                check(|c| Some(c.is_serializable().to_string())),
                r.config.to_string(),
                point_label(&r.point),
                r.executor.to_string(),
                r.queue.to_string(),
                r.reexecutions.map(|n| n.to_string()).unwrap_or_default(),
                r.offered_tps.map(|t| format!("{t:.1}")).unwrap_or_default(),
            ]
            .into_iter()
            .chain(
                names
                    .iter()
                    .map(|n| own.get(*n).cloned().unwrap_or_default()),
            )
            .collect::<Vec<String>>(),
        )?;
    }
    w.flush()?;
    Ok(())
}

/// The scalar leaves of a run's `config` object by dotted path (`options.mocc.threshold`), each
/// as text (strings without quotes); `null` leaves are left out.
fn config_leaves(config: &serde_json::Value) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&path, v, out);
                }
            }
            serde_json::Value::Null => {}
            serde_json::Value::String(s) => {
                out.insert(prefix.to_string(), s.clone());
            }
            other => {
                out.insert(prefix.to_string(), other.to_string());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", config, &mut out);
    out
}

/// A sweep point as `flag=value` pairs separated by spaces (empty outside a sweep).
pub fn point_label(point: &[(String, String)]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One report per protocol and sweep point (first-seen order) summarising repeated runs: the run
/// with the median throughput, with every latency percentile replaced by its median across the
/// runs.
pub fn medians(reports: &[RunReport]) -> Vec<RunReport> {
    type Key<'a> = (&'a [(String, String)], &'a str);
    let mut keys: Vec<Key<'_>> = Vec::new();
    for r in reports {
        let key = (r.point.as_slice(), r.protocol.as_str());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .map(|(point, name)| {
            let mut runs: Vec<&RunReport> = reports
                .iter()
                .filter(|r| r.protocol == name && r.point == point)
                .collect();
            runs.sort_by(|a, b| a.throughput_tps.total_cmp(&b.throughput_tps));
            let mut out = runs[runs.len() / 2].clone();
            let median_of = |f: fn(&LatencySummary) -> f64| {
                let mut v: Vec<f64> = runs.iter().map(|r| f(&r.latency_us)).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            out.latency_us = LatencySummary {
                p50: median_of(|l| l.p50),
                p90: median_of(|l| l.p90),
                p99: median_of(|l| l.p99),
                p999: median_of(|l| l.p999),
                max: median_of(|l| l.max),
            };
            out.spread = super::repeat_spread::RepeatSpread::of(runs.iter().copied());
            out
        })
        .collect()
}

/// Per transaction type, for workloads with more than one (TPC-C): a row per protocol and type
/// that committed or aborted anything, with throughput, abort ratio, latency percentiles and
/// the most attempts a commit needed; `None` for single-type workloads. With repeated runs,
/// pass [`medians`] (the types then come from the run of median throughput).
pub fn render_type_table(reports: &[RunReport]) -> Option<String> {
    if reports.iter().all(|r| r.types.len() < 2) {
        return None;
    }
    // A comma-list sweep's rows name their point, as the main table's do.
    let swept = reports.iter().any(|r| !r.point.is_empty());
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    let mut header = Vec::new();
    if swept {
        header.push("point");
    }
    header.extend([
        "protocol",
        "type",
        "txn/s",
        "abort %",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "max attempts",
    ]);
    t.set_header(header);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for r in reports {
        for ty in r.types.iter().filter(|ty| ty.commits + ty.aborts > 0) {
            let mut row = Vec::new();
            if swept {
                row.push(Cell::new(point_label(&r.point)));
            }
            row.extend([
                Cell::new(&r.protocol),
                Cell::new(&ty.name),
                right(format!("{:.0}", ty.throughput_tps)),
                right(abort_percent(ty.abort_ratio)),
                right(format!("{:.1}", ty.latency_us.p50)),
                right(format!("{:.1}", ty.latency_us.p99)),
                right(format!("{:.1}", ty.latency_us.p999)),
                right(ty.attempts.max.to_string()),
            ]);
            t.add_row(row);
        }
    }
    Some(t.to_string())
}

/// A comparison table; throughput and p99.9 also as ratios to the `nocc` row when present; the
/// history check and the workload's consistency check, or `not checked`. Every column, as
/// [`render_table_with`] with `wide`. With repeated runs, pass [`medians`] of the reports.
pub fn render_table(reports: &[RunReport]) -> String {
    render_table_with(reports, true)
}

/// The comparison table. Without `wide`, the columns that carry no information in this run are
/// left out, so that the table fits a 100-column terminal: the ratios to `nocc` when no NoCC
/// run shares a point with another protocol (and the p99.9 ratio always), the maximum
/// latency, the check columns of what was not checked (the line above the table says so),
/// the top abort reason when nothing aborted; and a protocol that is not serializable is
/// marked `*` (explained below the table) rather than named so.
pub fn render_table_with(reports: &[RunReport], wide: bool) -> String {
    let axes: Vec<&str> = reports
        .iter()
        .flat_map(|r| r.point.iter().map(|(k, _)| k.as_str()))
        .fold(Vec::new(), |mut v, k| {
            if !v.contains(&k) {
                v.push(k);
            }
            v
        });
    let ceiling_of = |r: &RunReport| {
        reports
            .iter()
            .find(|c| c.protocol == "nocc" && c.point == r.point)
    };
    let compared = reports
        .iter()
        .any(|r| r.protocol != "nocc" && ceiling_of(r).is_some());
    let show_vs = wide || compared;
    let show_p999_vs = wide;
    let show_max = wide;
    let show_top = wide || reports.iter().any(|r| r.aborts > 0);
    let checked = reports.iter().any(|r| r.check.is_some());
    // Compact: one `check` column for both checks.
    let show_history = wide;
    let show_consistency = wide;
    let show_check = !wide && checked;
    let show_p50 = wide;
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    let mut header: Vec<&str> = axes.clone();
    // Open-loop runs show what was offered next to what was achieved.
    // Compact: only when it differs between rows (the line above the table names one rate).
    let open_loop = reports.iter().any(|r| r.offered_tps.is_some())
        && (wide
            || reports
                .iter()
                .any(|r| r.offered_tps != reports[0].offered_tps));
    header.push("protocol");
    if open_loop {
        header.push("offered txn/s");
    }
    header.push("txn/s");
    if show_vs {
        header.push("vs nocc");
    }
    header.push("abort %");
    if show_p50 {
        header.push("p50 us");
    }
    header.extend(["p99 us", "p99.9 us"]);
    if show_p999_vs {
        header.push("p99.9 vs nocc");
    }
    if show_max {
        header.push("max us");
    }
    if show_top {
        header.push("top abort reason");
    }
    if show_history {
        header.push("history check");
    }
    if show_consistency {
        header.push("consistency check");
    }
    if show_check {
        header.push("check");
    }
    // Deterministic protocols' re-executions (opportunistic execution), when the table has one
    // (compact: when one re-executed).
    let reexecutions = reports
        .iter()
        .any(|r| r.reexecutions.is_some_and(|n| wide || n > 0));
    if reexecutions {
        header.push("re-executions");
    }
    t.set_header(header);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for r in reports {
        // The ratios compare with the `nocc` run of the same sweep point.
        let ceiling = ceiling_of(r);
        let name = match (r.protocol_serializable, wide) {
            (true, _) => r.protocol.clone(),
            (false, true) => format!("{} (not serializable)", r.protocol),
            (false, false) => format!("{}*", r.protocol),
        };
        let vs = |a: f64, b: Option<f64>| match b {
            Some(b) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".to_string(),
        };
        let top = r
            .aborts_by_reason
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(k, _)| k.to_string())
            .unwrap_or_else(|| "-".to_string());
        let mut row: Vec<Cell> = axes
            .iter()
            .map(|a| {
                let v = r
                    .point
                    .iter()
                    .find(|(k, _)| k == a)
                    .map(|(_, v)| v.as_str());
                right(v.unwrap_or("-").to_string())
            })
            .collect();
        row.push(Cell::new(name));
        if open_loop {
            row.push(right(
                r.offered_tps.map_or("-".into(), |t| format!("{t:.0}")),
            ));
        }
        row.push(right(compact_with_range(
            r.throughput_tps,
            r.spread.map(|s| s.throughput_tps),
        )));
        if show_vs {
            row.push(right(vs(
                r.throughput_tps,
                ceiling.map(|c| c.throughput_tps),
            )));
        }
        row.push(right(abort_percent(r.abort_ratio)));
        if show_p50 {
            row.push(right(r.latency_cell(r.latency_us.p50)));
        }
        row.extend([
            right(r.latency_cell(r.latency_us.p99)),
            right(with_range(
                &r.latency_cell(r.latency_us.p999),
                r.spread.and_then(|s| s.p999_us),
            )),
        ]);
        if show_p999_vs {
            let p999 = ceiling.filter(|c| c.commits > 0).map(|c| c.latency_us.p999);
            let own = if r.commits > 0 {
                vs(r.latency_us.p999, p999)
            } else {
                "-".into()
            };
            row.push(right(own));
        }
        if show_max {
            row.push(right(r.latency_cell(r.latency_us.max)));
        }
        if show_top {
            row.push(Cell::new(top));
        }
        if show_history {
            row.push(Cell::new(history_cell(r.check.as_ref())));
        }
        if show_consistency {
            row.push(Cell::new(consistency_cell(r.check.as_ref())));
        }
        if show_check {
            row.push(Cell::new(check_cell(r.check.as_ref())));
        }
        if reexecutions {
            let n = r
                .reexecutions
                .map_or_else(|| "-".to_string(), |n| n.to_string());
            row.push(right(n));
        }
        t.add_row(row);
    }
    let mut text = t.to_string();
    if !wide && reports.iter().any(|r| !r.protocol_serializable) {
        text.push_str("\n* not serializable");
    }
    text
}

/// The line under the table: per sweep point, the serializable protocol with the highest
/// throughput and the one with the lowest p99.9 latency among those that committed; `None`
/// when no point has two such protocols to compare.
pub fn leaders(reports: &[RunReport]) -> Option<String> {
    let mut points: Vec<&[(String, String)]> = Vec::new();
    for r in reports {
        if !points.contains(&r.point.as_slice()) {
            points.push(&r.point);
        }
    }
    let lines: Vec<String> = points
        .iter()
        .filter_map(|p| {
            let runs: Vec<&RunReport> = reports
                .iter()
                .filter(|r| r.point.as_slice() == *p && r.protocol_serializable && r.commits > 0)
                .collect();
            if runs.len() < 2 {
                return None;
            }
            let fastest = runs
                .iter()
                .max_by(|a, b| a.throughput_tps.total_cmp(&b.throughput_tps))?;
            let tail = runs
                .iter()
                .min_by(|a, b| a.latency_us.p999.total_cmp(&b.latency_us.p999))?;
            let at = if p.is_empty() {
                String::new()
            } else {
                format!("{}: ", point_label(p))
            };
            Some(format!(
                "{at}throughput leader {} ({:.0} txn/s); p99.9 leader {} ({:.1} us)",
                fastest.protocol, fastest.throughput_tps, tail.protocol, tail.latency_us.p999
            ))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The protocols' own statistics (`protocol_stats`) as lines `protocol: name value, ...`, the
/// values rounded to what they can tell (three significant digits, whole numbers as such);
/// `None` when no run has any.
pub fn render_protocol_stats(reports: &[RunReport]) -> Option<String> {
    let lines: Vec<String> = reports
        .iter()
        .filter(|r| !r.protocol_stats.is_empty())
        .map(|r| {
            let at = if r.point.is_empty() {
                String::new()
            } else {
                format!(" ({})", point_label(&r.point))
            };
            let stats: Vec<String> = r
                .protocol_stats
                .iter()
                .map(|(k, v)| format!("{k} {}", short_number(*v)))
                .collect();
            wrap_words(
                &format!("{}{at}: {}", r.protocol, stats.join(", ")),
                HEADER_WIDTH,
            )
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// `v` with three significant digits (`1.50`, `0.0123`, `152`), a whole number without decimals.
pub fn short_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// Version memory of the multi-version protocols' runs (`None` when no run kept versions): live
/// versions at the end, bytes taken from the allocator, and the cap.
pub fn render_version_table(reports: &[RunReport]) -> Option<String> {
    if reports.iter().all(|r| r.versions.is_none()) {
        return None;
    }
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "protocol",
        "live versions",
        "versions allocated",
        "version MiB",
        "cap MiB",
    ]);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    let mib = |b: usize| format!("{:.1}", b as f64 / (1u64 << 20) as f64);
    for r in reports {
        if let Some(v) = &r.versions {
            t.add_row(vec![
                Cell::new(&r.protocol),
                right(v.live_versions.to_string()),
                right(v.allocated_versions.to_string()),
                right(mib(v.version_bytes)),
                right(mib(v.cap_bytes)),
            ]);
        }
    }
    Some(t.to_string())
}

/// The table's history check cell: `not checked` without `--check`; `ok (N txns)` when the
/// history has neither a cycle nor an anomaly (`ok, truncated` when `--check-limit` stopped
/// recording early, `not judged` when no transaction was recorded); the counts otherwise.
fn history_cell(check: Option<&CheckReport>) -> String {
    match check {
        None => NOT_CHECKED.to_string(),
        Some(c) if c.cycles == 0 && c.anomalies == 0 && c.transactions == 0 => {
            if c.workers_truncated > 0 {
                "not judged: --check-limit left 0 txns".to_string()
            } else {
                "not judged: 0 txns".to_string()
            }
        }
        Some(c) if c.cycles == 0 && c.anomalies == 0 && c.workers_truncated > 0 => {
            format!("ok, truncated ({} txns)", c.transactions)
        }
        Some(c) if c.cycles == 0 && c.anomalies == 0 => format!("ok ({} txns)", c.transactions),
        Some(c) => format!("FAILED: {} cycles, {} anomalies", c.cycles, c.anomalies),
    }
}

/// The compact table's one check cell: `ok: N txns` (`, M conditions` when the workload has
/// consistency conditions), `ok, truncated: ...` when `--check-limit` cut the history, what
/// failed otherwise, `not checked` for a run without `--check`.
fn check_cell(check: Option<&CheckReport>) -> String {
    let Some(c) = check else {
        return NOT_CHECKED.to_string();
    };
    let history_ok = c.cycles == 0 && c.anomalies == 0;
    let consistency_ok = c.consistency_violations.unwrap_or(0) == 0;
    if history_ok && consistency_ok && c.transactions > 0 {
        let conditions = c
            .conditions_checked
            .map(|n| format!(", {n} conditions"))
            .unwrap_or_default();
        let truncated = if c.workers_truncated > 0 {
            ", truncated"
        } else {
            ""
        };
        return format!("ok{truncated}: {} txns{conditions}", c.transactions);
    }
    let mut parts = Vec::new();
    if !history_ok || c.transactions == 0 {
        parts.push(history_cell(Some(c)));
    }
    if !consistency_ok {
        parts.push(consistency_cell(Some(c)));
    }
    parts.join("; ")
}

/// The table's consistency check cell: `not checked` without `--check` and for a workload that
/// defines no consistency conditions (never shown as passed); otherwise `ok (N conditions)` or
/// the violations.
fn consistency_cell(check: Option<&CheckReport>) -> String {
    match check.map(|c| (c.conditions_checked, c.consistency_violations)) {
        Some((Some(n), Some(0))) => format!("ok ({n} conditions)"),
        Some((Some(n), Some(v))) => format!("FAILED: {v} violations of {n} conditions"),
        _ => NOT_CHECKED.to_string(),
    }
}

/// An abort ratio as a percentage with two decimals, or, below 0.01% but above zero, with two
/// significant digits: a rare abort must not read as `0.00` next to a named top abort reason.
pub fn abort_percent(ratio: f64) -> String {
    let pct = ratio * 100.0;
    if pct > 0.0 && pct < 0.01 {
        let decimals = (1.0 - pct.log10().floor()) as usize;
        format!("{pct:.decimals$}")
    } else {
        format!("{pct:.2}")
    }
}

/// The line above a table: the workload and its parameters, threads, duration and warm-up.
pub fn describe_run(cfg: &RunConfig) -> String {
    let params = match serde_json::to_value(&cfg.workload) {
        Ok(serde_json::Value::Object(m)) => m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k} {s}"),
                v => format!("{k} {v}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    let preset = cfg
        .preset
        .as_ref()
        .map(|p| format!(" (preset {p})"))
        .unwrap_or_default();
    let open_loop = cfg
        .open_loop
        .map(|o| {
            format!(
                "\nopen loop: {} txn/s offered ({} arrivals, latency from arrival)",
                o.rate_tps,
                o.arrival.name()
            )
        })
        .unwrap_or_default();
    let threads = match cfg.executor {
        crate::config::Executor::Thread => format!(
            "{} thread{} (thread executor)",
            cfg.exec.threads,
            if cfg.exec.threads == 1 { "" } else { "s" }
        ),
        crate::config::Executor::Coro { queue } => format!(
            "{} thread{} x {queue} coroutines (coro executor, queue {queue})",
            cfg.exec.threads,
            if cfg.exec.threads == 1 { "" } else { "s" }
        ),
    };
    let checked = if cfg.check {
        ", checked"
    } else {
        ", history not checked (--check)"
    };
    let workload = format!(
        "{}{preset}: {params};",
        match cfg.workload {
            crate::workload::WorkloadConfig::Ycsb(_) => "ycsb",
            crate::workload::WorkloadConfig::LongScan(_) => "long-scan",
            crate::workload::WorkloadConfig::Tpcc(_) => "tpcc",
            crate::workload::WorkloadConfig::WriteSkew(_) => "write-skew",
            crate::workload::WorkloadConfig::Shifting(_) => "shifting",
        },
    );
    let run = format!(
        "{threads}, {} s measured after {} s warm-up{checked}{open_loop}",
        cfg.exec.duration.as_secs_f64(),
        cfg.exec.warmup.as_secs_f64(),
    );
    // Each line of the run's part wraps on its own (the open loop's is one).
    let run: Vec<String> = run.lines().map(|l| wrap_words(l, HEADER_WIDTH)).collect();
    format!(
        "{}\n{}",
        wrap_words(&workload, HEADER_WIDTH),
        run.join("\n")
    )
}

/// The widest line `describe_run` and `render_protocol_stats` write: the default table fits a
/// 100-column terminal, and so does the text around it.
const HEADER_WIDTH: usize = 100;

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole),
/// continuation lines indented by two spaces.
fn wrap_words(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut line_len = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = word.chars().count();
        if line_len > 0 && line_len + 1 + len > width {
            out.push_str("\n  ");
            line_len = 2;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += len;
    }
    out
}

/// What the table says for a check a run did not make.
const NOT_CHECKED: &str = "not checked";

/// The report of a YCSB run of `txbench run FLAGS` (the flags choose the protocol and the
/// workload's parameters) whose one worker committed once and then aborted once for each of
/// `aborts`, measured over `measured`: what the report's and its neighbours' tests read.
#[cfg(test)]
pub(super) fn one_worker_report(flags: &[&str], aborts: &[Abort], measured: Duration) -> RunReport {
    use crate::config::memory::AvailableMemory;
    use crate::config::{Cli, Command};
    use clap::Parser;
    let line = ["txbench", "run"].iter().chain(flags);
    let cli = Cli::try_parse_from(line).expect("clap accepts the flags");
    let Command::Run(args) = cli.command else {
        unreachable!("a run command line")
    };
    let cfg = args
        .validate_with(AvailableMemory::given(1 << 40))
        .expect("valid");
    let crate::workload::WorkloadConfig::Ycsb(y) = &cfg.workload else {
        unreachable!("ycsb by default")
    };
    let workload = crate::workload::ycsb::Ycsb::new(y.clone());
    let mut w = WorkerStats::new(1);
    w.commit(0, 1000, 1);
    for &why in aborts {
        w.abort(0, why);
    }
    RunReport::build(
        cfg.protocols[0],
        &cfg,
        &workload,
        &[w],
        measured,
        None,
        &MachineInfo::detect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_fit_the_width_and_keep_every_word() {
        let text = "ycsb: index array, key_dist zipf, long_ops 16, long_share 0.0, long_txn_delay_us 0, \
                    ops 16, payload 100, read_ratio 0.5, records 1048576, rmw false, theta 0.99;";
        let wrapped = wrap_words(text, 40);
        assert!(
            wrapped.lines().all(|l| l.chars().count() <= 40),
            "{wrapped}"
        );
        assert!(wrapped.lines().count() > 1);
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&wrapped), words(text));
        assert_eq!(wrap_words("short line", 40), "short line");
        // A word longer than the width stays whole on its own line.
        assert_eq!(wrap_words("a abcdefghij b", 5), "a\n  abcdefghij\n  b");
    }

    fn checked(cycles: u64, conditions: Option<(u32, u64)>) -> CheckReport {
        CheckReport {
            transactions: 10,
            cycles,
            conditions_checked: conditions.map(|c| c.0),
            consistency_violations: conditions.map(|c| c.1),
            ..CheckReport::default()
        }
    }

    #[test]
    fn rare_aborts_do_not_round_to_zero() {
        assert_eq!(abort_percent(0.0), "0.00");
        assert_eq!(abort_percent(0.1234), "12.34");
        assert_eq!(abort_percent(0.000_031), "0.0031");
        assert_eq!(abort_percent(0.000_000_5), "0.000050");
    }

    #[test]
    fn cells_say_not_checked_for_what_was_not_checked() {
        assert_eq!(history_cell(None), "not checked");
        assert_eq!(consistency_cell(None), "not checked");
        let ycsb = checked(0, None);
        assert_eq!(history_cell(Some(&ycsb)), "ok (10 txns)");
        assert_eq!(consistency_cell(Some(&ycsb)), "not checked");
        let tpcc = checked(0, Some((7, 0)));
        assert_eq!(consistency_cell(Some(&tpcc)), "ok (7 conditions)");
        let broken = checked(2, Some((7, 3)));
        assert_eq!(history_cell(Some(&broken)), "FAILED: 2 cycles, 0 anomalies");
        // A history cut short by --check-limit is never a bare `ok`.
        let cut = CheckReport {
            workers_truncated: 1,
            ..checked(0, None)
        };
        assert_eq!(history_cell(Some(&cut)), "ok, truncated (10 txns)");
        let empty = CheckReport {
            transactions: 0,
            ..cut
        };
        assert_eq!(
            history_cell(Some(&empty)),
            "not judged: --check-limit left 0 txns"
        );
        assert_eq!(
            consistency_cell(Some(&broken)),
            "FAILED: 3 violations of 7 conditions"
        );
    }

    /// A report of `protocol` over YCSB whose one worker aborted once for each of `aborts` and
    /// re-executed twice.
    fn report_with(protocol: &str, aborts: &[Abort]) -> RunReport {
        let mut reasons = aborts.to_vec();
        reasons.extend([Abort::Reexecute; 2]);
        one_worker_report(
            &["-p", protocol, "--records", "1000"],
            &reasons,
            Duration::from_secs(1),
        )
    }

    #[test]
    fn deterministic_protocols_report_reexecutions_apart_and_user_aborts_only() {
        let ok = report_with("decentsched", &[Abort::User]);
        assert_eq!(ok.reexecutions, Some(2));
        assert_eq!(ok.aborts, 1, "re-executions are not aborts");
        assert_eq!(ok.abort_ratio, 0.5);
        assert_eq!(ok.deterministic_abort_bug(), None);
        let json: serde_json::Value = serde_json::from_str(&ok.to_json_line()).expect("json");
        assert_eq!(json["reexecutions"], 2);
        let table = render_table(std::slice::from_ref(&ok));
        assert!(table.contains("re-executions"), "{table}");

        let bug = report_with("ord_lock", &[Abort::User, Abort::Wounded]);
        let said = bug.deterministic_abort_bug().expect("a CC abort is a bug");
        assert!(
            said.contains("ord_lock") && said.contains("wounded 1"),
            "{said}"
        );

        // Calvin's no-wait form reruns a conflicting transaction by design; the waiting form
        // never should.
        let no_wait = one_worker_report(
            &["-p", "calvin", "--calvin-no-wait", "--records", "1000"],
            &[Abort::LockConflict],
            Duration::from_secs(1),
        );
        assert_eq!(no_wait.deterministic_abort_bug(), None);
        let waiting = report_with("calvin", &[Abort::LockConflict]);
        assert!(waiting.deterministic_abort_bug().is_some());

        // Other protocols abort for concurrency control by design, and have no such column.
        let occ = report_with("silo", &[Abort::ReadValidation]);
        assert_eq!(occ.reexecutions, None);
        assert_eq!(occ.deterministic_abort_bug(), None);
        let json: serde_json::Value = serde_json::from_str(&occ.to_json_line()).expect("json");
        assert!(json.get("reexecutions").is_none());
        assert!(!render_table(&[occ]).contains("re-executions"));
    }

    #[test]
    fn the_check_serialises_with_its_verdict() {
        #[derive(Serialize)]
        struct Holder {
            #[serde(serialize_with = "check_with_verdict")]
            check: Option<CheckReport>,
        }
        let json = |c: CheckReport| {
            serde_json::to_value(Holder { check: Some(c) }).expect("serialises")["check"].clone()
        };
        let ok = json(checked(0, Some((7, 0))));
        assert_eq!(ok["passed"], true);
        assert_eq!(ok["conditions_checked"], 7);
        assert_eq!(json(checked(1, None))["passed"], false);
        assert_eq!(
            json(checked(0, Some((7, 1))))["passed"],
            false,
            "a violation fails"
        );
    }
}
