//! Checkpoints end to end, in process: a logged YCSB run under Silo with checkpoints taken
//! while it runs (and segments removed), recovered from the directory; the recovered records
//! must equal the live database's at the end of the run, record by record (row and seq). The
//! two mutants (`checkpoint` module docs) must each be caught.

use super::taker::{CheckpointMutant, Checkpointer, Taken};
use crate::config::{Cli, Command, RunConfig};
use crate::exec::run_threads_logged;
use crate::log::Logger;
use crate::log::recover::{Plan, ReplayLatch, execute, plan, read_log_dir};
use crate::protocol::Protocol;
use crate::protocol::silo::Silo;
use crate::storage::stamp::{STAMP_BYTES, seq_word};
use crate::storage::{Database, RecordId, is_vacant};
use crate::workload::Workload;
use crate::workload::WorkloadConfig;
use crate::workload::tpcc::Tpcc;
use crate::workload::ycsb::Ycsb;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::time::Duration;

type SiloDb = Database<<Silo as Protocol>::RecordMeta>;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("txbench-ckpt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// The run's flags (without the log's and the duration, [`run_for`]).
const RUN: &[&str] = &[
    "-w",
    "ycsb",
    "--records",
    "100000",
    "--ops",
    "8",
    "--rmw",
    "-p",
    "silo",
    "-t",
    "2",
    "--warmup",
    "0",
    "--no-pin",
];

/// The run's lengths in seconds, one try each: the checkpoints are taken at fixed moments from
/// the start, and a test that needs transactions logged after its last checkpoint (or segments
/// removed under a mutant) runs again, longer, when the machine was too slow to get there (a
/// loaded 2-core machine, or AddressSanitizer's slowdown, once stopped the run before the third
/// checkpoint ended). Correctness is asserted on every try; only the test's power is retried.
const TRIES_SECS: [&str; 3] = ["1.2", "3", "8"];

/// [`RUN`] for `secs` seconds.
fn run_for(secs: &str) -> Vec<&str> {
    RUN.iter().copied().chain(["-d", secs]).collect()
}

fn config(dir: &Path, run: &[&str]) -> (RunConfig, Vec<String>) {
    let dir = dir.display().to_string();
    let mut argv: Vec<&str> = vec!["txbench", "run"];
    argv.extend_from_slice(run);
    argv.extend_from_slice(&[
        "--log",
        &dir,
        "--log-group-us",
        "1000",
        "--checkpoint-s",
        "1",
    ]);
    let Command::Run(args) = Cli::try_parse_from(argv).expect("flags").command else {
        unreachable!("a run")
    };
    let cfg = args.validate().expect("valid flags");
    (cfg, run.iter().map(|s| s.to_string()).collect())
}

/// The YCSB workload of [`RUN`].
fn ycsb(c: &WorkloadConfig) -> Ycsb {
    let WorkloadConfig::Ycsb(c) = c else {
        unreachable!("ycsb")
    };
    Ycsb::new(c.clone())
}

/// Runs the workload with its log in `dir` while `drive` takes checkpoints on its own
/// thread; returns the live database at the end (the log finished).
fn logged_run<W: Workload>(
    dir: &Path,
    run: &[&str],
    make: impl FnOnce(&WorkloadConfig) -> W,
    drive: impl FnOnce(&mut Checkpointer<'_, <Silo as Protocol>::RecordMeta>) + Send,
) -> (W, SiloDb) {
    logged_run_chunked(dir, run, make, drive, 0)
}

/// [`logged_run`] with growing tables in chunks of about `chunk_bytes` (0: the default).
fn logged_run_chunked<W: Workload>(
    dir: &Path,
    run: &[&str],
    make: impl FnOnce(&WorkloadConfig) -> W,
    drive: impl FnOnce(&mut Checkpointer<'_, <Silo as Protocol>::RecordMeta>) + Send,
    chunk_bytes: usize,
) -> (W, SiloDb) {
    let (cfg, run_args) = config(dir, run);
    let workload = make(&cfg.workload);
    let db: SiloDb = build(&workload, chunk_bytes);
    workload.load(&db);
    let settings = cfg.log.as_ref().expect("logged");
    let log = Logger::create(settings, cfg.exec.threads, &run_args).expect("log");
    assert!(log.has_segments());
    let protocol = Silo::new(&cfg.options);
    std::thread::scope(|s| {
        s.spawn(|| log.run_flusher());
        let driver = s.spawn(|| {
            let mut c = Checkpointer::new(&log, &db, dir, Duration::from_secs(1));
            drive(&mut c);
        });
        run_threads_logged(&protocol, &db, &workload, &cfg.exec, None, Some(&log));
        driver.join().expect("driver");
        log.finish().expect("the log finishes");
    });
    (workload, db)
}

/// Recovers `dir` into a fresh database as `txbench recover` does.
fn recover<W: Workload>(
    workload: &W,
    dir: &Path,
) -> Result<(Database<ReplayLatch>, crate::log::recover::Recovery), String> {
    recover_chunked(workload, dir, 0)
}

/// `workload`'s tables (stamped), growing ones in chunks of about `chunk_bytes` (0: the
/// default).
fn build<W: Workload, M: Default + Send>(workload: &W, chunk_bytes: usize) -> Database<M> {
    let (tables, indexes, growable) = (
        workload.tables(),
        workload.indexes(),
        workload.growable_tables(),
    );
    if chunk_bytes == 0 {
        Database::try_build_growable(&tables, &indexes, true, &growable)
    } else {
        Database::try_build_growable_chunked(&tables, &indexes, true, &growable, chunk_bytes)
    }
    .expect("tables")
}

/// [`recover`] into tables of [`build`]`(workload, chunk_bytes)`.
fn recover_chunked<W: Workload>(
    workload: &W,
    dir: &Path,
    chunk_bytes: usize,
) -> Result<(Database<ReplayLatch>, crate::log::recover::Recovery), String> {
    let log = read_log_dir(dir).map_err(|e| e.to_string())?;
    let start: Plan = plan(&log, dir).map_err(|e| e.to_string())?;
    let db: Database<ReplayLatch> = build(workload, chunk_bytes);
    workload.load(&db);
    let rec = execute(&db, &log, start, 0.0, &|_| {}).map_err(|e| e.to_string())?;
    Ok((db, rec))
}

/// Records whose (row, seq) differ between the live and the recovered database.
fn differences(live: &SiloDb, recovered: &Database<ReplayLatch>) -> usize {
    let mut n = 0;
    for (ti, (t, r)) in live.tables().iter().zip(recovered.tables()).enumerate() {
        let before = n;
        let stored = t.stored_bytes();
        let seq_at = seq_word(stored);
        let (mut a, mut b) = (vec![0u8; stored], vec![0u8; stored]);
        for rid in 0..t.len() {
            let (Some(x), Some(y)) = (t.peek(RecordId(rid)), r.peek(RecordId(rid))) else {
                continue;
            };
            x.payload.load(&mut a);
            y.payload.load(&mut b);
            let (sx, sy) = (x.payload.word(seq_at), y.payload.word(seq_at));
            let (rx, ry) = (&a[..stored - STAMP_BYTES], &b[..stored - STAMP_BYTES]);
            // Both at seq 0: the loaded version, whose TPC-C dates are the loading moment's
            // (each load has its own). A record deleted for good and given back (a vacant
            // range) recovers vacant (`storage::is_vacant`: a zero first word; a delete
            // leaves the other bytes) at seq 0, its real seq unknown and no longer needed.
            let loaded = sx == 0 && sy == 0;
            let deleted = is_vacant(rx) && is_vacant(ry) && t.is_retired(RecordId(rid));
            if !loaded && !deleted && (rx != ry || sx != sy) {
                if n - before < 3 {
                    eprintln!(
                        "table {ti} ({}) record {rid}: live seq {} {:?}, recovered seq {} {:?}",
                        t.spec().name,
                        sx,
                        &rx[..16.min(rx.len())],
                        sy,
                        &ry[..16.min(ry.len())]
                    );
                }
                n += 1;
            }
        }
        if n > before {
            eprintln!(
                "table {ti} ({}): {} records differ",
                t.spec().name,
                n - before
            );
        }
    }
    n
}

fn complete(t: Result<Taken, String>) {
    assert!(matches!(t, Ok(Taken::Complete { .. })), "{t:?}");
}

/// Three checkpoints during the run (the last with a pause mid-copy, so records already
/// copied are written again in the epochs the copy spans), the oldest segments removed:
/// recovery starts from the third and equals the live database; replaying from the third's
/// end epoch instead of its start (mutant `ReplayFromEndEpoch`) loses writes.
#[test]
fn recovery_from_a_fuzzy_checkpoint_equals_the_live_state_and_the_end_epoch_mutant_is_caught() {
    let powerful = TRIES_SECS.iter().any(|secs| fuzzy_checkpoint_round(secs));
    assert!(
        powerful,
        "no run replayed transactions after its checkpoint and lost them under the mutant"
    );
}

/// One run of [`recovery_from_a_fuzzy_checkpoint_equals_the_live_state_and_the_end_epoch_mutant_is_caught`]:
/// asserts that recovery equals the live state; whether the run could tell the mutant apart
/// (transactions replayed after the checkpoint, and lost by the mutant).
fn fuzzy_checkpoint_round(secs: &str) -> bool {
    let dir = fresh_dir("equal");
    let (workload, live) = logged_run(&dir, &run_for(secs), ycsb, |c| {
        std::thread::sleep(Duration::from_millis(150));
        complete(c.take());
        std::thread::sleep(Duration::from_millis(100));
        complete(c.take());
        std::thread::sleep(Duration::from_millis(100));
        c.pause_mid_copy = Some(Duration::from_millis(200));
        complete(c.take());
        assert!(c.stats().segments_removed > 0, "{:?}", c.stats());
    });
    assert!(
        dir.join("checkpoint-000003.ckpt").exists() && !dir.join("checkpoint-000001.ckpt").exists(),
        "the newest two checkpoints are kept"
    );
    assert!(
        !dir.join("log-000-000000.log").exists(),
        "segments below the second checkpoint's start are removed"
    );
    let (db, rec) = recover(&workload, &dir).expect("recovers");
    let used = rec.checkpoint.as_ref().expect("from a checkpoint");
    assert_eq!(used.number, 3);
    assert!(used.end_epoch > used.start_epoch, "{used:?}");
    let replayed = rec.replay.txns_applied;
    assert_eq!(
        differences(&live, &db),
        0,
        "recovered state differs from the live one"
    );
    super::mutant::set_replay_from_end_epoch(true);
    let mutant = recover(&workload, &dir);
    super::mutant::set_replay_from_end_epoch(false);
    let (db, _) = mutant.expect("the mutant recovers too");
    let lost = differences(&live, &db);
    eprintln!(
        "{secs} s: {replayed} transactions replayed after checkpoint 3; mutant \
         ReplayFromEndEpoch: {lost} records differ from the live state"
    );
    let _ = std::fs::remove_dir_all(&dir);
    replayed > 0 && lost > 0
}

/// A crash after a checkpoint's file is synced but before its rename: recovery uses the
/// previous checkpoint, whose logs are all there, and equals the live state. Removing the
/// segments below the new checkpoint's start before it is durable (mutant
/// `TruncateBeforeDurable`) leaves no usable starting point.
fn crash_before_rename(mutant: CheckpointMutant, secs: &str) -> Result<usize, String> {
    let dir = fresh_dir(&format!("rename-{mutant:?}"));
    let (workload, live) = logged_run(&dir, &run_for(secs), ycsb, |c| {
        std::thread::sleep(Duration::from_millis(150));
        complete(c.take());
        std::thread::sleep(Duration::from_millis(100));
        complete(c.take());
        std::thread::sleep(Duration::from_millis(100));
        c.mutant = mutant;
        c.stop_before_rename = true;
        assert_eq!(c.take(), Ok(Taken::Abandoned));
    });
    assert!(dir.join("checkpoint-000003.tmp").exists());
    let out = recover(&workload, &dir).map(|(db, rec)| {
        assert_eq!(rec.checkpoint.as_ref().map(|c| c.number), Some(2));
        differences(&live, &db)
    });
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn a_crash_before_the_rename_recovers_from_the_previous_checkpoint() {
    assert_eq!(
        crash_before_rename(CheckpointMutant::None, TRIES_SECS[0]),
        Ok(0)
    );
}

#[test]
fn the_truncate_before_durable_mutant_is_caught() {
    // A run too slow to log much between its checkpoints may leave the mutant nothing removed
    // that recovery needs (AddressSanitizer's slowdown once did); it is run again, longer.
    let caught = TRIES_SECS.iter().any(|secs| {
        let out = crash_before_rename(CheckpointMutant::TruncateBeforeDurable, secs);
        eprintln!("{secs} s: mutant TruncateBeforeDurable: {out:?}");
        out.is_err()
    });
    assert!(caught, "the mutant recovered in every run");
}

/// TPC-C, whose Delivery deletes NEW-ORDER rows and gives their chunks back (vacant ranges in
/// the checkpoint): three checkpoints during the run, recovered from the third, equal to the
/// live database record by record, and TPC-C's conditions hold.
#[test]
fn a_tpcc_run_with_retired_chunks_recovers_to_the_live_state() {
    let dir = fresh_dir("tpcc");
    let run = &[
        "-w",
        "tpcc",
        "--warehouses",
        "1",
        "-p",
        "silo",
        "-t",
        "2",
        "-d",
        "1.5",
        "--warmup",
        "0",
        "--no-pin",
    ];
    let tpcc = |c: &WorkloadConfig| {
        let WorkloadConfig::Tpcc(c) = c else {
            unreachable!("tpcc")
        };
        Tpcc::new(c.clone())
    };
    let (workload, live) = logged_run(&dir, run, tpcc, |c| {
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(150));
            complete(c.take());
        }
    });
    let retired = live
        .tables()
        .iter()
        .filter_map(|t| t.retirement_stats())
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>();
    let (db, rec) = recover(&workload, &dir).expect("recovers");
    assert_eq!(rec.checkpoint.as_ref().map(|c| c.number), Some(3));
    assert_eq!(
        differences(&live, &db),
        0,
        "recovered state differs ({retired:?})"
    );
    let consistency = workload
        .check_consistency(&db)
        .expect("TPC-C has conditions");
    assert!(consistency.is_consistent(), "{:?}", consistency.examples);
    eprintln!("tpcc: retirement {retired:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Index `id`'s entries in key order; with `present_only`, only those whose row is present and
/// carries the entry's key (the end sentinel's always counts: `txn/index_ops.rs`).
fn index_entries<M>(
    db: &Database<M>,
    id: crate::storage::IndexId,
    present_only: bool,
) -> Vec<(u64, RecordId)> {
    let index = db.ordered_index(id);
    let table = db.table(index.spec.table);
    let mut row = vec![0u8; table.payload_bytes()];
    let mut out = Vec::new();
    let mut from = 0;
    while let Some((key, rid)) = index.map.first_at_or_after(from) {
        let present = key == crate::storage::END_SENTINEL_KEY
            || (!table.is_retired(rid)
                && table.peek(rid).is_some_and(|r| {
                    r.payload.load(&mut row);
                    !is_vacant(&row) && (index.spec.key_of)(&row) == key
                }));
        if present || !present_only {
            out.push((key, rid));
        }
        let Some(next) = key.checked_add(1) else {
            break;
        };
        from = next;
    }
    out
}

/// A TPC-C run with the log (and a checkpoint in it), recovered into a fresh database by a
/// fresh workload, then rebuilt ([`Workload::rebuild_after_recovery`], what a restarted
/// server does before it serves): both ordered indexes hold exactly the live run's present
/// entries, key by key, and no vacant one; NEW-ORDER's chunks are retired exactly where the
/// live run's are; each district's next HISTORY slot is one past its last row, no later than
/// the live run's counter (which also counts slots of aborted Payments). Chunks of 4 KiB (64
/// NEW-ORDER slots), so that Delivery retires some within the run.
#[test]
fn a_recovered_tpcc_database_rebuilds_the_live_indexes_and_counters() {
    use crate::workload::tpcc::schema::{HISTORY, NEW_ORDER, NEW_ORDER_INDEX, ORDER_BY_CUSTOMER};
    let dir = fresh_dir("tpcc-rebuild");
    let run = &[
        "-w",
        "tpcc",
        "--warehouses",
        "1",
        "-p",
        "silo",
        "-t",
        "2",
        "-d",
        "1",
        "--warmup",
        "0",
        "--no-pin",
    ];
    let tpcc = |c: &WorkloadConfig| {
        let WorkloadConfig::Tpcc(c) = c else {
            unreachable!("tpcc")
        };
        Tpcc::new(c.clone())
    };
    const CHUNK_BYTES: usize = 4096;
    let (live_workload, live) = logged_run_chunked(
        &dir,
        run,
        tpcc,
        |c| {
            std::thread::sleep(Duration::from_millis(300));
            complete(c.take());
        },
        CHUNK_BYTES,
    );
    let fresh = Tpcc::new(live_workload.config().clone());
    let (db, _) = recover_chunked(&fresh, &dir, CHUNK_BYTES).expect("recovers");
    assert_eq!(differences(&live, &db), 0, "the rows recover");
    let rebuilt = fresh.rebuild_after_recovery(&db);
    eprintln!("tpcc rebuild: {rebuilt:?}");
    for id in [NEW_ORDER_INDEX, ORDER_BY_CUSTOMER] {
        let name = &db.ordered_index(id).spec.name;
        let want = index_entries(&live, id, true);
        let got = index_entries(&db, id, false);
        assert_eq!(
            got,
            index_entries(&db, id, true),
            "{name}: a rebuilt index has no vacant entry"
        );
        if let Some(i) = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i)) {
            panic!(
                "{name}: {} live present entries, {} rebuilt; the first difference, at position \
                 {i}: live {:?}, rebuilt {:?}",
                want.len(),
                got.len(),
                want.get(i),
                got.get(i)
            );
        }
    }
    let (live_new_orders, new_orders) = (live.table(NEW_ORDER), db.table(NEW_ORDER));
    let per_chunk = new_orders.records_per_chunk();
    let retired = (0..new_orders.len())
        .step_by(per_chunk as usize)
        .filter(|&r| {
            let (a, b) = (
                live_new_orders.is_retired(RecordId(r)),
                new_orders.is_retired(RecordId(r)),
            );
            assert_eq!(a, b, "NEW-ORDER's chunk at record {r}: live retired {a}");
            b
        })
        .count();
    eprintln!("NEW-ORDER: {retired} chunks retired, as live");
    let loaded = 10 * (2100 / per_chunk);
    assert!(
        retired as u64 > loaded,
        "Delivery retired no chunk beyond the load's {loaded}"
    );
    let layout = live_workload.config().layout();
    let present = |w, d, k| {
        layout
            .history(w, d, k)
            .and_then(|rid| live.table(HISTORY).peek(rid))
            .is_some_and(|r| !r.payload.is_vacant())
    };
    for d in 1..=10 {
        let next = fresh.next_history(1, d);
        assert!(next <= live_workload.next_history(1, d), "district {d}");
        assert!(
            next == 3000 || present(1, d, next - 1),
            "district {d}: {next}"
        );
        assert!(
            (next..layout.orders_per_district).all(|k| !present(1, d, k)),
            "district {d}: a row after slot {next}"
        );
    }
    assert!(
        rebuilt.entries_added > 0 && rebuilt.entries_removed > 0 && rebuilt.slots_retired > 0,
        "the run placed and delivered orders: {rebuilt:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
