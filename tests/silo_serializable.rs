//! Silo under high contention with more threads than cores: serializable, no lost update, for
//! both lock-wait policies and with every cross-protocol option.

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::silo::Silo;
use txbench::protocol::{LockWait, ProtocolOptions};

fn check(threads: usize, lock_wait: LockWait, backoff: bool, rpe_ns: u64) {
    let opts = ProtocolOptions {
        threads,
        lock_wait,
        ..Default::default()
    };
    let mut exec = checked_exec(threads, 300);
    exec.adaptive_backoff = backoff;
    exec.read_phase_extension_ns = rpe_ns;
    let r = run_checked(Silo::new(&opts), contended_ycsb(), &exec);
    assert!(r.committed > 0, "no progress");
    assert_eq!(r.lost_update_keys, 0, "lost updates");
    assert!(r.report.is_serializable(), "{:?}", r.report);
}

#[test]
fn silo_nowait_4_and_8_threads() {
    check(4, LockWait::NoWait, false, 0);
    check(8, LockWait::NoWait, false, 0);
}

#[test]
fn silo_wait_4_and_8_threads() {
    check(4, LockWait::Wait, false, 0);
    check(8, LockWait::Wait, false, 0);
}

#[test]
fn silo_with_backoff_and_read_phase_extension() {
    check(8, LockWait::NoWait, true, 2_000);
}
