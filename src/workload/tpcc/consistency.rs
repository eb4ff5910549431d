//! TPC-C's consistency conditions (TPC-C 5.11, clause 3.3.2), checked on a quiescent database
//! after a run (or right after loading).
//!
//! # Conditions
//!
//! Numbered as in the spec; messages name them the same way.
//!
//! 1. (3.3.2.1) For each warehouse: W_YTD = sum(D_YTD) over its districts.
//! 2. (3.3.2.2) For each district: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID), the NEW-ORDER
//!    part only when the district has NEW-ORDER rows. max(O_ID) is over every ORDER row in the
//!    district's slots, so an order at or past D_NEXT_O_ID fails it.
//! 3. (3.3.2.3) For each district with NEW-ORDER rows: max(NO_O_ID) - min(NO_O_ID) + 1 = the
//!    number of NEW-ORDER rows (undelivered orders form one contiguous range).
//! 4. (3.3.2.4) For each district: sum(O_OL_CNT) = the number of ORDER-LINE rows, counting lines
//!    whose ORDER row is missing too.
//! 5. (3.3.2.5) For each ORDER row: O_CARRIER_ID is null iff its NEW-ORDER row exists. A
//!    NEW-ORDER row without its ORDER row is counted here as well.
//! 6. (3.3.2.6) For each ORDER row: O_OL_CNT = the number of its ORDER-LINE rows.
//! 7. (3.3.2.7) For each ORDER-LINE row of an existing order: OL_DELIVERY_D is null iff the
//!    order's O_CARRIER_ID is null.
//!
//! Conditions 8-12 (W_YTD and D_YTD against HISTORY, customer balances against ORDER-LINE and
//! HISTORY, C_DELIVERY_CNT against ORDER and NEW-ORDER) are not checked.
//!
//! # Reading the tables
//!
//! The database is quiescent, so payloads are read directly, with no protocol. A row is absent
//! when its slot is vacant ([`crate::storage::is_vacant`]). Rows are found by the layout's
//! arithmetic ([`TpccLayout`]): the ORDER and NEW-ORDER rows of order (w, d, o) share one slot
//! index, its lines sit at `order_line(order_rid, 1..=15)`. Every slot of every district
//! (o in 1..=`orders_per_district`) is scanned, because nothing guarantees that orders are dense or
//! stop at D_NEXT_O_ID; records past the last district (index sentinels) are ignored.
//!
//! Four warehouses hold about 40 x 13,000 order slots and 15 times as many line slots, so
//! districts are checked in parallel, one district per task.

use super::rows::{District, NewOrder, Order, OrderLine, Row, Warehouse};
use super::schema::{
    DISTRICT, DISTRICTS_PER_WAREHOUSE, MAX_ORDER_LINES, NEW_ORDER, ORDER, ORDER_LINE, WAREHOUSE,
};
use super::{TpccConfig, TpccLayout};
use crate::storage::{Database, RecordId, TableId, is_vacant};
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Conditions evaluated by [`check_consistency`]: 3.3.2.1 through 3.3.2.7.
pub const CONDITIONS_CHECKED: u32 = 7;

/// Most violation descriptions a report keeps.
pub const MAX_EXAMPLES: usize = 10;

/// Outcome of the consistency checks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConsistencyReport {
    /// How many distinct conditions were evaluated ([`CONDITIONS_CHECKED`]).
    pub conditions_checked: u32,
    /// Violations found; each failing instance counts once (a warehouse for condition 1, a
    /// district for 2-4, an order for 5-6, an order line for 7).
    pub consistency_violations: u64,
    /// Descriptions of the first [`MAX_EXAMPLES`] violations, warehouses first, then districts
    /// in id order ("condition 2, warehouse 1 district 3: D_NEXT_O_ID - 1 = 3004 but
    /// max(O_ID) = 3005").
    pub examples: Vec<String>,
}

impl ConsistencyReport {
    /// Whether every condition held.
    pub fn is_consistent(&self) -> bool {
        self.consistency_violations == 0
    }
}

/// Checks conditions 3.3.2.1-7 (module docs) on `db`, which was created from `config` and is
/// quiescent. Panics when `db` is not shaped like `config` (a caller bug).
pub fn check_consistency<M: Sync>(db: &Database<M>, config: &TpccConfig) -> ConsistencyReport {
    for (table, spec) in db.tables().iter().zip(config.tables()) {
        assert!(
            table.len() >= spec.records && table.payload_bytes() == spec.payload_bytes,
            "table {} not created from this TPC-C config",
            spec.name
        );
    }
    let layout = config.layout();
    let warehouses = u32::try_from(config.warehouses).expect("warehouse count fits in u32");

    let mut found = Violations::default();
    for w in 1..=warehouses {
        check_warehouse(db, &layout, w, &mut found);
    }

    let districts: Vec<(u32, u8)> = (1..=warehouses)
        .flat_map(|w| (1..=DISTRICTS_PER_WAREHOUSE as u8).map(move |d| (w, d)))
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(districts.len());
    let next = AtomicUsize::new(0);
    let mut per_district: Vec<(usize, Violations)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut checked = Vec::new();
                    loop {
                        // Relaxed: the counter only hands out indices; results travel back
                        // through `join`.
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(w, d)) = districts.get(i) else {
                            break;
                        };
                        let mut found = Violations::default();
                        DistrictScan::new(db, &layout, w, d).run(&mut found);
                        checked.push((i, found));
                    }
                    checked
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    per_district.sort_by_key(|&(i, _)| i);
    for (_, district) in per_district {
        found.merge(district);
    }

    ConsistencyReport {
        conditions_checked: CONDITIONS_CHECKED,
        consistency_violations: found.count,
        examples: found.examples,
    }
}

/// Violations found so far: a count and the first [`MAX_EXAMPLES`] descriptions.
#[derive(Debug, Default)]
struct Violations {
    count: u64,
    examples: Vec<String>,
}

impl Violations {
    /// Counts one violation; `describe` runs only while there is room for another example.
    fn record(&mut self, describe: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(describe());
        }
    }

    fn merge(&mut self, other: Violations) {
        self.count += other.count;
        let room = MAX_EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
    }
}

/// Decodes the row at `rid`, vacant or not (WAREHOUSE and DISTRICT rows are never deleted; a
/// vacant one decodes to zeros and fails the conditions that read it).
fn read<R: Row, M>(db: &Database<M>, table: TableId, rid: RecordId, buf: &mut Vec<u8>) -> R {
    let record = db
        .table(table)
        .get(rid)
        .expect("checked against the config");
    buf.resize(R::BYTES, 0);
    record.payload.load(buf);
    R::decode(buf)
}

/// Condition 1 for warehouse `w`.
fn check_warehouse<M>(db: &Database<M>, layout: &TpccLayout, w: u32, found: &mut Violations) {
    let mut buf = Vec::new();
    let warehouse: Warehouse = read(db, WAREHOUSE, layout.warehouse(w), &mut buf);
    let d_ytd: i64 = (1..=DISTRICTS_PER_WAREHOUSE as u8)
        .map(|d| read::<District, _>(db, DISTRICT, layout.district(w, d), &mut buf).d_ytd)
        .sum();
    if warehouse.w_ytd != d_ytd {
        found.record(|| {
            format!(
                "condition 1, warehouse {w}: W_YTD = {} but sum(D_YTD) = {d_ytd}",
                warehouse.w_ytd
            )
        });
    }
}

/// Conditions 2-7 for one district: one pass over its order slots.
struct DistrictScan<'a, M> {
    db: &'a Database<M>,
    layout: &'a TpccLayout,
    w: u32,
    d: u8,
    buf: Vec<u8>,
}

impl<'a, M> DistrictScan<'a, M> {
    fn new(db: &'a Database<M>, layout: &'a TpccLayout, w: u32, d: u8) -> Self {
        DistrictScan {
            db,
            layout,
            w,
            d,
            buf: Vec::new(),
        }
    }

    /// The row at `rid`, or `None` when the slot is vacant.
    fn row<R: Row>(&mut self, table: TableId, rid: RecordId) -> Option<R> {
        let record = self
            .db
            .table(table)
            .get(rid)
            .expect("checked against the config");
        self.buf.resize(R::BYTES, 0);
        record.payload.load(&mut self.buf);
        (!is_vacant(&self.buf)).then(|| R::decode(&self.buf))
    }

    /// Whether a row sits at `rid` (one word read, for slots whose content does not matter).
    fn present(&self, table: TableId, rid: RecordId) -> bool {
        let record = self
            .db
            .table(table)
            .get(rid)
            .expect("checked against the config");
        !record.payload.is_vacant()
    }

    fn run(mut self, found: &mut Violations) {
        let (w, d) = (self.w, self.d);
        let at = format!("warehouse {w} district {d}");
        let district: District = read(self.db, DISTRICT, self.layout.district(w, d), &mut self.buf);
        let expected_max = i64::from(district.d_next_o_id) - 1;

        let mut max_o_id = 0u32;
        let mut new_orders = 0u64;
        let (mut min_no_o_id, mut max_no_o_id) = (u32::MAX, 0u32);
        let mut ol_cnt_sum = 0u64;
        let mut line_rows = 0u64;
        let slots = u32::try_from(self.layout.orders_per_district).expect("order ids are u32");
        for o in 1..=slots {
            let order_rid = self.layout.order(w, d, o).expect("o within the slots");
            let order: Option<Order> = self.row(ORDER, order_rid);
            let new_order = self.row::<NewOrder>(NEW_ORDER, order_rid);
            if let Some(no) = &new_order {
                new_orders += 1;
                min_no_o_id = min_no_o_id.min(no.no_o_id);
                max_no_o_id = max_no_o_id.max(no.no_o_id);
            }
            let Some(order) = order else {
                // Lines without their order still count as ORDER-LINE rows (condition 4).
                line_rows += (1..=MAX_ORDER_LINES as u8)
                    .filter(|&n| self.present(ORDER_LINE, self.layout.order_line(order_rid, n)))
                    .count() as u64;
                if new_order.is_some() {
                    found.record(|| {
                        format!("condition 5, {at}: NEW-ORDER row for order {o} has no ORDER row")
                    });
                }
                continue;
            };

            max_o_id = max_o_id.max(order.o_id);
            ol_cnt_sum += u64::from(order.o_ol_cnt);
            let mut lines = 0u8;
            for n in 1..=MAX_ORDER_LINES as u8 {
                let Some(line) =
                    self.row::<OrderLine>(ORDER_LINE, self.layout.order_line(order_rid, n))
                else {
                    continue;
                };
                lines += 1;
                if line.ol_delivery_d.is_none() != order.o_carrier_id.is_none() {
                    found.record(|| {
                        format!(
                            "condition 7, {at}: order {o} line {n} has OL_DELIVERY_D {} but \
                             O_CARRIER_ID {}",
                            null_or(line.ol_delivery_d),
                            null_or(order.o_carrier_id)
                        )
                    });
                }
            }
            line_rows += u64::from(lines);

            if order.o_carrier_id.is_none() != new_order.is_some() {
                found.record(|| {
                    format!(
                        "condition 5, {at}: order {o} has O_CARRIER_ID {} but {}",
                        null_or(order.o_carrier_id),
                        if new_order.is_some() {
                            "a NEW-ORDER row"
                        } else {
                            "no NEW-ORDER row"
                        }
                    )
                });
            }
            if order.o_ol_cnt != lines {
                found.record(|| {
                    format!(
                        "condition 6, {at}: order {o} has O_OL_CNT = {} but {lines} ORDER-LINE rows",
                        order.o_ol_cnt
                    )
                });
            }
        }

        if expected_max != i64::from(max_o_id) {
            found.record(|| {
                format!(
                    "condition 2, {at}: D_NEXT_O_ID - 1 = {expected_max} but max(O_ID) = {max_o_id}"
                )
            });
        } else if new_orders > 0 && expected_max != i64::from(max_no_o_id) {
            found.record(|| {
                format!(
                    "condition 2, {at}: D_NEXT_O_ID - 1 = {expected_max} but max(NO_O_ID) = \
                     {max_no_o_id}"
                )
            });
        }
        if new_orders > 0 {
            let span = u64::from(max_no_o_id) + 1 - u64::from(min_no_o_id);
            if span != new_orders {
                found.record(|| {
                    format!(
                        "condition 3, {at}: max(NO_O_ID) - min(NO_O_ID) + 1 = {span} but \
                         {new_orders} NEW-ORDER rows"
                    )
                });
            }
        }
        if ol_cnt_sum != line_rows {
            found.record(|| {
                format!(
                    "condition 4, {at}: sum(O_OL_CNT) = {ol_cnt_sum} but {line_rows} ORDER-LINE rows"
                )
            });
        }
    }
}

/// A nullable field for a message: its value or "null".
fn null_or<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "null".to_owned(), |v| format!("= {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Table;
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

    fn overwrite<'a>(
        db: &'a Database<()>,
        table: TableId,
        rid: RecordId,
        bytes: &[u8],
    ) -> Patch<'a> {
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
        read(db, table, rid, &mut Vec::new())
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

    #[test]
    fn a_fresh_load_is_consistent() {
        let db = database();
        let report = check(&db);
        assert_eq!(
            report,
            ConsistencyReport {
                conditions_checked: 7,
                consistency_violations: 0,
                examples: vec![],
            }
        );
        assert!(report.is_consistent());
    }

    #[test]
    fn a_changed_d_ytd_breaks_condition_1() {
        let db = database();
        let rid = config().layout().district(1, 3);
        let mut district: District = get(&db, DISTRICT, rid);
        district.d_ytd += 1;
        let _p = put(&db, DISTRICT, rid, &district);
        let report = check(&db);
        assert_eq!(by_condition(&report), BTreeMap::from([(1, 1)]));
        assert_eq!(
            report.examples[0],
            "condition 1, warehouse 1: W_YTD = 30000000 but sum(D_YTD) = 30000001"
        );
    }

    #[test]
    fn a_bumped_d_next_o_id_breaks_condition_2() {
        let db = database();
        let rid = config().layout().district(1, 2);
        let mut district: District = get(&db, DISTRICT, rid);
        district.d_next_o_id += 1;
        let _p = put(&db, DISTRICT, rid, &district);
        let report = check(&db);
        assert_eq!(by_condition(&report), BTreeMap::from([(2, 1)]));
        assert_eq!(
            report.examples[0],
            "condition 2, warehouse 1 district 2: D_NEXT_O_ID - 1 = 3001 but max(O_ID) = 3000"
        );
    }

    #[test]
    fn a_deleted_newest_new_order_breaks_condition_2() {
        let db = database();
        let rid = config().layout().new_order(1, 5, 3000).unwrap();
        let _p = vacate(&db, NEW_ORDER, rid);
        let report = check(&db);
        assert_eq!(by_condition(&report), BTreeMap::from([(2, 1), (5, 1)]));
        assert!(
            report
                .examples
                .iter()
                .any(|e| e.ends_with("max(NO_O_ID) = 2999"))
        );
    }

    #[test]
    fn a_new_order_hole_breaks_conditions_3_and_5() {
        let db = database();
        let rid = config().layout().new_order(1, 4, 2500).unwrap();
        let _p = vacate(&db, NEW_ORDER, rid);
        let report = check(&db);
        assert_eq!(by_condition(&report), BTreeMap::from([(3, 1), (5, 1)]));
        assert!(report.examples.contains(
            &"condition 3, warehouse 1 district 4: max(NO_O_ID) - min(NO_O_ID) + 1 = 900 but 899 \
              NEW-ORDER rows"
                .to_owned()
        ));
        assert!(
            report.examples.contains(
                &"condition 5, warehouse 1 district 4: order 2500 has O_CARRIER_ID null but no \
              NEW-ORDER row"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_missing_order_line_breaks_conditions_4_and_6() {
        let db = database();
        let order = config().layout().order(1, 5, 100).unwrap();
        let _p = vacate(&db, ORDER_LINE, config().layout().order_line(order, 2));
        let report = check(&db);
        assert_eq!(by_condition(&report), BTreeMap::from([(4, 1), (6, 1)]));
    }

    #[test]
    fn a_new_order_row_without_its_order_breaks_condition_5() {
        let db = database();
        let l = config().layout();
        let rid = l.new_order(1, 6, 1).unwrap();
        let stray = NewOrder {
            no_o_id: 1,
            no_d_id: 6,
            no_w_id: 1,
        };
        let _order = vacate(&db, ORDER, rid);
        let lines: Vec<_> = (1..=15)
            .map(|n| vacate(&db, ORDER_LINE, l.order_line(rid, n)))
            .collect();
        let _p = put(&db, NEW_ORDER, rid, &stray);
        let report = check(&db);
        // Also a NEW-ORDER range now spanning 1..=3000 with 901 rows.
        assert_eq!(by_condition(&report), BTreeMap::from([(3, 1), (5, 1)]));
        assert!(
            report
                .examples
                .iter()
                .any(|e| e.ends_with("NEW-ORDER row for order 1 has no ORDER row"))
        );
        drop(lines);
    }

    #[test]
    fn a_delivery_that_forgets_its_lines_breaks_condition_7() {
        let db = database();
        let l = config().layout();
        let rid = l.order(1, 8, 2101).unwrap();
        let mut order: Order = get(&db, ORDER, rid);
        order.o_carrier_id = Some(4);
        let _no = vacate(&db, NEW_ORDER, rid);
        let _p = put(&db, ORDER, rid, &order);
        let report = check(&db);
        assert_eq!(report.consistency_violations, u64::from(order.o_ol_cnt));
        assert!(
            report
                .examples
                .iter()
                .all(|e| e.starts_with("condition 7, warehouse 1 district 8: order 2101 line ")),
            "{report:?}"
        );
        assert!(report.examples[0].ends_with("has OL_DELIVERY_D null but O_CARRIER_ID = 4"));
    }

    #[test]
    fn one_delivered_line_of_an_undelivered_order_breaks_condition_7() {
        let db = database();
        let l = config().layout();
        let rid = l.order_line(l.order(1, 9, 2999).unwrap(), 1);
        let mut line: OrderLine = get(&db, ORDER_LINE, rid);
        line.ol_delivery_d = Some(NOW);
        let _p = put(&db, ORDER_LINE, rid, &line);
        assert_eq!(by_condition(&check(&db)), BTreeMap::from([(7, 1)]));
    }

    /// What Delivery does to the oldest undelivered order keeps every condition.
    #[test]
    fn a_complete_delivery_stays_consistent() {
        let db = database();
        let l = config().layout();
        let rid = l.order(1, 1, 2101).unwrap();
        let mut order: Order = get(&db, ORDER, rid);
        order.o_carrier_id = Some(3);
        let mut patches = vec![vacate(&db, NEW_ORDER, rid), put(&db, ORDER, rid, &order)];
        for n in 1..=order.o_ol_cnt {
            let line_rid = l.order_line(rid, n);
            let mut line: OrderLine = get(&db, ORDER_LINE, line_rid);
            line.ol_delivery_d = Some(NOW + 1);
            patches.push(put(&db, ORDER_LINE, line_rid, &line));
        }
        assert_eq!(check(&db).consistency_violations, 0);
    }

    /// What New-Order inserts keeps every condition; the same rows without advancing
    /// D_NEXT_O_ID leave an order past it (condition 2).
    #[test]
    fn a_new_order_is_consistent_only_with_d_next_o_id_advanced() {
        let db = database();
        let l = config().layout();
        let (w, d, o) = (1, 10, 3001);
        let rid = l.order(w, d, o).unwrap();
        let order = Order {
            o_id: o,
            o_d_id: d,
            o_w_id: w,
            o_c_id: 17,
            o_entry_d: NOW,
            o_carrier_id: None,
            o_ol_cnt: 5,
            o_all_local: 1,
        };
        let new_order = NewOrder {
            no_o_id: o,
            no_d_id: d,
            no_w_id: w,
        };
        let mut patches = vec![
            put(&db, ORDER, rid, &order),
            put(&db, NEW_ORDER, rid, &new_order),
        ];
        for n in 1..=order.o_ol_cnt {
            let line = OrderLine {
                ol_o_id: o,
                ol_d_id: d,
                ol_w_id: w,
                ol_number: n,
                ol_i_id: 42,
                ol_supply_w_id: w,
                ol_delivery_d: None,
                ol_quantity: 5,
                ol_amount: 100,
                ..OrderLine::default()
            };
            patches.push(put(&db, ORDER_LINE, l.order_line(rid, n), &line));
        }
        let report = check(&db);
        assert_eq!(by_condition(&report), BTreeMap::from([(2, 1)]));
        assert_eq!(
            report.examples[0],
            "condition 2, warehouse 1 district 10: D_NEXT_O_ID - 1 = 3000 but max(O_ID) = 3001"
        );

        let mut district: District = get(&db, DISTRICT, l.district(w, d));
        district.d_next_o_id += 1;
        patches.push(put(&db, DISTRICT, l.district(w, d), &district));
        assert_eq!(check(&db).consistency_violations, 0);
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
        assert_eq!(report.consistency_violations, 11);
        assert_eq!(report.examples.len(), MAX_EXAMPLES);
        assert!(report.examples[0].starts_with("condition 1, warehouse 1:"));
        for (d, e) in (1..=9).zip(&report.examples[1..]) {
            assert_eq!(
                *e,
                format!(
                    "condition 2, warehouse 1 district {d}: D_NEXT_O_ID - 1 = -1 but max(O_ID) = \
                     3000"
                )
            );
        }
    }
}
