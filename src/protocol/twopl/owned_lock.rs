//! The per-record lock of WAIT_DIE and WOUND_WAIT: it knows who holds it and who waits for it.
//!
//! ```text
//! owner:   0 = no exclusive holder, else (worker id + 1)
//! readers: bit i set = worker i holds the lock shared
//! waiters: bit i set = worker i is registered as waiting for this lock
//! ```
//!
//! Holder identities let a requester compare its timestamp with every conflicting holder's, so
//! the bitmaps have one bit per worker: `WORDS` words of them ([`AtomicWorkerSet`]), chosen per
//! run from the worker count. One word (64 workers, a 24-byte lock) unless the run has more
//! workers; [`WIDE_WORDS`](super::WIDE_WORDS) words name up to
//! [`MAX_WAITING_2PL_THREADS`](super::MAX_WAITING_2PL_THREADS).
//!
//! # The reader/writer handshake
//!
//! A reader sets its bit, then checks `owner`; a writer sets `owner`, then checks `readers`
//! (a Dekker-style handshake). Each side writes one location and reads the other, so
//! acquire/release orderings are not enough: both could read the old value and both acquire.
//! All four accesses are `SeqCst`, which puts them in one total order: whichever write comes
//! first in it is seen by the other side's read, so at least one of the two backs off (undoes its
//! write and reports the conflict). A writer that backs off leaves `owner` set for a moment, so a
//! reader may see a conflict with a writer that never got the lock: a spurious conflict, never a
//! missed one.

use super::LockMode;
use crate::protocol::worker_set::{AtomicWorkerSet, WorkerSet};
use crate::sync::atomic::{AtomicU64, Ordering};

/// The holders that stopped an acquisition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holders<const WORDS: usize = 1> {
    /// The exclusive holder's worker id, if that was the conflict.
    pub owner: Option<usize>,
    /// Conflicting shared holders (never includes the requester).
    pub readers: WorkerSet<WORDS>,
}

impl<const WORDS: usize> Holders<WORDS> {
    /// The exclusive holder `owner` (raw owner word, worker id + 1) stopped the acquisition.
    fn by_owner(owner: u64) -> Self {
        Holders {
            owner: Some(owner as usize - 1),
            readers: WorkerSet::default(),
        }
    }

    /// Worker ids of every conflicting holder.
    pub fn ids(self) -> impl Iterator<Item = usize> {
        self.owner.into_iter().chain(self.readers.ids())
    }
}

/// A lock that records its holders and waiters (WAIT_DIE's and WOUND_WAIT's `RecordMeta`), for
/// up to `64 x WORDS` workers.
#[derive(Debug, Default)]
pub struct OwnedLock<const WORDS: usize = 1> {
    owner: AtomicU64,
    readers: AtomicWorkerSet<WORDS>,
    waiters: AtomicWorkerSet<WORDS>,
}

impl<const WORDS: usize> OwnedLock<WORDS> {
    /// Most workers the lock can name.
    pub const CAPACITY: usize = WorkerSet::<WORDS>::CAPACITY;

    /// Worker `id` takes the lock in `want` mode, upgrading from `held` (`Some(Shared)`), or
    /// learns which holders conflict.
    pub fn try_acquire(
        &self,
        id: usize,
        want: LockMode,
        held: Option<LockMode>,
    ) -> Result<(), Holders<WORDS>> {
        match want {
            LockMode::Shared => self.try_shared(id),
            LockMode::Exclusive => self.try_exclusive(id, held == Some(LockMode::Shared)),
        }
    }

    fn try_shared(&self, id: usize) -> Result<(), Holders<WORDS>> {
        // SeqCst: cheap early exit; the handshake's own check is the load after fetch_or.
        let owner = self.owner.load(Ordering::SeqCst);
        if owner != 0 {
            return Err(Holders::by_owner(owner));
        }
        // SeqCst: the reader's write of the handshake (module docs).
        self.readers.insert(id, Ordering::SeqCst);
        // SeqCst: the reader's read of the handshake; also Acquire-pairs with the last writer's
        // Release in `release`, so its payload install is visible to our reads.
        let owner = self.owner.load(Ordering::SeqCst);
        if owner != 0 {
            // Release: keeps our bit visibly set until after we saw the owner (no data read).
            self.readers.remove(id, Ordering::Release);
            return Err(Holders::by_owner(owner));
        }
        Ok(())
    }

    fn try_exclusive(&self, id: usize, upgrade: bool) -> Result<(), Holders<WORDS>> {
        // SeqCst: the writer's write of the handshake (module docs); Acquire-pairs with the
        // previous owner's Release in `release`.
        if let Err(owner) =
            self.owner
                .compare_exchange(0, id as u64 + 1, Ordering::SeqCst, Ordering::SeqCst)
        {
            return Err(Holders::by_owner(owner));
        }
        // SeqCst: the writer's read of the handshake; Acquire-pairs with readers' Release
        // `fetch_and` in `release`, so their payload loads finish before we install. With several
        // words, each load is still in the SeqCst total order (see `AtomicWorkerSet::load`).
        let mut others = self.readers.load(Ordering::SeqCst);
        if upgrade {
            others = others.without(id);
        }
        if !others.is_empty() {
            // Release: we read nothing under the failed attempt; Release keeps it symmetric with
            // `release` so a later acquirer's Acquire sees a consistent word.
            self.owner.store(0, Ordering::Release);
            return Err(Holders {
                owner: None,
                readers: others,
            });
        }
        if upgrade {
            // Relaxed: we hold the lock exclusively now; the bit only names us as a holder.
            self.readers.remove(id, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Mutant `OwnedLockWriterIgnoresReaders` (`protocol::mutants`): `try_exclusive` without the
    /// writer's read of the handshake, so shared holders keep their bits under a writer.
    #[cfg(test)]
    pub fn try_exclusive_ignoring_readers(
        &self,
        id: usize,
        upgrade: bool,
    ) -> Result<(), Holders<WORDS>> {
        // SeqCst: as in `try_exclusive`.
        if let Err(owner) =
            self.owner
                .compare_exchange(0, id as u64 + 1, Ordering::SeqCst, Ordering::SeqCst)
        {
            return Err(Holders::by_owner(owner));
        }
        if upgrade {
            // Relaxed: as in `try_exclusive`.
            self.readers.remove(id, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Worker `id` releases a lock it holds in `mode`.
    pub fn release(&self, id: usize, mode: LockMode) {
        match mode {
            // Release: our payload loads happen before a later writer's install (pairs with the
            // writer's SeqCst load of `readers`).
            LockMode::Shared => self.readers.remove(id, Ordering::Release),
            // Release: publishes the payload installed under the lock (pairs with the next
            // holder's SeqCst load or CAS of `owner`).
            LockMode::Exclusive => self.owner.store(0, Ordering::Release),
        }
    }

    /// Bitmap of registered waiters.
    #[inline]
    pub fn waiters(&self) -> WorkerSet<WORDS> {
        // Acquire: pairs with the Release in `add_waiter`, so the waiter's published wanted mode
        // (written before its bit) is visible.
        self.waiters.load(Ordering::Acquire)
    }

    /// Registers worker `id` as a waiter (after it published its wanted mode).
    pub fn add_waiter(&self, id: usize) {
        // Release: publishes the wanted mode written before (see `waiters`).
        self.waiters.insert(id, Ordering::Release);
    }

    /// Deregisters worker `id`.
    pub fn remove_waiter(&self, id: usize) {
        // Relaxed: a stale bit only makes a requester defer once more, never breaks exclusion.
        self.waiters.remove(id, Ordering::Relaxed);
    }

    /// Current holders as (owner, readers), for tests and diagnostics.
    pub fn holders(&self) -> (Option<usize>, WorkerSet<WORDS>) {
        // Relaxed: a snapshot for inspection.
        let owner = self.owner.load(Ordering::Relaxed);
        (
            owner.checked_sub(1).map(|o| o as usize),
            self.readers.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_name_the_holders() {
        let l = OwnedLock::default();
        assert!(l.try_acquire(3, LockMode::Shared, None).is_ok());
        assert!(l.try_acquire(5, LockMode::Shared, None).is_ok());
        let h = l.try_acquire(7, LockMode::Exclusive, None).unwrap_err();
        assert_eq!(h.ids().collect::<Vec<_>>(), vec![3, 5]);
        assert_eq!(
            l.holders(),
            (None, WorkerSet::from_words([(1 << 3) | (1 << 5)])),
            "failed writer backed off"
        );
        let h = l
            .try_acquire(3, LockMode::Exclusive, Some(LockMode::Shared))
            .unwrap_err();
        assert_eq!(h.ids().collect::<Vec<_>>(), vec![5]);
        l.release(5, LockMode::Shared);
        assert!(
            l.try_acquire(3, LockMode::Exclusive, Some(LockMode::Shared))
                .is_ok()
        );
        assert_eq!(l.holders(), (Some(3), WorkerSet::default()));
        let h = l.try_acquire(5, LockMode::Shared, None).unwrap_err();
        assert_eq!(h.ids().collect::<Vec<_>>(), vec![3]);
        l.release(3, LockMode::Exclusive);
        assert_eq!(l.holders(), (None, WorkerSet::default()));
    }

    #[test]
    fn wide_locks_name_holders_beyond_64() {
        let l = OwnedLock::<16>::default();
        assert_eq!(OwnedLock::<16>::CAPACITY, 1024);
        for id in [3, 64, 700, 1023] {
            assert!(l.try_acquire(id, LockMode::Shared, None).is_ok());
        }
        let h = l.try_acquire(0, LockMode::Exclusive, None).unwrap_err();
        assert_eq!(h.ids().collect::<Vec<_>>(), vec![3, 64, 700, 1023]);
        for id in [3, 64, 1023] {
            l.release(id, LockMode::Shared);
        }
        let h = l
            .try_acquire(700, LockMode::Exclusive, Some(LockMode::Shared))
            .map(|()| l.holders());
        assert_eq!(
            h,
            Ok((Some(700), WorkerSet::default())),
            "upgrade by worker 700"
        );
        let h = l.try_acquire(999, LockMode::Shared, None).unwrap_err();
        assert_eq!(h.ids().collect::<Vec<_>>(), vec![700]);
        l.add_waiter(999);
        assert_eq!(l.waiters().ids().collect::<Vec<_>>(), vec![999]);
        l.remove_waiter(999);
        l.release(700, LockMode::Exclusive);
        assert_eq!(l.holders(), (None, WorkerSet::default()));
    }
}
