//! TPC-C's declared access sets (`protocol::declared`), for the NP mix (New-Order and Payment).
//!
//! Payment names its rows from its input: the warehouse and district (written) and the customer
//! (written). A customer chosen by last name is resolved up front through the last-name index,
//! which is static (customers are never inserted or deleted and names never change), so the
//! lookup before the program runs finds the same C_ID the program will. Its HISTORY row is a
//! slot handed out at run time from the district's counter (`Tpcc::history_slot`): the set covers
//! the district's HISTORY slots.
//!
//! New-Order names its ITEM rows (read), WAREHOUSE (read), DISTRICT (written), CUSTOMER (read) and
//! its lines' STOCK rows (written) from its input. Its ORDER, NEW-ORDER and ORDER-LINE rows, and
//! the index entries its inserts walk (the next present entry of each index, always within the
//! district: its orders or its per-district sentinel row), are named by the order id it reads
//! from D_NEXT_O_ID, which is not known before it runs. They are covered by the write of the
//! district row, and the cover is exact:
//!
//! - every access to a district's ORDER, NEW-ORDER and ORDER-LINE slots (and its index sentinel
//!   rows) in the NP mix is made by a New-Order of that district, which declares a write of the
//!   district row; Payment never touches them;
//! - two transactions that both write one record are never scheduled to run at once by a
//!   deterministic protocol, so New-Orders of one district run one at a time, in the order of
//!   their district writes, and the slots they fill (the order id they read) follow that order;
//! - the narrowest set that could be declared without the order id is the district's slots,
//!   which is what the cover states.
//!
//! The full mix cannot declare: Order-Status, Delivery and Stock-Level find their rows by index
//! scans (a customer's last order, the oldest undelivered order, the last 20 orders' lines) whose
//! results are only known by running them.

use super::mix::TxnType;
use super::request::TpccRequest;
use super::schema::{
    CUSTOMER, DISTRICT, HISTORY, ITEM, MAX_ORDER_LINES, NEW_ORDER, ORDER, ORDER_LINE, STOCK,
    TpccConfig, TpccLayout, WAREHOUSE,
};
use super::txns::customer_id;
use super::workload::Tpcc;
use crate::protocol::AccessSet;

impl TpccConfig {
    /// Why this configuration's requests cannot declare their access sets (transaction types
    /// of the mix that find rows by scans), with what would work; `None` for a mix of New-Order
    /// and Payment only.
    pub fn cannot_declare(&self) -> Option<String> {
        let scanning: Vec<&str> = [TxnType::OrderStatus, TxnType::Delivery, TxnType::StockLevel]
            .into_iter()
            .filter(|&t| self.mix.percent(t) > 0)
            .map(TxnType::name)
            .collect();
        (!scanning.is_empty()).then(|| {
            format!(
                "the TPC-C mix includes {}, which find their rows by index scans whose results \
                 are only known by running them, so their access sets cannot be declared before \
                 they run; --mix np (New-Order and Payment) declares",
                scanning.join(", ")
            )
        })
    }
}

impl Tpcc {
    /// States `req`'s access set (module docs). Only for requests of the NP mix.
    pub(super) fn declare_request(&self, req: &TpccRequest, set: &mut AccessSet) {
        let layout = &self.layout;
        let (w, d) = (req.w, req.d);
        match req.txn_type() {
            TxnType::NewOrder => {
                let super::request::CustomerSelector::Id(c) = req.customer else {
                    unreachable!("New-Order names its customer by id")
                };
                for line in &req.lines[..usize::from(req.ol_cnt)] {
                    // An unused item id rolls the order back before anything else is read.
                    if !TpccLayout::is_item(line.item) {
                        break;
                    }
                    set.read(ITEM, layout.item(line.item));
                    set.write(STOCK, layout.stock(line.supply_w, line.item));
                }
                set.read(WAREHOUSE, layout.warehouse(w));
                set.write(DISTRICT, layout.district(w, d));
                set.read(CUSTOMER, layout.customer(w, d, c));
                let orders = district_slots(layout, w, d);
                let sentinel = layout.index_sentinel(Some(layout.district_slot(w, d))).0;
                for table in [ORDER, NEW_ORDER] {
                    set.cover(table, orders.clone());
                    set.cover(table, sentinel..sentinel + 1);
                }
                set.cover(
                    ORDER_LINE,
                    orders.start * MAX_ORDER_LINES..orders.end * MAX_ORDER_LINES,
                );
            }
            TxnType::Payment => {
                let c = customer_id(self, req.c_w, req.c_d, req.customer);
                set.write(WAREHOUSE, layout.warehouse(w));
                set.write(DISTRICT, layout.district(w, d));
                set.write(CUSTOMER, layout.customer(req.c_w, req.c_d, c));
                set.cover(HISTORY, district_slots(layout, w, d));
            }
            other => unreachable!(
                "{} cannot declare its access set (configuration allows only --mix np)",
                other.name()
            ),
        }
    }
}

/// The ORDER (and NEW-ORDER, and HISTORY) slots of district `(w, d)`.
fn district_slots(layout: &TpccLayout, w: u32, d: u8) -> std::ops::Range<u64> {
    let first = layout.district_slot(w, d) * layout.orders_per_district;
    first..first + layout.orders_per_district
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::RecordId;
    use crate::workload::tpcc::TpccMix;

    #[test]
    fn only_a_mix_without_scans_declares() {
        let np = TpccConfig {
            mix: TpccMix::NP,
            ..TpccConfig::default()
        };
        assert_eq!(np.cannot_declare(), None);
        let why = TpccConfig::default().cannot_declare().expect("full mix");
        assert!(why.contains("order_status"), "{why}");
        assert!(why.contains("--mix np"), "{why}");
    }

    #[test]
    fn district_slots_match_the_layout() {
        let layout = TpccConfig::default().layout();
        let slots = district_slots(&layout, 1, 2);
        assert_eq!(RecordId(slots.start), layout.order(1, 2, 1).unwrap());
        assert_eq!(
            RecordId(slots.end - 1),
            layout
                .order(1, 2, layout.orders_per_district as u32)
                .unwrap()
        );
        assert_eq!(RecordId(slots.start), layout.history(1, 2, 0).unwrap());
    }
}
