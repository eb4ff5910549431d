//! `txbench report`: a results file as Markdown tables, one per experiment and metric, with a
//! row per point (the axes other than the protocol) and a column per protocol (or protocol
//! variant); each cell is the median across repetitions with the min-max range.

use super::results::ResultRow;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A metric the tables and plots show: name with unit, path in the report, how to format it.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Short name for flags (`throughput`).
    pub key: &'static str,
    /// Heading with unit.
    pub title: &'static str,
    /// Path in the run report.
    pub path: &'static [&'static str],
    /// Multiplier for display (abort ratio as a percentage).
    pub scale: f64,
    /// Decimal places.
    pub decimals: usize,
}

/// The metrics of `txbench report` and `txbench plot`.
pub const METRICS: &[Metric] = &[
    Metric {
        key: "throughput",
        title: "throughput (txn/s)",
        path: &["throughput_tps"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "abort",
        title: "abort ratio (%)",
        path: &["abort_ratio"],
        scale: 100.0,
        decimals: 2,
    },
    Metric {
        key: "p999",
        title: "p99.9 latency (us)",
        path: &["latency_us", "p999"],
        scale: 1.0,
        decimals: 1,
    },
    Metric {
        key: "p50",
        title: "p50 latency (us)",
        path: &["latency_us", "p50"],
        scale: 1.0,
        decimals: 1,
    },
    Metric {
        key: "p99",
        title: "p99 latency (us)",
        path: &["latency_us", "p99"],
        scale: 1.0,
        decimals: 1,
    },
    Metric {
        key: "reexecutions",
        title: "re-executions (deterministic protocols)",
        path: &["reexecutions"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "cc_abort",
        title: "concurrency-control abort ratio (%, user aborts excluded)",
        path: &[super::results::CC_ABORT_RATIO],
        scale: 100.0,
        decimals: 2,
    },
    // SGPM's signal counts (its figures 10 and 12), shown for coroutine-executor experiments.
    Metric {
        key: "rr_ml",
        title: "RR+ML signals (coroutine executor)",
        path: &["signals", "rr+ml"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "ag",
        title: "AG signals (coroutine executor)",
        path: &["signals", "ag"],
        scale: 1.0,
        decimals: 0,
    },
    // The signals that move a transaction between batches or queues (SGPM table 1): SF for the
    // deterministic no-wait forms, NB for Aria.
    Metric {
        key: "sf",
        title: "SF signals (coroutine executor)",
        path: &["signals", "sf"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "nb",
        title: "NB signals (coroutine executor)",
        path: &["signals", "nb"],
        scale: 1.0,
        decimals: 0,
    },
    // Shown on request (`txbench report --metric`): the figures of particular sections.
    Metric {
        key: "max_attempts",
        title: "max attempts (most any committed transaction needed)",
        path: &["attempts", "max"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "wait_share",
        title: "wait share (% of worker time)",
        path: &["phase_share", "wait"],
        scale: 100.0,
        decimals: 1,
    },
    Metric {
        key: "offered",
        title: "offered load (txn/s)",
        path: &["offered_tps"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "check_transactions",
        title: "transactions checked",
        path: &["check", "transactions"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "check_cycles",
        title: "dependency cycles found",
        path: &["check", "cycles"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "check_anomalies",
        title: "anomalies found",
        path: &["check", "anomalies"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "wall",
        title: "wall time of the run's process (s)",
        path: &["process", "wall_s"],
        scale: 1.0,
        decimals: 2,
    },
    Metric {
        key: "max_rss",
        title: "peak memory of the run's process (MiB)",
        path: &["process", "max_rss_kb"],
        scale: 1.0 / 1024.0,
        decimals: 0,
    },
    // Logged runs only (`log` in the experiment file); a run without a log has no cell.
    Metric {
        key: "durable_p999",
        title: "p99.9 latency to the durable acknowledgement (us)",
        path: &["log", "durable_latency_us", "p999"],
        scale: 1.0,
        decimals: 1,
    },
    Metric {
        key: "log_bytes",
        title: "log bytes per committed transaction",
        path: &["log", "bytes_per_txn"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "log_aborted",
        title: "aborted attempts logged",
        path: &["log", "aborted_logged"],
        scale: 1.0,
        decimals: 0,
    },
];

/// The metrics `--metric` names (comma-separated keys of [`METRICS`]), or an error listing the
/// keys allowed.
pub fn parse_metrics(list: &str) -> Result<Vec<Metric>, String> {
    list.split(',')
        .map(str::trim)
        .map(|k| {
            METRICS.iter().find(|m| m.key == k).copied().ok_or_else(|| {
                let keys: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
                format!(
                    "invalid value '{k}' for --metric: allowed {}",
                    keys.join(", ")
                )
            })
        })
        .collect()
}

/// Index in [`METRICS`] of the first SGPM signal count (RR+ML, then AG, SF and NB).
const SIGNAL_METRICS: usize = 7;
/// How many signal counts follow it.
const SIGNAL_METRIC_COUNT: usize = 4;

/// The [`METRICS`] `txbench report` and `txbench plot` show for an experiment: throughput,
/// abort ratio and p99.9; p50, p99, re-executions and the concurrency-control abort ratio for an
/// experiment that runs a deterministic protocol (see `shown_metrics`); and SGPM's signal
/// counts (RR+ML and AG: its figures 10 and 12; SF and NB, which move transactions between
/// queues and batches) for one that runs the coroutine executor (rows that carry signal counts).
pub fn metrics_for(rows: &[&ResultRow]) -> Vec<&'static Metric> {
    let mut shown: Vec<&Metric> = METRICS.iter().take(shown_metrics(rows)).collect();
    if rows
        .iter()
        .any(|r| r.metric(METRICS[SIGNAL_METRICS].path).is_some())
    {
        shown.extend(&METRICS[SIGNAL_METRICS..SIGNAL_METRICS + SIGNAL_METRIC_COUNT]);
    }
    shown
}

/// Version memory, which `txbench report` and `txbench plot` add for experiments whose rows
/// carry it (multi-version protocols; [`version_metrics`]). There is no time series: the live
/// count is the run's last value, and the bytes are the high-water mark (nodes are never given
/// back to the allocator during a run), so together they show the end and the peak.
pub const VERSION_METRICS: &[Metric] = &[
    Metric {
        key: "live_versions",
        title: "live versions at the end of the run",
        path: &["versions", "live_versions"],
        scale: 1.0,
        decimals: 0,
    },
    Metric {
        key: "version_mib",
        title: "version memory, high-water mark (MiB)",
        path: &["versions", "version_bytes"],
        scale: 1.0 / (1024.0 * 1024.0),
        decimals: 2,
    },
];

/// [`VERSION_METRICS`] when a row of the experiment kept versions, else none.
pub fn version_metrics(rows: &[&ResultRow]) -> &'static [Metric] {
    if rows
        .iter()
        .any(|r| r.metric(&["versions", "live_versions"]).is_some())
    {
        VERSION_METRICS
    } else {
        &[]
    }
}

/// How many of [`METRICS`] `txbench report` shows for an experiment: throughput, abort ratio
/// and p99.9; the first seven (up to the concurrency-control abort ratio) for an experiment that
/// runs a deterministic protocol (rows that carry `reexecutions`), whose paper (DecentSched)
/// reports p99, whose re-executions are not aborts, and whose claim (abort-free) is about
/// concurrency-control aborts, not the workload's own.
fn shown_metrics(rows: &[&ResultRow]) -> usize {
    if rows.iter().any(|r| r.metric(&["reexecutions"]).is_some()) {
        7
    } else {
        3
    }
}

/// The axis that compares builds (`binary` in the experiment file).
const BUILD_AXIS: &str = "binary";

/// Median, min and max of a non-empty sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// How many values.
    pub n: usize,
}

impl Spread {
    /// The spread of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        })
    }
}

/// The series a row belongs to: its `protocol` axis label when there is one (protocol variants
/// such as `plor+dwa`), else the protocol it ran.
pub fn series_of(row: &ResultRow) -> String {
    row.point
        .iter()
        .find(|(k, _)| k == "protocol")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| row.protocol().to_string())
}

/// The row's axes other than the protocol.
pub fn other_axes(row: &ResultRow) -> Vec<(String, String)> {
    row.point
        .iter()
        .filter(|(k, _)| k != "protocol")
        .cloned()
        .collect()
}

/// Values in first-seen order without repeats.
fn first_seen<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The Markdown report of `rows`, with the default metrics.
pub fn markdown(rows: &[ResultRow]) -> String {
    markdown_with(rows, None)
}

/// The Markdown report of `rows`: one table per metric (`metrics`, or the default ones), and
/// when a `binary` axis compares builds, each metric's ratio of medians against the first build.
pub fn markdown_with(rows: &[ResultRow], metrics: Option<&[Metric]>) -> String {
    let mut s = String::new();
    for exp in first_seen(rows.iter().map(|r| r.experiment.clone())) {
        let rows: Vec<&ResultRow> = rows.iter().filter(|r| r.experiment == exp).collect();
        let _ = writeln!(s, "## {exp}\n");
        let _ = writeln!(s, "{}\n", context_line(&rows));
        let series = first_seen(rows.iter().map(|r| series_of(r)));
        let points = first_seen(rows.iter().map(|r| other_axes(r)));
        let axis_names = first_seen(points.iter().flatten().map(|(k, _)| k.clone()));
        let mut cells: BTreeMap<(usize, usize), Vec<&ResultRow>> = BTreeMap::new();
        for r in &rows {
            let p = points.iter().position(|p| *p == other_axes(r)).unwrap_or(0);
            let c = series.iter().position(|c| *c == series_of(r)).unwrap_or(0);
            cells.entry((p, c)).or_default().push(r);
        }
        let runs = cells.values().map(Vec::len).max().unwrap_or(0);
        let shown: Vec<Metric> = match metrics {
            Some(m) => m.to_vec(),
            None => metrics_for(&rows)
                .into_iter()
                .chain(version_metrics(&rows))
                .copied()
                .collect(),
        };
        for m in &shown {
            let spread = if runs > 1 { ", [min-max]" } else { "" };
            let _ = writeln!(
                s,
                "### {} (median of {runs} run{}{spread})\n",
                m.title,
                if runs == 1 { "" } else { "s" }
            );
            let mut header: Vec<String> = axis_names.clone();
            header.extend(series.iter().cloned());
            let _ = writeln!(s, "| {} |", header.join(" | "));
            let align: Vec<&str> = header.iter().map(|_| "---:").collect();
            let _ = writeln!(s, "| {} |", align.join(" | "));
            for (pi, point) in points.iter().enumerate() {
                let mut line: Vec<String> = axis_names
                    .iter()
                    .map(|a| {
                        point
                            .iter()
                            .find(|(k, _)| k == a)
                            .map(|(_, v)| v.clone())
                            .unwrap_or_else(|| "-".into())
                    })
                    .collect();
                for ci in 0..series.len() {
                    let values: Vec<f64> = cells
                        .get(&(pi, ci))
                        .map(|rs| rs.iter().filter_map(|r| r.metric(m.path)).collect())
                        .unwrap_or_default();
                    line.push(match Spread::of(&values) {
                        None => "-".into(),
                        Some(sp) => format_cell(sp, m),
                    });
                }
                let _ = writeln!(s, "| {} |", line.join(" | "));
            }
            s.push('\n');
        }
        for m in &shown {
            build_ratios(&mut s, &rows, &series, m);
        }
    }
    s
}

/// For an experiment with a `binary` axis: the metric's median under each later build divided by
/// its median under the first, per point (the other axes) and series.
fn build_ratios(s: &mut String, rows: &[&ResultRow], series: &[String], m: &Metric) {
    let label_of = |r: &ResultRow| {
        r.point
            .iter()
            .find(|(k, _)| k == BUILD_AXIS)
            .map(|(_, v)| v.clone())
    };
    let builds = first_seen(rows.iter().filter_map(|r| label_of(r)));
    if builds.len() < 2 {
        return;
    }
    let rest = |r: &ResultRow| -> Vec<(String, String)> {
        other_axes(r)
            .into_iter()
            .filter(|(k, _)| k != BUILD_AXIS)
            .collect()
    };
    let points = first_seen(rows.iter().map(|r| rest(r)));
    let axis_names = first_seen(points.iter().flatten().map(|(k, _)| k.clone()));
    let median = |point: &[(String, String)], build: &str, series_name: &str| {
        let values: Vec<f64> = rows
            .iter()
            .filter(|r| rest(r) == point && label_of(r).as_deref() == Some(build))
            .filter(|r| series_of(r) == series_name)
            .filter_map(|r| r.metric(m.path))
            .collect();
        Spread::of(&values).map(|sp| sp.median)
    };
    for build in &builds[1..] {
        let _ = writeln!(
            s,
            "### {}: {build} / {} (ratio of medians)\n",
            m.title, builds[0]
        );
        let mut header = axis_names.clone();
        header.extend(series.iter().cloned());
        let _ = writeln!(s, "| {} |", header.join(" | "));
        let align: Vec<&str> = header.iter().map(|_| "---:").collect();
        let _ = writeln!(s, "| {} |", align.join(" | "));
        for point in &points {
            let mut line: Vec<String> = axis_names
                .iter()
                .map(|a| {
                    point
                        .iter()
                        .find(|(k, _)| k == a)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_else(|| "-".into())
                })
                .collect();
            for name in series {
                let ratio = match (median(point, &builds[0], name), median(point, build, name)) {
                    (Some(base), Some(other)) if base != 0.0 => format!("{:.3}", other / base),
                    _ => "-".into(),
                };
                line.push(ratio);
            }
            let _ = writeln!(s, "| {} |", line.join(" | "));
        }
        s.push('\n');
    }
}

/// `median [min-max]`, or the median alone for one run.
fn format_cell(sp: Spread, m: &Metric) -> String {
    let f = |v: f64| format!("{:.*}", m.decimals, v * m.scale);
    if sp.n > 1 {
        format!("{} [{}-{}]", f(sp.median), f(sp.min), f(sp.max))
    } else {
        f(sp.median)
    }
}

/// What every row of an experiment shares: the fixed flags, the commits and the machines.
fn context_line(rows: &[&ResultRow]) -> String {
    let swept: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.point.iter().map(|(k, _)| k.as_str()))
        .collect();
    let mut fixed: BTreeMap<&str, &str> = BTreeMap::new();
    if let Some(first) = rows.first() {
        for (k, v) in &first.args {
            let same = rows.iter().all(|r| r.args.get(k) == Some(v));
            if same && !swept.contains(&k.as_str()) {
                fixed.insert(k, v);
            }
        }
    }
    let params = fixed
        .iter()
        .map(|(k, v)| {
            if *v == "true" {
                format!("--{k}")
            } else {
                format!("--{k} {v}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let commits = first_seen(rows.iter().map(|r| r.txbench.commit.clone())).join(", ");
    let machines = first_seen(rows.iter().map(|r| {
        let m = &r.machine;
        format!(
            "{} cores, {}",
            m.get("cores").and_then(|c| c.as_u64()).unwrap_or(0),
            m.get("cpu_model")
                .and_then(|c| c.as_str())
                .unwrap_or("unknown CPU")
        )
    }))
    .join("; ");
    format!("Parameters: `{params}`. Commit {commits}; {machines}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_median_min_max() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        assert_eq!(Spread::of(&[1.0, 4.0]).unwrap().median, 2.5);
        assert_eq!(Spread::of(&[]), None);
    }

    /// A row of `protocol` whose report carries `report`.
    fn row(protocol: &str, report: serde_json::Value) -> ResultRow {
        let mut report = report;
        report["protocol"] = protocol.into();
        report["throughput_tps"] = 100.0.into();
        report["abort_ratio"] = 0.0.into();
        report["latency_us"] = serde_json::json!({"p50": 1.0, "p99": 2.0, "p999": 3.0});
        serde_json::from_value(serde_json::json!({
            "experiment": "e",
            "point": [["protocol", protocol]],
            "repetition": 0,
            "args": {},
            "txbench": {"version": "0", "commit": "c"},
            "time": "t",
            "machine": {},
            "report": report,
        }))
        .expect("a result row")
    }

    #[test]
    fn a_binary_axis_adds_ratio_tables_against_the_first_build() {
        let mut before = row("silo", serde_json::json!({}));
        before.point = vec![
            ("binary".into(), "before".into()),
            ("protocol".into(), "silo".into()),
        ];
        let mut after = before.clone();
        after.point[0].1 = "after".into();
        after.report["throughput_tps"] = 150.0.into();
        let text = markdown(&[before, after]);
        assert!(
            text.contains("### throughput (txn/s): after / before (ratio of medians)"),
            "{text}"
        );
        assert!(text.contains("| 1.500 |"), "{text}");
    }

    #[test]
    fn metrics_are_chosen_by_key_and_unknown_keys_list_the_allowed_ones() {
        let m = parse_metrics("throughput, max_rss").unwrap();
        assert_eq!(m[1].path, &["process", "max_rss_kb"]);
        let e = parse_metrics("throughput,nope").unwrap_err();
        assert!(e.contains("'nope'") && e.contains("wait_share"), "{e}");
        let mut r = row("silo", serde_json::json!({"process": {"max_rss_kb": 2048}}));
        r.point.clear();
        let text = markdown_with(&[r], Some(&m));
        assert!(
            text.contains("### peak memory of the run's process (MiB)"),
            "{text}"
        );
        assert!(text.contains("| 2 |"), "{text}");
    }

    #[test]
    fn deterministic_experiments_also_show_p99_and_reexecutions() {
        let occ = row("silo", serde_json::json!({}));
        let det = row("decentsched", serde_json::json!({"reexecutions": 7}));
        let only_occ = markdown(std::slice::from_ref(&occ));
        assert!(only_occ.contains("p99.9 latency"), "{only_occ}");
        assert!(!only_occ.contains("p99 latency"), "{only_occ}");
        let both = markdown(&[occ, det]);
        assert!(both.contains("### p99 latency (us)"), "{both}");
        assert!(both.contains("### re-executions"), "{both}");
        assert!(both.contains("| 7 |"), "{both}");
        assert!(!both.contains("signals"), "{both}");
    }

    #[test]
    fn coroutine_experiments_also_show_signal_counts() {
        let thread = row("no_wait", serde_json::json!({"signals": {}}));
        let coro = row(
            "wound_wait",
            serde_json::json!({"signals": {"ag": 9, "rr": 2, "ml": 1, "nt": 0, "sf": 0, "nb": 0}}),
        );
        let batch = row(
            "calvin",
            serde_json::json!({"signals": {"ag": 4, "rr": 0, "ml": 0, "nt": 0, "sf": 17, "nb": 23}}),
        );
        let only_thread = markdown(std::slice::from_ref(&thread));
        assert!(!only_thread.contains("signals"), "{only_thread}");
        let both = markdown(&[thread, coro, batch]);
        assert!(both.contains("### RR+ML signals"), "{both}");
        assert!(both.contains("### AG signals"), "{both}");
        assert!(both.contains("| 3 |") && both.contains("| 9 |"), "{both}");
        assert!(both.contains("### SF signals"), "{both}");
        assert!(both.contains("### NB signals"), "{both}");
        assert!(both.contains("| 17 |") && both.contains("| 23 |"), "{both}");
    }

    #[test]
    fn the_cc_abort_ratio_leaves_user_aborts_out() {
        let counts = serde_json::json!({
            "commits": 90,
            "aborts": 10,
            "aborts_by_reason": {"user": 4, "read_validation": 6},
        });
        let occ = row("silo", counts);
        let det = row(
            "decentsched",
            serde_json::json!({"reexecutions": 0, "commits": 99, "aborts": 1,
                "aborts_by_reason": {"user": 1}}),
        );
        let path = [super::super::results::CC_ABORT_RATIO];
        assert_eq!(occ.metric(&path), Some(0.06));
        assert_eq!(det.metric(&path), Some(0.0));
        let nothing = row("silo", serde_json::json!({"commits": 0, "aborts": 0}));
        assert_eq!(nothing.metric(&path), Some(0.0), "no attempt, no abort");
        let table = markdown(&[occ, det]);
        assert!(
            table.contains("### concurrency-control abort ratio"),
            "{table}"
        );
        assert!(table.contains("| 6.00 | 0.00 |"), "{table}");
    }

    #[test]
    fn multi_version_experiments_also_show_version_memory() {
        let sv = row("silo", serde_json::json!({"versions": null}));
        let mv = row(
            "si",
            serde_json::json!({"versions": {"live_versions": 42, "version_bytes": 3 << 20}}),
        );
        let only_sv = markdown(std::slice::from_ref(&sv));
        assert!(!only_sv.contains("live versions"), "{only_sv}");
        let both = markdown(&[sv, mv]);
        assert!(
            both.contains("### live versions at the end of the run"),
            "{both}"
        );
        assert!(both.contains("| - | 42 |"), "{both}");
        assert!(both.contains("| - | 3.00 |"), "{both}");
    }
}
