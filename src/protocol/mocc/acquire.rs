//! Taking MOCC's locks: the current lock list (CLL), canonical mode, and RLL prefixes
//! (MOCC 3.3.1-3.3.2, Algorithm 1 `lock` and lines 33-36).
//!
//! `lock(t, m)`:
//! 1. If a request for `t` is outstanding (an earlier call returned `Pending`), poll it. A read
//!    request polled more than [`READ_WAIT_POLLS`] times is cancelled and the read proceeds
//!    optimistically (a read lock is an optimisation, never required).
//! 2. If `t` is held in `m` or stronger, done.
//! 3. The *violations* are the held locks ordered at or after `t` (a weaker hold of `t` itself
//!    included: upgrading is release-and-retake). Up to [`RESTORE_LIMIT`] of them are released to
//!    restore canonical mode, and `t` is then requested unconditionally: granted, or queued and
//!    `Pending` until granted. Beyond the limit, `t` is *tried* without releasing (non-canonical):
//!    a failed try skips a read lock and aborts a write lock (`LockConflict`).
//!
//! Why this is deadlock-free: a worker only ever waits on a request that is canonical (all its
//! held locks are ordered before it), so along any chain of waits the lock addresses strictly
//! grow; non-canonical requests never wait; and an optimistic read waits only for a TID install
//! bit, which is set by a committer that no longer waits.

use super::{Held, LockMode, Mocc, MoccWorker, Rec, RecordLock, Request, Waiting};
use crate::protocol::Abort;
use std::task::Poll;

/// Most locks released at once to restore canonical mode; beyond it, try instead.
pub const RESTORE_LIMIT: usize = 16;
/// Polls of a queued read request before it is cancelled and the read goes optimistic.
pub const READ_WAIT_POLLS: u32 = 1024;

impl<L: RecordLock> Mocc<L> {
    /// Locks for an access to `rec` in `mode`: first every not-yet-taken RLL entry ordered before
    /// `rec` (in its preferred mode), then `rec`. A skipped read lock is not an error.
    pub(super) fn lock_for_access<'db>(
        &self,
        w: &mut MoccWorker<'db, L>,
        rec: Rec<'db, L>,
        mode: LockMode,
    ) -> Poll<Result<(), Abort>> {
        let key = rec.order_key();
        while let Some(i) = w
            .rll
            .iter()
            .position(|p| !p.done && p.rec.order_key() < key)
        {
            let (r, m) = (w.rll[i].rec, w.rll[i].mode);
            match self.lock(w, r, m) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(why)) => return Poll::Ready(Err(why)),
                Poll::Ready(Ok(_)) => w.rll[i].done = true,
            }
        }
        if let Some(p) = w.rll.iter_mut().find(|p| p.rec.order_key() == key) {
            p.done = true;
        }
        self.lock(w, rec, mode).map(|r| r.map(|_| ()))
    }

    /// Algorithm 1 `lock(t, m)`; see the module docs. `Ok(true)`: held; `Ok(false)`: a read
    /// lock skipped.
    pub(super) fn lock<'db>(
        &self,
        w: &mut MoccWorker<'db, L>,
        rec: Rec<'db, L>,
        mode: LockMode,
    ) -> Poll<Result<bool, Abort>> {
        let key = rec.order_key();
        let lock = &rec.meta().lock;
        if let Some(mut wait) = w.waiting.take() {
            debug_assert!(
                wait.rec.order_key() == key && wait.mode == mode,
                "re-polled a different lock"
            );
            if lock.poll(&self.queue, wait.ticket, wait.mode) {
                w.cll.push(Held { rec, mode });
                return Poll::Ready(Ok(true));
            }
            wait.polls += 1;
            if wait.mode == LockMode::Read && wait.polls > READ_WAIT_POLLS {
                let granted = lock.cancel(&self.queue, wait.ticket);
                if granted {
                    w.cll.push(Held { rec, mode });
                }
                return Poll::Ready(Ok(granted));
            }
            w.waiting = Some(wait);
            return Poll::Pending;
        }
        let first = w.cll.partition_point(|h| h.rec.order_key() < key);
        if let Some(h) = w.cll.get(first)
            && h.rec.order_key() == key
            && h.mode >= mode
        {
            return Poll::Ready(Ok(true));
        }
        let violations = w.cll.len() - first;
        if violations > RESTORE_LIMIT {
            // Non-canonical: never wait. A weaker hold of `rec` is released first (no upgrade).
            if w.cll[first].rec.order_key() == key {
                let h = w.cll.remove(first);
                lock.unlock(&self.queue, h.mode);
            }
            if lock.try_lock(&self.queue, mode) {
                w.cll.insert(first, Held { rec, mode });
                return Poll::Ready(Ok(true));
            }
            return Poll::Ready(match mode {
                LockMode::Read => Ok(false),
                LockMode::Write => Err(Abort::LockConflict),
            });
        }
        // Restore canonical mode, then request unconditionally.
        self.release_from(w, first);
        match lock.request(&self.queue, w.id, mode) {
            Request::Granted => {
                w.cll.push(Held { rec, mode });
                Poll::Ready(Ok(true))
            }
            Request::Queued(ticket) => {
                w.waiting = Some(Waiting {
                    rec,
                    mode,
                    ticket,
                    polls: 0,
                });
                Poll::Pending
            }
        }
    }

    /// Releases the CLL entries from index `from` on.
    pub(super) fn release_from(&self, w: &mut MoccWorker<'_, L>, from: usize) {
        for h in w.cll.drain(from..) {
            h.rec.meta().lock.unlock(&self.queue, h.mode);
        }
    }

    /// Withdraws the outstanding request, if any (releasing the lock if the grant won).
    pub(super) fn withdraw(&self, w: &mut MoccWorker<'_, L>) {
        let Some(wait) = w.waiting.take() else {
            return;
        };
        let lock = &wait.rec.meta().lock;
        if lock.cancel(&self.queue, wait.ticket) {
            lock.unlock(&self.queue, wait.mode);
        }
    }
}
