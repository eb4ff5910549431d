//! Reports: one [`RunReport`] per (protocol, workload) run, printed as a table, JSON lines or CSV.
//!
//! Field and column names are part of txbench's interface (scripts rely on them): `protocol`,
//! `protocol_serializable`, `workload`, `threads`, `commits`, `aborts`, `throughput_tps`,
//! `abort_ratio`, `latency_us` (`p50`, `p90`, `p99`, `p999`, `max`), `config`, `machine`, and
//! `check` in check mode, whose `passed` is the verdict.
//!
//! Two answers must never be confused: whether a protocol is *meant* to be serializable (its
//! class, `protocol_serializable`: false for `nocc` and `si`) and whether this run *was* found
//! serializable (`check.passed`: no dependency cycle, no anomaly, no violated consistency
//! condition). Every output names them apart, and says "not checked" for what a run did not check.
//!
//! One file per part: this one builds a report from a run's statistics and writes it as JSON;
//! `csv.rs` writes CSV, `table.rs` renders the terminal tables from `cells.rs` (the formatted
//! numbers and check verdicts), `header.rs` the text above them, and `medians.rs` folds repeated
//! runs into one report each.

mod cells;
mod context;
mod csv;
mod header;
mod medians;
mod table;

pub use cells::{abort_percent, short_number};
pub use context::RunContext;
pub use csv::{CSV_COLUMNS, write_csv};
pub(crate) use header::{HEADER_WIDTH, wrap_words};
pub use medians::{medians, point_label};
pub use table::{
    leaders, render_protocol_stats, render_table, render_table_with, render_type_table,
    render_version_table,
};

use super::machine::MachineInfo;
use super::rate_series::RateSample;
use super::version_series::VersionSample;
use super::{AttemptSummary, LatencySummary, Phase, TypeStats, WorkerStats};
use crate::check::CheckReport;
use crate::protocol::{Abort, ProtocolKind};
use crate::storage::GrowingTableStats;
use crate::storage::versions::VersionStats;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
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
    /// Whether the protocol is designed to guarantee serializability (`nocc` and `si` are not): its class,
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
    /// instead of waiting (Calvin's `--calvin-no-wait`, BOHM's `--bohm-no-wait`, PWV's
    /// `--pwv-no-wait`: SGPM's Calvin_NW, BOHM_NW, PWV_NW): its `lock_conflict`
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
            reruns_conflicts: match kind {
                ProtocolKind::Calvin => options.calvin.no_wait,
                ProtocolKind::Bohm => options.bohm.no_wait,
                ProtocolKind::Pwv => options.pwv.no_wait,
                _ => false,
            },
            ..ProtocolLabel::from(kind)
        }
    }
}

impl RunReport {
    /// Summarises what the workers of one run measured (`workers`, over a measured period of
    /// `measured`) in the run `run` describes.
    pub fn build(
        kind: ProtocolKind,
        options: &crate::protocol::ProtocolOptions,
        run: &RunContext,
        workers: &[WorkerStats],
        measured: Duration,
        check: Option<CheckReport>,
        machine: &MachineInfo,
    ) -> RunReport {
        let label = ProtocolLabel::for_run(kind, options);
        Self::build_named(&label, run, workers, measured, check, machine)
    }

    /// [`RunReport::build`] for any protocol, named by `label`.
    pub fn build_named(
        label: &ProtocolLabel,
        run: &RunContext,
        workers: &[WorkerStats],
        measured: Duration,
        check: Option<CheckReport>,
        machine: &MachineInfo,
    ) -> RunReport {
        let names = run.txn_types;
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
        let aborts = total.total_aborts();
        RunReport {
            protocol: label.name.clone(),
            protocol_serializable: label.serializable,
            workload: run.workload.to_string(),
            threads: run.threads,
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
            config: run.config.clone(),
            machine: machine.clone(),
            check,
            warnings: Vec::new(),
            versions: None,
            log: None,
            point: Vec::new(),
            executor: run.executor,
            queue: run.queue,
            signals: if run.reports_signals {
                crate::protocol::signal::Signal::ALL
                    .iter()
                    .map(|s| (s.name(), merged.signals[s.index()]))
                    .collect()
            } else {
                BTreeMap::new()
            },
            waits: merged.waits,
            protocol_stats: BTreeMap::new(),
            reexecutions: label.declared_sets.then_some(total.reexecutions),
            reruns_conflicts: label.reruns_conflicts,
            other_processes_cores: None,
            offered_tps: run.offered_tps,
            arrival: run.arrival,
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
        let build = serde_json::to_string(&crate::metrics::build_info::BuildInfo::current())
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
        &cfg.options,
        &cfg.report_context(&workload),
        &[w],
        measured,
        None,
        &MachineInfo::detect(),
    )
}

/// A check report of 10 transactions with `cycles` cycles and, where given, `conditions`
/// (consistency conditions checked, violations found): what the report's and its cells' tests read.
#[cfg(test)]
fn checked(cycles: u64, conditions: Option<(u32, u64)>) -> CheckReport {
    CheckReport {
        transactions: 10,
        cycles,
        conditions_checked: conditions.map(|c| c.0),
        consistency_violations: conditions.map(|c| c.1),
        ..CheckReport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // So do BOHM's and PWV's no-wait forms, each with its own flag.
        for (protocol, flag) in [("bohm", "--bohm-no-wait"), ("pwv", "--pwv-no-wait")] {
            let no_wait = one_worker_report(
                &["-p", protocol, flag, "--records", "1000"],
                &[Abort::LockConflict],
                Duration::from_secs(1),
            );
            assert_eq!(no_wait.deterministic_abort_bug(), None, "{protocol}");
            let waiting = report_with(protocol, &[Abort::LockConflict]);
            assert!(waiting.deterministic_abort_bug().is_some(), "{protocol}");
        }
        let other_flag = one_worker_report(
            &["-p", "pwv", "--bohm-no-wait", "--records", "1000"],
            &[Abort::LockConflict],
            Duration::from_secs(1),
        );
        assert!(
            other_flag.deterministic_abort_bug().is_some(),
            "BOHM's flag is not PWV's"
        );

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
