//! The per-record lock of WAIT_DIE and WOUND_WAIT: it knows who holds it and who waits for it.
//!
//! ```text
//! owner:   0 = no exclusive holder, else (worker id + 1)
//! readers: bit i set = worker i holds the lock shared
//! waiters: bit i set = worker i is registered as waiting for this lock
//! ```
//!
//! Holder identities let a requester compare its timestamp with every conflicting holder's, so
//! workers are limited to [`MAX_WAITING_2PL_THREADS`](super::MAX_WAITING_2PL_THREADS) (one bit each).
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
use std::sync::atomic::{AtomicU64, Ordering};

/// The holders that stopped an acquisition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holders {
    /// The exclusive holder's worker id, if that was the conflict.
    pub owner: Option<usize>,
    /// Bitmap of conflicting shared holders (never includes the requester).
    pub readers: u64,
}

impl Holders {
    /// Worker ids of every conflicting holder.
    pub fn ids(self) -> impl Iterator<Item = usize> {
        self.owner.into_iter().chain(bits(self.readers))
    }
}

/// Worker ids of the set bits of `map`, lowest first.
pub fn bits(mut map: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if map == 0 {
            return None;
        }
        let i = map.trailing_zeros() as usize;
        map &= map - 1;
        Some(i)
    })
}

#[inline]
fn bit(id: usize) -> u64 {
    debug_assert!(id < 64, "worker id {id} has no bit");
    1 << id
}

/// A lock that records its holders and waiters (WAIT_DIE's and WOUND_WAIT's `RecordMeta`).
#[derive(Debug, Default)]
pub struct OwnedLock {
    owner: AtomicU64,
    readers: AtomicU64,
    waiters: AtomicU64,
}

impl OwnedLock {
    /// Worker `id` takes the lock in `want` mode, upgrading from `held` (`Some(Shared)`), or
    /// learns which holders conflict.
    pub fn try_acquire(
        &self,
        id: usize,
        want: LockMode,
        held: Option<LockMode>,
    ) -> Result<(), Holders> {
        match want {
            LockMode::Shared => self.try_shared(id),
            LockMode::Exclusive => self.try_exclusive(id, held == Some(LockMode::Shared)),
        }
    }

    fn try_shared(&self, id: usize) -> Result<(), Holders> {
        // SeqCst: cheap early exit; the handshake's own check is the load after fetch_or.
        let owner = self.owner.load(Ordering::SeqCst);
        if owner != 0 {
            return Err(Holders {
                owner: Some(owner as usize - 1),
                readers: 0,
            });
        }
        // SeqCst: the reader's write of the handshake (module docs).
        self.readers.fetch_or(bit(id), Ordering::SeqCst);
        // SeqCst: the reader's read of the handshake; also Acquire-pairs with the last writer's
        // Release in `release`, so its payload install is visible to our reads.
        let owner = self.owner.load(Ordering::SeqCst);
        if owner != 0 {
            // Release: keeps our bit visibly set until after we saw the owner (no data read).
            self.readers.fetch_and(!bit(id), Ordering::Release);
            return Err(Holders {
                owner: Some(owner as usize - 1),
                readers: 0,
            });
        }
        Ok(())
    }

    fn try_exclusive(&self, id: usize, upgrade: bool) -> Result<(), Holders> {
        // SeqCst: the writer's write of the handshake (module docs); Acquire-pairs with the
        // previous owner's Release in `release`.
        if let Err(owner) =
            self.owner
                .compare_exchange(0, id as u64 + 1, Ordering::SeqCst, Ordering::SeqCst)
        {
            return Err(Holders {
                owner: Some(owner as usize - 1),
                readers: 0,
            });
        }
        let own_bit = if upgrade { bit(id) } else { 0 };
        // SeqCst: the writer's read of the handshake; Acquire-pairs with readers' Release
        // `fetch_and` in `release`, so their payload loads finish before we install.
        let others = self.readers.load(Ordering::SeqCst) & !own_bit;
        if others != 0 {
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
            self.readers.fetch_and(!own_bit, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Mutant `OwnedLockWriterIgnoresReaders` (`protocol::mutants`): `try_exclusive` without the
    /// writer's read of the handshake, so shared holders keep their bits under a writer.
    #[cfg(test)]
    pub fn try_exclusive_ignoring_readers(&self, id: usize, upgrade: bool) -> Result<(), Holders> {
        // SeqCst: as in `try_exclusive`.
        if let Err(owner) =
            self.owner
                .compare_exchange(0, id as u64 + 1, Ordering::SeqCst, Ordering::SeqCst)
        {
            return Err(Holders {
                owner: Some(owner as usize - 1),
                readers: 0,
            });
        }
        if upgrade {
            // Relaxed: as in `try_exclusive`.
            self.readers.fetch_and(!bit(id), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Worker `id` releases a lock it holds in `mode`.
    pub fn release(&self, id: usize, mode: LockMode) {
        match mode {
            // Release: our payload loads happen before a later writer's install (pairs with the
            // writer's SeqCst load of `readers`).
            LockMode::Shared => {
                self.readers.fetch_and(!bit(id), Ordering::Release);
            }
            // Release: publishes the payload installed under the lock (pairs with the next
            // holder's SeqCst load or CAS of `owner`).
            LockMode::Exclusive => self.owner.store(0, Ordering::Release),
        }
    }

    /// Bitmap of registered waiters.
    #[inline]
    pub fn waiters(&self) -> u64 {
        // Acquire: pairs with the Release in `add_waiter`, so the waiter's published wanted mode
        // (written before its bit) is visible.
        self.waiters.load(Ordering::Acquire)
    }

    /// Registers worker `id` as a waiter (after it published its wanted mode).
    pub fn add_waiter(&self, id: usize) {
        // Release: publishes the wanted mode written before (see `waiters`).
        self.waiters.fetch_or(bit(id), Ordering::Release);
    }

    /// Deregisters worker `id`.
    pub fn remove_waiter(&self, id: usize) {
        // Relaxed: a stale bit only makes a requester defer once more, never breaks exclusion.
        self.waiters.fetch_and(!bit(id), Ordering::Relaxed);
    }

    /// Current holders as (owner, readers), for tests and diagnostics.
    pub fn holders(&self) -> (Option<usize>, u64) {
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
            (None, (1 << 3) | (1 << 5)),
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
        assert_eq!(l.holders(), (Some(3), 0));
        let h = l.try_acquire(5, LockMode::Shared, None).unwrap_err();
        assert_eq!(h.ids().collect::<Vec<_>>(), vec![3]);
        l.release(3, LockMode::Exclusive);
        assert_eq!(l.holders(), (None, 0));
    }

    #[test]
    fn bits_lists_ids() {
        assert_eq!(bits(0b1010_0001).collect::<Vec<_>>(), vec![0, 5, 7]);
        assert_eq!(bits(1 << 63).collect::<Vec<_>>(), vec![63]);
    }
}
