//! `txbench recover DIR`: rebuilds the database a logged run left, and checks it.
//!
//! The log's manifest holds the run's `txbench run` arguments; they are validated again to
//! rebuild the workload's configuration, whose deterministic load (the same seed, the same
//! bytes on any thread count) is the starting point every logged version's seq counts from
//! (seq 0 is the loaded version). On it go the newest complete checkpoint whose logs are all
//! there, if any (a torn or corrupted one is passed over, named with its byte offset), and
//! then the log from the checkpoint's start epoch ([`crate::log::recover`]: one thread per
//! segment file, a last-writer-wins merge up to the durable frontier); the workload then
//! rebuilds what the log does not hold ([`Workload::rebuild_after_recovery`]: TPC-C's indexes,
//! retired slots and HISTORY counters), as a restarted server does before it serves, and its
//! consistency conditions are checked on the result (TPC-C's clause 3.3.2).

use crate::config::{Cli, Command, Format, RecoverArgs};
use crate::log::LogError;
use crate::log::recover::{
    NoStart, Recovery, ReplayError, ReplayLatch, execute, plan, read_log_dir,
};
use crate::metrics::output::{Output, OutputError};
use crate::storage::Database;
use crate::workload::tpcc::{ConsistencyReport, Tpcc};
use crate::workload::{Rebuilt, Workload, WorkloadConfig};
use clap::Parser;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// Why a log directory could not be recovered.
#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    /// The directory, its manifest or a file could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The manifest's run arguments do not validate (another build's log, an edited manifest).
    #[error("{dir}: the manifest's run arguments do not describe a run this build can load: {why}")]
    Manifest {
        /// The directory.
        dir: String,
        /// What is wrong.
        why: String,
    },
    /// The tables could not be allocated.
    #[error(transparent)]
    Tables(#[from] crate::storage::TableAllocError),
    /// An entry does not fit the database (a log of another configuration).
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// No checkpoint is usable and the log from the load is gone.
    #[error("{dir}: {why}")]
    NoStart {
        /// The directory.
        dir: String,
        /// Each candidate's problem.
        why: NoStart,
    },
}

impl RecoverError {
    /// The binary's exit status: 2 for a directory that is not a recoverable log (bad input),
    /// 1 when the log does not fit the database its manifest describes.
    pub fn exit_code(&self) -> u8 {
        match self {
            RecoverError::Replay(_) => 1,
            _ => 2,
        }
    }
}

/// What `txbench recover` reports.
#[derive(Debug, Clone, Serialize)]
pub struct RecoveryReport {
    /// The log directory.
    pub dir: String,
    /// The workload the run loaded.
    pub workload: String,
    /// Seconds to build and load the tables (the starting point).
    pub load_s: f64,
    /// The replay: per file where it stopped, the frontier, the rates.
    #[serde(flatten)]
    pub recovery: Recovery,
    /// What the workload rebuilt from the recovered rows besides them.
    pub rebuilt: Rebuilt,
    /// The workload's consistency conditions on the recovered database (TPC-C); `None` for a
    /// workload without any.
    pub consistency: Option<ConsistencyReport>,
}

impl RecoveryReport {
    /// Whether the recovered database is sound: every file's header belongs to the run, and the
    /// consistency conditions hold.
    pub fn is_sound(&self) -> bool {
        self.recovery
            .files
            .iter()
            .all(|f| f.header_problem.is_none())
            && self
                .consistency
                .as_ref()
                .is_none_or(ConsistencyReport::is_consistent)
    }
}

/// Recovers the log in `dir` into a fresh database and checks it; `on_txn` sees the id of
/// every transaction replayed (from several threads).
pub fn recover_dir(
    dir: &Path,
    on_txn: &(dyn Fn(u64) + Sync),
) -> Result<RecoveryReport, RecoverError> {
    let read_from = Instant::now();
    let log = read_log_dir(dir)?;
    let manifest = &log.manifest;
    let read_s = read_from.elapsed().as_secs_f64();
    let start = plan(&log, dir).map_err(|why| RecoverError::NoStart {
        dir: dir.display().to_string(),
        why,
    })?;
    let cfg = manifest_run_config(dir, manifest)?;
    let replay = |db: &Database<ReplayLatch>| execute(db, &log, start, read_s, on_txn);
    let (workload, load_s, recovery, rebuilt, consistency) = match &cfg.workload {
        WorkloadConfig::Tpcc(c) => recover_workload(&Tpcc::new(c.clone()), replay)?,
        WorkloadConfig::Ycsb(c) => {
            recover_workload(&crate::workload::ycsb::Ycsb::new(c.clone()), replay)?
        }
        WorkloadConfig::LongScan(c) => recover_workload(
            &crate::workload::long_scan::LongScan::new(c.clone()),
            replay,
        )?,
        WorkloadConfig::WriteSkew(c) => recover_workload(
            &crate::workload::write_skew::WriteSkew::new(c.clone()),
            replay,
        )?,
        WorkloadConfig::Shifting(c) => {
            recover_workload(&crate::workload::shifting::Shifting::new(c.clone()), replay)?
        }
    };
    Ok(RecoveryReport {
        dir: dir.display().to_string(),
        workload,
        load_s,
        recovery,
        rebuilt,
        consistency,
    })
}

/// The run configuration a log's manifest describes: its `txbench run` arguments, validated
/// again (recovery rebuilds the loaded database from it; a restarting server compares its
/// workload with its own).
pub fn manifest_run_config(
    dir: &Path,
    manifest: &crate::log::files::Manifest,
) -> Result<crate::config::RunConfig, RecoverError> {
    let bad = |why: String| RecoverError::Manifest {
        dir: dir.display().to_string(),
        why,
    };
    let argv = ["txbench", "run"]
        .into_iter()
        .map(String::from)
        .chain(manifest.args.iter().cloned());
    let args = match Cli::try_parse_from(argv) {
        Ok(Cli {
            command: Command::Run(args),
        }) => args,
        Ok(_) => return Err(bad("not a run".to_string())),
        Err(e) => return Err(bad(e.to_string())),
    };
    args.validate().map_err(|e| bad(e.to_string()))
}

type Recovered = (String, f64, Recovery, Rebuilt, Option<ConsistencyReport>);

/// Builds and loads `workload`'s database (stamped: replay compares seqs), replays into it,
/// rebuilds what the rows do not hold, and checks its consistency.
fn recover_workload<W: Workload>(
    workload: &W,
    replay: impl FnOnce(&Database<ReplayLatch>) -> Result<Recovery, ReplayError>,
) -> Result<Recovered, RecoverError> {
    let started = Instant::now();
    let db: Database<ReplayLatch> = Database::try_build_growable(
        &workload.tables(),
        &workload.indexes(),
        true,
        &workload.growable_tables(),
    )?;
    workload.load(&db);
    let load_s = started.elapsed().as_secs_f64();
    let recovery = replay(&db)?;
    let rebuilt = workload.rebuild_after_recovery(&db);
    let consistency = workload.check_consistency(&db);
    Ok((
        workload.name().to_string(),
        load_s,
        recovery,
        rebuilt,
        consistency,
    ))
}

/// `txbench recover`: recovers, prints what it found, and returns the exit status: 0 for a
/// sound database, 1 when a consistency condition fails or the log does not fit its manifest,
/// 2 when the directory is not a recoverable log.
pub fn recover_command(
    args: &RecoverArgs,
    out: &mut Output<impl std::io::Write>,
) -> Result<u8, OutputError> {
    let note = |line: std::fmt::Arguments<'_>| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{line}");
    };
    let ids = std::sync::Mutex::new(Vec::new());
    let collect = |id: u64| ids.lock().expect("ids lock").push(id);
    let no_ids = |_: u64| {};
    let on_txn: &(dyn Fn(u64) + Sync) = if args.txn_ids.is_some() {
        &collect
    } else {
        &no_ids
    };
    let report = match recover_dir(&args.dir, on_txn) {
        Ok(r) => r,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(e.exit_code());
        }
    };
    if let Some(path) = &args.txn_ids {
        let mut ids = ids.into_inner().expect("ids lock");
        ids.sort_unstable();
        let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
        if let Err(e) = std::fs::write(path, text) {
            note(format_args!("error: --txn-ids {}: {e}", path.display()));
            return Ok(2);
        }
    }
    match args.format {
        Format::Json => out.line(&serde_json::to_string(&report).expect("a report serialises"))?,
        Format::Table | Format::Csv => out.line(&describe(&report))?,
    }
    for why in &report.recovery.checkpoints_skipped {
        note(format_args!("warning: passed over {why}"));
    }
    for f in &report.recovery.files {
        if let Some(p) = &f.header_problem {
            note(format_args!("warning: {}: {p}", f.file));
        }
    }
    Ok(if report.is_sound() { 0 } else { 1 })
}

/// The human summary of a recovery.
fn describe(r: &RecoveryReport) -> String {
    let rec = &r.recovery;
    let mut s = match &rec.checkpoint {
        Some(c) => format!(
            "started from checkpoint {} ({}): {} records ({} stored), start epoch {}, end \
             epoch {}, {:.1} MiB\n",
            c.number,
            c.file,
            c.records,
            c.records_stored,
            c.start_epoch,
            c.end_epoch,
            c.bytes as f64 / (1u64 << 20) as f64
        ),
        None => "started from the load (no usable checkpoint)\n".to_string(),
    };
    for why in &rec.checkpoints_skipped {
        s += &format!("  passed over {why}\n");
    }
    s += &format!(
        "recovered {} ({}): {} transactions replayed from epoch {} up to durable epoch {} ({} \
         beyond it skipped, {} below the checkpoint's start skipped), {} records stored, {} \
         superseded\n\
         {:.1} MiB of log and checkpoint in {:.3} s: {:.2} GB/s, {:.0} records/s (reading the files: {:.3} s; \
         loading the tables first: {:.3} s)\n",
        r.dir,
        r.workload,
        rec.replay.txns_applied,
        rec.replay_from,
        rec.frontier,
        rec.replay.txns_beyond_frontier,
        rec.replay.txns_below_checkpoint,
        rec.replay.entries_stored,
        rec.replay.entries_superseded,
        rec.bytes as f64 / (1u64 << 20) as f64,
        rec.replay_s,
        rec.replay_gb_per_s,
        rec.records_per_s,
        rec.read_s,
        r.load_s,
    );
    let b = &r.rebuilt;
    if *b != Rebuilt::default() {
        s += &format!(
            "rebuilt from the recovered rows: {} index entries added, {} vacant ones removed, {} \
             slots retired, {} counters set\n",
            b.entries_added, b.entries_removed, b.slots_retired, b.counters_set
        );
    }
    for f in &rec.files {
        s += &format!(
            "  {}: {} transactions, last epoch marker {}, {}\n",
            f.file,
            f.txns,
            f.last_marker,
            match &f.stopped {
                Some(why) => format!("stopped: {why} (of {} bytes)", f.bytes),
                None => format!("read to the end ({} bytes)", f.bytes),
            }
        );
    }
    s += &match &r.consistency {
        None => "consistency: no conditions for this workload".to_string(),
        Some(c) if c.is_consistent() => {
            format!("consistency: {} conditions hold", c.conditions_checked)
        }
        Some(c) => format!(
            "consistency: {} violations: {}",
            c.consistency_violations,
            c.examples.join("; ")
        ),
    };
    s
}
