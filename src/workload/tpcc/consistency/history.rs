//! The HISTORY pass: sum(H_AMOUNT) per district and per customer, the payment side of
//! conditions 8-10.

use super::{RowReader, Violations};
use crate::storage::Database;
use crate::workload::tpcc::TpccLayout;
use crate::workload::tpcc::rows::History;
use crate::workload::tpcc::schema::{CUSTOMERS_PER_DISTRICT, DISTRICTS_PER_WAREHOUSE, HISTORY};
use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering::Relaxed;

/// sum(H_AMOUNT) per district and per customer, in cents, filled by one task per district
/// ([`Payments::add_district`]) and read once every task has joined.
pub(super) struct Payments {
    layout: TpccLayout,
    /// Per district, indexed by [`TpccLayout::district_slot`].
    by_district: Box<[AtomicI64]>,
    /// Per customer, indexed by CUSTOMER record id ([`TpccLayout::customer`]).
    by_customer: Box<[AtomicI64]>,
}

impl Payments {
    /// Zero sums for every district and customer of `layout`.
    pub(super) fn new(layout: TpccLayout) -> Self {
        let districts = layout.warehouses * DISTRICTS_PER_WAREHOUSE;
        let zeros = |n: u64| (0..n).map(|_| AtomicI64::new(0)).collect();
        Payments {
            layout,
            by_district: zeros(districts),
            by_customer: zeros(districts * CUSTOMERS_PER_DISTRICT),
        }
    }

    /// Adds every HISTORY row in the slots of district `(w, d)` to the sums of the district and
    /// the customer it names. A row naming a district or customer that does not exist is a
    /// violation (of condition 9 or 10) and adds to no sum of that kind.
    pub(super) fn add_district<M>(&self, db: &Database<M>, w: u32, d: u8) -> Violations {
        let mut found = Violations::default();
        let mut rows = RowReader::new(db);
        let own = self.layout.district_slot(w, d);
        // Rows paid to this district, the common case, summed here and added once.
        let mut own_paid = 0i64;
        for k in 0..self.layout.orders_per_district {
            let rid = self.layout.history(w, d, k).expect("k within the slots");
            let Some(row) = rows.row::<History>(HISTORY, rid) else {
                continue;
            };
            let amount = i64::from(row.h_amount);
            match self.district_slot(row.h_w_id, row.h_d_id) {
                Some(slot) if slot == own => own_paid += amount,
                // Relaxed: the sums are read after every task joined (the scope's join
                // publishes them); the additions commute.
                Some(slot) => {
                    self.by_district[slot as usize].fetch_add(amount, Relaxed);
                }
                None => found.record(|| {
                    format!(
                        "condition 9, warehouse {w} district {d}: HISTORY row {k} names district \
                         (H_W_ID, H_D_ID) = ({}, {}), which does not exist",
                        row.h_w_id, row.h_d_id
                    )
                }),
            }
            match self.customer_index(row.h_c_w_id, row.h_c_d_id, row.h_c_id) {
                // Relaxed: as above.
                Some(i) => {
                    self.by_customer[i].fetch_add(amount, Relaxed);
                }
                None => found.record(|| {
                    format!(
                        "condition 10, warehouse {w} district {d}: HISTORY row {k} names customer \
                         (H_C_W_ID, H_C_D_ID, H_C_ID) = ({}, {}, {}), which does not exist",
                        row.h_c_w_id, row.h_c_d_id, row.h_c_id
                    )
                }),
            }
        }
        // Relaxed: as above.
        self.by_district[own as usize].fetch_add(own_paid, Relaxed);
        found
    }

    /// sum(H_AMOUNT) of the rows naming warehouse `w` (all passes joined).
    pub(super) fn warehouse(&self, w: u32) -> i64 {
        (1..=DISTRICTS_PER_WAREHOUSE as u8)
            .map(|d| self.district(w, d))
            .sum()
    }

    /// sum(H_AMOUNT) of the rows naming district `(w, d)` (all passes joined).
    pub(super) fn district(&self, w: u32, d: u8) -> i64 {
        // Relaxed: written before the scope's join, which ordered them before this read.
        self.by_district[self.layout.district_slot(w, d) as usize].load(Relaxed)
    }

    /// sum(H_AMOUNT) of the rows naming customer `(w, d, c)` (all passes joined).
    pub(super) fn customer(&self, w: u32, d: u8, c: u32) -> i64 {
        // Relaxed: as in `district`.
        self.by_customer[self.layout.customer(w, d, c).0 as usize].load(Relaxed)
    }

    /// The district slot of `(w, d)`, or `None` when no such district exists.
    fn district_slot(&self, w: u32, d: u8) -> Option<u64> {
        let exists = (1..=self.layout.warehouses).contains(&u64::from(w))
            && (1..=DISTRICTS_PER_WAREHOUSE).contains(&u64::from(d));
        exists.then(|| self.layout.district_slot(w, d))
    }

    /// The index in `by_customer` of customer `(w, d, c)`, or `None` when it does not exist.
    fn customer_index(&self, w: u32, d: u8, c: u32) -> Option<usize> {
        self.district_slot(w, d)?;
        (1..=CUSTOMERS_PER_DISTRICT)
            .contains(&u64::from(c))
            .then(|| self.layout.customer(w, d, c).0 as usize)
    }
}
