//! DecentSched (paper 003, section III): abort-free scheduling of transactions with declared
//! access sets, without a central scheduler.
//!
//! A transaction goes through five phases (the paper's figure 7 stages):
//!
//! 1. **Queueing**: it pushes one entry `{tid, R/W}` on the queue of every object it declared
//!    (`queues.rs`; objects hash onto `--ds-queues` shared queues, and two objects of one
//!    transaction in one queue share one entry, a read and a write becoming a write).
//! 2. **Dependency discovery**: it walks each of its queues from its own entry towards older
//!    ones; every unfinished conflicting transaction ahead of it is a direct dependency (III-B2,
//!    algorithm 2). It then marks itself ready and searches the direct sets of its dependencies
//!    recursively (depth first), waiting for each visited transaction to be ready, collecting the
//!    unfinished ones as indirect dependencies (algorithm 3). Retired transactions end a queue
//!    walk and are not searched from (III-B5).
//! 3. **Waiting** (the scheduling rules, algorithm 4): for each dependency `d` that conflicts
//!    directly with it in either direction, a transaction with a higher id than `d` waits for
//!    `d` to finish; one with a lower id waits until `d` finishes or has it in its dependencies
//!    (then `d` waits for it). Two transactions that are not each other's direct dependency do
//!    not conflict and do not wait for each other (figure 4).
//! 4. **Executing**: the program reads in place (nothing that conflicts runs concurrently) and
//!    buffers its writes.
//! 5. **Committing**: it installs the writes and sets its finished flag (Release: a transaction
//!    that waited for it sees its installs).
//!
//! **Opportunistic execution** (`--ds-opportunistic`, III-D4): when the rules say wait, the
//! program runs at once instead, ahead of its place ("speculating"): each read is a consistent
//! copy under the record's version word (`version.rs`) and remembers that version, writes are
//! buffered. Its commit then waits for the rules; once they let it run, the transaction holds
//! its place exactly as if it were about to execute, and if no record it read was installed
//! since it read it, its reads are what an execution now would read, so it installs its buffered
//! writes directly. Otherwise the attempt ends with [`Abort::Reexecute`] and the program runs
//! again in place, scheduled, reading in place (it cannot fail twice). Every install bumps the
//! versions of the records it writes. A re-execution is not an abort: the executor retries at
//! once and reports count it in their own column.
//!
//! A workload's own abort (TPC-C's rolled-back New-Order) decided while speculating may rest
//! on stale reads, so it is confirmed like a commit ([`DeclaredSet::confirm_user_abort`], which
//! both executors call before taking a user abort): at its turn, if everything it read is
//! unchanged the abort stands, and otherwise the program re-executes in place and decides
//! again. A user abort is then always what a run in the schedule's order would decide, for
//! workloads whose rollbacks depend on what they read as well as for TPC-C, whose decision
//! depends only on the request's input.
//!
//! Every wait returns `Pending` from [`DeclaredSet::schedule`] (the executor yields between polls):
//! nothing spins, so more workers than cores cannot livelock it. Transaction ids are
//! thread-local and restart every epoch; the transaction table and the queue entries are reused
//! every epoch (`epoch.rs`, `txns.rs`).

mod epoch;
mod queues;
#[cfg(test)]
mod tests;
mod txns;
mod version;

use super::in_place::{InPlaceWorker, in_place_operations};
#[cfg(test)]
use super::mutants::Mutant;
use super::parts::{DeclaredSet, DeclaredSetPart, RunHooks, RunHooksPart};
use super::{
    Abort, AccessMode, AttemptStart, DeclaredRecord, OpResult, Protocol, ProtocolOptions, ReadSet,
    WriteSet,
};
use crate::storage::Record;
use epoch::Epochs;
use queues::{Arena, Entry, Queues};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Instant;
use txns::{Set, TxnTable};
pub use version::ObjectVersion;

/// DecentSched's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DecentSchedOptions {
    /// Shared queues objects are hashed onto (`--ds-queues`).
    pub queues: usize,
    /// Transactions a worker may run in one epoch (`--ds-epoch-txns`).
    pub epoch_txns: usize,
    /// Longest epoch, in microseconds (`--ds-epoch-us`).
    pub epoch_us: u64,
    /// Opportunistic execution (`--ds-opportunistic`): run the program while waiting for the
    /// schedule, and re-execute it in place when what it read changed.
    pub opportunistic: bool,
}

impl Default for DecentSchedOptions {
    fn default() -> Self {
        DecentSchedOptions {
            queues: 16_384,
            epoch_txns: 1024,
            epoch_us: 1000,
            opportunistic: false,
        }
    }
}

/// Queue entries a worker's arena holds per epoch, per transaction it may run (beyond one
/// transaction touching every queue, which always fits).
const ENTRIES_PER_TXN: usize = 64;

/// Largest transaction table configuration accepts (bytes), see `TxnTable::bytes`.
pub const MAX_TABLE_BYTES: usize = 1 << 30;

/// The bytes of DecentSched's transaction table for `threads` workers and `epoch_txns`.
pub fn table_bytes(threads: usize, epoch_txns: usize) -> usize {
    TxnTable::bytes(threads, epoch_txns)
}

/// The DecentSched protocol.
pub struct DecentSched {
    queues: Queues,
    table: TxnTable,
    epochs: Epochs,
    arenas: Box<[Arena]>,
    workers: usize,
    epoch_txns: usize,
    /// `--ds-opportunistic`.
    opportunistic: bool,
    /// Nanoseconds spent in each [`STAGES`] stage, all workers (added when a worker stops), and
    /// the transactions they cover.
    stage_ns: [AtomicU64; 5],
    timed_txns: AtomicU64,
    /// Opportunistic execution, all workers (added when a worker stops): attempts that ran
    /// ahead of their place, and those of them that committed without re-executing.
    speculated: AtomicU64,
    speculations_committed: AtomicU64,
    #[cfg(test)]
    mutant: Mutant,
    /// Test instrumentation: transactions executing now, and executions that began while
    /// another was executing (real parallelism, `tests.rs`).
    #[cfg(test)]
    executing: std::sync::atomic::AtomicUsize,
    #[cfg(test)]
    overlaps: std::sync::atomic::AtomicU64,
}

impl DecentSched {
    /// DecentSched for `options.threads` workers.
    pub fn new(options: &ProtocolOptions) -> Self {
        let o = options.decentsched;
        let workers = options.threads.max(1);
        let epoch_txns = o.epoch_txns.max(1);
        let queues = Queues::new(o.queues);
        let per_worker = epoch_txns * ENTRIES_PER_TXN + queues.len();
        DecentSched {
            table: TxnTable::new(workers, epoch_txns),
            epochs: Epochs::new(o.epoch_us),
            arenas: (0..workers).map(|_| Arena::new(per_worker)).collect(),
            queues,
            workers,
            epoch_txns,
            opportunistic: o.opportunistic,
            stage_ns: Default::default(),
            timed_txns: AtomicU64::new(0),
            speculated: AtomicU64::new(0),
            speculations_committed: AtomicU64::new(0),
            #[cfg(test)]
            mutant: Mutant::None,
            #[cfg(test)]
            executing: std::sync::atomic::AtomicUsize::new(0),
            #[cfg(test)]
            overlaps: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The same protocol with a deliberate bug (`protocol::mutants`).
    #[cfg(test)]
    pub(crate) fn with_mutant(mut self, mutant: Mutant) -> Self {
        self.mutant = mutant;
        self.epochs.completes_one_short = mutant == Mutant::DecentSchedClearQueuesWhileLive;
        self
    }

    /// Whether a transaction waits for a conflicting dependency with a lower id to finish (the
    /// rule; a mutant breaks it).
    #[inline]
    fn higher_id_waits(&self) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::DecentSchedHigherIdRunsAhead {
            return false;
        }
        true
    }

    /// Whether an access of ours in `mine` and one of another transaction in `theirs` to the
    /// same queue conflict.
    #[inline]
    fn conflict(&self, mine: AccessMode, theirs: AccessMode) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::DecentSchedOnlyWritesConflict {
            return mine == AccessMode::Write && theirs == AccessMode::Write;
        }
        mine.conflicts_with(theirs)
    }

    /// Whether installs bump the records' versions (the rule; a mutant skips it).
    #[inline]
    fn versions_installs(&self) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::DecentSchedInstallWithoutVersion {
            return false;
        }
        true
    }

    /// Whether the dependency search waits for a visited transaction's direct set to be
    /// complete (its ready flag) before reading it (the rule; a mutant reads it as it is).
    #[inline]
    fn search_waits_for_ready(&self) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::DecentSchedSkipReadyWait {
            return false;
        }
        true
    }

    /// Whether `tid` ends a queue walk and is left out of the search: retired (the rule,
    /// III-B5: it and everything its sets and its queues hold ahead of it finished); a mutant
    /// prunes as soon as `tid` itself finished, though what it depended on may still run.
    #[inline]
    fn pruned(&self, tid: u64) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::DecentSchedPruneAtFinished {
            return self.table.is_finished(tid);
        }
        self.table.retire_if_done(tid)
    }

    /// Whether a speculative attempt whose reads changed re-executes (the rule; a mutant
    /// commits it anyway).
    #[inline]
    fn reexecutes_stale_speculation(&self) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::DecentSchedSkipReexecution {
            return false;
        }
        true
    }
}

/// The paper's figure 7 stages, as [`RunHooks::stats`] names them: queueing (pushing entries,
/// from the first `schedule` poll, epoch barrier included), dependency discovery (direct and
/// indirect, waits for ready flags included), waiting (the scheduling rules), executing (the
/// program) and committing (installs and the finished flag).
const STAGES: [&str; 5] = [
    "queueing_us_per_txn",
    "discovery_us_per_txn",
    "waiting_us_per_txn",
    "executing_us_per_txn",
    "committing_us_per_txn",
];

/// Where a worker's transaction is in scheduling (`schedule` resumes from here after `Pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No transaction in flight: the next `schedule` starts one.
    Idle,
    /// Waiting at the barrier ending this epoch.
    Barrier(u64),
    /// Queued: discover direct dependencies next.
    Queued,
    /// Searching indirect dependencies (the stack is in the worker).
    Searching,
    /// Applying the scheduling rules to dependency `deps[at]`.
    Waiting,
    /// Scheduled: the program runs.
    Running,
    /// Opportunistic execution: the program runs before the rules let it (its commit waits).
    Speculating,
    /// The speculative program ended: its commit applies the scheduling rules (`deps[at]`).
    Validating,
}

/// A DecentSched worker.
pub struct DecentSchedWorker<'db> {
    p: &'db DecentSched,
    id: usize,
    arena: &'db Arena,
    epoch: u64,
    /// Transactions started in this epoch.
    started: usize,
    /// Arena entries used in this epoch.
    used: usize,
    tid: u64,
    stage: Stage,
    /// The transaction's queues and access types (merged per queue), then its entries.
    queued: Vec<(u32, AccessMode)>,
    entries: Vec<&'db Entry>,
    /// Dependency search: transactions to visit, transactions visited.
    stack: Vec<u64>,
    visited: Vec<u64>,
    /// Scheduling: dependencies, and the one being waited on.
    deps: Vec<u64>,
    at: usize,
    writes: WriteSet<'db, ObjectVersion, ()>,
    /// Opportunistic execution: what the speculative attempt read, with the version it saw.
    reads: ReadSet<'db, ObjectVersion, u64>,
    /// Opportunistic execution: attempts that speculated, and those that committed so.
    speculated: u64,
    speculations_committed: u64,
    /// It is not registered at the epoch barrier now: it stopped ([`RunHooks::stop_worker`]),
    /// or is away between transactions ([`RunHooks::worker_away`]).
    left: bool,
    /// Stage timing: when the current stage began (`None` before a transaction's first poll),
    /// nanoseconds per stage, and transactions timed.
    mark: Option<Instant>,
    stage_ns: [u64; 5],
    timed_txns: u64,
}

impl<'db> InPlaceWorker<'db, ObjectVersion> for DecentSchedWorker<'db> {
    #[inline]
    fn writes(&mut self) -> &mut WriteSet<'db, ObjectVersion, ()> {
        &mut self.writes
    }
}

impl Drop for DecentSchedWorker<'_> {
    /// A stopping worker leaves the epoch barrier (unless it left when it stopped), so the
    /// others never wait for it, and adds its stage times to the protocol's.
    fn drop(&mut self) {
        if !self.left {
            self.p.epochs.leave(&self.p.queues);
        }
        for (total, mine) in self.p.stage_ns.iter().zip(self.stage_ns) {
            // Relaxed: totals read after every worker was joined.
            total.fetch_add(mine, Ordering::Relaxed);
        }
        // Relaxed: as above.
        self.p
            .timed_txns
            .fetch_add(self.timed_txns, Ordering::Relaxed);
        // Relaxed: as above.
        self.p
            .speculated
            .fetch_add(self.speculated, Ordering::Relaxed);
        // Relaxed: as above.
        self.p
            .speculations_committed
            .fetch_add(self.speculations_committed, Ordering::Relaxed);
    }
}

impl<'db> DecentSchedWorker<'db> {
    /// Ends stage `i` of [`STAGES`] now and starts the next.
    #[inline]
    fn end_stage(&mut self, i: usize) {
        let now = Instant::now();
        if let Some(began) = self.mark.replace(now) {
            self.stage_ns[i] += (now - began).as_nanos() as u64;
        }
    }

    /// Phase 1: epoch bookkeeping, then one entry per queue of the declared set. Returns false
    /// when the worker must wait at the epoch barrier first.
    fn enqueue(&mut self, set: &[DeclaredRecord<'db, ObjectVersion>]) -> bool {
        let p = self.p;
        self.queued.clear();
        self.queued
            .extend(set.iter().map(|d| (p.queues.queue_of(d.key()), d.mode)));
        // Queue sharing: one entry per queue, the strongest mode (writes sort last).
        self.queued.sort_unstable();
        self.queued.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = kept.1.max(later.1);
            }
            same
        });
        // At most two rounds: after a barrier the worker's epoch is fresh, and its time limit
        // is only looked at once the worker ran a transaction in it.
        loop {
            let now = p.epochs.current();
            if now != self.epoch {
                self.epoch = now;
                self.started = 0;
                self.used = 0;
            }
            let full = self.started >= p.epoch_txns
                || self.used + self.queued.len() > self.arena.capacity();
            if !p.epochs.should_close(full, self.started > 0) {
                break;
            }
            if !p.epochs.arrive(self.epoch, &p.queues) {
                self.stage = Stage::Barrier(self.epoch);
                return false;
            }
        }
        self.tid = (self.started * p.workers + self.id) as u64;
        self.started += 1;
        p.table.reset(self.tid);
        self.entries.clear();
        for &(q, mode) in &self.queued {
            let entry = self.arena.entry(self.used);
            self.used += 1;
            p.queues.push(q, entry, self.tid, mode);
            self.entries.push(entry);
        }
        self.stage = Stage::Queued;
        true
    }

    /// Phase 2a: direct dependencies (algorithm 2), and the unfinished transactions ahead.
    fn discover_direct(&mut self) {
        let (p, tid) = (self.p, self.tid);
        self.stack.clear();
        self.visited.clear();
        for (i, entry) in self.entries.iter().enumerate() {
            let mine = self.queued[i].1;
            let mut ahead = entry.next();
            while let Some(e) = ahead {
                let other = e.tid();
                if p.pruned(other) {
                    break; // everything further ahead has finished
                }
                let conflict = p.conflict(mine, e.mode());
                if !p.table.is_finished(other) {
                    p.table.add(tid, Set::Ahead, other);
                    if conflict {
                        p.table.add(tid, Set::Direct, other);
                    }
                }
                if conflict {
                    // Searched from even when finished (not retired): its dependencies may
                    // still be live (III-B5).
                    self.stack.push(other);
                }
                ahead = e.next();
            }
        }
        p.table.set_ready(tid);
        // Searchers waiting for us to be ready may be parked.
        super::wake::wake_waiters();
        self.stage = Stage::Searching;
    }

    /// Phase 2b: indirect dependencies (algorithm 3), depth first; `false` when a visited
    /// transaction is not ready yet.
    fn discover_indirect(&mut self) -> bool {
        let (p, tid) = (self.p, self.tid);
        while let Some(&v) = self.stack.last() {
            if v == tid || self.visited.contains(&v) || p.pruned(v) {
                self.stack.pop();
                continue;
            }
            if !p.table.is_ready(v) && p.search_waits_for_ready() {
                return false;
            }
            self.stack.pop();
            self.visited.push(v);
            if !p.table.is_finished(v) && !p.table.contains(tid, Set::Direct, v) {
                p.table.add(tid, Set::Indirect, v);
            }
            p.table.members(v, Set::Direct, &mut self.stack);
        }
        self.deps.clear();
        p.table.members(tid, Set::Direct, &mut self.deps);
        p.table.members(tid, Set::Indirect, &mut self.deps);
        // Our dependency sets are complete: a lower-id transaction waiting until we have it in
        // them (algorithm 4) may be parked.
        super::wake::wake_waiters();
        self.at = 0;
        self.stage = Stage::Waiting;
        true
    }

    /// Phase 3: the scheduling rules (algorithm 4); `false` while a rule says wait.
    fn wait_for_dependencies(&mut self) -> bool {
        let (p, tid) = (self.p, self.tid);
        while let Some(&d) = self.deps.get(self.at) {
            let t = &p.table;
            let conflicting = !t.is_finished(d)
                && (t.contains(tid, Set::Direct, d) || t.contains(d, Set::Direct, tid));
            let must_wait = conflicting
                && if tid > d {
                    p.higher_id_waits()
                } else {
                    !(t.contains(d, Set::Direct, tid) || t.contains(d, Set::Indirect, tid))
                };
            if must_wait {
                return false;
            }
            self.at += 1;
        }
        #[cfg(test)]
        {
            use std::sync::atomic::Ordering;
            if p.mutant == Mutant::DecentSchedSerial
                // Relaxed: test instrumentation; the real rules order the data.
                && p.executing.compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed).is_err()
            {
                return false;
            }
            if p.mutant != Mutant::DecentSchedSerial
                && p.executing.fetch_add(1, Ordering::Relaxed) > 0
            {
                p.overlaps.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.stage = Stage::Running;
        true
    }

    /// Whether every record the speculative attempt read is still at the version it saw (no
    /// install since; own writes were never read from the record).
    fn speculative_reads_current(&self) -> bool {
        self.reads
            .iter()
            .all(|(rec, seen)| rec.meta().current() == *seen)
    }

    /// Installs the buffered writes, bumping each record's version when speculative readers
    /// may be looking (opportunistic execution).
    fn install_writes(&mut self) {
        let versioned = self.p.opportunistic && self.p.versions_installs();
        for i in 0..self.writes.len() {
            let rec = self.writes.entries()[i].rec;
            if versioned {
                rec.meta().begin_install();
            }
            self.writes.install(i);
            if versioned {
                rec.meta().end_install();
            }
        }
    }

    /// Phase 5 (or a user abort): the transaction is over.
    fn finish(&mut self) {
        if matches!(
            self.stage,
            Stage::Queued
                | Stage::Searching
                | Stage::Waiting
                | Stage::Running
                | Stage::Speculating
                | Stage::Validating
        ) {
            #[cfg(test)]
            if self.stage == Stage::Running {
                // Relaxed: test instrumentation.
                self.p
                    .executing
                    .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            }
            self.p.table.set_finished(self.tid);
        }
        self.stage = Stage::Idle;
    }
}

impl Protocol for DecentSched {
    type RecordMeta = ObjectVersion;
    type Worker<'db> = DecentSchedWorker<'db>;

    const DECLARED_SET: Option<DeclaredSetPart<Self>> = Some(DeclaredSetPart::from_impl());
    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, id: usize) -> DecentSchedWorker<'db> {
        assert!(id < self.workers, "worker {id} of {}", self.workers);
        DecentSchedWorker {
            p: self,
            id,
            arena: &self.arenas[id],
            epoch: self.epochs.join(),
            started: 0,
            used: 0,
            tid: 0,
            stage: Stage::Idle,
            mark: None,
            stage_ns: [0; 5],
            timed_txns: 0,
            queued: Vec::new(),
            entries: Vec::new(),
            stack: Vec::new(),
            visited: Vec::new(),
            deps: Vec::new(),
            at: 0,
            writes: WriteSet::default(),
            reads: ReadSet::default(),
            speculated: 0,
            speculations_committed: 0,
            left: false,
        }
    }

    fn begin(&self, w: &mut DecentSchedWorker<'_>, _start: AttemptStart) {
        w.writes.clear();
        w.reads.clear();
    }

    /// In place: the scheduling rules keep every conflicting transaction out while this one
    /// runs (own buffered writes first). Speculating (opportunistic execution), a consistent
    /// copy whose version the commit validates; an install in progress makes it wait.
    #[inline]
    fn read<'db>(
        &self,
        w: &mut DecentSchedWorker<'db>,
        rec: Record<'db, ObjectVersion>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        if w.stage != Stage::Speculating {
            rec.payload.load(out);
            return Poll::Ready(Ok(()));
        }
        match rec.meta().read_stable(&rec.payload, out) {
            Some(version) => {
                w.reads.push(rec, version);
                Poll::Ready(Ok(()))
            }
            None => Poll::Pending,
        }
    }

    // `read_committed` is `read`: nothing conflicting runs concurrently anyway.
    in_place_operations!(read_committed, write, install_log);

    fn commit(&self, w: &mut DecentSchedWorker<'_>) -> OpResult {
        if w.stage == Stage::Speculating {
            w.end_stage(3);
            w.stage = Stage::Validating;
        }
        if w.stage == Stage::Validating {
            // The rules, as the schedule would have applied them (it sets `Running`).
            if !w.wait_for_dependencies() {
                return Poll::Pending;
            }
            w.end_stage(2);
            if !w.speculative_reads_current() && self.reexecutes_stale_speculation() {
                // Keeps its place (`Running`): the retry's schedule returns at once.
                return Poll::Ready(Err(Abort::Reexecute));
            }
            w.speculations_committed += 1;
        } else {
            w.end_stage(3);
        }
        w.install_writes();
        w.writes.clear();
        w.reads.clear();
        w.finish();
        w.end_stage(4);
        w.mark = None;
        w.timed_txns += 1;
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut DecentSchedWorker<'_>, why: Abort) {
        w.writes.clear();
        w.reads.clear();
        if why == Abort::Reexecute {
            // Still scheduled: the program runs again in place (module docs).
            return;
        }
        w.finish();
        w.mark = None;
    }
}

impl RunHooks for DecentSched {
    /// The stage breakdown (paper figure 7) in microseconds per committed transaction, and
    /// the epochs the run went through.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        // Relaxed: read after every worker was joined.
        let txns = self.timed_txns.load(Ordering::Relaxed).max(1) as f64;
        let mut out: Vec<(&'static str, f64)> = STAGES
            .iter()
            .zip(&self.stage_ns)
            // Relaxed: as above.
            .map(|(&name, ns)| (name, ns.load(Ordering::Relaxed) as f64 / txns / 1000.0))
            .collect();
        out.push(("epochs", self.epochs.current() as f64));
        if self.opportunistic {
            // Relaxed: as above.
            let speculated = self.speculated.load(Ordering::Relaxed);
            out.push(("speculative_executions", speculated as f64));
            // Relaxed: as above.
            let committed = self.speculations_committed.load(Ordering::Relaxed);
            out.push(("speculations_committed", committed as f64));
        }
        out
    }

    /// Leaves the epoch barrier: a coroutine slot that stopped must not hold back a barrier its
    /// thread's other slots (or other threads) wait at until the thread ends.
    fn stop_worker(&self, w: &mut DecentSchedWorker<'_>) {
        if !w.left {
            w.left = true;
            self.epochs.leave(&self.queues);
        }
    }

    /// An idle worker does not hold up the epoch barrier (it would until its next
    /// transaction: an idle interactive session, for good). An attempt that ended with
    /// [`Abort::Reexecute`] still holds its place in the queues, which conflicting
    /// transactions wait for: away, it finishes there (it installed nothing), and its retry
    /// queues again.
    const IDLE_WORKERS_HOLD_OTHERS: bool = true;

    fn worker_away(&self, w: &mut DecentSchedWorker<'_>) {
        debug_assert!(
            matches!(w.stage, Stage::Idle | Stage::Running),
            "away between attempts only"
        );
        w.finish();
        w.mark = None;
        self.stop_worker(w);
    }

    /// Registers at the barrier again; the next `schedule` catches up with the epoch (a new
    /// one resets its share), or joins the barrier that is closing it.
    fn worker_back(&self, w: &mut DecentSchedWorker<'_>) {
        if w.left {
            w.left = false;
            self.epochs.join();
        }
    }
}

impl DeclaredSet for DecentSched {
    fn schedule<'db>(
        &self,
        w: &mut DecentSchedWorker<'db>,
        set: &[DeclaredRecord<'db, ObjectVersion>],
    ) -> OpResult {
        loop {
            match w.stage {
                Stage::Idle => {
                    if w.mark.is_none() {
                        w.mark = Some(Instant::now());
                    }
                    if !w.enqueue(set) {
                        return Poll::Pending;
                    }
                    w.end_stage(0);
                }
                Stage::Barrier(epoch) => {
                    if self.epochs.current() == epoch {
                        return Poll::Pending;
                    }
                    w.stage = Stage::Idle;
                }
                Stage::Queued => w.discover_direct(),
                Stage::Searching => {
                    if !w.discover_indirect() {
                        return Poll::Pending;
                    }
                    w.end_stage(1);
                }
                Stage::Waiting => {
                    if !w.wait_for_dependencies() {
                        if self.opportunistic {
                            // Run ahead; the commit applies the rules (module docs).
                            w.stage = Stage::Speculating;
                            w.speculated += 1;
                            return Poll::Ready(Ok(()));
                        }
                        return Poll::Pending;
                    }
                    w.end_stage(2);
                }
                Stage::Running | Stage::Speculating => return Poll::Ready(Ok(())),
                Stage::Validating => unreachable!("schedule polled after the program ran"),
            }
        }
    }

    /// A program that ran ahead of its turn and then rolled itself back took that decision on
    /// reads that may have changed: like a commit, it waits for its turn, and unless its reads
    /// held it re-executes in place, where the program decides again (module docs). A program
    /// that ran in place read what a serial order gives: its abort stands.
    fn confirm_user_abort(&self, w: &mut DecentSchedWorker<'_>) -> OpResult {
        #[cfg(test)]
        if self.mutant == Mutant::DecentSchedUserAbortUnconfirmed {
            // The bug: every rollback stands at once, as the trait's default would have it.
            return Poll::Ready(Ok(()));
        }
        if w.stage == Stage::Speculating {
            w.end_stage(3);
            w.stage = Stage::Validating;
        }
        if w.stage != Stage::Validating {
            return Poll::Ready(Ok(()));
        }
        if !w.wait_for_dependencies() {
            return Poll::Pending;
        }
        w.end_stage(2);
        if !w.speculative_reads_current() && self.reexecutes_stale_speculation() {
            // Keeps its place (`Running`): the retry's schedule returns at once.
            return Poll::Ready(Err(Abort::Reexecute));
        }
        Poll::Ready(Ok(()))
    }
}
