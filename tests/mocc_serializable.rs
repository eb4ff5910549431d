//! MOCC under high contention with more threads than cores, for every option combination
//! (lock rw | mql x temperature page | record x threshold 1 | 10) with 4 and 8 threads:
//! serializable, no lost update, progress.

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::mocc::{Mocc, MqlLock, RecordLock, RwLock};
use txbench::protocol::{MoccOptions, MoccTemperature, ProtocolOptions};

fn check<L: RecordLock>(temperature: MoccTemperature, threshold: u32) {
    for threads in [4, 8] {
        let opts = ProtocolOptions {
            threads,
            // Short epochs: temperatures reset several times during the run.
            silo_epoch_ms: 20,
            mocc: MoccOptions {
                threshold,
                temperature,
                ..Default::default()
            },
            ..Default::default()
        };
        let exec = checked_exec(threads, 250);
        let r = run_checked(Mocc::<L>::new(&opts), contended_ycsb(), &exec);
        let what = format!(
            "{} {temperature:?} H={threshold} {threads} threads",
            L::NAME
        );
        assert!(r.committed > 0, "no progress: {what}");
        assert_eq!(r.lost_update_keys, 0, "lost updates: {what}");
        assert!(r.report.is_serializable(), "{what}: {:?}", r.report);
    }
}

#[test]
fn rw_page() {
    check::<RwLock>(MoccTemperature::Page, 1);
    check::<RwLock>(MoccTemperature::Page, 10);
}

#[test]
fn rw_record() {
    check::<RwLock>(MoccTemperature::Record, 1);
    check::<RwLock>(MoccTemperature::Record, 10);
}

#[test]
fn mql_page() {
    check::<MqlLock>(MoccTemperature::Page, 1);
    check::<MqlLock>(MoccTemperature::Page, 10);
}

#[test]
fn mql_record() {
    check::<MqlLock>(MoccTemperature::Record, 1);
    check::<MqlLock>(MoccTemperature::Record, 10);
}
