//! Parking a thread whose wait lasts, and waking it when something it may wait for changed.
//!
//! With more threads than cores, a waiter that keeps spinning or yielding shares its core with
//! the very lock holder it waits for, which may be descheduled: the run then spends nearly all
//! its time waiting. A parked thread leaves the run queue, so the holder gets the core. How long a
//! waiter spins before it parks is the executor's policy (`exec/wait.rs`); this module is the
//! parking and the waking.
//!
//! What wakes a parked waiter: every event that can end a wait calls [`ParkingLot::wake_parked`]
//! (through [`crate::protocol::wake::wake_waiters`] for events inside a protocol):
//!
//! - a transaction attempt ends (commit or abort: strict 2PL, PLOR, Silo/TicToc/MOCC commit
//!   locks, Calvin's and Ord-Lock's lock releases, DecentSched's finished flag);
//! - a protocol event mid-attempt: a wound (WOUND_WAIT, PLOR), Calvin's turn passed on,
//!   C-Sched's grants, DecentSched's ready flags, dependency additions and epoch advance,
//!   2PL-with-early-release's releases.
//!
//! There is one lot per process ([`ParkingLot::global`]), because the events come from threads
//! that no executor owns (C-Sched's scheduler thread) and from protocol code that must not know
//! the executor. Two runs at once in one process (parallel tests) only wake each other
//! needlessly. The lot keeps one counter of wake-ups (`ends`) and one of parked threads
//! (`sleepers`); a waking event reads `sleepers` and only when somebody sleeps does it bump
//! `ends` and wake every sleeper, so the uncontended path pays one fence and one load of a word
//! that nobody writes while nobody parks. A woken waiter polls again and parks again if it is
//! still blocked. A park is also bounded ([`PARK_TIMEOUT`]): a sleeper that times out was not
//! woken by the event that ended its wait, and the executors count such timeouts in the report
//! (`waits.park_timeouts`), so a missing wake shows as a number instead of as lost throughput.
//!
//! No lost wakeup: a waiter registers in `sleepers` and reads `ends` before its last poll, and
//! parks only if `ends` is still what it read (checked under the parking lot's queue lock, which
//! the waker also takes). The waker makes its change visible, fences, then reads `sleepers`. So
//! either the waiter's last poll sees the change, or the waker sees the sleeper and bumps `ends`
//! (and the park does not happen or is woken).

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::time::{Duration, Instant};

/// The longest a parked waiter sleeps without a wakeup before polling again.
pub const PARK_TIMEOUT: Duration = Duration::from_micros(200);

/// How a call to [`ParkingLot::park_while`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parked {
    /// The last poll was ready (or the lot changed since it registered): it did not sleep.
    No,
    /// It slept and was woken (or the wake came as it fell asleep).
    Woken,
    /// It slept until [`PARK_TIMEOUT`]: no waking event came.
    TimedOut,
}

/// A parking lot: where waiting threads sleep, and the counters that make waking them cheap.
#[derive(Default)]
pub struct ParkingLot {
    /// Threads parked (or about to park). Written only by waiters, read by every ending attempt.
    sleepers: CachePadded<AtomicU32>,
    /// Attempt ends seen while somebody slept: what a sleeper waits to change.
    ends: CachePadded<AtomicU32>,
}

impl ParkingLot {
    /// A lot with nobody parked.
    pub const fn new() -> Self {
        ParkingLot {
            sleepers: CachePadded::new(AtomicU32::new(0)),
            ends: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// The process's lot, where every executor's waiters park (module docs).
    #[inline]
    pub fn global() -> &'static ParkingLot {
        static GLOBAL: ParkingLot = ParkingLot::new();
        &GLOBAL
    }

    /// The parking key: the address of `ends`, which this lot owns for as long as anybody can
    /// park on it.
    fn key(&self) -> usize {
        &*self.ends as *const AtomicU32 as usize
    }

    /// Called after a transaction attempt ended (its protocol's `commit` or `abort` returned, so
    /// its locks are released): wakes every parked waiter, if there is one.
    #[inline]
    pub fn attempt_ended(&self) {
        self.wake_parked();
    }

    /// Wakes every parked waiter, if there is one: after something they may wait for changed (an
    /// attempt ended, a transaction was wounded).
    #[inline]
    pub fn wake_parked(&self) {
        // SeqCst fence: orders the protocol's release stores before the load of `sleepers`
        // (store-load); pairs with the waiter's SeqCst increment and fence before its last poll,
        // so at least one side sees the other (module docs).
        fence(Ordering::SeqCst);
        // Relaxed: ordered by the fence above.
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            self.wake_all();
        }
    }

    #[cold]
    fn wake_all(&self) {
        // Relaxed: the parking lot's queue lock (taken by unpark_all and by the sleeper's
        // validation) orders this bump with the sleeper's check of `ends`.
        self.ends.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the key is the address of `ends`, owned by this lot and used as a parking key
        // by nothing else; unpark_all is not called from inside a park callback.
        unsafe {
            parking_lot_core::unpark_all(self.key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
        }
    }

    /// Parks this thread until a waking event or [`PARK_TIMEOUT`], unless `still_blocked` (the
    /// waiter's last poll, run after it registered as a sleeper) says it no longer waits.
    /// Returns what the last poll returned, if it ran and was not blocked, and how the park went.
    pub fn park_while<T>(&self, still_blocked: impl FnOnce() -> Option<T>) -> (Option<T>, Parked) {
        // SeqCst increment and fence: pair with `attempt_ended`'s fence (module docs).
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        // Relaxed: a stale (older) value only makes the park return at once.
        let seen = self.ends.load(Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let out = still_blocked();
        let mut parked = Parked::No;
        if out.is_none() {
            // SAFETY: the key is owned by this lot (see `wake_all`); the validate and timed_out
            // callbacks neither panic nor call into parking_lot; before_sleep does nothing.
            let result = unsafe {
                parking_lot_core::park(
                    self.key(),
                    // Relaxed: runs under the queue lock that the waker's unpark_all also takes.
                    || self.ends.load(Ordering::Relaxed) == seen,
                    || {},
                    |_, _| {},
                    parking_lot_core::DEFAULT_PARK_TOKEN,
                    Some(Instant::now() + PARK_TIMEOUT),
                )
            };
            parked = match result {
                parking_lot_core::ParkResult::TimedOut => Parked::TimedOut,
                parking_lot_core::ParkResult::Unparked(_) => Parked::Woken,
                parking_lot_core::ParkResult::Invalid => Parked::No,
            };
        }
        // Relaxed: the count only decides whether enders bother to wake; a late decrement costs
        // one needless wake.
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        (out, parked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn a_parked_waiter_returns_once_the_release_happened() {
        let lot = ParkingLot::new();
        let released = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut parks = 0;
                // Relaxed: the flag is the only shared state, and the loop re-reads it.
                while !released.load(Ordering::Relaxed) {
                    let _ = lot.park_while(|| released.load(Ordering::Relaxed).then_some(()));
                    parks += 1;
                }
                assert!(parks >= 1);
            });
            // Release only once the waiter is inside `park_while` (registered as a sleeper), so
            // it parked at least once however late a loaded machine schedules it.
            // Relaxed: a test-only poll of the counter; the loop re-reads it.
            while lot.sleepers.load(Ordering::Relaxed) == 0 {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_millis(5));
            released.store(true, Ordering::Relaxed);
            lot.attempt_ended();
        });
    }

    #[test]
    fn park_returns_at_once_when_the_last_poll_is_ready() {
        let lot = ParkingLot::new();
        let t = Instant::now();
        assert_eq!(lot.park_while(|| Some(3)), (Some(3), Parked::No));
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(lot.sleepers.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn nobody_parked_means_no_wake() {
        let lot = ParkingLot::new();
        lot.attempt_ended();
        assert_eq!(lot.ends.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_park_without_wakeup_times_out() {
        let lot = ParkingLot::new();
        let t = Instant::now();
        assert_eq!(lot.park_while(|| None::<()>), (None, Parked::TimedOut));
        assert!(t.elapsed() >= PARK_TIMEOUT);
    }
}
