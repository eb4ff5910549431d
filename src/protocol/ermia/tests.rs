//! ERMIA's own tests: SSN excludes write skew that SI lets through, and waits for an earlier
//! committer whose outcome it needs.

use super::*;
use crate::storage::{RecordId, Table, TableSpec};

fn setup(mutant: Mutant) -> (Ermia, Table<ErmiaMeta>) {
    let mut opts = ProtocolOptions {
        threads: 3,
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
