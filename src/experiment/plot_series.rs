//! Time series (one line per run, x the seconds since the run's workers started, warm-up
//! included), from the samples a run records every `--sample-ms`:
//!
//! - live versions (CCBench figure 14): the older versions live in chains, from multi-version
//!   runs' `version_samples` (see `metrics::version_series`);
//! - throughput and abort ratio (MOCC figure 8): each interval's commits per second and
//!   aborts / (commits + aborts), from `rate_samples` (see `metrics::rate_series`).
//!
//! Every run is its own line (a time series has no median across runs whose samples fall at
//! different moments), so an experiment with many points reads best narrowed with
//! `txbench plot --select` (`--select protocol=si --select long_txn_delay_us=10000`). Rows
//! without samples (single-version protocols for versions, rows from before the samples were
//! recorded) add no line; an experiment none of whose rows has samples gets no figure.

use super::plot::{PlotError, Series, file_stem};
use super::plot_axis::AxisSpec;
use super::plot_draw::draw;
use super::results::ResultRow;
use super::summary::Spread;
use std::path::{Path, PathBuf};

/// One time series a run's report may carry.
struct OverTime {
    /// The report's array of samples.
    samples: &'static str,
    /// The sample's field drawn.
    field: &'static str,
    /// The y axis title.
    y_title: &'static str,
    /// What the caption and the file name call it.
    name: &'static str,
}

/// Live versions (`version_samples`).
const LIVE_VERSIONS: OverTime = OverTime {
    samples: "version_samples",
    field: "live_versions",
    y_title: "live versions (older versions in chains)",
    name: "live versions",
};

/// Throughput per interval (`rate_samples`).
const THROUGHPUT: OverTime = OverTime {
    samples: "rate_samples",
    field: "throughput_tps",
    y_title: "throughput per interval (txn/s)",
    name: "throughput",
};

/// Abort ratio per interval (`rate_samples`).
const ABORT_RATIO: OverTime = OverTime {
    samples: "rate_samples",
    field: "abort_ratio",
    y_title: "abort ratio per interval",
    name: "abort ratio",
};

/// The lines of `runs` (each a legend label and its row), in order: a run's samples of `what`
/// as (seconds, value) points; runs without samples are left out.
fn lines_of(what: &OverTime, runs: &[(String, &ResultRow)]) -> Vec<Series> {
    runs.iter()
        .filter_map(|(label, row)| {
            let samples = row.report.get(what.samples)?.as_array()?;
            let points: Vec<(f64, Spread)> = samples
                .iter()
                .filter_map(|s| {
                    let t = s.get("t_s")?.as_f64()?;
                    let v = s.get(what.field)?.as_f64()?;
                    Some((t, Spread::of(&[v])?))
                })
                .collect();
            (!points.is_empty()).then(|| Series {
                label: label.clone(),
                points,
            })
        })
        .collect()
}

/// Draws `EXPERIMENT-<name>-over-time.{fmt}` of `what` for each of `formats` into `dir` when
/// any of `runs` recorded its samples; returns the files written (none otherwise).
fn plot_over_time(
    what: &OverTime,
    experiment: &str,
    runs: &[(String, &ResultRow)],
    dir: &Path,
    formats: &[&str],
) -> Result<Vec<PathBuf>, PlotError> {
    let lines = lines_of(what, runs);
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let x = AxisSpec {
        title: "time since the workers started (s, warm-up included)".into(),
        log: false,
        base: 10.0,
        categories: None,
        ordered: false,
    };
    // Linear: versions start at 0 live and the figure's point is how far apart the curves end
    // up; rates swing between their two regimes, which a log axis would flatten.
    let y = AxisSpec {
        title: what.y_title.into(),
        log: false,
        base: 10.0,
        categories: None,
        ordered: false,
    };
    let caption = format!("{experiment}: {} over time (one line per run)", what.name);
    let mut written = Vec::new();
    for fmt in formats {
        let path = dir.join(format!(
            "{}-{}-over-time.{fmt}",
            file_stem(experiment),
            file_stem(what.name)
        ));
        draw(&path, &caption, &x, &y, &lines, false)?;
        written.push(path);
    }
    Ok(written)
}

/// Draws every time series any of `runs` recorded (live versions, throughput, abort ratio),
/// each as `EXPERIMENT-<name>-over-time.{fmt}`; returns the files written.
pub(super) fn plot_time_series(
    experiment: &str,
    runs: &[(String, &ResultRow)],
    dir: &Path,
    formats: &[&str],
) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    for what in [&LIVE_VERSIONS, &THROUGHPUT, &ABORT_RATIO] {
        written.extend(plot_over_time(what, experiment, runs, dir, formats)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::results::BuildInfo;

    fn run(protocol: &str, gc_us: u64, samples: Option<Vec<(f64, i64)>>) -> ResultRow {
        let mut report = serde_json::json!({"protocol": protocol, "throughput_tps": 1e5});
        if let Some(samples) = samples {
            report["version_samples"] = samples
                .iter()
                .map(|&(t, live)| {
                    serde_json::json!({"t_s": t, "live_versions": live, "version_bytes": 4096})
                })
                .collect();
        }
        ResultRow {
            experiment: "fig14".into(),
            point: vec![
                ("gc_interval_us".into(), gc_us.to_string()),
                ("protocol".into(), protocol.into()),
            ],
            repetition: 0,
            args: Default::default(),
            txbench: BuildInfo::current(),
            time: "2026-01-01T00:00:00Z".into(),
            machine: serde_json::json!({"cores": 2}),
            report,
        }
    }

    #[test]
    fn each_sampled_run_is_a_line_of_its_samples_in_time_order() {
        let collected = run("si", 0, Some(vec![(0.0, 0), (0.1, 12), (0.2, 9)]));
        let held = run("si", 10_000, Some(vec![(0.0, 0), (0.1, 4000), (0.2, 9000)]));
        let single = run("silo", 0, None);
        let runs = vec![
            ("si gc_interval_us=0".to_string(), &collected),
            ("silo".to_string(), &single),
            ("si gc_interval_us=10000".to_string(), &held),
        ];
        let lines = lines_of(&LIVE_VERSIONS, &runs);
        let labels: Vec<&str> = lines.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["si gc_interval_us=0", "si gc_interval_us=10000"]);
        let points: Vec<(f64, f64)> = lines[1].points.iter().map(|p| (p.0, p.1.median)).collect();
        assert_eq!(points, [(0.0, 0.0), (0.1, 4000.0), (0.2, 9000.0)]);

        let dir = std::env::temp_dir().join(format!("txbench-series-test-{}", std::process::id()));
        let files = plot_time_series("fig14", &runs, &dir, &["svg"]).unwrap();
        assert_eq!(files, [dir.join("fig14-live-versions-over-time.svg")]);
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let doc = roxmltree::Document::parse(&text).expect("the SVG parses");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert!(texts.contains(&"si gc_interval_us=10000"), "{texts:?}");
        assert!(
            texts.iter().any(|t| t.contains("live versions")),
            "{texts:?}"
        );
        // No sampled run, no figure.
        let none = plot_time_series("fig14", &runs[1..2], &dir, &["svg"]).unwrap();
        assert!(none.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn rates_draw_throughput_and_abort_ratio_over_time() {
        let mut row = run("mocc", 0, None);
        row.report["rate_samples"] = serde_json::json!([
            {"t_s": 0.01, "interval_s": 0.01, "commits": 100, "aborts": 0,
             "throughput_tps": 10000.0, "abort_ratio": 0.0},
            {"t_s": 0.02, "interval_s": 0.01, "commits": 50, "aborts": 50,
             "throughput_tps": 5000.0, "abort_ratio": 0.5},
        ]);
        let runs = vec![("mocc".to_string(), &row)];
        let aborts = lines_of(&ABORT_RATIO, &runs);
        let points: Vec<(f64, f64)> = aborts[0].points.iter().map(|p| (p.0, p.1.median)).collect();
        assert_eq!(points, [(0.01, 0.0), (0.02, 0.5)]);
        assert!(
            lines_of(&LIVE_VERSIONS, &runs).is_empty(),
            "no version samples"
        );
        let dir = std::env::temp_dir().join(format!("txbench-rates-test-{}", std::process::id()));
        let files = plot_time_series("fig8", &runs, &dir, &["svg"]).unwrap();
        assert_eq!(
            files,
            [
                dir.join("fig8-throughput-over-time.svg"),
                dir.join("fig8-abort-ratio-over-time.svg")
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
