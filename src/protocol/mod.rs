//! Concurrency-control protocols: the [`Protocol`] trait and what every protocol shares.
//!
//! A protocol owns exactly two things: the metadata in each record header (`RecordMeta`) and the
//! state of one worker (`Worker`: read/write sets, timestamps). Storage, indexes, workload
//! generation, retry and backoff, latency measurement and reporting are shared code
//! (`storage`, `index`, `workload`, `exec`, `metrics`), so protocols are compared on equal terms.
//!
//! # Waiting
//!
//! An operation that must wait for another transaction (a lock held by an older transaction, a
//! record being installed) returns `Poll::Pending` instead of spinning. The executor decides what
//! waiting means (spin then yield the CPU for worker threads; switch coroutine for SGPM) and calls
//! the same operation again with the same arguments. Operations must therefore be safe to repeat
//! after `Pending`: a protocol remembers in its worker state what it already did (a lock request
//! registered, a write-set prefix already locked).
//!
//! # Life of a transaction attempt
//!
//! `begin` → any number of `read` / `read_committed` / `read_for_update` / `write` → `commit`, or `abort` at any point
//! after an operation or `commit` returned `Err` (the executor calls `abort` exactly once per failed
//! attempt, with the reason). After `commit` returns `Ready(Ok)`, the attempt's effects are visible
//! and durable in memory and the worker state is ready for the next `begin`.
//!
//! # Installs and the checker
//!
//! A protocol installs the payloads it buffered with [`WriteSet::install`], while it holds each
//! record exclusively (a lock, a TID word's lock bit). In check mode that shared path notes, for
//! every install, which version it replaced ([`InstallLog`]): that gives the checker the version
//! order of every record, blind writes included, without any protocol-specific code. A protocol
//! that writes records any other way (in place at `write`, into a version chain) must record each
//! such install in the log its [`Protocol::install_log`] returns, with the seq that follows the
//! replaced version's (see `storage::stamp`), or the checker cannot see its writes.

mod abort;
mod access;
pub mod aria;
pub mod batch;
pub mod bohm;
mod by_kind;
pub mod c_sched;
pub mod calvin;
pub mod calvin_ticket;
pub mod cicada;
pub mod decentsched;
pub mod declared;
pub mod ermia;
pub(crate) mod in_place;
pub mod mocc;
#[cfg(test)]
pub(crate) mod mutants;
pub(crate) mod mv_common;
pub mod mvto;
pub mod nocc;
mod options;
pub mod ord_lock;
pub mod parts;
pub mod plor;
pub mod pwv;
pub mod si;
pub mod signal;
pub mod silo;
pub mod tictoc;
pub mod twopl;
pub mod twopl_er;
pub(crate) mod txn_table;
pub mod wake;
pub mod worker_set;

pub use abort::Abort;
pub use access::{InstallLog, ReadSet, RedoCapture, UndoCapture, WriteEntry, WriteSet};
pub use by_kind::ProtocolVisitor;
pub use declared::{AccessMode, AccessSet, DeclaredRecord};
pub use options::DEFAULT_VERSION_SAMPLE_MS;
pub use options::MvOptions;
pub use options::{CICADA_CONTINUING_COMMITS, CicadaOptions, ErmiaOptions};
pub use options::{
    LockWait, MoccLockKind, MoccOptions, MoccTemperature, PlorOptions, PlorPriority, ProtocolKind,
    ProtocolOptions, TicTocOptions, UnknownProtocol,
};

use crate::storage::Record;
use std::task::Poll;

/// Whether a write replaces the record without reading it, or updates what the transaction read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Overwrite without a prior read in this transaction.
    Blind,
    /// Overwrite a record previously read with `read_for_update`.
    ReadModifyWrite,
}

/// The outcome of one protocol operation: `Pending` to wait, then a result.
pub type OpResult = Poll<Result<(), Abort>>;

/// What the executor tells a protocol when an attempt starts ([`Protocol::begin`]).
///
/// Both facts come from outside the protocol: `retry` from the executor (the previous attempt of
/// the same transaction aborted), `read_only` from the workload, which knows from the request
/// alone that the program will not write
/// ([`Workload::is_read_only`](crate::workload::Workload::is_read_only)). `read_only` is a hint a
/// protocol may optimise for (PLOR's optimistic read-only path), never a precondition of
/// correctness: a protocol must stay correct if a transaction so marked writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AttemptStart {
    /// The previous attempt of the same transaction aborted: wound-wait families keep their
    /// original timestamp across retries.
    pub retry: bool,
    /// The transaction is declared read-only (it stays so across its retries).
    pub read_only: bool,
}

impl AttemptStart {
    /// The first attempt of a read-write transaction.
    pub const FIRST: AttemptStart = AttemptStart {
        retry: false,
        read_only: false,
    };
    /// A retry of a read-write transaction.
    pub const RETRY: AttemptStart = AttemptStart {
        retry: true,
        read_only: false,
    };

    /// The same start, for a transaction declared read-only.
    pub const fn read_only(self) -> AttemptStart {
        AttemptStart {
            read_only: true,
            ..self
        }
    }
}

/// A concurrency-control protocol: the contract between a protocol and the engine.
///
/// The core: eight required methods (`new_worker`, `begin`, `read`, `read_committed`, `write`,
/// `commit`, `abort`, `install_log`) and one optional operation (`read_for_update`). This is
/// everything a new single-version protocol implements, inside txbench or in a crate of its own
/// (`examples/custom_protocol.rs` implements basic timestamp ordering outside `src/` and runs it
/// with [`runner::run_custom`](crate::runner::run_custom), checked and reported like a built-in
/// protocol). The engine owns storage, indexes, workloads, retries, timing and reports; the
/// protocol owns its per-record metadata ([`RecordMeta`](Protocol::RecordMeta), in every record's
/// header next to the payload) and its per-worker state ([`Worker`](Protocol::Worker)).
///
/// # What the engine guarantees (what an implementation may assume)
///
/// - **One worker, one thread at a time.** Each worker state is used by one executor thread at a
///   time (`&mut`), for one transaction attempt at a time. Workers have dense ids `0..n`, where
///   `n` is threads, or threads x queue under the coroutine executor (every in-flight
///   transaction is a worker); a protocol that keeps per-worker slots sizes them at construction.
/// - **Call order per attempt.** [`begin`](Protocol::begin), then, only for protocols with the
///   declared-set part, [`schedule`](parts::DeclaredSet::schedule) until it is ready, then any
///   sequence of [`read`](Protocol::read),
///   [`read_committed`](Protocol::read_committed), [`read_for_update`](Protocol::read_for_update)
///   and [`write`](Protocol::write), then [`commit`](Protocol::commit). When an operation or
///   `commit` returns `Ready(Err(why))`, or the program itself fails, the engine calls
///   [`abort`](Protocol::abort) exactly once with the reason and starts the next attempt with
///   `begin` (`AttemptStart::retry` set when the same transaction is retried, with the same
///   request). After `commit` returns `Ready(Ok(()))` there is no `abort`.
/// - **Same arguments after `Pending`.** An operation that returned `Pending` is called again
///   later with exactly the same record and buffer (or the same write data), before any other
///   operation of the worker; `commit` likewise. Between the two calls other workers run.
/// - **Records and payloads.** A [`Record`] is valid for the database's lifetime `'db`; its
///   payload length is the table's row size (in check mode it includes the engine's 24-byte
///   version stamp at its end, which the protocol copies like any other bytes). `out` and `data`
///   have exactly that length.
/// - **Own writes are the protocol's.** The `Txn` handle passes every read to the protocol; the
///   protocol returns the attempt's own buffered write when there is one
///   ([`WriteSet::read_own`]).
///
/// # What an implementation must guarantee
///
/// - **Serializability of committed attempts** (unless the protocol declares itself otherwise,
///   as NoCC and SI do): every read of a committed attempt returns a committed version, whole
///   (never torn by a concurrent install), and the committed attempts are equivalent to some
///   serial order. The checker (`--check`) verifies this from the history; the anomaly suite
///   (`tests/anomalies.rs`) and deliberately broken variants (`protocol/mutants`) show it would
///   notice if not.
/// - **Never spin waiting for another transaction.** An operation that must wait (a lock held
///   by another transaction, a predecessor in a queue, a version being installed) returns
///   `Poll::Pending` having changed nothing it cannot redo, and is called again. The executor
///   decides how to wait (spin, yield, park the thread, switch coroutine); a protocol that spins
///   inside a call livelocks when workers outnumber cores. Short critical sections (a latch held
///   for a few instructions inside one call, a CAS retry loop) are fine; holding one across a
///   `Pending` is not. Waits must not form cycles, or the protocol must break them (abort a
///   participant, as wound-wait and wait-die do).
/// - **Repeatable after `Pending`.** Remember in the worker what was already done (a lock
///   request registered, a prefix of the write set locked), so the repeated call continues
///   rather than doing it twice.
/// - **`abort` undoes everything.** Release every lock, discard buffered writes, clear whatever
///   the attempt registered in shared metadata, so that no other transaction waits for it.
/// - **Installs the checker can order.** Install buffered payloads with
///   [`WriteSet::install`] while holding the record exclusively; in check mode it gives every
///   new version the next seq of the record and notes it in the [`InstallLog`] that
///   [`install_log`](Protocol::install_log) returns. A protocol that writes any other way (in
///   place, into a version chain) records each install in that log itself, with the seq after
///   the replaced version's (see `storage::stamp`), or the checker reports `unordered_write`.
/// - **Typed aborts.** Return the [`Abort`] reason that names the rule applied; reports count
///   them by reason. Every reason but `User` is retried.
/// - **Hot-path discipline** (for fair numbers, not correctness): no allocation per operation
///   once warm (reuse the worker's sets, [`ReadSet`] and [`WriteSet`] do), no `dyn` calls, pad
///   shared words written by one worker and read by many.
///
/// # The optional parts
///
/// [`read_for_update`](Protocol::read_for_update) (default: `read`) lets locking protocols take
/// the exclusive lock at the read of a read-modify-write. What only some protocols have lives in
/// the optional parts ([`parts`]), each a trait of its own that a protocol opts into with one
/// constant here, and that the engine reaches through the constant without a `dyn` call:
///
/// - [`MULTI_VERSION`](Protocol::MULTI_VERSION) ([`parts::MultiVersion`]): older versions in the
///   shared version storage (their cost in the report, the memory cap, the reclamation
///   watermark that deleted index entries wait for);
/// - [`DECLARED_SET`](Protocol::DECLARED_SET) ([`parts::DeclaredSet`]): scheduling from access
///   sets declared before the program runs, and confirming a user abort;
/// - [`RUN_HOOKS`](Protocol::RUN_HOOKS) ([`parts::RunHooks`]): protocol statistics in the
///   report, helper threads, adaptive backoff by default, coroutine signals, stopping a worker.
pub trait Protocol: Send + Sync + Sized + 'static {
    /// Per-record metadata, stored in the cache-line-aligned record header.
    type RecordMeta: Default + Send + Sync + 'static;
    /// Per-worker state: read/write sets, timestamps, scratch buffers. Reused across transactions.
    type Worker<'db>: Send
    where
        Self: 'db;

    /// Creates the state of worker `id` (ids are dense, `0..threads`).
    fn new_worker<'db>(&'db self, id: usize) -> Self::Worker<'db>;

    /// Starts an attempt: `start` says whether it retries an aborted attempt of the same
    /// transaction and whether the transaction is declared read-only.
    fn begin(&self, w: &mut Self::Worker<'_>, start: AttemptStart);

    /// Copies the record's payload into `out` (`out.len()` is the payload size).
    fn read<'db>(
        &self,
        w: &mut Self::Worker<'db>,
        rec: Record<'db, Self::RecordMeta>,
        out: &mut [u8],
    ) -> OpResult;

    /// Copies the record's latest committed payload into `out` at read-committed isolation: the
    /// value was committed (never another transaction's uncommitted write, never a torn copy), but
    /// the read is not registered for validation and holds no lock after it returns, so it does not
    /// protect the transaction against later writers. Own writes are visible (read-your-writes).
    ///
    /// Required, with no default falling back to `read`: what "committed, not protected" costs
    /// differs per design (a seqlock copy, a short-duration shared lock), and a default would
    /// silently give serializable reads their full cost and conflicts (TPC-C Stock-Level at read
    /// committed, PLOR 6.1, would then measure the wrong thing). Like every operation it may return
    /// `Pending` to wait, and must not make the transaction part of a cycle of waits.
    fn read_committed<'db>(
        &self,
        w: &mut Self::Worker<'db>,
        rec: Record<'db, Self::RecordMeta>,
        out: &mut [u8],
    ) -> OpResult;

    /// Reads a record the transaction will write next (`WriteKind::ReadModifyWrite`). Locking
    /// protocols take the exclusive lock here; optimistic ones read as usual.
    fn read_for_update<'db>(
        &self,
        w: &mut Self::Worker<'db>,
        rec: Record<'db, Self::RecordMeta>,
        out: &mut [u8],
    ) -> OpResult {
        self.read(w, rec, out)
    }

    /// Buffers (or, for locking protocols, prepares) a write of `data` to the record.
    fn write<'db>(
        &self,
        w: &mut Self::Worker<'db>,
        rec: Record<'db, Self::RecordMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult;

    /// Validates and installs the attempt's writes.
    fn commit(&self, w: &mut Self::Worker<'_>) -> OpResult;

    /// Undoes the attempt (releases locks, discards buffered writes). Called once per failed
    /// attempt, after an operation or `commit` returned `Err(why)` or the program returned one.
    fn abort(&self, w: &mut Self::Worker<'_>, why: Abort);

    /// The log the worker's installs are recorded in (check mode; module docs): the write set's
    /// ([`WriteSet::install_log`]) for every protocol that installs through [`WriteSet::install`].
    fn install_log<'w>(&self, w: &'w mut Self::Worker<'_>) -> &'w mut InstallLog;

    /// The multi-version part ([`parts::MultiVersion`]): `Some(MultiVersionPart::from_impl())` for
    /// a protocol that keeps older versions in the shared version storage; `None` by default.
    const MULTI_VERSION: Option<parts::MultiVersionPart<Self>> = None;

    /// The declared-set part ([`parts::DeclaredSet`]): `Some(DeclaredSetPart::from_impl())` for a
    /// protocol that schedules transactions from access sets declared before they run; `None` by
    /// default.
    const DECLARED_SET: Option<parts::DeclaredSetPart<Self>> = None;

    /// Hooks into the run ([`parts::RunHooks`]: statistics, helper threads, backoff, coroutine
    /// signals, stopping a worker): `RunHooksPart::from_impl()` for a protocol that overrides any;
    /// every default otherwise.
    const RUN_HOOKS: parts::RunHooksPart<Self> = parts::RunHooksPart::DEFAULT;
}
