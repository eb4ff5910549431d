//! The `Txn` handle: what a transaction program sees.
//!
//! Programs are `async` functions over `&mut Txn`. Each operation calls the protocol; when the
//! protocol answers `Pending` (it must wait for another transaction) the operation's future yields
//! and the executor decides how to wait, then polls again, which repeats the protocol call. The
//! thread executor drives these futures in place on the worker's stack (no runtime, no allocation);
//! later executors (coroutines, client/server) run the same programs unchanged.
//!
//! Programs see tables, indexes and record ids only: never record headers, never the protocol's
//! metadata. Inserts, deletes and index scans are in `index_ops.rs`.
//!
//! # Check mode
//!
//! When a run is checked, every table stores a version stamp after each row (`storage::stamp`)
//! and the handle records the history on its own: each serializable read notes the writer of the
//! version it saw (or a torn or uninstalled copy), each write stamps its row with this attempt's
//! id and a checksum, and on commit each write gets the seq the install path gave it
//! ([`crate::protocol::InstallLog`]). Programs only ever see rows; workloads need no code for the
//! checker, and every workload is checked the same way. Reads of this attempt's own writes and
//! read-committed reads are not recorded (they are not dependencies the checker judges).

mod index_ops;
#[cfg(test)]
mod kept_references;
mod ops;
pub mod progress;
mod remote;
#[cfg(test)]
mod undo_tests;

pub use ops::TxnOps;

use crate::check::history::{HistOp, Version, WorkerHistory, history_key, split_history_key};
use crate::log::{LogKind, Logger};
use crate::protocol::declared::merge_declared;
use crate::protocol::{Abort, AccessSet, AttemptStart, DeclaredRecord, Protocol, WriteKind};
use crate::storage::stamp::{Stamp, UNINSTALLED_SEQ, row_checksum};
use crate::storage::{Database, IndexId, Record, RecordId, Table, TableId, TableIndex};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A running transaction attempt, bound to one worker.
pub struct Txn<'db, P: Protocol> {
    protocol: &'db P,
    /// The database's tables, held as a slice rather than through `&Database`: one dependent load
    /// less on every operation's record lookup, which sits right before the record's cache miss
    /// (measured: that chain was most of the executor's overhead on NoCC YCSB-C).
    tables: &'db [Table<P::RecordMeta>],
    /// The database's ordered indexes.
    indexes: &'db [TableIndex],
    /// Keys of rows this attempt deleted: taken out of their indexes once it commits.
    index_removals: Vec<(IndexId, u64)>,
    /// Committed removals waiting for every older snapshot to end (multi-version protocols):
    /// (commit stamp, index, key), in commit order.
    deferred_removals: std::collections::VecDeque<(u64, IndexId, u64)>,
    /// The vacant entries an index walk's current run read (`index_ops::access_run`), kept to
    /// check after the run that none has left the index; reused, so walks stop allocating once
    /// it has grown.
    run_vacant: Vec<(u64, RecordId)>,
    /// The entries one `index_ops::access_run` call accessed, with whether each was present: a
    /// re-walk of the run takes them from here rather than accessing their records again.
    run_seen: Vec<(u64, RecordId, bool)>,
    pub(crate) worker: P::Worker<'db>,
    /// Where reads land; sized to the largest payload in the database.
    buf: Vec<u8>,
    id: u64,
    worker_id: usize,
    attempts_started: u64,
    history: Option<HistoryStage>,
    /// The current transaction's declared access set (`protocol::declared`), as the workload
    /// stated it; empty unless the executor declared one.
    declared: AccessSet,
    /// `declared` resolved to records, merged and in the global record order: what
    /// [`DeclaredSet::schedule`](crate::protocol::parts::DeclaredSet::schedule) receives.
    scheduled: Vec<DeclaredRecord<'db, P::RecordMeta>>,
    /// Check mode with a declared set in force, or a remote session's set with its covers
    /// ([`Txn::declare_remote`]): every access is checked against it.
    check_declared: bool,
    /// An access outside the declared set is refused (the operation answers [`Abort::User`]
    /// and the access is kept for [`Txn::take_undeclared`]) rather than a panic: a remote
    /// session's client, not a workload of this process, made it.
    refuse_undeclared: bool,
    /// The access last refused (`refuse_undeclared`), until the session takes it.
    undeclared: Option<remote::Undeclared>,
    /// This handle's grace-period slot, in a database whose tables retire deleted slots
    /// (`storage/grace.rs`): pinned while a transaction runs, from its first `declare` or
    /// `begin` to its commit.
    pin: Option<crate::storage::grace::PinSlot<'db>>,
    /// With a redo log (`--log`): where committed attempts go ([`Txn::attach_log`]).
    log: Option<TxnLog<'db>>,
}

/// A handle's part of the redo log (`crate::log`).
struct TxnLog<'db> {
    logger: &'db Logger,
    /// Debug builds: this attempt's writes, (record order key, table), to check the table each
    /// logged entry names (`InstallLog::set_table`) against the operations that wrote.
    #[cfg(debug_assertions)]
    writes: Vec<(usize, u32)>,
    /// The epoch of the last committed attempt that wrote, until the executor takes it to
    /// wait for its durability.
    committed_epoch: Option<u64>,
}

/// Operations of the current attempt (check mode), and the committed history of this worker.
struct HistoryStage {
    attempt: Vec<HistOp>,
    committed: WorkerHistory,
    /// Scratch for matching writes to installs at commit: (record order key, seq), sorted.
    installs: Vec<(usize, u64)>,
}

impl HistoryStage {
    /// Notes a read of `key` whose stored bytes (row, then stamp) are `copy`, by attempt `me`.
    #[inline]
    fn read(&mut self, key: u64, copy: &[u8], row_bytes: usize, me: u64) {
        let stamp = Stamp::decode(copy);
        if stamp.writer == me {
            return; // our own buffered write: not a dependency
        }
        let op = if !stamp.matches(&copy[..row_bytes]) {
            HistOp::torn_read(key, stamp.writer)
        } else if stamp.seq == UNINSTALLED_SEQ {
            HistOp::uninstalled_read(key, stamp.writer)
        } else {
            HistOp::read(key, stamp.writer)
        };
        self.attempt.push(op);
    }

    /// Stamps a buffered write of `row_bytes` in `copy` by attempt `me`: the checksum now, the
    /// seq when it is installed.
    #[inline]
    fn stamp_write(copy: &mut [u8], row_bytes: usize, me: u64) {
        Stamp {
            writer: me,
            seq: UNINSTALLED_SEQ,
            checksum: row_checksum(me, &copy[..row_bytes]),
        }
        .encode(copy);
    }
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
            .map(|t| t.stored_bytes())
            .max()
            .unwrap_or(0);
        assert!(
            !record_history || db.tables().iter().all(|t| t.is_stamped()),
            "check mode needs a database built with Database::with_check_stamps"
        );
        let mut worker = protocol.new_worker(worker_id);
        if record_history {
            protocol.install_log(&mut worker).enable();
        }
        Txn {
            protocol,
            tables: db.tables(),
            indexes: db.indexes(),
            index_removals: Vec::new(),
            deferred_removals: std::collections::VecDeque::new(),
            run_vacant: Vec::new(),
            run_seen: Vec::new(),
            worker,
            buf: vec![0; max_payload],
            id: 0,
            worker_id,
            attempts_started: 0,
            declared: AccessSet::default(),
            scheduled: Vec::new(),
            check_declared: false,
            refuse_undeclared: false,
            undeclared: None,
            pin: db.grace().map(|g| g.claim()),
            log: None,
            history: record_history.then(|| HistoryStage {
                attempt: Vec::with_capacity(64),
                committed: WorkerHistory::default(),
                installs: Vec::new(),
            }),
        }
    }

    /// Check mode: keep at most `ops` operations of committed transactions; after that, this
    /// worker stops recording ([`WorkerHistory::stopped_at`]).
    pub fn set_history_budget(&mut self, ops: usize) {
        if let Some(h) = &mut self.history {
            h.committed = WorkerHistory::with_budget(ops);
        }
    }

    /// Logs this worker's committed writes to `logger` (`crate::log`): the install path
    /// captures each install (its epoch and seq need the database's stamps, as check mode's
    /// do), and each commit appends the attempt to the worker's log buffer.
    pub fn attach_log(&mut self, logger: &'db Logger) {
        assert!(
            self.tables.iter().all(|t| t.is_stamped()),
            "a logged run needs a database built with stamps (its seqs order replay)"
        );
        let install_log = self.protocol.install_log(&mut self.worker);
        match logger.kind() {
            LogKind::Redo => install_log.enable_redo(logger.clock().clone(), self.worker_id),
            LogKind::Undo => install_log.enable_undo(logger.clock().clone(), self.worker_id),
        }
        self.log = Some(TxnLog {
            logger,
            #[cfg(debug_assertions)]
            writes: Vec::with_capacity(64),
            committed_epoch: None,
        });
    }

    /// With a log: the epoch of the attempt that just committed, if it wrote anything (the
    /// executor waits for it to be durable before acknowledging the commit).
    pub(crate) fn take_committed_epoch(&mut self) -> Option<u64> {
        self.log.as_mut().and_then(|l| l.committed_epoch.take())
    }

    /// The log this handle writes to, if any.
    pub(crate) fn logger(&self) -> Option<&'db Logger> {
        self.log.as_ref().map(|l| l.logger)
    }

    /// With a log: the next write operation writes a record of `table`, which its log entry
    /// will name (`InstallLog::set_table`).
    #[inline]
    fn name_write_table(&mut self, table: TableId) {
        if self.log.is_some() {
            self.protocol
                .install_log(&mut self.worker)
                .set_table(table.0);
        }
    }

    /// Debug builds, with a log: notes that this attempt wrote the record at `key` of `table`,
    /// to check the logged entries' tables at commit.
    #[inline]
    fn note_write(&mut self, key: usize, table: TableId) {
        #[cfg(debug_assertions)]
        if let Some(l) = &mut self.log {
            l.writes.push((key, table.0));
        }
        #[cfg(not(debug_assertions))]
        let _ = (key, table);
    }

    /// With a log: appends the committed attempt's installs (an undo log: its before-images)
    /// to the worker's log buffer and leaves its epoch (`crate::log`).
    fn log_commit(&mut self) {
        let Some(l) = &mut self.log else {
            return;
        };
        let (Some(capture), undo) = self.protocol.install_log(&mut self.worker).captures() else {
            panic!("attach_log enabled the capture");
        };
        if let Some(undo) = undo {
            l.committed_epoch = capture.epoch();
            append_undo(l, self.worker_id, self.id, capture, undo, true);
            return;
        }
        let Some(epoch) = capture.epoch() else {
            #[cfg(debug_assertions)]
            l.writes.clear();
            return; // wrote nothing: nothing to log or wait for
        };
        let (entries, at) = capture.parts();
        #[cfg(debug_assertions)]
        check_entry_tables(&mut l.writes, entries, at, true);
        let count = u32::try_from(at.len()).expect("entries fit in u32");
        l.logger
            .append_txn(self.worker_id, epoch, self.id, count, entries);
        capture.finish();
        l.committed_epoch = Some(epoch);
    }

    /// Unique id of the current attempt: worker id + 1 in the top 24 bits, a per-worker attempt
    /// counter below. Never `Version::INITIAL_WRITER` (0).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The protocol this handle runs on (executors ask it for scheduling signals).
    pub fn protocol(&self) -> &'db P {
        self.protocol
    }

    /// The worker running this transaction.
    pub fn worker_id(&self) -> usize {
        self.worker_id
    }

    /// Whether check mode is on (the handle records the history; see the module docs).
    #[inline]
    pub fn is_recording(&self) -> bool {
        self.history.is_some()
    }

    /// Reads a record; the returned bytes are valid until the next operation.
    ///
    /// The returned future is a small hand-written type rather than an `async fn` body: it is
    /// moved into the program's state machine at every call, and keeping it to three words keeps
    /// that move out of `memcpy` (measured: the `async fn` version cost YCSB-C about a third of
    /// its throughput against a synchronous loop, see `benches/executor_overhead.rs`).
    #[inline]
    pub fn read(&mut self, table: TableId, rid: RecordId) -> ReadOp<'_, 'db, P> {
        ReadOp {
            tx: Some(self),
            table,
            rid,
            committed_only: false,
        }
    }

    /// Reads a record at read-committed isolation ([`Protocol::read_committed`]): the bytes are a
    /// committed version (or this transaction's own write), but the read is neither validated nor
    /// kept locked, so a later writer may replace it before this transaction commits. For reads
    /// whose staleness the program tolerates (TPC-C Stock-Level, PLOR 6.1). The returned bytes are
    /// valid until the next operation.
    ///
    /// In check mode such reads are not recorded: the checker tests serializability, which read
    /// committed does not promise.
    #[inline]
    pub fn read_committed(&mut self, table: TableId, rid: RecordId) -> ReadOp<'_, 'db, P> {
        ReadOp {
            tx: Some(self),
            table,
            rid,
            committed_only: true,
        }
    }

    /// Reads a record this transaction will write, lets `update` change the bytes, and buffers the
    /// result as a read-modify-write. `update` sees the current payload and edits it in place.
    #[inline]
    pub fn update<F: FnOnce(&mut [u8]) -> R, R>(
        &mut self,
        table: TableId,
        rid: RecordId,
        update: F,
    ) -> UpdateOp<'_, 'db, P, F, R> {
        UpdateOp {
            tx: self,
            table,
            rid,
            update: Some(update),
            result: None,
        }
    }

    /// Overwrites a record without reading it (a blind write). `data` must be the payload size.
    #[inline]
    pub fn write<'t>(
        &'t mut self,
        table: TableId,
        rid: RecordId,
        data: &'t [u8],
    ) -> WriteOp<'t, 'db, P, impl FnOnce(&mut [u8]) + 't> {
        WriteOp {
            tx: self,
            table,
            rid,
            fill: Some(move |buf: &mut [u8]| {
                assert_eq!(
                    data.len(),
                    buf.len(),
                    "write size must equal the payload size"
                );
                buf.copy_from_slice(data);
            }),
        }
    }

    /// Blind write whose bytes `fill` produces in the handle's scratch buffer (no caller buffer
    /// needed). `fill` receives a payload-sized buffer with unspecified contents.
    #[inline]
    pub fn write_with<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> WriteOp<'_, 'db, P, F> {
        WriteOp {
            tx: self,
            table,
            rid,
            fill: Some(fill),
        }
    }

    /// Makes sure slot `rid` of `table` is in memory before the program writes it: tables that
    /// grow allocate a chunk when a record of it is first used (`storage`, "Tables that grow"),
    /// and `false` means the database's table memory cap refused it (the run is stopping); the
    /// program should then end without writing (a user abort). Always `true` for a slot of a
    /// fixed table.
    pub fn reserve(&self, table: TableId, rid: RecordId) -> bool {
        self.tables[table.0 as usize].reserve(rid)
    }

    /// Starts loading the cache lines of record `rid` of `table`, which this attempt will
    /// access soon, so that the misses of accesses known ahead overlap (a stored procedure
    /// whose keys were drawn before it ran). Only a hint: nothing is read, locked or recorded,
    /// and the protocol does not see it.
    #[inline]
    pub fn prefetch(&self, table: TableId, rid: RecordId) {
        self.tables[table.0 as usize].prefetch(rid);
    }

    /// The record an operation addresses, and its row size (what the program sees of the
    /// payload). Programs only name records the workload created, so a miss is a workload bug,
    /// not user input. Always inlined: it runs once per operation, and a call to it (which the
    /// compiler chose once the table lookup grew) cost YCSB about 16 instructions an operation.
    #[inline(always)]
    fn record(&self, table: TableId, rid: RecordId) -> (Record<'db, P::RecordMeta>, usize) {
        let t = &self.tables[table.0 as usize];
        (
            t.get(rid).expect("record id within table"),
            t.payload_bytes(),
        )
    }

    /// Check mode with a declared set: panics, naming the access, when `(table, rid)` is
    /// accessed outside the set (`protocol::declared`: an undeclared access under a
    /// deterministic protocol would be a silent race, so the program is wrong). A remote
    /// session's access is refused instead (`Err`, [`Txn::take_undeclared`]): its client's bug
    /// must not take the server down. The caller returns the `Err` before touching the record.
    #[inline]
    fn check_declared(&mut self, table: TableId, rid: RecordId, write: bool) -> Result<(), Abort> {
        if self.check_declared && !self.declared.permits(table, rid, write) {
            return self.undeclared_access(table, rid, write);
        }
        Ok(())
    }

    #[cold]
    fn undeclared_access(
        &mut self,
        table: TableId,
        rid: RecordId,
        write: bool,
    ) -> Result<(), Abort> {
        if self.refuse_undeclared {
            self.undeclared = Some(remote::Undeclared { table, rid, write });
            return Err(Abort::User);
        }
        let what = if write { "write" } else { "read" };
        let name = &self.tables[table.0 as usize].spec().name;
        panic!(
            "{what} of table {} ({name}) record {} is outside the transaction's declared access \
             set (worker {}, attempt {:#x}); declared: {:?}, covered: {:?}",
            table.0,
            rid.0,
            self.worker_id,
            self.id,
            self.declared.accesses(),
            self.declared.covers()
        );
    }

    // ---- executor side ----

    /// Declares the access set of the transaction about to run (once per transaction, before
    /// its first attempt; retries keep it): `fill` states it into an empty [`AccessSet`], and
    /// the handle resolves it to the records [`Txn::poll_schedule`] hands the protocol. Every
    /// declared record must exist (the workload names records it created). In check mode,
    /// every access of the transaction is then checked against the set.
    pub(crate) fn declare(&mut self, fill: impl FnOnce(&mut AccessSet)) {
        // Before anything is looked up: the declared records are held across attempts.
        if let Some(pin) = &mut self.pin {
            pin.pin();
        }
        self.declared.clear();
        fill(&mut self.declared);
        self.scheduled.clear();
        for a in self.declared.accesses() {
            let t = &self.tables[a.table.0 as usize];
            let record = t.get(a.rid).unwrap_or_else(|| {
                panic!(
                    "declared record {} is outside table {} ({})",
                    a.rid.0,
                    a.table.0,
                    t.spec().name
                )
            });
            self.scheduled.push(DeclaredRecord {
                record,
                mode: a.mode,
                table: a.table,
            });
        }
        merge_declared(&mut self.scheduled);
        self.check_declared = self.history.is_some();
    }

    /// Polls the protocol's [`DeclaredSet::schedule`](crate::protocol::parts::DeclaredSet::schedule)
    /// with the declared set once (after `begin`, before the program); ready at once for a
    /// protocol without the declared-set part.
    #[inline]
    pub(crate) fn poll_schedule(&mut self) -> Poll<Result<(), Abort>> {
        match P::DECLARED_SET {
            Some(part) => part.schedule(self.protocol, &mut self.worker, &self.scheduled),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Starts an attempt (the executor calls this, then runs the program).
    pub(crate) fn begin(&mut self, start: AttemptStart) {
        debug_assert!(self.index_removals.is_empty());
        self.attempts_started += 1;
        // Before anything is looked up; a retry stays pinned from its first attempt, whose
        // findings (MOCC's retrospective locks, a declared set) it may still hold.
        if let Some(pin) = &mut self.pin {
            let epoch = pin.pin();
            // What a multi-version protocol's commit keeps past this transaction is tagged with
            // the epoch it runs at (`end_pin`).
            if let Some(mv) = P::MULTI_VERSION {
                mv.grace_holds(self.protocol, &mut self.worker)
                    .found_at(epoch);
            }
        }
        self.id = crate::check::history::txn_id(self.worker_id, self.attempts_started);
        if let Some(h) = &mut self.history {
            h.attempt.clear();
        }
        if self.history.is_some() || self.log.is_some() {
            self.protocol.install_log(&mut self.worker).clear();
        }
        #[cfg(debug_assertions)]
        if let Some(l) = &mut self.log {
            l.writes.clear();
        }
        self.protocol.begin(&mut self.worker, start);
        self.apply_deferred_removals();
    }

    /// Polls the protocol's
    /// [`DeclaredSet::confirm_user_abort`](crate::protocol::parts::DeclaredSet::confirm_user_abort)
    /// once (the program returned a user abort); the abort stands at once for a protocol without
    /// the declared-set part.
    #[inline]
    pub(crate) fn poll_confirm_user_abort(&mut self) -> Poll<Result<(), Abort>> {
        match P::DECLARED_SET {
            Some(part) => part.confirm_user_abort(self.protocol, &mut self.worker),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Polls the protocol's commit once.
    #[inline]
    pub(crate) fn poll_commit(&mut self) -> std::task::Poll<Result<(), Abort>> {
        self.protocol.commit(&mut self.worker)
    }

    /// The attempt committed: apply its deferred index removals and keep its history (check
    /// mode).
    pub(crate) fn committed(&mut self) {
        // First: the epoch stays taken (holding up its flush) until the append.
        self.log_commit();
        self.apply_index_removals();
        self.record_commit();
        // Last: the transaction holds no record from here on.
        self.end_pin();
    }

    /// The transaction ended: the grace-period slot goes IDLE, or, while the protocol keeps
    /// references to records past the commit (a multi-version protocol's garbage queue),
    /// announces the epoch the oldest of them was found at, so that no chunk retired since is
    /// reset or freed under them (`storage::grace`, "Records kept past a commit").
    fn end_pin(&mut self) {
        let Some(pin) = &mut self.pin else {
            return;
        };
        let kept = P::MULTI_VERSION
            .and_then(|mv| mv.grace_holds(self.protocol, &mut self.worker).oldest());
        #[cfg(test)]
        let kept = kept.filter(|_| !mutant::unpins_over_kept_references());
        match kept {
            Some(oldest) => pin.hold(oldest),
            None => pin.unpin(),
        }
    }

    /// Check mode: keeps the committed attempt's history.
    fn record_commit(&mut self) {
        let Some(h) = &mut self.history else {
            return;
        };
        if !h.committed.is_recording() {
            return;
        }
        // Give each write the seq its install recorded (a record written twice by this attempt
        // was installed once: its writes become one).
        h.installs.clear();
        h.installs
            .extend_from_slice(self.protocol.install_log(&mut self.worker).installs());
        h.installs.sort_unstable();
        for op in &mut h.attempt {
            if op.kind() != crate::check::history::OpKind::Write {
                continue;
            }
            let (table, rid) = split_history_key(op.key());
            let addr = self.tables[table as usize]
                .get(RecordId(rid))
                .expect("recorded records exist")
                .order_key();
            let at = h.installs.partition_point(|&(a, _)| a <= addr);
            let seq = match at.checked_sub(1).map(|i| h.installs[i]) {
                Some((a, seq)) if a == addr => seq,
                _ => Version::UNKNOWN_SEQ,
            };
            *op = op.with_word(seq);
        }
        h.attempt.sort_unstable();
        h.attempt.dedup();
        h.committed.commit(self.id, &h.attempt);
    }

    /// A user abort stood ([`Protocol::confirm_user_abort`] let it, deterministic protocols
    /// only; the executor then aborts the attempt as usual). Check mode keeps the attempt's reads
    /// as a read-only transaction of the history: the rollback was decided on them, so they must
    /// be what some serial order gives, as a commit's are. A protocol that let a rollback
    /// decided on stale reads stand shows a cycle there, where it would otherwise drop out of
    /// the history unseen. Its writes were never installed and are not kept.
    pub(crate) fn user_abort_stands(&mut self) {
        let Some(h) = &mut self.history else {
            return;
        };
        if !h.committed.is_recording() {
            return;
        }
        h.attempt
            .retain(|op| op.kind() != crate::check::history::OpKind::Write);
        if h.attempt.is_empty() {
            return;
        }
        h.attempt.sort_unstable();
        h.attempt.dedup();
        h.committed.commit(self.id, &h.attempt);
    }

    /// The attempt failed: drop its pending index removals and let the protocol undo it.
    pub(crate) fn aborted(&mut self, why: Abort) {
        self.index_removals.clear();
        self.protocol.abort(&mut self.worker, why);
        if let Some(l) = &mut self.log {
            match self.protocol.install_log(&mut self.worker).captures() {
                // The before-images were written in the read phase: the abort's wasted cost.
                (Some(capture), Some(undo)) => {
                    append_undo(l, self.worker_id, self.id, capture, undo, false);
                }
                (Some(capture), None) => {
                    capture.finish();
                    #[cfg(debug_assertions)]
                    l.writes.clear();
                }
                (None, _) => {}
            }
        }
    }

    /// The worker runs no more transactions
    /// ([`RunHooks::stop_worker`](crate::protocol::parts::RunHooks::stop_worker)).
    pub(crate) fn stopped(&mut self) {
        // The protocol's kept references stay held: this handle may run again.
        self.end_pin();
        P::RUN_HOOKS.stop_worker(self.protocol, &mut self.worker);
    }

    /// The worker goes idle between transactions, maybe for long
    /// ([`RunHooks::worker_away`](crate::protocol::parts::RunHooks::worker_away)): it stops
    /// counting in the protocol's barriers and batches until [`back`](Self::back).
    pub(crate) fn away(&mut self) {
        P::RUN_HOOKS.worker_away(self.protocol, &mut self.worker);
    }

    /// The worker that was [`away`](Self::away) is about to begin a transaction
    /// ([`RunHooks::worker_back`](crate::protocol::parts::RunHooks::worker_back)).
    pub(crate) fn back(&mut self) {
        P::RUN_HOOKS.worker_back(self.protocol, &mut self.worker);
    }

    /// This worker's committed history so far (check mode).
    pub(crate) fn committed_history(&self) -> Option<&WorkerHistory> {
        self.history.as_ref().map(|h| &h.committed)
    }

    /// This worker's committed history (check mode), leaving an empty one behind.
    pub(crate) fn take_history(&mut self) -> Option<WorkerHistory> {
        self.history
            .as_mut()
            .map(|h| std::mem::take(&mut h.committed))
    }
}

/// An undo log, at the end of an attempt (`committed` or aborted): appends its before-images
/// with its outcome to the worker's log buffer, naming each entry's table from the attempt's
/// writes, then leaves the epoch and forgets the images. A committed attempt is appended in the
/// epoch its first install took (it wrote nothing: no frame); an aborted one that holds no
/// epoch (its protocol installs at commit) enters the current epoch for the append, so the
/// flusher that closes it finds the frame (`log::epoch`). An attempt with no before-image
/// appends nothing.
fn append_undo(
    l: &mut TxnLog<'_>,
    worker: usize,
    txn_id: u64,
    capture: &mut crate::protocol::RedoCapture,
    undo: &mut crate::protocol::UndoCapture,
    committed: bool,
) {
    let (entries, at) = undo.parts();
    #[cfg(debug_assertions)]
    check_entry_tables(&mut l.writes, entries, at, committed);
    if !at.is_empty() {
        let count = u32::try_from(at.len()).expect("entries fit in u32");
        match capture.epoch() {
            Some(epoch) => l
                .logger
                .append_undo(worker, epoch, txn_id, committed, count, entries),
            None => {
                let clock = l.logger.clock();
                let epoch = clock.enter(worker);
                l.logger
                    .append_undo(worker, epoch, txn_id, committed, count, entries);
                clock.leave(worker);
            }
        }
    }
    capture.finish();
    undo.clear();
}

/// Debug builds: checks that each logged entry (at its offset in `entries`, for the record
/// with the order key beside it) names the table of the operation that wrote its record, then
/// forgets the attempt's writes. A committed attempt's every entry is checked; an aborted
/// one's entries may include a write the protocol buffered whose operation did not complete
/// (it returned `Pending` or an error after `put`), which the handle never noted.
#[cfg(debug_assertions)]
fn check_entry_tables(
    writes: &mut Vec<(usize, u32)>,
    entries: &[u8],
    at: &[(usize, usize)],
    committed: bool,
) {
    writes.sort_unstable();
    for &(key, offset) in at {
        let named = crate::log::format::u32_at(entries, offset).expect("an entry's table");
        let i = writes.partition_point(|&(k, _)| k < key);
        match writes.get(i) {
            Some(&(k, table)) if k == key => assert_eq!(
                named, table,
                "a log entry names table {named}, its write was to table {table}"
            ),
            _ if !committed => {}
            _ => panic!("a log entry for a record this attempt never wrote"),
        }
    }
    writes.clear();
}

/// The future of [`Txn::read`] and [`Txn::read_committed`]: polls the protocol's `read` (or
/// `read_committed`) until it is ready.
pub struct ReadOp<'t, 'db, P: Protocol> {
    /// Taken when the read completes, so the output can borrow the handle for `'t`.
    tx: Option<&'t mut Txn<'db, P>>,
    table: TableId,
    rid: RecordId,
    /// Read committed rather than serializable. A flag rather than a second future type: it fits
    /// in the padding after `table`, so the future stays three words (see [`Txn::read`]).
    committed_only: bool,
}

// Three words, as `Txn::read` promises: the flag must stay in padding.
const _: () =
    assert!(std::mem::size_of::<ReadOp<'static, 'static, crate::protocol::nocc::Nocc>>() <= 24);

impl<'t, 'db, P: Protocol> Future for ReadOp<'t, 'db, P> {
    type Output = Result<&'t [u8], Abort>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (table, rid, committed_only) = (self.table, self.rid, self.committed_only);
        let tx = self.tx.as_mut().expect("ReadOp polled after completion");
        if let Err(why) = tx.check_declared(table, rid, false) {
            return Poll::Ready(Err(why));
        }
        let (rec, row) = tx.record(table, rid);
        let n = rec.payload.len();
        let polled = if committed_only {
            tx.protocol
                .read_committed(&mut tx.worker, rec, &mut tx.buf[..n])
        } else {
            tx.protocol.read(&mut tx.worker, rec, &mut tx.buf[..n])
        };
        match polled {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(why)) => Poll::Ready(Err(why)),
            Poll::Ready(Ok(())) => {
                progress::op_completed();
                let tx = self.tx.take().expect("present until completion");
                if let Some(h) = &mut tx.history
                    && !committed_only
                {
                    h.read(history_key(table.0, rid.0), &tx.buf[..n], row, tx.id);
                }
                Poll::Ready(Ok(&tx.buf[..row]))
            }
        }
    }
}

/// The future of [`Txn::update`]: `read_for_update`, apply the closure once, then `write`.
pub struct UpdateOp<'t, 'db, P: Protocol, F: FnOnce(&mut [u8]) -> R, R> {
    tx: &'t mut Txn<'db, P>,
    table: TableId,
    rid: RecordId,
    /// Present until the read completed and the closure ran.
    update: Option<F>,
    /// The closure's result, held while the write waits.
    result: Option<R>,
}

// The closure and its result are only moved, never pinned in place.
impl<P: Protocol, F: FnOnce(&mut [u8]) -> R, R> Unpin for UpdateOp<'_, '_, P, F, R> {}

impl<P: Protocol, F: FnOnce(&mut [u8]) -> R, R> Future for UpdateOp<'_, '_, P, F, R> {
    type Output = Result<R, Abort>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let tx = &mut *this.tx;
        if let Err(why) = tx.check_declared(this.table, this.rid, true) {
            return Poll::Ready(Err(why));
        }
        tx.name_write_table(this.table);
        let (rec, row) = tx.record(this.table, this.rid);
        let n = rec.payload.len();
        let buf = &mut tx.buf[..n];
        if let Some(update) = this.update.take() {
            match tx.protocol.read_for_update(&mut tx.worker, rec, buf) {
                Poll::Pending => {
                    this.update = Some(update);
                    return Poll::Pending;
                }
                Poll::Ready(Err(why)) => return Poll::Ready(Err(why)),
                Poll::Ready(Ok(())) => {
                    // The read half is progress too: the write half may be what waits.
                    progress::op_completed();
                    if let Some(h) = &mut tx.history {
                        h.read(history_key(this.table.0, this.rid.0), buf, row, tx.id);
                    }
                    this.result = Some(update(&mut buf[..row]));
                    if tx.history.is_some() {
                        HistoryStage::stamp_write(buf, row, tx.id);
                    }
                }
            }
        }
        // The buffer still holds the updated bytes: nothing else touches it between polls.
        match tx
            .protocol
            .write(&mut tx.worker, rec, buf, WriteKind::ReadModifyWrite)
        {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(why)) => Poll::Ready(Err(why)),
            Poll::Ready(Ok(())) => {
                progress::op_completed();
                tx.note_write(rec.order_key(), this.table);
                if let Some(h) = &mut tx.history {
                    let key = history_key(this.table.0, this.rid.0);
                    h.attempt.push(HistOp::write(key, Version::UNKNOWN_SEQ));
                }
                Poll::Ready(Ok(this
                    .result
                    .take()
                    .expect("closure ran before the write")))
            }
        }
    }
}

/// The future of [`Txn::write`] and [`Txn::write_with`]: fill the scratch buffer once, then poll
/// the protocol's blind `write`.
pub struct WriteOp<'t, 'db, P: Protocol, F: FnOnce(&mut [u8])> {
    tx: &'t mut Txn<'db, P>,
    table: TableId,
    rid: RecordId,
    /// Present until the buffer was filled.
    fill: Option<F>,
}

// The closure is only moved, never pinned in place.
impl<P: Protocol, F: FnOnce(&mut [u8])> Unpin for WriteOp<'_, '_, P, F> {}

impl<P: Protocol, F: FnOnce(&mut [u8])> Future for WriteOp<'_, '_, P, F> {
    type Output = Result<(), Abort>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let tx = &mut *this.tx;
        if let Err(why) = tx.check_declared(this.table, this.rid, true) {
            return Poll::Ready(Err(why));
        }
        tx.name_write_table(this.table);
        let (rec, row) = tx.record(this.table, this.rid);
        let buf = &mut tx.buf[..rec.payload.len()];
        if let Some(fill) = this.fill.take() {
            fill(&mut buf[..row]);
            if tx.history.is_some() {
                HistoryStage::stamp_write(buf, row, tx.id);
            }
        }
        let written = tx
            .protocol
            .write(&mut tx.worker, rec, buf, WriteKind::Blind);
        if let Poll::Ready(Ok(())) = written {
            progress::op_completed();
            tx.note_write(rec.order_key(), this.table);
            if let Some(h) = &mut tx.history {
                let key = history_key(this.table.0, this.rid.0);
                h.attempt.push(HistOp::write(key, Version::UNKNOWN_SEQ));
            }
        }
        written
    }
}

/// A deliberately broken variant for tests: the grace-period slot goes IDLE at every commit,
/// whatever the protocol keeps past it (the code before issue 21's fix; `kept_references`).
#[cfg(test)]
mod mutant {
    thread_local! {
        static UNPIN_OVER_KEPT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Whether this thread runs the mutant.
    pub(super) fn unpins_over_kept_references() -> bool {
        UNPIN_OVER_KEPT.with(std::cell::Cell::get)
    }

    /// Turns the mutant on or off for this thread.
    pub(super) fn set_unpin_over_kept_references(on: bool) {
        UNPIN_OVER_KEPT.with(|m| m.set(on));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProtocolOptions;
    use crate::protocol::tictoc::TicToc;
    use crate::storage::TableSpec;
    use std::task::Waker;

    fn poll<F: Future>(fut: F) -> Poll<F::Output> {
        let mut fut = std::pin::pin!(fut);
        fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    }

    /// Reads record 0 (serializable or read committed) and writes record 1, lets another worker
    /// commit a write to record 0, then commits: only the serializable read makes the commit fail
    /// (the write puts the commit timestamp past the read version's; a read-only transaction
    /// would simply serialize before the writer).
    fn commit_after_concurrent_write(read_committed: bool) -> Result<(), Abort> {
        let p = TicToc::new(&ProtocolOptions::default());
        let db = Database::new(&[TableSpec {
            name: "t".into(),
            records: 2,
            payload_bytes: 8,
        }]);
        let (table, rid) = (TableId(0), RecordId(0));
        let mut reader = Txn::new(&p, &db, 0, false);
        let mut writer = Txn::new(&p, &db, 1, false);
        reader.begin(AttemptStart::FIRST);
        let read = if read_committed {
            poll(reader.read_committed(table, rid))
        } else {
            poll(reader.read(table, rid))
        };
        assert!(matches!(read, Poll::Ready(Ok(&[0, 0, 0, 0, 0, 0, 0, 0]))));
        let own = poll(reader.write(table, RecordId(1), &[2; 8]));
        assert_eq!(own, Poll::Ready(Ok(())));
        writer.begin(AttemptStart::FIRST);
        assert_eq!(poll(writer.write(table, rid, &[1; 8])), Poll::Ready(Ok(())));
        assert_eq!(writer.poll_commit(), Poll::Ready(Ok(())));
        match reader.poll_commit() {
            Poll::Ready(res) => res,
            Poll::Pending => panic!("TicToc's NoWait commit does not wait"),
        }
    }

    /// Check mode with a declared set: an access outside it panics, naming the access.
    #[test]
    #[should_panic(expected = "write of table 0 (t) record 1 is outside")]
    fn an_undeclared_access_is_an_error_naming_it() {
        use crate::protocol::ord_lock::OrdLock;
        let p = OrdLock::new();
        let spec = TableSpec {
            name: "t".into(),
            records: 2,
            payload_bytes: 8,
        };
        let db = Database::with_check_stamps(&[spec], &[]);
        let mut tx = Txn::new(&p, &db, 0, true);
        tx.declare(|set| {
            set.read(TableId(0), RecordId(0));
            set.read(TableId(0), RecordId(1));
        });
        tx.begin(AttemptStart::FIRST);
        assert_eq!(tx.poll_schedule(), Poll::Ready(Ok(())));
        assert!(matches!(
            poll(tx.read(TableId(0), RecordId(1))),
            Poll::Ready(Ok(_))
        ));
        let _ = poll(tx.write(TableId(0), RecordId(1), &[1; 8]));
    }

    #[test]
    fn read_committed_op_calls_the_protocols_read_committed() {
        assert_eq!(commit_after_concurrent_write(true), Ok(()));
        assert_eq!(
            commit_after_concurrent_write(false),
            Err(Abort::ReadValidation)
        );
    }
}
