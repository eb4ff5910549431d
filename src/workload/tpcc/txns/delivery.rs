//! Delivery (clause 2.7.4), run as one transaction for all ten districts.

use super::{stale_read, update_row};
use crate::protocol::Abort;
use crate::txn::TxnOps;
use crate::workload::tpcc::request::TpccRequest;
use crate::workload::tpcc::rows::{Customer, Order, OrderLine};
use crate::workload::tpcc::schema::{
    CUSTOMER, DISTRICTS_PER_WAREHOUSE, NEW_ORDER, NEW_ORDER_INDEX, ORDER, ORDER_LINE,
    SENTINEL_ORDER_ID, new_order_key,
};
use crate::workload::tpcc::workload::Tpcc;

/// For each district of warehouse `w`: finds the oldest undelivered order (the smallest key of
/// NEW-ORDER in the district: a phantom-safe `scan_first`), deletes its NEW-ORDER row, sets its
/// carrier, stamps its lines' delivery date, and adds their amounts to the customer's balance.
/// A district without undelivered orders is skipped (2.7.4.2).
pub(super) async fn run<Tx: TxnOps>(t: &Tpcc, tx: &mut Tx, req: &TpccRequest) -> Result<(), Abort> {
    let layout = &t.layout;
    let w = req.w;
    for d in 1..=DISTRICTS_PER_WAREHOUSE as u8 {
        let range = new_order_key(w, d, 0)..=new_order_key(w, d, SENTINEL_ORDER_ID - 1);
        let Some((key, no_rid)) = tx.scan_first(NEW_ORDER_INDEX, range).await? else {
            continue;
        };
        let o_id = key as u32;
        if !tx.delete(NEW_ORDER, no_rid).await? {
            return Err(stale_read());
        }
        tx.index_remove(NEW_ORDER_INDEX, key).await?;
        let order_rid = layout
            .order(w, d, o_id)
            .expect("a NEW-ORDER row has its order");
        let carrier = req.carrier;
        let (c, ol_cnt) = update_row(tx, ORDER, order_rid, |o: &mut Order| {
            o.o_carrier_id = Some(carrier);
            (o.o_c_id, o.o_ol_cnt)
        })
        .await?;
        let mut amount: i64 = 0;
        for n in 1..=ol_cnt {
            let now = t.now;
            amount += i64::from(
                update_row(
                    tx,
                    ORDER_LINE,
                    layout.order_line(order_rid, n),
                    |l: &mut OrderLine| {
                        l.ol_delivery_d = Some(now);
                        l.ol_amount
                    },
                )
                .await?,
            );
        }
        update_row(
            tx,
            CUSTOMER,
            layout.customer(w, d, c),
            |r: &mut Customer| {
                r.c_balance += amount;
                r.c_delivery_cnt = r.c_delivery_cnt.wrapping_add(1);
            },
        )
        .await?;
    }
    Ok(())
}
