//! `txbench compare OLD NEW`: two results files (two builds, two machines, two days) side by
//! side. Rows are matched by their point (the axes other than the protocol) and series (the
//! protocol, or its `protocol` axis label), whatever experiment they belong to, so a sweep's
//! file compares with another sweep's of the same grid and `txbench run --format json` output
//! with another run's.
//!
//! For each matched (point, series) and metric: the median of each side with its min-max, the
//! ratio of medians NEW / OLD, and the ratio's range (NEW's min over OLD's max to NEW's max over
//! OLD's min). The verdict follows one stated rule, the runs' own noise: with at least two runs
//! on each side, a change is flagged when the two min-max ranges do not overlap (every NEW run
//! above every OLD run, or below); with one run on a side the noise is unknown and nothing is
//! flagged. Overlapping ranges read "within noise".

use super::results::ResultRow;
use super::summary::{Metric, Spread, other_axes, series_of};
use crate::metrics::report::point_label;
use std::fmt::Write;

/// How NEW compares with OLD on one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every NEW run measured above every OLD run (at least two runs each side).
    Higher,
    /// Every NEW run measured below every OLD run (at least two runs each side).
    Lower,
    /// The ranges overlap: the difference is within the runs' own spread.
    WithinNoise,
    /// One side has a single run: its noise is unknown, no change is flagged.
    Unknown,
}

impl Verdict {
    /// The verdict of `new` against `old` by the module's rule.
    pub fn of(old: Spread, new: Spread) -> Verdict {
        if old.n < 2 || new.n < 2 {
            Verdict::Unknown
        } else if new.min > old.max {
            Verdict::Higher
        } else if new.max < old.min {
            Verdict::Lower
        } else {
            Verdict::WithinNoise
        }
    }

    /// Words for the table; `lower_is_better` says which way is an improvement (latency).
    fn words(self, lower_is_better: bool) -> &'static str {
        match (self, lower_is_better) {
            (Verdict::Higher, false) | (Verdict::Lower, true) => "**better**",
            (Verdict::Higher, true) | (Verdict::Lower, false) => "**worse**",
            (Verdict::WithinNoise, _) => "within noise",
            (Verdict::Unknown, _) => "? (1 run: noise unknown)",
        }
    }
}

/// One matched (point, series) on one metric.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The point's axes other than the protocol, as `axis=value` pairs.
    pub point: String,
    /// The protocol or protocol variant.
    pub series: String,
    /// OLD's runs.
    pub old: Spread,
    /// NEW's runs.
    pub new: Spread,
    /// What the rule says.
    pub verdict: Verdict,
}

impl Comparison {
    /// NEW's median over OLD's (`None` when OLD's is zero).
    pub fn ratio(&self) -> Option<f64> {
        (self.old.median != 0.0).then(|| self.new.median / self.old.median)
    }

    /// The ratio's range: the lowest and highest NEW run over the highest and lowest OLD run.
    pub fn ratio_range(&self) -> Option<(f64, f64)> {
        (self.old.min > 0.0 && self.old.max > 0.0)
            .then(|| (self.new.min / self.old.max, self.new.max / self.old.min))
    }
}

/// The (point, series) keys of `rows` in first-seen order, each with its rows.
fn groups(rows: &[ResultRow]) -> Vec<((String, String), Vec<&ResultRow>)> {
    let mut out: Vec<((String, String), Vec<&ResultRow>)> = Vec::new();
    for r in rows {
        let key = (point_label(&other_axes(r)), series_of(r));
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => out.push((key, vec![r])),
        }
    }
    out
}

/// Every (point, series) both files measured, compared on `metric`, in OLD's order; rows
/// without the metric (a latency of a run that committed nothing) are left out of its spread.
pub fn compare(old: &[ResultRow], new: &[ResultRow], metric: &Metric) -> Vec<Comparison> {
    let new_groups = groups(new);
    groups(old)
        .into_iter()
        .filter_map(|((point, series), old_rows)| {
            let new_rows = &new_groups
                .iter()
                .find(|((p, s), _)| *p == point && *s == series)?
                .1;
            let values = |rows: &[&ResultRow]| -> Vec<f64> {
                rows.iter().filter_map(|r| r.metric(metric.path)).collect()
            };
            let old = Spread::of(&values(&old_rows))?;
            let new = Spread::of(&values(new_rows))?;
            Some(Comparison {
                point,
                series,
                old,
                new,
                verdict: Verdict::of(old, new),
            })
        })
        .collect()
}

/// Whether smaller values of `metric` are better (latencies, abort ratios).
fn lower_is_better(metric: &Metric) -> bool {
    metric.key != "throughput" && metric.key != "offered"
}

/// The Markdown comparison: per metric a table of every matched (point, series), then the
/// (point, series) only one file has.
pub fn markdown(
    old_name: &str,
    old: &[ResultRow],
    new_name: &str,
    new: &[ResultRow],
    metrics: &[Metric],
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## {new_name} against {old_name}\n");
    let _ = writeln!(
        s,
        "Ratio NEW / OLD of medians, with its range (NEW's lowest run over OLD's highest to \
         NEW's highest over OLD's lowest). A change is flagged when, with at least two runs a \
         side, the two min-max ranges do not overlap.\n"
    );
    for m in metrics {
        let rows = compare(old, new, m);
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### {}\n", m.title);
        let _ = writeln!(
            s,
            "| point | protocol | old: median [min-max] | new: median [min-max] | new / old | \
             range | verdict |"
        );
        let _ = writeln!(s, "| --- | --- | ---: | ---: | ---: | ---: | --- |");
        let value = |v: f64| format!("{:.*}", m.decimals, v * m.scale);
        let cell = |sp: Spread| {
            if sp.n > 1 {
                format!(
                    "{} [{}-{}] (n={})",
                    value(sp.median),
                    value(sp.min),
                    value(sp.max),
                    sp.n
                )
            } else {
                format!("{} (n=1)", value(sp.median))
            }
        };
        for c in &rows {
            let ratio = c.ratio().map_or_else(|| "-".into(), |r| format!("{r:.3}"));
            let range = c
                .ratio_range()
                .map_or_else(|| "-".into(), |(lo, hi)| format!("{lo:.3}-{hi:.3}"));
            let point = if c.point.is_empty() { "-" } else { &c.point };
            let _ = writeln!(
                s,
                "| {point} | {} | {} | {} | {ratio} | {range} | {} |",
                c.series,
                cell(c.old),
                cell(c.new),
                c.verdict.words(lower_is_better(m))
            );
        }
        s.push('\n');
    }
    let only = |a: &[ResultRow], b: &[ResultRow]| -> Vec<String> {
        let theirs = groups(b);
        groups(a)
            .into_iter()
            .filter(|(k, _)| !theirs.iter().any(|(t, _)| t == k))
            .map(|((p, series), _)| {
                if p.is_empty() {
                    series
                } else {
                    format!("{series} at {p}")
                }
            })
            .collect()
    };
    for (name, list) in [(old_name, only(old, new)), (new_name, only(new, old))] {
        if !list.is_empty() {
            let _ = writeln!(s, "Only in {name} (not compared): {}\n", list.join("; "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::results::BuildInfo;
    use crate::experiment::summary::METRICS;

    fn row(protocol: &str, theta: &str, rep: usize, tps: f64) -> ResultRow {
        ResultRow {
            experiment: "e".into(),
            point: vec![
                ("theta".into(), theta.into()),
                ("protocol".into(), protocol.into()),
            ],
            repetition: rep,
            args: Default::default(),
            txbench: BuildInfo {
                version: "0".into(),
                commit: "c".into(),
            },
            time: String::new(),
            machine: serde_json::Value::Null,
            report: serde_json::json!({
                "protocol": protocol,
                "throughput_tps": tps,
                "latency_us": { "p999": 1e6 / tps },
            }),
        }
    }

    fn spread(v: &[f64]) -> Spread {
        Spread::of(v).unwrap()
    }

    #[test]
    fn the_rule_flags_only_ranges_that_do_not_overlap() {
        let old = spread(&[100.0, 104.0, 110.0]);
        assert_eq!(
            Verdict::of(old, spread(&[111.0, 115.0, 120.0])),
            Verdict::Higher
        );
        assert_eq!(
            Verdict::of(old, spread(&[90.0, 95.0, 99.0])),
            Verdict::Lower
        );
        // One run of NEW inside OLD's range: within noise, even with a higher median.
        assert_eq!(
            Verdict::of(old, spread(&[109.0, 130.0, 140.0])),
            Verdict::WithinNoise
        );
        // A single run on a side is never flagged, however far it lies.
        assert_eq!(Verdict::of(old, spread(&[500.0])), Verdict::Unknown);
        assert_eq!(Verdict::of(spread(&[1.0]), old), Verdict::Unknown);
    }

    #[test]
    fn rows_match_by_point_and_protocol_and_ratios_carry_their_range() {
        let old: Vec<ResultRow> = [100.0, 110.0]
            .iter()
            .enumerate()
            .flat_map(|(i, &t)| {
                [
                    row("silo", "0.9", i, t),
                    row("tictoc", "0.9", i, 2.0 * t),
                    row("nocc", "0.9", i, t),
                ]
            })
            .collect();
        let new: Vec<ResultRow> = [120.0, 130.0]
            .iter()
            .enumerate()
            .flat_map(|(i, &t)| {
                [
                    row("silo", "0.9", i, t),
                    row("tictoc", "0.9", i, 2.0 * 105.0 + i as f64),
                    row("plor", "0.9", i, t),
                ]
            })
            .collect();
        let throughput = &METRICS[0];
        let c = compare(&old, &new, throughput);
        assert_eq!(c.len(), 2, "silo and tictoc are in both files");
        assert_eq!(
            (c[0].series.as_str(), c[0].point.as_str()),
            ("silo", "theta=0.9")
        );
        assert_eq!(c[0].verdict, Verdict::Higher);
        assert!((c[0].ratio().unwrap() - 125.0 / 105.0).abs() < 1e-12);
        let (lo, hi) = c[0].ratio_range().unwrap();
        assert!((lo - 120.0 / 110.0).abs() < 1e-12 && (hi - 1.3).abs() < 1e-12);
        assert_eq!(c[1].verdict, Verdict::WithinNoise);
        let text = markdown("old.jsonl", &old, "new.jsonl", &new, &METRICS[..3]);
        assert!(text.contains("| theta=0.9 | silo | 105 [100-110] (n=2) | 125 [120-130] (n=2)"));
        assert!(text.contains("**better**"), "{text}");
        // p99.9 went down for silo: lower latency is better, not worse.
        assert!(
            text.split("### p99.9")
                .nth(1)
                .unwrap()
                .contains("**better**"),
            "{text}"
        );
        assert!(text.contains("Only in old.jsonl (not compared): nocc at theta=0.9"));
        assert!(text.contains("Only in new.jsonl (not compared): plor at theta=0.9"));
    }
}
