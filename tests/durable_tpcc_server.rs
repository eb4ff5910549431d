//! A durable TPC-C server (issue 25): `txbench serve -w tpcc --log DIR` as a child process,
//! driven by TPC-C's own transaction programs over the wire (`RemoteTxn`, as `txbench run
//! --interactive` drives its loopback server), SIGKILLed while its clients commit, and started
//! again on the same directory, twice. After each restart:
//!
//! - every acknowledged commit is there, and nothing that was never sent: each district's
//!   D_NEXT_O_ID counts exactly its acknowledged New-Orders, and W_YTD exactly the
//!   acknowledged Payments' amounts, give or take the one transaction per client whose
//!   `COMMIT` was in flight at the kill (it may or may not have become durable);
//! - the indexes the restart rebuilt from the recovered rows find what the rows say: each
//!   district's newest order is the last entry of its NEW-ORDER range, and the newest order of
//!   that order's customer in ORDER by customer (the load's indexes alone know neither);
//! - clients commit the whole mix again (New-Order appends to NEW-ORDER, ORDER and
//!   ORDER-LINE, Payment to HISTORY, Delivery takes NEW-ORDER's oldest entry).
//!
//! Finally `txbench recover DIR` rebuilds the directory's state and TPC-C's consistency
//! conditions (clause 3.3.2) hold on it.
//!
//! The clients are this process's threads over one `Tpcc` workload, loaded here for its
//! CUSTOMER-by-last-name index (the server's tables are the server's), whose HISTORY slot
//! counters run on across the restarts: those counters are client state (`Tpcc::history_slot`),
//! which a new client process could not rebuild (ARCHITECTURE.md, Durability).
#[path = "common/serve.rs"]
mod serve;

use clap::Parser;
use serve::Server;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use txbench::client::Session;
use txbench::config::{Cli, Command as TxCommand};
use txbench::exec::interactive::RemoteTxn;
use txbench::protocol::AttemptStart;
use txbench::random::FastRng;
use txbench::storage::Database;
use txbench::workload::tpcc::TxnType;
use txbench::workload::tpcc::rows::{District, Order, Row, Warehouse};
use txbench::workload::tpcc::schema::{
    DISTRICT, NEW_ORDER_INDEX, ORDER, ORDER_BY_CUSTOMER, SENTINEL_ORDER_ID, WAREHOUSE,
    new_order_key, order_customer_key,
};
use txbench::workload::tpcc::{Tpcc, TpccLayout};
use txbench::workload::{Workload, WorkloadConfig};

/// Sessions the server takes, and client threads.
const CLIENTS: usize = 2;

/// A fresh directory under the system's temporary directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("txbench-durtpcc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// The server's flags, without its log's.
fn server_args(protocol: &str) -> Vec<String> {
    [
        "serve",
        "-w",
        "tpcc",
        "--warehouses",
        "1",
        "-p",
        protocol,
        "--max-connections",
        &CLIENTS.to_string(),
        "--listen",
        "127.0.0.1:0",
    ]
    .map(String::from)
    .to_vec()
}

/// The TPC-C workload the server loads (`serve` validates its run for one second, which sizes
/// the spare order slots), loaded here for the clients.
fn client_workload() -> Tpcc {
    let argv = [
        "txbench",
        "run",
        "-w",
        "tpcc",
        "--warehouses",
        "1",
        "-t",
        "2",
        "-d",
        "1",
        "--warmup",
        "0",
    ];
    let TxCommand::Run(args) = Cli::try_parse_from(argv).expect("flags").command else {
        unreachable!("a run")
    };
    let WorkloadConfig::Tpcc(c) = args.validate().expect("valid flags").workload else {
        unreachable!("tpcc")
    };
    let tpcc = Tpcc::new(c);
    let db: Database<()> = Database::try_build_growable(
        &tpcc.tables(),
        &tpcc.indexes(),
        false,
        &tpcc.growable_tables(),
    )
    .expect("tables");
    tpcc.load(&db);
    tpcc
}

/// What the clients' acknowledged commits add up to, and what was in flight at a kill.
#[derive(Debug, Default, Clone)]
struct Acked {
    /// Acknowledged New-Orders per district (index `d - 1`).
    new_orders: [u64; 10],
    /// Acknowledged Payments' amounts, in cents.
    paid: i64,
    /// Acknowledged commits of each type (`TxnType` order).
    by_type: [u64; 5],
    /// New-Orders per district whose `COMMIT` got no answer (the server died).
    new_orders_unknown: [u64; 10],
    /// Payments' amounts whose `COMMIT` got no answer.
    paid_unknown: i64,
}

impl Acked {
    fn add(&mut self, other: &Acked) {
        for d in 0..10 {
            self.new_orders[d] += other.new_orders[d];
            self.new_orders_unknown[d] += other.new_orders_unknown[d];
        }
        for t in 0..5 {
            self.by_type[t] += other.by_type[t];
        }
        self.paid += other.paid;
        self.paid_unknown += other.paid_unknown;
    }
}

/// Runs the TPC-C mix as client `id` over `session` until `stop` (or the connection fails: the
/// server was killed); counts what was acknowledged. `committed` counts commits of all
/// clients.
fn client(
    tpcc: &Tpcc,
    session: Session,
    id: usize,
    seed: u64,
    stop: &AtomicBool,
    committed: &AtomicU64,
) -> Acked {
    let mut tx = RemoteTxn::new(session, id);
    let mut rng = FastRng::new(seed);
    let mut req = tpcc.new_request();
    let mut acked = Acked::default();
    // Relaxed: a flag polled between transactions; nothing is published through it.
    while !stop.load(Ordering::Relaxed) {
        tpcc.generate(id, &mut rng, &mut req);
        let ty = req.txn_type();
        let mut start = AttemptStart {
            retry: false,
            read_only: tpcc.is_read_only(&req),
        };
        loop {
            let began = match tx.begin(start) {
                Ok(b) => b,
                Err(_) => return acked,
            };
            let result = match began {
                Err(why) => Err(why),
                Ok(()) => {
                    let ran = {
                        let mut program = std::pin::pin!(tpcc.run(&mut tx, &req));
                        match program
                            .as_mut()
                            .poll(&mut Context::from_waker(Waker::noop()))
                        {
                            Poll::Ready(out) => out,
                            Poll::Pending => unreachable!("remote operations never wait here"),
                        }
                    };
                    if tx.take_failure().is_some() {
                        return acked;
                    }
                    match ran {
                        Ok(()) => match tx.commit() {
                            Ok(c) => c,
                            Err(_) => {
                                // No answer: the commit may or may not be durable.
                                match ty {
                                    TxnType::NewOrder => {
                                        acked.new_orders_unknown[req.d as usize - 1] += 1
                                    }
                                    TxnType::Payment => acked.paid_unknown += req.amount,
                                    _ => {}
                                }
                                return acked;
                            }
                        },
                        Err(why) => match tx.abort() {
                            Ok(r) => r.and(Err(why)),
                            Err(_) => return acked,
                        },
                    }
                }
            };
            match result {
                Ok(()) => {
                    match ty {
                        TxnType::NewOrder => acked.new_orders[req.d as usize - 1] += 1,
                        TxnType::Payment => acked.paid += req.amount,
                        _ => {}
                    }
                    acked.by_type[ty as usize] += 1;
                    // Relaxed: a progress count the test polls.
                    committed.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Err(why) if why.is_retried() => start.retry = true,
                Err(_) => break,
            }
        }
    }
    acked
}

/// Runs [`CLIENTS`] clients against `server` until they committed `commits` transactions
/// together; then, with `kill`, SIGKILLs the server while they are still committing (else
/// stops them and leaves the server running). Returns what they had acknowledged.
fn drive(tpcc: &Tpcc, server: &mut Server, seed: u64, commits: u64, kill: bool) -> Acked {
    let stop = AtomicBool::new(false);
    let committed = AtomicU64::new(0);
    let sessions: Vec<Session> = (0..CLIENTS).map(|_| server.connect()).collect();
    let started = Instant::now();
    let all = std::thread::scope(|s| {
        let clients: Vec<_> = sessions
            .into_iter()
            .enumerate()
            .map(|(i, session)| {
                let (stop, committed) = (&stop, &committed);
                s.spawn(move || client(tpcc, session, i, seed + i as u64, stop, committed))
            })
            .collect();
        // Relaxed: a progress count.
        while committed.load(Ordering::Relaxed) < commits {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the clients committed only {} transactions in two minutes",
                committed.load(Ordering::Relaxed)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        if kill {
            let _ = server.child.kill();
            let _ = server.child.wait();
        } else {
            stop.store(true, Ordering::Relaxed);
        }
        clients
            .into_iter()
            .map(|c| c.join().expect("client thread"))
            .collect::<Vec<_>>()
    });
    let mut acked = Acked::default();
    for a in &all {
        acked.add(a);
    }
    acked
}

/// Warehouse 1's W_YTD and its districts' D_NEXT_O_ID, read in one transaction.
fn totals(s: &mut Session, layout: &TpccLayout) -> (i64, [u32; 10]) {
    s.begin_read_only().expect("BEGIN");
    let w = Warehouse::decode(
        s.read(WAREHOUSE, layout.warehouse(1))
            .expect("READ warehouse"),
    );
    let mut next = [0; 10];
    for d in 1..=10u8 {
        let row = s
            .read(DISTRICT, layout.district(1, d))
            .expect("READ district");
        next[d as usize - 1] = District::decode(row).d_next_o_id;
    }
    s.commit().expect("COMMIT");
    (w.w_ytd, next)
}

/// Requires the server's state to hold every acknowledged commit of `acked` on top of
/// `(ytd0, next0)` (the state before any client ran), and nothing beyond the commits in flight
/// at a kill.
fn assert_acknowledged(s: &mut Session, layout: &TpccLayout, ytd0: i64, acked: &Acked, when: &str) {
    let (ytd, next) = totals(s, layout);
    let paid = ytd - ytd0;
    assert!(
        paid >= acked.paid && paid <= acked.paid + acked.paid_unknown,
        "{when}: W_YTD grew by {paid}, acknowledged Payments paid {} (and {} unanswered)",
        acked.paid,
        acked.paid_unknown
    );
    for (d, &next) in next.iter().enumerate() {
        let placed = u64::from(next) - 3001;
        let (a, u) = (acked.new_orders[d], acked.new_orders_unknown[d]);
        assert!(
            placed >= a && placed <= a + u,
            "{when}: district {}: D_NEXT_O_ID {next} counts {placed} New-Orders, {a} \
             acknowledged ({u} unanswered)",
            d + 1,
        );
    }
}

/// The server's indexes find each district's newest order: the last NEW-ORDER entry of the
/// district, and the last ORDER-by-customer entry of its customer. Returns how many
/// districts have orders placed since the load (whose entries only a rebuild has).
fn assert_indexes_find_the_newest_orders(
    s: &mut Session,
    layout: &TpccLayout,
    when: &str,
) -> usize {
    let (_, next) = totals(s, layout);
    let mut placed_since_load = 0;
    s.begin_read_only().expect("BEGIN");
    for d in 1..=10u8 {
        let newest = next[d as usize - 1] - 1;
        placed_since_load += usize::from(newest > 3000);
        let in_new_order = s
            .scan_last(
                NEW_ORDER_INDEX.0,
                new_order_key(1, d, 1),
                new_order_key(1, d, SENTINEL_ORDER_ID - 1),
            )
            .expect("SCAN_LAST new_order");
        assert_eq!(
            in_new_order.map(|(k, _)| k),
            Some(new_order_key(1, d, newest)),
            "{when}: district {d}'s newest order {newest} is not NEW-ORDER's last entry"
        );
        let rid = layout.order(1, d, newest).expect("a slot");
        let c = Order::decode(s.read(ORDER, rid).expect("READ order")).o_c_id;
        let by_customer = s
            .scan_last(
                ORDER_BY_CUSTOMER.0,
                order_customer_key(1, d, c, 0),
                order_customer_key(1, d, c, SENTINEL_ORDER_ID - 1),
            )
            .expect("SCAN_LAST order_by_customer");
        assert_eq!(
            by_customer,
            Some((order_customer_key(1, d, c, newest), rid)),
            "{when}: district {d}'s newest order {newest} is not customer {c}'s last in ORDER \
             by customer"
        );
    }
    s.commit().expect("COMMIT");
    placed_since_load
}

/// Start, commit, SIGKILL mid-commit, restart and check; twice; then `txbench recover`.
fn durable_tpcc_across_kills(name: &str, protocol: &str, log_flags: &[&str]) {
    let dir = fresh_dir(name);
    let args = server_args(protocol);
    let tpcc = client_workload();
    let layout = &tpcc.config().layout();
    let mut first = Server::start(&args, &dir, log_flags);
    let (ytd0, next0) = totals(&mut first.connect(), layout);
    assert_eq!(next0, [3001; 10], "a fresh load");
    let mut acked = drive(&tpcc, &mut first, 1, 300, true);
    eprintln!("{name}: first server, acknowledged {acked:?}");
    assert!(acked.by_type[TxnType::NewOrder as usize] > 0 && acked.paid > 0);

    let mut second = Server::start(&args, &dir, log_flags);
    eprintln!("{name}, first restart: {:?}", second.before_listening);
    let mut s = second.connect();
    assert_acknowledged(&mut s, layout, ytd0, &acked, "after the first restart");
    let placed = assert_indexes_find_the_newest_orders(&mut s, layout, "after the first restart");
    assert!(placed > 0, "no district placed an order before the kill");
    assert!(
        second
            .before_listening
            .iter()
            .any(|l| l.starts_with("recovered") && l.contains("index entries")),
        "the restart says what it recovered and rebuilt: {:?}",
        second.before_listening
    );
    drop(s);
    // What was in flight is settled now: count it as the state says.
    let (ytd, next) = totals(&mut second.connect(), layout);
    acked.paid = ytd - ytd0;
    acked.paid_unknown = 0;
    acked.new_orders = next.map(|n| u64::from(n) - 3001);
    acked.new_orders_unknown = [0; 10];
    let more = drive(&tpcc, &mut second, 100, 300, true);
    eprintln!("{name}: second server, acknowledged {more:?}");
    assert!(more.by_type[TxnType::Delivery as usize] > 0, "{more:?}");
    acked.add(&more);

    let mut third = Server::start(&args, &dir, log_flags);
    eprintln!("{name}, second restart: {:?}", third.before_listening);
    let mut s = third.connect();
    assert_acknowledged(&mut s, layout, ytd0, &acked, "after the second restart");
    assert_indexes_find_the_newest_orders(&mut s, layout, "after the second restart");
    drop(s);
    // The third server serves the mix too, and is stopped between transactions.
    let last = drive(&tpcc, &mut third, 200, 100, false);
    assert!(last.by_type.iter().sum::<u64>() >= 100, "{last:?}");
    drop(third);

    let recover = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .arg("recover")
        .arg(&dir)
        .output()
        .expect("run txbench recover");
    let out = String::from_utf8_lossy(&recover.stdout);
    assert!(
        recover.status.success() && out.contains("consistency: 12 conditions hold"),
        "txbench recover: {out}{}",
        String::from_utf8_lossy(&recover.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Silo, checkpoints every 50 ms (the restart's checkpoint is followed by the server's own).
#[test]
fn silo_tpcc_keeps_every_acknowledged_commit_and_its_indexes_across_kills() {
    durable_tpcc_across_kills(
        "silo",
        "silo",
        &["--log-group-us", "1000", "--checkpoint-s", "0.05"],
    );
}

/// 2PL (no_wait) with a sync per commit.
#[test]
fn no_wait_tpcc_keeps_every_acknowledged_commit_and_its_indexes_across_kills() {
    durable_tpcc_across_kills("no_wait", "no_wait", &["--log-sync", "txn"]);
}

/// ERMIA (multi-version; its record metadata makes NEW-ORDER's records 128 bytes, so a chunk
/// holds 2,048 of them and the load retires whole chunks, which every checkpoint lists as
/// vacant), with checkpoints every 50 ms.
#[test]
fn ermia_tpcc_keeps_every_acknowledged_commit_and_its_indexes_across_kills() {
    durable_tpcc_across_kills(
        "ermia",
        "ermia",
        &["--log-group-us", "1000", "--checkpoint-s", "0.05"],
    );
}
