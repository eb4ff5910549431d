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
pub mod c_sched;
pub mod calvin;
pub mod cicada;
pub mod decentsched;
pub mod declared;
pub mod ermia;
pub mod mocc;
#[cfg(test)]
pub(crate) mod mutants;
pub(crate) mod mv_common;
pub mod mvto;
pub mod nocc;
mod options;
pub mod ord_lock;
pub mod plor;
pub mod si;
pub mod signal;
pub mod silo;
pub mod tictoc;
pub mod twopl;
pub mod twopl_er;
pub mod wake;
pub mod worker_set;

pub use abort::Abort;
pub use access::{InstallLog, ReadSet, RedoCapture, WriteEntry, WriteSet};
pub use declared::{AccessMode, AccessSet, DeclaredRecord};
pub use options::CicadaOptions;
pub use options::DEFAULT_VERSION_SAMPLE_MS;
pub use options::MvOptions;
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
/// This is everything a new protocol implements, inside txbench or in a crate of its own
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
/// - **Call order per attempt.** [`begin`](Protocol::begin), then, only for
///   [`NEEDS_DECLARED_SET`](Protocol::NEEDS_DECLARED_SET) protocols, [`schedule`](Protocol::schedule)
///   until it is ready, then any sequence of [`read`](Protocol::read),
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
/// # The optional methods
///
/// [`read_for_update`](Protocol::read_for_update) (default: `read`) lets locking protocols take
/// the exclusive lock at the read of a read-modify-write. [`schedule`](Protocol::schedule) and
/// [`NEEDS_DECLARED_SET`](Protocol::NEEDS_DECLARED_SET) are for deterministic protocols that
/// order transactions from access sets declared up front. [`stats`](Protocol::stats) adds
/// protocol-specific numbers to the report (`protocol_stats`).
/// [`version_stats`](Protocol::version_stats), [`snapshot_commit_stamp`](Protocol::snapshot_commit_stamp)
/// and [`oldest_snapshot`](Protocol::oldest_snapshot) are for multi-version protocols (version
/// memory in the report; when a deleted index entry may go). [`signal`](Protocol::signal) tells
/// the coroutine executor what to do with an aborted transaction (SGPM's signals; the default
/// follows the abort reason).
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

    /// Whether the protocol schedules transactions from their declared access sets
    /// ([`declared`]): the executor then declares every request's set and drives
    /// [`Protocol::schedule`] before the program runs, and configuration rejects workloads that
    /// cannot declare.
    const NEEDS_DECLARED_SET: bool = false;

    /// Threads the protocol runs besides the workers, busy while the run lasts (C-Sched's
    /// scheduler). The executors count them when they decide whether threads outnumber cores,
    /// which decides how a waiter waits (`exec/wait.rs`).
    const HELPER_THREADS: usize = 0;

    /// Named statistics of the run, for the report (after the workers were joined): counters
    /// or facts only this protocol has (C-Sched's scheduler core). None by default.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// Schedules the attempt from its declared access set, after `begin` and before the
    /// program's first operation: `set` holds one entry per record in the global record order
    /// (`Record::order_key`), a record both read and written once, as written. Like every
    /// operation it may return `Pending` (the executor polls it again with the same set) and must
    /// be safe to repeat. Called only when [`Protocol::NEEDS_DECLARED_SET`] is true, or by a
    /// protocol's own users who declare (2PL with early release may use it to know the last
    /// access of each record); the default schedules nothing.
    fn schedule<'db>(
        &self,
        _w: &mut Self::Worker<'db>,
        _set: &[DeclaredRecord<'db, Self::RecordMeta>],
    ) -> OpResult {
        Poll::Ready(Ok(()))
    }

    /// What the protocol's older versions cost (`storage::versions`), for the report; `None` for
    /// single-version protocols. Called after the run.
    fn version_stats(&self) -> Option<crate::storage::versions::VersionStats> {
        None
    }

    /// Multi-version protocols: the error that stopped the run when version memory reached its
    /// cap ([`VersionPool::take_past_cap`](crate::storage::versions::VersionPool::take_past_cap));
    /// the executors stop a run as soon as it is `Some`, and the runner returns it. `None` (the
    /// default) for single-version protocols.
    fn version_memory_exhausted(&self) -> Option<crate::storage::versions::VersionMemoryExhausted> {
        None
    }

    /// Multi-version protocols: the commit timestamp of the attempt that just committed, on the
    /// scale of [`oldest_snapshot`](Self::oldest_snapshot); `None` (the default) for protocols
    /// whose reads see the newest committed version. A delete's index entry then stays until no
    /// snapshot older than the delete remains (`txn::index_ops`, "Snapshot readers").
    fn snapshot_commit_stamp(&self, _w: &Self::Worker<'_>) -> Option<u64> {
        None
    }

    /// Multi-version protocols: every running and future attempt reads at a snapshot at or above
    /// this value (a reclamation watermark, possibly stale, hence possibly smaller).
    fn oldest_snapshot(&self) -> u64 {
        u64::MAX
    }

    /// What a coroutine executor does with a transaction whose attempt aborted for `why`
    /// (SGPM's table 1; `Pending` is always [`Signal::Ag`](signal::Signal::Ag)). The default maps
    /// the abort reason ([`Signal::for_abort`](signal::Signal::for_abort)); a protocol whose
    /// scheduling differs (batches, deterministic order) overrides it.
    fn signal(&self, why: Abort) -> signal::Signal {
        signal::Signal::for_abort(why)
    }

    /// The worker will run no more transactions, though it lives on until its thread ends (a
    /// coroutine slot that stopped while its thread's other slots finish theirs). A protocol
    /// whose workers belong to something the others wait for (DecentSched's epoch barrier)
    /// leaves it here, and must not leave twice when the worker is then dropped. Nothing by
    /// default.
    fn stop_worker(&self, _w: &mut Self::Worker<'_>) {}
    /// Whether the protocol runs with the executor's AdaptiveBackoff even when `--backoff` was
    /// not given (Cicada, whose paper makes it part of the protocol). False by default.
    fn adaptive_backoff(&self) -> bool {
        false
    }

    /// The program ended in a user abort (the workload rolled itself back), which a protocol
    /// that may run programs ahead of their turn (DecentSched's opportunistic execution) must
    /// confirm, since the decision may rest on reads a run in place would not see:
    /// `Ready(Ok(()))` lets the abort stand, `Ready(Err(Abort::Reexecute))` runs the program
    /// again in its place (where it decides again), `Pending` until the attempt's turn. Called
    /// only when [`Protocol::NEEDS_DECLARED_SET`] is true, before `abort`; the default lets
    /// every user abort stand.
    fn confirm_user_abort(&self, _w: &mut Self::Worker<'_>) -> OpResult {
        Poll::Ready(Ok(()))
    }
}

impl ProtocolKind {
    /// Bytes of metadata this protocol keeps in every record header (`size_of` its
    /// [`Protocol::RecordMeta`] with `options`), which with the payload sets the tables' stride
    /// ([`storage::record_stride`](crate::storage::record_stride)); memory estimates use it
    /// before anything is allocated.
    pub fn record_meta_bytes(self, options: &ProtocolOptions) -> usize {
        fn meta<P: Protocol>() -> usize {
            std::mem::size_of::<P::RecordMeta>()
        }
        match self {
            ProtocolKind::Nocc => meta::<nocc::Nocc>(),
            ProtocolKind::NoWait => meta::<twopl::NoWait>(),
            ProtocolKind::WaitDie if twopl::needs_wide_locks(options.threads) => {
                meta::<twopl::WaitDieWide>()
            }
            ProtocolKind::WaitDie => meta::<twopl::WaitDie>(),
            ProtocolKind::WoundWait if twopl::needs_wide_locks(options.threads) => {
                meta::<twopl::WoundWaitWide>()
            }
            ProtocolKind::WoundWait => meta::<twopl::WoundWait>(),
            ProtocolKind::Silo => meta::<silo::Silo>(),
            ProtocolKind::TicToc => meta::<tictoc::TicToc>(),
            ProtocolKind::Mocc => match options.mocc.lock {
                MoccLockKind::Rw => meta::<mocc::Mocc<mocc::RwLock>>(),
                MoccLockKind::Mql => meta::<mocc::Mocc<mocc::MqlLock>>(),
            },
            ProtocolKind::Plor if plor::needs_wide_locker(options.threads) => {
                meta::<plor::PlorWide>()
            }
            ProtocolKind::Plor => meta::<plor::Plor>(),
            ProtocolKind::OrdLock => meta::<ord_lock::OrdLock>(),
            ProtocolKind::Si => meta::<si::Si>(),
            ProtocolKind::DecentSched => meta::<decentsched::DecentSched>(),
            ProtocolKind::Ermia if ermia::needs_wide_readers(options.threads) => {
                meta::<ermia::ErmiaWide>()
            }
            ProtocolKind::Ermia => meta::<ermia::Ermia>(),
            ProtocolKind::Mvto => meta::<mvto::Mvto>(),
            ProtocolKind::CSched => meta::<c_sched::CSched>(),
            ProtocolKind::Calvin => meta::<calvin::Calvin>(),
            ProtocolKind::Cicada => meta::<cicada::Cicada>(),
            ProtocolKind::TwoPlEr => meta::<twopl_er::TwoPlEr>(),
            ProtocolKind::Aria => meta::<aria::Aria>(),
        }
    }

    /// Multi-version protocols: bytes one older version of a `payload`-byte record takes as a
    /// node of the shared version storage (its header with the protocol's per-version metadata,
    /// and the payload copy), as the version memory cap counts them; `None` for protocols that
    /// keep no older versions. Memory estimates use it before anything is allocated.
    pub fn version_node_bytes(self, payload: usize) -> Option<usize> {
        use crate::storage::versions::Version;
        match self {
            ProtocolKind::Si | ProtocolKind::Mvto | ProtocolKind::Cicada => {
                Some(Version::<()>::node_bytes(payload))
            }
            ProtocolKind::Ermia => Some(Version::<ermia::Stamps>::node_bytes(payload)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod meta_size_tests {
    use super::*;

    #[test]
    fn record_metadata_fits_a_cache_line() {
        let mut options = ProtocolOptions::default();
        for lock in [MoccLockKind::Rw, MoccLockKind::Mql] {
            options.mocc.lock = lock;
            for p in ProtocolKind::ALL {
                let bytes = p.record_meta_bytes(&options);
                assert!(bytes <= 64, "{p}: {bytes}");
            }
        }
        assert_eq!(ProtocolKind::Nocc.record_meta_bytes(&options), 0);
    }

    #[test]
    fn the_kind_says_which_protocols_need_declared_sets() {
        fn needs<P: Protocol>() -> bool {
            P::NEEDS_DECLARED_SET
        }
        for p in ProtocolKind::ALL {
            let expected = match p {
                ProtocolKind::Nocc => needs::<nocc::Nocc>(),
                ProtocolKind::NoWait => needs::<twopl::NoWait>(),
                ProtocolKind::WaitDie => needs::<twopl::WaitDie>(),
                ProtocolKind::WoundWait => needs::<twopl::WoundWait>(),
                ProtocolKind::Silo => needs::<silo::Silo>(),
                ProtocolKind::TicToc => needs::<tictoc::TicToc>(),
                ProtocolKind::Mocc => needs::<mocc::Mocc<mocc::RwLock>>(),
                ProtocolKind::Plor => needs::<plor::Plor>(),
                ProtocolKind::OrdLock => needs::<ord_lock::OrdLock>(),
                ProtocolKind::Si => needs::<si::Si>(),
                ProtocolKind::Ermia => needs::<ermia::Ermia>(),
                ProtocolKind::Mvto => needs::<mvto::Mvto>(),
                ProtocolKind::DecentSched => needs::<decentsched::DecentSched>(),
                ProtocolKind::CSched => needs::<c_sched::CSched>(),
                ProtocolKind::Calvin => needs::<calvin::Calvin>(),
                ProtocolKind::Cicada => needs::<cicada::Cicada>(),
                ProtocolKind::TwoPlEr => needs::<twopl_er::TwoPlEr>(),
                ProtocolKind::Aria => needs::<aria::Aria>(),
            };
            assert_eq!(p.needs_declared_set(), expected, "{p}");
        }
    }
}
