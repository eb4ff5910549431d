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
//!
//! # Through an index (`--index`)
//!
//! Keys reach records through the run's [`KeyIndex`] (one per table, built once for all the
//! protocols a run compares), for every protocol alike, as YCSB's do:
//!
//! - `array` (the default, what every earlier long-scan result used): key `k` is record `k`.
//! - `hash`: the hot record is a hash lookup, and the scan of `scan_length` keys is that many
//!   hash lookups, one per key (a hash index has no key order to walk).
//! - `ordered`: the hot record is an ordered-index lookup, and the scan is one range walk in the
//!   ordered index from the start key, `scan_length` entries, leaf to leaf.
//!
//! Every method maps key `k` to record `k`, so the three run the same transactions on the same
//! records and differ only in what finding them costs.
//!
//! No phantom protection is needed for the walk beyond what long-scan has always had (none): both
//! tables are loaded densely before the run and no transaction inserts or deletes, so the key set
//! of every range is fixed and each range walk returns the same records any serial execution
//! would. Conflicts are on the records' contents, which every protocol guards through the reads
//! themselves.

use super::Workload;
use super::key_index::{KeyIndex, KeyIndexKind};
use crate::protocol::{Abort, AccessSet};
use crate::random::FastRng;
use crate::storage::{Database, RecordId, TableId, TableSpec};
use crate::txn::TxnOps;
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
    /// How keys find their records, in both tables (`--index`; the dense array by default).
    pub index: KeyIndexKind,
}

impl Default for LongScanConfig {
    fn default() -> Self {
        LongScanConfig {
            records: 1 << 20,
            hot_records: 1,
            scan_length: 1000,
            payload: 100,
            index: KeyIndexKind::Array,
        }
    }
}

impl LongScanConfig {
    /// The two tables: `hot` (table 0) and `large` (table 1), both of `payload`-byte records.
    pub fn tables(&self) -> Vec<TableSpec> {
        super::hot_and_large::hot_and_large("hot", self.hot_records, self.records, self.payload)
    }
}

/// The long-scan workload.
pub struct LongScan {
    config: LongScanConfig,
    /// Keys `0..hot_records` of the hot table.
    hot_index: KeyIndex,
    /// Keys `0..records` of the large table.
    large_index: KeyIndex,
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
    /// A workload for a validated configuration (its key indexes built here, once for all the
    /// protocols the workload then runs on).
    pub fn new(config: LongScanConfig) -> Self {
        LongScan {
            hot_index: KeyIndex::build(config.index, config.hot_records),
            large_index: KeyIndex::build(config.index, config.records),
            config,
        }
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

    /// The scan is of `scan_length` keys from a start drawn with the request, over a table
    /// whose key set never changes, so the whole set is known up front: the hot record
    /// (written) and the scanned records (read).
    fn declares_access_sets(&self) -> Result<(), String> {
        Ok(())
    }

    /// Resolves the keys through the run's indexes as the program will (a deterministic
    /// protocol pays the lookups, or the walk, before scheduling, like Calvin's reconnaissance).
    fn declare(&self, req: &LongScanRequest, set: &mut AccessSet) {
        set.write(HOT, hot_record(&self.hot_index, req.hot));
        for rid in self
            .large_index
            .scan(req.scan_start, self.config.scan_length)
        {
            set.read(LARGE, rid);
        }
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a LongScanRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        run_long_scan(self, tx, *req)
    }
}

/// The hot table's record of `key` (every key below `hot_records` is indexed).
#[inline]
fn hot_record(index: &KeyIndex, key: u64) -> RecordId {
    index
        .get(key)
        .expect("long-scan's hot keys are all indexed")
}

async fn run_long_scan<Tx: TxnOps>(
    w: &LongScan,
    tx: &mut Tx,
    req: LongScanRequest,
) -> Result<(), Abort> {
    // Every access finds its record through the run's index, inside the transaction.
    let hot = hot_record(&w.hot_index, req.hot);
    tx.read(HOT, hot).await?;
    let mut scanned = 0;
    for rid in w.large_index.scan(req.scan_start, w.config.scan_length) {
        tx.read(LARGE, rid).await?;
        scanned += 1;
    }
    debug_assert_eq!(scanned, w.config.scan_length, "the large table is dense");
    tx.update(HOT, hot, count_hot_update).await?;
    Ok(())
}

/// Adds one to the update counter of hot record `row` (see [`hot_update_count`]).
pub fn count_hot_update(row: &mut [u8]) {
    let n = row.len().min(8);
    let next = hot_update_count(row).wrapping_add(1).to_le_bytes();
    row[..n].copy_from_slice(&next[..n]);
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
            index: KeyIndexKind::Array,
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

    #[test]
    fn every_index_declares_the_same_records() {
        use crate::protocol::AccessMode;
        let config = |index| LongScanConfig {
            records: 3000,
            hot_records: 4,
            scan_length: 300,
            payload: 16,
            index,
        };
        let workloads = KeyIndexKind::ALL.map(|kind| LongScan::new(config(kind)));
        let mut rng = FastRng::new(5);
        let mut req = workloads[0].new_request();
        for _ in 0..50 {
            workloads[0].generate(0, &mut rng, &mut req);
            let mut want = vec![(HOT, RecordId(req.hot), AccessMode::Write)];
            want.extend(
                (req.scan_start..req.scan_start + 300)
                    .map(|k| (LARGE, RecordId(k), AccessMode::Read)),
            );
            for w in &workloads {
                let mut set = AccessSet::default();
                w.declare(&req, &mut set);
                let got: Vec<_> = set
                    .accesses()
                    .iter()
                    .map(|a| (a.table, a.rid, a.mode))
                    .collect();
                assert_eq!(got, want, "--index {}", w.config.index);
            }
        }
    }
}
