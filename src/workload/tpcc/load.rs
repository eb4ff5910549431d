//! The TPC-C loader (clause 4.3.3.1): populates W warehouses with the spec's cardinalities and
//! random rules, on all cores, deterministically for a given seed.
//!
//! # Parallelism
//!
//! The load is cut into independent tasks, each writing a disjoint set of records:
//!
//! - one per district: its 3,000 customers, their 3,000 HISTORY rows, 3,000 orders with their
//!   order lines, and the 900 NEW-ORDER rows (the heaviest task: about 1.5 MB of random text);
//! - STOCK in ranges of [`STOCK_CHUNK`] items per warehouse, ITEM in ranges of [`ITEM_CHUNK`];
//! - one per warehouse for the WAREHOUSE row and its ten DISTRICT rows.
//!
//! `threads` scoped workers take tasks from a shared counter, heaviest first. Each task draws from
//! its own generator seeded from the load seed and the task's identity, never from the worker's,
//! so the database is the same byte for byte whatever the thread count or the interleaving.
//!
//! Rows go straight into payloads with [`Payload::store`](crate::storage::Payload::store): the
//! database is not yet shared with any transaction, so no protocol is involved and its metadata
//! stays at its default (the initial version every protocol starts from).

use super::customer_index::{CustomerName, CustomersByLastName};
use super::random::{
    A_C_LAST, NuRandConstants, a_string, data_with_original, fill_alphanumeric, last_name,
    n_string, nurand, uniform, zip,
};
use super::rows::{
    Customer, District, FixedStr, History, Item, NewOrder, Order, OrderLine, Row, Stock, Warehouse,
};
use super::schema::{
    CUSTOMER, CUSTOMERS_PER_DISTRICT, DISTRICT, DISTRICTS_PER_WAREHOUSE, FIRST_NEW_ORDER_ID,
    HISTORY, INITIAL_ORDERS_PER_DISTRICT, ITEM, ITEMS, MAX_ORDER_LINES, MIN_ORDER_LINES, NEW_ORDER,
    NEW_ORDER_INDEX, ORDER, ORDER_BY_CUSTOMER, ORDER_LINE, SENTINEL_CUSTOMER_ID, SENTINEL_ORDER_ID,
    STOCK, STOCK_PER_WAREHOUSE, TpccConfig, TpccLayout, WAREHOUSE, new_order_key,
    order_customer_key,
};
use crate::random::FastRng;
use crate::storage::{Database, END_SENTINEL_KEY, IndexId, RecordId, Table, TableId};
use serde::Serialize;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// STOCK rows per load task.
pub const STOCK_CHUNK: u64 = 25_000;
/// ITEM rows per load task.
pub const ITEM_CHUNK: u64 = 25_000;

/// W_YTD at load: 300,000.00.
pub const INITIAL_W_YTD: i64 = 30_000_000;
/// D_YTD at load: 30,000.00.
pub const INITIAL_D_YTD: i64 = 3_000_000;

/// How to load: the seed, the timestamp written into date fields, and the worker count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadParams {
    /// Seed for every random choice (the same seed loads the same bytes).
    pub seed: u64,
    /// "Current date and time" for C_SINCE, H_DATE, O_ENTRY_D and OL_DELIVERY_D, in seconds
    /// since the Unix epoch (a parameter, so loads are reproducible).
    pub now: u64,
    /// Loader threads (at least 1).
    pub threads: usize,
}

impl LoadParams {
    /// Loads with `seed`, the current time and one thread per available core.
    pub fn new(seed: u64) -> Self {
        LoadParams {
            seed,
            now: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs().max(1)),
            threads: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

/// What the load leaves besides the tables: what transactions will need to run against them.
#[derive(Debug, Clone)]
pub struct LoadedTpcc {
    /// The NURand constants the load used (C-Load); runs derive C-Run from these.
    pub c_load: NuRandConstants,
    /// CUSTOMER by (warehouse, district, last name).
    pub customers_by_last_name: CustomersByLastName,
}

/// Creates the database for `config` and loads it; the entry point the TPC-C workload calls.
pub fn create_and_load<M: Default + Send + Sync>(
    config: &TpccConfig,
    params: &LoadParams,
) -> (Database<M>, LoadedTpcc) {
    // The tables that receive inserts grow, as in a run.
    let db = Database::try_build_growable(
        &config.tables(),
        &config.indexes(),
        false,
        &TpccConfig::GROWING_TABLES,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load(&db, config, params);
    (db, loaded)
}

/// Populates `db` (created from `config.tables()` and `config.indexes()`, all records still zero,
/// indexes empty) per clause 4.3.3.1, and fills the two indexes with the loaded rows and their
/// sentinels (one per district in each, plus the end sentinel).
pub fn load<M: Sync>(db: &Database<M>, config: &TpccConfig, params: &LoadParams) -> LoadedTpcc {
    assert!(config.warehouses >= 1, "validated by config");
    assert!(params.threads >= 1, "at least one loader thread");
    assert_eq!(db.tables().len(), 9, "a TPC-C database");
    assert_eq!(db.indexes().len(), 2, "a TPC-C database with its indexes");
    let layout = config.layout();
    let c_load = NuRandConstants::for_load(&mut FastRng::new(params.seed));
    let tasks = tasks(config.warehouses);
    let next = AtomicUsize::new(0);
    let districts = (config.warehouses * DISTRICTS_PER_WAREHOUSE) as usize;
    let names: Mutex<Vec<Vec<CustomerName>>> = Mutex::new(vec![Vec::new(); districts]);
    let loader = Loader {
        db,
        layout,
        c_load,
        now: params.now,
    };
    let progress = load_progress(config.warehouses, tasks.len());
    std::thread::scope(|s| {
        for _ in 0..params.threads.min(tasks.len()) {
            s.spawn(|| {
                // Relaxed: the counter only hands out task numbers; the scope's join publishes
                // the rows written.
                while let Some(task) = tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let mut rng = FastRng::new(params.seed ^ task.seed_key());
                    if let Some((slot, customers)) = loader.run(*task, &mut rng) {
                        names.lock().expect("no loader panics")[slot] = customers;
                    }
                    if let Some(bar) = &progress {
                        bar.inc(1);
                    }
                }
            });
        }
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    retire_new_order_slots(db, layout);
    let names = names.into_inner().expect("no loader panics");
    LoadedTpcc {
        c_load,
        customers_by_last_name: CustomersByLastName::build(layout, names),
    }
}

/// Makes NEW-ORDER retire its deleted slots (`storage`, "Slots freed by deletes"): a NEW-ORDER
/// row lives in its order's slot, and an order id is never placed again, so once Delivery's
/// delete of an order's row has committed and its index entry is out, the slot stays empty for
/// good. The slots of orders 1..[`FIRST_NEW_ORDER_ID`] never get a row at all (those orders
/// were delivered before the run), so they are retired now; Delivery retires the others as it
/// delivers them (`Txn`'s index removal does), and a chunk whose orders were all delivered is
/// reused for the orders New-Order places next.
fn retire_new_order_slots<M>(db: &Database<M>, layout: TpccLayout) {
    db.retire_deleted_slots(NEW_ORDER);
    let table = db.table(NEW_ORDER);
    for w in 1..=layout.warehouses as u32 {
        for d in 1..=DISTRICTS_PER_WAREHOUSE as u8 {
            let first = layout.new_order(w, d, 1).expect("order 1 has a slot").0;
            table.retire_slots(first..first + FIRST_NEW_ORDER_ID - 1);
        }
    }
}

/// Warehouses from which loading shows progress: about a second of loading per warehouse on a
/// small machine, so smaller loads finish before a bar would help.
const PROGRESS_MIN_WAREHOUSES: u64 = 4;

/// A progress bar over the load's `tasks` on stderr for a load of `warehouses` warehouses large
/// enough to wait for; indicatif hides it when stderr is not a terminal.
fn load_progress(warehouses: u64, tasks: usize) -> Option<indicatif::ProgressBar> {
    if warehouses < PROGRESS_MIN_WAREHOUSES {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(tasks as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} {bar:30} {percent}%, ETA {eta}")
            .expect("the template is valid"),
    );
    bar.set_message(format!("loading TPC-C, {warehouses} warehouses"));
    Some(bar)
}

/// One unit of loading work (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Task {
    /// Customers, history, orders, order lines and new orders of district `(w, d)`.
    District { w: u32, d: u8 },
    /// STOCK rows of warehouse `w` for items `first..=last`.
    Stock { w: u32, first: u32, last: u32 },
    /// ITEM rows `first..=last`.
    Items { first: u32, last: u32 },
    /// The WAREHOUSE row of `w` and its DISTRICT rows.
    Warehouse { w: u32 },
}

impl Task {
    /// A distinct 64-bit value per task (mixed into the seed; SplitMix in `FastRng::new` makes
    /// nearby values unrelated streams).
    fn seed_key(self) -> u64 {
        let (kind, a, b) = match self {
            Task::District { w, d } => (1u64, u64::from(w), u64::from(d)),
            Task::Stock { w, first, .. } => (2, u64::from(w), u64::from(first)),
            Task::Items { first, .. } => (3, 0, u64::from(first)),
            Task::Warehouse { w } => (4, u64::from(w), 0),
        };
        ((kind << 60) | (a << 24) | b).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// Every task of a load of `warehouses` warehouses, heaviest first.
fn tasks(warehouses: u64) -> Vec<Task> {
    let ws = 1..=u32::try_from(warehouses).expect("warehouse count fits in u32");
    let mut tasks = Vec::new();
    for w in ws.clone() {
        for d in 1..=DISTRICTS_PER_WAREHOUSE as u8 {
            tasks.push(Task::District { w, d });
        }
    }
    for w in ws.clone() {
        for first in (1..=STOCK_PER_WAREHOUSE).step_by(STOCK_CHUNK as usize) {
            let last = (first + STOCK_CHUNK - 1).min(STOCK_PER_WAREHOUSE);
            tasks.push(Task::Stock {
                w,
                first: first as u32,
                last: last as u32,
            });
        }
    }
    for first in (1..=ITEMS).step_by(ITEM_CHUNK as usize) {
        let last = (first + ITEM_CHUNK - 1).min(ITEMS);
        tasks.push(Task::Items {
            first: first as u32,
            last: last as u32,
        });
    }
    tasks.extend(ws.map(|w| Task::Warehouse { w }));
    tasks
}

/// Shared, read-only state of one load.
struct Loader<'db, M> {
    db: &'db Database<M>,
    layout: TpccLayout,
    c_load: NuRandConstants,
    now: u64,
}

/// Encodes rows into one reused buffer and stores them into a table.
struct RowWriter<'t, M> {
    table: &'t Table<M>,
    buf: Vec<u8>,
}

impl<'t, M> RowWriter<'t, M> {
    fn new<R: Row>(db: &'t Database<M>, table: TableId) -> Self {
        let table = db.table(table);
        assert_eq!(table.payload_bytes(), R::BYTES, "{}", table.spec().name);
        RowWriter {
            table,
            buf: vec![0; R::BYTES],
        }
    }

    #[inline]
    fn put<R: Row>(&mut self, rid: RecordId, row: &R) {
        row.encode(&mut self.buf);
        self.table
            .get(rid)
            .expect("record id within the table")
            .payload
            .store(&self.buf);
    }
}

/// A random a-string of length in `[min, max]` as a field of width `N`.
fn text<const N: usize>(rng: &mut FastRng, min: usize, max: usize) -> FixedStr<N> {
    let mut buf = [0u8; N];
    FixedStr::new(a_string(rng, &mut buf, min, max))
}

/// Street 1, street 2, city, state, zip (4.3.3.1's address rule for every table with one).
struct Address {
    street_1: FixedStr<20>,
    street_2: FixedStr<20>,
    city: FixedStr<20>,
    state: FixedStr<2>,
    zip: FixedStr<9>,
}

impl Address {
    fn random(rng: &mut FastRng) -> Self {
        Address {
            street_1: text(rng, 10, 20),
            street_2: text(rng, 10, 20),
            city: text(rng, 10, 20),
            state: text(rng, 2, 2),
            zip: FixedStr::new(&zip(rng)),
        }
    }
}

impl<M: Sync> Loader<'_, M> {
    /// Runs one task; a district task returns its slot and its customers' names for the index.
    fn run(&self, task: Task, rng: &mut FastRng) -> Option<(usize, Vec<CustomerName>)> {
        match task {
            Task::District { w, d } => Some((
                self.layout.district_slot(w, d) as usize,
                self.load_district(w, d, rng),
            )),
            Task::Stock { w, first, last } => {
                self.load_stock(w, first, last, rng);
                None
            }
            Task::Items { first, last } => {
                self.load_items(first, last, rng);
                None
            }
            Task::Warehouse { w } => {
                self.load_warehouse(w, rng);
                None
            }
        }
    }

    fn load_items(&self, first: u32, last: u32, rng: &mut FastRng) {
        let mut out = RowWriter::new::<Item>(self.db, ITEM);
        let mut data = [0u8; 50];
        for i_id in first..=last {
            let item = Item {
                i_id,
                i_im_id: uniform(rng, 1, 10_000) as u32,
                i_name: text(rng, 14, 24),
                i_price: uniform(rng, 100, 10_000) as i32,
                i_data: FixedStr::new(data_with_original(rng, &mut data)),
            };
            out.put(self.layout.item(i_id), &item);
        }
    }

    fn load_warehouse(&self, w_id: u32, rng: &mut FastRng) {
        let a = Address::random(rng);
        let warehouse = Warehouse {
            w_id,
            w_name: text(rng, 6, 10),
            w_street_1: a.street_1,
            w_street_2: a.street_2,
            w_city: a.city,
            w_state: a.state,
            w_zip: a.zip,
            w_tax: uniform(rng, 0, 2000) as u16,
            w_ytd: INITIAL_W_YTD,
        };
        RowWriter::new::<Warehouse>(self.db, WAREHOUSE)
            .put(self.layout.warehouse(w_id), &warehouse);
        let mut out = RowWriter::new::<District>(self.db, DISTRICT);
        for d_id in 1..=DISTRICTS_PER_WAREHOUSE as u8 {
            let a = Address::random(rng);
            let district = District {
                d_id,
                d_w_id: w_id,
                d_name: text(rng, 6, 10),
                d_street_1: a.street_1,
                d_street_2: a.street_2,
                d_city: a.city,
                d_state: a.state,
                d_zip: a.zip,
                d_tax: uniform(rng, 0, 2000) as u16,
                d_ytd: INITIAL_D_YTD,
                d_next_o_id: INITIAL_ORDERS_PER_DISTRICT as u32 + 1,
            };
            out.put(self.layout.district(w_id, d_id), &district);
            self.put_sentinels(w_id, d_id);
        }
        if w_id == 1 {
            self.put_end_sentinels();
        }
    }

    /// The sentinel rows and entries of district `(w, d)` in both indexes: a present row after
    /// every real key of the district, so that inserts at a district's tail write a row of their
    /// own district, not the next district's oldest order (see `txn/index_ops.rs`).
    fn put_sentinels(&self, w: u32, d: u8) {
        let slot = self
            .layout
            .index_sentinel(Some(self.layout.district_slot(w, d)));
        let (no_key, order_key) = TpccLayout::sentinel_keys(w, d);
        RowWriter::new::<NewOrder>(self.db, NEW_ORDER).put(
            slot,
            &NewOrder {
                no_o_id: SENTINEL_ORDER_ID,
                no_d_id: d,
                no_w_id: w,
            },
        );
        RowWriter::new::<Order>(self.db, ORDER).put(
            slot,
            &Order {
                o_id: SENTINEL_ORDER_ID,
                o_d_id: d,
                o_w_id: w,
                o_c_id: SENTINEL_CUSTOMER_ID,
                ..Order::default()
            },
        );
        self.index_put(NEW_ORDER_INDEX, no_key, slot);
        self.index_put(ORDER_BY_CUSTOMER, order_key, slot);
    }

    /// Both indexes' end sentinels (key `u64::MAX`, a present row).
    fn put_end_sentinels(&self) {
        let slot = self.layout.index_sentinel(None);
        RowWriter::new::<NewOrder>(self.db, NEW_ORDER).put(
            slot,
            &NewOrder {
                no_o_id: SENTINEL_ORDER_ID,
                ..NewOrder::default()
            },
        );
        RowWriter::new::<Order>(self.db, ORDER).put(
            slot,
            &Order {
                o_id: SENTINEL_ORDER_ID,
                ..Order::default()
            },
        );
        self.index_put(NEW_ORDER_INDEX, END_SENTINEL_KEY, slot);
        self.index_put(ORDER_BY_CUSTOMER, END_SENTINEL_KEY, slot);
    }

    fn index_put(&self, index: IndexId, key: u64, rid: RecordId) {
        self.db
            .ordered_index(index)
            .map
            .insert(key, rid)
            .expect("loaded keys are unique");
    }

    fn load_stock(&self, w_id: u32, first: u32, last: u32, rng: &mut FastRng) {
        let mut out = RowWriter::new::<Stock>(self.db, STOCK);
        let mut data = [0u8; 50];
        for s_i_id in first..=last {
            let mut stock = Stock {
                s_i_id,
                s_w_id: w_id,
                s_quantity: uniform(rng, 10, 100) as i16,
                s_ytd: 0,
                s_order_cnt: 0,
                s_remote_cnt: 0,
                ..Stock::default()
            };
            for d in 1..=DISTRICTS_PER_WAREHOUSE as u8 {
                *stock.dist_info_mut(d) = text(rng, 24, 24);
            }
            stock.s_data = FixedStr::new(data_with_original(rng, &mut data));
            out.put(self.layout.stock(w_id, s_i_id), &stock);
        }
    }

    /// CUSTOMER, HISTORY, ORDER, ORDER-LINE and NEW-ORDER rows of one district.
    fn load_district(&self, w_id: u32, d_id: u8, rng: &mut FastRng) -> Vec<CustomerName> {
        let mut names = Vec::with_capacity(CUSTOMERS_PER_DISTRICT as usize);
        let mut customers = RowWriter::new::<Customer>(self.db, CUSTOMER);
        let mut history = RowWriter::new::<History>(self.db, HISTORY);
        for c_id in 1..=CUSTOMERS_PER_DISTRICT as u32 {
            // The first 1,000 customers take each last name once; the rest draw NURand(255).
            let number = if c_id <= 1000 {
                (c_id - 1) as u16
            } else {
                nurand(rng, A_C_LAST, self.c_load.c_last, 0, 999) as u16
            };
            let (last, len) = last_name(number);
            let a = Address::random(rng);
            let mut phone = [0u8; 16];
            n_string(rng, &mut phone, 16, 16);
            let customer = Customer {
                c_id,
                c_d_id: d_id,
                c_w_id: w_id,
                c_first: text(rng, 8, 16),
                c_middle: FixedStr::new(b"OE"),
                c_last: FixedStr::new(&last[..len]),
                c_street_1: a.street_1,
                c_street_2: a.street_2,
                c_city: a.city,
                c_state: a.state,
                c_zip: a.zip,
                c_phone: FixedStr::new(&phone),
                c_since: self.now,
                c_credit: FixedStr::new(if rng.below(10) == 0 { b"BC" } else { b"GC" }),
                c_credit_lim: 5_000_000,
                c_discount: uniform(rng, 0, 5000) as u16,
                c_balance: -1000,
                c_ytd_payment: 1000,
                c_payment_cnt: 1,
                c_delivery_cnt: 0,
                c_data: text(rng, 300, 500),
            };
            customers.put(self.layout.customer(w_id, d_id, c_id), &customer);
            names.push(CustomerName {
                last_name: number,
                first: customer.c_first,
                c_id,
            });
            let row = History {
                h_c_id: c_id,
                h_c_d_id: d_id,
                h_c_w_id: w_id,
                h_d_id: d_id,
                h_w_id: w_id,
                h_date: self.now,
                h_amount: 1000,
                h_data: text(rng, 12, 24),
            };
            let k = u64::from(c_id - 1);
            history.put(
                self.layout
                    .history(w_id, d_id, k)
                    .expect("initial history fits"),
                &row,
            );
        }
        self.load_orders(w_id, d_id, rng);
        names
    }

    /// 3,000 orders with O_C_ID a random permutation of the customers; the last 900 undelivered
    /// and in NEW-ORDER.
    fn load_orders(&self, w_id: u32, d_id: u8, rng: &mut FastRng) {
        let mut orders = RowWriter::new::<Order>(self.db, ORDER);
        let mut lines = RowWriter::new::<OrderLine>(self.db, ORDER_LINE);
        let mut new_orders = RowWriter::new::<NewOrder>(self.db, NEW_ORDER);
        let mut customer_of: Vec<u32> = (1..=CUSTOMERS_PER_DISTRICT as u32).collect();
        for i in (1..customer_of.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            customer_of.swap(i, j);
        }
        for (o_id, &o_c_id) in (1u32..).zip(&customer_of) {
            let delivered = u64::from(o_id) < FIRST_NEW_ORDER_ID;
            let o_ol_cnt = uniform(rng, MIN_ORDER_LINES, MAX_ORDER_LINES) as u8;
            let order = Order {
                o_id,
                o_d_id: d_id,
                o_w_id: w_id,
                o_c_id,
                o_entry_d: self.now,
                o_carrier_id: delivered.then(|| uniform(rng, 1, 10) as u8),
                o_ol_cnt,
                o_all_local: 1,
            };
            let order_rid = self
                .layout
                .order(w_id, d_id, o_id)
                .expect("initial orders fit");
            orders.put(order_rid, &order);
            self.index_put(
                ORDER_BY_CUSTOMER,
                order_customer_key(w_id, d_id, o_c_id, o_id),
                order_rid,
            );
            for ol_number in 1..=o_ol_cnt {
                let mut dist_info = [0u8; 24];
                fill_alphanumeric(rng, &mut dist_info);
                let line = OrderLine {
                    ol_o_id: o_id,
                    ol_d_id: d_id,
                    ol_w_id: w_id,
                    ol_number,
                    ol_i_id: uniform(rng, 1, ITEMS) as u32,
                    ol_supply_w_id: w_id,
                    ol_delivery_d: delivered.then_some(self.now),
                    ol_quantity: 5,
                    ol_amount: if delivered {
                        0
                    } else {
                        uniform(rng, 1, 999_999) as i32
                    },
                    ol_dist_info: FixedStr::new(&dist_info),
                };
                lines.put(self.layout.order_line(order_rid, ol_number), &line);
            }
            if !delivered {
                let new_order = NewOrder {
                    no_o_id: o_id,
                    no_d_id: d_id,
                    no_w_id: w_id,
                };
                new_orders.put(order_rid, &new_order);
                self.index_put(NEW_ORDER_INDEX, new_order_key(w_id, d_id, o_id), order_rid);
            }
        }
    }
}

/// Memory the loaded database costs (records of every table, plus the last-name index).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TpccMemory {
    /// Every table's records (metadata, payload, padding), spare slots included.
    pub table_bytes: usize,
    /// The part of `table_bytes` that is ITEM, shared by all warehouses.
    pub item_bytes: usize,
    /// The part of `table_bytes` that is spare slots for inserts (ORDER, NEW-ORDER, ORDER-LINE,
    /// HISTORY beyond the initial rows).
    pub spare_bytes: usize,
    /// The CUSTOMER-by-last-name index.
    pub index_bytes: usize,
    /// `(table_bytes - item_bytes + index_bytes) / warehouses`: what one more warehouse costs.
    pub bytes_per_warehouse: usize,
    /// `bytes_per_warehouse` without the spare slots: the loaded rows alone.
    pub loaded_bytes_per_warehouse: usize,
}

/// What `db` (loaded with `config`) costs in memory, in total and per warehouse.
pub fn memory<M>(db: &Database<M>, config: &TpccConfig, loaded: &LoadedTpcc) -> TpccMemory {
    let table_bytes = db.memory_bytes();
    let stride = |id: TableId| db.table(id).stride();
    let item_bytes = ITEMS as usize * stride(ITEM);
    let spare_orders =
        (config.warehouses * DISTRICTS_PER_WAREHOUSE * config.spare_orders_per_district) as usize;
    let spare_bytes = spare_orders
        * (stride(ORDER)
            + stride(NEW_ORDER)
            + stride(HISTORY)
            + MAX_ORDER_LINES as usize * stride(ORDER_LINE));
    let index_bytes = loaded.customers_by_last_name.memory_bytes();
    let w = config.warehouses as usize;
    let bytes_per_warehouse = (table_bytes - item_bytes + index_bytes) / w;
    TpccMemory {
        table_bytes,
        item_bytes,
        spare_bytes,
        index_bytes,
        bytes_per_warehouse,
        loaded_bytes_per_warehouse: bytes_per_warehouse - spare_bytes / w,
    }
}
