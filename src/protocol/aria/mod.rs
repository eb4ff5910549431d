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
//! batch never aborts.
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
//! commit phase nobody writes, and a member reads only during execution. Record metadata: the
//! two reservation words (16 bytes).

pub mod reservation;

use super::batch::{BatchOptions, BatchTicket, Batches};
#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{RunHooks, RunHooksPart};
use super::{Abort, AttemptStart, InstallLog, OpResult, Protocol, WriteKind, WriteSet};
use crate::storage::Record;
use serde::Serialize;
use std::sync::atomic::AtomicU64;
use std::task::Poll;

/// Aria's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct AriaOptions {
    /// Deterministic reordering: abort on a read-after-write conflict only when there is a
    /// write-after-read conflict too (`--aria-reordering`).
    pub reordering: bool,
}

/// A record's reservations in the current batch.
#[derive(Debug, Default)]
pub struct AriaMeta {
    /// The lowest-ranked writer ([`reservation`]).
    writes: AtomicU64,
    /// The lowest-ranked reader (reordering only).
    reads: AtomicU64,
}

/// The protocol: the batch manager and the options.
pub struct Aria {
    batches: Batches,
    reordering: bool,
    #[cfg(test)]
    mutant: Mutant,
}

impl Aria {
    /// Aria with batches formed by `batch` and `options`.
    pub fn new(batch: &BatchOptions, options: AriaOptions) -> Self {
        Aria {
            batches: Batches::new(batch),
            reordering: options.reordering,
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();

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
    writes: WriteSet<'db, AriaMeta, ()>,
}

impl Drop for AriaWorker<'_> {
    fn drop(&mut self) {
        // Batches must not wait for a worker that is gone (once per worker: `leave` knows).
        self.protocol.batches.leave(&mut self.ticket);
    }
}

impl Protocol for Aria {
    type RecordMeta = AriaMeta;
    type Worker<'db> = AriaWorker<'db>;

    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, id: usize) -> AriaWorker<'db> {
        AriaWorker {
            protocol: self,
            ticket: self.batches.register(id),
            stage: Stage::Done,
            reads: Vec::with_capacity(64),
            writes: WriteSet::default(),
        }
    }

    fn begin(&self, w: &mut AriaWorker<'_>, start: AttemptStart) {
        debug_assert_eq!(w.ticket.batch(), 0, "the last attempt left its batch");
        if !start.retry {
            w.ticket.new_transaction();
        }
        w.stage = Stage::Executing;
        w.reads.clear();
        w.writes.clear();
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut AriaWorker<'db>,
        rec: Record<'db, AriaMeta>,
        out: &mut [u8],
    ) -> OpResult {
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
    /// committed and whole, and not being checked it protects nothing.
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut AriaWorker<'db>,
        rec: Record<'db, AriaMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if self.join(w).is_pending() {
            return Poll::Pending;
        }
        w.writes.read_in_place(&rec, out);
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
                    if verdict.is_ok() {
                        // At most one committed writer per record in a batch, and nobody reads
                        // during the commit phase: the install needs no lock (module docs).
                        w.writes.install_all();
                    }
                    self.batches.finished(&mut w.ticket);
                    w.stage = Stage::Done;
                    return Poll::Ready(verdict);
                }
                Stage::Done => unreachable!("commit after the attempt ended"),
            }
        }
    }

    fn abort(&self, w: &mut AriaWorker<'_>, _why: Abort) {
        if w.stage == Stage::Executing && w.ticket.batch() != 0 {
            // Ended before its commit phase (a user abort): nothing reserved; the batch must
            // not wait for it.
            self.batches.withdraw(&mut w.ticket);
        }
        w.stage = Stage::Done;
        w.reads.clear();
        w.writes.clear();
    }

    fn install_log<'w>(&self, w: &'w mut AriaWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl RunHooks for Aria {
    const RUNS_IN_BATCHES: bool = true;

    fn stats(&self) -> Vec<(&'static str, f64)> {
        self.batches.stats()
    }

    fn stop_worker(&self, w: &mut AriaWorker<'_>) {
        self.batches.leave(&mut w.ticket);
    }
}

#[cfg(test)]
mod tests;
