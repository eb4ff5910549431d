//! Snapshot isolation (Berenson et al. 1995; CCBench section 2), on the shared version storage
//! (`storage::versions`).
//!
//! - **Begin.** Register with the watermark and take the snapshot `s`: the global commit clock.
//! - **Read.** The newest version with commit timestamp `<= s`: the inline one (copied under the
//!   record word as a seqlock) when its timestamp is `<= s`, otherwise the first such version in
//!   the record's chain. A record locked by a committer whose inline timestamp is `<= s` may be
//!   about to get a version with a timestamp `<= s` (the committer may already hold its commit
//!   timestamp): wait (`Pending`). Reads are never validated.
//! - **Write.** Buffered in the write set.
//! - **Commit.** Lock the write set in address order (a busy lock aborts: `LockConflict`). First
//!   committer wins: a locked record whose inline timestamp is above `s` was written by a
//!   transaction that committed after the snapshot, so abort (`WriteWriteConflict`). Take the
//!   commit timestamp `c` from the clock (`fetch_add`), then for each record: copy the inline
//!   version into a chain node and push it, publish `LOCK | c`, install the new payload inline,
//!   collect the chain below the watermark, and unlock with `c`.
//!
//! **Readers skip in-flight versions** (`--skip-in-flight`, CCBench's readers; off by default):
//! a reader that finds the record held with a visible inline version does not wait when the
//! holder's stamp is certainly above its snapshot (not drawn yet, or drawn larger): it reads
//! the inline version the holder has not replaced yet. To tell, committers mark the records
//! they hold with their `Marker` and say their stamp in a transaction table
//! (`protocol::txn_table`, ERMIA's), which costs a store per written record and three per
//! commit; with the option off none of it runs.
//!
//! Why a reader with snapshot `s >= c` sees every write of the transaction with timestamp `c`:
//! the committer locked all its records before taking `c`, and the reader's clock load that
//! returned `s >= c` synchronises with that `fetch_add`, so it finds each record locked (and
//! waits) or already carrying `c`. A reader with `s < c` finds the inline timestamp `c > s` (or
//! the old one, with the old payload, unlocked) and the old version in the chain, pushed before
//! `c` was published.
//!
//! Snapshot isolation is not serializable: two transactions that read an overlapping set and
//! write disjoint records both commit (write skew, Adya's G2-item). `ProtocolKind::is_serializable`
//! says so, and the anomaly suite requires it to show write skew and nothing worse.
//!
//! Record word (the version timestamp is the commit clock value of the inline version's writer):
//!
//! ```text
//!  63  62                                                                            0
//! +----+-----------------------------------------------------------------------------+
//! |lock| timestamp of the inline version                                             |
//! +----+-----------------------------------------------------------------------------+
//! ```

#[cfg(test)]
mod tests;

#[cfg(test)]
use super::mutants::Mutant;
use super::mv_common::{collect_queued, load_visible, push_version};
use super::parts::{MultiVersion, MultiVersionPart};
use super::txn_table::{Marker, TxnTable};
use super::{
    Abort, AttemptStart, InstallLog, OpResult, Protocol, ProtocolOptions, WriteKind, WriteSet,
};
use crate::storage::Record;
use crate::storage::grace::Holds;
use crate::storage::versions::{
    GcQueue, VersionChain, VersionMemoryExhausted, VersionPool, VersionStats, VersionStore,
    Watermark,
};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::task::Poll;
use std::time::{Duration, Instant};

/// The lock bit of the record word.
pub(crate) const LOCK: u64 = 1 << 63;

/// How many times a read retries a torn inline copy before yielding to the executor.
const READ_RETRIES: usize = 8;

/// Per-record metadata: the record word and the chain of older versions.
#[derive(Default)]
pub struct SiMeta {
    word: AtomicU64,
    chain: VersionChain<()>,
    /// With readers skipping in-flight versions only: the holder's `Marker` while a committer
    /// holds the record and has not installed yet, else 0 (`TxnTable::holder_commits_after`).
    holder: AtomicU64,
}

impl SiMeta {
    /// The record word. `Acquire` pairs with the committer's `Release` stores, so what follows
    /// (a payload copy, a chain walk) sees the version the word names.
    #[inline]
    fn load(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    /// Locks the record expecting it unlocked at `seen`. `Acquire` on success pairs with the
    /// previous holder's `Release` unlock, so our install follows theirs. It does not keep our
    /// payload stores after the lock for a seqlock reader (an acquire orders later loads and
    /// stores after it in this thread only): the commit's `fence(Release)` after the locks does
    /// (`snapshot_read`).
    #[inline]
    fn try_lock(&self, seen: u64) -> bool {
        self.word
            .compare_exchange(seen, seen | LOCK, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Publishes `word`. `Release`: the chain push and payload install before it are visible to
    /// a reader that loads it (`Acquire`).
    #[inline]
    fn store(&self, word: u64) {
        self.word.store(word, Ordering::Release);
    }
}

/// Snapshot isolation: the commit clock, the watermark and the version store.
pub struct Si {
    /// The commit clock: the last commit timestamp handed out. A global counter, which SI
    /// demands (snapshots and commit timestamps are totally ordered).
    clock: CachePadded<AtomicU64>,
    watermark: Watermark,
    versions: VersionStore<()>,
    /// Readers skip in-flight versions (`MvOptions::skip_in_flight`): committers then mark
    /// what they hold and say their stamp in `table`.
    skip_in_flight: bool,
    table: TxnTable,
    #[cfg(test)]
    mutant: Mutant,
}

impl Si {
    /// SI for `opts.threads` workers with the version-memory options in `opts.mv`.
    pub fn new(opts: &ProtocolOptions) -> Self {
        Si {
            clock: CachePadded::new(AtomicU64::new(0)),
            watermark: Watermark::new(opts.threads, Duration::from_micros(opts.mv.gc_interval_us)),
            versions: VersionStore::new(
                opts.threads,
                opts.mv.version_memory_bytes,
                opts.mv.version_reuse,
            ),
            skip_in_flight: opts.mv.skip_in_flight,
            table: TxnTable::new(if opts.mv.skip_in_flight {
                opts.threads
            } else {
                1
            }),
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
}

impl Si {
    /// The watermark a commit that installs at `c` collects its records' chains below: the
    /// oldest active snapshot's (a mutant uses `c`, as if no older snapshot were active).
    #[inline]
    fn collect_watermark(&self, c: u64) -> u64 {
        #[cfg(test)]
        if self.mutant == Mutant::SiCollectPastSnapshots {
            return c;
        }
        let _ = c;
        self.watermark.current()
    }

    /// The watermark RapidGC's deferred pass collects queued records below (a mutant collects
    /// every queued record at once, whatever the watermark).
    #[inline]
    fn deferred_watermark(&self) -> u64 {
        #[cfg(test)]
        if self.mutant == Mutant::SiDeferredIgnoresWatermark {
            return LOCK - 1;
        }
        self.watermark.current()
    }
}

/// An SI worker's state.
pub struct SiWorker<'db> {
    id: usize,
    /// The snapshot: versions with timestamps up to it are visible.
    snapshot: u64,
    /// Buffered writes, with the record word seen when locked.
    writes: WriteSet<'db, SiMeta, u64>,
    /// Commit progress: the write set is sorted and its first `locked` entries are locked.
    locked: usize,
    pool: VersionPool<'db, ()>,
    /// Scratch for copying a version into a chain node.
    scratch: Vec<u8>,
    last_refresh: Instant,
    /// Commit timestamp of the last attempt that committed writes.
    committed_at: u64,
    /// The current transaction's serial in the table (readers skipping in-flight versions).
    serial: u64,
    /// Records this worker installed, to collect once the watermark passes them (RapidGC).
    gc: GcQueue<&'db SiMeta>,
}

impl SiWorker<'_> {
    fn unlock_held(&mut self) {
        for e in &self.writes.entries()[..self.locked] {
            // SeqCst: the marker goes before the lock (skipping readers re-check the word).
            e.rec.meta().holder.store(0, Ordering::SeqCst);
            e.rec.meta().store(e.state);
        }
        self.locked = 0;
    }
}

impl Si {
    /// The version of `rec` visible at `snapshot`, copied into `out`.
    #[inline]
    fn read_at<'db>(&self, rec: Record<'db, SiMeta>, snapshot: u64, out: &mut [u8]) -> OpResult {
        let meta = rec.meta();
        let read = if self.skip_in_flight {
            // SeqCst: after the reader's snapshot load (`TxnTable::holder_commits_after`).
            let after = || {
                self.table
                    .holder_commits_after(meta.holder.load(Ordering::SeqCst), snapshot)
            };
            // SAFETY: this worker's snapshot is registered with `self.watermark` (begin), which
            // every collect of this record's chain uses.
            unsafe { snapshot_read_skipping(&meta.word, &meta.chain, rec, snapshot, out, after) }
        } else {
            // SAFETY: as above.
            unsafe { snapshot_read(&meta.word, &meta.chain, rec, snapshot, out) }
        };
        read.map(|r| r.map(|_| ()))
    }
}

/// Copies into `out` the version of a record visible at `snapshot`, given the record's word
/// (`LOCK | timestamp of the inline version`), its chain and `rec`'s inline payload; returns the
/// version's timestamp. `Pending` when a committer holds the record and may be installing a
/// version the snapshot must see (module docs), or when the inline copy kept tearing.
///
/// # Safety
///
/// `snapshot` is registered with the watermark that every collect of `chain` uses
/// ([`VersionChain::find_visible`]).
#[inline]
pub(crate) unsafe fn snapshot_read<V, M>(
    word: &AtomicU64,
    chain: &VersionChain<V>,
    rec: Record<'_, M>,
    snapshot: u64,
    out: &mut [u8],
) -> Poll<Result<u64, Abort>> {
    // SAFETY: the caller's contract; a holder is never skipped.
    unsafe { snapshot_read_skipping(word, chain, rec, snapshot, out, || false) }
}

/// [`snapshot_read`] for readers that skip in-flight versions (`MvOptions::skip_in_flight`):
/// where the record is held by a committer whose inline version is visible at `snapshot`,
/// `commits_after_snapshot` is asked whether that committer's commit timestamp is certainly
/// above `snapshot` (not drawn yet, or drawn larger); if so the reader takes the inline version
/// the holder has not replaced yet (the committed one the snapshot sees) instead of waiting.
/// The copy is validated like any inline copy: a holder that starts installing changes the word
/// first (`LOCK | c`), so an unchanged word proves the copy is the old version whole. The
/// predicate runs after the word's first load (its loads are ordered after it).
///
/// # Safety
///
/// As [`snapshot_read`].
#[inline]
pub(crate) unsafe fn snapshot_read_skipping<V, M>(
    word: &AtomicU64,
    chain: &VersionChain<V>,
    rec: Record<'_, M>,
    snapshot: u64,
    out: &mut [u8],
    commits_after_snapshot: impl Fn() -> bool,
) -> Poll<Result<u64, Abort>> {
    for _ in 0..READ_RETRIES {
        // Acquire: pairs with the committer's Release stores, so the chain push (and the payload
        // of an unlocked word) are visible.
        let seen = word.load(Ordering::Acquire);
        if seen & !LOCK > snapshot {
            // SAFETY: the caller's contract, and the inline version is newer than the snapshot.
            return Poll::Ready(Ok(unsafe { load_visible(chain, rec, snapshot, out) }));
        }
        if seen & LOCK != 0 && !commits_after_snapshot() {
            // A committer may install a version this snapshot must see (module docs).
            return Poll::Pending;
        }
        rec.payload.load(out);
        // Acquire fence: pairs with the committer's Release fence between its lock CAS and its
        // payload stores (SI's, MVTO's, ERMIA's commit): if the copy read any installed word,
        // the re-load below sees the lock or a later word, so an unchanged word proves no
        // install overlapped the copy.
        fence(Ordering::Acquire);
        // Relaxed: ordered by the fence above.
        if word.load(Ordering::Relaxed) == seen {
            return Poll::Ready(Ok(seen & !LOCK));
        }
    }
    Poll::Pending
}

impl Protocol for Si {
    type RecordMeta = SiMeta;
    type Worker<'db> = SiWorker<'db>;

    const MULTI_VERSION: Option<MultiVersionPart<Self>> = Some(MultiVersionPart::from_impl());

    fn new_worker<'db>(&'db self, id: usize) -> SiWorker<'db> {
        SiWorker {
            id,
            snapshot: 0,
            writes: WriteSet::default(),
            locked: 0,
            pool: self.versions.pool(id),
            scratch: Vec::new(),
            last_refresh: Instant::now(),
            committed_at: 0,
            serial: 0,
            gc: GcQueue::default(),
        }
    }

    fn begin(&self, w: &mut SiWorker<'_>, _start: AttemptStart) {
        w.writes.clear();
        w.locked = 0;
        if self.skip_in_flight {
            w.serial = self.table.begin(w.id);
        }
        w.snapshot = self.watermark.enter(w.id, &self.clock);
        w.last_refresh = self.watermark.maybe_refresh(&self.clock, w.last_refresh);
        collect_queued(
            &mut w.gc,
            self.deferred_watermark(),
            &mut w.pool,
            |m: &SiMeta| (&m.word, &m.chain),
        );
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut SiWorker<'db>,
        rec: Record<'db, SiMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        #[cfg(test)]
        if self.mutant == Mutant::SiReadNewest {
            // The bug: read the newest committed version whatever the snapshot.
            return self.read_at(rec, LOCK - 1, out);
        }
        self.read_at(rec, w.snapshot, out)
    }

    /// A snapshot read is already a committed, untorn version; SI never validates reads, so
    /// read committed is the same read (it sees the snapshot, which is committed data).
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut SiWorker<'db>,
        rec: Record<'db, SiMeta>,
        out: &mut [u8],
    ) -> OpResult {
        self.read(w, rec, out)
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut SiWorker<'db>,
        rec: Record<'db, SiMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        w.writes.put(rec, kind, data, 0);
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut SiWorker<'_>) -> OpResult {
        if w.writes.is_empty() {
            self.watermark.leave(w.id);
            return Poll::Ready(Ok(()));
        }
        w.writes.sort_by_record();
        while w.locked < w.writes.len() {
            let meta = w.writes.entries()[w.locked].rec.meta();
            let seen = meta.load();
            if seen & LOCK != 0 || !meta.try_lock(seen) {
                return Poll::Ready(Err(Abort::LockConflict));
            }
            w.writes.entries_mut()[w.locked].state = seen;
            w.locked += 1;
            #[cfg(test)]
            if self.mutant == Mutant::SiSkipFirstCommitterWins {
                continue;
            }
            if seen > w.snapshot {
                // First committer wins: someone committed this record after our snapshot.
                return Poll::Ready(Err(Abort::WriteWriteConflict));
            }
            if self.skip_in_flight {
                // SeqCst: before drawing the stamp (`TxnTable::holder_commits_after`).
                meta.holder
                    .store(Marker::new(w.id, w.serial).0, Ordering::SeqCst);
            }
        }
        if self.skip_in_flight {
            self.table.committing(w.id, 0);
        }
        // SeqCst: one total order of commit timestamps and snapshots (`Watermark::enter`); the
        // RMW also releases our locks' acquisition to readers whose snapshot includes `c`.
        let c = self.clock.fetch_add(1, Ordering::SeqCst) + 1;
        if self.skip_in_flight {
            self.table.committing(w.id, c);
        }
        // Release fence, the seqlock writer's half: every lock CAS above is ordered before the
        // payload stores below, so a reader whose copy sees any of them and then fences Acquire
        // re-reads a locked (or newer) word and retries (pairs with `snapshot_read`'s fence).
        fence(Ordering::Release);
        let watermark = self.collect_watermark(c);
        for i in 0..w.writes.len() {
            let (rec, old) = {
                let e = &w.writes.entries()[i];
                (e.rec, e.state)
            };
            let meta = rec.meta();
            push_version(
                &meta.chain,
                &mut w.pool,
                &mut w.scratch,
                old,
                rec.payload,
                |_| (),
            );
            meta.store(LOCK | c);
            w.writes.install(i);
            if self.skip_in_flight {
                // SeqCst: after the install (`TxnTable::holder_commits_after`).
                meta.holder.store(0, Ordering::SeqCst);
            }
            meta.chain.collect(c, watermark, &mut w.pool);
            meta.store(c);
            w.gc.defer(c, meta);
        }
        if self.skip_in_flight {
            self.table.committed(w.id, c, 0);
        }
        w.locked = 0;
        w.committed_at = c;
        self.watermark.leave(w.id);
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut SiWorker<'_>, _why: Abort) {
        w.unlock_held();
        if self.skip_in_flight {
            self.table.aborted(w.id);
        }
        w.writes.clear();
        self.watermark.leave(w.id);
    }

    fn install_log<'w>(&self, w: &'w mut SiWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl MultiVersion for Si {
    type VersionMeta = ();

    fn version_stats(&self) -> VersionStats {
        self.versions.stats()
    }

    fn version_memory_exhausted(&self) -> Option<VersionMemoryExhausted> {
        self.versions.exhausted()
    }

    fn snapshot_commit_stamp(&self, w: &SiWorker<'_>) -> u64 {
        w.committed_at
    }

    fn oldest_snapshot(&self) -> u64 {
        self.watermark.current()
    }

    fn grace_holds<'w>(&self, w: &'w mut SiWorker<'_>) -> &'w mut Holds {
        w.gc.holds()
    }
}
