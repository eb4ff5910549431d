//! BOHM step by step: workers on one thread, one batch at a time.

use super::*;
use crate::ids::RecordId;
use crate::protocol::batch::BatchOptions;
use crate::protocol::declared::declared_records as declared;
use crate::storage::{Table, TableSpec};

const OK: OpResult = Poll::Ready(Ok(()));
const W: AccessMode = AccessMode::Write;
const R: AccessMode = AccessMode::Read;

pub(super) fn table() -> Table<BohmMeta> {
    Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    })
}

/// Four workers, batches that close when every worker joined; `user_aborts` as configuration
/// sets it for a workload.
pub(super) fn options(user_aborts: bool) -> ProtocolOptions {
    ProtocolOptions {
        threads: 4,
        batch: BatchOptions {
            size: 64,
            timeout_us: 1_000_000,
        },
        user_aborts,
        ..ProtocolOptions::default()
    }
}

fn bohm() -> Bohm {
    Bohm::new(&options(false))
}

pub(super) fn rec(t: &Table<BohmMeta>, i: u64) -> Record<'_, BohmMeta> {
    t.get(RecordId(i)).expect("in the table")
}

pub(super) fn read<'db, const E: bool>(
    p: &PlacedVersions<E>,
    w: &mut PlacedWorker<'db, E>,
    r: Record<'db, BohmMeta>,
) -> Poll<u64> {
    let mut out = [0u8; 8];
    p.read(w, r, &mut out)
        .map(|r| r.map(|()| u64::from_le_bytes(out)).expect("no abort"))
}

pub(super) fn write<'db, const E: bool>(
    p: &PlacedVersions<E>,
    w: &mut PlacedWorker<'db, E>,
    r: Record<'db, BohmMeta>,
    v: u64,
) {
    assert_eq!(p.write(w, r, &v.to_le_bytes(), WriteKind::Blind), OK);
}

/// Schedules every worker with its set until all are placed (the batch closes once all joined;
/// turns go in the order they joined, which is the order of `ws`).
pub(super) fn place_all<'db, const E: bool>(
    p: &PlacedVersions<E>,
    ws: &mut [PlacedWorker<'db, E>],
    sets: &[Vec<DeclaredRecord<'db, BohmMeta>>],
) {
    for w in ws.iter_mut() {
        p.begin(w, AttemptStart::FIRST);
    }
    for (w, s) in ws.iter_mut().zip(sets) {
        let _ = p.schedule(w, s);
    }
    for (w, s) in ws.iter_mut().zip(sets) {
        assert_eq!(p.schedule(w, s), OK, "placed in turn");
    }
}

/// Worker 0 increments record 0 (read-modify-write), worker 1 reads it, worker 2 overwrites it
/// blind: what worker 1's first read returns, polled before worker 0 produced its version
/// (`Pending` for the real protocol).
fn reader_between_two_writers(p: &Bohm) -> Poll<u64> {
    let t = table();
    let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
    let sets = [
        declared(&t, &[(0, W)]),
        declared(&t, &[(0, R)]),
        declared(&t, &[(0, W)]),
    ];
    place_all(p, &mut ws, &sets);
    let first = read(p, &mut ws[1], rec(&t, 0));
    // The blind writer cannot install before the version it follows exists.
    write(p, &mut ws[2], rec(&t, 0), 7);
    assert_eq!(
        p.commit(&mut ws[2]),
        Poll::Pending,
        "worker 0 has not installed"
    );
    assert_eq!(read(p, &mut ws[0], rec(&t, 0)), Poll::Ready(0));
    write(p, &mut ws[0], rec(&t, 0), 5);
    assert_eq!(p.commit(&mut ws[0]), OK);
    if first.is_pending() {
        assert_eq!(read(p, &mut ws[1], rec(&t, 0)), Poll::Ready(5));
    }
    assert_eq!(p.commit(&mut ws[2]), OK);
    if first.is_pending() {
        // Worker 2's install does not change what worker 1 is bound to: it reads the older
        // version from the chain, never waiting for the later writer.
        assert_eq!(read(p, &mut ws[1], rec(&t, 0)), Poll::Ready(5));
    }
    assert_eq!(p.commit(&mut ws[1]), OK);
    assert_eq!(
        rec(&t, 0).payload.word(0),
        7,
        "the last writer's version is inline"
    );
    first
}

#[test]
fn a_read_waits_for_the_version_it_is_bound_to() {
    assert_eq!(reader_between_two_writers(&bohm()), Poll::Pending);
}

/// Both mutants hand worker 1 the loaded value before worker 0 wrote: the step-by-step check
/// fails for each.
#[test]
fn the_read_mutants_fail_the_binding_check() {
    for mutant in [Mutant::BohmReadDoesNotWait, Mutant::BohmBindToInstalled] {
        let p = bohm().with_mutant(mutant);
        assert_eq!(reader_between_two_writers(&p), Poll::Ready(0), "{mutant:?}");
    }
}

/// An install keeps the version it replaces when a member is bound to read it: in
/// `reader_between_two_writers`, worker 2's install over worker 0's version, which worker 1 is
/// bound to. The mutant that keeps nothing leaves worker 1 no version to read.
#[test]
#[should_panic(expected = "no version of record")]
fn dropping_a_bound_version_leaves_its_reader_nothing() {
    let _ = reader_between_two_writers(&bohm().with_mutant(Mutant::BohmDropsBoundVersions));
}

/// A rolled-back writer's placeholder becomes the version before it, so its reader goes on;
/// the next batch reads what the batch left.
#[test]
fn a_user_abort_produces_its_placeholders() {
    let t = table();
    let p = bohm();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let sets = [
        declared(&t, &[(0, W), (1, W)]),
        declared(&t, &[(0, R), (1, W)]),
    ];
    place_all(&p, &mut ws, &sets);
    assert_eq!(read(&p, &mut ws[1], rec(&t, 0)), Poll::Pending);
    write(&p, &mut ws[0], rec(&t, 0), 9);
    assert_eq!(p.confirm_user_abort(&mut ws[0]), OK);
    p.abort(&mut ws[0], Abort::User);
    assert_eq!(read(&p, &mut ws[1], rec(&t, 0)), Poll::Ready(0), "not 9");
    write(&p, &mut ws[1], rec(&t, 1), 3);
    assert_eq!(p.commit(&mut ws[1]), OK, "its record 1 follows the copy");
    place_all(&p, &mut ws, &sets);
    assert_eq!(read(&p, &mut ws[0], rec(&t, 1)), Poll::Ready(3));
    assert_eq!(
        read(&p, &mut ws[1], rec(&t, 0)),
        Poll::Pending,
        "worker 0 wrote it first in batch 2"
    );
    assert_eq!(p.stats()[0], ("batches", 2.0));
}

/// Members place in the order they joined, without waiting for the batch to close: the first
/// at once, while a third worker may still join.
#[test]
fn placing_follows_the_joins_before_the_close() {
    let t = table();
    let p = bohm();
    let (mut a, mut b, _c) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    let s = declared(&t, &[(0, W)]);
    p.begin(&mut a, AttemptStart::FIRST);
    p.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(p.schedule(&mut a, &s), OK, "first: c may still join");
    assert_eq!(p.schedule(&mut b, &s), OK, "second: a passed the turn");
    assert!(b.ts > a.ts, "timestamps follow the turns");
    assert_eq!(b.bound[0].read_at, a.ts, "b reads a's version");
}

/// Worker 1 writes records 0 and 1, after worker 0 wrote record 1; worker 2 reads record 0.
/// Worker 1's commit installs record 0 and waits for worker 0's version of record 1: whether
/// that commit called `wake_waiters` (worker 2, bound to the version just installed, may be
/// parked, and worker 1's attempt, whose end wakes waiters, goes on).
fn commit_midway_wakes(p: &Bohm) -> bool {
    let t = table();
    let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
    let sets = [
        declared(&t, &[(1, W)]),
        declared(&t, &[(0, W), (1, W)]),
        declared(&t, &[(0, R)]),
    ];
    place_all(p, &mut ws, &sets);
    assert_eq!(read(p, &mut ws[2], rec(&t, 0)), Poll::Pending);
    write(p, &mut ws[1], rec(&t, 0), 4);
    write(p, &mut ws[1], rec(&t, 1), 4);
    let before = crate::protocol::wake::calls_on_this_thread();
    assert_eq!(
        p.commit(&mut ws[1]),
        Poll::Pending,
        "record 1 waits for worker 0"
    );
    let woke = crate::protocol::wake::calls_on_this_thread() > before;
    assert_eq!(
        read(p, &mut ws[2], rec(&t, 0)),
        Poll::Ready(4),
        "record 0 installed"
    );
    write(p, &mut ws[0], rec(&t, 1), 2);
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.commit(&mut ws[1]), OK);
    assert_eq!(p.commit(&mut ws[2]), OK);
    assert_eq!(
        rec(&t, 1).payload.word(0),
        4,
        "worker 1's version follows worker 0's"
    );
    woke
}

#[test]
fn a_commit_waiting_midway_wakes_the_readers_of_what_it_installed() {
    assert!(commit_midway_wakes(&bohm()));
    let p = bohm().with_mutant(Mutant::BohmCommitSleepsMidway);
    assert!(!commit_midway_wakes(&p), "the mutant wakes no one");
}
