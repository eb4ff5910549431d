//! What driving `async` transaction programs costs: the thread executor (async program over
//! `Txn`, polled in place, with latency histograms and phase timing) against a plain synchronous
//! loop that calls the protocol directly with no metrics, on YCSB-C with one thread.
//!
//! Run: `cargo bench --bench executor_overhead` (optionally `-- SECONDS ROUNDS`). Rounds alternate
//! the two loops so drift on a shared machine hits both; the median ratio is reported.

use std::task::Poll;
use std::time::{Duration, Instant};
use txbench::exec::{ExecConfig, run_threads};
use txbench::metrics::WorkerStats;
use txbench::protocol::nocc::Nocc;
use txbench::protocol::silo::Silo;
use txbench::protocol::{Protocol, ProtocolOptions};
use txbench::random::FastRng;
use txbench::storage::{Database, RecordId};
use txbench::workload::Workload;
use txbench::workload::ycsb::{TABLE, Ycsb, YcsbConfig, YcsbOpKind};

fn sync_loop<P: Protocol>(p: &P, db: &Database<P::RecordMeta>, y: &Ycsb, secs: f64) -> f64 {
    let mut w = p.new_worker(0);
    let mut rng = FastRng::for_worker(1, 0);
    let mut req = y.new_request();
    let mut buf = vec![0u8; y.config().payload];
    let table = db.table(TABLE);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let mut commits = 0u64;
    let start = Instant::now();
    while Instant::now() < deadline {
        for _ in 0..64 {
            y.generate(&mut rng, &mut req);
            p.begin(&mut w, false);
            for op in &req.ops {
                assert_eq!(op.kind, YcsbOpKind::Read, "YCSB-C is read-only");
                let rec = table.get(RecordId(op.key)).expect("key in table");
                while p.read(&mut w, rec, &mut buf) != Poll::Ready(Ok(())) {}
            }
            while p.commit(&mut w) != Poll::Ready(Ok(())) {}
            commits += 1;
        }
    }
    commits as f64 / start.elapsed().as_secs_f64()
}

fn executor<P: Protocol>(p: &P, db: &Database<P::RecordMeta>, y: &Ycsb, secs: f64) -> f64 {
    let cfg = ExecConfig {
        threads: 1,
        duration: Duration::from_secs_f64(secs),
        warmup: Duration::ZERO,
        seed: 1,
        record_history: false,
        adaptive_backoff: false,
        read_phase_extension_ns: 0,
        pin_threads: false,
    };
    let out = run_threads(p, db, y, &cfg);
    let mut total = WorkerStats::new(1);
    for w in &out.workers {
        total.merge(w);
    }
    total.types[0].commits as f64 / out.measured.as_secs_f64()
}

fn compare<P: Protocol>(name: &str, p: &P, y: &Ycsb, secs: f64, rounds: usize) {
    let db: Database<P::RecordMeta> = Database::new(&y.tables());
    y.load(&db);
    // Warm caches and page tables once.
    sync_loop(p, &db, y, secs / 2.0);
    let mut ratios = Vec::new();
    for _ in 0..rounds {
        let s = sync_loop(p, &db, y, secs);
        let e = executor(p, &db, y, secs);
        println!(
            "{name}: sync {s:.0} txn/s, executor {e:.0} txn/s, executor/sync {:.3}",
            e / s
        );
        ratios.push(e / s);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    println!(
        "{name}: median executor/sync = {median:.3} (overhead {:.1}%)",
        (1.0 - median) * 100.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let secs: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let y = Ycsb::new(YcsbConfig {
        read_ratio: 1.0,
        rmw: false,
        ..YcsbConfig::default()
    });
    compare("nocc", &Nocc, &y, secs, rounds);
    let silo = Silo::new(&ProtocolOptions {
        threads: 1,
        ..Default::default()
    });
    compare("silo", &silo, &y, secs, rounds);
}
