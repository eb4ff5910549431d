//! Power loss and a full disk (issue 25), on the simulated log device
//! (`txbench::log::device::MemDevice`), which keeps written and synced bytes apart.
//!
//! A SIGKILL (tests/crash.rs) keeps every written byte in the page cache; power loss keeps only
//! what was synced, and may keep any prefix of what was written after. Here TPC-C runs under
//! Silo with a group-committed log on simulated devices; at random moments during the run the
//! test takes the ids acknowledged so far, then a cut of every device (a log file shared by
//! two of the four workers) at one instant (all
//! device locks held). Each cut is recovered as power loss left it (synced bytes only) and
//! with each file's last frame torn at every byte offset, and must hold every transaction
//! acknowledged before it; a few cuts are replayed into a loaded database whose TPC-C
//! consistency conditions must hold.

mod common;

use clap::Parser;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use txbench::config::{Cli, Command, RunConfig};
use txbench::exec::run_threads_logged;
use txbench::log::device::{LogDevice, MemDevice};
use txbench::log::format::{self, Frame, FrameReader};
use txbench::log::recover::{LogFile, ReplayLatch, recover_into, scan_file};
use txbench::log::{LogSync, Logger};
use txbench::protocol::Protocol;
use txbench::protocol::silo::Silo;
use txbench::storage::Database;
use txbench::workload::Workload;
use txbench::workload::WorkloadConfig;
use txbench::workload::tpcc::Tpcc;
use txbench::workload::ycsb::Ycsb;

const RUN_ID: u64 = 0x0025;

/// `txbench run ARGS`, validated.
fn config(args: &[&str]) -> RunConfig {
    let cli = Cli::parse_from(["txbench", "run"].iter().chain(args));
    let Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    run.validate().expect("valid flags")
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("txbench-power-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// One device per log, each holding its synced file header.
fn devices(logs: usize, capacity: Option<usize>) -> Vec<MemDevice> {
    (0..logs)
        .map(|w| {
            let mut d = MemDevice::with_capacity(capacity);
            let mut header = Vec::new();
            format::write_file_header(&mut header, w as u32, RUN_ID);
            d.append(&header).expect("header fits");
            d.sync().expect("sync");
            d
        })
        .collect()
}

/// A group-committed log of `workers` workers over `devices` (worker `w` writes to device
/// `w % devices.len()`).
fn logger(devices: &[MemDevice], workers: usize, acks: &std::path::Path) -> Logger {
    let boxed = devices
        .iter()
        .map(|d| Box::new(d.clone()) as Box<dyn LogDevice>)
        .collect();
    let mut log = Logger::new(boxed, workers, LogSync::Group, Duration::from_micros(500));
    log.record_acks_in(acks).expect("ack files");
    log
}

/// The transactions recovery would replay from `files`: those at or below the frontier in
/// each file's valid prefix.
fn replayable(files: &[Vec<u8>]) -> HashSet<u64> {
    let scans: Vec<_> = files
        .iter()
        .enumerate()
        .map(|(w, f)| scan_file("f", f, w, RUN_ID))
        .collect();
    let markers: Vec<_> = scans.iter().map(|s| s.marker).collect();
    let frontier = format::frontier(&markers);
    let mut ids = HashSet::new();
    for (f, s) in files.iter().zip(&scans) {
        for frame in FrameReader::new(&f[..s.valid_bytes as usize]) {
            if let Frame::Txn(t) = frame
                && t.epoch <= frontier
            {
                ids.insert(t.txn_id);
            }
        }
    }
    ids
}

/// Offset where the last whole frame of `bytes` starts.
fn last_frame_start(bytes: &[u8]) -> usize {
    let mut r = FrameReader::new(bytes);
    let mut start = 0;
    loop {
        let at = r.offset();
        if r.next().is_none() {
            return start;
        }
        start = at;
    }
}

/// A cut of every device at one instant: (written, synced length) per device.
fn cut(devices: &[MemDevice]) -> Vec<(Vec<u8>, usize)> {
    let guards: Vec<_> = devices
        .iter()
        .map(|d| d.0.lock().expect("device"))
        .collect();
    guards
        .iter()
        .map(|s| (s.written.clone(), s.synced))
        .collect()
}

/// Replays `files` into a freshly loaded TPC-C database and checks its consistency; returns
/// the ids replayed.
fn replay_tpcc(workload: &Tpcc, files: &[Vec<u8>]) -> HashSet<u64> {
    let db: Database<ReplayLatch> = Database::try_build_growable(
        &workload.tables(),
        &workload.indexes(),
        true,
        &workload.growable_tables(),
    )
    .expect("tables");
    workload.load(&db);
    let files: Vec<LogFile> = files
        .iter()
        .enumerate()
        .map(|(w, b)| LogFile {
            path: PathBuf::from(format!("log-{w}")),
            bytes: b.clone(),
        })
        .collect();
    let ids = std::sync::Mutex::new(HashSet::new());
    let rec = recover_into(&db, &files, RUN_ID, 0.0, &|id| {
        ids.lock().expect("ids").insert(id);
    })
    .expect("replay");
    assert!(rec.replay.txns_applied > 0 || rec.frontier == 0);
    let consistency = workload
        .check_consistency(&db)
        .expect("TPC-C has conditions");
    assert!(
        consistency.is_consistent(),
        "recovered database inconsistent: {:?}",
        consistency.examples
    );
    ids.into_inner().expect("ids")
}

#[test]
fn power_loss_at_any_moment_and_any_torn_tail_keeps_every_acknowledged_transaction() {
    let cfg = config(&[
        "-w",
        "tpcc",
        "--warehouses",
        "1",
        "-p",
        "silo",
        "-t",
        "4",
        "-d",
        "1.5",
        "--warmup",
        "0",
        "--no-pin",
    ]);
    let WorkloadConfig::Tpcc(c) = &cfg.workload else {
        unreachable!("tpcc")
    };
    let workload = Tpcc::new(c.clone());
    let db: Database<<Silo as Protocol>::RecordMeta> = Database::try_build_growable(
        &workload.tables(),
        &workload.indexes(),
        true,
        &workload.growable_tables(),
    )
    .expect("tables");
    workload.load(&db);
    let protocol = Silo::new(&cfg.options);
    let acks = fresh_dir("tpcc-acks");
    // Two logs of two workers each: a flush writes both workers' bytes to each log, and may
    // be cut between the logs.
    let devs = devices(2, None);
    let log = logger(&devs, cfg.exec.threads, &acks);
    let done = AtomicBool::new(false);
    let cuts = std::thread::scope(|s| {
        s.spawn(|| log.run_flusher());
        let cutter = s.spawn(|| {
            let mut cuts = Vec::new();
            let mut moment = 0x9e37_79b9_u64;
            while !done.load(Ordering::Acquire) {
                moment = moment
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                std::thread::sleep(Duration::from_millis(50 + (moment >> 33) % 200));
                // Acknowledged before the cut: each must survive it.
                let acked: HashSet<u64> = common::acknowledged(&acks);
                cuts.push((acked, cut(&devs)));
            }
            cuts
        });
        run_threads_logged(&protocol, &db, &workload, &cfg.exec, None, Some(&log));
        done.store(true, Ordering::Release);
        let cuts = cutter.join().expect("cutter");
        log.finish().expect("the log finishes");
        cuts
    });
    assert!(cuts.len() >= 3, "only {} cuts", cuts.len());
    let mut tested_acks = 0;
    for (i, (acked, devices)) in cuts.iter().enumerate() {
        let synced: Vec<Vec<u8>> = devices.iter().map(|(w, s)| w[..*s].to_vec()).collect();
        let survivors = replayable(&synced);
        let lost = acked.difference(&survivors).count();
        assert_eq!(
            lost,
            0,
            "cut {i}: {lost} of {} acknowledged lost",
            acked.len()
        );
        tested_acks += acked.len();
        // Each file's last written frame torn at every byte offset, the others as synced.
        for (f, (written, _)) in devices.iter().enumerate() {
            let from = last_frame_start(written);
            for at in from..=written.len() {
                let mut files = synced.clone();
                if at < files[f].len() {
                    continue; // shorter than what was synced: not a power loss
                }
                files[f] = written[..at].to_vec();
                let survivors = replayable(&files);
                assert!(
                    acked.is_subset(&survivors),
                    "cut {i}, file {f} torn at {at}: acknowledged transactions lost"
                );
            }
        }
        // Replayed for real, consistency checked: the first cut, a middle one, the last.
        if i == 0 || i == cuts.len() / 2 || i + 1 == cuts.len() {
            let ids = replay_tpcc(&workload, &synced);
            assert!(
                acked.is_subset(&ids),
                "cut {i}: replay lost acknowledged ones"
            );
        }
    }
    assert!(tested_acks > 0, "no cut followed an acknowledgement");
    let _ = std::fs::remove_dir_all(&acks);
}

/// Bytes each simulated device holds in the full-disk test: room for a few hundred flushes,
/// so the first acknowledgements come well before it fills even when the flusher is slow to
/// get a core (a loaded machine), and it fills within a fraction of the 20 s run.
const CAPACITY: usize = 4_000_000;

/// A disk that fills up mid-run: the log stops with an error naming it, the run stops early,
/// and what was acknowledged before is all in the log's valid prefix (the partial write at the
/// end is a torn tail recovery names).
#[test]
fn a_full_disk_stops_the_run_and_keeps_what_was_acknowledged() {
    let cfg = config(&[
        "-w",
        "ycsb",
        "--records",
        "1000",
        "--ops",
        "4",
        "--rmw",
        "-p",
        "silo",
        "-t",
        "2",
        "-d",
        "20",
        "--warmup",
        "0",
        "--no-pin",
    ]);
    let WorkloadConfig::Ycsb(c) = &cfg.workload else {
        unreachable!("ycsb")
    };
    let workload = Ycsb::new(c.clone());
    let db: Database<<Silo as Protocol>::RecordMeta> =
        Database::try_build_growable(&workload.tables(), &[], true, &[]).expect("tables");
    workload.load(&db);
    let protocol = Silo::new(&cfg.options);
    let acks = fresh_dir("full-acks");
    // One log for both workers (the default at 2 workers).
    let devs = devices(1, Some(CAPACITY));
    let log = logger(&devs, cfg.exec.threads, &acks);
    let outcome = std::thread::scope(|s| {
        s.spawn(|| log.run_flusher());
        run_threads_logged(&protocol, &db, &workload, &cfg.exec, None, Some(&log))
    });
    let failure = log.finish().expect_err("the disk filled up");
    assert!(failure.contains("no space left"), "{failure}");
    assert!(
        outcome.measured < cfg.exec.duration,
        "the run did not stop when the log failed"
    );
    let acked: HashSet<u64> = common::acknowledged(&acks);
    assert!(
        !acked.is_empty(),
        "nothing was acknowledged before the disk filled"
    );
    let files: Vec<Vec<u8>> = devs.iter().map(MemDevice::written).collect();
    let survivors = replayable(&files);
    assert!(
        acked.is_subset(&survivors),
        "acknowledged transactions lost"
    );
    let full = files
        .iter()
        .enumerate()
        .map(|(w, f)| scan_file("f", f, w, RUN_ID))
        .find(|s| s.bytes == CAPACITY as u64)
        .expect("a device filled to its capacity");
    assert!(
        full.stopped.is_some(),
        "the partial write reads as a torn tail"
    );
    let _ = std::fs::remove_dir_all(&acks);
}
