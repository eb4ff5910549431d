//! A protocol's word to waiting transactions: something they may wait for changed.
//!
//! Most waits end when a transaction attempt ends, and the executors wake parked waiters then
//! ([`crate::park`]). Some end earlier, inside an operation: a wound (WOUND_WAIT, PLOR: the
//! victim must run to notice it), Calvin's turn passed on, C-Sched's grant, DecentSched's ready
//! flag, dependency additions and epoch advance, 2PL-with-early-release's releases. The
//! protocol calls [`wake_waiters`] right after making such a change visible; without it a parked
//! waiter would sleep until an unrelated attempt ended or its park timed out.
//!
//! The call costs a fence and a load of a word nobody writes while nobody is parked; it needs no
//! protocol to know how the executor waits, and works from any thread (C-Sched's scheduler).

use crate::park::ParkingLot;

#[cfg(test)]
thread_local! {
    /// Calls on this thread (tests check that each waking event calls).
    static CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times this thread called [`wake_waiters`] (tests only).
#[cfg(test)]
pub(crate) fn calls_on_this_thread() -> u64 {
    CALLS.with(|c| c.get())
}

/// Wakes every parked waiter, if there is one. Call after the change is visible (after its
/// Release store): the fence inside orders that store before the check for sleepers.
#[inline]
pub fn wake_waiters() {
    #[cfg(test)]
    CALLS.with(|c| c.set(c.get() + 1));
    ParkingLot::global().wake_parked();
}
