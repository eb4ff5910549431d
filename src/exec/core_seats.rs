//! CoreSeats: with more workers than cores, at most one worker per core runs transactions.
//!
//! Oversubscribed, the kernel time-slices the workers wherever their slices end, most often
//! inside a transaction: the preempted worker keeps its locks, its wound-wait timestamp or its
//! turn, and every worker that conflicts with it waits for it to be scheduled again. CoreSlice
//! (`wait.rs`) moves some of those switches to transaction boundaries, but the kernel still
//! preempts wherever it likes, and a waiter still shares its core with the holder it waits for;
//! WOUND_WAIT and PLOR kept under half their 2-worker throughput at 4 workers on 2 cores.
//!
//! The seats take the choice away from the kernel. There is one seat per core; a worker runs
//! transactions only while it holds a seat, and gives it up only between two transactions, where
//! it holds nothing, once it has run a slice (`--core-slice-us`) and another worker is queued for
//! a seat. A worker without a seat parks, so the kernel has at most one runnable worker per core
//! and no reason to preempt one: every holder a waiter waits for is running, as with a core per
//! worker. The seats go round in arrival order (a FIFO queue), so every worker gets its share.
//! The SGPM coroutine executor does the same inside one thread (its slots switch only at a
//! `Pending` or a commit); the seats do it across threads.
//!
//! A worker queued for a seat steps away from the protocol (`Txn::away`, as an idle interactive
//! session does), so no batch, epoch barrier or queue waits for it. It notices the run's stop
//! and a sibling's panic while it waits; a worker that panics gives its seat up as it unwinds.

use crossbeam_utils::CachePadded;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread::Thread;
use std::time::Duration;

/// How long a worker queued for a seat sleeps before it looks at the stop condition again (a
/// hand-over wakes it at once).
const QUEUED_POLL: Duration = Duration::from_millis(1);

/// The seats of one run: one per core, shared by more workers than cores.
pub struct CoreSeats {
    /// Where workers queue: one pool per core when workers are pinned (worker `id` to core
    /// `id % cores`, as the executor pins them), else one pool of all the seats.
    pools: Box<[CachePadded<Pool>]>,
    /// Per worker: whether a seat was handed to it while it was queued, and its thread to wake.
    workers: Box<[CachePadded<Queued>]>,
}

/// Seats that the same workers share.
///
/// Pinned workers keep to their core's seat: a seat handed to a worker pinned to another core
/// would leave the giver's core idle and put two runnable workers on the other (measured on 2
/// cores, 4 pinned workers, one pool: NoCC lost 40% of its throughput at 7k hand-overs a second).
struct Pool {
    /// Free seats and the workers queued for one, in arrival order.
    state: Mutex<SeatState>,
    /// How many workers are queued: read by seat holders at every boundary (Relaxed: a hint
    /// whether to hand over; the hand-over itself runs under the lock).
    queued: AtomicUsize,
}

struct SeatState {
    free: usize,
    queue: VecDeque<usize>,
}

#[derive(Default)]
struct Queued {
    /// Set (under the state lock) when a leaving worker hands its seat to this queued one.
    granted: AtomicBool,
    /// The worker's thread, registered on its first queueing.
    thread: OnceLock<Thread>,
}

/// How [`CoreSeats::take`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// A seat was free: the worker runs on without having waited.
    AtOnce,
    /// The worker waited in the queue and was handed a seat.
    AfterWaiting,
    /// The stop condition held while the worker waited: it has no seat.
    Stopped,
}

impl Pool {
    fn new(free: usize, workers: usize) -> Self {
        Pool {
            state: Mutex::new(SeatState {
                free,
                queue: VecDeque::with_capacity(workers),
            }),
            queued: AtomicUsize::new(0),
        }
    }

    fn state(&self) -> MutexGuard<'_, SeatState> {
        // A worker that panicked under the lock left the state whole: every update below is
        // one step that cannot panic midway.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl CoreSeats {
    /// `seats` seats (at least one) for workers `0..workers`; with `pinned`, worker `id` only
    /// ever takes seat `id % seats` (the executor pinned it to that core).
    pub fn new(seats: usize, workers: usize, pinned: bool) -> Self {
        let seats = seats.max(1);
        let pools = if pinned {
            (0..seats)
                .map(|_| CachePadded::new(Pool::new(1, workers)))
                .collect()
        } else {
            vec![CachePadded::new(Pool::new(seats, workers))].into_boxed_slice()
        };
        CoreSeats {
            pools,
            workers: (0..workers).map(|_| CachePadded::default()).collect(),
        }
    }

    fn pool(&self, id: usize) -> &Pool {
        &self.pools[id % self.pools.len()]
    }

    /// Whether some worker is queued for worker `id`'s seat (a hint: it may have been served
    /// since).
    #[inline]
    pub fn someone_queued(&self, id: usize) -> bool {
        // Relaxed: a hint; `give_up` decides under the lock.
        self.pool(id).queued.load(Ordering::Relaxed) > 0
    }

    /// Worker `id` takes a seat: a free one at once, else it queues and parks until a leaving
    /// worker hands it one, calling `before_waiting` once before it first parks. While it waits
    /// it polls `stop` every millisecond; when that turns true it leaves the queue
    /// ([`Taken::Stopped`], no seat) unless a seat came first.
    pub fn take(&self, id: usize, before_waiting: impl FnOnce(), stop: impl Fn() -> bool) -> Taken {
        let me = &self.workers[id];
        let pool = self.pool(id);
        {
            let mut state = pool.state();
            if state.free > 0 && state.queue.is_empty() {
                state.free -= 1;
                return Taken::AtOnce;
            }
            me.thread.get_or_init(std::thread::current);
            state.queue.push_back(id);
            // Relaxed: the count is a hint (`someone_queued`); the queue under the lock decides.
            pool.queued.fetch_add(1, Ordering::Relaxed);
        }
        before_waiting();
        loop {
            // Acquire: pairs with the Release of the hand-over, so what the leaving worker did
            // before it (its transaction's releases) is visible; the lock orders it too.
            if me.granted.swap(false, Ordering::Acquire) {
                return Taken::AfterWaiting;
            }
            if stop() {
                let mut state = pool.state();
                // Acquire: as above; a grant made before this lock was taken is seen here.
                if me.granted.swap(false, Ordering::Acquire) {
                    return Taken::AfterWaiting;
                }
                if let Some(at) = state.queue.iter().position(|&w| w == id) {
                    state.queue.remove(at);
                    // Relaxed: the hint, as in the push.
                    pool.queued.fetch_sub(1, Ordering::Relaxed);
                }
                return Taken::Stopped;
            }
            // A spurious or early return only costs another look at `granted`.
            std::thread::park_timeout(QUEUED_POLL);
        }
    }

    /// Worker `id` gives its seat up: to the first worker queued for it, woken, or back to the
    /// free ones.
    pub fn give_up(&self, id: usize) {
        let pool = self.pool(id);
        let mut state = pool.state();
        match state.queue.pop_front() {
            Some(next) => {
                // Relaxed: the hint, as in the push.
                pool.queued.fetch_sub(1, Ordering::Relaxed);
                let to = &self.workers[next];
                // Release: pairs with the queued worker's Acquire swap.
                to.granted.store(true, Ordering::Release);
                if let Some(thread) = to.thread.get() {
                    thread.unpark();
                }
            }
            None => state.free += 1,
        }
    }
}

/// Which way a worker queued for a seat steps, around its wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stepping {
    /// Before it first parks: it stops counting in the protocol's batches and barriers.
    Away,
    /// Seated again, before its next transaction.
    Back,
}

/// One worker's hold on [`CoreSeats`]: whether it has a seat, and since when, so it hands the seat
/// over only after a slice. Dropping it gives a held seat up (a worker that stops or panics).
pub struct Seat<'a> {
    seats: &'a CoreSeats,
    id: usize,
    slice: Duration,
    held_since: Option<std::time::Instant>,
    /// Seats handed to a queued worker.
    pub handed_over: u64,
}

impl<'a> Seat<'a> {
    /// Worker `id`'s hold on `seats`, handing over after `slice`; it holds no seat yet.
    pub fn new(seats: &'a CoreSeats, id: usize, slice: Duration) -> Self {
        Seat {
            seats,
            id,
            slice,
            held_since: None,
            handed_over: 0,
        }
    }

    /// Called between two transactions, holding nothing: takes a seat if the worker has none,
    /// and hands it over first if its slice is up and someone is queued. `step` runs around a
    /// wait in the queue ([`Stepping::Away`] before, [`Stepping::Back`] after: the worker steps
    /// away from the protocol for it). Returns false when `stop` turned true while it waited:
    /// the worker has no seat and must end.
    pub fn at_boundary(&mut self, mut step: impl FnMut(Stepping), stop: impl Fn() -> bool) -> bool {
        if let Some(since) = self.held_since {
            if since.elapsed() < self.slice || !self.seats.someone_queued(self.id) {
                return true;
            }
            // Away before the hand-over: a batch or barrier on another core then stops counting
            // this worker at once, instead of waiting for the next worker to wake and join.
            step(Stepping::Away);
            self.seats.give_up(self.id);
            self.held_since = None;
            self.handed_over += 1;
            let taken = self.seats.take(self.id, || {}, stop);
            step(Stepping::Back);
            return self.seated(taken);
        }
        let mut stepped_away = false;
        let taken = self.seats.take(
            self.id,
            || {
                stepped_away = true;
                step(Stepping::Away);
            },
            stop,
        );
        if stepped_away {
            step(Stepping::Back);
        }
        self.seated(taken)
    }

    /// Notes a seat taken (from now on); false when the worker stopped instead.
    fn seated(&mut self, taken: Taken) -> bool {
        if taken == Taken::Stopped {
            return false;
        }
        self.held_since = Some(std::time::Instant::now());
        true
    }
}

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        if self.held_since.take().is_some() {
            self.seats.give_up(self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Instant;

    #[test]
    fn free_seats_are_taken_at_once_and_the_rest_queue_in_order() {
        let seats = CoreSeats::new(1, 3, false);
        assert_eq!(seats.take(0, || {}, || false), Taken::AtOnce);
        assert!(!seats.someone_queued(0));
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            let (seats, order) = (&seats, &order);
            let h1 = s.spawn(move || {
                let t = seats.take(1, || {}, || false);
                order.lock().unwrap().push(1);
                seats.give_up(0);
                t
            });
            while !seats.someone_queued(0) {
                std::thread::yield_now();
            }
            let h2 = s.spawn(move || {
                let t = seats.take(2, || {}, || false);
                order.lock().unwrap().push(2);
                seats.give_up(0);
                t
            });
            while seats.pools[0].queued.load(Ordering::Relaxed) < 2 {
                std::thread::yield_now();
            }
            seats.give_up(0);
            assert_eq!(h1.join().unwrap(), Taken::AfterWaiting);
            assert_eq!(h2.join().unwrap(), Taken::AfterWaiting);
            assert_eq!(
                *order.lock().unwrap(),
                vec![1, 2],
                "first queued, first served"
            );
        });
        assert_eq!(seats.pools[0].state().free, 1, "every seat came back");
    }

    #[test]
    fn a_queued_worker_sees_the_stop_and_leaves_the_queue() {
        let seats = CoreSeats::new(1, 2, false);
        assert_eq!(seats.take(0, || {}, || false), Taken::AtOnce);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let h = s.spawn(|| seats.take(1, || {}, || stop.load(Ordering::Relaxed)));
            while !seats.someone_queued(0) {
                std::thread::yield_now();
            }
            stop.store(true, Ordering::Relaxed);
            assert_eq!(h.join().unwrap(), Taken::Stopped);
        });
        assert!(!seats.someone_queued(0));
        seats.give_up(0);
        assert_eq!(seats.pools[0].state().free, 1);
    }

    #[test]
    fn a_holder_hands_over_only_after_its_slice_and_only_to_a_queued_worker() {
        let seats = CoreSeats::new(1, 2, false);
        let mut a = Seat::new(&seats, 0, Duration::from_millis(20));
        assert!(a.at_boundary(|_| {}, || false));
        // Nobody queued: the slice running out changes nothing.
        std::thread::sleep(Duration::from_millis(25));
        assert!(a.at_boundary(|_| panic!("a free seat needs no wait"), || false));
        assert_eq!(a.handed_over, 0);
        std::thread::scope(|s| {
            let seats = &seats;
            let h = s.spawn(move || {
                let mut b = Seat::new(seats, 1, Duration::from_millis(20));
                let mut steps = Vec::new();
                assert!(b.at_boundary(|s| steps.push(s), || false));
                assert_eq!(
                    steps,
                    [Stepping::Away, Stepping::Back],
                    "a queued worker steps away and comes back"
                );
            });
            while !seats.someone_queued(0) {
                std::thread::yield_now();
            }
            // Queued, but within the slice: a keeps its seat.
            a.held_since = Some(Instant::now());
            assert!(a.at_boundary(|_| {}, || false));
            assert_eq!(a.handed_over, 0);
            a.held_since = Some(Instant::now() - Duration::from_millis(25));
            // Slice up: a hands over and queues behind b, who gives the seat back as it drops.
            assert!(a.at_boundary(|_| {}, || false));
            assert_eq!(a.handed_over, 1);
            h.join().unwrap();
        });
    }

    #[test]
    fn never_more_workers_inside_than_seats() {
        never_more_inside_than_seats(false);
    }

    #[test]
    fn pinned_workers_keep_to_their_cores_seat() {
        never_more_inside_than_seats(true);
    }

    /// Six workers on two seats, pooled or pinned (worker `id` to seat `id % 2`): at most two
    /// inside at once, and with `pinned` at most one of each seat's workers.
    fn never_more_inside_than_seats(pinned: bool) {
        let seats = CoreSeats::new(2, 6, pinned);
        let inside = AtomicUsize::new(0);
        let inside_per_seat = [AtomicUsize::new(0), AtomicUsize::new(0)];
        let most = AtomicUsize::new(0);
        let most_per_seat = AtomicUsize::new(0);
        let rounds = AtomicU64::new(0);
        let until = Instant::now() + Duration::from_millis(300);
        let stop = || Instant::now() >= until;
        std::thread::scope(|s| {
            for id in 0..6 {
                let (seats, inside, most, rounds) = (&seats, &inside, &most, &rounds);
                let (mine, most_mine) = (&inside_per_seat[id % 2], &most_per_seat);
                s.spawn(move || {
                    let mut seat = Seat::new(seats, id, Duration::from_micros(50));
                    while seat.at_boundary(|_| {}, stop) {
                        if stop() {
                            break;
                        }
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        let here = mine.fetch_add(1, Ordering::SeqCst) + 1;
                        most_mine.fetch_max(here, Ordering::SeqCst);
                        std::hint::black_box((0..200).sum::<u64>());
                        mine.fetch_sub(1, Ordering::SeqCst);
                        inside.fetch_sub(1, Ordering::SeqCst);
                        rounds.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert!(
            most.load(Ordering::SeqCst) <= 2,
            "at most one worker per seat"
        );
        if pinned {
            assert_eq!(
                most_per_seat.load(Ordering::SeqCst),
                1,
                "one per core's seat"
            );
        }
        assert!(rounds.load(Ordering::Relaxed) > 0);
        let free: usize = seats.pools.iter().map(|p| p.state().free).sum();
        assert_eq!(free, 2, "every seat came back");
        assert!(!seats.someone_queued(0) && !seats.someone_queued(1));
    }
}
