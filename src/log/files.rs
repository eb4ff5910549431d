//! A log directory: its manifest (which run wrote it, and that run's command line, from which
//! recovery rebuilds the loaded database) and one file per worker.
//!
//! ```text
//!  DIR/manifest.json      {"format": 1, "run_id": ..., "workers": N, "args": [...]}
//!  DIR/worker-000.log     file header frame, then transactions and epoch markers
//!  ...
//! ```
//!
//! Creation order makes a half-created directory recognisable: the manifest is written and
//! synced first, then each file with its header, then the directory itself is synced (new
//! directory entries are durable only once their directory is).

use super::LogError;
use super::device::LogDevice;
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
    /// Worker files.
    pub workers: usize,
    /// The run's `txbench run` arguments, without the log's own flags.
    pub args: Vec<String>,
}

/// The file of worker `w`.
pub fn worker_file(dir: &Path, w: usize) -> PathBuf {
    dir.join(format!("worker-{w:03}.log"))
}

/// Whether `name` is a log file's or manifest's name.
fn is_log_name(name: &str) -> bool {
    name == MANIFEST || (name.starts_with("worker-") && name.ends_with(".log"))
}

/// Checks, before a run, that `dir` can take a new log: it exists, is a directory, holds no
/// other run's log, and accepts a new file.
pub fn check_log_dir(dir: &Path) -> Result<(), LogError> {
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
            return Err(LogError::HoldsLog(dir.to_path_buf()));
        }
    }
    let probe = dir.join(".txbench-log-probe");
    File::create(&probe)
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|e| LogError::NotWritable {
            dir: dir.to_path_buf(),
            why: e.to_string(),
        })
}

/// Creates the manifest and one file per worker in `dir` (checked first, as
/// [`check_log_dir`]), each file holding its header, all synced with the directory.
pub fn create_log_files(
    dir: &Path,
    workers: usize,
    run_args: &[String],
) -> Result<Vec<Box<dyn LogDevice>>, LogError> {
    check_log_dir(dir)?;
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()).rotate_left(40);
    let manifest = Manifest {
        format: format::FORMAT_VERSION,
        run_id,
        workers,
        args: run_args.to_vec(),
    };
    let path = dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest serialises");
    write_synced(&path, text.as_bytes())?;
    let mut devices: Vec<Box<dyn LogDevice>> = Vec::with_capacity(workers);
    for w in 0..workers {
        let path = worker_file(dir, w);
        let mut header = Vec::new();
        format::write_file_header(&mut header, w as u32, run_id);
        let file = write_synced(&path, &header)?;
        devices.push(Box::new(file));
    }
    sync_dir(dir)?;
    Ok(devices)
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

/// Syncs a directory, so the files created in it survive a crash.
fn sync_dir(dir: &Path) -> Result<(), LogError> {
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
    let m: Manifest = serde_json::from_str(&text).map_err(|e| LogError::BadManifest {
        path: path.clone(),
        why: e.to_string(),
    })?;
    if m.format != format::FORMAT_VERSION {
        return Err(LogError::BadManifest {
            path,
            why: format!(
                "format {} (this build reads {})",
                m.format,
                format::FORMAT_VERSION
            ),
        });
    }
    Ok(m)
}
