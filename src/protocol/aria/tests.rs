//! Aria step by step: two workers on one thread, one batch at a time.

use super::*;
use crate::ids::RecordId;
use crate::storage::{Table, TableSpec};

const OK: OpResult = Poll::Ready(Ok(()));

fn table() -> Table<AriaMeta> {
    Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    })
}

fn aria(reordering: bool) -> Aria {
    Aria::new(
        &BatchOptions {
            size: 64,
            timeout_us: 1_000_000,
        },
        AriaOptions { reordering },
    )
}

fn rec(t: &Table<AriaMeta>, i: u64) -> Record<'_, AriaMeta> {
    t.get(RecordId(i)).expect("in the table")
}

fn value(t: &Table<AriaMeta>, i: u64) -> u64 {
    rec(t, i).payload.word(0)
}

fn read<'db>(p: &Aria, w: &mut AriaWorker<'db>, r: Record<'db, AriaMeta>) -> u64 {
    let mut out = [0u8; 8];
    assert_eq!(p.read(w, r, &mut out), OK);
    u64::from_le_bytes(out)
}

fn write<'db>(p: &Aria, w: &mut AriaWorker<'db>, r: Record<'db, AriaMeta>, v: u64) {
    assert_eq!(p.write(w, r, &v.to_le_bytes(), WriteKind::Blind), OK);
}

/// Both members commit (in either order of the calls) once both executed; `Pending` before.
fn commit_both(p: &Aria, a: &mut AriaWorker<'_>, b: &mut AriaWorker<'_>) -> (OpResult, OpResult) {
    assert_eq!(p.commit(a), Poll::Pending, "b has not executed");
    let rb = p.commit(b);
    let ra = p.commit(a);
    (ra, rb)
}

fn start(p: &Aria, ws: &mut [&mut AriaWorker<'_>]) {
    for w in ws {
        p.begin(w, AttemptStart::FIRST);
    }
}

/// Everyone reads the snapshot; a lower-ranked writer of what a member read aborts it
/// (read-after-write), and it commits in the next batch, where it reads the new value.
#[test]
fn a_read_after_write_aborts_the_higher_rank_and_it_commits_next_batch() {
    let t = table();
    let p = aria(false);
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    start(&p, &mut [&mut a, &mut b]);
    write(&p, &mut a, rec(&t, 0), 7);
    assert_eq!(read(&p, &mut b, rec(&t, 0)), 0, "the snapshot");
    write(&p, &mut b, rec(&t, 1), 1);
    let (ra, rb) = commit_both(&p, &mut a, &mut b);
    assert_eq!(ra, OK);
    assert_eq!(rb, Poll::Ready(Err(Abort::BatchReadAfterWrite)));
    p.abort(&mut b, Abort::BatchReadAfterWrite);
    assert_eq!((value(&t, 0), value(&t, 1)), (7, 0));
    // The next batch: b retries (and ranks first), a starts a new transaction.
    p.begin(&mut b, AttemptStart::RETRY);
    p.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(read(&p, &mut b, rec(&t, 0)), 7);
    assert_eq!(b.ticket.batch(), 2);
    write(&p, &mut b, rec(&t, 1), 8);
    assert_eq!(p.commit(&mut b), Poll::Pending, "a is live and may join");
    assert_eq!(read(&p, &mut a, rec(&t, 1)), 0);
    assert!(b.ticket.rank() < a.ticket.rank(), "the retry ranks first");
    assert_eq!(
        p.commit(&mut a),
        Poll::Ready(Err(Abort::BatchReadAfterWrite))
    );
    assert_eq!(p.commit(&mut b), OK);
    assert_eq!(value(&t, 1), 8);
}

/// Two writers of one record: the lower rank installs, the other aborts (write-after-write),
/// with or without reordering.
#[test]
fn a_write_after_write_aborts_the_higher_rank() {
    for reordering in [false, true] {
        let t = table();
        let p = aria(reordering);
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        start(&p, &mut [&mut a, &mut b]);
        write(&p, &mut b, rec(&t, 2), 2);
        write(&p, &mut a, rec(&t, 2), 1);
        let (ra, rb) = commit_both(&p, &mut a, &mut b);
        assert_eq!(ra, OK);
        assert_eq!(rb, Poll::Ready(Err(Abort::BatchWriteAfterWrite)));
        assert_eq!(value(&t, 2), 1);
    }
}

/// Deterministic reordering: a member that read what a lower rank wrote, but wrote nothing a
/// lower rank read, commits (serialized before it); with a write-after-read too it aborts.
#[test]
fn reordering_commits_a_read_after_write_without_a_write_after_read() {
    for reordering in [false, true] {
        let t = table();
        let p = aria(reordering);
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        start(&p, &mut [&mut a, &mut b]);
        write(&p, &mut a, rec(&t, 0), 5);
        assert_eq!(read(&p, &mut b, rec(&t, 0)), 0);
        write(&p, &mut b, rec(&t, 1), 9);
        let (ra, rb) = commit_both(&p, &mut a, &mut b);
        assert_eq!(ra, OK);
        if reordering {
            assert_eq!(rb, OK, "b is serialized before a");
            assert_eq!((value(&t, 0), value(&t, 1)), (5, 9));
        } else {
            assert_eq!(rb, Poll::Ready(Err(Abort::BatchReadAfterWrite)));
        }
    }
    // A cycle (each reads what the other writes): reordering cannot help.
    let t = table();
    let p = aria(true);
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    start(&p, &mut [&mut a, &mut b]);
    assert_eq!(read(&p, &mut a, rec(&t, 1)), 0);
    write(&p, &mut a, rec(&t, 0), 5);
    assert_eq!(read(&p, &mut b, rec(&t, 0)), 0);
    write(&p, &mut b, rec(&t, 1), 9);
    let (ra, rb) = commit_both(&p, &mut a, &mut b);
    assert_eq!(ra, OK);
    assert_eq!(rb, Poll::Ready(Err(Abort::BatchReadAfterWrite)));
    assert_eq!((value(&t, 0), value(&t, 1)), (5, 0));
}

/// A member that ends before its commit phase (a user abort) leaves the batch: the others do
/// not wait for it, and it waits for the next batch.
#[test]
fn a_user_abort_leaves_the_batch() {
    let t = table();
    let p = aria(false);
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    start(&p, &mut [&mut a, &mut b]);
    write(&p, &mut a, rec(&t, 0), 1);
    write(&p, &mut b, rec(&t, 0), 2);
    p.abort(&mut a, Abort::User);
    p.begin(&mut a, AttemptStart::FIRST);
    let mut out = [0u8; 8];
    assert_eq!(p.read(&mut a, rec(&t, 3), &mut out), Poll::Pending);
    assert_eq!(p.commit(&mut b), OK, "the only member left");
    assert_eq!(value(&t, 0), 2);
    assert_eq!(read(&p, &mut a, rec(&t, 0)), 2, "the next batch");
}

/// A worker that stops is not waited for, and a dropped worker leaves too.
#[test]
fn stopped_and_dropped_workers_are_not_waited_for() {
    let t = table();
    let p = aria(false);
    let (mut a, mut b, c) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    p.begin(&mut a, AttemptStart::FIRST);
    write(&p, &mut a, rec(&t, 0), 1);
    assert_eq!(p.commit(&mut a), Poll::Pending);
    p.stop_worker(&mut b);
    assert_eq!(p.commit(&mut a), Poll::Pending, "c is live");
    drop(c);
    assert_eq!(p.commit(&mut a), OK);
    drop(b);
    assert_eq!(p.stats()[0], ("batches", 1.0));
}
