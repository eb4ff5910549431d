//! ERMIA's own tests: SSN excludes write skew that SI lets through, and waits for an earlier
//! committer whose outcome it needs.

use super::*;
use crate::storage::{RecordId, Table, TableSpec};

fn setup(mutant: Mutant) -> (Ermia, Table<ErmiaMeta>) {
    setup_with(mutant, ErmiaOptions::default())
}

fn setup_with(mutant: Mutant, ermia: ErmiaOptions) -> (Ermia, Table<ErmiaMeta>) {
    let mut opts = ProtocolOptions {
        threads: 4,
        ermia,
        ..Default::default()
    };
    opts.mv.gc_interval_us = 0;
    let t = Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    });
    (Ermia::new(&opts).unwrap().with_mutant(mutant), t)
}

fn ready(r: OpResult) -> Result<(), Abort> {
    match r {
        Poll::Ready(r) => r,
        Poll::Pending => panic!("unexpected Pending"),
    }
}

/// Both read x and y; a writes x, b writes y; a commits first. Returns b's outcome.
fn write_skew(e: &Ermia, t: &Table<ErmiaMeta>) -> Result<(), Abort> {
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut a = e.new_worker(0);
    let mut b = e.new_worker(1);
    let mut out = [0u8; 8];
    for w in [&mut a, &mut b] {
        e.begin(w, AttemptStart::FIRST);
        ready(e.read(w, x, &mut out)).unwrap();
        ready(e.read(w, y, &mut out)).unwrap();
    }
    ready(e.write(&mut a, x, &1u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(e.write(&mut b, y, &1u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(e.commit(&mut a)).unwrap();
    let r = ready(e.commit(&mut b));
    if let Err(why) = r {
        e.abort(&mut b, why);
    }
    r
}

#[test]
fn the_exclusion_window_stops_write_skew() {
    let (e, t) = setup(Mutant::None);
    assert_eq!(write_skew(&e, &t), Err(Abort::SsnExclusion));
    // Every mutant lets it through.
    for m in [
        Mutant::ErmiaSkipExclusionCheck,
        Mutant::ErmiaIgnoreOverwriters,
        Mutant::ErmiaIgnoreReaders,
    ] {
        let (e, t) = setup(m);
        assert_eq!(write_skew(&e, &t), Ok(()), "{m:?}");
    }
}

#[test]
fn disjoint_transactions_commit_and_snapshots_hold() {
    let (e, t) = setup(Mutant::None);
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut a = e.new_worker(0);
    let mut r = e.new_worker(1);
    e.begin(&mut r, AttemptStart::FIRST);
    for v in 1..=3u64 {
        e.begin(&mut a, AttemptStart::FIRST);
        ready(e.write(&mut a, x, &v.to_le_bytes(), WriteKind::Blind)).unwrap();
        ready(e.commit(&mut a)).unwrap();
    }
    let mut out = [0u8; 8];
    ready(e.read(&mut r, x, &mut out)).unwrap();
    assert_eq!(u64::from_le_bytes(out), 0, "the snapshot's version");
    ready(e.read(&mut r, y, &mut out)).unwrap();
    // A read-only transaction reading an overwritten version commits: nothing follows it.
    ready(e.commit(&mut r)).unwrap();
}

/// A committer that finds a reader committing with a smaller stamp waits for its outcome.
#[test]
fn an_overwriter_waits_for_an_earlier_committing_reader() {
    let (e, t) = setup(Mutant::None);
    let x = t.get(RecordId(0)).unwrap();
    let mut r = e.new_worker(0);
    let mut u = e.new_worker(1);
    let mut out = [0u8; 8];
    e.begin(&mut r, AttemptStart::FIRST);
    ready(e.read(&mut r, x, &mut out)).unwrap();
    // The reader is about to draw its stamp.
    e.table.committing(r.id, 0);
    e.begin(&mut u, AttemptStart::FIRST);
    ready(e.write(&mut u, x, &5u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    assert!(e.commit(&mut u).is_pending());
    // The reader draws a stamp after the overwriter's and finds the overwriter's marker: it
    // waits in turn, for an overwriter that no longer waits for it.
    assert!(e.commit(&mut r).is_pending());
    ready(e.commit(&mut u)).unwrap();
    // Now the reader sees the installed version's stamps: `π(r) = π(u) = c(u) > η(r) = 0`.
    ready(e.commit(&mut r)).unwrap();
}

fn put<'db>(
    e: &Ermia,
    w: &mut ErmiaWorker<'db, 1>,
    rec: Record<'db, ErmiaMeta>,
    v: u64,
) -> OpResult {
    e.write(w, rec, &v.to_le_bytes(), WriteKind::Blind)
}

/// A dependency cycle the read phase can already see: `u` read y before `v` overwrote it
/// (so `π(u) = c(v)`), `t` reads `v`'s y (`η(t) >= c(v)`) and then the x that `u` overwrote
/// (`π(t) <= π(u)`). With the early check the read of x aborts; without it, commit does.
/// Returns the outcome of t's read of x and of t's commit.
fn cycle_seen_while_reading(
    e: &Ermia,
    t: &Table<ErmiaMeta>,
) -> (Result<(), Abort>, Result<(), Abort>) {
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let (mut u, mut v, mut r) = (e.new_worker(0), e.new_worker(1), e.new_worker(2));
    let mut out = [0u8; 8];
    e.begin(&mut u, AttemptStart::FIRST);
    ready(e.read(&mut u, y, &mut out)).unwrap();
    e.begin(&mut v, AttemptStart::FIRST);
    ready(put(e, &mut v, y, 1)).unwrap();
    ready(e.commit(&mut v)).unwrap();
    e.begin(&mut r, AttemptStart::FIRST);
    ready(e.read(&mut r, y, &mut out)).unwrap();
    assert_eq!(u64::from_le_bytes(out), 1, "r sees v's y");
    ready(put(e, &mut u, x, 2)).unwrap();
    ready(e.commit(&mut u)).unwrap();
    let read = ready(e.read(&mut r, x, &mut out));
    let commit = match read {
        Ok(()) => ready(e.commit(&mut r)),
        Err(why) => Err(why),
    };
    if let Err(why) = commit {
        e.abort(&mut r, why);
    }
    (read, commit)
}

/// What `scenario` returns on a fresh table with the early exclusion check on, then off.
fn early_check_on_and_off<R>(scenario: fn(&Ermia, &Table<ErmiaMeta>) -> R) -> [R; 2] {
    let (e, t) = setup(Mutant::None);
    let on = scenario(&e, &t);
    let off = ErmiaOptions {
        early_exclusion: false,
        ..ErmiaOptions::default()
    };
    let (e, t) = setup_with(Mutant::None, off);
    [on, scenario(&e, &t)]
}

#[test]
fn the_early_check_aborts_at_the_read_that_closes_a_cycle() {
    let [on, off] = early_check_on_and_off(cycle_seen_while_reading);
    assert_eq!(on, (Err(Abort::SsnExclusion), Err(Abort::SsnExclusion)));
    assert_eq!(
        off,
        (Ok(()), Err(Abort::SsnExclusion)),
        "without the early check the commit catches it"
    );
}

/// `t` read x, whose version was overwritten by `u` (`π(t) <= c(u)`), and then writes z, which a
/// reader that committed after `u` read (`η(t) >= c(r) > c(u)`): the window is closed at the
/// write with the early check, at commit without. Returns the write's and the commit's outcome.
fn window_closed_by_a_write(
    e: &Ermia,
    t: &Table<ErmiaMeta>,
) -> (Result<(), Abort>, Result<(), Abort>) {
    let (x, z) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(2)).unwrap());
    let (mut tx, mut u, mut r) = (e.new_worker(0), e.new_worker(1), e.new_worker(2));
    let mut out = [0u8; 8];
    e.begin(&mut tx, AttemptStart::FIRST);
    e.begin(&mut u, AttemptStart::FIRST);
    ready(put(e, &mut u, x, 1)).unwrap();
    ready(e.commit(&mut u)).unwrap();
    ready(e.read(&mut tx, x, &mut out)).unwrap();
    e.begin(&mut r, AttemptStart::FIRST);
    ready(e.read(&mut r, z, &mut out)).unwrap();
    ready(e.commit(&mut r)).unwrap();
    let write = ready(put(e, &mut tx, z, 3));
    let commit = match write {
        Ok(()) => ready(e.commit(&mut tx)),
        Err(why) => Err(why),
    };
    if let Err(why) = commit {
        e.abort(&mut tx, why);
    }
    (write, commit)
}

#[test]
fn the_early_check_aborts_at_the_write_that_closes_the_window() {
    let [on, off] = early_check_on_and_off(window_closed_by_a_write);
    assert_eq!(on, (Err(Abort::SsnExclusion), Err(Abort::SsnExclusion)));
    assert_eq!(off, (Ok(()), Err(Abort::SsnExclusion)));
}

#[test]
fn a_read_the_transaction_overwrites_leaves_the_read_set() {
    for prune in [true, false] {
        let (e, t) = setup_with(
            Mutant::None,
            ErmiaOptions {
                prune_overwritten_reads: prune,
                ..ErmiaOptions::default()
            },
        );
        let x = t.get(RecordId(0)).unwrap();
        let mut w = e.new_worker(0);
        let mut out = [0u8; 8];
        e.begin(&mut w, AttemptStart::FIRST);
        ready(e.read(&mut w, x, &mut out)).unwrap();
        ready(put(&e, &mut w, x, 1)).unwrap();
        let registered = x.meta().readers.contains(w.id, Ordering::SeqCst);
        assert_eq!(registered, !prune, "prune {prune}");
        assert_eq!(*w.reads.find(&x).unwrap() == PRUNED, prune, "prune {prune}");
        ready(e.commit(&mut w)).unwrap();
        assert!(!x.meta().readers.contains(w.id, Ordering::SeqCst));
        e.begin(&mut w, AttemptStart::FIRST);
        ready(e.read(&mut w, x, &mut out)).unwrap();
        assert_eq!(u64::from_le_bytes(out), 1);
        ready(e.commit(&mut w)).unwrap();
    }
}

/// Readers skipping in-flight versions: a held, marked record is read (its committed version)
/// while the holder is active or has drawn a stamp above the reader's snapshot; waited for
/// while the holder's stamp is unknown or inside the snapshot, and always with the option off.
#[test]
fn a_skipping_reader_waits_only_for_a_holder_that_may_commit_into_its_snapshot() {
    for skip in [true, false] {
        let mut opts = ProtocolOptions {
            threads: 3,
            ..Default::default()
        };
        opts.mv.gc_interval_us = 0;
        opts.mv.skip_in_flight = skip;
        let e = Ermia::new(&opts).unwrap();
        let t = Table::new(TableSpec {
            name: "t".into(),
            records: 4,
            payload_bytes: 8,
        });
        let x = t.get(RecordId(0)).unwrap();
        let mut w = e.new_worker(2);
        e.begin(&mut w, AttemptStart::FIRST);
        ready(put(&e, &mut w, x, 7)).unwrap();
        ready(e.commit(&mut w)).unwrap();
        let mut reader = e.new_worker(0);
        e.begin(&mut reader, AttemptStart::FIRST);
        let snapshot = reader.snapshot;
        // The holder (worker 1) locked and marked x, as its commit does before its stamp.
        let serial = e.table.begin(1);
        let meta = x.meta();
        let word = meta.word.load(Ordering::SeqCst);
        meta.word.store(word | LOCK, Ordering::SeqCst);
        meta.sstamp
            .store(Marker::new(1, serial).0, Ordering::SeqCst);
        let mut out = [0u8; 8];
        let mut read = |stamp: Option<u64>| {
            if let Some(s) = stamp {
                e.table.committing(1, s);
            }
            e.read(&mut reader, x, &mut out)
                .map(|r| r.map(|()| u64::from_le_bytes(out)))
        };
        let skipped = |r: Poll<Result<u64, Abort>>| r == Poll::Ready(Ok(7));
        assert_eq!(skipped(read(None)), skip, "active holder, skip {skip}");
        assert!(read(Some(0)).is_pending(), "stamp not drawn, skip {skip}");
        assert!(read(Some(snapshot)).is_pending(), "stamp in the snapshot");
        assert_eq!(
            skipped(read(Some(snapshot + 1))),
            skip,
            "stamp above, skip {skip}"
        );
        meta.sstamp.store(0, Ordering::SeqCst);
        meta.word.store(word, Ordering::SeqCst);
    }
}
