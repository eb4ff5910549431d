//! The client library: a [`Session`] with a txbench server, one request and one reply per
//! operation, usable from any Rust program.
//!
//! ```no_run
//! use txbench::client::{Session, SessionError};
//! use txbench::ids::{RecordId, TableId};
//!
//! let mut s = Session::connect("127.0.0.1:4780", None)?;
//! let row = s.tables()[0].payload_bytes as usize;
//! loop {
//!     s.begin()?;
//!     let attempt = (|| {
//!         let mut v = s.read_for_update(TableId(0), RecordId(7))?.to_vec();
//!         v[8] = v[8].wrapping_add(1);
//!         s.update(TableId(0), RecordId(7), &v)?;
//!         s.commit()
//!     })();
//!     match attempt {
//!         Err(SessionError::Aborted(_)) => continue, // the protocol aborted it: run it again
//!         other => break other?,
//!     }
//! }
//! # let _ = row;
//! # Ok::<(), SessionError>(())
//! ```
//!
//! After an operation answers [`SessionError::Aborted`] the transaction is over (the server
//! released what it held); begin the next one, with [`Session::begin_retry`] to keep a
//! wound-wait timestamp. Any other error leaves the session unusable unless it is
//! [`SessionError::Server`] with [`ErrorCode::BadRequest`] (the transaction was aborted, the
//! session goes on).

use super::wire::{
    DeclaredSet, ErrorCode, Handshake, MAX_FRAME_BYTES, Reply, Request, TableInfo, VERSION,
    WireError,
};
use crate::ids::{RecordId, TableId};
use crate::protocol::Abort;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Instant;
use thiserror::Error;

/// Why a session operation did not succeed.
#[derive(Debug, Error)]
pub enum SessionError {
    /// The protocol aborted the transaction; begin it again.
    #[error("transaction aborted: {}", .0.name())]
    Aborted(Abort),
    /// The server answered with an error.
    #[error("server error {code:?}: {message}")]
    Server {
        /// What failed.
        code: ErrorCode,
        /// The server's words.
        message: String,
    },
    /// The connection failed.
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    /// The server sent bytes that are not a valid reply.
    #[error("invalid reply: {0}")]
    Wire(#[from] WireError),
    /// The server sent a valid reply of the wrong kind for the request.
    #[error("unexpected reply to {0}")]
    Unexpected(&'static str),
}

/// A connection to a txbench server.
pub struct Session {
    stream: TcpStream,
    /// Requests are encoded here (reused).
    out: Vec<u8>,
    /// The last reply frame (reused); replies borrow their bytes from it.
    inbuf: Vec<u8>,
    tables: Vec<TableInfo>,
    /// Requests answered so far (round trips).
    round_trips: u64,
    /// The last request's round trip (sent to reply read), nanoseconds.
    last_round_trip_ns: u64,
    /// When the request awaiting its reply was sent.
    sent: Option<Instant>,
}

impl Session {
    /// Connects, presents `token` (required by servers listening beyond loopback), and learns
    /// the server's tables.
    pub fn connect(addr: impl ToSocketAddrs, token: Option<&str>) -> Result<Session, SessionError> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        let mut s = Session {
            stream,
            out: Vec::with_capacity(256),
            inbuf: Vec::with_capacity(256),
            tables: Vec::new(),
            round_trips: 0,
            last_round_trip_ns: 0,
            sent: None,
        };
        Handshake {
            version: VERSION,
            token: token.unwrap_or("").as_bytes(),
        }
        .encode(&mut s.out)?;
        s.stream.write_all(&s.out)?;
        let tables: Vec<TableInfo> = match s.receive()? {
            Reply::Hello(t) => t.iter().collect(),
            other => return Err(unexpected(other, "the handshake")),
        };
        s.tables = tables;
        Ok(s)
    }

    /// The server's tables, by table id.
    pub fn tables(&self) -> &[TableInfo] {
        &self.tables
    }

    /// Starts a read-write transaction.
    pub fn begin(&mut self) -> Result<(), SessionError> {
        self.begin_with(false, false)
    }

    /// Starts a transaction declared read-only (a hint the protocol may optimise for).
    pub fn begin_read_only(&mut self) -> Result<(), SessionError> {
        self.begin_with(true, false)
    }

    /// Starts the retry of the transaction the protocol just aborted (wound-wait families keep
    /// its timestamp, so it ages instead of starving).
    pub fn begin_retry(&mut self) -> Result<(), SessionError> {
        self.begin_with(false, true)
    }

    fn begin_with(&mut self, read_only: bool, retry: bool) -> Result<(), SessionError> {
        self.begin_declared(read_only, retry, DeclaredSet::EMPTY)
    }

    /// Starts a transaction with every flag and its declared access set (what deterministic
    /// protocols schedule from; see [`DeclaredSet::encode_entry`], and
    /// [`DeclaredSet::with_covers`] for its covers). `retry`: the previous
    /// transaction, which the protocol aborted, runs again.
    pub fn begin_declared(
        &mut self,
        read_only: bool,
        retry: bool,
        declared: DeclaredSet<'_>,
    ) -> Result<(), SessionError> {
        let req = Request::Begin {
            read_only,
            retry,
            declared,
        };
        self.expect_ok(req, "BEGIN")
    }

    /// Reads a record at read committed: a committed version, not kept stable until commit.
    pub fn read_committed(&mut self, table: TableId, rid: RecordId) -> Result<&[u8], SessionError> {
        self.value(Request::ReadCommitted {
            table: table.0,
            rid: rid.0,
        })
    }

    /// Enters `key -> rid` into ordered index `index` (phantom-safe: writes the path after it);
    /// `true` when this call entered it, `false` when it was there already.
    pub fn index_insert(
        &mut self,
        index: u32,
        key: u64,
        rid: RecordId,
    ) -> Result<bool, SessionError> {
        let req = Request::IndexInsert {
            index,
            key,
            rid: rid.0,
        };
        self.flag(req, "INDEX_INSERT")
    }

    /// Takes `key` out of ordered index `index` once the transaction commits.
    pub fn index_remove(&mut self, index: u32, key: u64) -> Result<(), SessionError> {
        self.expect_ok(Request::IndexRemove { index, key }, "INDEX_REMOVE")
    }

    /// The smallest present key in `lo..=hi` of ordered index `index`, and its record.
    pub fn scan_first(
        &mut self,
        index: u32,
        lo: u64,
        hi: u64,
    ) -> Result<Option<(u64, RecordId)>, SessionError> {
        self.one_row(Request::ScanFirst { index, lo, hi }, "SCAN_FIRST")
    }

    /// The greatest present key in `lo..=hi` of ordered index `index`, and its record.
    pub fn scan_last(
        &mut self,
        index: u32,
        lo: u64,
        hi: u64,
    ) -> Result<Option<(u64, RecordId)>, SessionError> {
        self.one_row(Request::ScanLast { index, lo, hi }, "SCAN_LAST")
    }

    /// Reserves slot `rid` of a growable table; `false` past its capacity.
    pub fn reserve(&mut self, table: TableId, rid: RecordId) -> Result<bool, SessionError> {
        let req = Request::Reserve {
            table: table.0,
            rid: rid.0,
        };
        self.flag(req, "RESERVE")
    }

    fn one_row(
        &mut self,
        req: Request<'_>,
        what: &'static str,
    ) -> Result<Option<(u64, RecordId)>, SessionError> {
        match self.call(req)? {
            Reply::Rows(rows) if rows.len() <= 1 => {
                Ok(rows.iter().next().map(|(k, r)| (k, RecordId(r))))
            }
            other => Err(unexpected(other, what)),
        }
    }

    /// Reads a record; the bytes are valid until the next call.
    pub fn read(&mut self, table: TableId, rid: RecordId) -> Result<&[u8], SessionError> {
        self.value(Request::Read {
            table: table.0,
            rid: rid.0,
        })
    }

    /// Reads a record the transaction will then [`update`](Session::update) (locking protocols
    /// take its exclusive lock now).
    pub fn read_for_update(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> Result<&[u8], SessionError> {
        self.value(Request::ReadForUpdate {
            table: table.0,
            rid: rid.0,
        })
    }

    /// Overwrites a record without reading it; `data` is the table's payload size.
    pub fn write(
        &mut self,
        table: TableId,
        rid: RecordId,
        data: &[u8],
    ) -> Result<(), SessionError> {
        let req = Request::Write {
            table: table.0,
            rid: rid.0,
            data,
        };
        self.expect_ok(req, "WRITE")
    }

    /// Writes a record as a read-modify-write: the write half after
    /// [`read_for_update`](Session::read_for_update), or both halves in one round trip.
    pub fn update(
        &mut self,
        table: TableId,
        rid: RecordId,
        data: &[u8],
    ) -> Result<(), SessionError> {
        let req = Request::Update {
            table: table.0,
            rid: rid.0,
            data,
        };
        self.expect_ok(req, "UPDATE")
    }

    /// Fills a vacant record with `data` (whose first 8 bytes must not all be zero); `false`
    /// when the record was not vacant.
    pub fn insert(
        &mut self,
        table: TableId,
        rid: RecordId,
        data: &[u8],
    ) -> Result<bool, SessionError> {
        let req = Request::Insert {
            table: table.0,
            rid: rid.0,
            data,
        };
        self.flag(req, "INSERT")
    }

    /// Empties a present record; `false` when it was not present.
    pub fn delete(&mut self, table: TableId, rid: RecordId) -> Result<bool, SessionError> {
        let req = Request::Delete {
            table: table.0,
            rid: rid.0,
        };
        self.flag(req, "DELETE")
    }

    /// Scans an ordered index over keys `lo..=hi` (phantom-safe), returning up to `limit`
    /// (key, record) pairs in key order, appended to `out`.
    pub fn scan(
        &mut self,
        index: u32,
        lo: u64,
        hi: u64,
        limit: u32,
        out: &mut Vec<(u64, RecordId)>,
    ) -> Result<(), SessionError> {
        let req = Request::Scan {
            index,
            lo,
            hi,
            limit,
        };
        match self.call(req)? {
            Reply::Rows(rows) => {
                out.extend(rows.iter().map(|(k, r)| (k, RecordId(r))));
                Ok(())
            }
            other => Err(unexpected(other, "SCAN")),
        }
    }

    /// Commits the transaction.
    pub fn commit(&mut self) -> Result<(), SessionError> {
        self.expect_ok(Request::Commit, "COMMIT")
    }

    /// Aborts the transaction.
    pub fn abort(&mut self) -> Result<(), SessionError> {
        self.expect_ok(Request::Abort, "ABORT")
    }

    /// The serializability checker's verdict on the history a server started with `--check`
    /// recorded, asked outside a transaction. The server answers once every other session has
    /// ended (waiting at most its session timeout), so a program asks when its run's other
    /// sessions are closed. [`ErrorCode::NotCheckable`] when the server records no history or
    /// others stayed open.
    pub fn verdict(&mut self) -> Result<crate::check::CheckReport, SessionError> {
        match self.call(Request::Check)? {
            Reply::Verdict(json) => serde_json::from_str(json)
                .map_err(|_| WireError::Field("verdict is not a check report").into()),
            other => Err(unexpected(other, "CHECK")),
        }
    }

    /// One bare round trip: the server answers without touching the engine.
    pub fn ping(&mut self) -> Result<(), SessionError> {
        self.expect_ok(Request::Ping, "PING")
    }

    /// The payload of the last `VALUE` reply: what the last read returned (empty when the last
    /// reply was something else).
    pub(crate) fn last_value(&self) -> &[u8] {
        match Reply::decode(&self.inbuf) {
            Ok(Some((Reply::Value(v), _))) => v,
            _ => &[],
        }
    }

    fn expect_ok(&mut self, req: Request<'_>, what: &'static str) -> Result<(), SessionError> {
        match self.call(req)? {
            Reply::Ok => Ok(()),
            other => Err(unexpected(other, what)),
        }
    }

    fn flag(&mut self, req: Request<'_>, what: &'static str) -> Result<bool, SessionError> {
        match self.call(req)? {
            Reply::Flag(b) => Ok(b),
            other => Err(unexpected(other, what)),
        }
    }

    fn value(&mut self, req: Request<'_>) -> Result<&[u8], SessionError> {
        match self.call(req)? {
            Reply::Value(v) => Ok(v),
            other => Err(unexpected(other, "READ")),
        }
    }

    /// Requests this session has had answered (its round trips, `PING`s included).
    pub fn round_trips(&self) -> u64 {
        self.round_trips
    }

    /// How long the last request took, from sending it to reading its reply, nanoseconds.
    pub fn last_round_trip_ns(&self) -> u64 {
        self.last_round_trip_ns
    }

    /// Sends a request and receives its reply; an `ABORTED` or `ERROR` reply is an `Err`.
    fn call(&mut self, req: Request<'_>) -> Result<Reply<'_>, SessionError> {
        self.send_request(req)?;
        self.receive_reply()
    }

    /// Sends a request without waiting for its reply: the first half of a call, for a driver
    /// that goes on with another session while this one's operation may wait on the server
    /// (a lock held by that other session). Collect the reply with
    /// [`receive_reply`](Session::receive_reply) before sending the next request; use
    /// [`reply_arrived`](Session::reply_arrived) to learn whether it is there yet.
    pub fn send_request(&mut self, req: Request<'_>) -> Result<(), SessionError> {
        self.out.clear();
        req.encode(&mut self.out);
        self.sent = Some(Instant::now());
        self.stream.write_all(&self.out)?;
        Ok(())
    }

    /// Whether the reply to the request sent has (begun to) come within `within`, without
    /// consuming it: `false` means the server has not answered yet (the operation waits, or is
    /// slow). `within` must not be zero.
    pub fn reply_arrived(&mut self, within: std::time::Duration) -> Result<bool, SessionError> {
        self.stream.set_read_timeout(Some(within))?;
        let peeked = self.stream.peek(&mut [0u8; 1]);
        self.stream.set_read_timeout(None)?;
        match peeked {
            Ok(0) => Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Receives the reply to the request [`send_request`](Session::send_request) sent, waiting
    /// for it; an `ABORTED` or `ERROR` reply is an `Err`.
    pub fn receive_reply(&mut self) -> Result<Reply<'_>, SessionError> {
        self.receive()?;
        if let Some(sent) = self.sent.take() {
            self.last_round_trip_ns = sent.elapsed().as_nanos() as u64;
        }
        self.round_trips += 1;
        let reply = match Reply::decode(&self.inbuf)? {
            Some((reply, _)) => reply,
            None => unreachable!("a whole frame was read"),
        };
        match reply {
            Reply::Aborted(why) => Err(SessionError::Aborted(why)),
            Reply::Error { code, message } => Err(SessionError::Server {
                code,
                message: message.to_owned(),
            }),
            ok => Ok(ok),
        }
    }

    /// Reads one reply frame.
    fn receive(&mut self) -> Result<Reply<'_>, SessionError> {
        let mut word = [0u8; 4];
        self.stream.read_exact(&mut word)?;
        let len = u32::from_le_bytes(word) as usize;
        if len == 0 || len > MAX_FRAME_BYTES {
            return Err(WireError::FrameLength(len as u64).into());
        }
        self.inbuf.clear();
        self.inbuf.extend_from_slice(&word);
        self.inbuf.resize(4 + len, 0);
        self.stream.read_exact(&mut self.inbuf[4..])?;
        match Reply::decode(&self.inbuf)? {
            Some((reply, _)) => Ok(reply),
            None => unreachable!("a whole frame was read"),
        }
    }
}

/// The error for a valid reply of the wrong kind (an error reply stays one).
fn unexpected(reply: Reply<'_>, what: &'static str) -> SessionError {
    match reply {
        Reply::Error { code, message } => SessionError::Server {
            code,
            message: message.to_owned(),
        },
        Reply::Aborted(why) => SessionError::Aborted(why),
        _ => SessionError::Unexpected(what),
    }
}
