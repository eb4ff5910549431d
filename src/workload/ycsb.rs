//! YCSB with CCBench's seven parameters (CCBench 3.1): cardinality (`records`), payload size,
//! operations per transaction, read ratio, read-modify-write or blind write, skew and threads
//! (the last belongs to the executor). Keys are zipfian ([`Zipf`]: Gray et al.'s generator below
//! skew 1, exact rejection-inversion from 1) and distinct within a transaction. PLOR's bimodal sizes are a second transaction length drawn with a
//! configurable share (PLOR 6.1: 90% with 4 operations, 10% with 16).
//!
//! The checker needs nothing from this workload: in check mode the transaction handle stamps and
//! records every version (see `txn`).

use super::Workload;
use super::distinct_keys::DistinctKeys;
use super::key_index::{KeyIndex, KeyIndexKind};
use crate::protocol::{Abort, AccessSet};
use crate::random::normal::NormalKeys;
use crate::random::{FastRng, Zipf};
use crate::storage::{Database, RecordId, TableId, TableSpec};
use crate::txn::TxnOps;
use serde::Serialize;
use std::future::Future;

/// The YCSB table's id (the only table).
pub const TABLE: TableId = TableId(0);

/// YCSB parameters (validated by `config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct YcsbConfig {
    /// Number of records (cardinality).
    pub records: u64,
    /// Payload bytes per record.
    pub payload: usize,
    /// Operations per (short) transaction.
    pub ops: usize,
    /// Operations per long transaction (bimodal sizes); used when `long_share > 0`.
    pub long_ops: usize,
    /// Share of transactions that are long, in `[0, 1]`.
    pub long_share: f64,
    /// Probability that an operation is a read, in `[0, 1]` (ignored when `writes` is set).
    pub read_ratio: f64,
    /// Exactly this many operations of every transaction write (at uniformly random positions),
    /// instead of drawing each operation's kind with `read_ratio` (MOCC's figure 7 sweeps 0..10
    /// read-modify-writes out of 10 operations).
    pub writes: Option<usize>,
    /// Writes are read-modify-writes (true) or blind writes (false).
    pub rmw: bool,
    /// Zipfian skew; 0 is uniform.
    pub theta: f64,
    /// How every access finds its key's record (`--index`; the dense array by default).
    pub index: KeyIndexKind,
    /// How keys are drawn: zipfian with `theta` (the default), or SGPM's normal distribution.
    #[serde(flatten)]
    pub key_dist: KeyDist,
    /// CCBench's long-transaction workload (its figure 14): worker 0 pauses this many
    /// microseconds at the end of every transaction's read phase, before commit, while the
    /// others run unchanged; its transactions are reported as the `long` type. 0: off.
    pub long_txn_delay_us: u64,
    /// Whether a transaction starts loading its index entries and records before its first
    /// access, so that their cache misses overlap (`run_ycsb`; on by default, `--no-prefetch`
    /// turns it off, as DBx1000 and CCBench run).
    pub prefetch: bool,
}

/// The key distribution (`--key-dist`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
#[serde(tag = "key_dist", rename_all = "snake_case")]
pub enum KeyDist {
    /// Zipfian with the configuration's `theta`.
    #[default]
    Zipf,
    /// Normal around `key_mean` with standard deviation `key_sd` (SGPM; `theta` unused).
    Normal {
        /// The mean key.
        key_mean: f64,
        /// The standard deviation, in keys.
        key_sd: f64,
    },
}

impl Default for YcsbConfig {
    fn default() -> Self {
        YcsbConfig {
            records: 1 << 20,
            payload: 100,
            ops: 16,
            long_ops: 16,
            long_share: 0.0,
            read_ratio: 0.5,
            writes: None,
            rmw: true,
            theta: 0.99,
            index: KeyIndexKind::Array,
            key_dist: KeyDist::Zipf,
            long_txn_delay_us: 0,
            prefetch: true,
        }
    }
}

impl YcsbConfig {
    /// The one table, `usertable`: `records` records of `payload` bytes.
    pub fn tables(&self) -> Vec<TableSpec> {
        vec![TableSpec {
            name: "usertable".into(),
            records: self.records,
            payload_bytes: self.payload,
        }]
    }
}

/// The most key draws a transaction may need, in the worst case, to find its distinct keys (see
/// [`distinct_key_draws`]); validation rejects configurations past it. At about 10 ns a draw, a
/// million draws is 10 ms per transaction: beyond that a run measures the key generator, not the
/// protocol, and at high skew the expected count grows without bound (theta 10 with 16 operations
/// needs about 10^12). Every configuration accepted before skew 1 was allowed needs at most
/// about 3 * 10^5 (4096 operations over 4096 records at theta 0.99).
pub const MAX_DISTINCT_KEY_DRAWS: f64 = 1e6;

/// An upper bound on the expected number of zipfian draws (`records` keys, skew `theta`) that
/// `generate` takes to collect `ops` distinct keys, which it does by redrawing duplicates.
///
/// The worst case for the `i`-th key is that the `i - 1` hottest keys are taken, leaving it the
/// tail mass `T(i) = sum_{k >= i} k^-theta / H(records, theta)` and `1 / T(i)` expected draws.
/// Comparing sums with integrals (`k^-theta` decreases) bounds `T(i)` from below in O(1):
/// `sum_{k=i..n} k^-theta >= ∫_i^{n+1} x^-theta dx` and `H(n, theta) <= 1 + ∫_1^n x^-theta dx`.
/// The bound is exact for the uniform case and costs O(ops), whatever `records`.
pub fn distinct_key_draws(records: u64, ops: usize, theta: f64) -> f64 {
    // ∫_a^b x^-theta dx, with ln(b / a) at theta 1 (and near it, where 1 - theta cancels).
    let integral = |a: f64, b: f64| {
        if (theta - 1.0).abs() < 1e-9 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
        }
    };
    let n = records as f64;
    let harmonic_bound = 1.0 + integral(1.0, n);
    (1..=ops)
        .map(|i| harmonic_bound / integral(i as f64, n + 1.0))
        .sum()
}

/// The YCSB workload, ready to generate.
pub struct Ycsb {
    config: YcsbConfig,
    zipf: Zipf,
    index: KeyIndex,
    /// Set with `KeyDist::Normal`: keys come from here instead of `zipf`.
    normal: Option<NormalKeys>,
    /// When the current run ends ([`Workload::run_starts`]): the long transaction's pause stops
    /// there. Read only by a transaction that pauses, once per pause.
    pauses_end: std::sync::Mutex<Option<std::time::Instant>>,
}

/// What one YCSB operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbOpKind {
    /// Read the record.
    Read,
    /// Write the record (read-modify-write or blind, per the configuration).
    Write,
}

/// One operation of a YCSB transaction.
#[derive(Debug, Clone, Copy)]
pub struct YcsbOp {
    /// The key, looked up through the run's [`KeyIndex`] when the operation runs.
    pub key: u64,
    /// Read or write.
    pub kind: YcsbOpKind,
}

/// One YCSB transaction: its operations, in order.
#[derive(Debug, Clone, Default)]
pub struct YcsbRequest {
    /// The operations, keys distinct.
    pub ops: Vec<YcsbOp>,
    long: bool,
    /// Pause at the end of the read phase, microseconds (`long_txn_delay_us`, worker 0 only).
    delay_us: u64,
    /// Keys drawn so far while generating (scratch, reused).
    drawn: DistinctKeys,
}

impl Ycsb {
    /// A workload for a validated configuration (zeta is computed here, O(records), and the
    /// key index built, once for all the protocols the workload then runs on).
    pub fn new(config: YcsbConfig) -> Self {
        let (zipf, normal) = match config.key_dist {
            KeyDist::Zipf => (Zipf::new(config.records, config.theta), None),
            KeyDist::Normal { key_mean, key_sd } => (
                Zipf::new(config.records, 0.0),
                Some(NormalKeys::new(config.records, key_mean, key_sd)),
            ),
        };
        let index = KeyIndex::build(config.index, config.records);
        Ycsb {
            config,
            zipf,
            normal,
            index,
            pauses_end: std::sync::Mutex::new(None),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &YcsbConfig {
        &self.config
    }

    /// Fills `req.ops` with `n` operations on distinct keys drawn from `keys`, each a read or
    /// a write as the configuration says. `HASHED`:
    /// duplicates are found in `req.drawn`, else by scanning the operations so far.
    #[inline(always)]
    fn draw_ops<const HASHED: bool>(
        &self,
        n: usize,
        rng: &mut FastRng,
        req: &mut YcsbRequest,
        mut keys: impl KeySource,
    ) {
        let c = &self.config;
        req.ops.clear();
        // With an exact write count, each position writes with probability
        // (writes left) / (positions left): a uniformly random subset (Knuth's algorithm S).
        let mut writes_left = c.writes.map(|w| w.min(n));
        if HASHED {
            req.drawn.prepare(n);
        }
        for i in 0..n {
            let key = loop {
                if let Some(k) = keys.next_key(rng) {
                    let new = if HASHED {
                        req.drawn.insert(k)
                    } else {
                        !req.ops.iter().any(|o| o.key == k)
                    };
                    if new {
                        break k;
                    }
                }
            };
            let write = match &mut writes_left {
                Some(left) => {
                    let w = (rng.below((n - i) as u64) as usize) < *left;
                    *left -= usize::from(w);
                    w
                }
                None => !rng.chance(c.read_ratio),
            };
            let kind = if write {
                YcsbOpKind::Write
            } else {
                YcsbOpKind::Read
            };
            req.ops.push(YcsbOp { key, kind });
        }
    }
}

/// Where a transaction's keys come from, chosen once per transaction (`Ycsb::generate`).
trait KeySource {
    /// The next key, or `None` for no key this time (draw again).
    fn next_key(&mut self, rng: &mut FastRng) -> Option<u64>;
}

/// Zipfian keys (uniform at theta 0).
struct ZipfKeys<'a>(&'a Zipf);

impl KeySource for ZipfKeys<'_> {
    #[inline(always)]
    fn next_key(&mut self, rng: &mut FastRng) -> Option<u64> {
        Some(self.0.sample(rng))
    }
}

/// SGPM's normal keys (the ziggurat draws one at a time: nothing to carry between calls).
struct NormalSource<'a>(&'a NormalKeys);

impl KeySource for NormalSource<'_> {
    #[inline(always)]
    fn next_key(&mut self, rng: &mut FastRng) -> Option<u64> {
        Some(self.0.sample(rng))
    }
}

const TYPES: &[&str] = &["short", "long"];

impl Workload for Ycsb {
    type Request = YcsbRequest;

    fn name(&self) -> &'static str {
        "ycsb"
    }

    fn tables(&self) -> Vec<TableSpec> {
        self.config.tables()
    }

    fn load<M: Sync>(&self, _db: &Database<M>) {
        // Tables start zeroed; the values' content does not matter.
    }

    fn new_request(&self) -> YcsbRequest {
        YcsbRequest {
            ops: Vec::with_capacity(self.config.ops.max(self.config.long_ops)),
            long: false,
            delay_us: 0,
            drawn: DistinctKeys::with_capacity(self.config.ops.max(self.config.long_ops)),
        }
    }

    #[inline]
    fn generate(&self, worker: usize, rng: &mut FastRng, req: &mut YcsbRequest) {
        let c = &self.config;
        req.long = c.long_share > 0.0 && rng.chance(c.long_share);
        req.delay_us = if worker == 0 { c.long_txn_delay_us } else { 0 };
        req.long |= req.delay_us > 0;
        let n = if req.long { c.long_ops } else { c.ops };
        // The key distribution and the duplicate check are chosen once per transaction, and
        // each choice gets its own copy of the loop in `draw_ops`, with the draw inlined:
        // branching per key, or calling the draw, cost zipfian YCSB about 20 instructions a key
        // (cachegrind), the generator's state kept in memory instead of registers.
        let hashed = n > DistinctKeys::SCAN_UP_TO;
        match &self.normal {
            None => {
                let zipf = ZipfKeys(&self.zipf);
                if hashed {
                    self.draw_ops::<true>(n, rng, req, zipf);
                } else {
                    self.draw_ops::<false>(n, rng, req, zipf);
                }
            }
            Some(normal) => {
                let keys = NormalSource(normal);
                if hashed {
                    self.draw_ops::<true>(n, rng, req, keys);
                } else {
                    self.draw_ops::<false>(n, rng, req, keys);
                }
            }
        }
    }

    fn run_starts(&self, length: std::time::Duration) {
        let end = std::time::Instant::now() + length;
        *self.pauses_end.lock().unwrap_or_else(|e| e.into_inner()) = Some(end);
    }

    fn txn_types(&self) -> &'static [&'static str] {
        if self.config.long_share > 0.0 || self.config.long_txn_delay_us > 0 {
            TYPES
        } else {
            &TYPES[..1]
        }
    }

    fn txn_type(&self, req: &YcsbRequest) -> usize {
        usize::from(req.long)
    }

    /// No write operation in the request.
    fn is_read_only(&self, req: &YcsbRequest) -> bool {
        req.ops.iter().all(|o| o.kind == YcsbOpKind::Read)
    }

    /// Every key of the request is known: its operations name them.
    fn declares_access_sets(&self) -> Result<(), String> {
        Ok(())
    }

    fn declare(&self, req: &YcsbRequest, set: &mut AccessSet) {
        for op in &req.ops {
            // Declaring resolves keys through the run's index, as the program will: a
            // deterministic protocol pays the lookups before scheduling, like Calvin's reconnaissance.
            let rid = self.index.get(op.key).expect("YCSB keys are all indexed");
            match op.kind {
                YcsbOpKind::Read => set.read(TABLE, rid),
                YcsbOpKind::Write => set.write(TABLE, rid),
            }
        }
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a YcsbRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        run_ycsb(&self.config, &self.index, &self.pauses_end, tx, req)
    }
}

async fn run_ycsb<Tx: TxnOps>(
    config: &YcsbConfig,
    index: &KeyIndex,
    pauses_end: &std::sync::Mutex<Option<std::time::Instant>>,
    tx: &mut Tx,
    req: &YcsbRequest,
) -> Result<(), Abort> {
    // The keys are known before the first access: start loading every index entry, then every
    // record, so that their cache misses overlap instead of each access waiting for its own
    // two (docs/RESULTS.md, "Loading a transaction's records ahead"). Hints only: the
    // accesses below still look up and read through the protocol.
    if config.prefetch {
        for op in &req.ops {
            index.prefetch(op.key);
        }
        for op in &req.ops {
            if let Some(rid) = index.get_if_cheap(op.key) {
                tx.prefetch(TABLE, rid);
            }
        }
    }
    let rmw = config.rmw;
    for op in &req.ops {
        // Every access pays its index's lookup, inside the transaction, as DBx1000 and CCBench
        // do; keys are drawn from 0..records, all of which the index holds.
        let rid: RecordId = index.get(op.key).expect("YCSB keys are all indexed");
        match (op.kind, rmw) {
            (YcsbOpKind::Read, _) => {
                tx.read(TABLE, rid).await?;
            }
            (YcsbOpKind::Write, true) => {
                tx.update(TABLE, rid, |data| {
                    // Touch the value the way an update would (DBx1000 copies a field).
                    let last = data.len() - 1;
                    data[last] = data[last].wrapping_add(1);
                })
                .await?;
            }
            (YcsbOpKind::Write, false) => {
                let id = tx.id();
                tx.write_with(TABLE, rid, |data| data.fill(id as u8))
                    .await?;
            }
        }
    }
    if req.delay_us > 0 {
        // The long transaction's pause (CCBench's worker-1 read-phase delay). Sleeping gives
        // the core to the other workers, which a spin would not on a machine with more workers
        // than cores; under the coroutine executor it also holds up the thread's other
        // coroutines, as CCBench's delayed worker thread does.
        // The pause ends with the run at the latest: a long transaction aborted at the stop
        // and retried must not sleep again (the executor finishes what it started).
        let mut pause = std::time::Duration::from_micros(req.delay_us);
        if let Some(end) = *pauses_end.lock().unwrap_or_else(|e| e.into_inner()) {
            pause = pause.min(end.saturating_duration_since(std::time::Instant::now()));
        }
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_worker_zero_runs_the_long_transaction() {
        let w = Ycsb::new(YcsbConfig {
            records: 100,
            long_txn_delay_us: 250,
            ..YcsbConfig::default()
        });
        let mut rng = FastRng::for_worker(1, 0);
        let mut req = w.new_request();
        w.generate(0, &mut rng, &mut req);
        assert_eq!((req.delay_us, w.txn_type(&req)), (250, 1));
        w.generate(1, &mut rng, &mut req);
        assert_eq!((req.delay_us, w.txn_type(&req)), (0, 0));
        assert_eq!(w.txn_types(), TYPES);
    }

    #[test]
    fn a_request_is_read_only_exactly_when_it_has_no_write() {
        let y = Ycsb::new(YcsbConfig {
            records: 100,
            ops: 4,
            read_ratio: 0.8,
            theta: 0.0,
            ..Default::default()
        });
        let mut rng = FastRng::new(5);
        let mut req = y.new_request();
        let mut read_only = 0;
        for _ in 0..2_000 {
            y.generate(0, &mut rng, &mut req);
            let no_write = req.ops.iter().all(|o| o.kind == YcsbOpKind::Read);
            assert_eq!(y.is_read_only(&req), no_write);
            read_only += usize::from(no_write);
        }
        // 0.8^4: about 41% of the requests.
        assert!((600..1_050).contains(&read_only), "{read_only}");
    }

    #[test]
    fn distinct_key_draws_bounds_the_redraws() {
        // Uniform: the coupon collector's n (1/n + ... + 1/(n - ops + 1)), exactly.
        let exact: f64 = (0..4).map(|i| 8.0 / (8 - i) as f64).sum();
        assert!((distinct_key_draws(8, 4, 0.0) - exact).abs() < 1e-9);
        // Skewed and many keys: a few draws per key. At theta 10 the 16th key is ~10^-12 likely.
        assert!(distinct_key_draws(1 << 20, 16, 0.99) < 2.0 * 16.0);
        assert!(distinct_key_draws(1 << 20, 16, 10.0) > 1e11);
        assert!(distinct_key_draws(4096, 4096, 0.99) < MAX_DISTINCT_KEY_DRAWS);
        // The bound holds: measured draws at a skew where redraws are frequent.
        let config = YcsbConfig {
            records: 32,
            ops: 16,
            theta: 1.5,
            ..YcsbConfig::default()
        };
        let bound = distinct_key_draws(32, 16, 1.5);
        let zipf = Zipf::new(32, 1.5);
        let mut rng = FastRng::new(9);
        let txns = 2000;
        let mut draws = 0u64;
        for _ in 0..txns {
            let mut taken = Vec::with_capacity(config.ops);
            while taken.len() < config.ops {
                let k = zipf.sample(&mut rng);
                draws += 1;
                if !taken.contains(&k) {
                    taken.push(k);
                }
            }
        }
        let mean = draws as f64 / txns as f64;
        assert!(mean < bound, "mean {mean} bound {bound}");
    }

    #[test]
    fn keys_are_distinct_and_in_range() {
        let y = Ycsb::new(YcsbConfig {
            records: 20,
            ops: 16,
            theta: 0.99,
            ..Default::default()
        });
        let mut rng = FastRng::new(3);
        let mut req = y.new_request();
        for _ in 0..1000 {
            y.generate(0, &mut rng, &mut req);
            assert_eq!(req.ops.len(), 16);
            let mut keys: Vec<u64> = req.ops.iter().map(|o| o.key).collect();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), 16);
            assert!(keys.iter().all(|&k| k < 20));
        }
    }

    #[test]
    fn exact_write_count_at_random_positions() {
        let y = Ycsb::new(YcsbConfig {
            records: 50,
            ops: 10,
            writes: Some(3),
            theta: 0.0,
            ..Default::default()
        });
        let mut rng = FastRng::new(4);
        let mut req = y.new_request();
        let mut per_position = [0u32; 10];
        for _ in 0..10_000 {
            y.generate(0, &mut rng, &mut req);
            let writes: Vec<usize> = (0..10)
                .filter(|&i| req.ops[i].kind == YcsbOpKind::Write)
                .collect();
            assert_eq!(writes.len(), 3);
            for i in writes {
                per_position[i] += 1;
            }
        }
        // Each position writes 30% of the time.
        for c in per_position {
            assert!((2_700..3_300).contains(&c), "{per_position:?}");
        }
    }

    #[test]
    fn bimodal_share_and_read_ratio_hold() {
        let y = Ycsb::new(YcsbConfig {
            records: 10_000,
            ops: 4,
            long_ops: 16,
            long_share: 0.1,
            read_ratio: 0.95,
            theta: 0.5,
            ..Default::default()
        });
        let mut rng = FastRng::new(9);
        let mut req = y.new_request();
        let (mut long, mut reads, mut ops) = (0, 0, 0);
        let n = 20_000;
        for _ in 0..n {
            y.generate(0, &mut rng, &mut req);
            if y.txn_type(&req) == 1 {
                long += 1;
                assert_eq!(req.ops.len(), 16);
            } else {
                assert_eq!(req.ops.len(), 4);
            }
            ops += req.ops.len();
            reads += req
                .ops
                .iter()
                .filter(|o| o.kind == YcsbOpKind::Read)
                .count();
        }
        let long_share = long as f64 / n as f64;
        assert!((long_share - 0.1).abs() < 0.01, "{long_share}");
        let read_share = reads as f64 / ops as f64;
        assert!((read_share - 0.95).abs() < 0.01, "{read_share}");
    }
}
