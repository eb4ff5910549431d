//! The CSV form of the reports: one row per run, the columns stable.

use super::{RunReport, point_label};
use crate::check::CheckReport;
use std::collections::BTreeMap;
use std::io::Write;

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
