//! Aria (Lu, Yu, Cao and Madden, VLDB 2020): deterministic execution in batches without knowing
//! read and write sets in advance.
//!
//! Transactions are collected into batches by the shared batch layer ([`super::batch`]), which
//! also orders each batch deterministically (a member's rank: its transaction's age in batches,
//! then its worker id; Aria's TID order). A batch runs in two phases separated by a barrier:
//!
//! 1. **Execution.** Every member reads the database as the previous batch left it (one
//!    snapshot: nobody installs while a batch executes) and buffers its writes. Then it
//!    *reserves*: each record it writes keeps, in its write reservation, the lowest rank that
//!    writes it; with deterministic reordering each record it read keeps, in its read
//!    reservation, the lowest rank that reads it ([`reservation`]).
//! 2. **Commit** (once every member has executed). A member aborts on a *write-after-write*
//!    conflict (a lower-ranked member reserved a record it writes) or a *read-after-write*
//!    conflict (a lower-ranked member reserved a record it read); otherwise it installs its
//!    writes. With `--aria-reordering` (Aria section 4) a read-after-write conflict aborts only
//!    together with a *write-after-read* one (a lower-ranked member read a record this one
//!    writes): without it the member can be serialized before the lower-ranked writers whose
//!    writes it did not see.
//!
//! An aborted member retries in a later batch (SGPM's NB signal), where it ranks before every
//! newer transaction, so each transaction eventually commits: the lowest-ranked member of a
//! batch never aborts. With `--aria-fallback` (Aria section 5, [`fallback`]) it reruns in its
//! own batch instead, after the batch's committers, under locks granted in rank order over what
//! its first run touched (SGPM's RR); only a rerun that touches something else moves on (NB).
//!
//! Why committed members are serializable without reordering: in rank order, each committed
//! member read only records that no lower-ranked member reserved for writing, so the snapshot
//! value it read is the value in the rank-order serial execution too; and each record has at
//! most one committed writer per batch (every other writer sees the lowest one's reservation),
//! so installs of one record never overlap and need no lock. With reordering, a committed member
//! with a read-after-write conflict has no write-after-read one: no lower-ranked member read what
//! it writes, so it can move before all of them (Aria's theorem 4.2). Reservations of members
//! that then abort still count: conservative, never wrong.
//!
//! Reads copy the record in place: between the previous batch's last install and this batch's
//! commit phase nobody writes, and a member reads only during execution (a fallback member's
//! rerun reads under its lock). Record metadata: the two reservation words and the fallback
//! phase's lock (32 bytes).

pub mod fallback;
pub mod reservation;

use super::batch::{BatchOptions, BatchTicket, Batches};
use super::calvin::lock::CalvinLock;
#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{RunHooks, RunHooksPart};
use super::signal::Signal;
use super::{Abort, AccessMode, AttemptStart, InstallLog, OpResult, Protocol, WriteKind, WriteSet};
use crate::storage::Record;
use fallback::{Fallback, FallbackLock, LockSet};
use serde::Serialize;
use std::sync::atomic::AtomicU64;
use std::task::Poll;

/// Aria's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct AriaOptions {
    /// Deterministic reordering: abort on a read-after-write conflict only when there is a
    /// write-after-read conflict too (`--aria-reordering`).
    pub reordering: bool,
    /// The fallback phase: a member that loses a conflict reruns in its batch under
    /// deterministic locks (`--aria-fallback`; [`fallback`]).
    pub fallback: bool,
}

/// A record's reservations in the current batch.
#[derive(Debug, Default)]
pub struct AriaMeta {
    /// The lowest-ranked writer ([`reservation`]).
    writes: AtomicU64,
    /// The lowest-ranked reader (reordering only).
    reads: AtomicU64,
    /// The fallback phase's lock, requested in rank order (`--aria-fallback` only).
    lock: CalvinLock,
}

/// The protocol: the batch manager and the options.
pub struct Aria {
    batches: Batches,
    reordering: bool,
    /// The fallback phase's shared state (`--aria-fallback`).
    fallback: Option<Fallback>,
    #[cfg(test)]
    mutant: Mutant,
}

impl Aria {
    /// Aria with batches formed by `batch` and `options`.
    pub fn new(batch: &BatchOptions, options: AriaOptions) -> Self {
        Aria {
            batches: Batches::new(batch),
            reordering: options.reordering,
            fallback: options.fallback.then(Fallback::new),
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    /// The same protocol with a deliberate bug (`protocol::mutants`), in the fallback phase too.
    #[cfg(test)]
    pub(crate) fn with_mutant(mut self, mutant: Mutant) -> Self {
        self.mutant = mutant;
        if let Some(f) = &mut self.fallback {
            f.mutant = mutant;
        }
        self
    }

    fn fallback(&self) -> &Fallback {
        self.fallback
            .as_ref()
            .expect("a fallback member runs with the fallback phase")
    }

    /// The member lost its conflict: its first run's accesses become its lock set (a record it
    /// wrote locked for writing, one it only read for reading), and it registers as a fallback
    /// member of its batch.
    fn become_fallback_member(&self, w: &mut AriaWorker<'_>) {
        let locks = &mut w.locks;
        locks.clear();
        for e in w.writes.entries() {
            if locks.find(&e.rec).is_none() {
                locks.push(e.rec, FallbackLock::new(AccessMode::Write));
            }
        }
        for rec in w.reads.iter().chain(&w.committed_reads) {
            if locks.find(rec).is_none() {
                locks.push(*rec, FallbackLock::new(AccessMode::Read));
            }
        }
        self.fallback().register(&w.ticket);
    }

    /// A rerun's access to `rec`: `Ready(Ok)` when its lock set covers it (every lock was
    /// granted before the rerun began), the changed-access-set abort when it does not.
    #[inline]
    fn fallback_access<'db>(
        &self,
        w: &mut AriaWorker<'db>,
        rec: &Record<'db, AriaMeta>,
        write: bool,
    ) -> OpResult {
        match self.fallback().covers(&w.locks, rec, write) {
            true => Poll::Ready(Ok(())),
            #[cfg(test)]
            false if self.mutant == Mutant::AriaFallbackIgnoresChangedAccessSet => {
                Poll::Ready(Ok(()))
            }
            false => Poll::Ready(Err(Abort::BatchAccessSetChanged)),
        }
    }

    /// A fallback member is done with its batch (its rerun committed or aborted): releases its
    /// locks (after its installs) and finishes.
    fn leave_fallback(&self, w: &mut AriaWorker<'_>) {
        self.fallback().release_all(&mut w.locks);
        self.batches.finished(&mut w.ticket);
        w.stage = Stage::Done;
    }

    /// A rerun's read: its own write, or the record in place once its lock is granted (the
    /// current database: no one else writes it while the lock is held).
    #[inline]
    fn fallback_read<'db>(
        &self,
        w: &mut AriaWorker<'db>,
        rec: Record<'db, AriaMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        let access = self.fallback_access(w, &rec, false);
        if let Poll::Ready(Ok(())) = access {
            rec.payload.load(out);
        }
        access
    }

    /// Joins the open batch (every operation's first step; `Pending` until one takes us).
    #[inline]
    fn join(&self, w: &mut AriaWorker<'_>) -> Poll<()> {
        self.batches.join(&mut w.ticket)
    }

    /// Publishes the member's reservations (end of its execution phase).
    fn reserve(&self, w: &AriaWorker<'_>) {
        let (batch, rank) = (w.ticket.batch(), w.ticket.rank());
        let reserve = |cell: &AtomicU64| {
            #[cfg(test)]
            if self.mutant == Mutant::AriaReservationKeepsFirst {
                return reservation::reserve_first_comer(cell, batch, rank);
            }
            reservation::reserve(cell, batch, rank);
        };
        for e in w.writes.entries() {
            reserve(&e.rec.meta().writes);
        }
        #[cfg(test)]
        if self.mutant == Mutant::AriaReorderingWithoutReadReservations {
            return;
        }
        if self.reordering {
            for rec in &w.reads {
                reserve(&rec.meta().reads);
            }
        }
    }

    /// The commit phase's verdict for a member whose batch has executed.
    fn verdict(&self, w: &AriaWorker<'_>) -> Result<(), Abort> {
        let (batch, rank) = (w.ticket.batch(), w.ticket.rank());
        let before = |cell: &AtomicU64| reservation::reserved_before(cell, batch, rank);
        if w.writes
            .entries()
            .iter()
            .any(|e| before(&e.rec.meta().writes))
        {
            return Err(Abort::BatchWriteAfterWrite);
        }
        #[cfg(test)]
        if self.mutant == Mutant::AriaSkipReadAfterWrite {
            return Ok(());
        }
        let read_after_write = w.reads.iter().any(|rec| before(&rec.meta().writes));
        if !read_after_write {
            return Ok(());
        }
        let write_after_read = !self.reordering
            || w.writes
                .entries()
                .iter()
                .any(|e| before(&e.rec.meta().reads));
        if write_after_read {
            Err(Abort::BatchReadAfterWrite)
        } else {
            Ok(())
        }
    }
}

/// Where a worker's attempt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Reading and buffering (a member of a batch from its first operation on).
    Executing,
    /// Reservations made; waiting for the batch's other members to execute.
    Reserved,
    /// Lost its conflict, with the fallback phase: registered as a fallback member, waiting for
    /// the batch's other members to finish (then `predecessor` is known) and for its turn to
    /// request its locks. `verdict` is the first run's abort, reported once the requests are
    /// made.
    FallbackQueued {
        verdict: Abort,
        predecessor: Option<Option<u32>>,
    },
    /// Requests made, waiting until every one is granted; then `verdict` (the first run's
    /// abort) is reported.
    FallbackGranting { verdict: Abort },
    /// Every request granted and the first run's abort reported: the executor's retry is next,
    /// in the same batch.
    FallbackRequested,
    /// The retry runs under the locks.
    FallbackRunning,
    /// Done with its batch (committed, or aborted).
    Done,
}

/// An Aria worker.
pub struct AriaWorker<'db> {
    protocol: &'db Aria,
    ticket: BatchTicket,
    stage: Stage,
    /// Records read from the snapshot (not the attempt's own writes), repeats allowed.
    reads: Vec<Record<'db, AriaMeta>>,
    /// Records read at read committed (kept with the fallback phase only: they need a lock in
    /// the rerun, whose reads run while the batch's other fallback members install).
    committed_reads: Vec<Record<'db, AriaMeta>>,
    writes: WriteSet<'db, AriaMeta, ()>,
    /// A fallback member's lock set.
    locks: LockSet<'db>,
}

impl AriaWorker<'_> {
    /// Ends what the worker holds in its batch before it goes: a fallback member's locks and
    /// membership (the executors finish the transaction in hand before they stop a worker, so
    /// this is for a worker dropped mid-transaction). A member still queued for its turn
    /// cannot leave without waiting for it, which a drop must not do; no executor drops one.
    fn end_batch(&mut self) {
        if matches!(
            self.stage,
            Stage::FallbackRequested | Stage::FallbackRunning
        ) {
            let p = self.protocol;
            p.leave_fallback(self);
        }
        debug_assert!(
            !matches!(
                self.stage,
                Stage::FallbackQueued { .. } | Stage::FallbackGranting { .. }
            ),
            "a fallback member queued for its turn or its grants stopped"
        );
        self.protocol.batches.leave(&mut self.ticket);
    }
}

impl Drop for AriaWorker<'_> {
    fn drop(&mut self) {
        // Batches must not wait for a worker that is gone (once per worker: `leave` knows).
        self.end_batch();
    }
}

impl Protocol for Aria {
    type RecordMeta = AriaMeta;
    type Worker<'db> = AriaWorker<'db>;

    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, id: usize) -> AriaWorker<'db> {
        if let Some(f) = &self.fallback {
            f.add_worker(id);
        }
        AriaWorker {
            protocol: self,
            ticket: self.batches.register(id),
            stage: Stage::Done,
            reads: Vec::with_capacity(64),
            committed_reads: Vec::new(),
            writes: WriteSet::default(),
            locks: LockSet::default(),
        }
    }

    fn begin(&self, w: &mut AriaWorker<'_>, start: AttemptStart) {
        w.reads.clear();
        w.committed_reads.clear();
        w.writes.clear();
        if w.stage == Stage::FallbackRequested {
            if start.retry {
                // The fallback member's rerun: same batch, under its locks.
                w.stage = Stage::FallbackRunning;
                return;
            }
            // Not retried (no executor does this): the batch must not wait for it.
            self.leave_fallback(w);
        }
        debug_assert_eq!(w.ticket.batch(), 0, "the last attempt left its batch");
        if !start.retry {
            w.ticket.new_transaction();
        }
        w.stage = Stage::Executing;
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut AriaWorker<'db>,
        rec: Record<'db, AriaMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.stage == Stage::FallbackRunning {
            return self.fallback_read(w, rec, out);
        }
        if self.join(w).is_pending() {
            return Poll::Pending;
        }
        if !w.writes.read_own(&rec, out) {
            rec.payload.load(out);
            w.reads.push(rec);
        }
        Poll::Ready(Ok(()))
    }

    /// The snapshot's value, unreserved: nothing installs while the batch executes, so it is
    /// committed and whole, and not being checked it protects nothing. A fallback member's
    /// rerun reads it under its lock like any read (other fallback members install meanwhile).
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut AriaWorker<'db>,
        rec: Record<'db, AriaMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.stage == Stage::FallbackRunning {
            return self.fallback_read(w, rec, out);
        }
        if self.join(w).is_pending() {
            return Poll::Pending;
        }
        w.writes.read_in_place(&rec, out);
        if self.fallback.is_some() {
            w.committed_reads.push(rec);
        }
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut AriaWorker<'db>,
        rec: Record<'db, AriaMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        if w.stage == Stage::FallbackRunning {
            let access = self.fallback_access(w, &rec, true);
            if let Poll::Ready(Ok(())) = access {
                w.writes.put(rec, kind, data, ());
            }
            return access;
        }
        if self.join(w).is_pending() {
            return Poll::Pending;
        }
        w.writes.put(rec, kind, data, ());
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut AriaWorker<'_>) -> OpResult {
        loop {
            match w.stage {
                Stage::Executing => {
                    // A program with no operation joins here.
                    if self.join(w).is_pending() {
                        return Poll::Pending;
                    }
                    self.reserve(w);
                    self.batches.executed(&w.ticket);
                    w.stage = Stage::Reserved;
                }
                Stage::Reserved => {
                    if self.batches.all_executed(&w.ticket).is_pending() {
                        return Poll::Pending;
                    }
                    let verdict = self.verdict(w);
                    if let (Err(why), Some(_)) = (verdict, &self.fallback) {
                        self.become_fallback_member(w);
                        w.stage = Stage::FallbackQueued {
                            verdict: why,
                            predecessor: None,
                        };
                        continue;
                    }
                    if verdict.is_ok() {
                        // At most one committed writer per record in a batch, and nobody reads
                        // during the commit phase (fallback members read once every committer
                        // finished): the install needs no lock (module docs).
                        w.writes.install_all();
                    }
                    self.batches.finished(&mut w.ticket);
                    w.stage = Stage::Done;
                    return Poll::Ready(verdict);
                }
                Stage::FallbackQueued {
                    verdict,
                    predecessor,
                } => {
                    let f = self.fallback();
                    let predecessor = match predecessor {
                        Some(p) => p,
                        None => {
                            if !f.others_finished(&self.batches, &w.ticket) {
                                return Poll::Pending;
                            }
                            let p = f.predecessor(&w.ticket);
                            w.stage = Stage::FallbackQueued {
                                verdict,
                                predecessor: Some(p),
                            };
                            p
                        }
                    };
                    if !f.is_my_turn(&w.ticket, predecessor) {
                        return Poll::Pending;
                    }
                    f.request_all(&w.ticket, &mut w.locks);
                    w.stage = Stage::FallbackGranting { verdict };
                }
                Stage::FallbackGranting { verdict } => {
                    // Every request granted before the rerun starts, as Calvin's transactions
                    // run: whatever ends the rerun then releases granted requests only
                    // (`fallback` module docs).
                    if !self.fallback().all_granted(&mut w.locks) {
                        return Poll::Pending;
                    }
                    w.stage = Stage::FallbackRequested;
                    // The first run ends here; the executor's retry reruns it in this batch.
                    return Poll::Ready(Err(verdict));
                }
                Stage::FallbackRunning => {
                    // Every write waited for its lock (`write`), held until the release below.
                    w.writes.install_all();
                    self.fallback().count(true);
                    self.leave_fallback(w);
                    return Poll::Ready(Ok(()));
                }
                Stage::FallbackRequested | Stage::Done => {
                    unreachable!("commit after the attempt ended")
                }
            }
        }
    }

    fn abort(&self, w: &mut AriaWorker<'_>, why: Abort) {
        match w.stage {
            Stage::Executing if w.ticket.batch() != 0 => {
                // Ended before its commit phase (a user abort): nothing reserved; the batch
                // must not wait for it.
                self.batches.withdraw(&mut w.ticket);
            }
            // The first run's abort of a fallback member: it stays, with its locks, for the
            // retry (`begin`).
            Stage::FallbackRequested => return,
            Stage::FallbackRunning => {
                if why == Abort::BatchAccessSetChanged {
                    self.fallback().count(false);
                }
                self.leave_fallback(w);
            }
            _ => {}
        }
        w.stage = Stage::Done;
        w.reads.clear();
        w.committed_reads.clear();
        w.writes.clear();
    }

    fn install_log<'w>(&self, w: &'w mut AriaWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl RunHooks for Aria {
    const RUNS_IN_BATCHES: bool = true;

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let mut stats = self.batches.stats();
        if let Some(f) = &self.fallback {
            stats.extend(f.stats());
        }
        stats
    }

    /// With the fallback phase a lost conflict reruns in its own batch, in place (RR); the
    /// rerun whose access set changed moves to the next batch (NB, the default's).
    fn signal(&self, why: Abort) -> Signal {
        match why {
            Abort::BatchWriteAfterWrite | Abort::BatchReadAfterWrite if self.fallback.is_some() => {
                Signal::Rr
            }
            other => Signal::for_abort(other),
        }
    }

    fn stop_worker(&self, w: &mut AriaWorker<'_>) {
        w.end_batch();
    }

    /// An idle worker is not waited for: a batch closes without it. A fallback member whose
    /// first run ended (its locks granted, its retry not begun) gives up its place: its locks
    /// go and its batch finishes without it; the retry, if it comes, joins a later batch (NB).
    const IDLE_WORKERS_HOLD_OTHERS: bool = true;

    fn worker_away(&self, w: &mut AriaWorker<'_>) {
        w.end_batch();
        debug_assert_eq!(w.ticket.batch(), 0, "away between attempts only");
    }

    fn worker_back(&self, w: &mut AriaWorker<'_>) {
        self.batches.rejoin(&mut w.ticket);
    }
}

#[cfg(test)]
mod tests;
