//! Tables that grow (issue 13): TPC-C's ORDER, NEW-ORDER, ORDER-LINE and HISTORY allocate their
//! chunks as rows are inserted. A run whose inserts pass the table memory cap stops early and
//! cleanly, with its results so far (checked: still serializable and consistent); and scans over
//! growing tables, concurrent with Delivery's deletes and New-Order's inserts, stay serializable
//! and keep TPC-C's conditions.

use clap::Parser;
use txbench::config::{Cli, Command, RunConfig};
use txbench::protocol::Protocol;
use txbench::protocol::silo::Silo;
use txbench::runner::run_all;
use txbench::storage::Database;
use txbench::workload::Workload;
use txbench::workload::tpcc::Tpcc;

/// `txbench run ARGS`, validated.
fn config(args: &[&str]) -> RunConfig {
    let cli = Cli::parse_from(["txbench", "run"].iter().chain(args));
    let Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    run.validate().expect("valid flags")
}

/// Bytes a checked Silo TPC-C database of `cfg` holds once loaded.
fn loaded_bytes(cfg: &RunConfig) -> u64 {
    let txbench::workload::WorkloadConfig::Tpcc(c) = &cfg.workload else {
        unreachable!("a TPC-C run")
    };
    let w = Tpcc::new(c.clone());
    let db: Database<<Silo as Protocol>::RecordMeta> =
        Database::try_build_growable(&w.tables(), &w.indexes(), true, &w.growable_tables())
            .expect("fits");
    w.load(&db);
    db.memory_bytes() as u64
}

#[test]
fn a_run_past_the_table_memory_cap_stops_early_with_its_results() {
    let duration = 30.0;
    let mut cfg = config(&[
        "-p",
        "silo",
        "--workload",
        "tpcc",
        "--mix",
        "np",
        "-t",
        "2",
        "-d",
        "30",
        "--warmup",
        "0",
        "--check",
    ]);
    // Room for a few chunks of growth: the run fills them within a fraction of a second.
    cfg.table_memory_bytes = loaded_bytes(&cfg) + (3 << 20);
    let reports = run_all(&cfg, |_| {}).expect("the tables fit");
    let r = &reports[0];
    assert!(r.commits > 0, "it ran");
    assert!(
        r.measured_s < duration / 2.0,
        "stopped early: {} s measured",
        r.measured_s
    );
    let warning = r
        .warnings
        .iter()
        .find(|w| w.contains("stopped early"))
        .unwrap_or_else(|| panic!("no early-stop warning in {:?}", r.warnings));
    assert!(warning.contains("--table-memory-mb"), "{warning}");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("no memory for the rows")),
        "{:?}",
        r.warnings
    );
    let check = r.check.as_ref().expect("checked");
    assert!(check.is_serializable(), "{check:?}");
}

#[test]
fn scans_over_growing_tables_stay_serializable_beside_deletes_and_inserts() {
    // One warehouse, 6 workers on 2 cores: Deliveries delete the oldest NEW-ORDER rows that
    // Order-Status and Stock-Level scan past, while New-Orders grow every table.
    let cfg = config(&[
        "-p",
        "silo,tictoc,no_wait,mocc,plor,ermia",
        "--workload",
        "tpcc",
        "--mix",
        "new_order=40,delivery=30,order_status=15,stock_level=15",
        "-t",
        "6",
        "-d",
        "0.4",
        "--warmup",
        "0",
        "--check",
    ]);
    for r in run_all(&cfg, |_| {}).expect("the tables fit") {
        let check = r.check.as_ref().expect("checked");
        assert!(r.commits > 0, "{}: nothing committed", r.protocol);
        assert!(check.is_serializable(), "{}: {check:?}", r.protocol);
        assert!(
            check.conditions_checked.is_some(),
            "TPC-C conditions were checked"
        );
    }
}
