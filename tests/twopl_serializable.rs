//! 2PL under high contention: NO_WAIT, WAIT_DIE and WOUND_WAIT must commit, lose no update, and
//! pass the serializability checker, with more workers than cores (waits must yield, never hang).

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::ProtocolOptions;
use txbench::protocol::twopl::{ConflictRule, NoWaitRule, TwoPl, WaitDieRule, WoundWaitRule};

fn protocol<R: ConflictRule>(threads: usize) -> TwoPl<R> {
    TwoPl::new(&ProtocolOptions {
        threads,
        ..ProtocolOptions::default()
    })
    .expect("thread count supported")
}

/// Contended read-modify-write runs: the lost-update invariant and the checker must both hold.
fn serializable<R: ConflictRule>(threads: usize) {
    let r = run_checked(
        protocol::<R>(threads),
        contended_ycsb(),
        &checked_exec(threads, 300),
    );
    assert!(r.committed > 0, "{}: nothing committed", R::NAME);
    assert_eq!(
        r.lost_update_keys,
        0,
        "{}: lost updates with {threads} threads",
        R::NAME
    );
    assert!(
        r.report.is_serializable(),
        "{}: cycle with {threads} threads",
        R::NAME
    );
}

/// Blind writes (write locks taken by `write`, upgrades of shared locks): must keep committing.
fn blind_writes_stay_live<R: ConflictRule>(threads: usize) {
    let mut ycsb = contended_ycsb();
    ycsb.rmw = false;
    let r = run_checked(protocol::<R>(threads), ycsb, &checked_exec(threads, 300));
    assert!(
        r.committed > 0,
        "{}: nothing committed with blind writes",
        R::NAME
    );
    assert!(
        r.report.is_serializable(),
        "{}: cycle with blind writes",
        R::NAME
    );
}

#[test]
fn no_wait_is_serializable() {
    serializable::<NoWaitRule>(4);
    for _ in 0..3 {
        serializable::<NoWaitRule>(8);
    }
}

#[test]
fn wait_die_is_serializable() {
    serializable::<WaitDieRule>(4);
    for _ in 0..3 {
        serializable::<WaitDieRule>(8);
    }
}

#[test]
fn wound_wait_is_serializable() {
    serializable::<WoundWaitRule>(4);
    for _ in 0..3 {
        serializable::<WoundWaitRule>(8);
    }
}

#[test]
fn blind_writes_commit_under_every_variant() {
    blind_writes_stay_live::<NoWaitRule>(8);
    blind_writes_stay_live::<WaitDieRule>(8);
    blind_writes_stay_live::<WoundWaitRule>(8);
}
