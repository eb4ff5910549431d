//! Repeated runs folded into one report each: the run of median throughput, its latency
//! percentiles replaced by their medians.

use super::RunReport;
use crate::metrics::LatencySummary;

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
            out.spread = crate::metrics::repeat_spread::RepeatSpread::of(runs.iter().copied());
            out
        })
        .collect()
}
