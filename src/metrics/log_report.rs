//! The redo log's numbers for one run (`--log`): what was written and synced, and the two
//! latencies a durable commit has (docs/METRICS.md, "Durability").

use super::LatencySummary;
use comfy_table::{Cell, CellAlignment, Table, presets};
use serde::Serialize;

/// What the log did over a run (warm-up included: the log does not know the periods), and the
/// measured transactions' acknowledgement latency.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LogReport {
    /// The log directory.
    pub dir: String,
    /// `--log-kind`: redo or undo.
    pub kind: &'static str,
    /// `--log-sync`: none, group or txn.
    pub sync: &'static str,
    /// `--log-group-us`.
    pub group_us: u64,
    /// Log files written in parallel (`--log-files`): each flush syncs each one with something
    /// new once.
    pub files: usize,
    /// Transactions logged (those that wrote; for an undo log, committed attempts that wrote).
    pub txns_logged: u64,
    /// An undo log: aborted attempts whose before-images were logged (0 for redo, which logs
    /// nothing of an abort).
    pub aborted_logged: u64,
    /// Bytes written to the log files.
    pub bytes: u64,
    /// `bytes / txns_logged`: per committed transaction, so an undo log's count includes the
    /// before-images its aborted attempts wasted.
    pub bytes_per_txn: f64,
    /// Epochs closed (flushes).
    pub flushes: u64,
    /// `fdatasync` calls (one per log file with something new per flush, with sync).
    pub fsyncs: u64,
    /// `fsyncs` per second of the run (warm-up and measured period).
    pub fsyncs_per_s: f64,
    /// `txns_logged / fsyncs` (0 without syncs).
    pub txns_per_fsync: f64,
    /// The durable frontier at the end.
    pub durable_epoch: u64,
    /// Whether the flusher ran at real-time priority (`crate::log`'s writer, "The flusher's
    /// priority"): without it, durable acknowledgements wait for the scheduler when the
    /// workers keep every core busy.
    pub flusher_realtime: bool,
    /// Measured commits that were acknowledged durable.
    pub acknowledged: u64,
    /// From the first attempt's start to the durable acknowledgement (writing transactions of
    /// the measured period); the report's `latency_us` stays the commit latency.
    pub durable_latency_us: LatencySummary,
    /// Each flush, from closing its epoch to publishing it as durable (the writes and syncs of
    /// every log it wrote). The flusher sleeps a group interval after each, so a durable
    /// acknowledgement waits at most the interval and two flushes.
    pub flush_latency_us: LatencySummary,
    /// Each `fdatasync` call alone (empty without sync): what the disk adds. With the flush's
    /// latency, it says whether a durable latency above the group interval is the disk's.
    pub fsync_latency_us: LatencySummary,
    /// What the checkpointer did (`--checkpoint-s`; `None` without checkpoints).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<CheckpointReport>,
}

/// The checkpointer's part of a logged run (`--checkpoint-s`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckpointReport {
    /// `--checkpoint-s`.
    pub interval_s: f64,
    /// Complete checkpoints written.
    pub checkpoints: u64,
    /// Records in the last one.
    pub last_records: u64,
    /// Bytes of the last one.
    pub last_bytes: u64,
    /// Seconds the last one took (rotation to directory sync).
    pub last_s: f64,
    /// Log segments removed.
    pub segments_removed: u64,
}

/// The durability table (`None` when no run logged).
pub fn render_log_table<'a>(
    reports: impl Iterator<Item = (&'a str, &'a LogReport, &'a LatencySummary)>,
) -> Option<String> {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "protocol",
        "log",
        "files",
        "sync",
        "commit p99 us",
        "durable p50 us",
        "durable p99 us",
        "fsync p99 us",
        "fsyncs/s",
        "txns/fsync",
        "log B/txn",
        "log MiB",
    ]);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    let mut any = false;
    for (protocol, l, commit) in reports {
        any = true;
        t.add_row(vec![
            Cell::new(protocol),
            Cell::new(l.kind),
            right(l.files.to_string()),
            Cell::new(l.sync),
            right(format!("{:.1}", commit.p99)),
            right(format!("{:.1}", l.durable_latency_us.p50)),
            right(format!("{:.1}", l.durable_latency_us.p99)),
            right(format!("{:.1}", l.fsync_latency_us.p99)),
            right(format!("{:.0}", l.fsyncs_per_s)),
            right(format!("{:.1}", l.txns_per_fsync)),
            right(format!("{:.0}", l.bytes_per_txn)),
            right(format!("{:.1}", l.bytes as f64 / (1u64 << 20) as f64)),
        ]);
    }
    any.then(|| t.to_string())
}
