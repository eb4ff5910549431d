//! MOCC's multi-table, shifting workload (MOCC 5.5, figure 8): a contended table whose access
//! pattern changes over time, next to a large table nobody contends on.
//!
//! Two tables: a small one (one record by default) and a large one (one million records by
//! default). Every transaction performs one operation on a uniformly drawn small-table record,
//! then reads `large_reads` (20) distinct, uniformly drawn records of the large table. The
//! small-table operation shifts with time: a read during the first switch period
//! (`--shift-period-ms`, 0.1 s by default), a read-modify-write during the next, and so on. In the
//! read periods the small table is highly contended but free of conflicts (the ideal is pure
//! OCC); in the RMW periods every transaction conflicts on it (the ideal locks it). MOCC's
//! figure 8 shows how fast its temperature statistics learn each new hot spot.
//!
//! The period is told by the wall clock since the run started ([`Workload::run_starts`]), read
//! once per generated transaction; a transaction keeps its kind across its retries (the request
//! is kept). The two kinds are the workload's two transaction types, `small_read` and
//! `small_rmw`, so the per-interval commits of each type (`--sample-ms`, the report's
//! `rate_samples`) show when the switches happened.
//!
//! The RMW increments a counter in the small record's first bytes, as long-scan's update does
//! ([`count_hot_update`]; [`hot_update_count`](super::long_scan::hot_update_count) reads it),
//! so a lost update shows in the final value.

use super::Workload;
use super::distinct_keys::DistinctKeys;
use super::long_scan::count_hot_update;
use crate::protocol::{Abort, AccessSet};
use crate::random::FastRng;
use crate::storage::{Database, RecordId, TableId, TableSpec};
use crate::txn::TxnOps;
use serde::Serialize;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The small, contended table.
pub const SMALL: TableId = TableId(0);
/// The large table, read only.
pub const LARGE: TableId = TableId(1);

/// Longest `--shift-period-ms`: a minute.
pub const MAX_SHIFT_PERIOD_MS: u64 = 60_000;
/// Most `--large-reads` per transaction.
pub const MAX_LARGE_READS: u64 = 4096;

/// Shifting-workload parameters (validated by `config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShiftingConfig {
    /// Records in the large table.
    pub records: u64,
    /// Records in the small table.
    pub hot_records: u64,
    /// Distinct large-table records each transaction reads.
    pub large_reads: u64,
    /// Payload bytes per record (both tables).
    pub payload: usize,
    /// How long the small-table operation stays a read, then an RMW, and so on (ms).
    pub shift_period_ms: u64,
}

impl Default for ShiftingConfig {
    /// MOCC's figure 8: one small record, a million large ones, 20 large reads, 0.1 s periods.
    fn default() -> Self {
        ShiftingConfig {
            records: 1_000_000,
            hot_records: 1,
            large_reads: 20,
            payload: 100,
            shift_period_ms: 100,
        }
    }
}

impl ShiftingConfig {
    /// The two tables: `small` (table 0) and `large` (table 1), both of `payload`-byte records.
    pub fn tables(&self) -> Vec<TableSpec> {
        super::hot_and_large::hot_and_large("small", self.hot_records, self.records, self.payload)
    }
}

/// What a transaction does to its small-table record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SmallOp {
    /// Reads it (the even periods, the first among them).
    #[default]
    Read,
    /// Reads, modifies and writes it (the odd periods).
    Rmw,
}

impl SmallOp {
    /// The operation of the period `elapsed` falls in, with periods of `period`: a read in
    /// periods 0, 2, 4, ..., an RMW in periods 1, 3, 5, ... (a period starts at its first
    /// nanosecond: `elapsed == period` is period 1).
    pub fn at(elapsed: Duration, period: Duration) -> SmallOp {
        let period = period.as_nanos().max(1);
        if (elapsed.as_nanos() / period) % 2 == 0 {
            SmallOp::Read
        } else {
            SmallOp::Rmw
        }
    }

    /// Its transaction type ([`Shifting::txn_types`]).
    pub fn txn_type(self) -> usize {
        match self {
            SmallOp::Read => 0,
            SmallOp::Rmw => 1,
        }
    }
}

/// The shifting workload.
pub struct Shifting {
    config: ShiftingConfig,
    /// Where this workload's clock counts from.
    origin: Instant,
    /// When the current run started, in ns after `origin` (written by `run_starts` before the
    /// workers start, read by every generated transaction).
    run_start_ns: AtomicU64,
}

/// One transaction's parameters.
#[derive(Debug, Clone)]
pub struct ShiftingRequest {
    /// The small-table record.
    pub small: u64,
    /// What is done to it.
    pub op: SmallOp,
    /// The large-table records read, distinct (`large_reads` of them).
    pub large: Vec<u64>,
    /// Draws distinct large keys (reused per request).
    seen: DistinctKeys,
}

impl Shifting {
    /// A workload for a validated configuration; its clock starts now (and again at every
    /// [`Workload::run_starts`]).
    pub fn new(config: ShiftingConfig) -> Self {
        Shifting {
            config,
            origin: Instant::now(),
            run_start_ns: AtomicU64::new(0),
        }
    }

    /// The small-table operation a transaction generated now gets.
    #[inline]
    pub fn current_op(&self) -> SmallOp {
        let now = nanos(self.origin.elapsed());
        // Relaxed: `run_starts` stores it before the workers are spawned (thread spawn orders
        // it); no other data hangs on it.
        let start = self.run_start_ns.load(Ordering::Relaxed);
        SmallOp::at(
            Duration::from_nanos(now.saturating_sub(start)),
            Duration::from_millis(self.config.shift_period_ms),
        )
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Workload for Shifting {
    type Request = ShiftingRequest;

    fn name(&self) -> &'static str {
        "shifting"
    }

    fn tables(&self) -> Vec<TableSpec> {
        self.config.tables()
    }

    fn load<M: Sync>(&self, _db: &Database<M>) {
        // Zeroed rows: the counters start at 0 and the large table's content does not matter.
    }

    fn new_request(&self) -> ShiftingRequest {
        let reads = self.config.large_reads as usize;
        ShiftingRequest {
            small: 0,
            op: SmallOp::Read,
            large: Vec::with_capacity(reads),
            seen: DistinctKeys::with_capacity(reads),
        }
    }

    fn generate(&self, _worker: usize, rng: &mut FastRng, req: &mut ShiftingRequest) {
        let c = &self.config;
        req.op = self.current_op();
        req.small = rng.below(c.hot_records);
        req.large.clear();
        req.seen.prepare(c.large_reads as usize);
        // Validation keeps large_reads <= records, so the draws end.
        while (req.large.len() as u64) < c.large_reads {
            let key = rng.below(c.records);
            if req.seen.insert(key) {
                req.large.push(key);
            }
        }
    }

    fn txn_types(&self) -> &'static [&'static str] {
        &["small_read", "small_rmw"]
    }

    fn txn_type(&self, req: &ShiftingRequest) -> usize {
        req.op.txn_type()
    }

    /// In the read periods: every operation is a read.
    fn is_read_only(&self, req: &ShiftingRequest) -> bool {
        req.op == SmallOp::Read
    }

    fn run_starts(&self, _length: Duration) {
        // Relaxed: the workers that read it are spawned after this store.
        self.run_start_ns
            .store(nanos(self.origin.elapsed()), Ordering::Relaxed);
    }

    /// Every key is drawn with the request, so the whole set is known up front.
    fn declares_access_sets(&self) -> Result<(), String> {
        Ok(())
    }

    fn declare(&self, req: &ShiftingRequest, set: &mut AccessSet) {
        match req.op {
            SmallOp::Read => set.read(SMALL, RecordId(req.small)),
            SmallOp::Rmw => set.write(SMALL, RecordId(req.small)),
        }
        for &k in &req.large {
            set.read(LARGE, RecordId(k));
        }
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a ShiftingRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        run_shifting(tx, req)
    }
}

async fn run_shifting<Tx: TxnOps>(tx: &mut Tx, req: &ShiftingRequest) -> Result<(), Abort> {
    let small = RecordId(req.small);
    match req.op {
        SmallOp::Read => {
            tx.read(SMALL, small).await?;
        }
        SmallOp::Rmw => {
            tx.update(SMALL, small, count_hot_update).await?;
        }
    }
    for &k in &req.large {
        tx.read(LARGE, RecordId(k)).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operation_switches_at_each_period_starting_with_reads() {
        let period = Duration::from_millis(100);
        let ms = Duration::from_millis;
        let ns = Duration::from_nanos;
        assert_eq!(SmallOp::at(Duration::ZERO, period), SmallOp::Read);
        assert_eq!(SmallOp::at(ms(100) - ns(1), period), SmallOp::Read);
        assert_eq!(SmallOp::at(ms(100), period), SmallOp::Rmw);
        assert_eq!(SmallOp::at(ms(200) - ns(1), period), SmallOp::Rmw);
        assert_eq!(SmallOp::at(ms(200), period), SmallOp::Read);
        // Over many periods: half of every period's moments of each kind, alternating.
        for p in 0..50u64 {
            let want = if p % 2 == 0 {
                SmallOp::Read
            } else {
                SmallOp::Rmw
            };
            for offset in [0, 1, 37, 99] {
                assert_eq!(SmallOp::at(ms(100 * p + offset), period), want, "{p}");
            }
        }
        // Another period length moves the switches with it.
        assert_eq!(SmallOp::at(ms(30), ms(25)), SmallOp::Rmw);
        assert_eq!(SmallOp::at(ms(50), ms(25)), SmallOp::Read);
    }

    #[test]
    fn requests_draw_distinct_large_keys_and_the_current_op() {
        let w = Shifting::new(ShiftingConfig {
            records: 30,
            hot_records: 2,
            large_reads: 20,
            payload: 16,
            // An hour: this test runs inside the first (read) period.
            shift_period_ms: MAX_SHIFT_PERIOD_MS,
        });
        w.run_starts(Duration::from_secs(1));
        let mut rng = FastRng::new(9);
        let mut req = w.new_request();
        let mut smalls = [false; 2];
        for _ in 0..1000 {
            w.generate(0, &mut rng, &mut req);
            assert_eq!(req.op, SmallOp::Read);
            assert!(w.is_read_only(&req));
            let mut keys = req.large.clone();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), 20, "distinct: {:?}", req.large);
            assert!(keys.iter().all(|&k| k < 30));
            smalls[req.small as usize] = true;
        }
        assert!(smalls.iter().all(|&s| s));
    }

    #[test]
    fn declares_the_small_record_by_its_operation() {
        use crate::protocol::AccessMode;
        let w = Shifting::new(ShiftingConfig {
            records: 100,
            large_reads: 3,
            ..ShiftingConfig::default()
        });
        let mut req = w.new_request();
        w.generate(0, &mut FastRng::new(1), &mut req);
        for (op, mode) in [
            (SmallOp::Read, AccessMode::Read),
            (SmallOp::Rmw, AccessMode::Write),
        ] {
            req.op = op;
            let mut set = AccessSet::default();
            w.declare(&req, &mut set);
            let got: Vec<_> = set
                .accesses()
                .iter()
                .map(|a| (a.table, a.rid, a.mode))
                .collect();
            let mut want = vec![(SMALL, RecordId(req.small), mode)];
            want.extend(
                req.large
                    .iter()
                    .map(|&k| (LARGE, RecordId(k), AccessMode::Read)),
            );
            assert_eq!(got, want);
        }
    }
}
