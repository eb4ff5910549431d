//! Calvin's locking with a per-transaction ticket instead of batches (kind `calvin_ticket`; the
//! DecentSched paper's section V compares against this form): transactions are sequenced in one
//! global order, one at a time, and each record's locks are granted in that order. No
//! deadlock (a transaction only ever waits for transactions sequenced before it), no abort.
//! Batched Calvin, as the Calvin paper describes it, is [`super::calvin`].
//!
//! The sequencer is a ticket: a transaction takes the next sequence number, waits for its turn
//! (`Pending`, never a spin), requests the locks of its whole declared set (one `fetch_add` per
//! record, so the per-record request order is the sequence order), and passes the turn on. The
//! turn is held only for those requests, never while waiting for a lock. Then it waits for each
//! lock to be granted ([`CalvinLock`]: a reader/writer ticket lock).

use super::calvin::lock::{CalvinLock, LockRules, Requests};
use super::in_place::{InPlaceWorker, in_place_operations};
#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{DeclaredSet, DeclaredSetPart};
use super::{AttemptStart, DeclaredRecord, OpResult, Protocol, WriteSet};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

/// Calvin with a ticket per transaction: the sequencer's two counters.
#[derive(Debug, Default)]
pub struct CalvinTicket {
    /// Next sequence number to hand out.
    next_seq: CachePadded<AtomicU64>,
    /// Sequence number whose turn it is to request its locks.
    turn: CachePadded<AtomicU64>,
    rules: LockRules,
    #[cfg(test)]
    mutant: Mutant,
}

impl CalvinTicket {
    /// The protocol.
    pub fn new() -> Self {
        CalvinTicket::default()
    }

    /// The same protocol with a deliberate bug (`protocol::mutants`).
    #[cfg(test)]
    pub(crate) fn with_mutant(mut self, mutant: Mutant) -> Self {
        self.mutant = mutant;
        self.rules.mutant = mutant;
        self
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

/// A worker of Calvin with tickets.
pub struct CalvinTicketWorker<'db> {
    stage: Stage,
    /// The attempt's lock requests.
    requests: Requests<'db>,
    writes: WriteSet<'db, CalvinLock, ()>,
    /// Mutation testing (`Mutant::CalvinPassTurnBeforeRequests`): the attempt passed the turn
    /// on before making its requests.
    #[cfg(test)]
    turn_passed: bool,
}

impl CalvinTicketWorker<'_> {
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

impl<'db> InPlaceWorker<'db, CalvinLock> for CalvinTicketWorker<'db> {
    #[inline]
    fn writes(&mut self) -> &mut WriteSet<'db, CalvinLock, ()> {
        &mut self.writes
    }

    /// Releases every lock requested (granted or not: a later request waits for each).
    fn end_attempt(&mut self) {
        self.requests.release_all();
        self.stage = Stage::Idle;
        #[cfg(test)]
        {
            self.turn_passed = false;
        }
    }
}

impl Protocol for CalvinTicket {
    type RecordMeta = CalvinLock;
    type Worker<'db> = CalvinTicketWorker<'db>;

    const DECLARED_SET: Option<DeclaredSetPart<Self>> = Some(DeclaredSetPart::from_impl());

    fn new_worker<'db>(&'db self, _id: usize) -> CalvinTicketWorker<'db> {
        CalvinTicketWorker {
            stage: Stage::Idle,
            requests: Requests::default(),
            writes: WriteSet::default(),
            #[cfg(test)]
            turn_passed: false,
        }
    }

    fn begin(&self, w: &mut CalvinTicketWorker<'_>, _start: AttemptStart) {
        w.writes.clear();
    }

    in_place_operations!(read, read_committed, write, commit, abort, install_log);
}

impl DeclaredSet for CalvinTicket {
    fn schedule<'db>(
        &self,
        w: &mut CalvinTicketWorker<'db>,
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
                    w.requests.request_all(self.rules, set);
                    if !w.passed_turn_early() {
                        // Release: publishes our requests to the next sequence number.
                        self.turn.store(seq + 1, Ordering::Release);
                        // The next sequence number may be parked waiting for its turn.
                        super::wake::wake_waiters();
                    }
                    w.stage = Stage::Requested;
                }
                Stage::Requested => {
                    if !w.requests.all_granted(self.rules) {
                        return Poll::Pending;
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
    use crate::protocol::AccessMode;
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
        let p = CalvinTicket::new();
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
    fn later_sequence_runs_first(p: &CalvinTicket) -> bool {
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
        assert!(!later_sequence_runs_first(&CalvinTicket::new()));
    }

    /// The same check fails for a sequencer that passes the turn before its requests.
    #[test]
    fn passing_the_turn_before_the_requests_fails_the_order_check() {
        let p = CalvinTicket::new().with_mutant(Mutant::CalvinPassTurnBeforeRequests);
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
        let p = CalvinTicket::new();
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
