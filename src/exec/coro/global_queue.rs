//! SGPM's global queue: transactions waiting for a slot on any worker thread.
//!
//! A slot that needs its next transaction takes the queue's front if there is one, and otherwise
//! generates a fresh request itself (the queue's tail is, in effect, an endless supply of new
//! requests, generated lazily so that no request waits before its first start). Transactions that
//! a signal moves out of their slot (ML: to the tail; SF: to the front) wait here, keeping their
//! first start so that their latency includes the time spent here.
//!
//! A mutex guards the entries; the hot path (no moved transactions) reads only the length, a word
//! written only when entries come and go.

use crossbeam_utils::CachePadded;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The run's global queue of transactions `J`.
pub struct GlobalQueue<J> {
    /// Entries now queued, kept next to the mutex so that an empty queue costs one load.
    len: CachePadded<AtomicUsize>,
    entries: Mutex<VecDeque<J>>,
}

impl<J> GlobalQueue<J> {
    /// An empty queue.
    pub fn new() -> Self {
        GlobalQueue {
            len: CachePadded::new(AtomicUsize::new(0)),
            entries: Mutex::new(VecDeque::new()),
        }
    }

    /// Entries queued now (a snapshot).
    pub fn len(&self) -> usize {
        // Relaxed: a hint; the mutex decides.
        self.len.load(Ordering::Relaxed)
    }

    /// Takes the front entry, if any.
    #[inline]
    pub fn pop_front(&self) -> Option<J> {
        if self.len() == 0 {
            return None;
        }
        let mut q = self.lock();
        let out = q.pop_front();
        // Relaxed: updated under the mutex; readers only use it as a hint.
        self.len.store(q.len(), Ordering::Relaxed);
        out
    }

    /// ML: `job` goes to the tail; returns the front it displaces as the next to run, if the
    /// queue held one before (otherwise the caller generates a fresh transaction).
    pub fn move_back(&self, job: J) -> Option<J> {
        let mut q = self.lock();
        let front = q.pop_front();
        q.push_back(job);
        // Relaxed: updated under the mutex; readers only use it as a hint.
        self.len.store(q.len(), Ordering::Relaxed);
        front
    }

    /// SF: `job` takes the front's place; returns the front it displaces, if any.
    pub fn move_front(&self, job: J) -> Option<J> {
        let mut q = self.lock();
        let front = q.pop_front();
        q.push_front(job);
        // Relaxed: as in `move_back`.
        self.len.store(q.len(), Ordering::Relaxed);
        front
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<J>> {
        // A panic while holding the lock aborts the process (panic = "abort" in release; tests
        // fail anyway), so a poisoned queue is still consistent: take it.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<J> Default for GlobalQueue<J> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_keep_order_and_count() {
        let q = GlobalQueue::new();
        assert_eq!(q.pop_front(), None);
        assert_eq!(
            q.move_back(1),
            None,
            "nothing displaced: the caller generates"
        );
        assert_eq!(q.len(), 1);
        assert_eq!(q.move_back(2), Some(1));
        assert_eq!(q.move_front(3), Some(2));
        assert_eq!(q.move_back(4), Some(3));
        assert_eq!(q.pop_front(), Some(4));
        assert_eq!(q.move_front(5), None);
        assert_eq!(q.move_back(6), Some(5));
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_front(), Some(6));
        assert_eq!(q.pop_front(), None);
        assert_eq!(q.len(), 0);
    }
}
