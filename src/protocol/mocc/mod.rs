//! MOCC: mostly-optimistic concurrency control (Wang and Kimura, VLDB 2016), as CCBench runs it.
//!
//! Silo's OCC, plus pessimistic read locks where OCC would likely abort:
//!
//! - **Temperature** ([`temperature`]): an approximate counter of read-verification failures per
//!   page of records (or per record), reset lazily each epoch. A record whose temperature reaches
//!   the threshold `H` is *hot*.
//! - **Read phase** (Algorithm 1 `read` / `read_write`): before reading a hot record, or one in
//!   the retrospective lock list (RLL), the transaction locks it (read mode; write mode for a
//!   read-for-update or when the RLL says so), after first locking every RLL entry ordered before
//!   it ([`acquire`]). Then it reads optimistically exactly as Silo does (TID seqlock).
//! - **Canonical mode** ([`acquire`]): locks are taken in one global order (record address).
//!   Taking a lock ordered before a held one first releases the held ones from there on (they are
//!   not re-taken unless asked again); this keeps every *waiting* request canonical, so waits
//!   cannot form a cycle. If more than [`acquire::RESTORE_LIMIT`] locks would be released, the
//!   lock is tried instead (non-canonical: never wait); a failed try skips a read lock and aborts a
//!   write lock.
//! - **Commit** ([`commit`]): Silo's, with the write locks taken through the same canonical path
//!   (the write set sorted by address), then each written record's TID word marked locked, a
//!   `SeqCst` fence, the epoch, verification of *every* read (locked or not; MOCC 3.3.4), and
//!   install with a new TID. A verification failure heats the record's temperature.
//! - **Abort** ([`rll`]): releases every lock, withdraws a queued request, and builds the RLL
//!   from the write set (write mode) and the reads that were hot or failed verification (read
//!   mode), used by the retry (`AttemptStart::retry`).
//!
//! # Two words per record
//!
//! A record carries a [`RecordLock`] (reader/writer, MOCC's pessimistic locks; [`RwLock`] or
//! [`MqlLock`]) and Silo's [`TidWord`] (version + install bit). The TID's lock bit is set only by
//! the holder of the write lock, only during commit between locking and install, and never across
//! a wait; so optimistic readers that find it set (`Pending`) wait only for a committer that no
//! longer waits for anything, and a write lock held from the read phase never blocks them.
//!
//! Invariants: a record's TID grows; a TID lock bit is set only by the record's write-lock holder;
//! a request that waits is canonical (every lock its worker holds is ordered before it).

pub mod acquire;
pub mod commit;
pub mod lock;
pub mod mql;
pub mod rll;
pub mod temperature;
#[cfg(test)]
mod tests;

pub use lock::{LockMode, RecordLock, Request, RwLock};
pub use mql::MqlLock;

#[cfg(test)]
use super::mutants::Mutant;
use super::silo::TidWord;
use super::silo::epoch::EpochThread;
use super::{Abort, OpResult, Protocol, ProtocolOptions, ReadSet, WriteKind, WriteSet};
use crate::protocol::MoccTemperature;
use crate::protocol::silo::TidCell;
use crate::random::FastRng;
use crate::storage::Record;
use std::task::Poll;
use std::time::Duration;
use temperature::{PageTemperatures, TempCell};

/// How many times a read retries a torn copy before yielding to the executor.
const READ_RETRIES: usize = 8;

/// Per-record metadata: Silo's TID word, the record lock, and the per-record temperature (unused
/// with per-page temperature).
#[derive(Debug, Default)]
pub struct MoccMeta<L> {
    /// Version and install bit (Silo).
    pub tid: TidCell,
    /// Pessimistic reader/writer lock.
    pub lock: L,
    /// Per-record temperature.
    pub temp: TempCell,
}

type Rec<'db, L> = Record<'db, MoccMeta<L>>;

/// The MOCC protocol over record lock `L`.
pub struct Mocc<L: RecordLock> {
    threshold: u32,
    per_record: bool,
    pages: PageTemperatures,
    queue: L::Queue,
    epochs: EpochThread,
    /// Mutation testing: the deliberate bug this instance runs with (`protocol::mutants`).
    #[cfg(test)]
    mutant: Mutant,
}

impl<L: RecordLock> Mocc<L> {
    /// MOCC for `opts.threads` workers; starts the epoch thread (stopped on drop).
    pub fn new(opts: &ProtocolOptions) -> Self {
        Mocc {
            threshold: opts.mocc.threshold,
            per_record: opts.mocc.temperature == MoccTemperature::Record,
            pages: PageTemperatures::default(),
            queue: L::queue(opts.threads.max(1)),
            epochs: EpochThread::start(opts.threads, Duration::from_millis(opts.silo_epoch_ms)),
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    /// The same protocol with a deliberate bug (`protocol::mutants`).
    #[cfg(test)]
    pub(crate) fn with_mutant(mut self, mutant: Mutant) -> Self {
        self.mutant = mutant;
        self
    }

    /// The temperature cell of `rec`.
    pub fn temp_cell<'a>(&'a self, rec: &Rec<'a, L>) -> &'a TempCell {
        if self.per_record {
            &rec.meta().temp
        } else {
            self.pages.cell(rec.order_key())
        }
    }

    fn is_hot(&self, w: &MoccWorker<'_, L>, rec: &Rec<'_, L>) -> bool {
        self.temp_cell(rec).get(w.epoch) >= self.threshold
    }

    /// The shared queue storage of the record locks.
    pub fn queue(&self) -> &L::Queue {
        &self.queue
    }
}

/// A lock in the current lock list (CLL).
struct Held<'db, L> {
    rec: Rec<'db, L>,
    mode: LockMode,
}

/// An entry of the retrospective lock list.
struct Planned<'db, L> {
    rec: Rec<'db, L>,
    mode: LockMode,
    /// Already taken (or skipped) in this attempt.
    done: bool,
}

/// A request left in a lock, polled on the next call.
struct Waiting<'db, L> {
    rec: Rec<'db, L>,
    mode: LockMode,
    ticket: u32,
    polls: u32,
}

/// A MOCC worker's state.
pub struct MoccWorker<'db, L: RecordLock> {
    id: usize,
    rng: FastRng,
    /// Epoch seen at begin (temperature reads).
    epoch: u32,
    reads: ReadSet<'db, MoccMeta<L>, TidWord>,
    writes: WriteSet<'db, MoccMeta<L>, TidWord>,
    /// Current lock list, sorted by record address.
    cll: Vec<Held<'db, L>>,
    /// Retrospective lock list, sorted by record address.
    rll: Vec<Planned<'db, L>>,
    /// The outstanding lock request, if an operation returned `Pending` while queued.
    waiting: Option<Waiting<'db, L>>,
    /// The lock decision of the operation in progress (record address, mode), so a re-polled
    /// operation keeps it even if the temperature changed meanwhile.
    op: Option<(usize, Option<LockMode>)>,
    /// The record whose verification failed in the last commit attempt.
    failed: Option<usize>,
    /// Commit progress: write set sorted; first `locked` write-locked; first `marked` TID-marked.
    sorted: bool,
    locked: usize,
    marked: usize,
    last_tid: TidWord,
}

impl<'db, L: RecordLock> MoccWorker<'db, L> {
    /// Whether this worker holds `rec`'s lock in `mode` or stronger (tests, diagnostics).
    pub fn holds(&self, rec: &Rec<'db, L>, mode: LockMode) -> bool {
        self.cll
            .iter()
            .any(|h| h.rec.order_key() == rec.order_key() && h.mode >= mode)
    }

    /// The retrospective lock list: record ids and modes, in lock order.
    pub fn rll(&self) -> Vec<(crate::storage::RecordId, LockMode)> {
        self.rll.iter().map(|p| (p.rec.rid, p.mode)).collect()
    }
}

impl<L: RecordLock> Mocc<L> {
    fn read_impl<'db>(
        &self,
        w: &mut MoccWorker<'db, L>,
        rec: Rec<'db, L>,
        out: &mut [u8],
        want: LockMode,
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        let key = rec.order_key();
        let lock = match w.op {
            Some((k, m)) if k == key => m,
            _ => {
                let planned = w
                    .rll
                    .iter()
                    .find(|p| p.rec.order_key() == key)
                    .map(|p| p.mode);
                let m = (planned.is_some() || self.is_hot(w, &rec))
                    .then(|| planned.map_or(want, |p| p.max(want)));
                w.op = Some((key, m));
                m
            }
        };
        if let Some(mode) = lock {
            match self.lock_for_access(w, rec, mode) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(why)) => {
                    w.op = None;
                    return Poll::Ready(Err(why));
                }
                Poll::Ready(Ok(())) => {}
            }
        }
        match rec
            .meta()
            .tid
            .read_consistent(rec.payload, out, READ_RETRIES)
        {
            Some(seen) => {
                w.reads.push(rec, seen);
                w.op = None;
                Poll::Ready(Ok(()))
            }
            // A committer is installing this record and waits for nothing: wait for it.
            None => Poll::Pending,
        }
    }
}

impl<L: RecordLock> Protocol for Mocc<L> {
    type RecordMeta = MoccMeta<L>;
    type Worker<'db> = MoccWorker<'db, L>;

    fn new_worker<'db>(&'db self, id: usize) -> MoccWorker<'db, L> {
        MoccWorker {
            id,
            rng: FastRng::for_worker(0x6d6f_6363, id),
            epoch: 0,
            reads: ReadSet::default(),
            writes: WriteSet::default(),
            cll: Vec::with_capacity(64),
            rll: Vec::with_capacity(64),
            waiting: None,
            op: None,
            failed: None,
            sorted: false,
            locked: 0,
            marked: 0,
            last_tid: TidWord::default(),
        }
    }

    fn begin(&self, w: &mut MoccWorker<'_, L>, start: super::AttemptStart) {
        debug_assert!(w.cll.is_empty() && w.waiting.is_none());
        if start.retry {
            for p in &mut w.rll {
                p.done = false;
            }
        } else {
            w.rll.clear();
        }
        w.reads.clear();
        w.writes.clear();
        w.op = None;
        w.failed = None;
        w.sorted = false;
        w.locked = 0;
        w.marked = 0;
        let epochs = self.epochs.epochs();
        w.epoch = epochs.global();
        epochs.observe(w.id, w.epoch);
    }

    fn read<'db>(&self, w: &mut MoccWorker<'db, L>, rec: Rec<'db, L>, out: &mut [u8]) -> OpResult {
        self.read_impl(w, rec, out, LockMode::Read)
    }

    /// Silo's seqlock copy through the TID word, with none of MOCC's pessimism: no record lock
    /// (hot or in the RLL), no read-set entry, no temperature. The pessimistic lock exists to keep
    /// a read from failing verification; a read that is never verified has nothing to protect, and
    /// taking it would only block writers. A set install bit means a committer past all its lock
    /// waits is installing (module docs): wait for it, as `read` does. `op` and `waiting` are left
    /// alone: they belong to a `read` whose lock request is outstanding, which this cannot
    /// interleave with (an operation is re-polled until it completes).
    fn read_committed<'db>(
        &self,
        w: &mut MoccWorker<'db, L>,
        rec: Rec<'db, L>,
        out: &mut [u8],
    ) -> OpResult {
        debug_assert!(w.waiting.is_none(), "a lock request is still outstanding");
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        match rec
            .meta()
            .tid
            .read_consistent(rec.payload, out, READ_RETRIES)
        {
            Some(_) => Poll::Ready(Ok(())),
            None => Poll::Pending,
        }
    }

    fn read_for_update<'db>(
        &self,
        w: &mut MoccWorker<'db, L>,
        rec: Rec<'db, L>,
        out: &mut [u8],
    ) -> OpResult {
        self.read_impl(w, rec, out, LockMode::Write)
    }

    fn write<'db>(
        &self,
        w: &mut MoccWorker<'db, L>,
        rec: Rec<'db, L>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        w.writes.put(rec, kind, data, TidWord::default());
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut MoccWorker<'_, L>) -> OpResult {
        self.commit_impl(w)
    }

    fn abort(&self, w: &mut MoccWorker<'_, L>, why: Abort) {
        self.abort_impl(w, why);
    }

    fn install_log<'w>(&self, w: &'w mut MoccWorker<'_, L>) -> &'w mut crate::protocol::InstallLog {
        w.writes.install_log()
    }
}
