//! The multi-version protocols under high contention with more threads than cores, in check
//! mode: ERMIA and MVTO serializable with no lost update on read-modify-write and blind-write
//! YCSB; SI with no lost update (first committer wins) and no anomaly worse than write skew.

mod common;

use common::{checked_exec, contended_ycsb, run_checked};
use txbench::protocol::ProtocolOptions;
use txbench::protocol::cicada::Cicada;
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

/// SI on contended YCSB: no lost update (first committer wins) and nothing worse than write
/// skew (whether write skew shows in a short YCSB run depends on the scheduling of a loaded
/// machine; `tests/anomalies.rs` and `tests/write_skew.rs` require it where it is provoked).
#[test]
fn si_loses_no_update_and_shows_nothing_worse_than_write_skew() {
    for rmw in [true, false] {
        let ycsb = txbench::workload::ycsb::YcsbConfig {
            rmw,
            ..contended_ycsb()
        };
        let r = run_checked(Si::new(&opts(8)), ycsb, &checked_exec(8, 300));
        assert!(r.committed > 100);
        assert_eq!(r.lost_update_keys, 0, "first committer wins");
        assert_eq!(r.report.anomalies, 0, "{:?}", r.report);
        assert!(
            r.report.cycle_kinds.keys().all(|k| k == "G2-item"),
            "{:?}",
            r.report
        );
    }
}

/// AggressiveGC reclaims versions under their readers: MVTO must stay serializable (the readers
/// detect it and abort), with 8 workers on 2 cores; the non-contiguous variant (the default,
/// which removes versions from between kept ones) and the contiguous one.
#[test]
fn mvto_with_aggressive_gc_is_serializable() {
    for contiguous in [false, true] {
        let mut o = opts(8);
        o.mv.aggressive_gc = true;
        o.mv.aggressive_contiguous = contiguous;
        let r = run_checked(Mvto::new(&o), contended_ycsb(), &checked_exec(8, 300));
        let what = format!("contiguous {contiguous}");
        assert!(r.committed > 100, "{what}: {} commits", r.committed);
        assert_eq!(r.lost_update_keys, 0, "{what}");
        assert!(r.report.is_serializable(), "{what}: {:?}", r.report);
    }
}

/// Cicada with its default optimisations and with BestEffortInlining off (reads then walk the
/// chain for every version, which collection trims under them), RMW and blind, 8 workers on
/// 2 cores.
#[test]
fn cicada_is_serializable_on_rmw_and_blind_ycsb() {
    for inlining in [true, false] {
        for rmw in [true, false] {
            let ycsb = txbench::workload::ycsb::YcsbConfig {
                rmw,
                ..contended_ycsb()
            };
            let mut o = opts(8);
            o.cicada.inlining = inlining;
            let r = run_checked(Cicada::new(&o), ycsb, &checked_exec(8, 300));
            let what = format!("cicada inlining {inlining} rmw {rmw}");
            assert!(r.committed > 100, "{what}: {} commits", r.committed);
            assert_eq!(r.lost_update_keys, 0, "{what}: lost updates");
            assert!(r.report.is_serializable(), "{what}: {:?}", r.report);
        }
    }
}

/// A named change to the default options.
type OptionVariant = (&'static str, fn(&mut ProtocolOptions));

/// The read-phase options off and on (issue 27): ERMIA with the early exclusion check and the
/// read-set pruning each off, and with readers skipping in-flight versions; SI with readers
/// skipping them (still no lost update, nothing worse than write skew). 8 workers on 2 cores.
#[test]
fn the_fidelity_options_keep_ermia_serializable_and_si_snapshot_isolated() {
    for rmw in [true, false] {
        let ycsb = txbench::workload::ycsb::YcsbConfig {
            rmw,
            ..contended_ycsb()
        };
        let variants: [OptionVariant; 3] = [
            ("no early check", |o| o.ermia.early_exclusion = false),
            ("no pruning", |o| o.ermia.prune_overwritten_reads = false),
            ("skip in flight", |o| o.mv.skip_in_flight = true),
        ];
        for (name, set) in variants {
            let mut o = opts(8);
            set(&mut o);
            let r = run_checked(Ermia::new(&o).unwrap(), ycsb.clone(), &checked_exec(8, 300));
            let what = format!("ermia {name} rmw {rmw}");
            assert!(r.committed > 100, "{what}: {} commits", r.committed);
            assert_eq!(r.lost_update_keys, 0, "{what}: lost updates");
            assert!(r.report.is_serializable(), "{what}: {:?}", r.report);
        }
        let mut o = opts(8);
        o.mv.skip_in_flight = true;
        let r = run_checked(Si::new(&o), ycsb, &checked_exec(8, 300));
        assert!(r.committed > 100);
        assert_eq!(
            r.lost_update_keys, 0,
            "si skip in flight: first committer wins"
        );
        assert_eq!(r.report.anomalies, 0, "si skip in flight: {:?}", r.report);
        assert!(
            r.report.cycle_kinds.keys().all(|k| k == "G2-item"),
            "si skip in flight: {:?}",
            r.report
        );
    }
}
