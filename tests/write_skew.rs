//! The write-skew workload: snapshot isolation must break its constraint, serializable protocols
//! (multi-version and single-version alike) must not, with more workers than cores.

mod common;

use common::checked_exec;
use txbench::exec::run_threads;
use txbench::protocol::ermia::Ermia;
use txbench::protocol::si::Si;
use txbench::protocol::silo::Silo;
use txbench::protocol::twopl::NoWait;
use txbench::protocol::{Protocol, ProtocolOptions};
use txbench::storage::Database;
use txbench::workload::Workload;
use txbench::workload::write_skew::{WriteSkew, WriteSkewConfig};

/// Runs the workload on 4 pairs with 8 workers; (constraint violations, commits).
fn run<P: Protocol>(p: P, seed: u64) -> (u64, u64) {
    let w = WriteSkew::new(WriteSkewConfig { records: 8 });
    let db: Database<P::RecordMeta> = Database::new(&w.tables());
    w.load(&db);
    let mut exec = checked_exec(8, 200);
    exec.record_history = false;
    exec.seed = seed;
    let out = run_threads(&p, &db, &w, &exec);
    let commits = out.workers.iter().map(|s| s.types[0].commits).sum();
    let report = w
        .check_consistency(&db)
        .expect("the workload checks its constraint");
    (report.consistency_violations, commits)
}

fn opts() -> ProtocolOptions {
    ProtocolOptions {
        threads: 8,
        ..Default::default()
    }
}

#[test]
fn snapshot_isolation_breaks_the_constraint() {
    let broken = (1..=5).any(|seed| run(Si::new(&opts()), seed).0 > 0);
    assert!(broken, "SI kept every pair's constraint in five runs");
}

#[test]
fn serializable_protocols_keep_the_constraint() {
    for (name, (violations, commits)) in [
        ("ermia", run(Ermia::new(&opts()).unwrap(), 1)),
        ("silo", run(Silo::new(&opts()), 1)),
        ("no_wait", run(NoWait::new(&opts()).unwrap(), 1)),
    ] {
        assert!(commits > 100, "{name}: {commits} commits");
        assert_eq!(violations, 0, "{name}");
    }
}
