//! TPC-C's consistency conditions (TPC-C 5.11, clause 3.3.2), checked on a quiescent database
//! after a run (or right after loading).
//!
//! # Conditions
//!
//! Numbered as in the spec; messages name them the same way. Amounts are compared exactly, in
//! the schema's integer cents.
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
//! 8. (3.3.2.8) For each warehouse: W_YTD = sum(H_AMOUNT) over the HISTORY rows with
//!    H_W_ID = W_ID.
//! 9. (3.3.2.9) For each district: D_YTD = sum(H_AMOUNT) over the HISTORY rows with
//!    (H_W_ID, H_D_ID) = (D_W_ID, D_ID). A HISTORY row naming a district that does not exist
//!    is counted here as well.
//! 10. (3.3.2.10) For each customer: C_BALANCE = sum(OL_AMOUNT) - sum(H_AMOUNT), the first sum
//!     over the delivered lines (OL_DELIVERY_D not null) of the customer's orders (O_C_ID), the
//!     second over the HISTORY rows naming the customer (H_C_W_ID, H_C_D_ID, H_C_ID). A HISTORY
//!     row naming a customer that does not exist, and an order with delivered lines whose
//!     O_C_ID names none, are counted here as well.
//! 11. (3.3.2.11) For each district: count(ORDER) - count(NEW-ORDER) = 2100 + sum(C_DELIVERY_CNT)
//!     over the district's customers. The spec says "= 2100", which holds on the initial
//!     population (3,000 orders, the last 900 of them undelivered) and after any number of
//!     New-Orders (each adds one row to both tables), but not once a Delivery ran: each moves
//!     one order out of NEW-ORDER, and adds one to that order's customer's C_DELIVERY_CNT (a
//!     customer of the same district; zero for everyone at load, clause 4.3.3.1). With the sum
//!     the condition holds after every serializable run and is the spec's exactly until the
//!     first Delivery. It is no tautology: nothing else ties the customers' delivery counts to
//!     the orders delivered, which a lost or doubled Delivery update breaks. (C_DELIVERY_CNT
//!     wraps past 65,535 deliveries to one customer, far beyond any run.)
//! 12. (3.3.2.12) For each customer: C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT) over the
//!     delivered lines of the customer's orders.
//!
//! # Reading the tables
//!
//! The database is quiescent, so payloads are read directly, with no protocol. A row is absent
//! when its slot is vacant ([`crate::storage::is_vacant`]). Rows are found by the layout's
//! arithmetic ([`TpccLayout`]): the ORDER and NEW-ORDER rows of order (w, d, o) share one slot
//! index, its lines sit at `order_line(order_rid, 1..=15)`. Every slot of every district
//! (o in 1..=`orders_per_district`) is scanned, because nothing guarantees that orders are dense or
//! stop at D_NEXT_O_ID; records past the last district (index sentinels) are ignored. HISTORY has
//! no key: each district's slot range (`history(w, d, k)`) is scanned whole, and each row counts
//! for the district and the customer its fields name, which for the rows Payment writes is the
//! district whose slots hold it and a customer of any district.
//!
//! # Passes
//!
//! Four warehouses hold about 40 x 13,000 order slots and 15 times as many line slots, so both
//! passes run in parallel, one district per task:
//!
//! 1. HISTORY (`history.rs`): H_AMOUNT summed per district and per customer. A customer's
//!    payments may land in any district's slots (remote payments), so the sums are shared.
//! 2. Per warehouse, conditions 1 and 8 (sequential: one row and ten sums each).
//! 3. Per district (`district.rs`): its orders, lines, NEW-ORDER rows and customers in one pass,
//!    conditions 2-7 and 9-12, with the sums of pass 1.

mod district;
mod history;

use super::rows::{District, Row, Warehouse};
use super::schema::{DISTRICT, DISTRICTS_PER_WAREHOUSE, WAREHOUSE};
use super::{TpccConfig, TpccLayout};
pub use crate::check::ConsistencyReport;
use crate::storage::{Database, RecordId, TableId, is_vacant};
use district::DistrictScan;
use history::Payments;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Conditions evaluated by [`check_consistency`]: 3.3.2.1 through 3.3.2.12 (11 in the form the
/// module docs give).
pub const CONDITIONS_CHECKED: u32 = 12;

/// Most violation descriptions a report keeps.
pub const MAX_EXAMPLES: usize = 10;

/// Checks conditions 3.3.2.1-12 (module docs) on `db`, which was created from `config` and is
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
    let districts: Vec<(u32, u8)> = (1..=warehouses)
        .flat_map(|w| (1..=DISTRICTS_PER_WAREHOUSE as u8).map(move |d| (w, d)))
        .collect();

    let payments = Payments::new(layout);
    let history = per_district(&districts, |w, d| payments.add_district(db, w, d));

    let mut found = Violations::default();
    for w in 1..=warehouses {
        check_warehouse(db, &layout, &payments, w, &mut found);
    }

    let scanned = per_district(&districts, |w, d| {
        DistrictScan::new(db, &layout, &payments, w, d).run()
    });
    for (history, scanned) in history.into_iter().zip(scanned) {
        found.merge(history);
        found.merge(scanned);
    }

    ConsistencyReport {
        conditions_checked: CONDITIONS_CHECKED,
        consistency_violations: found.count,
        examples: found.examples,
    }
}

/// Runs `check` for every district of `districts` on all cores (one district per task) and
/// returns the results in `districts`' order.
pub(super) fn per_district<T: Send>(
    districts: &[(u32, u8)],
    check: impl Fn(u32, u8) -> T + Sync,
) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(districts.len());
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|s| {
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
                        checked.push((i, check(w, d)));
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
    done.sort_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, t)| t).collect()
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

/// Decodes rows straight from a quiescent database's payloads, through one reused buffer.
pub(super) struct RowReader<'a, M> {
    db: &'a Database<M>,
    buf: Vec<u8>,
}

impl<'a, M> RowReader<'a, M> {
    pub(super) fn new(db: &'a Database<M>) -> Self {
        RowReader {
            db,
            buf: Vec::new(),
        }
    }

    /// The bytes at `rid`, loaded into the buffer.
    pub(super) fn load(&mut self, table: TableId, rid: RecordId, bytes: usize) -> &[u8] {
        self.buf.resize(bytes, 0);
        // A slot of a growing table whose chunk was never needed holds no row (and is not
        // allocated by looking).
        match self.db.table(table).peek(rid) {
            Some(record) => record.payload.load(&mut self.buf),
            None => self.buf.fill(0),
        }
        &self.buf
    }

    /// The row at `rid`, vacant or not (WAREHOUSE, DISTRICT and CUSTOMER rows are never
    /// deleted; a vacant one decodes to zeros and fails the conditions that read it).
    pub(super) fn read<R: Row>(&mut self, table: TableId, rid: RecordId) -> R {
        R::decode(self.load(table, rid, R::BYTES))
    }

    /// The row at `rid`, or `None` when the slot is vacant.
    pub(super) fn row<R: Row>(&mut self, table: TableId, rid: RecordId) -> Option<R> {
        let bytes = self.load(table, rid, R::BYTES);
        (!is_vacant(bytes)).then(|| R::decode(bytes))
    }

    /// Whether a row sits at `rid` (one word read, for slots whose content does not matter).
    pub(super) fn present(&self, table: TableId, rid: RecordId) -> bool {
        self.db
            .table(table)
            .peek(rid)
            .is_some_and(|record| !record.payload.is_vacant())
    }
}

/// Conditions 1 and 8 for warehouse `w`.
fn check_warehouse<M>(
    db: &Database<M>,
    layout: &TpccLayout,
    payments: &Payments,
    w: u32,
    found: &mut Violations,
) {
    let mut rows = RowReader::new(db);
    let warehouse: Warehouse = rows.read(WAREHOUSE, layout.warehouse(w));
    let d_ytd: i64 = (1..=DISTRICTS_PER_WAREHOUSE as u8)
        .map(|d| rows.read::<District>(DISTRICT, layout.district(w, d)).d_ytd)
        .sum();
    if warehouse.w_ytd != d_ytd {
        found.record(|| {
            format!(
                "condition 1, warehouse {w}: W_YTD = {} but sum(D_YTD) = {d_ytd}",
                warehouse.w_ytd
            )
        });
    }
    let paid = payments.warehouse(w);
    if warehouse.w_ytd != paid {
        found.record(|| {
            format!(
                "condition 8, warehouse {w}: W_YTD = {} but sum(H_AMOUNT) = {paid}",
                warehouse.w_ytd
            )
        });
    }
}

/// A nullable field for a message: its value or "null".
fn null_or<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "null".to_owned(), |v| format!("= {v}"))
}

#[cfg(test)]
mod tests;
