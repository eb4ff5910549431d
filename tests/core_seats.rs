//! CoreSeats (`exec::core_seats`): with more workers than cores, the thread executor runs at most
//! one worker per core and hands seats over between transactions. Every protocol stays
//! serializable under the checker with seats handed over many times per run (workers step away
//! from batches and barriers while they wait for a seat), on YCSB read-modify-writes and on TPC-C
//! (New-Order and Payment, which the deterministic protocols can declare); `--no-core-seats`
//! turns them off, and the report says which.

use std::process::{Command, Output};

fn txbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(args)
        .output()
        .expect("run txbench")
}

/// More workers than this machine's cores, so the seats act: the cores counted as the executor
/// counts them (the affinity mask, which a cgroup's CPU quota does not shrink).
fn oversubscribed() -> String {
    let cores = core_affinity::get_core_ids().map_or(1, |c| c.len().max(1));
    (cores * 2 + 1).to_string()
}

/// Runs `args` after `run` with JSON output; one object per protocol.
fn reports(args: &[&str]) -> Vec<serde_json::Value> {
    let threads = oversubscribed();
    let mut argv = vec![
        "run",
        "--threads",
        &threads,
        "--duration",
        "0.3",
        "--warmup",
        "0",
        "--format",
        "json",
    ];
    argv.extend_from_slice(args);
    let out = txbench(&argv);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn check_passed_with_handovers(v: &serde_json::Value) {
    let name = &v["protocol"];
    assert_eq!(v["config"]["core_seats"], true, "{name}");
    assert!(v["commits"].as_u64().unwrap() > 0, "{name}: no commit");
    if v["protocol_serializable"] == true {
        assert_eq!(v["check"]["passed"], true, "{name}: {}", v["check"]);
    }
    assert!(
        v["waits"]["seat_handovers"].as_u64().unwrap() > 0,
        "{name}: no seat was handed over: {}",
        v["waits"]
    );
}

#[test]
fn every_protocol_checks_on_hot_read_modify_writes_with_seats_handed_over() {
    let all = reports(&[
        "--protocol",
        "all",
        "--records",
        "64",
        "--ops",
        "8",
        "--payload",
        "16",
        "--rmw",
        "--check",
    ]);
    assert_eq!(all.len(), txbench::ProtocolKind::ALL.len());
    for v in &all {
        check_passed_with_handovers(v);
    }
}

#[test]
fn the_waiting_and_batch_protocols_check_on_tpcc_with_seats_handed_over() {
    let all = reports(&[
        "--workload",
        "tpcc",
        "--warehouses",
        "1",
        "--mix",
        "np",
        "--protocol",
        "wound_wait,plor,decentsched,calvin,calvin_ticket,bohm,pwv,aria,silo",
        "--check",
    ]);
    assert_eq!(all.len(), 9);
    for v in &all {
        check_passed_with_handovers(v);
    }
}

#[test]
fn no_core_seats_turns_them_off_and_the_report_says_so() {
    let all = reports(&[
        "--protocol",
        "wound_wait",
        "--records",
        "64",
        "--rmw",
        "--no-core-seats",
    ]);
    assert_eq!(all[0]["config"]["core_seats"], false);
    assert_eq!(
        all[0]["waits"]["seat_handovers"], 0,
        "without seats nothing is handed over"
    );
}
