//! `txbench plot`: the figures of a results file, as PNG and SVG. For each experiment, each metric
//! (throughput, abort ratio, p99.9 latency) against a swept parameter with one series per protocol
//! (or protocol variant), and p99.9 latency against throughput. Points are medians across
//! repetitions with min-max bars; an axis whose data spans decades is drawn on a log scale.
//!
//! Text is drawn with DejaVu Sans compiled into the binary (`assets/fonts`), registered with
//! plotters' `ab_glyph` backend, so plots render on a machine without fontconfig or any font.
//!
//! This file chooses what to draw (the rows, the x parameter, the figures of each experiment);
//! `plot_draw.rs` draws one figure, `plot_axis.rs` lays out its axes, `plot_style.rs` holds the
//! font, colours, markers and legend layout; `plot_breakdown.rs`, `plot_series.rs` and
//! `plot_caption.rs` draw the distribution, phase and time-series figures and the captions.

use super::plot_axis::{AxisSpec, spans_decades, x_title};
use super::plot_breakdown::{PointRows, plot_point};
use super::plot_caption;
use super::plot_draw::draw;
use super::plot_series::plot_time_series;
use super::plot_style::register;
use super::results::ResultRow;
use super::summary::{
    METRICS, Metric, Spread, metrics_for, other_axes, series_of, version_metrics,
};
use std::path::{Path, PathBuf};

/// Why plotting failed.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Nothing to plot.
    #[error("{0}")]
    NoData(String),
    /// The drawing backend failed (a file that cannot be written).
    #[error("drawing {path}: {message}")]
    Draw {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
}

/// One series: a label and points (x, y spread), sorted by x.
pub(super) struct Series {
    pub(super) label: String,
    pub(super) points: Vec<(f64, Spread)>,
}

/// The parameter to put on the x axis: `wanted`, or the first axis other than the protocol.
fn x_axis(rows: &[&ResultRow], wanted: Option<&str>) -> Result<String, PlotError> {
    let axes: Vec<String> = rows
        .iter()
        .flat_map(|r| other_axes(r).into_iter().map(|(k, _)| k))
        .fold(Vec::new(), |mut v, k| {
            if !v.contains(&k) {
                v.push(k);
            }
            v
        });
    match wanted {
        Some(w) if axes.iter().any(|a| a == w) => Ok(w.to_string()),
        Some(w) => Err(PlotError::NoData(format!(
            "invalid value '{w}' for --x: the swept parameters are {}",
            if axes.is_empty() {
                "none".to_string()
            } else {
                axes.join(", ")
            }
        ))),
        // A single point (a table such as MOCC's table 4): its protocols side by side, as bars
        // over one category named after the experiment.
        None => Ok(axes
            .into_iter()
            .next()
            .unwrap_or_else(|| SINGLE_POINT.to_string())),
    }
}

/// `name` as part of a file name: letters, digits and `_.+-` kept, every other run of characters
/// one `-` (`engine_core (threads=2)` -> `engine_core-threads-2`).
pub(super) fn file_stem(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || "_.+".contains(c) {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The x "parameter" of results that sweep nothing besides the protocol.
const SINGLE_POINT: &str = "experiment";

/// Row `r`'s value of the x parameter `x_name`.
fn x_value(r: &ResultRow, x_name: &str) -> Option<String> {
    if x_name == SINGLE_POINT {
        return Some(r.experiment.clone());
    }
    r.point
        .iter()
        .find(|(k, _)| k == x_name)
        .map(|(_, v)| v.clone())
}

/// Keeps the rows at every `AXIS=VALUE` of `select` (`txbench plot --select`); an axis the rows
/// do not sweep, or a value none of them has, is an error naming it.
pub fn select_rows<'a>(
    rows: &'a [ResultRow],
    select: &[String],
) -> Result<Vec<&'a ResultRow>, PlotError> {
    let mut kept: Vec<&ResultRow> = rows.iter().collect();
    for s in select {
        let Some((axis, value)) = s.split_once('=') else {
            return Err(PlotError::NoData(format!(
                "invalid value '{s}' for --select: expected AXIS=VALUE"
            )));
        };
        let values: Vec<&str> = rows
            .iter()
            .flat_map(|r| r.point.iter())
            .filter(|(k, _)| k == axis)
            .map(|(_, v)| v.as_str())
            .fold(Vec::new(), |mut v, x| {
                if !v.contains(&x) {
                    v.push(x);
                }
                v
            });
        if !values.contains(&value) {
            return Err(PlotError::NoData(format!(
                "invalid value '{s}' for --select: {}",
                if values.is_empty() {
                    format!("the results do not sweep {axis}")
                } else {
                    format!("{axis} takes {}", values.join(", "))
                }
            )));
        }
        kept.retain(|r| r.point.iter().any(|(k, v)| k == axis && v == value));
    }
    Ok(kept)
}

/// The plots of `rows`, written to `dir` as `EXPERIMENT-METRIC-vs-X.{png,svg}`,
/// `EXPERIMENT-p999-vs-throughput.{png,svg}`, and, at one value of the x parameter (`at`, by
/// default its largest or last), `EXPERIMENT-latency-cdf.{png,svg}` and
/// `EXPERIMENT-phases.{png,svg}` (drawn by `plot_breakdown`); returns the files
/// written.
pub fn plot_all(
    rows: &[ResultRow],
    dir: &Path,
    x: Option<&str>,
    at: Option<&str>,
    formats: &[&str],
) -> Result<Vec<PathBuf>, PlotError> {
    plot_selected(rows, &[], dir, x, at, formats)
}

/// [`plot_all`] of the rows at the points `select` names (`AXIS=VALUE`, see [`select_rows`]);
/// the figures' captions and file names carry the selection (`engine_core-threads-2-...`).
pub fn plot_selected(
    rows: &[ResultRow],
    select: &[String],
    dir: &Path,
    x: Option<&str>,
    at: Option<&str>,
    formats: &[&str],
) -> Result<Vec<PathBuf>, PlotError> {
    let kept = select_rows(rows, select)?;
    let renamed: Vec<ResultRow>;
    let rows: &[ResultRow] = if select.is_empty() {
        rows
    } else {
        renamed = kept
            .into_iter()
            .map(|r| {
                let mut r = r.clone();
                r.experiment = format!("{} ({})", r.experiment, select.join(", "));
                // A selected axis has one value left: it names the figure, not a series.
                r.point.retain(|(k, _)| {
                    !select
                        .iter()
                        .any(|s| s.split_once('=').is_some_and(|(a, _)| a == k))
                });
                r
            })
            .collect();
        &renamed
    };
    register();
    let mut written = Vec::new();
    let mut experiments: Vec<&str> = Vec::new();
    for r in rows {
        if !experiments.contains(&r.experiment.as_str()) {
            experiments.push(&r.experiment);
        }
    }
    for exp in experiments {
        let rows: Vec<&ResultRow> = rows.iter().filter(|r| r.experiment == exp).collect();
        let x_name = x_axis(&rows, x)?;
        let labels: Vec<String> =
            rows.iter()
                .filter_map(|r| x_value(r, &x_name))
                .fold(Vec::new(), |mut v, l| {
                    if !v.contains(&l) {
                        v.push(l);
                    }
                    v
                });
        let numeric: Option<Vec<f64>> = labels.iter().map(|l| l.parse::<f64>().ok()).collect();
        let position = |label: &str| -> f64 {
            match &numeric {
                Some(_) => label.parse().unwrap_or(f64::NAN),
                None => labels.iter().position(|l| l == label).unwrap_or(0) as f64,
            }
        };
        let x_spec = AxisSpec {
            title: x_title(&x_name),
            log: numeric
                .as_ref()
                .is_some_and(|v| spans_decades(v.iter().copied(), 8.0)),
            // Powers of two suit thread counts and sizes; loads in the thousands read better in
            // decades.
            base: if numeric
                .as_ref()
                .is_some_and(|v| v.iter().all(|x| *x >= 1000.0))
            {
                10.0
            } else {
                2.0
            },
            categories: numeric.is_none().then(|| labels.clone()),
            ordered: false,
        };
        // Series: protocol (variant), plus the other axes' values when there are more axes.
        let series_key = |r: &ResultRow| {
            let rest: Vec<String> = other_axes(r)
                .into_iter()
                .filter(|(k, _)| *k != x_name)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if rest.is_empty() {
                series_of(r)
            } else {
                format!("{} {}", series_of(r), rest.join(" "))
            }
        };
        let mut names: Vec<String> = Vec::new();
        for r in &rows {
            let k = series_key(r);
            if !names.contains(&k) {
                names.push(k);
            }
        }
        let collect = |metric: &Metric| -> Vec<Series> {
            names
                .iter()
                .map(|name| {
                    let mut points: Vec<(f64, Spread)> = labels
                        .iter()
                        .filter_map(|l| {
                            let values: Vec<f64> = rows
                                .iter()
                                .filter(|r| series_key(r) == *name)
                                .filter(|r| x_value(r, &x_name).as_ref() == Some(l))
                                .filter_map(|r| r.metric(metric.path))
                                .map(|v| v * metric.scale)
                                .collect();
                            Spread::of(&values).map(|s| (position(l), s))
                        })
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Series {
                        label: name.clone(),
                        points,
                    }
                })
                .collect()
        };
        let runs = plot_caption::runs_per_point(&rows);
        let with_bars = plot_caption::context(&rows, runs, true);
        // What the report shows, less the latencies and counts a figure adds nothing to:
        // throughput, abort ratio, p99.9, SGPM's signal counts for coroutine runs, and version
        // memory for multi-version runs.
        for metric in metrics_for(&rows)
            .into_iter()
            .filter(|m| !matches!(m.key, "p50" | "p99" | "reexecutions"))
            .chain(version_metrics(&rows))
        {
            let series = collect(metric);
            let ys = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1.median));
            let y_spec = AxisSpec {
                title: metric.title.to_string(),
                log: spans_decades(ys, 100.0)
                    && series
                        .iter()
                        .all(|s| s.points.iter().all(|p| p.1.min > 0.0)),
                base: 10.0,
                categories: None,
                ordered: false,
            };
            let caption = if x_name == SINGLE_POINT {
                format!("{exp}: {}\n{with_bars}", metric.title)
            } else {
                format!("{exp}: {} vs {x_name}\n{with_bars}", metric.title)
            };
            for fmt in formats {
                let path = dir.join(format!(
                    "{}-{}-vs-{x_name}.{fmt}",
                    file_stem(exp),
                    metric.key
                ));
                draw(&path, &caption, &x_spec, &y_spec, &series, true)?;
                written.push(path);
            }
        }
        // p99.9 against throughput: each series a curve through its points in x order.
        let tput = collect(&METRICS[0]);
        let p999 = collect(&METRICS[2]);
        let curves: Vec<Series> = tput
            .iter()
            .zip(&p999)
            .map(|(t, l)| Series {
                label: t.label.clone(),
                points: t
                    .points
                    .iter()
                    .filter_map(|(x, ts)| {
                        let ls = l.points.iter().find(|(lx, _)| lx == x)?.1;
                        Some((ts.median, ls))
                    })
                    .collect(),
            })
            .collect();
        let xs = curves.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let ys = curves
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1.median));
        let tx = AxisSpec {
            title: METRICS[0].title.into(),
            log: spans_decades(xs, 100.0),
            base: 10.0,
            categories: None,
            ordered: false,
        };
        let ty = AxisSpec {
            title: METRICS[2].title.into(),
            log: spans_decades(ys, 100.0),
            base: 10.0,
            categories: None,
            ordered: false,
        };
        let caption = format!(
            "{exp}: p99.9 latency vs throughput (one point per {x_name})\n{}",
            plot_caption::context(&rows, runs, false)
        );
        for fmt in formats {
            let path = dir.join(format!("{}-p999-vs-throughput.{fmt}", file_stem(exp)));
            draw(&path, &caption, &tx, &ty, &curves, false)?;
            written.push(path);
        }
        // The distribution and phase figures of one point: `at`, or the largest (last) value.
        let at_label = match at {
            Some(a) if labels.iter().any(|l| l == a) => a.to_string(),
            Some(a) => {
                return Err(PlotError::NoData(format!(
                    "invalid value '{a}' for --at: {exp} has {x_name} = {}",
                    labels.join(", ")
                )));
            }
            None => labels
                .iter()
                .max_by(|a, b| position(a).total_cmp(&position(b)))
                .cloned()
                .unwrap_or_default(),
        };
        let point = PointRows {
            experiment: exp,
            context: plot_caption::context(&rows, runs, false),
            at: format!("{x_name}={at_label}"),
            series: names
                .iter()
                .map(|name| {
                    let at_rows = rows
                        .iter()
                        .copied()
                        .filter(|r| series_key(r) == *name)
                        .filter(|r| x_value(r, &x_name).as_ref() == Some(&at_label))
                        .collect();
                    (name.clone(), at_rows)
                })
                .collect(),
        };
        written.extend(plot_point(&point, dir, formats)?);
        // Live versions over time: every run its own line, named by its series, its x value and
        // (with repetitions) its repetition.
        let repeated = rows.iter().any(|r| r.repetition > 0);
        let runs: Vec<(String, &ResultRow)> = rows
            .iter()
            .map(|r| {
                let mut label = series_key(r);
                if x_name != SINGLE_POINT
                    && let Some(v) = x_value(r, &x_name)
                {
                    label = format!("{label} {x_name}={v}");
                }
                if repeated {
                    label = format!("{label} rep {}", r.repetition);
                }
                (label, *r)
            })
            .collect();
        written.extend(plot_time_series(exp, &runs, dir, formats)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::plot_style::{SIZE, colour};

    use crate::experiment::results::BuildInfo;

    fn row(protocol: &str, threads: u32, rep: usize, tps: f64, p999: f64) -> ResultRow {
        ResultRow {
            experiment: "synthetic".into(),
            point: vec![
                ("threads".into(), threads.to_string()),
                ("protocol".into(), protocol.into()),
            ],
            repetition: rep,
            args: Default::default(),
            txbench: BuildInfo::current(),
            time: "2026-01-01T00:00:00Z".into(),
            machine: serde_json::json!({"cores": 2}),
            report: serde_json::json!({
                "protocol": protocol,
                "throughput_tps": tps,
                "abort_ratio": 0.01 * f64::from(threads),
                "latency_us": {"p999": p999, "p50": p999 / 10.0},
            }),
        }
    }

    /// Rows with a latency distribution and a phase breakdown, as every run now records them.
    fn row_with_breakdown(protocol: &str, threads: u32, rep: usize) -> ResultRow {
        let mut r = row(protocol, threads, rep, 1e5, 100.0 * f64::from(threads));
        let scale = 1.0 + protocol.len() as f64 / 10.0 + rep as f64 / 100.0;
        let cdf: Vec<[f64; 2]> = crate::metrics::latency_distribution(&{
            let mut h = crate::metrics::new_latency_histogram();
            for i in 1..=20_000u64 {
                h.record((i * i / 100 + 1000) * u64::from(threads)).unwrap();
            }
            h
        })
        .into_iter()
        .map(|[q, us]| [q, us * scale])
        .collect();
        let report = r.report.as_object_mut().unwrap();
        report.insert("latency_cdf_us".into(), serde_json::json!(cdf));
        let wait = (protocol.len() % 4) as f64 / 10.0;
        report.insert(
            "phase_share".into(),
            serde_json::json!({"execute": 0.5 - wait / 2.0, "commit": 0.2, "wait": wait,
                               "abort": 0.3 - wait / 2.0}),
        );
        r
    }

    #[test]
    fn distribution_and_phase_figures_render_and_many_series_stay_in_the_figure() {
        // 30 series: the legend needs two columns, and the figure widens for the second.
        let names: Vec<String> = (0..30).map(|i| format!("variant-{i:02}")).collect();
        let mut rows = Vec::new();
        for name in &names {
            for t in [1, 2] {
                for rep in 0..2 {
                    rows.push(row_with_breakdown(name, t, rep));
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("txbench-plot-dist-{}", std::process::id()));
        let files = plot_all(&rows, &dir, None, Some("2"), &["png", "svg"]).unwrap();
        assert_eq!(files.len(), 12, "6 figures x 2 formats: {files:?}");
        for name in ["latency-cdf", "phases", "throughput-vs-threads"] {
            let svg = std::fs::read_to_string(dir.join(format!("synthetic-{name}.svg"))).unwrap();
            let doc = roxmltree::Document::parse(&svg).expect("the SVG parses");
            let root = doc.root_element();
            let width: f64 = root.attribute("width").unwrap().parse().unwrap();
            let texts: Vec<(f64, &str)> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| Some((n.attribute("x")?.parse().ok()?, n.text()?.trim())))
                .collect();
            // Every series is named, and every label starts inside the figure.
            for n in &names {
                assert!(texts.iter().any(|(_, t)| t == n), "{name}: {n} missing");
            }
            assert!(texts.iter().all(|(x, _)| *x >= 0.0 && *x < width), "{name}");
            if name != "phases" {
                assert!(
                    width > f64::from(SIZE.0),
                    "{name}: the legend needs a second column"
                );
            }
        }
        let cdf = std::fs::read_to_string(dir.join("synthetic-latency-cdf.svg")).unwrap();
        assert!(
            cdf.contains("99.9%") && cdf.contains("threads=2"),
            "nines axis and point"
        );
        // One curve per series through the nines, not grouped bars: a polyline per series
        // (plotters draws a line series as one), and no filled rectangle in a series' colour.
        let doc = roxmltree::Document::parse(&cdf).unwrap();
        let lines = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .count();
        assert!(lines >= names.len(), "{lines} polylines for 30 series");
        let (r, g, b) = (colour(0).0, colour(0).1, colour(0).2);
        let series_fill = format!("fill=\"#{r:02X}{g:02X}{b:02X}\"");
        let bars = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect"))
            .filter(|n| {
                n.attribute("fill")
                    .is_some_and(|f| format!("fill=\"{f}\"").eq_ignore_ascii_case(&series_fill))
            })
            .count();
        assert_eq!(bars, 0, "the CDF draws no bars");
        // The caption's second line says what a point is.
        assert!(cdf.contains("median of 2 runs"), "caption context");
        let tput =
            std::fs::read_to_string(dir.join("synthetic-throughput-vs-threads.svg")).unwrap();
        assert!(
            tput.contains("median of 2 runs, bars min-max"),
            "caption context"
        );
        let phases = std::fs::read_to_string(dir.join("synthetic-phases.svg")).unwrap();
        assert!(
            phases.contains("share of time spent on transactions (%)")
                && phases.contains("wait (for")
        );
        let png = std::fs::metadata(dir.join("synthetic-phases.png"))
            .unwrap()
            .len();
        assert!(png > 10_000, "{png} bytes");
        // An --at value the x parameter never took names those it did.
        let e = plot_all(&rows, &dir, None, Some("3"), &["svg"]).unwrap_err();
        assert!(e.to_string().contains("threads = 1, 2"), "{e}");
        if std::env::var_os("TXBENCH_KEEP_PLOTS").is_none() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn categorical_points_draw_grouped_bars_and_select_narrows_the_rows() {
        let mut rows = Vec::new();
        for (i, p) in ["nocc", "silo", "tictoc"].iter().enumerate() {
            for t in [1, 2] {
                for case in ["ycsb-a", "ycsb-c"] {
                    for rep in 0..2 {
                        let mut r = row(p, t, rep, 1e5 * (3.0 - i as f64), 10.0);
                        r.point.insert(0, ("workload-case".into(), case.into()));
                        rows.push(r);
                    }
                }
            }
        }
        let dir =
            std::env::temp_dir().join(format!("txbench-plot-bars-test-{}", std::process::id()));
        let select = ["threads=2".to_string()];
        let files =
            plot_selected(&rows, &select, &dir, Some("workload-case"), None, &["svg"]).unwrap();
        let bars = dir.join("synthetic-threads-2-throughput-vs-workload-case.svg");
        assert!(files.contains(&bars), "{files:?}");
        let text = std::fs::read_to_string(&bars).unwrap();
        let doc = roxmltree::Document::parse(&text).expect("the SVG parses");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert!(texts.iter().any(|t| t.contains("(threads=2)")), "{texts:?}");
        assert!(
            texts.contains(&"ycsb-c") && texts.contains(&"tictoc"),
            "{texts:?}"
        );
        // One bar per series and category (2 x 3), plus the legend's three swatches, in the
        // series' colours.
        let blue = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect"))
            .filter(|n| n.attribute("fill") == Some("#0072B2"))
            .count();
        assert_eq!(blue, 3, "nocc's two bars and its legend swatch");
        // Results that sweep nothing but the protocol plot as one group of bars.
        let single: Vec<ResultRow> = rows
            .iter()
            .filter(|r| r.point[0].1 == "ycsb-a" && r.point[1].1 == "1")
            .map(|r| {
                let mut r = r.clone();
                r.point.retain(|(k, _)| k == "protocol");
                r
            })
            .collect();
        let files = plot_all(&single, &dir, None, None, &["svg"]).unwrap();
        assert!(
            files.contains(&dir.join("synthetic-throughput-vs-experiment.svg")),
            "{files:?}"
        );
        for bad in ["threads=3", "theta=1", "threads"] {
            let e =
                plot_selected(&rows, &[bad.to_string()], &dir, None, None, &["svg"]).unwrap_err();
            assert!(e.to_string().contains("--select"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn plots_render_as_png_and_parsable_svg() {
        let mut rows = Vec::new();
        for (i, p) in ["silo", "tictoc", "plor+dwa"].iter().enumerate() {
            for t in [1, 2, 4, 8, 16] {
                for rep in 0..3 {
                    let tps = 1e4 * f64::from(t) * (1.0 + i as f64) + 500.0 * rep as f64;
                    // Latency spans four decades: the y axis goes logarithmic.
                    let p999 = 10.0 * f64::from(t).powi(3) + rep as f64;
                    rows.push(row(p, t, rep, tps, p999));
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("txbench-plot-test-{}", std::process::id()));
        let files = plot_all(&rows, &dir, None, None, &["png", "svg"]).unwrap();
        assert_eq!(files.len(), 8, "4 figures x 2 formats");
        for f in &files {
            let len = std::fs::metadata(f).unwrap().len();
            assert!(len > 10_000, "{} has {len} bytes", f.display());
            if f.extension().is_some_and(|e| e == "svg") {
                let text = std::fs::read_to_string(f).unwrap();
                let doc = roxmltree::Document::parse(&text).expect("the SVG parses");
                let texts: Vec<&str> = doc
                    .descendants()
                    .filter(|n| n.has_tag_name("text"))
                    .filter_map(|n| n.text())
                    .map(str::trim)
                    .collect();
                assert!(
                    texts
                        .iter()
                        .any(|t| t.contains("(us)") || t.contains("(txn/s)") || t.contains("(%)")),
                    "{texts:?}"
                );
                assert!(texts.contains(&"plor+dwa"), "legend: {texts:?}");
            }
        }
        let svg = std::fs::read_to_string(dir.join("synthetic-p999-vs-threads.svg")).unwrap();
        assert!(
            svg.contains("\n10k\n") && svg.contains("\n1k\n"),
            "log ticks are powers of ten, in one style"
        );
        let _ = std::fs::remove_dir_all(&dir);
        // A parameter that was not swept is an error naming what was.
        let e = plot_all(&rows, &dir, Some("theta"), None, &["svg"]).unwrap_err();
        assert!(e.to_string().contains("threads"), "{e}");
    }
}
