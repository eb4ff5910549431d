//! A log directory: its manifest (which run wrote it, and that run's command line, from which
//! recovery rebuilds the loaded database), each log as numbered segment files, and the
//! checkpoints. A log holds the transactions of the workers it serves: worker `w`'s go to log
//! `w % logs` (`--log-files`; SiloR's loggers, one file per group of workers, so a flush
//! syncs one file per group rather than one per worker).
//!
//! ```text
//!  DIR/manifest.json               {"format": 5, "run_id": ..., "workers": N, "logs": L,
//!                                   "args": [...], "kind": "redo" | "undo"}
//!  DIR/log-000-000000.log          segment 0 of log 0: header frame, transactions, markers
//!  DIR/log-000-000001.log          segment 1 (begun when a checkpoint started), ...
//!  DIR/checkpoint-000001.ckpt      a complete checkpoint (`checkpoint/`)
//!  DIR/checkpoint-000002.tmp       one being written (never read by recovery)
//! ```
//!
//! Creation order makes a half-created directory recognisable: the manifest is written and
//! synced first, then each file with its header, then the directory itself is synced (new
//! directory entries are durable only once their directory is). A new segment is created,
//! synced and its directory synced before the flusher writes to it ([`SegmentFiles::open`]),
//! so a log's segments on disk are always consecutive up to the one being written; the
//! manifest never changes, since each segment's header says what its predecessors held.

use super::LogError;
use super::device::LogDevice;
use super::dir::{Directory, DiskDirectory};
use super::format;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The manifest's name in a log directory.
pub const MANIFEST: &str = "manifest.json";

/// What a log directory says about the run that wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`format::FORMAT_VERSION`].
    pub format: u32,
    /// A number naming the run; every file's header carries it.
    pub run_id: u64,
    /// The run's workers (a server's sessions).
    pub workers: usize,
    /// Logs (files written in parallel, each a sequence of segments): worker `w` writes to
    /// log `w % logs`.
    pub logs: usize,
    /// The run's `txbench run` arguments, without the log's own flags.
    pub args: Vec<String>,
    /// What the log holds (`--log-kind`); a manifest without the field is a redo log's (they
    /// were all redo logs before undo logging existed).
    #[serde(default)]
    pub kind: super::LogKind,
}

/// Segment `segment` of log `log`.
pub fn segment_file(dir: &Path, log: usize, segment: u32) -> PathBuf {
    dir.join(segment_name(log, segment))
}

/// The file name of segment `segment` of log `log`.
pub fn segment_name(log: usize, segment: u32) -> String {
    format!("log-{log:03}-{segment:06}.log")
}

/// Log and segment of a segment file's name.
pub fn parse_segment_name(name: &str) -> Option<(usize, u32)> {
    let rest = name.strip_prefix("log-")?.strip_suffix(".log")?;
    let (w, s) = rest.split_once('-')?;
    Some((w.parse().ok()?, s.parse().ok()?))
}

/// Checkpoint `n`, complete (renamed into place).
pub fn checkpoint_file(dir: &Path, n: u64) -> PathBuf {
    dir.join(checkpoint_name(n))
}

/// Checkpoint `n` while it is written.
pub fn checkpoint_tmp_file(dir: &Path, n: u64) -> PathBuf {
    dir.join(checkpoint_tmp_name(n))
}

/// The file name of checkpoint `n`, complete.
pub fn checkpoint_name(n: u64) -> String {
    format!("checkpoint-{n:06}.ckpt")
}

/// The file name of checkpoint `n` while it is written.
pub fn checkpoint_tmp_name(n: u64) -> String {
    format!("checkpoint-{n:06}.tmp")
}

/// The number of a complete checkpoint's file name.
pub fn parse_checkpoint_name(name: &str) -> Option<u64> {
    name.strip_prefix("checkpoint-")?
        .strip_suffix(".ckpt")?
        .parse()
        .ok()
}

/// Whether `name` is a log file's, checkpoint's or manifest's name.
fn is_log_name(name: &str) -> bool {
    name == MANIFEST
        || (name.starts_with("log-") && name.ends_with(".log"))
        // A log of format 4 or before, refused by name when read (`read_manifest`).
        || (name.starts_with("worker-") && name.ends_with(".log"))
        || name.starts_with("checkpoint-")
}

/// Checks, before a run, that `dir` can take a new log: it exists, is a directory, holds no
/// other run's log, and accepts a new file.
pub fn check_log_dir(dir: &Path) -> Result<(), LogError> {
    if holds_log(dir)? {
        return Err(LogError::HoldsLog(dir.to_path_buf()));
    }
    check_writable(dir)
}

/// Checks, before a server starts, that `dir` can take its log: it exists, is a directory and
/// accepts a new file; a previous log in it is resumed (`resume.rs`), not refused.
pub fn check_resumable_log_dir(dir: &Path) -> Result<(), LogError> {
    holds_log(dir)?;
    check_writable(dir)
}

/// Whether `dir`, an existing directory, holds a log's files (a manifest, a segment or a
/// checkpoint).
pub fn holds_log(dir: &Path) -> Result<bool, LogError> {
    let meta = std::fs::metadata(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => LogError::Missing(dir.to_path_buf()),
        _ => LogError::io(dir, e),
    })?;
    if !meta.is_dir() {
        return Err(LogError::NotADirectory(dir.to_path_buf()));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| LogError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| LogError::io(dir, e))?;
        if let Some(name) = entry.file_name().to_str()
            && is_log_name(name)
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether a new file can be created in `dir`.
fn check_writable(dir: &Path) -> Result<(), LogError> {
    let probe = dir.join(".txbench-log-probe");
    File::create(&probe)
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|e| LogError::NotWritable {
            dir: dir.to_path_buf(),
            why: e.to_string(),
        })
}

/// Creates the manifest and the first segment of each of `logs` logs for `workers` workers in
/// `dir` (checked first, as [`check_log_dir`]), each file holding its header, all synced with
/// the directory. Returns the devices (one per log) and the run's id.
pub fn create_log_files(
    dir: &Path,
    workers: usize,
    logs: usize,
    run_args: &[String],
    kind: super::LogKind,
) -> Result<(Vec<Box<dyn LogDevice>>, u64), LogError> {
    check_log_dir(dir)?;
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()).rotate_left(40);
    let manifest = Manifest {
        format: format::FORMAT_VERSION,
        run_id,
        workers,
        logs,
        args: run_args.to_vec(),
        kind,
    };
    let path = dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest serialises");
    write_synced(&path, text.as_bytes())?;
    let mut devices: Vec<Box<dyn LogDevice>> = Vec::with_capacity(logs);
    for log in 0..logs {
        let path = segment_file(dir, log, 0);
        let mut header = Vec::new();
        format::write_file_header(&mut header, log as u32, run_id);
        let file = write_synced(&path, &header)?;
        devices.push(Box::new(file));
    }
    sync_dir(dir)?;
    Ok((devices, run_id))
}

/// Creates `path` (it must not exist), writes `bytes` and syncs; returns the file, open for
/// appending.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<File, LogError> {
    use std::io::Write;
    let mut f = OpenOptions::new()
        .create_new(true)
        .append(true)
        .open(path)
        .map_err(|e| LogError::io(path, e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| LogError::io(path, e))?;
    Ok(f)
}

/// Syncs a directory, so the files created, renamed or removed in it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<(), LogError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| LogError::io(dir, e))
}

/// Reads a log directory's manifest.
pub fn read_manifest(dir: &Path) -> Result<Manifest, LogError> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => LogError::NoManifest(dir.to_path_buf()),
        _ => LogError::io(&path, e),
    })?;
    let bad = |why: String| LogError::BadManifest {
        path: path.clone(),
        why,
    };
    // The format first: another format's manifest may lack this one's fields (format 4 had
    // no `logs`), and its number is the useful error.
    #[derive(Deserialize)]
    struct FormatOnly {
        format: u32,
    }
    let f: FormatOnly = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if f.format != format::FORMAT_VERSION {
        return Err(bad(format!(
            "format {} (this build reads {})",
            f.format,
            format::FORMAT_VERSION
        )));
    }
    let m: Manifest = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if m.logs == 0 || m.logs > m.workers.max(1) {
        return Err(bad(format!(
            "{} logs for {} workers (1 to one per worker)",
            m.logs, m.workers
        )));
    }
    Ok(m)
}

/// Creates and removes a log's segment files for the flusher and the checkpointer
/// ([`crate::log::Logger::with_segments`]). Tests without files have none (no rotation).
pub trait SegmentStore: Send {
    /// Creates log `header.log`'s segment `header.segment` holding `header`, synced with its
    /// directory, and returns it open for appending.
    fn open(&mut self, header: &format::SegmentHeader) -> std::io::Result<Box<dyn LogDevice>>;
    /// Removes log `log`'s segment `segment` (one no checkpoint still needs).
    fn remove(&mut self, log: usize, segment: u32) -> std::io::Result<()>;
    /// Makes the removals so far durable (the directory's sync).
    fn sync(&mut self) -> std::io::Result<()>;
}

/// The segment files of a log directory.
pub struct SegmentFiles {
    /// The directory.
    pub dir: std::sync::Arc<dyn Directory>,
}

impl SegmentFiles {
    /// The segment files of the directory `dir` of the file system.
    pub fn on_disk(dir: &Path) -> Self {
        SegmentFiles {
            dir: std::sync::Arc::new(DiskDirectory(dir.to_path_buf())),
        }
    }
}

impl SegmentStore for SegmentFiles {
    fn open(&mut self, h: &format::SegmentHeader) -> std::io::Result<Box<dyn LogDevice>> {
        let mut bytes = Vec::new();
        format::write_segment_header(&mut bytes, h);
        let mut device = self.dir.create(&segment_name(h.log as usize, h.segment))?;
        device.append(&bytes)?;
        device.sync()?;
        self.dir.sync()?;
        Ok(device)
    }

    fn remove(&mut self, log: usize, segment: u32) -> std::io::Result<()> {
        self.dir.remove(&segment_name(log, segment))
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.dir.sync()
    }
}
