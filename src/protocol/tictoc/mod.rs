//! TicToc: optimistic concurrency control with data-driven timestamps (Yu et al., SIGMOD 2016;
//! CCBench Section 2 and Table 1 for the optional optimizations).
//!
//! # Algorithm
//!
//! Every record carries a [`TsWord`]: a write lock, the write timestamp `wts` of its current
//! version, and its read timestamp `rts >= wts`: the version is known valid over `[wts, rts]`.
//! There is no global clock; a transaction computes its commit timestamp from the words it saw.
//!
//! 1. **Read** (module `read`): load the word (Acquire); if locked, return `Pending` (a writer is
//!    installing); copy the payload; reload the word behind an Acquire fence; if `wts` changed or
//!    the lock appeared, copy again (a few times, then `Pending`). Remember `(wts, rts)`. Reads of
//!    records in the transaction's own write set return the buffered data.
//!    A read-committed read (module `read`) makes the same copy but does not remember it: commit
//!    neither validates nor extends it.
//! 2. **Write**: buffer the new payload in the write set; no lock until commit.
//! 3. **Lock** (module `commit`): sort the write set by record (one global order, so waiting cannot
//!    deadlock) and set each lock bit by compare-and-swap. A busy lock means, by option:
//!    abort (`NoWait`, the default), return `Pending` keeping the prefix already locked (`Wait`),
//!    or release everything, pause and start locking again (`NoWaitTT`).
//! 4. **Commit timestamp**: `commit_ts = max(max over writes of (rts when locked) + 1,
//!    max over reads of wts)`.
//! 5. **Validate** each read whose remembered `rts < commit_ts`: the read is still valid if the
//!    record's `wts` is unchanged and its `rts` can be extended to `commit_ts`. Extension is a
//!    compare-and-swap that fails if another transaction locked the record in between; a record
//!    the transaction itself locked needs no extension (its install moves `wts` past it).
//!    A changed `wts` fails with [`Abort::ReadValidation`]; a record locked by another
//!    transaction whose `rts` is still below `commit_ts` fails with
//!    [`Abort::TimestampExtension`].
//! 6. **Install**: copy each payload while holding its lock, then store the word
//!    `wts = rts = commit_ts`, unlocked, with Release.
//!
//! # Invariants
//!
//! - Along a record's modification order `rts` never decreases, and every installed version has
//!   `wts` greater than the `rts` its writer saw when it locked. Hence a transaction that
//!   validated a read at `commit_ts` (saw, or made, `rts >= commit_ts`) is ordered before any
//!   later writer of that record: that writer's lock CAS reads the extended word.
//! - Only the lock holder changes a locked word; an extension CAS always expects an unlocked word.
//! - Committed transactions are serializable in `commit_ts` order, ties broken by physical commit
//!   order (a transaction reading a version at exactly its `wts` follows that version's writer).
//!
//! # Optional optimizations
//!
//! - `NoWaitTT`: on a busy lock release every lock, return `Pending` until a fixed pause
//!   ([`NOWAIT_TT_PAUSE`]) has passed, then lock again from the first record. It takes precedence
//!   over `lock_wait`.
//! - `PreemptiveAbort`: before locking, compute an approximate commit timestamp from the words as
//!   they are now; a read whose version has been replaced, or whose record is locked by another
//!   transaction with `rts` below that timestamp, cannot validate, so abort with
//!   [`Abort::Preemptive`] without taking any lock.
//! - `TimestampHistory`: each record also remembers the `wts` of the version its current version
//!   replaced, and the timestamp the current version was installed at ([`WtsHistory`]). A read of
//!   the immediately previous version still validates at `commit_ts` when
//!   `commit_ts < installed_wts`: that version was the current one at `commit_ts`.

mod commit;
mod read;
mod ts_word;

#[cfg(test)]
mod tests;

pub use ts_word::{AtomicTsWord, TsWord};

#[cfg(test)]
use super::mutants::Mutant;
use super::{Abort, LockWait, OpResult, Protocol, ProtocolOptions, ReadSet, WriteKind, WriteSet};
use crate::storage::Record;
use std::sync::atomic::AtomicU64;
use std::task::Poll;
use std::time::{Duration, Instant};

/// How long `NoWaitTT` pauses between releasing its locks and locking again (CCBench: 1 µs).
pub const NOWAIT_TT_PAUSE: Duration = Duration::from_micros(1);

/// TicToc's per-record metadata.
#[derive(Default)]
pub struct TicTocMeta {
    /// Lock, write timestamp and read timestamp of the current version.
    pub word: AtomicTsWord,
    /// TimestampHistory only: where the current version came from.
    pub history: WtsHistory,
}

/// What the last install of a record replaced (TimestampHistory). Written only by the lock holder
/// before it publishes the new word with Release; read behind the word like a seqlock.
#[derive(Default)]
pub struct WtsHistory {
    /// `wts` of the version the current version replaced (as its word read at that moment).
    pub prev_wts: AtomicU64,
    /// The commit timestamp the current version was installed at. Unlike the word's `wts`, it is
    /// never moved up by a delta-overflow shift, so it is the true end of the previous version.
    pub installed_wts: AtomicU64,
}

/// The TicToc protocol with its options.
#[derive(Debug, Clone)]
pub struct TicToc {
    lock_wait: LockWait,
    nowait_tt: bool,
    preemptive_abort: bool,
    timestamp_history: bool,
    /// Mutation testing: the deliberate bug this instance runs with (`protocol::mutants`).
    #[cfg(test)]
    mutant: Mutant,
}

impl TicToc {
    /// TicToc configured by `opts.lock_wait` and `opts.tictoc`.
    pub fn new(opts: &ProtocolOptions) -> Self {
        TicToc {
            lock_wait: opts.lock_wait,
            nowait_tt: opts.tictoc.nowait_tt,
            preemptive_abort: opts.tictoc.preemptive_abort,
            timestamp_history: opts.tictoc.timestamp_history,
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();
}

/// A TicToc worker: read and write sets, and how far its commit has progressed.
pub struct TicTocWorker<'db> {
    /// Each read with the word it saw (the version's `wts` and the `rts` known then).
    reads: ReadSet<'db, TicTocMeta, TsWord>,
    /// Buffered writes.
    writes: WriteSet<'db, TicTocMeta, ()>,
    /// Commit progress kept across `Pending` polls.
    commit: CommitProgress,
}

/// Where a commit stands, so that a commit polled again after `Pending` resumes where it stopped.
#[derive(Debug, Default)]
struct CommitProgress {
    /// The write set is sorted and the pre-lock checks (PreemptiveAbort) are done.
    started: bool,
    /// Write-set entries `0..locked` (sorted order) are locked by this worker.
    locked: usize,
    /// `max(rts + 1)` over the locked entries: the writes' lower bound on the commit timestamp.
    writes_ts: u64,
    /// NoWaitTT: locks were released on a busy lock; lock again from scratch after this instant.
    relock_after: Option<Instant>,
}

impl CommitProgress {
    fn reset(&mut self) {
        *self = CommitProgress::default();
    }
}

impl<'db> TicTocWorker<'db> {
    /// Releases every lock this attempt holds and forgets its commit progress.
    fn release_locks(&mut self) {
        for e in &self.writes.entries()[..self.commit.locked] {
            let word = &e.rec.meta().word;
            // Relaxed: only the lock holder changes a locked word, so this is our own last store.
            let held = word.load(std::sync::atomic::Ordering::Relaxed);
            debug_assert!(held.is_locked());
            // Release: pairs with the next locker's Acquire CAS. Nothing was written under this
            // lock, so this is only the conventional unlock ordering, free on x86.
            word.store(held.unlocked(), std::sync::atomic::Ordering::Release);
        }
        self.commit.reset();
    }

    /// Index of `rec` in the write set, which must already be sorted (commit phase).
    fn sorted_write_position(&self, rec: &Record<'db, TicTocMeta>) -> Option<usize> {
        let key = rec.order_key();
        self.writes
            .entries()
            .binary_search_by_key(&key, |e| e.rec.order_key())
            .ok()
    }
}

impl Protocol for TicToc {
    type RecordMeta = TicTocMeta;
    type Worker<'db> = TicTocWorker<'db>;

    fn new_worker<'db>(&'db self, _id: usize) -> TicTocWorker<'db> {
        TicTocWorker {
            reads: ReadSet::default(),
            writes: WriteSet::default(),
            commit: CommitProgress::default(),
        }
    }

    fn begin(&self, w: &mut TicTocWorker<'_>, _start: super::AttemptStart) {
        debug_assert_eq!(w.commit.locked, 0, "a new attempt holds no locks");
        w.reads.clear();
        w.writes.clear();
        w.commit.reset();
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut TicTocWorker<'db>,
        rec: Record<'db, TicTocMeta>,
        out: &mut [u8],
    ) -> OpResult {
        read::read(w, rec, out)
    }

    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut TicTocWorker<'db>,
        rec: Record<'db, TicTocMeta>,
        out: &mut [u8],
    ) -> OpResult {
        read::read_committed(w, rec, out)
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut TicTocWorker<'db>,
        rec: Record<'db, TicTocMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        w.writes.put(rec, kind, data, ());
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut TicTocWorker<'_>) -> OpResult {
        self.commit_attempt(w)
    }

    fn abort(&self, w: &mut TicTocWorker<'_>, _why: Abort) {
        w.release_locks();
        w.reads.clear();
        w.writes.clear();
    }

    fn install_log<'w>(&self, w: &'w mut TicTocWorker<'_>) -> &'w mut crate::protocol::InstallLog {
        w.writes.install_log()
    }
}
