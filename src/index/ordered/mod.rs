//! A concurrent ordered index (`u64` key -> [`RecordId`]) with range scans whose phantoms the
//! protocols can detect: every leaf carries a version that every change to its key range bumps.
//!
//! # Structure: a B-link list of leaves under a directory
//!
//! The key space `[0, 2^64)` is partitioned into leaves. A leaf (`leaf::Leaf`) owns the range
//! `[low, high)` (the rightmost one `[low, +inf)`), holds up to [`LEAF_CAPACITY`] sorted entries
//! and links to its right neighbour (`next`), as in Lehman and Yao's B-link tree. Leaf 0 owns
//! `[0, +inf)` at the start. An insert into a full leaf L splits it: a new leaf R takes the upper
//! part of L's entries and the range `[mid, L.high)`, and L keeps `[L.low, mid)` and links to R.
//! Both happen under L's lock, before R is reachable, so the leaves always partition the key
//! space. Then `mid -> R` is entered in the directory.
//!
//! The directory (`directory::Directory`) maps each live leaf's `low` to the leaf: a lookup is
//! one predecessor search ("the leaf with the greatest `low <= key`"), a split adds an entry, a
//! merge removes one. It is a B+-tree of inner nodes of up to 64 entries, kept in an arena like
//! the leaves (never freed, never moved), read by optimistic lock coupling (Leis et al., "The ART
//! of practical synchronization", DaMoN 2016): a lookup reads each node's version word, searches
//! it, re-checks the version, and checks the parent's version again after reading the child's,
//! restarting from the root when a check fails. So a lookup writes no shared memory at all.
//! Writers (splits and merges, a few per 64 index writes) are serialized by one mutex that
//! lookups never take, lock every node they change, and unlock them all, versions bumped, once
//! the change is complete; a node unlinked because it emptied is unlocked with its OBSOLETE bit
//! and stays readable. Node 0 is the root for good (it grows in place), and an inner entry's key
//! is always its child's first key, so every search finds an entry `<= key` at every level. The
//! directory module's docs give its invariants and the argument.
//!
//! The directory only speeds up the search; correctness rests on the leaves: any leaf with
//! `low <= key` is a valid starting point, because the reader moves right (`next`) while
//! `key >= high`. So a directory entry that lags behind a split (it is added after R is
//! published) costs a right-move, never a wrong result. Each live leaf's `low` is fixed at
//! creation, and an entry is removed only when its leaf is merged away (below), before that leaf
//! is marked dead. (`scc::TreeIndex` was tried first: its range iterator positions itself by
//! walking leaves backwards, which made predecessor searches linear in the directory's size, and
//! it has no version per node to validate against; a `BTreeMap` under an `RwLock` came next,
//! whose read lock made every lookup write the lock's shared reader count.)
//!
//! Appends are split 64/1 instead of 32/33: when the new key is greater than every key in a full
//! leaf, L keeps all its entries and R starts with the new key, so ascending inserts (TPC-C's order
//! ids within a district) leave full leaves behind.
//!
//! # Merging emptied leaves
//!
//! Ascending inserts at a range's tail with deletes at its head (TPC-C's NEW-ORDER: New-Order
//! appends, Delivery takes the oldest) would otherwise leave a trail of empty leaves that every
//! `first_in_range` walks over and records. So when a `remove` empties a leaf L other than the
//! head, it tries to unlink L while still holding L's lock (`try_merge_left`):
//!
//! 1. find the left neighbour P, the leaf owning `L.low - 1`, reading it without spinning; give
//!    up unless `P.next == L` and `P.high == L.low`;
//! 2. *try* to lock P, once (never wait: the right leaf L is held, and waiting for the left one
//!    would invert the left-before-right order); give up if that fails;
//! 3. remove L's directory entry if the directory names L (a split enters its new leaf after
//!    publishing it; a merge must not race ahead of that entry, or the entry would later name a
//!    dead leaf), under the directory's writer mutex; give up otherwise;
//! 4. set `P.high, P.next = L.high, L.next`, unlock P with a bumped version, and unlock L with a
//!    bumped version and the DEAD bit ([`VersionWord`]): L is dead for good.
//!
//! Giving up leaves L an ordinary empty leaf; correctness never depends on unlinking. A dead
//! leaf's memory stays (its [`LeafId`] remains valid, its `next` still leads right); a reader
//! landing on it (through a `next` read before the merge, or a directory entry read just before
//! its removal) sees the dead bit and restarts from the directory, which no longer names it (the
//! entry was removed before the dead bit's Release store). The head leaf is never merged, so the
//! directory always has an entry `<= key`.
//!
//! # Concurrency
//!
//! Writers (insert, remove) lock one leaf through its version word ([`VersionWord`]) and bump the
//! version on unlock. Readers (get, scans, walks, validate) never write a leaf or a directory
//! node: they read both optimistically (seqlock: version, fields, version) and retry when a
//! version changed. There is no shared write on the read path: no lock, no reference count, no
//! epoch (nothing is freed, so nothing needs protecting from reclamation). A reader does wait
//! while a writer holds a leaf or directory node it needs (the version's lock bit; it spins, then
//! yields), and restarts after a change it raced with. All fields are atomics, so racing reads
//! are stale, never undefined. No `unsafe` in this module.
//!
//! Memory orderings, everywhere in the module: a writer sets the lock bit and then issues a
//! Release fence before its field stores, and unlocks with a Release store of the new version;
//! a reader loads the version with Acquire (pairs with that unlock: the fields it then reads are
//! at least as new), reads the fields Relaxed, and validates with an Acquire fence and a reload
//! (pairs with the writer's post-lock Release fence: a field store it saw implies it sees the
//! lock bit). Each use site names its pair.
//!
//! # Invariants
//!
//! 1. Leaves and directory nodes are never freed or moved while the index lives (a directory
//!    node emptied by merges is unlinked and retired, and stays): a [`LeafId`] stays valid, and so does
//!    every [`LeafVersion`] (validation of a stale one simply fails). A leaf emptied by a delete
//!    is unlinked (merged into its left neighbour and marked dead) when its neighbour can be
//!    locked at once; otherwise it stays, empty. Under-full leaves are not merged. A dead leaf
//!    stays dead, is empty, is never locked again and has no directory entry.
//! 2. A leaf's `low` never changes; its `high` decreases (splits) or grows to its right
//!    neighbour's (merges).
//! 3. At every instant the leaves reachable from leaf 0 by `next` partition the key space in
//!    ascending order, and each leaf's entries are sorted, distinct and inside its range. The
//!    key slots after a leaf's (or a directory node's) entries hold the greatest key, so that a
//!    search runs over the whole, sorted, array in a fixed number of branch-free steps (`search`).
//! 4. Every change to the set of keys inside a leaf's range, and every change of the range, bumps
//!    the leaf's version (insert, remove, split, merge: both leaves; the dead leaf's final word
//!    differs from all its live ones). A failed insert (duplicate) or a remove of an
//!    absent key changes nothing and bumps nothing.
//!
//! # Phantom protection
//!
//! [`OrderedIndex::scan`] records a [`LeafVersion`] for each leaf whose range it covered (plus the
//! leaf holding the position just after the last returned key when a limit stopped it, and the
//! leaf where an empty range sits), each read in the same validated section as the entries taken
//! from it. The recorded leaves' ranges cover the scanned key range (up to the limit) at the
//! moment of reading, so by invariants 3 and 4 any later insert or remove of a key in that range,
//! or a split moving part of it elsewhere, bumps at least one recorded version, and
//! [`OrderedIndex::validate`] fails for it (Silo's node-set validation, section 4.6 of the SOSP'13
//! paper).
//!
//! Merges keep this: after L is merged into P, an insert into L's former range bumps P only, and
//! a transaction may have observed L but not P. That is why L's death must fail validation by
//! itself: P's bumped version does not suffice. It does, because L's final (dead) word differs
//! from every version a reader could have recorded (readers never record a dead leaf), so every
//! observation of L fails from the merge on, whatever is inserted later. (This is conservative:
//! the merge alone changes no key, yet it aborts L's observers; merges are rare.) A transaction's own insert or remove reports the version change it made
//! ([`LeafUpdate`]); [`LeafUpdate::refresh`] patches the transaction's observed set so its own
//! writes do not abort it, exactly Silo's "version changed by exactly our insert" rule. When the
//! transaction's own remove merged L into P, the refresh turns its L entry into L's dead word
//! (final, so it validates) and adds P at its post-merge version: P now owns L's former range, so
//! another transaction's later insert there bumps P and still fails the validation.
//!
//! For the locking protocols we recommend **next-key locking** (ARIES/KVL, Mohan 1990) on the
//! records: a scan of `[a, b]` locks (shared) every returned record plus the record of
//! [`OrderedIndex::next_key_after`]`(b)` (or a per-index end-of-index lock when there is none); an
//! insert or delete of `k` first locks (exclusive) the record of `next_key_after(k)`, and after the
//! index operation checks that `next_key_after(k)` is unchanged (retrying with the new successor
//! otherwise). It works on record locks the protocols already have and is unaffected by splits,
//! whereas leaf-granularity range locks would have to move with the keys when a leaf splits.
//! Alternatively a 2PL transaction can keep the scan's [`LeafVersion`]s and validate them at
//! commit, as the optimistic protocols do.

mod arena;
mod cursor;
mod directory;
mod leaf;
mod search;
#[cfg(test)]
mod tests;

pub use cursor::RangeCursor;
pub use leaf::{LEAF_CAPACITY, VersionWord};

use super::Index;
pub use super::hash::Duplicate;
use crate::ids::RecordId;
use arena::{Arena, SlotId};
use directory::Directory;
use leaf::{Backoff, Bounds, Leaf, NO_LEAF};
use std::ops::RangeInclusive;

/// A leaf's stable id (its slot in the index's arena); valid for the index's whole life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeafId(pub u32);

impl SlotId for LeafId {
    fn from_index(index: u32) -> LeafId {
        LeafId(index)
    }
    fn index(self) -> u32 {
        self.0
    }
}

/// Leaf 0 owns `[0, +inf)` in an empty index and keeps `low == 0` forever.
const HEAD: LeafId = LeafId(0);

/// A leaf and the version a reader saw it at: one entry of a transaction's node set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeafVersion {
    /// The leaf.
    pub leaf: LeafId,
    /// Its version when read (never locked).
    pub version: VersionWord,
}

/// The version change an insert or remove made, for the caller to patch its own observed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafUpdate {
    /// The leaf that held the key's position.
    pub leaf: LeafId,
    /// Its version just before this change.
    pub before: VersionWord,
    /// Its version just after.
    pub after: VersionWord,
    /// When the insert split the leaf: the new right sibling (which took part of the range) at its
    /// version after the change.
    pub split: Option<LeafVersion>,
    /// When the remove emptied the leaf and merged it into its left neighbour: that neighbour's
    /// version change (it took over the whole range). `after` is then the leaf's final, dead word.
    pub merged: Option<LeafChange>,
}

/// One leaf's version change by one writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafChange {
    /// The leaf.
    pub leaf: LeafId,
    /// Its version just before the change.
    pub before: VersionWord,
    /// Its version just after.
    pub after: VersionWord,
}

impl LeafUpdate {
    /// Patches an observed set after the caller's own change: an entry for `leaf` at `before` (so
    /// nobody else changed it in between) becomes `after`, and a split's new leaf is added (it
    /// holds part of the range the caller had observed). After a merge the dead leaf's entry
    /// becomes its dead word (which validates: it is final) and the left neighbour is added at
    /// its post-merge version, because it now owns the range the caller had observed: any later
    /// insert there bumps it. An entry for the neighbour at its pre-merge version is patched too.
    /// Entries at other versions stay stale, so they still fail validation.
    pub fn refresh(&self, observed: &mut Vec<LeafVersion>) {
        let mut patched = false;
        for lv in observed.iter_mut() {
            if lv.leaf == self.leaf && lv.version == self.before {
                lv.version = self.after;
                patched = true;
            }
        }
        if !patched {
            return;
        }
        if let Some(right) = self.split {
            observed.push(right);
        }
        if let Some(left) = self.merged {
            for lv in observed.iter_mut() {
                if lv.leaf == left.leaf && lv.version == left.before {
                    lv.version = left.after;
                }
            }
            observed.push(LeafVersion {
                leaf: left.leaf,
                version: left.after,
            });
        }
    }
}

/// Where a scan puts its entries; lets `first_in_range` and friends run without a `Vec`.
trait Sink {
    fn len(&self) -> usize;
    fn push(&mut self, key: u64, rid: RecordId);
    fn truncate(&mut self, len: usize);
    fn last_key(&self) -> Option<u64>;
}

impl Sink for Vec<(u64, RecordId)> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn push(&mut self, key: u64, rid: RecordId) {
        Vec::push(self, (key, rid));
    }
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
    fn last_key(&self) -> Option<u64> {
        self.last().map(|&(k, _)| k)
    }
}

impl Sink for Option<(u64, RecordId)> {
    fn len(&self) -> usize {
        usize::from(self.is_some())
    }
    fn push(&mut self, key: u64, rid: RecordId) {
        *self = Some((key, rid));
    }
    fn truncate(&mut self, len: usize) {
        if len == 0 {
            *self = None;
        }
    }
    fn last_key(&self) -> Option<u64> {
        self.map(|(k, _)| k)
    }
}

/// Bytes an index holds per entry ever inserted, for memory estimates made before a run: half-full
/// leaves (a middle split leaves two), in an arena whose doubling segments may leave half their
/// slots unused (factor 2), plus up to 64 bytes of directory per leaf (an 832-byte node per 32 to
/// 64 leaves, in the same kind of arena). Emptied leaves and retired directory nodes are never
/// freed, so entries count as inserted, not as present.
///
/// An estimate for the workloads txbench runs, not a bound for every insert order: ascending
/// inserts within a range (TPC-C's order ids) leave full leaves behind and cost about half this,
/// while an adversary inserting keys in descending order just above a full leaf gets a leaf per
/// key (each such insert is an append to the full leaf, split 64/1).
pub const ESTIMATED_BYTES_PER_ENTRY: usize =
    (2 * std::mem::size_of::<Leaf>() + 64).div_ceil(LEAF_CAPACITY / 2);

/// The concurrent ordered index. See the module documentation for the algorithm.
pub struct OrderedIndex {
    leaves: Arena<Leaf, LeafId>,
    /// `low -> leaf id` for every live leaf but possibly the newest few (see module docs): read
    /// optimistically by lookups, written by splits (add an entry) and merges (remove one).
    directory: Directory,
}

impl Default for OrderedIndex {
    fn default() -> Self {
        OrderedIndex::new()
    }
}

impl OrderedIndex {
    /// An empty index: one leaf owning every key.
    pub fn new() -> OrderedIndex {
        let leaves = Arena::<Leaf, LeafId>::new();
        let head = leaves.alloc();
        debug_assert_eq!(head, HEAD);
        leaves.get(head).init_version(VersionWord::FRESH);
        let directory = Directory::new(head);
        OrderedIndex { leaves, directory }
    }

    /// A leaf whose `low <= key`, or one that was merged away (the directory's best guess for
    /// `key`'s leaf; see `find_leaf_from`).
    #[inline]
    fn start_leaf(&self, key: u64) -> LeafId {
        self.directory.lookup(key)
    }

    /// The leaf owning `key` now, its version and bounds (read under that version).
    #[inline]
    fn find_leaf(&self, key: u64) -> (LeafId, &Leaf, VersionWord, Bounds) {
        self.find_leaf_from(self.start_leaf(key), key)
    }

    /// As `find_leaf`, starting the right-moves at leaf `id`, whose `low` must be `<= key` (or
    /// which may be dead). Never returns a dead leaf: on landing on one (reached through a stale
    /// `next` or a directory entry read just before its removal) it restarts from the directory,
    /// which no longer names it once its death is visible (see `try_merge_left`).
    #[inline]
    fn find_leaf_from(&self, mut id: LeafId, key: u64) -> (LeafId, &Leaf, VersionWord, Bounds) {
        loop {
            let leaf = self.leaves.get(id);
            // Acquire (inside): pairs with the leaf's last Release unlock, so the bounds read
            // next are at least that new; `unchanged_since` (Acquire fence) confirms they are
            // version `v`'s, and so is the `next` id followed (its leaf was filled before the
            // unlock that published it).
            let v = leaf.stable_version();
            if v.is_dead() {
                id = self.start_leaf(key);
                continue;
            }
            let b = leaf.bounds();
            if !leaf.unchanged_since(v) {
                continue;
            }
            debug_assert!(b.low <= key, "directory and right-moves keep low <= key");
            if b.is_below(key) {
                id = LeafId(b.next);
                continue;
            }
            return (id, leaf, v, b);
        }
    }

    /// Locks the leaf owning `key`; returns it with its version before locking and its bounds.
    fn lock_leaf(&self, key: u64) -> (LeafId, &Leaf, VersionWord, Bounds) {
        let mut backoff = Backoff::default();
        loop {
            let (id, leaf, v, b) = self.find_leaf(key);
            if leaf.try_lock(v) {
                return (id, leaf, v, b);
            }
            backoff.snooze();
        }
    }

    /// The record of `key`, or `None`.
    ///
    /// `find_leaf_from` and a search fused: each leaf is read in one validated section (fences
    /// and entries together), and the right-move test comes after the search instead of a
    /// section of its own, so a lookup validates its leaf once. The search of a leaf that turns
    /// out not to own `key` (a right-move, rare) is thrown away.
    pub fn get(&self, key: u64) -> Option<RecordId> {
        let mut id = self.start_leaf(key);
        loop {
            let leaf = self.leaves.get(id);
            leaf.touch_keys();
            // Acquire (inside): pairs with the leaf's last Release unlock, so the Relaxed field
            // and entry loads that follow are at least that new; `unchanged_since` (Acquire
            // fence, pairing with writers' post-lock fence) confirms they are all version `v`'s,
            // the `next` id included (its leaf was filled before the unlock that published it).
            let v = leaf.stable_version();
            if v.is_dead() {
                // As in `find_leaf_from`: the directory no longer names it.
                id = self.start_leaf(key);
                continue;
            }
            // Not `bounds()`: `low` is not needed, and an unused atomic load is still made.
            let right = leaf.right_move(key);
            let len = leaf.len();
            let i = leaf.lower_bound(key, len);
            let found = (i < len && leaf.key(i) == key).then(|| RecordId(leaf.rid(i)));
            if !leaf.unchanged_since(v) {
                // Its `low` is fixed, so it is still a valid start (or dead, caught above).
                continue;
            }
            debug_assert!(
                leaf.bounds().low <= key,
                "directory and right-moves keep low <= key"
            );
            match right {
                Some(next) => id = next,
                None => return found,
            }
        }
    }

    /// Maps `key` to `rid`; fails, changing nothing, when `key` is present. Allocates only when
    /// the insert splits a leaf (a new leaf, sometimes a new arena segment, a directory entry).
    pub fn insert(&self, key: u64, rid: RecordId) -> Result<LeafUpdate, Duplicate> {
        let (id, leaf, before, bounds) = self.lock_leaf(key);
        let len = leaf.len();
        let pos = leaf.lower_bound(key, len);
        if pos < len && leaf.key(pos) == key {
            leaf.unlock_unchanged(before);
            return Err(Duplicate { key });
        }
        if len < LEAF_CAPACITY {
            for i in (pos..len).rev() {
                leaf.set_entry(i + 1, leaf.key(i), leaf.rid(i));
            }
            leaf.set_entry(pos, key, rid.0);
            leaf.set_len(len + 1);
            let after = leaf.unlock_changed(before);
            return Ok(LeafUpdate {
                leaf: id,
                before,
                after,
                split: None,
                merged: None,
            });
        }
        // Split: gather the LEAF_CAPACITY + 1 entries, keep a prefix, move the rest to a new leaf.
        let mut keys = [0u64; LEAF_CAPACITY + 1];
        let mut rids = [0u64; LEAF_CAPACITY + 1];
        for i in 0..len {
            let j = if i < pos { i } else { i + 1 };
            keys[j] = leaf.key(i);
            rids[j] = leaf.rid(i);
        }
        keys[pos] = key;
        rids[pos] = rid.0;
        let keep = if pos == len {
            LEAF_CAPACITY
        } else {
            LEAF_CAPACITY.div_ceil(2)
        };
        let right_id = self.leaves.alloc();
        let right = self.leaves.get(right_id);
        let mid = keys[keep];
        // The new leaf is unreachable until `leaf` unlocks (Release) below.
        right.set_bounds(Bounds {
            low: mid,
            high: bounds.high,
            next: bounds.next,
        });
        for (slot, j) in (keep..=LEAF_CAPACITY).enumerate() {
            right.set_entry(slot, keys[j], rids[j]);
        }
        right.set_len(LEAF_CAPACITY + 1 - keep);
        right.init_version(VersionWord::FRESH);
        // Entries 0..keep are in place already except those at or after `pos` (shifted by one).
        for (j, (&k, &r)) in keys.iter().zip(&rids).enumerate().take(keep).skip(pos) {
            leaf.set_entry(j, k, r);
        }
        leaf.set_len(keep);
        leaf.set_bounds(Bounds {
            low: bounds.low,
            high: mid,
            next: right_id.0,
        });
        let after = leaf.unlock_changed(before);
        // After the unlock, readers reach `right` through `leaf.next`; the directory entry only
        // shortens their path. `mid` is a fresh low fence (fences are distinct), so it is new.
        self.directory.insert(mid, right_id);
        Ok(LeafUpdate {
            leaf: id,
            before,
            after,
            split: Some(LeafVersion {
                leaf: right_id,
                version: VersionWord::FRESH,
            }),
            merged: None,
        })
    }

    /// Removes `key`; returns its record and the version change, or `None` (changing nothing)
    /// when absent.
    pub fn remove(&self, key: u64) -> Option<(RecordId, LeafUpdate)> {
        let (id, leaf, before, bounds) = self.lock_leaf(key);
        let len = leaf.len();
        let pos = leaf.lower_bound(key, len);
        if pos == len || leaf.key(pos) != key {
            leaf.unlock_unchanged(before);
            return None;
        }
        let rid = RecordId(leaf.rid(pos));
        for i in pos + 1..len {
            leaf.set_entry(i - 1, leaf.key(i), leaf.rid(i));
        }
        leaf.set_len(len - 1);
        if len == 1 && id != HEAD {
            if let Some(merged) = self.try_merge_left(id, bounds) {
                let after = leaf.unlock_dead(before);
                return Some((
                    rid,
                    LeafUpdate {
                        leaf: id,
                        before,
                        after,
                        split: None,
                        merged: Some(merged),
                    },
                ));
            }
        }
        let after = leaf.unlock_changed(before);
        Some((
            rid,
            LeafUpdate {
                leaf: id,
                before,
                after,
                split: None,
                merged: None,
            },
        ))
    }

    /// Unlinks the leaf `id` (locked by the caller, just emptied, not the head, owning `bounds`)
    /// by merging its range into its left neighbour P, the leaf owning `bounds.low - 1`. Returns
    /// P's version change, after which the caller must mark `id` dead (`unlock_dead`) while still
    /// holding its lock; `None` (nothing changed, `id` stays an ordinary empty leaf) when P cannot
    /// be found or locked without waiting, or when `id` has no directory entry yet.
    ///
    /// Deadlock freedom: the caller holds `id` (the right leaf) and this only *tries* to lock P
    /// (the left one) once, never waiting on a leaf; it reads P with `current_version` and gives
    /// up on a locked or dead leaf instead of spinning. It then takes the directory's writer
    /// mutex while holding both leaves; its holders never wait on a leaf (lookups never take
    /// it, splits take it after unlocking their leaf), so no cycle can form.
    fn try_merge_left(&self, id: LeafId, bounds: Bounds) -> Option<LeafChange> {
        let key = bounds.low - 1;
        let mut pid = self.start_leaf(key);
        let (p, p_before) = loop {
            let p = self.leaves.get(pid);
            // Acquire (inside `current_version`): pairs with P's last Release unlock, so the
            // Relaxed bounds read next are at least that new; `unchanged_since` (Acquire fence)
            // then confirms they belong to version `v`. Non-spinning: a locked leaf means give up.
            let v = p.current_version();
            if v.is_locked() || v.is_dead() {
                return None;
            }
            let pb = p.bounds();
            if !p.unchanged_since(v) {
                return None;
            }
            if pb.is_below(key) {
                pid = LeafId(pb.next);
                continue;
            }
            // `id` is locked, so its `low` is still P's upper fence unless P changed since; the
            // lock attempt below fails in that case.
            if pb.next != id.0 || pb.high != bounds.low || !p.try_lock(v) {
                return None;
            }
            break (p, v);
        };
        // A split publishes its new leaf before entering it in the directory; a leaf whose entry
        // is not there yet stays (the late entry would name a dead leaf forever). Otherwise the
        // entry is removed here, before anyone can see `id` dead: the directory's node unlocks
        // (Release) come before the caller's `unlock_dead` (Release), so a reader that sees the
        // dead bit (Acquire) and restarts from the directory reads nodes at least that new, which
        // no longer name `id`. Meanwhile both leaves are locked: a lookup that still reaches
        // `id` or P waits on them.
        if !self.directory.remove(bounds.low, id) {
            p.unlock_unchanged(p_before);
            return None;
        }
        // Relaxed stores (inside `set_bounds`) under P's lock: ordered after the lock bit by
        // `try_lock`'s Release fence and published by P's Release unlock below.
        let pb = p.bounds();
        p.set_bounds(Bounds {
            low: pb.low,
            high: bounds.high,
            next: bounds.next,
        });
        // Release (inside `unlock_changed`): publishes P's new fences with its bumped version.
        let p_after = p.unlock_changed(p_before);
        Some(LeafChange {
            leaf: pid,
            before: p_before,
            after: p_after,
        })
    }

    /// Appends to `out`, in ascending key order, the entries with keys in `range`, at most `limit`
    /// of them, and appends to `observed` the version of every leaf the scan covered (see the
    /// module docs); the caller keeps `observed` to [`validate`](Self::validate) at commit.
    /// Each leaf's entries are a consistent snapshot of that leaf; different leaves are read at
    /// different moments (validation is what makes the whole scan atomic). Allocates nothing
    /// beyond growing the two vectors.
    pub fn scan(
        &self,
        range: RangeInclusive<u64>,
        limit: Option<usize>,
        out: &mut Vec<(u64, RecordId)>,
        observed: &mut Vec<LeafVersion>,
    ) {
        self.scan_into(range, limit, out, Some(observed));
    }

    /// The smallest key in `range` and its record (TPC-C Delivery: oldest NEW-ORDER of a
    /// district), recording the covered leaves in `observed` as [`scan`](Self::scan) does.
    pub fn first_in_range(
        &self,
        range: RangeInclusive<u64>,
        observed: &mut Vec<LeafVersion>,
    ) -> Option<(u64, RecordId)> {
        let mut one = None;
        self.scan_into(range, Some(1), &mut one, Some(observed));
        one
    }

    /// The greatest key in `range` and its record (TPC-C Order-Status: a customer's latest
    /// order), recording the covered leaves in `observed` as
    /// [`scan_reverse`](Self::scan_reverse) does.
    pub fn last_in_range(
        &self,
        range: RangeInclusive<u64>,
        observed: &mut Vec<LeafVersion>,
    ) -> Option<(u64, RecordId)> {
        let mut one = None;
        self.scan_reverse_into(range, Some(1), &mut one, Some(observed));
        one
    }

    /// The smallest key greater than `key` and its record (the "next key" of next-key locking),
    /// or `None` when `key` is the greatest. Not recorded for validation.
    pub fn next_key_after(&self, key: u64) -> Option<(u64, RecordId)> {
        self.first_at_or_after(key.checked_add(1)?)
    }

    /// The smallest key `>= key` and its record, or `None` when there is none. Not recorded for
    /// validation: one step of a walk whose phantom protection comes from the records it reads
    /// (`Txn`'s scans).
    pub fn first_at_or_after(&self, key: u64) -> Option<(u64, RecordId)> {
        let mut one = None;
        self.scan_into(key..=u64::MAX, Some(1), &mut one, None);
        one
    }

    /// The greatest key in `range` and its record, or `None` when the range holds none. Not
    /// recorded for validation (see [`first_at_or_after`](Self::first_at_or_after)).
    pub fn last_at_or_before(&self, range: RangeInclusive<u64>) -> Option<(u64, RecordId)> {
        let mut one = None;
        self.scan_reverse_into(range, Some(1), &mut one, None);
        one
    }

    /// Whether the leaf is still at the observed version and not locked by a writer. Acquire:
    /// pairs with writers' Release unlocks. The caller orders this load after its own commit-time
    /// locking (Silo places a fence there), as it does for its read-set validation. A
    /// `LeafVersion` from another index validates to `false` or to a meaningless answer.
    #[inline]
    pub fn validate(&self, observed: &LeafVersion) -> bool {
        self.leaves
            .try_get(observed.leaf)
            .is_some_and(|leaf| leaf.current_version() == observed.version)
    }

    /// The leaf owning `key` now and its version (for a caller that wants to observe a point's
    /// absence, or to lock at leaf granularity).
    pub fn leaf_of(&self, key: u64) -> LeafVersion {
        let (leaf, _, version, _) = self.find_leaf(key);
        LeafVersion { leaf, version }
    }

    /// Number of leaves allocated, dead (merged away) ones included (for reports and tests).
    pub fn leaf_count(&self) -> u32 {
        self.leaves.allocated()
    }

    /// Number of live leaves, counted by walking the `next` links (for reports and tests; not a
    /// snapshot under concurrent writes).
    pub fn live_leaf_count(&self) -> u32 {
        let mut n = 0;
        let mut id = HEAD;
        loop {
            let leaf = self.leaves.get(id);
            let v = leaf.stable_version();
            let b = leaf.bounds();
            if !leaf.unchanged_since(v) {
                continue;
            }
            // A dead leaf (reached through a `next` read just before its merge) is not counted;
            // its `next` still leads right.
            n += u32::from(!v.is_dead());
            if b.is_last() {
                return n;
            }
            id = LeafId(b.next);
        }
    }

    fn scan_into(
        &self,
        range: RangeInclusive<u64>,
        limit: Option<usize>,
        out: &mut impl Sink,
        mut observed: Option<&mut Vec<LeafVersion>>,
    ) {
        let (start, end) = range.into_inner();
        let limit = limit.unwrap_or(usize::MAX);
        if start > end || limit == 0 {
            return;
        }
        let base = out.len();
        let (mut id, mut leaf, mut v, mut b) = self.find_leaf(start);
        let mut cursor = start;
        loop {
            // One leaf: take its entries in [cursor, end] under version v.
            let mark = out.len();
            let len = leaf.len();
            let mut i = leaf.lower_bound(cursor, len);
            while i < len && out.len() - base < limit {
                let k = leaf.key(i);
                if k > end {
                    break;
                }
                out.push(k, RecordId(leaf.rid(i)));
                i += 1;
            }
            if !leaf.unchanged_since(v) {
                // Changed under us (maybe split: the cursor may have moved right): find again.
                out.truncate(mark);
                (id, leaf, v, b) = self.find_leaf(cursor);
                continue;
            }
            if let Some(obs) = observed.as_deref_mut() {
                obs.push(LeafVersion {
                    leaf: id,
                    version: v,
                });
            }
            if b.is_last() || end < b.high {
                return;
            }
            if out.len() - base == limit {
                // Stopped by the limit: also observe the leaf holding the position just after
                // the last returned key when that position is the next leaf's first.
                let after_last = out.last_key().map_or(cursor, |k| k.saturating_add(1));
                if after_last < b.high || after_last > end {
                    return;
                }
            }
            // The next leaf's `low` is `b.high` (read under the validated version), so it is a
            // valid start for the cursor without a directory lookup.
            cursor = b.high;
            (id, leaf, v, b) = self.find_leaf_from(LeafId(b.next), cursor);
        }
    }

    /// Like [`scan`](Self::scan) but in descending key order (largest first): the limit keeps the
    /// greatest keys of `range`.
    pub fn scan_reverse(
        &self,
        range: RangeInclusive<u64>,
        limit: Option<usize>,
        out: &mut Vec<(u64, RecordId)>,
        observed: &mut Vec<LeafVersion>,
    ) {
        self.scan_reverse_into(range, limit, out, Some(observed));
    }

    /// Walks leaves from the one owning `end` leftwards: the leaf left of leaf L is the one owning
    /// `L.low - 1` (found through the directory), whose range ends exactly at `L.low` since the
    /// leaves partition the key space and `L.low` never changes.
    fn scan_reverse_into(
        &self,
        range: RangeInclusive<u64>,
        limit: Option<usize>,
        out: &mut impl Sink,
        mut observed: Option<&mut Vec<LeafVersion>>,
    ) {
        let (start, end) = range.into_inner();
        let limit = limit.unwrap_or(usize::MAX);
        if start > end || limit == 0 {
            return;
        }
        let base = out.len();
        let mut cursor = end;
        let (mut id, mut leaf, mut v, mut b) = self.find_leaf(cursor);
        loop {
            let mark = out.len();
            let len = leaf.len();
            // Entries with key <= cursor are those before the first key > cursor.
            let mut i = if cursor == u64::MAX {
                len
            } else {
                leaf.lower_bound(cursor + 1, len)
            };
            while i > 0 && out.len() - base < limit {
                let k = leaf.key(i - 1);
                if k < start {
                    break;
                }
                out.push(k, RecordId(leaf.rid(i - 1)));
                i -= 1;
            }
            if !leaf.unchanged_since(v) {
                out.truncate(mark);
                (id, leaf, v, b) = self.find_leaf(cursor);
                continue;
            }
            if let Some(obs) = observed.as_deref_mut() {
                obs.push(LeafVersion {
                    leaf: id,
                    version: v,
                });
            }
            if b.low <= start {
                return;
            }
            if out.len() - base == limit {
                // The position just before the last (smallest) returned key.
                let before_last = out.last_key().map_or(cursor, |k| k - 1);
                if before_last >= b.low || before_last < start {
                    return;
                }
            }
            cursor = b.low - 1;
            (id, leaf, v, b) = self.find_leaf(cursor);
        }
    }

    /// Checks invariant 3 and the directory (quiescent index only; for tests). Returns the keys.
    #[cfg(test)]
    fn check_structure(&self) -> Vec<u64> {
        let mut keys = Vec::new();
        let mut directory = self.directory.check().into_iter();
        let mut id = HEAD;
        let mut expected_low = 0u64;
        let mut reached = 0;
        loop {
            let leaf = self.leaves.get(id);
            reached += 1;
            assert!(
                !leaf.current_version().is_dead(),
                "dead leaves are unlinked"
            );
            let b = leaf.bounds();
            assert_eq!(b.low, expected_low, "leaves are contiguous");
            assert!(!leaf.current_version().is_locked());
            let len = leaf.len();
            for i in 0..len {
                let k = leaf.key(i);
                assert!(
                    k >= b.low && (b.is_last() || k < b.high),
                    "key inside range"
                );
                assert!(keys.last().is_none_or(|&p| p < k), "sorted, distinct");
                keys.push(k);
            }
            for i in len..LEAF_CAPACITY {
                assert_eq!(leaf.key(i), search::PAD, "unused slots are padded");
            }
            assert_eq!(
                directory.next(),
                Some((b.low, id)),
                "one entry per leaf, in order"
            );
            assert_eq!(
                self.directory.lookup(b.low),
                id,
                "a lookup of a low finds its leaf"
            );
            if b.is_last() {
                break;
            }
            assert!(b.high > b.low);
            expected_low = b.high;
            id = LeafId(b.next);
        }
        let dead = (0..self.leaves.allocated())
            .map(|i| self.leaves.get(LeafId(i)))
            .filter(|leaf| leaf.current_version().is_dead())
            .inspect(|leaf| assert_eq!(leaf.len(), 0, "only empty leaves die"))
            .count() as u32;
        assert_eq!(
            reached + dead,
            self.leaves.allocated(),
            "every live leaf is linked"
        );
        assert_eq!(reached, self.live_leaf_count());
        assert_eq!(directory.next(), None, "no entry for a dead leaf");
        keys
    }
}

impl Index for OrderedIndex {
    #[inline]
    fn get(&self, key: u64) -> Option<RecordId> {
        OrderedIndex::get(self, key)
    }

    /// Counts entries by walking the leaves (for reports and tests, not the hot path; not a
    /// snapshot under concurrent writes).
    fn len(&self) -> u64 {
        let mut n = 0u64;
        let mut id = HEAD;
        loop {
            let leaf = self.leaves.get(id);
            let v = leaf.stable_version();
            let (len, b) = (leaf.len(), leaf.bounds());
            if !leaf.unchanged_since(v) {
                continue;
            }
            n += len as u64;
            if b.is_last() {
                return n;
            }
            id = LeafId(b.next);
        }
    }
}

const _: () = assert!(NO_LEAF == u32::MAX);
