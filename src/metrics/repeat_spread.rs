//! With `--repeat`, the table's median cells carry the spread of the runs behind them: the
//! lowest and the highest throughput and p99.9, beside the median, so that a reader sees at once
//! whether two protocols' medians differ by more than their own runs do.

/// The min-max of a protocol's repeated runs at one point ([`medians`](super::report::medians)
/// sets it when there is more than one run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeatSpread {
    /// How many runs.
    pub runs: usize,
    /// Lowest and highest throughput, txn/s.
    pub throughput_tps: (f64, f64),
    /// Lowest and highest p99.9 latency, us, over the runs that committed (`None` when none
    /// did).
    pub p999_us: Option<(f64, f64)>,
}

impl RepeatSpread {
    /// The spread of `runs` (throughput, and p99.9 of those with commits); `None` for fewer
    /// than two runs.
    pub fn of<'a>(
        runs: impl Iterator<Item = &'a super::report::RunReport> + Clone,
    ) -> Option<Self> {
        let n = runs.clone().count();
        if n < 2 {
            return None;
        }
        let range = |v: &mut dyn Iterator<Item = f64>| {
            v.fold(None, |acc: Option<(f64, f64)>, x| {
                Some(acc.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))))
            })
        };
        Some(RepeatSpread {
            runs: n,
            throughput_tps: range(&mut runs.clone().map(|r| r.throughput_tps))?,
            p999_us: range(&mut runs.filter(|r| r.commits > 0).map(|r| r.latency_us.p999)),
        })
    }
}

/// A table cell: `median [min-max]`, the range in three significant digits with k/M (the median
/// keeps the column's precision), so that it fits beside the median.
pub fn with_range(median: &str, range: Option<(f64, f64)>) -> String {
    match range {
        Some((lo, hi)) => format!("{median} [{}-{}]", compact(lo), compact(hi)),
        None => median.to_string(),
    }
}

/// A throughput cell: `median [min-max]`, all three in three significant digits with k/M, the
/// range's suffix written once when its ends share it (`911k [904-914k]`), so that the column
/// stays narrow at millions of transactions per second (the default table fits 100 columns).
pub fn compact_with_range(median: f64, range: Option<(f64, f64)>) -> String {
    let Some((lo, hi)) = range else {
        return format!("{median:.0}");
    };
    let (lo, hi) = (compact(lo), compact(hi));
    let suffix = |s: &str| s.chars().last().filter(|c| c.is_ascii_alphabetic());
    let lo = match (suffix(&lo), suffix(&hi)) {
        (Some(a), Some(b)) if a == b => lo[..lo.len() - 1].to_string(),
        _ => lo,
    };
    format!("{} [{lo}-{hi}]", compact(median))
}

/// `v` in three significant digits, with k or M past ten thousand (`412k`, `1.23M`, `98.7`).
pub fn compact(v: f64) -> String {
    let (x, suffix) = match v.abs() {
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e4 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_numbers_keep_three_digits() {
        assert_eq!(compact(412_345.0), "412k");
        assert_eq!(compact(12_345.0), "12.3k");
        assert_eq!(compact(1_234_567.0), "1.23M");
        assert_eq!(compact(98.76), "98.8");
        assert_eq!(compact(1234.0), "1234");
        assert_eq!(compact(2.5049), "2.50");
        assert_eq!(with_range("100", Some((90.0, 110.0))), "100 [90.0-110]");
        assert_eq!(with_range("100", None), "100");
        assert_eq!(
            compact_with_range(911_361.0, Some((904_000.0, 914_000.0))),
            "911k [904-914k]"
        );
        assert_eq!(
            compact_with_range(1_172_444.0, Some((998_000.0, 1_180_000.0))),
            "1.17M [998k-1.18M]"
        );
        assert_eq!(compact_with_range(1_172_444.0, None), "1172444");
    }
}
