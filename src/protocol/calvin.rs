//! Calvin-style deterministic locking (Thomson et al., SIGMOD 2012; DecentSched's section V
//! baseline): transactions are sequenced in one global order, and each record's lock requests
//! are granted in that order. No deadlock (a transaction only ever waits for transactions
//! sequenced before it), no abort.
//!
//! The sequencer is a ticket: a transaction takes the next sequence number, waits for its turn
//! (`Pending`, never a spin), requests the locks of its whole declared set (one `fetch_add` per
//! record, so the per-record request order is the sequence order), and passes the turn on. The
//! turn is held only for those requests, never while waiting for a lock. Then it waits for each
//! lock to be granted. Each record's lock is a reader/writer ticket lock: a request takes a
//! position among the record's writers and readers; a writer is granted once every earlier
//! request has been released, a reader once every earlier writer has.

use super::in_place::{InPlaceWorker, in_place_operations};
#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{DeclaredSet, DeclaredSetPart};
use super::{AccessMode, AttemptStart, DeclaredRecord, OpResult, Protocol, WriteSet};
use crate::storage::Record;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::task::Poll;

/// A record's lock: writer and reader requests taken, and releases done. Counters wrap; only
/// equality is compared. Requests to one record are made by one transaction at a time (the
/// sequencer's turn), so reading the two request counters one after the other is a snapshot.
/// Grants compare the release counters with the snapshot one at a time, which is sound because
/// once a release counter reaches a request's snapshot it cannot move on until that request is
/// granted and released (later requests wait for it).
#[derive(Debug, Default)]
pub struct CalvinLock {
    writers_requested: AtomicU32,
    readers_requested: AtomicU32,
    writers_released: AtomicU32,
    readers_released: AtomicU32,
}

/// Whether a wrapping release counter has reached `target`. In the protocol it never passes a
/// waiting request's target (module docs), so this is equality; comparing by distance keeps a
/// broken variant (a test mutant that lets releases overtake) from waiting forever.
#[inline]
fn reached(released: u32, target: u32) -> bool {
    released.wrapping_sub(target) < 1 << 31
}

/// The request counters a lock request saw: how many writers and readers came before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Position {
    writers: u32,
    readers: u32,
}

/// The Calvin protocol: the sequencer's two counters.
#[derive(Debug, Default)]
pub struct Calvin {
    /// Next sequence number to hand out.
    next_seq: CachePadded<AtomicU64>,
    /// Sequence number whose turn it is to request its locks.
    turn: CachePadded<AtomicU64>,
    #[cfg(test)]
    mutant: Mutant,
}

impl Calvin {
    /// The protocol.
    pub fn new() -> Self {
        Calvin::default()
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();

    /// The mode a declared access requests its lock in (a mutant may weaken it).
    #[inline]
    fn lock_mode(&self, mode: AccessMode) -> AccessMode {
        #[cfg(test)]
        if self.mutant == Mutant::CalvinWritesLockShared {
            return AccessMode::Read;
        }
        mode
    }

    /// Whether the lock requested at `at` (in `mode`) is granted: every earlier writer released
    /// (a reader), every earlier request released (a writer).
    #[inline]
    fn granted(&self, lock: &CalvinLock, mode: AccessMode, at: Position) -> bool {
        // Acquire: pairs with the earlier holders' Release in `end_attempt`, so their installs
        // are visible to us.
        let writers_done = reached(lock.writers_released.load(Ordering::Acquire), at.writers);
        let readers_done = || reached(lock.readers_released.load(Ordering::Acquire), at.readers);
        #[cfg(test)]
        if self.mutant == Mutant::CalvinWritersIgnoreWriters && mode == AccessMode::Write {
            return readers_done();
        }
        match mode {
            AccessMode::Read => writers_done,
            AccessMode::Write => writers_done && readers_done(),
        }
    }
}

/// Where a worker's transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No sequence number yet.
    Idle,
    /// Sequenced as this number: waiting for its turn to request.
    Sequenced(u64),
    /// Requests made: waiting for grants, from `granted` on.
    Requested,
    /// Every lock granted: the program runs.
    Running,
}

/// A Calvin worker.
pub struct CalvinWorker<'db> {
    stage: Stage,
    /// The declared records, their modes and the counter values their requests saw.
    locks: Vec<(Record<'db, CalvinLock>, AccessMode, Position)>,
    /// Locks granted so far (in order).
    granted: usize,
    writes: WriteSet<'db, CalvinLock, ()>,
    /// Mutation testing (`Mutant::CalvinPassTurnBeforeRequests`): the attempt passed the turn
    /// on before making its requests.
    #[cfg(test)]
    turn_passed: bool,
}

impl CalvinWorker<'_> {
    /// Whether the attempt already passed the turn on (only a mutant does so before its
    /// requests).
    #[inline]
    fn passed_turn_early(&self) -> bool {
        #[cfg(test)]
        if self.turn_passed {
            return true;
        }
        false
    }
}

impl<'db> InPlaceWorker<'db, CalvinLock> for CalvinWorker<'db> {
    #[inline]
    fn writes(&mut self) -> &mut WriteSet<'db, CalvinLock, ()> {
        &mut self.writes
    }

    /// Releases every lock requested (granted or not: a later request waits for each).
    fn end_attempt(&mut self) {
        if self.stage == Stage::Requested || self.stage == Stage::Running {
            for &(rec, mode, _) in &self.locks {
                let lock = rec.meta();
                let released = match mode {
                    AccessMode::Write => &lock.writers_released,
                    AccessMode::Read => &lock.readers_released,
                };
                // Release: the holder's reads and installs happen before the next holder's
                // grant (its Acquire load in `granted`).
                released.fetch_add(1, Ordering::Release);
            }
        }
        self.locks.clear();
        self.granted = 0;
        self.stage = Stage::Idle;
        #[cfg(test)]
        {
            self.turn_passed = false;
        }
    }
}

impl Protocol for Calvin {
    type RecordMeta = CalvinLock;
    type Worker<'db> = CalvinWorker<'db>;

    const DECLARED_SET: Option<DeclaredSetPart<Self>> = Some(DeclaredSetPart::from_impl());

    fn new_worker<'db>(&'db self, _id: usize) -> CalvinWorker<'db> {
        CalvinWorker {
            stage: Stage::Idle,
            locks: Vec::new(),
            granted: 0,
            writes: WriteSet::default(),
            #[cfg(test)]
            turn_passed: false,
        }
    }

    fn begin(&self, w: &mut CalvinWorker<'_>, _start: AttemptStart) {
        w.writes.clear();
    }

    in_place_operations!(read, read_committed, write, commit, abort, install_log);
}

impl DeclaredSet for Calvin {
    fn schedule<'db>(
        &self,
        w: &mut CalvinWorker<'db>,
        set: &[DeclaredRecord<'db, CalvinLock>],
    ) -> OpResult {
        loop {
            match w.stage {
                Stage::Idle => {
                    // Relaxed: only uniqueness of the number matters; the turn orders the rest.
                    let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
                    w.stage = Stage::Sequenced(seq);
                }
                Stage::Sequenced(seq) => {
                    // Acquire: pairs with the previous holder's Release of the turn, so our
                    // requests come after its requests on every record.
                    if self.turn.load(Ordering::Acquire) != seq && !w.passed_turn_early() {
                        return Poll::Pending;
                    }
                    #[cfg(test)]
                    if self.mutant == Mutant::CalvinPassTurnBeforeRequests && !w.turn_passed {
                        // The bug: the turn goes on before our requests, and the worker is
                        // preempted right there (a `Pending` poll); the next sequence number
                        // may now request ahead of us.
                        w.turn_passed = true;
                        // Release: as below.
                        self.turn.store(seq + 1, Ordering::Release);
                        super::wake::wake_waiters();
                        return Poll::Pending;
                    }
                    w.locks.clear();
                    for d in set {
                        let lock = d.record.meta();
                        // Relaxed: requests are ordered by the turn (module docs); grants read
                        // the release counters.
                        let at = Position {
                            writers: lock.writers_requested.load(Ordering::Relaxed),
                            readers: lock.readers_requested.load(Ordering::Relaxed),
                        };
                        let mode = self.lock_mode(d.mode);
                        let requested = match mode {
                            AccessMode::Write => &lock.writers_requested,
                            AccessMode::Read => &lock.readers_requested,
                        };
                        // Relaxed: as above; only the turn holder writes request counters.
                        requested.fetch_add(1, Ordering::Relaxed);
                        w.locks.push((d.record, mode, at));
                    }
                    if !w.passed_turn_early() {
                        // Release: publishes our requests to the next sequence number.
                        self.turn.store(seq + 1, Ordering::Release);
                        // The next sequence number may be parked waiting for its turn.
                        super::wake::wake_waiters();
                    }
                    w.granted = 0;
                    w.stage = Stage::Requested;
                }
                Stage::Requested => {
                    while let Some(&(rec, mode, at)) = w.locks.get(w.granted) {
                        if !self.granted(rec.meta(), mode, at) {
                            return Poll::Pending;
                        }
                        w.granted += 1;
                    }
                    w.stage = Stage::Running;
                }
                Stage::Running => return Poll::Ready(Ok(())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Table, TableSpec};

    const OK: OpResult = Poll::Ready(Ok(()));

    use crate::protocol::declared::declared_records as declared;

    /// Locks are granted in sequence order: a reader sequenced after a writer waits for it even
    /// when it reaches the record first, and readers share.
    #[test]
    fn grants_follow_the_sequence() {
        let t: Table<CalvinLock> = Table::new(TableSpec {
            name: "t".into(),
            records: 2,
            payload_bytes: 8,
        });
        let p = Calvin::new();
        let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
        let (rd, wr) = (AccessMode::Read, AccessMode::Write);
        let writer = declared(&t, &[(0, wr), (1, rd)]);
        let reader = declared(&t, &[(0, rd)]);
        for w in ws.iter_mut() {
            p.begin(w, AttemptStart::FIRST);
        }
        assert_eq!(p.schedule(&mut ws[0], &writer), OK, "sequence 0");
        assert_eq!(
            p.schedule(&mut ws[1], &reader),
            Poll::Pending,
            "after the writer"
        );
        assert_eq!(p.schedule(&mut ws[2], &reader), Poll::Pending);
        assert_eq!(p.commit(&mut ws[0]), OK);
        assert_eq!(p.schedule(&mut ws[1], &reader), OK);
        assert_eq!(p.schedule(&mut ws[2], &reader), OK, "readers share");
        assert_eq!(p.commit(&mut ws[1]), OK);
        assert_eq!(p.commit(&mut ws[2]), OK);
    }

    /// Whether `b`, sequenced after `a` and declaring the same record, is granted the lock
    /// before `a` released it, whatever `a`'s first poll answered (`a` may be preempted
    /// anywhere after taking its sequence number).
    fn later_sequence_runs_first(p: &Calvin) -> bool {
        let t: Table<CalvinLock> = Table::new(TableSpec {
            name: "t".into(),
            records: 1,
            payload_bytes: 8,
        });
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        let s = declared(&t, &[(0, AccessMode::Write)]);
        p.begin(&mut a, AttemptStart::FIRST);
        p.begin(&mut b, AttemptStart::FIRST);
        let _ = p.schedule(&mut a, &s);
        // Two polls: a sequencer that passes the turn early returns `Pending` once first.
        let b_first = (0..2).any(|_| p.schedule(&mut b, &s) == OK);
        if b_first {
            assert_eq!(p.commit(&mut b), OK);
        }
        assert_eq!(p.schedule(&mut a, &s), OK);
        assert_eq!(p.commit(&mut a), OK);
        if !b_first {
            assert_eq!(p.schedule(&mut b, &s), OK);
            assert_eq!(p.commit(&mut b), OK);
        }
        b_first
    }

    #[test]
    fn a_later_sequence_never_overtakes_an_earlier_one() {
        assert!(!later_sequence_runs_first(&Calvin::new()));
    }

    /// The same check fails for a sequencer that passes the turn before its requests.
    #[test]
    fn passing_the_turn_before_the_requests_fails_the_order_check() {
        let p = Calvin::new().with_mutant(Mutant::CalvinPassTurnBeforeRequests);
        assert!(later_sequence_runs_first(&p));
    }

    /// A transaction waits for its turn to request: sequence 1 cannot request before 0 did.
    #[test]
    fn requests_wait_for_the_turn() {
        let t: Table<CalvinLock> = Table::new(TableSpec {
            name: "t".into(),
            records: 1,
            payload_bytes: 8,
        });
        let p = Calvin::new();
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        let s = declared(&t, &[(0, AccessMode::Write)]);
        // a takes sequence 0 but has not requested yet (its turn check is the next step).
        a.stage = Stage::Sequenced(p.next_seq.fetch_add(1, Ordering::Relaxed));
        assert_eq!(p.schedule(&mut b, &s), Poll::Pending, "turn of 0");
        let wakes = crate::protocol::wake::calls_on_this_thread();
        assert_eq!(p.schedule(&mut a, &s), OK);
        assert!(
            crate::protocol::wake::calls_on_this_thread() > wakes,
            "passing the turn wakes b, which may be parked"
        );
        assert_eq!(p.schedule(&mut b, &s), Poll::Pending, "lock held by 0");
        assert_eq!(p.commit(&mut a), OK);
        assert_eq!(p.schedule(&mut b, &s), OK);
        assert_eq!(p.commit(&mut b), OK);
    }
}
