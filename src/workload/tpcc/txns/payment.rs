//! Payment (clause 2.5.2).

use super::{customer_id, fill, update_row};
use crate::protocol::Abort;
use crate::txn::TxnOps;
use crate::workload::tpcc::request::TpccRequest;
use crate::workload::tpcc::rows::{Customer, District, FixedStr, History, Warehouse};
use crate::workload::tpcc::schema::{CUSTOMER, DISTRICT, HISTORY, WAREHOUSE};
use crate::workload::tpcc::workload::Tpcc;
use std::io::Write;

/// Records a payment of `amount` by a customer (of the home district, or a remote one in 15% of
/// cases) to district `(w, d)`: adds it to W_YTD and D_YTD, takes it off the customer's balance
/// (prepending the payment to C_DATA for bad-credit customers), and inserts a HISTORY row.
pub(super) async fn run<Tx: TxnOps>(t: &Tpcc, tx: &mut Tx, req: &TpccRequest) -> Result<(), Abort> {
    let layout = &t.layout;
    let (w, d, amount) = (req.w, req.d, req.amount);
    let w_name = update_row(tx, WAREHOUSE, layout.warehouse(w), |r: &mut Warehouse| {
        r.w_ytd += amount;
        r.w_name
    })
    .await?;
    let d_name = update_row(tx, DISTRICT, layout.district(w, d), |r: &mut District| {
        r.d_ytd += amount;
        r.d_name
    })
    .await?;
    let (c_w, c_d) = (req.c_w, req.c_d);
    let c = customer_id(t, c_w, c_d, req.customer);
    update_row(
        tx,
        CUSTOMER,
        layout.customer(c_w, c_d, c),
        |r: &mut Customer| {
            r.c_balance -= amount;
            r.c_ytd_payment += amount;
            r.c_payment_cnt = r.c_payment_cnt.wrapping_add(1);
            if r.c_credit.as_bytes() == b"BC" {
                r.c_data =
                    prepend_payment(&r.c_data, [c, u32::from(c_d), c_w, u32::from(d), w], amount);
            }
        },
    )
    .await?;
    let Some(rid) = t.history_slot(w, d) else {
        t.note_exhausted();
        return Err(Abort::User);
    };
    if !tx.reserve(HISTORY, rid) {
        t.note_storage_full();
        return Err(Abort::User);
    }
    let mut h_data = [0u8; 24];
    let name_len = w_name.len();
    h_data[..name_len].copy_from_slice(w_name.as_bytes());
    h_data[name_len..name_len + 4].copy_from_slice(b"    ");
    h_data[name_len + 4..name_len + 4 + d_name.len()].copy_from_slice(d_name.as_bytes());
    let history = History {
        h_c_id: c,
        h_c_d_id: c_d,
        h_c_w_id: c_w,
        h_d_id: d,
        h_w_id: w,
        h_date: t.now,
        h_amount: amount as i32,
        h_data: FixedStr::new(&h_data[..name_len + 4 + d_name.len()]),
    };
    // A blind write: the slot was handed to this attempt alone (`Tpcc::history_slot`).
    tx.write_with(HISTORY, rid, fill(&history)).await
}

/// C_DATA with "C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT" in front, cut to 500 characters
/// (2.5.2.2).
fn prepend_payment(old: &FixedStr<500>, ids: [u32; 5], amount: i64) -> FixedStr<500> {
    let mut buf = [0u8; 500];
    let mut cursor = &mut buf[..];
    let [c, c_d, c_w, d, w] = ids;
    // Writing into a slice fails only when it is full, which is the truncation we want.
    let _ = write!(
        cursor,
        "{c} {c_d} {c_w} {d} {w} {}.{:02} ",
        amount / 100,
        amount % 100
    );
    let _ = cursor.write_all(old.as_bytes());
    let len = 500 - cursor.len();
    FixedStr::new(&buf[..len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payment_goes_in_front_and_the_tail_is_cut() {
        let old = FixedStr::<500>::new(&[b'x'; 500]);
        let new = prepend_payment(&old, [7, 1, 2, 3, 4], 12_345);
        let text = new.to_string_lossy();
        assert!(text.starts_with("7 1 2 3 4 123.45 xxx"), "{text}");
        assert_eq!(new.len(), 500);
    }
}
