//! TPC-C's tables, cardinalities (clauses 1.2 and 4.3.3.1) and where each row lives.
//!
//! Table ids are constants ([`WAREHOUSE`] .. [`STOCK`]), in the order [`TpccConfig::tables`] lists
//! them. Every table is preallocated (storage never grows during a run), so the four tables that
//! receive inserts during a run (ORDER, NEW-ORDER, ORDER-LINE from New-Order; HISTORY from Payment)
//! get spare slots: [`TpccConfig::spare_orders_per_district`].
//!
//! # Record ids
//!
//! Keys are 1-based in the spec and dense, so most tables need no index at all: a key maps to a
//! record id by arithmetic ([`TpccLayout`]), like YCSB's array index.
//!
//! ```text
//! WAREHOUSE   w                  -> w-1
//! DISTRICT    (w, d)             -> (w-1)*10 + d-1                       "district slot"
//! CUSTOMER    (w, d, c)          -> slot*3000 + c-1
//! STOCK       (w, i)             -> (w-1)*100000 + i-1
//! ITEM        i                  -> i-1
//! ORDER       (w, d, o)          -> slot*orders_per_district + o-1
//! NEW-ORDER   (w, d, o)          -> same as ORDER (a NEW-ORDER row exists only for an order)
//! ORDER-LINE  (w, d, o, n)       -> order_rid*15 + n-1
//! HISTORY     (w, d, k)          -> slot*orders_per_district + k   (k-th history row of the district)
//! ```
//!
//! ORDER-LINE reserves 15 slots per order (O_OL_CNT is at most 15; 10 on average), trading a third
//! of that table's memory for a row address that needs no allocator and no index. A slot whose
//! first 8 bytes (key fields) are all zero is vacant ([`crate::storage::is_vacant`]; spec ids
//! start at 1); until the engine has inserts and deletes, that is how a vacant ORDER, NEW-ORDER,
//! ORDER-LINE or HISTORY slot is recognised.

use super::mix::{StockLevelIsolation, TpccMix, WarehouseBinding};
use super::rows::{
    Customer, District, History, Item, NewOrder, Order, OrderLine, Row, Stock, Warehouse,
};
use crate::storage::{IndexId, IndexSpec, RecordId, TableId, TableSpec};
use serde::Serialize;

/// WAREHOUSE's table id.
pub const WAREHOUSE: TableId = TableId(0);
/// DISTRICT's table id.
pub const DISTRICT: TableId = TableId(1);
/// CUSTOMER's table id.
pub const CUSTOMER: TableId = TableId(2);
/// HISTORY's table id.
pub const HISTORY: TableId = TableId(3);
/// NEW-ORDER's table id.
pub const NEW_ORDER: TableId = TableId(4);
/// ORDER's table id.
pub const ORDER: TableId = TableId(5);
/// ORDER-LINE's table id.
pub const ORDER_LINE: TableId = TableId(6);
/// ITEM's table id.
pub const ITEM: TableId = TableId(7);
/// STOCK's table id.
pub const STOCK: TableId = TableId(8);

/// NEW-ORDER by (w, d, o) ([`new_order_key`]): Delivery's oldest undelivered order of a district.
pub const NEW_ORDER_INDEX: IndexId = IndexId(0);
/// ORDER by (w, d, c, o) ([`order_customer_key`]): Order-Status's latest order of a customer.
pub const ORDER_BY_CUSTOMER: IndexId = IndexId(1);

/// Order id of the per-district sentinel entries of both indexes (above any real order id).
pub const SENTINEL_ORDER_ID: u32 = u32::MAX;
/// Customer id of ORDER_BY_CUSTOMER's per-district sentinel (above any real customer id).
pub const SENTINEL_CUSTOMER_ID: u32 = 4095;

/// [`NEW_ORDER_INDEX`]'s key of order `o` of district `(w, d)`.
#[inline]
pub fn new_order_key(w: u32, d: u8, o: u32) -> u64 {
    (u64::from(w) << 36) | (u64::from(d) << 32) | u64::from(o)
}

/// [`ORDER_BY_CUSTOMER`]'s key of order `o` of customer `(w, d, c)`.
#[inline]
pub fn order_customer_key(w: u32, d: u8, c: u32, o: u32) -> u64 {
    debug_assert!(w < 1 << 16 && c < 1 << 12);
    (u64::from(w) << 48) | (u64::from(d) << 44) | (u64::from(c) << 32) | u64::from(o)
}

/// Rows of ITEM (fixed, independent of the warehouse count).
pub const ITEMS: u64 = 100_000;
/// DISTRICT rows per warehouse.
pub const DISTRICTS_PER_WAREHOUSE: u64 = 10;
/// CUSTOMER rows per district.
pub const CUSTOMERS_PER_DISTRICT: u64 = 3_000;
/// STOCK rows per warehouse (one per item).
pub const STOCK_PER_WAREHOUSE: u64 = ITEMS;
/// ORDER rows per district at load time (and HISTORY rows: one per customer).
pub const INITIAL_ORDERS_PER_DISTRICT: u64 = 3_000;
/// The last this many orders of each district are undelivered at load time: NEW-ORDER rows,
/// O_CARRIER_ID null.
pub const INITIAL_NEW_ORDERS_PER_DISTRICT: u64 = 900;
/// First undelivered order id at load time (2101).
pub const FIRST_NEW_ORDER_ID: u64 =
    INITIAL_ORDERS_PER_DISTRICT - INITIAL_NEW_ORDERS_PER_DISTRICT + 1;
/// Largest O_OL_CNT, hence ORDER-LINE slots per order.
pub const MAX_ORDER_LINES: u64 = 15;
/// Smallest O_OL_CNT.
pub const MIN_ORDER_LINES: u64 = 5;

/// Default spare orders per district of [`TpccConfig::default`]; the command line sizes them
/// from the run length instead ([`spare_orders_for`]).
pub const DEFAULT_SPARE_ORDERS_PER_DISTRICT: u64 = 10_000;

/// Largest warehouse count accepted (`--warehouses`).
pub const MAX_WAREHOUSES: u64 = 1024;

/// New-Orders per second, all warehouses together, that [`spare_orders_for`] provisions for.
pub const PROVISIONED_NEW_ORDERS_PER_SECOND: u64 = 500_000;

/// Fewest spare orders per district [`spare_orders_for`] returns.
pub const MIN_SPARE_ORDERS_PER_DISTRICT: u64 = 2_000;

/// Spare orders per district for a run of `seconds` (measured plus warm-up) whose New-Orders go
/// to `warehouses` warehouses (0 is treated as 1): all of them with random binding, the first
/// `min(W, threads)` with home binding (worker `i` uses warehouse `i % W + 1`).
///
/// Rule: New-Orders spread uniformly over the `10 * W` districts (each picks its district
/// uniformly, clause 2.4.1.2), so at `N` New-Orders per second in total a district needs
/// `N * seconds / (10 * W)` slots. With `N` = [`PROVISIONED_NEW_ORDERS_PER_SECOND`] (500,000:
/// TPC-C NP runs about 190,000 New-Orders per second on two cores of the reference VM, so this
/// leaves room for several times more cores) that is `ceil(seconds * 50,000 / W)`, and never fewer than [`MIN_SPARE_ORDERS_PER_DISTRICT`]
/// (2,000). A run committing faster exhausts a district's slots before it ends; the workload
/// warns when that happens.
///
/// Memory: each spare order costs one ORDER, NEW-ORDER and HISTORY slot and 15 ORDER-LINE slots:
/// 18 records of at least 64 bytes (ORDER-LINE's 55-byte payload plus metadata; protocols with
/// more than 8 bytes of record metadata take 128), about 1.15 KB. Per warehouse that is
/// `10 * spare * 1.15 KB`; in total `10 * W * spare * 1.15 KB`, about `seconds * 575 MB` whatever
/// `W` is (2.5 s: 1.4 GB), or the 2,000-order floor's 23 MB per warehouse when that is larger.
pub fn spare_orders_for(seconds: f64, warehouses: u64) -> u64 {
    let per_district_per_second =
        PROVISIONED_NEW_ORDERS_PER_SECOND as f64 / DISTRICTS_PER_WAREHOUSE as f64;
    let spare = (seconds * per_district_per_second / warehouses.max(1) as f64).ceil();
    // `as` saturates: NaN and negative durations give 0, huge ones u64::MAX.
    (spare as u64).max(MIN_SPARE_ORDERS_PER_DISTRICT)
}

/// TPC-C parameters, validated by `config` before anything is allocated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TpccConfig {
    /// Number of warehouses W (1..=[`MAX_WAREHOUSES`]).
    pub warehouses: u64,
    /// Order slots each district keeps free for New-Order beyond its 3,000 initial orders; also
    /// sizes NEW-ORDER, ORDER-LINE (15 slots per order) and HISTORY (Payment inserts one row per
    /// transaction and runs about as often as New-Order: 43% vs 45% of the mix).
    ///
    /// The command line defaults it from the run length ([`spare_orders_for`], which states the
    /// rule and its memory cost). [`TpccConfig::default`]'s 10,000 cost about
    /// 10,000 * 10 * (15 + 3) * 64 bytes = 115 MB per warehouse (mostly ORDER-LINE).
    pub spare_orders_per_district: u64,
    /// Percent of each transaction type.
    pub mix: TpccMix,
    /// Whether Stock-Level runs serializable or read committed.
    pub stock_level: StockLevelIsolation,
    /// How a worker picks its home warehouse.
    pub binding: WarehouseBinding,
}

impl Default for TpccConfig {
    /// One warehouse, [`DEFAULT_SPARE_ORDERS_PER_DISTRICT`], the full mix, serializable
    /// Stock-Level, workers bound to home warehouses.
    fn default() -> Self {
        TpccConfig {
            warehouses: 1,
            spare_orders_per_district: DEFAULT_SPARE_ORDERS_PER_DISTRICT,
            mix: TpccMix::FULL,
            stock_level: StockLevelIsolation::Serializable,
            binding: WarehouseBinding::Home,
        }
    }
}

impl TpccConfig {
    /// The tables that receive inserts and grow as they do (`storage`, "Tables that grow"):
    /// their spare slots cost memory only once used.
    pub const GROWING_TABLES: [TableId; 4] = [HISTORY, NEW_ORDER, ORDER, ORDER_LINE];

    /// The record-id arithmetic for this configuration.
    pub fn layout(&self) -> TpccLayout {
        TpccLayout {
            warehouses: self.warehouses,
            orders_per_district: INITIAL_ORDERS_PER_DISTRICT + self.spare_orders_per_district,
        }
    }

    /// The nine tables, in table-id order, with their record counts (loaded rows plus spare
    /// slots) and payload sizes.
    pub fn tables(&self) -> Vec<TableSpec> {
        let layout = self.layout();
        let w = self.warehouses;
        let districts = w * DISTRICTS_PER_WAREHOUSE;
        let order_slots = districts * layout.orders_per_district;
        let spec = |name: &str, records: u64, payload_bytes: usize| TableSpec {
            name: name.into(),
            records,
            payload_bytes,
        };
        vec![
            spec("warehouse", w, Warehouse::BYTES),
            spec("district", districts, District::BYTES),
            spec(
                "customer",
                districts * CUSTOMERS_PER_DISTRICT,
                Customer::BYTES,
            ),
            spec("history", order_slots, History::BYTES),
            // ORDER and NEW-ORDER also hold their indexes' sentinel rows: one per district,
            // then the end sentinel (TpccLayout::index_sentinel).
            spec("new_order", order_slots + districts + 1, NewOrder::BYTES),
            spec("order", order_slots + districts + 1, Order::BYTES),
            spec(
                "order_line",
                order_slots * MAX_ORDER_LINES,
                OrderLine::BYTES,
            ),
            spec("item", ITEMS, Item::BYTES),
            spec("stock", w * STOCK_PER_WAREHOUSE, Stock::BYTES),
        ]
    }

    /// The two ordered indexes, in [`IndexId`] order ([`NEW_ORDER_INDEX`], [`ORDER_BY_CUSTOMER`]).
    pub fn indexes(&self) -> Vec<IndexSpec> {
        vec![
            IndexSpec {
                name: "new_order_by_district".into(),
                table: NEW_ORDER,
                key_of: |row| {
                    let r = NewOrder::decode(row);
                    new_order_key(r.no_w_id, r.no_d_id, r.no_o_id)
                },
            },
            IndexSpec {
                name: "order_by_customer".into(),
                table: ORDER,
                key_of: |row| {
                    let r = Order::decode(row);
                    order_customer_key(r.o_w_id, r.o_d_id, r.o_c_id, r.o_id)
                },
            },
        ]
    }

    /// Rows present right after loading, per table id: the spec's initial cardinalities
    /// (clause 4.3.3.1; ORDER-LINE varies with O_OL_CNT, about 300,000 per warehouse, so it is
    /// `None`).
    pub fn initial_rows(&self) -> [Option<u64>; 9] {
        let w = self.warehouses;
        let districts = w * DISTRICTS_PER_WAREHOUSE;
        [
            Some(w),
            Some(districts),
            Some(districts * CUSTOMERS_PER_DISTRICT),
            Some(districts * CUSTOMERS_PER_DISTRICT),
            Some(districts * INITIAL_NEW_ORDERS_PER_DISTRICT),
            Some(districts * INITIAL_ORDERS_PER_DISTRICT),
            None,
            Some(ITEMS),
            Some(w * STOCK_PER_WAREHOUSE),
        ]
    }
}

/// Key -> record id arithmetic (module docs). Ids are the spec's, 1-based; functions panic on an
/// id outside the loaded range (a workload bug, never user input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpccLayout {
    /// Number of warehouses.
    pub warehouses: u64,
    /// ORDER slots per district (initial plus spare).
    pub orders_per_district: u64,
}

impl TpccLayout {
    /// WAREHOUSE row of warehouse `w`.
    #[inline]
    pub fn warehouse(&self, w: u32) -> RecordId {
        let w = u64::from(w);
        assert!((1..=self.warehouses).contains(&w), "warehouse id {w}");
        RecordId(w - 1)
    }

    /// Index of district `(w, d)` among all districts (0-based).
    #[inline]
    pub fn district_slot(&self, w: u32, d: u8) -> u64 {
        let d = u64::from(d);
        assert!(
            (1..=DISTRICTS_PER_WAREHOUSE).contains(&d),
            "district id {d}"
        );
        self.warehouse(w).0 * DISTRICTS_PER_WAREHOUSE + d - 1
    }

    /// DISTRICT row of `(w, d)`.
    #[inline]
    pub fn district(&self, w: u32, d: u8) -> RecordId {
        RecordId(self.district_slot(w, d))
    }

    /// CUSTOMER row of `(w, d, c)`.
    #[inline]
    pub fn customer(&self, w: u32, d: u8, c: u32) -> RecordId {
        let c = u64::from(c);
        assert!((1..=CUSTOMERS_PER_DISTRICT).contains(&c), "customer id {c}");
        RecordId(self.district_slot(w, d) * CUSTOMERS_PER_DISTRICT + c - 1)
    }

    /// ITEM row of item `i`.
    #[inline]
    pub fn item(&self, i: u32) -> RecordId {
        let i = u64::from(i);
        assert!((1..=ITEMS).contains(&i), "item id {i}");
        RecordId(i - 1)
    }

    /// Whether `i` names an item (New-Order's 1% of unused item ids do not).
    #[inline]
    pub fn is_item(i: u32) -> bool {
        (1..=ITEMS).contains(&u64::from(i))
    }

    /// STOCK row of `(w, i)`.
    #[inline]
    pub fn stock(&self, w: u32, i: u32) -> RecordId {
        RecordId(self.warehouse(w).0 * STOCK_PER_WAREHOUSE + self.item(i).0)
    }

    /// ORDER row of `(w, d, o)`, or `None` when order `o` is past the district's slots (the
    /// district ran out of spare orders).
    #[inline]
    pub fn order(&self, w: u32, d: u8, o: u32) -> Option<RecordId> {
        let o = u64::from(o);
        assert!(o >= 1, "order id 0");
        (o <= self.orders_per_district)
            .then(|| RecordId(self.district_slot(w, d) * self.orders_per_district + o - 1))
    }

    /// NEW-ORDER row of `(w, d, o)`: the same slot as the order.
    #[inline]
    pub fn new_order(&self, w: u32, d: u8, o: u32) -> Option<RecordId> {
        self.order(w, d, o)
    }

    /// ORDER-LINE row `n` (1..=15) of the order at `order` (an ORDER record id).
    #[inline]
    pub fn order_line(&self, order: RecordId, n: u8) -> RecordId {
        let n = u64::from(n);
        assert!((1..=MAX_ORDER_LINES).contains(&n), "order line number {n}");
        RecordId(order.0 * MAX_ORDER_LINES + n - 1)
    }

    /// Slot of the index sentinels of the district with index `district_slot` in ORDER and
    /// NEW-ORDER (after every district's order slots), or of the end sentinel (key
    /// [`END_SENTINEL_KEY`](crate::storage::END_SENTINEL_KEY)) for `None`.
    #[inline]
    pub fn index_sentinel(&self, district_slot: Option<u64>) -> RecordId {
        let districts = self.warehouses * DISTRICTS_PER_WAREHOUSE;
        let order_slots = districts * self.orders_per_district;
        RecordId(order_slots + district_slot.unwrap_or(districts))
    }

    /// The sentinel keys of district `(w, d)` in [`NEW_ORDER_INDEX`] and [`ORDER_BY_CUSTOMER`].
    #[inline]
    pub fn sentinel_keys(w: u32, d: u8) -> (u64, u64) {
        (
            new_order_key(w, d, SENTINEL_ORDER_ID),
            order_customer_key(w, d, SENTINEL_CUSTOMER_ID, SENTINEL_ORDER_ID),
        )
    }

    /// HISTORY row `k` (0-based) of district `(w, d)`, or `None` past the district's slots.
    #[inline]
    pub fn history(&self, w: u32, d: u8, k: u64) -> Option<RecordId> {
        (k < self.orders_per_district)
            .then(|| RecordId(self.district_slot(w, d) * self.orders_per_district + k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(w: u64) -> TpccConfig {
        TpccConfig {
            warehouses: w,
            spare_orders_per_district: 100,
            ..Default::default()
        }
    }

    #[test]
    fn tables_are_listed_in_id_order_with_spec_cardinalities() {
        let c = config(3);
        let t = c.tables();
        let names: Vec<&str> = t.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "warehouse",
                "district",
                "customer",
                "history",
                "new_order",
                "order",
                "order_line",
                "item",
                "stock"
            ]
        );
        assert_eq!(t[WAREHOUSE.0 as usize].records, 3);
        assert_eq!(t[DISTRICT.0 as usize].records, 30);
        assert_eq!(t[CUSTOMER.0 as usize].records, 90_000);
        assert_eq!(t[ORDER.0 as usize].records, 30 * 3_100 + 31);
        assert_eq!(t[NEW_ORDER.0 as usize].records, 30 * 3_100 + 31);
        assert_eq!(t[HISTORY.0 as usize].records, 30 * 3_100);
        assert_eq!(t[ORDER_LINE.0 as usize].records, 30 * 3_100 * 15);
        assert_eq!(t[ITEM.0 as usize].records, 100_000);
        assert_eq!(t[STOCK.0 as usize].records, 300_000);
        assert_eq!(t[ORDER_LINE.0 as usize].payload_bytes, OrderLine::BYTES);
        assert_eq!(FIRST_NEW_ORDER_ID, 2101);
    }

    #[test]
    fn fixed_keys_map_densely_and_bijectively() {
        let c = config(2);
        let l = c.layout();
        let t = c.tables();
        let mut seen = std::collections::HashSet::new();
        for w in 1..=2 {
            assert_eq!(l.warehouse(w), RecordId(u64::from(w) - 1));
            for d in 1..=10 {
                assert!(seen.insert(l.district(w, d)));
                for cid in [1, 2, 1500, 3000] {
                    let rid = l.customer(w, d, cid);
                    assert!(rid.0 < t[CUSTOMER.0 as usize].records);
                }
            }
        }
        assert_eq!(seen.len(), 20);
        assert_eq!(l.customer(1, 1, 1), RecordId(0));
        assert_eq!(l.customer(2, 10, 3000), RecordId(59_999));
        assert_eq!(l.stock(2, 100_000), RecordId(199_999));
        assert_eq!(l.stock(2, 1), RecordId(100_000));
        assert_eq!(l.item(1), RecordId(0));
        assert!(!TpccLayout::is_item(0) && !TpccLayout::is_item(100_001));
    }

    #[test]
    fn order_slots_fill_each_district_and_stop_at_capacity() {
        let c = config(2);
        let l = c.layout();
        let t = c.tables();
        assert_eq!(l.order(1, 1, 1), Some(RecordId(0)));
        assert_eq!(l.order(1, 2, 1), Some(RecordId(3_100)));
        let last = l.order(2, 10, 3_100).unwrap();
        assert_eq!(
            last.0,
            t[ORDER.0 as usize].records - 1 - 21,
            "then 20 + 1 sentinels"
        );
        assert_eq!(l.index_sentinel(None).0, t[ORDER.0 as usize].records - 1);
        assert_eq!(l.index_sentinel(Some(0)).0, last.0 + 1);
        assert_eq!(l.order(2, 10, 3_101), None);
        assert_eq!(l.new_order(1, 3, 7), l.order(1, 3, 7));
        assert_eq!(
            l.order_line(last, 15).0,
            t[ORDER_LINE.0 as usize].records - 1
        );
        assert_eq!(l.order_line(RecordId(1), 1), RecordId(15));
        assert_eq!(l.history(1, 1, 0), Some(RecordId(0)));
        assert_eq!(
            l.history(2, 10, 3_099).unwrap().0,
            t[HISTORY.0 as usize].records - 1
        );
        assert_eq!(l.history(2, 10, 3_100), None);
    }

    #[test]
    fn spare_orders_follow_the_run_length() {
        // 2.5 s on one warehouse: 500,000/s * 2.5 s over 10 districts.
        assert_eq!(spare_orders_for(2.5, 1), 125_000);
        assert_eq!(spare_orders_for(2.5, 4), 31_250);
        assert_eq!(spare_orders_for(1.0, 3), 16_667, "rounds up");
        assert_eq!(spare_orders_for(0.01, 1), 2_000, "floor");
        assert_eq!(spare_orders_for(2.5, 1024), 2_000, "floor");
        assert_eq!(spare_orders_for(f64::NAN, 1), 2_000);
        assert_eq!(spare_orders_for(1.0, 0), spare_orders_for(1.0, 1));
        let d = TpccConfig::default();
        assert_eq!(
            (d.warehouses, d.mix, d.stock_level, d.binding),
            (
                1,
                TpccMix::FULL,
                StockLevelIsolation::Serializable,
                WarehouseBinding::Home
            )
        );
    }

    #[test]
    #[should_panic(expected = "district id 11")]
    fn out_of_range_ids_are_bugs() {
        config(1).layout().district(1, 11);
    }
}
