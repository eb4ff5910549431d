//! Orders, NEW-ORDER rows and lines (conditions 2-7), and Delivery (7, 10-12).

use super::*;

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
    // And a delivered order without a Delivery (condition 11).
    assert_eq!(
        by_condition(&report),
        BTreeMap::from([(2, 1), (5, 1), (11, 1)])
    );
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
    assert_eq!(
        by_condition(&report),
        BTreeMap::from([(3, 1), (5, 1), (11, 1)])
    );
    assert!(
        report.examples.contains(
            &"condition 3, warehouse 1 district 4: max(NO_O_ID) - min(NO_O_ID) + 1 = 900 but 899 \
          NEW-ORDER rows"
                .to_owned()
        )
    );
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
    // Also a NEW-ORDER range now spanning 1..=3000 with 901 rows, and 2,999 orders against
    // 901 NEW-ORDER rows.
    assert_eq!(
        by_condition(&report),
        BTreeMap::from([(3, 1), (5, 1), (11, 1)])
    );
    assert!(
        report
            .examples
            .iter()
            .any(|e| e.ends_with("NEW-ORDER row for order 1 has no ORDER row"))
    );
    drop(lines);
}

/// A Delivery that forgets to stamp the lines (so it adds nothing to the balance either).
#[test]
fn a_delivery_that_forgets_its_lines_breaks_condition_7() {
    let db = database();
    let l = config().layout();
    let rid = l.order(1, 8, 2101).unwrap();
    let mut order: Order = get(&db, ORDER, rid);
    order.o_carrier_id = Some(4);
    let customer_rid = l.customer(1, 8, order.o_c_id);
    let mut customer: Customer = get(&db, CUSTOMER, customer_rid);
    customer.c_delivery_cnt += 1;
    let _no = vacate(&db, NEW_ORDER, rid);
    let _p = put(&db, ORDER, rid, &order);
    let _c = put(&db, CUSTOMER, customer_rid, &customer);
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
    // Its amount now counts as delivered to the order's customer, whose balance lacks it.
    assert_eq!(
        by_condition(&check(&db)),
        BTreeMap::from([(7, 1), (10, 1), (12, 1)])
    );
}

/// What Delivery does to order `o` of district `(1, d)`: sets O_CARRIER_ID, deletes the
/// NEW-ORDER row, stamps the lines and, with `customer`, adds their amounts to C_BALANCE and one
/// to C_DELIVERY_CNT. Returns the patches and the customer's id.
fn deliver(db: &Database<()>, d: u8, o: u32, customer: bool) -> (Vec<Patch<'_>>, u32) {
    let l = config().layout();
    let rid = l.order(1, d, o).unwrap();
    let mut order: Order = get(db, ORDER, rid);
    order.o_carrier_id = Some(3);
    let mut patches = vec![vacate(db, NEW_ORDER, rid), put(db, ORDER, rid, &order)];
    let mut amount = 0;
    for n in 1..=order.o_ol_cnt {
        let line_rid = l.order_line(rid, n);
        let mut line: OrderLine = get(db, ORDER_LINE, line_rid);
        line.ol_delivery_d = Some(NOW + 1);
        amount += i64::from(line.ol_amount);
        patches.push(put(db, ORDER_LINE, line_rid, &line));
    }
    assert!(amount > 0, "undelivered orders have amounts");
    if customer {
        let customer_rid = l.customer(1, d, order.o_c_id);
        let mut c: Customer = get(db, CUSTOMER, customer_rid);
        c.c_balance += amount;
        c.c_delivery_cnt += 1;
        patches.push(put(db, CUSTOMER, customer_rid, &c));
    }
    (patches, order.o_c_id)
}

/// What Delivery does to the oldest undelivered order keeps every condition.
#[test]
fn a_complete_delivery_stays_consistent() {
    let db = database();
    let _patches = deliver(&db, 1, 2101, true);
    assert_eq!(check(&db), check_fresh());
}

#[test]
fn a_delivery_that_forgets_its_customer_breaks_conditions_10_to_12() {
    let db = database();
    let (_patches, c) = deliver(&db, 2, 2101, false);
    let report = check(&db);
    assert_eq!(
        by_condition(&report),
        BTreeMap::from([(10, 1), (11, 1), (12, 1)])
    );
    let at = "warehouse 1 district 2";
    assert!(
        report.examples.contains(&format!(
            "condition 11, {at}: count(ORDER) - count(NEW-ORDER) = 2101 but 2100 + \
             sum(C_DELIVERY_CNT) = 2100 + 0"
        )),
        "{report:?}"
    );
    assert!(
        report.examples.iter().any(|e| e.starts_with(&format!(
            "condition 12, {at}: customer {c} has C_BALANCE + C_YTD_PAYMENT = 0 but \
             sum(OL_AMOUNT) = "
        ))),
        "{report:?}"
    );
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
