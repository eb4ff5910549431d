//! Robustness: every protocol makes progress with 8 workers on a 2-core machine at high
//! contention, and a run ends (a hang fails the test after a generous bound, not a window).
//!
//! Progress is judged by counts, never by a rate: a protocol that commits fewer than its floor
//! in a run is run again alone, twice as long each time (a loaded machine may give a run's
//! workers little CPU), and fails only if it stays under the floor every time. A livelocked or
//! stalled protocol commits (almost) nothing however long it runs; a working one reaches the
//! floor as soon as it gets the CPU.

use std::process::Command;
use std::time::{Duration, Instant};

/// Runs of a protocol that stays under its floor before the test fails.
const TRIES: u32 = 4;

/// `txbench run ARGS --protocol PROTOCOLS --duration SECONDS --format json`: one JSON report per
/// protocol. Fails the test if the run fails or takes longer than `hang` (a hang, not slowness:
/// the bound is many times the run's length).
fn run(protocols: &str, seconds: f64, args: &[&str], hang: Duration) -> Vec<serde_json::Value> {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(["run", "--protocol", protocols])
        .args(["--duration", &seconds.to_string(), "--format", "json"])
        .args(args)
        .output()
        .expect("run txbench");
    let elapsed = started.elapsed();
    assert!(
        out.status.success(),
        "{protocols} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        elapsed < hang,
        "{protocols} {args:?}: took {elapsed:?} (hang bound {hang:?})"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON report per line"))
        .collect()
}

/// Runs `protocols` with `args` for `seconds`; every protocol under `floor(report)` commits is
/// run again alone, twice as long, up to [`TRIES`] runs in all. Returns each protocol's last
/// report; fails naming the protocols that never reached their floor.
fn progress(
    protocols: &str,
    seconds: f64,
    args: &[&str],
    floor: impl Fn(&serde_json::Value) -> Result<(), String>,
) -> Vec<serde_json::Value> {
    // A run of n protocols takes about n runs' length plus start-up and drain; a hang is far
    // past that.
    let hang =
        |s: f64, n: usize| Duration::from_secs_f64(s * 4.0 * n as f64) + Duration::from_secs(30);
    let first = run(
        protocols,
        seconds,
        args,
        hang(seconds, protocols.split(',').count() + 17),
    );
    let mut last = Vec::new();
    let mut failures = Vec::new();
    for mut report in first {
        let name = report["protocol"].as_str().expect("protocol").to_string();
        let mut s = seconds;
        let mut verdict = floor(&report);
        for _ in 1..TRIES {
            if verdict.is_ok() {
                break;
            }
            s *= 2.0;
            eprintln!(
                "{name}: {} (run again for {s} s)",
                verdict.as_ref().unwrap_err()
            );
            report = run(&name, s, args, hang(s, 1)).pop().expect("one report");
            verdict = floor(&report);
        }
        if let Err(why) = verdict {
            failures.push(format!("{name} {args:?}: {why} in each of {TRIES} runs"));
        }
        last.push(report);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    last
}

/// Commits of a report.
fn commits(v: &serde_json::Value) -> u64 {
    v["commits"].as_u64().expect("commits")
}

/// The deterministic protocols, DecentSched with epochs far shorter than the defaults (it meets
/// at its epoch barrier every 4 transactions per worker or 50 us): 8 workers on 2 cores keep
/// committing and every run ends, so no barrier waits for a worker that stopped and no waiter
/// starves the worker it waits for. DecentSched must pass many barriers: a stalled barrier
/// stops it at its first epochs (at most 32 transactions each here).
#[test]
fn deterministic_protocols_end_on_time_with_short_epochs() {
    let args = [
        "--records",
        "64",
        "--theta",
        "0.99",
        "--rmw",
        "--ops",
        "8",
        "--threads",
        "8",
        "--warmup",
        "0",
        "--ds-epoch-txns",
        "4",
        "--ds-epoch-us",
        "50",
    ];
    let reports = progress(
        "decentsched,ord_lock,c_sched,calvin,calvin_ticket",
        0.5,
        &args,
        |v| {
            let epochs = v["protocol_stats"]["epochs"].as_f64().unwrap_or(0.0);
            if v["protocol"] == "decentsched" && epochs < 10.0 {
                return Err(format!("{epochs} epochs, {} commits", commits(v)));
            }
            // 20 commits: far above a stalled barrier's or a starved waiter's nothing.
            if commits(v) < 20 {
                return Err(format!("{} commits", commits(v)));
            }
            Ok(())
        },
    );
    for v in &reports {
        assert_eq!(v["aborts"].as_u64(), Some(0), "{}", v["protocol"]);
    }
}

#[test]
fn every_protocol_progresses_oversubscribed_and_stops_on_time() {
    for workload in [["--rmw", "--ops", "8"], ["--blind", "--ops", "16"]] {
        let mut args = vec![
            "--records",
            "64",
            "--theta",
            "0.99",
            "--threads",
            "8",
            "--warmup",
            "0.1",
        ];
        args.extend(workload);
        let reports = progress("all", 0.3, &args, |v| {
            // A livelocked protocol commits (almost) nothing; a working one commits thousands.
            if commits(v) < 100 {
                return Err(format!("{} commits", commits(v)));
            }
            Ok(())
        });
        assert_eq!(
            reports.len(),
            txbench::ProtocolKind::ALL.len(),
            "{workload:?}"
        );
    }
}
