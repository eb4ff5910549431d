//! The figures of one sweep point (by default the last value of the x parameter, else `--at`):
//! the latency distribution, one curve per series on a "nines" axis (0%, 90%, 99%, ... 99.999%:
//! the body and the tail alike, as PLOR's figure 6b and HdrHistogram's percentile plots show it),
//! and the stacked breakdown of worker time by phase (execute, wait, commit, abort: the report's
//! `phase_share`), one bar per series.
//!
//! Both read what every results row carries (`latency_cdf_us`, `phase_share`); rows from before
//! the distribution was recorded have none, and their distribution figure is left out.

use super::plot::{PlotError, Series, file_stem};
use super::plot_axis::{AxisSpec, spans_decades};
use super::plot_draw::{DrawResult, create_figure_file, draw, draw_error};
use super::plot_style::{FAMILY, LegendLayout, SIZE, colour};
use super::results::ResultRow;
use super::summary::Spread;
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// The phases of `phase_share`, in stacking order, with the words the legend uses.
const PHASES: [(&str, &str); 4] = [
    ("execute", "execute (committed attempts)"),
    ("commit", "commit (validate, lock, install)"),
    ("wait", "wait (for other transactions)"),
    ("abort", "abort (aborted attempts, backoff)"),
];

/// Tick labels of the nines axis, at positions 0..=5 (`-log10(1 - quantile)`).
const NINES: [&str; 6] = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"];

/// What the breakdown figures of one experiment are drawn from: the rows at the chosen point, by
/// series.
pub(super) struct PointRows<'a> {
    /// Experiment name (file names, captions).
    pub experiment: &'a str,
    /// `x=value` of the point, for captions and file names.
    pub at: String,
    /// The caption's second line ([`plot_caption::context`](super::plot_caption::context)).
    pub context: String,
    /// Series names, in legend order, each with its rows (its repetitions) at the point.
    pub series: Vec<(String, Vec<&'a ResultRow>)>,
}

/// Draws the latency distribution and the phase breakdown of `point` in `formats` into `dir`;
/// returns the files written.
pub(super) fn plot_point(
    point: &PointRows<'_>,
    dir: &Path,
    formats: &[&str],
) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    let curves = distribution_series(point);
    if curves.iter().any(|s| !s.points.is_empty()) {
        let ys = curves
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1.median));
        let y = AxisSpec {
            title: "latency (us)".into(),
            log: spans_decades(ys, 10.0)
                && curves
                    .iter()
                    .all(|s| s.points.iter().all(|p| p.1.min > 0.0)),
            base: 10.0,
            categories: None,
            ordered: false,
        };
        let x = AxisSpec {
            title: "percentile (latency at or below)".into(),
            log: false,
            base: 10.0,
            categories: Some(NINES.iter().map(|s| s.to_string()).collect()),
            ordered: true,
        };
        let caption = format!(
            "{}: latency distribution at {}\n{}",
            point.experiment, point.at, point.context
        );
        for fmt in formats {
            let path = dir.join(format!("{}-latency-cdf.{fmt}", file_stem(point.experiment)));
            draw(&path, &caption, &x, &y, &curves, false)?;
            written.push(path);
        }
    }
    let bars = phase_bars(point);
    if !bars.is_empty() {
        let caption = format!(
            "{}: where worker time goes at {}",
            point.experiment, point.at
        );
        for fmt in formats {
            let path = dir.join(format!("{}-phases.{fmt}", file_stem(point.experiment)));
            draw_phases(&path, &caption, &bars)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Per series, the distribution's points (nines position, spread of latency across the
/// repetitions); the maximum (quantile 1) has no place on the nines axis and is left out.
fn distribution_series(point: &PointRows<'_>) -> Vec<Series> {
    point
        .series
        .iter()
        .map(|(label, rows)| {
            let dists: Vec<Vec<(f64, f64)>> = rows.iter().map(|r| distribution(r)).collect();
            let longest = dists.iter().map(Vec::len).max().unwrap_or(0);
            let points = (0..longest)
                .filter_map(|i| {
                    let q = dists.iter().find_map(|d| d.get(i))?.0;
                    let values: Vec<f64> = dists
                        .iter()
                        .filter_map(|d| d.get(i))
                        .filter(|p| p.0 == q)
                        .map(|p| p.1)
                        .collect();
                    Some((-(1.0 - q).log10(), Spread::of(&values)?))
                })
                .collect();
            Series {
                label: label.clone(),
                points,
            }
        })
        .collect()
}

/// A row's `latency_cdf_us` as (quantile, us) below quantile 1.
fn distribution(row: &ResultRow) -> Vec<(f64, f64)> {
    row.report
        .get("latency_cdf_us")
        .and_then(|v| v.as_array())
        .map(|points| {
            points
                .iter()
                .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                .filter(|(q, _)| *q < 1.0)
                .collect()
        })
        .unwrap_or_default()
}

/// One bar: a series and its median share (percent) of each phase across repetitions.
struct PhaseBar {
    label: String,
    percent: [f64; 4],
}

fn phase_bars(point: &PointRows<'_>) -> Vec<PhaseBar> {
    point
        .series
        .iter()
        .filter_map(|(label, rows)| {
            let mut percent = [0.0; 4];
            for (slot, (phase, _)) in percent.iter_mut().zip(PHASES) {
                let values: Vec<f64> = rows
                    .iter()
                    .filter_map(|r| r.metric(&["phase_share", phase]))
                    .collect();
                *slot = Spread::of(&values)?.median * 100.0;
            }
            Some(PhaseBar {
                label: label.clone(),
                percent,
            })
        })
        .collect()
}

/// Draws the stacked horizontal bars to `path` (PNG or SVG by extension). The figure grows
/// taller with the number of bars so that each keeps a legible height.
fn draw_phases(path: &Path, caption: &str, bars: &[PhaseBar]) -> Result<(), PlotError> {
    let fail = |e: &dyn std::fmt::Display| draw_error(path, e);
    create_figure_file(path)?;
    let height = SIZE.1.max(160 + 26 * bars.len() as u32);
    if path.extension().is_some_and(|e| e == "svg") {
        let root = SVGBackend::new(path, (SIZE.0, height)).into_drawing_area();
        draw_phases_on(&root, caption, bars).map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    } else {
        let root = BitMapBackend::new(path, (SIZE.0, height)).into_drawing_area();
        draw_phases_on(&root, caption, bars).map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(())
}

fn draw_phases_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    caption: &str,
    bars: &[PhaseBar],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let (width, _) = root.dim_in_pixel();
    let (head, body) = root.split_vertically(48);
    head.draw(&Text::new(
        caption.to_string(),
        (width as i32 / 2, 14),
        (FAMILY, 24)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    let legend = LegendLayout::for_labels(PHASES.iter().map(|p| p.1), body.dim_in_pixel().1);
    let (plot_area, legend_area) = body.split_horizontally(width - legend.width());
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0);
    let n = bars.len() as u32;
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(16)
        .margin_top(8)
        .x_label_area_size(56)
        .y_label_area_size((longest as u32 * 9 + 24).clamp(60, width / 3))
        // A segmented range has a segment for its end value too: `0..n - 1` holds n bars.
        .build_cartesian_2d(
            0f64..100f64,
            (0u32..n.saturating_sub(1).max(1)).into_segmented(),
        )?;
    // Bar i is drawn from the top: the first series first, as in the legend of the other
    // figures.
    let label_of = |v: &SegmentValue<u32>| match v {
        SegmentValue::CenterOf(i) if *i < n => bars[(n - 1 - i) as usize].label.clone(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("share of time spent on transactions (%)")
        .x_labels(11)
        .x_label_formatter(&|v: &f64| format!("{v:.0}"))
        .y_labels(bars.len().max(1))
        .y_label_formatter(&label_of)
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 18))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    for (row, bar) in bars.iter().enumerate() {
        let slot = n - 1 - row as u32;
        let mut left = 0.0;
        for (phase, pct) in bar.percent.iter().enumerate() {
            if *pct <= 0.0 {
                continue;
            }
            let right = (left + pct).min(100.0);
            let mut rect = Rectangle::new(
                [
                    (left, SegmentValue::Exact(slot)),
                    (right, SegmentValue::Exact(slot + 1)),
                ],
                colour(phase).filled(),
            );
            // A gap between neighbouring bars.
            rect.set_margin(3, 3, 0, 0);
            chart.draw_series(std::iter::once(rect))?;
            left = right;
        }
    }
    for (i, (_, words)) in PHASES.iter().enumerate() {
        let (x, y) = legend.origin(i);
        legend_area.draw(&Rectangle::new(
            [(x + 6, y - 7), (x + 28, y + 7)],
            colour(i).filled(),
        ))?;
        legend_area.draw(&Text::new(
            words.to_string(),
            (x + 38, y - 8),
            (FAMILY, 15).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}
