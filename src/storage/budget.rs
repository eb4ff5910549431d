//! The memory a database's tables may take, shared by its tables: every chunk of records counts
//! against one cap, and a chunk the cap (or the allocator) refuses is reported, once, instead of
//! growing until the kernel kills the process.
//!
//! Growth is rare (one chunk per few thousand inserted rows), so the budget is two counters that
//! chunk allocation alone touches; lookups of allocated records never read it. A refusal also
//! raises [`TableMemory::refused`], which the executor's coordinator polls to end the run early
//! (`exec::thread::coordinate`): the run stops cleanly with what it measured so far.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The growth that was refused: which table, and the cap it met.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "table '{table}' could not grow: its tables hold {used} bytes and another chunk of {chunk} \
     bytes would pass the cap of {cap} bytes{allocator}",
    allocator = if *.allocator { " (the allocator refused it)" } else { "" }
)]
pub struct GrowthRefused {
    /// The table that needed the chunk.
    pub table: String,
    /// Bytes of the chunk asked for.
    pub chunk: usize,
    /// Bytes every table of the database held when it was refused.
    pub used: usize,
    /// The cap on those bytes.
    pub cap: usize,
    /// Whether the allocator, not the cap, refused it.
    pub allocator: bool,
}

/// Bytes held by a database's tables, against a cap (module docs).
#[derive(Debug)]
pub struct TableMemory {
    cap: AtomicUsize,
    used: AtomicUsize,
    /// Raised by the first refusal; polled by the executor's coordinator.
    refused: AtomicBool,
    /// The first refusal, for the run's message.
    first_refusal: Mutex<Option<GrowthRefused>>,
}

impl Default for TableMemory {
    fn default() -> Self {
        Self::unlimited()
    }
}

impl TableMemory {
    /// A budget without a cap (the allocator can still refuse).
    pub fn unlimited() -> Self {
        TableMemory {
            cap: AtomicUsize::new(usize::MAX),
            used: AtomicUsize::new(0),
            refused: AtomicBool::new(false),
            first_refusal: Mutex::new(None),
        }
    }

    /// Caps the bytes all tables may hold from now on. Chunks already held stay; a cap below
    /// them refuses the next chunk.
    pub fn set_cap(&self, bytes: usize) {
        // Relaxed: the cap is a bound read by later allocations, not a synchronisation point.
        self.cap.store(bytes, Ordering::Relaxed);
    }

    /// The cap in bytes (`usize::MAX`: none).
    pub fn cap(&self) -> usize {
        // Relaxed: see `set_cap`.
        self.cap.load(Ordering::Relaxed)
    }

    /// Bytes the tables hold now.
    pub fn used(&self) -> usize {
        // Relaxed: a statistic.
        self.used.load(Ordering::Relaxed)
    }

    /// Whether a chunk was refused (the run should stop).
    #[inline]
    pub fn refused(&self) -> bool {
        // Relaxed: a stop hint; the message is read under the mutex.
        self.refused.load(Ordering::Relaxed)
    }

    /// The first refusal, if any.
    pub fn first_refusal(&self) -> Option<GrowthRefused> {
        self.first_refusal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Takes `bytes` for a chunk of `table`, or records the refusal and returns `false`.
    pub(super) fn take(&self, bytes: usize, table: &str) -> bool {
        // Relaxed: a counter; the cap is a bound, not a synchronisation point (two racing
        // chunks may both see room and pass it by at most one chunk each, see the overshoot
        // in the tests).
        let before = self.used.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) <= self.cap() {
            return true;
        }
        self.used.fetch_sub(bytes, Ordering::Relaxed);
        self.refuse(GrowthRefused {
            table: table.to_string(),
            chunk: bytes,
            used: before,
            cap: self.cap(),
            allocator: false,
        });
        false
    }

    /// Gives back `bytes` taken with [`TableMemory::take`] (a chunk freed or not installed).
    pub(super) fn give_back(&self, bytes: usize) {
        // Relaxed: as in `take`.
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Records a refusal (the first one is kept) and raises the stop flag.
    #[cold]
    pub(super) fn refuse(&self, why: GrowthRefused) {
        let mut first = self.first_refusal.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(why);
        // Relaxed: a stop hint (see `refused`).
        self.refused.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_refuses_once_and_remembers_the_first_refusal() {
        let m = TableMemory::unlimited();
        assert!(m.take(100, "a"));
        m.set_cap(250);
        assert!(m.take(100, "a"));
        assert!(!m.refused());
        assert!(!m.take(100, "b"), "300 > 250");
        assert!(m.refused());
        assert_eq!(m.used(), 200, "a refused chunk is not counted");
        assert!(!m.take(60, "c"));
        let first = m.first_refusal().expect("refused");
        assert_eq!(
            (first.table.as_str(), first.used, first.cap),
            ("b", 200, 250)
        );
        assert!(first.to_string().contains("'b'"), "{first}");
        m.give_back(100);
        assert!(m.take(50, "d"), "room again after a chunk is given back");
    }
}
