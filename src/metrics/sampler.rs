//! The sampling loop behind every time series of a run (`--sample-ms`): a thread of the runner
//! that takes a sample at once, then one every interval, and a last one when told to stop, and
//! sleeps in between. What a sample is, and what it reads, is the caller's: live versions
//! ([`version_series`](super::version_series)), commit and abort counts
//! ([`rate_series`](super::rate_series)).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Takes a sample (`take`, given the seconds since the sampler started) at once, then every
/// `every`, until `stop` is set (the caller then unparks the sampling thread so that it ends
/// without waiting out its interval), and once more at the end. Returns the samples in time
/// order; `expected` sizes the buffer (the samples the run should take), so that the sampler does
/// not reallocate while workers run.
pub fn sample_until<S>(
    every: Duration,
    expected: usize,
    stop: &AtomicBool,
    mut take: impl FnMut(f64) -> S,
) -> Vec<S> {
    let every = every.max(Duration::from_millis(1));
    let mut samples = Vec::with_capacity(expected.saturating_add(2));
    let start = Instant::now();
    let mut next = start;
    loop {
        samples.push(take(start.elapsed().as_secs_f64()));
        next += every;
        loop {
            // Acquire: pairs with the runner's Release store after the workers joined, so the
            // last sample reads the counts as the run left them.
            if stop.load(Ordering::Acquire) {
                samples.push(take(start.elapsed().as_secs_f64()));
                return samples;
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            // Wakes at the interval's end or when the runner unparks it at the run's end (a
            // spurious wake-up only loops).
            std::thread::park_timeout(next - now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI64;

    #[test]
    fn samples_are_in_time_order_and_end_when_told() {
        let count = AtomicI64::new(0);
        let stop = AtomicBool::new(false);
        let samples = std::thread::scope(|s| {
            let sampler = s.spawn(|| {
                sample_until(Duration::from_millis(2), 64, &stop, |t| {
                    // Relaxed: a test counter.
                    (t, count.fetch_add(1, Ordering::Relaxed))
                })
            });
            std::thread::sleep(Duration::from_millis(30));
            // Release: pairs with the sampler's Acquire.
            stop.store(true, Ordering::Release);
            sampler.thread().unpark();
            sampler.join().unwrap()
        });
        assert!(samples.len() >= 3, "{samples:?}");
        assert_eq!(samples[0].1, 0);
        assert!(samples.windows(2).all(|w| w[0].0 <= w[1].0), "{samples:?}");
        assert!(
            samples.windows(2).all(|w| w[1].1 == w[0].1 + 1),
            "every read is one sample: {samples:?}"
        );
        assert!(samples.last().unwrap().0 > 0.0, "{samples:?}");
    }

    #[test]
    fn a_long_interval_still_ends_at_once_when_stopped() {
        let stop = AtomicBool::new(false);
        let samples = std::thread::scope(|s| {
            let sampler = s.spawn(|| sample_until(Duration::from_secs(3600), 1, &stop, |t| t));
            std::thread::sleep(Duration::from_millis(5));
            // Release: pairs with the sampler's Acquire.
            stop.store(true, Ordering::Release);
            sampler.thread().unpark();
            sampler.join().unwrap()
        });
        // Unparked, the sampler ends without waiting out its hour.
        assert_eq!(
            samples.len(),
            2,
            "the first sample and the last: {samples:?}"
        );
    }
}
