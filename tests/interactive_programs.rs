//! The workloads' own transaction programs run unchanged over the wire (`txbench run
//! --interactive`: a server and clients in one process over loopback), and the server's history
//! is checked with the same checker as an in-process run: every serializable protocol passes at
//! high contention with more clients than cores (DecentSched and the batch protocols with each
//! of their options too), NoCC is caught, TPC-C's consistency conditions hold. Counts and
//! verdicts only, no timing.

use clap::Parser;
use txbench::config::{Cli, Command, RunConfig};
use txbench::metrics::report::RunReport;
use txbench::runner::run_all;

/// `txbench run ARGS`, validated.
fn config(args: &[&str]) -> RunConfig {
    let cli = Cli::parse_from(["txbench", "run"].iter().chain(args));
    let Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    run.validate().expect("valid flags")
}

fn interactive(protocol: &str, workload: &[&str], seconds: &str) -> Vec<RunReport> {
    interactive_clients(protocol, "4", workload, seconds)
}

/// [`interactive`] with `clients` clients.
fn interactive_clients(
    protocol: &str,
    clients: &str,
    workload: &[&str],
    seconds: &str,
) -> Vec<RunReport> {
    let mut args = vec![
        "--interactive",
        "-p",
        protocol,
        "--clients",
        clients,
        "-d",
        seconds,
        "--warmup",
        "0",
        "--no-pin",
        "--check",
    ];
    args.extend_from_slice(workload);
    run_all(&config(&args), |_| {}).expect("runs")
}

/// Asserts every serializable protocol's run committed and passed the checker.
fn assert_serializable(reports: &[RunReport], what: &str) {
    for r in reports {
        let check = r.check.as_ref().expect("checked");
        assert!(r.commits > 0, "{} {what}: nothing committed", r.protocol);
        assert!(
            check.transactions > 0,
            "{} {what}: nothing recorded",
            r.protocol
        );
        if r.protocol_serializable {
            assert!(check.is_serializable(), "{} {what}: {check:?}", r.protocol);
        }
        // The report says how the time split between the network and the server.
        for stat in ["interactive.ping_us", "interactive.round_trips_per_txn"] {
            assert!(
                r.protocol_stats.get(stat).is_some_and(|v| *v > 0.0),
                "{} {what}: {stat} missing: {:?}",
                r.protocol,
                r.protocol_stats
            );
        }
    }
}

/// High-contention read-modify-write YCSB, 4 clients on 2 cores, every protocol (the
/// deterministic ones declare their sets at BEGIN; 2PL with early release is not served, so
/// `all` leaves it out).
#[test]
fn every_serializable_protocol_passes_the_checker_interactively() {
    let ycsb = [
        "--records",
        "32",
        "--ops",
        "4",
        "--theta",
        "0.9",
        "--rmw",
        "--read-ratio",
        "0.5",
    ];
    let reports = interactive("all", &ycsb, "0.25");
    let names: Vec<&str> = reports.iter().map(|r| r.protocol.as_str()).collect();
    assert!(
        [
            "calvin_ticket",
            "plor",
            "decentsched",
            "aria",
            "calvin",
            "bohm",
            "pwv"
        ]
        .iter()
        .all(|p| names.contains(p)),
        "{names:?}"
    );
    assert!(!names.contains(&"twopl_er"), "{names:?}");
    assert_serializable(&reports, "ycsb");
}

/// The batch protocols' bar (tests/cli.rs, `batch_protocols_pass_the_checker_on_64_records`)
/// over the wire: 64 hot records, read-modify-writes, 8 clients on 2 cores, every option of
/// DecentSched and of the batch protocols; each passes the checker, and the batch protocols'
/// reports carry the batches they formed (and the no-wait forms their reruns).
#[test]
fn decentsched_and_the_batch_protocols_pass_the_checker_interactively() {
    let ycsb = ["--records", "64", "--rmw"];
    let variants: [(&str, &[&str]); 11] = [
        ("decentsched", &[]),
        (
            "decentsched",
            &["--ds-opportunistic", "--ds-epoch-us", "200"],
        ),
        ("aria", &[]),
        ("aria", &["--aria-reordering"]),
        ("aria", &["--aria-fallback"]),
        ("calvin", &[]),
        ("calvin", &["--calvin-no-wait"]),
        ("bohm", &[]),
        ("pwv", &[]),
        ("bohm", &["--bohm-no-wait"]),
        ("pwv", &["--pwv-no-wait"]),
    ];
    for (protocol, options) in variants {
        let mut args = ycsb.to_vec();
        args.extend_from_slice(options);
        let what = format!("{protocol} {options:?}");
        let reports = interactive_clients(protocol, "8", &args, "0.3");
        assert_serializable(&reports, &what);
        let r = &reports[0];
        if protocol != "decentsched" {
            let batches = r.protocol_stats.get("batches").copied().unwrap_or(0.0);
            assert!(batches > 0.0, "{what}: {:?}", r.protocol_stats);
        }
        if options.iter().any(|o| o.ends_with("-no-wait")) {
            let reruns = r
                .aborts_by_reason
                .get("lock_conflict")
                .copied()
                .unwrap_or(0);
            assert!(reruns > 0, "{what}: no rerun on 64 hot records");
        }
    }
}

/// NoCC loses updates over the wire as it does in process, and the server's history shows it.
#[test]
fn nocc_is_caught_interactively() {
    let ycsb = [
        "--records",
        "4",
        "--ops",
        "4",
        "--theta",
        "0.9",
        "--rmw",
        "--read-ratio",
        "0",
    ];
    for _ in 0..10 {
        let reports = interactive("nocc", &ycsb, "0.3");
        let check = reports[0].check.as_ref().expect("checked");
        if !check.is_serializable() {
            return;
        }
    }
    panic!("ten interactive NoCC runs on 4 hot records showed no anomaly");
}

/// TPC-C's five programs (inserts, deletes, index scans, read-committed reads, user aborts) on
/// one warehouse: serializable and consistent (clause 3.3.2) under locking, optimistic and
/// deterministic protocols (the NP mix, with its covered inserts, under Calvin with tickets,
/// batched Calvin, BOHM and PWV).
#[test]
fn tpcc_runs_interactively_and_stays_consistent() {
    let tpcc = ["--workload", "tpcc", "--warehouses", "1"];
    let reports = interactive("silo,no_wait,wound_wait,plor,mvto", &tpcc, "0.4");
    assert_serializable(&reports, "tpcc");
    for r in &reports {
        let check = r.check.as_ref().expect("checked");
        assert_eq!(check.conditions_checked, Some(12), "{}", r.protocol);
    }
    // The NP mix declares its sets, covers included (New-Order's inserted rows, Payment's
    // HISTORY row): every deterministic protocol is sent them and checks every access against
    // them, and a covered insert refused as undeclared would fail the run.
    let np = ["--workload", "tpcc", "--warehouses", "1", "--mix", "np"];
    let reports = interactive("calvin_ticket,calvin,bohm,pwv", &np, "0.4");
    assert_eq!(reports.len(), 4);
    assert_serializable(&reports, "tpcc np");
}

/// Long-scan (index scans through the key index) and write skew (SI shows it, nothing else
/// does) over the wire.
#[test]
fn long_scan_and_write_skew_run_interactively() {
    let scans = [
        "--workload",
        "long-scan",
        "--records",
        "256",
        "--scan-length",
        "16",
    ];
    assert_serializable(&interactive("silo,mocc", &scans, "0.3"), "long-scan");
    let skew = ["--workload", "write-skew"];
    assert_serializable(&interactive("silo,si", &skew, "0.3"), "write-skew");
}
