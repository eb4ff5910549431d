//! Driving a future in place, and how a worker thread waits when a protocol says `Pending`.
//!
//! A wait should cost no more than the conflict behind it. Who the waiter waits for decides
//! what that means:
//!
//! - **Threads no more than cores** ([`WaitPolicy::dedicated`]): the transaction waited for is
//!   running on another core and will release within a transaction's length. The waiter spins
//!   (re-polling with growing pauses) for up to [`SPIN_FOR`], then parks: a wait that long means
//!   the holder is not running after all (it waits itself, or another process took its core).
//!   It never yields in a loop: with another process runnable on its core, a yield hands that
//!   process the core until the scheduler's next tick (milliseconds), while a parked thread is
//!   woken, and preempts, the moment its wait ends. A futex sleep and wake costs tens of
//!   microseconds, several times a short conflict, so parking early (after about a microsecond)
//!   would make every wait cost that.
//! - **More threads than cores** ([`WaitPolicy::shared`]): the holder may need this very core.
//!   The waiter spins briefly (the holder may be on the other core), yields a few times (to the
//!   run's other workers), and parks after [`PARK_AFTER_SHARED`], so the holder gets the core.
//!
//! Either way, **a waiter whose holders are all parked parks at once** (`Step::ParkNow`): when
//! every holder the protocol named as its `Pending` came back ([`crate::on_cpu`]) is parked in a
//! wait of its own, spinning cannot end the wait sooner, and with more threads than cores the
//! spin takes CPU the holder needs. A holder that merely yields in its wait is not away: it runs
//! again within a scheduler decision, and parking behind it cost more than it saved (measured,
//! docs/RESULTS.md). A holder the kernel preempted looks running too; its waiters wait by the
//! steps above.
//!
//! A parked waiter is woken by every event that can end its wait ([`crate::park`]); spin steps,
//! parks, parks at once for an away holder and parks that timed out are counted
//! ([`WaitCounts`]) and reported. Every park here (and the pause before a retry, and CoreSlice's
//! yield, where the worker holds nothing) marks the thread's workers away
//! ([`on_cpu::while_away`]); a wait's yields do not.
//!
//! The coroutine executor's threads, when every slot waits, wait by the same steps
//! (`coro/mod.rs`), so the two executors agree at Q = 1.

use crate::metrics::WaitCounts;
use crate::on_cpu::{self, HoldersSeen};
use crate::park::{Parked, ParkingLot};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Rounds of exponential spinning (1, 2, ..., 32 pauses) that start every wait.
const SPIN_ROUNDS: u32 = 6;
/// Pauses per round once the exponential rounds are over.
const SPIN_PAUSES: u32 = 64;
/// How long a waiter with a core of its own spins before it parks.
pub const SPIN_FOR: Duration = Duration::from_micros(50);
/// How long a waiter that shares its core waits (spinning briefly, then yielding) before it parks.
/// On a quiet 2-core machine with 4 workers (YCSB-A, 100k records), 50 us against 10 us: WOUND_WAIT
/// 305k against 89k txn/s, PLOR 320k against 125k, C-Sched 142-160k against 101-105k, with about
/// one park per thousand commits instead of 600-900 (docs/RESULTS.md, "Waiting"); 200 and 1000 us
/// gained nothing more. A yield hands the core to the run's other worker on it, often the holder.
pub const PARK_AFTER_SHARED: Duration = Duration::from_micros(50);
/// Yields a waiter that shares its core makes before it may park, however fast they return.
const SHARED_YIELDS: u32 = 2;

/// How the run's waiters wait: chosen once per run from whether its threads outnumber the cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitPolicy {
    /// More threads (workers, plus any thread a protocol runs) than cores.
    oversubscribed: bool,
}

impl WaitPolicy {
    /// Every thread has a core: spin while the holder runs.
    pub const fn dedicated() -> Self {
        WaitPolicy {
            oversubscribed: false,
        }
    }

    /// Threads share cores: park soon.
    pub const fn shared() -> Self {
        WaitPolicy {
            oversubscribed: true,
        }
    }

    /// The policy for `threads` busy threads on `cores` usable cores (0: unknown, taken as 1).
    pub fn for_threads(threads: usize, cores: usize) -> Self {
        if threads > cores.max(1) {
            Self::shared()
        } else {
            Self::dedicated()
        }
    }

    /// Whether threads share cores.
    pub fn oversubscribed(self) -> bool {
        self.oversubscribed
    }
}

/// What a waiter does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Spin this many pause instructions, then poll.
    Spin(u32),
    /// Yield the CPU, then poll.
    Yield,
    /// Park until woken (or [`crate::park::PARK_TIMEOUT`]), polling once more first.
    Park,
    /// Park at once, before the spin budget is spent: every holder the last polls named is away.
    ParkNow,
}

/// One wait in progress: how many steps it took, and since when it waits.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    rounds: u32,
    since: Instant,
}

impl Waiting {
    /// A wait that starts now.
    #[inline]
    pub fn start() -> Self {
        Waiting {
            rounds: 0,
            since: Instant::now(),
        }
    }

    /// The step after the last poll found the waiter still blocked: by what the polls since the
    /// last step noted of the holders ([`on_cpu::take_holders_seen`]), and by `policy`.
    #[inline]
    pub fn next(&mut self, policy: WaitPolicy) -> Step {
        let seen = on_cpu::take_holders_seen();
        let round = self.rounds;
        self.rounds = self.rounds.saturating_add(1);
        if seen == HoldersSeen::AllAway {
            return Step::ParkNow;
        }
        if round < SPIN_ROUNDS {
            return Step::Spin(1 << round);
        }
        let waited = self.since.elapsed();
        if policy.oversubscribed {
            if round < SPIN_ROUNDS + SHARED_YIELDS || waited < PARK_AFTER_SHARED {
                Step::Yield
            } else {
                Step::Park
            }
        } else if waited < SPIN_FOR {
            Step::Spin(SPIN_PAUSES)
        } else {
            Step::Park
        }
    }

    /// Takes one step: spins, yields, or parks in `lot` with `poll` as the last poll before
    /// sleeping (counted in `counts`). Returns what `poll` returned if the park ran it; for the
    /// other steps the caller polls.
    #[inline]
    pub fn take<T>(
        &mut self,
        policy: WaitPolicy,
        lot: &ParkingLot,
        counts: &mut WaitCounts,
        poll: impl FnOnce() -> Option<T>,
    ) -> StepOutcome<T> {
        match self.next(policy) {
            Step::Spin(n) => {
                counts.spins += 1;
                for _ in 0..n {
                    std::hint::spin_loop();
                }
                StepOutcome::PollNow
            }
            Step::Yield => {
                super::panic_watch::stop_if_a_sibling_panicked();
                // Not marked away: a waiter that yields gets its core back within a scheduler
                // decision, and its own waiters do better yielding too than parking at once
                // (measured: with yields marked away, WOUND_WAIT at 4 workers on 2 cores ran at
                // 0.73x and PLOR at 0.72x of the build without holder-aware parks;
                // docs/RESULTS.md, "Waiters that look at their holder").
                std::thread::yield_now();
                StepOutcome::PollNow
            }
            step @ (Step::Park | Step::ParkNow) => {
                super::panic_watch::stop_if_a_sibling_panicked();
                let (out, parked) = on_cpu::while_away(|| lot.park_while(poll));
                counts.count(parked);
                if step == Step::ParkNow && parked != Parked::No {
                    counts.parks_holder_away += 1;
                }
                StepOutcome::Polled(out)
            }
        }
    }
}

/// What [`Waiting::take`] leaves to the caller.
pub enum StepOutcome<T> {
    /// The step did not poll: poll now.
    PollNow,
    /// The step polled (before parking); this is what the poll returned.
    Polled(Option<T>),
}

/// Polls `fut` to completion on this thread, waiting between polls by `policy`. Returns the
/// output and the nanoseconds spent waiting (between a `Pending` and the poll that followed it);
/// parks are counted in `counts`.
#[inline]
pub fn drive<F: Future>(
    mut fut: Pin<&mut F>,
    policy: WaitPolicy,
    counts: &mut WaitCounts,
) -> (F::Output, u64) {
    let mut cx = Context::from_waker(Waker::noop());
    // Fast path: most operations never wait.
    if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
        return (out, 0);
    }
    let mut waiting = Waiting::start();
    let lot = ParkingLot::global();
    loop {
        let mut poll = || match fut.as_mut().poll(&mut cx) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        };
        let ready = match waiting.take(policy, lot, counts, &mut poll) {
            StepOutcome::PollNow => poll(),
            StepOutcome::Polled(out) => out,
        };
        if let Some(out) = ready {
            return (out, waiting.since.elapsed().as_nanos() as u64);
        }
    }
}

/// One step of the short spin-then-yield wait a worker takes before retrying an aborted attempt
/// (round `round` of its aborts in a row).
#[inline]
pub fn pause(round: u32) {
    if round < SPIN_ROUNDS {
        for _ in 0..(1u32 << round) {
            std::hint::spin_loop();
        }
    } else {
        on_cpu::while_away(std::thread::yield_now);
    }
}

/// Busy-waits for `ns` nanoseconds, yielding the CPU once past a microsecond-scale delay so an
/// oversubscribed machine keeps making progress.
pub fn delay(ns: u64) {
    if ns == 0 {
        return;
    }
    let start = Instant::now();
    let mut round = 0;
    while (start.elapsed().as_nanos() as u64) < ns {
        pause(round.min(if ns > 20_000 {
            u32::MAX
        } else {
            SPIN_ROUNDS - 1
        }));
        round += 1;
    }
}

/// CoreSlice: where a worker that shares its core gives it up.
///
/// With more workers than cores the kernel preempts a worker wherever its time slice ends, most
/// often inside a transaction, holding locks or a declared turn; every worker that then conflicts
/// with it waits a whole scheduler slice (milliseconds) for the holder to run again. A worker
/// that yields between two transactions, once it has run `slice` since it last did, hands its
/// core over where it holds nothing, so the kernel's own preemption (which still happens) lands
/// inside a transaction less often. Off (`slice` zero) or with a core per worker it never yields.
#[derive(Debug, Clone, Copy)]
pub struct CoreSlice {
    slice: Duration,
    since: Instant,
}

impl CoreSlice {
    /// The slice for a run: `slice` when `policy` shares cores, else none.
    pub fn new(slice: Duration, policy: WaitPolicy) -> Self {
        CoreSlice {
            slice: if policy.oversubscribed() {
                slice
            } else {
                Duration::ZERO
            },
            since: Instant::now(),
        }
    }

    /// Called between two transactions (holding nothing): yields the core if the slice is used
    /// up. Returns whether it yielded.
    #[inline]
    pub fn at_boundary(&mut self) -> bool {
        if self.slice.is_zero() {
            return false;
        }
        let now = Instant::now();
        if now.duration_since(self.since) < self.slice {
            return false;
        }
        on_cpu::while_away(std::thread::yield_now);
        // The slice counts from when this worker got its core back.
        self.since = Instant::now();
        true
    }
}

impl WaitCounts {
    /// Counts how one park ended.
    #[inline]
    pub fn count(&mut self, parked: Parked) {
        match parked {
            Parked::No => {}
            Parked::Woken => self.parks += 1,
            Parked::TimedOut => {
                self.parks += 1;
                self.park_timeouts += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;

    #[test]
    fn drive_repolls_until_ready() {
        let mut left = 3;
        let fut = std::future::poll_fn(|_| {
            if left == 0 {
                Poll::Ready(7)
            } else {
                left -= 1;
                Poll::Pending
            }
        });
        let mut counts = WaitCounts::default();
        let (out, _) = drive(pin!(fut), WaitPolicy::dedicated(), &mut counts);
        assert_eq!(out, 7);
        let spun = WaitCounts {
            spins: 3,
            ..WaitCounts::default()
        };
        assert_eq!(
            counts, spun,
            "three blocked polls: three spin steps, no park"
        );
    }

    #[test]
    fn a_dedicated_waiter_spins_then_parks() {
        let mut w = Waiting::start();
        let p = WaitPolicy::dedicated();
        let steps: Vec<Step> = (0..SPIN_ROUNDS).map(|_| w.next(p)).collect();
        assert!(steps.iter().all(|s| matches!(s, Step::Spin(_))));
        // Started in the future, so no time has passed for `next` (`elapsed` saturates at
        // zero) however long this thread was descheduled: a loaded test machine once took more
        // than SPIN_FOR between `start` and here.
        w.since = Instant::now() + Duration::from_secs(60);
        assert_eq!(
            w.next(p),
            Step::Spin(SPIN_PAUSES),
            "spins on before SPIN_FOR"
        );
        w.since = Instant::now() - SPIN_FOR;
        assert_eq!(w.next(p), Step::Park, "never yields");
    }

    #[test]
    fn a_shared_waiter_yields_then_parks_soon() {
        let mut w = Waiting::start();
        let p = WaitPolicy::shared();
        for _ in 0..SPIN_ROUNDS {
            assert!(matches!(w.next(p), Step::Spin(_)));
        }
        w.since -= PARK_AFTER_SHARED;
        // Past the time, but not yet the minimum yields.
        assert_eq!(w.next(p), Step::Yield);
        assert_eq!(w.next(p), Step::Yield);
        assert_eq!(w.next(p), Step::Park);
    }

    /// Drives a future that stays blocked for `polls` polls, naming worker `holder` as what it
    /// waits for each time; returns the wait's counts.
    fn wait_naming(holder: usize, polls: u32, policy: WaitPolicy) -> WaitCounts {
        let mut left = polls;
        let fut = std::future::poll_fn(|_| {
            if left == 0 {
                return Poll::Ready(());
            }
            left -= 1;
            on_cpu::note_holder(holder);
            Poll::Pending
        });
        let mut counts = WaitCounts::default();
        drive(pin!(fut), policy, &mut counts);
        counts
    }

    /// A waiter whose holder is away parks at every step and never spins; the same waiter
    /// behind a running holder spins first (judged by the step counts, not by time).
    #[test]
    fn a_waiter_on_an_away_holder_parks_without_spinning() {
        // A worker id no concurrently running test's executor marks.
        const HOLDER: usize = on_cpu::TRACKED_WORKERS - 10;
        let (marked_tx, marked_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let _driving = on_cpu::drive_workers(on_cpu::WorkerIds::one(HOLDER));
            on_cpu::while_away(|| {
                marked_tx.send(()).unwrap();
                release_rx.recv().unwrap();
            });
        });
        marked_rx.recv().unwrap();
        for policy in [WaitPolicy::dedicated(), WaitPolicy::shared()] {
            let away = wait_naming(HOLDER, 3, policy);
            assert_eq!(away.spins, 0, "{policy:?}: spun for an away holder");
            assert!(away.parks >= 1, "{policy:?}: {away:?}");
            assert_eq!(away.parks_holder_away, away.parks, "{policy:?}");
        }
        release_tx.send(()).unwrap();
        holder.join().unwrap();
        let running = wait_naming(HOLDER, 3, WaitPolicy::dedicated());
        assert_eq!(running.spins, 3, "a running holder: three spin steps");
        assert_eq!(running.parks_holder_away, 0);
    }

    #[test]
    fn the_policy_follows_the_thread_count() {
        assert!(!WaitPolicy::for_threads(2, 2).oversubscribed());
        assert!(WaitPolicy::for_threads(3, 2).oversubscribed());
        assert!(WaitPolicy::for_threads(2, 0).oversubscribed());
    }

    #[test]
    fn a_long_wait_parks_and_counts_its_timeouts() {
        // Blocked for good: the waiter must reach its parks; nothing wakes them.
        let mut counts = WaitCounts::default();
        let mut w = Waiting::start();
        let lot = ParkingLot::new();
        let mut parks = 0;
        while parks < 2 {
            if let StepOutcome::Polled(out) =
                w.take(WaitPolicy::shared(), &lot, &mut counts, || None::<()>)
            {
                assert!(out.is_none());
                parks += 1;
            }
        }
        assert_eq!(counts.parks, 2);
        assert_eq!(counts.park_timeouts, 2);
    }

    #[test]
    fn a_core_slice_yields_only_when_shared_and_used_up() {
        let mut off = CoreSlice::new(Duration::ZERO, WaitPolicy::shared());
        let mut dedicated = CoreSlice::new(Duration::from_nanos(1), WaitPolicy::dedicated());
        let mut shared = CoreSlice::new(Duration::from_millis(1), WaitPolicy::shared());
        std::thread::sleep(Duration::from_millis(2));
        assert!(!off.at_boundary());
        assert!(!dedicated.at_boundary());
        assert!(shared.at_boundary(), "a used-up slice yields");
        // The slice restarts when it yields: the next boundary comes before a millisecond more
        // unless the machine stalls this thread that long, which the loop tolerates.
        let fresh = (0..10).any(|_| !shared.at_boundary());
        assert!(fresh, "a fresh slice does not yield at once");
    }

    #[test]
    fn delay_waits_at_least_the_time() {
        let t = Instant::now();
        delay(200_000);
        assert!(t.elapsed().as_nanos() >= 200_000);
    }
}
