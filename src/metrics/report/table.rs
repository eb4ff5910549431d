//! The terminal tables: the runs, their transaction types, the leaders, the protocols' own
//! statistics and the version memory.

use super::cells::{abort_percent, check_cell, consistency_cell, history_cell, short_number};
use super::header::{HEADER_WIDTH, wrap_words};
#[cfg(doc)]
use super::medians;
use super::{RunReport, point_label};
use crate::metrics::repeat_spread::{compact_with_range, with_range};
use comfy_table::{Cell, CellAlignment, Table, presets};

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
