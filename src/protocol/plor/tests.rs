//! Deterministic interleavings: a few PLOR workers driven step by step on one thread.

use super::*;
use crate::storage::{RecordId, Table, TableSpec};

const OK: OpResult = Poll::Ready(Ok(()));

fn plor(threads: usize, opts: PlorOptions) -> Plor {
    Plor::new(&ProtocolOptions {
        threads,
        plor: opts,
        ..Default::default()
    })
    .expect("supported thread count")
}

/// Read-only transactions lock from the start (the OCC path has its own tests).
fn locking() -> PlorOptions {
    PlorOptions {
        ro_threshold: 0,
        ..Default::default()
    }
}

fn table() -> Table<PlorLock> {
    Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    })
}

fn value(rec: Record<'_, PlorLock>) -> [u8; 8] {
    let mut out = [0u8; 8];
    rec.payload.load(&mut out);
    out
}

#[test]
fn reader_ignores_write_lock_and_older_reader_makes_committer_wait() {
    let (p, t) = (plor(2, locking()), table());
    let x = t.get(RecordId(0)).unwrap();
    let (mut old, mut young) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    p.begin(&mut old, AttemptStart::FIRST);
    p.begin(&mut young, AttemptStart::FIRST);
    assert_eq!(p.write(&mut young, x, &[7; 8], WriteKind::Blind), OK);
    assert_eq!(
        x.meta().owner(),
        young.ident().raw(),
        "write lock taken in read phase"
    );
    // Optimistic reading: the write lock does not block the reader; it sees the committed value.
    assert_eq!(p.read(&mut old, x, &mut buf), OK);
    assert_eq!(buf, [0; 8]);
    assert_eq!(
        p.commit(&mut young),
        Poll::Pending,
        "waits for the older reader"
    );
    assert!(x.meta().is_exclusive(), "phase 1 upgraded the lock");
    assert!(
        !p.contexts().is_aborted(0),
        "an older reader is not wounded"
    );
    assert_eq!(p.commit(&mut old), OK);
    assert_eq!(p.commit(&mut young), OK);
    assert_eq!(value(x), [7; 8]);
    assert_eq!(x.meta().owner(), 0);
    assert!(!x.meta().is_exclusive() && x.meta().readers_now().is_empty());
}

#[test]
fn committer_wounds_younger_reader_and_waits_for_it_to_leave() {
    let (p, t) = (plor(2, locking()), table());
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut old, mut young) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    p.begin(&mut old, AttemptStart::FIRST);
    p.begin(&mut young, AttemptStart::FIRST);
    assert_eq!(p.write(&mut old, x, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(p.read(&mut young, x, &mut buf), OK);
    assert_eq!(
        p.commit(&mut old),
        Poll::Pending,
        "the wounded reader still holds its bit"
    );
    assert!(p.contexts().is_aborted(1));
    assert_eq!(
        p.read(&mut young, y, &mut buf),
        Poll::Ready(Err(Abort::Wounded))
    );
    p.abort(&mut young, Abort::Wounded);
    assert_eq!(p.commit(&mut old), OK);
    // The retry keeps its priority, and is no longer wounded.
    let before = young.ident();
    p.begin(&mut young, AttemptStart::RETRY);
    assert_eq!(young.ident(), before);
    assert_eq!(p.read(&mut young, x, &mut buf), OK);
    assert_eq!(buf, [1; 8]);
}

#[test]
fn reader_refused_by_exclusive_mode_wounds_a_younger_committer() {
    let (p, t) = (plor(3, locking()), table());
    let x = t.get(RecordId(0)).unwrap();
    let (mut oldest, mut mid, mut young) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    let mut buf = [0u8; 8];
    p.begin(&mut oldest, AttemptStart::FIRST);
    p.begin(&mut mid, AttemptStart::FIRST);
    p.begin(&mut young, AttemptStart::FIRST);
    assert_eq!(p.write(&mut young, x, &[3; 8], WriteKind::Blind), OK);
    assert_eq!(p.read(&mut oldest, x, &mut buf), OK);
    assert_eq!(p.commit(&mut young), Poll::Pending);
    // The record is in exclusive mode: `mid` may not read it, and being older, wounds `young`.
    assert_eq!(p.read(&mut mid, x, &mut buf), Poll::Pending);
    assert!(!x.meta().is_reading(1), "a refused reader leaves no bit");
    assert_eq!(p.commit(&mut young), Poll::Ready(Err(Abort::Wounded)));
    p.abort(&mut young, Abort::Wounded);
    assert!(!x.meta().is_exclusive() && x.meta().owner() == 0);
    assert_eq!(p.read(&mut mid, x, &mut buf), OK);
    assert_eq!(buf, [0; 8]);
}

#[test]
fn released_write_lock_goes_to_the_oldest_waiter() {
    let (p, t) = (plor(3, locking()), table());
    let x = t.get(RecordId(0)).unwrap();
    let (mut w1, mut w2, mut w3) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    p.begin(&mut w1, AttemptStart::FIRST);
    p.begin(&mut w2, AttemptStart::FIRST);
    p.begin(&mut w3, AttemptStart::FIRST);
    assert_eq!(p.write(&mut w2, x, &[2; 8], WriteKind::Blind), OK);
    assert_eq!(
        p.write(&mut w3, x, &[3; 8], WriteKind::Blind),
        Poll::Pending
    );
    assert!(
        !p.contexts().is_aborted(1),
        "a younger waiter does not wound"
    );
    assert_eq!(
        p.write(&mut w1, x, &[1; 8], WriteKind::Blind),
        Poll::Pending
    );
    assert!(
        p.contexts().is_aborted(1),
        "an older waiter wounds the owner"
    );
    assert_eq!(p.commit(&mut w2), Poll::Ready(Err(Abort::Wounded)));
    p.abort(&mut w2, Abort::Wounded);
    assert_eq!(x.meta().owner(), 0);
    assert_eq!(
        p.write(&mut w3, x, &[3; 8], WriteKind::Blind),
        Poll::Pending,
        "a free lock is not taken past an older waiter"
    );
    assert_eq!(p.write(&mut w1, x, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(x.meta().owner(), w1.ident().raw());
    assert_eq!(p.commit(&mut w1), OK);
    assert_eq!(p.write(&mut w3, x, &[3; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(&mut w3), OK);
    assert_eq!(value(x), [3; 8]);
}

#[test]
fn waiter_rechecks_the_owner_and_wounds_a_younger_one() {
    let (p, t) = (plor(3, locking()), table());
    let x = t.get(RecordId(0)).unwrap();
    let (mut owner, mut waiter, mut late) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    p.begin(&mut owner, AttemptStart::FIRST);
    p.begin(&mut waiter, AttemptStart::FIRST);
    p.begin(&mut late, AttemptStart::FIRST);
    assert_eq!(p.write(&mut owner, x, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(
        p.write(&mut waiter, x, &[2; 8], WriteKind::Blind),
        Poll::Pending
    );
    assert!(!p.contexts().is_aborted(0), "the owner is older");
    assert_eq!(p.commit(&mut owner), OK);
    // The race of PLOR 4.2: a younger transaction grabs the free lock before the waiter re-polls.
    assert!(x.meta().try_write_lock(late.ident().raw()));
    assert_eq!(
        p.write(&mut waiter, x, &[2; 8], WriteKind::Blind),
        Poll::Pending
    );
    assert!(
        p.contexts().is_aborted(2),
        "the waiter wounds the younger owner"
    );
}

#[test]
fn dwa_locks_blind_writes_at_commit_and_upgrades_read_modify_writes() {
    let opts = PlorOptions {
        dwa: true,
        ..locking()
    };
    let (p, t) = (plor(2, opts), table());
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    p.begin(&mut a, AttemptStart::FIRST);
    p.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(p.write(&mut a, y, &[5; 8], WriteKind::Blind), OK);
    assert_eq!(
        y.meta().owner(),
        0,
        "blind write: no lock in the read phase"
    );
    assert_eq!(p.read_for_update(&mut a, x, &mut buf), OK);
    assert_eq!(p.write(&mut a, x, &[6; 8], WriteKind::ReadModifyWrite), OK);
    assert!(
        x.meta().is_reading(0) && x.meta().owner() == 0,
        "RMW: read lock only"
    );
    // The younger `b` writes y blind and commits first: it takes y's write lock at commit.
    assert_eq!(p.write(&mut b, y, &[9; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(&mut b), OK);
    assert_eq!(value(y), [9; 8]);
    // `b` now holds y at commit while `a` commits: `a` waits, wounding the younger holder.
    p.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(p.write(&mut b, y, &[8; 8], WriteKind::Blind), OK);
    assert!(y.meta().try_write_lock(b.ident().raw()));
    assert_eq!(p.commit(&mut a), Poll::Pending);
    assert!(p.contexts().is_aborted(1));
    y.meta().write_unlock(b.ident().raw());
    assert_eq!(p.commit(&mut a), OK);
    assert_eq!((value(x), value(y)), ([6; 8], [5; 8]));
    assert_eq!((x.meta().owner(), y.meta().owner()), (0, 0));
    assert!(x.meta().readers_now().is_empty());
}

#[test]
fn read_only_attempts_validate_optimistically_then_lock_after_threshold() {
    let opts = PlorOptions {
        ro_threshold: 2,
        ..Default::default()
    };
    let (p, t) = (plor(2, opts), table());
    let x = t.get(RecordId(0)).unwrap();
    let (mut ro, mut w) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    p.begin(&mut ro, AttemptStart::FIRST.read_only());
    for attempt in 0..2 {
        assert!(ro.is_optimistic(), "attempt {attempt} validates");
        assert_eq!(p.read(&mut ro, x, &mut buf), OK);
        assert!(!x.meta().is_reading(0), "optimistic reads set no bit");
        p.begin(&mut w, AttemptStart::FIRST);
        assert_eq!(p.write(&mut w, x, &[attempt + 1; 8], WriteKind::Blind), OK);
        assert_eq!(p.commit(&mut w), OK, "no reader bit to wait for");
        assert_eq!(p.commit(&mut ro), Poll::Ready(Err(Abort::ReadValidation)));
        p.abort(&mut ro, Abort::ReadValidation);
        p.begin(&mut ro, AttemptStart::RETRY.read_only());
    }
    assert!(!ro.is_optimistic(), "after 2 aborts, read locks");
    assert_eq!(p.read(&mut ro, x, &mut buf), OK);
    assert!(x.meta().is_reading(0));
    assert_eq!(p.commit(&mut ro), OK);
    assert!(!x.meta().is_reading(0));
}

#[test]
fn first_attempt_reads_lock_unless_the_transaction_is_declared_read_only() {
    // Default options: the threshold (3 aborts) leaves the optimistic path open.
    for read_only in [false, true] {
        let (p, t) = (plor(2, PlorOptions::default()), table());
        let x = t.get(RecordId(0)).unwrap();
        let (mut old, mut young) = (p.new_worker(0), p.new_worker(1));
        let mut buf = [0u8; 8];
        p.begin(
            &mut old,
            AttemptStart {
                retry: false,
                read_only,
            },
        );
        p.begin(&mut young, AttemptStart::FIRST);
        assert_eq!(old.is_optimistic(), read_only);
        assert_eq!(p.read(&mut old, x, &mut buf), OK);
        assert_eq!(x.meta().is_reading(0), !read_only, "read-only: {read_only}");
        assert_eq!(p.write(&mut young, x, &[1; 8], WriteKind::Blind), OK);
        if read_only {
            // An invisible read: the younger writer commits past it, the reader fails validation.
            assert_eq!(p.commit(&mut young), OK);
            assert_eq!(p.commit(&mut old), Poll::Ready(Err(Abort::ReadValidation)));
        } else {
            // The reader bit makes the younger writer wait for the older reader.
            assert_eq!(p.commit(&mut young), Poll::Pending);
            assert!(!p.contexts().is_aborted(0));
            assert_eq!(p.commit(&mut old), OK);
            assert_eq!(p.commit(&mut young), OK);
        }
        assert_eq!(value(x), [1; 8]);
    }
}

#[test]
fn oldest_read_write_transaction_commits_its_first_attempt_past_a_younger_writer() {
    let (p, t) = (plor(2, PlorOptions::default()), table());
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut old, mut young) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    p.begin(&mut old, AttemptStart::FIRST);
    p.begin(&mut young, AttemptStart::FIRST);
    assert_eq!(p.read(&mut old, x, &mut buf), OK);
    assert_eq!(p.write(&mut young, x, &[1; 8], WriteKind::Blind), OK);
    // Were `old`'s read optimistic, `young` would commit here and `old` would fail validation
    // at its first write.
    assert_eq!(
        p.commit(&mut young),
        Poll::Pending,
        "waits for the older reader"
    );
    assert_eq!(p.write(&mut old, y, &[2; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(&mut old), OK);
    assert_eq!(p.commit(&mut young), OK);
    assert_eq!((value(x), value(y)), ([1; 8], [2; 8]));
}

#[test]
fn optimistic_read_waits_for_exclusive_mode_and_first_write_locks_reads() {
    let (p, t) = (plor(2, PlorOptions::default()), table());
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    // Declared read-only, `a` writes anyway.
    p.begin(&mut a, AttemptStart::FIRST.read_only());
    assert_eq!(p.read(&mut a, x, &mut buf), OK);
    assert!(!x.meta().is_reading(0));
    assert_eq!(p.write(&mut a, y, &[1; 8], WriteKind::Blind), OK);
    assert!(
        x.meta().is_reading(0),
        "the first write locks what was read"
    );
    assert!(!a.is_optimistic());
    assert_eq!(p.commit(&mut a), OK);
    // An optimistic reader waits while a committer is in exclusive mode.
    p.begin(&mut a, AttemptStart::FIRST);
    p.begin(&mut b, AttemptStart::FIRST.read_only());
    assert!(b.is_optimistic());
    x.meta().try_write_lock(a.ident().raw());
    x.meta().set_exclusive();
    assert_eq!(p.read(&mut b, x, &mut buf), Poll::Pending);
    x.meta().clear_exclusive();
    x.meta().write_unlock(a.ident().raw());
    assert_eq!(p.read(&mut b, x, &mut buf), OK);
    // A stale optimistic read fails the conversion at the first write.
    p.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(p.write(&mut a, x, &[2; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(&mut a), OK);
    assert_eq!(
        p.write(&mut b, y, &[3; 8], WriteKind::Blind),
        Poll::Ready(Err(Abort::ReadValidation))
    );
    p.abort(&mut b, Abort::ReadValidation);
    assert!(
        !x.meta().is_reading(1),
        "abort releases the bit the conversion set"
    );
    p.begin(&mut b, AttemptStart::RETRY.read_only());
    assert!(
        !b.is_optimistic(),
        "a transaction that wrote locks its reads on retry"
    );
}

#[test]
fn deadline_priority_orders_by_arrival_plus_slack_times_records() {
    for (priority, big_first) in [
        (PlorPriority::Arrival, true),
        (PlorPriority::Deadline, false),
    ] {
        let opts = PlorOptions {
            priority,
            slack: 10.0,
            ..locking()
        };
        let (p, t) = (plor(2, opts), table());
        let (mut big, mut small) = (p.new_worker(0), p.new_worker(1));
        let mut buf = [0u8; 8];
        // `big` accesses 4 records, aborts, and retries: R = 4 from then on.
        p.begin(&mut big, AttemptStart::FIRST);
        for r in 0..4 {
            assert_eq!(p.read(&mut big, t.get(RecordId(r)).unwrap(), &mut buf), OK);
        }
        p.abort(&mut big, Abort::Wounded);
        p.begin(&mut big, AttemptStart::RETRY);
        // `small` arrives later and has accessed nothing: deadline = arrival.
        p.begin(&mut small, AttemptStart::FIRST);
        assert_eq!(big.ident().priority() < small.ident().priority(), big_first);
        assert_eq!(big.ident().is_older_than(small.ident()), big_first);
        if priority == PlorPriority::Deadline {
            assert_eq!(big.ident().priority(), big.arrival + 40);
        }
    }
}

#[test]
fn deadline_is_fixed_at_the_first_retry_from_the_first_attempts_accesses() {
    let opts = PlorOptions {
        priority: PlorPriority::Deadline,
        slack: 10.0,
        ..locking()
    };
    let (p, t) = (plor(1, opts), table());
    let mut w = p.new_worker(0);
    let mut buf = [0u8; 8];
    // Three attempts of one transaction accessing 4, then 1, then 2 records, each aborted.
    let mut deadlines = Vec::new();
    for (i, records) in [4, 1, 2].into_iter().enumerate() {
        let start = if i == 0 {
            AttemptStart::FIRST
        } else {
            AttemptStart::RETRY
        };
        p.begin(&mut w, start);
        deadlines.push(w.ident().priority());
        for r in 0..records {
            assert_eq!(p.read(&mut w, t.get(RecordId(r)).unwrap(), &mut buf), OK);
        }
        p.abort(&mut w, Abort::Wounded);
    }
    let arrival = w.arrival;
    assert_eq!(
        deadlines[0], arrival,
        "first attempt: R estimated from nothing"
    );
    assert_eq!(
        deadlines[1],
        arrival + 40,
        "R = the first attempt's 4 records"
    );
    assert_eq!(
        deadlines[2], deadlines[1],
        "kept although the second attempt accessed 1"
    );
    p.begin(&mut w, AttemptStart::RETRY);
    assert_eq!(w.ident().priority(), arrival + 40);
    p.abort(&mut w, Abort::Wounded);
    // The next transaction gets a new deadline, estimated from the worker's last attempt (0).
    p.begin(&mut w, AttemptStart::FIRST);
    assert_eq!(w.ident().priority(), w.arrival);
    assert!(w.arrival > arrival);
}

#[test]
fn a_hundred_workers_share_a_record() {
    let (p, t) = (plor(100, locking()), table());
    let x = t.get(RecordId(0)).unwrap();
    let mut ws: Vec<_> = (0..100).map(|i| p.new_worker(i)).collect();
    let mut buf = [0u8; 8];
    for w in ws.iter_mut() {
        p.begin(w, AttemptStart::FIRST);
    }
    for w in ws.iter_mut().take(99) {
        assert_eq!(p.read(w, x, &mut buf), OK);
    }
    // The youngest (worker 99) writes: it waits for 99 older readers, across both reader words.
    let (readers, writer) = ws.split_at_mut(99);
    let writer = &mut writer[0];
    assert_eq!(p.write(writer, x, &[4; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(writer), Poll::Pending);
    assert_eq!(x.meta().readers_now().ids().count(), 99);
    for r in readers.iter_mut() {
        assert_eq!(p.commit(r), OK);
    }
    assert_eq!(p.commit(writer), OK);
    assert_eq!(value(x), [4; 8]);
    assert!(
        Plor::new(&ProtocolOptions {
            threads: MAX_PLOR_WORKERS + 1,
            ..Default::default()
        })
        .is_err()
    );
}

#[test]
fn reader_refused_by_exclusive_mode_keeps_its_place_against_a_retrying_writer() {
    let (p, t) = (plor(3, locking()), table());
    let (x, z) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut oldest, mut reader, mut writer) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    let mut buf = [0u8; 8];
    p.begin(&mut oldest, AttemptStart::FIRST);
    p.begin(&mut reader, AttemptStart::FIRST);
    p.begin(&mut writer, AttemptStart::FIRST);
    // `writer` enters exclusive mode on x, then waits for the oldest reader of z.
    assert_eq!(p.read(&mut oldest, z, &mut buf), OK);
    assert_eq!(p.write(&mut writer, x, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(p.write(&mut writer, z, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(&mut writer), Poll::Pending);
    // The older `reader` is refused by exclusive mode on x, wounds `writer` and registers.
    assert_eq!(p.read(&mut reader, x, &mut buf), Poll::Pending);
    assert_eq!(x.meta().waiters().ids().collect::<Vec<_>>(), vec![1]);
    assert_eq!(p.commit(&mut writer), Poll::Ready(Err(Abort::Wounded)));
    p.abort(&mut writer, Abort::Wounded);
    // The retry may not retake x's write lock past the registered older reader.
    p.begin(&mut writer, AttemptStart::RETRY);
    assert_eq!(
        p.write(&mut writer, x, &[2; 8], WriteKind::Blind),
        Poll::Pending
    );
    assert_eq!(p.read(&mut reader, x, &mut buf), OK);
    assert_eq!(x.meta().waiters().ids().collect::<Vec<_>>(), vec![2]);
    assert_eq!(p.write(&mut writer, x, &[2; 8], WriteKind::Blind), OK);
    // Now the writer's commit sees the older reader's bit and waits for it.
    assert_eq!(p.commit(&mut writer), Poll::Pending);
    assert!(!p.contexts().is_aborted(1));
}

#[test]
fn read_committed_sets_no_bit_so_a_writer_commits_past_it() {
    let (p, t) = (plor(2, locking()), table());
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut old, mut young) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    p.begin(&mut old, AttemptStart::FIRST);
    p.begin(&mut young, AttemptStart::FIRST);
    assert_eq!(p.write(&mut young, x, &[7; 8], WriteKind::Blind), OK);
    assert_eq!(p.read_committed(&mut old, x, &mut buf), OK);
    assert_eq!(buf, [0; 8], "young's write is buffered, not committed");
    assert!(!x.meta().is_reading(0), "no reader bit");
    assert_eq!(p.write(&mut old, y, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(p.read_committed(&mut old, y, &mut buf), OK);
    assert_eq!(buf, [1; 8], "own write");
    // A locked read would make this commit wait for the older reader.
    assert_eq!(p.commit(&mut young), OK);
    assert_eq!(p.read_committed(&mut old, x, &mut buf), OK);
    assert_eq!(buf, [7; 8], "committed value seen");
    assert_eq!(p.commit(&mut old), OK);
}

#[test]
fn read_committed_is_not_validated_in_an_optimistic_read_only_attempt() {
    let (p, t) = (plor(2, PlorOptions::default()), table());
    let x = t.get(RecordId(0)).unwrap();
    let (mut ro, mut w) = (p.new_worker(0), p.new_worker(1));
    let mut buf = [0u8; 8];
    p.begin(&mut ro, AttemptStart::FIRST.read_only());
    assert!(ro.is_optimistic());
    assert_eq!(p.read_committed(&mut ro, x, &mut buf), OK);
    p.begin(&mut w, AttemptStart::FIRST);
    assert_eq!(p.write(&mut w, x, &[2; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(&mut w), OK);
    // An optimistic read of x would fail validation here.
    assert_eq!(p.commit(&mut ro), OK);
}

#[test]
fn read_committed_waits_for_exclusive_mode_and_wounds_only_when_holding_a_lock() {
    let (p, t) = (plor(3, locking()), table());
    let (x, z) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut free, mut holder, mut writer) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    let mut buf = [0u8; 8];
    p.begin(&mut free, AttemptStart::FIRST);
    p.begin(&mut holder, AttemptStart::FIRST);
    p.begin(&mut writer, AttemptStart::FIRST);
    // `writer` puts x in exclusive mode, then waits for the older `holder`'s reader bit on z.
    assert_eq!(p.read(&mut holder, z, &mut buf), OK);
    assert_eq!(p.write(&mut writer, x, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(p.write(&mut writer, z, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(p.commit(&mut writer), Poll::Pending);
    assert!(x.meta().is_exclusive());
    // An attempt holding nothing just waits: nobody waits for it.
    assert_eq!(p.read_committed(&mut free, x, &mut buf), Poll::Pending);
    assert!(!p.contexts().is_aborted(2), "no wound");
    assert!(x.meta().waiters().is_empty(), "no registration");
    // `holder` is waited for by `writer`: waiting without a wound would deadlock.
    assert_eq!(p.read_committed(&mut holder, x, &mut buf), Poll::Pending);
    assert!(
        p.contexts().is_aborted(2),
        "the younger committer is wounded"
    );
    assert_eq!(x.meta().waiters().ids().collect::<Vec<_>>(), vec![1]);
    assert_eq!(p.commit(&mut writer), Poll::Ready(Err(Abort::Wounded)));
    p.abort(&mut writer, Abort::Wounded);
    assert_eq!(p.read_committed(&mut holder, x, &mut buf), OK);
    assert_eq!(buf, [0; 8], "the wounded write was never installed");
    assert!(x.meta().waiters().is_empty(), "deregistered");
    assert!(!x.meta().is_reading(1), "no bit left behind");
    assert_eq!(p.read_committed(&mut free, x, &mut buf), OK);
    assert_eq!(p.commit(&mut holder), OK);
    assert_eq!(p.commit(&mut free), OK);
}

/// A waiter names whom it waits for (`crate::on_cpu`), so that the executor can park it at once
/// when every one of them is away: a committer waits for an older reader, a writer for the
/// write lock's owner, a reader for a committer in exclusive mode. The wide locker and worker
/// ids near 1024, which no concurrently running test's executor marks.
#[test]
fn waiters_name_whom_they_wait_for() {
    use crate::on_cpu::{self, HoldersSeen};
    let p = PlorWide::new(&ProtocolOptions {
        threads: 1024,
        plor: locking(),
        ..Default::default()
    })
    .unwrap();
    let t: Table<PlorLock<WIDE_WORDS>> = Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    });
    let x = t.get(RecordId(0)).unwrap();
    let (old_id, young_id, late_id) = (1000, 1001, 1002);
    let (mut old, mut young) = (p.new_worker(old_id), p.new_worker(young_id));
    let mut late = p.new_worker(late_id);
    let mut buf = [0u8; 8];
    p.begin(&mut old, AttemptStart::FIRST);
    p.begin(&mut young, AttemptStart::FIRST);
    p.begin(&mut late, AttemptStart::FIRST);
    assert_eq!(p.read(&mut old, x, &mut buf), OK);
    assert_eq!(p.write(&mut young, x, &[7; 8], WriteKind::Blind), OK);
    let seen = |away: Option<usize>, poll: &mut dyn FnMut() -> OpResult| {
        let _ = on_cpu::take_holders_seen();
        let _mark = away.map(on_cpu::mark_away);
        assert!(poll().is_pending());
        on_cpu::take_holders_seen()
    };
    // The committer waits for the older reader.
    let commit = &mut || p.commit(&mut young);
    assert_eq!(seen(None, commit), HoldersSeen::SomeRunning);
    assert_eq!(seen(Some(old_id), commit), HoldersSeen::AllAway);
    // A younger writer waits for the owner; a reader for the committer in exclusive mode.
    let write = &mut || p.write(&mut late, x, &[8; 8], WriteKind::Blind);
    assert_eq!(seen(Some(young_id), write), HoldersSeen::AllAway);
    let mut other = p.new_worker(1003);
    p.begin(&mut other, AttemptStart::FIRST);
    let read = &mut || p.read(&mut other, x, &mut [0u8; 8]);
    assert_eq!(seen(Some(young_id), read), HoldersSeen::AllAway);
    assert_eq!(seen(None, read), HoldersSeen::SomeRunning);
}
