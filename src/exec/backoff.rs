//! AdaptiveBackoff (Cicada; CCBench Table 1): an artificial delay before retrying an aborted
//! transaction, with a maximum tuned at run time by hill climbing on throughput.
//!
//! Every `PERIOD` the leader (worker 0) compares the commits of the last period with the period
//! before. If throughput rose, it keeps changing the maximum in the same direction; if it fell, it
//! reverses. Each retry waits a uniform random time in `[0, max]`. Workers publish their commit
//! counts in their own cache-padded slot (written by one worker, read by the leader), so the
//! mechanism adds no shared counter to the hot path.

use crate::random::FastRng;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the leader re-tunes the maximum.
const PERIOD: Duration = Duration::from_millis(5);
/// Step by which the maximum changes, ns (Cicada uses 0.5 us).
const STEP_NS: i64 = 500;
/// Upper bound of the maximum, ns.
const MAX_NS: i64 = 100_000;

/// Shared state of adaptive backoff for one run.
pub struct AdaptiveBackoff {
    /// Current maximum delay, ns. Written by the leader, read by every worker (Relaxed: a stale
    /// value only makes one delay slightly off).
    max_ns: CachePadded<AtomicU64>,
    /// Commits per worker, each written only by its worker.
    commits: Box<[CachePadded<AtomicU64>]>,
    /// Leader-private tuning state, in atomics only so the struct is `Sync`.
    direction: AtomicI64,
    last_total: AtomicU64,
    last_rate: AtomicU64,
}

/// The leader's clock (kept by worker 0).
pub struct LeaderClock {
    next: Instant,
}

impl AdaptiveBackoff {
    /// State for `threads` workers, starting with no delay and a growing direction.
    pub fn new(threads: usize) -> Self {
        AdaptiveBackoff {
            max_ns: CachePadded::new(AtomicU64::new(0)),
            commits: (0..threads)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            direction: AtomicI64::new(STEP_NS),
            last_total: AtomicU64::new(0),
            last_rate: AtomicU64::new(0),
        }
    }

    /// A clock for the leader.
    pub fn leader_clock(&self) -> LeaderClock {
        LeaderClock {
            next: Instant::now() + PERIOD,
        }
    }

    /// Publishes worker `id`'s commit count (call after each commit).
    #[inline]
    pub fn publish_commits(&self, id: usize, total: u64) {
        // Relaxed: the leader only needs an approximately current count.
        self.commits[id].store(total, Ordering::Relaxed);
    }

    /// Leader only: re-tunes the maximum when a period has passed.
    pub fn tune(&self, clock: &mut LeaderClock) {
        let now = Instant::now();
        if now < clock.next {
            return;
        }
        clock.next = now + PERIOD;
        let total: u64 = self.commits.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        let rate = total - self.last_total.swap(total, Ordering::Relaxed);
        let last_rate = self.last_rate.swap(rate, Ordering::Relaxed);
        let mut dir = self.direction.load(Ordering::Relaxed);
        if rate < last_rate {
            dir = -dir;
            self.direction.store(dir, Ordering::Relaxed);
        }
        let max = (self.max_ns.load(Ordering::Relaxed) as i64 + dir).clamp(0, MAX_NS);
        self.max_ns.store(max as u64, Ordering::Relaxed);
    }

    /// The delay before a retry: uniform in `[0, max]`.
    #[inline]
    pub fn delay_ns(&self, rng: &mut FastRng) -> u64 {
        let max = self.max_ns.load(Ordering::Relaxed);
        if max == 0 { 0 } else { rng.below(max + 1) }
    }

    /// The current maximum (for tests and reports).
    pub fn max_ns(&self) -> u64 {
        self.max_ns.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_while_throughput_grows_and_reverses_when_it_drops() {
        let b = AdaptiveBackoff::new(1);
        let mut clock = b.leader_clock();
        let mut commits = 0;
        for step in 1..=3 {
            commits += 100 * step;
            b.publish_commits(0, commits);
            clock.next = Instant::now();
            b.tune(&mut clock);
        }
        assert_eq!(b.max_ns(), 3 * STEP_NS as u64);
        commits += 10; // throughput fell
        b.publish_commits(0, commits);
        clock.next = Instant::now();
        b.tune(&mut clock);
        assert_eq!(b.max_ns(), 2 * STEP_NS as u64);
        let mut rng = FastRng::new(1);
        assert!(b.delay_ns(&mut rng) <= b.max_ns());
    }
}
