//! Aria step by step: two workers on one thread, one batch at a time.

use super::*;
use crate::ids::RecordId;
use crate::protocol::signal::Signal;
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
    aria_with(AriaOptions {
        reordering,
        fallback: false,
    })
}

fn aria_with(options: AriaOptions) -> Aria {
    Aria::new(
        &BatchOptions {
            size: 64,
            timeout_us: 1_000_000,
        },
        options,
    )
}

/// Aria with the fallback phase.
fn aria_fallback() -> Aria {
    aria_with(AriaOptions {
        reordering: false,
        fallback: true,
    })
}

fn stat(p: &Aria, name: &str) -> f64 {
    p.stats()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
        .expect("a reported statistic")
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

/// The fallback phase: a member that read what a lower rank wrote (read-after-write) stays in
/// the batch; its first run's abort is reported once the committer finished and its locks are
/// requested, and its retry, in the same batch, reads the committer's install and commits. The
/// next batch opens only then.
#[test]
fn a_read_after_write_commits_in_the_same_batch_through_the_fallback() {
    let t = table();
    let p = aria_fallback();
    let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
    start(&p, &mut [&mut a, &mut b]);
    write(&p, &mut a, rec(&t, 0), 7);
    assert_eq!(read(&p, &mut b, rec(&t, 0)), 0, "the snapshot");
    write(&p, &mut b, rec(&t, 1), 1);
    assert_eq!(p.commit(&mut a), Poll::Pending, "b has not executed");
    assert_eq!(p.commit(&mut b), Poll::Pending, "a has not installed yet");
    assert_eq!(p.commit(&mut a), OK);
    assert_eq!(
        p.commit(&mut b),
        Poll::Ready(Err(Abort::BatchReadAfterWrite))
    );
    assert_eq!(p.signal(Abort::BatchReadAfterWrite), Signal::Rr);
    p.abort(&mut b, Abort::BatchReadAfterWrite);
    assert_eq!(b.ticket.batch(), 1, "still a member");
    // a's next transaction waits: the batch is not over while b reruns.
    p.begin(&mut a, AttemptStart::FIRST);
    let mut out = [0u8; 8];
    assert_eq!(p.read(&mut a, rec(&t, 1), &mut out), Poll::Pending);
    p.begin(&mut b, AttemptStart::RETRY);
    assert_eq!(read(&p, &mut b, rec(&t, 0)), 7, "the batch's install");
    write(&p, &mut b, rec(&t, 1), 8);
    assert_eq!(p.commit(&mut b), OK);
    assert_eq!((value(&t, 0), value(&t, 1)), (7, 8));
    assert_eq!(stat(&p, "fallback_commits"), 1.0);
    assert_eq!(stat(&p, "fallback_aborts"), 0.0);
    assert_eq!(read(&p, &mut a, rec(&t, 1)), 8, "the next batch");
    assert_eq!(a.ticket.batch(), 2);
}

/// A fallback member's rerun that touches a record its first run did not (or writes one it
/// only read) aborts with a changed access set, leaves the batch (the next one opens) and
/// retries there (NB), as Aria without the fallback does.
#[test]
fn a_fallback_whose_access_set_changed_moves_to_the_next_batch() {
    // (record the rerun touches, whether it writes it): one never touched, one only read.
    for (touched, writes) in [(2, false), (0, true)] {
        let t = table();
        let p = aria_fallback();
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        start(&p, &mut [&mut a, &mut b]);
        write(&p, &mut a, rec(&t, 0), 7);
        assert_eq!(read(&p, &mut b, rec(&t, 0)), 0);
        write(&p, &mut b, rec(&t, 1), 1);
        assert_eq!(p.commit(&mut a), Poll::Pending);
        assert_eq!(p.commit(&mut b), Poll::Pending);
        assert_eq!(p.commit(&mut a), OK);
        assert_eq!(
            p.commit(&mut b),
            Poll::Ready(Err(Abort::BatchReadAfterWrite))
        );
        p.abort(&mut b, Abort::BatchReadAfterWrite);
        p.begin(&mut b, AttemptStart::RETRY);
        let mut out = [0u8; 8];
        let changed = if writes {
            p.write(&mut b, rec(&t, touched), &[9; 8], WriteKind::Blind)
        } else {
            p.read(&mut b, rec(&t, touched), &mut out)
        };
        assert_eq!(changed, Poll::Ready(Err(Abort::BatchAccessSetChanged)));
        assert_eq!(p.signal(Abort::BatchAccessSetChanged), Signal::Nb);
        p.abort(&mut b, Abort::BatchAccessSetChanged);
        assert_eq!(stat(&p, "fallback_aborts"), 1.0);
        assert_eq!(value(&t, touched), if touched == 0 { 7 } else { 0 });
        // The next batch: b retries there, ranked first.
        p.begin(&mut b, AttemptStart::RETRY);
        assert_eq!(read(&p, &mut b, rec(&t, 2)), 0);
        assert_eq!(b.ticket.batch(), 2);
        write(&p, &mut b, rec(&t, 0), 9);
        p.stop_worker(&mut a);
        assert_eq!(p.commit(&mut b), OK);
        assert_eq!(value(&t, 0), 9);
    }
}

/// Fallback members request their locks in rank order (the turn), and each record's locks are
/// granted in that order: the higher-ranked member waits for its turn even when it gets to
/// its commit first, and it starts its rerun only once every request is granted: after the
/// lower-ranked one committed the record both read-modify-write (record 1), whose install it
/// then reads (readers of record 0 share).
#[test]
fn fallback_locks_are_granted_in_rank_order() {
    let t = table();
    let p = aria_fallback();
    let (mut x, mut y, mut z) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
    start(&p, &mut [&mut x, &mut y, &mut z]);
    write(&p, &mut x, rec(&t, 0), 7);
    for w in [&mut y, &mut z] {
        assert_eq!(read(&p, w, rec(&t, 0)), 0);
        let v = read(&p, w, rec(&t, 1));
        write(&p, w, rec(&t, 1), v + 1);
    }
    assert!(x.ticket.rank() < y.ticket.rank() && y.ticket.rank() < z.ticket.rank());
    assert_eq!(p.commit(&mut x), Poll::Pending);
    assert_eq!(p.commit(&mut z), Poll::Pending);
    assert_eq!(p.commit(&mut y), Poll::Pending, "x has not installed");
    assert_eq!(p.commit(&mut x), OK);
    assert_eq!(p.commit(&mut z), Poll::Pending, "y requests first");
    assert_eq!(
        p.commit(&mut y),
        Poll::Ready(Err(Abort::BatchReadAfterWrite)),
        "y's requests are granted at once"
    );
    assert_eq!(
        p.commit(&mut z),
        Poll::Pending,
        "z's write request on record 1 waits for y's"
    );
    p.abort(&mut y, Abort::BatchReadAfterWrite);
    p.begin(&mut y, AttemptStart::RETRY);
    assert_eq!(read(&p, &mut y, rec(&t, 0)), 7);
    let v = read(&p, &mut y, rec(&t, 1));
    write(&p, &mut y, rec(&t, 1), v + 1);
    assert_eq!(p.commit(&mut z), Poll::Pending, "held until y commits");
    assert_eq!(p.commit(&mut y), OK);
    assert_eq!(
        p.commit(&mut z),
        Poll::Ready(Err(Abort::BatchWriteAfterWrite))
    );
    p.abort(&mut z, Abort::BatchWriteAfterWrite);
    p.begin(&mut z, AttemptStart::RETRY);
    assert_eq!(read(&p, &mut z, rec(&t, 0)), 7);
    let v = read(&p, &mut z, rec(&t, 1));
    assert_eq!(v, 1, "y's install");
    write(&p, &mut z, rec(&t, 1), v + 1);
    assert_eq!(p.commit(&mut z), OK);
    assert_eq!(value(&t, 1), 2, "no update lost");
    assert_eq!(stat(&p, "fallback_commits"), 2.0);
}

/// Three members: x writes record 0; y and z read it (read-after-write), so both fall back. y
/// (ranked before z) wrote record 1; z read record 2 and wrote record 3. Their lock sets share
/// only record 0, which both read, so both are granted everything at once and rerun side by
/// side. y's rerun then reads record 3 and writes record 2, neither of which its first run
/// touched. The real protocol aborts y at that read (changed access set). The mutant that
/// ignores the change lets y go on unlocked: y reads record 3 before z writes it, and z reads
/// record 2 before y installs it, so each is serialized before the other (a G2-item cycle), and
/// both commit.
#[test]
fn the_mutant_that_ignores_a_changed_access_set_admits_a_cycle() {
    for mutant in [Mutant::None, Mutant::AriaFallbackIgnoresChangedAccessSet] {
        let t = table();
        let p = aria_fallback().with_mutant(mutant);
        let (mut x, mut y, mut z) = (p.new_worker(0), p.new_worker(1), p.new_worker(2));
        start(&p, &mut [&mut x, &mut y, &mut z]);
        write(&p, &mut x, rec(&t, 0), 7);
        assert_eq!(read(&p, &mut y, rec(&t, 0)), 0);
        write(&p, &mut y, rec(&t, 1), 1);
        assert_eq!(read(&p, &mut z, rec(&t, 0)), 0);
        assert_eq!(read(&p, &mut z, rec(&t, 2)), 0);
        write(&p, &mut z, rec(&t, 3), 3);
        assert_eq!(p.commit(&mut x), Poll::Pending);
        assert_eq!(p.commit(&mut y), Poll::Pending);
        assert_eq!(p.commit(&mut z), Poll::Pending);
        assert_eq!(p.commit(&mut x), OK);
        for w in [&mut y, &mut z] {
            assert_eq!(p.commit(w), Poll::Ready(Err(Abort::BatchReadAfterWrite)));
        }
        for w in [&mut y, &mut z] {
            p.abort(w, Abort::BatchReadAfterWrite);
            p.begin(w, AttemptStart::RETRY);
        }
        assert_eq!(read(&p, &mut y, rec(&t, 0)), 7);
        write(&p, &mut y, rec(&t, 1), 1);
        let mut out = [0u8; 8];
        let changed = p.read(&mut y, rec(&t, 3), &mut out);
        if mutant == Mutant::None {
            assert_eq!(changed, Poll::Ready(Err(Abort::BatchAccessSetChanged)));
            p.abort(&mut y, Abort::BatchAccessSetChanged);
            assert_eq!(read(&p, &mut z, rec(&t, 0)), 7);
            assert_eq!(read(&p, &mut z, rec(&t, 2)), 0);
            write(&p, &mut z, rec(&t, 3), 3);
            assert_eq!(p.commit(&mut z), OK);
            assert_eq!(value(&t, 2), 0, "y did not commit: no cycle");
            continue;
        }
        assert_eq!(changed, OK, "the mutant reads outside its locks");
        let y_read = u64::from_le_bytes(out);
        write(&p, &mut y, rec(&t, 2), 5);
        assert_eq!(read(&p, &mut z, rec(&t, 0)), 7);
        let z_read = read(&p, &mut z, rec(&t, 2));
        write(&p, &mut z, rec(&t, 3), 3);
        assert_eq!(p.commit(&mut y), OK);
        assert_eq!(p.commit(&mut z), OK);
        assert_eq!(value(&t, 2), 5, "y committed its write of record 2");
        assert_eq!(value(&t, 3), 3, "z committed its write of record 3");
        assert_eq!(
            (y_read, z_read),
            (0, 0),
            "each read what the other overwrote: a cycle"
        );
    }
}
