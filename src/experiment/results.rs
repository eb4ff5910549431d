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
use std::io::{BufRead, Read, Write};
use std::path::Path;

/// The path [`ResultRow::metric`] answers with the concurrency-control abort ratio, a value
/// derived from the report rather than read from one field.
pub const CC_ABORT_RATIO: &str = "cc_abort_ratio";

/// The txbench build that measured a row (defined with the reports, which carry it too).
pub use crate::metrics::build_info::BuildInfo;

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

/// The longest line a results file may hold. A row is a few kilobytes (tens with per-type and
/// version-sample tables); a longer line is not a row, and reading it whole would take memory
/// without bound (`/dev/zero` is one endless line).
pub const MAX_ROW_BYTES: usize = 16 << 20;

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
    /// The path names a device, FIFO, directory or socket: not a file txbench wrote.
    #[error("{path}: not a regular file ({kind}); txbench reads only plain files")]
    NotAFile {
        /// The path.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// A line longer than [`MAX_ROW_BYTES`].
    #[error(
        "{path} line {line}: longer than {} MiB, not a txbench results row",
        MAX_ROW_BYTES >> 20
    )]
    LineTooLong {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
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

/// What a path that is not a regular file is, in words.
fn file_kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a plain file"
    }
}

/// Opens `path` for reading when it is a regular file (symbolic links followed): a device or a
/// FIFO could feed bytes forever or block forever, so it is refused before anything is read.
/// The check is made on the opened file, so the path cannot change between check and read; a
/// FIFO is opened without blocking for a writer.
pub fn open_regular(path: &Path) -> Result<std::fs::File, ResultsError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| ResultsError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let kind = file.metadata().map_err(io)?.file_type();
    if !kind.is_file() {
        return Err(ResultsError::NotAFile {
            path: path.display().to_string(),
            kind: file_kind(kind),
        });
    }
    Ok(file)
}

/// Reads a whole small text file (an experiment file) of at most `limit` bytes, refusing what is
/// not a regular file as [`open_regular`] does; the error is a message naming the path.
pub fn read_small_text(path: &Path, limit: u64) -> Result<String, String> {
    let file = open_regular(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > limit {
        return Err(format!(
            "{}: larger than {} KiB, not an experiment file",
            path.display(),
            limit >> 10
        ));
    }
    Ok(text)
}

/// What reading a results file found.
#[derive(Debug, Default)]
pub struct ReadRows {
    /// The rows, in file order.
    pub rows: Vec<ResultRow>,
    /// A last line cut off mid-write (an interrupted sweep), skipped: its 1-based number.
    pub truncated_line: Option<usize>,
}

/// Reads every row of `path`, a regular file ([`open_regular`]), line by line, no line longer
/// than [`MAX_ROW_BYTES`]. A last line without its newline that does not parse is what an
/// interrupted write leaves: it is skipped and reported in [`ReadRows::truncated_line`]; any other
/// bad line is an error naming it.
pub fn read_rows(path: &Path) -> Result<ReadRows, ResultsError> {
    let io = |source| ResultsError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = open_regular(path)?;
    let mut reader = std::io::BufReader::new(file);
    let mut out = ReadRows::default();
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_ROW_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(io)?;
        if read == 0 {
            break;
        }
        number += 1;
        if line.len() > MAX_ROW_BYTES {
            return Err(ResultsError::LineTooLong {
                path: path.display().to_string(),
                line: number,
            });
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        match parse_row(&line) {
            Ok(row) => out.rows.push(row),
            Err(_) if line.last() != Some(&b'\n') => out.truncated_line = Some(number),
            Err(message) => {
                return Err(ResultsError::Row {
                    path: path.display().to_string(),
                    line: number,
                    message,
                });
            }
        }
    }
    Ok(out)
}

/// The experiment name given to the lines of `txbench run --format json`, read as results rows.
pub const RUN_EXPERIMENT: &str = "run";

/// One line of a results file: a sweep's row, or a `txbench run --format json` report, which
/// becomes a row of the anonymous experiment [`RUN_EXPERIMENT`] (its point from the report's
/// `point`, its round as the repetition, its build from `txbench` when it has one).
fn parse_row(line: &[u8]) -> Result<ResultRow, String> {
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let is_report = value.get("experiment").is_none()
        && value.get("protocol").is_some_and(|p| p.is_string())
        && value.get("throughput_tps").is_some();
    if !is_report {
        return serde_json::from_value(value).map_err(|e| e.to_string());
    }
    let point: Vec<(String, String)> = value
        .get("point")
        .cloned()
        .and_then(|p| serde_json::from_value(p).ok())
        .unwrap_or_default();
    let repetition = value
        .get("round")
        .and_then(|r| r.as_u64())
        .and_then(|r| usize::try_from(r).ok())
        .unwrap_or(0);
    let txbench = value
        .get("txbench")
        .cloned()
        .and_then(|b| serde_json::from_value(b).ok())
        .unwrap_or_else(|| BuildInfo {
            version: "unknown".into(),
            commit: "unknown".into(),
        });
    // The run's settings: the report's configuration, its scalar fields.
    let args = value
        .get("config")
        .and_then(|c| c.as_object())
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match v {
            serde_json::Value::String(s) => Some((k.clone(), s.clone())),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => {
                Some((k.clone(), v.to_string()))
            }
            _ => None,
        })
        .collect();
    Ok(ResultRow {
        experiment: RUN_EXPERIMENT.to_string(),
        point,
        repetition,
        args,
        txbench,
        time: String::new(),
        machine: value.get("machine").cloned().unwrap_or_default(),
        report: value,
    })
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
    let complete = match open_regular(path) {
        Ok(file) => complete_length(file)?,
        Err(ResultsError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            None
        }
        Err(ResultsError::Io { source, .. }) => return Err(source),
        Err(e) => return Err(std::io::Error::other(e.to_string())),
    };
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

/// The length of `file` up to its last newline when it ends in the middle of a line (`None`
/// when it ends with a newline or is empty); reads backwards from the end a block at a time.
fn complete_length(mut file: std::fs::File) -> std::io::Result<Option<u64>> {
    use std::io::{Seek, SeekFrom};
    let len = file.metadata()?.len();
    let mut end = len;
    let mut block = vec![0u8; 64 << 10];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let chunk = &mut block[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&c| c == b'\n') {
            let complete = start + i as u64 + 1;
            return Ok((complete < len).then_some(complete));
        }
        end = start;
    }
    Ok((len > 0).then_some(0))
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
