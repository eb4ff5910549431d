//! MOCC's long-scan workload (MOCC 5.6, table 4): an analytic scan inside an update transaction.
//!
//! Two tables: a small hot table (one record by default) and a large table. Every transaction
//! reads one hot record, scans `scan_length` consecutive records of the large table from a
//! uniformly random start, then read-modify-writes the hot record it read. Pure OCC aborts almost
//! every such transaction (the hot record changes during the long scan); MOCC's temperature
//! statistics make it read-lock the hot record up front.
//!
//! The update increments a counter in the hot record's first bytes ([`hot_update_count`]), so a
//! lost update shows in the final value too. The checker needs nothing from this workload (check
//! mode stamps every row, see `txn`).

use super::Workload;
use crate::protocol::{Abort, AccessSet, Protocol};
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

impl LongScanConfig {
    /// The two tables: `hot` (table 0) and `large` (table 1), both of `payload`-byte records.
    pub fn tables(&self) -> Vec<TableSpec> {
        vec![
            TableSpec {
                name: "hot".into(),
                records: self.hot_records,
                payload_bytes: self.payload,
            },
            TableSpec {
                name: "large".into(),
                records: self.records,
                payload_bytes: self.payload,
            },
        ]
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
        self.config.tables()
    }

    fn load<M: Sync>(&self, _db: &Database<M>) {
        // Zeroed rows: the counters start at 0 and the large table's content does not matter.
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

    /// The scan is of consecutive record ids from a start drawn with the request (not an index
    /// range), so the whole set is known up front: the hot record (written) and the scanned
    /// records (read).
    fn declares_access_sets(&self) -> Result<(), String> {
        Ok(())
    }

    fn declare(&self, req: &LongScanRequest, set: &mut AccessSet) {
        set.write(HOT, RecordId(req.hot));
        for key in req.scan_start..req.scan_start + self.config.scan_length {
            set.read(LARGE, RecordId(key));
        }
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
    let hot = RecordId(req.hot);
    tx.read(HOT, hot).await?;
    for key in req.scan_start..req.scan_start + scan_length {
        tx.read(LARGE, RecordId(key)).await?;
    }
    tx.update(HOT, hot, |data| {
        let n = data.len().min(8);
        let mut counter = [0u8; 8];
        counter[..n].copy_from_slice(&data[..n]);
        let next = u64::from_le_bytes(counter).wrapping_add(1).to_le_bytes();
        data[..n].copy_from_slice(&next[..n]);
    })
    .await?;
    Ok(())
}

/// The number of updates the hot record `row` has seen (its first 8 bytes, little endian,
/// truncated to the payload size), for lost-update checks.
pub fn hot_update_count(row: &[u8]) -> u64 {
    let n = row.len().min(8);
    let mut counter = [0u8; 8];
    counter[..n].copy_from_slice(&row[..n]);
    u64::from_le_bytes(counter)
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
