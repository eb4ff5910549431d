//! The server side of interactive mode: an accept loop and one thread per session, each session a
//! protocol worker that runs one transaction at a time, driven request by request.
//!
//! # Sessions and workers
//!
//! The protocol is built for `max_connections` workers, and the server makes that many
//! transaction handles ([`Txn`], worker ids `0..max_connections`) before it accepts anyone. A
//! session takes a free handle for its lifetime and gives it back when it ends, so a protocol
//! sees the dense, stable worker ids it was built for; a connection that finds none free is told
//! [`ErrorCode::Busy`] and closed.
//!
//! # Idle sessions
//!
//! Some protocols make every worker count in something the others wait for: DecentSched's
//! epoch barrier waits for every registered worker, and a batch protocol's batch closes early
//! once every live worker has joined ([`RunHooks::IDLE_WORKERS_HOLD_OTHERS`]). A session is a
//! worker whose client may think for long between transactions, or never send another, and the
//! handles no session holds are workers too: counted, they would hold the barrier up for good
//! and make every batch wait for its time bound. So a worker steps *away* from them
//! ([`RunHooks::worker_away`]) while it has no transaction and its client is quiet: a handle is
//! away while it is in the pool (from the start, and again when its session ends), and a
//! session goes away once its client has sent nothing for [`AWAY_AFTER`] between transactions
//! (or as it starts waiting for a `CHECK` verdict). Its next `BEGIN` brings it back
//! ([`RunHooks::worker_back`]) before the transaction begins. The grace period is short and
//! the rule lazy on purpose: a closed-loop client sends its next `BEGIN` one round trip after
//! its commit, and a session that went away at once would make batches close without it, one
//! member at a time. An attempt that ended keeping a place for its retry (an Aria fallback
//! member's locks, a DecentSched re-execution's place) gives the place up when its session
//! goes away: a client that does not retry at once cannot hold its batch or its queues.
//!
//! A session stalled *in* a transaction holds what its protocol holds for it (its locks, its
//! batch, its place) until it is aborted: by its client, or by the session timeout.
//!
//! [`RunHooks::IDLE_WORKERS_HOLD_OTHERS`]: crate::protocol::parts::RunHooks::IDLE_WORKERS_HOLD_OTHERS
//! [`RunHooks::worker_away`]: crate::protocol::parts::RunHooks::worker_away
//! [`RunHooks::worker_back`]: crate::protocol::parts::RunHooks::worker_back
//!
//! # Waiting
//!
//! An operation the protocol answers `Pending` waits as a worker of the thread executor does
//! (`exec::wait`): a short spin, a couple of yields, then the session's thread parks in the
//! process's parking lot (`crate::park`) until an event that can end the wait wakes it (a
//! release, a grant, the end of an attempt: protocols wake through `protocol::wake`, and every
//! session's attempt end wakes the lot as the executors' do), or the park times out. The policy
//! is always the shared one (park after about 50 us): an interactive holder keeps its locks
//! across network round trips, where spinning would take the CPU from the very sessions that
//! must run to release them. A wait ends when the operation completes or the server stops (the
//! transaction is then aborted). A transaction wounded (wound-wait) while its session waits for
//! its client learns it at its next request, so it holds its locks until then: one round trip
//! at best, which is PLOR's point about wound-wait under interactive transactions.
//!
//! # Faults
//!
//! A session whose client disconnects, stays silent past `session_timeout`, or sends a frame
//! that does not decode (malformed, oversized) or does not fit the session's state (an
//! operation outside a transaction) has its transaction aborted, which releases whatever it
//! held, and its connection closed, with one log line. Other sessions are not affected. A request
//! naming a record, table or index that does not exist, or a payload of the wrong size, is
//! answered with an error and aborts the transaction, the session stays.
//!
//! So is an access outside a deterministic protocol's declared set and its covers, when the
//! client stated its covers (wire format version 3): the handle refuses it before the protocol
//! sees it (`Txn::declare_remote`), whichever request made it (a read or write, or a record
//! an index operation walks to), since such a protocol reads and writes in place on the
//! strength of the schedule and could not serve it safely. The check costs a search of the set
//! per access, which the round trip dwarfs. An older client's set has no covers, so nothing is
//! checked for it: an access outside it is its own bug, as before version 3.
//!
//! Such an abort, which the client did not ask for, goes through the protocol as a client's
//! `ABORT` does: a deterministic protocol confirms it first. That is what keeps a batch
//! consistent when a member placed in it goes: BOHM and PWV produce each of its placeholders
//! as a copy of the version before it (readers bound to them would wait for good otherwise;
//! PWV makes nothing visible before the commit in interactive mode, so nothing visible is
//! undone), batched Calvin releases the locks it was granted (its writes were buffered), and
//! DecentSched marks it finished (a re-execution it may ask for is not run: the client is not
//! there to run it). Aria's member withdraws from its batch, or, in its commit phase, ends as
//! its verdict says. When the server is stopping and the protocol's part of the abort would
//! wait (for an earlier member, for its schedule), the attempt is abandoned as it stands:
//! nothing runs after it.
//!
//! # Durability
//!
//! With a log (`txbench serve --log`, `durable.rs`), every session's handle is attached to it
//! as a thread executor's worker is, so every commit goes through the shared install hook into
//! the session worker's log buffer. A `COMMIT` that wrote is answered `OK` only once the log
//! says it is durable, by the executor's rule (`exec::thread`, `Logger::wait_durable`): under
//! `--log-sync group` once a group flush has synced its epoch, under `txn` after a flush the
//! commit starts, under `none` at once (durable only at a clean stop). So every `OK` a client
//! got for a writing transaction survives a crash. A read-only commit is answered at once,
//! as the executor acknowledges it: it wrote nothing to lose, though what it read may be a
//! write whose own `OK` is still on its way (and is lost with it, never having been
//! acknowledged). If the log fails (a write or sync error), a commit waiting for it is
//! answered [`ErrorCode::ShuttingDown`], not `OK`: it is in memory but may be lost, and the
//! server stops.

use super::wire::{
    COVERS_VERSION, Declared, DeclaredSet, ErrorCode, Handshake, MAX_FRAME_BYTES, MAX_SCAN_ROWS,
    MIN_VERSION, Reply, Request, TableInfo, VERSION,
};
pub use crate::config::ServeConfig;
use crate::exec::wait::{StepOutcome, WaitPolicy, Waiting};
use crate::ids::{RecordId, TableId};
use crate::log::{LogStats, Logger};
use crate::metrics::WaitCounts;
use crate::park::ParkingLot;
use crate::protocol::{Abort, AttemptStart, Protocol};
use crate::storage::{Database, IndexId, is_vacant};
use crate::txn::Txn;
use std::future::Future;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::pin::{Pin, pin};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// What a server served, for its closing report.
#[derive(Debug, Clone, Default)]
pub struct ServeSummary {
    /// Sessions that completed the handshake.
    pub sessions: u64,
    /// Connections refused (no free worker, bad handshake).
    pub refused: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Transactions the protocol aborted.
    pub aborts: u64,
    /// Transactions the clients aborted.
    pub user_aborts: u64,
    /// Requests served (operations, `BEGIN`, `COMMIT`, `ABORT`, `PING`).
    pub requests: u64,
    /// Sessions closed for a fault: disconnected or timed out mid-transaction, or a bad frame.
    pub faults: u64,
    /// How long the server ran.
    pub elapsed: Duration,
    /// Each session worker's committed history, by worker id (with
    /// [`ServeConfig::record_history`]; empty otherwise).
    pub histories: Vec<crate::check::history::WorkerHistory>,
    /// With a log: what it wrote.
    pub log: Option<LogStats>,
}

/// How often the accept loop and idle sessions look at the stop flag and the clock.
const POLL: Duration = Duration::from_millis(20);

/// How long a session's client may stay quiet between transactions before the session steps
/// away from its protocol's barriers and batches (module docs, "Idle sessions"): longer than a
/// round trip and than the default batch time bound, short beside an epoch. The socket's read
/// timeout wakes the session for it, at the kernel timer's granularity (a few milliseconds at
/// most).
pub const AWAY_AFTER: Duration = Duration::from_millis(1);

/// Counters the sessions add to when they end (summed once; no per-operation sharing).
#[derive(Default)]
struct Totals {
    sessions: AtomicU64,
    refused: AtomicU64,
    commits: AtomicU64,
    aborts: AtomicU64,
    user_aborts: AtomicU64,
    requests: AtomicU64,
    faults: AtomicU64,
}

/// One line on stderr (a closed stderr is ignored).
pub(crate) fn log(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "txbench serve: {line}");
}

/// Serves sessions on `listener` over `db` until `stop` is set or `cfg.duration` passes, then
/// ends every session (aborting its transaction) and returns what was served. A protocol that
/// cannot undo a client's abort ([`RunHooks::not_served_because`](
/// crate::protocol::parts::RunHooks::not_served_because): 2PL with early release, PWV built
/// without `user_aborts`) is refused before listening, with an `InvalidInput` error.
pub fn serve<P: Protocol>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    listener: TcpListener,
    cfg: &ServeConfig,
    stop: &AtomicBool,
) -> std::io::Result<ServeSummary> {
    serve_logged(protocol, db, listener, cfg, stop, None)
}

/// [`serve`], every session's commits logged to `logger` (one file per session worker) when
/// given (module docs, "Durability"); the server also stops when the log fails.
pub fn serve_logged<'db, P: Protocol>(
    protocol: &'db P,
    db: &'db Database<P::RecordMeta>,
    listener: TcpListener,
    cfg: &ServeConfig,
    stop: &AtomicBool,
    logger: Option<&'db Logger>,
) -> std::io::Result<ServeSummary> {
    // Before any client can connect: a protocol that could not undo a client's abort would
    // panic the server on the first one.
    if let Some(why) = P::RUN_HOOKS.not_served_because(protocol) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("this protocol cannot serve interactive clients: {why}"),
        ));
    }
    listener.set_nonblocking(true)?;
    let history_share = cfg.history_ops / cfg.max_connections.max(1) as u64;
    let handles: Vec<Txn<'db, P>> = (0..cfg.max_connections)
        .map(|id| {
            let mut tx = Txn::new(protocol, db, id, cfg.record_history);
            tx.set_history_budget(usize::try_from(history_share).unwrap_or(usize::MAX));
            if let Some(logger) = logger {
                tx.attach_log(logger);
            }
            // No session holds it yet (module docs, "Idle sessions").
            tx.away();
            tx
        })
        .collect();
    let free = Mutex::new(handles);
    let totals = Totals::default();
    // Set once the accept loop ends; sessions read it between requests (Release/Acquire: a
    // session that sees it sees nothing else, the flag is the whole message).
    let ending = AtomicBool::new(false);
    let tables: Vec<TableInfo> = db
        .tables()
        .iter()
        .map(|t| TableInfo {
            records: t.len(),
            payload_bytes: t.payload_bytes() as u32,
        })
        .collect();
    let started = Instant::now();
    std::thread::scope(|s| {
        loop {
            // Acquire: pairs with the signal handler's (or the caller's) Release store.
            if stop.load(Ordering::Acquire) || cfg.duration.is_some_and(|d| started.elapsed() >= d)
            {
                break;
            }
            if let Some(why) = logger.and_then(Logger::failure) {
                log(format_args!("stopping: the log failed: {why}"));
                break;
            }
            let (stream, peer) = match listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    std::thread::sleep(POLL);
                    continue;
                }
                Err(e) => {
                    log(format_args!("accept failed: {e}"));
                    std::thread::sleep(POLL);
                    continue;
                }
            };
            let taken = free.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(tx) = taken else {
                totals.refused.fetch_add(1, Ordering::Relaxed);
                log(format_args!(
                    "{peer}: refused, all {} sessions busy",
                    cfg.max_connections
                ));
                refuse(stream, ErrorCode::Busy, "all sessions are busy");
                continue;
            };
            let (free, totals, ending, tables) = (&free, &totals, &ending, &tables[..]);
            s.spawn(move || {
                let mut session = Session {
                    tx,
                    pool: free,
                    cfg,
                    db,
                    in_txn: false,
                    for_update: Vec::new(),
                    rows: Vec::new(),
                    out: Vec::with_capacity(256),
                    counts: Counts::default(),
                    ending,
                    rtt: cfg.rtt,
                    away: true,
                    scheduled: false,
                    quiet_since: Instant::now(),
                    abandoned: false,
                    version: VERSION,
                };
                let end = session.run(stream, cfg, tables);
                let started = !matches!(end, End::Refused(_));
                let mid_transaction = session.in_txn;
                if session.in_txn {
                    session.abort_unasked();
                }
                // Back in the pool, no client holds it. Acquire: pairs with the accept loop's
                // Release store; a stopping server stops every worker instead.
                if !ending.load(Ordering::Acquire) {
                    session.go_away();
                }
                match end {
                    End::Closed => {}
                    End::Refused(why) => {
                        totals.refused.fetch_add(1, Ordering::Relaxed);
                        log(format_args!("{peer}: refused: {why}"));
                    }
                    End::Fault(why) => {
                        totals.faults.fetch_add(1, Ordering::Relaxed);
                        log(format_args!("{peer}: closed: {why}"));
                    }
                    End::Disconnected => {
                        if mid_transaction {
                            totals.faults.fetch_add(1, Ordering::Relaxed);
                            log(format_args!(
                                "{peer}: disconnected mid-transaction; aborted it"
                            ));
                        }
                    }
                }
                session.counts.add_to(totals, started);
                free.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(session.tx);
            });
        }
        // Release: pairs with the sessions' Acquire loads.
        ending.store(true, Ordering::Release);
    });
    let mut handles = free.into_inner().unwrap_or_else(|e| e.into_inner());
    // By worker id: the checker names transactions by the worker that ran them.
    handles.sort_by_key(|tx| tx.worker_id());
    let mut histories = Vec::new();
    for tx in &mut handles {
        tx.stopped();
        if let Some(h) = tx.take_history() {
            histories.push(h);
        }
    }
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    Ok(ServeSummary {
        sessions: get(&totals.sessions),
        refused: get(&totals.refused),
        commits: get(&totals.commits),
        aborts: get(&totals.aborts),
        user_aborts: get(&totals.user_aborts),
        requests: get(&totals.requests),
        faults: get(&totals.faults),
        elapsed: started.elapsed(),
        histories,
        log: None,
    })
}

/// Tells a connection why it is refused, best effort, and closes it.
fn refuse(mut stream: TcpStream, code: ErrorCode, message: &str) {
    let mut out = Vec::new();
    Reply::Error { code, message }.encode(&mut out);
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(POLL));
    let _ = stream.write_all(&out);
}

/// How a session ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The client closed it between transactions, or the server stopped.
    Closed,
    /// The handshake failed (counted as refused; the session never started).
    Refused(&'static str),
    /// A fault the log names: bad frame, out-of-order request, idle timeout.
    Fault(String),
    /// The connection broke or the client closed it (a fault if mid-transaction).
    Disconnected,
}

/// A session's own counts, added to the totals once when it ends.
#[derive(Default)]
struct Counts {
    commits: u64,
    aborts: u64,
    user_aborts: u64,
    requests: u64,
}

impl Counts {
    fn add_to(&self, totals: &Totals, started: bool) {
        if started {
            totals.sessions.fetch_add(1, Ordering::Relaxed);
        }
        totals.commits.fetch_add(self.commits, Ordering::Relaxed);
        totals.aborts.fetch_add(self.aborts, Ordering::Relaxed);
        totals
            .user_aborts
            .fetch_add(self.user_aborts, Ordering::Relaxed);
        totals.requests.fetch_add(self.requests, Ordering::Relaxed);
    }
}

/// One client's session: a transaction handle, and buffers reused across requests.
struct Session<'db, 's, P: Protocol> {
    tx: Txn<'db, P>,
    /// The free handles (of the sessions not open), whose histories `CHECK` reads.
    pool: &'s Mutex<Vec<Txn<'db, P>>>,
    cfg: &'s ServeConfig,
    db: &'db Database<P::RecordMeta>,
    /// A transaction is open (between a `BEGIN` and its end).
    in_txn: bool,
    /// Records this transaction read for update (their `UPDATE` is then the write half).
    for_update: Vec<(TableId, RecordId)>,
    /// A scan's rows.
    rows: Vec<(u64, RecordId)>,
    /// The reply being written.
    out: Vec<u8>,
    counts: Counts,
    ending: &'s AtomicBool,
    /// Added to every reply's path (`--rtt-us`).
    rtt: Duration,
    /// The handle is away from its protocol's barriers and batches (module docs, "Idle
    /// sessions"): from the pool, or its client was quiet between transactions.
    away: bool,
    /// The open attempt's schedule completed (deterministic protocols; set at `BEGIN`).
    scheduled: bool,
    /// When the session last answered a request or read from its client.
    quiet_since: Instant,
    /// Its last attempt was abandoned as the server stops ([`Session::abort_unasked`]): the
    /// session closes, and its handle runs nothing more.
    abandoned: bool,
    /// The wire format version the client's handshake named: how its frames are laid out (a
    /// `BEGIN` before version 3 has no covers, and its set is then not checked).
    version: u16,
}

/// What a request leaves the session to do.
enum Flow {
    Continue,
    Close(End),
}

impl<P: Protocol> Session<'_, '_, P> {
    /// With a log, after a commit: waits until the commit is durable (module docs,
    /// "Durability"); false when the log failed first. A commit that wrote nothing, or a
    /// server without a log, is durable at once.
    fn durable(&mut self) -> bool {
        let Some(log) = self.tx.logger() else {
            return true;
        };
        match self.tx.take_committed_epoch() {
            Some(epoch) => log.wait_durable(epoch),
            None => true,
        }
    }

    /// Whether the session steps away once its client has been quiet for [`AWAY_AFTER`]
    /// (module docs, "Idle sessions"): it is present, between transactions, under a protocol
    /// whose idle workers hold up the others.
    fn may_go_away(&self) -> bool {
        P::RUN_HOOKS.idle_workers_hold_others && !self.in_txn && !self.away
    }

    /// Steps the handle away from its protocol's barriers and batches (between transactions).
    fn go_away(&mut self) {
        debug_assert!(!self.in_txn, "away between transactions only");
        // An abandoned attempt (the server stops) keeps what it held: `serve` stops the worker.
        if !self.away && !self.abandoned {
            // The protocol wakes whoever waited for this worker (a barrier, a batch's close).
            self.tx.away();
            self.away = true;
        }
    }

    /// Ends the open transaction with an abort the client did not ask for: a bad request, a
    /// disconnect, a timeout, a bad frame, the server stopping (module docs, "Faults"). A
    /// deterministic protocol confirms it first, as a client's `ABORT` (a placed member's
    /// placeholders are produced); a re-execution it would rather run is not run, the attempt
    /// ends. Returns false when the attempt was abandoned instead: the server is stopping and
    /// the protocol's part would wait.
    fn abort_unasked(&mut self) -> bool {
        if P::DECLARED_SET.is_some() {
            // The schedule waited until the server stopped: the attempt holds a place it never
            // took (a batch member before its turn), which only its turn could release.
            let mut given_up = !self.scheduled;
            if !given_up {
                let tx = &mut self.tx;
                let confirm = std::future::poll_fn(|_| tx.poll_confirm_user_abort());
                given_up = wait_for(pin!(confirm), self.ending).is_none();
            }
            if given_up {
                self.in_txn = false;
                self.abandoned = true;
                return false;
            }
        }
        self.tx.aborted(Abort::User);
        ParkingLot::global().attempt_ended();
        self.in_txn = false;
        true
    }

    /// Reads and answers requests until the session ends.
    fn run(&mut self, mut stream: TcpStream, cfg: &ServeConfig, tables: &[TableInfo]) -> End {
        if let Err(e) = stream
            .set_nonblocking(false)
            .and_then(|()| stream.set_nodelay(true))
            .and_then(|()| stream.set_read_timeout(Some(POLL)))
            // A client that stops reading its replies cannot hold the session (or the server's
            // shutdown) longer than an idle one.
            .and_then(|()| stream.set_write_timeout(Some(cfg.session_timeout)))
        {
            return End::Fault(format!("socket setup failed: {e}"));
        }
        let mut inbuf = vec![0u8; 4096];
        let (mut start, mut end) = (0usize, 0usize);
        let mut greeted = false;
        let mut last_heard = Instant::now();
        // The read timeout set on the socket: `POLL`, or `AWAY_AFTER` while the session may
        // step away (it wakes to do so).
        let mut read_timeout = POLL;
        loop {
            // Answer every complete frame in the buffer.
            loop {
                let avail = &inbuf[start..end];
                if !greeted {
                    match Handshake::decode(avail) {
                        Ok(None) => break,
                        Err(_) => return End::Refused("not a txbench handshake"),
                        Ok(Some((hs, used))) => {
                            start += used;
                            if let Err((code, why)) = check_handshake(&hs, cfg) {
                                let _ =
                                    self.reply(&mut stream, Reply::Error { code, message: why });
                                return End::Refused(why);
                            }
                            self.version = hs.version;
                            self.out.clear();
                            Reply::encode_hello(&mut self.out, tables.iter().copied());
                            if stream.write_all(&self.out).is_err() {
                                return End::Disconnected;
                            }
                            greeted = true;
                        }
                    }
                    continue;
                }
                match Request::decode_version(avail, self.version) {
                    Ok(None) => break,
                    Err(e) => {
                        let message = e.to_string();
                        let code = ErrorCode::Malformed;
                        let _ = self.reply(
                            &mut stream,
                            Reply::Error {
                                code,
                                message: &message,
                            },
                        );
                        return End::Fault(format!("malformed frame: {message}"));
                    }
                    Ok(Some((req, used))) => {
                        self.counts.requests += 1;
                        let flow = self.handle(req, &mut stream);
                        self.quiet_since = Instant::now();
                        start += used;
                        if let Flow::Close(why) = flow {
                            return why;
                        }
                    }
                }
            }
            // Make room for the rest of the frame: move the partial frame to the front, and grow
            // (up to one frame of the largest size the decoder accepts) when it fills the buffer.
            if start == end {
                (start, end) = (0, 0);
            } else if start > 0 {
                inbuf.copy_within(start..end, 0);
                (start, end) = (0, end - start);
            }
            if end == inbuf.len() {
                let grown = (inbuf.len() * 2).min(4 + super::wire::MAX_FRAME_BYTES);
                inbuf.resize(grown, 0);
            }
            let wanted = if self.may_go_away() { AWAY_AFTER } else { POLL };
            if wanted != read_timeout {
                if let Err(e) = stream.set_read_timeout(Some(wanted)) {
                    return End::Fault(format!("socket setup failed: {e}"));
                }
                read_timeout = wanted;
            }
            match stream.read(&mut inbuf[end..]) {
                Ok(0) => return End::Disconnected,
                Ok(n) => {
                    end += n;
                    last_heard = Instant::now();
                    self.quiet_since = last_heard;
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if self.may_go_away() && self.quiet_since.elapsed() >= AWAY_AFTER {
                        self.go_away();
                    }
                    // Acquire: pairs with the accept loop's Release store.
                    if self.ending.load(Ordering::Acquire) {
                        let message = "the server is stopping";
                        let code = ErrorCode::ShuttingDown;
                        let _ = self.reply(&mut stream, Reply::Error { code, message });
                        return End::Closed;
                    }
                    if last_heard.elapsed() >= cfg.session_timeout {
                        let message = "session idle past the server's timeout";
                        let code = ErrorCode::TimedOut;
                        let _ = self.reply(&mut stream, Reply::Error { code, message });
                        return End::Fault(format!(
                            "idle for {:?}{}",
                            cfg.session_timeout,
                            if self.in_txn {
                                "; aborted its transaction"
                            } else {
                                ""
                            }
                        ));
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return End::Disconnected,
            }
        }
    }

    /// Sends one reply.
    fn reply(&mut self, stream: &mut TcpStream, reply: Reply<'_>) -> std::io::Result<()> {
        self.out.clear();
        reply.encode(&mut self.out);
        self.send(stream)
    }

    /// Sends the reply in `self.out`, after the configured round-trip delay (`--rtt-us`).
    fn send(&mut self, stream: &mut TcpStream) -> std::io::Result<()> {
        if !self.rtt.is_zero() {
            added_delay(self.rtt);
        }
        stream.write_all(&self.out)
    }

    /// Ends the open transaction with the protocol's (or the client's) abort.
    fn end_aborted(&mut self, why: Abort) {
        self.tx.aborted(why);
        ParkingLot::global().attempt_ended();
        self.in_txn = false;
        if why == Abort::User {
            self.counts.user_aborts += 1;
        } else {
            self.counts.aborts += 1;
        }
    }

    /// Answers one request.
    fn handle(&mut self, req: Request<'_>, stream: &mut TcpStream) -> Flow {
        let sent = match req {
            Request::Ping => self.reply(stream, Reply::Ok),
            Request::Begin { .. } if self.in_txn => return out_of_order(self, stream, "BEGIN"),
            Request::Check if self.in_txn => return out_of_order(self, stream, "CHECK"),
            Request::Check => self.verdict(stream),
            Request::Begin {
                read_only,
                retry,
                declared,
            } => self.begin(AttemptStart { retry, read_only }, declared, stream),
            _ if !self.in_txn => {
                return out_of_order(self, stream, "an operation outside a transaction");
            }
            other => self.operate(other, stream),
        };
        match sent {
            Ok(()) if self.abandoned => Flow::Close(End::Closed),
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close(End::Disconnected),
        }
    }

    /// Starts an attempt; a deterministic protocol first gets the declared set (at a
    /// transaction's first attempt; its retries keep it) and schedules the attempt from it.
    fn begin(
        &mut self,
        start: AttemptStart,
        declared: DeclaredSet<'_>,
        stream: &mut TcpStream,
    ) -> std::io::Result<()> {
        if P::DECLARED_SET.is_some() && !start.retry {
            if declared.is_empty() {
                return self.reply_error(
                    stream,
                    ErrorCode::BadRequest,
                    "this protocol schedules from declared access sets: BEGIN must declare one",
                );
            }
            let tables = self.db.tables();
            let exists = |d: Declared| {
                tables
                    .get(d.table as usize)
                    .is_some_and(|t| t.get(RecordId(d.rid)).is_some())
            };
            if !declared.iter().all(exists) {
                return self.reply_error(
                    stream,
                    ErrorCode::BadRequest,
                    "a declared record is outside its table",
                );
            }
            if declared.covers().any(|c| c.table as usize >= tables.len()) {
                return self.reply_error(
                    stream,
                    ErrorCode::BadRequest,
                    "a declared cover names no such table",
                );
            }
            // A client of version 3 states its covers, so its set is complete and checked
            // (module docs, "Faults"); an older one's is not.
            let covered = self.version >= COVERS_VERSION;
            self.tx.declare_remote(covered, |set| {
                for d in declared.iter() {
                    let (t, r) = (TableId(d.table), RecordId(d.rid));
                    if d.write {
                        set.write(t, r);
                    } else {
                        set.read(t, r);
                    }
                }
                for c in declared.covers() {
                    set.cover(TableId(c.table), c.start..c.end);
                }
            });
        }
        if self.away {
            // Counts in its protocol's barriers and batches again (module docs, "Idle
            // sessions").
            self.tx.back();
            self.away = false;
        }
        self.tx.begin(start);
        self.for_update.clear();
        self.in_txn = true;
        self.scheduled = false;
        if P::DECLARED_SET.is_some() {
            let tx = &mut self.tx;
            let scheduled = std::future::poll_fn(|_| tx.poll_schedule());
            let stopping = self.ending;
            match wait_for(pin!(scheduled), stopping) {
                Some(Ok(())) => self.scheduled = true,
                other => return self.failed(stream, other),
            }
        }
        self.reply(stream, Reply::Ok)
    }

    /// Answers `CHECK`: once every other session has ended (its handle is back in the pool), the
    /// checker's verdict on the histories of every handle, as the runner checks an in-process
    /// run. Waits at most the session timeout, by which a stalled session has been closed; a
    /// client still working then keeps its session open, and the answer is `NOT_CHECKABLE`.
    fn verdict(&mut self, stream: &mut TcpStream) -> std::io::Result<()> {
        if !self.cfg.record_history {
            let why = "this server does not record its history: start it with --check";
            return self.reply_error(stream, ErrorCode::NotCheckable, why);
        }
        // The wait is for every other session to end: this one must not hold them up meanwhile.
        self.go_away();
        let others = self.cfg.max_connections - 1;
        let asked = Instant::now();
        let mut histories = loop {
            {
                let pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
                if pool.len() >= others {
                    let kept = pool.iter().filter_map(|tx| {
                        let h = tx.committed_history()?;
                        Some((tx.worker_id(), h.clone()))
                    });
                    break kept.collect::<Vec<_>>();
                }
            }
            // Acquire: pairs with the accept loop's Release store.
            if self.ending.load(Ordering::Acquire) {
                let why = "the server is stopping";
                return self.reply_error(stream, ErrorCode::ShuttingDown, why);
            }
            if asked.elapsed() >= self.cfg.session_timeout {
                let why = "other sessions stayed open past the session timeout";
                return self.reply_error(stream, ErrorCode::NotCheckable, why);
            }
            std::thread::sleep(POLL);
        };
        if let Some(own) = self.tx.committed_history() {
            histories.push((self.tx.worker_id(), own.clone()));
        }
        // By worker id, as `serve` returns them: the checker names transactions by worker.
        histories.sort_by_key(|(id, _)| *id);
        let histories: Vec<_> = histories.into_iter().map(|(_, h)| h).collect();
        let mut report = crate::check::check(&histories);
        let mut json = serde_json::to_string(&report).unwrap_or_default();
        if json.len() + 16 > MAX_FRAME_BYTES {
            // Only the examples are unbounded in size; the counts always fit.
            report.examples.clear();
            json = serde_json::to_string(&report).unwrap_or_default();
        }
        self.reply(stream, Reply::Verdict(&json))
    }

    /// Answers an error that leaves no transaction open (none was begun).
    fn reply_error(
        &mut self,
        stream: &mut TcpStream,
        code: ErrorCode,
        message: &str,
    ) -> std::io::Result<()> {
        self.reply(stream, Reply::Error { code, message })
    }

    /// Runs one operation of the open transaction and replies.
    fn operate(&mut self, req: Request<'_>, stream: &mut TcpStream) -> std::io::Result<()> {
        let stopping = self.ending;
        let committed = matches!(req, Request::ReadCommitted { .. });
        match req {
            Request::Read { table, rid } | Request::ReadCommitted { table, rid } => {
                let (t, r) = match self.record(table, rid, None) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why),
                };
                let outcome = if committed {
                    wait_for(pin!(self.tx.read_committed(t, r)), stopping)
                } else {
                    wait_for(pin!(self.tx.read(t, r)), stopping)
                };
                match outcome {
                    Some(Ok(row)) => {
                        self.out.clear();
                        Reply::Value(row).encode(&mut self.out);
                        self.send(stream)
                    }
                    other => {
                        let other = other.map(|r| r.map(|_| ()));
                        self.failed(stream, other)
                    }
                }
            }
            Request::ReadForUpdate { table, rid } => {
                let (t, r) = match self.record(table, rid, None) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why),
                };
                let tx = &mut self.tx;
                let read = std::future::poll_fn(|_| tx.poll_read_for_update(t, r));
                match wait_for(pin!(read), stopping) {
                    Some(Ok(row)) => {
                        self.for_update.push((t, r));
                        self.out.clear();
                        Reply::Value(self.tx.read_row(row)).encode(&mut self.out);
                        self.send(stream)
                    }
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))),
                }
            }
            Request::Write { table, rid, data } => {
                let (t, r) = match self.record(table, rid, Some(data)) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why),
                };
                let done = wait_for(pin!(self.tx.write(t, r, data)), stopping);
                self.done(stream, done)
            }
            Request::Update { table, rid, data } => {
                let (t, r) = match self.record(table, rid, Some(data)) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why),
                };
                let done = if self.for_update.contains(&(t, r)) {
                    let tx = &mut self.tx;
                    let write = std::future::poll_fn(|_| tx.poll_write_after_read(t, r, data));
                    wait_for(pin!(write), stopping)
                } else {
                    let update = self.tx.update(t, r, |row| row.copy_from_slice(data));
                    wait_for(pin!(update), stopping)
                };
                self.done(stream, done)
            }
            Request::Insert { table, rid, data } => {
                let (t, r) = match self.record(table, rid, Some(data)) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why),
                };
                if is_vacant(data) {
                    return self
                        .bad_request(stream, "an inserted row's first 8 bytes are all zero");
                }
                let insert = self.tx.insert(t, r, |row| row.copy_from_slice(data));
                let outcome = wait_for(pin!(insert), stopping);
                match outcome {
                    Some(Ok(inserted)) => self.reply(stream, Reply::Flag(inserted)),
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))),
                }
            }
            Request::Delete { table, rid } => {
                let (t, r) = match self.record(table, rid, None) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why),
                };
                let outcome = wait_for(pin!(self.tx.delete(t, r)), stopping);
                match outcome {
                    Some(Ok(deleted)) => self.reply(stream, Reply::Flag(deleted)),
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))),
                }
            }
            Request::Scan {
                index,
                lo,
                hi,
                limit,
            } => {
                if index as usize >= self.db.indexes().len() {
                    return self.bad_request(stream, "no such index");
                }
                self.rows.clear();
                let scan = self.tx.scan(IndexId(index), lo..=hi, &mut self.rows);
                let outcome = wait_for(pin!(scan), stopping);
                match outcome {
                    Some(Ok(())) => {
                        let n = self.rows.len().min(limit.min(MAX_SCAN_ROWS) as usize);
                        self.out.clear();
                        let rows = self.rows[..n].iter().map(|&(k, r)| (k, r.0));
                        Reply::encode_rows(&mut self.out, rows);
                        self.send(stream)
                    }
                    other => self.failed(stream, other),
                }
            }
            Request::Commit => {
                let tx = &mut self.tx;
                match wait_for(pin!(std::future::poll_fn(|_| tx.poll_commit())), stopping) {
                    Some(Ok(())) => {
                        self.tx.committed();
                        ParkingLot::global().attempt_ended();
                        self.in_txn = false;
                        self.counts.commits += 1;
                        if !self.durable() {
                            return self.reply(
                                stream,
                                Reply::Error {
                                    code: ErrorCode::ShuttingDown,
                                    message: "the commit is not acknowledged durable: the \
                                              server's log failed, and it stops",
                                },
                            );
                        }
                        self.reply(stream, Reply::Ok)
                    }
                    other => self.failed(stream, other),
                }
            }
            Request::Abort if P::DECLARED_SET.is_some() => {
                // A deterministic protocol confirms a user abort first: the program may have
                // decided it on reads taken ahead of its turn (it stands, or re-executes).
                let tx = &mut self.tx;
                let confirm = std::future::poll_fn(|_| tx.poll_confirm_user_abort());
                match wait_for(pin!(confirm), stopping) {
                    Some(Ok(())) => {
                        self.end_aborted(Abort::User);
                        self.reply(stream, Reply::Ok)
                    }
                    other => self.failed(stream, other),
                }
            }
            Request::Abort => {
                self.end_aborted(Abort::User);
                self.reply(stream, Reply::Ok)
            }
            Request::IndexInsert { index, key, rid } => {
                let Some(ix) = self.db.indexes().get(index as usize) else {
                    return self.bad_request(stream, "no such index");
                };
                let indexed = ix.spec.table;
                if self.db.tables()[indexed.0 as usize]
                    .get(RecordId(rid))
                    .is_none()
                {
                    return self.bad_request(stream, "record id outside the index's table");
                }
                if ix.map.get(key).is_some_and(|r| r != RecordId(rid)) {
                    return self.bad_request(stream, "the key is indexed with another record");
                }
                let insert = self.tx.index_insert(IndexId(index), key, RecordId(rid));
                let outcome = wait_for(pin!(insert), stopping);
                match outcome {
                    Some(Ok(entered)) => self.reply(stream, Reply::Flag(entered)),
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))),
                }
            }
            Request::IndexRemove { index, key } => {
                if index as usize >= self.db.indexes().len() {
                    return self.bad_request(stream, "no such index");
                }
                let remove = self.tx.index_remove(IndexId(index), key);
                let done = wait_for(pin!(remove), stopping);
                self.done(stream, done)
            }
            Request::ScanFirst { index, lo, hi } | Request::ScanLast { index, lo, hi } => {
                if index as usize >= self.db.indexes().len() {
                    return self.bad_request(stream, "no such index");
                }
                let outcome = if matches!(req, Request::ScanFirst { .. }) {
                    wait_for(pin!(self.tx.scan_first(IndexId(index), lo..=hi)), stopping)
                } else {
                    wait_for(pin!(self.tx.scan_last(IndexId(index), lo..=hi)), stopping)
                };
                match outcome {
                    Some(Ok(row)) => {
                        self.out.clear();
                        Reply::encode_rows(&mut self.out, row.map(|(k, r)| (k, r.0)).into_iter());
                        self.send(stream)
                    }
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))),
                }
            }
            Request::Reserve { table, rid } => {
                // Not `record`: a slot past a growable table's cap is an answer (`false`), not
                // a bad request.
                if table as usize >= self.db.tables().len() {
                    return self.bad_request(stream, "no such table");
                }
                let reserved = self.tx.reserve(TableId(table), RecordId(rid));
                self.reply(stream, Reply::Flag(reserved))
            }
            Request::Begin { .. } | Request::Ping | Request::Check => {
                unreachable!("handled before operate")
            }
        }
    }

    /// Replies to an operation that returned nothing but success or failure.
    fn done(
        &mut self,
        stream: &mut TcpStream,
        done: Option<Result<(), Abort>>,
    ) -> std::io::Result<()> {
        match done {
            Some(Ok(())) => self.reply(stream, Reply::Ok),
            other => self.failed(stream, other),
        }
    }

    /// Replies to an operation that did not complete: the protocol aborted it (`Some(Err)`), or
    /// the server is stopping (`None`). Either way the transaction is over.
    fn failed(
        &mut self,
        stream: &mut TcpStream,
        outcome: Option<Result<(), Abort>>,
    ) -> std::io::Result<()> {
        if outcome.is_some_and(|r| r.is_err())
            && let Some(access) = self.tx.take_undeclared()
        {
            // Not the protocol's abort: the handle refused an access outside the declared set
            // before the protocol saw it (module docs, "Faults").
            let why = access.to_string();
            return self.bad_request(stream, &why);
        }
        match outcome {
            Some(Err(why)) => {
                self.end_aborted(why);
                self.reply(stream, Reply::Aborted(why))
            }
            Some(Ok(())) => unreachable!("failed() is called for operations that did not succeed"),
            None => {
                if self.abort_unasked() {
                    self.counts.user_aborts += 1;
                }
                let message = "the server is stopping";
                self.reply(
                    stream,
                    Reply::Error {
                        code: ErrorCode::ShuttingDown,
                        message,
                    },
                )
            }
        }
    }

    /// Answers a request naming something that does not exist: the transaction is aborted.
    fn bad_request(&mut self, stream: &mut TcpStream, why: &str) -> std::io::Result<()> {
        self.abort_unasked();
        self.counts.user_aborts += 1;
        self.reply(
            stream,
            Reply::Error {
                code: ErrorCode::BadRequest,
                message: why,
            },
        )
    }

    /// The record a request names, checked to exist (and `data` to have its table's row size).
    fn record(
        &self,
        table: u32,
        rid: u64,
        data: Option<&[u8]>,
    ) -> Result<(TableId, RecordId), &'static str> {
        let t = self
            .db
            .tables()
            .get(table as usize)
            .ok_or("no such table")?;
        if t.get(RecordId(rid)).is_none() {
            return Err("record id outside the table");
        }
        if data.is_some_and(|d| d.len() != t.payload_bytes()) {
            return Err("payload size differs from the table's");
        }
        Ok((TableId(table), RecordId(rid)))
    }
}

/// Answers a request the session's state does not allow, and closes the session.
fn out_of_order<P: Protocol>(
    session: &mut Session<'_, '_, P>,
    stream: &mut TcpStream,
    what: &'static str,
) -> Flow {
    let message = format!("out-of-order request: {what}");
    let code = ErrorCode::OutOfOrder;
    let _ = session.reply(
        stream,
        Reply::Error {
            code,
            message: &message,
        },
    );
    Flow::Close(End::Fault(message))
}

/// Checks a client's handshake against the server's version and token.
fn check_handshake(hs: &Handshake<'_>, cfg: &ServeConfig) -> Result<(), (ErrorCode, &'static str)> {
    if !(MIN_VERSION..=VERSION).contains(&hs.version) {
        return Err((ErrorCode::Version, "unsupported wire format version"));
    }
    if let Some(token) = &cfg.token {
        // Compared in time independent of where the bytes differ.
        let given = hs.token;
        let same = given.len() == token.len()
            && given
                .iter()
                .zip(token.as_bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if !same {
            return Err((ErrorCode::Unauthorized, "missing or wrong token"));
        }
    }
    Ok(())
}

/// Waits `rtt` (`--rtt-us`) before a reply goes out: sleeps for all but the last stretch,
/// which the OS's timer slack would overshoot, then yields until the deadline.
fn added_delay(rtt: Duration) {
    let until = Instant::now() + rtt;
    const SLACK: Duration = Duration::from_micros(100);
    if rtt > SLACK {
        std::thread::sleep(rtt - SLACK);
    }
    while Instant::now() < until {
        std::thread::yield_now();
    }
}

/// Polls `fut` until it is ready (module docs, "Waiting"); `None` when `stopping` is set first.
fn wait_for<F: Future>(mut fut: Pin<&mut F>, stopping: &AtomicBool) -> Option<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    // Fast path: most operations never wait.
    if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
        return Some(out);
    }
    let mut waiting = Waiting::start();
    let lot = ParkingLot::global();
    let mut parks = WaitCounts::default();
    loop {
        let mut poll = || match fut.as_mut().poll(&mut cx) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        };
        // Shared: the holder may be a session whose client is a round trip away, so the waiter
        // parks soon rather than spin on a core the holder's session may need.
        let ready = match waiting.take(WaitPolicy::shared(), lot, &mut parks, &mut poll) {
            StepOutcome::PollNow => poll(),
            StepOutcome::Polled(out) => out,
        };
        if ready.is_some() {
            return ready;
        }
        // Acquire: pairs with the accept loop's Release store. A park ends by a wake or its
        // timeout, so a stopping server is noticed within `park::PARK_TIMEOUT`.
        if stopping.load(Ordering::Acquire) {
            return None;
        }
    }
}
