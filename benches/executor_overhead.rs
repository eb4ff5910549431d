//! What driving `async` transaction programs costs: the thread executor (async program over
//! `Txn`, polled in place, with latency histograms and phase timing) against plain synchronous
//! loops that call the protocol directly, on YCSB-C with one thread. Two baselines:
//! - `bare`: no measurement at all (the total cost of executor + metrics);
//! - `timed`: the same per-transaction measurement as the executor (start, end of execution and
//!   commit timestamps; latency into an HDR histogram), isolating the cost of the async programs
//!   and the executor loop themselves.
//!
//! Run: `cargo bench --bench executor_overhead` (optionally `-- SECONDS ROUNDS`). Rounds alternate
//! the two loops so drift on a shared machine hits both; the median ratio is reported.

use std::task::Poll;
use std::time::{Duration, Instant};
use txbench::exec::{ExecConfig, run_threads};
use txbench::metrics::{Phase, WorkerStats};
use txbench::protocol::nocc::Nocc;
use txbench::protocol::silo::Silo;
use txbench::protocol::{AttemptStart, Protocol, ProtocolOptions};
use txbench::random::FastRng;
use txbench::storage::{Database, RecordId};
use txbench::workload::Workload;
use txbench::workload::ycsb::{TABLE, Ycsb, YcsbConfig, YcsbOpKind};

fn sync_loop<P: Protocol, const TIMED: bool>(
    p: &P,
    db: &Database<P::RecordMeta>,
    y: &Ycsb,
    secs: f64,
) -> f64 {
    let mut w = p.new_worker(0);
    let mut rng = FastRng::for_worker(1, 0);
    let mut req = y.new_request();
    let mut buf = vec![0u8; y.config().payload];
    let table = db.table(TABLE);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let mut commits = 0u64;
    let mut stats = WorkerStats::new(1);
    let start = Instant::now();
    while Instant::now() < deadline {
        for _ in 0..64 {
            y.generate(0, &mut rng, &mut req);
            let t0 = TIMED.then(Instant::now);
            p.begin(&mut w, AttemptStart::FIRST.read_only());
            for op in &req.ops {
                assert_eq!(op.kind, YcsbOpKind::Read, "YCSB-C is read-only");
                let rec = table.get(RecordId(op.key)).expect("key in table");
                while p.read(&mut w, rec, &mut buf) != Poll::Ready(Ok(())) {}
            }
            let t1 = TIMED.then(Instant::now);
            while p.commit(&mut w) != Poll::Ready(Ok(())) {}
            if let (Some(t0), Some(t1)) = (t0, t1) {
                let t2 = Instant::now();
                stats.commit(0, (t2 - t0).as_nanos() as u64, 1);
                stats.add_phase(Phase::Execute, (t1 - t0).as_nanos() as u64);
                stats.add_phase(Phase::Commit, (t2 - t1).as_nanos() as u64);
            }
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
        check_limit_ops: 0,
        adaptive_backoff: false,
        read_phase_extension_ns: 0,
        pin_threads: false,
        core_slice: std::time::Duration::ZERO,
        core_seats: false,
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
    sync_loop::<P, false>(p, &db, y, secs / 2.0);
    let (mut vs_bare, mut vs_timed) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        // Every loop runs on a fresh thread, as the executor's workers do.
        let bare = std::thread::scope(|sc| {
            sc.spawn(|| sync_loop::<P, false>(p, &db, y, secs))
                .join()
                .unwrap()
        });
        let timed = std::thread::scope(|sc| {
            sc.spawn(|| sync_loop::<P, true>(p, &db, y, secs))
                .join()
                .unwrap()
        });
        let e = executor(p, &db, y, secs);
        println!(
            "{name}: bare {bare:.0}, timed {timed:.0}, executor {e:.0} txn/s; \
             executor/bare {:.3}, executor/timed {:.3}",
            e / bare,
            e / timed
        );
        vs_bare.push(e / bare);
        vs_timed.push(e / timed);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (b, t) = (median(&mut vs_bare), median(&mut vs_timed));
    println!(
        "{name}: median executor/bare = {b:.3} (overhead {:.1}%), executor/timed = {t:.3} \
         (overhead {:.1}%)",
        (1.0 - b) * 100.0,
        (1.0 - t) * 100.0
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
