//! Loading one warehouse: the spec's cardinalities (4.3.3.1) and the invariants the consistency
//! conditions 3.3.2.1-4 start from.

use super::random::{ORIGINAL, last_name, last_name_number};
use super::rows::{
    Customer, District, History, Item, NewOrder, Order, OrderLine, Row, Stock, Warehouse,
};
use super::schema::*;
use super::{LoadParams, LoadedTpcc, TpccConfig, check_consistency, create_and_load, memory};
use crate::storage::{Database, RecordId, TableId};
use std::sync::OnceLock;

const SEED: u64 = 42;
const NOW: u64 = 1_700_000_000;

fn config() -> TpccConfig {
    TpccConfig {
        warehouses: 1,
        spare_orders_per_district: 10,
        ..Default::default()
    }
}

/// One loaded warehouse, shared by the tests below (loading is the expensive part).
fn loaded() -> &'static (Database<()>, LoadedTpcc) {
    static DB: OnceLock<(Database<()>, LoadedTpcc)> = OnceLock::new();
    DB.get_or_init(|| {
        create_and_load(
            &config(),
            &LoadParams {
                seed: SEED,
                now: NOW,
                threads: 2,
            },
        )
    })
}

fn row<R: Row, M>(db: &Database<M>, table: TableId, rid: RecordId) -> R {
    let mut buf = vec![0u8; R::BYTES];
    db.table(table).get(rid).unwrap().payload.load(&mut buf);
    R::decode(&buf)
}

/// Rows present: every row's first field is a spec id (at least 1), so a zero first word is a
/// vacant slot.
fn present<M>(db: &Database<M>, table: TableId) -> u64 {
    let t = db.table(table);
    (0..t.len())
        .filter(|&i| t.get(RecordId(i)).unwrap().payload.word(0) != 0)
        .count() as u64
}

#[test]
fn cardinalities_match_the_spec() {
    let (db, loaded) = loaded();
    let expected = config().initial_rows();
    // ORDER and NEW-ORDER also hold one index sentinel row per district and the end sentinel.
    let sentinels = config().warehouses * 10 + 1;
    for (id, want) in expected.iter().enumerate() {
        let mut got = present(db, TableId(id as u32));
        if [ORDER, NEW_ORDER].contains(&TableId(id as u32)) {
            got -= sentinels;
        }
        match want {
            Some(n) => assert_eq!(got, *n, "{}", db.tables()[id].spec().name),
            // 30,000 orders with O_OL_CNT uniform in 5..=15: about 300,000 lines.
            None => assert!((290_000..310_000).contains(&got), "order lines {got}"),
        }
    }
    assert_eq!(loaded.customers_by_last_name.len(), 30_000);
}

#[test]
fn consistency_conditions_hold_after_load() {
    let (db, _) = loaded();
    let l = config().layout();
    let w: Warehouse = row(db, WAREHOUSE, l.warehouse(1));
    let mut d_ytd = 0;
    for d in 1..=10u8 {
        let district: District = row(db, DISTRICT, l.district(1, d));
        assert_eq!((district.d_id, district.d_w_id), (d, 1));
        d_ytd += district.d_ytd;

        let mut max_o_id = 0;
        let mut ol_cnt_sum = 0u64;
        let mut ol_rows = 0u64;
        let mut customers_seen = vec![false; 3001];
        for o in 1..=(l.orders_per_district as u32) {
            let rid = l.order(1, d, o).unwrap();
            let order: Order = row(db, ORDER, rid);
            if order.o_id == 0 {
                continue;
            }
            assert_eq!((order.o_id, order.o_d_id, order.o_w_id), (o, d, 1));
            assert!(!std::mem::replace(
                &mut customers_seen[order.o_c_id as usize],
                true
            ));
            let delivered = o < 2101;
            assert_eq!(order.o_carrier_id.is_some(), delivered);
            assert!((5..=15).contains(&order.o_ol_cnt));
            max_o_id = max_o_id.max(order.o_id);
            ol_cnt_sum += u64::from(order.o_ol_cnt);
            for n in 1..=15u8 {
                let line: OrderLine = row(db, ORDER_LINE, l.order_line(rid, n));
                if line.ol_o_id == 0 {
                    assert!(n > order.o_ol_cnt, "lines are contiguous from 1");
                    continue;
                }
                ol_rows += 1;
                assert_eq!((line.ol_o_id, line.ol_number), (o, n));
                assert_eq!(line.ol_delivery_d.is_some(), delivered);
                assert_eq!(line.ol_amount == 0, delivered);
                assert!(TpccLayout::is_item(line.ol_i_id));
            }
        }
        assert!(
            customers_seen[1..].iter().all(|&s| s),
            "O_C_ID is a permutation"
        );

        let new_order_ids: Vec<u32> = (1..=(l.orders_per_district as u32))
            .map(|o| row::<NewOrder, _>(db, NEW_ORDER, l.new_order(1, d, o).unwrap()).no_o_id)
            .filter(|&id| id != 0)
            .collect();
        let (min_no, max_no) = (new_order_ids[0], *new_order_ids.last().unwrap());

        // 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID).
        assert_eq!(district.d_next_o_id - 1, max_o_id);
        assert_eq!(max_no, max_o_id);
        // 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER (900 per district).
        assert_eq!(new_order_ids.len(), 900);
        assert_eq!((max_no - min_no + 1) as usize, new_order_ids.len());
        // 3.3.2.4: sum(O_OL_CNT) = rows in ORDER-LINE.
        assert_eq!(ol_cnt_sum, ol_rows);
    }
    // 3.3.2.1: W_YTD = sum(D_YTD).
    assert_eq!(w.w_ytd, d_ytd);
    assert_eq!(w.w_ytd, 30_000_000);

    // The checker agrees with the checks above.
    let report = check_consistency(db, &config());
    assert!(report.is_consistent(), "{report:?}");
}

#[test]
fn customers_follow_the_spec_rules() {
    let (db, loaded) = loaded();
    let l = config().layout();
    let mut bad_credit = 0;
    for d in 1..=10u8 {
        for c in 1..=3000u32 {
            let cust: Customer = row(db, CUSTOMER, l.customer(1, d, c));
            assert_eq!((cust.c_id, cust.c_d_id, cust.c_w_id), (c, d, 1));
            let number = last_name_number(cust.c_last.as_bytes()).expect("syllables");
            if c <= 1000 {
                let (name, len) = last_name((c - 1) as u16);
                assert_eq!(cust.c_last.as_bytes(), &name[..len]);
            }
            assert!(loaded.customers_by_last_name.get(1, d, number).contains(&c));
            assert!((300..=500).contains(&cust.c_data.len()));
            assert!((8..=16).contains(&cust.c_first.len()));
            assert_eq!(cust.c_middle.as_bytes(), b"OE");
            assert_eq!(cust.c_since, NOW);
            assert!(cust.c_discount <= 5000);
            assert_eq!(
                (cust.c_balance, cust.c_ytd_payment, cust.c_payment_cnt),
                (-1000, 1000, 1)
            );
            match cust.c_credit.as_bytes() {
                b"BC" => bad_credit += 1,
                b"GC" => {}
                other => panic!("C_CREDIT {other:?}"),
            }
            let k = u64::from(c - 1);
            let h: History = row(db, HISTORY, l.history(1, d, k).unwrap());
            assert_eq!((h.h_c_id, h.h_c_d_id, h.h_amount), (c, d, 1000));
        }
        // Ids by last name are sorted by C_FIRST.
        for number in [0u16, 500, 999] {
            let firsts: Vec<_> = loaded
                .customers_by_last_name
                .get(1, d, number)
                .iter()
                .map(|&c| row::<Customer, _>(db, CUSTOMER, l.customer(1, d, c)).c_first)
                .collect();
            assert!(
                firsts
                    .windows(2)
                    .all(|p| p[0].as_bytes() <= p[1].as_bytes())
            );
        }
    }
    // 10% of 30,000 rows: 3,000, standard deviation about 52.
    assert!(
        (2_700..3_300).contains(&bad_credit),
        "BC customers {bad_credit}"
    );
}

#[test]
fn items_and_stock_carry_original_in_a_tenth() {
    let (db, _) = loaded();
    let l = config().layout();
    let has_original = |data: &[u8]| data.windows(ORIGINAL.len()).any(|w| w == ORIGINAL);
    let (mut items, mut stock) = (0, 0);
    for i in 1..=100_000u32 {
        let item: Item = row(db, ITEM, l.item(i));
        assert_eq!(item.i_id, i);
        assert!((100..=10_000).contains(&item.i_price));
        items += u32::from(has_original(item.i_data.as_bytes()));
        let s: Stock = row(db, STOCK, l.stock(1, i));
        assert_eq!((s.s_i_id, s.s_w_id), (i, 1));
        assert!((10..=100).contains(&s.s_quantity));
        assert_eq!(s.dist_info(10).len(), 24);
        stock += u32::from(has_original(s.s_data.as_bytes()));
    }
    // 10% of 100,000: 10,000, standard deviation about 95.
    assert!(
        (9_500..10_500).contains(&items),
        "items with ORIGINAL {items}"
    );
    assert!(
        (9_500..10_500).contains(&stock),
        "stock with ORIGINAL {stock}"
    );
}

#[test]
fn loading_is_deterministic_whatever_the_thread_count() {
    // Two small loads with the same seed, one and three threads: the same bytes.
    let (db, _) = loaded();
    let (other, _): (Database<()>, _) = create_and_load(
        &config(),
        &LoadParams {
            seed: SEED,
            now: NOW,
            threads: 3,
        },
    );
    for (a, b) in db.tables().iter().zip(other.tables()) {
        let mut x = vec![0u8; a.payload_bytes()];
        let mut y = vec![0u8; a.payload_bytes()];
        for i in 0..a.len() {
            a.get(RecordId(i)).unwrap().payload.load(&mut x);
            b.get(RecordId(i)).unwrap().payload.load(&mut y);
            assert_eq!(x, y, "{} record {i}", a.spec().name);
        }
    }
}

#[test]
fn memory_report_adds_up() {
    let (db, loaded) = loaded();
    let m = memory(db, &config(), loaded);
    assert_eq!(m.table_bytes, db.memory_bytes());
    assert_eq!(m.item_bytes, 100_000 * db.table(ITEM).stride());
    assert_eq!(
        m.bytes_per_warehouse,
        m.table_bytes - m.item_bytes + m.index_bytes
    );
    // 10 districts x 10 spare orders x (order + new order + history + 15 lines), 64 B each.
    assert_eq!(m.spare_bytes, 100 * 18 * 64);
    assert_eq!(
        m.loaded_bytes_per_warehouse,
        m.bytes_per_warehouse - m.spare_bytes
    );
}
