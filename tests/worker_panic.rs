//! A worker that panics mid-run fails the run; it never hangs it. The panicked worker's
//! transaction stays unfinished (BOHM's placeholders unfilled, 2PL's locks held), so without
//! the run's panic watch (`exec::panic_watch`) its siblings would wait for it for good: this
//! test then fails at its hang bound (shown by taking the watch's check out of `exec/wait.rs`).
//! CI once timed out on exactly that, a PWV assertion in one coroutine worker.

mod common;

use common::{checked_db, checked_exec, contended_ycsb};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use txbench::exec::{run_coro, run_threads};
use txbench::protocol::bohm::Bohm;
use txbench::protocol::twopl::WoundWait;
use txbench::protocol::{Abort, AccessSet, Protocol, ProtocolOptions};
use txbench::random::FastRng;
use txbench::storage::{Database, TableSpec};
use txbench::txn::TxnOps;
use txbench::workload::Workload;
use txbench::workload::ycsb::{Ycsb, YcsbRequest as Request};

/// YCSB whose `PANIC_AT`-th transaction to finish its program panics before its commit.
struct PanicsOnce {
    ycsb: Ycsb,
    finished: AtomicU64,
}

const PANIC_AT: u64 = 50;

impl Workload for PanicsOnce {
    type Request = Request;

    fn name(&self) -> &'static str {
        "ycsb_that_panics_once"
    }

    fn tables(&self) -> Vec<TableSpec> {
        self.ycsb.tables()
    }

    fn load<M: Sync>(&self, db: &Database<M>) {
        self.ycsb.load(db);
    }

    fn new_request(&self) -> Request {
        self.ycsb.new_request()
    }

    fn generate(&self, worker: usize, rng: &mut FastRng, req: &mut Request) {
        self.ycsb.generate(worker, rng, req);
    }

    fn txn_types(&self) -> &'static [&'static str] {
        self.ycsb.txn_types()
    }

    fn txn_type(&self, req: &Request) -> usize {
        self.ycsb.txn_type(req)
    }

    fn declares_access_sets(&self) -> Result<(), String> {
        self.ycsb.declares_access_sets()
    }

    fn declare(&self, req: &Request, set: &mut AccessSet) {
        self.ycsb.declare(req, set);
    }

    async fn run<'a, Tx: TxnOps>(&'a self, tx: &'a mut Tx, req: &'a Request) -> Result<(), Abort> {
        self.ycsb.run(tx, req).await?;
        // Relaxed: a count alone.
        if self.finished.fetch_add(1, Ordering::Relaxed) + 1 == PANIC_AT {
            panic!("a workload bug mid-run (deliberately, in a test)");
        }
        Ok(())
    }
}

/// Runs the workload under `protocol` (coroutines with `queue` slots per thread, or threads)
/// on a thread of its own, and waits for it: the run must end, by a panic, well within the
/// hang bound (it would otherwise run 2 s).
fn fails_without_hanging<P: Protocol + Send + 'static>(
    name: &str,
    protocol: impl FnOnce() -> P + Send + 'static,
    queue: Option<usize>,
) {
    let run = std::thread::spawn(move || {
        let protocol = protocol();
        let workload = PanicsOnce {
            ycsb: Ycsb::new(contended_ycsb()),
            finished: AtomicU64::new(0),
        };
        let db: Database<P::RecordMeta> = checked_db(&workload);
        let exec = checked_exec(4, 2_000);
        match queue {
            Some(q) => run_coro(&protocol, &db, &workload, &exec, q),
            None => run_threads(&protocol, &db, &workload, &exec),
        };
    });
    let hang = Instant::now() + Duration::from_secs(120);
    while !run.is_finished() {
        assert!(
            Instant::now() < hang,
            "{name} {queue:?}: the run hangs after a worker panicked"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        run.join().is_err(),
        "{name} {queue:?}: the worker's panic fails the run"
    );
}

fn options() -> ProtocolOptions {
    ProtocolOptions {
        threads: 4,
        ..ProtocolOptions::default()
    }
}

#[test]
fn a_panicked_bohm_member_fails_the_run() {
    for queue in [None, Some(2)] {
        let workers = 4 * queue.unwrap_or(1);
        let o = ProtocolOptions {
            threads: workers,
            ..ProtocolOptions::default()
        };
        fails_without_hanging("bohm", move || Bohm::new(&o), queue);
    }
}

#[test]
fn a_panicked_lock_holder_fails_the_run() {
    for queue in [None, Some(2)] {
        fails_without_hanging(
            "wound_wait",
            || WoundWait::new(&options()).expect("4 workers"),
            queue,
        );
    }
}
