//! Strict two-phase locking: NO_WAIT, WAIT_DIE and WOUND_WAIT (PLOR section 2.1, DBx1000 style).
//!
//! # Algorithm
//!
//! Every access locks the record before touching it, and every lock is held until the transaction
//! commits or aborts (strict 2PL, so the schedule is serializable and recoverable):
//!
//! - `read` takes a shared lock and copies the payload.
//! - `read_for_update` takes the exclusive lock directly, so a read-modify-write never upgrades
//!   (two RMWs of one hot record cannot deadlock on an upgrade).
//! - `write` (blind) takes the exclusive lock, or upgrades a shared lock the transaction holds.
//!   The new payload is buffered in the [`WriteSet`]; reads of a record the transaction wrote
//!   return the buffered bytes.
//! - `commit` installs the buffered payloads while holding their exclusive locks, then releases
//!   every lock (Release ordering publishes the installs); `abort` releases and discards.
//!
//! The variants differ only in what a requester does when the lock is held in a conflicting mode
//! ([`ConflictRule`], a type parameter, so the hot path has no per-operation flag):
//!
//! | variant     | requester older than holder | requester younger     | lock word          |
//! |-------------|-----------------------------|-----------------------|--------------------|
//! | NO_WAIT     | abort (`LockConflict`)      | abort (`LockConflict`)| [`CounterLock`]    |
//! | WAIT_DIE    | wait                        | abort (`Die`)         | [`OwnedLock`]      |
//! | WOUND_WAIT  | wound holder, wait          | wait                  | [`OwnedLock`]      |
//!
//! WAIT_DIE and WOUND_WAIT also register waiting requests in the record's waiter bitmap, and a
//! newcomer never takes a lock (even a compatible one) past an older registered waiter whose
//! request conflicts: WOUND_WAIT's newcomer waits behind it, so a released lock goes to the oldest
//! waiter; WAIT_DIE's newcomer dies, since it may not wait for an older transaction.
//!
//! Waiting is never a spin inside an operation: the operation returns `Poll::Pending`, the
//! executor re-polls it, and the re-poll re-checks everything (was this transaction wounded? is the
//! wait still allowed?). A lock request is only recorded in the read/write set once granted, so
//! repeating an operation after `Pending` is safe.
//!
//! # Read committed
//!
//! `read_committed` takes the shared lock for the copy only and releases it at once, so the value
//! is committed (exclusive holders install only at commit) and a writer can lock the record right
//! after. Releasing at once does not by itself make waiting safe: under strict 2PL the attempt
//! still holds its other locks, so two attempts holding exclusive locks and each reading the
//! other's record at read committed would wait for each other forever. Hence:
//!
//! - An attempt that holds no lock (the usual case: a read-only transaction reading only at read
//!   committed, like TPC-C Stock-Level) waits for a conflicting holder with `Pending`, without
//!   registering as a waiter: nobody waits for it, so it closes no cycle, and under every rule it
//!   neither aborts (NO_WAIT, WAIT_DIE) nor wounds a writer (WOUND_WAIT). It still defers to an
//!   older registered waiter, as any newcomer does.
//! - An attempt that holds a lock requests the shared lock through the rule's `acquire`, exactly
//!   as `read` would (NO_WAIT aborts, WAIT_DIE waits or dies, WOUND_WAIT wounds and waits), so the
//!   rule's deadlock freedom argument covers it; only the release comes early.
//!
//! # Invariants
//!
//! - A record is in the read set at most once, with the mode currently held; a write-set entry
//!   either took the exclusive lock itself (`owns_exclusive`) or relies on its read-set entry's
//!   exclusive lock. Each lock is released exactly once, at commit or abort.
//! - WAIT_DIE and WOUND_WAIT draw a timestamp from one global counter at a transaction's first
//!   attempt and keep it across retries, which makes them starvation-free.
//! - Their locks name holders and waiters by one bit per worker. A run with at most
//!   [`NARROW_2PL_WORKERS`] (64) workers uses one-word bitmaps (a 24-byte lock, [`WaitDie`],
//!   [`WoundWait`]); a run with more, such as the coroutine executor's threads x Q in-flight
//!   transactions, uses [`WIDE_WORDS`]-word bitmaps ([`WaitDieWide`], [`WoundWaitWide`]), up to
//!   [`MAX_WAITING_2PL_THREADS`] workers. The width is a type parameter chosen once per run, so a
//!   run with few workers pays nothing for the wide one. NO_WAIT's counter lock has no limit.

mod context;
mod counter_lock;
mod owned_lock;
mod rule;
mod wait_die;
mod waiters;
mod wound_wait;

#[cfg(test)]
mod tests;

pub use context::{ContextTable, ContextWord, Timestamp};
pub use counter_lock::{CounterLock, CounterLockWord};
pub use owned_lock::{Holders, OwnedLock};
pub use rule::{ConflictRule, Locker, NoWaitRule};
pub use wait_die::WaitDieRule;
pub use wound_wait::WoundWaitRule;

#[cfg(test)]
use super::mutants::Mutant;
use super::{Abort, OpResult, Protocol, ProtocolOptions, ReadSet, WriteKind, WriteSet};
use crate::storage::Record;
use std::task::{Poll, ready};

/// Most workers WAIT_DIE and WOUND_WAIT support (one bit per worker in each record's lock, in
/// [`WIDE_WORDS`] words).
pub const MAX_WAITING_2PL_THREADS: usize = OwnedLock::<WIDE_WORDS>::CAPACITY;

/// Most workers the one-word locks of [`WaitDie`] and [`WoundWait`] name; runs with more workers
/// use the wide variants (see [`needs_wide_locks`]).
pub const NARROW_2PL_WORKERS: usize = OwnedLock::<1>::CAPACITY;

/// Words in each bitmap of the wide locks: 16 x 64 = 1024 workers, the most a run may have
/// (`config::MAX_WORKERS`).
pub const WIDE_WORDS: usize = 16;

/// Whether a run of WAIT_DIE or WOUND_WAIT with `workers` workers needs the wide locks.
#[inline]
pub fn needs_wide_locks(workers: usize) -> bool {
    workers > NARROW_2PL_WORKERS
}

/// NO_WAIT: 2PL that aborts on any lock conflict.
pub type NoWait = TwoPl<NoWaitRule>;
/// WAIT_DIE: 2PL where an older requester waits and a younger one dies.
pub type WaitDie = TwoPl<WaitDieRule>;
/// WOUND_WAIT: 2PL where an older requester wounds a younger holder and a younger one waits.
pub type WoundWait = TwoPl<WoundWaitRule>;
/// WAIT_DIE for runs of more than [`NARROW_2PL_WORKERS`] workers.
pub type WaitDieWide = TwoPl<WaitDieRule<WIDE_WORDS>>;
/// WOUND_WAIT for runs of more than [`NARROW_2PL_WORKERS`] workers.
pub type WoundWaitWide = TwoPl<WoundWaitRule<WIDE_WORDS>>;

const _: () = assert!(std::mem::size_of::<OwnedLock>() <= 64);
const _: () = assert!(std::mem::size_of::<CounterLock>() <= 64);

/// A lock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// Read lock: compatible with other shared holders.
    Shared,
    /// Write lock: compatible with nobody.
    Exclusive,
}

impl LockMode {
    /// Whether a lock held (or wanted) in `self` mode conflicts with a request in `other` mode.
    #[inline]
    pub fn conflicts_with(self, other: LockMode) -> bool {
        self == LockMode::Exclusive || other == LockMode::Exclusive
    }
}

/// The protocol cannot run with this many workers (its locks name holders by one bit each).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "protocol {protocol} supports 1 <= threads <= {max} (one bit per worker in each lock); got {threads}"
)]
pub struct TooManyWorkers {
    /// The protocol's name.
    pub protocol: &'static str,
    /// Workers asked for.
    pub threads: usize,
    /// Most workers supported.
    pub max: usize,
}

impl TooManyWorkers {
    fn check(protocol: &'static str, threads: usize, max: usize) -> Result<(), TooManyWorkers> {
        if threads <= max {
            Ok(())
        } else {
            Err(TooManyWorkers {
                protocol,
                threads,
                max,
            })
        }
    }
}

/// Strict 2PL with conflict rule `R`. See the module docs.
pub struct TwoPl<R: ConflictRule> {
    rule: R,
    /// Mutation testing: the deliberate bug this instance runs with (`protocol::mutants`).
    #[cfg(test)]
    mutant: Mutant,
}

impl<R: ConflictRule> TwoPl<R> {
    /// A protocol instance for `opts.threads` workers; fails if the rule cannot name that many.
    pub fn new(opts: &ProtocolOptions) -> Result<Self, TooManyWorkers> {
        Ok(TwoPl {
            rule: R::new(opts.threads)?,
            #[cfg(test)]
            mutant: Mutant::None,
        })
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();
}

/// State a write-set entry keeps.
#[derive(Debug, Clone, Copy)]
pub struct WriteLock {
    /// The write took the exclusive lock itself (no read-set entry holds it), so commit and abort
    /// release it from here.
    owns_exclusive: bool,
}

/// A 2PL worker: its identity as a lock requester and the locks and writes of its attempt.
pub struct TwoPlWorker<'db, R: ConflictRule> {
    me: Locker<'db, R::Lock>,
    /// Records locked by reads (shared, or exclusive for `read_for_update` and upgrades).
    reads: ReadSet<'db, R::Lock, LockMode>,
    /// Buffered writes; every entry's record is exclusively locked by this worker.
    writes: WriteSet<'db, R::Lock, WriteLock>,
}

impl<'db, R: ConflictRule> TwoPlWorker<'db, R> {
    /// The mode this attempt holds `rec` in through its read set.
    fn read_lock(&self, rec: &Record<'db, R::Lock>) -> Option<LockMode> {
        self.reads.find(rec).copied()
    }

    /// Whether the attempt holds no lock at all (every read- and write-set entry holds one).
    fn holds_no_lock(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }

    fn set_read_lock(&mut self, rec: &Record<'db, R::Lock>, mode: LockMode) {
        if let Some(held) = self.reads.find_mut(rec) {
            *held = mode;
        }
    }
}

impl<R: ConflictRule> TwoPl<R> {
    /// Makes sure `w` holds `rec` exclusively, through its read set or as a new write lock.
    /// Returns whether the write itself owns the new lock. Safe to repeat after `Pending`.
    fn lock_exclusive<'db>(
        &self,
        w: &mut TwoPlWorker<'db, R>,
        rec: Record<'db, R::Lock>,
    ) -> Poll<Result<WriteLock, Abort>> {
        match w.read_lock(&rec) {
            Some(LockMode::Exclusive) => Poll::Ready(Ok(WriteLock {
                owns_exclusive: false,
            })),
            Some(LockMode::Shared) => {
                ready!(self.rule.acquire(
                    &mut w.me,
                    rec.meta(),
                    LockMode::Exclusive,
                    Some(LockMode::Shared)
                ))?;
                w.set_read_lock(&rec, LockMode::Exclusive);
                Poll::Ready(Ok(WriteLock {
                    owns_exclusive: false,
                }))
            }
            None => {
                ready!(
                    self.rule
                        .acquire(&mut w.me, rec.meta(), LockMode::Exclusive, None)
                )?;
                Poll::Ready(Ok(WriteLock {
                    owns_exclusive: true,
                }))
            }
        }
    }

    /// Releases every lock of the attempt and forgets its reads and writes.
    fn release_all(&self, w: &mut TwoPlWorker<'_, R>) {
        self.release_locks(w);
        w.reads.clear();
        w.writes.clear();
    }

    /// Releases every lock of the attempt, keeping its read and write sets.
    fn release_locks(&self, w: &mut TwoPlWorker<'_, R>) {
        for (rec, mode) in w.reads.iter() {
            self.rule.release(&w.me, rec.meta(), *mode);
        }
        for entry in w.writes.entries() {
            if entry.state.owns_exclusive {
                self.rule
                    .release(&w.me, entry.rec.meta(), LockMode::Exclusive);
            }
        }
    }
}

impl<R: ConflictRule> Protocol for TwoPl<R> {
    type RecordMeta = R::Lock;
    type Worker<'db> = TwoPlWorker<'db, R>;

    fn new_worker<'db>(&'db self, id: usize) -> TwoPlWorker<'db, R> {
        let me = Locker::new(id);
        #[cfg(test)]
        let me = Locker {
            mutant: self.mutant,
            ..me
        };
        TwoPlWorker {
            me,
            reads: ReadSet::default(),
            writes: WriteSet::default(),
        }
    }

    fn begin(&self, w: &mut TwoPlWorker<'_, R>, start: super::AttemptStart) {
        debug_assert!(w.reads.is_empty() && w.writes.is_empty());
        self.rule.begin(&mut w.me, start.retry);
    }

    fn read<'db>(
        &self,
        w: &mut TwoPlWorker<'db, R>,
        rec: Record<'db, R::Lock>,
        out: &mut [u8],
    ) -> OpResult {
        self.rule.check_alive(&w.me)?;
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        if w.read_lock(&rec).is_none() {
            ready!(
                self.rule
                    .acquire(&mut w.me, rec.meta(), LockMode::Shared, None)
            )?;
            #[cfg(test)]
            if self.mutant == Mutant::TwoPlReleaseReadLocksEarly {
                rec.payload.load(out);
                self.rule.release(&w.me, rec.meta(), LockMode::Shared);
                return Poll::Ready(Ok(()));
            }
            w.reads.push(rec, LockMode::Shared);
        }
        rec.payload.load(out);
        Poll::Ready(Ok(()))
    }

    /// A shared lock held for the copy only, never entered in the read set. How it waits depends
    /// on what the attempt holds (module docs, "Read committed"): an attempt holding no lock
    /// waits for the lock without registering, wounding or dying, since nobody can be waiting for
    /// it; one that holds locks must follow the rule's `acquire`, or two such readers could each
    /// wait for the other's exclusive lock.
    fn read_committed<'db>(
        &self,
        w: &mut TwoPlWorker<'db, R>,
        rec: Record<'db, R::Lock>,
        out: &mut [u8],
    ) -> OpResult {
        self.rule.check_alive(&w.me)?;
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        if w.read_lock(&rec).is_some() {
            // Held until commit anyway (and releasing it here would end a serializable read).
            rec.payload.load(out);
            return Poll::Ready(Ok(()));
        }
        if w.holds_no_lock() {
            if !self.rule.try_shared_now(&w.me, rec.meta()) {
                return Poll::Pending;
            }
        } else {
            // A `Pending` here registers as a waiter, as in `read`; the grant on a later poll
            // deregisters, or the abort does (`stop_waiting`).
            ready!(
                self.rule
                    .acquire(&mut w.me, rec.meta(), LockMode::Shared, None)
            )?;
        }
        rec.payload.load(out);
        self.rule.release(&w.me, rec.meta(), LockMode::Shared);
        Poll::Ready(Ok(()))
    }

    fn read_for_update<'db>(
        &self,
        w: &mut TwoPlWorker<'db, R>,
        rec: Record<'db, R::Lock>,
        out: &mut [u8],
    ) -> OpResult {
        self.rule.check_alive(&w.me)?;
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        let lock = ready!(self.lock_exclusive(w, rec))?;
        if lock.owns_exclusive {
            w.reads.push(rec, LockMode::Exclusive);
        }
        rec.payload.load(out);
        Poll::Ready(Ok(()))
    }

    fn write<'db>(
        &self,
        w: &mut TwoPlWorker<'db, R>,
        rec: Record<'db, R::Lock>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        self.rule.check_alive(&w.me)?;
        if w.writes.position(&rec).is_some() {
            // Already exclusively locked; `put` replaces the payload and keeps the lock state.
            w.writes.put(
                rec,
                kind,
                data,
                WriteLock {
                    owns_exclusive: false,
                },
            );
            return Poll::Ready(Ok(()));
        }
        #[cfg(test)]
        if self.mutant == Mutant::TwoPlBlindWriteWithoutLock
            && kind == WriteKind::Blind
            && w.read_lock(&rec).is_none()
        {
            let unlocked = WriteLock {
                owns_exclusive: false,
            };
            w.writes.put(rec, kind, data, unlocked);
            return Poll::Ready(Ok(()));
        }
        let lock = ready!(self.lock_exclusive(w, rec))?;
        w.writes.put(rec, kind, data, lock);
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut TwoPlWorker<'_, R>) -> OpResult {
        self.rule.start_commit(&w.me)?;
        #[cfg(test)]
        if self.mutant == Mutant::TwoPlUnlockBeforeInstall {
            self.release_locks(w);
            for i in 0..w.writes.len() {
                w.writes.install(i);
            }
            w.reads.clear();
            w.writes.clear();
            return Poll::Ready(Ok(()));
        }
        for i in 0..w.writes.len() {
            // Under this worker's exclusive lock; the Release in `release_all` publishes it.
            w.writes.install(i);
        }
        self.release_all(w);
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut TwoPlWorker<'_, R>, _why: Abort) {
        self.rule.stop_waiting(&mut w.me);
        self.release_all(w);
    }

    fn install_log<'w>(
        &self,
        w: &'w mut TwoPlWorker<'_, R>,
    ) -> &'w mut crate::protocol::InstallLog {
        w.writes.install_log()
    }
}
