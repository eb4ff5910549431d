//! The inputs of the five transactions (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1), drawn by the
//! terminal (here: the worker) before the transaction runs and kept across its retries.

use super::mix::{TxnType, WarehouseBinding};
use super::random::{A_C_ID, A_C_LAST, A_OL_I_ID, NuRandConstants, nurand, uniform};
use super::schema::{
    CUSTOMERS_PER_DISTRICT, DISTRICTS_PER_WAREHOUSE, ITEMS, MAX_ORDER_LINES, MIN_ORDER_LINES,
    TpccConfig,
};
use crate::random::FastRng;

/// How a Payment or Order-Status names its customer (2.5.1.2, 2.6.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CustomerSelector {
    /// Not drawn yet (a request before its first `generate`).
    #[default]
    Unset,
    /// C_ID.
    Id(u32),
    /// The number of C_LAST (0..=999, see `random::last_name`).
    LastName(u16),
}

/// One order line's input (2.4.1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineInput {
    /// OL_I_ID; [`UNUSED_ITEM_ID`] for the rollback case.
    pub item: u32,
    /// OL_SUPPLY_W_ID.
    pub supply_w: u32,
    /// OL_QUANTITY (1..=10).
    pub quantity: u8,
}

/// An item id that names no item (2.4.1.4: "an unused value" for the 1% of New-Orders that roll
/// back).
pub const UNUSED_ITEM_ID: u32 = ITEMS as u32 + 1;

/// One transaction's input. Fields a type does not use keep their last values.
#[derive(Debug, Clone, Default)]
pub struct TpccRequest {
    /// Which transaction.
    pub ty: Option<TxnType>,
    /// Home warehouse W_ID.
    pub w: u32,
    /// District D_ID (New-Order, Payment, Order-Status, Stock-Level).
    pub d: u8,
    /// New-Order: C_ID. Payment / Order-Status: who.
    pub customer: CustomerSelector,
    /// Payment: the customer's warehouse and district (remote in 15% of Payments).
    pub c_w: u32,
    /// Payment: the customer's district.
    pub c_d: u8,
    /// Payment: H_AMOUNT in cents (1.00 ..= 5,000.00).
    pub amount: i64,
    /// New-Order: O_OL_CNT lines (5..=15), in `lines[..ol_cnt]`.
    pub ol_cnt: u8,
    /// New-Order: the lines.
    pub lines: [LineInput; MAX_ORDER_LINES as usize],
    /// Delivery: O_CARRIER_ID (1..=10).
    pub carrier: u8,
    /// Stock-Level: the threshold (10..=20).
    pub threshold: i16,
}

impl TpccRequest {
    /// The transaction type (set by the first [`generate`]).
    #[inline]
    pub fn txn_type(&self) -> TxnType {
        self.ty.expect("a generated request")
    }
}

/// Draws the next request of worker `worker` into `req`.
pub fn generate(
    config: &TpccConfig,
    c_run: &NuRandConstants,
    worker: usize,
    rng: &mut FastRng,
    req: &mut TpccRequest,
) {
    let warehouses = config.warehouses as u32;
    let ty = config.mix.pick(rng);
    req.ty = Some(ty);
    req.w = match config.binding {
        WarehouseBinding::Home => (worker as u32 % warehouses) + 1,
        WarehouseBinding::Random => uniform(rng, 1, u64::from(warehouses)) as u32,
    };
    req.d = uniform(rng, 1, DISTRICTS_PER_WAREHOUSE) as u8;
    match ty {
        TxnType::NewOrder => new_order(warehouses, c_run, rng, req),
        TxnType::Payment => payment(warehouses, c_run, rng, req),
        TxnType::OrderStatus => req.customer = customer(c_run, rng),
        TxnType::Delivery => req.carrier = uniform(rng, 1, 10) as u8,
        TxnType::StockLevel => req.threshold = uniform(rng, 10, 20) as i16,
    }
}

/// A warehouse other than `home`, uniformly (the "remote" warehouse of 2.4.1.5 and 2.5.1.2).
fn other_warehouse(warehouses: u32, home: u32, rng: &mut FastRng) -> u32 {
    debug_assert!(warehouses > 1);
    let offset = uniform(rng, 1, u64::from(warehouses) - 1) as u32;
    (home - 1 + offset) % warehouses + 1
}

/// 2.4.1: C_ID by NURand(1023), 5..=15 lines, items by NURand(8191), 1% remote supply
/// warehouses (when there is more than one), quantities 1..=10, and 1% of orders with an unused
/// item id on the last line.
fn new_order(warehouses: u32, c_run: &NuRandConstants, rng: &mut FastRng, req: &mut TpccRequest) {
    req.customer =
        CustomerSelector::Id(nurand(rng, A_C_ID, c_run.c_id, 1, CUSTOMERS_PER_DISTRICT) as u32);
    req.ol_cnt = uniform(rng, MIN_ORDER_LINES, MAX_ORDER_LINES) as u8;
    let rollback = uniform(rng, 1, 100) == 1;
    for n in 0..usize::from(req.ol_cnt) {
        let remote = warehouses > 1 && uniform(rng, 1, 100) == 1;
        req.lines[n] = LineInput {
            item: nurand(rng, A_OL_I_ID, c_run.ol_i_id, 1, ITEMS) as u32,
            supply_w: if remote {
                other_warehouse(warehouses, req.w, rng)
            } else {
                req.w
            },
            quantity: uniform(rng, 1, 10) as u8,
        };
    }
    if rollback {
        req.lines[usize::from(req.ol_cnt) - 1].item = UNUSED_ITEM_ID;
    }
}

/// 2.5.1: 85% home customer district, 15% a remote warehouse's (when there is more than one);
/// 60% by last name; amount 1.00 ..= 5,000.00.
fn payment(warehouses: u32, c_run: &NuRandConstants, rng: &mut FastRng, req: &mut TpccRequest) {
    if warehouses > 1 && uniform(rng, 1, 100) > 85 {
        req.c_w = other_warehouse(warehouses, req.w, rng);
        req.c_d = uniform(rng, 1, DISTRICTS_PER_WAREHOUSE) as u8;
    } else {
        req.c_w = req.w;
        req.c_d = req.d;
    }
    req.customer = customer(c_run, rng);
    req.amount = uniform(rng, 100, 500_000) as i64;
}

/// 2.5.1.2 / 2.6.1.2: 60% by last name (NURand(255) over 0..=999), 40% by id (NURand(1023)).
fn customer(c_run: &NuRandConstants, rng: &mut FastRng) -> CustomerSelector {
    if uniform(rng, 1, 100) <= 60 {
        CustomerSelector::LastName(nurand(rng, A_C_LAST, c_run.c_last, 0, 999) as u16)
    } else {
        CustomerSelector::Id(nurand(rng, A_C_ID, c_run.c_id, 1, CUSTOMERS_PER_DISTRICT) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpcc::mix::TpccMix;

    fn config(w: u64) -> TpccConfig {
        TpccConfig {
            warehouses: w,
            ..TpccConfig::default()
        }
    }

    fn draw(config: &TpccConfig, n: usize) -> Vec<TpccRequest> {
        let c = NuRandConstants::for_load(&mut FastRng::new(1));
        let mut rng = FastRng::new(2);
        (0..n)
            .map(|i| {
                let mut req = TpccRequest::default();
                generate(config, &c, i % 7, &mut rng, &mut req);
                req
            })
            .collect()
    }

    #[test]
    fn inputs_follow_the_spec_shares() {
        let reqs = draw(&config(4), 200_000);
        let new_orders: Vec<_> = reqs
            .iter()
            .filter(|r| r.txn_type() == TxnType::NewOrder)
            .collect();
        let rollbacks = new_orders
            .iter()
            .filter(|r| r.lines[usize::from(r.ol_cnt) - 1].item == UNUSED_ITEM_ID)
            .count() as f64
            / new_orders.len() as f64;
        assert!((0.005..0.015).contains(&rollbacks), "{rollbacks}");
        let lines: Vec<_> = new_orders
            .iter()
            .flat_map(|r| {
                r.lines[..usize::from(r.ol_cnt)]
                    .iter()
                    .map(move |l| (r.w, l))
            })
            .collect();
        let remote =
            lines.iter().filter(|(w, l)| l.supply_w != *w).count() as f64 / lines.len() as f64;
        assert!((0.007..0.013).contains(&remote), "{remote}");
        assert!(lines.iter().all(|(_, l)| (1..=10).contains(&l.quantity)));
        let payments: Vec<_> = reqs
            .iter()
            .filter(|r| r.txn_type() == TxnType::Payment)
            .collect();
        let remote =
            payments.iter().filter(|r| r.c_w != r.w).count() as f64 / payments.len() as f64;
        assert!((0.13..0.17).contains(&remote), "{remote}");
        let by_name = payments
            .iter()
            .filter(|r| matches!(r.customer, CustomerSelector::LastName(_)))
            .count() as f64
            / payments.len() as f64;
        assert!((0.57..0.63).contains(&by_name), "{by_name}");
        assert!(payments.iter().all(|r| (100..=500_000).contains(&r.amount)));
    }

    #[test]
    fn one_warehouse_is_never_remote_and_home_binding_follows_the_worker() {
        for r in draw(&config(1), 20_000) {
            assert_eq!(r.w, 1);
            assert!(
                r.lines[..usize::from(r.ol_cnt)]
                    .iter()
                    .all(|l| l.supply_w == 1)
            );
            if r.txn_type() == TxnType::Payment {
                assert_eq!((r.c_w, r.c_d), (1, r.d));
            }
        }
        let reqs = draw(&config(3), 21);
        for (i, r) in reqs.iter().enumerate() {
            assert_eq!(r.w, (i % 7) as u32 % 3 + 1);
        }
    }

    #[test]
    fn the_mix_decides_the_types() {
        let np = TpccConfig {
            mix: TpccMix::NP,
            ..config(2)
        };
        let reqs = draw(&np, 10_000);
        assert!(
            reqs.iter()
                .all(|r| matches!(r.txn_type(), TxnType::NewOrder | TxnType::Payment))
        );
    }
}
