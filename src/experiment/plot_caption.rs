//! The second line of a figure's caption: what a reader needs to read the figure without the
//! experiment file — the workload parameters every plotted run shares, and what a point and its
//! bars are (`median of 3 runs, bars min-max`).

use super::results::ResultRow;

/// The run flags a caption names when every run has the same value, in this order: what
/// defines the workload and the load on it. Both spellings are looked up: sweep rows record flag
/// names (`read-ratio`), `txbench run` JSON its configuration's fields (`read_ratio`).
const SHOWN: &[(&str, &str)] = &[
    ("workload", "workload"),
    ("preset", "preset"),
    ("records", "records"),
    ("theta", "theta"),
    ("ops", "ops"),
    ("read-ratio", "read_ratio"),
    ("payload", "payload"),
    ("warehouses", "warehouses"),
    ("threads", "threads"),
    ("executor", "executor"),
    ("queue", "queue"),
    ("duration", "duration_s"),
];

/// `workload ycsb, records 1000, threads 2, ...; median of 3 runs, bars min-max` for `rows`
/// (`runs_per_point`: the most runs behind one plotted point; `bars`: whether the figure draws
/// their min-max).
pub(super) fn context(rows: &[&ResultRow], runs_per_point: usize, bars: bool) -> String {
    let mut parts = Vec::new();
    for (flag, field) in SHOWN {
        let value = |r: &ResultRow| r.args.get(*flag).or_else(|| r.args.get(*field)).cloned();
        let Some(first) = rows.first().and_then(|r| value(r)) else {
            continue;
        };
        let swept = rows.iter().any(|r| {
            r.point
                .iter()
                .any(|(k, _)| k == flag || k == field || k.replace('_', "-") == *flag)
        });
        if !swept && rows.iter().all(|r| value(r).as_ref() == Some(&first)) {
            let name = flag.replace('-', " ");
            let unit = if *flag == "duration" { " s" } else { "" };
            parts.push(format!("{name} {first}{unit}"));
        }
    }
    let runs = match (runs_per_point, bars) {
        (0 | 1, _) => "one run per point".to_string(),
        (n, true) => format!("median of {n} runs, bars min-max"),
        (n, false) => format!("median of {n} runs"),
    };
    if parts.is_empty() {
        runs
    } else {
        format!("{}; {runs}", parts.join(", "))
    }
}

/// The most runs any (point, series) of `rows` has: the `N` of "median of N".
pub(super) fn runs_per_point(rows: &[&ResultRow]) -> usize {
    let mut counts: std::collections::HashMap<(String, &str), usize> = Default::default();
    for r in rows {
        *counts.entry((r.point_key(), r.protocol())).or_default() += 1;
    }
    counts.values().copied().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::results::BuildInfo;

    fn row(threads: &str, rep: usize) -> ResultRow {
        ResultRow {
            experiment: "e".into(),
            point: vec![
                ("threads".into(), threads.into()),
                ("protocol".into(), "silo".into()),
            ],
            repetition: rep,
            args: [
                ("workload", "ycsb"),
                ("records", "1000"),
                ("theta", "0.99"),
                ("threads", threads),
                ("duration", "0.5"),
                ("seed", "7"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            txbench: BuildInfo {
                version: "0".into(),
                commit: "c".into(),
            },
            time: String::new(),
            machine: serde_json::Value::Null,
            report: serde_json::json!({ "protocol": "silo" }),
        }
    }

    #[test]
    fn the_caption_names_the_shared_workload_and_what_a_point_is() {
        let rows = [
            row("1", 0),
            row("1", 1),
            row("2", 0),
            row("2", 1),
            row("2", 2),
        ];
        let refs: Vec<&ResultRow> = rows.iter().collect();
        assert_eq!(runs_per_point(&refs), 3);
        assert_eq!(
            context(&refs, runs_per_point(&refs), true),
            "workload ycsb, records 1000, theta 0.99, duration 0.5 s; median of 3 runs, bars \
             min-max"
        );
        // Threads is swept (on the x axis or in the legend): never in the caption.
        assert_eq!(
            context(&refs[..1], 1, true),
            "workload ycsb, records 1000, theta 0.99, duration 0.5 s; one run per point"
        );
        assert!(context(&refs, 3, false).ends_with("; median of 3 runs"));
    }
}
