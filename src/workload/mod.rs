//! Workloads: what tables exist, how they are loaded, and which transactions run against them.
//!
//! A workload generates each worker's next request locally (no shared generator, no pre-generated
//! query list) and runs it as an `async` program over the [`Txn`] handle, which is all it ever sees
//! of the engine: it cannot reach into storage or protocol metadata (unlike DBx1000's YCSB, which
//! writes shared rows directly for every protocol).

pub mod long_scan;
pub mod tpcc;
pub mod write_skew;
pub mod ycsb;

use crate::protocol::{Abort, Protocol};
use crate::random::FastRng;
use crate::storage::{Database, IndexSpec, TableSpec};
use crate::txn::Txn;
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
        }
    }

    /// The ordered indexes the workload will create (what [`Workload::indexes`] returns).
    pub fn indexes(&self) -> Vec<IndexSpec> {
        match self {
            WorkloadConfig::Tpcc(c) => c.indexes(),
            WorkloadConfig::Ycsb(_) | WorkloadConfig::LongScan(_) => Vec::new(),
            WorkloadConfig::WriteSkew(_) => Vec::new(),
        }
    }
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

    /// Warnings about the run just finished (e.g. capacity the workload ran out of), for the
    /// user; none by default.
    fn after_run(&self) -> Vec<String> {
        Vec::new()
    }

    /// Runs `req` as one transaction attempt (the executor commits or aborts afterwards).
    fn run<'a, 'db, P: Protocol>(
        &'a self,
        tx: &'a mut Txn<'db, P>,
        req: &'a Self::Request,
    ) -> impl Future<Output = Result<(), Abort>> + 'a;
}
