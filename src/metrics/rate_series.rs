//! Throughput and abort ratio over time (MOCC figure 8 plots them): the commits and aborts of
//! each `--sample-ms` interval of a run, per transaction type, so that a workload whose nature
//! changes during the run (`workload::shifting`) shows when it changed and how fast each protocol
//! followed.
//!
//! The workers pay one uncontended store per counted attempt and nothing else: each worker (each
//! thread, under the coroutine executor) owns a [`RateSlot`] on cache lines of its own and is its
//! only writer, so a count is a load and a store of a line no other worker writes (no atomic
//! read-modify-write, no shared line on the hot path). The sampler thread
//! ([`sampler`](super::sampler)) sums the slots every interval ([`RateCounters::totals`]); the
//! series is the differences between consecutive sums ([`intervals`]). A sum is not a snapshot
//! across workers (each slot is read at a slightly different moment), which moves a count at an
//! interval's edge into its neighbour, never loses one: the intervals add up to the last sum,
//! taken after the workers joined.
//!
//! The counters count what the run's totals count: commits and aborts inside the measured period
//! (re-executions are not aborts). So the intervals add up to the report's `commits` and
//! `aborts`, and the warm-up's intervals read zero (time runs from just before the workers
//! start, as the version samples' does).

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// Transaction types the live counters tell apart; a workload with more folds the rest into the
/// last (TPC-C has five, every other workload at most two).
pub const RATE_TYPES: usize = 7;

/// One worker's live counts: commits per transaction type and aborts, written by that worker
/// only. Aligned to two cache lines (the adjacent-line prefetcher pairs them) so that no other
/// worker's slot shares them.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct RateSlot {
    commits: [AtomicU64; RATE_TYPES],
    aborts: AtomicU64,
}

/// Adds one to a counter only its owner writes.
#[inline]
fn bump(counter: &AtomicU64) {
    // Relaxed, and a load and a store rather than a read-modify-write: the slot's worker is the
    // only writer, so no increment can be lost; the sampler's reads need no order with anything
    // else (a count read late shows in the next interval).
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

impl RateSlot {
    /// Counts a measured commit of transaction type `ty`.
    #[inline]
    pub fn commit(&self, ty: usize) {
        bump(&self.commits[ty.min(RATE_TYPES - 1)]);
    }

    /// Counts a measured aborted attempt (a re-execution is not an abort: `WorkerStats::abort`).
    #[inline]
    pub fn abort(&self, why: crate::protocol::Abort) {
        if why != crate::protocol::Abort::Reexecute {
            bump(&self.aborts);
        }
    }

    fn add_to(&self, totals: &mut RateTotals) {
        for (t, c) in totals.commits.iter_mut().zip(&self.commits) {
            // Relaxed: see `bump`.
            *t += c.load(Ordering::Relaxed);
        }
        // Relaxed: see `bump`.
        totals.aborts += self.aborts.load(Ordering::Relaxed);
    }
}

/// Every worker's slot for one run.
#[derive(Debug)]
pub struct RateCounters {
    slots: Box<[RateSlot]>,
}

impl RateCounters {
    /// Zeroed slots for `workers` workers (threads, under the coroutine executor).
    pub fn new(workers: usize) -> Self {
        RateCounters {
            slots: (0..workers).map(|_| RateSlot::default()).collect(),
        }
    }

    /// Worker `worker`'s slot.
    pub fn slot(&self, worker: usize) -> &RateSlot {
        &self.slots[worker]
    }

    /// The counts so far, summed over the workers.
    pub fn totals(&self) -> RateTotals {
        let mut totals = RateTotals::default();
        for s in self.slots.iter() {
            s.add_to(&mut totals);
        }
        totals
    }
}

/// Counts summed over the workers up to a moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateTotals {
    /// Commits per transaction type ([`RATE_TYPES`]).
    pub commits: [u64; RATE_TYPES],
    /// Aborted attempts.
    pub aborts: u64,
}

/// One interval of a run's rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateSample {
    /// The interval's end, in seconds since just before the workers started (warm-up
    /// included).
    pub t_s: f64,
    /// Its length in seconds (the sampler's interval, or what a loaded machine made of it).
    pub interval_s: f64,
    /// Measured commits in it.
    pub commits: u64,
    /// Measured aborted attempts in it.
    pub aborts: u64,
    /// `commits / interval_s`.
    pub throughput_tps: f64,
    /// `aborts / (commits + aborts)`; 0 for an interval with neither.
    pub abort_ratio: f64,
    /// Commits per transaction type, in the workload's `txn_types` order; absent for a workload
    /// of one type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commits_by_type: Vec<u64>,
}

/// The intervals between consecutive `(seconds, totals)` snapshots of a workload of `types`
/// transaction types; empty for fewer than two snapshots.
pub fn intervals(snapshots: &[(f64, RateTotals)], types: usize) -> Vec<RateSample> {
    let kept = types.min(RATE_TYPES);
    snapshots
        .windows(2)
        .map(|w| {
            let ((t0, a), (t1, b)) = (w[0], w[1]);
            let by_type: Vec<u64> = (0..RATE_TYPES)
                .map(|i| b.commits[i].saturating_sub(a.commits[i]))
                .collect();
            let commits = by_type.iter().sum();
            let aborts = b.aborts.saturating_sub(a.aborts);
            let interval_s = (t1 - t0).max(0.0);
            RateSample {
                t_s: t1,
                interval_s,
                commits,
                aborts,
                throughput_tps: if interval_s > 0.0 {
                    commits as f64 / interval_s
                } else {
                    0.0
                },
                abort_ratio: if commits + aborts == 0 {
                    0.0
                } else {
                    aborts as f64 / (commits + aborts) as f64
                },
                commits_by_type: if kept > 1 {
                    by_type[..kept].to_vec()
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Abort;

    #[test]
    fn slots_sum_per_type_and_skip_reexecutions() {
        let c = RateCounters::new(3);
        c.slot(0).commit(0);
        c.slot(1).commit(1);
        c.slot(2).commit(1);
        // A type past the counters folds into the last.
        c.slot(2).commit(RATE_TYPES + 3);
        c.slot(0).abort(Abort::Wounded);
        c.slot(1).abort(Abort::Reexecute);
        let t = c.totals();
        assert_eq!(t.commits[..2], [1, 2]);
        assert_eq!(t.commits[RATE_TYPES - 1], 1);
        assert_eq!(t.aborts, 1);
        assert!(std::mem::align_of::<RateSlot>() >= 128);
    }

    #[test]
    fn intervals_are_differences_that_add_up_to_the_last_totals() {
        let at = |commits: [u64; 2], aborts| {
            let mut t = RateTotals::default();
            t.commits[..2].copy_from_slice(&commits);
            t.aborts = aborts;
            t
        };
        let snaps = [
            (0.0, at([0, 0], 0)),
            (0.1, at([10, 0], 0)),
            (0.2, at([10, 30], 10)),
            (0.4, at([15, 30], 10)),
        ];
        let s = intervals(&snaps, 2);
        assert_eq!(s.len(), 3);
        assert_eq!(s.iter().map(|s| s.commits).collect::<Vec<_>>(), [10, 30, 5]);
        assert_eq!(s[1].commits_by_type, [0, 30]);
        assert!((s[1].abort_ratio - 0.25).abs() < 1e-12);
        assert!((s[2].throughput_tps - 25.0).abs() < 1e-9, "{:?}", s[2]);
        assert!((s[2].interval_s - 0.2).abs() < 1e-12);
        assert_eq!(s.iter().map(|s| s.commits).sum::<u64>(), 45);
        assert_eq!(s.iter().map(|s| s.aborts).sum::<u64>(), 10);
        // One type: no per-type column.
        assert!(intervals(&snaps, 1)[0].commits_by_type.is_empty());
        assert!(intervals(&snaps[..1], 2).is_empty());
    }
}
