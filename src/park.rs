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
//! A thread that must also wait for something else (the interactive server's event loops, which
//! wait for their sockets too) does not park: it sleeps in `poll(2)` on a [`Watcher`], a pipe
//! the lot writes to when it wakes its sleepers ([`ParkingLot::sleep_watching`]). The same
//! counters decide whether to wake it, so a lot nobody sleeps on still costs a waking event one
//! load.
//!
//! No lost wakeup: a waiter registers in `sleepers` and reads `ends` before its last poll, and
//! parks only if `ends` is still what it read (checked under the parking lot's queue lock, which
//! the waker also takes). The waker makes its change visible, fences, then reads `sleepers`. So
//! either the waiter's last poll sees the change, or the waker sees the sleeper and bumps `ends`
//! (and the park does not happen or is woken).

use crossbeam_utils::CachePadded;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering, fence};
use std::sync::{Arc, Mutex};
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
    /// The watchers of threads that sleep in `poll(2)` ([`ParkingLot::watch`]); read only when
    /// somebody sleeps.
    watchers: Mutex<Vec<Arc<Watcher>>>,
}

impl ParkingLot {
    /// A lot with nobody parked.
    pub const fn new() -> Self {
        ParkingLot {
            sleepers: CachePadded::new(AtomicU32::new(0)),
            ends: CachePadded::new(AtomicU32::new(0)),
            watchers: Mutex::new(Vec::new()),
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
        // SeqCst: for parked threads the parking lot's queue lock (taken by unpark_all and by
        // the sleeper's validation) orders this bump with the sleeper's check of `ends`; for
        // watchers, the bump and the swap of `asleep` below are in one total order with the
        // watcher's store of `asleep` and its load of `ends` (`sleep_watching`).
        self.ends.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the key is the address of `ends`, owned by this lot and used as a parking key
        // by nothing else; unpark_all is not called from inside a park callback.
        unsafe {
            parking_lot_core::unpark_all(self.key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
        }
        let watchers = self.watchers.lock().unwrap_or_else(|e| e.into_inner());
        for w in watchers.iter() {
            // SeqCst: see the bump above. Only a watcher that sleeps (or is about to) is
            // written to; the others poll again anyway.
            if w.asleep.swap(false, Ordering::SeqCst) {
                w.notify();
            }
        }
    }

    /// Registers `watcher`, so this lot's waking events reach the thread that sleeps on it
    /// ([`ParkingLot::sleep_watching`]) until [`ParkingLot::unwatch`].
    pub fn watch(&self, watcher: &Arc<Watcher>) {
        let mut watchers = self.watchers.lock().unwrap_or_else(|e| e.into_inner());
        watchers.push(Arc::clone(watcher));
    }

    /// Ends [`ParkingLot::watch`].
    pub fn unwatch(&self, watcher: &Arc<Watcher>) {
        let mut watchers = self.watchers.lock().unwrap_or_else(|e| e.into_inner());
        watchers.retain(|w| !Arc::ptr_eq(w, watcher));
    }

    /// [`ParkingLot::park_while`] for a thread that sleeps in `poll(2)` with `watcher`'s
    /// [`Watcher::fd`] among its descriptors: registers as a sleeper, runs `still_blocked` (its
    /// last poll of what it waits for), and unless that is ready or the lot changed since it
    /// registered, runs `sleep` (the `poll(2)` call, bounded by the caller). A waking event
    /// from the registration on makes the watcher's descriptor readable, so `sleep` returns.
    pub fn sleep_watching<T>(
        &self,
        watcher: &Watcher,
        still_blocked: impl FnOnce() -> Option<T>,
        sleep: impl FnOnce(),
    ) -> Option<T> {
        // SeqCst: as `park_while`'s, paired with `wake_parked`'s fence.
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        // SeqCst: in one total order with the waker's bump of `ends` and its swap of
        // `asleep`. A waker that swapped before this store bumped `ends` before it, so the load
        // of `ends` below sees the bump and the watcher does not sleep; a later one writes.
        watcher.asleep.store(true, Ordering::SeqCst);
        // SeqCst: see the store above.
        let seen = self.ends.load(Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let out = still_blocked();
        // SeqCst: see the store above.
        if out.is_none() && self.ends.load(Ordering::SeqCst) == seen {
            sleep();
        }
        // Relaxed: a stale `true` costs one needless write to the pipe.
        watcher.asleep.store(false, Ordering::Relaxed);
        // Relaxed: as `park_while`'s decrement.
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        out
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

/// A pipe through which a [`ParkingLot`] wakes a thread sleeping in `poll(2)` (module docs):
/// its read end becomes readable when the lot (or anyone, [`Watcher::notify`]) writes a byte.
pub struct Watcher {
    read: OwnedFd,
    write: OwnedFd,
    /// The thread sleeps, or is about to ([`ParkingLot::sleep_watching`]): a waking event
    /// writes to the pipe.
    asleep: AtomicBool,
}

impl Watcher {
    /// A new pipe, both ends non-blocking and closed on exec.
    pub fn new() -> std::io::Result<Arc<Watcher>> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both are open descriptors that nothing else owns.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Arc::new(Watcher {
            read,
            write,
            asleep: AtomicBool::new(false),
        }))
    }

    /// The read end, to poll for readability.
    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// Makes [`Watcher::fd`] readable (a full pipe already is, so a failed write is ignored).
    pub fn notify(&self) {
        let byte = 1u8;
        // SAFETY: writes one byte from a valid local to a descriptor this watcher owns.
        let _ = unsafe { libc::write(self.write.as_raw_fd(), (&byte as *const u8).cast(), 1) };
    }

    /// Empties the pipe after a wake, so the next sleep is not cut short by this one.
    pub fn drain(&self) {
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: reads at most `buf.len()` bytes into a valid local buffer from a
            // descriptor this watcher owns.
            let n =
                unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < buf.len() as isize {
                break;
            }
        }
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

    /// Waits until `fd` is readable or `timeout` passes; true when readable.
    fn readable_within(fd: RawFd, timeout: Duration) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, timeout.as_millis() as libc::c_int) };
        n == 1
    }

    #[test]
    fn a_watcher_sleeping_is_woken_by_a_waking_event() {
        let lot = ParkingLot::new();
        let watcher = Watcher::new().unwrap();
        lot.watch(&watcher);
        let released = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                // Relaxed: the flag is the only shared state, and the loop re-reads it.
                while !released.load(Ordering::Relaxed) {
                    lot.sleep_watching(
                        &watcher,
                        || released.load(Ordering::Relaxed).then_some(()),
                        || {
                            // Bounded far above a wake's latency: a lost wake fails the test
                            // by its time.
                            assert!(
                                readable_within(watcher.fd(), Duration::from_secs(20)),
                                "a sleeping watcher was not woken"
                            );
                        },
                    );
                    watcher.drain();
                }
            });
            // Relaxed: a test-only poll of the counter.
            while lot.sleepers.load(Ordering::Relaxed) == 0 {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_millis(5));
            released.store(true, Ordering::Relaxed);
            lot.attempt_ended();
        });
        lot.unwatch(&watcher);
        assert!(lot.watchers.lock().unwrap().is_empty());
    }

    #[test]
    fn a_watcher_not_asleep_is_not_written_to() {
        let lot = ParkingLot::new();
        let watcher = Watcher::new().unwrap();
        lot.watch(&watcher);
        // Somebody else sleeps (the counter says so), but the watcher does not.
        lot.sleepers.fetch_add(1, Ordering::SeqCst);
        lot.attempt_ended();
        assert!(!readable_within(watcher.fd(), Duration::ZERO));
        watcher.notify();
        assert!(readable_within(watcher.fd(), Duration::ZERO));
        watcher.drain();
        assert!(!readable_within(watcher.fd(), Duration::ZERO));
    }

    #[test]
    fn a_park_without_wakeup_times_out() {
        let lot = ParkingLot::new();
        let t = Instant::now();
        assert_eq!(lot.park_while(|| None::<()>), (None, Parked::TimedOut));
        assert!(t.elapsed() >= PARK_TIMEOUT);
    }
}
