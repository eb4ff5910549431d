//! PLOR's commit (Figure 5) and abort.
//!
//! - Read-only attempt: an optimistic one validates that every record read is still at the install
//!   count it saw and not in exclusive mode (Silo's rule); a locked one just releases.
//! - Phase 1, per write-set entry, resumable after `Pending` (progress in `PlorWorker::next` and
//!   each entry's [`WriteState`]): take the write lock if DWA left it for now (WOUND_WAIT, in
//!   sorted order); enter exclusive mode; wound every younger reader; wait while any other reader
//!   bit remains (younger wounded ones clear theirs when they abort, or at their phase 2 if they
//!   were already past phase 1; older ones when they commit or abort). Waiting for wounded readers
//!   too keeps an install from overlapping any locked reader's copy. `POLLONCE` before each step.
//! - Phase 2 (commit point): release the read locks. No wound is honoured after this.
//! - Phase 3: a Release fence (the seqlock writer side for optimistic readers), then per entry:
//!   install, bump the version, leave exclusive mode, release the write lock.

use super::read::{ReadMode, still_current};
use super::{PlorOf, PlorWorker, WriteState};
use crate::on_cpu;
#[cfg(test)]
use crate::protocol::mutants::Mutant;
use crate::protocol::{Abort, OpResult};
use std::sync::atomic::{Ordering, fence};
use std::task::{Poll, ready};

/// Runs (or resumes) the commit of `w`'s attempt.
pub fn commit<const WORDS: usize>(p: &PlorOf<WORDS>, w: &mut PlorWorker<'_, WORDS>) -> OpResult {
    if w.writes.is_empty() {
        #[cfg(test)]
        if p.mutant == Mutant::PlorSkipReadOnlyValidation {
            release_reads(w);
            finish(w);
            return Poll::Ready(Ok(()));
        }
        return commit_read_only(w);
    }
    debug_assert!(!w.optimistic, "the first write locks the optimistic reads");
    #[cfg(test)]
    if p.mutant == Mutant::PlorReleaseReadsEarly {
        release_reads(w);
    }
    ready!(phase1(p, w))?;
    // Phase 2: the commit point.
    release_reads(w);
    // Phase 3. Release fence: pairs with optimistic readers' Acquire fence after their copy (see
    // `read::optimistic_read`), ordering the EXCL bits set in phase 1 before the installs.
    fence(Ordering::Release);
    let me = w.req.me.raw();
    for i in 0..w.writes.len() {
        w.writes.install(i);
        let lock = w.writes.entries()[i].rec.meta();
        lock.bump_version();
        lock.clear_exclusive();
        lock.write_unlock(me);
    }
    w.writes.clear();
    finish(w);
    Poll::Ready(Ok(()))
}

fn commit_read_only<const WORDS: usize>(w: &mut PlorWorker<'_, WORDS>) -> OpResult {
    let valid = w.reads.iter().all(|(rec, mode)| match *mode {
        ReadMode::Locked => true,
        ReadMode::Optimistic(seen) => still_current(rec.meta(), seen),
    });
    if !valid {
        return Poll::Ready(Err(Abort::ReadValidation));
    }
    release_reads(w);
    finish(w);
    Poll::Ready(Ok(()))
}

/// Phase 1: every write-set record exclusively held with no other reader left.
fn phase1<const WORDS: usize>(p: &PlorOf<WORDS>, w: &mut PlorWorker<'_, WORDS>) -> OpResult {
    if p.opts.dwa && !w.sorted {
        w.writes.sort_by_record();
        w.sorted = true;
    }
    let id = w.req.id;
    while w.next < w.writes.len() {
        p.poll_once(w)?;
        let rec = w.writes.entries()[w.next].rec;
        let lock = rec.meta();
        let state = w.writes.entries()[w.next].state;
        if !state.owned {
            ready!(w.req.acquire(&p.ctx, lock))?;
            w.writes.entries_mut()[w.next].state.owned = true;
        }
        let readers = if state.exclusive {
            lock.readers_now()
        } else {
            w.writes.entries_mut()[w.next].state = WriteState {
                owned: true,
                exclusive: true,
            };
            lock.set_exclusive()
        };
        let others = readers.without(id);
        if !others.is_empty() {
            for r in others.ids() {
                let theirs = p.ctx.load(r);
                if w.req.me.is_older_than(theirs) {
                    p.ctx.wound(theirs);
                }
                // The executor parks at once if every reader is away (`crate::on_cpu`).
                on_cpu::note_holder(r);
            }
            #[cfg(test)]
            if p.mutant == Mutant::PlorSkipReaderWait {
                w.next += 1;
                continue;
            }
            return Poll::Pending;
        }
        w.next += 1;
    }
    // The last POLLONCE: after this, wounds are ignored (the paper's phase-1 boundary).
    p.poll_once(w)?;
    Poll::Ready(Ok(()))
}

fn release_reads<const WORDS: usize>(w: &mut PlorWorker<'_, WORDS>) {
    let id = w.req.id;
    for (rec, mode) in w.reads.iter() {
        if *mode == ReadMode::Locked {
            rec.meta().read_unlock(id);
        }
    }
    w.reads.clear();
}

fn finish<const WORDS: usize>(w: &mut PlorWorker<'_, WORDS>) {
    w.last_accessed = w.accessed;
    w.sorted = false;
    w.next = 0;
}

/// Undoes the attempt: drops a waiter registration, leaves exclusive mode, releases the write and
/// read locks, and forgets the sets.
pub fn release_all<const WORDS: usize>(w: &mut PlorWorker<'_, WORDS>) {
    w.req.stop_waiting();
    let me = w.req.me.raw();
    for e in w.writes.entries() {
        if e.state.exclusive {
            e.rec.meta().clear_exclusive();
        }
        if e.state.owned {
            e.rec.meta().write_unlock(me);
        }
    }
    w.writes.clear();
    release_reads(w);
    finish(w);
}
