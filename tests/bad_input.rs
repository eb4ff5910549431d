//! Every invocation issue 22 found handled badly, run against the built binary: each must end
//! with its exit status and message, within a generous time bound (it catches hangs and runs
//! that sleep past their stop, not slowness: CI machines are loaded), without reading without
//! bound (`/dev/zero`, FIFOs) and without printing a number it did not measure.
//!
//! `TXBENCH_BIN=path/to/txbench cargo test --test bad_input` runs the table against another
//! build (an older one, to see which cases it fails).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

fn binary() -> PathBuf {
    std::env::var_os("TXBENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_txbench")))
}

/// The most any case may take: no case does real work for more than a second or two, so only a
/// hang, an endless read or a sleep past the stop reaches it.
const LIMIT: Duration = Duration::from_secs(30);

/// How one invocation ended.
struct Ended {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

/// Waits for `child` until `limit`, killing it past that; polls with a sleep, so the wait
/// yields the CPU.
fn finish(mut child: Child, limit: Duration) -> Ended {
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let started = Instant::now();
    let (status, timed_out) = loop {
        if let Some(s) = child.try_wait().expect("wait for txbench") {
            break (Some(s), false);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ended {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
    }
}

/// One bad invocation and what it must do.
struct Case {
    args: Vec<String>,
    /// stdout goes to `/dev/full` (a write error) instead of a pipe.
    stdout_full: bool,
    code: i32,
    /// Must appear in stderr.
    message: &'static str,
    /// Must appear in stdout.
    stdout_has: Option<&'static str>,
    /// Must appear in neither.
    never: Option<&'static str>,
    limit: Duration,
}

fn case(args: &[&str], code: i32, message: &'static str) -> Case {
    Case {
        args: args.iter().map(|a| a.to_string()).collect(),
        stdout_full: false,
        code,
        message,
        stdout_has: None,
        never: None,
        limit: LIMIT,
    }
}

impl Case {
    fn stdout_has(mut self, s: &'static str) -> Self {
        self.stdout_has = Some(s);
        self
    }
    fn never(mut self, s: &'static str) -> Self {
        self.never = Some(s);
        self
    }
    fn stdout_to_dev_full(mut self) -> Self {
        self.stdout_full = true;
        self
    }
    fn within(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// Runs the case; the failure in words, if any.
    fn check(&self) -> Option<String> {
        let mut cmd = Command::new(binary());
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stderr(Stdio::piped());
        if self.stdout_full {
            cmd.stdout(std::fs::File::create("/dev/full").expect("/dev/full"));
        } else {
            cmd.stdout(Stdio::piped());
        }
        let e = finish(cmd.spawn().expect("start txbench"), self.limit);
        let shown = format!(
            "txbench {}\n--- stdout\n{}\n--- stderr\n{}",
            self.args.join(" "),
            tail(&e.stdout),
            tail(&e.stderr)
        );
        if e.timed_out {
            return Some(format!("still running after {:?}: {shown}", self.limit));
        }
        let code = e.status.and_then(|s| s.code());
        if code != Some(self.code) {
            return Some(format!("exit {code:?}, expected {}: {shown}", self.code));
        }
        if !e.stderr.contains(self.message) {
            return Some(format!("stderr lacks '{}': {shown}", self.message));
        }
        if let Some(s) = self.stdout_has.filter(|s| !e.stdout.contains(s)) {
            return Some(format!("stdout lacks '{s}': {shown}"));
        }
        if let Some(s) = self
            .never
            .filter(|s| e.stdout.contains(s) || e.stderr.contains(s))
        {
            return Some(format!("says '{s}': {shown}"));
        }
        None
    }
}

fn tail(s: &str) -> &str {
    let start = s.len().saturating_sub(1500);
    let start = (start..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    &s[start..]
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("txbench-bad-input-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).expect("write fixture");
    path.display().to_string()
}

/// A small experiment: two points of one protocol, a tenth of a second each.
fn experiment(dir: &Path, name: &str) -> String {
    write(
        &dir.join(format!("{name}.toml")),
        &format!(
            "name = \"{name}\"\nresults = \"{}\"\n[base]\nprotocol = \"silo\"\nrecords = 1000\n\
             duration = 0.1\nwarmup = 0\nthreads = 1\n[axes]\nops = [4, 8]\n",
            dir.join(format!("{name}.jsonl")).display()
        ),
    )
}

#[test]
fn every_bad_invocation_ends_promptly_with_its_status_and_message() {
    let dir = scratch("table");
    let exp = experiment(&dir, "e");
    let other = experiment(&dir, "o");
    let e_results = dir.join("e.jsonl").display().to_string();
    // Fixtures: a measured results file of `e`, a run's JSON lines, a FIFO, a file whose one
    // line is longer than a row may be, experiment files that set nothing or mislabel.
    for (args, what) in [
        (vec!["sweep", exp.as_str()], "the fixture sweep"),
        (
            vec![
                "run",
                "-p",
                "silo",
                "-d",
                "0.05",
                "--warmup",
                "0",
                "--records",
                "1000",
                "--format",
                "json",
            ],
            "the fixture run",
        ),
    ] {
        let out = Command::new(binary()).args(&args).output().expect("run");
        assert!(out.status.success(), "{what}: {out:?}");
        if args[0] == "run" {
            std::fs::write(dir.join("run.jsonl"), &out.stdout).expect("run.jsonl");
        }
    }
    let run_json = dir.join("run.jsonl").display().to_string();
    // Two runs of each of two protocols: medians with a spread to compare.
    let out = Command::new(binary())
        .args([
            "run",
            "-p",
            "silo,tictoc",
            "-d",
            "0.05",
            "--warmup",
            "0",
            "--records",
            "1000",
            "--repeat",
            "2",
            "--format",
            "json",
        ])
        .output()
        .expect("run");
    assert!(out.status.success(), "the repeated fixture run: {out:?}");
    std::fs::write(dir.join("run2.jsonl"), &out.stdout).expect("run2.jsonl");
    let run2 = dir.join("run2.jsonl").display().to_string();
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let fifo = fifo.display().to_string();
    let long_line = dir.join("long.jsonl");
    std::fs::write(&long_line, vec![b'x'; 17 << 20]).expect("long line");
    let long_line = long_line.display().to_string();
    let empty = write(&dir.join("empty.toml"), "name = \"empty\"\n");
    let label = write(
        &dir.join("label.toml"),
        "name = \"label\"\n[axes]\nprotocol = [{ label = \"a\" }, \"silo\"]\n",
    );
    let big = write(
        &dir.join("big.toml"),
        &format!(
            "name = \"big\"\n[base]\nprotocol = \"silo\"\n[axes]\nseed = [{}]\npayload = [{}]\n",
            (0..1000)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(","),
            (1..=1000)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    );
    // A plot whose first file cannot be written: a directory stands where it goes.
    let plots = dir.join("plots");
    std::fs::create_dir_all(plots.join("run-throughput-vs-experiment.png")).expect("plots");
    let plots = plots.display().to_string();
    let short = [
        "-p",
        "silo",
        "-d",
        "0.1",
        "--warmup",
        "0",
        "--records",
        "1000",
    ];
    let run = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["run".to_string()];
        v.extend(short.iter().map(|s| s.to_string()));
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run_case = |extra: &[&str], code: i32, message: &'static str| Case {
        args: run(extra),
        ..case(&[], code, message)
    };

    let cases = vec![
        // Unbounded reads: devices, FIFOs, endless lines.
        case(&["report", "/dev/zero"], 2, "not a regular file"),
        case(&["plot", "/dev/zero"], 2, "not a regular file"),
        case(&["merge", "/dev/zero"], 2, "not a regular file"),
        case(&["report", &fifo], 2, "a FIFO"),
        case(&["merge", &fifo, &run_json], 2, "a FIFO"),
        case(&["report", &long_line], 2, "longer than 16 MiB"),
        case(
            &["sweep", &exp, "--results", "/dev/full"],
            2,
            "not a regular file",
        ),
        case(&["sweep", "/dev/zero"], 2, "not a regular file"),
        // Hangs and overruns.
        case(
            &[
                "run",
                "--key-dist",
                "normal",
                "--key-sd",
                "1e15",
                "--records",
                "1000",
                "-d",
                "0.2",
            ],
            2,
            "--key-sd",
        ),
        // A pause of 10 s in a 0.1 s run ends with the run: before, each pause (and a retry's
        // pause after the stop) slept its whole 10 s.
        Case {
            args: run(&["-t", "2", "--long-txn-delay-us", "10000000"]),
            ..case(&[], 0, "silo:")
        }
        .within(Duration::from_secs(9)),
        // Too large to run in one go (listing it streams: see the test below).
        case(&["sweep", &big], 2, "at most 10000 points"),
        // One point of it is planned alone, as --emit-jobs's commands run them.
        case(&["sweep", &big, "--point", "1000000", "--dry-run"], 0, "")
            .stdout_has("1000000 seed=999 payload=1000: "),
        case(
            &["sweep", &big, "--point", "1000001", "--dry-run"],
            2,
            "1 <= point <= 1000000",
        ),
        // Wrong numbers with exit 0.
        case(&["run", "-d", "1e-9"], 2, "0.01 <= seconds"),
        // Only commits inside the measured window count: the one worker's first transaction
        // starts the window and spends 0.3 s in its read phase, so it commits after the 0.1 s
        // window, uncounted (before: 1 commit, "10 txn/s" for a window with none).
        run_case(
            &[
                "-t",
                "1",
                "--read-phase-extension",
                "300000000",
                "--format",
                "json",
            ],
            0,
            "",
        )
        .stdout_has("\"commits\":0,"),
        case(
            &["run", "-w", "tpcc", "--table-memory-mb", "1"],
            2,
            "the loaded tables take",
        ),
        run_case(
            &["--check", "--check-limit", "1"],
            0,
            "--check-limit 1 reached",
        )
        .stdout_has("not judged")
        .never("ok (0 txns)"),
        run_case(&["--rate", "0.001"], 0, "too few to measure").never("p99.9 0.0 us"),
        run_case(&["--rate", "1e9"], 0, "saturated"),
        // Lost or mixed data.
        case(
            &["sweep", &exp, "--resume", "--set", "duration=0.3"],
            2,
            "measured with duration=0.1, and this sweep has duration=0.3",
        ),
        case(
            &["sweep", &other, "--results", &e_results],
            2,
            "is of experiment 'e', not 'o'",
        ),
        case(&["sweep", &empty], 2, "sets nothing"),
        case(
            &["sweep", &label, "--dry-run"],
            2,
            "line 3: axes.protocol: the value 'a' does not set protocol",
        ),
        // Messages.
        case(&["run", "-t", "-1"], 2, "allowed 1 <= threads <= 1024"),
        // TPC-C's programs keep state a client process has not (they panicked here before).
        case(
            &[
                "run",
                "--connect",
                "127.0.0.1:9",
                "-w",
                "tpcc",
                "-p",
                "silo",
            ],
            2,
            "run tpcc with --interactive",
        ),
        case(&["run", "--records", "1.5"], 2, "allowed 1 <= records"),
        run_case(&["--ops", "1e1"], 0, "silo:"),
        case(&["plot", &run_json, "-o", &plots], 1, "Is a directory").never("IoError("),
        case(&["--help"], 1, "writing the output failed").stdout_to_dev_full(),
        case(&["--version"], 1, "writing the output failed").stdout_to_dev_full(),
        case(&["run", "-p", "all,silo"], 2, "`all` alone"),
        // The shifting workload (issue 27): each of its flags' ranges, and its flags elsewhere.
        case(
            &["run", "-w", "shifting", "--shift-period-ms", "0"],
            2,
            "1 <= ms <= 60000",
        ),
        case(
            &["run", "-w", "shifting", "--shift-period-ms", "-5"],
            2,
            "allowed 1 <= ms <= 60000",
        ),
        case(
            &[
                "run",
                "-w",
                "shifting",
                "--records",
                "10",
                "--large-reads",
                "20",
            ],
            2,
            "1 <= reads <= min(records, 4096) = 10",
        ),
        case(
            &["run", "-w", "shifting", "--large-reads", "1.5"],
            2,
            "allowed 1 <= reads <= min(records, 4096)",
        ),
        case(
            &["run", "-w", "ycsb", "--shift-period-ms", "100"],
            2,
            "--shift-period-ms does not apply to --workload ycsb",
        ),
        case(&["run", "--mocc-threshold", "64"], 2, "0 <= H <= 63"),
        run_case(
            &["--ds-opportunistic"],
            0,
            "--ds-opportunistic has no effect",
        ),
        run_case(
            &["--ops", "16", "--long-ops", "2", "--long-share", "0.5"],
            0,
            "--long-ops 2 is below --ops 16",
        ),
        // Output: run's JSON lines read as one anonymous experiment.
        case(&["report", &run_json], 0, "").stdout_has("## run"),
        // Progress: each phase announced (stderr is a pipe here, not a terminal)...
        run_case(&["--progress", "always"], 0, "silo: loading the tables").stdout_has("txn/s"),
        run_case(
            &["--progress", "always"],
            0,
            "silo: running (0 s warm-up + 0.1 s measured)",
        ),
        // ... and a phase longer than 5 s writes a line while it lasts, by default.
        Case {
            args: vec![
                "run".into(),
                "-p".into(),
                "silo".into(),
                "-d".into(),
                "5.5".into(),
                "--warmup".into(),
                "0".into(),
                "--records".into(),
                "1000".into(),
            ],
            ..case(
                &[],
                0,
                "silo: running (0 s warm-up + 5.5 s measured), 5 s so far",
            )
        },
        run_case(&["--progress", "never"], 0, "silo:").never("loading the tables"),
        // Compare: two files' medians, by their own noise.
        case(&["compare", &run2, &run2], 0, "")
            .stdout_has("| silo | ")
            .stdout_has("within noise"),
        case(&["compare", &run_json, &run_json], 0, "").stdout_has("noise unknown"),
        case(
            &["compare", &run_json, &e_results],
            2,
            "have no point and protocol in common",
        ),
        case(
            &["compare", &run_json, "/dev/zero"],
            2,
            "not a regular file",
        ),
    ];
    let failures: Vec<String> = cases.iter().filter_map(Case::check).collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Ctrl-C during `run -p A,B,C`: the runs that finished are printed and the run says it was
/// interrupted (exit 130). The signal is sent once the first protocol's line is out, so the
/// test judges by progress, not by time.
#[test]
fn ctrl_c_keeps_the_finished_runs() {
    let mut child = Command::new(binary())
        .args([
            "run",
            "-p",
            "silo,tictoc,nocc",
            "-d",
            "1",
            "--warmup",
            "0",
            "--records",
            "1000",
            "-t",
            "1",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start txbench");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    let mut line = String::new();
    while err.read_line(&mut line).expect("stderr") > 0 {
        seen.push_str(&line);
        if line.starts_with("silo:") {
            break;
        }
        line.clear();
    }
    assert!(seen.contains("silo:"), "no first run: {seen}");
    // SAFETY: kill(2) on our own child's pid, which it still is (not yet waited for).
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0);
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let e = finish(child, LIMIT);
    let all_err = format!("{seen}{}", rest.join().unwrap_or_default());
    assert!(!e.timed_out, "hung: {all_err}");
    assert_eq!(e.status.and_then(|s| s.code()), Some(130), "{all_err}");
    assert!(all_err.contains("interrupted: "), "{all_err}");
    assert!(
        e.stdout.contains("silo"),
        "the finished run is shown: {}",
        e.stdout
    );
    assert!(
        !all_err.contains("nocc:"),
        "the last run did not start: {all_err}"
    );
}

/// A 1000 x 1000 grid (a million points, more than a sweep runs in one go) is listed point by
/// point as it is validated: `--dry-run` and `--emit-jobs` print their first line before the
/// rest is even built. The test reads that line and stops the listing; before, nothing came out
/// (the whole grid was planned first, or refused).
#[test]
fn a_huge_grid_is_listed_as_it_is_validated() {
    let dir = scratch("huge");
    let big = write(
        &dir.join("big.toml"),
        &format!(
            "name = \"big\"\n[base]\nprotocol = \"silo\"\n[axes]\nseed = [{}]\npayload = [{}]\n",
            (0..1000)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(","),
            (1..=1000)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    );
    for (flag, first) in [
        ("--dry-run", "   1 seed=0 payload=1: "),
        ("--emit-jobs", " --point 1 --resume --results "),
    ] {
        let mut child = Command::new(binary())
            .args(["sweep", &big, flag])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start txbench");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        let mut second = String::new();
        let read = out.read_line(&mut line).expect("stdout");
        let _ = out.read_line(&mut second);
        // Stop the listing: its remaining 999,998 lines are not the test's business.
        let _ = child.kill();
        let _ = child.wait();
        assert!(read > 0, "{flag}: no first line");
        assert!(line.contains(first), "{flag}: {line}");
        assert!(
            second.contains("seed=0 payload=2") || second.contains("--point 2 "),
            "{flag}: {second}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// With `--repeat`, each median in the table carries the min-max of its runs, and the table
/// still fits 100 columns.
#[test]
fn repeated_runs_show_their_spread_beside_the_median() {
    let out = Command::new(binary())
        .args([
            "run",
            "-p",
            "nocc,silo,tictoc",
            "-d",
            "0.05",
            "--warmup",
            "0",
            "--records",
            "1000",
            "-t",
            "2",
            "--repeat",
            "3",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("medians of 3 runs per protocol"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('│') && !l.contains("protocol"))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    for row in &rows {
        let cells: Vec<&str> = row.split(['│', '┆']).map(str::trim).collect();
        // protocol, txn/s [min-max], vs nocc, abort %, p99 us, p99.9 us [min-max], ...
        let ranged = cells
            .iter()
            .filter(|c| c.contains(" [") && c.ends_with(']'));
        assert_eq!(ranged.count(), 2, "txn/s and p99.9 carry a range: {row}");
    }
    let widest = text
        .lines()
        .filter(|l| l.starts_with(['│', '┌', '╞', '└']))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    assert!(widest <= 100, "{widest} columns:\n{text}");
}

/// Another process keeping a core busy during the run: the run says the machine was busy.
#[test]
fn a_busy_machine_is_named() {
    // A busy loop in a child process of the test (not of txbench, whose own threads are its
    // own load).
    let mut busy = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .stdin(Stdio::null())
        .spawn()
        .expect("start a busy loop");
    let out = Command::new(binary())
        .args([
            "run",
            "-p",
            "silo",
            "-d",
            "1",
            "--warmup",
            "0",
            "--records",
            "1000",
            "-t",
            "1",
            "--format",
            "json",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let _ = busy.kill();
    let _ = busy.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the machine was busy: other processes kept "),
        "{stderr}"
    );
    let row: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap_or_default())
            .expect("a JSON line");
    let cores = row["other_processes_cores"]
        .as_f64()
        .expect("other_processes_cores");
    assert!(cores > 0.25, "{cores}");
}

// ---- the redo log (issue 25) ----

/// A fresh directory for one log case.
fn log_case_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("txbench-badlog-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// `--log` with a directory that cannot take a log, or a run it cannot log, exits 2 before
/// anything runs, naming the problem; log flags without `--log` too.
#[test]
fn bad_log_directories_and_runs_are_refused_before_the_run() {
    let holds = log_case_dir("holds");
    std::fs::write(holds.join("manifest.json"), "{}").expect("a stray manifest");
    let file = log_case_dir("file").join("plain");
    std::fs::write(&file, "").expect("a plain file");
    let missing = log_case_dir("missing").join("absent");
    let run = |dir: &Path, extra: &[&str]| {
        let mut args = vec!["run", "-w", "ycsb", "--records", "100", "-d", "0.1"];
        if !extra.contains(&"-p") {
            args.extend_from_slice(&["-p", "silo"]);
        }
        args.extend_from_slice(extra);
        let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        v.push("--log".into());
        v.push(dir.display().to_string());
        v
    };
    let cases = [
        (run(&missing, &[]), "does not exist"),
        (run(&file, &[]), "is not a directory"),
        (run(&holds, &[]), "holds another run's log"),
        (
            run(&log_case_dir("two"), &["-p", "silo,tictoc"]),
            "a log holds one run",
        ),
        (
            run(
                &log_case_dir("coro"),
                &["--executor", "coro", "--log-sync", "txn"],
            ),
            "--log-sync txn runs with --executor thread only",
        ),
        (
            run(&log_case_dir("group"), &["--log-group-us", "5"]),
            "--log-group-us",
        ),
        (
            run(&log_case_dir("ckpt-zero"), &["--checkpoint-s", "0"]),
            "invalid value '0' for --checkpoint-s: allowed 0 < seconds",
        ),
        (
            run(&log_case_dir("ckpt-neg"), &["--checkpoint-s", "-2"]),
            "invalid value '-2' for --checkpoint-s: allowed 0 < seconds",
        ),
        (
            run(&log_case_dir("ckpt-nan"), &["--checkpoint-s", "NaN"]),
            "invalid value 'NaN' for --checkpoint-s: allowed 0 < seconds",
        ),
        (
            run(&log_case_dir("ckpt-inf"), &["--checkpoint-s", "inf"]),
            "invalid value 'inf' for --checkpoint-s: allowed 0 < seconds",
        ),
        // Undo logging needs a protocol that holds a record from its first write on.
        (
            run(&log_case_dir("undo-silo"), &["--log-kind", "undo"]),
            "--log-kind undo logs a before-image at each first write, which needs a protocol \
             that holds the record from that write on: no_wait, wait_die, wound_wait, plor, \
             twopl_er, ord_lock, c_sched, calvin_ticket, decentsched (plor without \
             --plor-dwa), not silo",
        ),
        (
            run(
                &log_case_dir("undo-dwa"),
                &["-p", "plor", "--plor-dwa", "--log-kind", "undo"],
            ),
            "not plor --plor-dwa",
        ),
        (
            run(
                &log_case_dir("undo-ckpt"),
                &["-p", "no_wait", "--log-kind", "undo", "--checkpoint-s", "1"],
            ),
            "--log-kind undo takes no --checkpoint-s",
        ),
        (
            run(&log_case_dir("kind-bad"), &["--log-kind", "both"]),
            "invalid value 'both' for '--log-kind",
        ),
    ];
    let mut failures = Vec::new();
    for (args, message) in cases {
        let mut c = case(&[], 2, message);
        c.args = args;
        if let Some(f) = c.check() {
            failures.push(f);
        }
    }
    for (args, message) in [
        (
            &["run", "--log-sync", "group"][..],
            "--log-sync applies only with --log",
        ),
        (
            &["run", "--log-group-us", "1000"][..],
            "--log-group-us applies only with --log",
        ),
        (
            &["run", "--checkpoint-s", "1"][..],
            "--checkpoint-s applies only with --log",
        ),
        (
            &["run", "--log-kind", "undo"][..],
            "--log-kind applies only with --log",
        ),
    ] {
        if let Some(f) = case(args, 2, message).check() {
            failures.push(f);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An undo log (`--log-kind undo`) is written by a run and says so in its report and its
/// manifest, and `txbench recover` refuses it with exit 2, pointing to redo logging: its
/// before-images cannot rebuild in-memory tables.
#[test]
fn recover_refuses_an_undo_log() {
    let dir = log_case_dir("undo");
    let ran = Command::new(binary())
        .args(["run", "-p", "no_wait", "-w", "ycsb", "--records", "200"])
        .args(["--rmw", "-t", "2", "-d", "0.3", "--warmup", "0", "--no-pin"])
        .args([
            "--format",
            "json",
            "--log-sync",
            "none",
            "--log-kind",
            "undo",
            "--log-files",
            "2",
        ])
        .arg("--log")
        .arg(&dir)
        .output()
        .expect("run txbench");
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(stdout.lines().next().unwrap_or_default()).expect("a JSON report");
    let log = &report["log"];
    assert_eq!(log["kind"], "undo", "{stdout}");
    // Every frame of the workers' files reads back; the undo frames are the report's
    // committed and aborted attempts, each committed one with a before-image (--rmw writes).
    let (mut committed, mut aborted) = (0u64, 0u64);
    for w in 0..2 {
        let bytes = std::fs::read(dir.join(format!("log-{w:03}-000000.log"))).expect("log");
        let mut frames = txbench::log::format::FrameReader::new(&bytes);
        for f in frames.by_ref() {
            match f {
                txbench::log::format::Frame::Undo(u) if u.committed => {
                    assert!(
                        u.images.count > 0,
                        "a committed writer's frame without images"
                    );
                    committed += 1;
                }
                txbench::log::format::Frame::Undo(_) => aborted += 1,
                txbench::log::format::Frame::Txn(_) => panic!("a redo entry in an undo log"),
                _ => {}
            }
        }
        assert_eq!(frames.torn(), None, "worker {w}'s log reads to its end");
    }
    assert!(committed > 0);
    assert_eq!(log["txns_logged"].as_u64(), Some(committed), "{stdout}");
    assert_eq!(log["aborted_logged"].as_u64(), Some(aborted), "{stdout}");
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
    assert!(manifest.contains(r#""kind": "undo""#), "{manifest}");
    let c = case(
        &["recover", &dir.display().to_string()],
        2,
        "holds an undo log (--log-kind undo): before-images and commit marks cannot rebuild \
         the in-memory tables after a crash; log with --log-kind redo",
    );
    if let Some(f) = c.check() {
        panic!("{f}");
    }
}

/// `txbench recover` on a directory that holds no log exits 2 naming it; on a log whose file
/// was corrupted mid-way, it recovers the valid prefix and names the file and the offset where
/// it stopped.
#[test]
fn recover_refuses_a_non_log_and_names_where_a_corrupted_log_stopped() {
    let empty = log_case_dir("empty");
    let c = case(
        &["recover", &empty.display().to_string()],
        2,
        "holds no log",
    );
    if let Some(f) = c.check() {
        panic!("{f}");
    }
    let dir = log_case_dir("corrupt");
    let ran = Command::new(binary())
        .args([
            "run",
            "-p",
            "silo",
            "-w",
            "ycsb",
            "--records",
            "500",
            "--rmw",
            "-t",
            "1",
        ])
        .args([
            "-d",
            "0.3",
            "--warmup",
            "0",
            "--no-pin",
            "--log-sync",
            "none",
            "--log",
        ])
        .arg(&dir)
        .output()
        .expect("run txbench");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let file = dir.join("log-000-000000.log");
    let mut bytes = std::fs::read(&file).expect("log file");
    assert!(bytes.len() > 10_000, "a log of {} bytes", bytes.len());
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(&file, &bytes).expect("corrupt the log");
    let rec = Command::new(binary())
        .arg("recover")
        .arg(&dir)
        .output()
        .expect("run txbench recover");
    let out = String::from_utf8_lossy(&rec.stdout);
    assert_eq!(
        rec.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    assert!(out.contains("log-000-000000.log"), "{out}");
    assert!(out.contains("checksum mismatch at offset"), "{out}");
    let offset: usize = out
        .split("at offset ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("an offset");
    assert!(
        offset <= at && offset > 0,
        "stopped at {offset}, corrupted at {at}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run with checkpoints every 0.1 s: the newest checkpoint corrupted mid-file, recovery
/// falls back to the previous one (its logs are kept) and names the file and byte offset;
/// with both kept checkpoints corrupted and the log from the load removed, it exits 2 naming
/// each file and offset.
#[test]
fn recover_falls_back_from_a_corrupted_checkpoint_and_exits_2_when_none_is_usable() {
    let dir = log_case_dir("ckpt-corrupt");
    let ran = Command::new(binary())
        .args([
            "run",
            "-p",
            "silo",
            "-w",
            "ycsb",
            "--records",
            "2000",
            "--rmw",
        ])
        .args(["-t", "2", "-d", "1.5", "--warmup", "0", "--no-pin"])
        .args(["--checkpoint-s", "0.1", "--log"])
        .arg(&dir)
        .output()
        .expect("run txbench");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let mut checkpoints: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("log directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ckpt"))
        .collect();
    checkpoints.sort();
    assert_eq!(
        checkpoints.len(),
        2,
        "the newest two are kept: {checkpoints:?}"
    );
    assert!(
        !dir.join("log-000-000000.log").exists(),
        "the first segments were removed"
    );
    let corrupt = |path: &Path| {
        let mut bytes = std::fs::read(path).expect("checkpoint");
        let at = bytes.len() / 2;
        bytes[at] ^= 0x10;
        std::fs::write(path, &bytes).expect("corrupt it");
        at
    };
    let recover = || {
        Command::new(binary())
            .arg("recover")
            .arg(&dir)
            .output()
            .expect("run txbench recover")
    };
    let newest = &checkpoints[1];
    let at = corrupt(newest);
    let rec = recover();
    let (out, err) = (
        String::from_utf8_lossy(&rec.stdout),
        String::from_utf8_lossy(&rec.stderr),
    );
    assert_eq!(rec.status.code(), Some(0), "{out}{err}");
    let name = newest.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        err.contains(&name) && err.contains("checksum mismatch at byte offset"),
        "{err}"
    );
    let offset: usize = err
        .split("at byte offset ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .expect("an offset");
    assert!(offset <= at, "stopped at {offset}, corrupted at {at}");
    let previous = checkpoints[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert!(
        out.contains(&format!("({}", checkpoints[0].display())),
        "started from {previous}: {out}"
    );
    corrupt(&checkpoints[0]);
    let rec = recover();
    let err = String::from_utf8_lossy(&rec.stderr);
    assert_eq!(rec.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&name) && err.contains(&previous) && err.contains("at byte offset"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
