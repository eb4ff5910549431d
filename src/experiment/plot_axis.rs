//! A figure's axes: titles with units, log scales where the data spans decades, and tick labels
//! in one style.

/// An axis: its title with unit, whether it is logarithmic, and tick labels for categorical
/// values.
pub(super) struct AxisSpec {
    pub(super) title: String,
    pub(super) log: bool,
    /// Base of the log scale (2 for parameters such as thread counts, 10 for measurements).
    pub(super) base: f64,
    /// Labels of a categorical axis, at positions 0, 1, ...
    pub(super) categories: Option<Vec<String>>,
    /// The categories have an order a line may follow (the latency distribution's nines): the
    /// series are drawn as lines through them, not as grouped bars.
    pub(super) ordered: bool,
}

impl AxisSpec {
    pub(super) fn to_plot(&self, v: f64) -> f64 {
        if self.log { v.log(self.base) } else { v }
    }

    pub(super) fn label(&self, v: f64) -> String {
        if let Some(c) = &self.categories {
            let i = v.round();
            return if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < c.len() {
                c[i as usize].clone()
            } else {
                String::new()
            };
        }
        if self.log {
            let r = v.round();
            if (v - r).abs() > 1e-6 {
                return String::new();
            }
            return log_tick(self.base, r as i32);
        }
        human(v)
    }
}

/// The tick at `base^exponent` on a log axis, every tick in one style: decades with SI
/// suffixes from a thousand on (`100`, `1k`, `10k`, `1M`; `0.1` below one), powers of two whole
/// up to 512 and then in binary units (`512`, `1Ki`, `2Ki`, `1Mi`).
fn log_tick(base: f64, exponent: i32) -> String {
    if base == 2.0 && exponent >= 0 {
        let (e, unit) = match exponent {
            0..10 => (exponent, ""),
            10..20 => (exponent - 10, "Ki"),
            20..30 => (exponent - 20, "Mi"),
            _ => (exponent - 30, "Gi"),
        };
        return format!("{}{unit}", 2f64.powi(e));
    }
    if base == 10.0 && exponent >= 0 {
        let (e, unit) = match exponent {
            0..3 => (exponent, ""),
            3..6 => (exponent - 3, "k"),
            6..9 => (exponent - 6, "M"),
            _ => (exponent - 9, "G"),
        };
        return format!("{}{unit}", 10f64.powi(e));
    }
    human(base.powi(exponent))
}

/// A number as a short tick label: 1.5k, 20M, 0.25.
fn human(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x.fract().abs() < 1e-9 || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    format!("{s}{suffix}")
}

/// Whether `values` (all positive) span enough to need a log scale.
pub(super) fn spans_decades(values: impl Iterator<Item = f64> + Clone, ratio: f64) -> bool {
    let min = values.clone().fold(f64::INFINITY, f64::min);
    let max = values.fold(f64::NEG_INFINITY, f64::max);
    min > 0.0 && max / min >= ratio
}
/// The x axis title for a parameter: its name with its unit where it has one.
pub(super) fn x_title(name: &str) -> String {
    match name {
        "threads" => "threads (workers)".into(),
        "theta" => "zipfian theta (skew)".into(),
        "records" => "records (table size)".into(),
        "ops" => "operations per transaction".into(),
        "payload" => "payload (bytes)".into(),
        "duration" => "duration (s)".into(),
        "read-ratio" => "read ratio".into(),
        "writes" => "writes per transaction".into(),
        "warehouses" => "warehouses".into(),
        "read-phase-extension" => "read-phase extension (ns)".into(),
        "rate" => "offered load (txn/s)".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_ticks_share_one_style() {
        let axis = AxisSpec {
            title: String::new(),
            log: true,
            base: 10.0,
            categories: None,
            ordered: false,
        };
        let ticks: Vec<String> = (0..8).map(|e| axis.label(f64::from(e))).collect();
        assert_eq!(ticks, ["1", "10", "100", "1k", "10k", "100k", "1M", "10M"]);
        let axis = AxisSpec { base: 2.0, ..axis };
        let ticks: Vec<String> = (0..12).map(|e| axis.label(f64::from(e))).collect();
        assert_eq!(
            ticks,
            [
                "1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1Ki", "2Ki"
            ]
        );
    }
}
