//! Power loss with checkpoints (issue 25), in process: TPC-C (one warehouse, 2 workers, 2.5 s
//! at 4,000 transactions/s offered, so that the cuts stay small while each checkpoint still
//! scans the whole database) under Silo with a group-committed log and a checkpoint every
//! 50 ms (and on after the run until the first two are complete, however slow the machine),
//! every log segment and checkpoint file in a simulated directory (`log::dir::MemDirectory`:
//! a file keeps its synced bytes, the directory its entries as of its last sync). Cuts are
//! taken by the checkpointer at each step of its first two checkpoints (halfway through the
//! copy, the `.tmp` synced, renamed, the directory synced) and by a thread at three random
//! moments of the run. Each cut (the acknowledged transactions read just before it, then what
//! the medium holds) is written out as a log directory, in a directory of its own per test
//! and cut (the two tests run at once), and recovered
//! as `txbench recover` does; it must:
//!
//! - find a starting point and pass over no checkpoint: a `.ckpt` on the medium is complete
//!   (the checkpoint was synced before its rename), so recovery starts from the newest one or,
//!   before the first, from the load;
//! - replay every acknowledged transaction of an epoch at or above the replay's first epoch
//!   (the checkpoint holds the earlier ones), and find none beyond the durable frontier;
//! - satisfy TPC-C's consistency conditions (no transaction applied in part).
//!
//! The `RenameBeforeSync` mutant (the `.tmp` renamed and the directory synced before its bytes
//! are) must be caught.

use super::taker::{CheckpointMutant, CheckpointStep, Checkpointer, Taken};
use crate::config::{Cli, Command, RunConfig};
use crate::exec::run_threads_logged;
use crate::log::device::LogDevice;
use crate::log::dir::{Directory, MemDirectory};
use crate::log::files::{MANIFEST, Manifest, SegmentFiles, segment_name};
use crate::log::format;
use crate::log::recover::{ReplayLatch, execute, plan, read_log_dir};
use crate::log::{LogSync, Logger};
use crate::protocol::Protocol;
use crate::protocol::silo::Silo;
use crate::storage::Database;
use crate::workload::Workload;
use crate::workload::WorkloadConfig;
use crate::workload::tpcc::Tpcc;
use clap::Parser;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const RUN_ID: u64 = 0x0025_c4ec;

/// Checkpoints whose every step is cut: the first (recovery then falls back to the load) and
/// the second (to the first).
const STEP_CUT_CHECKPOINTS: usize = 2;

fn fresh_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("txbench-ckpt-power-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

fn config(dir: &Path) -> RunConfig {
    let dir = dir.display().to_string();
    let argv = [
        "txbench",
        "run",
        "-w",
        "tpcc",
        "--warehouses",
        "1",
        "-p",
        "silo",
        "-t",
        "2",
        "-d",
        "2.5",
        "--rate",
        "4000",
        "--warmup",
        "0",
        "--no-pin",
        "--log",
        &dir,
        "--checkpoint-s",
        "0.05",
    ];
    let Command::Run(args) = Cli::try_parse_from(argv).expect("flags").command else {
        unreachable!("a run")
    };
    args.validate().expect("valid flags")
}

/// One cut: where it was taken, the transactions acknowledged before it (id, epoch), and what
/// the medium held (file name, bytes).
struct Cut {
    label: String,
    acked: Vec<(u64, u64)>,
    files: BTreeMap<String, Vec<u8>>,
}

/// Every whole `ID EPOCH` line of the ack files in `dir`.
fn acknowledged(dir: &Path) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("ack directory") {
        let text = std::fs::read_to_string(entry.expect("an entry").path()).unwrap_or_default();
        for line in text.lines() {
            let mut parts = line.split(' ');
            if let (Some(id), Some(epoch), None) = (parts.next(), parts.next(), parts.next())
                && let (Ok(id), Ok(epoch)) = (id.parse(), epoch.parse())
            {
                out.push((id, epoch));
            }
        }
    }
    out
}

/// The acknowledged transactions, then the medium: every ack read was written after its
/// transaction was durable, hence before the cut.
fn cut(label: String, acks: &Path, dir: &MemDirectory) -> Cut {
    let acked = acknowledged(acks);
    Cut {
        label,
        acked,
        files: dir.crash(),
    }
}

/// Writes `cut` out as a log directory, recovers it into a loaded TPC-C database and checks it
/// (module docs); returns whether recovery started from a checkpoint.
fn check(run: &str, workload: &Tpcc, workers: usize, cut: &Cut) -> Result<bool, String> {
    // Named by run too: the two tests run at once, and both take a "random 0" cut.
    let dir = fresh_dir(&format!("{run}-cut-{}", cut.label.replace(' ', "-")));
    let manifest = Manifest {
        format: format::FORMAT_VERSION,
        run_id: RUN_ID,
        workers,
        logs: workers,
        args: Vec::new(),
        kind: crate::log::LogKind::Redo,
    };
    std::fs::write(
        dir.join(MANIFEST),
        serde_json::to_string(&manifest).expect("a manifest serialises"),
    )
    .expect("write the manifest");
    for (name, bytes) in &cut.files {
        std::fs::write(dir.join(name), bytes).expect("write a file");
    }
    let log = read_log_dir(&dir).map_err(|e| e.to_string())?;
    let start = plan(&log, &dir).map_err(|e| format!("no starting point: {e}"))?;
    if !start.checkpoint_notes().is_empty() {
        return Err(format!(
            "passed over a checkpoint on the medium: {}",
            start.checkpoint_notes().join("; ")
        ));
    }
    let db: Database<ReplayLatch> = loaded(workload);
    let ids = Mutex::new(HashSet::new());
    let rec = execute(&db, &log, start, 0.0, &|id| {
        ids.lock().expect("ids").insert(id);
    })
    .map_err(|e| e.to_string())?;
    let ids = ids.into_inner().expect("ids");
    for &(id, epoch) in &cut.acked {
        if epoch > rec.frontier {
            return Err(format!(
                "transaction {id} was acknowledged in epoch {epoch}, beyond the frontier {}",
                rec.frontier
            ));
        }
        if epoch >= rec.replay_from && !ids.contains(&id) {
            return Err(format!(
                "transaction {id} (epoch {epoch}, acknowledged) lost: replay from {}",
                rec.replay_from
            ));
        }
    }
    let consistency = workload
        .check_consistency(&db)
        .expect("TPC-C has conditions");
    if !consistency.is_consistent() {
        return Err(format!("inconsistent: {:?}", consistency.examples));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rec.checkpoint.is_some())
}

/// TPC-C's tables, built growable and loaded, with record metadata `M` (the run's protocol's,
/// or recovery's latches).
fn loaded<M: Default + Send + Sync>(workload: &Tpcc) -> Database<M> {
    let db = Database::try_build_growable(
        &workload.tables(),
        &workload.indexes(),
        true,
        &workload.growable_tables(),
    )
    .expect("tables");
    workload.load(&db);
    db
}

/// Runs TPC-C with `mutant`, cutting as the module docs say; returns every cut's verdict.
fn run_and_cut(name: &str, mutant: CheckpointMutant) -> Vec<(String, Result<bool, String>)> {
    let tmp = fresh_dir(name);
    let acks = tmp.join("acks");
    std::fs::create_dir_all(&acks).expect("ack directory");
    let cfg = config(&tmp);
    let WorkloadConfig::Tpcc(c) = &cfg.workload else {
        unreachable!("tpcc")
    };
    let workload = Tpcc::new(c.clone());
    let db: Database<<Silo as Protocol>::RecordMeta> = loaded(&workload);
    let workers = cfg.exec.threads;
    let medium = MemDirectory::default();
    let devices = (0..workers)
        .map(|w| {
            let mut d = medium.create(&segment_name(w, 0)).expect("create");
            let mut header = Vec::new();
            format::write_file_header(&mut header, w as u32, RUN_ID);
            d.append(&header).expect("header");
            d.sync().expect("sync");
            d
        })
        .collect::<Vec<Box<dyn LogDevice>>>();
    medium.sync().expect("sync the directory");
    let files: Arc<dyn Directory> = Arc::new(medium.clone());
    // A log per worker: a flush writes two files, so power loss can cut it between them.
    let mut log = Logger::new(
        devices,
        workers,
        LogSync::Group,
        Duration::from_micros(1000),
    )
    .with_segments(Box::new(SegmentFiles { dir: files.clone() }), RUN_ID);
    log.record_acks_in(&acks).expect("ack files");
    let cuts = Mutex::new(Vec::new());
    let completed = AtomicUsize::new(0);
    let mut ckpt =
        Checkpointer::new(&log, &db, &tmp, Duration::from_millis(50)).in_directory(files);
    ckpt.mutant = mutant;
    let (cuts_ref, completed_ref, acks_ref, medium_ref) = (&cuts, &completed, &acks, &medium);
    ckpt.on_step = Some(Box::new(move |step: CheckpointStep| {
        // Relaxed: a counter of this thread's own.
        let n = completed_ref.load(Ordering::Relaxed);
        if n < STEP_CUT_CHECKPOINTS {
            let label = format!("checkpoint {} {step:?}", n + 1);
            cuts_ref
                .lock()
                .expect("cuts")
                .push(cut(label, acks_ref, medium_ref));
        }
        if step == CheckpointStep::DirSynced {
            completed_ref.fetch_add(1, Ordering::Relaxed);
        }
    }));
    let protocol = Silo::new(&cfg.options);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| log.run_flusher());
        // A checkpoint every 50 ms while the run lasts, and on after it until the step-cut ones
        // are complete: a loaded machine may end the run first.
        let checkpoints = s.spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(50));
                // Acquire: pairs with the Release below (nothing else is read). Relaxed: this
                // thread's own counter (`on_step` runs inside `take`).
                if done.load(Ordering::Acquire)
                    && completed.load(Ordering::Relaxed) >= STEP_CUT_CHECKPOINTS
                {
                    return;
                }
                match ckpt.take() {
                    Ok(Taken::Complete { .. }) => {}
                    Ok(Taken::Abandoned) => panic!("a checkpoint abandoned before the log ended"),
                    Err(why) => panic!("checkpoint failed: {why}"),
                }
            }
        });
        s.spawn(|| {
            // Random moments: a seeded xorshift over 80..400 ms.
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ mutant as u64;
            for i in 0..3 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                std::thread::sleep(Duration::from_millis(80 + x % 320));
                // Acquire: pairs with the Release below (nothing else is read).
                if done.load(Ordering::Acquire) {
                    return;
                }
                let c = cut(format!("random {i}"), &acks, &medium);
                cuts.lock().expect("cuts").push(c);
            }
        });
        run_threads_logged(
            &protocol,
            &db,
            &workload,
            &cfg.exec,
            cfg.open_loop,
            Some(&log),
        );
        done.store(true, Ordering::Release);
        checkpoints.join().expect("the checkpoint thread");
        log.finish().expect("the log finishes");
    });
    drop(ckpt);
    let cuts = cuts.into_inner().expect("cuts");
    let verdicts = cuts
        .iter()
        .map(|c| (c.label.clone(), check(name, &workload, workers, c)))
        .collect();
    let _ = std::fs::remove_dir_all(&tmp);
    verdicts
}

#[test]
fn power_loss_during_checkpoints_starts_from_a_complete_one_and_keeps_every_acknowledged_txn() {
    let verdicts = run_and_cut("real", CheckpointMutant::None);
    for (label, v) in &verdicts {
        eprintln!("{label}: {v:?}");
    }
    let steps = verdicts
        .iter()
        .filter(|(l, _)| l.starts_with("checkpoint"))
        .count();
    assert_eq!(steps, 4 * STEP_CUT_CHECKPOINTS, "a cut at every step");
    let failed: Vec<_> = verdicts.iter().filter(|(_, v)| v.is_err()).collect();
    assert!(failed.is_empty(), "cuts failed: {failed:?}");
    assert!(
        verdicts.iter().any(|(_, v)| matches!(v, Ok(true))),
        "no cut recovered from a checkpoint"
    );
}

#[test]
fn the_rename_before_sync_mutant_is_caught() {
    let verdicts = run_and_cut("rename-before-sync", CheckpointMutant::RenameBeforeSync);
    for (label, v) in &verdicts {
        eprintln!("{label}: {v:?}");
    }
    assert!(
        verdicts
            .iter()
            .any(|(_, v)| v.as_ref().is_err_and(|e| e.contains("passed over"))),
        "no cut caught a renamed checkpoint that was not synced"
    );
}
