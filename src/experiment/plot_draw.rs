//! Drawing one figure to a PNG or SVG file: caption, axes, series with their spread, legend.

use super::plot::{PlotError, Series};
use super::plot_axis::AxisSpec;
use super::plot_style::{FAMILY, LegendLayout, SIZE, colour, marker_at};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// The error for the figure at `path` that could not be written or drawn: `e`, in its own words.
pub(super) fn draw_error(path: &Path, e: &dyn std::fmt::Display) -> PlotError {
    PlotError::Draw {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Creates the file of the figure at `path`, and its folder, before anything is drawn: a file
/// that cannot be written is then reported as the system words it (the drawing backend's errors
/// are debug dumps).
pub(super) fn create_figure_file(path: &Path) -> Result<(), PlotError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| draw_error(path, &e))?;
    }
    std::fs::File::create(path).map_err(|e| draw_error(path, &e))?;
    Ok(())
}

/// What drawing on a backend `DB` returns.
pub(super) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws one figure to `path` (PNG or SVG by extension).
pub(super) fn draw(
    path: &Path,
    caption: &str,
    x: &AxisSpec,
    y: &AxisSpec,
    series: &[Series],
    bars: bool,
) -> Result<(), PlotError> {
    let fail = |e: &dyn std::fmt::Display| draw_error(path, e);
    create_figure_file(path)?;
    let svg = path.extension().is_some_and(|e| e == "svg");
    // As `draw_on` splits it: the caption (and in a bitmap the y title) above the body.
    let body_height = SIZE.1 - head_height(caption, svg);
    let legend = LegendLayout::for_labels(series.iter().map(|s| s.label.as_str()), body_height);
    let size = (SIZE.0 + legend.extra_width(), SIZE.1);
    if svg {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw_on(&root, caption, x, y, series, bars, true).map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    } else {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        draw_on(&root, caption, x, y, series, bars, false).map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(())
}

/// Pixels above the chart: the caption's title, its second line when it has one (after a
/// newline: the workload and what a point is), and in a bitmap, which cannot rotate text, the
/// y axis title below them.
fn head_height(caption: &str, svg: bool) -> u32 {
    let caption_height = if caption.contains('\n') { 68 } else { 48 };
    caption_height + if svg { 0 } else { 24 }
}

#[allow(clippy::too_many_arguments)]
fn draw_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    caption: &str,
    x: &AxisSpec,
    y: &AxisSpec,
    series: &[Series],
    bars: bool,
    rotate_y_title: bool,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let all = series.iter().flat_map(|s| s.points.iter());
    let xs: Vec<f64> = all.clone().map(|p| x.to_plot(p.0)).collect();
    let ys: Vec<f64> = all
        .flat_map(|p| [p.1.min, p.1.max, p.1.median])
        .map(|v| y.to_plot(v))
        .filter(|v| v.is_finite())
        .collect();
    let range = |v: &[f64], log: bool, from_zero: bool| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return 0.0..1.0;
        }
        if log {
            return (lo.floor() - 0.05)..(hi.ceil() + 0.05);
        }
        let lo = if from_zero { lo.min(0.0) } else { lo };
        let pad = ((hi - lo) * 0.06).max(1e-9);
        (if from_zero && lo >= 0.0 {
            0.0
        } else {
            lo - pad
        })..(hi + pad)
    };
    // A categorical x axis (workload cases, a single point) draws grouped bars, not lines: its
    // categories have no order for a line to follow.
    let grouped = x.categories.is_some() && !x.ordered;
    let x_range = if x.categories.is_some() {
        -0.5..(xs.iter().copied().fold(0.0, f64::max) + 0.5)
    } else {
        let r = range(&xs, x.log, false);
        if x.log {
            r
        } else {
            (r.start - 0.02 * (r.end - r.start))..r.end
        }
    };
    let y_range = range(&ys, y.log, !y.log);
    let (x_labels, y_labels) = (
        match &x.categories {
            Some(c) => c.len(),
            None if x.log => (x_range.end - x_range.start).ceil() as usize + 1,
            None => 8,
        },
        if y.log {
            (y_range.end - y_range.start).ceil() as usize + 1
        } else {
            8
        },
    );
    // The caption, and for a bitmap (which cannot rotate text) the y title, above the chart.
    let (head, body) = root.split_vertically(head_height(caption, rotate_y_title));
    let width = root.dim_in_pixel().0;
    let (title, context) = caption.split_once('\n').unwrap_or((caption, ""));
    head.draw(&Text::new(
        title.to_string(),
        (width as i32 / 2, 14),
        (FAMILY, 24)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    if !context.is_empty() {
        head.draw(&Text::new(
            context.to_string(),
            (width as i32 / 2, 44),
            (FAMILY, 15)
                .into_font()
                .color(&RGBColor(60, 60, 60))
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
    }
    if !rotate_y_title {
        head.draw(&Text::new(
            y.title.clone(),
            (16, head_height(caption, true) as i32 + 2),
            (FAMILY, 18).into_font().color(&BLACK),
        ))?;
    }
    // The legend goes right of the chart, where it cannot hide a point, in as many columns as
    // its entries need (the figure widens for them, the chart keeps its size).
    let legend = LegendLayout::for_labels(
        series.iter().map(|s| s.label.as_str()),
        body.dim_in_pixel().1,
    );
    let (plot_area, legend_area) = body.split_horizontally(width - legend.width());
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(16)
        .margin_top(8)
        .x_label_area_size(56)
        .y_label_area_size(if rotate_y_title { 96 } else { 72 })
        .build_cartesian_2d(x_range, y_range.clone())?;
    // A linear axis of whole numbers (thread counts, warehouses) labels whole ticks only: no
    // "1.5 threads" between 1 and 2.
    let whole = !x.log && x.categories.is_none() && xs.iter().all(|v| v.fract() == 0.0);
    let x_fmt = |v: &f64| {
        if whole && v.fract().abs() > 1e-9 {
            String::new()
        } else {
            x.label(*v)
        }
    };
    let y_fmt = |v: &f64| y.label(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x.title.as_str())
        .x_labels(x_labels.max(2))
        .y_labels(y_labels.max(2))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FAMILY, 16))
        .axis_desc_style((FAMILY, 18))
        .light_line_style(RGBColor(235, 235, 235));
    if rotate_y_title {
        mesh.y_desc(y.title.as_str());
    }
    if grouped {
        mesh.disable_x_mesh();
    }
    mesh.draw()?;
    if grouped {
        // Series i's bar sits at its share of the category's middle 80%; bars start at zero, or
        // at the bottom of a log axis.
        let n = series.len().max(1) as f64;
        let width = 0.8 / n;
        let floor = y_range.start;
        for (i, s) in series.iter().enumerate() {
            let c = colour(i);
            let offset = -0.4 + width * (i as f64 + 0.5);
            chart.draw_series(s.points.iter().map(|(px, sp)| {
                let centre = *px + offset;
                Rectangle::new(
                    [
                        (centre - width * 0.45, floor),
                        (centre + width * 0.45, y.to_plot(sp.median)),
                    ],
                    c.filled(),
                )
            }))?;
            if bars {
                chart.draw_series(s.points.iter().filter(|(_, sp)| sp.n > 1).map(|(px, sp)| {
                    ErrorBar::new_vertical(
                        *px + offset,
                        y.to_plot(sp.min),
                        y.to_plot(sp.median),
                        y.to_plot(sp.max),
                        ShapeStyle::from(&BLACK).stroke_width(1),
                        (width * 200.0).clamp(3.0, 8.0) as u32,
                    )
                }))?;
            }
        }
    }
    for (i, s) in series.iter().enumerate().filter(|_| !grouped) {
        let c = colour(i);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|(px, sp)| (x.to_plot(*px), y.to_plot(sp.median)))
            .collect();
        let style = ShapeStyle::from(&c).stroke_width(2);
        chart.draw_series(LineSeries::new(pts.clone(), style))?;
        chart.draw_series(pts.iter().map(|&p| marker_at(i, p, c)))?;
        if bars {
            chart.draw_series(s.points.iter().filter(|(_, sp)| sp.n > 1).map(|(px, sp)| {
                ErrorBar::new_vertical(
                    x.to_plot(*px),
                    y.to_plot(sp.min),
                    y.to_plot(sp.median),
                    y.to_plot(sp.max),
                    ShapeStyle::from(&c).stroke_width(1),
                    8,
                )
            }))?;
        }
    }
    for (i, s) in series.iter().enumerate() {
        let c = colour(i);
        let (x, y) = legend.origin(i);
        if grouped {
            legend_area.draw(&Rectangle::new(
                [(x + 8, y - 7), (x + 26, y + 7)],
                c.filled(),
            ))?;
        } else {
            legend_area.draw(&PathElement::new(
                vec![(x + 4, y), (x + 30, y)],
                ShapeStyle::from(&c).stroke_width(2),
            ))?;
            legend_area.draw(&marker_at(i, (x + 17, y), c))?;
        }
        legend_area.draw(&Text::new(
            s.label.clone(),
            (x + 38, y - 8),
            (FAMILY, 15).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}
