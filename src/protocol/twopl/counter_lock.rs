//! NO_WAIT's per-record lock: one word, an exclusive bit and a reader count, any number of workers.
//!
//! ```text
//!  63          62 ......................................... 0
//! +-----------+---------------------------------------------+
//! | EXCLUSIVE |  readers (number of shared holders)         |
//! +-----------+---------------------------------------------+
//! ```
//!
//! Invariant: `EXCLUSIVE` set implies `readers == 0`. Every acquisition is a single CAS that either
//! succeeds or reports a conflict (NO_WAIT never waits, so holders' identities are not needed).

use super::LockMode;
use std::sync::atomic::{AtomicU64, Ordering};

/// The packed value of a [`CounterLock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterLockWord(u64);

impl CounterLockWord {
    const EXCLUSIVE: u64 = 1 << 63;
    const FREE: CounterLockWord = CounterLockWord(0);

    /// Whether a writer holds the lock.
    #[inline]
    pub fn is_exclusive(self) -> bool {
        self.0 & Self::EXCLUSIVE != 0
    }

    /// Number of shared holders.
    #[inline]
    pub fn readers(self) -> u64 {
        self.0 & !Self::EXCLUSIVE
    }

    #[inline]
    fn with_one_more_reader(self) -> Self {
        debug_assert!(self.readers() < !Self::EXCLUSIVE);
        CounterLockWord(self.0 + 1)
    }
}

/// A reader/writer lock word in a record header (NO_WAIT's `RecordMeta`).
#[derive(Debug, Default)]
pub struct CounterLock {
    word: AtomicU64,
}

impl CounterLock {
    /// The current value (for tests and diagnostics).
    pub fn load(&self) -> CounterLockWord {
        // Relaxed: a snapshot for inspection; nothing is read under it.
        CounterLockWord(self.word.load(Ordering::Relaxed))
    }

    /// Takes the lock in `want` mode, upgrading from `held` (only `Some(Shared)` is an upgrade).
    /// Returns false on a conflict.
    #[inline]
    pub fn try_acquire(&self, want: LockMode, held: Option<LockMode>) -> bool {
        match (want, held) {
            (LockMode::Shared, _) => self.try_shared(),
            // An upgrade succeeds only when we are the single reader.
            (LockMode::Exclusive, Some(LockMode::Shared)) => self.cas(
                CounterLockWord(1),
                CounterLockWord(CounterLockWord::EXCLUSIVE),
            ),
            (LockMode::Exclusive, _) => self.cas(
                CounterLockWord::FREE,
                CounterLockWord(CounterLockWord::EXCLUSIVE),
            ),
        }
    }

    fn try_shared(&self) -> bool {
        // Relaxed: a guess for the CAS, which re-checks it.
        let mut seen = CounterLockWord(self.word.load(Ordering::Relaxed));
        loop {
            if seen.is_exclusive() {
                return false;
            }
            // Acquire: pairs with the Release in `release(Exclusive)`, so the last writer's
            // payload install is visible to the reads made under this lock.
            match self.word.compare_exchange_weak(
                seen.0,
                seen.with_one_more_reader().0,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => seen = CounterLockWord(now),
            }
        }
    }

    fn cas(&self, from: CounterLockWord, to: CounterLockWord) -> bool {
        // Acquire: pairs with the Release of the previous holders' `release` (their payload
        // installs, and readers' loads finished before we overwrite).
        self.word
            .compare_exchange(from.0, to.0, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Releases a lock held in `mode`.
    #[inline]
    pub fn release(&self, mode: LockMode) {
        match mode {
            // Release: our payload loads happen before a later writer's install.
            LockMode::Shared => {
                self.word.fetch_sub(1, Ordering::Release);
            }
            // Release: publishes the payload installed under the lock. A plain store is enough:
            // while EXCLUSIVE is set nobody else changes the word (every acquire is a CAS).
            LockMode::Exclusive => self.word.store(0, Ordering::Release),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_writer_excludes_and_upgrade_needs_sole_reader() {
        let l = CounterLock::default();
        assert!(l.try_acquire(LockMode::Shared, None));
        assert!(l.try_acquire(LockMode::Shared, None));
        assert_eq!(l.load().readers(), 2);
        assert!(!l.try_acquire(LockMode::Exclusive, None));
        assert!(!l.try_acquire(LockMode::Exclusive, Some(LockMode::Shared)));
        l.release(LockMode::Shared);
        assert!(l.try_acquire(LockMode::Exclusive, Some(LockMode::Shared)));
        assert!(l.load().is_exclusive() && l.load().readers() == 0);
        assert!(!l.try_acquire(LockMode::Shared, None));
        l.release(LockMode::Exclusive);
        assert_eq!(l.load(), CounterLockWord::FREE);
    }

    #[test]
    fn counts_past_sixty_four_readers() {
        let l = CounterLock::default();
        for _ in 0..1000 {
            assert!(l.try_acquire(LockMode::Shared, None));
        }
        assert_eq!(l.load().readers(), 1000);
    }
}
