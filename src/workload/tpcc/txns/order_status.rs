//! Order-Status (clause 2.6.2).

use super::{customer_id, read_row};
use crate::protocol::Abort;
use crate::txn::TxnOps;
use crate::workload::tpcc::request::TpccRequest;
use crate::workload::tpcc::rows::{Customer, Order, OrderLine};
use crate::workload::tpcc::schema::{
    CUSTOMER, ORDER, ORDER_BY_CUSTOMER, ORDER_LINE, SENTINEL_ORDER_ID, order_customer_key,
};
use crate::workload::tpcc::workload::Tpcc;

/// Reads a customer (by id or last name), their most recent order (the greatest order id in
/// ORDER-by-customer: a phantom-safe `scan_last`) and its lines. Read-only.
pub(super) async fn run<Tx: TxnOps>(t: &Tpcc, tx: &mut Tx, req: &TpccRequest) -> Result<(), Abort> {
    let layout = &t.layout;
    let (w, d) = (req.w, req.d);
    let c = customer_id(t, w, d, req.customer);
    let _customer: Customer = read_row(tx, CUSTOMER, layout.customer(w, d, c)).await?;
    let range = order_customer_key(w, d, c, 0)..=order_customer_key(w, d, c, SENTINEL_ORDER_ID - 1);
    let Some((_, order_rid)) = tx.scan_last(ORDER_BY_CUSTOMER, range).await? else {
        return Ok(()); // a customer without orders (none at load; possible in a custom setup)
    };
    let order: Order = read_row(tx, ORDER, order_rid).await?;
    for n in 1..=order.o_ol_cnt {
        let _line: OrderLine = read_row(tx, ORDER_LINE, layout.order_line(order_rid, n)).await?;
    }
    Ok(())
}
