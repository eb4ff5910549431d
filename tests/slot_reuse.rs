//! Reuse of slots freed by deletes (issue 13): TPC-C's NEW-ORDER retires the chunks of delivered
//! orders and reuses their memory for the orders placed next (`storage/retire.rs`), under
//! grace periods that wait for every transaction that might still read them
//! (`storage/grace.rs`).
//!
//! Chunks of 512 bytes (a few rows each) make retirement and reuse happen many times within a
//! short run, beside Order-Status and Stock-Level scans and Delivery's own scans of the rows
//! being retired, at high contention (one warehouse, six workers on two cores). Each run is
//! checked (serializability and TPC-C's consistency conditions) and must have reused chunks,
//! so it cannot pass without exercising reuse.

use clap::Parser;
use txbench::check;
use txbench::config::{Cli, Command, RunConfig};
use txbench::exec::run_threads;
use txbench::protocol::Protocol;
use txbench::protocol::mvto::Mvto;
use txbench::protocol::silo::Silo;
use txbench::protocol::twopl::NoWait;
use txbench::storage::Database;
use txbench::workload::Workload;
use txbench::workload::WorkloadConfig;
use txbench::workload::tpcc::Tpcc;
use txbench::workload::tpcc::schema::NEW_ORDER;

/// Bytes per chunk of the tables that grow: 8 NEW-ORDER rows of a 64-byte stride, 4 of 128.
const CHUNK_BYTES: usize = 512;

/// `txbench run ARGS`, validated.
fn config(args: &[&str]) -> RunConfig {
    let cli = Cli::parse_from(["txbench", "run"].iter().chain(args));
    let Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    run.validate().expect("valid flags")
}

/// The run's configuration: Delivery beside the scanning transactions, checked.
fn contended(protocol: &str) -> RunConfig {
    config(&[
        "-p",
        protocol,
        "--workload",
        "tpcc",
        "--mix",
        "new_order=40,delivery=30,order_status=15,stock_level=15",
        "-t",
        "6",
        "-d",
        "0.5",
        "--warmup",
        "0",
        "--tpcc-spare-orders",
        "20000",
        "--check",
    ])
}

/// Runs `protocol` on a checked TPC-C database with small chunks, checks it, and returns the
/// NEW-ORDER chunks reused.
fn run_with_reuse<P: Protocol>(name: &str, protocol: P, cfg: &RunConfig) -> u64 {
    let WorkloadConfig::Tpcc(c) = &cfg.workload else {
        unreachable!("a TPC-C run")
    };
    let w = Tpcc::new(c.clone());
    let db: Database<P::RecordMeta> = Database::try_build_growable_chunked(
        &w.tables(),
        &w.indexes(),
        true,
        &w.growable_tables(),
        CHUNK_BYTES,
    )
    .expect("fits");
    w.load(&db);
    db.stamp_loaded_rows();
    let outcome = run_threads(&protocol, &db, &w, &cfg.exec);
    let commits: u64 = outcome
        .workers
        .iter()
        .flat_map(|s| s.types.iter())
        .map(|t| t.commits)
        .sum();
    assert!(commits > 0, "{name}: nothing committed");
    let report = check::check(&outcome.histories);
    assert!(report.is_serializable(), "{name}: {report:?}");
    let consistency = w
        .check_consistency(&db)
        .expect("TPC-C checks its conditions");
    assert!(consistency.is_consistent(), "{name}: {consistency:?}");
    let stats = db
        .table(NEW_ORDER)
        .retirement_stats()
        .expect("NEW-ORDER retires its deleted slots");
    assert!(
        stats.chunks_reused > 0 && stats.chunks_retired >= stats.chunks_reused,
        "{name}: {stats:?}"
    );
    stats.chunks_reused
}

#[test]
fn single_version_optimistic_reuses_retired_chunks_serializably() {
    let cfg = contended("silo");
    run_with_reuse("silo", Silo::new(&cfg.options), &cfg);
}

#[test]
fn two_phase_locking_reuses_retired_chunks_serializably() {
    let cfg = contended("no_wait");
    let p = NoWait::new(&cfg.options).expect("few workers");
    run_with_reuse("no_wait", p, &cfg);
}

#[test]
fn multi_version_reuses_retired_chunks_serializably() {
    // Deleted rows leave the index only once every older snapshot ended, and only then are
    // their slots retired.
    let cfg = contended("mvto");
    run_with_reuse("mvto", Mvto::new(&cfg.options), &cfg);
}
