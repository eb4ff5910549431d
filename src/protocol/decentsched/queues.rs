//! DecentSched's shared queues (paper III-D1): lock-free singly linked lists, pushed at the head
//! with one CAS, of entries `{tid, access type}`; objects are hashed onto a fixed number of them
//! (queue sharing).
//!
//! An entry's `next` points to the entry pushed before it, so walking from a transaction's own
//! entry visits exactly the transactions ahead of it in that queue. Entries live in per-worker
//! arenas owned by the protocol (never freed while it lives, so a pointer read from a queue stays
//! valid); a worker reuses its arena from the start after each epoch barrier, when no transaction
//! is live and every head has been cleared (`clear`). Clearing the heads at the barrier is why
//! the queues need no version counters at all (the published code tags them with 8-bit versions
//! that wrap).

use super::AccessMode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, Ordering};

/// One queue entry.
#[derive(Debug, Default)]
pub struct Entry {
    /// The transaction's id in the current epoch.
    tid: AtomicU64,
    /// `AccessMode` as 0 (read) or 1 (write).
    mode: AtomicU8,
    /// The entry pushed before this one (ahead of it), or null.
    next: AtomicPtr<Entry>,
}

impl Entry {
    /// The transaction that pushed the entry.
    #[inline]
    pub fn tid(&self) -> u64 {
        // Relaxed: written before the entry's publication by the head CAS, which the reader's
        // Acquire of the head (or of an earlier entry's `next` chain) synchronises with.
        self.tid.load(Ordering::Relaxed)
    }

    /// How the transaction accesses the queue's objects.
    #[inline]
    pub fn mode(&self) -> AccessMode {
        // Relaxed: as `tid`.
        if self.mode.load(Ordering::Relaxed) == 1 {
            AccessMode::Write
        } else {
            AccessMode::Read
        }
    }

    /// The entry ahead of this one.
    #[inline]
    pub fn next(&self) -> Option<&Entry> {
        // Relaxed: `next` is written once, before the entry is published (see `tid`).
        let p = self.next.load(Ordering::Relaxed);
        // SAFETY: non-null pointers in a queue point at entries of the protocol's arenas, which
        // are allocated once and freed only with the protocol (that outlives every `&self`
        // reachable from its queues), and `Entry` is only ever accessed through atomics.
        unsafe { p.as_ref() }
    }
}

/// Entries per arena chunk.
const CHUNK: usize = 4096;

/// One worker's entries: chunks allocated on first use, then reused every epoch.
pub struct Arena {
    chunks: Box<[OnceLock<Box<[Entry]>>]>,
}

impl Arena {
    /// An arena of at most `max_entries` entries (rounded up to whole chunks).
    pub fn new(max_entries: usize) -> Self {
        Arena {
            chunks: (0..max_entries.div_ceil(CHUNK).max(1))
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// How many entries the arena can hand out per epoch.
    pub fn capacity(&self) -> usize {
        self.chunks.len() * CHUNK
    }

    /// Entry `i` of the arena (allocating its chunk on first use); only its worker calls this.
    pub fn entry(&self, i: usize) -> &Entry {
        let chunk =
            self.chunks[i / CHUNK].get_or_init(|| (0..CHUNK).map(|_| Entry::default()).collect());
        &chunk[i % CHUNK]
    }
}

/// The shared queues.
pub struct Queues {
    heads: Box<[AtomicPtr<Entry>]>,
}

impl Queues {
    /// `count` empty queues.
    pub fn new(count: usize) -> Self {
        Queues {
            heads: (0..count.max(1))
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
        }
    }

    /// Number of queues.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// The queue of the object with key `key` (a record address): a multiplicative hash of the
    /// key, reduced modulo the queue count.
    #[inline]
    pub fn queue_of(&self, key: usize) -> u32 {
        // Records are cache-line aligned: drop the low bits, then mix (Fibonacci hashing).
        let h = ((key as u64) >> 6).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 16) % self.heads.len() as u64) as u32
    }

    /// Fills `entry` with `(tid, mode)` and pushes it at the head of queue `q` (lock free).
    #[inline]
    pub fn push<'a>(&'a self, q: u32, entry: &'a Entry, tid: u64, mode: AccessMode) {
        // Relaxed: published by the CAS below (Release half of AcqRel).
        entry.tid.store(tid, Ordering::Relaxed);
        entry
            .mode
            .store(u8::from(mode == AccessMode::Write), Ordering::Relaxed);
        let head = &self.heads[q as usize];
        // Acquire: the entry read here becomes our `next`, and walking it later must see its
        // fields (published by its pusher's Release).
        let mut seen = head.load(Ordering::Acquire);
        loop {
            // Relaxed: published with the entry by the CAS.
            entry.next.store(seen, Ordering::Relaxed);
            // AcqRel on success: Release publishes the entry's fields; Acquire keeps the chain of
            // earlier pushes visible through us. Acquire on failure: the new head becomes `next`.
            match head.compare_exchange_weak(
                seen,
                std::ptr::from_ref(entry).cast_mut(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(now) => seen = now,
            }
        }
    }

    /// Empties every queue (at the epoch barrier, when no transaction is live).
    pub fn clear(&self) {
        for h in self.heads.iter() {
            // Relaxed: the barrier's mutex orders this before any later push.
            h.store(std::ptr::null_mut(), Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_from_an_entry_visits_the_entries_pushed_before_it() {
        let q = Queues::new(1);
        let arena = Arena::new(10);
        for (i, tid) in [5u64, 7, 9].into_iter().enumerate() {
            q.push(0, arena.entry(i), tid, AccessMode::Write);
        }
        let last = arena.entry(2);
        let ahead: Vec<u64> = std::iter::successors(last.next(), |e| e.next())
            .map(Entry::tid)
            .collect();
        assert_eq!(ahead, [7, 5]);
        q.clear();
        q.push(0, arena.entry(0), 1, AccessMode::Read);
        assert!(arena.entry(0).next().is_none());
        assert_eq!(arena.entry(0).mode(), AccessMode::Read);
    }

    #[test]
    fn queue_sharing_maps_every_key_into_range() {
        let q = Queues::new(3);
        assert!((0..10_000usize).all(|k| q.queue_of(k * 64) < 3));
        let used: std::collections::HashSet<u32> =
            (0..1000usize).map(|k| q.queue_of(k * 64)).collect();
        assert_eq!(used.len(), 3);
    }
}
