//! Ord-Lock's per-record reader/writer lock: one word, with a writer-waiting flag so a stream
//! of readers cannot starve a writer.
//!
//! ```text
//!  63          62               61 ............................. 0
//! +-----------+----------------+---------------------------------+
//! | EXCLUSIVE | WRITER_WAITING |  readers (number of shared holders)
//! +-----------+----------------+---------------------------------+
//! ```
//!
//! A writer that finds the lock busy raises `WRITER_WAITING`; new readers then stay out until a
//! writer has taken the lock (which clears the flag; other waiting writers raise it again on
//! their next try). Every try is one CAS or one `fetch_or`: waiting is the caller's (it returns
//! `Pending`). Waiting on this flag cannot deadlock Ord-Lock: every transaction takes its locks in
//! one global order, so a reader kept out of record `r` waits for a writer that holds only
//! records ordered before `r`, and `r`'s holders wait only for records ordered after it.

use std::sync::atomic::{AtomicU64, Ordering};

const EXCLUSIVE: u64 = 1 << 63;
const WRITER_WAITING: u64 = 1 << 62;
const READERS: u64 = WRITER_WAITING - 1;

/// The lock word in each record header (Ord-Lock's `RecordMeta`).
#[derive(Debug, Default)]
pub struct OrdRwLock {
    word: AtomicU64,
}

impl OrdRwLock {
    /// Takes a shared hold; false when a writer holds the lock or waits for it.
    #[inline]
    pub fn try_shared(&self) -> bool {
        // Relaxed: a guess for the CAS, which re-checks it.
        let mut seen = self.word.load(Ordering::Relaxed);
        loop {
            if seen & (EXCLUSIVE | WRITER_WAITING) != 0 {
                return false;
            }
            debug_assert!(seen & READERS < READERS);
            // Acquire on success: the reader then copies the payload, which must see the last
            // writer's install (published by its Release in `release_exclusive`).
            match self.word.compare_exchange_weak(
                seen,
                seen + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
    }

    /// Takes the exclusive hold; false (raising the writer-waiting flag) when anyone holds it.
    #[inline]
    pub fn try_exclusive(&self) -> bool {
        // Relaxed: a guess for the CAS, which re-checks it.
        let seen = self.word.load(Ordering::Relaxed);
        if seen & (EXCLUSIVE | READERS) == 0 {
            // Acquire: the writer reads and overwrites the payload after previous holders'
            // accesses (their Release in the release functions). Clearing WRITER_WAITING is
            // intended: the writer the flag was raised for (or another) now holds the lock.
            if self
                .word
                .compare_exchange(seen, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return true;
            }
        }
        // Relaxed: the flag only keeps new readers out; it publishes nothing.
        self.word.fetch_or(WRITER_WAITING, Ordering::Relaxed);
        false
    }

    /// Drops a shared hold.
    #[inline]
    pub fn release_shared(&self) {
        // Release: the reader's copies happen before a later writer's install.
        let before = self.word.fetch_sub(1, Ordering::Release);
        debug_assert!(before & READERS > 0 && before & EXCLUSIVE == 0);
    }

    /// Drops the exclusive hold (keeping a writer-waiting flag raised meanwhile).
    #[inline]
    pub fn release_exclusive(&self) {
        // Release: the install happens before the next holder's Acquire.
        let before = self.word.fetch_and(!EXCLUSIVE, Ordering::Release);
        debug_assert!(before & EXCLUSIVE != 0);
    }

    /// Whether the lock is free of holders (tests).
    #[cfg(test)]
    pub fn is_free(&self) -> bool {
        // Relaxed: an inspection in single-threaded tests.
        self.word.load(Ordering::Relaxed) & (EXCLUSIVE | READERS) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_and_a_waiting_writer_keeps_new_readers_out() {
        let l = OrdRwLock::default();
        assert!(l.try_shared());
        assert!(l.try_shared());
        assert!(!l.try_exclusive(), "readers hold it");
        assert!(!l.try_shared(), "a writer waits: new readers stay out");
        l.release_shared();
        l.release_shared();
        assert!(l.try_exclusive());
        assert!(!l.try_shared());
        assert!(!l.try_exclusive());
        l.release_exclusive();
        // The second writer's flag stays raised until a writer takes the lock.
        assert!(!l.try_shared());
        assert!(l.try_exclusive());
        l.release_exclusive();
        assert!(l.try_shared());
        l.release_shared();
        assert!(l.is_free());
    }
}
