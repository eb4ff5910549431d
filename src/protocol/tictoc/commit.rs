//! TicToc's commit: lock the write set, compute the commit timestamp, validate (and extend) the
//! reads, install the writes. Steps 3 to 6 of the algorithm in the module docs of `tictoc`.

use super::{NOWAIT_TT_PAUSE, TicToc, TicTocMeta, TicTocWorker, TsWord};
#[cfg(test)]
use crate::protocol::mutants::Mutant;
use crate::protocol::{Abort, LockWait, OpResult};
use crate::storage::Record;
use std::sync::atomic::{Ordering, fence};
use std::task::Poll;
use std::time::Instant;

/// What locking the write set came to.
enum Locking {
    /// Every entry is locked.
    Done,
    /// A lock is busy; the commit must be polled again.
    Wait,
    /// A lock is busy and the policy is to abort.
    Abort(Abort),
}

impl TicToc {
    /// One poll of the commit. Safe to repeat after `Pending`: progress lives in `w.commit`.
    pub(super) fn commit_attempt(&self, w: &mut TicTocWorker<'_>) -> OpResult {
        if !w.commit.started {
            w.writes.sort_by_record();
            w.commit.started = true;
            if self.preemptive_abort && !self.reads_may_validate(w) {
                return Poll::Ready(Err(Abort::Preemptive));
            }
        }
        if let Some(relock_after) = w.commit.relock_after {
            if Instant::now() < relock_after {
                return Poll::Pending;
            }
            w.commit.relock_after = None;
        }
        match self.lock_write_set(w) {
            Locking::Done => {}
            Locking::Wait => return Poll::Pending,
            Locking::Abort(why) => return Poll::Ready(Err(why)),
        }

        let reads_ts = w.reads.iter().map(|(_, seen)| seen.wts()).max();
        let commit_ts = w.commit.writes_ts.max(reads_ts.unwrap_or(0));
        if let Err(why) = self.validate_reads(w, commit_ts) {
            w.release_locks();
            return Poll::Ready(Err(why));
        }
        install(w, commit_ts, self.timestamp_history);
        w.reads.clear();
        w.writes.clear();
        w.commit.reset();
        Poll::Ready(Ok(()))
    }

    /// Locks write-set entries from `w.commit.locked` on, in the sorted (global) order.
    fn lock_write_set(&self, w: &mut TicTocWorker<'_>) -> Locking {
        while w.commit.locked < w.writes.len() {
            let word = &w.writes.entries()[w.commit.locked].rec.meta().word;
            // Relaxed: a first guess for the CAS below, which decides.
            let mut current = word.load(Ordering::Relaxed);
            loop {
                if current.is_locked() {
                    return self.on_busy_lock(w);
                }
                // Acquire on success: pairs with the Release store of the previous holder's
                // install or unlock, so our payload stores come after its own. Relaxed on
                // failure: we only look at the returned word.
                match word.compare_exchange(
                    current,
                    current.locked(),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(now) => current = now,
                }
            }
            // The lock CAS read the latest word, so every rts extension made before it counts.
            w.commit.writes_ts = w.commit.writes_ts.max(current.rts() + 1);
            w.commit.locked += 1;
        }
        // Release fence: pairs with the Acquire fence of readers (`read`, `history_allows`):
        // a reader whose copy sees any store we make from here on also sees our lock bits.
        fence(Ordering::Release);
        Locking::Done
    }

    /// The policy for a lock held by another committing transaction.
    fn on_busy_lock(&self, w: &mut TicTocWorker<'_>) -> Locking {
        if self.nowait_tt {
            w.release_locks();
            w.commit.started = true;
            w.commit.relock_after = Some(Instant::now() + NOWAIT_TT_PAUSE);
            return Locking::Wait;
        }
        match self.lock_wait {
            LockWait::Wait => Locking::Wait,
            LockWait::NoWait => {
                w.release_locks();
                Locking::Abort(Abort::LockConflict)
            }
        }
    }

    /// Step 5: checks every read against `commit_ts`, extending read timestamps where needed.
    fn validate_reads(&self, w: &TicTocWorker<'_>, commit_ts: u64) -> Result<(), Abort> {
        #[cfg(test)]
        if self.mutant == Mutant::TicTocSkipValidation {
            return Ok(());
        }
        for (rec, seen) in w.reads.iter() {
            if seen.rts() >= commit_ts {
                // The version read covers commit_ts already (wts <= commit_ts by construction).
                continue;
            }
            let word = &rec.meta().word;
            let own_write = w.sorted_write_position(rec).is_some();
            // Acquire: pairs with an installer's Release store (only timestamps are compared, but
            // TimestampHistory then reads the history that store published).
            let mut now = word.load(Ordering::Acquire);
            loop {
                #[cfg(test)]
                let seen = &match self.mutant {
                    Mutant::TicTocValidationIgnoresWts => now,
                    _ => *seen,
                };
                if now.wts() != seen.wts() {
                    if !own_write && self.timestamp_history && history_allows(rec, *seen, commit_ts)
                    {
                        break;
                    }
                    return Err(Abort::ReadValidation);
                }
                if own_write || now.rts() >= commit_ts {
                    // Our own lock keeps the version until our install replaces it at commit_ts;
                    // otherwise someone already extended it far enough.
                    break;
                }
                #[cfg(test)]
                if now.is_locked() && self.mutant == Mutant::TicTocValidationIgnoresLock {
                    break;
                }
                if now.is_locked() {
                    return Err(Abort::TimestampExtension);
                }
                // AcqRel: serializability rests on the CAS being atomic (a writer's later lock
                // CAS reads the extended rts); the orderings are a conservative extra pairing
                // with lock CASes and installs on this record.
                match word.compare_exchange(
                    now,
                    now.extended_to(commit_ts),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break,
                    Err(changed) => now = changed,
                }
            }
        }
        Ok(())
    }

    /// PreemptiveAbort: whether every read can still validate at an approximate commit timestamp
    /// computed from the words as they are now (reads' wts, writes' current rts + 1). No lock is
    /// taken and nothing is written.
    fn reads_may_validate(&self, w: &TicTocWorker<'_>) -> bool {
        let reads_ts = w.reads.iter().map(|(_, seen)| seen.wts()).max();
        // Acquire: pairs with installers' Release stores (the newest rts each write must pass).
        let writes_ts = w
            .writes
            .entries()
            .iter()
            .map(|e| e.rec.meta().word.load(Ordering::Acquire).rts() + 1)
            .max();
        let approx_ts = reads_ts.unwrap_or(0).max(writes_ts.unwrap_or(0));
        w.reads.iter().all(|(rec, seen)| {
            if seen.rts() >= approx_ts {
                return true;
            }
            let own_write = w.sorted_write_position(rec).is_some();
            // Acquire: as in `validate_reads`.
            let now = rec.meta().word.load(Ordering::Acquire);
            if now.wts() != seen.wts() {
                return !own_write
                    && self.timestamp_history
                    && history_allows(rec, *seen, approx_ts);
            }
            // Locked by another (we hold no lock yet) below approx_ts: it cannot be extended.
            own_write || !now.is_locked() || now.rts() >= approx_ts
        })
    }
}

/// TimestampHistory: whether a read of the version with `seen.wts()`, since replaced, is still
/// valid at `commit_ts`. It is when that version is the one the current version replaced and the
/// current version was installed after `commit_ts`. The history is read between two loads of the
/// word (seqlock-style) and trusted only if no install or lock happened in between.
fn history_allows(rec: &Record<'_, TicTocMeta>, seen: TsWord, commit_ts: u64) -> bool {
    let meta = rec.meta();
    // Acquire: pairs with the installer's Release store of the word, which it issues after
    // storing the history.
    let before = meta.word.load(Ordering::Acquire);
    // Relaxed: the surrounding word loads and the fence decide whether these values are usable.
    let prev_wts = meta.history.prev_wts.load(Ordering::Relaxed);
    let installed_wts = meta.history.installed_wts.load(Ordering::Relaxed);
    // Acquire fence: pairs with the Release fence an installer issues after locking and before
    // storing the history; if we saw its history stores, the reload sees its lock or new word.
    fence(Ordering::Acquire);
    let after = meta.word.load(Ordering::Relaxed);
    let stable = !before.is_locked() && !after.is_locked() && before.wts() == after.wts();
    stable && prev_wts == seen.wts() && commit_ts < installed_wts
}

/// Step 6: copies every buffered payload into its locked record and publishes the new version
/// (with its history, for TimestampHistory).
fn install(w: &mut TicTocWorker<'_>, commit_ts: u64, record_history: bool) {
    let new_word = TsWord::installed_at(commit_ts);
    for i in 0..w.writes.len() {
        let meta = w.writes.entries()[i].rec.meta();
        // Relaxed: we hold the lock, and only the lock holder changes a locked word.
        let replaced = meta.word.load(Ordering::Relaxed);
        debug_assert!(replaced.is_locked() && replaced.rts() < commit_ts);
        if record_history {
            // Relaxed: published by the Release store of the word below.
            let history = &meta.history;
            history.prev_wts.store(replaced.wts(), Ordering::Relaxed);
            history.installed_wts.store(commit_ts, Ordering::Relaxed);
        }
        w.writes.install(i);
        // Release: pairs with readers' Acquire loads of the word; they see this payload and
        // history with the version that describes them. Also ends our lock.
        meta.word.store(new_word, Ordering::Release);
    }
}
