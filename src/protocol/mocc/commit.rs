//! MOCC's commit (Algorithm 1 `commit`, MOCC 3.3.4): Silo's commit with canonical write locking.
//!
//! 1. Sort the write set by address and write-lock each entry through `Mocc::lock` (canonical:
//!    locks held past an entry are released first; a wait resumes at the same entry).
//! 2. Mark each written record's TID word locked (we hold its write lock, so the CAS cannot fail
//!    unless a bug let two writers in). From here on nothing waits.
//! 3. `SeqCst` fence (serialization point; pairs with other committers' step 2), then the epoch.
//! 4. Verify every read: TID unchanged and not marked by another committer. A failure heats the
//!    record's temperature and aborts (`ReadValidation`).
//! 5. Install with a TID above every TID seen, which clears the mark; release every lock.

use super::{LockMode, Mocc, MoccWorker, RecordLock};
#[cfg(test)]
use crate::protocol::mutants::Mutant;
use crate::protocol::silo::TidWord;
use crate::protocol::{Abort, OpResult};
use std::sync::atomic::{Ordering, fence};
use std::task::Poll;

impl<L: RecordLock> Mocc<L> {
    pub(super) fn commit_impl(&self, w: &mut MoccWorker<'_, L>) -> OpResult {
        if !w.sorted {
            w.writes.sort_by_record();
            w.sorted = true;
        }
        while w.locked < w.writes.len() {
            let rec = w.writes.entries()[w.locked].rec;
            match self.lock(w, rec, LockMode::Write) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(why)) => return Poll::Ready(Err(why)),
                Poll::Ready(Ok(true)) => w.locked += 1,
                Poll::Ready(Ok(false)) => unreachable!("write locks are never skipped"),
            }
        }
        while w.marked < w.writes.len() {
            let tid = &w.writes.entries()[w.marked].rec.meta().tid;
            let seen = tid.load();
            if seen.is_locked() || !tid.try_lock(seen) {
                debug_assert!(false, "TID marked by another while we hold the write lock");
                return Poll::Ready(Err(Abort::LockConflict));
            }
            w.writes.entries_mut()[w.marked].state = seen;
            w.marked += 1;
        }

        // Serialization point: the marks above are ordered before the epoch and read-set loads
        // below (as in Silo 4.2), so of two committers that read what the other writes, at least
        // one sees the other's mark. Also the seqlock writer's Release half: the marks are
        // ordered before the payload stores of the installs (pairs with the Acquire fence in
        // `read_consistent`).
        fence(Ordering::SeqCst);
        let epoch = self.epochs.epochs().global();

        let mut max_tid = w.last_tid.tid();
        let mut failed = None;
        for (rec, seen) in w.reads.iter() {
            #[cfg(test)]
            if self.mutant == Mutant::MoccSkipVerification
                || (self.mutant == Mutant::MoccTrustHotReads && self.is_hot(w, rec))
            {
                max_tid = max_tid.max(seen.tid());
                continue;
            }
            let now = rec.meta().tid.load();
            if now.tid() != seen.tid() || (now.is_locked() && w.writes.position(rec).is_none()) {
                failed = Some(*rec);
                break;
            }
            max_tid = max_tid.max(seen.tid());
        }
        if let Some(rec) = failed {
            self.temp_cell(&rec).hotter(epoch, &mut w.rng);
            w.failed = Some(rec.order_key());
            return Poll::Ready(Err(Abort::ReadValidation));
        }
        for e in w.writes.entries() {
            max_tid = max_tid.max(e.state.tid());
        }

        let tid = TidWord::next_after(max_tid, epoch);
        for i in 0..w.writes.len() {
            w.writes.install(i);
            w.writes.entries()[i].rec.meta().tid.store(tid);
        }
        w.marked = 0;
        w.locked = 0;
        w.last_tid = tid;
        self.release_from(w, 0);
        w.rll.clear();
        Poll::Ready(Ok(()))
    }
}
