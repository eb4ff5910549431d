//! Measurements: per-worker counters and HDR latency histograms, merged after a run.
//!
//! Each worker owns its [`WorkerStats`] (no shared counter on the hot path); the executor merges
//! them ([`WorkerStats::merge`]) when the run ends, and [`report::RunReport`] summarises the
//! total. Latency is end to end per transaction: from the start of its first attempt (under an
//! open loop, from its arrival) to its commit, retries and waits included, in nanoseconds.

pub mod build_info;
pub mod cpu_load;
pub mod log_report;
pub mod machine;
pub mod measured_time;
pub mod output;
pub mod progress;
pub mod rate_series;
pub mod repeat_spread;
pub mod report;
pub mod sampler;
pub mod version_series;

use crate::protocol::Abort;
use hdrhistogram::Histogram;
use serde::Serialize;

/// Where a worker's time went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Running the transaction program in attempts that committed (waits excluded).
    Execute,
    /// Waiting for another transaction (`Poll::Pending`), in any attempt.
    Wait,
    /// Commit processing (validation, locking, install) of attempts that committed.
    Commit,
    /// Attempts that aborted (their whole duration, waits excluded) plus backoff before retry.
    Abort,
}

impl Phase {
    /// Every phase, in report order.
    pub const ALL: [Phase; 4] = [Phase::Execute, Phase::Wait, Phase::Commit, Phase::Abort];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Execute => "execute",
            Phase::Wait => "wait",
            Phase::Commit => "commit",
            Phase::Abort => "abort",
        }
    }
}

/// Highest latency a histogram records (one hour, in ns); larger values are clamped.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds with 3 significant digits.
pub fn new_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid histogram bounds")
}

/// Counters of one transaction type.
#[derive(Debug, Clone)]
pub struct TypeStats {
    /// Committed transactions.
    pub commits: u64,
    /// Aborted attempts, by reason ([`Abort::index`]); re-executions are not aborts and stay
    /// zero here ([`TypeStats::reexecutions`]).
    pub aborts: [u64; Abort::COUNT],
    /// Attempts of opportunistic execution that ran again in their scheduled place
    /// ([`Abort::Reexecute`]).
    pub reexecutions: u64,
    /// End-to-end latency of committed transactions, ns.
    pub latency: Histogram<u64>,
    /// Attempts each committed transaction needed (1 = committed first time): the starvation
    /// measure (a starvation-free protocol keeps its maximum bounded under sustained contention).
    pub attempts: Histogram<u64>,
}

impl Default for TypeStats {
    fn default() -> Self {
        TypeStats {
            commits: 0,
            aborts: [0; Abort::COUNT],
            reexecutions: 0,
            latency: new_latency_histogram(),
            attempts: Histogram::new_with_bounds(1, 1 << 40, 2).expect("valid histogram bounds"),
        }
    }
}

impl TypeStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &TypeStats) {
        self.commits += other.commits;
        for (a, b) in self.aborts.iter_mut().zip(other.aborts) {
            *a += b;
        }
        self.reexecutions += other.reexecutions;
        self.latency
            .add(&other.latency)
            .expect("histograms with equal bounds");
        self.attempts
            .add(&other.attempts)
            .expect("histograms with equal bounds");
    }

    /// Total aborted attempts.
    pub fn total_aborts(&self) -> u64 {
        self.aborts.iter().sum()
    }
}

/// How waiters waited (`exec/wait.rs`): spin steps, parks, parks taken at once because every
/// holder waited for was away (`crate::on_cpu`), and how often a park ended by its timeout
/// rather than by a wake: every event that can end a wait wakes the parked waiters
/// (`crate::park`), so timeouts count waits that no event ended in time (a missing wake shows
/// here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WaitCounts {
    /// Spin steps (each a burst of pause instructions between two polls).
    pub spins: u64,
    /// Parks (the thread slept).
    pub parks: u64,
    /// Of the parks, those taken at once, without spinning out the budget, because every holder
    /// the protocol named was away.
    pub parks_holder_away: u64,
    /// Parks that ended by their timeout.
    pub park_timeouts: u64,
    /// CoreSeats (thread executor, more workers than cores): seats handed to a queued worker
    /// between two transactions (`exec::core_seats`).
    pub seat_handovers: u64,
}

impl WaitCounts {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: WaitCounts) {
        self.spins += other.spins;
        self.parks += other.parks;
        self.parks_holder_away += other.parks_holder_away;
        self.park_timeouts += other.park_timeouts;
        self.seat_handovers += other.seat_handovers;
    }
}

/// What one worker measured.
#[derive(Debug, Clone)]
pub struct WorkerStats {
    /// Per transaction type.
    pub types: Vec<TypeStats>,
    /// Nanoseconds per [`Phase`].
    pub phase_ns: [u64; 4],
    /// Scheduling signals per [`Signal`](crate::protocol::signal::Signal) (coroutine executor).
    pub signals: [u64; crate::protocol::signal::Signal::COUNT],
    /// Parks while waiting, during measure.
    pub waits: WaitCounts,
    /// With a redo log: from the first attempt's start to the durable acknowledgement, per
    /// measured transaction that wrote (ns).
    pub durable_latency: Histogram<u64>,
}

impl WorkerStats {
    /// Empty stats for a workload with `types` transaction types.
    pub fn new(types: usize) -> Self {
        WorkerStats {
            types: (0..types).map(|_| TypeStats::default()).collect(),
            phase_ns: [0; 4],
            signals: [0; crate::protocol::signal::Signal::COUNT],
            waits: WaitCounts::default(),
            durable_latency: new_latency_histogram(),
        }
    }

    /// Records a committed transaction of type `ty` with end-to-end latency `ns` after
    /// `attempts` attempts.
    #[inline]
    pub fn commit(&mut self, ty: usize, ns: u64, attempts: u64) {
        let t = &mut self.types[ty];
        t.commits += 1;
        t.latency.saturating_record(ns.max(1));
        t.attempts.saturating_record(attempts.max(1));
    }

    /// Records an aborted attempt; a re-execution ([`Abort::Reexecute`]) counts as one, not as
    /// an abort.
    #[inline]
    pub fn abort(&mut self, ty: usize, why: Abort) {
        let t = &mut self.types[ty];
        if why == Abort::Reexecute {
            t.reexecutions += 1;
        } else {
            t.aborts[why.index()] += 1;
        }
    }

    /// Counts one scheduling signal.
    #[inline]
    pub fn signal(&mut self, s: crate::protocol::signal::Signal) {
        self.signals[s.index()] += 1;
    }

    /// Adds time to a phase.
    #[inline]
    pub fn add_phase(&mut self, phase: Phase, ns: u64) {
        self.phase_ns[phase as usize] += ns;
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &WorkerStats) {
        for (a, b) in self.types.iter_mut().zip(&other.types) {
            a.merge(b);
        }
        for (a, b) in self.phase_ns.iter_mut().zip(other.phase_ns) {
            *a += b;
        }
        for (a, b) in self.signals.iter_mut().zip(other.signals) {
            *a += b;
        }
        self.waits.add(other.waits);
        self.durable_latency
            .add(&other.durable_latency)
            .expect("histograms of equal bounds");
    }
}

/// How many attempts committed transactions needed.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct AttemptSummary {
    /// Mean attempts per committed transaction.
    pub mean: f64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Most attempts any committed transaction needed.
    pub max: u64,
}

impl AttemptSummary {
    /// Summarises an attempts histogram.
    pub fn from_histogram(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return AttemptSummary::default();
        }
        AttemptSummary {
            mean: h.mean(),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct LatencySummary {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile (the headline tail metric of PLOR).
    pub p999: f64,
    /// Maximum.
    pub max: f64,
}

impl LatencySummary {
    /// Summarises a nanosecond histogram in microseconds.
    pub fn from_histogram(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        }
    }
}

/// Points per decade of [`latency_distribution`]'s tail: quantile `1 - 10^(-k / 8)`.
const DISTRIBUTION_STEPS_PER_DECADE: i32 = 8;
/// How far into the tail [`latency_distribution`] samples: 99.999%.
const DISTRIBUTION_NINES: i32 = 5;

/// The latency distribution of a nanosecond histogram, compactly: `[quantile, microseconds]`
/// pairs at quantiles `1 - 10^(-k/8)` for k = 0 (the minimum) to 40 (99.999%), then `[1, max]`.
/// Evenly spaced on a "nines" axis, so a plot shows the body and the tail alike (PLOR's figure 6b,
/// HdrHistogram's percentile plots) from 42 numbers of the histogram's 3 significant digits.
/// Empty for an empty histogram.
pub fn latency_distribution(h: &Histogram<u64>) -> Vec<[f64; 2]> {
    if h.is_empty() {
        return Vec::new();
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut out: Vec<[f64; 2]> = (0..=DISTRIBUTION_NINES * DISTRIBUTION_STEPS_PER_DECADE)
        .map(|k| {
            let q = 1.0 - 10f64.powf(-f64::from(k) / f64::from(DISTRIBUTION_STEPS_PER_DECADE));
            // Seven decimals keep 99.999% exact without printing float noise in every row.
            let q = (q * 1e7).round() / 1e7;
            [q, us(h.value_at_quantile(q))]
        })
        .collect();
    out.push([1.0, us(h.max())]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_histograms() {
        let mut a = WorkerStats::new(1);
        let mut b = WorkerStats::new(1);
        for i in 1..=1000 {
            a.commit(0, i * 1000, 1);
        }
        b.commit(0, 5_000_000, 7);
        b.abort(0, Abort::Wounded);
        b.add_phase(Phase::Wait, 7);
        a.merge(&b);
        assert_eq!(a.types[0].commits, 1001);
        assert_eq!(a.types[0].aborts[Abort::Wounded.index()], 1);
        assert_eq!(a.phase_ns[Phase::Wait as usize], 7);
        let s = LatencySummary::from_histogram(&a.types[0].latency);
        assert!((s.p50 - 500.0).abs() < 2.0, "{s:?}");
        assert_eq!(AttemptSummary::from_histogram(&a.types[0].attempts).max, 7);
        assert!((s.max - 5000.0).abs() < 10.0, "{s:?}");
        assert!(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max);
    }

    #[test]
    fn reexecutions_are_counted_apart_from_aborts() {
        let mut a = WorkerStats::new(1);
        let mut b = WorkerStats::new(1);
        a.abort(0, Abort::Reexecute);
        b.abort(0, Abort::Reexecute);
        b.abort(0, Abort::User);
        a.merge(&b);
        assert_eq!(a.types[0].reexecutions, 2);
        assert_eq!(a.types[0].total_aborts(), 1);
        assert_eq!(a.types[0].aborts[Abort::Reexecute.index()], 0);
    }

    #[test]
    fn the_distribution_samples_body_and_tail_in_order() {
        let mut h = new_latency_histogram();
        for i in 1..=100_000u64 {
            h.record(i * 1000).unwrap();
        }
        let d = latency_distribution(&h);
        assert_eq!(d.len(), 42);
        assert_eq!(d[0], [0.0, 1.0]);
        assert_eq!(d[8][0], 0.9);
        assert_eq!(d[40][0], 0.99999);
        assert_eq!(d[41][0], 1.0);
        // Value at quantile q of 1..=100000 ms is about q * 100000 (3 significant digits).
        assert!((d[8][1] / 90_000.0 - 1.0).abs() < 0.002, "{:?}", d[8]);
        assert!((d[41][1] / 100_000.0 - 1.0).abs() < 0.001, "{:?}", d[41]);
        assert!(
            d.windows(2)
                .all(|w| w[0][0] < w[1][0] && w[0][1] <= w[1][1])
        );
        assert!(latency_distribution(&new_latency_histogram()).is_empty());
    }
}
