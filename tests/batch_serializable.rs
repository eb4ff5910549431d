//! Batch protocols (Aria, with and without deterministic reordering and the fallback phase; batched Calvin, BOHM and
//! PWV, waiting and no-wait) under high contention with more workers than cores, under the thread
//! executor and the coroutine executor: serializable, no lost update, progress, and every
//! concurrency-control abort one of the protocol's batch conflicts (Aria: write-after-write,
//! read-after-write; the no-wait forms: a lock taken, or a version not produced, at the turn),
//! each of which the coroutine executor turns into SGPM's NB signal. TPC-C is in `tpcc_consistency.rs`, the anomaly suite in `anomalies.rs`.

mod common;

use common::{checked_db, checked_exec, contended_ycsb, run_checked};
use txbench::check::check;
use txbench::exec::{ExecConfig, ExecOutcome, run_coro, run_threads};
use txbench::protocol::ProtocolOptions;
use txbench::protocol::aria::{Aria, AriaOptions};
use txbench::protocol::batch::BatchOptions;
use txbench::protocol::bohm::{Bohm, PlacedVersions};
use txbench::protocol::calvin::{Calvin, CalvinOptions};
use txbench::protocol::signal::Signal;
use txbench::protocol::{Abort, Protocol};
use txbench::storage::Database;
use txbench::workload::Workload;
use txbench::workload::long_scan::{LongScan, LongScanConfig};
use txbench::workload::ycsb::{Ycsb, YcsbConfig};

fn aria((reordering, fallback): (bool, bool)) -> Aria {
    Aria::new(
        &BatchOptions::default(),
        AriaOptions {
            reordering,
            fallback,
        },
    )
}

/// Aria's forms: (reordering, fallback).
const ARIA_FORMS: [(bool, bool); 4] = [(false, false), (true, false), (false, true), (true, true)];

/// Aborts by reason, commits, and NB, SF and RR signals over a run's workers.
struct Counts {
    commits: u64,
    aborts: [u64; Abort::COUNT],
    nb: u64,
    sf: u64,
    rr: u64,
}

fn counts(out: &ExecOutcome) -> Counts {
    let mut c = Counts {
        commits: 0,
        aborts: [0; Abort::COUNT],
        nb: 0,
        sf: 0,
        rr: 0,
    };
    for w in &out.workers {
        for t in &w.types {
            c.commits += t.commits;
            for (i, n) in t.aborts.iter().enumerate() {
                c.aborts[i] += n;
            }
        }
        c.nb += w.signals[Signal::Nb.index()];
        c.sf += w.signals[Signal::Sf.index()];
        c.rr += w.signals[Signal::Rr.index()];
    }
    c
}

/// Runs `workload` on `protocol` (thread executor with `threads` workers, or `threads` threads
/// of `queue` coroutines), checked: the verdict and the counts.
fn run<P: Protocol, W: Workload>(
    protocol: P,
    workload: &W,
    threads: usize,
    queue: Option<usize>,
) -> (bool, Counts) {
    run_paused(protocol, workload, threads, queue, 0)
}

/// [`run`] with a pause of `pause_ns` between each program's end and its commit (read-phase
/// extension: the thread executor sleeps or yields, the coroutine executor suspends).
fn run_paused<P: Protocol, W: Workload>(
    protocol: P,
    workload: &W,
    threads: usize,
    queue: Option<usize>,
    pause_ns: u64,
) -> (bool, Counts) {
    let db: Database<P::RecordMeta> = checked_db(workload);
    let exec = ExecConfig {
        read_phase_extension_ns: pause_ns,
        ..checked_exec(threads, 250)
    };
    let out = match queue {
        None => run_threads(&protocol, &db, workload, &exec),
        Some(q) => run_coro(&protocol, &db, workload, &exec, q),
    };
    (check(&out.histories).is_serializable(), counts(&out))
}

/// Only batch conflicts abort (the workloads here have no user aborts).
fn only_batch_conflicts(name: &str, c: &Counts) {
    for why in Abort::ALL {
        if !matches!(
            why,
            Abort::BatchWriteAfterWrite | Abort::BatchReadAfterWrite | Abort::BatchAccessSetChanged
        ) {
            assert_eq!(c.aborts[why.index()], 0, "{name}: {}", why.name());
        }
    }
}

fn blind() -> YcsbConfig {
    YcsbConfig {
        records: 16,
        ops: 4,
        long_ops: 4,
        rmw: false,
        ..contended_ycsb()
    }
}

fn scan() -> LongScan {
    LongScan::new(LongScanConfig {
        records: 1_000,
        hot_records: 2,
        scan_length: 50,
        payload: 16,
        ..LongScanConfig::default()
    })
}

/// The thread executor: 4 and 8 workers on the development machine's 2 cores.
#[test]
fn aria_is_serializable_under_threads() {
    for form in ARIA_FORMS {
        let name = format!("aria, (reordering, fallback) {form:?}");
        for threads in [4, 8] {
            let r = run_checked(aria(form), contended_ycsb(), &checked_exec(threads, 250));
            assert!(r.committed > 0, "{name}: no progress");
            assert_eq!(r.lost_update_keys, 0, "{name}: lost updates");
            assert!(r.report.is_serializable(), "{name}: {:?}", r.report);
        }
        for ycsb in [contended_ycsb(), blind()] {
            let (serializable, c) = run(aria(form), &Ycsb::new(ycsb.clone()), 8, None);
            assert!(serializable, "{name}: {ycsb:?}");
            assert!(c.commits > 0, "{name}: no progress on {ycsb:?}");
            only_batch_conflicts(&name, &c);
            let conflicts = c.aborts[Abort::BatchWriteAfterWrite.index()]
                + c.aborts[Abort::BatchReadAfterWrite.index()];
            assert!(conflicts > 0, "{name}: no conflict at all on {ycsb:?}");
            // A YCSB retry runs the same request: its access set never changes.
            assert_eq!(c.aborts[Abort::BatchAccessSetChanged.index()], 0, "{name}");
        }
        let (serializable, c) = run(aria(form), &scan(), 8, None);
        assert!(serializable, "{name}: long-scan");
        assert!(c.commits > 0, "{name}: no progress on long-scan");
        only_batch_conflicts(&name, &c);
    }
}

/// The coroutine executor: 2 threads of 4 coroutines (8 members per batch at most), and one
/// thread of 8, whose members all wait for each other on one thread (a protocol that spun at
/// the batch barrier would never return). Every retried abort is one NB signal, or with the
/// fallback phase one RR (a rerun in its batch; a YCSB retry's access set never changes).
#[test]
fn aria_is_serializable_under_coroutines() {
    for form in ARIA_FORMS {
        let name = format!("aria, (reordering, fallback) {form:?}, coro");
        for (threads, queue) in [(2, 4), (1, 8)] {
            for ycsb in [contended_ycsb(), blind()] {
                let (serializable, c) =
                    run(aria(form), &Ycsb::new(ycsb.clone()), threads, Some(queue));
                assert!(serializable, "{name} {threads}x{queue}: {ycsb:?}");
                assert!(c.commits > 0, "{name} {threads}x{queue}: no progress");
                only_batch_conflicts(&name, &c);
                let retried: u64 = c.aborts.iter().sum();
                assert!(retried > 0, "{name}: no conflict");
                let (nb, rr) = if form.1 { (c.rr, c.nb) } else { (c.nb, c.rr) };
                assert_eq!(nb, retried, "{name}: every conflict is NB (fallback: RR)");
                assert_eq!(rr, 0, "{name}");
            }
        }
        let (serializable, c) = run(aria(form), &scan(), 2, Some(4));
        assert!(serializable, "{name}: long-scan");
        assert!(c.commits > 0, "{name}: no progress on long-scan");
    }
}

fn calvin(no_wait: bool) -> Calvin {
    Calvin::new(&BatchOptions::default(), CalvinOptions { no_wait })
}

/// Batched Calvin under threads (4 and 8 workers) and coroutines (2 x 4, 1 x 8): serializable,
/// no lost update, progress; the waiting form never aborts, the no-wait form aborts only on a
/// lock it found taken at its turn, and under coroutines each such abort is one NB signal.
#[test]
fn calvin_is_serializable_under_threads_and_coroutines() {
    for no_wait in [false, true] {
        let name = format!("calvin, no-wait {no_wait}");
        for threads in [4, 8] {
            let r = run_checked(
                calvin(no_wait),
                contended_ycsb(),
                &checked_exec(threads, 250),
            );
            assert!(r.committed > 0, "{name}: no progress");
            assert_eq!(r.lost_update_keys, 0, "{name}: lost updates");
            assert!(r.report.is_serializable(), "{name}: {:?}", r.report);
        }
        let runs = [(8, None), (2, Some(4)), (1, Some(8))];
        for ycsb in [contended_ycsb(), blind()] {
            for (threads, queue) in runs {
                let what = format!("{name}, {threads} x {queue:?}, {ycsb:?}");
                // An unpaused no-wait run on a loaded machine may see no conflict (its members
                // never overlapped: since turns start before the batch closes, a member can run
                // from its turn to its commit before the next one arrives; 3 runs in a row saw
                // none in a full suite beside another process, stop 31). So up to three runs,
                // each checked, for one that conflicts; the later ones pause 200 us before each
                // commit, so that members hold their locks while later ones take their turns,
                // whatever the scheduler does (as the placed-versions test's paused runs).
                let mut tries = 0;
                let (serializable, c) = loop {
                    tries += 1;
                    let pause_ns = if tries == 1 { 0 } else { 200_000 };
                    let workload = Ycsb::new(ycsb.clone());
                    let (s, c) = run_paused(calvin(no_wait), &workload, threads, queue, pause_ns);
                    assert!(s, "{what}");
                    let conflicted = c.aborts[Abort::LockConflict.index()] > 0;
                    if !no_wait || threads == 1 || conflicted || tries == 3 {
                        break (s, c);
                    }
                };
                assert!(serializable, "{what}");
                assert!(c.commits > 0, "{what}: no progress");
                let conflicts = c.aborts[Abort::LockConflict.index()];
                let all: u64 = c.aborts.iter().sum();
                assert_eq!(all, conflicts, "{what}: only no-wait conflicts abort");
                if no_wait && threads > 1 {
                    // One thread runs each member to its commit before the next one's turn
                    // (nothing makes it wait), so only more threads find locks taken.
                    assert!(conflicts > 0, "{what}: no conflict at all");
                } else if !no_wait {
                    assert_eq!(conflicts, 0, "{what}: the waiting form never aborts");
                }
                if queue.is_some() {
                    // SGPM's SF: a no-wait conflict swaps with the global queue's front.
                    assert_eq!((c.sf, c.nb), (conflicts, 0), "{what}: every conflict is SF");
                }
            }
        }
        let (serializable, c) = run(calvin(no_wait), &scan(), 2, Some(4));
        assert!(serializable, "{name}: long-scan");
        assert!(c.commits > 0, "{name}: no progress on long-scan");
    }
}

fn placed<const EARLY: bool>(workers: usize, no_wait: bool) -> PlacedVersions<EARLY> {
    let mut o = ProtocolOptions {
        threads: workers,
        ..ProtocolOptions::default()
    };
    o.bohm.no_wait = no_wait;
    o.pwv.no_wait = no_wait;
    PlacedVersions::new(&o)
}

/// BOHM or PWV (`EARLY`) under threads (4 and 8 workers) and coroutines (2 x 4, 1 x 8):
/// serializable, no lost update, progress; the waiting form never aborts (reads wait for their
/// versions instead), the no-wait form aborts only on a version not produced at its turn, and
/// under coroutines each such abort is one NB signal. The no-wait form must also rerun some
/// members, which it does for sure only when the members of a batch overlap: in the test build
/// a member often commits before the next one is even scheduled (runs with 8 threads saw no
/// conflict at all, 4 times in 12), so that is asserted on runs that pause 200 us before each
/// commit. Under PWV those runs put the commit point at the commit (`user_aborts`, as on
/// TPC-C): with each write visible at the write, before the pause, a member conflicts only if
/// its turn falls between an earlier member's placement and its writes, and unpinned paused
/// runs saw none at all (`bohm::no_wait_tests` shows PWV_NW's conflict step by step).
fn placed_versions_are_serializable<const EARLY: bool>(name: &str, no_wait: bool) {
    for threads in [4, 8] {
        let r = run_checked(
            placed::<EARLY>(threads, no_wait),
            contended_ycsb(),
            &checked_exec(threads, 250),
        );
        assert!(r.committed > 0, "{name}: no progress");
        assert_eq!(r.lost_update_keys, 0, "{name}: lost updates");
        assert!(r.report.is_serializable(), "{name}: {:?}", r.report);
    }
    let runs = [(8, None), (2, Some(4)), (1, Some(8))];
    for ycsb in [contended_ycsb(), blind()] {
        for (threads, queue) in runs {
            let what = format!("{name}, {threads} x {queue:?}, {ycsb:?}");
            let workers = threads * queue.unwrap_or(1);
            let (serializable, c) = run(
                placed::<EARLY>(workers, no_wait),
                &Ycsb::new(ycsb.clone()),
                threads,
                queue,
            );
            assert!(serializable, "{what}");
            assert!(c.commits > 0, "{what}: no progress");
            let conflicts = c.aborts[Abort::LockConflict.index()];
            let all: u64 = c.aborts.iter().sum();
            assert_eq!(all, conflicts, "{what}: only no-wait conflicts abort");
            if !no_wait {
                assert_eq!(conflicts, 0, "{what}: the waiting form never aborts");
            }
            if queue.is_some() {
                // SGPM's SF: a no-wait conflict swaps with the global queue's front.
                assert_eq!((c.sf, c.nb), (conflicts, 0), "{what}: every conflict is SF");
            }
        }
    }
    if no_wait {
        // One thread runs each member to its commit before the next one's turn (nothing makes
        // it wait), so only more threads find versions not produced yet.
        for (threads, queue) in [(8, None), (2, Some(4))] {
            let what = format!("{name}, {threads} x {queue:?}, paused");
            let workers = threads * queue.unwrap_or(1);
            let workload = Ycsb::new(contended_ycsb());
            let mut o = ProtocolOptions {
                threads: workers,
                user_aborts: true,
                ..ProtocolOptions::default()
            };
            o.bohm.no_wait = true;
            o.pwv.no_wait = true;
            let (serializable, c) = run_paused(
                PlacedVersions::<EARLY>::new(&o),
                &workload,
                threads,
                queue,
                200_000,
            );
            assert!(serializable, "{what}");
            let conflicts = c.aborts[Abort::LockConflict.index()];
            assert!(conflicts > 0, "{what}: no conflict at all");
            assert_eq!(c.aborts.iter().sum::<u64>(), conflicts, "{what}");
            if queue.is_some() {
                // SGPM's SF: a no-wait conflict swaps with the global queue's front.
                assert_eq!((c.sf, c.nb), (conflicts, 0), "{what}: every conflict is SF");
            }
        }
    }
    let (serializable, c) = run(placed::<EARLY>(8, no_wait), &scan(), 2, Some(4));
    assert!(serializable, "{name}: long-scan");
    assert!(c.commits > 0, "{name}: no progress on long-scan");
}

#[test]
fn bohm_is_serializable_under_threads_and_coroutines() {
    let _: fn(usize, bool) -> Bohm = placed::<false>;
    placed_versions_are_serializable::<false>("bohm", false);
}

/// PWV: the same bar, with writes visible before their writers end.
#[test]
fn pwv_is_serializable_under_threads_and_coroutines() {
    placed_versions_are_serializable::<true>("pwv", false);
}

/// BOHM_NW (`--bohm-no-wait`): the same bar, with conflicts rerun in the next batch.
#[test]
fn bohm_no_wait_is_serializable_under_threads_and_coroutines() {
    placed_versions_are_serializable::<false>("bohm, no-wait", true);
}

/// PWV_NW (`--pwv-no-wait`): the same bar.
#[test]
fn pwv_no_wait_is_serializable_under_threads_and_coroutines() {
    placed_versions_are_serializable::<true>("pwv, no-wait", true);
}
