//! YCSB with CCBench's seven parameters (CCBench 3.1): cardinality (`records`), payload size,
//! operations per transaction, read ratio, read-modify-write or blind write, skew and threads
//! (the last belongs to the executor). Keys are zipfian ([`Zipf`]: Gray et al.'s generator below
//! skew 1, exact rejection-inversion from 1) and distinct within a transaction. PLOR's bimodal sizes are a second transaction length drawn with a
//! configurable share (PLOR 6.1: 90% with 4 operations, 10% with 16).
//!
//! The checker needs nothing from this workload: in check mode the transaction handle stamps and
//! records every version (see `txn`).

use super::Workload;
use crate::protocol::{Abort, Protocol};
use crate::random::{FastRng, Zipf};
use crate::storage::{Database, RecordId, TableId, TableSpec};
use crate::txn::Txn;
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

/// The YCSB workload, ready to generate.
pub struct Ycsb {
    config: YcsbConfig,
    zipf: Zipf,
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
    /// The key (also the record id: YCSB uses the dense array index).
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
}

impl Ycsb {
    /// A workload for a validated configuration (zeta is computed here, O(records)).
    pub fn new(config: YcsbConfig) -> Self {
        let zipf = Zipf::new(config.records, config.theta);
        Ycsb { config, zipf }
    }

    /// The configuration.
    pub fn config(&self) -> &YcsbConfig {
        &self.config
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
        }
    }

    #[inline]
    fn generate(&self, _worker: usize, rng: &mut FastRng, req: &mut YcsbRequest) {
        let c = &self.config;
        req.long = c.long_share > 0.0 && rng.chance(c.long_share);
        let n = if req.long { c.long_ops } else { c.ops };
        req.ops.clear();
        // With an exact write count, each position writes with probability
        // (writes left) / (positions left): a uniformly random subset (Knuth's algorithm S).
        let mut writes_left = c.writes.map(|w| w.min(n));
        for i in 0..n {
            let key = loop {
                let k = self.zipf.sample(rng);
                if !req.ops.iter().any(|o| o.key == k) {
                    break k;
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

    fn txn_types(&self) -> &'static [&'static str] {
        if self.config.long_share > 0.0 {
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

    fn run<'a, 'db, P: Protocol>(
        &'a self,
        tx: &'a mut Txn<'db, P>,
        req: &'a YcsbRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        run_ycsb(self.config.rmw, tx, req)
    }
}

async fn run_ycsb<P: Protocol>(
    rmw: bool,
    tx: &mut Txn<'_, P>,
    req: &YcsbRequest,
) -> Result<(), Abort> {
    for op in &req.ops {
        let rid = RecordId(op.key);
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
