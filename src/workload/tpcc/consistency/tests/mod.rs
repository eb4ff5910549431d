//! The conditions on a loaded warehouse, one corruption at a time: conditions 2-7 and 11 in
//! `orders.rs`, the money of 1 and 8-12 in `payments.rs`.

use super::*;
use crate::storage::Table;
use crate::workload::tpcc::rows::{Customer, History, NewOrder, Order, OrderLine};
use crate::workload::tpcc::schema::{CUSTOMER, HISTORY, NEW_ORDER, ORDER, ORDER_LINE};
use crate::workload::tpcc::{LoadParams, create_and_load};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

const NOW: u64 = 1_700_000_000;

fn config() -> TpccConfig {
    TpccConfig {
        warehouses: 1,
        spare_orders_per_district: 100,
        ..TpccConfig::default()
    }
}

/// One loaded warehouse shared by the tests; each test corrupts it through [`Patch`]es, which
/// restore the rows when dropped (also when the test fails), under the lock.
fn database() -> MutexGuard<'static, Database<()>> {
    static DB: OnceLock<Mutex<Database<()>>> = OnceLock::new();
    DB.get_or_init(|| {
        let params = LoadParams {
            seed: 7,
            now: NOW,
            threads: 2,
        };
        Mutex::new(create_and_load(&config(), &params).0)
    })
    .lock()
    .unwrap_or_else(PoisonError::into_inner)
}

/// A row overwritten for one test; the original comes back on drop.
struct Patch<'a> {
    table: &'a Table<()>,
    rid: RecordId,
    original: Vec<u8>,
}

impl Drop for Patch<'_> {
    fn drop(&mut self) {
        self.table
            .get(self.rid)
            .unwrap()
            .payload
            .store(&self.original);
    }
}

fn overwrite<'a>(db: &'a Database<()>, table: TableId, rid: RecordId, bytes: &[u8]) -> Patch<'a> {
    let table = db.table(table);
    let payload = table.get(rid).unwrap().payload;
    let mut original = vec![0u8; payload.len()];
    payload.load(&mut original);
    payload.store(bytes);
    Patch {
        table,
        rid,
        original,
    }
}

fn get<R: Row>(db: &Database<()>, table: TableId, rid: RecordId) -> R {
    RowReader::new(db).read(table, rid)
}

/// Writes `row` at `rid`.
fn put<'a, R: Row>(db: &'a Database<()>, table: TableId, rid: RecordId, row: &R) -> Patch<'a> {
    let mut bytes = vec![0u8; R::BYTES];
    row.encode(&mut bytes);
    overwrite(db, table, rid, &bytes)
}

/// Deletes the row at `rid` the way transactions do: an all-zero payload.
fn vacate(db: &Database<()>, table: TableId, rid: RecordId) -> Patch<'_> {
    overwrite(db, table, rid, &vec![0u8; db.table(table).payload_bytes()])
}

/// Violations per condition number, read from the examples (all of them: fewer than
/// [`MAX_EXAMPLES`]).
fn by_condition(report: &ConsistencyReport) -> BTreeMap<u32, u64> {
    assert!(
        report.consistency_violations < MAX_EXAMPLES as u64,
        "{report:?}"
    );
    assert_eq!(report.examples.len() as u64, report.consistency_violations);
    let mut counts = BTreeMap::new();
    for e in &report.examples {
        let n = e
            .strip_prefix("condition ")
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unnamed condition: {e}"));
        *counts.entry(n).or_insert(0) += 1;
    }
    counts
}

fn check(db: &Database<()>) -> ConsistencyReport {
    check_consistency(db, &config())
}

/// The report of an intact database.
fn check_fresh() -> ConsistencyReport {
    ConsistencyReport {
        conditions_checked: 12,
        consistency_violations: 0,
        examples: vec![],
    }
}

#[test]
fn a_fresh_load_is_consistent() {
    let db = database();
    let report = check(&db);
    assert_eq!(report, check_fresh());
    assert!(report.is_consistent());
}

#[test]
fn examples_stop_at_ten_warehouses_first() {
    let db = database();
    let l = config().layout();
    let mut patches = Vec::new();
    for d in (1..=10).rev() {
        let mut district: District = get(&db, DISTRICT, l.district(1, d));
        district.d_next_o_id = 0;
        patches.push(put(&db, DISTRICT, l.district(1, d), &district));
    }
    let mut warehouse: Warehouse = get(&db, WAREHOUSE, l.warehouse(1));
    warehouse.w_ytd = 0;
    patches.push(put(&db, WAREHOUSE, l.warehouse(1), &warehouse));
    let report = check(&db);
    assert_eq!(report.consistency_violations, 12);
    assert_eq!(report.examples.len(), MAX_EXAMPLES);
    assert!(report.examples[0].starts_with("condition 1, warehouse 1:"));
    assert!(report.examples[1].starts_with("condition 8, warehouse 1:"));
    for (d, e) in (1..=8).zip(&report.examples[2..]) {
        assert_eq!(
            *e,
            format!(
                "condition 2, warehouse 1 district {d}: D_NEXT_O_ID - 1 = -1 but max(O_ID) = \
                 3000"
            )
        );
    }
}

mod orders;
mod payments;
