//! Waiter registration shared by WAIT_DIE and WOUND_WAIT: who waits for a record, in which mode.
//!
//! A worker whose request returned `Pending` sets its bit in the record's waiter bitmap, after
//! publishing the mode it wants in its context word. Requesters consult the bitmap before taking a
//! lock, so a stream of newcomers cannot keep a lock away from an older waiter (a waiter needs a
//! moment with no conflicting holder; barging readers of a hot record would never give it one).
//! The worker clears its bit when its request is granted or its attempt aborts.

use super::LockMode;
use super::context::ContextTable;
use super::owned_lock::{Holders, OwnedLock};
use super::rule::Locker;
#[cfg(test)]
use crate::protocol::mutants::Mutant;

/// `me` takes `lock` in `want` mode, upgrading from `held`, or learns which holders conflict
/// ([`OwnedLock::try_acquire`]).
#[inline]
pub fn try_acquire<const WORDS: usize>(
    me: &Locker<'_, OwnedLock<WORDS>>,
    lock: &OwnedLock<WORDS>,
    want: LockMode,
    held: Option<LockMode>,
) -> Result<(), Holders<WORDS>> {
    #[cfg(test)]
    if me.mutant == Mutant::OwnedLockWriterIgnoresReaders && want == LockMode::Exclusive {
        return lock.try_exclusive_ignoring_readers(me.id, held == Some(LockMode::Shared));
    }
    lock.try_acquire(me.id, want, held)
}

/// Whether a registered waiter other than `me`, older than `me`, wants a mode that conflicts with
/// `want` on `lock`.
pub fn older_conflicting_waiter<const WORDS: usize>(
    ctx: &ContextTable,
    me: &Locker<'_, OwnedLock<WORDS>>,
    lock: &OwnedLock<WORDS>,
    want: LockMode,
) -> bool {
    let others = lock.waiters().without(me.id);
    others.ids().any(|j| {
        let theirs = ctx.load(j);
        theirs.ts().is_older_than(me.ts) && theirs.wanted_mode().conflicts_with(want)
    })
}

/// Registers `me` as waiting for `lock` in `want` mode (idempotent across re-polls).
pub fn register<'db, const WORDS: usize>(
    ctx: &ContextTable,
    me: &mut Locker<'db, OwnedLock<WORDS>>,
    lock: &'db OwnedLock<WORDS>,
    want: LockMode,
) {
    match me.waiting_on {
        Some(current) => debug_assert!(std::ptr::eq(current, lock), "waits on two locks"),
        None => {
            ctx.set_wanted_mode(me.id, want);
            lock.add_waiter(me.id);
            me.waiting_on = Some(lock);
        }
    }
}

/// Drops `me`'s registration, if any (request granted, or attempt aborted).
pub fn deregister<const WORDS: usize>(me: &mut Locker<'_, OwnedLock<WORDS>>) {
    if let Some(lock) = me.waiting_on.take() {
        lock.remove_waiter(me.id);
    }
}

/// Takes `lock` shared for `me` unless that would conflict with a holder or barge past an older
/// registered waiter wanting it exclusively; never registers (a read-committed copy by an attempt
/// holding no lock, which may simply be polled again).
pub fn try_shared_now<const WORDS: usize>(
    ctx: &ContextTable,
    me: &Locker<'_, OwnedLock<WORDS>>,
    lock: &OwnedLock<WORDS>,
) -> bool {
    !older_conflicting_waiter(ctx, me, lock, LockMode::Shared)
        && lock.try_acquire(me.id, LockMode::Shared, None).is_ok()
}
