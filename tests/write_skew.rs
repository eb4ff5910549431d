//! The write-skew workload: snapshot isolation must break its constraint, serializable protocols
//! (multi-version and single-version alike) must not, with more workers than cores.

mod common;

use common::checked_exec;
use txbench::exec::{run_coro, run_threads};
use txbench::protocol::ermia::Ermia;
use txbench::protocol::si::Si;
use txbench::protocol::silo::Silo;
use txbench::protocol::twopl::NoWait;
use txbench::protocol::{Protocol, ProtocolOptions};
use txbench::storage::Database;
use txbench::workload::Workload;
use txbench::workload::write_skew::{WriteSkew, WriteSkewConfig};

/// How the 8 workers run.
#[derive(Clone, Copy, Debug)]
enum Exec {
    /// 8 threads (4 per core on the 2-core CI machine).
    Threads,
    /// One thread driving 8 coroutines, each waiting 20 us between its reads and its commit.
    ///
    /// The wait suspends the coroutine and the thread runs the others, so transactions on the
    /// same pair overlap whatever the machine's load or core count. Threads alone do not
    /// guarantee that: on a loaded machine only one of them may run at a time, overlaps then come
    /// only from preemption inside a 200 ns transaction, and SI once missed its write skew in all
    /// five runs (pinned to one core it missed in 2 of 5 test runs, even with a 20 us spin
    /// before commit: the preempted transaction sits out a whole time slice and loses its
    /// write-write race).
    Interleaved,
}

/// Runs the workload on 4 pairs with 8 workers; (constraint violations, commits).
fn run<P: Protocol>(p: P, seed: u64, how: Exec) -> (u64, u64) {
    let w = WriteSkew::new(WriteSkewConfig { records: 8 });
    let db: Database<P::RecordMeta> = Database::new(&w.tables());
    w.load(&db);
    let mut exec = checked_exec(8, 200);
    exec.record_history = false;
    exec.seed = seed;
    let out = match how {
        Exec::Threads => run_threads(&p, &db, &w, &exec),
        Exec::Interleaved => {
            exec.threads = 1;
            exec.read_phase_extension_ns = 20_000;
            run_coro(&p, &db, &w, &exec, 8)
        }
    };
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
    let broken = (1..=5).any(|seed| run(Si::new(&opts()), seed, Exec::Interleaved).0 > 0);
    assert!(broken, "SI kept every pair's constraint in five runs");
}

#[test]
fn serializable_protocols_keep_the_constraint() {
    for how in [Exec::Threads, Exec::Interleaved] {
        for (name, (violations, commits)) in [
            ("ermia", run(Ermia::new(&opts()).unwrap(), 1, how)),
            ("silo", run(Silo::new(&opts()), 1, how)),
            ("no_wait", run(NoWait::new(&opts()).unwrap(), 1, how)),
        ] {
            assert!(commits > 100, "{name} ({how:?}): {commits} commits");
            assert_eq!(violations, 0, "{name} ({how:?})");
        }
    }
}
