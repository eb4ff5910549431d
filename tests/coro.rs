//! The SGPM coroutine executor (`--executor coro --queue Q`) through the command line: every
//! serializable protocol stays serializable under it on every workload; transactions that wait
//! for a coroutine of their own thread get their turn (one thread, Q >= 2, which livelocks if any
//! protocol spins inside an operation); and the report carries the signals.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every serializable protocol that needs no declared access set, as `-p` lists (MOCC twice: RW
/// lock and MQL); the declared-set ones are [`DETERMINISTIC_RUNS`] and `twopl_er`'s own runs.
const PROTOCOL_RUNS: &[&[&str]] = &[
    &["-p", "no_wait,wait_die,wound_wait,silo,tictoc,mocc,plor"],
    &["-p", "mocc", "--mocc-lock", "mql"],
    &["-p", "cicada,ermia,mvto"],
];

/// A run that has not finished after this long is stuck (every run below is well under a
/// second of measured time).
const STUCK: Duration = Duration::from_secs(120);

/// Runs `txbench run ARGS --format json` and returns its JSON lines; fails the test if it is
/// stuck or fails. Both pipes are drained by threads while the child runs: a report larger than
/// the pipe's buffer (64 KiB: seven protocols with a warning each on a loaded machine come close)
/// would otherwise block the child's last write, and the run would look stuck.
fn run_json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .arg("run")
        .args(args)
        .args(["--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run txbench");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                p.read_to_end(&mut bytes).expect("read a pipe");
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > STUCK {
            child.kill().expect("kill a stuck run");
            panic!("stuck for {STUCK:?}: txbench run {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(
        status.success(),
        "txbench run {args:?}: {}",
        String::from_utf8_lossy(&stderr)
    );
    String::from_utf8(stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// Runs every protocol with `common` flags in check mode and asserts each run committed and
/// passed the checker with zero cycles. Returns the reports.
fn every_protocol_checked(common: &[&str]) -> Vec<serde_json::Value> {
    runs_checked(PROTOCOL_RUNS, common)
}

/// [`every_protocol_checked`] over the `-p` lists of `runs`.
fn runs_checked(runs: &[&[&str]], common: &[&str]) -> Vec<serde_json::Value> {
    let mut reports = Vec::new();
    for protocols in runs {
        let args: Vec<&str> = common
            .iter()
            .chain(protocols.iter())
            .chain(["--check", "--warmup", "0"].iter())
            .copied()
            .collect();
        for r in run_json(&args) {
            let name = r["protocol"].as_str().unwrap().to_string();
            assert!(
                r["commits"].as_u64().unwrap() > 0,
                "{name} {common:?}: no commits"
            );
            assert_eq!(r["check"]["cycles"], 0, "{name} {common:?}: {}", r["check"]);
            assert_eq!(
                r["check"]["passed"], true,
                "{name} {common:?}: {}",
                r["check"]
            );
            assert_eq!(r["executor"], "coro");
            reports.push(r);
        }
    }
    reports
}

const ONE_THREAD_EIGHT: &[&str] = &["--executor", "coro", "-t", "1", "--queue", "8"];

#[test]
fn one_thread_eight_coroutines_ycsb_blind_and_rmw() {
    for writes in ["--blind", "--rmw"] {
        let mut args = ONE_THREAD_EIGHT.to_vec();
        args.extend(["--records", "1000", "--theta", "0.99", writes, "-d", "0.2"]);
        every_protocol_checked(&args);
    }
}

#[test]
fn one_thread_eight_coroutines_long_scan_and_tpcc() {
    let mut scan = ONE_THREAD_EIGHT.to_vec();
    scan.extend([
        "-w",
        "long-scan",
        "--records",
        "5000",
        "--scan-length",
        "100",
    ]);
    scan.extend(["-d", "0.2"]);
    every_protocol_checked(&scan);
    let mut tpcc = ONE_THREAD_EIGHT.to_vec();
    tpcc.extend(["-w", "tpcc", "--warehouses", "1", "-d", "0.3"]);
    every_protocol_checked(&tpcc);
}

/// One thread, eight coroutines, and a pause before every commit (ReadPhaseExtension, which the
/// coroutine executor spends running the thread's other coroutines): a transaction keeps its
/// locks (2PL, PLOR, MOCC's read locks) while the thread's other transactions run into them. They
/// must wait (AG) and get the record once the holder commits: a protocol that spun inside an
/// operation on a lock held by a coroutine of its own thread would never return.
#[test]
fn waits_for_a_coroutine_of_the_same_thread_end() {
    let mut args = ONE_THREAD_EIGHT.to_vec();
    args.extend([
        "--records",
        "64",
        "--ops",
        "8",
        "--theta",
        "0.99",
        "--rmw",
        "-d",
        "0.2",
    ]);
    args.extend(["--read-phase-extension", "20000"]);
    let reports = every_protocol_checked(&args);
    let waited: Vec<_> = reports
        .iter()
        .filter(|r| r["signals"]["ag"].as_u64().unwrap() > 0)
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    for locking in ["wait_die", "wound_wait", "plor"] {
        assert!(
            waited.contains(&locking),
            "{locking} never waited: {waited:?}"
        );
    }
}

#[test]
fn signals_follow_table_one() {
    let args = [
        "--executor",
        "coro",
        "-t",
        "2",
        "--queue",
        "4",
        "--records",
        "1000",
        "--theta",
        "0.99",
        "--rmw",
        "-d",
        "0.3",
        "--warmup",
        "0",
        "-p",
        "no_wait,wound_wait,silo,plor",
    ];
    for r in run_json(&args) {
        let s = &r["signals"];
        let count = |k: &str| s[k].as_u64().unwrap();
        let aborts = r["aborts"].as_u64().unwrap();
        match r["protocol"].as_str().unwrap() {
            // Every retried abort is one signal: RR for the 2PL family.
            "no_wait" => {
                assert_eq!(count("rr"), aborts, "{s}");
                assert_eq!(count("ag"), 0, "no-wait never waits: {s}");
            }
            "wound_wait" => assert_eq!(count("rr"), aborts, "{s}"),
            // PLOR reruns every abort in place, validation aborts of read-only transactions
            // included: its priority and read-only abort count live on the worker.
            "plor" => {
                assert_eq!(count("rr"), aborts, "{s}");
                assert!(aborts > 0, "no abort to judge the signal by: {s}");
            }
            // Silo: RR on a locked write (lock_conflict), ML on failed read validation.
            "silo" => {
                let by = &r["aborts_by_reason"];
                let reason = |k: &str| by.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
                assert_eq!(count("ml"), reason("read_validation"), "{s} {by}");
                assert_eq!(count("rr"), reason("lock_conflict"), "{s} {by}");
            }
            other => panic!("unexpected {other}"),
        }
        assert_eq!(
            count("sf") + count("nb"),
            0,
            "none of these swaps or runs in batches: {s}"
        );
    }
}

#[test]
fn thread_executor_reports_no_signals_and_queue_one() {
    let r = &run_json(&[
        "-p",
        "silo",
        "--records",
        "1000",
        "-t",
        "2",
        "-d",
        "0.1",
        "--warmup",
        "0",
    ])[0];
    assert_eq!(r["executor"], "thread");
    assert_eq!(r["queue"], 1);
    assert_eq!(r["signals"], serde_json::json!({}));
}

#[test]
fn bad_executor_flags_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--queue", "4"],
            "--queue applies only with --executor coro",
        ),
        (&["--executor", "coro", "--queue", "0"], "--queue"),
        (&["--executor", "fibers"], "--executor"),
    ];
    for (args, msg) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_txbench"))
            .arg("run")
            .args(*args)
            .output()
            .expect("run txbench");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

/// SGPM's own workload, scaled down: normal keys (sd 200 around key 10,000 of 20,000), 100
/// operations, half of them writes; 2 threads x 4 coroutines, every protocol serializable.
#[test]
fn sgpm_normal_keys_under_coroutines() {
    let args = [
        "--executor",
        "coro",
        "-t",
        "2",
        "--queue",
        "4",
        "--preset",
        "sgpm-high",
        "--records",
        "20000",
        "--key-mean",
        "10000",
        "--key-sd",
        "200",
        "-d",
        "0.3",
    ];
    let reports = every_protocol_checked(&args);
    for r in &reports {
        assert_eq!(r["config"]["key_dist"], "normal", "{}", r["config"]);
        assert_eq!(r["config"]["key_sd"], 200.0);
        assert_eq!(r["config"]["ops"], 100);
    }
}

/// Past the locks' one-word (64) and two-word (127) bitmaps: one thread with 200 transactions in
/// flight, and four threads with 256 each (1024, the most a run may have), every protocol
/// checked on high-contention YCSB. WAIT_DIE, WOUND_WAIT and PLOR then run with their wide locks,
/// and ERMIA with its wide reader registries.
#[test]
fn hundreds_of_coroutines_every_protocol_checked() {
    for (threads, queue) in [("1", "200"), ("4", "256")] {
        let mut args = vec!["--executor", "coro", "-t", threads, "--queue", queue];
        args.extend(["--records", "1000", "--theta", "0.99", "--rmw", "-d", "0.2"]);
        for r in every_protocol_checked(&args) {
            assert_eq!(r["queue"].as_u64(), queue.parse().ok(), "{r}");
        }
    }
}

/// The protocols that schedule from declared access sets, DecentSched also with opportunistic
/// execution.
const DETERMINISTIC_RUNS: &[&[&str]] = &[
    &[
        "-p",
        "decentsched,ord_lock,calvin,calvin_ticket,c_sched,bohm,pwv",
    ],
    &["-p", "decentsched", "--ds-opportunistic"],
];

/// Deterministic protocols in check mode under `common` flags: serializable, and no abort but
/// the workload's own (a re-execution is not one).
fn deterministic_checked(common: &[&str]) -> Vec<serde_json::Value> {
    let reports = runs_checked(DETERMINISTIC_RUNS, common);
    for r in &reports {
        let name = r["protocol"].as_str().unwrap();
        let reasons = r["aborts_by_reason"].as_object().unwrap();
        assert!(
            reasons.keys().all(|k| k == "user"),
            "{name} {common:?}: concurrency-control aborts {reasons:?}"
        );
        let commits = r["commits"].as_u64().unwrap_or(0);
        assert!(commits > 0, "{name} {common:?}: nothing committed");
        // Warnings other than about the machine (other tests' runs share it) are findings.
        let findings: Vec<&serde_json::Value> = r
            .get("warnings")
            .and_then(|w| w.as_array())
            .map(|w| {
                w.iter()
                    .filter(|w| {
                        !w.as_str()
                            .is_some_and(|w| w.starts_with("the machine was busy"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert!(findings.is_empty(), "{name}: {findings:?}");
    }
    assert_eq!(reports.len(), 8);
    reports
}

/// One thread of eight coroutines runs every deterministic protocol: each slot declares its
/// transaction's set and drives the protocol's `schedule`, whose waits suspend the slot (AG)
/// instead of spinning on a transaction of a sibling coroutine. YCSB blind and read-modify-write
/// at high contention, then TPC-C NP (its user aborts only).
#[test]
fn deterministic_protocols_one_thread_eight_coroutines() {
    for writes in ["--blind", "--rmw"] {
        let mut args = ONE_THREAD_EIGHT.to_vec();
        args.extend(["--records", "1000", "--theta", "0.99", writes, "-d", "0.2"]);
        let reports = deterministic_checked(&args);
        let waited = reports
            .iter()
            .filter(|r| r["signals"]["ag"].as_u64().unwrap() > 0)
            .count();
        assert!(
            waited > 0,
            "no deterministic protocol ever waited: {writes}"
        );
    }
    let mut tpcc = ONE_THREAD_EIGHT.to_vec();
    tpcc.extend([
        "-w",
        "tpcc",
        "--mix",
        "np",
        "--warehouses",
        "1",
        "-d",
        "0.3",
    ]);
    for r in deterministic_checked(&tpcc) {
        assert_eq!(r["check"]["consistency_violations"], 0, "{}", r["protocol"]);
    }
}

/// 2PL with early release under one thread of eight coroutines: each slot drives `schedule`,
/// whose lock waits suspend the slot (AG), on YCSB blind and read-modify-write at high
/// contention and on long-scan, checked, with no abort at all (it never aborts on its own and
/// these workloads have no user aborts).
#[test]
fn early_release_one_thread_eight_coroutines() {
    let mut runs = Vec::new();
    for writes in ["--blind", "--rmw"] {
        let mut args = ONE_THREAD_EIGHT.to_vec();
        args.extend(["--records", "1000", "--theta", "0.99", writes, "-d", "0.2"]);
        runs.extend(runs_checked(&[&["-p", "twopl_er"]], &args));
    }
    let mut scan = ONE_THREAD_EIGHT.to_vec();
    scan.extend(["-w", "long-scan", "-d", "0.2"]);
    runs.extend(runs_checked(&[&["-p", "twopl_er"]], &scan));
    assert_eq!(runs.len(), 3);
    for r in &runs {
        assert_eq!(r["aborts"], 0, "{r}");
        assert!(r["commits"].as_u64().unwrap_or(0) > 0, "{r}");
    }
}

/// Aria and the no-wait forms of batched Calvin, BOHM and PWV under coroutines through the
/// command line: checked, and the report counts their batch conflicts as SGPM's table 1 signals
/// (one per retried abort): Aria's as NB (the transaction moves to the next batch), and a lock
/// Calvin_NW found taken at its turn or a version BOHM_NW or PWV_NW found not produced at its
/// turn as SF (it swaps places with the global queue's front); never RR or ML. Waiting for the
/// batch's other members is AG.
#[test]
fn batch_protocols_report_next_batch_and_swap_front_signals() {
    let mut args = vec!["--executor", "coro", "-t", "2", "--queue", "4"];
    args.extend(["--records", "64", "--theta", "0.99", "--rmw", "-d", "0.3"]);
    let runs: &[&[&str]] = &[
        &["-p", "aria"],
        &["-p", "aria", "--aria-reordering"],
        &["-p", "calvin", "--calvin-no-wait"],
        &["-p", "bohm", "--bohm-no-wait"],
        &["-p", "pwv", "--pwv-no-wait"],
    ];
    for r in runs_checked(runs, &args) {
        let s = &r["signals"];
        let count = |k: &str| s[k].as_u64().unwrap();
        let aborts = r["aborts"].as_u64().unwrap();
        assert!(aborts > 0, "{r}");
        let (moved, other) = if r["protocol"] == "aria" {
            ("nb", "sf")
        } else {
            ("sf", "nb")
        };
        assert_eq!(count(moved), aborts, "{}: {s}", r["protocol"]);
        assert_eq!(count("rr") + count("ml") + count(other), 0, "{s}");
        assert!(count("ag") > 0, "members wait for each other: {s}");
    }
}

/// Aria's fallback phase under coroutines through the command line, with and without
/// deterministic reordering: checked, each lost conflict reruns in its own batch (RR), and none
/// moves to the next batch (NB) on YCSB, whose retries run the same request (the access set
/// never changes); the report counts the fallback's commits.
#[test]
fn aria_fallback_reruns_in_its_batch() {
    let mut args = vec!["--executor", "coro", "-t", "2", "--queue", "4"];
    args.extend(["--records", "64", "--theta", "0.99", "--rmw", "-d", "0.3"]);
    let runs: &[&[&str]] = &[
        &["-p", "aria", "--aria-fallback"],
        &["-p", "aria", "--aria-fallback", "--aria-reordering"],
    ];
    for r in runs_checked(runs, &args) {
        let s = &r["signals"];
        let count = |k: &str| s[k].as_u64().unwrap();
        let aborts = r["aborts"].as_u64().unwrap();
        assert!(aborts > 0, "{r}");
        assert_eq!(count("rr"), aborts, "{s}");
        assert_eq!(count("nb") + count("ml") + count("sf"), 0, "{s}");
        let stats = &r["protocol_stats"];
        assert!(stats["fallback_commits"].as_f64().unwrap() > 0.0, "{stats}");
        assert_eq!(stats["fallback_aborts"].as_f64().unwrap(), 0.0, "{stats}");
    }
}

/// Logging under coroutines (issue 25): every slot is a logged protocol worker with a log file
/// of its own, and its thread acknowledges each commit once durable. PLOR figure 14's undo log
/// runs with Q transactions in flight per thread (before-images of aborted attempts logged
/// too); a coroutine run's redo log, checkpointed while it runs, recovers (`txbench recover`:
/// TPC-C's consistency conditions hold); `--log-sync txn`, whose commit waits for its own flush and would block the thread's
/// other transactions, exits 2. The build before this test refused every log under coro.
#[test]
fn undo_and_redo_logs_under_coroutines() {
    let fresh = |name: &str| {
        let dir =
            std::env::temp_dir().join(format!("txbench-coro-log-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir
    };
    let coro = [
        "--executor",
        "coro",
        "-t",
        "2",
        "--queue",
        "4",
        "-d",
        "0.3",
        "--warmup",
        "0",
    ];
    let log_files = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("log-")
            })
            .count()
    };

    let undo = fresh("undo");
    let mut args = coro.to_vec();
    args.extend([
        "-p",
        "no_wait",
        "--records",
        "64",
        "--theta",
        "0.99",
        "--rmw",
    ]);
    args.extend(["--log", undo.to_str().unwrap(), "--log-kind", "undo"]);
    args.extend(["--log-files", "8"]);
    let r = &run_json(&args)[0];
    let log = &r["log"];
    assert_eq!(log["kind"], "undo", "{log}");
    assert!(log["txns_logged"].as_u64().unwrap() > 0, "{log}");
    assert!(
        log["aborted_logged"].as_u64().unwrap() <= r["aborts"].as_u64().unwrap(),
        "{r}"
    );
    assert!(log["acknowledged"].as_u64().unwrap() > 0, "{log}");
    assert!(
        log["durable_latency_us"]["p999"].as_f64().unwrap() > 0.0,
        "{log}"
    );
    // Group sync (the default): every flush synced, each flush and sync timed.
    assert!(
        log["fsync_latency_us"]["p50"].as_f64().unwrap() > 0.0,
        "{log}"
    );
    assert!(
        log["flush_latency_us"]["max"].as_f64().unwrap()
            >= log["fsync_latency_us"]["p50"].as_f64().unwrap(),
        "{log}"
    );
    assert_eq!(
        log_files(&undo),
        8,
        "--log-files 8: one log file per slot worker (2 threads x 4)"
    );

    let redo = fresh("redo");
    let mut args = coro.to_vec();
    args.extend(["-p", "silo", "-w", "tpcc", "--warehouses", "1"]);
    args.extend(["--log", redo.to_str().unwrap(), "--log-sync", "none"]);
    // Checkpoints beside the coroutines: recovery starts from the newest one.
    args.extend(["--checkpoint-s", "0.05"]);
    let r = &run_json(&args)[0];
    assert!(r["log"]["txns_logged"].as_u64().unwrap() > 0, "{r}");
    // The default: one log for the 8 slot workers.
    assert!(log_files(&redo) >= 1, "a segment or more of the log");
    assert!(
        !redo.join("log-001-000000.log").exists(),
        "one log per 8 workers by default"
    );
    let recovered = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .arg("recover")
        .arg(&redo)
        .output()
        .expect("run txbench recover");
    assert!(
        recovered.status.success(),
        "{}{}",
        String::from_utf8_lossy(&recovered.stdout),
        String::from_utf8_lossy(&recovered.stderr)
    );

    let txn = fresh("txn");
    let refused = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .arg("run")
        .args(coro)
        .args([
            "-p",
            "no_wait",
            "--log",
            txn.to_str().unwrap(),
            "--log-sync",
            "txn",
        ])
        .output()
        .expect("run txbench");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--log-sync txn runs with --executor thread only"),
        "{stderr}"
    );
    for d in [undo, redo, txn] {
        let _ = std::fs::remove_dir_all(d);
    }
}
