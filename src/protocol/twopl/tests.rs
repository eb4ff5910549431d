//! Deterministic interleavings: two or three workers driven step by step on one thread.

use super::*;
use crate::protocol::AttemptStart;
use crate::storage::{RecordId, Table, TableSpec};

const PAYLOAD: usize = 8;

fn table<M: Default>() -> Table<M> {
    Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: PAYLOAD,
    })
}

fn protocol<R: ConflictRule>(threads: usize) -> TwoPl<R> {
    TwoPl::new(&ProtocolOptions {
        threads,
        ..ProtocolOptions::default()
    })
    .expect("thread count supported")
}

/// The lock's holders as (owner, one-word reader bitmap).
fn holders(lock: &OwnedLock) -> (Option<usize>, u64) {
    let (owner, readers) = lock.holders();
    (owner, readers.words()[0])
}

fn rec<M>(t: &Table<M>, i: u64) -> Record<'_, M> {
    t.get(RecordId(i)).expect("record")
}

fn read<'db, R: ConflictRule>(
    p: &TwoPl<R>,
    w: &mut TwoPlWorker<'db, R>,
    r: Record<'db, R::Lock>,
) -> Poll<Result<[u8; PAYLOAD], Abort>> {
    let mut out = [0u8; PAYLOAD];
    p.read(w, r, &mut out).map(|res| res.map(|()| out))
}

fn rmw<'db, R: ConflictRule>(
    p: &TwoPl<R>,
    w: &mut TwoPlWorker<'db, R>,
    r: Record<'db, R::Lock>,
) -> OpResult {
    let mut out = [0u8; PAYLOAD];
    p.read_for_update(w, r, &mut out)
}

fn write<'db, R: ConflictRule>(
    p: &TwoPl<R>,
    w: &mut TwoPlWorker<'db, R>,
    r: Record<'db, R::Lock>,
    byte: u8,
) -> OpResult {
    p.write(w, r, &[byte; PAYLOAD], WriteKind::Blind)
}

const OK: OpResult = Poll::Ready(Ok(()));

#[test]
fn no_wait_aborts_on_conflict_and_reads_own_writes() {
    let p = protocol::<NoWaitRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(rmw(&p, &mut w0, rec(&t, 0)), OK);
    assert_eq!(
        read(&p, &mut w1, rec(&t, 0)),
        Poll::Ready(Err(Abort::LockConflict))
    );
    p.abort(&mut w1, Abort::LockConflict);
    assert_eq!(write(&p, &mut w0, rec(&t, 0), 7), OK);
    assert_eq!(read(&p, &mut w0, rec(&t, 0)), Poll::Ready(Ok([7; PAYLOAD])));
    assert_eq!(
        rec(&t, 0).payload.word(0),
        0,
        "writes are buffered until commit"
    );
    assert_eq!(p.commit(&mut w0), OK);
    assert_eq!(rec(&t, 0).meta().load(), CounterLock::default().load());
    p.begin(&mut w1, AttemptStart::RETRY);
    assert_eq!(read(&p, &mut w1, rec(&t, 0)), Poll::Ready(Ok([7; PAYLOAD])));
    assert_eq!(p.commit(&mut w1), OK);
}

#[test]
fn no_wait_shares_reads_and_upgrades_only_when_alone() {
    let p = protocol::<NoWaitRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert!(read(&p, &mut w0, rec(&t, 1)).is_ready());
    assert!(read(&p, &mut w1, rec(&t, 1)).is_ready());
    assert_eq!(
        write(&p, &mut w0, rec(&t, 1), 3),
        Poll::Ready(Err(Abort::LockConflict))
    );
    p.abort(&mut w0, Abort::LockConflict);
    assert_eq!(
        write(&p, &mut w1, rec(&t, 1), 4),
        OK,
        "sole reader upgrades"
    );
    assert_eq!(
        read(&p, &mut w0, rec(&t, 1)),
        Poll::Ready(Err(Abort::LockConflict))
    );
    p.abort(&mut w0, Abort::LockConflict);
    assert_eq!(p.commit(&mut w1), OK);
    let word = rec(&t, 1).meta().load();
    assert!(
        !word.is_exclusive() && word.readers() == 0,
        "upgraded lock released once"
    );
    assert_eq!(rec(&t, 1).payload.word(0), u64::from_le_bytes([4; PAYLOAD]));
}

#[test]
fn wait_die_older_waits_younger_dies_and_retry_keeps_timestamp() {
    let p = protocol::<WaitDieRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert!(w0.me.ts.is_older_than(w1.me.ts));
    // Younger w1 holds X; older w0 waits, as often as it is polled.
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), OK);
    assert_eq!(write(&p, &mut w1, rec(&t, 0), 5), OK);
    assert!(read(&p, &mut w0, rec(&t, 0)).is_pending());
    assert!(read(&p, &mut w0, rec(&t, 0)).is_pending());
    assert_eq!(p.commit(&mut w1), OK);
    assert_eq!(read(&p, &mut w0, rec(&t, 0)), Poll::Ready(Ok([5; PAYLOAD])));
    // Older w0 holds S; a younger writer dies, and keeps dying with its original timestamp.
    p.begin(&mut w1, AttemptStart::FIRST);
    let ts = w1.me.ts;
    assert_eq!(
        write(&p, &mut w1, rec(&t, 0), 6),
        Poll::Ready(Err(Abort::Die))
    );
    p.abort(&mut w1, Abort::Die);
    p.begin(&mut w1, AttemptStart::RETRY);
    assert_eq!(w1.me.ts, ts, "retry keeps the original timestamp");
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), Poll::Ready(Err(Abort::Die)));
    p.abort(&mut w1, Abort::Die);
    assert_eq!(p.commit(&mut w0), OK);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert!(
        ts.is_older_than(w1.me.ts),
        "a new transaction gets a new timestamp"
    );
}

#[test]
fn wait_die_younger_reader_dies_on_older_writer() {
    let p = protocol::<WaitDieRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(write(&p, &mut w0, rec(&t, 2), 1), OK);
    assert_eq!(read(&p, &mut w1, rec(&t, 2)), Poll::Ready(Err(Abort::Die)));
    p.abort(&mut w1, Abort::Die);
    assert_eq!(holders(rec(&t, 2).meta()), (Some(0), 0));
}

#[test]
fn wait_die_newcomer_dies_behind_older_waiter_and_waiter_gets_the_lock() {
    let p = protocol::<WaitDieRule>(3);
    let t = table();
    let (mut w0, mut w1, mut w2) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    p.begin(&mut w2, AttemptStart::FIRST);
    assert!(read(&p, &mut w2, rec(&t, 0)).is_ready());
    assert!(write(&p, &mut w0, rec(&t, 0), 1).is_pending());
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 1 << 0);
    // Shared would be compatible with w2's lock, but w1 is younger than the waiting writer w0.
    assert_eq!(read(&p, &mut w1, rec(&t, 0)), Poll::Ready(Err(Abort::Die)));
    p.abort(&mut w1, Abort::Die);
    assert_eq!(p.commit(&mut w2), OK);
    assert_eq!(write(&p, &mut w0, rec(&t, 0), 1), OK);
    assert_eq!(
        rec(&t, 0).meta().waiters().words()[0],
        0,
        "granted request deregistered"
    );
    assert_eq!(p.commit(&mut w0), OK);
}

#[test]
fn wait_die_abort_cleans_waiter_registration() {
    let p = protocol::<WaitDieRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), OK);
    assert!(rmw(&p, &mut w0, rec(&t, 0)).is_pending());
    p.abort(&mut w0, Abort::User);
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 0);
    p.begin(&mut w0, AttemptStart::FIRST);
    assert_eq!(p.commit(&mut w0), OK);
}

#[test]
fn wound_wait_older_requester_wounds_younger_holder() {
    let p = protocol::<WoundWaitRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), OK);
    assert!(
        read(&p, &mut w0, rec(&t, 0)).is_pending(),
        "older waits for the wounded"
    );
    assert_eq!(
        read(&p, &mut w1, rec(&t, 1)),
        Poll::Ready(Err(Abort::Wounded))
    );
    p.abort(&mut w1, Abort::Wounded);
    assert_eq!(holders(rec(&t, 0).meta()), (None, 0));
    assert!(read(&p, &mut w0, rec(&t, 0)).is_ready());
    assert_eq!(
        rec(&t, 0).meta().waiters().words()[0],
        0,
        "granted request deregistered"
    );
    assert_eq!(p.commit(&mut w0), OK);
}

#[test]
fn wound_wait_wounded_waiter_aborts_and_deregisters() {
    let p = protocol::<WoundWaitRule>(3);
    let t = table();
    let (mut w0, mut w1, mut w2) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    p.begin(&mut w2, AttemptStart::FIRST);
    // w2 (youngest) holds r0; w1 holds r1 and waits for r0; w0 (oldest) wants r1.
    assert_eq!(rmw(&p, &mut w2, rec(&t, 0)), OK);
    assert_eq!(rmw(&p, &mut w1, rec(&t, 1)), OK);
    assert!(rmw(&p, &mut w1, rec(&t, 0)).is_pending());
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 1 << 1);
    assert!(read(&p, &mut w0, rec(&t, 1)).is_pending());
    assert_eq!(
        rmw(&p, &mut w1, rec(&t, 0)),
        Poll::Ready(Err(Abort::Wounded))
    );
    p.abort(&mut w1, Abort::Wounded);
    assert_eq!(
        rec(&t, 0).meta().waiters().words()[0],
        0,
        "abort cleans the waiter registration"
    );
    assert!(read(&p, &mut w0, rec(&t, 1)).is_ready());
}

#[test]
fn wound_wait_younger_requester_waits_until_release() {
    let p = protocol::<WoundWaitRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(write(&p, &mut w0, rec(&t, 3), 9), OK);
    assert!(read(&p, &mut w1, rec(&t, 3)).is_pending());
    assert!(read(&p, &mut w1, rec(&t, 3)).is_pending());
    assert_eq!(
        read(&p, &mut w0, rec(&t, 2)),
        Poll::Ready(Ok([0; PAYLOAD])),
        "not wounded"
    );
    assert_eq!(p.commit(&mut w0), OK);
    assert_eq!(read(&p, &mut w1, rec(&t, 3)), Poll::Ready(Ok([9; PAYLOAD])));
    assert_eq!(p.commit(&mut w1), OK);
}

#[test]
fn wound_wait_gives_released_lock_to_oldest_waiter() {
    let p = protocol::<WoundWaitRule>(3);
    let t = table();
    let (mut w0, mut w1, mut w2) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    p.begin(&mut w2, AttemptStart::FIRST);
    assert_eq!(rmw(&p, &mut w0, rec(&t, 0)), OK);
    assert!(rmw(&p, &mut w1, rec(&t, 0)).is_pending());
    assert_eq!(p.commit(&mut w0), OK);
    // The lock is free, but w1 (older) is registered for it: younger w2 must not take it.
    assert!(read(&p, &mut w2, rec(&t, 0)).is_pending());
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), OK);
    assert!(read(&p, &mut w2, rec(&t, 0)).is_pending());
    assert_eq!(p.commit(&mut w1), OK);
    assert!(read(&p, &mut w2, rec(&t, 0)).is_ready());
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 0);
}

#[test]
fn wound_wait_stale_wound_misses_next_transaction() {
    let p = protocol::<WoundWaitRule>(2);
    let t = table();
    let mut w1 = p.new_worker(1);
    p.begin(&mut w1, AttemptStart::FIRST);
    let old = w1.me.ts;
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), OK);
    assert_eq!(p.commit(&mut w1), OK);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert!(!p.rule.ctx().wound(1, old));
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), OK);
    assert_eq!(p.commit(&mut w1), OK);
}

#[test]
fn wound_wait_wound_before_commit_fails_the_commit() {
    let p = protocol::<WoundWaitRule>(2);
    let t = table();
    let mut w1 = p.new_worker(1);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(rmw(&p, &mut w1, rec(&t, 0)), OK);
    assert!(p.rule.ctx().wound(1, w1.me.ts));
    assert_eq!(p.commit(&mut w1), Poll::Ready(Err(Abort::Wounded)));
    p.abort(&mut w1, Abort::Wounded);
    assert_eq!(holders(rec(&t, 0).meta()), (None, 0));
}

#[test]
fn waiting_variants_reject_too_many_threads() {
    let opts = |threads| ProtocolOptions {
        threads,
        ..ProtocolOptions::default()
    };
    let err = WoundWait::new(&opts(NARROW_2PL_WORKERS + 1))
        .err()
        .expect("one-word locks name 64 workers");
    assert!(err.to_string().contains("65"), "{err}");
    assert!(WaitDie::new(&opts(NARROW_2PL_WORKERS + 1)).is_err());
    assert!(needs_wide_locks(NARROW_2PL_WORKERS + 1) && !needs_wide_locks(NARROW_2PL_WORKERS));
    let wide = opts(MAX_WAITING_2PL_THREADS);
    assert!(WoundWaitWide::new(&wide).is_ok() && WaitDieWide::new(&wide).is_ok());
    let err = WoundWaitWide::new(&opts(MAX_WAITING_2PL_THREADS + 1))
        .err()
        .expect("rejected");
    assert!(err.to_string().contains("1025"), "{err}");
    assert!(NoWait::new(&opts(MAX_WAITING_2PL_THREADS + 1)).is_ok());
}

/// Wide locks behave as one-word ones: a worker past 64 waits for and wounds a younger holder
/// past 64, and takes the lock once it aborted.
#[test]
fn wide_wound_wait_names_workers_past_64() {
    let opts = ProtocolOptions {
        threads: 300,
        ..ProtocolOptions::default()
    };
    let p = WoundWaitWide::new(&opts).unwrap();
    let t: Table<OwnedLock<WIDE_WORDS>> = table();
    let rec = |i| rec(&t, i);
    let mut old = p.new_worker(100);
    let mut young = p.new_worker(299);
    p.begin(&mut old, AttemptStart::FIRST);
    p.begin(&mut young, AttemptStart::FIRST);
    let mut buf = [0; PAYLOAD];
    assert_eq!(p.read_for_update(&mut young, rec(0), &mut buf), OK);
    assert!(p.read_for_update(&mut old, rec(0), &mut buf).is_pending());
    assert_eq!(rec(0).meta().waiters().ids().collect::<Vec<_>>(), vec![100]);
    assert_eq!(p.commit(&mut young), Poll::Ready(Err(Abort::Wounded)));
    p.abort(&mut young, Abort::Wounded);
    assert_eq!(p.read_for_update(&mut old, rec(0), &mut buf), OK);
    assert!(rec(0).meta().waiters().is_empty());
    assert_eq!(rec(0).meta().holders().0, Some(100));
    assert_eq!(p.commit(&mut old), OK);
    assert_eq!(rec(0).meta().holders(), (None, Default::default()));
}

fn read_committed<'db, R: ConflictRule>(
    p: &TwoPl<R>,
    w: &mut TwoPlWorker<'db, R>,
    r: Record<'db, R::Lock>,
) -> Poll<Result<[u8; PAYLOAD], Abort>> {
    let mut out = [0u8; PAYLOAD];
    p.read_committed(w, r, &mut out)
        .map(|res| res.map(|()| out))
}

/// Under every rule: an attempt holding no lock waits (never aborts) for an exclusive holder, sees
/// the value once committed, and leaves the lock free for a writer right after.
fn read_committed_waits_sees_commit_and_frees_the_lock<R: ConflictRule>() {
    let p = protocol::<R>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(write(&p, &mut w0, rec(&t, 0), 7), OK);
    assert!(read_committed(&p, &mut w1, rec(&t, 0)).is_pending());
    assert!(
        read_committed(&p, &mut w1, rec(&t, 0)).is_pending(),
        "repeatable after Pending"
    );
    assert_eq!(p.commit(&mut w0), OK);
    assert_eq!(
        read_committed(&p, &mut w1, rec(&t, 0)),
        Poll::Ready(Ok([7; PAYLOAD]))
    );
    // The shared lock is gone already: a writer locks the record before the reader commits.
    p.begin(&mut w0, AttemptStart::FIRST);
    assert_eq!(rmw(&p, &mut w0, rec(&t, 0)), OK);
    assert_eq!(write(&p, &mut w0, rec(&t, 0), 8), OK);
    assert_eq!(p.commit(&mut w0), OK);
    assert_eq!(p.commit(&mut w1), OK);
    assert_eq!(rec(&t, 0).payload.word(0), u64::from_le_bytes([8; PAYLOAD]));
}

#[test]
fn read_committed_waits_sees_commit_and_frees_the_lock_under_every_rule() {
    read_committed_waits_sees_commit_and_frees_the_lock::<NoWaitRule>();
    read_committed_waits_sees_commit_and_frees_the_lock::<WaitDieRule>();
    read_committed_waits_sees_commit_and_frees_the_lock::<WoundWaitRule>();
}

#[test]
fn read_committed_reads_own_writes_and_keeps_held_locks() {
    let p = protocol::<WaitDieRule>(2);
    let t = table();
    let mut w0 = p.new_worker(0);
    p.begin(&mut w0, AttemptStart::FIRST);
    assert!(read(&p, &mut w0, rec(&t, 1)).is_ready());
    assert_eq!(
        read_committed(&p, &mut w0, rec(&t, 1)),
        Poll::Ready(Ok([0; PAYLOAD]))
    );
    assert_eq!(
        holders(rec(&t, 1).meta()),
        (None, 1 << 0),
        "the serializable read's lock is still held"
    );
    assert_eq!(write(&p, &mut w0, rec(&t, 2), 4), OK);
    assert_eq!(
        read_committed(&p, &mut w0, rec(&t, 2)),
        Poll::Ready(Ok([4; PAYLOAD]))
    );
    assert_eq!(p.commit(&mut w0), OK);
    assert_eq!(holders(rec(&t, 1).meta()), (None, 0));
}

#[test]
fn no_wait_read_committed_aborts_when_holding_a_lock() {
    // Each holds an exclusive lock and reads the other's record: waiting would never end.
    let p = protocol::<NoWaitRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(write(&p, &mut w0, rec(&t, 0), 1), OK);
    assert_eq!(write(&p, &mut w1, rec(&t, 1), 2), OK);
    assert_eq!(
        read_committed(&p, &mut w0, rec(&t, 1)),
        Poll::Ready(Err(Abort::LockConflict))
    );
    p.abort(&mut w0, Abort::LockConflict);
    assert_eq!(
        read_committed(&p, &mut w1, rec(&t, 0)),
        Poll::Ready(Ok([0; PAYLOAD]))
    );
    assert_eq!(p.commit(&mut w1), OK);
    assert_eq!(rec(&t, 0).meta().load(), CounterLock::default().load());
}

#[test]
fn wait_die_read_committed_follows_the_rule_only_when_holding_a_lock() {
    let p = protocol::<WaitDieRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert!(w0.me.ts.is_older_than(w1.me.ts));
    assert_eq!(write(&p, &mut w0, rec(&t, 0), 1), OK);
    assert_eq!(write(&p, &mut w1, rec(&t, 1), 2), OK);
    // Older w0 holds a lock: it waits by the rule, registered.
    assert!(read_committed(&p, &mut w0, rec(&t, 1)).is_pending());
    assert_eq!(rec(&t, 1).meta().waiters().words()[0], 1 << 0);
    // Younger w1 holds a lock: it may not wait for the older w0, so it dies.
    assert_eq!(
        read_committed(&p, &mut w1, rec(&t, 0)),
        Poll::Ready(Err(Abort::Die))
    );
    p.abort(&mut w1, Abort::Die);
    assert_eq!(
        read_committed(&p, &mut w0, rec(&t, 1)),
        Poll::Ready(Ok([0; PAYLOAD]))
    );
    assert_eq!(
        rec(&t, 1).meta().waiters().words()[0],
        0,
        "granted, deregistered"
    );
    assert_eq!(holders(rec(&t, 1).meta()), (None, 0), "released at once");
    // The retry (still younger) holds nothing: it waits instead of dying, unregistered.
    p.begin(&mut w1, AttemptStart::RETRY);
    assert!(read_committed(&p, &mut w1, rec(&t, 0)).is_pending());
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 0);
    assert_eq!(p.commit(&mut w0), OK);
    assert_eq!(
        read_committed(&p, &mut w1, rec(&t, 0)),
        Poll::Ready(Ok([1; PAYLOAD]))
    );
    assert_eq!(p.commit(&mut w1), OK);
}

#[test]
fn wound_wait_read_committed_wounds_only_when_holding_a_lock() {
    let p = protocol::<WoundWaitRule>(2);
    let t = table();
    let (mut w0, mut w1) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut w0, AttemptStart::FIRST);
    p.begin(&mut w1, AttemptStart::FIRST);
    assert_eq!(write(&p, &mut w1, rec(&t, 0), 3), OK);
    // Older w0 holds nothing: it waits without wounding the writer or registering.
    assert!(read_committed(&p, &mut w0, rec(&t, 0)).is_pending());
    assert!(!p.rule.ctx().is_wounded(1));
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 0);
    // Holding a lock, it must wound: the younger writer may come to wait for that lock.
    assert_eq!(write(&p, &mut w0, rec(&t, 1), 4), OK);
    assert!(read_committed(&p, &mut w0, rec(&t, 0)).is_pending());
    assert!(p.rule.ctx().is_wounded(1));
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 1 << 0);
    assert_eq!(
        read_committed(&p, &mut w1, rec(&t, 1)),
        Poll::Ready(Err(Abort::Wounded))
    );
    p.abort(&mut w1, Abort::Wounded);
    assert_eq!(
        read_committed(&p, &mut w0, rec(&t, 0)),
        Poll::Ready(Ok([0; PAYLOAD])),
        "the wounded write was never committed"
    );
    assert_eq!(rec(&t, 0).meta().waiters().words()[0], 0);
    assert_eq!(holders(rec(&t, 0).meta()), (None, 0));
    assert_eq!(p.commit(&mut w0), OK);
}

/// A waiter names the holders it waits for (`crate::on_cpu`), so that the executor can park it
/// at once when every one of them is away: WOUND_WAIT (younger requester behind an older
/// holder) and WAIT_DIE (older requester behind a younger holder). Wide locks and worker ids
/// near 1024, which no concurrently running test's executor marks.
#[test]
fn waiters_name_the_holders_they_wait_for() {
    use crate::on_cpu::{self, HoldersSeen};
    fn check<R: ConflictRule<Lock = OwnedLock<WIDE_WORDS>>>(older_holds: bool) {
        let p = TwoPl::<R>::new(&ProtocolOptions {
            threads: 1024,
            ..ProtocolOptions::default()
        })
        .unwrap();
        let t: Table<OwnedLock<WIDE_WORDS>> = table();
        let (holder_id, waiter_id) = (1010, 1011);
        let (mut holder, mut waiter) = (p.new_worker(holder_id), p.new_worker(waiter_id));
        if older_holds {
            p.begin(&mut holder, AttemptStart::FIRST);
            p.begin(&mut waiter, AttemptStart::FIRST);
        } else {
            p.begin(&mut waiter, AttemptStart::FIRST);
            p.begin(&mut holder, AttemptStart::FIRST);
        }
        assert_eq!(write(&p, &mut holder, rec(&t, 1), 5), OK);
        let _ = on_cpu::take_holders_seen();
        assert!(read(&p, &mut waiter, rec(&t, 1)).is_pending());
        assert_eq!(on_cpu::take_holders_seen(), HoldersSeen::SomeRunning);
        let away = on_cpu::mark_away(holder_id);
        assert!(read(&p, &mut waiter, rec(&t, 1)).is_pending());
        assert_eq!(on_cpu::take_holders_seen(), HoldersSeen::AllAway);
        drop(away);
        p.abort(&mut holder, Abort::User);
        assert!(read(&p, &mut waiter, rec(&t, 1)).is_ready());
        assert_eq!(
            on_cpu::take_holders_seen(),
            HoldersSeen::Unknown,
            "granted: no note"
        );
    }
    check::<WoundWaitRule<WIDE_WORDS>>(true);
    check::<WaitDieRule<WIDE_WORDS>>(false);
}
