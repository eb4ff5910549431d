//! Each run's own log directory. A log directory holds one run's log (`txbench run --log`
//! refuses one that holds another's), so a sweep whose points set `log = "PARENT"` gives every
//! run, each repetition included, a fresh directory under PARENT: created empty just before the
//! run and removed when the run is over, however it ended, unless the file asks to keep them
//! (`keep_logs`). Names carry the experiment, the point, the repetition and the sweep's process
//! id, so that sweeps running side by side (`--emit-jobs` jobs) never share a directory.

use std::path::{Path, PathBuf};

/// A run's log directory; removed when dropped unless kept.
#[derive(Debug)]
pub struct RunLogDir {
    path: PathBuf,
    keep: bool,
}

impl RunLogDir {
    /// Creates a fresh, empty directory under `parent` for repetition `rep` (0-based) of point
    /// `index` (0-based) of `experiment`. A name already taken (a kept directory of an earlier
    /// sweep with the same process id) gets a numbered suffix: an existing directory is never
    /// reused.
    pub fn create(
        parent: &Path,
        experiment: &str,
        index: usize,
        rep: usize,
        keep: bool,
    ) -> Result<RunLogDir, String> {
        let stem = format!(
            "{}-point-{}-rep-{}-pid-{}",
            sanitize(experiment),
            index + 1,
            rep + 1,
            std::process::id()
        );
        for n in 0..1000 {
            let name = if n == 0 {
                stem.clone()
            } else {
                format!("{stem}-{n}")
            };
            let path = parent.join(name);
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(RunLogDir { path, keep }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(format!(
                        "cannot create the run's log directory {}: {e}",
                        path.display()
                    ));
                }
            }
        }
        Err(format!(
            "cannot create the run's log directory: {} and 999 numbered names beside it are \
             taken under {}",
            stem,
            parent.display()
        ))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLogDir {
    fn drop(&mut self) {
        if !self.keep {
            // A directory that cannot be removed is left behind; the run's results stand.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// `name` with every character but ASCII letters, digits, `-`, `_` and `.` replaced by `_`, so
/// that an experiment's name is one path component.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("txbench-run-log-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn each_run_gets_a_fresh_directory_removed_after_it() {
        let parent = scratch("fresh");
        let a = RunLogDir::create(&parent, "fig/14", 0, 0, false).unwrap();
        let b = RunLogDir::create(&parent, "fig/14", 0, 0, false).unwrap();
        assert_ne!(a.path(), b.path(), "a taken name is never reused");
        assert_eq!(a.path().parent(), Some(parent.as_path()));
        assert!(
            a.path()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("fig_14-point-1-rep-1")
        );
        std::fs::write(a.path().join("log-000-000000.log"), b"x").unwrap();
        let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
        drop(a);
        drop(b);
        assert!(!pa.exists() && !pb.exists());
        let kept = RunLogDir::create(&parent, "e", 2, 1, true).unwrap();
        let pk = kept.path().to_path_buf();
        drop(kept);
        assert!(pk.is_dir(), "keep_logs keeps it");
        std::fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn a_parent_that_cannot_take_a_directory_is_an_error() {
        let parent = scratch("file");
        let file = parent.join("not-a-dir");
        std::fs::write(&file, b"").unwrap();
        let e = RunLogDir::create(&file, "e", 0, 0, false).unwrap_err();
        assert!(e.contains("not-a-dir"), "{e}");
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
