//! The server side of interactive mode: an accept loop and event-loop threads that each run many
//! sessions as tasks, each session a protocol worker that runs one transaction at a time, driven
//! request by request.
//!
//! # Threads and tasks
//!
//! The accept loop hands each new connection, with a free handle, to one of `--server-threads`
//! event loops (`event_loop.rs`; one per core by default), round robin. A loop runs each of its
//! sessions as a task until it waits: for its client's next request, for a reply's turn to go
//! out (`--rtt-us`), for a group commit, or for a protocol event. Then the loop serves its
//! other sessions, so a session whose lock request waits holds no thread, and a holder whose
//! client is a round trip away does not compete with spinning waiters for the core.
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
//! An operation the protocol answers `Pending` sets its session's task aside (the connection's
//! task is parked, its thread serves other connections). Its loop polls it again on every
//! round for a short while (the shared policy's spin, about 50 us, during which it also looks at
//! its sockets without sleeping), then sleeps in `ppoll(2)` until a socket is ready, a timer is
//! due, or an event that can end a protocol wait: protocols announce them through
//! `protocol::wake`, and every session's attempt end wakes the lot as the executors' do; the
//! lot writes to a sleeping loop's pipe ([`crate::park::Watcher`]). A sleep is also bounded by
//! [`crate::park::PARK_TIMEOUT`]. A wait ends when the operation completes or the server stops
//! (the transaction is then aborted). A transaction wounded (wound-wait) while its session
//! waits for its client learns it at its next request, so it holds its locks until then: one
//! round trip at best, which is PLOR's point about wound-wait under interactive transactions.
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
//! `--log-sync group` once a group flush has synced its epoch (the session's task looks at the
//! durable frontier every 200 us meanwhile, its thread serving others), under `txn` after a
//! flush the commit starts (on the loop's thread, which waits for that sync), under `none` at
//! once (durable only at a clean stop). So every `OK` a client
//! got for a writing transaction survives a crash. A read-only commit is answered at once,
//! as the executor acknowledges it: it wrote nothing to lose, though what it read may be a
//! write whose own `OK` is still on its way (and is lost with it, never having been
//! acknowledged). If the log fails (a write or sync error), a commit waiting for it is
//! answered [`ErrorCode::ShuttingDown`], not `OK`: it is in memory but may be lost, and the
//! server stops.

use super::event_loop::{Inbox, TaskWait, run_loop};
use super::wire::{
    COVERS_VERSION, Declared, DeclaredSet, ErrorCode, Handshake, MAX_FRAME_BYTES, MAX_SCAN_ROWS,
    MIN_VERSION, Reply, Request, TableInfo, VERSION,
};
pub use crate::config::ServeConfig;
use crate::ids::{RecordId, TableId};
use crate::log::{LogStats, LogSync, Logger};
use crate::park::ParkingLot;
use crate::protocol::{Abort, AttemptStart, Protocol};
use crate::storage::{Database, IndexId, is_vacant};
use crate::txn::Txn;
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::rc::Rc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// How often a commit waiting for a group flush looks at the durable frontier: fine beside
/// the group interval (`--log-group-us`, milliseconds).
const DURABLE_POLL: Duration = Duration::from_micros(200);

/// How long a session's client may stay quiet between transactions before the session steps
/// away from its protocol's barriers and batches (module docs, "Idle sessions"): longer than a
/// round trip and than the default batch time bound, short beside an epoch. The deadline of
/// the session's read wakes its task for it.
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
    let loops = cfg.loop_threads();
    let inboxes = (0..loops)
        .map(|_| Inbox::new())
        .collect::<std::io::Result<Vec<Inbox<Arrival<'db, P>>>>>()?;
    std::thread::scope(|s| {
        for inbox in &inboxes {
            let (free, totals, ending, tables) = (&free, &totals, &ending, &tables[..]);
            s.spawn(move || {
                run_loop(inbox, ending, |arrival, wait| {
                    session_task(arrival, wait, free, totals, ending, tables, cfg, db)
                });
            });
        }
        let mut next_loop = 0;
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
            // Round robin: sessions are alike until their clients differ.
            inboxes[next_loop].push(Arrival { stream, peer, tx });
            next_loop = (next_loop + 1) % inboxes.len();
        }
        // Release: pairs with the sessions' and loops' Acquire loads.
        ending.store(true, Ordering::Release);
        inboxes.iter().for_each(Inbox::wake);
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

/// A connection the accept loop hands an event loop, with the handle its session runs on.
struct Arrival<'db, P: Protocol> {
    stream: TcpStream,
    peer: SocketAddr,
    tx: Txn<'db, P>,
}

/// One session, from its handshake to its end: runs it, then aborts what it left open, counts it
/// and gives its handle back to the pool.
#[allow(clippy::too_many_arguments)]
async fn session_task<'db, 's, P: Protocol>(
    arrival: Arrival<'db, P>,
    waits: Rc<TaskWait>,
    free: &'s Mutex<Vec<Txn<'db, P>>>,
    totals: &'s Totals,
    ending: &'s AtomicBool,
    tables: &'s [TableInfo],
    cfg: &'s ServeConfig,
    db: &'db Database<P::RecordMeta>,
) {
    let Arrival { stream, peer, tx } = arrival;
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
        waits,
    };
    let end = session.run(&stream, cfg, tables).await;
    let started = !matches!(end, End::Refused(_));
    let mid_transaction = session.in_txn;
    if session.in_txn {
        session.abort_unasked().await;
    }
    // Back in the pool, no client holds it. Acquire: pairs with the accept loop's Release
    // store; a stopping server stops every worker instead.
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
    /// What the session's task waits for when it cannot go on (`event_loop`).
    waits: Rc<TaskWait>,
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
    async fn durable(&mut self) -> bool {
        let Some(log) = self.tx.logger() else {
            return true;
        };
        let Some(epoch) = self.tx.take_committed_epoch() else {
            return true;
        };
        if log.sync_mode() != LogSync::Group {
            // `none` answers at once; `txn` flushes and syncs here, on the loop's thread,
            // which that mode's cost is.
            return log.wait_durable(epoch);
        }
        // Group commit: the flusher moves the frontier; look again every `DURABLE_POLL`.
        loop {
            if log.acknowledged_through() >= epoch {
                return true;
            }
            if log.failure().is_some() {
                return false;
            }
            self.waits.until(Instant::now() + DURABLE_POLL).await;
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
    async fn abort_unasked(&mut self) -> bool {
        if P::DECLARED_SET.is_some() {
            // The schedule waited until the server stopped: the attempt holds a place it never
            // took (a batch member before its turn), which only its turn could release.
            let mut given_up = !self.scheduled;
            if !given_up {
                let tx = &mut self.tx;
                let confirm = std::future::poll_fn(|_| tx.poll_confirm_user_abort());
                given_up = self.waits.protocol(confirm, self.ending).await.is_none();
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
    async fn run(&mut self, stream: &TcpStream, cfg: &ServeConfig, tables: &[TableInfo]) -> End {
        // Non-blocking: the session's task waits for its socket in its event loop.
        if let Err(e) = stream
            .set_nonblocking(true)
            .and_then(|()| stream.set_nodelay(true))
        {
            return End::Fault(format!("socket setup failed: {e}"));
        }
        let mut inbuf = vec![0u8; 4096];
        let (mut start, mut end) = (0usize, 0usize);
        let mut greeted = false;
        let mut last_heard = Instant::now();
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
                                let _ = self
                                    .reply(stream, Reply::Error { code, message: why })
                                    .await;
                                return End::Refused(why);
                            }
                            self.version = hs.version;
                            self.out.clear();
                            Reply::encode_hello(&mut self.out, tables.iter().copied());
                            if self.write_out(stream).await.is_err() {
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
                        let _ = self
                            .reply_error(stream, ErrorCode::Malformed, &message)
                            .await;
                        return End::Fault(format!("malformed frame: {message}"));
                    }
                    Ok(Some((req, used))) => {
                        self.counts.requests += 1;
                        let flow = self.handle(req, stream).await;
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
            // Wakes after `POLL` to look at the stop flag and the idle timeout, or after
            // `AWAY_AFTER` while the session may step away (it wakes to do so).
            let wanted = if self.may_go_away() { AWAY_AFTER } else { POLL };
            let deadline = Instant::now() + wanted;
            match self.waits.read(stream, &mut inbuf[end..], deadline).await {
                Ok(0) => return End::Disconnected,
                Ok(n) => {
                    end += n;
                    last_heard = Instant::now();
                    self.quiet_since = last_heard;
                }
                Err(e) if e.kind() == ErrorKind::TimedOut => {
                    if self.may_go_away() && self.quiet_since.elapsed() >= AWAY_AFTER {
                        self.go_away();
                    }
                    // Acquire: pairs with the accept loop's Release store.
                    if self.ending.load(Ordering::Acquire) {
                        let message = "the server is stopping";
                        let code = ErrorCode::ShuttingDown;
                        let _ = self.reply(stream, Reply::Error { code, message }).await;
                        return End::Closed;
                    }
                    if last_heard.elapsed() >= cfg.session_timeout {
                        let message = "session idle past the server's timeout";
                        let code = ErrorCode::TimedOut;
                        let _ = self.reply(stream, Reply::Error { code, message }).await;
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
                Err(_) => return End::Disconnected,
            }
        }
    }

    /// Sends one reply.
    async fn reply(&mut self, stream: &TcpStream, reply: Reply<'_>) -> std::io::Result<()> {
        self.out.clear();
        reply.encode(&mut self.out);
        self.send(stream).await
    }

    /// Sends the reply in `self.out`, after the configured round-trip delay (`--rtt-us`).
    async fn send(&mut self, stream: &TcpStream) -> std::io::Result<()> {
        if !self.rtt.is_zero() {
            self.waits.until(Instant::now() + self.rtt).await;
        }
        self.write_out(stream).await
    }

    /// Writes `self.out`, waiting while the socket's buffer is full, at most the session
    /// timeout: a client that stops reading its replies cannot hold the session (or the
    /// server's shutdown) longer than an idle one.
    async fn write_out(&mut self, stream: &TcpStream) -> std::io::Result<()> {
        let deadline = Instant::now() + self.cfg.session_timeout;
        self.waits.write_all(stream, &self.out, deadline).await
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
    async fn handle(&mut self, req: Request<'_>, stream: &TcpStream) -> Flow {
        let sent = match req {
            Request::Ping => self.reply(stream, Reply::Ok).await,
            Request::Begin { .. } if self.in_txn => {
                return out_of_order(self, stream, "BEGIN").await;
            }
            Request::Check if self.in_txn => return out_of_order(self, stream, "CHECK").await,
            Request::Check => self.verdict(stream).await,
            Request::Begin {
                read_only,
                retry,
                declared,
            } => {
                self.begin(AttemptStart { retry, read_only }, declared, stream)
                    .await
            }
            _ if !self.in_txn => {
                return out_of_order(self, stream, "an operation outside a transaction").await;
            }
            other => self.operate(other, stream).await,
        };
        match sent {
            Ok(()) if self.abandoned => Flow::Close(End::Closed),
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close(End::Disconnected),
        }
    }

    /// Starts an attempt; a deterministic protocol first gets the declared set (at a
    /// transaction's first attempt; its retries keep it) and schedules the attempt from it.
    async fn begin(
        &mut self,
        start: AttemptStart,
        declared: DeclaredSet<'_>,
        stream: &TcpStream,
    ) -> std::io::Result<()> {
        if P::DECLARED_SET.is_some() && !start.retry {
            if declared.is_empty() {
                return self
                    .reply_error(
                        stream,
                        ErrorCode::BadRequest,
                        "this protocol schedules from declared access sets: BEGIN must declare one",
                    )
                    .await;
            }
            let tables = self.db.tables();
            let exists = |d: Declared| {
                tables
                    .get(d.table as usize)
                    .is_some_and(|t| t.get(RecordId(d.rid)).is_some())
            };
            if !declared.iter().all(exists) {
                return self
                    .reply_error(
                        stream,
                        ErrorCode::BadRequest,
                        "a declared record is outside its table",
                    )
                    .await;
            }
            if declared.covers().any(|c| c.table as usize >= tables.len()) {
                return self
                    .reply_error(
                        stream,
                        ErrorCode::BadRequest,
                        "a declared cover names no such table",
                    )
                    .await;
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
            match self.waits.protocol(scheduled, stopping).await {
                Some(Ok(())) => self.scheduled = true,
                other => return self.failed(stream, other).await,
            }
        }
        self.reply(stream, Reply::Ok).await
    }

    /// Answers `CHECK`: once every other session has ended (its handle is back in the pool), the
    /// checker's verdict on the histories of every handle, as the runner checks an in-process
    /// run. Waits at most the session timeout, by which a stalled session has been closed; a
    /// client still working then keeps its session open, and the answer is `NOT_CHECKABLE`.
    async fn verdict(&mut self, stream: &TcpStream) -> std::io::Result<()> {
        if !self.cfg.record_history {
            let why = "this server does not record its history: start it with --check";
            return self.reply_error(stream, ErrorCode::NotCheckable, why).await;
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
                return self.reply_error(stream, ErrorCode::ShuttingDown, why).await;
            }
            if asked.elapsed() >= self.cfg.session_timeout {
                let why = "other sessions stayed open past the session timeout";
                return self.reply_error(stream, ErrorCode::NotCheckable, why).await;
            }
            self.waits.until(Instant::now() + POLL).await;
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
        self.reply(stream, Reply::Verdict(&json)).await
    }

    /// Answers an error that leaves no transaction open (none was begun).
    async fn reply_error(
        &mut self,
        stream: &TcpStream,
        code: ErrorCode,
        message: &str,
    ) -> std::io::Result<()> {
        self.reply(stream, Reply::Error { code, message }).await
    }

    /// Runs one operation of the open transaction and replies.
    async fn operate(&mut self, req: Request<'_>, stream: &TcpStream) -> std::io::Result<()> {
        let stopping = self.ending;
        let committed = matches!(req, Request::ReadCommitted { .. });
        match req {
            Request::Read { table, rid } | Request::ReadCommitted { table, rid } => {
                let (t, r) = match self.record(table, rid, None) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why).await,
                };
                let outcome = if committed {
                    self.waits
                        .protocol(self.tx.read_committed(t, r), stopping)
                        .await
                } else {
                    self.waits.protocol(self.tx.read(t, r), stopping).await
                };
                match outcome {
                    Some(Ok(row)) => {
                        self.out.clear();
                        Reply::Value(row).encode(&mut self.out);
                        self.send(stream).await
                    }
                    other => {
                        let other = other.map(|r| r.map(|_| ()));
                        self.failed(stream, other).await
                    }
                }
            }
            Request::ReadForUpdate { table, rid } => {
                let (t, r) = match self.record(table, rid, None) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why).await,
                };
                let tx = &mut self.tx;
                let read = std::future::poll_fn(|_| tx.poll_read_for_update(t, r));
                match self.waits.protocol(read, stopping).await {
                    Some(Ok(row)) => {
                        self.for_update.push((t, r));
                        self.out.clear();
                        Reply::Value(self.tx.read_row(row)).encode(&mut self.out);
                        self.send(stream).await
                    }
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))).await,
                }
            }
            Request::Write { table, rid, data } => {
                let (t, r) = match self.record(table, rid, Some(data)) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why).await,
                };
                let done = self
                    .waits
                    .protocol(self.tx.write(t, r, data), stopping)
                    .await;
                self.done(stream, done).await
            }
            Request::Update { table, rid, data } => {
                let (t, r) = match self.record(table, rid, Some(data)) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why).await,
                };
                let done = if self.for_update.contains(&(t, r)) {
                    let tx = &mut self.tx;
                    let write = std::future::poll_fn(|_| tx.poll_write_after_read(t, r, data));
                    self.waits.protocol(write, stopping).await
                } else {
                    let update = self.tx.update(t, r, |row| row.copy_from_slice(data));
                    self.waits.protocol(update, stopping).await
                };
                self.done(stream, done).await
            }
            Request::Insert { table, rid, data } => {
                let (t, r) = match self.record(table, rid, Some(data)) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why).await,
                };
                if is_vacant(data) {
                    return self
                        .bad_request(stream, "an inserted row's first 8 bytes are all zero")
                        .await;
                }
                let insert = self.tx.insert(t, r, |row| row.copy_from_slice(data));
                let outcome = self.waits.protocol(insert, stopping).await;
                match outcome {
                    Some(Ok(inserted)) => self.reply(stream, Reply::Flag(inserted)).await,
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))).await,
                }
            }
            Request::Delete { table, rid } => {
                let (t, r) = match self.record(table, rid, None) {
                    Ok(at) => at,
                    Err(why) => return self.bad_request(stream, why).await,
                };
                let outcome = self.waits.protocol(self.tx.delete(t, r), stopping).await;
                match outcome {
                    Some(Ok(deleted)) => self.reply(stream, Reply::Flag(deleted)).await,
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))).await,
                }
            }
            Request::Scan {
                index,
                lo,
                hi,
                limit,
            } => {
                if index as usize >= self.db.indexes().len() {
                    return self.bad_request(stream, "no such index").await;
                }
                self.rows.clear();
                let scan = self.tx.scan(IndexId(index), lo..=hi, &mut self.rows);
                let outcome = self.waits.protocol(scan, stopping).await;
                match outcome {
                    Some(Ok(())) => {
                        let n = self.rows.len().min(limit.min(MAX_SCAN_ROWS) as usize);
                        self.out.clear();
                        let rows = self.rows[..n].iter().map(|&(k, r)| (k, r.0));
                        Reply::encode_rows(&mut self.out, rows);
                        self.send(stream).await
                    }
                    other => self.failed(stream, other).await,
                }
            }
            Request::Commit => {
                let tx = &mut self.tx;
                match self
                    .waits
                    .protocol(std::future::poll_fn(|_| tx.poll_commit()), stopping)
                    .await
                {
                    Some(Ok(())) => {
                        self.tx.committed();
                        ParkingLot::global().attempt_ended();
                        self.in_txn = false;
                        self.counts.commits += 1;
                        if !self.durable().await {
                            return self
                                .reply(
                                    stream,
                                    Reply::Error {
                                        code: ErrorCode::ShuttingDown,
                                        message: "the commit is not acknowledged durable: the \
                                              server's log failed, and it stops",
                                    },
                                )
                                .await;
                        }
                        self.reply(stream, Reply::Ok).await
                    }
                    other => self.failed(stream, other).await,
                }
            }
            Request::Abort if P::DECLARED_SET.is_some() => {
                // A deterministic protocol confirms a user abort first: the program may have
                // decided it on reads taken ahead of its turn (it stands, or re-executes).
                let tx = &mut self.tx;
                let confirm = std::future::poll_fn(|_| tx.poll_confirm_user_abort());
                match self.waits.protocol(confirm, stopping).await {
                    Some(Ok(())) => {
                        self.end_aborted(Abort::User);
                        self.reply(stream, Reply::Ok).await
                    }
                    other => self.failed(stream, other).await,
                }
            }
            Request::Abort => {
                self.end_aborted(Abort::User);
                self.reply(stream, Reply::Ok).await
            }
            Request::IndexInsert { index, key, rid } => {
                let Some(ix) = self.db.indexes().get(index as usize) else {
                    return self.bad_request(stream, "no such index").await;
                };
                let indexed = ix.spec.table;
                if self.db.tables()[indexed.0 as usize]
                    .get(RecordId(rid))
                    .is_none()
                {
                    return self
                        .bad_request(stream, "record id outside the index's table")
                        .await;
                }
                if ix.map.get(key).is_some_and(|r| r != RecordId(rid)) {
                    return self
                        .bad_request(stream, "the key is indexed with another record")
                        .await;
                }
                let insert = self.tx.index_insert(IndexId(index), key, RecordId(rid));
                let outcome = self.waits.protocol(insert, stopping).await;
                match outcome {
                    Some(Ok(entered)) => self.reply(stream, Reply::Flag(entered)).await,
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))).await,
                }
            }
            Request::IndexRemove { index, key } => {
                if index as usize >= self.db.indexes().len() {
                    return self.bad_request(stream, "no such index").await;
                }
                let remove = self.tx.index_remove(IndexId(index), key);
                let done = self.waits.protocol(remove, stopping).await;
                self.done(stream, done).await
            }
            Request::ScanFirst { index, lo, hi } | Request::ScanLast { index, lo, hi } => {
                if index as usize >= self.db.indexes().len() {
                    return self.bad_request(stream, "no such index").await;
                }
                let outcome = if matches!(req, Request::ScanFirst { .. }) {
                    self.waits
                        .protocol(self.tx.scan_first(IndexId(index), lo..=hi), stopping)
                        .await
                } else {
                    self.waits
                        .protocol(self.tx.scan_last(IndexId(index), lo..=hi), stopping)
                        .await
                };
                match outcome {
                    Some(Ok(row)) => {
                        self.out.clear();
                        Reply::encode_rows(&mut self.out, row.map(|(k, r)| (k, r.0)).into_iter());
                        self.send(stream).await
                    }
                    other => self.failed(stream, other.map(|r| r.map(|_| ()))).await,
                }
            }
            Request::Reserve { table, rid } => {
                // Not `record`: a slot past a growable table's cap is an answer (`false`), not
                // a bad request.
                if table as usize >= self.db.tables().len() {
                    return self.bad_request(stream, "no such table").await;
                }
                let reserved = self.tx.reserve(TableId(table), RecordId(rid));
                self.reply(stream, Reply::Flag(reserved)).await
            }
            Request::Begin { .. } | Request::Ping | Request::Check => {
                unreachable!("handled before operate")
            }
        }
    }

    /// Replies to an operation that returned nothing but success or failure.
    async fn done(
        &mut self,
        stream: &TcpStream,
        done: Option<Result<(), Abort>>,
    ) -> std::io::Result<()> {
        match done {
            Some(Ok(())) => self.reply(stream, Reply::Ok).await,
            other => self.failed(stream, other).await,
        }
    }

    /// Replies to an operation that did not complete: the protocol aborted it (`Some(Err)`), or
    /// the server is stopping (`None`). Either way the transaction is over.
    async fn failed(
        &mut self,
        stream: &TcpStream,
        outcome: Option<Result<(), Abort>>,
    ) -> std::io::Result<()> {
        if outcome.is_some_and(|r| r.is_err())
            && let Some(access) = self.tx.take_undeclared()
        {
            // Not the protocol's abort: the handle refused an access outside the declared set
            // before the protocol saw it (module docs, "Faults").
            let why = access.to_string();
            return self.bad_request(stream, &why).await;
        }
        match outcome {
            Some(Err(why)) => {
                self.end_aborted(why);
                self.reply(stream, Reply::Aborted(why)).await
            }
            Some(Ok(())) => unreachable!("failed() is called for operations that did not succeed"),
            None => {
                if self.abort_unasked().await {
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
                .await
            }
        }
    }

    /// Answers a request naming something that does not exist: the transaction is aborted.
    async fn bad_request(&mut self, stream: &TcpStream, why: &str) -> std::io::Result<()> {
        self.abort_unasked().await;
        self.counts.user_aborts += 1;
        self.reply(
            stream,
            Reply::Error {
                code: ErrorCode::BadRequest,
                message: why,
            },
        )
        .await
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
async fn out_of_order<P: Protocol>(
    session: &mut Session<'_, '_, P>,
    stream: &TcpStream,
    what: &'static str,
) -> Flow {
    let message = format!("out-of-order request: {what}");
    let _ = session
        .reply_error(stream, ErrorCode::OutOfOrder, &message)
        .await;
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
