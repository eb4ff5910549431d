//! `LockWr` (PLOR Figure 4, lines 10-19): taking a record's write lock under WOUND_WAIT.
//!
//! A requester takes the free owner word by CAS. If it is owned, the requester registers in the
//! record's waiter set and waits (`Pending`); on every poll it re-reads the owner and wounds it if
//! the owner is younger. That re-check is what closes the race of PLOR 4.2: the owner may have
//! changed between our first look and our registration, and the new owner may be younger than us.
//!
//! Oldest waiter first: a free lock is taken only by a requester that sees no older registered
//! waiter (a writer waiting for the lock, or a reader refused by exclusive mode, see
//! `read::locked_read`); a younger requester registers and waits behind it. So when the owner releases, the
//! lock goes to the oldest waiter, without the releaser writing the waiter's identity into the
//! owner word (which could hand the lock to a waiter that aborts at that moment).
//!
//! Deadlock freedom: a requester waits for an older owner or an older waiter, or for a younger
//! owner it has wounded; a wounded transaction aborts at its next poll unless it is past commit
//! phase 1, after which it never waits. So every cycle of waits is broken.

use super::context::{ContextTable, CtxWord};
use super::locker::PlorLock;
use crate::on_cpu;
use crate::protocol::{Abort, OpResult};
use std::task::Poll;

/// One worker's identity as a write-lock requester, and the lock it is registered as waiting for.
pub struct Requester<'db, const WORDS: usize> {
    /// Dense worker id.
    pub id: usize,
    /// The running transaction's identity.
    pub me: CtxWord,
    /// The lock this worker is registered as waiting for, if any.
    pub waiting_on: Option<&'db PlorLock<WORDS>>,
}

impl<'db, const WORDS: usize> Requester<'db, WORDS> {
    /// Takes `lock`'s write lock or waits (see the module docs). Safe to repeat after `Pending`.
    pub fn acquire(&mut self, ctx: &ContextTable, lock: &'db PlorLock<WORDS>) -> OpResult {
        if ctx.is_aborted(self.id) {
            return Poll::Ready(Err(Abort::Wounded));
        }
        let owner = lock.owner();
        debug_assert_ne!(owner, self.me.raw(), "lock already ours");
        if owner == 0 && !self.older_waiter(ctx, lock) && lock.try_write_lock(self.me.raw()) {
            self.stop_waiting();
            return Poll::Ready(Ok(()));
        }
        // Re-read: the lock may have changed hands since the first look.
        let owner = lock.owner();
        if owner != 0 {
            let owner = CtxWord::from_raw(owner);
            if self.me.is_older_than(owner) {
                ctx.wound(owner);
            }
            // The executor parks at once if the owner is away (`crate::on_cpu`).
            on_cpu::note_holder(owner.wid());
        }
        self.register(lock);
        Poll::Pending
    }

    /// Whether a registered waiter other than us is older than us.
    fn older_waiter(&self, ctx: &ContextTable, lock: &PlorLock<WORDS>) -> bool {
        lock.waiters()
            .without(self.id)
            .ids()
            .any(|j| ctx.load(j).is_older_than(self.me))
    }

    /// Registers as waiting for `lock` (idempotent across re-polls).
    pub fn register(&mut self, lock: &'db PlorLock<WORDS>) {
        match self.waiting_on {
            Some(current) => debug_assert!(std::ptr::eq(current, lock), "waits on two locks"),
            None => {
                lock.add_waiter(self.id);
                self.waiting_on = Some(lock);
            }
        }
    }

    /// Drops the waiter registration, if any (granted, or the attempt aborts).
    pub fn stop_waiting(&mut self) {
        if let Some(lock) = self.waiting_on.take() {
            lock.remove_waiter(self.id);
        }
    }
}
