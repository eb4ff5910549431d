//! WOUND_WAIT (PLOR 2.1): an older requester wounds younger conflicting holders and waits for them
//! to release; a younger requester waits. A released lock goes to the oldest waiter.
//!
//! - Wound: a CAS on the victim's [`ContextWord`](super::context::ContextWord) that sets `WOUNDED`
//!   only if the victim still runs the timestamp the wounder compared against and has not started
//!   committing. The victim sees the bit at its next operation or poll (also while it waits) and
//!   aborts, which releases its locks.
//! - Commit: the transaction sets `COMMITTING` by a CAS that fails if it was wounded first; after
//!   that it only installs and releases, never waits, so an older transaction waiting for it is
//!   never stuck.
//! - Oldest waiter first: a waiting requester registers in the record's waiter bitmap and publishes
//!   the mode it wants in its context word. A requester that finds a registered older waiter whose
//!   request conflicts with its own does not take the lock (even a free one): it registers and
//!   waits too. So when holders release, only the oldest conflicting waiter can take the lock.
//!
//! Deadlock freedom: a younger transaction may wait for an older one (holder or registered waiter);
//! an older one waits for a younger holder only after wounding it, and a wounded transaction
//! aborts at its next poll unless it is committing, which never waits. So every cycle of waits is
//! broken. Starvation freedom: retries keep their timestamp, so a transaction eventually is the
//! oldest, and the oldest is never wounded and never defers.

use super::context::ContextTable;
use super::owned_lock::OwnedLock;
use super::rule::{ConflictRule, Locker};
use super::waiters;
use super::{LockMode, TooManyWorkers};
use crate::on_cpu;
use crate::protocol::{Abort, OpResult};
use std::task::Poll;

/// WOUND_WAIT's shared state: every worker's timestamp, status and wanted mode.
pub struct WoundWaitRule<const WORDS: usize = 1> {
    ctx: ContextTable,
}

impl<const WORDS: usize> WoundWaitRule<WORDS> {
    /// The context table (tests wound workers directly).
    #[cfg(test)]
    pub(super) fn ctx(&self) -> &ContextTable {
        &self.ctx
    }
}

impl<const WORDS: usize> ConflictRule for WoundWaitRule<WORDS> {
    type Lock = OwnedLock<WORDS>;
    const NAME: &'static str = "wound_wait";

    fn new(workers: usize) -> Result<Self, TooManyWorkers> {
        Ok(WoundWaitRule {
            ctx: ContextTable::for_waiting_rule(Self::NAME, workers, OwnedLock::<WORDS>::CAPACITY)?,
        })
    }

    fn begin(&self, me: &mut Locker<'_, OwnedLock<WORDS>>, retry: bool) {
        self.ctx.begin_attempt(me, retry);
    }

    #[inline]
    fn check_alive(&self, me: &Locker<'_, OwnedLock<WORDS>>) -> Result<(), Abort> {
        if self.ctx.is_wounded(me.id) {
            Err(Abort::Wounded)
        } else {
            Ok(())
        }
    }

    fn acquire<'db>(
        &self,
        me: &mut Locker<'db, OwnedLock<WORDS>>,
        lock: &'db OwnedLock<WORDS>,
        want: LockMode,
        held: Option<LockMode>,
    ) -> OpResult {
        if waiters::older_conflicting_waiter(&self.ctx, me, lock, want) {
            waiters::register(&self.ctx, me, lock, want);
            return Poll::Pending;
        }
        match waiters::try_acquire(me, lock, want, held) {
            Ok(()) => {
                waiters::deregister(me);
                Poll::Ready(Ok(()))
            }
            Err(holders) => {
                for h in holders.ids() {
                    let theirs = self.ctx.load(h).ts();
                    if me.ts.is_older_than(theirs) {
                        self.ctx.wound(h, theirs);
                    }
                    // The executor parks at once if every holder is away (`crate::on_cpu`).
                    on_cpu::note_holder(h);
                }
                waiters::register(&self.ctx, me, lock, want);
                Poll::Pending
            }
        }
    }

    fn try_shared_now(&self, me: &Locker<'_, OwnedLock<WORDS>>, lock: &OwnedLock<WORDS>) -> bool {
        waiters::try_shared_now(&self.ctx, me, lock)
    }

    #[inline]
    fn release(&self, me: &Locker<'_, OwnedLock<WORDS>>, lock: &OwnedLock<WORDS>, mode: LockMode) {
        lock.release(me.id, mode);
    }

    #[inline]
    fn start_commit(&self, me: &Locker<'_, OwnedLock<WORDS>>) -> Result<(), Abort> {
        self.ctx.start_commit(me.id)
    }

    #[inline]
    fn stop_waiting(&self, me: &mut Locker<'_, OwnedLock<WORDS>>) {
        waiters::deregister(me);
    }
}
