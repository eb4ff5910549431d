//! 2PL with early release (SGPM's variant): reader/writer locks on the whole declared access
//! set, taken in one global order before the program runs, each released right after the
//! record's last use instead of at commit.
//!
//! The lock phase is Ord-Lock's ([`super::ord_lock`], whose lock word this reuses): the
//! declared set arrives merged and sorted by record address ([`DeclaredSet::schedule`]), so a
//! transaction only ever waits for a lock ordered after every lock it holds; no deadlock, no
//! concurrency-control abort. Every lock is taken before any is released (the transaction's
//! lock point is the end of `schedule`), so the protocol is two-phase and its executions are
//! conflict-serializable in lock-point order. What it gives up is strictness:
//!
//! - a record declared for reading is released right after its read;
//! - a record declared for writing is read in place while held, and written in place at its
//!   write (installed through [`WriteSet::install`], so check mode sees the version order), then
//!   released;
//! - commit releases whatever the program never touched.
//!
//! A write is therefore visible before its transaction commits. That is only safe when no
//! transaction that installed a write ever aborts: concurrency control never aborts one here,
//! and configuration refuses workloads with user aborts (TPC-C). The "last use" of a record is
//! its first read (declared reads) or its first write (declared writes): a workload that touches
//! a record again after that would run unprotected, so such an access panics naming it (YCSB
//! keys are distinct within a transaction; long-scan reads each record once and reads, then
//! updates, its hot record).

use super::in_place::{InPlaceWorker, in_place_operations};
#[cfg(test)]
use super::mutants::Mutant;
use super::ord_lock::OrdRwLock;
use super::parts::{DeclaredSet, DeclaredSetPart, RunHooks, RunHooksPart};
use super::{
    Abort, AccessMode, AttemptStart, DeclaredRecord, OpResult, Protocol, WriteKind, WriteSet,
};
use crate::storage::Record;
use std::task::Poll;

/// Why 2PL with early release serves no interactive client
/// ([`RunHooks::not_served_because`], `ProtocolKind::not_served_because`).
pub const NOT_SERVED: &str = "it installs writes in place at once, so a client's abort or \
                              disconnect after a write could not be undone";

/// The protocol (no shared state beyond the record locks).
#[derive(Debug, Default)]
pub struct TwoPlEr {
    /// Mutation testing: the deliberate bug this instance runs with (`protocol::mutants`).
    #[cfg(test)]
    mutant: Mutant,
}

impl TwoPlEr {
    /// The protocol.
    pub fn new() -> Self {
        TwoPlEr::default()
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();

    /// Whether declared reads are locked (a mutant skips them).
    #[inline]
    fn locks_reads(&self) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::TwoPlErReadsUnlocked {
            return false;
        }
        true
    }

    /// The mutant `TwoPlErLocksAtFirstUse`: an access to a record `schedule` left unlocked
    /// takes its lock now; false while another holds it. Always true for the real protocol,
    /// which locked every record before the program ran.
    #[inline]
    fn lock_late(&self, e: &mut Entry<'_>) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::TwoPlErLocksAtFirstUse && e.hold == Hold::Waiting {
            return e.try_lock();
        }
        let _ = e;
        true
    }

    /// Whether a write is installed at once (a mutant defers it to commit, after the release).
    #[inline]
    fn installs_at_write(&self) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::TwoPlErReleaseBeforeInstall {
            return false;
        }
        true
    }
}

/// Where one declared record stands in the current attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Not locked yet (`schedule` has not reached it).
    Waiting,
    /// Scheduled without a lock (only a mutant does this).
    Unlocked,
    /// Locked in this mode.
    Held(AccessMode),
    /// Used and released: another access would be unprotected.
    Released,
}

/// One record of the declared set and its lock state.
struct Entry<'db> {
    record: Record<'db, OrdRwLock>,
    mode: AccessMode,
    hold: Hold,
}

impl Entry<'_> {
    /// Tries to take the record's lock in its declared mode.
    #[inline]
    fn try_lock(&mut self) -> bool {
        let got = match self.mode {
            AccessMode::Read => self.record.meta().try_shared(),
            AccessMode::Write => self.record.meta().try_exclusive(),
        };
        if got {
            self.hold = Hold::Held(self.mode);
        }
        got
    }
}

/// A worker: the attempt's declared set with each record's lock state, and its writes (kept
/// only for the install log in check mode; the mutant also buffers them).
pub struct TwoPlErWorker<'db> {
    /// The declared set, in the global record order (copied at the first `schedule` poll).
    set: Vec<Entry<'db>>,
    /// Entries of `set` locked so far (a `Pending` schedule resumes at the next).
    scheduled: usize,
    /// Writes installed so far this attempt (they cannot be undone).
    installed: usize,
    writes: WriteSet<'db, OrdRwLock, ()>,
}

impl<'db> InPlaceWorker<'db, OrdRwLock> for TwoPlErWorker<'db> {
    /// Writes are installed at `write`; the set keeps them for the install log.
    #[inline]
    fn writes(&mut self) -> &mut WriteSet<'db, OrdRwLock, ()> {
        &mut self.writes
    }
}

impl<'db> TwoPlErWorker<'db> {
    /// The entry of `rec`: the set is sorted by record address.
    #[inline]
    fn entry(&mut self, rec: &Record<'db, OrdRwLock>) -> &mut Entry<'db> {
        let key = rec.order_key();
        match self
            .set
            .binary_search_by_key(&key, |e| e.record.order_key())
        {
            Ok(i) => &mut self.set[i],
            Err(_) => panic!(
                "twopl_er: record {} accessed outside the transaction's declared set (a workload bug)",
                rec.rid.0
            ),
        }
    }

    /// Releases every lock still held.
    fn release_all(&mut self) {
        for e in &mut self.set {
            if let Hold::Held(mode) = e.hold {
                release(&e.record, mode);
            }
            e.hold = Hold::Released;
        }
    }
}

/// Drops a hold of `rec`'s lock in `mode`.
#[inline]
fn release(rec: &Record<'_, OrdRwLock>, mode: AccessMode) {
    match mode {
        AccessMode::Read => rec.meta().release_shared(),
        AccessMode::Write => rec.meta().release_exclusive(),
    }
}

/// Releases `rec`'s lock before commit (the early release), and wakes waiters that may be parked
/// on it: no attempt ends here to wake them.
#[inline]
fn release_early(rec: &Record<'_, OrdRwLock>, mode: AccessMode) {
    release(rec, mode);
    super::wake::wake_waiters();
}

/// The panic for an access after the record's early release (module docs).
#[cold]
fn touched_after_release(rec: &Record<'_, OrdRwLock>) -> ! {
    panic!(
        "twopl_er: record {} accessed again after its lock was released early (each declared \
         record may be read once, or read and then written once); this workload cannot run \
         under twopl_er",
        rec.rid.0
    )
}

impl Protocol for TwoPlEr {
    type RecordMeta = OrdRwLock;
    type Worker<'db> = TwoPlErWorker<'db>;

    const DECLARED_SET: Option<DeclaredSetPart<Self>> = Some(DeclaredSetPart::from_impl());
    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, _id: usize) -> TwoPlErWorker<'db> {
        TwoPlErWorker {
            set: Vec::new(),
            scheduled: 0,
            installed: 0,
            writes: WriteSet::default(),
        }
    }

    fn begin(&self, w: &mut TwoPlErWorker<'_>, _start: AttemptStart) {
        w.set.clear();
        w.writes.clear();
        w.scheduled = 0;
        w.installed = 0;
    }

    /// In place under the declared lock; a declared read's lock goes right after the copy.
    #[inline]
    fn read<'db>(
        &self,
        w: &mut TwoPlErWorker<'db>,
        rec: Record<'db, OrdRwLock>,
        out: &mut [u8],
    ) -> OpResult {
        let e = w.entry(&rec);
        if !self.lock_late(e) {
            return Poll::Pending;
        }
        match e.hold {
            Hold::Held(AccessMode::Read) => {
                rec.payload.load(out);
                release_early(&rec, AccessMode::Read);
                e.hold = Hold::Released;
            }
            // A declared write keeps its lock until the write.
            Hold::Held(AccessMode::Write) | Hold::Unlocked => w.writes.read_in_place(&rec, out),
            Hold::Released => touched_after_release(&rec),
            Hold::Waiting => unreachable!("the program runs after schedule locked every record"),
        }
        Poll::Ready(Ok(()))
    }

    /// Installs in place under the exclusive lock, then releases it.
    #[inline]
    fn write<'db>(
        &self,
        w: &mut TwoPlErWorker<'db>,
        rec: Record<'db, OrdRwLock>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        let e = w.entry(&rec);
        if !self.lock_late(e) {
            return Poll::Pending;
        }
        match e.hold {
            Hold::Held(AccessMode::Write) => e.hold = Hold::Released,
            Hold::Released => touched_after_release(&rec),
            other => unreachable!("a write of a record held as {other:?} (declared as read)"),
        }
        let i = w.writes.put(rec, kind, data, ());
        if self.installs_at_write() {
            w.writes.install(i);
            w.installed += 1;
            release_early(&rec, AccessMode::Write);
        } else {
            // The mutant: released now, installed at commit.
            release_early(&rec, AccessMode::Write);
        }
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut TwoPlErWorker<'_>) -> OpResult {
        if !self.installs_at_write() {
            w.writes.install_all();
        }
        w.writes.clear();
        w.release_all();
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut TwoPlErWorker<'_>, why: Abort) {
        // An installed write was visible to others at once and cannot be taken back: only a
        // user abort can get here, and configuration refuses workloads that have them.
        assert!(
            w.installed == 0,
            "twopl_er: an attempt aborted ({why:?}) after installing {} write(s) in place; it \
             runs only on workloads without user aborts",
            w.installed
        );
        w.writes.clear();
        w.release_all();
    }

    // `read_committed` is `read`: a committed value is all a read sees here anyway, since no
    // transaction whose write it could see ever aborts.
    in_place_operations!(read_committed, install_log);
}

impl RunHooks for TwoPlEr {
    /// An abort after an in-place write cannot be undone (the protocol panics on it), and a
    /// client may abort at any request.
    fn not_served_because(&self) -> Option<&'static str> {
        Some(NOT_SERVED)
    }
}

impl DeclaredSet for TwoPlEr {
    fn schedule<'db>(
        &self,
        w: &mut TwoPlErWorker<'db>,
        set: &[DeclaredRecord<'db, OrdRwLock>],
    ) -> OpResult {
        if w.set.len() != set.len() {
            w.set.extend(set.iter().map(|d| Entry {
                record: d.record,
                mode: d.mode,
                hold: Hold::Waiting,
            }));
        }
        #[cfg(test)]
        if self.mutant == Mutant::TwoPlErLocksAtFirstUse {
            // The bug: nothing is locked up front; each access locks its record (`lock_late`).
            return Poll::Ready(Ok(()));
        }
        while let Some(e) = w.set.get_mut(w.scheduled) {
            if e.mode == AccessMode::Read && !self.locks_reads() {
                e.hold = Hold::Unlocked;
            } else if !e.try_lock() {
                return Poll::Pending;
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
    use crate::protocol::declared::declared_records as declared;
    use crate::storage::{Table, TableSpec};

    const OK: OpResult = Poll::Ready(Ok(()));

    fn table(records: u64) -> Table<OrdRwLock> {
        Table::new(TableSpec {
            name: "t".into(),
            records,
            payload_bytes: 8,
        })
    }

    #[test]
    fn each_lock_goes_right_after_the_records_use() {
        let t = table(3);
        let p = TwoPlEr::new();
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        let sa = declared(&t, &[(0, AccessMode::Read), (1, AccessMode::Write)]);
        let sb = declared(&t, &[(0, AccessMode::Write), (1, AccessMode::Read)]);
        p.begin(&mut a, AttemptStart::FIRST);
        p.begin(&mut b, AttemptStart::FIRST);
        assert_eq!(p.schedule(&mut a, &sa), OK);
        assert_eq!(p.schedule(&mut b, &sb), Poll::Pending, "a reads 0");
        let (rec0, rec1) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
        let mut out = [0u8; 8];
        let wakes = crate::protocol::wake::calls_on_this_thread();
        assert_eq!(p.read(&mut a, rec0, &mut out), OK);
        assert!(rec0.meta().is_free(), "released right after the read");
        assert!(
            crate::protocol::wake::calls_on_this_thread() > wakes,
            "an early release wakes b, which may be parked"
        );
        assert_eq!(p.schedule(&mut b, &sb), Poll::Pending, "a still holds 1");
        assert_eq!(p.write(&mut a, rec1, &[7; 8], WriteKind::Blind), OK);
        assert!(rec1.meta().is_free(), "released right after the write");
        rec1.payload.load(&mut out);
        assert_eq!(out, [7; 8], "installed in place before commit");
        assert_eq!(p.schedule(&mut b, &sb), OK);
        assert_eq!(p.commit(&mut a), OK);
        // b never touches 1: commit releases it.
        assert_eq!(p.write(&mut b, rec0, &[9; 8], WriteKind::Blind), OK);
        assert!(!rec1.meta().is_free());
        assert_eq!(p.commit(&mut b), OK);
        assert!((0..3).all(|i| t.get(RecordId(i)).unwrap().meta().is_free()));
    }

    #[test]
    fn a_declared_write_keeps_its_lock_through_its_read() {
        let t = table(1);
        let p = TwoPlEr::new();
        let mut a = p.new_worker(0);
        let s = declared(&t, &[(0, AccessMode::Write)]);
        p.begin(&mut a, AttemptStart::FIRST);
        assert_eq!(p.schedule(&mut a, &s), OK);
        let rec = t.get(RecordId(0)).unwrap();
        let mut out = [0u8; 8];
        assert_eq!(p.read_for_update(&mut a, rec, &mut out), OK);
        assert!(!rec.meta().is_free());
        assert_eq!(
            p.write(&mut a, rec, &[3; 8], WriteKind::ReadModifyWrite),
            OK
        );
        assert!(rec.meta().is_free());
        assert_eq!(p.commit(&mut a), OK);
    }

    #[test]
    #[should_panic(expected = "accessed again after its lock was released early")]
    fn a_second_read_after_the_release_is_refused() {
        let t = table(1);
        let p = TwoPlEr::new();
        let mut a = p.new_worker(0);
        let s = declared(&t, &[(0, AccessMode::Read)]);
        p.begin(&mut a, AttemptStart::FIRST);
        assert_eq!(p.schedule(&mut a, &s), OK);
        let rec = t.get(RecordId(0)).unwrap();
        let mut out = [0u8; 8];
        assert_eq!(p.read(&mut a, rec, &mut out), OK);
        let _ = p.read(&mut a, rec, &mut out);
    }

    #[test]
    fn an_abort_before_any_write_releases_everything() {
        let t = table(2);
        let p = TwoPlEr::new();
        let mut a = p.new_worker(0);
        let s = declared(&t, &[(0, AccessMode::Read), (1, AccessMode::Write)]);
        p.begin(&mut a, AttemptStart::FIRST);
        assert_eq!(p.schedule(&mut a, &s), OK);
        p.abort(&mut a, Abort::User);
        assert!((0..2).all(|i| t.get(RecordId(i)).unwrap().meta().is_free()));
    }
}
