//! TicToc under high contention, every option combination: committed histories must be
//! serializable and no read-modify-write may be lost.

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::tictoc::TicToc;
use txbench::protocol::{LockWait, ProtocolOptions, TicTocOptions};

fn options(lock_wait: LockWait, tictoc: TicTocOptions) -> ProtocolOptions {
    ProtocolOptions {
        lock_wait,
        tictoc,
        ..ProtocolOptions::default()
    }
}

fn check_serializable(name: &str, opts: ProtocolOptions) {
    for threads in [4, 8] {
        let r = run_checked(
            TicToc::new(&opts),
            contended_ycsb(),
            &checked_exec(threads, 300),
        );
        assert!(
            r.committed > 0,
            "{name}, {threads} threads: nothing committed"
        );
        assert_eq!(
            r.lost_update_keys, 0,
            "{name}, {threads} threads: lost updates"
        );
        assert!(
            r.report.is_serializable(),
            "{name}, {threads} threads: not serializable"
        );
    }
}

#[test]
fn default_nowait() {
    check_serializable(
        "default",
        options(LockWait::NoWait, TicTocOptions::default()),
    );
}

#[test]
fn wait() {
    check_serializable("wait", options(LockWait::Wait, TicTocOptions::default()));
}

#[test]
fn nowait_tt() {
    let tt = TicTocOptions {
        nowait_tt: true,
        ..TicTocOptions::default()
    };
    check_serializable("nowait_tt", options(LockWait::NoWait, tt));
}

#[test]
fn preemptive_abort() {
    let tt = TicTocOptions {
        preemptive_abort: true,
        ..TicTocOptions::default()
    };
    check_serializable("preemptive_abort", options(LockWait::NoWait, tt));
}

#[test]
fn timestamp_history() {
    let tt = TicTocOptions {
        timestamp_history: true,
        ..TicTocOptions::default()
    };
    check_serializable("timestamp_history", options(LockWait::NoWait, tt));
}

#[test]
fn all_options_together() {
    let tt = TicTocOptions {
        nowait_tt: true,
        preemptive_abort: true,
        timestamp_history: true,
    };
    check_serializable("all", options(LockWait::Wait, tt));
}
