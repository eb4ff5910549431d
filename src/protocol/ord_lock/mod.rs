//! Ord-Lock (DecentSched's baseline, paper section V): reader/writer locks on the whole declared
//! access set, taken in one global order before the program runs, held to commit.
//!
//! The transaction's declared set arrives sorted by record address
//! ([`DeclaredSet::schedule`]); locking in that order means a transaction only ever waits for a
//! lock ordered after every lock it holds, so no cycle of waits, no deadlock and no abort. Once
//! scheduled, the program reads in place (its locks keep writers out) and buffers its writes,
//! installed at commit under the exclusive locks; then every lock is released. An access outside
//! the declared set would be unprotected: check mode catches it (`protocol::declared`).

mod lock;

pub use lock::OrdRwLock;

use super::in_place::{InPlaceWorker, in_place_operations};
#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{DeclaredSet, DeclaredSetPart};
use super::{AccessMode, AttemptStart, DeclaredRecord, OpResult, Protocol, WriteSet};
use crate::storage::Record;
use std::task::Poll;

/// The Ord-Lock protocol (no shared state beyond the record locks).
#[derive(Debug, Default)]
pub struct OrdLock {
    /// Mutation testing: the deliberate bug this instance runs with (`protocol::mutants`).
    #[cfg(test)]
    mutant: Mutant,
}

impl OrdLock {
    /// The protocol.
    pub fn new() -> Self {
        OrdLock::default()
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();

    /// The mode a declared access is locked in (a mutant may weaken it).
    #[inline]
    fn lock_mode(&self, mode: AccessMode) -> Option<AccessMode> {
        #[cfg(test)]
        match (self.mutant, mode) {
            (Mutant::OrdLockReadsUnlocked, AccessMode::Read) => return None,
            (Mutant::OrdLockWritesShared, AccessMode::Write) => return Some(AccessMode::Read),
            _ => {}
        }
        Some(mode)
    }
}

/// An Ord-Lock worker: the locks it holds, in order, and its buffered writes.
pub struct OrdLockWorker<'db> {
    /// Locks taken so far this attempt, in the declared order (a `Pending` schedule resumes
    /// after the last).
    held: Vec<(Record<'db, OrdRwLock>, AccessMode)>,
    /// Declared records done (locked, or skipped by a mutant).
    scheduled: usize,
    writes: WriteSet<'db, OrdRwLock, ()>,
}

impl<'db> InPlaceWorker<'db, OrdRwLock> for OrdLockWorker<'db> {
    #[inline]
    fn writes(&mut self) -> &mut WriteSet<'db, OrdRwLock, ()> {
        &mut self.writes
    }

    /// Releases every lock held.
    fn end_attempt(&mut self) {
        for (rec, mode) in self.held.drain(..) {
            match mode {
                AccessMode::Read => rec.meta().release_shared(),
                AccessMode::Write => rec.meta().release_exclusive(),
            }
        }
        self.scheduled = 0;
    }
}

impl Protocol for OrdLock {
    type RecordMeta = OrdRwLock;
    type Worker<'db> = OrdLockWorker<'db>;

    const DECLARED_SET: Option<DeclaredSetPart<Self>> = Some(DeclaredSetPart::from_impl());

    fn new_worker<'db>(&'db self, _id: usize) -> OrdLockWorker<'db> {
        OrdLockWorker {
            held: Vec::new(),
            scheduled: 0,
            writes: WriteSet::default(),
        }
    }

    fn begin(&self, w: &mut OrdLockWorker<'_>, _start: AttemptStart) {
        debug_assert!(w.held.is_empty());
        w.writes.clear();
        w.scheduled = 0;
    }

    in_place_operations!(read, read_committed, write, commit, abort, install_log);
}

impl DeclaredSet for OrdLock {
    fn schedule<'db>(
        &self,
        w: &mut OrdLockWorker<'db>,
        set: &[DeclaredRecord<'db, OrdRwLock>],
    ) -> OpResult {
        while let Some(d) = set.get(w.scheduled) {
            if let Some(mode) = self.lock_mode(d.mode) {
                let got = match mode {
                    AccessMode::Read => d.record.meta().try_shared(),
                    AccessMode::Write => d.record.meta().try_exclusive(),
                };
                if !got {
                    return Poll::Pending;
                }
                w.held.push((d.record, mode));
            }
            w.scheduled += 1;
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::RecordId;
    use crate::protocol::WriteKind;
    use crate::storage::{Table, TableSpec};

    const OK: OpResult = Poll::Ready(Ok(()));

    use crate::protocol::declared::declared_records as declared;

    #[test]
    fn a_conflicting_schedule_waits_and_resumes_where_it_stopped() {
        let t: Table<OrdRwLock> = Table::new(TableSpec {
            name: "t".into(),
            records: 3,
            payload_bytes: 8,
        });
        let p = OrdLock::new();
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        let sa = declared(&t, &[(0, AccessMode::Read), (1, AccessMode::Write)]);
        let sb = declared(&t, &[(0, AccessMode::Read), (1, AccessMode::Read)]);
        p.begin(&mut a, AttemptStart::FIRST);
        p.begin(&mut b, AttemptStart::FIRST);
        assert_eq!(p.schedule(&mut a, &sa), OK);
        assert_eq!(p.schedule(&mut b, &sb), Poll::Pending, "1 is written by a");
        assert_eq!(b.held.len(), 1, "the shared 0 is kept while waiting");
        let rec1 = t.get(RecordId(1)).unwrap();
        assert_eq!(p.write(&mut a, rec1, &[7; 8], WriteKind::Blind), OK);
        assert_eq!(p.commit(&mut a), OK);
        assert_eq!(p.schedule(&mut b, &sb), OK);
        let mut out = [0u8; 8];
        assert_eq!(p.read(&mut b, rec1, &mut out), OK);
        assert_eq!(out, [7; 8]);
        assert_eq!(p.commit(&mut b), OK);
        assert!((0..3).all(|i| t.get(RecordId(i)).unwrap().meta().is_free()));
    }

    #[test]
    fn a_user_abort_releases_and_discards() {
        let t: Table<OrdRwLock> = Table::new(TableSpec {
            name: "t".into(),
            records: 1,
            payload_bytes: 8,
        });
        let p = OrdLock::new();
        let mut a = p.new_worker(0);
        let s = declared(&t, &[(0, AccessMode::Write)]);
        p.begin(&mut a, AttemptStart::FIRST);
        assert_eq!(p.schedule(&mut a, &s), OK);
        let rec = t.get(RecordId(0)).unwrap();
        assert_eq!(p.write(&mut a, rec, &[7; 8], WriteKind::Blind), OK);
        p.abort(&mut a, crate::protocol::Abort::User);
        assert!(rec.meta().is_free());
        let mut out = [1u8; 8];
        rec.payload.load(&mut out);
        assert_eq!(out, [0; 8]);
    }
}
