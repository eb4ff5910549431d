//! The oldest snapshot of any active transaction (module docs, "Reclamation: the watermark").

use crate::sync::atomic::{AtomicU64, Ordering, fence};
use crossbeam_utils::CachePadded;
use std::time::{Duration, Instant};

/// The smallest snapshot any active transaction holds, refreshed at most every interval
/// (RapidGC; module docs, "Reclamation").
///
/// The protocol's clock stays a `std` atomic under `--cfg loom` (no model uses the watermark).
///
/// Shared words, who writes them, who reads them: `active[i]` is written by worker `i` at begin
/// and end, read by whoever refreshes; `cached` is written by the refreshing worker (any), read by
/// every writer that collects.
pub struct Watermark {
    active: Box<[CachePadded<AtomicU64>]>,
    cached: CachePadded<AtomicU64>,
    interval: Duration,
}

/// An `active` slot of a worker outside any transaction.
const IDLE: u64 = u64::MAX;

impl Watermark {
    /// A watermark over `workers` workers, refreshed at most every `interval`.
    pub fn new(workers: usize, interval: Duration) -> Self {
        Watermark {
            active: (0..workers.max(1))
                .map(|_| CachePadded::new(AtomicU64::new(IDLE)))
                .collect(),
            cached: CachePadded::new(AtomicU64::new(0)),
            interval,
        }
    }

    /// The refresh interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Worker `id` starts a transaction: registers, then takes its snapshot from `clock`.
    ///
    /// The slot gets a clock value read before the slot store and the snapshot one read after it,
    /// all `SeqCst` (as `refresh`'s loads): a refresh that misses the slot store read the clock
    /// before the snapshot was read, so its watermark is at most the snapshot; a refresh that sees
    /// it uses a value at most the snapshot. Either way every active snapshot stays `>= wm`.
    #[inline]
    pub fn enter(&self, id: usize, clock: &std::sync::atomic::AtomicU64) -> u64 {
        // SeqCst (all three): the argument above needs one total order over the clock loads and
        // the slot's store and loads.
        let provisional = clock.load(Ordering::SeqCst);
        self.active[id].store(provisional, Ordering::SeqCst);
        clock.load(Ordering::SeqCst)
    }

    /// Worker `id` starts a transaction whose timestamp it draws from `clock` (`fetch_add`, a
    /// unique timestamp, as timestamp ordering needs): registers a clock value first, as
    /// [`enter`](Self::enter) does, so the same argument keeps every active timestamp `>= wm`.
    #[inline]
    pub fn enter_unique(&self, id: usize, clock: &std::sync::atomic::AtomicU64) -> u64 {
        // SeqCst (all three): see `enter`.
        let provisional = clock.load(Ordering::SeqCst);
        self.active[id].store(provisional, Ordering::SeqCst);
        clock.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Worker `id` starts a transaction on a clock that is not one shared word (Cicada's
    /// loosely synchronised per-worker clocks): `provisional` is a value of the clock read before
    /// this call, and the caller takes its timestamp from the clock after it returns, at least
    /// `provisional`. Refreshes must then use [`refresh_at`](Self::refresh_at) with a clock value
    /// read before they look at the slots. The argument is `enter`'s with the clock reads replaced
    /// by reads of a monotonic time source, ordered by the `SeqCst` fences here and in
    /// `refresh_at`.
    #[inline]
    pub fn enter_at(&self, id: usize, provisional: u64) {
        // SeqCst store and fence: the slot store is ordered before the caller's later clock read,
        // and against `refresh_at`'s fence (see above).
        self.active[id].store(provisional, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// [`maybe_refresh`](Self::maybe_refresh) for [`enter_at`](Self::enter_at)'s clocks: `now`
    /// reads the clock.
    #[inline]
    pub fn maybe_refresh_at(&self, now: impl FnOnce() -> u64, last: Instant) -> Instant {
        if self.interval.is_zero() {
            self.refresh_at(now());
            return last;
        }
        let t = Instant::now();
        if t.duration_since(last) < self.interval {
            return last;
        }
        self.refresh_at(now());
        t
    }

    /// Recomputes the watermark from `now`, a clock value read before this call, and the
    /// active slots ([`enter_at`](Self::enter_at)).
    pub fn refresh_at(&self, now: u64) {
        // SeqCst fence: the clock read before it precedes the slot loads (see `enter_at`).
        fence(Ordering::SeqCst);
        let mut wm = now;
        for slot in self.active.iter() {
            // SeqCst: see `enter_at`.
            wm = wm.min(slot.load(Ordering::SeqCst));
        }
        // Release: as in `refresh`.
        self.cached.fetch_max(wm, Ordering::Release);
    }

    /// Worker `id` left its transaction (it dereferences no version any more).
    #[inline]
    pub fn leave(&self, id: usize) {
        // Release: the worker's reads of versions happen before a refresh that sees it idle.
        self.active[id].store(IDLE, Ordering::Release);
    }

    /// The last computed watermark.
    #[inline]
    pub fn current(&self) -> u64 {
        // Acquire: pairs with `refresh`'s Release; the value itself is all that matters.
        self.cached.load(Ordering::Acquire)
    }

    /// Recomputes the watermark if `last` (the caller's last refresh) is at least an interval
    /// ago; returns the time of the refresh to remember.
    #[inline]
    pub fn maybe_refresh(&self, clock: &std::sync::atomic::AtomicU64, last: Instant) -> Instant {
        if self.interval.is_zero() {
            self.refresh(clock);
            return last;
        }
        let now = Instant::now();
        if now.duration_since(last) < self.interval {
            return last;
        }
        self.refresh(clock);
        now
    }

    /// Recomputes the watermark now: the clock, then the minimum of the active slots.
    pub fn refresh(&self, clock: &std::sync::atomic::AtomicU64) {
        // SeqCst: see `enter`.
        let mut wm = clock.load(Ordering::SeqCst);
        for slot in self.active.iter() {
            wm = wm.min(slot.load(Ordering::SeqCst));
        }
        // Release: publishes the value (no data depends on it); fetch_max keeps it monotone
        // when two workers refresh at once (both values are safe, the larger is fresher).
        self.cached.fetch_max(wm, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watermark_is_the_oldest_active_snapshot() {
        let clock = std::sync::atomic::AtomicU64::new(10);
        let wm = Watermark::new(2, Duration::ZERO);
        let s0 = wm.enter(0, &clock);
        clock.store(20, Ordering::SeqCst);
        let s1 = wm.enter(1, &clock);
        assert_eq!((s0, s1), (10, 20));
        wm.refresh(&clock);
        assert_eq!(wm.current(), 10);
        wm.leave(0);
        wm.refresh(&clock);
        assert_eq!(wm.current(), 20);
        wm.leave(1);
        clock.store(30, Ordering::SeqCst);
        let _ = wm.maybe_refresh(&clock, Instant::now());
        assert_eq!(wm.current(), 30, "interval 0 refreshes every time");
    }
}
