//! How a figure looks: the embedded font, the series' colours and markers, the image size and
//! the legend's layout.

use plotters::element::Drawable;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::sync::Once;

/// The font every text of a plot uses: DejaVu Sans, free to redistribute (its licence is next to
/// it in `assets/fonts`).
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// The family name the plots ask for.
pub(super) const FAMILY: &str = "sans-serif";

pub(super) fn register() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The font is compiled in and known to parse (a test renders with it).
        if register_font(FAMILY, FontStyle::Normal, FONT).is_err() {
            panic!("the embedded font does not parse");
        }
    });
}

/// Colours that stay apart for readers with common colour-vision deficiencies (Okabe-Ito's
/// blue, vermillion and green, with its sky blue, orange and pink replaced by darker hues), each
/// at least [`MIN_CONTRAST`] against the white background; then plotters' palette, darkened to
/// that contrast, for more series.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(170, 68, 136),
    RGBColor(51, 34, 136),
    RGBColor(160, 110, 0),
    RGBColor(0, 0, 0),
    RGBColor(120, 120, 120),
];

/// The least contrast ratio a series' colour has against white: WCAG 2's 3:1 for graphical
/// objects, so that thin lines and markers stay visible.
pub(super) const MIN_CONTRAST: f64 = 3.0;

pub(super) fn colour(i: usize) -> RGBColor {
    if i < COLOURS.len() {
        COLOURS[i]
    } else {
        let c = Palette99::pick(i).to_rgba();
        let mut c = RGBColor(c.0, c.1, c.2);
        // Darken by a tenth at a time: the hue stays, the contrast rises.
        while contrast_on_white(c) < MIN_CONTRAST {
            c = RGBColor(
                (f64::from(c.0) * 0.9) as u8,
                (f64::from(c.1) * 0.9) as u8,
                (f64::from(c.2) * 0.9) as u8,
            );
        }
        c
    }
}

/// The WCAG 2 contrast ratio of `c` against white (1 to 21).
pub(super) fn contrast_on_white(c: RGBColor) -> f64 {
    let channel = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let luminance = 0.2126 * channel(c.0) + 0.7152 * channel(c.1) + 0.0722 * channel(c.2);
    1.05 / (luminance + 0.05)
}

/// Image size in pixels.
pub(super) const SIZE: (u32, u32) = (1000, 640);
/// Series `i`'s marker at `p`: five shapes in turn, so that series stay apart without colour.
pub(super) fn marker_at<DB: DrawingBackend, C: Clone + 'static>(
    i: usize,
    p: C,
    c: RGBColor,
) -> DynElement<'static, DB, C>
where
    Circle<C, i32>: Drawable<DB>,
    TriangleMarker<C, i32>: Drawable<DB>,
    Cross<C, i32>: Drawable<DB>,
{
    match i % 5 {
        0 => Circle::new(p, 5, c.filled()).into_dyn(),
        1 => TriangleMarker::new(p, 6, c.filled()).into_dyn(),
        2 => Cross::new(p, 5, ShapeStyle::from(&c).stroke_width(2)).into_dyn(),
        3 => Circle::new(p, 5, ShapeStyle::from(&c).stroke_width(2)).into_dyn(),
        _ => TriangleMarker::new(p, 6, ShapeStyle::from(&c).stroke_width(2)).into_dyn(),
    }
}
/// Where a figure's legend entries go: right of the chart, one entry per line, in columns of as
/// many lines as the figure's height holds (so that 30 or 60 series stay legible rather than
/// running off the bottom), the figure widening by a column for each column past the first.
pub(super) struct LegendLayout {
    /// Entries per column.
    rows: usize,
    /// Columns.
    columns: usize,
    /// Pixels per column.
    column_width: u32,
}

/// Pixels per legend line.
const LEGEND_LINE: u32 = 24;

impl LegendLayout {
    /// The layout for `labels` in a legend area `height` pixels high.
    pub(super) fn for_labels<'a>(labels: impl Iterator<Item = &'a str>, height: u32) -> Self {
        let (mut n, mut longest) = (0usize, 0usize);
        for l in labels {
            n += 1;
            longest = longest.max(l.chars().count());
        }
        let rows = ((height.saturating_sub(LEGEND_LINE) / LEGEND_LINE) as usize).max(1);
        LegendLayout {
            rows,
            columns: n.div_ceil(rows).max(1),
            column_width: (longest as u32 * 9 + 56).clamp(110, SIZE.0 / 3),
        }
    }

    /// The legend's width.
    pub(super) fn width(&self) -> u32 {
        self.columns as u32 * self.column_width
    }

    /// How much wider than [`SIZE`] the figure is for columns past the first.
    pub(super) fn extra_width(&self) -> u32 {
        (self.columns as u32 - 1) * self.column_width
    }

    /// Entry `i`'s left end and vertical centre in the legend area.
    pub(super) fn origin(&self, i: usize) -> (i32, i32) {
        let (column, row) = (i / self.rows, i % self.rows);
        (
            (column as u32 * self.column_width) as i32,
            (LEGEND_LINE + LEGEND_LINE * row as u32) as i32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_colour_stands_out_on_white() {
        for i in 0..100 {
            let c = colour(i);
            assert!(
                contrast_on_white(c) >= MIN_CONTRAST,
                "series {i}: {c:?} has contrast {:.2}",
                contrast_on_white(c)
            );
        }
        // The first eight stay apart from each other.
        for i in 0..8 {
            for j in 0..i {
                assert_ne!(colour(i), colour(j));
            }
        }
    }
}
