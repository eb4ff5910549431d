//! Open-loop arrivals (`--rate TPS`, `--arrival poisson|uniform`): when each worker's next
//! transaction arrives, independent of when its last one committed.
//!
//! A closed loop (every worker starts its next transaction when the last commits) can only
//! measure latency at the load the system happens to sustain; it cannot show what PLOR's figures
//! 1 and 6 show, the tail latency at a given offered load, because a slow system simply offers
//! itself less work. In an open loop transactions arrive on a clock, latency counts from the
//! arrival, and a system that falls behind accumulates queueing delay.
//!
//! **One stream per worker.** Worker `i` of `n` draws its own arrivals at `rate / n` per second
//! from its own generator and serves them in order. The superposition of `n` independent Poisson
//! processes of rate `rate / n` is exactly a Poisson process of rate `rate`, so the offered load
//! is what was asked without any shared state: no counter or lock is touched per arrival (a
//! shared arrival queue would put one contended word on every transaction, the very thing the
//! protocols are measured on). The price is that queueing is per worker (n FIFO queues, as with
//! clients bound to connections) rather than one queue served by n workers: a worker whose
//! transactions were slow does not hand its backlog to an idle one, so past saturation the
//! backlog, and the latency, can be somewhat higher than a shared queue's. `uniform` spaces each
//! worker's arrivals exactly `n / rate` apart, worker `i` offset by `i / rate`, so the merged
//! stream is evenly spaced at `1 / rate`.
//!
//! A worker sleeps while its next arrival is far and spins through the last half millisecond
//! (yields, when workers outnumber cores), so that its own late wake-up does not pass for the
//! system's latency.
//!
//! The arrival generator is seeded apart from the request generator, so the same `--seed` draws
//! the same transactions with or without `--rate`.

use crate::config::{ArrivalProcess, OpenLoop};
use crate::random::FastRng;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Mixed into `--seed` for the arrival generators, so they never repeat a request generator's
/// stream.
const ARRIVAL_SEED: u64 = 0x6f70_656e_5f6c_6f6f;

/// The last stretch before an arrival is not slept: a sleep overshoots by the timer slack (about
/// 50 us) and, on a busy machine, by the wait for a core (milliseconds), and that lateness would
/// count as the transaction's latency. A worker spins through it instead, or yields when the
/// run has more workers than cores (then a sibling worker needs the core more than the
/// arrival needs precision).
const SPIN_WINDOW: Duration = Duration::from_micros(500);

/// The longest single sleep, so that a worker waiting for a distant arrival still sees stop soon.
const LONGEST_SLEEP: Duration = Duration::from_millis(1);

/// One worker's arrival times.
pub(super) struct ArrivalClock {
    /// Time zero of the run's arrivals.
    origin: Instant,
    /// Nanoseconds from `origin` to the next arrival (a float so that sub-nanosecond gaps of a
    /// very high rate do not round away).
    next_ns: f64,
    /// The mean gap between this worker's arrivals, ns.
    mean_gap_ns: f64,
    arrival: ArrivalProcess,
    rng: FastRng,
}

impl ArrivalClock {
    /// Worker `worker` of `workers`' share of `open`, starting at `origin`.
    pub(super) fn new(
        open: &OpenLoop,
        workers: usize,
        worker: usize,
        seed: u64,
        origin: Instant,
    ) -> Self {
        let mean_gap_ns = 1e9 * workers as f64 / open.rate_tps;
        let mut clock = ArrivalClock {
            origin,
            next_ns: 0.0,
            mean_gap_ns,
            arrival: open.arrival,
            rng: FastRng::for_worker(seed ^ ARRIVAL_SEED, worker),
        };
        clock.next_ns = match open.arrival {
            // The first arrival is itself an exponential gap after time zero (memorylessness:
            // the process has been running forever).
            ArrivalProcess::Poisson => clock.gap_ns(),
            ArrivalProcess::Uniform => mean_gap_ns * worker as f64 / workers as f64,
        };
        clock
    }

    /// The next gap, ns.
    fn gap_ns(&mut self) -> f64 {
        match self.arrival {
            // Inversion: -ln(U) is exponential with mean 1 for U uniform in (0, 1]; `next_f64`
            // is in [0, 1), so 1 - it is in (0, 1] and the logarithm is finite.
            ArrivalProcess::Poisson => -(1.0 - self.rng.next_f64()).ln() * self.mean_gap_ns,
            ArrivalProcess::Uniform => self.mean_gap_ns,
        }
    }

    /// The next arrival's time; the clock moves on to the one after.
    pub(super) fn take(&mut self) -> Instant {
        let at = self.origin + Duration::from_nanos(self.next_ns as u64);
        self.next_ns += self.gap_ns();
        at
    }
}

/// Waits until `at` (at once when it has passed: the system is behind). Returns false if the run
/// reached the `stop` period value in `period` meanwhile. Sleeps in steps of at most
/// [`LONGEST_SLEEP`] while the arrival is far, then spends the last [`SPIN_WINDOW`] spinning
/// (or, when `oversubscribed`, yielding the CPU to the run's other workers). Every wait ends by
/// the arrival time, so even the spin is bounded.
pub(super) fn wait_until(at: Instant, period: &AtomicU8, stop: u8, oversubscribed: bool) -> bool {
    let mut polls = 0u32;
    loop {
        let now = Instant::now();
        if now >= at {
            return true;
        }
        // Acquire: pairs with the coordinator's Release store of the period, as in the workers'
        // loop. Checked on every sleep and every 1024th spin (the clock read is the spin's cost).
        if polls % 1024 == 0 && period.load(Ordering::Acquire) == stop {
            return false;
        }
        polls = polls.wrapping_add(1);
        let left = at - now;
        if left > SPIN_WINDOW {
            std::thread::sleep((left - SPIN_WINDOW).min(LONGEST_SLEEP));
            polls = 0;
        } else if oversubscribed {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(rate_tps: f64, arrival: ArrivalProcess) -> OpenLoop {
        OpenLoop { rate_tps, arrival }
    }

    /// The gaps of one worker, in ns.
    fn gaps(clock: &mut ArrivalClock, n: usize) -> Vec<f64> {
        let mut last = clock.origin;
        (0..n)
            .map(|_| {
                let at = clock.take();
                let g = (at - last).as_nanos() as f64;
                last = at;
                g
            })
            .collect()
    }

    #[test]
    fn poisson_gaps_have_the_per_worker_mean_and_an_exponential_spread() {
        // 1000 tx/s over 4 workers: each worker's mean gap is 4 ms.
        let mut c = ArrivalClock::new(
            &open(1000.0, ArrivalProcess::Poisson),
            4,
            1,
            7,
            Instant::now(),
        );
        let g = gaps(&mut c, 100_000);
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        assert!((mean / 4e6 - 1.0).abs() < 0.02, "mean gap {mean} ns");
        // Exponential: P(gap > mean) = 1/e, and the standard deviation equals the mean.
        let above = g.iter().filter(|&&x| x > 4e6).count() as f64 / g.len() as f64;
        assert!((above - (-1.0f64).exp()).abs() < 0.01, "{above}");
        let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64;
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.03,
            "cv {}",
            var.sqrt() / mean
        );
    }

    #[test]
    fn uniform_workers_interleave_evenly() {
        let origin = Instant::now();
        let o = open(1000.0, ArrivalProcess::Uniform);
        let mut all: Vec<Duration> = (0..4)
            .flat_map(|w| {
                let mut c = ArrivalClock::new(&o, 4, w, 1, origin);
                (0..10).map(move |_| c.take() - origin).collect::<Vec<_>>()
            })
            .collect();
        all.sort();
        // Merged, the arrivals are 1 ms apart from time zero.
        for (k, t) in all.iter().enumerate() {
            let want = k as f64 * 1e6;
            assert!(
                (t.as_nanos() as f64 - want).abs() < 2.0,
                "arrival {k} at {t:?}"
            );
        }
    }

    #[test]
    fn streams_differ_between_workers_and_repeat_with_the_seed() {
        let o = open(1e6, ArrivalProcess::Poisson);
        let origin = Instant::now();
        let a = gaps(&mut ArrivalClock::new(&o, 2, 0, 5, origin), 50);
        let b = gaps(&mut ArrivalClock::new(&o, 2, 1, 5, origin), 50);
        let a2 = gaps(&mut ArrivalClock::new(&o, 2, 0, 5, origin), 50);
        assert_ne!(a, b);
        assert_eq!(a, a2);
    }

    #[test]
    fn waiting_returns_at_the_arrival_or_at_stop() {
        let period = AtomicU8::new(1);
        for oversubscribed in [false, true] {
            for micros in [300, 3000] {
                let at = Instant::now() + Duration::from_micros(micros);
                assert!(wait_until(at, &period, 2, oversubscribed));
                assert!(Instant::now() >= at);
            }
        }
        period.store(2, Ordering::Relaxed);
        let far = Instant::now() + Duration::from_secs(60);
        assert!(!wait_until(far, &period, 2, false));
        assert!(!wait_until(far, &period, 2, true));
    }
}
