//! `txbench serve --log DIR`: the server's redo log. Every session is a logged worker (its
//! transaction handle attached to the log, as the thread executor's workers are), so every
//! committed transaction of every session goes through the same install hook and the same
//! files as `txbench run --log`; a session's `COMMIT` is answered only once the log says the
//! commit is durable (`server.rs`, "Durability").
//!
//! On start, a directory that holds a previous server's log is recovered into the freshly
//! loaded database before the first session is accepted (the code of `txbench recover`:
//! [`crate::log::recover`]), and the log continues in the same directory as a new generation
//! of the same run ([`crate::log::resume`] says why and how); then the workload rebuilds what
//! the log does not hold from the recovered rows
//! ([`Workload::rebuild_after_recovery`]: TPC-C's indexes, NEW-ORDER's retired slots and
//! HISTORY counters), so the sessions find the database as a live run would have left it.
//! An empty directory starts a new
//! log. A directory whose manifest describes another workload, or another number of
//! sessions, is refused: its records would not be the loaded tables' records.

use crate::config::RunConfig;
use crate::log::recover::{Recovery, read_log_dir};
use crate::log::resume::{RestartPoint, ResumeError, resume};
use crate::log::{LogSettings, Logger};
use crate::storage::Database;
use crate::workload::{Rebuilt, Workload};
use std::path::Path;
use std::time::Instant;

/// The server's log, and what it recovered on start.
pub struct ServerLog {
    /// The log the sessions write.
    pub logger: Logger,
    /// With a previous log in the directory: what recovery found, where the new generation
    /// starts, and what the workload rebuilt from the recovered rows.
    pub resumed: Option<(Recovery, RestartPoint, Rebuilt)>,
}

/// Why a server's log directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ServerLogError {
    /// The directory is not one this server can log to: another workload's log, another
    /// session count, an unreadable or unrecoverable log (bad input: exit 2).
    #[error("--log {dir}: {why}")]
    Refused {
        /// The directory.
        dir: String,
        /// Why.
        why: String,
    },
    /// Recovery or the new generation's files failed part-way (exit 1).
    #[error("--log {dir}: {why}")]
    Failed {
        /// The directory.
        dir: String,
        /// Why.
        why: String,
    },
}

/// Opens the server's log in `settings.dir` for `workers` sessions: a new log in an empty
/// directory, or (module docs) the previous server's log recovered into `db`, rebuilt by
/// `workload`, and continued. `db` is loaded by `workload` as `run` says and not yet served.
pub fn open_server_log<M: Sync, W: Workload>(
    settings: &LogSettings,
    workers: usize,
    run: &RunConfig,
    workload: &W,
    db: &Database<M>,
) -> Result<ServerLog, ServerLogError> {
    let dir = &settings.dir;
    let refused = |why: String| ServerLogError::Refused {
        dir: dir.display().to_string(),
        why,
    };
    if !crate::log::files::holds_log(dir).map_err(|e| refused(e.to_string()))? {
        let logger = Logger::create(settings, workers, &settings.run_args)
            .map_err(|e| refused(e.to_string()))?;
        return Ok(ServerLog {
            logger,
            resumed: None,
        });
    }
    let read_from = Instant::now();
    let log = read_log_dir(dir).map_err(|e| refused(e.to_string()))?;
    let read_s = read_from.elapsed().as_secs_f64();
    let logged = crate::recovery::manifest_run_config(dir, &log.manifest)
        .map_err(|e| refused(e.to_string()))?;
    if logged.workload != run.workload {
        return Err(refused(format!(
            "it holds the log of another workload (its manifest: `{}`; its tables: {}; this \
             server's: {}): choose an empty directory, or serve the same workload",
            log.manifest.args.join(" "),
            describe_tables(&logged),
            describe_tables(run),
        )));
    }
    if log.manifest.workers != workers {
        return Err(refused(format!(
            "it holds the log of a server with --max-connections {} (one logged worker per \
             session); give --max-connections {} to continue it",
            log.manifest.workers, log.manifest.workers
        )));
    }
    if log.manifest.logs != settings.logs_for(workers) {
        return Err(refused(format!(
            "it holds a log written to {} files (--log-files); give --log-files {} to \
             continue it",
            log.manifest.logs, log.manifest.logs
        )));
    }
    match resume(db, dir, &log, settings, read_s) {
        Ok(r) => {
            let rebuilt = workload.rebuild_after_recovery(db);
            Ok(ServerLog {
                logger: r.logger,
                resumed: Some((r.recovery, r.restart, rebuilt)),
            })
        }
        Err(ResumeError::NoStart(why)) => Err(refused(why.to_string())),
        Err(e @ (ResumeError::Replay(_) | ResumeError::Io(_))) => Err(ServerLogError::Failed {
            dir: dir.display().to_string(),
            why: e.to_string(),
        }),
    }
}

fn describe_tables(run: &RunConfig) -> String {
    run.workload
        .tables()
        .iter()
        .map(|t| format!("{} {} x {} B", t.name, t.records, t.payload_bytes))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The line a resumed server prints before it listens.
pub fn describe_resumed(
    dir: &Path,
    rec: &Recovery,
    restart: &RestartPoint,
    rebuilt: &Rebuilt,
) -> String {
    let from = match &rec.checkpoint {
        Some(c) => format!("checkpoint {} ({} records)", c.number, c.records),
        None => "the load".to_string(),
    };
    let rebuilt = if *rebuilt == Rebuilt::default() {
        String::new()
    } else {
        format!(
            "; rebuilt {} index entries ({} vacant ones removed), {} slots retired, {} \
             counters set",
            rebuilt.entries_added,
            rebuilt.entries_removed,
            rebuilt.slots_retired,
            rebuilt.counters_set
        )
    };
    format!(
        "recovered {}: from {from}, {} transactions replayed up to durable epoch {} ({} beyond \
         it dropped, never acknowledged); wrote them as checkpoint {} ({} records), removed {} \
         old files{rebuilt}; logging on from epoch {}",
        dir.display(),
        rec.replay.txns_applied,
        rec.frontier,
        rec.replay.txns_beyond_frontier,
        restart.checkpoint,
        restart.records,
        restart.files_removed,
        restart.first_epoch
    )
}
