//! Builds what `txbench serve` serves: the workload's tables, loaded, under the configured
//! protocol, matched once here from the closed protocol and workload sets (as `runner` does for
//! runs); everything below is monomorphised. With `--log`, the log (recovered first when the
//! directory holds a previous one: `durable.rs`), its flusher and its checkpointer run beside
//! the sessions.

use super::durable::{ServerLog, ServerLogError, open_server_log};
use super::server::{ServeConfig, ServeSummary, serve, serve_logged};
use crate::config::RunConfig;
use crate::log::checkpoint::Checkpointer;
use crate::protocol::{Protocol, ProtocolKind, ProtocolOptions, ProtocolVisitor};
use crate::storage::Database;
use crate::workload::long_scan::LongScan;
use crate::workload::shifting::Shifting;
use crate::workload::tpcc::Tpcc;
use crate::workload::write_skew::WriteSkew;
use crate::workload::ycsb::Ycsb;
use crate::workload::{Workload, WorkloadConfig};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use thiserror::Error;

/// Why a server could not start or stopped early.
#[derive(Debug, Error)]
pub enum ServeError {
    /// The tables could not be allocated.
    #[error("{0}")]
    Tables(#[from] crate::storage::TableAllocError),
    /// The listening socket failed.
    #[error("listening socket: {0}")]
    Socket(#[from] std::io::Error),
    /// The protocol cannot serve sessions, for the reason given
    /// ([`ProtocolKind::not_served_because`]).
    #[error("protocol {0} is not served interactively: {1}")]
    NotServed(ProtocolKind, &'static str),
    /// The `--log` directory cannot be used, or recovering it failed.
    #[error(transparent)]
    Log(#[from] ServerLogError),
    /// The log stopped while serving (a write or sync error): commits after its last durable
    /// epoch were not acknowledged.
    #[error("the log failed: {0}")]
    LogFailed(String),
}

impl ServeError {
    /// The binary's exit status: 2 for what the user can fix in the flags or the directory
    /// (a protocol that is not served, a log directory this server cannot use), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::NotServed(..) | ServeError::Log(ServerLogError::Refused { .. }) => 2,
            _ => 1,
        }
    }
}

/// Called once before the first accept, with the server's log when it has one (its `resumed`
/// says what was recovered), so the command can print it before "listening on".
pub type Ready<'a> = &'a mut dyn FnMut(Option<&ServerLog>);

/// Serves `run`'s workload under its (single) protocol on `listener` until `stop` or the
/// configured duration; `run` was validated for `cfg.max_connections` workers.
pub fn serve_configured(
    run: &RunConfig,
    cfg: &ServeConfig,
    listener: TcpListener,
    stop: &AtomicBool,
) -> Result<ServeSummary, ServeError> {
    serve_announced(run, cfg, listener, stop, &mut |_| {})
}

/// [`serve_configured`], calling `ready` once the database is loaded (and, with `--log`,
/// recovered and its log open), just before the first accept.
pub fn serve_announced(
    run: &RunConfig,
    cfg: &ServeConfig,
    listener: TcpListener,
    stop: &AtomicBool,
    ready: Ready<'_>,
) -> Result<ServeSummary, ServeError> {
    let kind = run.protocols[0];
    let go = Launch {
        run,
        cfg,
        listener,
        stop,
        ready,
    };
    match &run.workload {
        WorkloadConfig::Ycsb(c) => go.protocol(kind, &Ycsb::new(c.clone())),
        WorkloadConfig::LongScan(c) => go.protocol(kind, &LongScan::new(c.clone())),
        WorkloadConfig::Tpcc(c) => go.protocol(kind, &Tpcc::new(c.clone())),
        WorkloadConfig::WriteSkew(c) => go.protocol(kind, &WriteSkew::new(c.clone())),
        WorkloadConfig::Shifting(c) => go.protocol(kind, &Shifting::new(c.clone())),
    }
}

struct Launch<'a> {
    run: &'a RunConfig,
    cfg: &'a ServeConfig,
    listener: TcpListener,
    stop: &'a AtomicBool,
    ready: Ready<'a>,
}

impl Launch<'_> {
    /// Serves `w` under the protocol type [`ProtocolKind::visit`] names for `kind`.
    fn protocol<W: Workload>(self, kind: ProtocolKind, w: &W) -> Result<ServeSummary, ServeError> {
        if let Some(why) = kind.not_served_because() {
            return Err(ServeError::NotServed(kind, why));
        }
        let options = &self.run.options;
        kind.visit(options, Serve { go: self, w })
    }

    /// Builds and loads the database as a run does (`runner::run_named`), opens the log (which
    /// recovers into the database first when the directory holds a previous log), then serves
    /// it, the log's flusher and checkpointer beside the sessions.
    fn on<P: Protocol, W: Workload>(self, protocol: P, w: &W) -> Result<ServeSummary, ServeError> {
        let (tables, indexes) = (w.tables(), w.indexes());
        // Stamped in check mode (the sessions' handles record the history from the stamps) and
        // with a log (its seqs order replay: `crate::log`).
        let stamped = self.cfg.record_history || self.run.log.is_some();
        let db: Database<P::RecordMeta> =
            Database::try_build_growable(&tables, &indexes, stamped, &w.growable_tables())?;
        w.load(&db);
        if self.cfg.record_history {
            // The checker names the loaded versions by their stamps, as a checked run does
            // (`runner::one_run`). Before the log opens: a checked server's log is a new one
            // (`config::serve_cli` refuses `--check` on a previous log), so nothing recovered
            // is stamped as loaded.
            db.stamp_loaded_rows();
        }
        let log = match &self.run.log {
            // Validation refused this already; a log that appeared in the directory since
            // would be recovered into a checked server, whose history would not hold it.
            Some(settings)
                if self.cfg.record_history
                    && crate::log::files::holds_log(&settings.dir).unwrap_or(false) =>
            {
                return Err(ServeError::Log(ServerLogError::Refused {
                    dir: settings.dir.display().to_string(),
                    why: "a previous log appeared in the directory after validation, and a \
                          checked server (--check) starts only on a new log"
                        .into(),
                }));
            }
            Some(settings) => Some(open_server_log(
                settings,
                self.cfg.max_connections,
                self.run,
                w,
                &db,
            )?),
            None => None,
        };
        db.table_memory()
            .set_cap(usize::try_from(self.run.table_memory_bytes).unwrap_or(usize::MAX));
        (self.ready)(log.as_ref());
        let Some(log) = log else {
            return Ok(serve(&protocol, &db, self.listener, self.cfg, self.stop)?);
        };
        let settings = self.run.log.as_ref().expect("a log has settings");
        let checkpointer = settings.checkpoint.map(|every| {
            let c = Checkpointer::new(&log.logger, &db, &settings.dir, every);
            match &log.resumed {
                Some((_, restart, _)) => c.after(restart.checkpoint, restart.first_epoch),
                None => c,
            }
        });
        let served = std::thread::scope(|s| {
            s.spawn(|| log.logger.run_flusher());
            if let Some(c) = &checkpointer {
                s.spawn(|| c.run());
            }
            let served = serve_logged(
                &protocol,
                &db,
                self.listener,
                self.cfg,
                self.stop,
                Some(&log.logger),
            );
            // Ends the flusher's and the checkpointer's loops (the scope joins them) and makes
            // the rest durable.
            let _ = log.logger.finish();
            served
        });
        let mut summary = served?;
        if let Some(failure) = log.logger.failure() {
            return Err(ServeError::LogFailed(failure.to_string()));
        }
        summary.log = Some(log.logger.stats());
        Ok(summary)
    }
}

/// Builds the visited protocol and serves the workload under it.
struct Serve<'a, 'w, W> {
    go: Launch<'a>,
    w: &'w W,
}

impl<W: Workload> ProtocolVisitor for Serve<'_, '_, W> {
    type Output = Result<ServeSummary, ServeError>;
    fn visit<P: Protocol>(self, build: fn(&ProtocolOptions) -> P) -> Self::Output {
        let protocol = build(&self.go.run.options);
        self.go.on(protocol, self.w)
    }
}
