//! The `Txn` handle: what a transaction program sees.
//!
//! Programs are `async` functions over `&mut Txn`. Each operation calls the protocol; when the
//! protocol answers `Pending` (it must wait for another transaction) the operation's future yields
//! and the executor decides how to wait, then polls again, which repeats the protocol call. The
//! thread executor drives these futures in place on the worker's stack (no runtime, no allocation);
//! later executors (coroutines, client/server) run the same programs unchanged.
//!
//! Programs see tables and record ids only: never record headers, never the protocol's metadata.

use crate::check::history::{HistOp, Version, WorkerHistory};
use crate::protocol::{Abort, Protocol, WriteKind};
use crate::storage::{Database, RecordId, TableId};
use std::future::poll_fn;

/// A running transaction attempt, bound to one worker.
pub struct Txn<'db, P: Protocol> {
    protocol: &'db P,
    db: &'db Database<P::RecordMeta>,
    pub(crate) worker: P::Worker<'db>,
    /// Where reads land; sized to the largest payload in the database.
    buf: Vec<u8>,
    id: u64,
    worker_id: usize,
    attempts_started: u64,
    history: Option<HistoryStage>,
}

/// Operations of the current attempt (check mode), and the committed history of this worker.
struct HistoryStage {
    attempt: Vec<HistOp>,
    committed: WorkerHistory,
}

impl<'db, P: Protocol> Txn<'db, P> {
    /// A handle for worker `worker_id`; `record_history` turns on check mode.
    pub fn new(
        protocol: &'db P,
        db: &'db Database<P::RecordMeta>,
        worker_id: usize,
        record_history: bool,
    ) -> Self {
        let max_payload = db
            .tables()
            .iter()
            .map(|t| t.payload_bytes())
            .max()
            .unwrap_or(0);
        Txn {
            protocol,
            db,
            worker: protocol.new_worker(worker_id),
            buf: vec![0; max_payload],
            id: 0,
            worker_id,
            attempts_started: 0,
            history: record_history.then(|| HistoryStage {
                attempt: Vec::with_capacity(64),
                committed: WorkerHistory::default(),
            }),
        }
    }

    /// Unique id of the current attempt: worker id + 1 in the top 24 bits, a per-worker attempt
    /// counter below. Never `Version::INITIAL_WRITER` (0).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The worker running this transaction.
    pub fn worker_id(&self) -> usize {
        self.worker_id
    }

    /// Whether check mode is on (the program should stamp and report versions).
    #[inline]
    pub fn is_recording(&self) -> bool {
        self.history.is_some()
    }

    /// Check mode: note that this attempt read `version` of (`table`, `rid`).
    #[inline]
    pub fn record_read(&mut self, table: TableId, rid: RecordId, version: Version) {
        if let Some(h) = &mut self.history {
            let key = crate::check::history::history_key(table.0, rid.0);
            h.attempt.push(HistOp::Read { key, version });
        }
    }

    /// Check mode: note that this attempt wrote `version` of (`table`, `rid`).
    #[inline]
    pub fn record_write(&mut self, table: TableId, rid: RecordId, version: Version) {
        if let Some(h) = &mut self.history {
            let key = crate::check::history::history_key(table.0, rid.0);
            h.attempt.push(HistOp::Write { key, version });
        }
    }

    /// Reads a record; the returned bytes are valid until the next operation.
    pub async fn read(&mut self, table: TableId, rid: RecordId) -> Result<&[u8], Abort> {
        let rec = self
            .db
            .table(table)
            .get(rid)
            .expect("record id within table");
        let n = rec.payload.len();
        let (protocol, worker, buf) = (self.protocol, &mut self.worker, &mut self.buf[..n]);
        poll_fn(|_| protocol.read(worker, rec, buf)).await?;
        Ok(&self.buf[..n])
    }

    /// Reads a record this transaction will write, lets `update` change the bytes, and buffers the
    /// result as a read-modify-write. `update` sees the current payload and edits it in place.
    pub async fn update<R>(
        &mut self,
        table: TableId,
        rid: RecordId,
        update: impl FnOnce(&mut [u8]) -> R,
    ) -> Result<R, Abort> {
        let rec = self
            .db
            .table(table)
            .get(rid)
            .expect("record id within table");
        let n = rec.payload.len();
        let (protocol, worker, buf) = (self.protocol, &mut self.worker, &mut self.buf[..n]);
        poll_fn(|_| protocol.read_for_update(worker, rec, buf)).await?;
        let out = update(buf);
        poll_fn(|_| protocol.write(worker, rec, buf, WriteKind::ReadModifyWrite)).await?;
        Ok(out)
    }

    /// Overwrites a record without reading it (a blind write). `data` must be the payload size.
    pub async fn write(&mut self, table: TableId, rid: RecordId, data: &[u8]) -> Result<(), Abort> {
        let rec = self
            .db
            .table(table)
            .get(rid)
            .expect("record id within table");
        assert_eq!(
            data.len(),
            rec.payload.len(),
            "write size must equal the payload size"
        );
        let (protocol, worker) = (self.protocol, &mut self.worker);
        poll_fn(|_| protocol.write(worker, rec, data, WriteKind::Blind)).await
    }

    /// Blind write whose bytes `fill` produces in the handle's scratch buffer (no caller buffer
    /// needed). `fill` receives a payload-sized buffer with unspecified contents.
    pub async fn write_with(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), Abort> {
        let rec = self
            .db
            .table(table)
            .get(rid)
            .expect("record id within table");
        let n = rec.payload.len();
        let (protocol, worker, buf) = (self.protocol, &mut self.worker, &mut self.buf[..n]);
        fill(buf);
        poll_fn(|_| protocol.write(worker, rec, buf, WriteKind::Blind)).await
    }

    // ---- executor side ----

    /// Starts an attempt (the executor calls this, then runs the program).
    pub(crate) fn begin(&mut self, retry: bool) {
        self.attempts_started += 1;
        self.id = ((self.worker_id as u64 + 1) << 40) | (self.attempts_started & ((1 << 40) - 1));
        if let Some(h) = &mut self.history {
            h.attempt.clear();
        }
        self.protocol.begin(&mut self.worker, retry);
    }

    /// Polls the protocol's commit once.
    #[inline]
    pub(crate) fn poll_commit(&mut self) -> std::task::Poll<Result<(), Abort>> {
        self.protocol.commit(&mut self.worker)
    }

    /// The attempt committed: keep its history (check mode).
    pub(crate) fn committed(&mut self) {
        if let Some(h) = &mut self.history {
            h.committed.commit(self.id, &h.attempt);
        }
    }

    /// The attempt failed: let the protocol undo it.
    pub(crate) fn aborted(&mut self, why: Abort) {
        self.protocol.abort(&mut self.worker, why);
    }

    /// This worker's committed history (check mode), leaving an empty one behind.
    pub(crate) fn take_history(&mut self) -> Option<WorkerHistory> {
        self.history
            .as_mut()
            .map(|h| std::mem::take(&mut h.committed))
    }
}
