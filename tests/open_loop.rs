//! Open-loop offered load (`--rate`): below capacity the system achieves what is offered; above
//! it, latency counted from the arrival grows with the backlog, where a closed loop's would not.
//! The bands are wide on purpose (a loaded 2-core CI machine): they tell an open loop from a
//! closed one, not one machine's speed from another's.

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

/// One run of small YCSB transactions with 2 workers.
fn run(protocol: &str, extra: &[&str]) -> RunReport {
    let mut args = vec![
        "-p",
        protocol,
        "--records",
        "10000",
        "--ops",
        "4",
        "-t",
        "2",
        "-d",
        "0.6",
        "--warmup",
        "0.1",
        "--no-pin",
    ];
    args.extend_from_slice(extra);
    let mut reports = run_all(&config(&args), |_| {}).expect("tables fit");
    reports.pop().expect("one run")
}

/// Runs of a configuration whose count a starved run (a loaded machine that gave the workers
/// little CPU) left under its floor, before the test fails.
const TRIES: usize = 3;

/// The first of up to [`TRIES`] runs of `protocol` with `extra` whose commits reach `floor`;
/// fails if none does.
fn run_reaching(protocol: &str, extra: &[&str], floor: u64) -> RunReport {
    let mut seen = Vec::new();
    for _ in 0..TRIES {
        let r = run(protocol, extra);
        if r.commits >= floor {
            return r;
        }
        seen.push(r.commits);
    }
    panic!("{protocol} {extra:?}: commits {seen:?}, each under {floor}");
}

#[test]
fn a_low_rate_is_achieved_and_reported() {
    // 500 transactions per second for 0.6 s: about 300 arrivals (Poisson: sd about 17), far below
    // what two workers run (tens of thousands per second even on a loaded machine). An open loop
    // can never commit more than arrived (the upper bound holds on any machine); a run starved
    // of CPU below half the arrivals is run again.
    for arrival in ["poisson", "uniform"] {
        let r = run_reaching("silo", &["--rate", "500", "--arrival", arrival], 150);
        assert_eq!(r.offered_tps, Some(500.0));
        assert_eq!(r.arrival, Some(arrival));
        assert!(
            r.commits <= 450,
            "{arrival}: {} commits, about 300 offered",
            r.commits
        );
        let json = r.to_json_line();
        assert!(json.contains("\"offered_tps\":500.0"), "{json}");
        assert!(json.contains("\"rate_tps\":500.0"), "config: {json}");
    }
    // A closed loop runs back to back: far more than the open loop's at most 450.
    let closed = run_reaching("silo", &[], 1500);
    assert_eq!(closed.offered_tps, None);
    assert!(!closed.to_json_line().contains("offered_tps"));
}

#[test]
fn above_capacity_latency_counts_the_queue() {
    // A billion transactions per second: every worker is behind from the first arrival, so the
    // median transaction has waited a good part of the run, unlike the closed loop's.
    let over = run("nocc", &["--rate", "1e9"]);
    let closed = run("nocc", &[]);
    assert!(over.commits > 0 && closed.commits > 0);
    assert!(
        over.throughput_tps < over.offered_tps.unwrap() / 10.0,
        "achieved {} of {:?}",
        over.throughput_tps,
        over.offered_tps
    );
    // Queueing: the backlog grows through the 0.7 s run, so the median waited tens of
    // milliseconds at least; a closed-loop transaction of 4 operations takes microseconds.
    assert!(
        over.latency_us.p50 > 100.0 * closed.latency_us.p50.max(1.0),
        "open p50 {} us, closed p50 {} us",
        over.latency_us.p50,
        closed.latency_us.p50
    );
    assert!(over.latency_us.p50 > 10_000.0, "{:?}", over.latency_us);
}

/// `txbench ARGS`: exit status, stdout, stderr.
fn txbench(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(args)
        .output()
        .expect("txbench runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_line_states_offered_and_achieved_load_and_rejects_bad_rates() {
    let (code, out, err) = txbench(&[
        "run",
        "-p",
        "nocc,silo",
        "--records",
        "1000",
        "-t",
        "2",
        "-d",
        "0.3",
        "--warmup",
        "0",
        "--rate",
        "400,800",
        "--no-pin",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("offered txn/s"), "{out}");
    assert!(out.contains("open loop: 400 txn/s offered"), "{out}");
    // The second point's offered load is in its rows.
    assert_eq!(
        out.lines().filter(|l| l.contains(" 800 ")).count(),
        2,
        "{out}"
    );
    for (args, want) in [
        (&["--rate", "0"][..], "invalid value '0' for --rate"),
        (&["--rate", "abc"][..], "--rate"),
        (
            &["--arrival", "uniform"][..],
            "--arrival applies only with --rate",
        ),
        (&["--rate", "100", "--executor", "coro"][..], "--executor"),
    ] {
        let mut argv = vec!["run", "-p", "silo", "-d", "0.1"];
        argv.extend_from_slice(args);
        let (code, _, err) = txbench(&argv);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
