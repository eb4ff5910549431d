//! New-Order (clause 2.4.2).

use super::{fill, read_row, update_row};
use crate::protocol::Abort;
use crate::txn::TxnOps;
use crate::workload::tpcc::request::{CustomerSelector, TpccRequest};
use crate::workload::tpcc::rows::{
    Customer, District, Item, NewOrder, Order, OrderLine, Stock, Warehouse,
};
use crate::workload::tpcc::schema::{
    CUSTOMER, DISTRICT, ITEM, NEW_ORDER, NEW_ORDER_INDEX, ORDER, ORDER_BY_CUSTOMER, ORDER_LINE,
    STOCK, TpccLayout, WAREHOUSE, new_order_key, order_customer_key,
};
use crate::workload::tpcc::workload::Tpcc;

/// Enters an order of `ol_cnt` lines for customer `(w, d, c)`: takes the district's next order
/// id, inserts ORDER, NEW-ORDER and the ORDER-LINEs, and updates each line's STOCK row.
///
/// The new rows are blind writes into their slots rather than [`TxnOps::insert`]s: the slots
/// belong to the order id taken from D_NEXT_O_ID by this transaction's read-modify-write of the
/// district row, so no other transaction that can commit fills them, and checking them would
/// add nothing the district row does not already order. (It also keeps a protocol without
/// concurrency control from livelocking: NoCC can lose a D_NEXT_O_ID update and point the
/// district at a filled slot, and an insert that refuses a filled slot would then fail forever.)
///
/// The items are read first: the 1% of orders naming an unused item roll back (a user abort)
/// before writing anything, which the spec allows (2.4.2.3 only requires the rollback; the order
/// of the reads inside the transaction is the implementation's) and which keeps an aborted
/// order from leaving index entries behind.
pub(super) async fn run<Tx: TxnOps>(t: &Tpcc, tx: &mut Tx, req: &TpccRequest) -> Result<(), Abort> {
    let layout = &t.layout;
    let (w, d) = (req.w, req.d);
    let CustomerSelector::Id(c) = req.customer else {
        unreachable!("New-Order names its customer by id")
    };
    let lines = &req.lines[..usize::from(req.ol_cnt)];
    let mut prices = [0i32; 15];
    for (n, line) in lines.iter().enumerate() {
        if !TpccLayout::is_item(line.item) {
            return Err(Abort::User);
        }
        prices[n] = read_row::<Tx, Item>(tx, ITEM, layout.item(line.item))
            .await?
            .i_price;
    }
    let w_tax = read_row::<Tx, Warehouse>(tx, WAREHOUSE, layout.warehouse(w))
        .await?
        .w_tax;
    let (d_tax, o_id) = update_row(tx, DISTRICT, layout.district(w, d), |r: &mut District| {
        let o_id = r.d_next_o_id;
        r.d_next_o_id += 1;
        (r.d_tax, o_id)
    })
    .await?;
    let discount = read_row::<Tx, Customer>(tx, CUSTOMER, layout.customer(w, d, c))
        .await?
        .c_discount;
    let Some(order_rid) = layout.order(w, d, o_id) else {
        t.note_exhausted();
        return Err(Abort::User);
    };
    // The tables grow: make sure every slot this order fills is in memory before writing any
    // (a refused chunk ends the order cleanly; the run then stops, see `storage`).
    let reserved = tx.reserve(ORDER, order_rid)
        && tx.reserve(NEW_ORDER, order_rid)
        && tx.reserve(ORDER_LINE, layout.order_line(order_rid, 1))
        && tx.reserve(ORDER_LINE, layout.order_line(order_rid, req.ol_cnt));
    if !reserved {
        t.note_storage_full();
        return Err(Abort::User);
    }
    let order = Order {
        o_id,
        o_d_id: d,
        o_w_id: w,
        o_c_id: c,
        o_entry_d: t.now,
        o_carrier_id: None,
        o_ol_cnt: req.ol_cnt,
        o_all_local: u8::from(lines.iter().all(|l| l.supply_w == w)),
    };
    tx.write_with(ORDER, order_rid, fill(&order)).await?;
    tx.index_insert(
        ORDER_BY_CUSTOMER,
        order_customer_key(w, d, c, o_id),
        order_rid,
    )
    .await?;
    let new_order = NewOrder {
        no_o_id: o_id,
        no_d_id: d,
        no_w_id: w,
    };
    tx.write_with(NEW_ORDER, order_rid, fill(&new_order))
        .await?;
    tx.index_insert(NEW_ORDER_INDEX, new_order_key(w, d, o_id), order_rid)
        .await?;
    let mut total: i64 = 0;
    for (n, line) in lines.iter().enumerate() {
        let quantity = i16::from(line.quantity);
        let remote = line.supply_w != w;
        let dist_info = update_row(
            tx,
            STOCK,
            layout.stock(line.supply_w, line.item),
            |s: &mut Stock| {
                s.s_quantity = if s.s_quantity >= quantity + 10 {
                    s.s_quantity - quantity
                } else {
                    s.s_quantity - quantity + 91
                };
                s.s_ytd += u32::from(line.quantity);
                s.s_order_cnt += 1;
                s.s_remote_cnt += u16::from(remote);
                *s.dist_info(d)
            },
        )
        .await?;
        let amount = i32::from(line.quantity) * prices[n];
        total += i64::from(amount);
        let ol_number = n as u8 + 1;
        let order_line = OrderLine {
            ol_o_id: o_id,
            ol_d_id: d,
            ol_w_id: w,
            ol_number,
            ol_i_id: line.item,
            ol_supply_w_id: line.supply_w,
            ol_delivery_d: None,
            ol_quantity: line.quantity,
            ol_amount: amount,
            ol_dist_info: dist_info,
        };
        let rid = layout.order_line(order_rid, ol_number);
        tx.write_with(ORDER_LINE, rid, fill(&order_line)).await?;
    }
    // The terminal would show total * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX); computed so the
    // transaction does the spec's arithmetic, then dropped.
    let _total = total * (10_000 - i64::from(discount)) / 10_000
        * (10_000 + i64::from(w_tax) + i64::from(d_tax))
        / 10_000;
    Ok(())
}
