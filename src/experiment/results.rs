//! Results files: one JSON object per run per line, appended as runs finish, so an interrupted
//! sweep keeps what it measured. A row is self-describing (experiment, point, repetition, the
//! flags of the run, txbench version and commit, machine, time, and the full run report), so
//! rows from several machines or job-array tasks can be merged and summarised without the
//! experiment file.
//!
//! The row fields are part of txbench's interface: `experiment`, `point` (pairs of axis and
//! value), `repetition`, `args` (flag to value), `txbench` (`version`, `commit`), `time` (UTC,
//! ISO 8601), `machine`, `report` (a `txbench run --format json` object).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, Write};
use std::path::Path;

/// The path [`ResultRow::metric`] answers with the concurrency-control abort ratio, a value
/// derived from the report rather than read from one field.
pub const CC_ABORT_RATIO: &str = "cc_abort_ratio";

/// The txbench build that measured a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// Crate version.
    pub version: String,
    /// Git commit txbench was built from (`unknown` when built without git).
    pub commit: String,
}

impl BuildInfo {
    /// This binary.
    pub fn current() -> Self {
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("TXBENCH_GIT_COMMIT").to_string(),
        }
    }
}

/// One run of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// The experiment's name.
    pub experiment: String,
    /// Each axis and this run's value on it.
    pub point: Vec<(String, String)>,
    /// Which repetition of the point (0-based).
    pub repetition: usize,
    /// The flags of the run (`txbench run --FLAG VALUE`; `true` for a switch).
    pub args: BTreeMap<String, String>,
    /// The build that measured it.
    pub txbench: BuildInfo,
    /// When the run finished, UTC, ISO 8601.
    pub time: String,
    /// The machine (cores, CPU model, memory).
    pub machine: serde_json::Value,
    /// The run's report, as `txbench run --format json` prints it.
    pub report: serde_json::Value,
}

impl ResultRow {
    /// The point's identity: `axis=value` pairs joined by spaces.
    pub fn point_key(&self) -> String {
        crate::metrics::report::point_label(&self.point)
    }

    /// A number from the report by path (`["latency_us", "p999"]`), or the derived
    /// [`CC_ABORT_RATIO`]. A last segment that names no field but joins field names with `+` is
    /// their sum (`["signals", "rr+ml"]`: SGPM's figures count RR and ML together); it is absent
    /// unless every part is present.
    pub fn metric(&self, path: &[&str]) -> Option<f64> {
        if path == [CC_ABORT_RATIO] {
            return self.cc_abort_ratio();
        }
        let (last, parents) = path.split_last()?;
        let mut v = &self.report;
        for p in parents {
            v = v.get(p)?;
        }
        match v.get(last) {
            Some(x) => x.as_f64(),
            None if last.contains('+') => last
                .split('+')
                .map(|part| v.get(part).and_then(|x| x.as_f64()))
                .sum(),
            None => None,
        }
    }

    /// Aborts for a concurrency-control reason (every reason but the workload's own, `user`)
    /// per attempt: the part of `abort_ratio` the protocol caused. Derived from `aborts`,
    /// `commits` and `aborts_by_reason` (which lists only reasons that occurred), so results
    /// files written before it existed have it too.
    fn cc_abort_ratio(&self) -> Option<f64> {
        let aborts = self.metric(&["aborts"])?;
        let commits = self.metric(&["commits"])?;
        let user = self.metric(&["aborts_by_reason", "user"]).unwrap_or(0.0);
        let attempts = aborts + commits;
        Some(if attempts > 0.0 {
            (aborts - user) / attempts
        } else {
            0.0
        })
    }

    /// The protocol the row measured.
    pub fn protocol(&self) -> &str {
        self.report
            .get("protocol")
            .and_then(|p| p.as_str())
            .unwrap_or("?")
    }
}

/// A results file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file cannot be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line that is not a results row.
    #[error("{path} line {line}: not a txbench results row: {message}")]
    Row {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// What reading a results file found.
#[derive(Debug, Default)]
pub struct ReadRows {
    /// The rows, in file order.
    pub rows: Vec<ResultRow>,
    /// A last line cut off mid-write (an interrupted sweep), skipped: its 1-based number.
    pub truncated_line: Option<usize>,
}

/// Reads every row of `path`. A last line without its newline that does not parse is what an
/// interrupted write leaves: it is skipped and reported in [`ReadRows::truncated_line`]; any other
/// bad line is an error naming it.
pub fn read_rows(path: &Path) -> Result<ReadRows, ResultsError> {
    let io = |source| ResultsError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::new(file);
    let mut out = ReadRows::default();
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(io)? == 0 {
            break;
        }
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<ResultRow>(&line) {
            Ok(row) => out.rows.push(row),
            Err(_) if !line.ends_with('\n') => out.truncated_line = Some(number),
            Err(e) => {
                return Err(ResultsError::Row {
                    path: path.display().to_string(),
                    line: number,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// The (point, repetition) pairs of `experiment` that `rows` already hold.
pub fn done(rows: &[ResultRow], experiment: &str) -> HashSet<(String, usize)> {
    rows.iter()
        .filter(|r| r.experiment == experiment)
        .map(|r| (r.point_key(), r.repetition))
        .collect()
}

/// Opens `path` for appending rows, creating it (and its directory). When the file ends in the
/// middle of a line (a write cut off by an interrupted sweep), that partial row is cut away first:
/// it measured nothing usable, and the next row must start on its own line.
pub fn open_for_append(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let complete = std::fs::read(path).ok().and_then(|b| {
        let end = b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
        (end < b.len()).then_some(end as u64)
    });
    if let Some(len) = complete {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)?
            .set_len(len)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// Appends one row as one line with one write, and flushes it to the file.
pub fn append_row(file: &mut std::fs::File, row: &ResultRow) -> std::io::Result<()> {
    let mut line = serde_json::to_string(row).map_err(std::io::Error::other)?;
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.flush()
}

/// Combines rows from several files in order, keeping the first of rows that measure the same
/// run (same experiment, point and repetition); returns the rows and how many duplicates were
/// dropped.
pub fn merge(files: Vec<Vec<ResultRow>>) -> (Vec<ResultRow>, usize) {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut dropped = 0;
    for row in files.into_iter().flatten() {
        if seen.insert((row.experiment.clone(), row.point_key(), row.repetition)) {
            out.push(row);
        } else {
            dropped += 1;
        }
    }
    (out, dropped)
}

/// `secs` since the Unix epoch as UTC ISO 8601 (`2026-11-24T02:10:00Z`).
pub fn utc_iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Now, as [`utc_iso8601`].
pub fn now_iso8601() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_iso8601(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_are_right_across_leap_years() {
        assert_eq!(utc_iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_iso8601(1_796_082_599), "2026-11-30T23:49:59Z");
    }

    #[test]
    fn a_metric_path_reads_a_field_or_sums_named_siblings() {
        let row: ResultRow = serde_json::from_value(serde_json::json!({
            "experiment": "e",
            "point": [],
            "repetition": 0,
            "args": {},
            "txbench": {"version": "0", "commit": "c"},
            "time": "t",
            "machine": {},
            "report": {"signals": {"ag": 5, "rr": 2, "ml": 3}, "abort_ratio": 0.5},
        }))
        .expect("a result row");
        assert_eq!(row.metric(&["abort_ratio"]), Some(0.5));
        assert_eq!(row.metric(&["signals", "ag"]), Some(5.0));
        assert_eq!(row.metric(&["signals", "rr+ml"]), Some(5.0));
        assert_eq!(row.metric(&["signals", "rr+nb"]), None);
        assert_eq!(row.metric(&["latency_us", "p99"]), None);
        assert_eq!(row.metric(&[]), None);
    }
}
