//! [`Tpcc`]: the TPC-C workload (tables, indexes, loader, request generation, the five
//! transactions) behind the engine's `Workload` trait, so every protocol runs it unchanged.

use super::consistency::{ConsistencyReport, check_consistency};
use super::customer_index::CustomersByLastName;
use super::load::{LoadParams, load};
use super::mix::TXN_NAMES;
use super::random::NuRandConstants;
use super::request::{TpccRequest, generate};
use super::schema::{DISTRICTS_PER_WAREHOUSE, INITIAL_ORDERS_PER_DISTRICT, TpccConfig, TpccLayout};
use super::txns;
use crate::protocol::{Abort, AccessSet};
use crate::random::FastRng;
use crate::storage::{Database, IndexSpec, RecordId, TableId, TableSpec};
use crate::txn::TxnOps;
use crate::workload::{Rebuilt, Workload};
use crossbeam_utils::CachePadded;
use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Seed of the load: every run loads the same database (dates aside).
pub const LOAD_SEED: u64 = 0x007c_c0de;
/// Seed of the run-time NURand constants (C-Run), derived from C-Load per clause 2.1.6.1.
const RUN_CONSTANTS_SEED: u64 = 0x007c_c0de_5eed;

/// The TPC-C workload for one configuration.
pub struct Tpcc {
    pub(super) config: TpccConfig,
    pub(super) layout: TpccLayout,
    /// C-Run: the NURand constants transactions draw with.
    c_run: NuRandConstants,
    /// CUSTOMER by last name, built by the first load (every load builds the same one: names
    /// depend on the seed only).
    customers_by_last_name: OnceLock<CustomersByLastName>,
    /// Next HISTORY slot of each district (Payment inserts one row): HISTORY has no key, so its
    /// rows go to slots handed out in order, outside any transaction. One counter per district,
    /// written only by Payments of that district (which also write the district row); padded so
    /// that Payments of neighbouring districts do not share a line.
    next_history: Box<[CachePadded<AtomicU64>]>,
    /// Transactions that found their district's spare order or history slots used up and did
    /// nothing (user-aborted); reported after the run.
    exhausted: AtomicU64,
    /// Transactions that found a table unable to grow (its chunk refused by the table memory
    /// cap) and did nothing (user-aborted); the run stops early when that happens.
    storage_full: AtomicU64,
    /// "Current date and time" written into O_ENTRY_D, OL_DELIVERY_D and H_DATE (seconds since
    /// the epoch, fixed when the workload is created: dates are not measured).
    pub(super) now: u64,
}

impl Tpcc {
    /// The workload for a validated configuration.
    pub fn new(config: TpccConfig) -> Tpcc {
        let c_load = NuRandConstants::for_load(&mut FastRng::new(LOAD_SEED));
        let c_run = NuRandConstants::for_run(&c_load, &mut FastRng::new(RUN_CONSTANTS_SEED));
        let districts = (config.warehouses * DISTRICTS_PER_WAREHOUSE) as usize;
        Tpcc {
            layout: config.layout(),
            c_run,
            customers_by_last_name: OnceLock::new(),
            next_history: (0..districts)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            exhausted: AtomicU64::new(0),
            storage_full: AtomicU64::new(0),
            now: LoadParams::new(LOAD_SEED).now,
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TpccConfig {
        &self.config
    }

    /// Transactions of the last run that found their district's spare slots used up (see
    /// [`TpccConfig::spare_orders_per_district`]); nonzero means the run needs more spare slots.
    pub fn exhausted(&self) -> u64 {
        self.exhausted.load(Ordering::Relaxed)
    }

    /// Notes a transaction that ran out of slots.
    pub(super) fn note_exhausted(&self) {
        // Relaxed: a statistic read after the workers are joined.
        self.exhausted.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a transaction whose rows found no memory to grow into.
    pub(super) fn note_storage_full(&self) {
        // Relaxed: a statistic read after the workers are joined.
        self.storage_full.fetch_add(1, Ordering::Relaxed);
    }

    /// CUSTOMER by last name (available once loaded).
    pub(super) fn customers_by_last_name(&self) -> &CustomersByLastName {
        self.customers_by_last_name
            .get()
            .expect("the workload is loaded before it runs")
    }

    /// A fresh HISTORY slot of district `(w, d)`, or `None` when its slots are used up. A slot
    /// handed to an attempt that aborts stays vacant.
    pub(super) fn history_slot(&self, w: u32, d: u8) -> Option<RecordId> {
        let slot = self.layout.district_slot(w, d) as usize;
        // Relaxed: the counter only makes slots unique; the row is published by the protocol.
        let k = self.next_history[slot].fetch_add(1, Ordering::Relaxed);
        self.layout.history(w, d, k)
    }

    /// Sets district `(w, d)`'s next HISTORY slot (a recovered database's, `rebuild.rs`).
    pub(super) fn set_next_history(&self, w: u32, d: u8, next: u64) {
        let slot = self.layout.district_slot(w, d) as usize;
        // Relaxed: set before any worker starts (thread spawn synchronises), as `load` does.
        self.next_history[slot].store(next, Ordering::Relaxed);
    }

    /// District `(w, d)`'s next HISTORY slot: the `k` of the row the next Payment of the
    /// district inserts ([`TpccLayout::history`]), unless that attempt aborts.
    pub fn next_history(&self, w: u32, d: u8) -> u64 {
        let slot = self.layout.district_slot(w, d) as usize;
        // Relaxed: a snapshot of a counter that only makes slots unique.
        self.next_history[slot].load(Ordering::Relaxed)
    }
}

impl Workload for Tpcc {
    type Request = TpccRequest;

    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn tables(&self) -> Vec<TableSpec> {
        self.config.tables()
    }

    fn indexes(&self) -> Vec<IndexSpec> {
        self.config.indexes()
    }

    fn load<M: Sync>(&self, db: &Database<M>) {
        let loaded = load(db, &self.config, &LoadParams::new(LOAD_SEED));
        // Every load builds the same index (same seed); the first one is kept.
        let _ = self
            .customers_by_last_name
            .set(loaded.customers_by_last_name);
        for next in self.next_history.iter() {
            // Relaxed: workers start after the load returns (thread spawn synchronises).
            next.store(INITIAL_ORDERS_PER_DISTRICT, Ordering::Relaxed);
        }
        self.exhausted.store(0, Ordering::Relaxed);
        self.storage_full.store(0, Ordering::Relaxed);
    }

    /// The indexes, NEW-ORDER's retired slots and the HISTORY counters, from the recovered
    /// rows (`rebuild.rs`).
    fn rebuild_after_recovery<M: Sync>(&self, db: &Database<M>) -> Rebuilt {
        self.rebuild(db)
    }

    fn growable_tables(&self) -> Vec<TableId> {
        TpccConfig::GROWING_TABLES.to_vec()
    }

    fn new_request(&self) -> TpccRequest {
        TpccRequest::default()
    }

    fn generate(&self, worker: usize, rng: &mut FastRng, req: &mut TpccRequest) {
        generate(&self.config, &self.c_run, worker, rng, req);
    }

    fn txn_types(&self) -> &'static [&'static str] {
        &TXN_NAMES
    }

    fn txn_type(&self, req: &TpccRequest) -> usize {
        req.txn_type() as usize
    }

    /// Order-Status and Stock-Level (clauses 2.6 and 2.8).
    fn is_read_only(&self, req: &TpccRequest) -> bool {
        req.txn_type().is_read_only()
    }

    /// The NP mix declares (`declare.rs` says how, and why New-Order's cover is exact); a mix
    /// with Order-Status, Delivery or Stock-Level does not.
    fn declares_access_sets(&self) -> Result<(), String> {
        self.config.cannot_declare().map_or(Ok(()), Err)
    }

    fn declare(&self, req: &TpccRequest, set: &mut AccessSet) {
        self.declare_request(req, set);
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a TpccRequest,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        txns::run(self, tx, req)
    }

    fn check_consistency<M: Sync>(&self, db: &Database<M>) -> Option<ConsistencyReport> {
        Some(check_consistency(db, &self.config))
    }

    fn after_run(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        // Relaxed: read after the workers are joined.
        let full = self.storage_full.load(Ordering::Relaxed);
        if full > 0 {
            warnings.push(format!(
                "{full} TPC-C transactions found no memory for the rows they insert and did \
                 nothing (counted as user aborts)"
            ));
        }
        let n = self.exhausted();
        if n == 0 {
            return warnings;
        }
        warnings.push(format!(
            "{n} TPC-C transactions found their district's spare order or history slots used up \
             and did nothing (counted as user aborts); rerun with a larger --tpcc-spare-orders \
             (now {})",
            self.config.spare_orders_per_district
        ));
        warnings
    }
}
