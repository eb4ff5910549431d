//! `txbench run --interactive`: a server and its clients in one process, over a loopback port.
//! The server serves one session per client ([`serve`]); the clients run the workload's
//! programs over the wire ([`run_clients`]); the server's sessions record the history in check
//! mode, which the runner checks as it checks an in-process run.

use super::clients::{ClientsError, ClientsOutcome, run_clients};
use super::server::{ServeSummary, serve};
use crate::config::{ExecConfig, ServeConfig};
use crate::protocol::Protocol;
use crate::storage::Database;
use crate::workload::Workload;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What an interactive run measured: the clients' side and the server's.
pub struct LoopbackOutcome {
    /// The clients' measurements; its `exec.histories` are the server's (check mode).
    pub clients: ClientsOutcome,
    /// What the server served.
    pub served: ServeSummary,
}

/// Runs `workload` interactively on `protocol` over `db`: `cfg.threads` clients, each with a
/// session of a server on a loopback port that delays each reply by `rtt`.
pub fn run_loopback<P: Protocol, W: Workload>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    workload: &W,
    cfg: &ExecConfig,
    rtt: Duration,
) -> Result<LoopbackOutcome, ClientsError> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(ClientsError::Listen)?;
    let addr = listener.local_addr().map_err(ClientsError::Listen)?;
    let serve_cfg =
        ServeConfig::loopback(cfg.threads, rtt, cfg.record_history, cfg.check_limit_ops);
    let stop = AtomicBool::new(false);
    let (clients, served) = std::thread::scope(|s| {
        let server = s.spawn(|| serve(protocol, db, listener, &serve_cfg, &stop));
        let clients = run_clients(
            &addr.to_string(),
            None,
            workload,
            cfg,
            P::DECLARED_SET.is_some(),
        );
        // Release: pairs with the accept loop's Acquire load.
        stop.store(true, Ordering::Release);
        let served = server.join().expect("server thread panicked");
        (clients, served)
    });
    let mut clients = clients?;
    let mut served = served.map_err(ClientsError::Listen)?;
    clients.exec.histories = std::mem::take(&mut served.histories);
    Ok(LoopbackOutcome { clients, served })
}
