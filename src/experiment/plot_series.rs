//! Live versions over time (CCBench figure 14 draws them): one line per run, x the seconds since
//! the run's workers started (warm-up included), y the older versions live in chains, from the
//! samples multi-version runs record (`version_samples`, see `metrics::version_series`).
//!
//! Every run is its own line (a time series has no median across runs whose samples fall at
//! different moments), so an experiment with many points reads best narrowed with
//! `txbench plot --select` (`--select protocol=si --select long_txn_delay_us=10000`). Rows
//! without samples (single-version protocols, rows from before the samples were recorded) add
//! no line; an experiment none of whose rows has samples gets no figure.

use super::plot::{AxisSpec, PlotError, Series, draw, file_stem};
use super::results::ResultRow;
use super::summary::Spread;
use std::path::{Path, PathBuf};

/// The lines of `runs` (each a legend label and its row), in order: a run's samples as
/// (seconds, live versions) points; runs without samples are left out.
pub(super) fn version_series(runs: &[(String, &ResultRow)]) -> Vec<Series> {
    runs.iter()
        .filter_map(|(label, row)| {
            let samples = row.report.get("version_samples")?.as_array()?;
            let points: Vec<(f64, Spread)> = samples
                .iter()
                .filter_map(|s| {
                    let t = s.get("t_s")?.as_f64()?;
                    let live = s.get("live_versions")?.as_f64()?;
                    Some((t, Spread::of(&[live])?))
                })
                .collect();
            (!points.is_empty()).then(|| Series {
                label: label.clone(),
                points,
            })
        })
        .collect()
}

/// Draws `EXPERIMENT-live-versions-over-time.{fmt}` for each of `formats` into `dir` when any of
/// `runs` recorded version samples; returns the files written (none otherwise).
pub(super) fn plot_version_series(
    experiment: &str,
    runs: &[(String, &ResultRow)],
    dir: &Path,
    formats: &[&str],
) -> Result<Vec<PathBuf>, PlotError> {
    let lines = version_series(runs);
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
    // Linear: the first sample of every run is taken before anything was written (0 live), and
    // the figure's point is how far apart the curves end up.
    let y = AxisSpec {
        title: "live versions (older versions in chains)".into(),
        log: false,
        base: 10.0,
        categories: None,
        ordered: false,
    };
    let caption = format!("{experiment}: live versions over time (one line per run)");
    let mut written = Vec::new();
    for fmt in formats {
        let path = dir.join(format!(
            "{}-live-versions-over-time.{fmt}",
            file_stem(experiment)
        ));
        draw(&path, &caption, &x, &y, &lines, false)?;
        written.push(path);
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
        let lines = version_series(&runs);
        let labels: Vec<&str> = lines.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["si gc_interval_us=0", "si gc_interval_us=10000"]);
        let points: Vec<(f64, f64)> = lines[1].points.iter().map(|p| (p.0, p.1.median)).collect();
        assert_eq!(points, [(0.0, 0.0), (0.1, 4000.0), (0.2, 9000.0)]);

        let dir = std::env::temp_dir().join(format!("txbench-series-test-{}", std::process::id()));
        let files = plot_version_series("fig14", &runs, &dir, &["svg"]).unwrap();
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
        let none = plot_version_series("fig14", &runs[1..2], &dir, &["svg"]).unwrap();
        assert!(none.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
