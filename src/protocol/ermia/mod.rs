//! ERMIA (Kim et al., SIGMOD 2016) as CCBench runs it: snapshot isolation made serializable by
//! the serial safety net (SSN; Wang et al., VLDB Journal 2017), on the shared version storage.
//!
//! Reads, writes and installs are SI's (`protocol::si`: snapshot reads, first committer wins,
//! the old inline version pushed into the chain). SSN adds, for each committing transaction `T`
//! with commit stamp `c(T)`:
//!
//! - `π(T)` (its sstamp): the smallest sstamp of the versions `T` read that were overwritten by a
//!   transaction that committed before `T` (`c(U) < c(T)`), and `c(T)` itself;
//! - `η(T)` (its pstamp): the largest commit stamp of a transaction that must precede `T`: the
//!   writers of the versions `T` read and overwrote, and the committed readers of the versions
//!   `T` overwrites;
//!
//! and aborts `T` when `π(T) <= η(T)` (the exclusion window: a dependency cycle through `T`
//! would need a predecessor stamped after a successor). After committing, `T` stamps what it
//! read with `c(T)` (pstamp) and the versions it overwrote with `π(T)` (sstamp).
//!
//! # Parallel commit
//!
//! Committers do not serialise: each learns of the others through records and the transaction
//! table (`protocol::txn_table`), and waits (`Pending`) only for a transaction with a smaller
//! commit stamp
//! whose outcome it needs, so waits cannot form a cycle.
//!
//! - A reader `R` registers in the record's reader bitmap when it reads (cleared when it
//!   finishes, after raising the record's pstamp to `c(R)` if it committed).
//! - An overwriter `U` marks each record it locked with its marker (`table::Marker`) in the record's
//!   sstamp word, before drawing `c(U)`; then scans the readers of each record it overwrites.
//! - `R` and `U` each store (bitmap bit; marker) before loading the other's word (marker;
//!   bitmap), all `SeqCst`, so at least one sees the other (Dekker). If `c(R) < c(U)`, `U` needs
//!   `R`: `R` registered before drawing `c(R)`, so `U`'s scan after drawing `c(U)` finds it (or
//!   finds it gone, its pstamp already raised). If `c(U) < c(R)`, `R` needs `U`: `U` marked
//!   before drawing `c(U)`, so `R` finds the marker (or `U`'s installed version, whose chain node
//!   carries `π(U)` and `c(U)`).
//! - A transaction about to draw its stamp first says so in the table (`Committing` with stamp
//!   0); an observer that finds it so waits, and one that finds it still `Active` knows its stamp
//!   will be larger than the observer's own.
//!
//! Record-level simplifications (all conservative: they can only add aborts, never miss an
//! edge): the reader bitmap and the pstamp are per record, not per version, so an overwriter
//! also counts readers of older versions of the record.
//!
//! # Workers
//!
//! A record's reader registry names each worker by one bit. [`Ermia`] keeps one word (at most
//! [`NARROW_ERMIA_WORKERS`] workers, the layout every earlier result used); [`ErmiaWide`] keeps
//! [`WIDE_WORDS`] (at most [`MAX_ERMIA_WORKERS`], for the coroutine executor's threads x Q), chosen
//! once per run by the runner, so runs with few workers pay nothing for the wide one. The Dekker
//! argument above holds word by word: a reader stores into its own word and an overwriter loads
//! every word, each access `SeqCst` and so in the one total order; the overwriter's loads need not
//! form a snapshot of the whole set, only each see its reader.

#[cfg(test)]
mod tests;

#[cfg(test)]
use super::mutants::Mutant;
use super::mv_common::{
    LOCK, MvState, WorkerVersions, install_write, lock_write_set, mv_record, retry, snapshot_read,
    snapshot_read_skipping, unlock_write_set,
};
use super::parts::{MultiVersion, MultiVersionPart};
use super::txn_table::{Marker, Phase, Seen, TxnTable};
use super::worker_set::AtomicWorkerSet;
use super::{
    Abort, AttemptStart, ErmiaOptions, InstallLog, OpResult, Protocol, ProtocolOptions, ReadSet,
    WriteKind, WriteSet,
};
use crate::storage::Record;
use crate::storage::grace::Holds;
use crate::storage::versions::{VersionChain, VersionStore, Watermark};
use crossbeam_utils::CachePadded;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

/// Words of the wide reader registry ([`ErmiaWide`]).
pub const WIDE_WORDS: usize = 16;
/// Most workers [`Ermia`] runs with: its reader registry is one word per record.
pub const NARROW_ERMIA_WORKERS: usize = 64;
/// Most workers ERMIA runs with ([`ErmiaWide`]; the coroutine executor's limit too; the
/// transaction table's markers name as many).
pub const MAX_ERMIA_WORKERS: usize = 64 * WIDE_WORDS;
const _: () = assert!(MAX_ERMIA_WORKERS <= super::txn_table::MAX_TABLE_WORKERS);

/// Whether `workers` need [`ErmiaWide`].
pub fn needs_wide_readers(workers: usize) -> bool {
    workers > NARROW_ERMIA_WORKERS
}

/// ERMIA with one-word reader registries (up to 64 workers).
pub type Ermia = ErmiaWith<1>;
/// ERMIA with [`WIDE_WORDS`]-word reader registries (up to [`MAX_ERMIA_WORKERS`] workers).
pub type ErmiaWide = ErmiaWith<WIDE_WORDS>;
/// [`Ermia`]'s per-record metadata.
pub type ErmiaMeta = ErmiaMetaWith<1>;

/// A read-set entry's state once the same transaction overwrote the record (read-set pruning):
/// no version has this timestamp (the clock never reaches it).
const PRUNED: u64 = u64::MAX;

/// Per-record metadata, with a `WORDS`-word reader registry.
#[derive(Default)]
pub struct ErmiaMetaWith<const WORDS: usize> {
    /// `LOCK | timestamp of the inline version` (as SI's word).
    word: AtomicU64,
    /// Older versions, each with the stamps its overwriter left.
    chain: VersionChain<Stamps>,
    /// The largest commit stamp of a committed reader or writer of the record.
    pstamp: AtomicU64,
    /// 0, or the [`Marker`] of the transaction overwriting the inline version.
    sstamp: AtomicU64,
    /// Workers that read the record in their current transaction (bit per worker).
    readers: AtomicWorkerSet<WORDS>,
}

mv_record!(ErmiaMetaWith<WORDS>, Stamps, WORDS);

/// What an overwriter leaves on the version it overwrote.
#[derive(Default)]
pub struct Stamps {
    /// `π` of the overwriter.
    sstamp: AtomicU64,
    /// Commit stamp of the overwriter.
    successor: AtomicU64,
}

/// ERMIA: the commit clock, the transaction table, the watermark and the version store; records
/// name their readers in `WORDS` words ([`Ermia`], [`ErmiaWide`]).
pub struct ErmiaWith<const WORDS: usize> {
    /// Snapshots and commit stamps (a global counter, as SI demands).
    clock: CachePadded<AtomicU64>,
    table: TxnTable,
    mv: MvState<Stamps>,
    opts: ErmiaOptions,
    /// Readers skip in-flight versions (`MvOptions::skip_in_flight`).
    skip_in_flight: bool,
    #[cfg(test)]
    mutant: Mutant,
}

/// Too many workers for ERMIA's reader bitmaps.
#[derive(Debug, Clone, thiserror::Error)]
#[error("ermia with {words}-word reader registries supports at most {} workers, asked for {workers}", 64 * words)]
pub struct TooManyWorkers {
    /// Workers asked for.
    pub workers: usize,
    /// Words per reader registry.
    pub words: usize,
}

impl<const WORDS: usize> ErmiaWith<WORDS> {
    /// ERMIA for `opts.threads` workers (at most 64 x `WORDS`).
    pub fn new(opts: &ProtocolOptions) -> Result<Self, TooManyWorkers> {
        if opts.threads > 64 * WORDS {
            return Err(TooManyWorkers {
                workers: opts.threads,
                words: WORDS,
            });
        }
        Ok(ErmiaWith {
            clock: CachePadded::new(AtomicU64::new(0)),
            table: TxnTable::new(opts.threads),
            mv: MvState::new(opts),
            opts: opts.ermia,
            skip_in_flight: opts.mv.skip_in_flight,
            #[cfg(test)]
            mutant: Mutant::None,
        })
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();
}

/// An ERMIA worker's state.
pub struct ErmiaWorker<'db, const WORDS: usize> {
    /// This worker's id: its entry in the transaction table and its bit in reader registries.
    id: usize,
    /// The serial of the current transaction (its markers name it).
    serial: u64,
    snapshot: u64,
    /// Records read, with the timestamp of the version read (`PRUNED` once overwritten by
    /// this transaction).
    reads: ReadSet<'db, ErmiaMetaWith<WORDS>, u64>,
    /// The early exclusion check's running `π` (`u64::MAX` until a read version is known to be
    /// overwritten) and `η`, from what the read phase saw (`ErmiaOptions::early_exclusion`).
    early_pi: u64,
    early_eta: u64,
    /// Buffered writes, with the record word seen when locked.
    writes: WriteSet<'db, ErmiaMetaWith<WORDS>, u64>,
    /// Commit progress: the first `locked` writes are locked and marked.
    locked: usize,
    /// The commit stamp, 0 until drawn.
    stamp: u64,
    versions: WorkerVersions<'db, ErmiaMetaWith<WORDS>>,
}

impl<const WORDS: usize> ErmiaWith<WORDS> {
    /// `π` contribution of the version (timestamp `ts`) of `rec` that `w` read: the sstamp of
    /// its overwriter if that committed before `c`; `Pending` while an overwriter that may have
    /// a smaller stamp has not decided.
    fn overwriter_pi(
        &self,
        w: &ErmiaWorker<'_, WORDS>,
        rec: Record<'_, ErmiaMetaWith<WORDS>>,
        ts: u64,
        c: u64,
    ) -> Poll<Option<u64>> {
        let meta = rec.meta();
        retry(|| {
            // SeqCst (the three loads): the Dekker argument in the module docs.
            let before = meta.word.load(Ordering::SeqCst);
            if before & !LOCK != ts {
                // Overwritten and installed: the chain node carries the overwriter's stamps.
                // SAFETY: `w.snapshot` is registered with the watermark every collect uses, and
                // `ts` is the version `w` read at that snapshot (the newest at or below it), so
                // collects keep it; the inline version is newer (its timestamp is not `ts`).
                let v = unsafe { meta.chain.find_visible(ts) };
                let v = v.filter(|v| v.ts() == ts).unwrap_or_else(|| {
                    panic!("ERMIA: version {ts} of record {:?} is gone", rec.rid)
                });
                // Relaxed: written before the node's publication, which the walk acquired.
                let successor = v.meta.successor.load(Ordering::Relaxed);
                let pi = (successor < c).then(|| v.meta.sstamp.load(Ordering::Relaxed));
                return ControlFlow::Break(Poll::Ready(pi));
            }
            let sstamp = meta.sstamp.load(Ordering::SeqCst);
            if meta.word.load(Ordering::SeqCst) != before {
                return ControlFlow::Continue(());
            }
            let Some(marker) = Marker::decode(sstamp) else {
                return ControlFlow::Break(Poll::Ready(None));
            };
            if marker.worker() == w.id {
                return ControlFlow::Break(Poll::Ready(None)); // our own overwrite
            }
            match self.table.seen(marker) {
                Seen::Gone => ControlFlow::Continue(()),
                Seen::Now(state, pi) => ControlFlow::Break(match state.phase() {
                    Phase::Active | Phase::Aborted => Poll::Ready(None),
                    Phase::Committing if state.stamp() == 0 || state.stamp() < c => Poll::Pending,
                    Phase::Committing => Poll::Ready(None),
                    Phase::Committed => Poll::Ready((state.stamp() < c).then_some(pi)),
                }),
            }
        })
    }

    /// `η` contribution of the committed readers of `rec`, which `w` overwrites; `Pending` while
    /// a reader that may have a smaller stamp has not decided.
    fn readers_eta(
        &self,
        w: &ErmiaWorker<'_, WORDS>,
        rec: Record<'_, ErmiaMetaWith<WORDS>>,
        c: u64,
    ) -> Poll<u64> {
        let meta = rec.meta();
        let mut eta = 0;
        // SeqCst: the Dekker argument in the module docs.
        let readers = meta.readers.load(Ordering::SeqCst).without(w.id);
        // Word by word with a bit loop: with one word ([`Ermia`]) it is exactly the loop of the
        // one-word bitmap this registry replaced, on the path of every record a commit overwrites.
        for (k, mut bits) in readers.words().into_iter().enumerate() {
            while bits != 0 {
                let r = 64 * k + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let state = self.table.state_of(r);
                match state.phase() {
                    Phase::Committing if state.stamp() == 0 || state.stamp() < c => {
                        return Poll::Pending;
                    }
                    Phase::Committed if state.stamp() < c => eta = eta.max(state.stamp()),
                    _ => {}
                }
            }
        }
        // SeqCst: after the bitmap; a reader gone from it raised the pstamp before leaving.
        Poll::Ready(eta.max(meta.pstamp.load(Ordering::SeqCst)))
    }

    /// Clears this worker's reader bits and, when it committed with `stamp`, raises the pstamp of
    /// what it read first.
    fn leave_readers(&self, w: &ErmiaWorker<'_, WORDS>, stamp: Option<u64>) {
        // A pruned read left the registry at the write; the install raises the pstamp.
        for (rec, _) in w.reads.iter().filter(|(_, ts)| *ts != PRUNED) {
            let meta = rec.meta();
            if let Some(c) = stamp {
                // SeqCst: before the bit's clearing, which overwriters load before the pstamp.
                meta.pstamp.fetch_max(c, Ordering::SeqCst);
            }
            // SeqCst: see above.
            meta.readers.remove(w.id, Ordering::SeqCst);
        }
    }

    /// The early exclusion check after a read of the version with timestamp `ts` of `rec`
    /// (`ErmiaOptions::early_exclusion`, CCBench's `verify_exclusion_or_abort`): the version's
    /// writer precedes the transaction (`η`), and an overwriter that already installed (so
    /// committed, with a stamp below the one this transaction will draw) bounds `π` with its
    /// own. Both are values commit computes too (`π` only falls and `η` only rises from here),
    /// so an early abort is one commit would have taken.
    fn early_check_read(
        &self,
        w: &mut ErmiaWorker<'_, WORDS>,
        rec: Record<'_, ErmiaMetaWith<WORDS>>,
        ts: u64,
    ) -> Result<(), Abort> {
        w.early_eta = w.early_eta.max(ts);
        let meta = rec.meta();
        // Acquire: pairs with the installer's Release stores; a word naming another version
        // means the push of the node for `ts`, and the stamps in it, are visible.
        if meta.word.load(Ordering::Acquire) & !LOCK != ts {
            // SAFETY: as in `overwriter_pi`: `w.snapshot` is registered with the watermark every
            // collect uses, `ts` is the newest version at or below it (so collects keep it), and
            // the inline version is newer.
            if let Some(v) = unsafe { meta.chain.find_visible(ts) }.filter(|v| v.ts() == ts) {
                // Relaxed: written before the node's publication, which the walk acquired.
                w.early_pi = w.early_pi.min(v.meta.sstamp.load(Ordering::Relaxed));
            }
        }
        if w.early_pi <= w.early_eta {
            return Err(Abort::SsnExclusion);
        }
        Ok(())
    }

    /// Undoes what commit's first phase did to the first `w.locked` writes.
    fn release_writes(&self, w: &mut ErmiaWorker<'_, WORDS>) {
        unlock_write_set(&w.writes, &mut w.locked, |meta| {
            // SeqCst: the marker goes before the lock (observers re-check the word).
            meta.sstamp.store(0, Ordering::SeqCst);
        });
    }
}

impl<const WORDS: usize> Protocol for ErmiaWith<WORDS> {
    type RecordMeta = ErmiaMetaWith<WORDS>;
    type Worker<'db> = ErmiaWorker<'db, WORDS>;

    const MULTI_VERSION: Option<MultiVersionPart<Self>> = Some(MultiVersionPart::from_impl());

    fn new_worker<'db>(&'db self, id: usize) -> ErmiaWorker<'db, WORDS> {
        ErmiaWorker {
            id,
            serial: 0,
            snapshot: 0,
            reads: ReadSet::default(),
            early_pi: u64::MAX,
            early_eta: 0,
            writes: WriteSet::default(),
            locked: 0,
            stamp: 0,
            versions: self.mv.worker(id),
        }
    }

    fn begin(&self, w: &mut ErmiaWorker<'_, WORDS>, _start: AttemptStart) {
        w.reads.clear();
        w.writes.clear();
        w.early_pi = u64::MAX;
        w.early_eta = 0;
        w.locked = 0;
        w.stamp = 0;
        w.serial = self.table.begin(w.id);
        w.snapshot = self.mv.watermark.enter(w.id, &self.clock);
        w.versions.start_attempt(&self.mv.watermark, &self.clock);
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut ErmiaWorker<'db, WORDS>,
        rec: Record<'db, ErmiaMetaWith<WORDS>>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        let meta = rec.meta();
        // Relaxed: our own bit, only we set and clear it.
        if !meta.readers.contains(w.id, Ordering::Relaxed) {
            // SeqCst: the Dekker argument in the module docs.
            meta.readers.insert(w.id, Ordering::SeqCst);
        }
        let snapshot = w.snapshot;
        let read = if self.skip_in_flight {
            // SeqCst: after the reader's snapshot load (`TxnTable::holder_commits_after`).
            let after = || {
                self.table
                    .holder_commits_after(meta.sstamp.load(Ordering::SeqCst), snapshot)
            };
            // SAFETY: `w.snapshot` is registered with the watermark (begin), which every
            // collect of this chain uses.
            unsafe { snapshot_read_skipping(rec, snapshot, out, after) }
        } else {
            // SAFETY: `w.snapshot` is registered with the watermark (begin), which every
            // collect of this chain uses.
            unsafe { snapshot_read(rec, snapshot, out) }
        };
        match read {
            Poll::Ready(Ok(ts)) => {
                w.reads.push(rec, ts);
                if self.opts.early_exclusion {
                    return Poll::Ready(self.early_check_read(w, rec, ts));
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// A snapshot read without the reader registration or the read-set entry: committed data,
    /// not protected by SSN.
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut ErmiaWorker<'db, WORDS>,
        rec: Record<'db, ErmiaMetaWith<WORDS>>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        // SAFETY: as in `read`.
        unsafe { snapshot_read(rec, w.snapshot, out) }.map(|r| r.map(|_| ()))
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut ErmiaWorker<'db, WORDS>,
        rec: Record<'db, ErmiaMetaWith<WORDS>>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        w.writes.put(rec, kind, data, 0);
        if self.opts.prune_overwritten_reads
            && let Some(read) = w.reads.find_mut(&rec)
            && *read != PRUNED
        {
            *read = PRUNED;
            // SeqCst: as every registry access (module docs); the write's own checks at commit
            // (first committer wins, the readers' η) cover what the read protected.
            rec.meta().readers.remove(w.id, Ordering::SeqCst);
        }
        if self.opts.early_exclusion {
            // Acquire: a value to predict with; commit loads it again (SeqCst) to decide.
            let pstamp = rec.meta().pstamp.load(Ordering::Acquire);
            w.early_eta = w.early_eta.max(pstamp);
            if w.early_pi <= w.early_eta {
                return Poll::Ready(Err(Abort::SsnExclusion));
            }
        }
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut ErmiaWorker<'_, WORDS>) -> OpResult {
        if w.stamp == 0 {
            // Lock and mark the write set (first committer wins, as SI).
            if w.locked == 0 {
                w.writes.sort_by_record();
            }
            let (snapshot, marker) = (w.snapshot, Marker::new(w.id, w.serial));
            let admitted = lock_write_set(&mut w.writes, &mut w.locked, |meta, seen| {
                if seen > snapshot {
                    return Err(Abort::WriteWriteConflict);
                }
                // SeqCst: before drawing the stamp (module docs).
                meta.sstamp.store(marker.0, Ordering::SeqCst);
                Ok(())
            });
            if let Err(why) = admitted {
                return Poll::Ready(Err(why));
            }
            self.table.committing(w.id, 0);
            // SeqCst: one order of stamps, snapshots, markers and table states.
            w.stamp = self.clock.fetch_add(1, Ordering::SeqCst) + 1;
            self.table.committing(w.id, w.stamp);
        }
        let c = w.stamp;

        // The exclusion window test.
        let (mut pi, mut eta) = (c, 0u64);
        for (rec, ts) in w.reads.iter().filter(|(_, ts)| *ts != PRUNED) {
            eta = eta.max(*ts);
            #[cfg(test)]
            if self.mutant == Mutant::ErmiaIgnoreOverwriters {
                continue;
            }
            match self.overwriter_pi(w, *rec, *ts, c) {
                Poll::Ready(Some(p)) => pi = pi.min(p),
                Poll::Ready(None) => {}
                Poll::Pending => return Poll::Pending,
            }
        }
        for e in w.writes.entries() {
            eta = eta.max(e.state & !LOCK);
            #[cfg(test)]
            if self.mutant == Mutant::ErmiaIgnoreReaders {
                continue;
            }
            match self.readers_eta(w, e.rec, c) {
                Poll::Ready(r) => eta = eta.max(r),
                Poll::Pending => return Poll::Pending,
            }
        }
        #[cfg(test)]
        let skip = self.mutant == Mutant::ErmiaSkipExclusionCheck;
        #[cfg(not(test))]
        let skip = false;
        if pi <= eta && !skip {
            return Poll::Ready(Err(Abort::SsnExclusion));
        }

        // Committed: publish π, install, stamp what was read.
        self.table.committed(w.id, c, pi);
        let watermark = self.mv.watermark.current();
        for i in 0..w.writes.len() {
            install_write(
                &mut w.writes,
                i,
                &mut w.versions,
                c,
                |stamps| {
                    // Relaxed: published by the push's Release.
                    stamps.sstamp.store(pi, Ordering::Relaxed);
                    stamps.successor.store(c, Ordering::Relaxed);
                },
                |meta| {
                    // SeqCst: ordered with the readers' bitmap and pstamp accesses.
                    meta.pstamp.fetch_max(c, Ordering::SeqCst);
                    // SeqCst: the marker goes after the word says `LOCK | c` (an observer that
                    // loads the cleared marker, an acquire, then re-loads the word sees the
                    // new timestamp: the word's Release store precedes this one).
                    meta.sstamp.store(0, Ordering::SeqCst);
                },
                |chain, pool| {
                    chain.collect(c, watermark, pool);
                },
            );
        }
        w.locked = 0;
        self.leave_readers(w, Some(c));
        self.mv.watermark.leave(w.id);
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut ErmiaWorker<'_, WORDS>, _why: Abort) {
        self.release_writes(w);
        self.table.aborted(w.id);
        self.leave_readers(w, None);
        w.reads.clear();
        w.writes.clear();
        self.mv.watermark.leave(w.id);
    }

    fn install_log<'w>(&self, w: &'w mut ErmiaWorker<'_, WORDS>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl<const WORDS: usize> MultiVersion for ErmiaWith<WORDS> {
    type VersionMeta = Stamps;

    fn version_store(&self) -> &VersionStore<Stamps> {
        &self.mv.versions
    }

    fn watermark(&self) -> &Watermark {
        &self.mv.watermark
    }

    fn snapshot_commit_stamp(&self, w: &ErmiaWorker<'_, WORDS>) -> u64 {
        w.stamp
    }

    fn grace_holds<'w>(&self, w: &'w mut ErmiaWorker<'_, WORDS>) -> &'w mut Holds {
        w.versions.gc.holds()
    }
}
