//! The command line: bad input is rejected before any work with exit status 2 and a message
//! naming the parameter; good input produces the documented JSON and CSV fields.

use std::process::{Command, Output};

fn txbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(args)
        .output()
        .expect("run txbench")
}

#[test]
fn invalid_input_exits_2_naming_the_parameter() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--theta", "-1"], "--theta"),
        (&["run", "--records", "0"], "--records"),
        (&["run", "--records", "10", "--ops", "11"], "--ops"),
        (&["run", "--read-ratio", "2"], "--read-ratio"),
        (&["run", "--protocol", "silo,nope"], "--protocol"),
        (&["run", "--threads", "0"], "--threads"),
        (&["run", "--duration", "0"], "--duration"),
        (&["run", "--workload", "tpcx"], "--workload"),
        (&["run", "--theta", "abc"], "--theta"),
        (&["run", "-p", "ord_lock", "-w", "tpcc"], "--mix np"),
        (
            &["run", "-p", "decentsched", "--ds-queues", "0"],
            "--ds-queues",
        ),
        (
            &["run", "-p", "decentsched", "--ds-epoch-us", "0"],
            "--ds-epoch-us",
        ),
        (
            &[
                "run",
                "-p",
                "decentsched",
                "-t",
                "512",
                "--ds-epoch-txns",
                "1024",
            ],
            "--ds-epoch-txns",
        ),
        (&["run", "--theta", "10.5"], "0 <= theta <= 10"),
        (&["run", "--theta", "nan"], "0 <= theta <= 10"),
        (&["run", "--theta", "10", "--ops", "16"], "--theta"),
        (&["run", "-p", "plor", "--plor-slack", "-1"], "--plor-slack"),
        (
            &["run", "-p", "plor", "--plor-slack", "nan"],
            "--plor-slack",
        ),
        (
            &["run", "-p", "plor", "--plor-priority", "soon"],
            "--plor-priority",
        ),
        (
            &["run", "-p", "plor", "--plor-ro-threshold", "-2"],
            "--plor-ro-threshold",
        ),
        (&["run", "-p", "ermia", "--threads", "1025"], "--threads"),
        (&["run", "-p", "aria", "--batch-size", "0"], "--batch-size"),
        (
            &["run", "-p", "aria", "--batch-size", "1025"],
            "--batch-size",
        ),
        (
            &["run", "-p", "aria", "--batch-timeout-us", "10000001"],
            "--batch-timeout-us",
        ),
        // The one protocol a server refuses (DecentSched and the batch protocols are served).
        (&["serve", "-p", "twopl_er", "-d", "1"], "in-place writes"),
        (
            &["run", "--workload", "tpcc", "--warehouses", "0"],
            "--warehouses",
        ),
        (
            &["run", "--workload", "tpcc", "--warehouses", "100000"],
            "--warehouses",
        ),
        (
            &["run", "-w", "tpcc", "--mix", "new_order=50,payment=40"],
            "--mix",
        ),
        (
            &["run", "-w", "tpcc", "--mix", "new_order=50,payment=40"],
            "sum to 90",
        ),
        (
            &["run", "-w", "tpcc", "--mix", "new_order=50,foo=50"],
            "--mix",
        ),
        (
            &["run", "-w", "tpcc", "--mix", "new_order=50,foo=50"],
            "unknown transaction 'foo'",
        ),
        (
            &["run", "-w", "tpcc", "--tpcc-spare-orders", "0"],
            "--tpcc-spare-orders",
        ),
        (
            &["run", "-w", "tpcc", "--stock-level-isolation", "snapshot"],
            "--stock-level-isolation",
        ),
        (&["run", "-w", "tpcc", "--theta", "0.5"], "--theta"),
        (&["run", "--warehouses", "2"], "--warehouses"),
        (&["run", "-w", "long-scan", "--mix", "np"], "--mix"),
        (
            &["run", "--check-limit", "100"],
            "--check-limit applies only with --check",
        ),
        (&["run", "--check", "--check-limit", "0"], "--check-limit"),
        (
            &["run", "--check", "--check-limit", "18446744073709551615"],
            "--check-limit",
        ),
    ];
    for (args, param) in cases {
        let out = txbench(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(param), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} started work");
    }
}

#[test]
fn list_names_every_protocol_and_preset() {
    let out = txbench(&["list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for p in txbench::ProtocolKind::ALL {
        assert!(text.contains(p.name()), "missing {p}");
    }
    for flag in [
        "--plor-dwa",
        "--plor-ro-threshold",
        "--plor-priority",
        "--plor-slack",
    ] {
        assert!(text.contains(flag), "missing {flag}");
    }
    for (preset, _) in txbench::config::PRESETS {
        assert!(text.contains(preset), "missing {preset}");
    }
    for (workload, _) in txbench::config::WORKLOADS {
        assert!(text.contains(workload), "missing {workload}");
    }
}

#[test]
fn list_documents_tpcc() {
    let out = txbench(&["list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "tpcc",
        "--warehouses",
        "--mix",
        "--stock-level-isolation",
        "read-committed",
        "--warehouse-binding",
        "random",
        "--tpcc-spare-orders",
        "NAME=PCT",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
    for t in txbench::workload::tpcc::TxnType::ALL {
        assert!(text.contains(t.name()), "missing {}", t.name());
    }
}

/// Skew past 1 (the exact sampler) runs end to end, and the history checker passes under it.
#[test]
fn skew_above_one_runs_and_checks() {
    let mut argv = short_run("silo,no_wait", "2");
    argv.extend([
        "--ops", "8", "--theta", "1.5", "--check", "--format", "json",
    ]);
    let out = txbench(&argv);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("one JSON object per line");
        assert_eq!(
            v["check"]["passed"],
            serde_json::Value::Bool(true),
            "{line}"
        );
        assert!(v["commits"].as_u64().unwrap() > 0, "{line}");
    }
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
}

#[test]
fn json_has_the_documented_fields_and_check_passes() {
    let out = txbench(&[
        "run",
        "--protocol",
        "all",
        "--records",
        "64",
        "--ops",
        "8",
        "--payload",
        "16",
        "--threads",
        "4",
        "--duration",
        "0.2",
        "--warmup",
        "0",
        "--check",
        "--format",
        "json",
        "--rmw",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), txbench::ProtocolKind::ALL.len(), "{stdout}");
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).expect("one JSON object per line");
        for field in [
            "protocol",
            "workload",
            "threads",
            "commits",
            "aborts",
            "throughput_tps",
            "abort_ratio",
            "latency_us",
            "config",
            "machine",
            "check",
        ] {
            assert!(v.get(field).is_some(), "missing {field} in {line}");
        }
        for p in ["p50", "p90", "p99", "p999", "max"] {
            assert!(v["latency_us"].get(p).is_some(), "missing latency_us.{p}");
        }
        for f in ["passed", "transactions", "cycles", "anomalies"] {
            assert!(v["check"].get(f).is_some(), "missing check.{f}");
        }
        assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
        assert_eq!(v["config"]["records"], 64);
        assert!(v["commits"].as_u64().unwrap() > 0, "{line}");
        assert!(
            v.get("serializable").is_none(),
            "the class has its own name: {line}"
        );
        if v["protocol_serializable"] == true {
            assert_eq!(v["check"]["cycles"], 0, "{line}");
            assert_eq!(v["check"]["anomalies"], 0, "{line}");
            assert_eq!(v["check"]["passed"], true, "{line}");
        }
    }
    // A serializable protocol failing the check would make the exit status non-zero.
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn csv_has_a_header_and_one_row_per_protocol() {
    let out = txbench(&[
        "run",
        "-p",
        "nocc,silo",
        "--records",
        "1000",
        "--duration",
        "0.1",
        "--warmup",
        "0",
        "--threads",
        "2",
        "--format",
        "csv",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    assert_eq!(&header[0], "protocol");
    assert!(header.iter().any(|h| h == "p999_us"));
    assert_eq!(rows.records().count(), 2);
}

#[test]
fn repeat_interleaves_rounds_and_reports_each_run() {
    let out = txbench(&[
        "run",
        "-p",
        "nocc,silo",
        "--records",
        "1000",
        "--duration",
        "0.05",
        "--warmup",
        "0",
        "--threads",
        "2",
        "--repeat",
        "3",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let rounds: Vec<(String, u64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["protocol"].as_str().unwrap().to_string(),
                v["round"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = (0..3)
        .flat_map(|r| [("nocc".to_string(), r), ("silo".to_string(), r)])
        .collect();
    assert_eq!(rounds, expected);
    let table = txbench(&[
        "run",
        "-p",
        "nocc,silo",
        "--records",
        "1000",
        "--duration",
        "0.05",
        "--warmup",
        "0",
        "--threads",
        "2",
        "--repeat",
        "3",
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("medians of 3 runs"), "{text}");
    assert_eq!(
        text.matches("silo").count(),
        1,
        "one row per protocol: {text}"
    );
}

/// `--workload tpcc --check`: the JSON `check` object carries the consistency conditions, and a
/// serializable protocol violates none.
#[test]
fn tpcc_check_reports_consistency_conditions() {
    let out = txbench(&[
        "run",
        "--workload",
        "tpcc",
        "--protocol",
        "silo,no_wait",
        "--threads",
        "3",
        "--duration",
        "0.2",
        "--warmup",
        "0",
        "--mix",
        "np",
        "--check",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let check = &r["check"];
        assert_eq!(check["conditions_checked"], 12, "{r}");
        assert_eq!(check["consistency_violations"], 0, "{r}");
        let types: Vec<&str> = r["types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(
            types.contains(&"new_order") && types.contains(&"payment"),
            "{types:?}"
        );
    }
}

/// The table output breaks TPC-C down per transaction type; single-type workloads get no such
/// table.
#[test]
fn tpcc_table_has_a_per_type_breakdown() {
    let args = |workload| {
        vec![
            "run",
            "--workload",
            workload,
            "-p",
            "silo",
            "-t",
            "2",
            "-d",
            "0.1",
            "--warmup",
            "0",
        ]
    };
    let out = txbench(&args("tpcc"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("per transaction type"), "{stdout}");
    for name in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        assert!(stdout.contains(name), "{name} missing from\n{stdout}");
    }
    let mut ycsb = args("ycsb");
    ycsb.extend(["--records", "1000"]);
    let out = txbench(&ycsb);
    assert!(out.status.success());
    assert!(
        !String::from_utf8(out.stdout)
            .unwrap()
            .contains("per transaction type")
    );
}

/// The run flags of a short YCSB run on `protocols` with `threads` workers.
fn short_run<'a>(protocols: &'a str, threads: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "-p",
        protocols,
        "--records",
        "1000",
        "-t",
        threads,
        "-d",
        "0.2",
        "--warmup",
        "0",
    ]
}

fn assert_no_panic(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(134), "aborted: {stderr}");
}

/// A reader that takes one JSON line and closes the pipe: the next write fails with EPIPE, and
/// txbench ends quietly with status 0 instead of panicking (Rust ignores SIGPIPE).
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut args = short_run("nocc,silo,tictoc", "2");
    args.extend(["--format", "json"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run txbench");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut first)
        .expect("one line");
    assert!(first.starts_with("{\"protocol\":\"nocc\""), "{first}");
    // The reader is dropped here: the second run's line meets a closed pipe.
    let out = child.wait_with_output().expect("txbench ends");
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "quiet: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Output closed before txbench writes anything at all (or after: either way status 0).
    for args in [vec!["list"], short_run("silo", "1")] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_txbench"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run txbench");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("txbench ends");
        assert_no_panic(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    }
}

/// Stdout on a full disk: the write error is reported with status 1, never a panic, whatever the
/// format.
#[test]
fn a_full_disk_exits_1_with_a_message() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("open /dev/full")
    };
    let mut cases = vec![vec!["list".to_string()]];
    for format in ["table", "json", "csv"] {
        let mut args: Vec<String> = short_run("silo", "1")
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["--format".to_string(), format.to_string()]);
        cases.push(args);
    }
    for args in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_txbench"))
            .args(&args)
            .stdout(full())
            .output()
            .expect("run txbench");
        assert_no_panic(&out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error: writing the output failed") && stderr.contains("space"),
            "{args:?}: {stderr}"
        );
    }
}

/// The most a memory error says fits (`... at most N <what> fit ...`).
fn stated_max(stderr: &str) -> u64 {
    stderr
        .split("at most ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no maximum in {stderr}"))
}

/// 2^40 records need about 140 TB: refused before anything is allocated, naming --records, the
/// estimate, what is available and the most that fits.
#[test]
fn an_oversized_run_is_refused_with_the_most_that_fits() {
    let out = txbench(&["run", "-p", "silo", "-t", "1", "--records", "1099511627776"]);
    assert_no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--records 1099511627776 needs about 140.7 TB of memory, and"),
        "{stderr}"
    );
    assert!(stderr.contains("is available ("), "{stderr}");
    assert!(stderr.contains("records fit (128 bytes each"), "{stderr}");
    assert!(stated_max(&stderr) > 0, "{stderr}");
    assert!(out.stdout.is_empty());
}

/// Under an address-space limit (`ulimit -v`, as in a container) the run is sized against the
/// limit, not the machine: a table that would not fit is refused with exit 2, and the most that
/// fits runs. Uses the `prlimit` program (util-linux); skipped where it is missing.
#[test]
fn an_address_space_limit_is_respected() {
    let prlimit = ["/usr/bin/prlimit", "/bin/prlimit"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(prlimit) = prlimit else {
        eprintln!("skipped: no prlimit");
        return;
    };
    let limited = |args: &[&str]| {
        Command::new(prlimit)
            .arg("--as=1000000000")
            .arg(env!("CARGO_BIN_EXE_txbench"))
            .args(args)
            .output()
            .expect("run prlimit")
    };
    let mut args = short_run("silo", "2");
    args[4] = "100000000"; // --records: 12.8 GB
    let out = limited(&args);
    assert_no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--records 100000000 needs about 12.8 GB"),
        "{stderr}"
    );
    // 1 GB of address space, less what is mapped at start, is the tightest limit on any machine
    // with more than 1 GB free.
    assert!(
        stderr.contains("RLIMIT_AS") || stderr.contains("MemAvailable"),
        "{stderr}"
    );
    let max = stated_max(&stderr);
    assert!((1_000_000..7_100_000).contains(&max), "{max}: {stderr}");
    let fits = max.to_string();
    args[4] = &fits;
    let out = limited(&args);
    assert_no_panic(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the stated maximum runs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// TPC-C sized for 60 seconds (3 million spare orders per district, tens of GB) is refused where
/// it does not fit, and runs where it does; it never aborts. Runs that get past validation are
/// stopped after a while (the point is only that they started).
#[test]
fn a_long_tpcc_run_is_refused_or_runs() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args([
            "run", "-w", "tpcc", "-p", "silo", "-t", "1", "-d", "60", "--warmup", "0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run txbench");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let out = child.wait_with_output().expect("stderr");
            assert_no_panic(&out);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(status.code(), Some(2), "{stderr}");
            assert!(
                stderr.contains("--tpcc-spare-orders 3000000 needs about"),
                "{stderr}"
            );
            assert!(stderr.contains("spare orders per district fit"), "{stderr}");
            return;
        }
        if Instant::now() > deadline {
            // Validated and allocated: this machine has the memory.
            child.kill().expect("kill");
            child.wait().expect("reap");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// NoCC under contention produces a non-serializable history: its JSON says so in
/// `check.passed`, apart from `protocol_serializable`; CSV carries the same verdict. The exit
/// status stays 0 (NoCC is not meant to be serializable).
#[test]
fn check_passed_is_the_verdict_in_json_and_csv() {
    let run = |format: &str| {
        let out = txbench(&[
            "run",
            "-p",
            "nocc,silo",
            "--records",
            "64",
            "--ops",
            "8",
            "--rmw",
            "-t",
            "4",
            "-d",
            "0.3",
            "--warmup",
            "0",
            "--check",
            "--format",
            format,
        ]);
        assert_no_panic(&out);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Contention makes NoCC fail almost always; a few tries make the test immune to a lucky run.
    let mut nocc_failed = false;
    for _ in 0..3 {
        for line in run("json").lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let c = &v["check"];
            let clean = c["cycles"] == 0 && c["anomalies"] == 0;
            assert_eq!(c["passed"], clean, "{line}");
            match v["protocol"].as_str().unwrap() {
                "nocc" => {
                    assert_eq!(v["protocol_serializable"], false);
                    nocc_failed |= c["passed"] == false;
                }
                _ => {
                    assert_eq!(v["protocol_serializable"], true);
                    assert_eq!(c["passed"], true, "{line}");
                }
            }
        }
        if nocc_failed {
            break;
        }
    }
    assert!(nocc_failed, "nocc never failed the check under contention");

    let csv = run("csv");
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let header = rows.headers().unwrap().clone();
    for column in [
        "protocol_serializable",
        "check_transactions",
        "check_cycles",
        "check_anomalies",
        "check_conditions_checked",
        "check_consistency_violations",
        "check_passed",
    ] {
        assert!(header.iter().any(|h| h == column), "missing {column}");
    }
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in rows.records() {
        let row = row.unwrap();
        let clean = &row[at("check_cycles")] == "0" && &row[at("check_anomalies")] == "0";
        assert_eq!(
            &row[at("check_passed")],
            clean.to_string().as_str(),
            "{row:?}"
        );
        assert_eq!(
            &row[at("check_conditions_checked")],
            "",
            "YCSB has no conditions"
        );
        if &row[at("protocol")] == "silo" {
            assert_eq!(&row[at("protocol_serializable")], "true");
            assert_eq!(&row[at("check_passed")], "true");
        }
    }
}

/// TPC-C's consistency results reach CSV, and the table says "not checked" for what a run did not
/// check.
#[test]
fn csv_and_table_show_what_was_checked() {
    let out = txbench(&[
        "run", "-w", "tpcc", "-p", "silo", "-t", "2", "-d", "0.2", "--warmup", "0", "--check",
        "--format", "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(&row[at("check_conditions_checked")], "12");
    assert_eq!(&row[at("check_consistency_violations")], "0");
    assert_eq!(&row[at("check_passed")], "true");

    let table = |extra: &[&str]| {
        let mut args = short_run("silo", "1");
        args.extend_from_slice(extra);
        let out = txbench(&args);
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    // The default table leaves out the columns of what was not checked; the line above it says.
    let unchecked = table(&[]);
    assert!(unchecked.contains("history not checked"), "{unchecked}");
    assert!(!unchecked.contains("history check"), "{unchecked}");
    let wide = table(&["--wide"]);
    assert!(wide.contains("history check"), "{wide}");
    assert_eq!(wide.matches("not checked").count(), 3, "{wide}");
    // YCSB has no consistency conditions: checked history, unchecked consistency.
    let checked = table(&["--check"]);
    assert!(checked.contains("ok: "), "{checked}");
    let checked = table(&["--check", "--wide"]);
    assert!(checked.contains("ok ("), "{checked}");
    assert_eq!(checked.matches("not checked").count(), 1, "{checked}");
}

/// Comma lists are a sweep: one run per combination, each JSON row naming its point, and every
/// combination is validated before any runs.
#[test]
fn comma_lists_run_every_combination_and_name_the_point() {
    let mut args = short_run("silo,nocc", "1,2");
    args.extend(["--theta", "0.5,0.99", "--format", "json"]);
    let out = txbench(&args);
    assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 8, "2 threads x 2 thetas x 2 protocols");
    let points: Vec<(u64, String, String)> = rows
        .iter()
        .map(|r| {
            let p = r["point"].as_array().unwrap();
            assert_eq!(p[0][0], "threads");
            assert_eq!(p[1][0], "theta");
            assert_eq!(r["threads"].to_string(), p[0][1].as_str().unwrap());
            (
                r["threads"].as_u64().unwrap(),
                p[1][1].as_str().unwrap().to_string(),
                r["protocol"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(points[0], (1, "0.5".into(), "silo".into()));
    assert_eq!(points[7], (2, "0.99".into(), "nocc".into()));

    // A bad value anywhere in a list stops everything before the first run.
    for (list, flag) in [("--theta=0.5,11", "--theta"), ("--ops=4,x", "--ops")] {
        let mut args = short_run("silo", "1,2");
        args.push(list);
        let out = txbench(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{list}: {stderr}");
        assert!(stderr.contains(flag), "{list}: {stderr}");
        assert!(
            !stderr.contains("point 1/"),
            "{list} started work: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// The default table fits a 100-column terminal, names the executor, says "1 thread", ends with
/// the leaders, and shows the protocols' own statistics rounded; `--wide` shows every column;
/// CSV has one column per parameter.
#[test]
fn the_default_table_fits_100_columns_and_names_executor_and_leaders() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "-p",
            "nocc,silo,tictoc,decentsched",
            "--records",
            "1000",
            "-t",
            "1",
            "--executor",
            "coro",
            "--queue",
            "2",
            "-d",
            "0.1",
            "--warmup",
            "0",
            "--check",
        ];
        args.extend_from_slice(extra);
        let out = txbench(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&[]);
    // Every line: the table and the text around it (the run's description wraps).
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "{widest} columns:\n{text}");
    assert!(
        text.contains("1 thread x 2 coroutines (coro executor, queue 2)"),
        "{text}"
    );
    assert!(text.contains("throughput leader "), "{text}");
    assert!(text.contains("p99.9 leader "), "{text}");
    let stats = text
        .lines()
        .find(|l| l.starts_with("decentsched: "))
        .unwrap_or_else(|| panic!("no statistics line:\n{text}"));
    // Three significant digits, not a float's seventeen.
    for word in stats.split([',', ' ']).filter(|w| w.parse::<f64>().is_ok()) {
        let digits: String = word.chars().filter(char::is_ascii_digit).collect();
        let significant = digits.trim_start_matches('0').len();
        assert!(!word.contains('.') || significant <= 3, "{word} in {stats}");
    }
    let wide = run(&["--wide"]);
    for column in ["p50 us", "max us", "p99.9 vs nocc", "history check"] {
        assert!(!text.contains(column), "{column} in the default table");
        assert!(wide.contains(column), "{column} missing with --wide");
    }
    let csv_text = run(&["--format", "csv"]);
    let mut rows = csv::Reader::from_reader(csv_text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let row = rows.records().next().unwrap().unwrap();
    assert_eq!(&row[at("config.records")], "1000");
    assert_eq!(&row[at("config.threads")], "1");
}

/// `txbench run --format json` lines carry the build, and `report` and `plot` read them as one
/// anonymous experiment.
#[test]
fn run_json_carries_the_build_and_plots() {
    let out = txbench(&[
        "run",
        "-p",
        "silo,tictoc",
        "--records",
        "1000",
        "-t",
        "1",
        "-d",
        "0.1",
        "--warmup",
        "0",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["txbench"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(first["txbench"]["commit"].is_string());
    let dir = std::env::temp_dir().join(format!("txbench-run-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("r.jsonl");
    std::fs::write(&file, &text).unwrap();
    let plot = txbench(&[
        "plot",
        file.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--formats",
        "svg",
    ]);
    assert!(
        plot.status.success(),
        "{}",
        String::from_utf8_lossy(&plot.stderr)
    );
    let written = String::from_utf8(plot.stdout).unwrap();
    assert!(written.lines().count() >= 3, "{written}");
    assert!(written.lines().all(|f| std::path::Path::new(f).exists()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bar for the batch protocols: `txbench run -p NAME --records 64 --rmw -t 8
/// --check` passes (Aria with and without deterministic reordering and with the fallback phase,
/// batched Calvin, BOHM and PWV waiting and no-wait), and the report carries the batches it
/// formed; a no-wait form's report counts its reruns as `lock_conflict` aborts and
/// `no_wait_conflicts`, Aria's fallback phase its commits as `fallback_commits`.
#[test]
fn batch_protocols_pass_the_checker_on_64_records() {
    let variants: [(&str, Option<&str>); 9] = [
        ("aria", None),
        ("aria", Some("--aria-reordering")),
        ("aria", Some("--aria-fallback")),
        ("calvin", None),
        ("calvin", Some("--calvin-no-wait")),
        ("bohm", None),
        ("pwv", None),
        ("bohm", Some("--bohm-no-wait")),
        ("pwv", Some("--pwv-no-wait")),
    ];
    for (protocol, option) in variants {
        let mut args = vec![
            "run",
            "-p",
            protocol,
            "--records",
            "64",
            "--rmw",
            "-t",
            "8",
            "--check",
            "-d",
            "0.3",
            "--warmup",
            "0",
            "--format",
            "json",
        ];
        args.extend(option);
        let out = txbench(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
        assert_eq!(r["check"]["passed"], true, "{}", r["check"]);
        assert!(r["commits"].as_u64().unwrap() > 0, "{r}");
        let stats = &r["protocol_stats"];
        assert!(stats["batches"].as_f64().unwrap() > 0.0, "{stats}");
        assert!(stats["mean_batch_size"].as_f64().unwrap() >= 1.0, "{stats}");
        if let Some(flag) = option.filter(|f| f.ends_with("-no-wait")) {
            let reruns = r["aborts_by_reason"]["lock_conflict"].as_u64().unwrap_or(0);
            assert!(reruns > 0, "{flag}: no rerun on 64 hot records: {r}");
            assert!(
                stats["no_wait_conflicts"].as_f64().unwrap() > 0.0,
                "{stats}"
            );
        }
        if option == Some("--aria-fallback") {
            assert!(
                stats["fallback_commits"].as_f64().unwrap() > 0.0,
                "no fallback commit on 64 hot records: {stats}"
            );
        }
    }
}

/// `--bohm-no-wait` and `--pwv-no-wait` are accepted by their protocol, and `txbench list`
/// shows them; given to a protocol that does not use them, the run goes on with a warning
/// naming the flag (`config::unused`, as for every protocol option).
#[test]
fn placed_no_wait_options_apply_to_their_protocol() {
    let list = txbench(&["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains("--bohm-no-wait") && listed.contains("--pwv-no-wait"),
        "{listed}"
    );
    for (protocol, flag) in [("bohm", "--bohm-no-wait"), ("pwv", "--pwv-no-wait")] {
        let mine = txbench(&[
            "run",
            "-p",
            protocol,
            flag,
            "--records",
            "1000",
            "-d",
            "0.1",
            "--warmup",
            "0",
        ]);
        let stderr = String::from_utf8_lossy(&mine.stderr);
        assert!(mine.status.success(), "{protocol} {flag}: {stderr}");
        assert!(!stderr.contains("has no effect"), "{stderr}");
        let other = txbench(&[
            "run",
            "-p",
            "silo",
            flag,
            "--records",
            "1000",
            "-d",
            "0.1",
            "--warmup",
            "0",
        ]);
        let stderr = String::from_utf8_lossy(&other.stderr);
        assert!(other.status.success(), "silo {flag}: {stderr}");
        assert!(
            stderr.contains(&format!("warning: {flag} has no effect")) && stderr.contains(protocol),
            "{stderr}"
        );
    }
}
