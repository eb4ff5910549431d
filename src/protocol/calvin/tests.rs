//! Batched Calvin step by step: workers on one thread, one batch at a time.

use super::*;
use crate::protocol::AccessMode;
use crate::protocol::declared::declared_records as declared;
use crate::storage::{Table, TableSpec};

const OK: OpResult = Poll::Ready(Ok(()));
const W: AccessMode = AccessMode::Write;
const R: AccessMode = AccessMode::Read;

fn table() -> Table<CalvinLock> {
    Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    })
}

fn calvin(no_wait: bool) -> Calvin {
    Calvin::new(
        &BatchOptions {
            size: 64,
            timeout_us: 1_000_000,
        },
        CalvinOptions { no_wait },
    )
}

/// Two workers, `a` joining the batch first: whether `b` (second in the batch, declaring the
/// same record) is granted while `a`, which arrived first, has not committed yet.
fn second_runs_before_first_commits(p: &Calvin) -> bool {
    let t = table();
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    let s = declared(&t, &[(0, W)]);
    p.begin(&mut a, AttemptStart::FIRST);
    p.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(
        p.schedule(&mut a, &s),
        OK,
        "first: granted before the close"
    );
    assert_eq!(a.ticket.position(), 0);
    let b_first = p.schedule(&mut b, &s) == OK;
    assert_eq!(b.ticket.position(), 1);
    if !b_first {
        assert_eq!(
            b.stage,
            Stage::Requested,
            "requested in its turn, not granted"
        );
    }
    assert_eq!(p.commit(&mut a), OK);
    assert_eq!(p.schedule(&mut b, &s), OK);
    assert_eq!(p.commit(&mut b), OK);
    b_first
}

#[test]
fn locks_are_granted_in_batch_order() {
    assert!(!second_runs_before_first_commits(&calvin(false)));
}

/// The same check fails for the mutant whose members run as soon as they requested.
#[test]
fn running_before_the_grants_fails_the_order_check() {
    let p = calvin(false).with_mutant(Mutant::CalvinBatchRunsBeforeGrants);
    assert!(second_runs_before_first_commits(&p));
}

/// Members request in the order they joined, without waiting for the batch to close (a third
/// worker may still join); passing the turn wakes the next member, which may be parked.
#[test]
fn requests_follow_the_joins_before_the_close() {
    let t = table();
    let p = calvin(false);
    let (mut a, mut b, _c) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    let (sa, sb) = (declared(&t, &[(0, W)]), declared(&t, &[(1, R)]));
    p.begin(&mut a, AttemptStart::FIRST);
    p.begin(&mut b, AttemptStart::FIRST);
    let wakes = crate::protocol::wake::calls_on_this_thread();
    assert_eq!(p.schedule(&mut a, &sa), OK, "first: c may still join");
    assert!(
        crate::protocol::wake::calls_on_this_thread() > wakes,
        "passing the turn wakes b, which may be parked"
    );
    assert_eq!(p.schedule(&mut b, &sb), OK, "disjoint: granted at once");
    assert_eq!((a.ticket.position(), b.ticket.position()), (0, 1));
    assert_eq!(p.commit(&mut b), OK);
    assert_eq!(p.commit(&mut a), OK);
}

/// Readers of one batch share a record; a writer after them waits for both; the next batch
/// opens only when every member finished.
#[test]
fn readers_share_and_the_next_batch_waits_for_every_member() {
    let t = table();
    let p = calvin(false);
    let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
    let (read, write) = (declared(&t, &[(0, R)]), declared(&t, &[(0, W)]));
    for w in ws.iter_mut() {
        p.begin(w, AttemptStart::FIRST);
    }
    assert_eq!(p.schedule(&mut ws[0], &read), OK);
    assert_eq!(p.schedule(&mut ws[1], &read), OK, "readers share");
    assert_eq!(p.schedule(&mut ws[2], &write), Poll::Pending, "two readers");
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.schedule(&mut ws[2], &write), Poll::Pending, "one reader");
    // The first reader's next transaction waits for the next batch.
    p.begin(&mut ws[0], AttemptStart::FIRST);
    assert_eq!(p.schedule(&mut ws[0], &read), Poll::Pending);
    assert_eq!(ws[0].stage, Stage::Idle, "not in a batch");
    assert_eq!(ws[0].ticket.batch(), 0);
    assert_eq!(p.commit(&mut ws[1]), OK);
    assert_eq!(p.schedule(&mut ws[2], &write), OK);
    assert_eq!(p.schedule(&mut ws[0], &read), Poll::Pending);
    assert_eq!(p.commit(&mut ws[2]), OK);
    // Batch 2: worker 0 is first; the others join when they start.
    p.begin(&mut ws[1], AttemptStart::FIRST);
    p.begin(&mut ws[2], AttemptStart::FIRST);
    assert_eq!(p.schedule(&mut ws[0], &read), OK, "first in batch 2");
    assert_eq!(ws[0].ticket.batch(), 2);
    assert_eq!(
        p.schedule(&mut ws[1], &write),
        Poll::Pending,
        "after the reader"
    );
    assert_eq!(
        p.schedule(&mut ws[2], &read),
        Poll::Pending,
        "after the writer"
    );
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.schedule(&mut ws[1], &write), OK);
    assert_eq!(
        p.schedule(&mut ws[2], &read),
        Poll::Pending,
        "after the writer"
    );
    assert_eq!(p.commit(&mut ws[1]), OK);
    assert_eq!(p.schedule(&mut ws[2], &read), OK);
    assert_eq!(p.commit(&mut ws[2]), OK);
    assert_eq!(p.stats()[0], ("batches", 2.0));
}

/// No-wait: a member whose lock is taken at its turn reruns in the next batch (SF under coroutines), where it
/// comes first; a member with free locks runs.
#[test]
fn no_wait_moves_a_conflict_to_the_next_batch() {
    let t = table();
    let p = calvin(true);
    let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
    let (w0, w1) = (declared(&t, &[(0, W)]), declared(&t, &[(1, W)]));
    for w in ws.iter_mut() {
        p.begin(w, AttemptStart::FIRST);
    }
    assert_eq!(p.schedule(&mut ws[0], &w0), OK);
    assert_eq!(
        p.schedule(&mut ws[1], &w0),
        Poll::Ready(Err(Abort::LockConflict))
    );
    assert_eq!(p.signal(Abort::LockConflict), Signal::Sf);
    p.abort(&mut ws[1], Abort::LockConflict);
    assert_eq!(p.schedule(&mut ws[2], &w1), OK, "its lock is free");
    assert_eq!(p.commit(&mut ws[2]), OK);
    // The retry joins the next batch only once worker 0 finished.
    p.begin(&mut ws[1], AttemptStart::RETRY);
    assert_eq!(p.schedule(&mut ws[1], &w0), Poll::Pending);
    assert_eq!(ws[1].ticket.batch(), 0);
    assert_eq!(p.commit(&mut ws[0]), OK);
    drop(ws.pop());
    drop(ws.remove(0));
    assert_eq!(p.schedule(&mut ws[0], &w0), OK, "alone in batch 2");
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(
        p.stats().last(),
        Some(&("no_wait_conflicts", 1.0)),
        "{:?}",
        p.stats()
    );
}

/// A user abort (the program rolled back after its grants) releases the locks and leaves the
/// batch, so the next member and the next batch go on.
#[test]
fn a_user_abort_releases_and_leaves_the_batch() {
    let t = table();
    let p = calvin(false);
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    let s = declared(&t, &[(0, W), (1, R)]);
    p.begin(&mut a, AttemptStart::FIRST);
    p.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(p.schedule(&mut a, &s), OK);
    assert_eq!(p.schedule(&mut b, &s), Poll::Pending, "a holds record 0");
    p.abort(&mut a, Abort::User);
    assert_eq!(p.schedule(&mut b, &s), OK);
    assert_eq!(p.commit(&mut b), OK);
    p.begin(&mut a, AttemptStart::FIRST);
    p.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(p.schedule(&mut b, &s), OK, "b came first to batch 2");
    assert_eq!(p.schedule(&mut a, &s), Poll::Pending, "after b");
    assert_eq!((b.ticket.batch(), b.ticket.position()), (2, 0));
}
