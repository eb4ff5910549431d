//! The record-lock interface MOCC needs, and the reader/writer lock CCBench uses behind it.
//!
//! MOCC (section 3.3) takes locks in three ways: *unconditionally* in canonical mode (wait until
//! granted), *try* in non-canonical mode (give up at once), and *asynchronously* (leave a request
//! and check it later, or cancel it). Operations here never wait: an unconditional acquisition is
//! [`RecordLock::request`] once, then [`RecordLock::poll`] on every re-poll of the operation, and
//! [`RecordLock::cancel`] if the transaction gives up (abort, or a read lock it decides to skip).
//!
//! Two implementations: [`RwLock`] (one word: writer bit and reader count; a waiting request simply
//! retries the CAS on each poll, as CCBench's MOCC does) and [`super::mql::MqlLock`] (a FIFO queue of
//! per-worker nodes with cancellation, MOCC section 4).

use std::sync::atomic::{AtomicU64, Ordering};

/// Lock mode. `Read < Write`: a write lock covers a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockMode {
    /// Shared.
    Read,
    /// Exclusive.
    Write,
}

/// What a request returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// The lock is held now.
    Granted,
    /// Queued (or, for [`RwLock`], not yet taken): poll with this ticket, or cancel it.
    Queued(u32),
}

/// A per-record lock with try, asynchronous (request / poll / cancel) and release operations.
/// `Queue` is the per-protocol storage the lock needs for waiting requests (MQL's queue nodes, one
/// per worker); worker `w` may have at most one outstanding request.
pub trait RecordLock: Default + Send + Sync + 'static {
    /// Storage for waiting requests, shared by all records.
    type Queue: Send + Sync;
    /// Stable name for reports.
    const NAME: &'static str;

    /// Storage for `workers` workers.
    fn queue(workers: usize) -> Self::Queue;
    /// Takes the lock if it is free for `mode` right now; never queues.
    fn try_lock(&self, q: &Self::Queue, mode: LockMode) -> bool;
    /// Requests the lock for worker `worker`: granted now, or a ticket to poll.
    fn request(&self, q: &Self::Queue, worker: usize, mode: LockMode) -> Request;
    /// Whether the request with `ticket` has been granted (then it is held, and the ticket spent).
    fn poll(&self, q: &Self::Queue, ticket: u32, mode: LockMode) -> bool;
    /// Withdraws a request. Returns true if it was granted before it could be withdrawn: the
    /// caller then holds the lock and must release it.
    fn cancel(&self, q: &Self::Queue, ticket: u32) -> bool;
    /// Releases a lock held in `mode`.
    fn unlock(&self, q: &Self::Queue, mode: LockMode);
}

/// CCBench's reader/writer lock: one word, no queue.
///
/// ```text
///  63        62 ............................................ 0
/// +--------+-------------------------------------------------+
/// | WRITER |  readers (number of shared holders)             |
/// +--------+-------------------------------------------------+
/// ```
///
/// Invariant: `WRITER` set implies `readers == 0`.
#[derive(Debug, Default)]
pub struct RwLock {
    word: AtomicU64,
}

/// The packed value of an [`RwLock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RwWord(u64);

impl RwWord {
    const WRITER: u64 = 1 << 63;

    /// Whether a writer holds the lock.
    pub fn is_write_locked(self) -> bool {
        self.0 & Self::WRITER != 0
    }

    /// Number of readers holding the lock.
    pub fn readers(self) -> u64 {
        self.0 & !Self::WRITER
    }
}

impl RwLock {
    /// The current value (tests, diagnostics).
    pub fn load(&self) -> RwWord {
        // Relaxed: a snapshot for inspection only.
        RwWord(self.word.load(Ordering::Relaxed))
    }

    fn try_take(&self, mode: LockMode) -> bool {
        // Relaxed: a guess for the CAS, which re-checks it.
        let mut seen = self.load();
        loop {
            let next = match mode {
                LockMode::Read if !seen.is_write_locked() => seen.0 + 1,
                LockMode::Write if seen.0 == 0 => RwWord::WRITER,
                _ => return false,
            };
            // Acquire: pairs with the Release in `unlock`, so the previous holder's critical
            // section happens before ours.
            match self.word.compare_exchange_weak(
                seen.0,
                next,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => seen = RwWord(now),
            }
        }
    }
}

impl RecordLock for RwLock {
    type Queue = ();
    const NAME: &'static str = "rw";

    fn queue(_workers: usize) {}

    fn try_lock(&self, _q: &(), mode: LockMode) -> bool {
        self.try_take(mode)
    }

    fn request(&self, _q: &(), _worker: usize, mode: LockMode) -> Request {
        if self.try_take(mode) {
            Request::Granted
        } else {
            Request::Queued(0)
        }
    }

    fn poll(&self, _q: &(), _ticket: u32, mode: LockMode) -> bool {
        self.try_take(mode)
    }

    fn cancel(&self, _q: &(), _ticket: u32) -> bool {
        false
    }

    fn unlock(&self, _q: &(), mode: LockMode) {
        match mode {
            // Release: our critical section happens before the next holder's Acquire.
            LockMode::Read => {
                self.word.fetch_sub(1, Ordering::Release);
            }
            // Release: as above. A plain store suffices: while WRITER is set nobody else changes
            // the word (every acquisition is a CAS that fails on WRITER).
            LockMode::Write => self.word.store(0, Ordering::Release),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_writer_excludes_and_poll_retakes() {
        let l = RwLock::default();
        assert_eq!(l.request(&(), 0, LockMode::Read), Request::Granted);
        assert!(l.try_lock(&(), LockMode::Read));
        assert_eq!(l.load().readers(), 2);
        assert!(!l.try_lock(&(), LockMode::Write), "try fails while held");
        let Request::Queued(t) = l.request(&(), 1, LockMode::Write) else {
            panic!("writer must wait for readers");
        };
        l.unlock(&(), LockMode::Read);
        assert!(!l.poll(&(), t, LockMode::Write));
        l.unlock(&(), LockMode::Read);
        assert!(
            l.poll(&(), t, LockMode::Write),
            "granted once the readers left"
        );
        assert!(l.load().is_write_locked());
        assert!(!l.try_lock(&(), LockMode::Read));
        l.unlock(&(), LockMode::Write);
        assert_eq!(l.load(), RwWord(0));
    }
}
