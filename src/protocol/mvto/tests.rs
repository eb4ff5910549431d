//! MVTO's own tests: timestamp order at commit, snapshot reads at the transaction's timestamp.

use super::*;
use crate::storage::{RecordId, Table, TableSpec};

fn setup(mutant: Mutant) -> (Mvto, Table<MvtoMeta>) {
    let mut opts = ProtocolOptions {
        threads: 2,
        ..Default::default()
    };
    opts.mv.gc_interval_us = 0;
    let t = Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    });
    (Mvto::new(&opts).with_mutant(mutant), t)
}

fn ready(r: OpResult) -> Result<(), Abort> {
    match r {
        Poll::Ready(r) => r,
        Poll::Pending => panic!("unexpected Pending"),
    }
}

/// An older transaction may not overwrite a version a younger one read.
fn older_writer_after_younger_reader(m: &Mvto, t: &Table<MvtoMeta>) -> Result<(), Abort> {
    let x = t.get(RecordId(0)).unwrap();
    let mut old = m.new_worker(0);
    let mut young = m.new_worker(1);
    m.begin(&mut old, AttemptStart::FIRST);
    m.begin(&mut young, AttemptStart::FIRST);
    let mut out = [0u8; 8];
    ready(m.read(&mut young, x, &mut out)).unwrap();
    ready(m.commit(&mut young)).unwrap();
    ready(m.write(&mut old, x, &1u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(m.commit(&mut old))
}

#[test]
fn a_younger_read_stops_an_older_write() {
    let (m, t) = setup(Mutant::None);
    assert_eq!(
        older_writer_after_younger_reader(&m, &t),
        Err(Abort::TimestampOrder)
    );
    for mutant in [Mutant::MvtoSkipReadTimestamp, Mutant::MvtoSkipWriteCheck] {
        let (m, t) = setup(mutant);
        assert_eq!(
            older_writer_after_younger_reader(&m, &t),
            Ok(()),
            "{mutant:?}"
        );
    }
}

#[test]
fn an_older_reader_sees_the_version_before_a_younger_write() {
    let (m, t) = setup(Mutant::None);
    let x = t.get(RecordId(0)).unwrap();
    let mut old = m.new_worker(0);
    let mut young = m.new_worker(1);
    m.begin(&mut old, AttemptStart::FIRST);
    m.begin(&mut young, AttemptStart::FIRST);
    ready(m.write(&mut young, x, &7u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(m.commit(&mut young)).unwrap();
    let mut out = [0u8; 8];
    ready(m.read(&mut old, x, &mut out)).unwrap();
    assert_eq!(u64::from_le_bytes(out), 0);
    ready(m.commit(&mut old)).unwrap();
    // The older transaction may not write it now: the newest version is younger.
    m.begin(&mut old, AttemptStart::FIRST);
    m.begin(&mut young, AttemptStart::FIRST);
    ready(m.write(&mut young, x, &8u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(m.commit(&mut young)).unwrap();
    ready(m.write(&mut old, x, &9u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    assert_eq!(ready(m.commit(&mut old)), Err(Abort::TimestampOrder));
    m.abort(&mut old, Abort::TimestampOrder);
}

#[test]
fn aggressive_gc_aborts_a_reader_whose_version_is_gone() {
    let mut opts = ProtocolOptions {
        threads: 2,
        ..Default::default()
    };
    opts.mv.aggressive_gc = true;
    let m = Mvto::new(&opts);
    let t: Table<MvtoMeta> = Table::new(TableSpec {
        name: "t".into(),
        records: 1,
        payload_bytes: 8,
    });
    let x = t.get(RecordId(0)).unwrap();
    let mut old = m.new_worker(0);
    let mut young = m.new_worker(1);
    m.begin(&mut old, AttemptStart::FIRST);
    let mut out = [0u8; 8];
    // One write: the reader's version is the one older version kept.
    m.begin(&mut young, AttemptStart::FIRST);
    ready(m.write(&mut young, x, &1u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(m.commit(&mut young)).unwrap();
    ready(m.read(&mut old, x, &mut out)).unwrap();
    assert_eq!(u64::from_le_bytes(out), 0);
    // A second write frees it although the reader is still active.
    m.begin(&mut young, AttemptStart::FIRST);
    ready(m.write(&mut young, x, &2u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(m.commit(&mut young)).unwrap();
    assert_eq!(
        ready(m.read(&mut old, x, &mut out)),
        Err(Abort::VersionCollected)
    );
    m.abort(&mut old, Abort::VersionCollected);
    assert_eq!(m.version_stats().live_versions, 1);
}

/// A long reader under AggressiveGC: each of its attempts reads `x`, then `y` after two writes
/// to `y`. Returns after how many attempts it committed (`None`: not within `tries`).
fn long_reader_attempts(m: &Mvto, tries: usize) -> Option<usize> {
    let t: Table<MvtoMeta> = Table::new(TableSpec {
        name: "t".into(),
        records: 2,
        payload_bytes: 8,
    });
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut reader = m.new_worker(0);
    let mut writer = m.new_worker(1);
    let mut out = [0u8; 8];
    for attempt in 1..=tries {
        let start = if attempt == 1 {
            AttemptStart::FIRST
        } else {
            AttemptStart::RETRY
        };
        m.begin(&mut reader, start);
        ready(m.read(&mut reader, x, &mut out)).unwrap();
        // While the reader runs, `y` is written twice: AggressiveGC keeps one older version.
        for v in 0..2u64 {
            m.begin(&mut writer, AttemptStart::FIRST);
            ready(m.write(
                &mut writer,
                y,
                &(attempt as u64 * 10 + v).to_le_bytes(),
                WriteKind::Blind,
            ))
            .unwrap();
            ready(m.commit(&mut writer)).unwrap();
        }
        match ready(m.read(&mut reader, y, &mut out)) {
            Ok(()) => {
                ready(m.commit(&mut reader)).unwrap();
                return Some(attempt);
            }
            Err(why) => {
                assert_eq!(why, Abort::VersionCollected);
                m.abort(&mut reader, why);
            }
        }
    }
    None
}

#[test]
fn a_long_reader_eventually_commits_under_aggressive_gc() {
    let mut opts = ProtocolOptions {
        threads: 2,
        ..Default::default()
    };
    opts.mv.aggressive_gc = true;
    // The first attempt loses `y`; the retry holds the protection and commits.
    assert_eq!(long_reader_attempts(&Mvto::new(&opts), 10), Some(2));
    // Without the priority it starves: every attempt loses `y` the same way.
    let m = Mvto::new(&opts).with_mutant(Mutant::MvtoNoStarvationPriority);
    assert_eq!(long_reader_attempts(&m, 10), None);
    // The protection was given back: the next installs collect aggressively again.
    let m = Mvto::new(&opts);
    assert_eq!(long_reader_attempts(&m, 10), Some(2));
    assert_eq!(m.protected_priority.load(Ordering::Relaxed), 0);
}

/// Under starvation protection, AggressiveGC keeps the newest older version and the one the
/// protected snapshot sees, and collects the versions between them (CCBench 7.3's non-contiguous
/// scheme); the contiguous variant keeps every version above the protected snapshot. Either way
/// the protected reader reads its version. Returns the live versions while it is protected
/// and the value it read.
fn protected_reader(contiguous: bool) -> (i64, u64) {
    let mut opts = ProtocolOptions {
        threads: 2,
        ..Default::default()
    };
    opts.mv.aggressive_gc = true;
    opts.mv.aggressive_contiguous = contiguous;
    let m = Mvto::new(&opts);
    let t: Table<MvtoMeta> = Table::new(TableSpec {
        name: "t".into(),
        records: 1,
        payload_bytes: 8,
    });
    let y = t.get(RecordId(0)).unwrap();
    let (mut reader, mut writer) = (m.new_worker(0), m.new_worker(1));
    let mut out = [0u8; 8];
    let mut write = |m: &Mvto, v: u64| {
        m.begin(&mut writer, AttemptStart::FIRST);
        ready(m.write(&mut writer, y, &v.to_le_bytes(), WriteKind::Blind)).unwrap();
        ready(m.commit(&mut writer)).unwrap();
    };
    // The first attempt loses its version of y and starves.
    m.begin(&mut reader, AttemptStart::FIRST);
    write(&m, 1);
    write(&m, 2);
    assert_eq!(
        ready(m.read(&mut reader, y, &mut out)),
        Err(Abort::VersionCollected)
    );
    m.abort(&mut reader, Abort::VersionCollected);
    // The retry holds the protection; y is written five more times under it.
    m.begin(&mut reader, AttemptStart::RETRY);
    for v in 3..=7 {
        write(&m, v);
    }
    let live = m.version_stats().live_versions;
    ready(m.read(&mut reader, y, &mut out)).unwrap();
    ready(m.commit(&mut reader)).unwrap();
    (live, u64::from_le_bytes(out))
}

#[test]
fn protected_versions_need_not_be_contiguous() {
    let (live, seen) = protected_reader(false);
    assert_eq!(seen, 2, "the version at the protected snapshot");
    assert_eq!(live, 2, "the newest older version and the protected one");
    let (live, seen) = protected_reader(true);
    assert_eq!(seen, 2);
    assert!(
        live >= 5,
        "contiguous: every version above the snapshot, {live}"
    );
}
