//! SI's own tests: snapshot reads, first committer wins, and that write skew is allowed.

use super::*;
use crate::protocol::AttemptStart;
use crate::storage::{RecordId, Table, TableSpec};

/// Locks `meta`'s record word as a committer would, returning the word it replaced.
fn hold(meta: &SiMeta) -> u64 {
    let seen = meta.word.load(Ordering::SeqCst);
    assert_eq!(seen & LOCK, 0, "unlocked");
    meta.word.store(seen | LOCK, Ordering::SeqCst);
    seen
}

fn setup() -> (Si, Table<SiMeta>) {
    let mut opts = ProtocolOptions {
        threads: 2,
        ..Default::default()
    };
    // Refresh the watermark at every begin, so collection is deterministic.
    opts.mv.gc_interval_us = 0;
    let t = Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    });
    (Si::new(&opts), t)
}

fn ready(r: OpResult) -> Result<(), Abort> {
    match r {
        Poll::Ready(r) => r,
        Poll::Pending => panic!("unexpected Pending"),
    }
}

/// Commits a blind write of `value` to `rec` by worker `w`.
fn commit_write<'db>(
    si: &Si,
    w: &mut SiWorker<'db>,
    rec: Record<'db, SiMeta>,
    value: u64,
) -> Result<(), Abort> {
    si.begin(w, AttemptStart::FIRST);
    ready(si.write(w, rec, &value.to_le_bytes(), WriteKind::Blind))?;
    ready(si.commit(w))
}

/// A reader begins; a writer then commits a new version of `x`; the reader reads `x`. Returns
/// the value the reader saw (the loaded one, 0, under snapshot isolation).
fn read_after_a_later_commit(si: &Si, t: &Table<SiMeta>) -> u64 {
    let x = t.get(RecordId(0)).unwrap();
    let mut reader = si.new_worker(0);
    let mut writer = si.new_worker(1);
    commit_write(si, &mut writer, x, 1).unwrap();
    si.begin(&mut reader, AttemptStart::FIRST);
    commit_write(si, &mut writer, x, 2).unwrap();
    commit_write(si, &mut writer, x, 3).unwrap();
    let mut out = [0u8; 8];
    ready(si.read(&mut reader, x, &mut out)).unwrap();
    ready(si.commit(&mut reader)).unwrap();
    u64::from_le_bytes(out)
}

#[test]
fn a_snapshot_read_returns_the_version_older_than_a_later_commit() {
    let (si, t) = setup();
    assert_eq!(
        read_after_a_later_commit(&si, &t),
        1,
        "the version at the snapshot"
    );
    // After the reader left, the newest version is visible and the old ones can go.
    let x = t.get(RecordId(0)).unwrap();
    let mut w = si.new_worker(0);
    si.begin(&mut w, AttemptStart::FIRST);
    let mut out = [0u8; 8];
    ready(si.read(&mut w, x, &mut out)).unwrap();
    assert_eq!(u64::from_le_bytes(out), 3);
}

/// The same test fails for a protocol that always reads the newest version.
#[test]
fn reading_the_newest_version_fails_the_snapshot_test() {
    let (si, t) = setup();
    let si = si.with_mutant(Mutant::SiReadNewest);
    assert_eq!(read_after_a_later_commit(&si, &t), 3);
}

/// Whether the reader of [`read_after_a_later_commit`] gets the version at its snapshot; a
/// version collected under it makes the read panic ("no version"), which counts as not.
fn snapshot_version_survives(si: &Si) -> bool {
    let t = setup().1;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        read_after_a_later_commit(si, &t)
    }))
    .is_ok_and(|seen| seen == 1)
}

/// The versions an active snapshot needs outlive both collections: the one each commit runs
/// and RapidGC's deferred pass at the writer's next begin. Each collection mutant loses them.
#[test]
fn collection_keeps_the_versions_of_active_snapshots() {
    assert!(snapshot_version_survives(&setup().0));
    for m in [
        Mutant::SiCollectPastSnapshots,
        Mutant::SiDeferredIgnoresWatermark,
    ] {
        assert!(
            !snapshot_version_survives(&setup().0.with_mutant(m)),
            "{m:?}"
        );
    }
}

/// Whether `a`, which wrote `x` after its snapshot, commits over `b`'s later commit of `x`.
fn second_committer_commits(si: &Si) -> bool {
    let t = setup().1;
    let x = t.get(RecordId(0)).unwrap();
    let mut a = si.new_worker(0);
    let mut b = si.new_worker(1);
    si.begin(&mut a, AttemptStart::FIRST);
    ready(si.write(&mut a, x, &7u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    commit_write(si, &mut b, x, 8).unwrap();
    let r = ready(si.commit(&mut a));
    if let Err(why) = r {
        si.abort(&mut a, why);
    }
    r.is_ok()
}

/// The same first-committer-wins check fails for the mutant that skips it.
#[test]
fn skipping_first_committer_wins_fails_its_check() {
    assert!(!second_committer_commits(&setup().0));
    let si = setup().0.with_mutant(Mutant::SiSkipFirstCommitterWins);
    assert!(second_committer_commits(&si));
}

#[test]
fn the_first_committer_wins() {
    let (si, t) = setup();
    let x = t.get(RecordId(0)).unwrap();
    let mut a = si.new_worker(0);
    let mut b = si.new_worker(1);
    si.begin(&mut a, AttemptStart::FIRST);
    ready(si.write(&mut a, x, &7u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    commit_write(&si, &mut b, x, 8).unwrap();
    assert_eq!(ready(si.commit(&mut a)), Err(Abort::WriteWriteConflict));
    si.abort(&mut a, Abort::WriteWriteConflict);
    // The lock was released: a fresh attempt commits.
    commit_write(&si, &mut a, x, 9).unwrap();
    let mut out = [0u8; 8];
    x.payload.load(&mut out);
    assert_eq!(u64::from_le_bytes(out), 9);
}

/// Write skew: both read x and y, each writes a different one; both commit under SI.
#[test]
fn write_skew_commits() {
    let (si, t) = setup();
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut a = si.new_worker(0);
    let mut b = si.new_worker(1);
    let mut out = [0u8; 8];
    for w in [&mut a, &mut b] {
        si.begin(w, AttemptStart::FIRST);
        ready(si.read(w, x, &mut out)).unwrap();
        ready(si.read(w, y, &mut out)).unwrap();
    }
    ready(si.write(&mut a, x, &1u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(si.write(&mut b, y, &1u64.to_le_bytes(), WriteKind::Blind)).unwrap();
    ready(si.commit(&mut a)).unwrap();
    ready(si.commit(&mut b)).unwrap();
}

/// A reader waits for a committer whose version its snapshot may include.
#[test]
fn a_read_of_a_locked_record_at_or_above_its_timestamp_waits() {
    let (si, t) = setup();
    let x = t.get(RecordId(0)).unwrap();
    let mut r = si.new_worker(0);
    let seen = hold(x.meta());
    si.begin(&mut r, AttemptStart::FIRST);
    let mut out = [0u8; 8];
    assert!(si.read(&mut r, x, &mut out).is_pending());
    x.meta().word.store(seen, Ordering::SeqCst);
    ready(si.read(&mut r, x, &mut out)).unwrap();
}

/// Versions are reclaimed once no snapshot needs them, and reused (no allocation once warm).
#[test]
fn versions_are_collected_and_reused() {
    let (si, t) = setup();
    let x = t.get(RecordId(0)).unwrap();
    let mut w = si.new_worker(0);
    for v in 0..10_000u64 {
        commit_write(&si, &mut w, x, v).unwrap();
    }
    let stats = si.version_stats();
    assert!(stats.live_versions <= 2, "{stats:?}");
    assert_eq!(stats.allocated_versions, crate::storage::versions::RESERVE);
}

/// Readers skipping in-flight versions: a reader finds x held by a committer (worker 1, locked
/// and marked by hand, as its commit does before drawing a stamp) and reads the committed
/// version while the committer's stamp is certainly above its snapshot, and waits otherwise.
#[test]
fn a_skipping_reader_waits_only_for_a_holder_that_may_commit_into_its_snapshot() {
    let mut opts = ProtocolOptions {
        threads: 3,
        ..Default::default()
    };
    opts.mv.gc_interval_us = 0;
    opts.mv.skip_in_flight = true;
    let si = Si::new(&opts);
    let t = Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    });
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut other = si.new_worker(2);
    commit_write(&si, &mut other, x, 7).unwrap();
    commit_write(&si, &mut other, y, 1).unwrap();
    let mut reader = si.new_worker(0);
    si.begin(&mut reader, AttemptStart::FIRST);
    let snapshot = reader.snapshot;
    // The holder: locked x at its committed word, marked it, still active.
    let serial = si.table.begin(1);
    let meta = x.meta();
    let word = hold(meta);
    meta.holder
        .store(Marker::new(1, serial).0, Ordering::SeqCst);
    let mut out = [0u8; 8];
    let mut read = || {
        si.read_at(x, snapshot, &mut out)
            .map(|r| r.map(|()| u64::from_le_bytes(out)))
    };
    assert_eq!(read(), Poll::Ready(Ok(7)), "active holder");
    si.table.committing(1, 0);
    assert!(read().is_pending(), "stamp not drawn yet");
    si.table.committing(1, snapshot);
    assert!(read().is_pending(), "stamp in the snapshot");
    si.table.committing(1, snapshot + 1);
    assert_eq!(read(), Poll::Ready(Ok(7)), "stamp above it");
    // Without the option the reader waits for any holder.
    let plain = Si::new(&ProtocolOptions {
        threads: 3,
        ..Default::default()
    });
    assert!(plain.read_at(x, snapshot, &mut [0u8; 8]).is_pending());
    meta.holder.store(0, Ordering::SeqCst);
    meta.word.store(word, Ordering::SeqCst);
}
