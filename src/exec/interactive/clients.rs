//! The interactive executor's client side: N clients, each a thread with its own [`Session`],
//! generating its next transaction locally and running the workload's program over a
//! [`RemoteTxn`] until it commits, retrying after concurrency-control aborts, with the same
//! periods (warm-up, measure, stop) as the thread executor.
//!
//! # What is measured, at the client
//!
//! - Latency: from a transaction's first `BEGIN` to its commit's reply, retries included.
//! - Operation cost: each data operation's round trip (request sent to reply read), into one
//!   histogram per client; its median is what is compared with the bare round trip.
//! - The bare round trip: each client's median `PING` before the run.
//! - The split of each committed transaction's time: its round trips (all attempts') times the
//!   client's bare round trip is network and queueing; the rest is server-side work (the
//!   protocol, the engine, and waits for other transactions' locks). An estimate (a round trip
//!   under load can cost more than the idle `PING`), stated as such in docs/METRICS.md.

use super::client::{Session, SessionError};
use super::remote_txn::RemoteTxn;
use super::wire::TableInfo;
use crate::config::ExecConfig;
use crate::exec::start_gate::StartGate;
use crate::exec::thread::{ExecOutcome, MEASURE, STOP, coordinate, first_period, nanos};
use crate::metrics::{Phase, WorkerStats, new_latency_histogram};
use crate::protocol::{Abort, AttemptStart};
use crate::random::FastRng;
use crate::workload::Workload;
use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use std::future::Future;
use std::pin::pin;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Instant;
use thiserror::Error;

/// Bare round trips each client measures before the run.
const PINGS: usize = 200;

/// Why the clients could not run.
#[derive(Debug, Error)]
pub enum ClientsError {
    /// A client could not connect or lost its session.
    #[error("client {client}: {error}")]
    Session {
        /// Which client.
        client: usize,
        /// What failed.
        error: SessionError,
    },
    /// The server's verdict on its history (`--check`) could not be had.
    #[error("the server's check verdict: {0}")]
    Verdict(SessionError),
    /// The in-process server's listening socket failed.
    #[error("listening socket: {0}")]
    Listen(std::io::Error),
    /// The server's tables are not the ones the workload, as configured, uses.
    #[error(
        "the server's tables ({server}) are not this workload's ({local}): give `txbench run` the workload flags the server was started with"
    )]
    Tables {
        /// The server's, as `records x payload` per table.
        server: String,
        /// The workload's.
        local: String,
    },
}

/// What the clients measured.
pub struct ClientsOutcome {
    /// Per-client statistics and the measured period, as the other executors report them.
    pub exec: ExecOutcome,
    /// Medians of the clients' bare round trips (`PING`), nanoseconds.
    pub ping_ns: u64,
    /// Round trips of the data operations, nanoseconds, all clients merged.
    pub op_ns: Histogram<u64>,
    /// Round trips of the committed transactions (all their attempts), all clients.
    pub round_trips: u64,
    /// The committed transactions' time that their round trips at the bare round trip's
    /// cost account for (network and queueing), nanoseconds.
    pub network_ns: u64,
    /// The committed transactions' whole time (first attempt to commit), nanoseconds.
    pub txn_ns: u64,
    /// Committed transactions measured.
    pub commits: u64,
}

/// Connects `cfg.threads` clients to `addr` and runs `workload` over them (module docs). With
/// `declare`, every transaction's access set is sent with its `BEGIN` (the server's protocol
/// is deterministic).
pub fn run_clients<W: Workload>(
    addr: &str,
    token: Option<&str>,
    workload: &W,
    cfg: &ExecConfig,
    declare: bool,
) -> Result<ClientsOutcome, ClientsError> {
    let mut handles = Vec::with_capacity(cfg.threads);
    for client in 0..cfg.threads {
        let session = Session::connect(addr, token)
            .map_err(|error| ClientsError::Session { client, error })?;
        if client == 0 {
            check_tables(session.tables(), workload)?;
        }
        handles.push(RemoteTxn::new(session, client));
    }
    let period = CachePadded::new(AtomicU8::new(first_period(cfg)));
    let start = Barrier::new(cfg.threads + 1);
    std::thread::scope(|s| {
        let threads: Vec<_> = handles
            .into_iter()
            .enumerate()
            .map(|(id, tx)| {
                let (period, start) = (&period, &start);
                s.spawn(move || {
                    let mut gate = StartGate::new(start);
                    let mut client = Client {
                        id,
                        workload,
                        tx,
                        rng: FastRng::for_worker(cfg.seed, id),
                        stats: WorkerStats::new(workload.txn_types().len()),
                        ping_ns: 0,
                        round_trips: 0,
                        network_ns: 0,
                        txn_ns: 0,
                        commits: 0,
                        declare,
                    };
                    let pinged = client.measure_ping();
                    gate.arrive();
                    let ran = pinged.and_then(|()| client.run(period));
                    (client, ran)
                })
            })
            .collect();
        let measured = coordinate(cfg, &period, &start, &|| false);
        let mut out = ClientsOutcome {
            exec: ExecOutcome {
                workers: Vec::with_capacity(cfg.threads),
                measured,
                histories: Vec::new(),
            },
            ping_ns: 0,
            op_ns: new_latency_histogram(),
            round_trips: 0,
            network_ns: 0,
            txn_ns: 0,
            commits: 0,
        };
        let mut pings = Vec::with_capacity(cfg.threads);
        let mut failed = None;
        for (id, t) in threads.into_iter().enumerate() {
            let (client, ran) = t.join().expect("client thread panicked");
            if let Err(error) = ran {
                failed.get_or_insert(ClientsError::Session { client: id, error });
            }
            pings.push(client.ping_ns);
            let _ = out.op_ns.add(client.tx.op_times());
            out.round_trips += client.round_trips;
            out.network_ns += client.network_ns;
            out.txn_ns += client.txn_ns;
            out.commits += client.commits;
            out.exec.workers.push(client.stats);
        }
        if let Some(e) = failed {
            return Err(e);
        }
        pings.sort_unstable();
        out.ping_ns = pings[pings.len() / 2];
        Ok(out)
    })
}

/// Checks that the server's tables are the workload's (count, records, payload).
fn check_tables<W: Workload>(server: &[TableInfo], workload: &W) -> Result<(), ClientsError> {
    let local: Vec<(u64, u32)> = workload
        .tables()
        .iter()
        .map(|t| (t.records, t.payload_bytes as u32))
        .collect();
    let theirs: Vec<(u64, u32)> = server
        .iter()
        .map(|t| (t.records, t.payload_bytes))
        .collect();
    if local == theirs {
        return Ok(());
    }
    let show = |v: &[(u64, u32)]| {
        v.iter()
            .map(|(r, p)| format!("{r} x {p} B"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(ClientsError::Tables {
        server: show(&theirs),
        local: show(&local),
    })
}

/// One client's state.
struct Client<'w, W: Workload> {
    id: usize,
    workload: &'w W,
    tx: RemoteTxn,
    rng: FastRng,
    stats: WorkerStats,
    ping_ns: u64,
    round_trips: u64,
    network_ns: u64,
    txn_ns: u64,
    commits: u64,
    declare: bool,
}

impl<W: Workload> Client<'_, W> {
    /// The median of [`PINGS`] bare round trips.
    fn measure_ping(&mut self) -> Result<(), SessionError> {
        let mut samples = Vec::with_capacity(PINGS);
        for _ in 0..PINGS {
            let t = Instant::now();
            self.tx.session().ping()?;
            samples.push(nanos(t.elapsed()));
        }
        samples.sort_unstable();
        self.ping_ns = samples[PINGS / 2];
        Ok(())
    }

    /// Runs transactions until stop.
    fn run(&mut self, period: &AtomicU8) -> Result<(), SessionError> {
        let mut req = self.workload.new_request();
        let mut measuring = false;
        loop {
            // Acquire: pairs with the coordinator's Release stores.
            let now = period.load(Ordering::Acquire);
            if now == STOP {
                return Ok(());
            }
            if now == MEASURE && !measuring {
                // Operation times count from the measured period on.
                measuring = true;
                self.tx.reset_op_times();
            }
            self.workload.generate(self.id, &mut self.rng, &mut req);
            let ty = self.workload.txn_type(&req);
            self.run_to_commit(&req, ty, now == MEASURE, period)?;
        }
    }

    /// Runs one transaction until it commits, aborts for a reason that is not retried, or
    /// aborts once the run has stopped: a transaction a protocol keeps aborting (MVTO's long
    /// interactive writers against younger readers) would otherwise hold the run's end for as
    /// long as it starves.
    fn run_to_commit(
        &mut self,
        req: &W::Request,
        ty: usize,
        counted: bool,
        period: &AtomicU8,
    ) -> Result<(), SessionError> {
        let first_start = Instant::now();
        let mut attempt_start = first_start;
        let rt_before = self.tx.session().round_trips();
        let mut start = AttemptStart {
            retry: false,
            read_only: self.workload.is_read_only(req),
        };
        let mut attempts = 0u64;
        if self.declare {
            let workload = self.workload;
            self.tx.declare(|set| workload.declare(req, set));
        }
        loop {
            attempts += 1;
            let result = match self.tx.begin(start)? {
                Ok(()) => {
                    let ran = run_program(self.workload, &mut self.tx, req);
                    if let Some(e) = self.tx.take_failure() {
                        return Err(e);
                    }
                    match ran {
                        Ok(()) => {
                            let exec_end = Instant::now();
                            let committed = self.tx.commit()?;
                            if counted && committed.is_ok() {
                                self.stats
                                    .add_phase(Phase::Execute, nanos(exec_end - attempt_start));
                                self.stats
                                    .add_phase(Phase::Commit, nanos(exec_end.elapsed()));
                            }
                            committed
                        }
                        Err(why) => match self.tx.abort()? {
                            Ok(()) => Err(why),
                            Err(instead) => Err(instead),
                        },
                    }
                }
                Err(why) => Err(why),
            };
            match result {
                Ok(()) => {
                    if counted {
                        let ns = nanos(first_start.elapsed());
                        self.stats.commit(ty, ns, attempts);
                        let trips = self.tx.session().round_trips() - rt_before;
                        self.round_trips += trips;
                        self.network_ns += (trips * self.ping_ns).min(ns);
                        self.txn_ns += ns;
                        self.commits += 1;
                    }
                    return Ok(());
                }
                Err(why) => {
                    if counted {
                        self.stats.abort(ty, why);
                        self.stats
                            .add_phase(Phase::Abort, nanos(attempt_start.elapsed()));
                    }
                    // Acquire: pairs with the coordinator's Release stores.
                    if !why.is_retried() || period.load(Ordering::Acquire) == STOP {
                        return Ok(());
                    }
                    start.retry = true;
                    attempt_start = Instant::now();
                }
            }
        }
    }
}

/// Runs the program to completion. Its operations' futures are ready when first polled (each
/// is one blocking round trip), so one poll completes it.
fn run_program<W: Workload>(
    workload: &W,
    tx: &mut RemoteTxn,
    req: &W::Request,
) -> Result<(), Abort> {
    let mut program = pin!(workload.run(tx, req));
    match program
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => unreachable!("a remote program's operations never wait on the client"),
    }
}
