//! Live versions over time (CCBench figure 14 plots them): a multi-version run's version count
//! and version memory, sampled every `--sample-ms` by a thread of the runner while the workers
//! run.
//!
//! The sampler adds nothing to the workers' path: it reads the counts version storage keeps
//! anyway (`storage::versions::VersionStore`: one live counter per worker, each written by its
//! worker only, summed at read time; the allocator's byte total, touched once per refill) and
//! sleeps in between. A sample's sum is not a snapshot across workers (each counter is read at a
//! slightly different moment), which is exact enough for a curve whose values move by thousands.
//!
//! Time runs from just before the workers start: the warm-up (`warmup_s` in the report's
//! config) comes first, then the measured period.

use crate::storage::versions::VersionStats;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Most samples one run may record (about 2.4 MB in the report); configuration validation
/// refuses a `--sample-ms` that would take more over the warm-up and the measured period.
pub const MAX_VERSION_SAMPLES: u64 = 100_000;

/// Longest `--sample-ms` accepted: a minute.
pub const MAX_SAMPLE_MS: u64 = 60_000;

/// One sample of a run's versions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VersionSample {
    /// Seconds since just before the workers started (warm-up included).
    pub t_s: f64,
    /// Older versions in chains at that moment.
    pub live_versions: i64,
    /// Bytes of version nodes taken from the allocator by then (never given back during a run,
    /// so this only grows: the version memory's high-water mark at `t_s`).
    pub version_bytes: usize,
}

/// Samples `read` at once, then every `every`, until `stop` is set (the caller then unparks the
/// sampling thread so that it ends without waiting out its interval), and once more at the end.
/// Returns the samples in time order; `expected` sizes the buffer (the samples the run should
/// take), so that the sampler does not reallocate while workers run.
pub fn sample_until(
    every: Duration,
    expected: usize,
    stop: &AtomicBool,
    read: impl Fn() -> VersionStats,
) -> Vec<VersionSample> {
    let every = every.max(Duration::from_millis(1));
    let mut samples = Vec::with_capacity(expected.saturating_add(2));
    let start = Instant::now();
    let take = |samples: &mut Vec<VersionSample>| {
        let stats = read();
        samples.push(VersionSample {
            t_s: start.elapsed().as_secs_f64(),
            live_versions: stats.live_versions,
            version_bytes: stats.version_bytes,
        });
    };
    let mut next = start;
    loop {
        take(&mut samples);
        next += every;
        loop {
            // Acquire: pairs with the runner's Release store after the workers joined, so the
            // last sample reads the counts as the run left them.
            if stop.load(Ordering::Acquire) {
                take(&mut samples);
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
        let live = AtomicI64::new(0);
        let stop = AtomicBool::new(false);
        let samples = std::thread::scope(|s| {
            let sampler = s.spawn(|| {
                sample_until(Duration::from_millis(2), 64, &stop, || VersionStats {
                    // Relaxed: a test counter.
                    live_versions: live.fetch_add(1, Ordering::Relaxed),
                    ..VersionStats::default()
                })
            });
            std::thread::sleep(Duration::from_millis(30));
            // Release: pairs with the sampler's Acquire.
            stop.store(true, Ordering::Release);
            sampler.thread().unpark();
            sampler.join().unwrap()
        });
        assert!(samples.len() >= 3, "{samples:?}");
        assert_eq!(samples[0].live_versions, 0);
        assert!(
            samples.windows(2).all(|w| w[0].t_s <= w[1].t_s),
            "{samples:?}"
        );
        assert!(
            samples
                .windows(2)
                .all(|w| w[1].live_versions == w[0].live_versions + 1),
            "every read is one sample: {samples:?}"
        );
        assert!(samples.last().unwrap().t_s > 0.0, "{samples:?}");
    }

    #[test]
    fn a_long_interval_still_ends_at_once_when_stopped() {
        let stop = AtomicBool::new(false);
        let samples = std::thread::scope(|s| {
            let sampler = s
                .spawn(|| sample_until(Duration::from_secs(3600), 1, &stop, VersionStats::default));
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
