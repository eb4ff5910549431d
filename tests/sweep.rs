//! Experiment files end to end: `txbench sweep` appends one row per run, `--resume` finishes an
//! interrupted sweep without repeating a run, `--emit-jobs` commands plus `txbench merge` give the
//! same runs as one sweep, `txbench report` summarises, and a bad file exits 2 naming its line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn txbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(args)
        .output()
        .expect("run txbench")
}

fn ok(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// A fresh directory under the target dir for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 2 thread counts x 2 protocols, 2 repetitions: 8 short runs.
const EXPERIMENT: &str = "name = \"tiny\"\nrepetitions = 2\n[base]\nrecords = 1000\n\
                          duration = 0.05\nwarmup = 0\nno_pin = true\n[axes]\nthreads = [1, 2]\n\
                          protocol = [\"silo\", { label = \"plor+dwa\", protocol = \"plor\", plor_dwa = true }]\n";

fn rows(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (point, repetition) of each row, sorted.
fn runs(rows: &[serde_json::Value]) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = rows
        .iter()
        .map(|r| (r["point"].to_string(), r["repetition"].as_u64().unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn sweep_records_every_run_and_resume_finishes_an_interrupted_one() {
    let dir = scratch("sweep_resume");
    let file = dir.join("tiny.toml");
    std::fs::write(&file, EXPERIMENT).unwrap();
    let results = dir.join("r.jsonl");
    let (f, r) = (file.to_str().unwrap(), results.to_str().unwrap());
    ok(txbench(&["sweep", f, "--results", r]));
    let all = rows(&results);
    assert_eq!(all.len(), 8);
    let first = &all[0];
    assert_eq!(first["experiment"], "tiny");
    assert!(first["txbench"]["version"].is_string() && first["txbench"]["commit"].is_string());
    assert!(first["machine"]["cores"].as_u64().unwrap() >= 1);
    assert!(first["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(first["args"]["records"], "1000");
    assert!(first["report"]["throughput_tps"].as_f64().unwrap() > 0.0);
    // Interleaved: the first four rows are repetition 0 of every point.
    assert!(all[..4].iter().all(|r| r["repetition"] == 0));
    let variant = all.iter().find(|r| r["point"][1][1] == "plor+dwa").unwrap();
    assert_eq!(variant["report"]["protocol"], "plor");
    assert_eq!(variant["report"]["config"]["options"]["plor"]["dwa"], true);

    // Without --resume, a file that holds runs is not appended to.
    let again = txbench(&["sweep", f, "--results", r]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));

    // Interrupt: keep five rows and half of the sixth, as a killed sweep leaves them.
    let text = std::fs::read_to_string(&results).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = format!(
        "{}\n{}",
        lines[..5].join("\n"),
        &lines[5][..lines[5].len() / 2]
    );
    std::fs::write(&results, cut).unwrap();
    let out = txbench(&["sweep", f, "--results", r, "--resume"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    ok(out);
    assert!(stderr.contains("3 runs to do"), "{stderr}");
    assert!(stderr.contains("cut off"), "{stderr}");
    let resumed = rows(&results);
    assert_eq!(resumed.len(), 8);
    assert_eq!(runs(&resumed), runs(&all), "every run exactly once");

    let md = ok(txbench(&["report", r]));
    assert!(md.contains("## tiny"), "{md}");
    assert!(md.contains("| threads | silo | plor+dwa |"), "{md}");
    assert!(md.contains("median of 2 runs"), "{md}");

    let plots = dir.join("plots");
    let listed = ok(txbench(&["plot", r, "-o", plots.to_str().unwrap()]));
    // Four figures against the parameter and throughput, then the latency distribution and
    // the phase breakdown at the largest thread count, and throughput and abort ratio over time
    // (every run samples its rates), each as PNG and SVG.
    assert_eq!(listed.lines().count(), 16, "{listed}");
    assert!(listed.contains("tiny-throughput-over-time.svg"), "{listed}");
    assert!(listed.contains("tiny-latency-cdf.svg") && listed.contains("tiny-phases.png"));
    for f in listed.lines() {
        assert!(std::fs::metadata(f).unwrap().len() > 5_000, "{f}");
    }
    let bad = txbench(&["plot", r, "--x", "theta"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--x"));
}

#[test]
fn emitted_jobs_merge_into_the_whole_sweep() {
    let dir = scratch("sweep_jobs");
    let file = dir.join("tiny.toml");
    std::fs::write(
        &file,
        EXPERIMENT.replace("repetitions = 2", "repetitions = 1"),
    )
    .unwrap();
    let jobs_dir = dir.join("parts");
    let (f, j) = (file.to_str().unwrap(), jobs_dir.to_str().unwrap());
    let jobs = ok(txbench(&["sweep", f, "--emit-jobs", "--jobs-dir", j]));
    let jobs: Vec<&str> = jobs.lines().collect();
    assert_eq!(jobs.len(), 4, "one command per point");
    let mut parts = Vec::new();
    for job in &jobs {
        // Run each job as a shell would, with this binary.
        let words: Vec<&str> = job.split(' ').skip(1).collect();
        assert_eq!(words[0], "sweep");
        ok(txbench(&words));
        parts.push(words.last().unwrap().to_string());
    }
    // A job run twice (a resubmitted array task) adds nothing.
    let twice: Vec<&str> = jobs[0].split(' ').skip(1).collect();
    ok(txbench(&twice));
    let merged = dir.join("merged.jsonl");
    let mut args = vec!["merge", "-o", merged.to_str().unwrap()];
    args.extend(parts.iter().map(String::as_str));
    args.push(&parts[0]);
    let out = txbench(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    ok(out);
    assert!(stderr.contains("1 rows measured a run"), "{stderr}");
    let rows = rows(&merged);
    assert_eq!(rows.len(), 4);
    let points: std::collections::BTreeSet<String> =
        rows.iter().map(|r| r["point"].to_string()).collect();
    assert_eq!(points.len(), 4);
}

#[test]
fn a_bad_experiment_file_exits_2_naming_line_and_field() {
    let dir = scratch("sweep_bad");
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "[base]\nrecords = 1000\n\n[axes]\nthreads = [1, 0]\n",
    )
    .unwrap();
    let out = txbench(&["sweep", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.toml line 5"), "{stderr}");
    assert!(stderr.contains("--threads"), "{stderr}");
    assert!(!dir.join("results").exists(), "nothing ran");
}

/// A `binary` axis runs each point in a child process of the named build (here the same binary
/// twice, once through an environment variable), records that build, the child's wall time and
/// peak memory, and `txbench report` adds the ratio of each build to the first.
#[test]
fn a_binary_axis_compares_builds_in_child_processes() {
    let dir = scratch("sweep_binary");
    let file = dir.join("ab.toml");
    std::fs::write(
        &file,
        "name = \"ab\"\nrepetitions = 2\n[base]\nrecords = 1000\nduration = 0.05\nwarmup = 0\n\
         no_pin = true\nprotocol = \"silo,nocc\"\n[axes]\nbinary = [{ label = \"before\", \
         binary = \"${TXBENCH_BEFORE}\" }, { label = \"after\", binary = \"self\" }]\n",
    )
    .unwrap();
    let results = dir.join("ab.jsonl");
    let (f, r) = (file.to_str().unwrap(), results.to_str().unwrap());
    // Without the variable: exit 2 at the axis's line, naming it; nothing runs.
    let unset = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(["sweep", f, "--results", r])
        .env_remove("TXBENCH_BEFORE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&unset.stderr);
    assert_eq!(unset.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ab.toml line 10") && stderr.contains("TXBENCH_BEFORE"),
        "{stderr}"
    );
    // A path that is not a txbench executable: exit 2 too.
    let bad = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(["sweep", f, "--results", r])
        .env("TXBENCH_BEFORE", dir.join("nope"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(!results.exists(), "nothing ran");
    let run = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(["sweep", f, "--results", r])
        .env("TXBENCH_BEFORE", env!("CARGO_BIN_EXE_txbench"))
        .output()
        .unwrap();
    ok(run);
    let all = rows(&results);
    assert_eq!(all.len(), 8, "2 builds x 2 protocols x 2 repetitions");
    // Interleaved: the builds alternate within each repetition.
    assert_eq!(all[0]["point"][0][1], "before");
    assert_eq!(all[2]["point"][0][1], "after");
    for row in &all {
        assert!(row["args"]["binary"].is_string());
        assert_ne!(
            row["txbench"]["commit"], "",
            "the child's build is recorded"
        );
        assert!(row["report"]["process"]["wall_s"].as_f64().unwrap() > 0.0);
        assert!(row["report"]["process"]["max_rss_kb"].as_i64().unwrap() > 0);
        assert!(row["report"]["throughput_tps"].as_f64().unwrap() > 0.0);
        assert_eq!(row["report"]["point"], row["point"]);
    }
    let report = ok(txbench(&["report", r, "--metric", "throughput,max_rss"]));
    assert!(
        report.contains("### throughput (txn/s): after / before (ratio of medians)"),
        "{report}"
    );
    assert!(
        report.contains("peak memory of the run's process (MiB)"),
        "{report}"
    );
    let bad_metric = txbench(&["report", r, "--metric", "speed"]);
    assert_eq!(bad_metric.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_metric.stderr).contains("--metric"));
}

/// Every experiment file in `experiments/` stays valid as flags change: it parses and every point
/// validates (`--dry-run` runs nothing; the builds an A/B file compares are this one).
#[test]
fn the_shipped_experiment_files_are_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let listed = ok(Command::new(env!("CARGO_BIN_EXE_txbench"))
                .args(["sweep", path.to_str().unwrap(), "--dry-run"])
                .env("TXBENCH_BEFORE", env!("CARGO_BIN_EXE_txbench"))
                .env("TXBENCH_AFTER", env!("CARGO_BIN_EXE_txbench"))
                .output()
                .unwrap());
            assert!(listed.lines().count() > 1, "{}", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 5, "one file per table of docs/RESULTS.md");
}

/// A log directory holds one run's log, so `log = "PARENT"` gives every run (each repetition
/// included) a fresh directory under PARENT, removed after the run: two repetitions of a
/// logged point both run, where one directory shared by both would refuse the second.
#[test]
fn a_log_parent_gives_each_run_a_fresh_log_directory() {
    let dir = scratch("sweep_log_fresh");
    let parent = dir.join("logs");
    let file = dir.join("logged.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"logged\"\nrepetitions = 2\n[base]\nrecords = 1000\nduration = 0.05\n\
             warmup = 0\nno_pin = true\nthreads = 1\nprotocol = \"silo\"\nlog_sync = \"none\"\n\
             log = {parent:?}\n"
        ),
    )
    .unwrap();
    let results = dir.join("r.jsonl");
    ok(txbench(&[
        "sweep",
        file.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]));
    let all = rows(&results);
    assert_eq!(all.len(), 2, "both repetitions ran");
    for row in &all {
        assert!(row["report"]["log"].is_object(), "{row}");
        assert_eq!(row["args"]["log"], parent.to_str().unwrap());
    }
    let left: Vec<_> = std::fs::read_dir(&parent).unwrap().collect();
    assert!(left.is_empty(), "each run's directory is removed: {left:?}");
}

/// One axis compares no log with redo and undo logs, `exclude` leaves out the combination a
/// protocol refuses (Silo has no undo log), the log's settings in `[base]` apply to the logged
/// points only, and `keep_logs` keeps each run's directory: a redo log that `txbench recover`
/// rebuilds from, since the manifest keeps the run's arguments.
#[test]
fn a_log_axis_compares_no_log_redo_and_undo() {
    let dir = scratch("sweep_log_axis");
    let parent = dir.join("logs");
    let file = dir.join("kinds.toml");
    let p = format!("{parent:?}");
    std::fs::write(
        &file,
        format!(
            "name = \"kinds\"\nkeep_logs = true\nexclude = [{{ protocol = \"silo\", log = \"undo\" }}]\n\
             [base]\nrecords = 1000\nduration = 0.05\nwarmup = 0\nno_pin = true\nthreads = 1\n\
             log_sync = \"none\"\n[axes]\nprotocol = [\"silo\", \"no_wait\"]\n\
             log = [{{ label = \"none\", log = false }}, {{ label = \"redo\", log = {p} }}, \
             {{ label = \"undo\", log = {p}, log_kind = \"undo\" }}]\n"
        ),
    )
    .unwrap();
    let results = dir.join("r.jsonl");
    let (f, r) = (file.to_str().unwrap(), results.to_str().unwrap());
    let listed = ok(txbench(&["sweep", f, "--dry-run"]));
    assert_eq!(
        listed.lines().count(),
        5,
        "silo x undo is left out: {listed}"
    );
    // `--point` counts every point of the grid: point 3 is silo x undo.
    let excluded = txbench(&["sweep", f, "--point", "3", "--results", r]);
    assert_eq!(excluded.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&excluded.stderr).contains("exclude"));
    ok(txbench(&["sweep", f, "--results", r]));
    let all = rows(&results);
    let points: Vec<String> = all
        .iter()
        .map(|r| format!("{} {}", r["point"][0][1], r["point"][1][1]))
        .collect();
    assert_eq!(
        points,
        [
            "\"silo\" \"none\"",
            "\"silo\" \"redo\"",
            "\"no_wait\" \"none\"",
            "\"no_wait\" \"redo\"",
            "\"no_wait\" \"undo\""
        ]
    );
    for row in &all {
        let logged = row["point"][1][1] != "none";
        assert_eq!(row["report"]["log"].is_object(), logged, "{row}");
        assert_eq!(row["args"].get("log-sync").is_some(), logged, "{row}");
    }
    let mut kept: Vec<PathBuf> = std::fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 3, "one kept directory per logged run: {kept:?}");
    let redo = kept
        .iter()
        .find(|d| d.to_str().unwrap().contains("point-2-rep-1"))
        .expect("silo x redo is point 2");
    let recovered = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .arg("recover")
        .arg(redo)
        .output()
        .unwrap();
    assert!(
        recovered.status.success(),
        "{}",
        String::from_utf8_lossy(&recovered.stderr)
    );
}

/// A log parent that cannot be made a directory is bad input: exit 2 naming the line and the
/// directory, before anything runs.
#[test]
fn a_log_parent_that_cannot_be_created_exits_2() {
    let dir = scratch("sweep_log_bad");
    let blocker = dir.join("a-file");
    std::fs::write(&blocker, b"").unwrap();
    let file = dir.join("bad.toml");
    let results = dir.join("r.jsonl");
    for parent in [blocker.join("logs"), blocker.clone()] {
        std::fs::write(
            &file,
            format!(
                "[base]\nrecords = 1000\nduration = 0.05\nprotocol = \"silo\"\n[axes]\n\
                 log = [false, {parent:?}]\n"
            ),
        )
        .unwrap();
        let out = txbench(&[
            "sweep",
            file.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            stderr.contains("bad.toml line 6")
                && stderr.contains("cannot create the log parent directory")
                && stderr.contains(parent.to_str().unwrap()),
            "{stderr}"
        );
        assert!(!results.exists(), "nothing ran");
    }
}
