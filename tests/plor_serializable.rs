//! PLOR under high contention: every option combination must commit, lose no update and pass the
//! serializability checker with 4 and 8 workers (more than the 2 cores: waits must yield).

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::plor::Plor;
use txbench::protocol::{PlorOptions, PlorPriority, ProtocolOptions};
use txbench::workload::ycsb::YcsbConfig;

fn plor(threads: usize, plor: PlorOptions) -> Plor {
    Plor::new(&ProtocolOptions {
        threads,
        plor,
        ..ProtocolOptions::default()
    })
    .expect("thread count supported")
}

/// DWA on/off x arrival/deadline priority x read-only threshold 0/3.
fn every_combination() -> Vec<PlorOptions> {
    let mut all = Vec::new();
    for dwa in [false, true] {
        for priority in [PlorPriority::Arrival, PlorPriority::Deadline] {
            for ro_threshold in [0, 3] {
                all.push(PlorOptions {
                    dwa,
                    ro_threshold,
                    priority,
                    slack: 2.0,
                });
            }
        }
    }
    all
}

fn serializable(opts: PlorOptions, ycsb: YcsbConfig, threads: usize) {
    let rmw = ycsb.rmw;
    let r = run_checked(plor(threads, opts), ycsb, &checked_exec(threads, 250));
    assert!(r.committed > 0, "{opts:?}: nothing committed");
    if rmw {
        assert_eq!(
            r.lost_update_keys, 0,
            "{opts:?}: lost updates, {threads} threads"
        );
    }
    assert!(
        r.report.is_serializable(),
        "{opts:?}: cycle with {threads} threads: {:?}",
        r.report
    );
}

#[test]
fn every_option_combination_is_serializable_with_4_and_8_threads() {
    for opts in every_combination() {
        for threads in [4, 8] {
            serializable(opts, contended_ycsb(), threads);
        }
    }
}

#[test]
fn blind_writes_are_serializable() {
    let mut ycsb = contended_ycsb();
    ycsb.rmw = false;
    for dwa in [false, true] {
        let opts = PlorOptions {
            dwa,
            ..PlorOptions::default()
        };
        serializable(opts, ycsb.clone(), 8);
    }
}

#[test]
fn read_heavy_mix_is_serializable() {
    // Mostly read-only transactions exercise the optimistic path and its switch to read locks.
    let mut ycsb = contended_ycsb();
    ycsb.read_ratio = 0.95;
    ycsb.ops = 4;
    ycsb.long_ops = 4;
    for ro_threshold in [0, 1, 3] {
        let opts = PlorOptions {
            ro_threshold,
            ..PlorOptions::default()
        };
        serializable(opts, ycsb.clone(), 8);
    }
}
