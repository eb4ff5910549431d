//! [`RemoteTxn`]: the [`TxnOps`] handle of a remote session, so that the workloads' transaction
//! programs (YCSB, long-scan, TPC-C, write skew, a user's own) run unchanged over the wire.
//!
//! Each operation is one request and one reply ([`Session`]), made when the operation's future
//! is first polled (programs `.await` each operation at once, so the order is the program's);
//! the future is then ready. A read-modify-write ([`TxnOps::update`], and the inserts and
//! deletes built on it) is two round trips: `READ_FOR_UPDATE`, the closure on the client, then
//! the write half (`UPDATE`), with the record held (or validated) on the server in between, as
//! in PLOR section 5's interactive model.
//!
//! # Errors that are not aborts
//!
//! The trait's operations answer `Result<_, Abort>`. An `ABORTED` reply is that abort (the
//! server already ended the transaction). Anything else (the connection failed, the server
//! answered an error, the reply was malformed) is kept in the handle ([`RemoteTxn::take_failure`])
//! and the program is told [`Abort::User`], which makes it return; the executor then finds the
//! failure and ends the session instead of retrying.

use super::client::{Session, SessionError};
use super::wire::{Declared, DeclaredCover, DeclaredSet};
use crate::metrics::new_latency_histogram;
use crate::protocol::{Abort, AccessMode, AccessSet, AttemptStart};
use crate::storage::{IndexId, RecordId, TableId};
use crate::txn::TxnOps;
use hdrhistogram::Histogram;
use std::future::Future;
use std::ops::RangeInclusive;

/// A transaction handle whose operations run on a txbench server (module docs).
pub struct RemoteTxn {
    session: Session,
    /// What [`TxnOps::worker_id`] answers: the client's index in its run.
    client_id: usize,
    attempts: u64,
    id: u64,
    /// The server holds an open transaction of this handle (from `BEGIN` until `COMMIT`,
    /// `ABORT`, or an `ABORTED` or error reply).
    open: bool,
    /// The first failure that was not an abort, since the last [`RemoteTxn::take_failure`].
    failure: Option<SessionError>,
    /// A row being read-modified-written or filled (reused).
    row: Vec<u8>,
    /// The current transaction's declared access set, in wire form (reused).
    declared: Vec<u8>,
    /// Its covers, in wire form (reused).
    covers: Vec<u8>,
    /// A scan's rows (reused).
    rows: Vec<(u64, RecordId)>,
    /// Each data operation's round trip, nanoseconds (not `BEGIN`, `COMMIT`, `ABORT`).
    op_ns: Histogram<u64>,
}

impl RemoteTxn {
    /// A handle over `session` for client `client_id` of a run.
    pub fn new(session: Session, client_id: usize) -> RemoteTxn {
        RemoteTxn {
            session,
            client_id,
            attempts: 0,
            id: 0,
            open: false,
            failure: None,
            row: Vec::new(),
            declared: Vec::new(),
            covers: Vec::new(),
            rows: Vec::new(),
            op_ns: new_latency_histogram(),
        }
    }

    /// The data operations' round trips since the last [`RemoteTxn::reset_op_times`],
    /// nanoseconds.
    pub fn op_times(&self) -> &Histogram<u64> {
        &self.op_ns
    }

    /// Forgets the operation times measured so far (a run's warm-up).
    pub fn reset_op_times(&mut self) {
        self.op_ns.reset();
    }

    /// Notes the round trip the session just made for a data operation.
    #[inline]
    fn timed(&mut self) {
        self.op_ns
            .saturating_record(self.session.last_round_trip_ns().max(1));
    }

    /// The session underneath (for `PING` and its tables).
    pub fn session(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Declares the access set of the next transaction (deterministic protocols schedule from
    /// it): `fill` states it, and every `BEGIN` of the transaction sends it, its covers too (the
    /// server refuses an access outside both).
    pub fn declare(&mut self, fill: impl FnOnce(&mut AccessSet)) {
        let mut set = AccessSet::default();
        fill(&mut set);
        self.declared.clear();
        for a in set.accesses() {
            DeclaredSet::encode_entry(
                &mut self.declared,
                Declared {
                    table: a.table.0,
                    rid: a.rid.0,
                    write: a.mode == AccessMode::Write,
                },
            );
        }
        self.covers.clear();
        for c in set.covers() {
            DeclaredSet::encode_cover(
                &mut self.covers,
                DeclaredCover {
                    table: c.table.0,
                    start: c.rids.start,
                    // An empty range stated backwards covers nothing either way.
                    end: c.rids.end.max(c.rids.start),
                },
            );
        }
    }

    /// Forgets the declared set (the next transaction declares none).
    pub fn clear_declared(&mut self) {
        self.declared.clear();
        self.covers.clear();
    }

    /// Starts an attempt on the server. An `ABORTED` reply (a deterministic protocol that
    /// could not schedule it) is `Ok(Err(why))`.
    pub fn begin(&mut self, start: AttemptStart) -> Result<Result<(), Abort>, SessionError> {
        self.attempts += 1;
        self.id = crate::check::history::txn_id(self.client_id, self.attempts);
        let declared = DeclaredSet::with_covers(&self.declared, &self.covers)
            .expect("entries encoded by `declare`");
        match self
            .session
            .begin_declared(start.read_only, start.retry, declared)
        {
            Ok(()) => {
                self.open = true;
                Ok(Ok(()))
            }
            Err(SessionError::Aborted(why)) => Ok(Err(why)),
            Err(e) => Err(e),
        }
    }

    /// Commits the open attempt: `Ok(Err(why))` when the protocol aborted it.
    pub fn commit(&mut self) -> Result<Result<(), Abort>, SessionError> {
        self.open = false;
        match self.session.commit() {
            Ok(()) => Ok(Ok(())),
            Err(SessionError::Aborted(why)) => Ok(Err(why)),
            Err(e) => Err(e),
        }
    }

    /// Ends the attempt after the program returned `Err` (a user abort, or an abort the server
    /// already applied): asks the server to abort it when it is still open. `Ok(Err(why))`
    /// when the protocol turned the user abort into another (a deterministic protocol that
    /// re-executes it).
    pub fn abort(&mut self) -> Result<Result<(), Abort>, SessionError> {
        if !std::mem::replace(&mut self.open, false) {
            return Ok(Ok(()));
        }
        match self.session.abort() {
            Ok(()) => Ok(Ok(())),
            Err(SessionError::Aborted(why)) => Ok(Err(why)),
            Err(e) => Err(e),
        }
    }

    /// The failure (not an abort) an operation of the last attempt met, if any (module docs).
    pub fn take_failure(&mut self) -> Option<SessionError> {
        self.failure.take()
    }

    /// The answer to one request: records its round trip, and turns a failure into the abort
    /// the program sees ([`fail`](Self::fail)).
    fn answered<T>(&mut self, done: Result<T, SessionError>) -> Result<T, Abort> {
        self.timed();
        done.map_err(|e| self.fail(e))
    }

    /// Turns an operation's error into what the program sees (module docs).
    #[cold]
    fn fail(&mut self, e: SessionError) -> Abort {
        match e {
            SessionError::Aborted(why) => {
                self.open = false;
                why
            }
            other => {
                // A bad request aborted the transaction on the server; any other failure ends
                // the session. Either way nothing is open any more.
                self.open = false;
                self.failure.get_or_insert(other);
                Abort::User
            }
        }
    }

    /// The payload size of `table` (programs name tables of the workload the executor checked
    /// the server's against).
    fn payload(&self, table: TableId) -> usize {
        self.session.tables()[table.0 as usize].payload_bytes as usize
    }

    /// Reads a record for update into `self.row`.
    fn read_for_update_into_row(&mut self, table: TableId, rid: RecordId) -> Result<(), Abort> {
        let read = match self.session.read_for_update(table, rid) {
            Ok(v) => {
                self.row.clear();
                self.row.extend_from_slice(v);
                Ok(())
            }
            Err(e) => Err(e),
        };
        self.answered(read)
    }

    /// Writes `self.row` as the write half of a read-modify-write.
    fn update_from_row(&mut self, table: TableId, rid: RecordId) -> Result<(), Abort> {
        let written = self.session.update(table, rid, &self.row);
        self.answered(written)
    }
}

impl TxnOps for RemoteTxn {
    fn id(&self) -> u64 {
        self.id
    }

    fn worker_id(&self) -> usize {
        self.client_id
    }

    async fn read(&mut self, table: TableId, rid: RecordId) -> Result<&[u8], Abort> {
        let read = self.session.read(table, rid).map(|_| ());
        self.answered(read)?;
        Ok(self.session.last_value())
    }

    async fn read_committed(&mut self, table: TableId, rid: RecordId) -> Result<&[u8], Abort> {
        let read = self.session.read_committed(table, rid).map(|_| ());
        self.answered(read)?;
        Ok(self.session.last_value())
    }

    async fn update<F: FnOnce(&mut [u8]) -> R, R>(
        &mut self,
        table: TableId,
        rid: RecordId,
        update: F,
    ) -> Result<R, Abort> {
        self.read_for_update_into_row(table, rid)?;
        let out = update(&mut self.row);
        self.update_from_row(table, rid)?;
        Ok(out)
    }

    async fn write(&mut self, table: TableId, rid: RecordId, data: &[u8]) -> Result<(), Abort> {
        let written = self.session.write(table, rid, data);
        self.answered(written)
    }

    async fn write_with<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> Result<(), Abort> {
        let n = self.payload(table);
        self.row.clear();
        self.row.resize(n, 0);
        fill(&mut self.row);
        let written = self.session.write(table, rid, &self.row);
        self.answered(written)
    }

    fn insert<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> impl Future<Output = Result<bool, Abort>> {
        // The local insert's logic on the client: a read-modify-write that fills a vacant row
        // (and rewrites a present one unchanged), so both conflict alike.
        TxnOps::update(self, table, rid, |buf| {
            if !crate::storage::is_vacant(buf) {
                return false;
            }
            fill(buf);
            assert!(
                !crate::storage::is_vacant(buf),
                "an inserted row must not look vacant"
            );
            true
        })
    }

    fn delete(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> impl Future<Output = Result<bool, Abort>> {
        TxnOps::update(self, table, rid, |buf| {
            if crate::storage::is_vacant(buf) {
                return false;
            }
            buf.fill(0);
            true
        })
    }

    async fn index_insert(
        &mut self,
        index: IndexId,
        key: u64,
        rid: RecordId,
    ) -> Result<bool, Abort> {
        let done = self.session.index_insert(index.0, key, rid);
        self.answered(done)
    }

    async fn index_remove(&mut self, index: IndexId, key: u64) -> Result<(), Abort> {
        let done = self.session.index_remove(index.0, key);
        self.answered(done)
    }

    async fn scan_first(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> Result<Option<(u64, RecordId)>, Abort> {
        let row = self
            .session
            .scan_first(index.0, *range.start(), *range.end());
        self.answered(row)
    }

    async fn scan_last(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> Result<Option<(u64, RecordId)>, Abort> {
        let row = self
            .session
            .scan_last(index.0, *range.start(), *range.end());
        self.answered(row)
    }

    /// One reply carries fewer than [`MAX_SCAN_ROWS`](super::wire::MAX_SCAN_ROWS) rows; a scan
    /// that finds that many is a failure of the session (the workloads' scans are far shorter).
    async fn scan(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
        out: &mut Vec<(u64, RecordId)>,
    ) -> Result<(), Abort> {
        let (lo, hi) = (*range.start(), *range.end());
        let limit = super::wire::MAX_SCAN_ROWS;
        self.rows.clear();
        let scanned = self.session.scan(index.0, lo, hi, limit, &mut self.rows);
        self.answered(scanned)?;
        if self.rows.len() >= limit as usize {
            let e = SessionError::Unexpected(
                "a SCAN of 4096 rows or more (more than one reply carries)",
            );
            return Err(self.fail(e));
        }
        out.extend_from_slice(&self.rows);
        Ok(())
    }

    fn reserve(&mut self, table: TableId, rid: RecordId) -> bool {
        let reserved = self.session.reserve(table, rid);
        self.timed();
        match reserved {
            Ok(ok) => ok,
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }
}
