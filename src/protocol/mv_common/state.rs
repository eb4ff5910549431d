//! The state every multi-version protocol keeps for its versions: the watermark and the version
//! store it owns ([`MvState`]), and what each worker keeps ([`WorkerVersions`]), with RapidGC's
//! deferred pass over the records a worker installed.

use super::{LOCK, MvRecord};
use crate::protocol::ProtocolOptions;
use crate::storage::versions::{GcQueue, VersionPool, VersionStore, Watermark};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A multi-version protocol's watermark and version store, built from the shared options
/// (`MvOptions`: the refresh interval, the memory cap, AssertiveVersionReuse).
pub(crate) struct MvState<V> {
    /// The oldest active snapshot, refreshed at most every `--gc-interval-us`.
    pub(crate) watermark: Watermark,
    /// The older versions' nodes and their per-worker pools.
    pub(crate) versions: VersionStore<V>,
}

impl<V: Default> MvState<V> {
    /// The state for `opts.threads` workers with the options in `opts.mv`.
    pub(crate) fn new(opts: &ProtocolOptions) -> Self {
        MvState {
            watermark: Watermark::new(opts.threads, Duration::from_micros(opts.mv.gc_interval_us)),
            versions: VersionStore::new(
                opts.threads,
                opts.mv.version_memory_bytes,
                opts.mv.version_reuse,
            ),
        }
    }

    /// What worker `id` keeps for its versions.
    pub(crate) fn worker<'db, M: MvRecord<Version = V>>(
        &'db self,
        id: usize,
    ) -> WorkerVersions<'db, M> {
        WorkerVersions {
            pool: self.versions.pool(id),
            scratch: Vec::new(),
            last_refresh: Instant::now(),
            gc: GcQueue::default(),
        }
    }
}

/// What a multi-version worker keeps for its versions.
pub(crate) struct WorkerVersions<'db, M: MvRecord> {
    /// Where its nodes come from and go back to.
    pub(crate) pool: VersionPool<'db, M::Version>,
    /// Scratch for copying a version into a node.
    pub(crate) scratch: Vec<u8>,
    /// When this worker last refreshed the watermark.
    pub(crate) last_refresh: Instant,
    /// Records this worker installed, to collect once the watermark passes them (RapidGC).
    pub(crate) gc: GcQueue<&'db M>,
}

impl<'db, M: MvRecord> WorkerVersions<'db, M> {
    /// An attempt's start, after it entered `watermark` at a snapshot of the shared `clock`:
    /// refreshes the watermark if its interval passed, then runs RapidGC's deferred pass below
    /// it ([`collect_queued`](Self::collect_queued)).
    #[inline]
    pub(crate) fn start_attempt(&mut self, watermark: &Watermark, clock: &AtomicU64) {
        self.last_refresh = watermark.maybe_refresh(clock, self.last_refresh);
        self.collect_queued(watermark.current());
    }

    /// RapidGC's deferred pass, for records whose word is the family's (`LOCK | timestamp of the
    /// inline version`): collects the chain of every queued record whose installed version
    /// `watermark` has passed ([`GcQueue`],
    /// [`VersionChain::collect_deferred`](crate::storage::versions::VersionChain::collect_deferred)).
    #[inline]
    pub(crate) fn collect_queued(&mut self, watermark: u64) {
        while let Some(meta) = self.gc.pop_ready(watermark) {
            let word = meta.word();
            meta.chain().collect_deferred(
                || {
                    // Acquire: after the collector bit's Acquire (see `collect_deferred`); a
                    // writer that pushed before the bit was taken is seen holding the record.
                    let seen = word.load(Ordering::Acquire);
                    (seen & LOCK == 0).then_some(seen)
                },
                watermark,
                &mut self.pool,
            );
        }
    }
}
