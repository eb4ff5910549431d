//! Live versions over time (CCBench figure 14 plots them): a multi-version run's version count
//! and version memory, sampled every `--sample-ms` by a thread of the runner while the workers
//! run ([`sampler`](super::sampler)).
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

impl VersionSample {
    /// The sample of `stats` taken `t_s` seconds into the run.
    pub fn of(t_s: f64, stats: VersionStats) -> VersionSample {
        VersionSample {
            t_s,
            live_versions: stats.live_versions,
            version_bytes: stats.version_bytes,
        }
    }
}
