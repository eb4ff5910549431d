//! The multi-version protocols under high contention with more threads than cores, in check
//! mode: ERMIA and MVTO serializable with no lost update on read-modify-write and blind-write YCSB; SI
//! with no lost update (first committer wins) and, on blind writes with reads, caught in write
//! skew by the same checker.

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::ProtocolOptions;
use txbench::protocol::ermia::Ermia;
use txbench::protocol::mvto::Mvto;
use txbench::protocol::si::Si;

fn opts(threads: usize) -> ProtocolOptions {
    let mut o = ProtocolOptions {
        threads,
        ..Default::default()
    };
    // Collect as eagerly as possible, so reclamation races with readers all the time.
    o.mv.gc_interval_us = 0;
    o
}

#[test]
fn ermia_and_mvto_are_serializable_on_rmw_and_blind_ycsb() {
    for threads in [4, 8] {
        for rmw in [true, false] {
            let ycsb = txbench::workload::ycsb::YcsbConfig {
                rmw,
                ..contended_ycsb()
            };
            let runs = [
                (
                    "ermia",
                    run_checked(
                        Ermia::new(&opts(threads)).unwrap(),
                        ycsb.clone(),
                        &checked_exec(threads, 300),
                    ),
                ),
                (
                    "mvto",
                    run_checked(
                        Mvto::new(&opts(threads)),
                        ycsb.clone(),
                        &checked_exec(threads, 300),
                    ),
                ),
            ];
            for (name, r) in runs {
                let what = format!("{name} {threads}/{rmw}");
                assert!(r.committed > 100, "{what}: {} commits", r.committed);
                assert_eq!(r.lost_update_keys, 0, "{what}: lost updates");
                assert!(r.report.is_serializable(), "{what}: {:?}", r.report);
            }
        }
    }
}

#[test]
fn si_loses_no_update_but_shows_write_skew() {
    let r = run_checked(Si::new(&opts(8)), contended_ycsb(), &checked_exec(8, 300));
    assert!(r.committed > 100);
    assert_eq!(r.lost_update_keys, 0, "first committer wins");
    let skewed = (0..5).any(|_| {
        let ycsb = txbench::workload::ycsb::YcsbConfig {
            rmw: false,
            records: 16,
            ops: 4,
            ..contended_ycsb()
        };
        let r = run_checked(Si::new(&opts(8)), ycsb, &checked_exec(8, 200));
        r.report.count("G2-item") > 0
    });
    assert!(skewed, "SI never showed write skew");
}

/// AggressiveGC reclaims versions under their readers: MVTO must stay serializable (the readers
/// detect it and abort), with 8 workers on 2 cores.
#[test]
fn mvto_with_aggressive_gc_is_serializable() {
    let mut o = opts(8);
    o.mv.aggressive_gc = true;
    let r = run_checked(Mvto::new(&o), contended_ycsb(), &checked_exec(8, 300));
    assert!(r.committed > 100, "{} commits", r.committed);
    assert_eq!(r.lost_update_keys, 0);
    assert!(r.report.is_serializable(), "{:?}", r.report);
}
