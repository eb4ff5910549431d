//! Points that name a `binary` run in a child process of that txbench executable: `BINARY run
//! FLAGS --format json`, one JSON report per line on its stdout. This is how one sweep compares
//! two builds (a `binary` axis, alternated run by run like any axis, so that a shared machine's
//! drift hits both), and how a run's own wall time and peak memory are measured: the child is
//! reaped with `wait4`, whose resource usage is that process's alone.
//!
//! The child's build (version and commit) is read once per executable from `BINARY --version`
//! (`txbench 0.1.0 (f9beffc)`; a build older than that line prints no commit and is recorded as
//! `unknown`), so every row still says which code measured it.

use super::grid::{Point, setting_args};
use super::results::BuildInfo;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The executable a `binary` value names: this one for `self`, else the path as given (relative
/// to the working directory).
pub fn resolve(binary: &str) -> PathBuf {
    if binary == "self" {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("txbench"))
    } else {
        PathBuf::from(binary)
    }
}

/// The build of the executable `binary` names, from its `--version`; an error when it cannot be
/// run or is not txbench.
pub fn probe(binary: &str) -> Result<BuildInfo, String> {
    let path = resolve(binary);
    let out = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_version(text.trim())
        .filter(|_| out.status.success())
        .ok_or_else(|| {
            format!(
                "{} is not a txbench executable (`--version` printed '{}')",
                path.display(),
                text.trim()
            )
        })
}

/// `txbench VERSION` or `txbench VERSION (COMMIT)` as a build.
pub fn parse_version(line: &str) -> Option<BuildInfo> {
    let rest = line.strip_prefix("txbench ")?;
    let (version, commit) = match rest.split_once(" (") {
        Some((v, c)) => (v, c.strip_suffix(')')?),
        None => (rest, "unknown"),
    };
    (!version.is_empty()).then(|| BuildInfo {
        version: version.to_string(),
        commit: commit.to_string(),
    })
}

/// What one child run gave.
#[derive(Debug)]
pub struct ChildRun {
    /// One `txbench run --format json` object per protocol the point ran.
    pub reports: Vec<serde_json::Value>,
    /// `{"wall_s": .., "max_rss_kb": ..}`: the child's wall time, from spawn to exit, and its
    /// peak resident memory (`ru_maxrss`).
    pub process: serde_json::Value,
}

/// Runs `point` in a child process of `binary` and reads its reports. Exit status 0, or 1 with
/// reports (a run that failed its check or reported a bug: the rows say so), is a run; anything
/// else is an error quoting the child's last words on stderr.
pub fn run_point(binary: &str, point: &Point) -> Result<ChildRun, String> {
    let path = resolve(binary);
    let mut args = vec!["run".to_string()];
    args.extend(setting_args(&point.settings));
    args.extend(["--format".to_string(), "json".to_string()]);
    let started = Instant::now();
    let mut child = Command::new(&path)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    // stderr is drained beside stdout so that neither pipe fills and stalls the child.
    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    let read = child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_string(&mut stdout);
    let (status, max_rss_kb) = reap(child.id())?;
    let wall_s = started.elapsed().as_secs_f64();
    let stderr = stderr_reader.join().unwrap_or_default();
    read.map_err(|e| format!("reading the output of {}: {e}", path.display()))?;
    let reports: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let ok = status == Some(0) || (status == Some(1) && !reports.is_empty());
    if !ok || reports.is_empty() {
        let last: Vec<&str> = stderr.lines().rev().take(3).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        return Err(format!(
            "{} {} exited with {}: {}",
            path.display(),
            args.join(" "),
            status.map_or("a signal".to_string(), |c| format!("status {c}")),
            if last.is_empty() {
                "no output".to_string()
            } else {
                last.join(" / ")
            }
        ));
    }
    Ok(ChildRun {
        reports,
        process: serde_json::json!({ "wall_s": wall_s, "max_rss_kb": max_rss_kb }),
    })
}

/// Waits for the child `pid` to exit and returns its exit code (`None` when a signal ended it)
/// and its peak resident memory in KiB.
fn reap(pid: u32) -> Result<(Option<i32>, i64), String> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| format!("child pid {pid} out of range"))?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is a plain C struct of integers, for which all-zero bytes are a valid
    // value; wait4 only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are live, exclusively borrowed locals of the types wait4
        // writes; `pid` is our own child, spawned above and not yet reaped (std's `Child` is
        // never waited on here, so nothing else reaps it).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("waiting for the child run: {e}"));
        }
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // Linux reports ru_maxrss in KiB.
    Ok((code, usage.ru_maxrss))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_with_and_without_a_commit() {
        let b = parse_version("txbench 0.1.0 (f9beffc)").unwrap();
        assert_eq!(
            (b.version.as_str(), b.commit.as_str()),
            ("0.1.0", "f9beffc")
        );
        let b = parse_version("txbench 0.1.0").unwrap();
        assert_eq!(b.commit, "unknown");
        assert!(parse_version("python 3").is_none());
        assert!(parse_version("txbench ").is_none());
    }

    #[test]
    fn a_missing_executable_is_an_error_not_a_panic() {
        let e = probe("/nonexistent/txbench").unwrap_err();
        assert!(e.contains("/nonexistent/txbench"), "{e}");
    }
}
