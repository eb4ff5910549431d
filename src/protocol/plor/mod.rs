//! PLOR: pessimistic locking, optimistic reading (Chen et al., SIGMOD 2022, sections 3-4).
//!
//! # Algorithm
//!
//! Every transaction locks what it accesses, but the read phase never blocks on a conflict with a
//! writer; conflicts are resolved at commit by WOUND_WAIT, so transactions commit in priority order
//! and an aborted transaction, keeping its priority, eventually becomes the oldest and commits.
//!
//! - **Context** ([`context`]): each worker publishes `wid | priority | ABORTED` in one word; a
//!   wound is a CAS that succeeds only against the exact transaction meant.
//! - **Read phase.** `read` sets the worker's reader bit (`LockRd`) and copies the payload, even if
//!   another transaction holds the write lock: writes are buffered privately, so the record holds
//!   the last committed value. A reader is refused only while a committer is in exclusive mode
//!   (installing); then it wounds that committer if older, registers in the record's waiter set
//!   so that no younger writer retakes the record before it (the bitmap reader must drop its bit
//!   while it waits, unlike the paper's list entry), and waits (`Pending`).
//!   `read_committed` instead copies through the install-counter seqlock below, unlocked and
//!   unvalidated; it waits only while a committer holds the record exclusively.
//!   `write` and `read_for_update` take the write lock (`LockWr`, module `write_lock`) with WOUND_WAIT
//!   and buffer the new payload.
//! - **Commit** (module `commit`). Phase 1: for each written record, enter exclusive mode (`EXCL`),
//!   wound every younger reader and wait (`Pending`) until every other reader bit is gone; older
//!   readers are waited for. Phase 2 (commit point): release the read locks. Phase 3: install,
//!   bump the version, leave exclusive mode and release the write locks.
//! - **DWA** (`PlorOptions::dwa`, PLOR 4.1.4): blind writes take no lock in the read phase;
//!   read-modify-writes take a read lock. Commit sorts the write set and takes the write locks
//!   (WOUND_WAIT) in that order before upgrading each to exclusive mode.
//! - **Read-only transactions** (PLOR 4.1.3): the workload declares a transaction read-only
//!   ([`AttemptStart::read_only`]). Such a transaction reads optimistically (seqlock reads against
//!   the record's install counter, validated at commit like Silo) until it has aborted
//!   `ro_threshold` times; then it takes read locks like any other. Every other transaction locks
//!   its reads from its first attempt, so only read-only transactions can abort on validation. The
//!   declaration is a hint, not a precondition: if a transaction declared read-only writes, its
//!   first write locks every record it read and checks each is unchanged (else it aborts with
//!   `ReadValidation`), and its retries lock from the start.
//! - **Priority** (`PlorOptions::priority`). Arrival: a global counter drawn at the first attempt,
//!   kept across retries. Deadline (PLOR-RT, 6.4): `D = A + SF x R` in arrival ticks, where `A` is
//!   the arrival and `R` the number of records accessed. The protocol sees accesses only as they
//!   happen, so a first attempt estimates `R` by the worker's previous attempt (of the previous
//!   transaction); at the first retry `R` becomes the count of this transaction's first attempt,
//!   and that deadline is kept for every later retry (a retry aborted part-way would otherwise
//!   move it).
//!
//! # Invariants
//!
//! - Only the write-lock owner sets `EXCL`, installs, or bumps the version; it installs only after
//!   every other reader bit set before its `EXCL` is gone. So a locked reader never sees a partial
//!   install, and its value is the last committed one for as long as its bit is set.
//! - A transaction holding a reader bit or the write lock never waits for a younger transaction it
//!   has not wounded; a transaction past phase 1 never waits at all. Hence no deadlock, and the
//!   oldest transaction is never aborted, except a declared read-only one on an optimistic
//!   attempt (at most `ro_threshold` times): starvation freedom.
//! - Each bit, owner word and `EXCL` a transaction set is cleared exactly once, at commit or abort.
//!
//! Workers: the locker's reader and waiter bitmaps span two words each, so [`Plor`] runs up to
//! [`NARROW_PLOR_WORKERS`] (127) workers; a run with more (the coroutine executor's threads x Q)
//! uses [`PlorWide`], whose bitmaps span [`WIDE_WORDS`] words, up to [`MAX_PLOR_WORKERS`] (1024).
//!
//! Inserts, deletes and range scans need nothing here: `txn/index_ops.rs` builds them, for every
//! protocol, on these record operations.

mod commit;
pub mod context;
pub mod locker;
mod read;
#[cfg(all(test, loom))]
pub(crate) use read::optimistic_copy;
mod write_lock;

#[cfg(test)]
mod tests;

pub use context::{ContextTable, CtxWord};
pub use locker::{MAX_PLOR_WORKERS, NARROW_PLOR_WORKERS, PlorLock, WIDE_WORDS};

#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{RunHooks, RunHooksPart};
use super::signal::Signal;
use super::twopl::TooManyWorkers;
use super::{
    Abort, AttemptStart, OpResult, PlorOptions, PlorPriority, Protocol, ProtocolOptions, ReadSet,
    WriteKind, WriteSet,
};
use crate::storage::Record;
use read::{LockAfterRead, ReadMode, lock_after_read, locked_read, optimistic_read};
use std::task::{Poll, ready};
use write_lock::Requester;

/// The PLOR protocol: its options and the workers' contexts. `WORDS` sizes each record's reader
/// and waiter lists ([`PlorLock`]); [`Plor`] (127 workers) and [`PlorWide`] (1024) are the two
/// a run chooses from, once, by its worker count.
pub struct PlorOf<const WORDS: usize> {
    opts: PlorOptions,
    ctx: ContextTable,
    /// Mutation testing: the deliberate bug this instance runs with (`protocol::mutants`).
    #[cfg(test)]
    mutant: Mutant,
}

/// PLOR with the two-word locker: up to [`NARROW_PLOR_WORKERS`] (127) workers.
pub type Plor = PlorOf<{ locker::NARROW_WORDS }>;
/// PLOR with the wide locker, for runs of more than [`NARROW_PLOR_WORKERS`] workers (up to
/// [`MAX_PLOR_WORKERS`]).
pub type PlorWide = PlorOf<WIDE_WORDS>;

/// Whether a PLOR run with `workers` workers needs the wide locker.
#[inline]
pub fn needs_wide_locker(workers: usize) -> bool {
    workers > NARROW_PLOR_WORKERS
}

impl<const WORDS: usize> PlorOf<WORDS> {
    /// PLOR for `opts.threads` workers; fails beyond what the locker names (and beyond
    /// [`MAX_PLOR_WORKERS`]).
    pub fn new(opts: &ProtocolOptions) -> Result<Self, TooManyWorkers> {
        let max = PlorLock::<WORDS>::CAPACITY.min(MAX_PLOR_WORKERS);
        if opts.threads > max {
            return Err(TooManyWorkers {
                protocol: "plor",
                threads: opts.threads,
                max,
            });
        }
        Ok(PlorOf {
            opts: opts.plor,
            ctx: ContextTable::new(opts.threads),
            #[cfg(test)]
            mutant: Mutant::None,
        })
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();

    /// The workers' contexts (tests wound workers directly).
    pub fn contexts(&self) -> &ContextTable {
        &self.ctx
    }
}

/// What a write-set entry holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteState {
    /// This transaction owns the record's write lock.
    owned: bool,
    /// This transaction put the record in exclusive mode (commit phase 1).
    exclusive: bool,
}

/// A PLOR worker: its identity, its transaction's priority bookkeeping, and the attempt's sets.
pub struct PlorWorker<'db, const WORDS: usize = { locker::NARROW_WORDS }> {
    req: Requester<'db, WORDS>,
    /// Arrival timestamp of the current transaction (kept across retries).
    arrival: u64,
    /// Commit priority of the current transaction: the arrival, or the deadline (estimated at
    /// the first attempt, fixed at the first retry, then kept).
    priority: u64,
    /// Records accessed by this attempt, and by the worker's previous attempt (`R` of the
    /// deadline).
    accessed: u32,
    last_accessed: u32,
    /// Aborts of the current transaction so far.
    aborts: u32,
    /// Some attempt of the current transaction wrote: even if it was declared read-only, its
    /// retries lock their reads.
    wrote: bool,
    /// This attempt reads optimistically (no read locks).
    optimistic: bool,
    reads: ReadSet<'db, PlorLock<WORDS>, ReadMode>,
    writes: WriteSet<'db, PlorLock<WORDS>, WriteState>,
    /// Commit phase 1 progress: write set sorted (DWA), entries before `next` done.
    sorted: bool,
    next: usize,
}

impl<const WORDS: usize> PlorWorker<'_, WORDS> {
    /// The current attempt's identity (tests).
    pub fn ident(&self) -> CtxWord {
        self.req.me
    }

    /// Whether the attempt holds a reader bit or a write lock (that another transaction may be
    /// waiting for).
    fn holds_lock(&self) -> bool {
        self.reads.iter().any(|(_, m)| *m == ReadMode::Locked)
            || self.writes.entries().iter().any(|e| e.state.owned)
    }

    /// Whether the current attempt reads optimistically (tests).
    pub fn is_optimistic(&self) -> bool {
        self.optimistic
    }
}

impl<const WORDS: usize> PlorOf<WORDS> {
    /// `POLLONCE`: `Err` if another transaction wounded this attempt.
    #[inline]
    fn poll_once(&self, w: &PlorWorker<'_, WORDS>) -> Result<(), Abort> {
        if self.ctx.is_aborted(w.req.id) {
            Err(Abort::Wounded)
        } else {
            Ok(())
        }
    }

    /// The attempt is about to write: if it read optimistically, lock every record it read and
    /// check each is unchanged (module docs, read-only transactions).
    fn start_writing(&self, w: &mut PlorWorker<'_, WORDS>) -> Result<(), Abort> {
        w.wrote = true;
        if !w.optimistic {
            return Ok(());
        }
        w.optimistic = false;
        let id = w.req.id;
        for (rec, mode) in w.reads.iter_mut() {
            if let ReadMode::Optimistic(seen) = *mode {
                match lock_after_read(rec.meta(), id, seen) {
                    Ok(()) => *mode = ReadMode::Locked,
                    Err(e @ LockAfterRead::Stale) => {
                        *mode = ReadMode::Locked;
                        return Err(e.abort());
                    }
                    Err(e @ LockAfterRead::Refused) => return Err(e.abort()),
                }
            }
        }
        Ok(())
    }

    /// The commit priority of a transaction that arrived at `arrival` and accesses `records`
    /// records: the arrival, or the deadline `A + SF x R`.
    fn priority(&self, arrival: u64, records: u32) -> u64 {
        match self.opts.priority {
            PlorPriority::Arrival => arrival,
            PlorPriority::Deadline => {
                let slack = (self.opts.slack * f64::from(records)).round() as u64;
                arrival.saturating_add(slack)
            }
        }
    }
}

impl<const WORDS: usize> Protocol for PlorOf<WORDS> {
    type RecordMeta = PlorLock<WORDS>;
    type Worker<'db> = PlorWorker<'db, WORDS>;
    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, id: usize) -> PlorWorker<'db, WORDS> {
        PlorWorker {
            req: Requester {
                id,
                me: CtxWord::running(id, 0),
                waiting_on: None,
            },
            arrival: 0,
            priority: 0,
            accessed: 0,
            last_accessed: 0,
            aborts: 0,
            wrote: false,
            optimistic: false,
            reads: ReadSet::default(),
            writes: WriteSet::default(),
            sorted: false,
            next: 0,
        }
    }

    fn begin(&self, w: &mut PlorWorker<'_, WORDS>, start: AttemptStart) {
        debug_assert!(w.reads.is_empty() && w.writes.is_empty() && w.req.waiting_on.is_none());
        // `last_accessed` is the worker's previous attempt: on a first attempt the previous
        // transaction's last one (an estimate of `R`), on the first retry this transaction's first
        // attempt. The deadline fixed then is kept, so it does not drift with later attempts that
        // stop at a different point.
        if start.retry {
            w.aborts = w.aborts.saturating_add(1);
            if w.aborts == 1 {
                w.priority = self.priority(w.arrival, w.last_accessed);
            }
        } else {
            w.arrival = self.ctx.arrive();
            w.priority = self.priority(w.arrival, w.last_accessed);
            w.aborts = 0;
            w.wrote = false;
        }
        w.req.me = self.ctx.begin(w.req.id, w.priority);
        // Only a transaction declared read-only reads optimistically (PLOR 4.1.3): a read-write
        // one locks its reads from the first attempt, so that a younger writer waits for (or is
        // wounded by) it instead of invalidating its reads and aborting it at its first write.
        w.optimistic = start.read_only && !w.wrote && w.aborts < self.opts.ro_threshold;
        w.accessed = 0;
        w.sorted = false;
        w.next = 0;
    }

    fn read<'db>(
        &self,
        w: &mut PlorWorker<'db, WORDS>,
        rec: Record<'db, PlorLock<WORDS>>,
        out: &mut [u8],
    ) -> OpResult {
        self.poll_once(w)?;
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        match w.reads.find(&rec) {
            Some(ReadMode::Locked) => {
                rec.payload.load(out);
                return Poll::Ready(Ok(()));
            }
            Some(&ReadMode::Optimistic(seen)) => {
                let now = ready!(optimistic_read(&rec, out));
                return Poll::Ready(if now == seen {
                    Ok(())
                } else {
                    Err(Abort::ReadValidation)
                });
            }
            None => {}
        }
        if w.optimistic {
            let seen = ready!(optimistic_read(&rec, out));
            w.reads.push(rec, ReadMode::Optimistic(seen));
        } else {
            ready!(locked_read(&self.ctx, &mut w.req, &rec, out))?;
            w.reads.push(rec, ReadMode::Locked);
        }
        w.accessed += 1;
        Poll::Ready(Ok(()))
    }

    /// The read-only path's seqlock copy against the install counter and `EXCL`
    /// (`optimistic_read`), not entered in the read set, so never validated and never locked.
    /// Readers here already ignore write locks (writes are buffered until phase 3); what an RC read
    /// must not see is a half-done install, and installs happen only in exclusive mode, which the
    /// seqlock detects. A brief read lock would work too, but its bit is visible: a committer
    /// entering exclusive mode would wound this attempt for a read it never needed to protect.
    ///
    /// While a committer holds the record exclusively the read waits. If the attempt holds a lock
    /// (a reader bit or the write lock), that committer may be waiting for it, so it waits the way
    /// a refused locked read does: wounds a younger committer and registers as a waiter (cleared
    /// when the read completes, or by the abort). An attempt holding nothing just waits.
    fn read_committed<'db>(
        &self,
        w: &mut PlorWorker<'db, WORDS>,
        rec: Record<'db, PlorLock<WORDS>>,
        out: &mut [u8],
    ) -> OpResult {
        self.poll_once(w)?;
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        if w.reads.find(&rec) == Some(&ReadMode::Locked) {
            // Stable: an installer waits for our bit to clear.
            rec.payload.load(out);
            return Poll::Ready(Ok(()));
        }
        if optimistic_read(&rec, out).is_ready() {
            w.req.stop_waiting();
            // Counts towards the deadline's `R` like any access; not deduplicated (an RC read
            // leaves no entry to find), so a re-read counts again: `R` is an estimate anyway.
            w.accessed += 1;
            return Poll::Ready(Ok(()));
        }
        if w.holds_lock() {
            let lock = rec.meta();
            let owner = lock.owner();
            if owner != 0 && lock.is_exclusive() {
                let owner = CtxWord::from_raw(owner);
                if w.req.me.is_older_than(owner) {
                    self.ctx.wound(owner);
                }
                // The executor parks at once if the committer is away (`crate::on_cpu`).
                crate::on_cpu::note_holder(owner.wid());
            }
            w.req.register(lock);
        }
        Poll::Pending
    }

    fn read_for_update<'db>(
        &self,
        w: &mut PlorWorker<'db, WORDS>,
        rec: Record<'db, PlorLock<WORDS>>,
        out: &mut [u8],
    ) -> OpResult {
        self.poll_once(w)?;
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        self.start_writing(w)?;
        if self.opts.dwa {
            // Read lock now, upgrade at commit; the write that follows buffers without a lock.
            return self.read(w, rec, out);
        }
        ready!(w.req.acquire(&self.ctx, rec.meta()))?;
        // Stable: only the write-lock owner installs, and that is us.
        rec.payload.load(out);
        if w.reads.find(&rec).is_none() {
            w.accessed += 1;
        }
        let state = WriteState {
            owned: true,
            exclusive: false,
        };
        w.writes.put(rec, WriteKind::ReadModifyWrite, out, state);
        Poll::Ready(Ok(()))
    }

    fn write<'db>(
        &self,
        w: &mut PlorWorker<'db, WORDS>,
        rec: Record<'db, PlorLock<WORDS>>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        self.poll_once(w)?;
        self.start_writing(w)?;
        if w.writes.position(&rec).is_some() {
            // `put` replaces the payload and keeps the entry's lock state.
            w.writes.put(rec, kind, data, WriteState::default());
            return Poll::Ready(Ok(()));
        }
        let owned = if self.opts.dwa {
            false
        } else {
            ready!(w.req.acquire(&self.ctx, rec.meta()))?;
            true
        };
        if w.reads.find(&rec).is_none() {
            w.accessed += 1;
        }
        let state = WriteState {
            owned,
            exclusive: false,
        };
        w.writes.put(rec, kind, data, state);
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut PlorWorker<'_, WORDS>) -> OpResult {
        commit::commit(self, w)
    }

    fn abort(&self, w: &mut PlorWorker<'_, WORDS>, _why: Abort) {
        commit::release_all(w);
    }

    fn install_log<'w>(
        &self,
        w: &'w mut PlorWorker<'_, WORDS>,
    ) -> &'w mut crate::protocol::InstallLog {
        w.writes.install_log()
    }
}

/// PLOR's liveness (4.1.3) rests on state a retry finds on its worker: the priority drawn at the
/// first attempt, and a declared read-only transaction's count of optimistic aborts, after
/// `ro_threshold` of which it locks its reads. So under the coroutine executor every retried
/// abort reruns in place (SGPM's RR) rather than moving to the global queue (ML, the default for
/// a validation abort): a moved transaction starts over on another slot's worker as a first
/// attempt, with a new priority and its abort count at zero, and a read-only transaction could
/// then abort on validation without end (`tests/plor_starvation.rs` measured worst cases of
/// 19-24 attempts against about 5 before this).
impl<const WORDS: usize> RunHooks for PlorOf<WORDS> {
    fn signal(&self, why: Abort) -> Signal {
        match Signal::for_abort(why) {
            Signal::Ml | Signal::Sf => Signal::Rr,
            other => other,
        }
    }
}
