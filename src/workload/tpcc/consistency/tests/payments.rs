//! Year-to-date totals, HISTORY and customers (conditions 1 and 8-12).

use super::*;

#[test]
fn a_changed_d_ytd_breaks_conditions_1_and_9() {
    let db = database();
    let rid = config().layout().district(1, 3);
    let mut district: District = get(&db, DISTRICT, rid);
    district.d_ytd += 1;
    let _p = put(&db, DISTRICT, rid, &district);
    let report = check(&db);
    assert_eq!(by_condition(&report), BTreeMap::from([(1, 1), (9, 1)]));
    assert_eq!(
        report.examples,
        [
            "condition 1, warehouse 1: W_YTD = 30000000 but sum(D_YTD) = 30000001",
            "condition 9, warehouse 1 district 3: D_YTD = 3000001 but sum(H_AMOUNT) = 3000000"
        ]
    );
}

#[test]
fn a_changed_w_ytd_breaks_conditions_1_and_8() {
    let db = database();
    let rid = config().layout().warehouse(1);
    let mut warehouse: Warehouse = get(&db, WAREHOUSE, rid);
    warehouse.w_ytd -= 5;
    let _p = put(&db, WAREHOUSE, rid, &warehouse);
    let report = check(&db);
    assert_eq!(by_condition(&report), BTreeMap::from([(1, 1), (8, 1)]));
    assert_eq!(
        report.examples[1],
        "condition 8, warehouse 1: W_YTD = 29999995 but sum(H_AMOUNT) = 30000000"
    );
}

/// What Payment writes for `amount` cents paid by customer `(c_d, c)` of warehouse 1 to
/// district `(1, d)`: W_YTD, D_YTD and the customer's balance, payment total and count, and
/// with `history` its HISTORY row in the district's first spare slot.
fn pay(
    db: &Database<()>,
    d: u8,
    (c_d, c): (u8, u32),
    amount: i64,
    history: bool,
) -> Vec<Patch<'_>> {
    let l = config().layout();
    let mut warehouse: Warehouse = get(db, WAREHOUSE, l.warehouse(1));
    warehouse.w_ytd += amount;
    let mut district: District = get(db, DISTRICT, l.district(1, d));
    district.d_ytd += amount;
    let mut customer: Customer = get(db, CUSTOMER, l.customer(1, c_d, c));
    customer.c_balance -= amount;
    customer.c_ytd_payment += amount;
    customer.c_payment_cnt += 1;
    let mut patches = vec![
        put(db, WAREHOUSE, l.warehouse(1), &warehouse),
        put(db, DISTRICT, l.district(1, d), &district),
        put(db, CUSTOMER, l.customer(1, c_d, c), &customer),
    ];
    if history {
        let row = History {
            h_c_id: c,
            h_c_d_id: c_d,
            h_c_w_id: 1,
            h_d_id: d,
            h_w_id: 1,
            h_date: NOW + 1,
            h_amount: i32::try_from(amount).unwrap(),
            ..History::default()
        };
        let slot = l.history(1, d, 3000).unwrap();
        patches.push(put(db, HISTORY, slot, &row));
    }
    patches
}

/// A payment to district 2 by a customer of district 7 (HISTORY goes to district 2's slots).
#[test]
fn a_complete_remote_payment_stays_consistent() {
    let db = database();
    let _patches = pay(&db, 2, (7, 123), 4_321, true);
    assert_eq!(check(&db), check_fresh());
}

#[test]
fn a_payment_without_its_history_row_breaks_conditions_8_to_10() {
    let db = database();
    let _patches = pay(&db, 2, (7, 123), 500, false);
    let report = check(&db);
    assert_eq!(
        by_condition(&report),
        BTreeMap::from([(8, 1), (9, 1), (10, 1)])
    );
    assert_eq!(
        report.examples,
        [
            "condition 8, warehouse 1: W_YTD = 30000500 but sum(H_AMOUNT) = 30000000",
            "condition 9, warehouse 1 district 2: D_YTD = 3000500 but sum(H_AMOUNT) = 3000000",
            "condition 10, warehouse 1 district 7: customer 123 has C_BALANCE = -1500 but \
             sum(OL_AMOUNT) - sum(H_AMOUNT) = 0 - 1000",
        ]
    );
}

#[test]
fn a_changed_h_amount_breaks_conditions_8_9_and_10() {
    let db = database();
    let rid = config().layout().history(1, 6, 41).unwrap();
    let mut row: History = get(&db, HISTORY, rid);
    row.h_amount += 1;
    let _p = put(&db, HISTORY, rid, &row);
    assert_eq!(
        by_condition(&check(&db)),
        BTreeMap::from([(8, 1), (9, 1), (10, 1)])
    );
}

#[test]
fn a_history_row_naming_no_customer_breaks_condition_10() {
    let db = database();
    let rid = config().layout().history(1, 3, 9).unwrap();
    let mut row: History = get(&db, HISTORY, rid);
    assert_eq!(row.h_c_id, 10);
    row.h_c_id = 3001;
    let _p = put(&db, HISTORY, rid, &row);
    let report = check(&db);
    // The row itself, and customer 10, whose payment is gone.
    assert_eq!(by_condition(&report), BTreeMap::from([(10, 2)]));
    assert_eq!(
        report.examples[0],
        "condition 10, warehouse 1 district 3: HISTORY row 9 names customer (H_C_W_ID, H_C_D_ID, \
         H_C_ID) = (1, 3, 3001), which does not exist"
    );
}

#[test]
fn a_history_row_naming_no_district_breaks_conditions_8_and_9() {
    let db = database();
    let rid = config().layout().history(1, 4, 0).unwrap();
    let mut row: History = get(&db, HISTORY, rid);
    row.h_d_id = 11;
    let _p = put(&db, HISTORY, rid, &row);
    let report = check(&db);
    // The row itself, and the sums of warehouse 1 and district 4, which lack it.
    assert_eq!(by_condition(&report), BTreeMap::from([(8, 1), (9, 2)]));
    assert!(report.examples.contains(
        &"condition 9, warehouse 1 district 4: HISTORY row 0 names district (H_W_ID, H_D_ID) = \
          (1, 11), which does not exist"
            .to_owned()
    ));
}

/// Changes one field of customer `(1, d, c)`.
fn change_customer(
    db: &Database<()>,
    d: u8,
    c: u32,
    change: impl FnOnce(&mut Customer),
) -> Patch<'_> {
    let rid = config().layout().customer(1, d, c);
    let mut customer: Customer = get(db, CUSTOMER, rid);
    change(&mut customer);
    put(db, CUSTOMER, rid, &customer)
}

#[test]
fn a_changed_c_balance_breaks_conditions_10_and_12() {
    let db = database();
    let _p = change_customer(&db, 5, 2999, |c| c.c_balance += 1);
    let report = check(&db);
    assert_eq!(by_condition(&report), BTreeMap::from([(10, 1), (12, 1)]));
    assert_eq!(
        report.examples,
        [
            "condition 10, warehouse 1 district 5: customer 2999 has C_BALANCE = -999 but \
             sum(OL_AMOUNT) - sum(H_AMOUNT) = 0 - 1000",
            "condition 12, warehouse 1 district 5: customer 2999 has C_BALANCE + C_YTD_PAYMENT = 1 \
             but sum(OL_AMOUNT) = 0",
        ]
    );
}

#[test]
fn a_changed_c_ytd_payment_breaks_condition_12() {
    let db = database();
    let _p = change_customer(&db, 1, 1, |c| c.c_ytd_payment -= 1000);
    assert_eq!(by_condition(&check(&db)), BTreeMap::from([(12, 1)]));
}

#[test]
fn a_changed_c_delivery_cnt_breaks_condition_11() {
    let db = database();
    let _p = change_customer(&db, 9, 77, |c| c.c_delivery_cnt = 2);
    let report = check(&db);
    assert_eq!(by_condition(&report), BTreeMap::from([(11, 1)]));
    assert_eq!(
        report.examples[0],
        "condition 11, warehouse 1 district 9: count(ORDER) - count(NEW-ORDER) = 2100 but 2100 + \
         sum(C_DELIVERY_CNT) = 2100 + 2"
    );
}

/// Loaded delivered lines carry OL_AMOUNT 0; one that carries more is money the customer's
/// balance never received.
#[test]
fn a_changed_delivered_amount_breaks_conditions_10_and_12() {
    let db = database();
    let l = config().layout();
    let rid = l.order_line(l.order(1, 7, 1234).unwrap(), 2);
    let mut line: OrderLine = get(&db, ORDER_LINE, rid);
    assert!(line.ol_delivery_d.is_some());
    line.ol_amount = 7;
    let _p = put(&db, ORDER_LINE, rid, &line);
    assert_eq!(
        by_condition(&check(&db)),
        BTreeMap::from([(10, 1), (12, 1)])
    );
}

#[test]
fn a_delivered_order_naming_no_customer_breaks_condition_10() {
    let db = database();
    let rid = config().layout().order(1, 8, 5).unwrap();
    let mut order: Order = get(&db, ORDER, rid);
    order.o_c_id = 3001;
    let _p = put(&db, ORDER, rid, &order);
    let report = check(&db);
    assert_eq!(by_condition(&report), BTreeMap::from([(10, 1)]));
    assert_eq!(
        report.examples[0],
        "condition 10, warehouse 1 district 8: order 5 has delivered lines but O_C_ID = 3001 \
         names no customer"
    );
}
