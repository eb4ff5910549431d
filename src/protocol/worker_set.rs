//! Sets of worker ids as bitmaps of `WORDS` 64-bit words: the holder and waiter lists of the
//! locks that name their workers (WAIT_DIE's and WOUND_WAIT's `OwnedLock`, PLOR's locker).
//!
//! ```text
//! word k, bit i  =  worker 64k + i        (capacity 64 x WORDS workers)
//! ```
//!
//! The width is a const parameter so that a run picks it once, from its worker count: a run with
//! at most 64 workers uses one word, exactly the single `u64` these locks had before, and a run of
//! the coroutine executor with up to 1024 transactions in flight (each one a worker) uses 16.
//! Every operation on one id touches one word; only snapshots ([`AtomicWorkerSet::load`]) read
//! them all. Callers pass the memory ordering and justify it where they use it, as the single-word
//! code did: a set carries no data of its own.

use crate::sync::atomic::{AtomicU64, Ordering};

/// Worker ids of the set bits of `map`, lowest first.
#[inline]
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

/// Which word and bit name worker `id`.
#[inline]
fn slot<const WORDS: usize>(id: usize) -> (usize, u64) {
    debug_assert!(
        id < 64 * WORDS,
        "worker id {id} has no bit in {WORDS} words"
    );
    (id / 64, 1 << (id % 64))
}

/// A snapshot of a set of workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerSet<const WORDS: usize>([u64; WORDS]);

impl<const WORDS: usize> Default for WorkerSet<WORDS> {
    fn default() -> Self {
        WorkerSet([0; WORDS])
    }
}

impl<const WORDS: usize> WorkerSet<WORDS> {
    /// Most workers a set of this width names.
    pub const CAPACITY: usize = 64 * WORDS;

    /// The set with these raw words (word k, bit i = worker 64k + i).
    #[inline]
    pub fn from_words(words: [u64; WORDS]) -> Self {
        WorkerSet(words)
    }

    /// The raw words.
    #[inline]
    pub fn words(&self) -> [u64; WORDS] {
        self.0
    }

    /// The set holding only worker `id`.
    #[inline]
    pub fn single(id: usize) -> Self {
        let mut set = Self::default();
        let (word, bit) = slot::<WORDS>(id);
        set.0[word] = bit;
        set
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// Whether worker `id` is in the set.
    #[inline]
    pub fn contains(&self, id: usize) -> bool {
        let (word, bit) = slot::<WORDS>(id);
        self.0[word] & bit != 0
    }

    /// The set without worker `id`.
    #[inline]
    pub fn without(mut self, id: usize) -> Self {
        let (word, bit) = slot::<WORDS>(id);
        self.0[word] &= !bit;
        self
    }

    /// Worker ids in the set, lowest first.
    #[inline]
    pub fn ids(self) -> impl Iterator<Item = usize> {
        self.0
            .into_iter()
            .enumerate()
            .flat_map(|(k, word)| bits(word).map(move |i| 64 * k + i))
    }
}

/// A set of workers that workers update concurrently, one bit each.
#[derive(Debug)]
pub struct AtomicWorkerSet<const WORDS: usize>([AtomicU64; WORDS]);

impl<const WORDS: usize> Default for AtomicWorkerSet<WORDS> {
    fn default() -> Self {
        AtomicWorkerSet(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl<const WORDS: usize> AtomicWorkerSet<WORDS> {
    /// Adds worker `id` (one `fetch_or` on its word, with `order`).
    #[inline]
    pub fn insert(&self, id: usize, order: Ordering) {
        let (word, bit) = slot::<WORDS>(id);
        self.0[word].fetch_or(bit, order);
    }

    /// Removes worker `id` (one `fetch_and` on its word, with `order`).
    #[inline]
    pub fn remove(&self, id: usize, order: Ordering) {
        let (word, bit) = slot::<WORDS>(id);
        self.0[word].fetch_and(!bit, order);
    }

    /// Whether worker `id` is in the set (one load of its word, with `order`).
    #[inline]
    pub fn contains(&self, id: usize, order: Ordering) -> bool {
        let (word, bit) = slot::<WORDS>(id);
        self.0[word].load(order) & bit != 0
    }

    /// Every word, each loaded with `order`. Not an atomic snapshot of the whole set when it spans
    /// several words; under `SeqCst` every load still takes its place in the single total order,
    /// which is all the Dekker-style handshakes of the locks rely on (each side writes one word
    /// and then reads the other side's words).
    #[inline]
    pub fn load(&self, order: Ordering) -> WorkerSet<WORDS> {
        WorkerSet(std::array::from_fn(|k| self.0[k].load(order)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_lists_ids() {
        assert_eq!(bits(0b1010_0001).collect::<Vec<_>>(), vec![0, 5, 7]);
        assert_eq!(bits(1 << 63).collect::<Vec<_>>(), vec![63]);
    }

    #[test]
    fn one_word_is_the_plain_bitmap() {
        let set = AtomicWorkerSet::<1>::default();
        for id in [0, 5, 63] {
            set.insert(id, Ordering::Relaxed);
        }
        let snap = set.load(Ordering::Relaxed);
        assert_eq!(snap, WorkerSet::from_words([(1 << 63) | (1 << 5) | 1]));
        assert_eq!(snap.ids().collect::<Vec<_>>(), vec![0, 5, 63]);
        assert_eq!(WorkerSet::<1>::CAPACITY, 64);
    }

    #[test]
    fn wide_sets_name_1024_workers() {
        let set = AtomicWorkerSet::<16>::default();
        let ids = [0, 63, 64, 500, 1023];
        for id in ids {
            set.insert(id, Ordering::Relaxed);
        }
        assert!(set.contains(500, Ordering::Relaxed) && !set.contains(501, Ordering::Relaxed));
        let snap = set.load(Ordering::Relaxed);
        assert_eq!(snap.ids().collect::<Vec<_>>(), ids);
        assert_eq!(
            snap.without(64).ids().collect::<Vec<_>>(),
            vec![0, 63, 500, 1023]
        );
        set.remove(1023, Ordering::Relaxed);
        set.remove(0, Ordering::Relaxed);
        assert_eq!(
            set.load(Ordering::Relaxed).ids().collect::<Vec<_>>(),
            vec![63, 64, 500]
        );
        assert!(WorkerSet::<16>::single(700).contains(700));
        assert!(WorkerSet::<16>::default().is_empty() && !snap.is_empty());
    }
}
