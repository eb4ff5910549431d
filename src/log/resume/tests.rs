//! A restart stopped at each step (module docs of `resume`, "A crash during a restart"), in
//! process: a logged YCSB run under Silo with checkpoints leaves a directory, to which a
//! transaction beyond the durable frontier (never acknowledged) is added by hand; a restart
//! stopped after each step, and a complete one followed by a second logged run, must each
//! leave a directory that recovers to exactly the state it should, record by record (row and
//! seq), and the unacknowledged transaction must never come back.

use super::{Stop, resume_until};
use crate::config::{Cli, Command, RunConfig};
use crate::exec::run_threads_logged;
use crate::log::checkpoint::Checkpointer;
use crate::log::files::segment_file;
use crate::log::format;
use crate::log::recover::{execute, plan, read_log_dir};
use crate::log::{LogSettings, Logger};
use crate::protocol::Protocol;
use crate::protocol::silo::Silo;
use crate::storage::stamp::{STAMP_BYTES, seq_word};
use crate::storage::{Database, RecordId};
use crate::workload::Workload;
use crate::workload::WorkloadConfig;
use crate::workload::ycsb::Ycsb;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::time::Duration;

type SiloDb = Database<<Silo as Protocol>::RecordMeta>;

/// The seq the hand-written, never acknowledged transaction gives record 0: above any real one.
const UNACKNOWLEDGED_SEQ: u64 = 1 << 40;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("txbench-resume-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

fn copy_dir(from: &Path, name: &str) -> PathBuf {
    let to = fresh_dir(name);
    for entry in std::fs::read_dir(from).expect("read the log directory") {
        let entry = entry.expect("an entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy a file");
    }
    to
}

fn config(dir: &Path) -> RunConfig {
    let dir = dir.display().to_string();
    let argv = [
        "txbench",
        "run",
        "-w",
        "ycsb",
        "--records",
        "20000",
        "--ops",
        "4",
        "--rmw",
        "-p",
        "silo",
        "-t",
        "2",
        "-d",
        "0.4",
        "--warmup",
        "0",
        "--no-pin",
        "--log",
        &dir,
        "--log-group-us",
        "1000",
        "--checkpoint-s",
        "0.1",
    ];
    let Command::Run(mut args) = Cli::try_parse_from(argv).expect("flags").command else {
        unreachable!("a run")
    };
    // The second run logs to a directory that holds the first's log.
    args.resume_log = true;
    args.validate().expect("valid flags")
}

fn loaded(workload: &Ycsb) -> SiloDb {
    let db: SiloDb =
        Database::try_build(&workload.tables(), &workload.indexes(), true).expect("tables");
    workload.load(&db);
    db
}

/// Runs the workload with `log` (and a checkpointer every 0.1 s) on `db`, then finishes it.
fn logged_run(
    cfg: &RunConfig,
    workload: &Ycsb,
    db: &SiloDb,
    log: &Logger,
    ckpt: Checkpointer<'_, <Silo as Protocol>::RecordMeta>,
) {
    let protocol = Silo::new(&cfg.options);
    std::thread::scope(|s| {
        s.spawn(|| log.run_flusher());
        s.spawn(|| ckpt.run());
        run_threads_logged(&protocol, db, workload, &cfg.exec, None, Some(log));
        log.finish().expect("the log finishes");
    });
}

/// Every record's (seq, row) of a stamped database.
fn snapshot<M>(db: &Database<M>) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    for t in db.tables() {
        let stored = t.stored_bytes();
        let mut buf = vec![0u8; stored];
        for rid in 0..t.len() {
            let rec = t
                .peek(RecordId(rid))
                .expect("a YCSB table is allocated whole");
            rec.payload.load(&mut buf);
            out.push((
                rec.payload.word(seq_word(stored)),
                buf[..stored - STAMP_BYTES].to_vec(),
            ));
        }
    }
    out
}

/// Recovers `dir` into a fresh database and returns its records.
fn recovered(workload: &Ycsb, dir: &Path) -> Vec<(u64, Vec<u8>)> {
    let log = read_log_dir(dir).expect("a log directory");
    let start = plan(&log, dir).expect("a starting point");
    let db = loaded(workload);
    execute(&db, &log, start, 0.0, &|_| {}).expect("recovers");
    snapshot(&db)
}

/// Appends to worker 0's last segment a transaction of an epoch beyond every marker, writing
/// record 0 at [`UNACKNOWLEDGED_SEQ`]: what a crash leaves when worker 0's buffer reached its
/// file and another's did not.
fn add_unacknowledged_txn(dir: &Path, row_bytes: usize) {
    let log = read_log_dir(dir).expect("a log directory");
    let (segment, file) = log.logs[0].segments.last().expect("log 0");
    let highest = super::highest_epoch(&log, dir);
    let mut entries = Vec::new();
    format::push_entry(
        &mut entries,
        0,
        0,
        UNACKNOWLEDGED_SEQ,
        &vec![0xEE; row_bytes],
    );
    let mut bytes = file.bytes.clone();
    format::write_txn(&mut bytes, highest + 2, u64::MAX - 1, 1, &entries);
    std::fs::write(segment_file(dir, 0, *segment), bytes).expect("append");
}

#[test]
fn a_restart_stopped_at_any_step_recovers_the_same_state_and_continues() {
    let original = fresh_dir("original");
    let cfg = config(&original);
    let WorkloadConfig::Ycsb(c) = &cfg.workload else {
        unreachable!("ycsb")
    };
    let workload = Ycsb::new(c.clone());
    let settings: &LogSettings = cfg.log.as_ref().expect("logged");
    {
        let db = loaded(&workload);
        let log = Logger::create(settings, cfg.exec.threads, &[]).expect("log");
        let ckpt = Checkpointer::new(&log, &db, &original, Duration::from_millis(100));
        logged_run(&cfg, &workload, &db, &log, ckpt);
    }
    let row_bytes = workload.tables()[0].payload_bytes;
    add_unacknowledged_txn(&original, row_bytes);
    let expected = recovered(&workload, &original);
    assert!(
        expected[0].0 < UNACKNOWLEDGED_SEQ,
        "the transaction beyond the frontier is not replayed"
    );
    assert!(
        expected.iter().any(|(seq, _)| *seq > 0),
        "the run logged something"
    );

    // A restart stopped after each step: the directory recovers to the same state.
    for (name, stop) in [
        ("after-checkpoint", Stop::AfterCheckpoint),
        ("after-segments", Stop::AfterSegments),
        ("mid-removal", Stop::AfterRemoving(3)),
    ] {
        let dir = copy_dir(&original, name);
        let log = read_log_dir(&dir).expect("a log directory");
        let db = loaded(&workload);
        let stopped = resume_until(&db, &dir, &log, settings, 0.0, stop).expect("resumes");
        assert!(stopped.is_none(), "{name}: stopped");
        assert!(
            snapshot(&db) == expected,
            "{name}: the restarting server's state"
        );
        let again = recovered(&workload, &dir);
        assert!(
            again == expected,
            "{name}: the directory recovers to another state"
        );
        // And a restart of the stopped restart completes, to the same state.
        let log = read_log_dir(&dir).expect("a log directory");
        let db = loaded(&workload);
        resume_until(&db, &dir, &log, settings, 0.0, Stop::Never)
            .expect("resumes")
            .expect("completes");
        assert!(
            snapshot(&db) == expected,
            "{name}: the second restart's state"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    // A complete restart, then a second logged run on the resumed log (with checkpoints): the
    // directory recovers to the live state at its end, and record 0 never gets the
    // unacknowledged version, though the second run's epochs pass the one it was written in.
    let dir = copy_dir(&original, "continued");
    let log = read_log_dir(&dir).expect("a log directory");
    let db = loaded(&workload);
    let resumed = resume_until(&db, &dir, &log, settings, 0.0, Stop::Never)
        .expect("resumes")
        .expect("completes");
    assert!(snapshot(&db) == expected, "the restarted state");
    let restart = resumed.restart;
    let ckpt = Checkpointer::new(&resumed.logger, &db, &dir, Duration::from_millis(100))
        .after(restart.checkpoint, restart.first_epoch);
    logged_run(&cfg, &workload, &db, &resumed.logger, ckpt);
    assert!(
        resumed.logger.clock().durable() > restart.first_epoch,
        "the second run's epochs pass the restart's"
    );
    let live = snapshot(&db);
    assert!(live != expected, "the second run wrote something");
    let after = recovered(&workload, &dir);
    assert!(
        after[0].0 < UNACKNOWLEDGED_SEQ,
        "the unacknowledged write came back"
    );
    let differ = live.iter().zip(&after).filter(|(a, b)| a != b).count();
    assert_eq!(
        differ, 0,
        "records differ from the live state after the second run"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&original);
}
