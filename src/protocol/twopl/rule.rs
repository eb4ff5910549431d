//! What a 2PL variant decides: its lock type, and what a requester does on a conflict.
//!
//! [`TwoPl`](super::TwoPl) owns the read/write sets, buffering and strict release; a
//! [`ConflictRule`] owns the per-record lock and the deadlock-avoidance policy. NO_WAIT lives here
//! (it is a few lines); WAIT_DIE and WOUND_WAIT have their own files.

use super::context::Timestamp;
use super::counter_lock::CounterLock;
use super::{LockMode, TooManyWorkers};
use crate::protocol::{Abort, OpResult};
use std::task::Poll;

/// One worker's identity as a lock requester, and the request it waits on (if any).
pub struct Locker<'db, L> {
    /// Dense worker id (`0..threads`).
    pub id: usize,
    /// The current transaction's timestamp (unused by NO_WAIT).
    pub ts: Timestamp,
    /// The lock this worker is registered as waiting for (WOUND_WAIT), cleared when the request
    /// is granted or the attempt aborts.
    pub waiting_on: Option<&'db L>,
    /// Mutation testing: the protocol's deliberate bug, for the lock code (`protocol::mutants`).
    #[cfg(test)]
    pub(crate) mutant: crate::protocol::mutants::Mutant,
}

impl<L> Locker<'_, L> {
    /// A requester for worker `id` with no transaction yet.
    pub fn new(id: usize) -> Self {
        Locker {
            id,
            ts: Timestamp::default(),
            waiting_on: None,
            #[cfg(test)]
            mutant: crate::protocol::mutants::Mutant::None,
        }
    }
}

/// A 2PL variant's lock and conflict policy. Implemented by [`NoWaitRule`],
/// [`WaitDieRule`](super::WaitDieRule) and [`WoundWaitRule`](super::WoundWaitRule).
pub trait ConflictRule: Send + Sync + Sized + 'static {
    /// The per-record lock (the protocol's `RecordMeta`).
    type Lock: Default + Send + Sync + 'static;
    /// The protocol's name in errors.
    const NAME: &'static str;

    /// The shared state for `workers` workers, or an error if the lock cannot name that many.
    fn new(workers: usize) -> Result<Self, TooManyWorkers>;

    /// Starts an attempt (draws or keeps the timestamp).
    fn begin(&self, me: &mut Locker<'_, Self::Lock>, retry: bool);

    /// `Err` if the attempt must abort before its next operation (WOUND_WAIT: it was wounded).
    fn check_alive(&self, me: &Locker<'_, Self::Lock>) -> Result<(), Abort>;

    /// Requests `lock` in `want` mode while holding it in `held` (`Some(Shared)` = upgrade).
    /// `Pending` means "call again"; the rule remembers a registered wait in `me`.
    fn acquire<'db>(
        &self,
        me: &mut Locker<'db, Self::Lock>,
        lock: &'db Self::Lock,
        want: LockMode,
        held: Option<LockMode>,
    ) -> OpResult;

    /// Takes `lock` shared if that needs no wait, for a read-committed copy by an attempt that
    /// holds no lock; never registers as a waiter. A rule that makes newcomers defer to older
    /// waiters refuses here too, so brief readers cannot starve a waiting writer.
    fn try_shared_now(&self, me: &Locker<'_, Self::Lock>, lock: &Self::Lock) -> bool;

    /// Releases `lock`, held in `mode`.
    fn release(&self, me: &Locker<'_, Self::Lock>, lock: &Self::Lock, mode: LockMode);

    /// The attempt starts committing: after `Ok`, it can no longer be made to abort.
    fn start_commit(&self, me: &Locker<'_, Self::Lock>) -> Result<(), Abort>;

    /// Drops any waiter registration left by a `Pending` request (the attempt aborts).
    fn stop_waiting(&self, me: &mut Locker<'_, Self::Lock>);
}

/// NO_WAIT: any conflict aborts the requester at once. Deadlock-free because nobody waits;
/// needs no timestamps and no holder identities, so any number of workers.
#[derive(Debug, Default)]
pub struct NoWaitRule;

impl ConflictRule for NoWaitRule {
    type Lock = CounterLock;
    const NAME: &'static str = "no_wait";

    fn new(_workers: usize) -> Result<Self, TooManyWorkers> {
        Ok(NoWaitRule)
    }

    #[inline]
    fn begin(&self, _me: &mut Locker<'_, CounterLock>, _retry: bool) {}

    #[inline]
    fn check_alive(&self, _me: &Locker<'_, CounterLock>) -> Result<(), Abort> {
        Ok(())
    }

    #[inline]
    fn acquire<'db>(
        &self,
        _me: &mut Locker<'db, CounterLock>,
        lock: &'db CounterLock,
        want: LockMode,
        held: Option<LockMode>,
    ) -> OpResult {
        if lock.try_acquire(want, held) {
            Poll::Ready(Ok(()))
        } else {
            Poll::Ready(Err(Abort::LockConflict))
        }
    }

    #[inline]
    fn try_shared_now(&self, _me: &Locker<'_, CounterLock>, lock: &CounterLock) -> bool {
        lock.try_acquire(LockMode::Shared, None)
    }

    #[inline]
    fn release(&self, _me: &Locker<'_, CounterLock>, lock: &CounterLock, mode: LockMode) {
        lock.release(mode);
    }

    #[inline]
    fn start_commit(&self, _me: &Locker<'_, CounterLock>) -> Result<(), Abort> {
        Ok(())
    }

    #[inline]
    fn stop_waiting(&self, _me: &mut Locker<'_, CounterLock>) {}
}
