//! Stock-Level (clause 2.8.2).

use super::{read_row, read_row_committed};
use crate::protocol::Abort;
use crate::storage::{RecordId, TableId};
use crate::txn::TxnOps;
use crate::workload::tpcc::mix::StockLevelIsolation;
use crate::workload::tpcc::request::TpccRequest;
use crate::workload::tpcc::rows::{District, Order, OrderLine, Row, Stock};
use crate::workload::tpcc::schema::{DISTRICT, MAX_ORDER_LINES, ORDER, ORDER_LINE, STOCK};
use crate::workload::tpcc::workload::Tpcc;

/// Orders Stock-Level looks back over.
const RECENT_ORDERS: u32 = 20;

/// Counts the distinct items of district `(w, d)`'s last 20 orders whose stock at `w` is below
/// the threshold. The order lines are found by arithmetic from D_NEXT_O_ID (orders below it
/// exist, and the district read protects the range), so no index scan is needed. Read-only; at
/// `--stock-level-isolation read-committed` every read is a read-committed read (2.8.2.3
/// requires only that), otherwise the reads are serializable like any transaction's.
pub(super) async fn run<Tx: TxnOps>(t: &Tpcc, tx: &mut Tx, req: &TpccRequest) -> Result<(), Abort> {
    let layout = &t.layout;
    let (w, d) = (req.w, req.d);
    let committed = t.config.stock_level == StockLevelIsolation::ReadCommitted;
    let district: District = read(tx, DISTRICT, layout.district(w, d), committed).await?;
    let next = district.d_next_o_id;
    let mut items = [0u32; RECENT_ORDERS as usize * MAX_ORDER_LINES as usize];
    let mut n_items = 0;
    for o_id in next.saturating_sub(RECENT_ORDERS).max(1)..next {
        let order_rid = layout
            .order(w, d, o_id)
            .expect("orders below D_NEXT_O_ID fit");
        let order: Order = read(tx, ORDER, order_rid, committed).await?;
        for n in 1..=order.o_ol_cnt {
            let line: OrderLine =
                read(tx, ORDER_LINE, layout.order_line(order_rid, n), committed).await?;
            items[n_items] = line.ol_i_id;
            n_items += 1;
        }
    }
    let items = &mut items[..n_items];
    items.sort_unstable();
    let mut low_stock = 0;
    let mut last = 0;
    for &item in items.iter() {
        if item == last {
            continue;
        }
        last = item;
        let stock: Stock = read(tx, STOCK, layout.stock(w, item), committed).await?;
        low_stock += u32::from(stock.s_quantity < req.threshold);
    }
    let _ = low_stock; // the terminal's output
    Ok(())
}

async fn read<Tx: TxnOps, R: Row>(
    tx: &mut Tx,
    table: TableId,
    rid: RecordId,
    committed: bool,
) -> Result<R, Abort> {
    if committed {
        read_row_committed(tx, table, rid).await
    } else {
        read_row(tx, table, rid).await
    }
}
