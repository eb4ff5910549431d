//! The canary: NoCC under high contention must be caught, or the checks prove nothing.

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::nocc::Nocc;

#[test]
fn nocc_loses_updates_under_contention() {
    // Lost updates need two workers inside one read-modify-write at once; with 4 threads on
    // 2 cores over 64 hot records that happens within milliseconds. Retry a few times so a lucky
    // schedule on a loaded machine cannot make the canary silent.
    for _ in 0..5 {
        let r = run_checked(Nocc, contended_ycsb(), &checked_exec(4, 300));
        assert!(r.committed > 0);
        if r.lost_update_keys > 0 && !r.report.is_serializable() {
            return;
        }
    }
    panic!("NoCC was never caught: the checker or the lost-update invariant is blind");
}
