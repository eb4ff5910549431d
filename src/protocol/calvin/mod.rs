//! Calvin (Thomson et al., SIGMOD 2012) as its paper describes it: a sequencer collects
//! transactions into batches, and a lock manager grants each batch's locks in the batch's order;
//! a transaction runs once it holds every lock of its declared set. Deterministic, no deadlock,
//! no abort (the no-wait form aside). The per-transaction ticket variant that needs no batches
//! is [`super::calvin_ticket`].
//!
//! # Sequencer and lock manager
//!
//! The sequencer is the shared batch layer ([`super::batch`]): a worker's transaction joins the
//! open batch at [`schedule`](DeclaredSet::schedule), and its place in the batch is its
//! [`position`](BatchTicket::position), the order in which members arrived (Calvin's sequencer
//! appends requests to its batch as they come). The batch closes when it is full, every live
//! worker is in it, or its time is up (the sequencer's epoch); the lock manager processes it in
//! order: the member at position `p` requests the locks of its whole declared set when the
//! batch's *turn* word says `p`, then passes the turn to `p + 1`. The walk starts with the
//! first member, without waiting for the close: positions follow arrival, so a member that
//! joins later comes later in the walk anyway, and the order of requests is the one a lock
//! manager that took the closed batch would make (`batch::Turn::wait_for_turn`). Where this
//! differs from Calvin: its scheduler receives each batch whole, so every member waits for the
//! batch's last arrival; here that wait is not paid (measured: docs/RESULTS.md, "Turns that do
//! not wait for the close"). Calvin's lock manager is one
//! thread walking the batch; here each member makes its own requests in that same order, so the
//! requests on every record are in batch order exactly as if one thread had made them. Then the
//! member waits for its grants ([`CalvinLock`]: each record's requests are granted in the order
//! they were made, readers together), runs its program in place, installs, and releases.
//!
//! Batches follow one another: the next opens when every member of this one has finished
//! (committed and released), so a batch's requests come after every request of the batches
//! before it, and its position-0 member never waits for its turn or a lock.
//!
//! Why it is serializable: each record's conflicting requests are granted one after another in
//! request order, and the request order of every record is the batch order (positions within a
//! batch, batches in sequence), one total order: the committed transactions are equivalent to
//! running them serially in it. No deadlock: a member waits only for members before it.
//!
//! # The no-wait form (`--calvin-no-wait`)
//!
//! SGPM's Calvin_NW: at its turn a member first checks that every lock it needs is free (no
//! request it would wait for is outstanding); if so it requests them all, granted at once, and
//! runs; if not it requests nothing, passes the turn, and aborts with
//! [`Abort::LockConflict`] to rerun in a later batch. Under coroutines that is SGPM's SF
//! ([`Signal::Sf`]): the transaction swaps places with the global queue's front, whichever slot
//! frees up next takes it, and its age starts again on that slot's worker. The position-0 member
//! always finds every lock free, so every batch commits at least one transaction. A transaction
//! is placed by arrival, not by age, so one that conflicts every time could in principle be
//! passed over batch after batch (Aria's rank order would bound that; the plain form needs no
//! bound, as it never aborts).
//!
//! Record metadata: the lock's four counters (16 bytes).

pub mod lock;

use super::batch::{BatchOptions, BatchTicket, Batches, Turn};
use super::in_place::{InPlaceWorker, in_place_operations};
#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{DeclaredSet, DeclaredSetPart, RunHooks, RunHooksPart};
use super::signal::Signal;
use super::{Abort, AttemptStart, DeclaredRecord, OpResult, Protocol, WriteSet};
use crossbeam_utils::CachePadded;
use lock::{CalvinLock, LockRules, Requests};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

/// Batched Calvin's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct CalvinOptions {
    /// The no-wait form: a member whose locks are not all free at its turn reruns in the next
    /// batch instead of waiting (`--calvin-no-wait`; module docs).
    pub no_wait: bool,
}

/// The protocol: the sequencer (batches), the lock manager's turn, and the options.
pub struct Calvin {
    batches: Batches,
    /// Whose turn it is to request its locks (the lock manager's walk through the batch).
    turn: Turn,
    no_wait: bool,
    rules: LockRules,
    /// Transactions the no-wait form sent to the next batch (report).
    conflicts: CachePadded<AtomicU64>,
    #[cfg(test)]
    mutant: Mutant,
}

impl Calvin {
    /// Calvin with batches formed by `batch` and `options`.
    pub fn new(batch: &BatchOptions, options: CalvinOptions) -> Self {
        Calvin {
            batches: Batches::new(batch),
            turn: Turn::default(),
            no_wait: options.no_wait,
            rules: LockRules::default(),
            conflicts: CachePadded::new(AtomicU64::new(0)),
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    /// The same protocol with a deliberate bug (`protocol::mutants`).
    #[cfg(test)]
    pub(crate) fn with_mutant(mut self, mutant: Mutant) -> Self {
        self.mutant = mutant;
        self.rules.mutant = mutant;
        self
    }
}

/// Where a worker's attempt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not requested yet: joining a batch, or a member waiting for its turn
    /// (its ticket holds the batch).
    Idle,
    /// Requests made in the batch's order: waiting for the grants.
    Requested,
    /// Every lock granted: the program runs.
    Running,
    /// No-wait: a lock was not free at the turn; nothing requested, the attempt aborts.
    Conflicted,
}

/// A batched Calvin worker.
pub struct CalvinWorker<'db> {
    protocol: &'db Calvin,
    ticket: BatchTicket,
    stage: Stage,
    requests: Requests<'db>,
    writes: WriteSet<'db, CalvinLock, ()>,
}

impl Drop for CalvinWorker<'_> {
    fn drop(&mut self) {
        // Batches must not wait for a worker that is gone (once per worker: `leave` knows).
        self.protocol.batches.leave(&mut self.ticket);
    }
}

impl<'db> InPlaceWorker<'db, CalvinLock> for CalvinWorker<'db> {
    #[inline]
    fn writes(&mut self) -> &mut WriteSet<'db, CalvinLock, ()> {
        &mut self.writes
    }

    /// Releases every lock requested, then leaves the batch (the last member to leave opens the
    /// next one, whose requests must come after ours).
    fn end_attempt(&mut self) {
        debug_assert!(
            self.stage != Stage::Idle || self.ticket.batch() == 0,
            "an attempt ends only after its schedule"
        );
        self.requests.release_all();
        if self.ticket.batch() != 0 {
            self.protocol.batches.finished(&mut self.ticket);
        }
        self.stage = Stage::Idle;
    }
}

impl Protocol for Calvin {
    type RecordMeta = CalvinLock;
    type Worker<'db> = CalvinWorker<'db>;

    const DECLARED_SET: Option<DeclaredSetPart<Self>> = Some(DeclaredSetPart::from_impl());
    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, id: usize) -> CalvinWorker<'db> {
        CalvinWorker {
            protocol: self,
            ticket: self.batches.register(id),
            stage: Stage::Idle,
            requests: Requests::default(),
            writes: WriteSet::default(),
        }
    }

    fn begin(&self, w: &mut CalvinWorker<'_>, start: AttemptStart) {
        debug_assert_eq!(w.ticket.batch(), 0, "the last attempt left its batch");
        if !start.retry {
            w.ticket.new_transaction();
        }
        w.stage = Stage::Idle;
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
                    if self
                        .turn
                        .wait_for_turn(&self.batches, &mut w.ticket)
                        .is_pending()
                    {
                        return Poll::Pending;
                    }
                    if self.no_wait && !Requests::all_free(self.rules, set) {
                        self.turn.pass(&w.ticket);
                        // Relaxed: a report counter, read after the workers were joined.
                        self.conflicts.fetch_add(1, Ordering::Relaxed);
                        w.stage = Stage::Conflicted;
                        return Poll::Ready(Err(Abort::LockConflict));
                    }
                    w.requests.request_all(self.rules, set);
                    self.turn.pass(&w.ticket);
                    w.stage = Stage::Requested;
                }
                Stage::Requested => {
                    #[cfg(test)]
                    let skip = self.mutant == Mutant::CalvinBatchRunsBeforeGrants;
                    #[cfg(not(test))]
                    let skip = false;
                    if !skip && !w.requests.all_granted(self.rules) {
                        return Poll::Pending;
                    }
                    w.stage = Stage::Running;
                }
                Stage::Running => return Poll::Ready(Ok(())),
                Stage::Conflicted => unreachable!("schedule after a no-wait conflict"),
            }
        }
    }
}

impl RunHooks for Calvin {
    const RUNS_IN_BATCHES: bool = true;

    fn stats(&self) -> Vec<(&'static str, f64)> {
        self.batches
            .stats_with_conflicts(self.no_wait, &self.conflicts)
    }

    /// A no-wait conflict reruns in the next batch (SGPM's Calvin_NW): its batch has gone on
    /// without it.
    fn signal(&self, why: Abort) -> Signal {
        super::batch::no_wait_signal(why)
    }

    fn stop_worker(&self, w: &mut CalvinWorker<'_>) {
        self.batches.leave(&mut w.ticket);
    }

    /// An idle worker is not waited for: a batch closes without it (it is a member of none
    /// between attempts: the last one finished).
    const IDLE_WORKERS_HOLD_OTHERS: bool = true;

    fn worker_away(&self, w: &mut CalvinWorker<'_>) {
        debug_assert_eq!(w.ticket.batch(), 0, "away between attempts only");
        self.batches.leave(&mut w.ticket);
    }

    fn worker_back(&self, w: &mut CalvinWorker<'_>) {
        self.batches.rejoin(&mut w.ticket);
    }
}

#[cfg(test)]
mod tests;
