//! Multi-version timestamp ordering (Reed 1978; Bernstein & Goodman 1983; CCBench section 2),
//! on the shared version storage.
//!
//! - **Begin.** Draw a unique timestamp `ts` from the clock (`fetch_add`) and register it with the
//!   watermark. The transaction is serialised at `ts`.
//! - **Read.** The version with the largest write timestamp `<= ts`. When that is the inline
//!   (newest) version, first raise the record's read timestamp `rts` to `ts`: a later commit of a
//!   transaction older than `ts` may then not overwrite it. An older version comes from the chain
//!   and needs no `rts`: only the newest version is ever overwritten (below). A record locked by a
//!   committer whose inline version is visible at `ts` may be getting a version `ts` must see:
//!   wait (`Pending`).
//! - **Write.** Buffered.
//! - **Commit.** Lock the write set in address order (a busy lock aborts). A write must create
//!   the newest version: if the inline version's write timestamp or `rts` is above `ts`, abort
//!   (`TimestampOrder`: a younger transaction wrote it, or read the version this write would
//!   replace). Then install as SI does, with write timestamp `ts`.
//!
//! Reads are never validated: `rts` makes every later writer respect them, so the execution is
//! equivalent to running the committed transactions serially in timestamp order.
//!
//! **AggressiveGC** (`--aggressive-gc`, CCBench section 7.3's proposal): every install frees the
//! record's older versions whatever the watermark, keeping only the newest older version and,
//! while a starving transaction holds the protection (below), the version its snapshot sees:
//! the kept versions need not be contiguous (7.3: "visible versions do not need to be
//! contiguous"), the ones between them go too (`VersionChain::collect_keeping`). Each older
//! version records when it was replaced, so a reader whose version was removed from between two
//! kept ones is not handed the older one (`VersionChain::read_validated_until`, which also
//! detects a node reclaimed under the walk): it aborts with `version_collected`, and its retry
//! draws a new, newer timestamp, so it needs fewer old versions. Memory stays at about one or
//! two older versions per written record; the price is those aborts.
//! `--aggressive-gc-contiguous` keeps today's contiguous variant instead (kVSR-like, the scheme
//! 7.3 contrasts with): the newest older version, or, under protection, every version above the
//! protected snapshot.
//!
//! **Starvation priority under AggressiveGC** (wait-die style). A new timestamp alone does not
//! save a long reader: whenever a record it reads is written twice during its run, its version
//! is gone again, and it can abort forever (CCBench 7.3 names the risk). So a transaction keeps
//! its first attempt's timestamp as its *priority* across retries, and one transaction at a time
//! may hold the *protection*: the oldest-priority transaction that lost a read to collection.
//! While a transaction holds it, every install keeps the version visible at the protected
//! snapshot (contiguous variant: collects only below it, `VersionChain::collect` with the
//! protected timestamp as its watermark), so the protected attempt finds every version it needs and cannot abort with
//! `version_collected` again. Priority decides as in wait-die: a starving transaction older than
//! the holder takes the protection over (the younger holder goes back to aggressive collection
//! and retries as usual); a younger one does not get it and retries unprotected. The holder
//! gives it back when it commits. An install that read the protection just before the holder
//! published its new snapshot may still collect a version the holder needs; the holder then
//! aborts and retries, still protected, and the next attempt's snapshot is published before any
//! later install reads it, so it eventually commits (`tests.rs` shows it step by step).
//!
//! Record metadata: the word (`LOCK | write timestamp of the inline version`, as SI's), the
//! chain, and `rts`.
//!
//! Why a reader raising `rts` and a committer checking it cannot miss each other: the reader
//! loads the word, raises `rts`, copies and re-loads the word; the committer locks (changing the
//! word) then loads `rts`, all `SeqCst`. If the committer's `rts` load misses the reader's raise,
//! the lock precedes the reader's re-load, which then sees it and retries.

#[cfg(test)]
mod tests;

#[cfg(test)]
use super::mutants::Mutant;
use super::mv_common::{
    LOCK, MvState, WorkerVersions, install_write, load_visible, lock_write_set, mv_record,
    raise_read_timestamp, retry, unlock_write_set,
};
use super::parts::{MultiVersion, MultiVersionPart};
use super::{
    Abort, AttemptStart, InstallLog, OpResult, Protocol, ProtocolOptions, WriteKind, WriteSet,
};
use crate::storage::Record;
use crate::storage::grace::Holds;
use crate::storage::versions::{VersionChain, VersionStore, Watermark};
use crossbeam_utils::CachePadded;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::task::Poll;

/// What MVTO keeps on an older version: the commit timestamp of the version that replaced it
/// (its end of visibility), which AggressiveGC's readers check
/// (`VersionChain::read_validated_until`).
type ReplacedAt = AtomicU64;

/// Per-record metadata.
#[derive(Default)]
pub struct MvtoMeta {
    /// `LOCK | write timestamp of the inline version`.
    word: AtomicU64,
    /// Older versions.
    chain: VersionChain<ReplacedAt>,
    /// The largest timestamp of a transaction that read the inline version.
    rts: AtomicU64,
}

mv_record!(MvtoMeta, ReplacedAt);

/// MVTO: the timestamp clock, the watermark and the version store.
pub struct Mvto {
    /// Transaction timestamps (a global counter: timestamp ordering needs unique, ordered ones).
    clock: CachePadded<AtomicU64>,
    mv: MvState<ReplacedAt>,
    /// AggressiveGC (module docs).
    aggressive: bool,
    /// AggressiveGC keeps contiguous versions (kVSR-like; module docs).
    contiguous: bool,
    /// AggressiveGC's starvation protection (module docs): the priority (first timestamp) of
    /// the transaction holding it, 0 when none. Written by starving transactions (CAS), read by
    /// them.
    protected_priority: CachePadded<AtomicU64>,
    /// The holder's current snapshot (its attempt's timestamp), `u64::MAX` when none. Written by
    /// the holder at begin and release, read by every install under AggressiveGC.
    protected_snapshot: CachePadded<AtomicU64>,
    #[cfg(test)]
    mutant: Mutant,
}

/// Older versions an install keeps under AggressiveGC: readers one write behind still succeed.
const AGGRESSIVE_KEEP: usize = 1;

impl Mvto {
    /// MVTO for `opts.threads` workers.
    pub fn new(opts: &ProtocolOptions) -> Self {
        Mvto {
            clock: CachePadded::new(AtomicU64::new(0)),
            mv: {
                let MvState {
                    watermark,
                    versions,
                } = MvState::new(opts);
                // AggressiveGC's validated readers may read a node after its collection.
                let versions = if opts.mv.aggressive_gc {
                    versions.type_stable()
                } else {
                    versions
                };
                MvState {
                    watermark,
                    versions,
                }
            },
            aggressive: opts.mv.aggressive_gc,
            contiguous: opts.mv.aggressive_contiguous,
            protected_priority: CachePadded::new(AtomicU64::new(0)),
            protected_snapshot: CachePadded::new(AtomicU64::new(u64::MAX)),
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();
}

/// An MVTO worker's state.
pub struct MvtoWorker<'db> {
    id: usize,
    /// The transaction's timestamp.
    ts: u64,
    /// Buffered writes, with the record word seen when locked.
    writes: WriteSet<'db, MvtoMeta, u64>,
    /// Commit progress: the first `locked` writes are locked.
    locked: usize,
    versions: WorkerVersions<'db, MvtoMeta>,
    /// The transaction's priority: its first attempt's timestamp (AggressiveGC, module docs).
    priority: u64,
    /// The last attempt aborted because a version it needed was collected.
    starved: bool,
}

impl Mvto {
    /// Whether worker `w`'s transaction holds the starvation protection.
    #[inline]
    fn holds_protection(&self, w: &MvtoWorker<'_>) -> bool {
        // Acquire: pairs with the claiming CAS (the value alone matters).
        self.aggressive && self.protected_priority.load(Ordering::Acquire) == w.priority
    }

    /// A starving transaction asks for the protection (module docs): it gets it when nobody
    /// holds it or the holder is younger.
    fn claim_protection(&self, priority: u64) -> bool {
        // Acquire/AcqRel: the CAS orders claims; the snapshot word is published separately.
        let mut holder = self.protected_priority.load(Ordering::Acquire);
        loop {
            if holder == priority {
                return true;
            }
            if holder != 0 && holder < priority {
                return false;
            }
            match self.protected_priority.compare_exchange(
                holder,
                priority,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => holder = now,
            }
        }
    }

    /// The holder committed: gives the protection back.
    fn release_protection(&self, priority: u64) {
        // SeqCst: the snapshot reset is ordered with installs' loads; losing the race to a
        // newer claimer (CAS failure) leaves its claim alone.
        if self
            .protected_priority
            .compare_exchange(priority, 0, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            self.protected_snapshot.store(u64::MAX, Ordering::SeqCst);
        }
    }

    /// Reads the version of `rec` visible at `ts` into `out`; `register` raises `rts` when it is
    /// the inline one (false for read-committed reads, which protect nothing).
    #[inline]
    fn read_at(
        &self,
        rec: Record<'_, MvtoMeta>,
        ts: u64,
        out: &mut [u8],
        register: bool,
    ) -> OpResult {
        let meta = rec.meta();
        retry(|| {
            // SeqCst: the argument in the module docs (and Acquire for the chain and payload).
            let seen = meta.word.load(Ordering::SeqCst);
            if seen & !LOCK > ts && self.aggressive {
                // Relaxed: the replacement timestamp was written before the node's publication,
                // which the walk acquired; the walk's generation checks reject a reused node.
                let replaced_at = |r: &ReplacedAt| r.load(Ordering::Relaxed);
                return ControlFlow::Break(
                    match meta.chain.read_validated_until(ts, out, replaced_at) {
                        Ok(Some(_)) => Poll::Ready(Ok(())),
                        Ok(None) | Err(_) => Poll::Ready(Err(Abort::VersionCollected)),
                    },
                );
            }
            if seen & !LOCK > ts {
                // SAFETY: `ts` is registered with the watermark (begin), which every collect of
                // this chain uses, and the inline version is newer than `ts`.
                unsafe { load_visible(&meta.chain, rec, ts, out) };
                return ControlFlow::Break(Poll::Ready(Ok(())));
            }
            if seen & LOCK != 0 {
                return ControlFlow::Break(Poll::Pending);
            }
            #[cfg(test)]
            let register = register && self.mutant != Mutant::MvtoSkipReadTimestamp;
            if register {
                // Loads first and raises only when below `ts` (SeqCst both: the argument in the
                // module docs, `raise_read_timestamp`).
                raise_read_timestamp(&meta.rts, ts);
            }
            rec.payload.load(out);
            // Acquire fence: pairs with the committer's Release fence after its word stores
            // (`install_write`), so a copy that read an installed word re-reads a changed word.
            fence(Ordering::Acquire);
            if meta.word.load(Ordering::SeqCst) == seen {
                return ControlFlow::Break(Poll::Ready(Ok(())));
            }
            ControlFlow::Continue(())
        })
    }
}

impl Protocol for Mvto {
    type RecordMeta = MvtoMeta;
    type Worker<'db> = MvtoWorker<'db>;

    const MULTI_VERSION: Option<MultiVersionPart<Self>> = Some(MultiVersionPart::from_impl());

    fn new_worker<'db>(&'db self, id: usize) -> MvtoWorker<'db> {
        MvtoWorker {
            id,
            ts: 0,
            writes: WriteSet::default(),
            locked: 0,
            versions: self.mv.worker(id),
            priority: 0,
            starved: false,
        }
    }

    fn begin(&self, w: &mut MvtoWorker<'_>, start: AttemptStart) {
        w.writes.clear();
        w.locked = 0;
        w.ts = self.mv.watermark.enter_unique(w.id, &self.clock);
        w.versions.start_attempt(&self.mv.watermark, &self.clock);
        if !start.retry {
            if self.aggressive && w.priority != 0 {
                // A transaction that ended without committing (a user abort) gives back a
                // protection it still holds.
                self.release_protection(w.priority);
            }
            w.priority = w.ts;
            w.starved = false;
        }
        #[cfg(test)]
        let priority_on = self.mutant != Mutant::MvtoNoStarvationPriority;
        #[cfg(not(test))]
        let priority_on = true;
        if self.aggressive
            && priority_on
            && (w.starved || self.holds_protection(w))
            && self.claim_protection(w.priority)
        {
            // SeqCst: published before this attempt reads; installs load it SeqCst.
            self.protected_snapshot.store(w.ts, Ordering::SeqCst);
        }
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut MvtoWorker<'db>,
        rec: Record<'db, MvtoMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        self.read_at(rec, w.ts, out, true)
    }

    /// The version at the transaction's timestamp, without raising `rts`: committed data that
    /// later writers may replace under it.
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut MvtoWorker<'db>,
        rec: Record<'db, MvtoMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        self.read_at(rec, w.ts, out, false)
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut MvtoWorker<'db>,
        rec: Record<'db, MvtoMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        w.writes.put(rec, kind, data, 0);
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut MvtoWorker<'_>) -> OpResult {
        if w.locked == 0 {
            w.writes.sort_by_record();
        }
        let ts = w.ts;
        let admitted = lock_write_set(&mut w.writes, &mut w.locked, |meta, seen| {
            #[cfg(test)]
            if self.mutant == Mutant::MvtoSkipWriteCheck {
                return Ok(());
            }
            // SeqCst: after the lock in the one total order (module docs).
            if seen > ts || meta.rts.load(Ordering::SeqCst) > ts {
                return Err(Abort::TimestampOrder);
            }
            Ok(())
        });
        if let Err(why) = admitted {
            return Poll::Ready(Err(why));
        }
        let watermark = self.mv.watermark.current();
        for i in 0..w.writes.len() {
            install_write(
                &mut w.writes,
                i,
                &mut w.versions,
                ts,
                // Relaxed: published by the push's Release.
                |replaced_at| replaced_at.store(ts, Ordering::Relaxed),
                |_| (),
                |chain, pool| {
                    if !self.aggressive {
                        chain.collect(ts, watermark, pool);
                        return;
                    }
                    // SeqCst: pairs with the holder's store at begin (module docs).
                    let protected = self.protected_snapshot.load(Ordering::SeqCst);
                    if !self.contiguous {
                        // The newest older version and the one the protected snapshot sees.
                        chain.collect_keeping(AGGRESSIVE_KEEP, protected, pool);
                    } else if protected < ts {
                        chain.collect(ts, protected, pool);
                    } else {
                        chain.collect_aggressively(AGGRESSIVE_KEEP, pool);
                    }
                },
            );
        }
        w.locked = 0;
        self.mv.watermark.leave(w.id);
        if self.aggressive {
            self.release_protection(w.priority);
        }
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut MvtoWorker<'_>, why: Abort) {
        w.starved = why == Abort::VersionCollected;
        unlock_write_set(&w.writes, &mut w.locked, |_| ());
        w.writes.clear();
        self.mv.watermark.leave(w.id);
    }

    fn install_log<'w>(&self, w: &'w mut MvtoWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl MultiVersion for Mvto {
    type VersionMeta = ReplacedAt;

    fn version_store(&self) -> &VersionStore<ReplacedAt> {
        &self.mv.versions
    }

    fn watermark(&self) -> &Watermark {
        &self.mv.watermark
    }

    fn snapshot_commit_stamp(&self, w: &MvtoWorker<'_>) -> u64 {
        w.ts
    }

    fn grace_holds<'w>(&self, w: &'w mut MvtoWorker<'_>) -> &'w mut Holds {
        w.versions.gc.holds()
    }
}
