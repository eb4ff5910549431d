//! The five TPC-C transactions (clauses 2.4 to 2.8), one file each, as `async` programs over
//! [`TxnOps`]. They compute what the spec has them read and write; the terminal output the spec
//! describes (screens of results) is not produced.
//!
//! Rows are decoded from the payload, changed and encoded back inside one read-modify-write
//! ([`update_row`]), so a locking protocol locks each row once, exclusively, for an update.

mod delivery;
mod new_order;
mod order_status;
mod payment;
mod stock_level;

use super::mix::TxnType;
use super::request::{CustomerSelector, TpccRequest};
use super::rows::Row;
use super::workload::Tpcc;
use crate::protocol::Abort;
use crate::storage::{RecordId, TableId};
use crate::txn::TxnOps;

/// Runs `req` as one attempt.
pub(super) async fn run<Tx: TxnOps>(t: &Tpcc, tx: &mut Tx, req: &TpccRequest) -> Result<(), Abort> {
    match req.txn_type() {
        TxnType::NewOrder => new_order::run(t, tx, req).await,
        TxnType::Payment => payment::run(t, tx, req).await,
        TxnType::OrderStatus => order_status::run(t, tx, req).await,
        TxnType::Delivery => delivery::run(t, tx, req).await,
        TxnType::StockLevel => stock_level::run(t, tx, req).await,
    }
}

/// Reads and decodes a row.
async fn read_row<Tx: TxnOps, R: Row>(
    tx: &mut Tx,
    table: TableId,
    rid: RecordId,
) -> Result<R, Abort> {
    Ok(R::decode(tx.read(table, rid).await?))
}

/// Reads and decodes a row at read committed (not kept stable until commit).
async fn read_row_committed<Tx: TxnOps, R: Row>(
    tx: &mut Tx,
    table: TableId,
    rid: RecordId,
) -> Result<R, Abort> {
    Ok(R::decode(tx.read_committed(table, rid).await?))
}

/// Reads a row, lets `change` edit it, writes it back (one read-modify-write), and returns what
/// `change` returned.
async fn update_row<Tx: TxnOps, R: Row, T>(
    tx: &mut Tx,
    table: TableId,
    rid: RecordId,
    change: impl FnOnce(&mut R) -> T,
) -> Result<T, Abort> {
    tx.update(table, rid, |bytes| {
        let mut row = R::decode(bytes);
        let out = change(&mut row);
        row.encode(bytes);
        out
    })
    .await
}

/// Encodes `row` into a payload-sized buffer (the fill of a new row's write).
fn fill<R: Row>(row: &R) -> impl FnOnce(&mut [u8]) + '_ {
    move |bytes| row.encode(bytes)
}

/// The C_ID a Payment or Order-Status names: by id, or by last name the customer at position
/// ceil(n / 2) of the n customers with that name sorted by C_FIRST (2.5.2.2, 2.6.2.2). The
/// last-name index is static (names never change), so the lookup needs no protection.
pub(super) fn customer_id(t: &Tpcc, w: u32, d: u8, who: CustomerSelector) -> u32 {
    match who {
        CustomerSelector::Id(c) => c,
        CustomerSelector::LastName(name) => {
            let ids = t.customers_by_last_name().get(w, d, name);
            // The loader names customers 1..=1000 with every name once, so none is empty.
            ids[(ids.len() - 1) / 2]
        }
        CustomerSelector::Unset => unreachable!("a generated request names its customer"),
    }
}

/// The abort for a row that the transaction's own earlier read said was there, gone when it
/// deletes it: only an optimistic protocol's read phase can see that (another Delivery took the
/// order meanwhile), and that attempt would fail its read validation at commit, so it stops now
/// with the same reason.
fn stale_read() -> Abort {
    Abort::ReadValidation
}
