//! The write-skew workload: pairs of records with a constraint over both (Berenson et al.'s
//! on-call doctors; CCBench section 2 on SI).
//!
//! Record `2p` and `2p + 1` form pair `p`; each holds a count (its first 8 bytes), initially 1,
//! and the constraint is that a pair's counts add up to at least 1. Every transaction picks a pair,
//! reads both records and then
//!
//! - when the sum is 2 or more, *withdraws*: sets one of the two (the request's choice) to 0,
//!   which keeps the constraint if nobody else changed the pair meanwhile;
//! - otherwise *restores*: sets a record whose count is 0 back to 1.
//!
//! Each transaction reads what it does not write, so two withdrawals from the same pair that run
//! concurrently under snapshot isolation each see a sum of 2 and each zero a different record:
//! both commit (no write-write conflict) and the pair ends at 0, the write skew. A serializable
//! protocol orders them, so the second sees a sum of 1 and restores instead.
//!
//! A transaction that reads a pair below its constraint also increments its worker's record in a
//! second table; the increment persists only if the transaction commits. With `--check`, the
//! consistency check ([`Workload::check_consistency`]) counts those committed observations and the
//! pairs below the constraint at the end: zero under every serializable protocol.

use super::Workload;
use super::tpcc::ConsistencyReport;
use crate::protocol::{Abort, AccessSet};
use crate::random::FastRng;
use crate::storage::{Database, RecordId, TableId, TableSpec};
use crate::txn::TxnOps;
use serde::Serialize;
use std::future::Future;

/// The pairs.
pub const PAIRS: TableId = TableId(0);
/// One observation counter per worker slot.
pub const OBSERVED: TableId = TableId(1);
/// Observation counters (workers share one modulo this).
pub const OBSERVERS: u64 = 1024;
/// Bytes per record: one count.
const ROW: usize = 8;

/// Write-skew parameters (validated by `config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteSkewConfig {
    /// Records (two per pair; even).
    pub records: u64,
}

impl Default for WriteSkewConfig {
    fn default() -> Self {
        WriteSkewConfig { records: 16 }
    }
}

impl WriteSkewConfig {
    /// The pairs' table and the observation counters.
    pub fn tables(&self) -> Vec<TableSpec> {
        vec![
            TableSpec {
                name: "pairs".into(),
                records: self.records,
                payload_bytes: ROW,
            },
            TableSpec {
                name: "observed".into(),
                records: OBSERVERS,
                payload_bytes: ROW,
            },
        ]
    }
}

/// The write-skew workload.
pub struct WriteSkew {
    config: WriteSkewConfig,
}

/// One transaction's parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteSkewRequest {
    /// The pair.
    pub pair: u64,
    /// Which record of the pair a withdrawal zeroes (0 or 1).
    pub side: u64,
    /// The worker that runs it: its observer row is `worker % OBSERVERS`.
    pub worker: u64,
}

impl WriteSkew {
    /// A workload for a validated configuration.
    pub fn new(config: WriteSkewConfig) -> Self {
        WriteSkew { config }
    }
}

fn count(row: &[u8]) -> u64 {
    u64::from_le_bytes(row[..8].try_into().expect("8-byte row"))
}

impl Workload for WriteSkew {
    type Request = WriteSkewRequest;

    fn name(&self) -> &'static str {
        "write-skew"
    }

    fn tables(&self) -> Vec<TableSpec> {
        self.config.tables()
    }

    fn load<M: Sync>(&self, db: &Database<M>) {
        let t = db.table(PAIRS);
        for i in 0..self.config.records {
            t.get(RecordId(i))
                .expect("within the table")
                .payload
                .store(&1u64.to_le_bytes());
        }
    }

    fn new_request(&self) -> WriteSkewRequest {
        WriteSkewRequest::default()
    }

    fn generate(&self, worker: usize, rng: &mut FastRng, req: &mut WriteSkewRequest) {
        req.pair = rng.below(self.config.records / 2);
        req.side = rng.below(2);
        req.worker = worker as u64;
    }

    fn declares_access_sets(&self) -> Result<(), String> {
        Ok(())
    }

    /// Both records of the pair as written (which one is written depends on what the program
    /// reads), and the worker's observer row.
    fn declare(&self, req: &WriteSkewRequest, set: &mut AccessSet) {
        set.write(PAIRS, RecordId(2 * req.pair));
        set.write(PAIRS, RecordId(2 * req.pair + 1));
        set.write(OBSERVED, RecordId(req.worker % OBSERVERS));
    }

    fn txn_types(&self) -> &'static [&'static str] {
        &["pair"]
    }

    fn txn_type(&self, _req: &WriteSkewRequest) -> usize {
        0
    }

    fn check_consistency<M: Sync>(&self, db: &Database<M>) -> Option<ConsistencyReport> {
        let mut report = ConsistencyReport {
            conditions_checked: 2,
            consistency_violations: 0,
            examples: Vec::new(),
        };
        let mut row = [0u8; ROW];
        let mut load = |t: TableId, i: u64| {
            db.table(t)
                .get(RecordId(i))
                .expect("within the table")
                .payload
                .load(&mut row);
            count(&row)
        };
        for p in 0..self.config.records / 2 {
            let (x, y) = (load(PAIRS, 2 * p), load(PAIRS, 2 * p + 1));
            if x + y < 1 {
                report.consistency_violations += 1;
                if report.examples.len() < 10 {
                    report
                        .examples
                        .push(format!("pair {p} ends at {x} + {y} < 1"));
                }
            }
        }
        let observed: u64 = (0..OBSERVERS).map(|i| load(OBSERVED, i)).sum();
        if observed > 0 {
            report.consistency_violations += observed;
            report.examples.push(format!(
                "{observed} committed transactions read a pair below its constraint"
            ));
        }
        Some(report)
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a WriteSkewRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        run_pair(tx, *req)
    }
}

async fn run_pair<Tx: TxnOps>(tx: &mut Tx, req: WriteSkewRequest) -> Result<(), Abort> {
    let records = [RecordId(2 * req.pair), RecordId(2 * req.pair + 1)];
    let x = count(tx.read(PAIRS, records[0]).await?);
    let y = count(tx.read(PAIRS, records[1]).await?);
    if x + y < 1 {
        let me = RecordId(req.worker % OBSERVERS);
        tx.update(OBSERVED, me, |c| {
            let n = count(c) + 1;
            c.copy_from_slice(&n.to_le_bytes());
        })
        .await?;
    }
    if x + y >= 2 {
        tx.write(PAIRS, records[req.side as usize], &0u64.to_le_bytes())
            .await?;
    } else {
        let empty = if x == 0 { records[0] } else { records[1] };
        tx.write(PAIRS, empty, &1u64.to_le_bytes()).await?;
    }
    Ok(())
}
