//! One leaf of the ordered index: a fixed-capacity sorted array of `(key, rid)` entries owning the
//! key range `[low, high)`, guarded by a seqlock-style [`VersionWord`].
//!
//! Every field is an atomic so that optimistic readers racing with a writer read stale or torn
//! *values* but never cause a data race; the version check afterwards tells them whether what they
//! read was a consistent snapshot. Writers hold the lock bit of the version word, so at most one
//! writer touches a leaf at a time.
//!
//! Protocol (crossbeam's `seq_lock.rs`, Silo's TID word):
//! - reader: `v = stable_version()` (Acquire, spins while locked), read fields (Relaxed),
//!   `unchanged_since(v)` (Acquire fence, then Relaxed load); the snapshot is valid iff equal.
//! - writer: `try_lock(v)` (CAS v -> v|LOCK, Acquire; then a Release fence so no field store can be
//!   seen before the lock bit), write fields (Relaxed), `unlock_changed` (Release store of the
//!   bumped counter) or `unlock_unchanged` (Release store of `v` when nothing was written), or,
//!   for a leaf merged away, `unlock_dead` (Release store of the bumped counter with the DEAD bit:
//!   the leaf's last write ever).
//! - a reader whose `stable_version` returns a dead word does not read the leaf: it restarts
//!   from the directory (the dead bit is not the lock bit, so nobody waits on a dead leaf).

use super::search::{self, PAD};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

/// Entries per leaf. 64 keys + 64 record ids = 1 KiB of payload: a binary search touches a few
/// cache lines and a split moves half a KiB.
pub const LEAF_CAPACITY: usize = 64;

/// `next` value of the rightmost leaf (its range is unbounded above).
pub(super) const NO_LEAF: u32 = u32::MAX;

/// A leaf's seqlock word.
///
/// ```text
///   63   62   61                                               0
/// +----+----+----------------------------------------------------+
/// |lock|dead|             change counter (62 bits)               |
/// +----+----+----------------------------------------------------+
/// ```
///
/// The counter is bumped (and the lock bit cleared) by every unlock that changed the leaf: an
/// insert, a remove, a split, a merge. A value with the lock bit clear names one state of the
/// leaf's key range and contents; a locked value matches no observed (unlocked) value, so
/// validation fails while a writer is inside.
///
/// The dead bit is set, together with a counter bump and the lock bit cleared, by the one store
/// that unlocks a leaf merged into its left neighbour (an empty leaf unlinked by `remove`). A dead
/// word is final: nobody locks a dead leaf again (lockers only CAS from a live word they read) and
/// it differs from every live word the leaf ever had, so every version observed while the leaf was
/// live fails validation forever. It is *not* the lock bit: a reader that lands on a dead leaf does
/// not spin (`stable_version` returns it at once) but sees `is_dead` and restarts from the
/// directory, which no longer names the leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionWord(u64);

impl VersionWord {
    const LOCK: u64 = 1 << 63;
    const DEAD: u64 = 1 << 62;
    const COUNTER: u64 = Self::DEAD - 1;

    /// The version of a leaf that was just created by a split (never locked by anyone yet).
    pub(super) const FRESH: VersionWord = VersionWord(1);

    /// Whether a writer holds the leaf.
    #[inline]
    pub fn is_locked(self) -> bool {
        self.0 & Self::LOCK != 0
    }

    /// Whether the leaf was merged into its left neighbour (unlinked for good).
    #[inline]
    pub fn is_dead(self) -> bool {
        self.0 & Self::DEAD != 0
    }

    /// How many changes the leaf has seen (from this word's point of view).
    #[inline]
    pub fn counter(self) -> u64 {
        self.0 & Self::COUNTER
    }

    /// The raw word (for logs and tests).
    #[inline]
    pub fn raw(self) -> u64 {
        self.0
    }

    #[inline]
    fn with_lock(self) -> VersionWord {
        VersionWord(self.0 | Self::LOCK)
    }

    /// The unlocked live word after one change: counter + 1 (wrapping within 62 bits).
    #[inline]
    fn bumped(self) -> VersionWord {
        VersionWord(self.counter().wrapping_add(1) & Self::COUNTER)
    }

    /// The final word of a leaf merged away: counter + 1, dead, unlocked.
    #[inline]
    fn killed(self) -> VersionWord {
        VersionWord(self.bumped().0 | Self::DEAD)
    }
}

/// Spins, then yields: every wait loop in the index goes through this so that it cannot starve a
/// writer sharing the core (the test machine has 2 cores for 8 threads).
#[derive(Default)]
pub(super) struct Backoff(u32);

impl Backoff {
    #[inline]
    pub(super) fn snooze(&mut self) {
        if self.0 < 16 {
            std::hint::spin_loop();
            self.0 += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// The key range a leaf owned at one version: `[low, high)`, or `[low, +inf)` when `next` is
/// [`NO_LEAF`] (`high` is then meaningless).
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub low: u64,
    pub high: u64,
    pub next: u32,
}

impl Bounds {
    /// Whether the leaf is the rightmost one (no upper fence).
    #[inline]
    pub fn is_last(self) -> bool {
        self.next == NO_LEAF
    }

    /// Whether `key` is past this leaf's range (the reader must move right).
    #[inline]
    pub fn is_below(self, key: u64) -> bool {
        !self.is_last() && key >= self.high
    }
}

/// One leaf. Who writes what:
/// - `low`: written once, before the leaf is published (split), never again (a merge extends the
///   left leaf's `high` and kills the right one; no live leaf's `low` moves).
/// - `high`, `next`: written by the leaf's lock holder when it splits the leaf (`high` decreases,
///   `next` points at the new right sibling) or absorbs its empty right neighbour in a merge
///   (`high` and `next` become that neighbour's).
/// - `len`, `keys`, `rids`: written by the lock holder (insert, remove, split). The slots at and
///   after `len` keep the key `PAD` (set by `vacant` and by `set_len` when the count drops), so
///   the whole key array is sorted and the search can run over all of it (`search`).
/// - `version`: CAS by writers to lock, stored by the lock holder to unlock.
///
/// Everyone may read everything at any time; readers validate through `version`.
pub(super) struct Leaf {
    version: AtomicU64,
    low: AtomicU64,
    high: AtomicU64,
    next: AtomicU32,
    len: AtomicU32,
    keys: [AtomicU64; LEAF_CAPACITY],
    rids: [AtomicU64; LEAF_CAPACITY],
}

impl super::arena::Slot for Leaf {
    /// An unused leaf slot (version 0, empty, range `[0, +inf)`); arenas are filled with these.
    fn vacant() -> Leaf {
        Leaf {
            version: AtomicU64::new(0),
            low: AtomicU64::new(0),
            high: AtomicU64::new(0),
            next: AtomicU32::new(NO_LEAF),
            len: AtomicU32::new(0),
            keys: std::array::from_fn(|_| AtomicU64::new(PAD)),
            rids: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Leaf {
    // ----- readers -----

    /// The current version once no writer holds the leaf. Acquire: pairs with the Release of
    /// `unlock_*`, so the fields read afterwards are at least as new as that unlock.
    #[inline]
    pub(super) fn stable_version(&self) -> VersionWord {
        let mut backoff = Backoff::default();
        loop {
            let v = VersionWord(self.version.load(Ordering::Acquire));
            if !v.is_locked() {
                return v;
            }
            backoff.snooze();
        }
    }

    /// Loads a key from every cache line of the key array and drops it, so that the misses of a
    /// leaf not in cache overlap instead of coming one after another: each step of the search
    /// (`search::count_prefix`) loads from the address the previous step's compare picked, so
    /// its first four probes, in four different lines, would otherwise each wait for a miss.
    /// The loads are kept although unused (an atomic load stronger than `unordered` is not
    /// dead code to LLVM); a safe stand-in for a prefetch instruction, whose intrinsic needs
    /// `unsafe` at this crate's MSRV. Masstree prefetches each node before searching it.
    /// Measured with the branch-free search: 1.11-1.65x the lookups before both
    /// (`experiments/ordered_pairs.sh`; docs/RESULTS.md, "Branch-free searches and a touched
    /// leaf"); loading the directory nodes' and the record ids' lines as well did not help.
    /// Relaxed: the values are not used.
    #[inline]
    pub(super) fn touch_keys(&self) {
        // Slots 0, 8, ..., 56 and 63: a leaf is not line-aligned (1056 bytes), so the last
        // slots may start one line more. A constant-bound loop, unrolled into nine loads (a
        // `step_by(..).chain(..)` iterator was not, and cost about 110 instructions).
        const LINES: usize = LEAF_CAPACITY / 8;
        for line in 0..LINES {
            self.keys[line * 8].load(Ordering::Relaxed);
        }
        self.keys[LEAF_CAPACITY - 1].load(Ordering::Relaxed);
    }

    /// The current version, locked or not (for validation). Acquire, as in `stable_version`.
    #[inline]
    pub(super) fn current_version(&self) -> VersionWord {
        VersionWord(self.version.load(Ordering::Acquire))
    }

    /// Whether nothing changed since `v` was read by `stable_version`, so every Relaxed field load
    /// in between saw the state of version `v`. The Acquire fence keeps those loads before the
    /// version load and pairs with the writer's Release fence after locking: if any load saw a
    /// writer's store, this load sees the writer's lock bit (or a later version).
    #[inline]
    pub(super) fn unchanged_since(&self, v: VersionWord) -> bool {
        fence(Ordering::Acquire);
        self.version.load(Ordering::Relaxed) == v.0
    }

    /// Range fences. Relaxed: read inside a version-validated section.
    #[inline]
    pub(super) fn bounds(&self) -> Bounds {
        Bounds {
            low: self.low.load(Ordering::Relaxed),
            high: self.high.load(Ordering::Relaxed),
            next: self.next.load(Ordering::Relaxed),
        }
    }

    /// The right neighbour when `key` is past the leaf's range (`bounds().is_below(key)`), else
    /// `None`; reads the upper fence only. Relaxed: read inside a version-validated section.
    #[inline]
    pub(super) fn right_move(&self, key: u64) -> Option<super::LeafId> {
        let next = self.next.load(Ordering::Relaxed);
        let high = self.high.load(Ordering::Relaxed);
        (next != NO_LEAF && key >= high).then_some(super::LeafId(next))
    }

    /// Number of entries, clamped so a torn read cannot index out of bounds. Relaxed: validated.
    #[inline]
    pub(super) fn len(&self) -> usize {
        (self.len.load(Ordering::Relaxed) as usize).min(LEAF_CAPACITY)
    }

    /// The key in slot `i` (`i < LEAF_CAPACITY`). Relaxed: validated.
    #[inline]
    pub(super) fn key(&self, i: usize) -> u64 {
        self.keys[i].load(Ordering::Relaxed)
    }

    /// The record id in slot `i`. Relaxed: validated.
    #[inline]
    pub(super) fn rid(&self, i: usize) -> u64 {
        self.rids[i].load(Ordering::Relaxed)
    }

    /// First slot in `0..len` whose key is `>= key` (or `len`): the number of keys `< key`, by
    /// `search::count_prefix` over all the slots (the padding is never `< key`), clamped to
    /// `len` so that a torn read (rejected by the caller's version check) stays in bounds.
    #[inline]
    pub(super) fn lower_bound(&self, key: u64, len: usize) -> usize {
        search::count_prefix(&self.keys, |k| k < key).min(len)
    }

    // ----- writers (lock holder only) -----

    /// Locks the leaf if its version is still `v` (so whatever was read under `v` still holds).
    /// CAS Acquire: mutual exclusion with the previous holder's Release unlock. The Release fence
    /// after it orders the lock bit before every field store that follows (the seqlock writer
    /// side; pairs with the Acquire fence in `unchanged_since`).
    #[inline]
    pub(super) fn try_lock(&self, v: VersionWord) -> bool {
        debug_assert!(!v.is_locked() && !v.is_dead());
        let locked = self
            .version
            .compare_exchange(v.0, v.with_lock().0, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if locked {
            fence(Ordering::Release);
        }
        locked
    }

    /// Unlocks after a change, publishing it; returns the new version. Release: pairs with the
    /// Acquire loads of readers and lockers.
    #[inline]
    pub(super) fn unlock_changed(&self, before: VersionWord) -> VersionWord {
        let after = before.bumped();
        self.version.store(after.0, Ordering::Release);
        after
    }

    /// Unlocks a leaf that was merged into its left neighbour, marking it dead for good; returns the
    /// dead word. Release: as `unlock_changed`, so a reader that sees the dead bit (Acquire) also
    /// sees everything the merger did before, in particular the directory entry's removal.
    #[inline]
    pub(super) fn unlock_dead(&self, before: VersionWord) -> VersionWord {
        let dead = before.killed();
        self.version.store(dead.0, Ordering::Release);
        dead
    }

    /// Unlocks without a change: readers that saw `before` stay valid. Release: pairs with the
    /// Acquire loads of readers and lockers, as `unlock_changed`.
    #[inline]
    pub(super) fn unlock_unchanged(&self, before: VersionWord) {
        self.version.store(before.0, Ordering::Release);
    }

    /// Writes slot `i`. Relaxed: lock holder (or an unpublished leaf), published by the unlock.
    #[inline]
    pub(super) fn set_entry(&self, i: usize, key: u64, rid: u64) {
        self.keys[i].store(key, Ordering::Relaxed);
        self.rids[i].store(rid, Ordering::Relaxed);
    }

    /// Sets the entry count, padding the slots it gives up (`len..` the old count) with `PAD`
    /// (the search needs every unused slot padded: `search`). Relaxed, loads and stores: only
    /// the lock holder writes `len` and `keys` (the previous holder's stores happen before this
    /// one's lock, by the lock's Acquire CAS on their Release unlock), and the stores are
    /// published by the unlock, as `set_entry`'s.
    #[inline]
    pub(super) fn set_len(&self, len: usize) {
        debug_assert!(len <= LEAF_CAPACITY);
        for key in self.keys.iter().take(self.len()).skip(len) {
            key.store(PAD, Ordering::Relaxed);
        }
        self.len.store(len as u32, Ordering::Relaxed);
    }

    /// Sets the range fences. Relaxed: as `set_entry`. `low` changes only on a fresh leaf.
    #[inline]
    pub(super) fn set_bounds(&self, b: Bounds) {
        self.low.store(b.low, Ordering::Relaxed);
        self.high.store(b.high, Ordering::Relaxed);
        self.next.store(b.next, Ordering::Relaxed);
    }

    /// Sets the version of a fresh (unpublished) leaf. Relaxed: published by the Release unlock
    /// of the leaf it was split from, which makes it reachable (`next`) before any directory node
    /// names it.
    #[inline]
    pub(super) fn init_version(&self, v: VersionWord) {
        self.version.store(v.0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::ordered::arena::Slot;

    #[test]
    fn version_word_bits() {
        let v = VersionWord(5);
        assert!(!v.is_locked());
        assert!(v.with_lock().is_locked());
        assert_eq!(v.with_lock().counter(), 5);
        assert_eq!(v.with_lock().bumped(), VersionWord(6));
        let top = VersionWord(VersionWord::COUNTER);
        assert_eq!(
            top.bumped(),
            VersionWord(0),
            "the counter wraps within 62 bits"
        );
        assert!(!v.is_dead() && !v.with_lock().is_dead());
        let dead = v.with_lock().killed();
        assert!(dead.is_dead() && !dead.is_locked());
        assert_eq!(dead.counter(), 6);
        assert_ne!(dead, v.bumped(), "a dead word differs from every live one");
        assert!(top.killed().is_dead() && top.killed().counter() == 0);
    }

    #[test]
    fn lock_changes_version_and_invalidates_readers() {
        let leaf = Leaf::vacant();
        let v = leaf.stable_version();
        assert!(leaf.unchanged_since(v));
        assert!(leaf.try_lock(v));
        assert!(!leaf.try_lock(v), "a second writer is refused");
        assert!(!leaf.unchanged_since(v), "a locked leaf fails validation");
        let after = leaf.unlock_changed(v);
        assert_ne!(after, v);
        assert!(!leaf.unchanged_since(v));
        assert!(leaf.try_lock(after));
        leaf.unlock_unchanged(after);
        assert!(
            leaf.unchanged_since(after),
            "an unchanged unlock keeps readers valid"
        );
    }
}
