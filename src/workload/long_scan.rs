//! MOCC's long-scan workload (MOCC 5.6, table 4): an analytic scan inside an update transaction.
//!
//! Two tables: a small hot table (one record by default) and a large table. Every transaction
//! reads one hot record, scans `scan_length` consecutive records of the large table from a
//! uniformly random start, then read-modify-writes the hot record it read. Pure OCC aborts almost
//! every such transaction (the hot record changes during the long scan); MOCC's temperature
//! statistics make it read-lock the hot record up front.
//!
//! In check mode the hot record's payload carries a version stamp like YCSB's; the large table
//! is never written, so its reads all see the loaded version.

use super::Workload;
use crate::check::history::Version;
use crate::protocol::{Abort, Protocol};
use crate::random::FastRng;
use crate::storage::{Database, RecordId, TableId, TableSpec};
use crate::txn::Txn;
use serde::Serialize;
use std::future::Future;

/// The small, contended table.
pub const HOT: TableId = TableId(0);
/// The large, scanned table.
pub const LARGE: TableId = TableId(1);

/// Long-scan parameters (validated by `config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongScanConfig {
    /// Records in the large table.
    pub records: u64,
    /// Records in the hot table.
    pub hot_records: u64,
    /// Consecutive large-table records each transaction reads.
    pub scan_length: u64,
    /// Payload bytes per record (both tables).
    pub payload: usize,
}

impl Default for LongScanConfig {
    fn default() -> Self {
        LongScanConfig {
            records: 1 << 20,
            hot_records: 1,
            scan_length: 1000,
            payload: 100,
        }
    }
}

/// The long-scan workload.
pub struct LongScan {
    config: LongScanConfig,
}

/// One long-scan transaction's parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct LongScanRequest {
    /// The hot record read first and updated last.
    pub hot: u64,
    /// First large-table record of the scan.
    pub scan_start: u64,
}

impl LongScan {
    /// A workload for a validated configuration.
    pub fn new(config: LongScanConfig) -> Self {
        LongScan { config }
    }
}

impl Workload for LongScan {
    type Request = LongScanRequest;

    fn name(&self) -> &'static str {
        "long-scan"
    }

    fn tables(&self) -> Vec<TableSpec> {
        let c = &self.config;
        vec![
            TableSpec {
                name: "hot".into(),
                records: c.hot_records,
                payload_bytes: c.payload,
            },
            TableSpec {
                name: "large".into(),
                records: c.records,
                payload_bytes: c.payload,
            },
        ]
    }

    fn load<M: Sync>(&self, _db: &Database<M>) {
        // Zeroed payloads are the initial version stamp; nothing else to load.
    }

    fn new_request(&self) -> LongScanRequest {
        LongScanRequest::default()
    }

    fn generate(&self, _worker: usize, rng: &mut FastRng, req: &mut LongScanRequest) {
        let c = &self.config;
        req.hot = rng.below(c.hot_records);
        req.scan_start = rng.below(c.records - c.scan_length + 1);
    }

    fn txn_types(&self) -> &'static [&'static str] {
        &["long_scan"]
    }

    /// Never: every transaction updates its hot record.
    fn is_read_only(&self, _req: &LongScanRequest) -> bool {
        false
    }

    fn txn_type(&self, _req: &LongScanRequest) -> usize {
        0
    }

    fn run<'a, 'db, P: Protocol>(
        &'a self,
        tx: &'a mut Txn<'db, P>,
        req: &'a LongScanRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        run_long_scan(self.config.scan_length, tx, *req)
    }
}

async fn run_long_scan<P: Protocol>(
    scan_length: u64,
    tx: &mut Txn<'_, P>,
    req: LongScanRequest,
) -> Result<(), Abort> {
    let recording = tx.is_recording();
    let hot = RecordId(req.hot);
    let seen = Version::decode(tx.read(HOT, hot).await?);
    if recording {
        tx.record_read(HOT, hot, seen);
    }
    for key in req.scan_start..req.scan_start + scan_length {
        let rid = RecordId(key);
        let data = tx.read(LARGE, rid).await?;
        if recording {
            let v = Version::decode(data);
            tx.record_read(LARGE, rid, v);
        }
    }
    let id = tx.id();
    let before = tx
        .update(HOT, hot, |data| {
            let before = Version::decode(data);
            Version {
                writer: id,
                seq: before.seq + 1,
            }
            .encode(data);
            before
        })
        .await?;
    if recording {
        tx.record_read(HOT, hot, before);
        tx.record_write(
            HOT,
            hot,
            Version {
                writer: id,
                seq: before.seq + 1,
            },
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_stay_inside_the_large_table() {
        let w = LongScan::new(LongScanConfig {
            records: 1500,
            hot_records: 2,
            scan_length: 1000,
            payload: 16,
        });
        let mut rng = FastRng::new(1);
        let mut req = w.new_request();
        let (mut max_start, mut hots) = (0, [false; 2]);
        for _ in 0..10_000 {
            w.generate(0, &mut rng, &mut req);
            assert!(req.scan_start + 1000 <= 1500);
            max_start = max_start.max(req.scan_start);
            hots[req.hot as usize] = true;
        }
        assert_eq!(max_start, 500, "every start position is reachable");
        assert!(hots.iter().all(|&h| h));
    }
}
