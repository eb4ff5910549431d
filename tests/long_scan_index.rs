//! Long-scan through each key access method (`--index array|hash|ordered`): an optimistic, a 2PL,
//! a multi-version and a deterministic protocol stay serializable in check mode at the highest
//! contention long-scan has (one hot record), with more workers than the CI machine's 2 cores,
//! and NoCC is still caught, so a scan path that handed out wrong records could not hide.

use clap::Parser;
use txbench::config::{Cli, Command, RunConfig};
use txbench::metrics::report::RunReport;
use txbench::runner::run_all;

/// `txbench run ARGS`, validated, with the flags of `args` that have no effect.
fn config(args: &[&str]) -> (RunConfig, Vec<String>) {
    let cli = Cli::parse_from(["txbench", "run"].iter().chain(args));
    let Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    let cfg = run.validate().expect("valid flags");
    let unused = run.ineffective_flags(&cfg);
    (cfg, unused)
}

/// Runs `protocols` on long-scan (one hot record, 2,000 large records, scans of 100) through
/// `index`, checked, with 4 workers.
fn checked_runs(protocols: &str, index: &str) -> Vec<RunReport> {
    checked_runs_with(protocols, index, &[])
}

/// [`checked_runs`] with `extra` flags.
fn checked_runs_with(protocols: &str, index: &str, extra: &[&str]) -> Vec<RunReport> {
    let mut args = vec![
        "--workload",
        "long-scan",
        "-p",
        protocols,
        "--records",
        "2000",
        "--scan-length",
        "100",
        "--payload",
        "16",
        "--index",
        index,
        "-t",
        "4",
        "-d",
        "0.15",
        "--warmup",
        "0",
        "--no-pin",
        "--check",
    ];
    args.extend_from_slice(extra);
    let (cfg, _) = config(&args);
    run_all(&cfg, |_| {}).expect("tables fit")
}

#[test]
fn each_protocol_family_is_serializable_through_each_index() {
    for index in ["array", "hash", "ordered"] {
        for r in checked_runs("silo,no_wait,mvto,calvin_ticket", index) {
            let check = r.check.as_ref().expect("checked");
            assert!(
                r.commits > 0,
                "{} through --index {index}: no commit",
                r.protocol
            );
            assert!(
                check.is_serializable(),
                "{} through --index {index}: {check:?}",
                r.protocol
            );
        }
    }
}

#[test]
fn nocc_is_caught_through_each_index() {
    for index in ["hash", "ordered"] {
        // Lost updates of the hot record need two workers between its read and its update at
        // once. With 4 workers on 2 cores, CoreSlice has each worker yield between transactions,
        // so on a loaded machine (other processes on one of the cores) the workers often ran one
        // transaction at a time and 5 runs in a row came out serializable (stop 24, load 5-6).
        // 100 us between each program's end and its commit (a read-phase extension, which gives
        // the CPU away at that length) makes the transactions overlap whatever the scheduler
        // does; retries stay for luck.
        let caught = (0..5).any(|_| {
            let r = &checked_runs_with("nocc", index, &["--read-phase-extension", "100000"])[0];
            !r.check.as_ref().expect("checked").is_serializable()
        });
        assert!(caught, "NoCC through --index {index} was never caught");
    }
}

#[test]
fn the_index_is_reported_applies_and_counts_against_memory() {
    let (cfg, unused) = config(&["--workload", "long-scan", "--index", "hash", "-d", "0.1"]);
    let json = serde_json::to_value(&cfg.workload).expect("serialises");
    assert_eq!(json["index"], "hash");
    assert!(
        unused.is_empty(),
        "--index applies to long-scan: {unused:?}"
    );
    let (plain, _) = config(&["--workload", "long-scan", "-d", "0.1"]);
    assert_eq!(
        serde_json::to_value(&plain.workload).unwrap()["index"],
        "array",
        "the default stays the dense array"
    );
    assert!(
        cfg.workload.key_index_bytes() > plain.workload.key_index_bytes(),
        "the hash index's memory is counted"
    );
    let cli = Cli::parse_from([
        "txbench",
        "run",
        "--workload",
        "write-skew",
        "--index",
        "ordered",
    ]);
    let Command::Run(run) = cli.command else {
        unreachable!()
    };
    let err = run.validate().expect_err("write-skew has no --index");
    assert!(err.to_string().contains("--index"), "{err}");
}
