//! Making a recovered TPC-C database ready to run transactions ([`Tpcc`]'s
//! [`Workload::rebuild_after_recovery`](crate::workload::Workload::rebuild_after_recovery)).
//!
//! Recovery (`crate::log::recover`) loads the database as the logged run did, then replays the
//! log's rows onto it: every table is as of the durable frontier, but nothing besides the rows
//! is: the two ordered indexes hold the load's entries, NEW-ORDER retires only the load's slots,
//! and the HISTORY counters point at the load's end. Everything else TPC-C's transactions use
//! is found by arithmetic from the rows themselves (D_NEXT_O_ID places an order, its lines and
//! its NEW-ORDER row; CUSTOMER by last name never changes and the load built it). So, per
//! district, from its recovered rows:
//!
//! 1. Both indexes lose their vacant entries in the district's key range: entries whose row is
//!    deleted (delivered orders in NEW-ORDER) or does not carry the entry's key (the index's
//!    own definition of a present entry, `txn/index_ops.rs`). A live run keeps such entries
//!    for a while (aborted inserts, removals after commit); a rebuilt index has none.
//! 2. Every present row gets its entry: ORDER rows `1..D_NEXT_O_ID` in ORDER by customer, and
//!    the NEW-ORDER rows of orders `2101..D_NEXT_O_ID` in NEW-ORDER (the orders below 2101 were
//!    delivered before the load, and so never have one).
//! 3. NEW-ORDER retires the slots of the orders delivered since the load (`2101..D_NEXT_O_ID`
//!    with no NEW-ORDER row), as Delivery's index removal does in a live run, so that their
//!    chunks are reused as they would have been (`storage/retire.rs`). The load retired the
//!    slots below 2101, so each slot is retired once.
//! 4. The district's next HISTORY slot: one past the highest one holding a row, and never
//!    below the load's 3,000. A live run's counter may be further on (a Payment attempt that
//!    aborted keeps its slot vacant); the slots between are vacant and never handed out again
//!    in the live run, so handing them out now changes nothing anyone saw.
//!
//! Rows are trusted as far as their ids: a row whose ids are not those of its slot (a log of
//! another configuration would have been refused; a damaged one is what `txbench recover`'s
//! consistency conditions report) gets no entry, and D_NEXT_O_ID past the district's slots
//! stops at its last slot. Nothing here panics on what the log held.
//!
//! The districts are rebuilt in parallel (the index and the retirement counters are
//! concurrent structures); nothing runs transactions meanwhile.

use super::consistency::{RowReader, per_district};
use super::rows::{District, NewOrder, Order};
use super::schema::{
    CUSTOMERS_PER_DISTRICT, DISTRICT, DISTRICTS_PER_WAREHOUSE, FIRST_NEW_ORDER_ID, HISTORY,
    INITIAL_ORDERS_PER_DISTRICT, NEW_ORDER, NEW_ORDER_INDEX, ORDER, ORDER_BY_CUSTOMER,
    new_order_key, order_customer_key,
};
use super::workload::Tpcc;
use crate::storage::{Database, IndexId, RecordId};
use crate::workload::Rebuilt;
use std::ops::RangeInclusive;

impl Tpcc {
    /// Rebuilds `db`'s indexes, NEW-ORDER's retired slots and the HISTORY counters from its
    /// recovered rows (module docs). Call once, on a database loaded by this workload and
    /// recovered, before any transaction.
    pub(super) fn rebuild(&self, db: &Database<impl Sync>) -> Rebuilt {
        let warehouses = u32::try_from(self.config.warehouses).expect("validated warehouse count");
        let districts: Vec<(u32, u8)> = (1..=warehouses)
            .flat_map(|w| (1..=DISTRICTS_PER_WAREHOUSE as u8).map(move |d| (w, d)))
            .collect();
        let done = per_district(&districts, |w, d| self.rebuild_district(db, w, d));
        done.into_iter().fold(Rebuilt::default(), |a, b| Rebuilt {
            entries_added: a.entries_added + b.entries_added,
            entries_removed: a.entries_removed + b.entries_removed,
            slots_retired: a.slots_retired + b.slots_retired,
            counters_set: a.counters_set + b.counters_set,
        })
    }

    /// Steps 1 to 4 of the module docs for district `(w, d)`.
    fn rebuild_district<M: Sync>(&self, db: &Database<M>, w: u32, d: u8) -> Rebuilt {
        let layout = &self.layout;
        let mut rows = RowReader::new(db);
        let mut done = Rebuilt::default();
        let district: District = rows.read(DISTRICT, layout.district(w, d));
        // Order ids placed so far: 1..next (clamped to the district's slots).
        let slots = u32::try_from(layout.orders_per_district).unwrap_or(u32::MAX);
        let next = district.d_next_o_id.clamp(1, slots.saturating_add(1));

        // 1. Vacant entries out.
        let new_orders = new_order_key(w, d, 0)..=new_order_key(w, d, u32::MAX);
        let by_customer = order_customer_key(w, d, 0, 0)..=order_customer_key(w, d, 4095, u32::MAX);
        done.entries_removed += purge_vacant(db, &mut rows, NEW_ORDER_INDEX, new_orders);
        done.entries_removed += purge_vacant(db, &mut rows, ORDER_BY_CUSTOMER, by_customer);

        // 2. and 3. Present rows' entries in; delivered orders' NEW-ORDER slots retired.
        let new_order_table = db.table(NEW_ORDER);
        for o in 1..next {
            let Some(rid) = layout.order(w, d, o) else {
                break;
            };
            let order = rows.row::<Order>(ORDER, rid).filter(|r| {
                (r.o_w_id, r.o_d_id, r.o_id) == (w, d, o)
                    && (1..=CUSTOMERS_PER_DISTRICT as u32).contains(&r.o_c_id)
            });
            if let Some(order) = order {
                let key = order_customer_key(w, d, order.o_c_id, o);
                done.entries_added += u64::from(enter(db, ORDER_BY_CUSTOMER, key, rid));
            }
            if u64::from(o) < FIRST_NEW_ORDER_ID {
                continue;
            }
            let new_order = rows
                .row::<NewOrder>(NEW_ORDER, rid)
                .filter(|r| (r.no_w_id, r.no_d_id, r.no_o_id) == (w, d, o));
            if new_order.is_some() {
                let key = new_order_key(w, d, o);
                done.entries_added += u64::from(enter(db, NEW_ORDER_INDEX, key, rid));
            } else {
                new_order_table.retire_slot(rid);
                done.slots_retired += 1;
            }
        }

        // 4. The next HISTORY slot.
        let mut next_history = INITIAL_ORDERS_PER_DISTRICT;
        let mut k = INITIAL_ORDERS_PER_DISTRICT;
        while let Some(rid) = layout.history(w, d, k) {
            if rows.present(HISTORY, rid) {
                next_history = k + 1;
            }
            k += 1;
        }
        self.set_next_history(w, d, next_history);
        done.counters_set += 1;
        done
    }
}

/// Takes out of index `id` every entry with a key in `keys` that is vacant: its row is deleted,
/// or does not carry the entry's key (`txn/index_ops.rs`). Returns how many went.
fn purge_vacant<M>(
    db: &Database<M>,
    rows: &mut RowReader<'_, M>,
    id: IndexId,
    keys: RangeInclusive<u64>,
) -> u64 {
    let index = db.ordered_index(id);
    let (table, key_of) = (index.spec.table, index.spec.key_of);
    let bytes = db.table(table).payload_bytes();
    let mut removed = 0;
    let mut from = *keys.start();
    while let Some((key, rid)) = index.map.first_at_or_after(from) {
        if key > *keys.end() {
            break;
        }
        let row = rows.load(table, rid, bytes);
        let present = !crate::storage::is_vacant(row) && key_of(row) == key;
        if !present && index.map.remove(key).is_some() {
            removed += 1;
        }
        let Some(after) = key.checked_add(1) else {
            break;
        };
        from = after;
    }
    removed
}

/// Enters `key -> rid` into index `id` unless it is there; `true` when it was entered. A key
/// already there names `rid`: TPC-C's keys name their order, whose slot is arithmetic.
fn enter<M>(db: &Database<M>, id: IndexId, key: u64, rid: RecordId) -> bool {
    db.ordered_index(id).map.insert(key, rid).is_ok()
}
