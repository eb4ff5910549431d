//! Workloads: what tables exist, how they are loaded, and which transactions run against them.
//!
//! A workload generates each worker's next request locally (no shared generator, no pre-generated
//! query list) and runs it as an `async` program over a [`TxnOps`] handle (the local
//! [`Txn`](crate::txn::Txn), or a remote session's), which is all it ever sees
//! of the engine: it cannot reach into storage or protocol metadata (unlike DBx1000's YCSB, which
//! writes shared rows directly for every protocol).

pub mod distinct_keys;
mod hot_and_large;
pub mod key_index;
pub mod long_scan;
pub mod shifting;
pub mod tpcc;
pub mod write_skew;
pub mod ycsb;

use crate::protocol::{Abort, AccessSet};
use crate::random::FastRng;
use crate::storage::{Database, IndexSpec, TableSpec};
use crate::txn::TxnOps;
use serde::Serialize;
use std::future::Future;

/// The parameters of whichever workload a run uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum WorkloadConfig {
    /// YCSB.
    Ycsb(ycsb::YcsbConfig),
    /// MOCC's long-scan workload.
    LongScan(long_scan::LongScanConfig),
    /// TPC-C.
    Tpcc(tpcc::TpccConfig),
    /// Pairs of records with a constraint over both (`write_skew`).
    WriteSkew(write_skew::WriteSkewConfig),
    /// MOCC's multi-table, shifting workload (`shifting`).
    Shifting(shifting::ShiftingConfig),
}

impl WorkloadConfig {
    /// The tables the workload will allocate (what [`Workload::tables`] returns), known before
    /// anything is built: configuration sizes a run's memory with it.
    pub fn tables(&self) -> Vec<TableSpec> {
        match self {
            WorkloadConfig::Ycsb(c) => c.tables(),
            WorkloadConfig::LongScan(c) => c.tables(),
            WorkloadConfig::Tpcc(c) => c.tables(),
            WorkloadConfig::WriteSkew(c) => c.tables(),
            WorkloadConfig::Shifting(c) => c.tables(),
        }
    }

    /// Estimated bytes of the key indexes the workload builds outside the database (YCSB's and
    /// long-scan's `--index`; nothing for the dense array), for memory validation.
    pub fn key_index_bytes(&self) -> u128 {
        match self {
            WorkloadConfig::Ycsb(c) => {
                u128::from(c.records) * c.index.estimated_bytes_per_key() as u128
            }
            WorkloadConfig::LongScan(c) => {
                u128::from(c.records + c.hot_records) * c.index.estimated_bytes_per_key() as u128
            }
            WorkloadConfig::Tpcc(_)
            | WorkloadConfig::WriteSkew(_)
            | WorkloadConfig::Shifting(_) => 0,
        }
    }

    /// Why this workload's transactions may abort by their own logic (`Abort::User`), with
    /// what would work; `None` when they never do. Configuration rejects protocols whose
    /// uncommitted writes are visible (2PL with early release) on such a workload.
    pub fn user_aborts(&self) -> Option<String> {
        match self {
            WorkloadConfig::Ycsb(_)
            | WorkloadConfig::LongScan(_)
            | WorkloadConfig::WriteSkew(_)
            | WorkloadConfig::Shifting(_) => None,
            // Every mix that can declare access sets (--mix np) runs New-Order; and Payment
            // aborts too once a district's HISTORY slots run out.
            WorkloadConfig::Tpcc(_) => Some(
                "TPC-C's New-Order rolls back 1% of its orders (an invalid item) and Payment \
                 aborts when a district's history slots run out; --workload ycsb or long-scan \
                 have no user aborts"
                    .to_string(),
            ),
        }
    }

    /// Why this workload, as configured, cannot declare its requests' access sets before they
    /// run (what [`Workload::declares_access_sets`] answers), with what would work; `None` when
    /// it can. Configuration rejects a deterministic protocol on such a workload before any
    /// work.
    pub fn cannot_declare(&self) -> Option<String> {
        match self {
            WorkloadConfig::Ycsb(_)
            | WorkloadConfig::LongScan(_)
            | WorkloadConfig::WriteSkew(_)
            | WorkloadConfig::Shifting(_) => None,
            WorkloadConfig::Tpcc(c) => c.cannot_declare(),
        }
    }

    /// The ordered indexes the workload will create (what [`Workload::indexes`] returns).
    pub fn indexes(&self) -> Vec<IndexSpec> {
        match self {
            WorkloadConfig::Tpcc(c) => c.indexes(),
            WorkloadConfig::Ycsb(_) | WorkloadConfig::LongScan(_) => Vec::new(),
            WorkloadConfig::WriteSkew(_) | WorkloadConfig::Shifting(_) => Vec::new(),
        }
    }
}

/// What [`Workload::rebuild_after_recovery`] did to a recovered database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Rebuilt {
    /// Index entries entered for recovered rows that the load's entries did not cover.
    pub entries_added: u64,
    /// Index entries taken out: their rows are deleted (or were never written) in the
    /// recovered state.
    pub entries_removed: u64,
    /// Slots of growing tables retired: their rows are deleted for good in the recovered
    /// state (`storage/retire.rs`).
    pub slots_retired: u64,
    /// Counters outside the tables set from the recovered rows (TPC-C: each district's next
    /// HISTORY slot).
    pub counters_set: u64,
}

/// A benchmark workload.
pub trait Workload: Sync {
    /// One transaction's parameters, generated before it runs and kept across its retries.
    type Request: Send;

    /// Short name for reports (`ycsb`, `tpcc`).
    fn name(&self) -> &'static str;

    /// The tables this workload needs.
    fn tables(&self) -> Vec<TableSpec>;

    /// The ordered indexes this workload needs (none by default). Each must hold a present
    /// record at [`END_SENTINEL_KEY`](crate::storage::END_SENTINEL_KEY) once loaded.
    fn indexes(&self) -> Vec<IndexSpec> {
        Vec::new()
    }

    /// Populates the tables (called once, before any worker starts).
    fn load<M: Sync>(&self, db: &Database<M>);

    /// The tables that grow as rows are inserted (`storage`, "Tables that grow"): only their
    /// chunk directories are allocated up front, so their [`TableSpec::records`] is a capacity
    /// that costs 8 bytes per chunk until used. None by default: every table is allocated whole.
    fn growable_tables(&self) -> Vec<crate::storage::TableId> {
        Vec::new()
    }

    /// An empty request to be filled by [`Workload::generate`] (allocated once per worker).
    fn new_request(&self) -> Self::Request;

    /// Fills `req` with the next transaction of worker `worker` (workloads that bind workers to
    /// a partition, like TPC-C's home warehouse, use it).
    fn generate(&self, worker: usize, rng: &mut FastRng, req: &mut Self::Request);

    /// Names of the transaction types this workload reports separately (at least one).
    fn txn_types(&self) -> &'static [&'static str];

    /// Which of [`Workload::txn_types`] `req` is.
    fn txn_type(&self, req: &Self::Request) -> usize;

    /// Whether `req` runs as a read-only transaction: its program never writes, inserts or
    /// deletes. Told to the protocol at every attempt's `begin`
    /// ([`AttemptStart::read_only`](crate::protocol::AttemptStart)), where it may choose a cheaper
    /// path (PLOR's optimistic reads). Answer `true` only when the request alone guarantees it;
    /// `false` (the default) is always safe.
    fn is_read_only(&self, _req: &Self::Request) -> bool {
        false
    }

    /// Checks the database's consistency after a run (`--check`), when the workload defines
    /// conditions for it (TPC-C's clause 3.3.2); `None` by default.
    fn check_consistency<M: Sync>(&self, _db: &Database<M>) -> Option<tpcc::ConsistencyReport> {
        None
    }

    /// Makes `db`, a database this workload loaded and recovery then replayed a log into
    /// (`crate::log::recover`: every table's rows as of the durable frontier), ready to run
    /// transactions: rebuilds, from the recovered rows, what the log does not hold (the log
    /// holds rows only): the ordered indexes' entries, the slots of growing tables deleted for
    /// good, and counters the workload keeps outside its tables. Called once, after the replay
    /// and before any transaction runs (a restarted `serve --log`, `txbench recover`). Nothing
    /// by default: a workload with no indexes and no state outside its rows needs nothing.
    fn rebuild_after_recovery<M: Sync>(&self, _db: &Database<M>) -> Rebuilt {
        Rebuilt::default()
    }

    /// Told just before the workers start that the run (warm-up and measured period) lasts
    /// `length`: a workload that pauses inside its transactions (YCSB's
    /// `--long-txn-delay-us`) ends every pause by then, so that no pause, not even one of a
    /// retry after the stop, runs past the run's end. Nothing by default.
    fn run_starts(&self, _length: std::time::Duration) {}

    /// Warnings about the run just finished (e.g. capacity the workload ran out of), for the
    /// user; none by default.
    fn after_run(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether [`Workload::declare`] can state every request's access set before it runs
    /// (`protocol::declared`); otherwise why not, and what would work. No workload declares by
    /// default.
    fn declares_access_sets(&self) -> Result<(), String> {
        Err(format!(
            "workload {} does not declare its transactions' access sets",
            self.name()
        ))
    }

    /// States into the empty `set` every record `req`'s program may access, read or written
    /// (and the ranges a declared write covers), before the program runs. Called only when
    /// [`Workload::declares_access_sets`] is `Ok`, once per transaction (retries keep the set).
    /// Check mode enforces the set: an access outside it panics naming the access.
    fn declare(&self, _req: &Self::Request, _set: &mut AccessSet) {
        panic!(
            "workload {} cannot declare access sets (configuration rejects deterministic \
             protocols for it)",
            self.name()
        )
    }

    /// Runs `req` as one transaction attempt (the executor commits or aborts afterwards).
    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a Self::Request,
    ) -> impl Future<Output = Result<(), Abort>> + 'a;
}
