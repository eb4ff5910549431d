//! Cicada (Lim et al., SIGMOD 2017) as CCBench runs it (CCBench sections 2, 3 and 5), on the
//! shared version storage (`storage::versions`).
//!
//! Cicada is multi-version timestamp ordering validated optimistically:
//!
//! - **Begin.** Draw a timestamp `ts` from the worker's own clock (`clock.rs`: loosely
//!   synchronised per-worker clocks, no shared counter; one-sided synchronisation off, as CCBench
//!   ran it) and register with the watermark. The transaction is serialised at `ts`.
//! - **Read.** The version with the largest write timestamp `<= ts`, remembered with that
//!   timestamp in the read set. Nothing shared is written (unlike MVTO, reads are invisible until
//!   validation). A record held by a committer whose inline version is visible at `ts` may be
//!   getting a version `ts` must see: wait (`Pending`).
//! - **Write.** Buffered. Writes always create the newest version (CCBench's
//!   `WRITE_LATEST_ONLY`; see "Deviations").
//! - **Commit** (validation, then the write phase):
//!   1. *PrecheckVersionConsistency*: before touching anything shared, abort if a read's version
//!      is no longer the one visible at `ts`, or a write's record already carries a newer version
//!      or a younger read.
//!   2. *SortWriteSetByContention*: order the write set by the records' newest write timestamps,
//!      most recent first, so the records most likely to fail fail before others are locked
//!      (off: record order).
//!   3. Lock the write set (Cicada's pending versions; a busy record aborts, `LockConflict`, so
//!      the order cannot deadlock). A record whose newest version is newer than `ts` aborts
//!      (`TimestampOrder`).
//!   4. Raise every read record's read timestamp `rts` to `ts`, writing only where it is below
//!      (load, compare, `fetch_max`: the paper's and CCBench's conditional update, so readers
//!      of a hot record keep its cache line shared; `mv_common::raise_read_timestamp`).
//!   5. Validate every read: the version visible at `ts` must still be the one read. This is
//!      CCBench's fix: the original validation only checked timestamps and let a read of a
//!      version that a newer but still older-than-`ts` version had replaced commit. A read
//!      record that another committer holds fails (its pending version may be visible at `ts`).
//!   6. Check every write: no transaction younger than `ts` read the version it replaces
//!      (`rts <= ts`, `TimestampOrder`).
//!   7. Install: the old inline version goes into the chain, the new one inline, the chain is
//!      collected below the watermark (RapidGC), the record unlocked with `ts`.
//!
//! A worker whose last five transactions committed omits steps 1 and 2 (the Cicada paper: they
//! cost without contention and pay only with it; CCBench's `CONTINUING_COMMIT_THRESHOLD`, 5) and
//! locks in the order the program wrote; its next abort turns them back on. CCBench counts the
//! consecutive commits per record, not per worker (docs/ARCHITECTURE.md, "Deviations").
//!
//! Why a read and a concurrent older writer cannot miss each other: the reader raises `rts`
//! (step 4) and then loads the record word (step 5); the writer locks (step 3, changing the word)
//! and then loads `rts` (step 6), all `SeqCst`. If the writer's `rts` load misses the raise, its
//! lock precedes the reader's load, which then sees the lock or the new version and fails.
//! Together with "writes create the newest version", every committed transaction saw exactly the
//! versions a serial execution in timestamp order would have shown it.
//!
//! **The six optimisations** (`CicadaOptions`, flags `--cicada-no-*`; all on by default as in
//! the paper): EarlyAbort (a write to a record that already has a newer version or a younger
//! read aborts at the write), BestEffortInlining (the newest version lives in the record; off:
//! every version, the newest too, is a chain node that reads walk, so each write also fills a
//! node and each read follows a pointer), PrecheckVersionConsistency (step 1),
//! SortWriteSetByContention (step 2), their adaptive omission (`--cicada-no-adaptive-skip`),
//! RapidGC (the shared `--gc-interval-us`, Cicada's 10 us by
//! default) and AdaptiveBackoff (the executor's backoff, on for Cicada unless turned off).
//!
//! **Deviations.** Cicada lets a blind write insert a version between two older ones; here a
//! write must create the newest version (CCBench's `WRITE_LATEST_ONLY` switch), as in MVTO,
//! because the shared storage keeps versions newest first with the newest inline and the checker
//! orders versions by install. Cicada's read-only snapshot mode and its inline-version promotion
//! are not built; read-only transactions validate like the others.
//!
//! Record metadata: the word (`LOCK | write timestamp of the newest version`, as SI's), the
//! chain, and `rts`.

mod clock;
#[cfg(test)]
mod tests;

pub use clock::{TimeSource, WORKER_BITS, WorkerClock};

#[cfg(test)]
use super::mutants::Mutant;
use super::mv_common::{
    LOCK, MvState, WorkerVersions, install_write, lock_write_set, mv_record, push_version,
    raise_read_timestamp, retry, snapshot_read, unlock_write_set,
};
use super::parts::{MultiVersion, MultiVersionPart, RunHooks, RunHooksPart};
use super::{
    Abort, AttemptStart, CICADA_CONTINUING_COMMITS, CicadaOptions, InstallLog, OpResult, Protocol,
    ProtocolOptions, ReadSet, WriteKind, WriteSet,
};
use crate::storage::Record;
use crate::storage::grace::Holds;
use crate::storage::versions::{VersionChain, VersionStore, Watermark};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::task::Poll;

/// Per-record metadata.
#[derive(Default)]
pub struct CicadaMeta {
    /// `LOCK | write timestamp of the newest version`.
    word: AtomicU64,
    /// Older versions (with BestEffortInlining off: every version, newest first).
    chain: VersionChain<()>,
    /// The largest timestamp of a committing transaction that read the record.
    rts: AtomicU64,
}

mv_record!(CicadaMeta, ());

/// Cicada: the time source of the worker clocks, the watermark and the version store.
pub struct Cicada {
    time: TimeSource,
    mv: MvState<()>,
    opts: CicadaOptions,
    #[cfg(test)]
    mutant: Mutant,
}

impl Cicada {
    /// Cicada for `opts.threads` workers with `opts.cicada`'s optimisations.
    pub fn new(opts: &ProtocolOptions) -> Self {
        Cicada {
            time: TimeSource::new(),
            mv: MvState::new(opts),
            opts: opts.cicada,
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();
}

/// A Cicada worker's state.
pub struct CicadaWorker<'db> {
    id: usize,
    clock: WorkerClock,
    /// The transaction's timestamp.
    ts: u64,
    /// Reads, with the write timestamp of the version each saw.
    reads: ReadSet<'db, CicadaMeta, u64>,
    /// Buffered writes, with the record word seen when locked.
    writes: WriteSet<'db, CicadaMeta, u64>,
    /// Commit progress: steps 1-2 done.
    prepared: bool,
    /// Transactions committed in a row by this worker (reset by an abort): at
    /// [`CICADA_CONTINUING_COMMITS`] the adaptive skip omits steps 1 and 2.
    continuing_commits: u32,
    /// Commit progress: the first `locked` writes are locked.
    locked: usize,
    /// The worker's pool, scratch and RapidGC queue (which queues records with
    /// BestEffortInlining only: without it the chain holds the newest version too, and only
    /// installs collect it).
    versions: WorkerVersions<'db, CicadaMeta>,
}

impl Cicada {
    /// Copies the version of `rec` visible at `ts` into `out`; returns its write timestamp.
    #[inline]
    fn read_version(
        &self,
        rec: Record<'_, CicadaMeta>,
        ts: u64,
        out: &mut [u8],
    ) -> Poll<Result<u64, Abort>> {
        let meta = rec.meta();
        if self.opts.inlining {
            // SAFETY: `ts` is registered with the watermark (begin), which every collect of
            // this chain uses.
            return unsafe { snapshot_read(rec, ts, out) };
        }
        retry(|| {
            // Acquire: pairs with the committer's Release stores (chain pushes before them).
            let seen = meta.word.load(Ordering::Acquire);
            if seen & LOCK != 0 && seen & !LOCK <= ts {
                return ControlFlow::Break(Poll::Pending);
            }
            // SAFETY: `ts` is registered with the watermark, and with inlining off every collect
            // of this chain passes `u64::MAX` as the inline timestamp (`install`).
            if let Some(v) = unsafe { meta.chain.find_visible(ts) } {
                v.payload().load(out);
                return ControlFlow::Break(Poll::Ready(Ok(v.ts())));
            }
            // An empty chain: the record was never written, its loaded version is inline.
            rec.payload.load(out);
            // Acquire fence: pairs with the committer's Release fence after its lock CASes (step
            // 7), so a copy that read an installed word re-reads a locked (or newer) word.
            fence(Ordering::Acquire);
            // Relaxed: ordered by the fence above.
            if meta.word.load(Ordering::Relaxed) == seen && seen & LOCK == 0 {
                return ControlFlow::Break(Poll::Ready(Ok(seen)));
            }
            ControlFlow::Continue(())
        })
    }

    /// Whether the version of `rec` visible at `ts` is still the one with write timestamp
    /// `read`. `own`: this worker holds the record (it writes it too). A record another
    /// committer holds, with its newest version visible at `ts`, fails: the pending version may be
    /// visible at `ts` too.
    fn still_visible(&self, rec: Record<'_, CicadaMeta>, read: u64, ts: u64, own: bool) -> bool {
        let meta = rec.meta();
        // SeqCst: the reader's half of the argument in the module docs (after the `rts` raise).
        let seen = meta.word.load(Ordering::SeqCst);
        let newest = seen & !LOCK;
        if seen & LOCK != 0 && !own && newest <= ts {
            return false;
        }
        if self.opts.inlining && newest <= ts {
            return newest == read;
        }
        // SAFETY: `ts` is registered with the watermark; with inlining on the newest version is
        // above `ts`, with it off every collect passes `u64::MAX` (`find_visible`'s contract).
        match unsafe { meta.chain.find_visible(ts) } {
            Some(v) => v.ts() == read,
            // Inlining off, never written: the loaded inline version.
            None => !self.opts.inlining && newest == read,
        }
    }

    /// Whether a write to `rec` at `ts` can still create the newest version (EarlyAbort,
    /// PrecheckVersionConsistency): no newer version, no younger read.
    #[inline]
    fn may_write(&self, rec: Record<'_, CicadaMeta>, ts: u64) -> bool {
        let meta = rec.meta();
        // Relaxed (both): a prediction; step 3 and step 6 decide with the orderings they need.
        meta.word.load(Ordering::Relaxed) & !LOCK <= ts && meta.rts.load(Ordering::Relaxed) <= ts
    }

    /// Steps 1 and 2 of the commit (module docs), omitted by the adaptive skip.
    fn prepare(&self, w: &mut CicadaWorker<'_>) -> Result<(), Abort> {
        if self.opts.adaptive_skip && w.continuing_commits >= CICADA_CONTINUING_COMMITS {
            // Locking (step 3) never waits, so the write set's order only decides which record
            // fails first; insertion order is as correct as any.
            return Ok(());
        }
        #[cfg(test)]
        let check_reads = self.mutant != Mutant::CicadaSkipReadValidation;
        #[cfg(not(test))]
        let check_reads = true;
        if self.opts.precheck {
            for (rec, read) in w.reads.iter().filter(|_| check_reads) {
                if !self.still_visible(*rec, *read, w.ts, false) {
                    return Err(Abort::ReadValidation);
                }
            }
            for e in w.writes.entries() {
                if !self.may_write(e.rec, w.ts) {
                    return Err(Abort::TimestampOrder);
                }
            }
        }
        if self.opts.sort_by_contention {
            // The key is read once per entry into its state (which step 3 overwrites): keys read
            // during the sort could change under it, and a sort needs a consistent order.
            for e in w.writes.entries_mut() {
                // Relaxed: a sort key only.
                e.state = e.rec.meta().word.load(Ordering::Relaxed) & !LOCK;
            }
            w.writes.sort_by_key(|e| std::cmp::Reverse(e.state));
        } else {
            w.writes.sort_by_record();
        }
        Ok(())
    }

    /// Step 7 for write `i` (held, validated).
    fn install(&self, w: &mut CicadaWorker<'_>, i: usize, watermark: u64) {
        let ts = w.ts;
        if self.opts.inlining {
            install_write(
                &mut w.writes,
                i,
                &mut w.versions,
                ts,
                |_| (),
                |_| (),
                |chain, pool| {
                    chain.collect(ts, watermark, pool);
                },
            );
            return;
        }
        // Every version, the newest too, is a node; the word never says `LOCK | ts` (a reader
        // at or above `ts` waits for the unlock, one below finds its node either way).
        let rec = w.writes.entries()[i].rec;
        let meta = rec.meta();
        let v = &mut w.versions;
        if meta.chain.is_empty() {
            // The first write: the loaded version becomes a node like every other.
            let old = w.writes.entries()[i].state;
            push_version(
                &meta.chain,
                &mut v.pool,
                &mut v.scratch,
                old,
                rec.payload,
                |_| (),
            );
        }
        // The record keeps a copy inline too (read-committed fallbacks, check mode's seq).
        w.writes.install(i);
        push_version(
            &meta.chain,
            &mut v.pool,
            &mut v.scratch,
            ts,
            rec.payload,
            |_| (),
        );
        meta.chain.collect(u64::MAX, watermark, &mut v.pool);
        // Release: publishes the install.
        meta.word.store(ts, Ordering::Release);
    }
}

impl Protocol for Cicada {
    type RecordMeta = CicadaMeta;
    type Worker<'db> = CicadaWorker<'db>;

    const MULTI_VERSION: Option<MultiVersionPart<Self>> = Some(MultiVersionPart::from_impl());
    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, id: usize) -> CicadaWorker<'db> {
        CicadaWorker {
            id,
            clock: WorkerClock::new(id),
            ts: 0,
            reads: ReadSet::default(),
            writes: WriteSet::default(),
            prepared: false,
            continuing_commits: 0,
            locked: 0,
            versions: self.mv.worker(id),
        }
    }

    fn begin(&self, w: &mut CicadaWorker<'_>, _start: AttemptStart) {
        w.reads.clear();
        w.writes.clear();
        w.prepared = false;
        w.locked = 0;
        self.mv.watermark.enter_at(w.id, self.time.now());
        w.ts = w.clock.next(self.time.now());
        w.versions.last_refresh = self
            .mv
            .watermark
            .maybe_refresh_at(|| self.time.now(), w.versions.last_refresh);
        w.versions.collect_queued(self.mv.watermark.current());
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut CicadaWorker<'db>,
        rec: Record<'db, CicadaMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        #[cfg(test)]
        if self.mutant == Mutant::CicadaReadNewest {
            // The bug: read the newest committed version whatever the timestamp.
            return self.read_version(rec, LOCK - 1, out).map(|r| r.map(|_| ()));
        }
        match self.read_version(rec, w.ts, out) {
            Poll::Ready(Ok(read)) => {
                w.reads.push(rec, read);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The version visible at the transaction's timestamp, neither validated nor protected.
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut CicadaWorker<'db>,
        rec: Record<'db, CicadaMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        self.read_version(rec, w.ts, out).map(|r| r.map(|_| ()))
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut CicadaWorker<'db>,
        rec: Record<'db, CicadaMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        if self.opts.early_abort && !self.may_write(rec, w.ts) {
            return Poll::Ready(Err(Abort::TimestampOrder));
        }
        w.writes.put(rec, kind, data, 0);
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut CicadaWorker<'_>) -> OpResult {
        if !w.prepared {
            if let Err(e) = self.prepare(w) {
                return Poll::Ready(Err(e));
            }
            w.prepared = true;
        }
        // Step 3 (the lock's SeqCst orders it before the `rts` loads of step 6: module docs).
        let ts = w.ts;
        let admitted = lock_write_set(&mut w.writes, &mut w.locked, |_, seen| {
            if seen > ts {
                return Err(Abort::TimestampOrder);
            }
            Ok(())
        });
        if let Err(why) = admitted {
            return Poll::Ready(Err(why));
        }
        // Step 4.
        #[cfg(test)]
        let raise = self.mutant != Mutant::CicadaSkipReadTimestamp;
        #[cfg(not(test))]
        let raise = true;
        if raise {
            for (rec, _) in w.reads.iter() {
                // Loads first and raises only when below `ts` (SeqCst both: the argument in the
                // module docs, `raise_read_timestamp`).
                raise_read_timestamp(&rec.meta().rts, w.ts);
            }
        }
        // Step 5.
        #[cfg(test)]
        let validate = self.mutant != Mutant::CicadaSkipReadValidation;
        #[cfg(not(test))]
        let validate = true;
        if validate {
            for (rec, read) in w.reads.iter() {
                let own = w.writes.position(rec).is_some();
                if !self.still_visible(*rec, *read, w.ts, own) {
                    return Poll::Ready(Err(Abort::ReadValidation));
                }
            }
        }
        // Step 6.
        for e in w.writes.entries() {
            // SeqCst: the argument in the module docs.
            if e.rec.meta().rts.load(Ordering::SeqCst) > w.ts {
                return Poll::Ready(Err(Abort::TimestampOrder));
            }
        }
        // Step 7. Release fence, the seqlock writer's half, for BestEffortInlining off: the lock
        // CASes above are ordered before the installs' payload stores (pairs with the Acquire
        // fence of the inline read); with it on, `install_write` fences after each record's
        // `LOCK | ts` as well.
        fence(Ordering::Release);
        let watermark = self.mv.watermark.current();
        for i in 0..w.writes.len() {
            self.install(w, i, watermark);
        }
        w.locked = 0;
        w.continuing_commits = w.continuing_commits.saturating_add(1);
        w.clock.settle();
        self.mv.watermark.leave(w.id);
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut CicadaWorker<'_>, _why: Abort) {
        unlock_write_set(&w.writes, &mut w.locked, |_| ());
        w.reads.clear();
        w.writes.clear();
        w.prepared = false;
        w.continuing_commits = 0;
        w.clock.boost();
        self.mv.watermark.leave(w.id);
    }

    fn install_log<'w>(&self, w: &'w mut CicadaWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl RunHooks for Cicada {
    fn adaptive_backoff(&self) -> bool {
        self.opts.backoff
    }
}

impl MultiVersion for Cicada {
    type VersionMeta = ();

    fn version_store(&self) -> &VersionStore<()> {
        &self.mv.versions
    }

    fn watermark(&self) -> &Watermark {
        &self.mv.watermark
    }

    fn snapshot_commit_stamp(&self, w: &CicadaWorker<'_>) -> u64 {
        w.ts
    }

    fn grace_holds<'w>(&self, w: &'w mut CicadaWorker<'_>) -> &'w mut Holds {
        w.versions.gc.holds()
    }
}
