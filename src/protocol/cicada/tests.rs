//! Cicada's own tests: reads at the transaction's timestamp, timestamp order at commit, CCBench's
//! validation fix, and each switch's observable effect.

use super::*;
use crate::storage::{RecordId, Table, TableSpec};

fn options(f: impl FnOnce(&mut CicadaOptions)) -> ProtocolOptions {
    let mut opts = ProtocolOptions {
        threads: 3,
        ..Default::default()
    };
    opts.mv.gc_interval_us = 0;
    f(&mut opts.cicada);
    opts
}

fn table() -> Table<CicadaMeta> {
    Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    })
}

fn ready(r: OpResult) -> Result<(), Abort> {
    match r {
        Poll::Ready(r) => r,
        Poll::Pending => panic!("unexpected Pending"),
    }
}

fn read<'db>(c: &Cicada, w: &mut CicadaWorker<'db>, rec: Record<'db, CicadaMeta>) -> u64 {
    let mut out = [0u8; 8];
    ready(c.read(w, rec, &mut out)).unwrap();
    u64::from_le_bytes(out)
}

fn write<'db>(
    c: &Cicada,
    w: &mut CicadaWorker<'db>,
    rec: Record<'db, CicadaMeta>,
    v: u64,
) -> OpResult {
    c.write(w, rec, &v.to_le_bytes(), WriteKind::Blind)
}

/// The snapshot-read test (as SI's and MVTO's): an older transaction reads the version before a
/// younger one's committed write; a protocol that reads the newest version fails it.
fn older_reader_value(c: &Cicada, t: &Table<CicadaMeta>) -> u64 {
    let x = t.get(RecordId(0)).unwrap();
    let mut old = c.new_worker(0);
    let mut young = c.new_worker(1);
    c.begin(&mut old, AttemptStart::FIRST);
    c.begin(&mut young, AttemptStart::FIRST);
    ready(write(c, &mut young, x, 7)).unwrap();
    ready(c.commit(&mut young)).unwrap();
    let seen = read(c, &mut old, x);
    match ready(c.commit(&mut old)) {
        Ok(()) => {}
        Err(why) => c.abort(&mut old, why),
    }
    seen
}

#[test]
fn an_older_reader_sees_the_version_before_a_younger_write() {
    for inlining in [true, false] {
        let c = Cicada::new(&options(|o| o.inlining = inlining));
        let t = table();
        assert_eq!(older_reader_value(&c, &t), 0, "inlining {inlining}");
        // Twice more, so the older reader walks a chain of several versions.
        assert_eq!(older_reader_value(&c, &t), 7, "inlining {inlining}");
        assert_eq!(older_reader_value(&c, &t), 7, "inlining {inlining}");
    }
    let c = Cicada::new(&options(|_| {})).with_mutant(Mutant::CicadaReadNewest);
    assert_eq!(older_reader_value(&c, &table()), 7);
}

#[test]
fn a_younger_read_stops_an_older_write() {
    let run = |c: &Cicada| {
        let t = table();
        let x = t.get(RecordId(0)).unwrap();
        let mut old = c.new_worker(0);
        let mut young = c.new_worker(1);
        c.begin(&mut old, AttemptStart::FIRST);
        c.begin(&mut young, AttemptStart::FIRST);
        read(c, &mut young, x);
        ready(c.commit(&mut young)).unwrap();
        let r = ready(write(c, &mut old, x, 1)).and_then(|()| ready(c.commit(&mut old)));
        if let Err(why) = r {
            c.abort(&mut old, why);
        }
        r
    };
    // EarlyAbort catches it at the write; without it (and without the precheck) commit does.
    let c = Cicada::new(&options(|_| {}));
    assert_eq!(run(&c), Err(Abort::TimestampOrder));
    let c = Cicada::new(&options(|o| {
        o.early_abort = false;
        o.precheck = false;
    }));
    assert_eq!(run(&c), Err(Abort::TimestampOrder));
    let c = Cicada::new(&options(|o| {
        o.early_abort = false;
        o.precheck = false;
    }))
    .with_mutant(Mutant::CicadaSkipReadTimestamp);
    assert_eq!(
        run(&c),
        Ok(()),
        "without the rts raise the older write gets in"
    );
}

/// CCBench's fix: a read whose version was replaced by one still older than the reader must
/// fail validation, even though every timestamp involved is in order.
#[test]
fn a_read_overtaken_by_an_older_committed_write_fails_validation() {
    let run = |c: &Cicada| {
        let t = table();
        let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
        let mut mid = c.new_worker(0);
        let mut reader = c.new_worker(1);
        c.begin(&mut mid, AttemptStart::FIRST);
        c.begin(&mut reader, AttemptStart::FIRST);
        // The reader (younger) reads x before the older writer installs a new version of it.
        read(c, &mut reader, x);
        ready(write(c, &mut mid, x, 5)).unwrap();
        ready(c.commit(&mut mid)).unwrap();
        ready(write(c, &mut reader, y, 1)).unwrap();
        let r = ready(c.commit(&mut reader));
        if let Err(why) = r {
            c.abort(&mut reader, why);
        }
        r
    };
    for precheck in [true, false] {
        let c = Cicada::new(&options(|o| o.precheck = precheck));
        assert_eq!(run(&c), Err(Abort::ReadValidation), "precheck {precheck}");
    }
    let c =
        Cicada::new(&options(|o| o.precheck = false)).with_mutant(Mutant::CicadaSkipReadValidation);
    assert_eq!(run(&c), Ok(()));
}

#[test]
fn inlining_off_keeps_every_version_in_the_chain() {
    // The same three writes with inlining on and off: off, the chain holds the newest version
    // too, so at least one node stays, and reads find it there; on, the deferred collection
    // (RapidGC's queue) may already have emptied it.
    let live = |inlining: bool| {
        let c = Cicada::new(&options(|o| o.inlining = inlining));
        let t = table();
        let x = t.get(RecordId(0)).unwrap();
        let mut w = c.new_worker(0);
        for v in 1..=3 {
            c.begin(&mut w, AttemptStart::FIRST);
            ready(write(&c, &mut w, x, v)).unwrap();
            ready(c.commit(&mut w)).unwrap();
        }
        c.begin(&mut w, AttemptStart::FIRST);
        assert_eq!(read(&c, &mut w, x), 3);
        ready(c.commit(&mut w)).unwrap();
        c.version_stats().live_versions
    };
    let (off, on) = (live(false), live(true));
    assert!(off >= 1 && off > on, "inlining off {off} versions, on {on}");
}

#[test]
fn sorting_by_contention_locks_the_most_recently_written_record_first() {
    let c = Cicada::new(&options(|o| o.precheck = false));
    let t = table();
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut w = c.new_worker(0);
    c.begin(&mut w, AttemptStart::FIRST);
    ready(write(&c, &mut w, y, 1)).unwrap();
    ready(c.commit(&mut w)).unwrap();
    // y is now the more recently written record: a transaction writing x and y locks y first.
    c.begin(&mut w, AttemptStart::FIRST);
    ready(write(&c, &mut w, x, 2)).unwrap();
    ready(write(&c, &mut w, y, 2)).unwrap();
    c.prepare(&mut w).unwrap();
    assert_eq!(w.writes.entries()[0].rec.rid, RecordId(1));
    c.abort(&mut w, Abort::User);
    let c = Cicada::new(&options(|o| o.sort_by_contention = false));
    let t = table();
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut w = c.new_worker(0);
    c.begin(&mut w, AttemptStart::FIRST);
    ready(write(&c, &mut w, y, 1)).unwrap();
    ready(c.commit(&mut w)).unwrap();
    c.begin(&mut w, AttemptStart::FIRST);
    ready(write(&c, &mut w, y, 3)).unwrap();
    ready(write(&c, &mut w, x, 3)).unwrap();
    c.prepare(&mut w).unwrap();
    assert_eq!(w.writes.entries()[0].rec.rid, RecordId(0), "record order");
    c.abort(&mut w, Abort::User);
}

#[test]
fn backoff_follows_the_switch() {
    // Through the constant the executors read (a hook outside it would never run).
    let backoff = |c: &Cicada| Cicada::RUN_HOOKS.adaptive_backoff(c);
    assert!(backoff(&Cicada::new(&options(|_| {}))));
    assert!(!backoff(&Cicada::new(&options(|o| o.backoff = false))));
}

/// The adaptive skip: after five commits in a row a worker omits the precheck and the sort;
/// an abort turns them back on.
#[test]
fn five_commits_in_a_row_skip_the_precheck_and_the_sort() {
    // Returns what the precheck said about an older write to a record a younger transaction
    // read, and which record the write set would lock first, after `commits` commits in a row.
    let run = |c: &Cicada, commits: usize| {
        let t = table();
        let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
        let mut w = c.new_worker(0);
        let mut young = c.new_worker(1);
        for v in 0..commits {
            c.begin(&mut w, AttemptStart::FIRST);
            ready(write(c, &mut w, y, v as u64)).unwrap();
            ready(c.commit(&mut w)).unwrap();
        }
        c.begin(&mut w, AttemptStart::FIRST);
        c.begin(&mut young, AttemptStart::FIRST);
        read(c, &mut young, x);
        ready(c.commit(&mut young)).unwrap();
        // y is the more recently written record (the sort puts it first); x was read by a
        // younger transaction (the precheck fails the write).
        ready(write(c, &mut w, x, 9)).unwrap();
        ready(write(c, &mut w, y, 9)).unwrap();
        let checked = c.prepare(&mut w);
        let first = w.writes.entries()[0].rec.rid;
        c.abort(&mut w, Abort::User);
        // After the abort the next attempt sorts again: y (written last) before z.
        let z = t.get(RecordId(2)).unwrap();
        c.begin(&mut w, AttemptStart::FIRST);
        ready(write(c, &mut w, z, 9)).unwrap();
        ready(write(c, &mut w, y, 9)).unwrap();
        c.prepare(&mut w).unwrap();
        let first_after_abort = w.writes.entries()[0].rec.rid;
        c.abort(&mut w, Abort::User);
        (checked, first, first_after_abort)
    };
    let opts = |skip: bool| {
        options(|o| {
            o.early_abort = false;
            o.adaptive_skip = skip;
        })
    };
    // A failed precheck returns before the sort: the write set stays in program order.
    let checked = (Err(Abort::TimestampOrder), RecordId(0), RecordId(1));
    let c = Cicada::new(&opts(true));
    assert_eq!(run(&c, CICADA_CONTINUING_COMMITS as usize - 1), checked);
    assert_eq!(
        run(&c, CICADA_CONTINUING_COMMITS as usize),
        (Ok(()), RecordId(0), RecordId(1)),
        "five commits in a row skip both steps, the abort brings them back"
    );
    let c = Cicada::new(&opts(false));
    assert_eq!(run(&c, CICADA_CONTINUING_COMMITS as usize), checked);
}
