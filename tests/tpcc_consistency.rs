//! TPC-C under every protocol with more workers than warehouses (and than cores): after the run,
//! the database must satisfy the spec's consistency conditions (clause 3.3.2, conditions 1-12,
//! 11 in the form `txbench::workload::tpcc::consistency` gives it), and a protocol without
//! concurrency control must not. A serial run (one worker) must satisfy them under any protocol,
//! NoCC included: that shows the transactions keep them, whatever the concurrency control.
//!
//! Every run is checked: the serializability checker judges the history (the graph, with the
//! reads and writes of scans, inserts and next-key protection), and the conditions judge the final
//! database. NoCC must be caught by the graph too, not only by the conditions.
//!
//! Two workloads: the full mix (every transaction, inserts, deletes and both index scans), and
//! Delivery against New-Order only, so that concurrent Deliveries of one warehouse keep racing
//! for the same oldest NEW-ORDER row of each district while New-Orders append behind them.

use std::time::Duration;
use txbench::check::{CheckReport, check};
use txbench::exec::{ExecConfig, run_threads};
use txbench::protocol::aria::Aria;
use txbench::protocol::bohm::Bohm;
use txbench::protocol::c_sched::CSched;
use txbench::protocol::calvin::Calvin;
use txbench::protocol::calvin_ticket::CalvinTicket;
use txbench::protocol::cicada::Cicada;
use txbench::protocol::decentsched::DecentSched;
use txbench::protocol::ermia::Ermia;
use txbench::protocol::mocc::{Mocc, MqlLock, RwLock};
use txbench::protocol::mvto::Mvto;
use txbench::protocol::nocc::Nocc;
use txbench::protocol::ord_lock::OrdLock;
use txbench::protocol::plor::Plor;
use txbench::protocol::pwv::Pwv;
use txbench::protocol::si::Si;
use txbench::protocol::silo::Silo;
use txbench::protocol::tictoc::TicToc;
use txbench::protocol::twopl::{NoWait, WaitDie, WoundWait};
use txbench::protocol::{Protocol, ProtocolOptions};
use txbench::storage::Database;
use txbench::workload::Workload;
use txbench::workload::tpcc::{
    ConsistencyReport, StockLevelIsolation, Tpcc, TpccConfig, TpccMix, TxnType, check_consistency,
};

/// What a run left behind.
struct Outcome {
    consistency: ConsistencyReport,
    /// The checker's verdict on the history.
    graph: CheckReport,
    /// Commits per transaction type.
    commits: [u64; 5],
}

fn run<P: Protocol>(protocol: P, config: &TpccConfig, threads: usize, millis: u64) -> Outcome {
    let w = Tpcc::new(config.clone());
    // The tables that receive inserts grow, as in a run of the binary.
    let db: Database<P::RecordMeta> =
        Database::try_build_growable(&w.tables(), &w.indexes(), true, &w.growable_tables())
            .expect("the test's tables fit");
    w.load(&db);
    db.stamp_loaded_rows();
    let exec = ExecConfig {
        threads,
        duration: Duration::from_millis(millis),
        warmup: Duration::ZERO,
        seed: 5,
        record_history: true,
        check_limit_ops: u64::MAX,
        adaptive_backoff: false,
        read_phase_extension_ns: 0,
        pin_threads: false,
        core_slice: std::time::Duration::ZERO,
        core_seats: false,
    };
    let out = run_threads(&protocol, &db, &w, &exec);
    assert_eq!(w.exhausted(), 0, "the test sized its spare slots too small");
    let mut commits = [0; 5];
    for worker in &out.workers {
        for (t, stats) in worker.types.iter().enumerate() {
            commits[t] += stats.commits;
        }
    }
    Outcome {
        consistency: check_consistency(&db, config),
        graph: check(&out.histories),
        commits,
    }
}

fn full_mix() -> TpccConfig {
    TpccConfig {
        warehouses: 1,
        spare_orders_per_district: 20_000,
        ..TpccConfig::default()
    }
}

fn deliveries() -> TpccConfig {
    TpccConfig {
        mix: TpccMix::parse("new_order=50,delivery=50").unwrap(),
        ..full_mix()
    }
}

fn opts(threads: usize) -> ProtocolOptions {
    ProtocolOptions {
        threads,
        ..Default::default()
    }
}

/// Runs both workloads with 4 workers on one warehouse and asserts consistency; also that the
/// races happened (every transaction type committed, Deliveries many times).
fn assert_consistent<P: Protocol>(name: &str, make: impl Fn(&ProtocolOptions) -> P) {
    let threads = 4;
    let full = run(make(&opts(threads)), &full_mix(), threads, 400);
    assert_eq!(
        full.consistency.consistency_violations, 0,
        "{name}, full mix: {:?}",
        full.consistency.examples
    );
    assert_eq!(full.consistency.conditions_checked, 12);
    assert!(
        full.graph.is_serializable(),
        "{name}, full mix: {:?}",
        full.graph
    );
    assert!(full.graph.transactions > 0);
    for t in TxnType::ALL {
        assert!(
            full.commits[t as usize] > 0,
            "{name}: no {} committed",
            t.name()
        );
    }
    let racing = run(make(&opts(threads)), &deliveries(), threads, 400);
    assert_eq!(
        racing.consistency.consistency_violations, 0,
        "{name}, deliveries: {:?}",
        racing.consistency.examples
    );
    assert!(
        racing.graph.is_serializable(),
        "{name}, deliveries: {:?}",
        racing.graph
    );
    let delivered = racing.commits[TxnType::Delivery as usize];
    assert!(delivered > 20, "{name}: only {delivered} Deliveries");
}

#[test]
fn silo_keeps_tpcc_consistent() {
    assert_consistent("silo", Silo::new);
}

#[test]
fn tictoc_keeps_tpcc_consistent() {
    assert_consistent("tictoc", TicToc::new);
}

#[test]
fn mocc_keeps_tpcc_consistent() {
    assert_consistent("mocc-rw", Mocc::<RwLock>::new);
    assert_consistent("mocc-mql", Mocc::<MqlLock>::new);
}

#[test]
fn twopl_keeps_tpcc_consistent() {
    assert_consistent("no_wait", |o| NoWait::new(o).unwrap());
    assert_consistent("wait_die", |o| WaitDie::new(o).unwrap());
    assert_consistent("wound_wait", |o| WoundWait::new(o).unwrap());
}

#[test]
fn plor_keeps_tpcc_consistent() {
    assert_consistent("plor", |o| Plor::new(o).unwrap());
}

/// The NP mix (New-Order and Payment), the one TPC-C mix whose access sets can be declared:
/// deterministic protocols run it with 4 workers on one warehouse and on two (remote supply
/// warehouses and remote customers), keep every condition, pass the checker and abort only the
/// 1% of New-Orders that roll back (user aborts).
fn assert_np_consistent<P: Protocol>(name: &str, make: impl Fn(&ProtocolOptions) -> P) {
    let threads = 4;
    for warehouses in [1, 2] {
        let config = TpccConfig {
            warehouses,
            mix: TpccMix::NP,
            ..full_mix()
        };
        let o = run(make(&opts(threads)), &config, threads, 300);
        assert_eq!(
            o.consistency.consistency_violations, 0,
            "{name}, np, {warehouses} warehouses: {:?}",
            o.consistency.examples
        );
        assert_eq!(o.consistency.conditions_checked, 12);
        assert!(
            o.graph.is_serializable(),
            "{name}, np, {warehouses} warehouses: {:?}",
            o.graph
        );
        for t in [TxnType::NewOrder, TxnType::Payment] {
            assert!(o.commits[t as usize] > 0, "{name}: no {}", t.name());
        }
    }
}

#[test]
fn decentsched_keeps_tpcc_np_consistent() {
    assert_np_consistent("decentsched", DecentSched::new);
}

#[test]
fn decentsched_opportunistic_keeps_tpcc_np_consistent() {
    assert_np_consistent("decentsched --ds-opportunistic", |o| {
        let mut o = o.clone();
        o.decentsched.opportunistic = true;
        DecentSched::new(&o)
    });
}

#[test]
fn c_sched_and_calvin_ticket_keep_tpcc_np_consistent() {
    assert_np_consistent("c_sched", CSched::new);
    assert_np_consistent("calvin_ticket", |_| CalvinTicket::new());
}

/// BOHM: NP (declared sets; the inserted rows are covered by the district write), consistent,
/// New-Order's rollbacks included (their placeholders become copies of the versions before).
#[test]
fn bohm_keeps_tpcc_np_consistent() {
    assert_np_consistent("bohm", Bohm::new);
}

/// BOHM_NW (`--bohm-no-wait`): NP, consistent, with members that would wait rerun next batch.
#[test]
fn bohm_no_wait_keeps_tpcc_np_consistent() {
    assert_np_consistent("bohm --bohm-no-wait", |o| {
        let mut o = o.clone();
        o.bohm.no_wait = true;
        Bohm::new(&o)
    });
}

/// PWV: NP, consistent. TPC-C's transactions abort by their own logic, so configuration sets
/// `user_aborts` and PWV's commit point is the commit (`protocol::pwv`).
#[test]
fn pwv_keeps_tpcc_np_consistent() {
    assert_np_consistent("pwv", |o| {
        Pwv::new(&ProtocolOptions {
            user_aborts: true,
            ..o.clone()
        })
    });
}

/// PWV_NW (`--pwv-no-wait`): NP, consistent (commit point at the commit, as above).
#[test]
fn pwv_no_wait_keeps_tpcc_np_consistent() {
    assert_np_consistent("pwv --pwv-no-wait", |o| {
        let mut o = o.clone();
        o.user_aborts = true;
        o.pwv.no_wait = true;
        Pwv::new(&o)
    });
}

/// Batched Calvin, waiting and no-wait: NP (declared sets), consistent.
#[test]
fn calvin_keeps_tpcc_np_consistent() {
    for no_wait in [false, true] {
        assert_np_consistent("calvin", |o| {
            let mut calvin = o.calvin;
            calvin.no_wait = no_wait;
            Calvin::new(&o.batch, calvin)
        });
    }
}

/// Aria needs no declared sets: the full mix, the Delivery race and NP, with and without
/// deterministic reordering and the fallback phase.
#[test]
fn aria_keeps_tpcc_consistent() {
    for (reordering, fallback) in [(false, false), (true, false), (false, true), (true, true)] {
        let make = |o: &ProtocolOptions| {
            let mut aria = o.aria;
            aria.reordering = reordering;
            aria.fallback = fallback;
            Aria::new(&o.batch, aria)
        };
        assert_consistent("aria", make);
        assert_np_consistent("aria", make);
    }
}

#[test]
fn ord_lock_keeps_tpcc_np_consistent() {
    assert_np_consistent("ord_lock", |_| OrdLock::new());
}

/// Snapshot isolation is not serializable: TPC-C's programs are known to run serializably under
/// it (Fekete et al., TODS 2005), but this TPC-C adds next-key record accesses for its scans, and
/// under a loaded machine the checker once found a cycle in an SI history here (not analysed
/// yet, see the notes). So SI must keep every consistency condition and show no anomaly,
/// and any cycle must be write skew (`G2-item`), the only one SI allows.
#[test]
fn si_keeps_tpcc_consistent() {
    for config in [full_mix(), deliveries()] {
        let o = run(Si::new(&opts(4)), &config, 4, 400);
        assert_eq!(
            o.consistency.consistency_violations, 0,
            "{:?}",
            o.consistency.examples
        );
        assert_eq!(o.graph.anomalies, 0, "{:?}", o.graph);
        assert!(
            o.graph.cycle_kinds.keys().all(|k| k == "G2-item"),
            "{:?}",
            o.graph
        );
        assert!(o.commits.iter().any(|&c| c > 0));
    }
}

#[test]
fn mvto_keeps_tpcc_consistent() {
    assert_consistent("mvto", Mvto::new);
}

#[test]
fn ermia_keeps_tpcc_consistent() {
    assert_consistent("ermia", |o| Ermia::new(o).unwrap());
}

/// Stock-Level at read committed changes nothing the conditions look at (it is read-only), but
/// runs every protocol's read-committed read under contention.
#[test]
fn read_committed_stock_level_runs_everywhere() {
    let config = TpccConfig {
        mix: TpccMix::parse("new_order=50,stock_level=50").unwrap(),
        stock_level: StockLevelIsolation::ReadCommitted,
        ..full_mix()
    };
    let check = |name: &str, o: Outcome| {
        assert_eq!(o.consistency.consistency_violations, 0, "{name}");
        assert!(o.graph.is_serializable(), "{name}: {:?}", o.graph);
        assert!(o.commits[TxnType::StockLevel as usize] > 0, "{name}");
    };
    check("silo", run(Silo::new(&opts(4)), &config, 4, 200));
    check("tictoc", run(TicToc::new(&opts(4)), &config, 4, 200));
    check("mocc", run(Mocc::<RwLock>::new(&opts(4)), &config, 4, 200));
    check(
        "wait_die",
        run(WaitDie::new(&opts(4)).unwrap(), &config, 4, 200),
    );
    check(
        "no_wait",
        run(NoWait::new(&opts(4)).unwrap(), &config, 4, 200),
    );
    check(
        "wound_wait",
        run(WoundWait::new(&opts(4)).unwrap(), &config, 4, 200),
    );
    check("plor", run(Plor::new(&opts(4)).unwrap(), &config, 4, 200));
    check("si", run(Si::new(&opts(4)), &config, 4, 200));
    check("ermia", run(Ermia::new(&opts(4)).unwrap(), &config, 4, 200));
    check("mvto", run(Mvto::new(&opts(4)), &config, 4, 200));
    check("cicada", run(Cicada::new(&opts(4)), &config, 4, 200));
    let o = opts(4);
    check("aria", run(Aria::new(&o.batch, o.aria), &config, 4, 200));
    // NoCC loses D_NEXT_O_ID updates here, so only its read-committed reads are exercised.
    assert!(run(Nocc, &config, 4, 200).commits[TxnType::StockLevel as usize] > 0);
}

/// One worker: every transaction runs alone, so even NoCC must keep every condition, after the
/// full mix and after the Delivery-heavy one.
#[test]
fn serial_runs_keep_tpcc_consistent() {
    fn check(name: &str, o: Outcome, types: &[TxnType]) {
        assert_eq!(
            o.consistency.consistency_violations, 0,
            "{name}: {:?}",
            o.consistency.examples
        );
        assert_eq!(o.consistency.conditions_checked, 12);
        assert!(o.graph.is_serializable(), "{name}: {:?}", o.graph);
        for &t in types {
            assert!(o.commits[t as usize] > 0, "{name}: no {}", t.name());
        }
    }
    let both = [TxnType::NewOrder, TxnType::Delivery];
    check("nocc", run(Nocc, &full_mix(), 1, 300), &TxnType::ALL);
    check("nocc", run(Nocc, &deliveries(), 1, 200), &both);
    check(
        "silo",
        run(Silo::new(&opts(1)), &full_mix(), 1, 300),
        &TxnType::ALL,
    );
}

/// The conditions catch a protocol without concurrency control (lost D_YTD / W_YTD updates and
/// doubly delivered orders appear within a short run with 4 workers on one warehouse), and so
/// does the serializability checker on its own.
#[test]
fn nocc_breaks_tpcc_consistency() {
    let (mut by_conditions, mut by_graph) = (false, false);
    for _ in 0..5 {
        let o = run(Nocc, &full_mix(), 4, 300);
        by_conditions |= o.consistency.consistency_violations > 0;
        by_graph |= o.graph.cycles > 0 && o.graph.anomalies > 0;
        if by_conditions && by_graph {
            return;
        }
    }
    panic!("NoCC was not caught five times: conditions {by_conditions}, graph {by_graph}");
}

#[test]
fn cicada_keeps_tpcc_consistent() {
    assert_consistent("cicada", Cicada::new);
}
