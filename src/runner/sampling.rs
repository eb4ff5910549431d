//! The sampler beside a run: a thread of its own that records, every `--sample-ms`, a
//! multi-version protocol's live versions and the workers' commit and abort counts, so that a
//! report can show them over time.

use crate::config::RunConfig;
use crate::metrics::rate_series::{RateCounters, RateTotals};
use crate::metrics::sampler;
use crate::metrics::version_series::VersionSample;
use crate::protocol::{Protocol, parts};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Runs `run` (the executor) and meanwhile, on a thread of its own, samples every
/// `--sample-ms` ([`sampler`]): a multi-version protocol's versions (one that reports
/// [`Protocol::MULTI_VERSION`]; none for a single-version protocol) and, given `rates`, the
/// workers' live commit and abort counts ([`rate_series`](crate::metrics::rate_series); the
/// snapshots are empty without). The sampler sleeps between samples and reads per-worker counts,
/// so the workers do not pay for it.
pub(super) fn sample_while<P: Protocol, T>(
    protocol: &P,
    cfg: &RunConfig,
    rates: Option<&RateCounters>,
    run: impl FnOnce() -> T,
) -> (T, Vec<VersionSample>, Vec<(f64, RateTotals)>) {
    let versions = P::MULTI_VERSION.is_some();
    if !versions && rates.is_none() {
        return (run(), Vec::new(), Vec::new());
    }
    let every = Duration::from_millis(cfg.options.mv.version_sample_ms);
    let expected = (cfg.exec.warmup + cfg.exec.duration).as_millis()
        / u128::from(cfg.options.mv.version_sample_ms.max(1));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            sampler::sample_until(
                every,
                usize::try_from(expected).unwrap_or(usize::MAX),
                &stop,
                |t| {
                    let v = versions.then(|| {
                        VersionSample::of(t, parts::version_stats(protocol).unwrap_or_default())
                    });
                    (v, (t, rates.map(RateCounters::totals).unwrap_or_default()))
                },
            )
        });
        let outcome = run();
        // Release: pairs with the sampler's Acquire, after the workers joined.
        stop.store(true, Ordering::Release);
        sampler.thread().unpark();
        let samples = sampler.join().expect("the sampler panicked");
        let version_samples = samples.iter().filter_map(|(v, _)| *v).collect();
        let rate_snapshots = if rates.is_some() {
            samples.iter().map(|(_, r)| *r).collect()
        } else {
            Vec::new()
        };
        (outcome, version_samples, rate_snapshots)
    })
}
