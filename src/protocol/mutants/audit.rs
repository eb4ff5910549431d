//! A workload whose rollbacks depend on what it reads, for the mutants of
//! [`Protocol::confirm_user_abort`](crate::protocol::Protocol::confirm_user_abort).
//!
//! Records `2p` and `2p + 1` form pair `p`, both starting at 0. A *transfer* adds 1 to both
//! records of a pair; an *audit* reads both and rolls itself back (a user abort) when they
//! differ, which no serial order lets it see. An audit that runs ahead of a transfer (DecentSched's
//! opportunistic execution) can read one record before the transfer's install and the other
//! after it; the protocol must then re-execute it in its place rather than let its rollback
//! stand. Check mode keeps the reads of a rollback that stood (`Txn::user_abort_stands`), so a
//! rollback decided on such a torn view is a cycle for the checker: the audit read `x` before
//! the transfer and `y` after it.

use crate::protocol::{Abort, AccessSet};
use crate::random::FastRng;
use crate::storage::{Database, RecordId, TableId, TableSpec};
use crate::txn::TxnOps;
use crate::workload::Workload;
use std::future::Future;

/// The pairs' table.
const TABLE: TableId = TableId(0);
/// Pairs: few, so that audits and transfers of one pair overlap often.
const PAIRS: u64 = 4;
/// Time an audit spends between its two reads: widens the window in which a transfer it
/// speculated ahead of installs between them (at 256 spin-loop hints, about a microsecond, 8
/// runs in 8 showed no such rollback).
const THINK: std::time::Duration = std::time::Duration::from_micros(20);

/// The audit workload.
pub(super) struct Audit;

/// One transaction: its pair, and whether it audits (else it transfers).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AuditRequest {
    pair: u64,
    audit: bool,
}

fn count(row: &[u8]) -> u64 {
    u64::from_le_bytes(row[..8].try_into().expect("8-byte row"))
}

impl Workload for Audit {
    type Request = AuditRequest;

    fn name(&self) -> &'static str {
        "audit"
    }

    fn tables(&self) -> Vec<TableSpec> {
        vec![TableSpec {
            name: "pairs".into(),
            records: 2 * PAIRS,
            payload_bytes: 8,
        }]
    }

    fn load<M: Sync>(&self, _db: &Database<M>) {}

    fn new_request(&self) -> AuditRequest {
        AuditRequest::default()
    }

    fn generate(&self, _worker: usize, rng: &mut FastRng, req: &mut AuditRequest) {
        req.pair = rng.below(PAIRS);
        req.audit = rng.below(2) == 0;
    }

    fn txn_types(&self) -> &'static [&'static str] {
        &["transfer", "audit"]
    }

    fn txn_type(&self, req: &AuditRequest) -> usize {
        usize::from(req.audit)
    }

    fn declares_access_sets(&self) -> Result<(), String> {
        Ok(())
    }

    fn declare(&self, req: &AuditRequest, set: &mut AccessSet) {
        for rid in [2 * req.pair, 2 * req.pair + 1] {
            if req.audit {
                set.read(TABLE, RecordId(rid));
            } else {
                set.write(TABLE, RecordId(rid));
            }
        }
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a AuditRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        run_pair(tx, *req)
    }
}

async fn run_pair<Tx: TxnOps>(tx: &mut Tx, req: AuditRequest) -> Result<(), Abort> {
    let (x, y) = (RecordId(2 * req.pair), RecordId(2 * req.pair + 1));
    if req.audit {
        let seen_x = count(tx.read(TABLE, x).await?);
        let start = std::time::Instant::now();
        while start.elapsed() < THINK {
            std::hint::spin_loop();
        }
        let seen_y = count(tx.read(TABLE, y).await?);
        if seen_x != seen_y {
            return Err(Abort::User);
        }
        return Ok(());
    }
    for rid in [x, y] {
        tx.update(TABLE, rid, |row| {
            let n = count(row) + 1;
            row[..8].copy_from_slice(&n.to_le_bytes());
        })
        .await?;
    }
    Ok(())
}
