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
#[cfg(test)]
use super::mv_common::LOCK;
use super::mv_common::{
    MvState, WorkerVersions, install_write, lock_write_set, mv_record, snapshot_read,
    snapshot_read_skipping, unlock_write_set,
};
use super::parts::{MultiVersion, MultiVersionPart};
use super::txn_table::{Marker, TxnTable};
use super::{
    Abort, AttemptStart, InstallLog, OpResult, Protocol, ProtocolOptions, WriteKind, WriteSet,
};
use crate::storage::Record;
use crate::storage::grace::Holds;
use crate::storage::versions::{VersionChain, VersionStore, Watermark};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

/// Per-record metadata: the record word and the chain of older versions.
#[derive(Default)]
pub struct SiMeta {
    word: AtomicU64,
    chain: VersionChain<()>,
    /// With readers skipping in-flight versions only: the holder's `Marker` while a committer
    /// holds the record and has not installed yet, else 0 (`TxnTable::holder_commits_after`).
    holder: AtomicU64,
}

mv_record!(SiMeta, ());

/// Snapshot isolation: the commit clock, the watermark and the version store.
pub struct Si {
    /// The commit clock: the last commit timestamp handed out. A global counter, which SI
    /// demands (snapshots and commit timestamps are totally ordered).
    clock: CachePadded<AtomicU64>,
    mv: MvState<()>,
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
            mv: MvState::new(opts),
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

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();
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
        self.mv.watermark.current()
    }

    /// The watermark RapidGC's deferred pass collects queued records below (a mutant collects
    /// every queued record at once, whatever the watermark).
    #[inline]
    fn deferred_watermark(&self) -> u64 {
        #[cfg(test)]
        if self.mutant == Mutant::SiDeferredIgnoresWatermark {
            return LOCK - 1;
        }
        self.mv.watermark.current()
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
    versions: WorkerVersions<'db, SiMeta>,
    /// Commit timestamp of the last attempt that committed writes.
    committed_at: u64,
    /// The current transaction's serial in the table (readers skipping in-flight versions).
    serial: u64,
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
            // SAFETY: this worker's snapshot is registered with the watermark (begin), which
            // every collect of this record's chain uses.
            unsafe { snapshot_read_skipping(rec, snapshot, out, after) }
        } else {
            // SAFETY: as above.
            unsafe { snapshot_read(rec, snapshot, out) }
        };
        read.map(|r| r.map(|_| ()))
    }
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
            versions: self.mv.worker(id),
            committed_at: 0,
            serial: 0,
        }
    }

    fn begin(&self, w: &mut SiWorker<'_>, _start: AttemptStart) {
        w.writes.clear();
        w.locked = 0;
        if self.skip_in_flight {
            w.serial = self.table.begin(w.id);
        }
        w.snapshot = self.mv.watermark.enter(w.id, &self.clock);
        w.versions.last_refresh = self
            .mv
            .watermark
            .maybe_refresh(&self.clock, w.versions.last_refresh);
        w.versions.collect_queued(self.deferred_watermark());
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
            self.mv.watermark.leave(w.id);
            return Poll::Ready(Ok(()));
        }
        w.writes.sort_by_record();
        let (snapshot, marker) = (w.snapshot, Marker::new(w.id, w.serial));
        let admitted = lock_write_set(&mut w.writes, &mut w.locked, |meta, seen| {
            #[cfg(test)]
            if self.mutant == Mutant::SiSkipFirstCommitterWins {
                return Ok(());
            }
            if seen > snapshot {
                // First committer wins: someone committed this record after our snapshot.
                return Err(Abort::WriteWriteConflict);
            }
            if self.skip_in_flight {
                // SeqCst: before drawing the stamp (`TxnTable::holder_commits_after`).
                meta.holder.store(marker.0, Ordering::SeqCst);
            }
            Ok(())
        });
        if let Err(why) = admitted {
            return Poll::Ready(Err(why));
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
        let watermark = self.collect_watermark(c);
        for i in 0..w.writes.len() {
            install_write(
                &mut w.writes,
                i,
                &mut w.versions,
                c,
                |_| (),
                |meta| {
                    if self.skip_in_flight {
                        // SeqCst: after the install (`TxnTable::holder_commits_after`).
                        meta.holder.store(0, Ordering::SeqCst);
                    }
                },
                |chain, pool| {
                    chain.collect(c, watermark, pool);
                },
            );
        }
        if self.skip_in_flight {
            self.table.committed(w.id, c, 0);
        }
        w.locked = 0;
        w.committed_at = c;
        self.mv.watermark.leave(w.id);
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut SiWorker<'_>, _why: Abort) {
        unlock_write_set(&w.writes, &mut w.locked, |meta| {
            // SeqCst: the marker goes before the lock (skipping readers re-check the word).
            meta.holder.store(0, Ordering::SeqCst);
        });
        if self.skip_in_flight {
            self.table.aborted(w.id);
        }
        w.writes.clear();
        self.mv.watermark.leave(w.id);
    }

    fn install_log<'w>(&self, w: &'w mut SiWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl MultiVersion for Si {
    type VersionMeta = ();

    fn version_store(&self) -> &VersionStore<()> {
        &self.mv.versions
    }

    fn watermark(&self) -> &Watermark {
        &self.mv.watermark
    }

    fn snapshot_commit_stamp(&self, w: &SiWorker<'_>) -> u64 {
        w.committed_at
    }

    fn grace_holds<'w>(&self, w: &'w mut SiWorker<'_>) -> &'w mut Holds {
        w.versions.gc.holds()
    }
}
