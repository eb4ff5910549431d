//! Deterministic interleavings: two (or three) workers driven step by step on one thread.
//! A record "locked by another committing transaction" is simulated by setting its lock bit.

use super::*;
use crate::protocol::{AttemptStart, ProtocolOptions, TicTocOptions};
use crate::storage::{RecordId, Table, TableSpec};
use std::sync::atomic::Ordering;

const X: RecordId = RecordId(0);
const Y: RecordId = RecordId(1);
const Z: RecordId = RecordId(2);
const Q: RecordId = RecordId(3);

fn table() -> Table<TicTocMeta> {
    Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    })
}

fn tictoc(lock_wait: LockWait, tictoc: TicTocOptions) -> TicToc {
    TicToc::new(&ProtocolOptions {
        lock_wait,
        tictoc,
        ..ProtocolOptions::default()
    })
}

fn default_tictoc() -> TicToc {
    tictoc(LockWait::NoWait, TicTocOptions::default())
}

fn rec(t: &Table<TicTocMeta>, rid: RecordId) -> Record<'_, TicTocMeta> {
    t.get(rid).expect("record in table")
}

fn word(r: Record<'_, TicTocMeta>) -> TsWord {
    r.meta().word.load(Ordering::Relaxed)
}

fn set_word(r: Record<'_, TicTocMeta>, w: TsWord) {
    r.meta().word.store(w, Ordering::Relaxed);
}

/// Sets the lock bit as a committing transaction would; returns the word to restore.
fn lock_as_other(r: Record<'_, TicTocMeta>) -> TsWord {
    let w = word(r);
    set_word(r, w.locked());
    w
}

fn read<'db>(
    p: &TicToc,
    w: &mut TicTocWorker<'db>,
    r: Record<'db, TicTocMeta>,
) -> Poll<Result<u64, Abort>> {
    let mut buf = [0u8; 8];
    p.read(w, r, &mut buf)
        .map(|res| res.map(|()| u64::from_le_bytes(buf)))
}

fn read_ok<'db>(p: &TicToc, w: &mut TicTocWorker<'db>, r: Record<'db, TicTocMeta>) -> u64 {
    match read(p, w, r) {
        Poll::Ready(Ok(v)) => v,
        other => panic!("read: {other:?}"),
    }
}

fn write<'db>(p: &TicToc, w: &mut TicTocWorker<'db>, r: Record<'db, TicTocMeta>, v: u64) {
    let res = p.write(w, r, &v.to_le_bytes(), WriteKind::Blind);
    assert_eq!(res, Poll::Ready(Ok(())));
}

/// A whole transaction on its own worker: blind-writes `v` to `r` and commits.
fn committed_write(p: &TicToc, r: Record<'_, TicTocMeta>, v: u64) {
    let mut w = p.new_worker(9);
    p.begin(&mut w, AttemptStart::FIRST);
    write(p, &mut w, r, v);
    assert_eq!(p.commit(&mut w), Poll::Ready(Ok(())));
}

#[test]
fn read_of_locked_record_is_pending_until_unlocked() {
    let t = table();
    let p = default_tictoc();
    let x = rec(&t, X);
    committed_write(&p, x, 42);
    let unlocked = lock_as_other(x);
    let mut w = p.new_worker(0);
    p.begin(&mut w, AttemptStart::FIRST);
    assert_eq!(read(&p, &mut w, x), Poll::Pending);
    assert_eq!(
        read(&p, &mut w, x),
        Poll::Pending,
        "repeatable after Pending"
    );
    set_word(x, unlocked);
    assert_eq!(read(&p, &mut w, x), Poll::Ready(Ok(42)));
    assert_eq!(p.commit(&mut w), Poll::Ready(Ok(())));
}

#[test]
fn own_writes_are_read_back() {
    let t = table();
    let p = default_tictoc();
    let x = rec(&t, X);
    let mut w = p.new_worker(0);
    p.begin(&mut w, AttemptStart::FIRST);
    write(&p, &mut w, x, 7);
    assert_eq!(read_ok(&p, &mut w, x), 7);
    assert_eq!(
        word(x),
        TsWord::default(),
        "nothing installed before commit"
    );
}

#[test]
fn read_validation_fails_after_a_concurrent_committed_write() {
    let t = table();
    let p = default_tictoc();
    let x = rec(&t, X);
    let (mut t1, mut t2) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut t1, AttemptStart::FIRST);
    p.begin(&mut t2, AttemptStart::FIRST);
    let v = read_ok(&p, &mut t1, x);
    let _ = read_ok(&p, &mut t2, x);
    write(&p, &mut t2, x, 100);
    assert_eq!(p.commit(&mut t2), Poll::Ready(Ok(())));
    write(&p, &mut t1, x, v + 1);
    assert_eq!(p.commit(&mut t1), Poll::Ready(Err(Abort::ReadValidation)));
    p.abort(&mut t1, Abort::ReadValidation);
    assert_eq!(
        word(x),
        TsWord::installed_at(1),
        "t2's version survives, unlocked"
    );
}

#[test]
fn rts_extension_lets_a_reader_commit_before_a_later_writer() {
    let t = table();
    let p = default_tictoc();
    let (x, y, z) = (rec(&t, X), rec(&t, Y), rec(&t, Z));
    for v in 1..=3 {
        committed_write(&p, z, v);
    }
    assert_eq!(word(z).wts(), 3);

    // T0 reads x (wts 0) and z (wts 3): commit_ts 3, so x's rts is extended from 0 to 3.
    let mut t0 = p.new_worker(0);
    p.begin(&mut t0, AttemptStart::FIRST);
    read_ok(&p, &mut t0, x);
    read_ok(&p, &mut t0, z);
    assert_eq!(p.commit(&mut t0), Poll::Ready(Ok(())));
    assert_eq!(word(x), TsWord::new(0, 3, false));

    // T1 reads x's version valid over [0, 3]; T2 overwrites x (commit_ts 4) and commits first.
    let (mut t1, mut t2) = (p.new_worker(1), p.new_worker(2));
    p.begin(&mut t1, AttemptStart::FIRST);
    p.begin(&mut t2, AttemptStart::FIRST);
    read_ok(&p, &mut t1, x);
    write(&p, &mut t2, x, 9);
    assert_eq!(p.commit(&mut t2), Poll::Ready(Ok(())));
    assert_eq!(word(x), TsWord::installed_at(4));

    // Silo would abort T1 (the version it read is gone). TicToc orders T1 at commit_ts 1,
    // inside [0, 3], before T2.
    write(&p, &mut t1, y, 5);
    assert_eq!(p.commit(&mut t1), Poll::Ready(Ok(())));
    assert_eq!(word(y), TsWord::installed_at(1));
}

#[test]
fn extension_past_the_delta_range_shifts_wts() {
    let t = table();
    let p = default_tictoc();
    let (x, z, q) = (rec(&t, X), rec(&t, Z), rec(&t, Q));
    set_word(z, TsWord::installed_at(100_000));
    set_word(q, TsWord::installed_at(5));

    // T2 read x's version at wts 0 before the shift.
    let mut t2 = p.new_worker(1);
    p.begin(&mut t2, AttemptStart::FIRST);
    read_ok(&p, &mut t2, x);
    read_ok(&p, &mut t2, q);

    let mut t1 = p.new_worker(0);
    p.begin(&mut t1, AttemptStart::FIRST);
    read_ok(&p, &mut t1, x);
    read_ok(&p, &mut t1, z);
    assert_eq!(p.commit(&mut t1), Poll::Ready(Ok(())));
    let shifted = word(x);
    assert_eq!(shifted.rts(), 100_000);
    assert_eq!(shifted.wts(), 100_000 - TsWord::MAX_DELTA);
    assert!(!shifted.is_locked());

    // The shift moved x's wts, so T2's read (wts 0) no longer validates: conservative, correct.
    assert_eq!(p.commit(&mut t2), Poll::Ready(Err(Abort::ReadValidation)));
    p.abort(&mut t2, Abort::ReadValidation);
}

#[test]
fn extension_fails_on_a_record_locked_by_another() {
    let t = table();
    let p = default_tictoc();
    let (x, y, z) = (rec(&t, X), rec(&t, Y), rec(&t, Z));
    committed_write(&p, z, 1);
    committed_write(&p, z, 2);
    let mut t1 = p.new_worker(0);
    p.begin(&mut t1, AttemptStart::FIRST);
    read_ok(&p, &mut t1, x);
    read_ok(&p, &mut t1, z);
    write(&p, &mut t1, y, 1);
    let unlocked = lock_as_other(x);
    // commit_ts = 2 > x's rts 0, and x is locked by another: its rts cannot be extended.
    assert_eq!(
        p.commit(&mut t1),
        Poll::Ready(Err(Abort::TimestampExtension))
    );
    assert!(
        !word(y).is_locked(),
        "the write lock is released on failure"
    );
    p.abort(&mut t1, Abort::TimestampExtension);
    assert_eq!(
        word(x),
        unlocked.locked(),
        "the other holder's lock is untouched"
    );
}

#[test]
fn nowait_aborts_on_a_busy_lock_and_releases_its_locks() {
    let t = table();
    let p = default_tictoc();
    let (x, y) = (rec(&t, X), rec(&t, Y));
    lock_as_other(y);
    let mut w = p.new_worker(0);
    p.begin(&mut w, AttemptStart::FIRST);
    write(&p, &mut w, y, 1);
    write(&p, &mut w, x, 1);
    assert_eq!(p.commit(&mut w), Poll::Ready(Err(Abort::LockConflict)));
    assert!(!word(x).is_locked(), "x (first in lock order) was released");
    p.abort(&mut w, Abort::LockConflict);
    assert!(!word(x).is_locked());
}

#[test]
fn wait_keeps_its_locks_and_resumes_where_it_stopped() {
    let t = table();
    let p = tictoc(LockWait::Wait, TicTocOptions::default());
    let (x, y) = (rec(&t, X), rec(&t, Y));
    let y_unlocked = lock_as_other(y);
    let (mut t1, mut t2) = (p.new_worker(0), p.new_worker(1));

    p.begin(&mut t2, AttemptStart::FIRST);
    write(&p, &mut t2, x, 2);
    write(&p, &mut t2, y, 2);
    assert_eq!(p.commit(&mut t2), Poll::Pending);
    assert!(word(x).is_locked(), "t2 holds x while it waits for y");
    assert_eq!(p.commit(&mut t2), Poll::Pending);

    // t1 waits behind t2: a read of x, and a commit that must lock x.
    p.begin(&mut t1, AttemptStart::FIRST);
    assert_eq!(read(&p, &mut t1, x), Poll::Pending);
    write(&p, &mut t1, x, 1);
    assert_eq!(p.commit(&mut t1), Poll::Pending);

    set_word(y, y_unlocked);
    assert_eq!(p.commit(&mut t2), Poll::Ready(Ok(())));
    assert_eq!(word(x), TsWord::installed_at(1));
    assert_eq!(p.commit(&mut t1), Poll::Ready(Ok(())));
    assert_eq!(word(x), TsWord::installed_at(2), "t1 is ordered after t2");
}

#[test]
fn nowait_tt_releases_every_lock_pauses_and_relocks() {
    let t = table();
    let p = tictoc(
        LockWait::NoWait,
        TicTocOptions {
            nowait_tt: true,
            ..TicTocOptions::default()
        },
    );
    let (x, y) = (rec(&t, X), rec(&t, Y));
    let y_unlocked = lock_as_other(y);
    let mut w = p.new_worker(0);
    p.begin(&mut w, AttemptStart::FIRST);
    write(&p, &mut w, x, 1);
    write(&p, &mut w, y, 1);
    assert_eq!(p.commit(&mut w), Poll::Pending);
    assert!(!word(x).is_locked(), "every lock is released while pausing");
    assert_eq!(w.commit.locked, 0);
    assert!(w.commit.relock_after.is_some());
    set_word(y, y_unlocked);
    std::thread::sleep(NOWAIT_TT_PAUSE * 20);
    assert_eq!(p.commit(&mut w), Poll::Ready(Ok(())));
    assert_eq!(word(x), TsWord::installed_at(1));
    assert_eq!(word(y), TsWord::installed_at(1));
}

fn preemptive(on: bool) -> TicToc {
    tictoc(
        LockWait::NoWait,
        TicTocOptions {
            preemptive_abort: on,
            ..TicTocOptions::default()
        },
    )
}

#[test]
fn preemptive_abort_on_a_locked_read_takes_no_lock() {
    for on in [false, true] {
        let t = table();
        let p = preemptive(on);
        let (x, y, z) = (rec(&t, X), rec(&t, Y), rec(&t, Z));
        committed_write(&p, z, 1);
        committed_write(&p, z, 2);
        let mut w = p.new_worker(0);
        p.begin(&mut w, AttemptStart::FIRST);
        read_ok(&p, &mut w, x);
        read_ok(&p, &mut w, z);
        write(&p, &mut w, y, 1);
        lock_as_other(x);
        let expected = if on {
            Abort::Preemptive
        } else {
            Abort::TimestampExtension
        };
        assert_eq!(p.commit(&mut w), Poll::Ready(Err(expected)));
        assert_eq!(w.commit.locked, 0);
        p.abort(&mut w, expected);
        assert_eq!(word(y), TsWord::default());
    }
}

#[test]
fn preemptive_abort_on_a_replaced_read_version() {
    for on in [false, true] {
        let t = table();
        let p = preemptive(on);
        let (x, y, z) = (rec(&t, X), rec(&t, Y), rec(&t, Z));
        committed_write(&p, z, 1);
        let mut w = p.new_worker(0);
        p.begin(&mut w, AttemptStart::FIRST);
        read_ok(&p, &mut w, x);
        read_ok(&p, &mut w, z);
        committed_write(&p, x, 5);
        write(&p, &mut w, y, 1);
        let expected = if on {
            Abort::Preemptive
        } else {
            Abort::ReadValidation
        };
        assert_eq!(p.commit(&mut w), Poll::Ready(Err(expected)));
        p.abort(&mut w, expected);
        assert!(!word(y).is_locked());
    }
}

fn with_history(on: bool) -> TicToc {
    tictoc(
        LockWait::NoWait,
        TicTocOptions {
            timestamp_history: on,
            ..TicTocOptions::default()
        },
    )
}

#[test]
fn timestamp_history_validates_a_read_of_the_replaced_version() {
    for on in [false, true] {
        let t = table();
        let p = with_history(on);
        let (x, y, z, q) = (rec(&t, X), rec(&t, Y), rec(&t, Z), rec(&t, Q));
        set_word(z, TsWord::installed_at(2));
        set_word(q, TsWord::installed_at(5));
        let (mut t1, mut t2) = (p.new_worker(0), p.new_worker(1));
        p.begin(&mut t1, AttemptStart::FIRST);
        p.begin(&mut t2, AttemptStart::FIRST);
        read_ok(&p, &mut t1, x);
        read_ok(&p, &mut t1, z);

        // T2 replaces x's version [0, 0] with one installed at 5 (T2 read q at wts 5).
        read_ok(&p, &mut t2, q);
        write(&p, &mut t2, x, 1);
        assert_eq!(p.commit(&mut t2), Poll::Ready(Ok(())));
        assert_eq!(word(x), TsWord::installed_at(5));

        // T1's commit_ts is 2 < 5: the version it read of x was current at 2.
        write(&p, &mut t1, y, 1);
        let expected = if on {
            Ok(())
        } else {
            Err(Abort::ReadValidation)
        };
        assert_eq!(p.commit(&mut t1), Poll::Ready(expected), "history {on}");
        if on {
            assert_eq!(word(y), TsWord::installed_at(2));
        }
    }
}

#[test]
fn timestamp_history_rejects_a_read_overtaken_by_the_next_version() {
    let t = table();
    let p = with_history(true);
    let (x, y, z, q) = (rec(&t, X), rec(&t, Y), rec(&t, Z), rec(&t, Q));
    set_word(q, TsWord::installed_at(10));
    set_word(z, TsWord::installed_at(100_000));

    let mut t1 = p.new_worker(0);
    p.begin(&mut t1, AttemptStart::FIRST);
    read_ok(&p, &mut t1, x);
    read_ok(&p, &mut t1, q);

    // x gets a version installed at 1, then a reader at 100000 shifts that version's wts up
    // past 10. The history must still say the version T1 read ended at 1.
    committed_write(&p, x, 1);
    let mut t3 = p.new_worker(2);
    p.begin(&mut t3, AttemptStart::FIRST);
    read_ok(&p, &mut t3, x);
    read_ok(&p, &mut t3, z);
    assert_eq!(p.commit(&mut t3), Poll::Ready(Ok(())));
    assert!(word(x).wts() > 10);

    write(&p, &mut t1, y, 1);
    assert_eq!(p.commit(&mut t1), Poll::Ready(Err(Abort::ReadValidation)));
    p.abort(&mut t1, Abort::ReadValidation);
}

fn read_committed<'db>(
    p: &TicToc,
    w: &mut TicTocWorker<'db>,
    r: Record<'db, TicTocMeta>,
) -> Poll<Result<u64, Abort>> {
    let mut buf = [0u8; 8];
    p.read_committed(w, r, &mut buf)
        .map(|res| res.map(|()| u64::from_le_bytes(buf)))
}

#[test]
fn read_committed_skips_buffered_writes_and_waits_for_a_locked_record() {
    let t = table();
    let p = default_tictoc();
    let x = rec(&t, X);
    committed_write(&p, x, 42);
    let (mut t1, mut t2) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut t1, AttemptStart::FIRST);
    p.begin(&mut t2, AttemptStart::FIRST);
    write(&p, &mut t2, x, 43);
    assert_eq!(
        read_committed(&p, &mut t1, x),
        Poll::Ready(Ok(42)),
        "t2's write is buffered, not committed"
    );
    let unlocked = lock_as_other(x);
    assert_eq!(read_committed(&p, &mut t1, x), Poll::Pending);
    set_word(x, unlocked);
    assert_eq!(p.commit(&mut t2), Poll::Ready(Ok(())));
    assert_eq!(read_committed(&p, &mut t1, x), Poll::Ready(Ok(43)));
    assert_eq!(p.commit(&mut t1), Poll::Ready(Ok(())));
}

#[test]
fn read_committed_is_not_validated_and_reads_own_writes() {
    let t = table();
    let p = default_tictoc();
    let (x, y) = (rec(&t, X), rec(&t, Y));
    let (mut t1, mut t2) = (p.new_worker(0), p.new_worker(1));
    p.begin(&mut t1, AttemptStart::FIRST);
    p.begin(&mut t2, AttemptStart::FIRST);
    assert_eq!(read_committed(&p, &mut t1, x), Poll::Ready(Ok(0)));
    write(&p, &mut t1, y, 5);
    assert_eq!(
        read_committed(&p, &mut t1, y),
        Poll::Ready(Ok(5)),
        "own write"
    );
    write(&p, &mut t2, x, 100);
    assert_eq!(p.commit(&mut t2), Poll::Ready(Ok(())));
    // A serializable read of x would fail validation (see the test above); this one is not checked.
    assert_eq!(p.commit(&mut t1), Poll::Ready(Ok(())));
    assert_eq!(word(y), TsWord::installed_at(1));
}
