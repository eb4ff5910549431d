//! Builds what `txbench serve` serves: the workload's tables, loaded, under the configured
//! protocol, matched once here from the closed protocol and workload sets (as `runner` does for
//! runs); everything below is monomorphised.

use super::server::{ServeConfig, ServeSummary, serve};
use crate::config::RunConfig;
use crate::protocol::c_sched::CSched;
use crate::protocol::calvin::Calvin;
use crate::protocol::cicada::Cicada;
use crate::protocol::ermia::{Ermia, ErmiaWide, needs_wide_readers};
use crate::protocol::mocc::{Mocc, MqlLock, RwLock};
use crate::protocol::mvto::Mvto;
use crate::protocol::nocc::Nocc;
use crate::protocol::ord_lock::OrdLock;
use crate::protocol::plor::{Plor, PlorWide, needs_wide_locker};
use crate::protocol::si::Si;
use crate::protocol::silo::Silo;
use crate::protocol::tictoc::TicToc;
use crate::protocol::twopl::{
    ConflictRule, NoWait, TwoPl, WaitDie, WaitDieWide, WoundWait, WoundWaitWide, needs_wide_locks,
};
use crate::protocol::twopl_er::TwoPlEr;
use crate::protocol::{MoccLockKind, Protocol, ProtocolKind};
use crate::storage::Database;
use crate::workload::long_scan::LongScan;
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
    /// The protocol cannot be served: its workers wait for one another (DecentSched's epoch
    /// barrier), and a session's worker is idle whenever its client is.
    #[error(
        "protocol {0} is not served interactively: its workers meet at an epoch barrier, which an idle session would hold up for everyone"
    )]
    Declared(ProtocolKind),
    /// The protocol runs in batches, which wait for every member: a session's member would hold
    /// its whole batch while its client thinks, or for the session timeout when it went away.
    #[error(
        "protocol {0} is not served interactively: it runs transactions in batches, and a batch waits for every member, so one idle client would stall all of them"
    )]
    Batched(ProtocolKind),
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
    }
}

struct Launch<'a> {
    run: &'a RunConfig,
    cfg: &'a ServeConfig,
    listener: TcpListener,
    stop: &'a AtomicBool,
}

impl Launch<'_> {
    fn protocol<W: Workload>(self, kind: ProtocolKind, w: &W) -> Result<ServeSummary, ServeError> {
        let opts = &self.run.options;
        let workers = opts.threads;
        match kind {
            ProtocolKind::Nocc => self.on(Nocc, w),
            ProtocolKind::Silo => self.on(Silo::new(opts), w),
            ProtocolKind::TicToc => self.on(TicToc::new(opts), w),
            ProtocolKind::Mocc => match opts.mocc.lock {
                MoccLockKind::Rw => self.on(Mocc::<RwLock>::new(opts), w),
                MoccLockKind::Mql => self.on(Mocc::<MqlLock>::new(opts), w),
            },
            ProtocolKind::NoWait => self.on(two_pl(NoWait::new(opts)), w),
            ProtocolKind::WaitDie if needs_wide_locks(workers) => {
                self.on(two_pl(WaitDieWide::new(opts)), w)
            }
            ProtocolKind::WaitDie => self.on(two_pl(WaitDie::new(opts)), w),
            ProtocolKind::WoundWait if needs_wide_locks(workers) => {
                self.on(two_pl(WoundWaitWide::new(opts)), w)
            }
            ProtocolKind::WoundWait => self.on(two_pl(WoundWait::new(opts)), w),
            ProtocolKind::Plor if needs_wide_locker(workers) => {
                self.on(validated(PlorWide::new(opts)), w)
            }
            ProtocolKind::Plor => self.on(validated(Plor::new(opts)), w),
            ProtocolKind::Si => self.on(Si::new(opts), w),
            ProtocolKind::Mvto => self.on(Mvto::new(opts), w),
            ProtocolKind::Ermia if needs_wide_readers(workers) => {
                self.on(validated(ErmiaWide::new(opts)), w)
            }
            ProtocolKind::Ermia => self.on(validated(Ermia::new(opts)), w),
            ProtocolKind::Cicada => self.on(Cicada::new(opts), w),
            ProtocolKind::TwoPlEr => self.on(TwoPlEr::new(), w),
            ProtocolKind::OrdLock => self.on(OrdLock::new(), w),
            ProtocolKind::CSched => self.on(CSched::new(opts), w),
            ProtocolKind::Calvin => self.on(Calvin::new(), w),
            ProtocolKind::DecentSched => Err(ServeError::Declared(kind)),
            ProtocolKind::Aria => Err(ServeError::Batched(kind)),
        }
    }

    /// Builds and loads the database as a run does (`runner::run_named`), then serves it.
    fn on<P: Protocol, W: Workload>(self, protocol: P, w: &W) -> Result<ServeSummary, ServeError> {
        let (tables, indexes) = (w.tables(), w.indexes());
        let db: Database<P::RecordMeta> =
            Database::try_build_growable(&tables, &indexes, false, &w.growable_tables())?;
        w.load(&db);
        db.table_memory()
            .set_cap(usize::try_from(self.run.table_memory_bytes).unwrap_or(usize::MAX));
        Ok(serve(&protocol, &db, self.listener, self.cfg, self.stop)?)
    }
}

/// Unwraps a 2PL constructor; validation rejects worker counts the locks cannot name.
fn two_pl<R: ConflictRule>(
    protocol: Result<TwoPl<R>, crate::protocol::twopl::TooManyWorkers>,
) -> TwoPl<R> {
    validated(protocol)
}

/// Unwraps a constructor whose failure configuration validation rules out.
fn validated<P, E: std::fmt::Display>(protocol: Result<P, E>) -> P {
    protocol.unwrap_or_else(|e| panic!("{e} (config validation should have rejected this)"))
}
