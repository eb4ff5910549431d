//! Conditions 2-7 and 9-12 for one district: one pass over its order slots, then its customers.

use super::history::Payments;
use super::{RowReader, Violations, null_or};
use crate::storage::Database;
use crate::workload::tpcc::TpccLayout;
use crate::workload::tpcc::rows::{Customer, District, NewOrder, Order, OrderLine};
use crate::workload::tpcc::schema::{
    CUSTOMER, CUSTOMERS_PER_DISTRICT, DISTRICT, INITIAL_NEW_ORDERS_PER_DISTRICT,
    INITIAL_ORDERS_PER_DISTRICT, MAX_ORDER_LINES, NEW_ORDER, ORDER, ORDER_LINE,
};

/// count(ORDER) - count(NEW-ORDER) of a district before any Delivery (condition 11): 2,100.
const DELIVERED_AT_LOAD: u64 = INITIAL_ORDERS_PER_DISTRICT - INITIAL_NEW_ORDERS_PER_DISTRICT;

/// One district's scan.
pub(super) struct DistrictScan<'a, M> {
    rows: RowReader<'a, M>,
    layout: &'a TpccLayout,
    payments: &'a Payments,
    w: u32,
    d: u8,
    /// "warehouse w district d", for messages.
    at: String,
    found: Violations,
}

/// What the order slots add up to.
#[derive(Default)]
struct OrderTotals {
    orders: u64,
    max_o_id: u32,
    new_orders: u64,
    min_no_o_id: u32,
    max_no_o_id: u32,
    ol_cnt_sum: u64,
    line_rows: u64,
    /// sum(OL_AMOUNT) of delivered lines per customer, indexed by C_ID - 1.
    delivered: Vec<i64>,
}

impl<'a, M> DistrictScan<'a, M> {
    pub(super) fn new(
        db: &'a Database<M>,
        layout: &'a TpccLayout,
        payments: &'a Payments,
        w: u32,
        d: u8,
    ) -> Self {
        DistrictScan {
            rows: RowReader::new(db),
            layout,
            payments,
            w,
            d,
            at: format!("warehouse {w} district {d}"),
            found: Violations::default(),
        }
    }

    /// Checks the district; returns what failed, in the order found.
    pub(super) fn run(mut self) -> Violations {
        let district: District = self
            .rows
            .read(DISTRICT, self.layout.district(self.w, self.d));
        let totals = self.scan_orders();
        self.check_orders(&district, &totals);
        self.check_payments(&district);
        let delivery_cnt = self.check_customers(&totals.delivered);
        let at = &self.at;
        let counted = totals.orders as i64 - totals.new_orders as i64;
        if counted != (DELIVERED_AT_LOAD + delivery_cnt) as i64 {
            self.found.record(|| {
                format!(
                    "condition 11, {at}: count(ORDER) - count(NEW-ORDER) = {counted} but 2100 + \
                     sum(C_DELIVERY_CNT) = 2100 + {delivery_cnt}"
                )
            });
        }
        self.found
    }

    /// Walks every order slot: conditions 5-7 per order, the district's totals for the rest.
    fn scan_orders(&mut self) -> OrderTotals {
        let (w, d) = (self.w, self.d);
        let mut t = OrderTotals {
            min_no_o_id: u32::MAX,
            delivered: vec![0; CUSTOMERS_PER_DISTRICT as usize],
            ..OrderTotals::default()
        };
        let slots = u32::try_from(self.layout.orders_per_district).expect("order ids are u32");
        for o in 1..=slots {
            let order_rid = self.layout.order(w, d, o).expect("o within the slots");
            let order: Option<Order> = self.rows.row(ORDER, order_rid);
            let new_order = self.rows.row::<NewOrder>(NEW_ORDER, order_rid);
            let at = &self.at;
            if let Some(no) = &new_order {
                t.new_orders += 1;
                t.min_no_o_id = t.min_no_o_id.min(no.no_o_id);
                t.max_no_o_id = t.max_no_o_id.max(no.no_o_id);
            }
            let Some(order) = order else {
                // Lines without their order still count as ORDER-LINE rows (condition 4).
                t.line_rows += (1..=MAX_ORDER_LINES as u8)
                    .filter(|&n| {
                        self.rows
                            .present(ORDER_LINE, self.layout.order_line(order_rid, n))
                    })
                    .count() as u64;
                if new_order.is_some() {
                    self.found.record(|| {
                        format!("condition 5, {at}: NEW-ORDER row for order {o} has no ORDER row")
                    });
                }
                continue;
            };

            t.orders += 1;
            t.max_o_id = t.max_o_id.max(order.o_id);
            t.ol_cnt_sum += u64::from(order.o_ol_cnt);
            let mut lines = 0u8;
            let mut delivered = None::<i64>;
            for n in 1..=MAX_ORDER_LINES as u8 {
                let Some(line) = self
                    .rows
                    .row::<OrderLine>(ORDER_LINE, self.layout.order_line(order_rid, n))
                else {
                    continue;
                };
                lines += 1;
                if line.ol_delivery_d.is_some() {
                    *delivered.get_or_insert(0) += i64::from(line.ol_amount);
                }
                if line.ol_delivery_d.is_none() != order.o_carrier_id.is_none() {
                    self.found.record(|| {
                        format!(
                            "condition 7, {at}: order {o} line {n} has OL_DELIVERY_D {} but \
                             O_CARRIER_ID {}",
                            null_or(line.ol_delivery_d),
                            null_or(order.o_carrier_id)
                        )
                    });
                }
            }
            t.line_rows += u64::from(lines);
            if let Some(amount) = delivered {
                let customer = usize::try_from(order.o_c_id)
                    .ok()
                    .and_then(|c| c.checked_sub(1));
                match customer.and_then(|i| t.delivered.get_mut(i)) {
                    Some(sum) => *sum += amount,
                    None => self.found.record(|| {
                        format!(
                            "condition 10, {at}: order {o} has delivered lines but O_C_ID = {} \
                             names no customer",
                            order.o_c_id
                        )
                    }),
                }
            }

            if order.o_carrier_id.is_none() != new_order.is_some() {
                self.found.record(|| {
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
                self.found.record(|| {
                    format!(
                        "condition 6, {at}: order {o} has O_OL_CNT = {} but {lines} ORDER-LINE rows",
                        order.o_ol_cnt
                    )
                });
            }
        }
        t
    }

    /// Conditions 2-4 from the order totals.
    fn check_orders(&mut self, district: &District, t: &OrderTotals) {
        let at = &self.at;
        let expected_max = i64::from(district.d_next_o_id) - 1;
        let (max_o_id, max_no_o_id) = (t.max_o_id, t.max_no_o_id);
        if expected_max != i64::from(max_o_id) {
            self.found.record(|| {
                format!(
                    "condition 2, {at}: D_NEXT_O_ID - 1 = {expected_max} but max(O_ID) = {max_o_id}"
                )
            });
        } else if t.new_orders > 0 && expected_max != i64::from(max_no_o_id) {
            self.found.record(|| {
                format!(
                    "condition 2, {at}: D_NEXT_O_ID - 1 = {expected_max} but max(NO_O_ID) = \
                     {max_no_o_id}"
                )
            });
        }
        if t.new_orders > 0 {
            let span = u64::from(max_no_o_id) + 1 - u64::from(t.min_no_o_id);
            if span != t.new_orders {
                self.found.record(|| {
                    format!(
                        "condition 3, {at}: max(NO_O_ID) - min(NO_O_ID) + 1 = {span} but {} \
                         NEW-ORDER rows",
                        t.new_orders
                    )
                });
            }
        }
        if t.ol_cnt_sum != t.line_rows {
            self.found.record(|| {
                format!(
                    "condition 4, {at}: sum(O_OL_CNT) = {} but {} ORDER-LINE rows",
                    t.ol_cnt_sum, t.line_rows
                )
            });
        }
    }

    /// Condition 9.
    fn check_payments(&mut self, district: &District) {
        let at = &self.at;
        let paid = self.payments.district(self.w, self.d);
        if district.d_ytd != paid {
            self.found.record(|| {
                format!(
                    "condition 9, {at}: D_YTD = {} but sum(H_AMOUNT) = {paid}",
                    district.d_ytd
                )
            });
        }
    }

    /// Conditions 10 and 12 for each customer of the district, with `delivered` (sum(OL_AMOUNT)
    /// of the delivered lines of each customer's orders, by C_ID - 1). Returns
    /// sum(C_DELIVERY_CNT) (condition 11).
    fn check_customers(&mut self, delivered: &[i64]) -> u64 {
        let (w, d) = (self.w, self.d);
        let mut delivery_cnt = 0u64;
        for (c, &delivered) in (1u32..).zip(delivered) {
            let customer: Customer = self.rows.read(CUSTOMER, self.layout.customer(w, d, c));
            delivery_cnt += u64::from(customer.c_delivery_cnt);
            let paid = self.payments.customer(w, d, c);
            let at = &self.at;
            if customer.c_balance != delivered - paid {
                self.found.record(|| {
                    format!(
                        "condition 10, {at}: customer {c} has C_BALANCE = {} but sum(OL_AMOUNT) - \
                         sum(H_AMOUNT) = {delivered} - {paid}",
                        customer.c_balance
                    )
                });
            }
            if customer.c_balance + customer.c_ytd_payment != delivered {
                self.found.record(|| {
                    format!(
                        "condition 12, {at}: customer {c} has C_BALANCE + C_YTD_PAYMENT = {} but \
                         sum(OL_AMOUNT) = {delivered}",
                        customer.c_balance + customer.c_ytd_payment
                    )
                });
            }
        }
        delivery_cnt
    }
}
