//! Builds what `txbench serve` serves: the workload's tables, loaded, under the configured
//! protocol, matched once here from the closed protocol and workload sets (as `runner` does for
//! runs); everything below is monomorphised.

use super::server::{ServeConfig, ServeSummary, serve};
use crate::config::RunConfig;
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
}

/// Serves `run`'s workload under its (single) protocol on `listener` until `stop` or the
/// configured duration; `run` was validated for `cfg.max_connections` workers.
pub fn serve_configured(
    run: &RunConfig,
    cfg: &ServeConfig,
    listener: TcpListener,
    stop: &AtomicBool,
) -> Result<ServeSummary, ServeError> {
    let kind = run.protocols[0];
    let go = Launch {
        run,
        cfg,
        listener,
        stop,
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

    /// Builds and loads the database as a run does (`runner::run_named`), then serves it.
    fn on<P: Protocol, W: Workload>(self, protocol: P, w: &W) -> Result<ServeSummary, ServeError> {
        let (tables, indexes) = (w.tables(), w.indexes());
        let db: Database<P::RecordMeta> =
            // Stamped in check mode: the sessions' handles record the history from the stamps.
            Database::try_build_growable(&tables, &indexes, self.cfg.record_history, &w.growable_tables())?;
        w.load(&db);
        db.table_memory()
            .set_cap(usize::try_from(self.run.table_memory_bytes).unwrap_or(usize::MAX));
        Ok(serve(&protocol, &db, self.listener, self.cfg, self.stop)?)
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
