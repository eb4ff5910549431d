//! The time a run measured, stated where it is not the time asked for: the table's header names
//! `--duration`, and a run stopped early (its tables ran out of memory, `--table-memory-mb`)
//! measured less, so its throughput is over that shorter time and the header must say so.

use super::report::RunReport;

/// A run counts as cut short when it measured less than this share of the duration asked.
const SHORT: f64 = 0.95;

/// One line per run that measured noticeably less than its `--duration` (`silo measured 0.010 s
/// of the 0.2 s asked: ...`), or `None` when every run measured what was asked.
pub fn short_measurements(reports: &[RunReport]) -> Option<String> {
    let lines: Vec<String> = reports
        .iter()
        .filter_map(|r| {
            let asked = r.config.get("duration_s")?.as_f64()?;
            (r.measured_s < SHORT * asked).then_some((r, asked))
        })
        .map(|(r, asked)| {
            let at = if r.point.is_empty() {
                String::new()
            } else {
                format!(" ({})", super::report::point_label(&r.point))
            };
            format!(
                "{}{at} measured {:.3} s of the {asked} s asked: it stopped early (its warning \
                 says why), and its numbers cover those {:.3} s",
                r.protocol, r.measured_s, r.measured_s
            )
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A silo report over YCSB asked for `--duration 2` that measured `measured`.
    fn report(measured: Duration) -> RunReport {
        super::super::report::one_worker_report(&["-p", "silo", "-d", "2"], &[], measured)
    }

    #[test]
    fn a_run_cut_short_says_how_long_it_measured() {
        assert_eq!(short_measurements(&[report(Duration::from_secs(2))]), None);
        let line = short_measurements(&[report(Duration::from_millis(10))]).expect("cut short");
        assert!(
            line.starts_with("silo measured 0.010 s of the 2 s asked"),
            "{line}"
        );
    }
}
