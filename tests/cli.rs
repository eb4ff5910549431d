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
        (&["run", "--check", "--payload", "4"], "--payload"),
        (&["run", "--workload", "tpcx"], "--workload"),
        (&["run", "--theta", "abc"], "--theta"),
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
        (&["run", "-p", "plor", "--threads", "128"], "--threads"),
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
        assert_eq!(check["conditions_checked"], 7, "{r}");
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
