//! The directory over the leaves: a B+-tree of inner nodes from a leaf's low fence to the leaf,
//! whose lookups write nothing shared.
//!
//! # What it answers
//!
//! [`Directory::lookup`]`(key)` returns the leaf of the greatest entry `low <= key` (a predecessor
//! search). The entries are `(low, leaf)` for the live leaves, each under its leaf's `low`, which
//! never changes while the leaf lives; the index enters a split's new leaf after publishing it and
//! removes a merged leaf's entry before marking it dead (see the module docs of `ordered`). So any
//! entry a lookup returns names a leaf whose `low <= key` or one that is dead by the time the
//! caller sees it, and the caller moves right along the leaves (B-link) or restarts on the dead
//! bit: correctness rests on the leaves, the directory only shortens the path.
//!
//! # Structure
//!
//! Nodes hold up to [`NODE_CAPACITY`] sorted `(key, child)` entries; a level-0 node's children
//! are leaves, a level-`n` node's are level-`n - 1` nodes. Node 0 is the root, for good: when it
//! is full it moves its entries into two fresh nodes and points at them, one level higher, rather
//! than being replaced, so there is no root pointer to read. Invariants (between writes):
//!
//! 1. Keys are strictly ascending within a node, and every key in the subtree of entry `i` is
//!    `>= key[i]` and `< key[i + 1]`. The slots after the last entry hold the greatest key
//!    (`search::PAD`), so the whole key array is sorted and a search ignores `len` until the end.
//! 2. An inner entry's key is exactly its child's first key (the minimum of its subtree), so a
//!    search that picked entry `i` because `key[i] <= k` finds an entry `<= k` in the child too.
//!    The root's first key is 0 (the head leaf's entry, never removed), so every search succeeds.
//! 3. A reachable node is never empty. A node emptied by removals is unlinked from its parent and
//!    retired (the OBSOLETE bit, final); a node whose first entry is removed passes its new
//!    minimum up to its parent's key for it (and further up while it is a first child).
//! 4. Nodes are never freed or reused (they live in an [`Arena`]), so a reader may hold a node a
//!    writer has changed, split or retired: it reads stale values, never freed memory, and its
//!    version check tells it so.
//!
//! Nodes are not merged or rebalanced: a node may be under-full, down to one entry. Splits are
//! half and half, except that an entry appended to a full node starts the new right node alone
//! (as the leaves do), so ascending inserts leave full nodes behind.
//!
//! # Concurrency: optimistic lock coupling
//!
//! Each node has a seqlock word ([`NodeVersion`]), used as in Leis et al., "The ART of practical
//! synchronization" (DaMoN 2016), section 3 (optimistic lock coupling):
//!
//! - Writers (the index's splits and merges, a few per 64 inserts or removes) are serialized by
//!   one mutex, which lookups never touch. Under it a writer locks each node it is about to
//!   change (sets the lock bit), changes it, and unlocks every node it locked only when the whole
//!   change is done, with the version bumped (or, for a node it unlinked, with the OBSOLETE bit).
//!   Fresh nodes are filled before any locked node names them.
//! - A lookup reads node versions and entries and writes nothing: at each node it reads the
//!   version (waiting while locked), searches, re-checks the version before following the child
//!   id it read (so the id belongs to a consistent state), reads the child's version, and checks
//!   the parent's version once more (lock coupling: the child was the parent's child when the
//!   child's version was read). Any failed check restarts the lookup from the root.
//!
//! Because a writer holds every node it changes until the change is complete (two-phase), a
//! lookup whose checks all pass saw each node in one state, and each parent-child step in one
//! state of the pair: it never sees a node split while its parent still routes the moved keys to
//! it, nor a retired node. Retired and split-off nodes stay readable, so a lookup that is inside
//! one when it changes reads stale values and fails its next check. No `unsafe` here.

use super::LeafId;
use super::arena::{Arena, Slot, SlotId};
use super::leaf::Backoff;
use super::search::{self, PAD};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::sync::{Mutex, PoisonError};

/// Entries per node: 64 keys of 8 bytes (8 cache lines) and 64 child ids. With leaves 50-100%
/// full, two levels cover 10^5-10^6 records and three 10^8.
pub(super) const NODE_CAPACITY: usize = 64;

/// A directory node's id (its slot in the directory's arena).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NodeId(u32);

impl SlotId for NodeId {
    fn from_index(index: u32) -> NodeId {
        NodeId(index)
    }
    fn index(self) -> u32 {
        self.0
    }
}

/// The root: always node 0 (it grows in place).
const ROOT: NodeId = NodeId(0);

/// A directory node's seqlock word.
///
/// ```text
///   63     62                                                  0
/// +----+--------+------------------------------------------------+
/// |lock|obsolete|          change counter (62 bits)              |
/// +----+--------+------------------------------------------------+
/// ```
///
/// The lock bit is set by the directory writer before it changes the node; the unlock clears it
/// and bumps the counter, so a lookup that read the node under an earlier word fails its check.
/// The obsolete bit is set, with a bump, by the unlock of a node unlinked from its parent: final,
/// and a lookup that meets it restarts from the root, which no longer leads there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NodeVersion(u64);

impl NodeVersion {
    const LOCK: u64 = 1 << 63;
    const OBSOLETE: u64 = 1 << 62;
    const COUNTER: u64 = Self::OBSOLETE - 1;

    fn is_locked(self) -> bool {
        self.0 & Self::LOCK != 0
    }

    fn is_obsolete(self) -> bool {
        self.0 & Self::OBSOLETE != 0
    }

    fn with_lock(self) -> NodeVersion {
        NodeVersion(self.0 | Self::LOCK)
    }

    /// The unlocked word after one change: counter + 1 (wrapping within 62 bits).
    fn bumped(self) -> NodeVersion {
        NodeVersion((self.0 & Self::COUNTER).wrapping_add(1) & Self::COUNTER)
    }

    /// The final word of an unlinked node: counter + 1, obsolete, unlocked.
    fn retired(self) -> NodeVersion {
        NodeVersion(self.bumped().0 | Self::OBSOLETE)
    }
}

/// One directory node. Who writes what: every field only by the directory writer (holding the
/// writer mutex), on a node it has locked or on a fresh node no reachable node names yet; `level`
/// is set when a node is filled and changes only on the root, when it grows. The key slots at
/// and after `len` hold `PAD` (set by `vacant` and by `set_len` when the count drops), so the
/// whole key array is sorted and a search runs over all of it (`search`). Lookups read
/// everything at any time (Relaxed) and validate through `version`.
#[repr(align(64))]
pub(super) struct Node {
    version: AtomicU64,
    /// 0: `children` are leaf ids; `n > 0`: ids of level-`n - 1` nodes.
    level: AtomicU32,
    len: AtomicU32,
    keys: [AtomicU64; NODE_CAPACITY],
    children: [AtomicU32; NODE_CAPACITY],
}

impl Slot for Node {
    fn vacant() -> Node {
        Node {
            version: AtomicU64::new(0),
            level: AtomicU32::new(0),
            len: AtomicU32::new(0),
            keys: std::array::from_fn(|_| AtomicU64::new(PAD)),
            children: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }
}

impl Node {
    // ----- lookups (any thread) -----

    /// The version once the writer is not inside the node. Acquire: pairs with the Release
    /// store of the writer's unlock (`unlock_changed`, `unlock_retired`), so the entries read
    /// afterwards are at least as new as that unlock, and so is every node and leaf whose id
    /// they hold (filled before that unlock).
    #[inline]
    fn stable_version(&self) -> NodeVersion {
        let mut backoff = Backoff::default();
        loop {
            let v = NodeVersion(self.version.load(Ordering::Acquire));
            if !v.is_locked() {
                return v;
            }
            backoff.snooze();
        }
    }

    /// Whether the node is still at `v`, so every Relaxed load since `stable_version` returned
    /// `v` saw the state of version `v`. The Acquire fence keeps those loads before the version
    /// load and pairs with the Release fence in `lock`: if any of them saw a store of a writer,
    /// this load sees that writer's lock bit (or a later word).
    #[inline]
    fn unchanged_since(&self, v: NodeVersion) -> bool {
        fence(Ordering::Acquire);
        self.version.load(Ordering::Relaxed) == v.0
    }

    /// Relaxed: read inside a validated section.
    #[inline]
    fn level(&self) -> u32 {
        self.level.load(Ordering::Relaxed)
    }

    /// Number of entries, clamped so a torn read cannot index out of bounds. Relaxed: validated.
    #[inline]
    fn len(&self) -> usize {
        (self.len.load(Ordering::Relaxed) as usize).min(NODE_CAPACITY)
    }

    /// Relaxed: validated.
    #[inline]
    fn key(&self, i: usize) -> u64 {
        self.keys[i].load(Ordering::Relaxed)
    }

    /// Relaxed: validated.
    #[inline]
    fn child(&self, i: usize) -> u32 {
        self.children[i].load(Ordering::Relaxed)
    }

    /// The slot of the greatest key `<= key` among the first `len`, or `None` when every key is
    /// greater: the number of keys `<= key`, by `search::count_prefix` over all the slots,
    /// clamped to `len` (the padding passes `<= u64::MAX`, and a torn read may give any count).
    #[inline]
    fn predecessor(&self, key: u64, len: usize) -> Option<usize> {
        search::count_prefix(&self.keys, |k| k <= key)
            .min(len)
            .checked_sub(1)
    }

    // ----- the directory writer (holding the writer mutex) only -----

    /// Sets the lock bit. The writer mutex makes this thread the only one storing the word, so a
    /// Relaxed load reads its current value (the previous writer's stores happen before this
    /// writer's mutex acquisition). The Release fence orders the lock bit before every entry
    /// store that follows (the seqlock writer side; pairs with the Acquire fence in
    /// `unchanged_since`).
    fn lock(&self) -> NodeVersion {
        let v = NodeVersion(self.version.load(Ordering::Relaxed));
        debug_assert!(!v.is_locked() && !v.is_obsolete());
        self.version.store(v.with_lock().0, Ordering::Relaxed);
        fence(Ordering::Release);
        v
    }

    /// Unlocks after a change. Release: publishes the change (and any fresh node or leaf it
    /// names) to lookups' Acquire loads in `stable_version`.
    fn unlock_changed(&self, before: NodeVersion) {
        self.version.store(before.bumped().0, Ordering::Release);
    }

    /// Unlocks a node unlinked from its parent, for good. Release: as `unlock_changed`.
    fn unlock_retired(&self, before: NodeVersion) {
        self.version.store(before.retired().0, Ordering::Release);
    }

    /// Relaxed entry stores: the writer holds the node's lock (ordered after the lock bit by
    /// `lock`'s fence) or the node is fresh; published by an unlock (Release).
    fn set_entry(&self, i: usize, key: u64, child: u32) {
        self.keys[i].store(key, Ordering::Relaxed);
        self.children[i].store(child, Ordering::Relaxed);
    }

    /// Relaxed: as `set_entry`.
    fn set_key(&self, i: usize, key: u64) {
        self.keys[i].store(key, Ordering::Relaxed);
    }

    /// Sets the entry count, padding the slots it gives up (`len..` the old count) with `PAD`
    /// (the search needs every unused slot padded: `search`). Relaxed loads and stores: the
    /// writer mutex makes this thread the only one writing nodes (earlier writers' stores happen
    /// before its acquisition); the stores are published by an unlock, as `set_entry`'s.
    fn set_len(&self, len: usize) {
        debug_assert!(len <= NODE_CAPACITY);
        for key in self.keys.iter().take(self.len()).skip(len) {
            key.store(PAD, Ordering::Relaxed);
        }
        self.len.store(len as u32, Ordering::Relaxed);
    }

    /// Relaxed: as `set_entry`.
    fn set_level(&self, level: u32) {
        self.level.store(level, Ordering::Relaxed);
    }

    /// Fills a fresh (unreachable) node with `entries`.
    fn fill(&self, level: u32, entries: &[(u64, u32)]) {
        self.set_level(level);
        for (i, &(k, c)) in entries.iter().enumerate() {
            self.set_entry(i, k, c);
        }
        self.set_len(entries.len());
    }

    /// The node's entries (writer, or a quiescent directory).
    fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        (0..self.len()).map(|i| (self.key(i), self.child(i)))
    }
}

/// The writer's scratch space, kept between writes so that a write allocates only when it needs
/// a fresh node (or the path outgrows every earlier one).
#[derive(Default)]
struct Writer {
    /// Root to level 0: each node on the search path and the slot the search took in it.
    path: Vec<(NodeId, usize)>,
    /// Nodes locked by the current write, with their versions before locking and whether they
    /// were unlinked (unlocked as retired).
    locked: Vec<(NodeId, NodeVersion, bool)>,
}

/// The directory: see the module docs.
pub(super) struct Directory {
    nodes: Arena<Node, NodeId>,
    writer: Mutex<Writer>,
}

impl Directory {
    /// A directory with the one entry `0 -> head`.
    pub(super) fn new(head: LeafId) -> Directory {
        let nodes = Arena::<Node, NodeId>::new();
        let root: NodeId = nodes.alloc();
        debug_assert_eq!(root, ROOT);
        nodes.get(root).fill(0, &[(0, head.0)]);
        Directory {
            nodes,
            writer: Mutex::new(Writer::default()),
        }
    }

    /// The leaf of the greatest entry `<= key` (see the module docs for what the caller may
    /// assume of it). Writes nothing shared; restarts from the root when a writer changed a node
    /// on its path while it read it.
    #[inline]
    pub(super) fn lookup(&self, key: u64) -> LeafId {
        'restart: loop {
            let mut node = self.nodes.get(ROOT);
            let mut v = node.stable_version();
            loop {
                let level = node.level();
                let slot = node.predecessor(key, node.len());
                let child = slot.map(|i| node.child(i));
                // Check before using what was read: the child id must come from one consistent
                // state (whose unlock published the child) before it is followed.
                if !node.unchanged_since(v) {
                    continue 'restart;
                }
                // Invariant 2: a validated, reachable node has an entry <= key.
                let child = child.expect("directory: a reachable node has an entry <= key");
                if level == 0 {
                    return LeafId(child);
                }
                let next = self.nodes.get(NodeId(child));
                let next_v = next.stable_version();
                // Lock coupling: `next` was still `node`'s child when its version was read, so
                // no split or unlink of `next` completed between the two reads unseen.
                if next_v.is_obsolete() || !node.unchanged_since(v) {
                    continue 'restart;
                }
                (node, v) = (next, next_v);
            }
        }
    }

    /// Enters `low -> leaf`; `low` must not be in the directory (a live leaf's low fence is
    /// distinct from every other live leaf's).
    pub(super) fn insert(&self, low: u64, leaf: LeafId) {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let w = &mut *writer;
        self.descend(low, &mut w.path);
        // Insert (key, child) right after the path's slot, from level 0 up while nodes split.
        let (mut key, mut child) = (low, leaf.0);
        for depth in (0..w.path.len()).rev() {
            let (id, slot) = w.path[depth];
            let node = self.nodes.get(id);
            let len = node.len();
            debug_assert!(node.key(slot) < key, "directory: {key} entered twice");
            let pos = slot + 1;
            if len < NODE_CAPACITY {
                w.locked.push((id, node.lock(), false));
                for i in (pos..len).rev() {
                    node.set_entry(i + 1, node.key(i), node.child(i));
                }
                node.set_entry(pos, key, child);
                node.set_len(len + 1);
                break;
            }
            // Full: gather its entries and the new one, keep a prefix, move the rest.
            let mut all = [(0u64, 0u32); NODE_CAPACITY + 1];
            for (i, e) in node.entries().enumerate() {
                all[if i < pos { i } else { i + 1 }] = e;
            }
            all[pos] = (key, child);
            let keep = if pos == len {
                NODE_CAPACITY
            } else {
                NODE_CAPACITY.div_ceil(2)
            };
            let level = node.level();
            if id == ROOT {
                // Grow in place: both halves move to fresh nodes, filled before the root (locked)
                // names them.
                let (left, right): (NodeId, NodeId) = (self.nodes.alloc(), self.nodes.alloc());
                self.nodes.get(left).fill(level, &all[..keep]);
                self.nodes.get(right).fill(level, &all[keep..]);
                w.locked.push((id, node.lock(), false));
                node.set_entry(0, all[0].0, left.0);
                node.set_entry(1, all[keep].0, right.0);
                node.set_len(2);
                node.set_level(level + 1);
                break;
            }
            let right: NodeId = self.nodes.alloc();
            self.nodes.get(right).fill(level, &all[keep..]);
            w.locked.push((id, node.lock(), false));
            for (i, &(k, c)) in all.iter().enumerate().take(keep).skip(pos) {
                node.set_entry(i, k, c);
            }
            node.set_len(keep);
            // The parent (locked next, before anything is unlocked) gets the new node's entry.
            (key, child) = (all[keep].0, right.0);
        }
        self.unlock_all(&mut w.locked);
    }

    /// Removes the entry `low -> leaf` if the directory has exactly it; returns whether it did.
    /// (The merge of `leaf` must not proceed otherwise: a split enters its new leaf after
    /// publishing it, and an entry entered after the leaf's death would name it for good.)
    pub(super) fn remove(&self, low: u64, leaf: LeafId) -> bool {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let w = &mut *writer;
        self.descend(low, &mut w.path);
        let &(id, slot) = w.path.last().expect("the path has a level-0 node");
        let node = self.nodes.get(id);
        if node.key(slot) != low || node.child(slot) != leaf.0 {
            return false;
        }
        debug_assert!(low != 0, "the head leaf's entry is never removed");
        let mut depth = w.path.len() - 1;
        let mut slot = slot;
        loop {
            let (id, _) = w.path[depth];
            let node = self.nodes.get(id);
            let len = node.len();
            let before = node.lock();
            for i in slot + 1..len {
                node.set_entry(i - 1, node.key(i), node.child(i));
            }
            node.set_len(len - 1);
            if len == 1 {
                // Emptied (invariant 3): unlink it from its parent (never the root: its first
                // entry's subtree holds key 0, never removed).
                debug_assert!(id != ROOT, "the root never empties");
                w.locked.push((id, before, true));
                depth -= 1;
                slot = w.path[depth].1;
                continue;
            }
            w.locked.push((id, before, false));
            if slot == 0 {
                // The node's minimum rose: so do the ancestors' keys for it (invariant 2), up to
                // the first ancestor where it is not the first entry's subtree.
                let min = node.key(0);
                for up in (0..depth).rev() {
                    let (pid, pslot) = w.path[up];
                    let parent = self.nodes.get(pid);
                    w.locked.push((pid, parent.lock(), false));
                    parent.set_key(pslot, min);
                    if pslot != 0 {
                        break;
                    }
                    debug_assert!(up != 0, "the root's first key stays 0");
                }
            }
            break;
        }
        self.unlock_all(&mut w.locked);
        true
    }

    /// The writer's search for `key`: fills `path` from the root to level 0. Relaxed loads
    /// without version checks: only the writer (this thread, holding the mutex) changes nodes.
    fn descend(&self, key: u64, path: &mut Vec<(NodeId, usize)>) {
        path.clear();
        let mut id = ROOT;
        loop {
            let node = self.nodes.get(id);
            let slot = node
                .predecessor(key, node.len())
                .expect("directory: every node on a search path has an entry <= key");
            path.push((id, slot));
            if node.level() == 0 {
                return;
            }
            id = NodeId(node.child(slot));
        }
    }

    /// Unlocks every node the current write locked, once it is complete (two-phase: see the
    /// module docs).
    fn unlock_all(&self, locked: &mut Vec<(NodeId, NodeVersion, bool)>) {
        for (id, before, unlinked) in locked.drain(..) {
            let node = self.nodes.get(id);
            if unlinked {
                node.unlock_retired(before);
            } else {
                node.unlock_changed(before);
            }
        }
    }

    /// Number of nodes allocated, retired ones included (for tests).
    #[cfg(test)]
    pub(super) fn node_count(&self) -> u32 {
        self.nodes.allocated()
    }

    /// Checks invariants 1-3 (quiescent directory only; for tests) and returns the entries in
    /// key order.
    #[cfg(test)]
    pub(super) fn check(&self) -> Vec<(u64, LeafId)> {
        fn walk(
            d: &Directory,
            id: NodeId,
            lower: u64,
            upper: Option<u64>,
            out: &mut Vec<(u64, LeafId)>,
        ) {
            let node = d.nodes.get(id);
            let v = NodeVersion(node.version.load(Ordering::Relaxed));
            assert!(
                !v.is_locked() && !v.is_obsolete(),
                "reachable nodes are live"
            );
            let entries: Vec<(u64, u32)> = node.entries().collect();
            assert!(!entries.is_empty(), "reachable nodes are not empty");
            assert_eq!(
                entries[0].0, lower,
                "a node's first key is its parent's key for it"
            );
            assert!(entries.windows(2).all(|w| w[0].0 < w[1].0), "keys ascend");
            assert!(
                node.keys[entries.len()..]
                    .iter()
                    .all(|k| k.load(Ordering::Relaxed) == PAD),
                "unused slots are padded"
            );
            assert!(
                upper.is_none_or(|u| entries.last().unwrap().0 < u),
                "keys below the next"
            );
            for (i, &(k, c)) in entries.iter().enumerate() {
                if node.level() == 0 {
                    out.push((k, LeafId(c)));
                } else {
                    let child = d.nodes.get(NodeId(c));
                    assert_eq!(child.level() + 1, node.level(), "levels step by one");
                    let next = entries.get(i + 1).map(|e| e.0).or(upper);
                    walk(d, NodeId(c), k, next, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self, ROOT, 0, None, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::FastRng;
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicBool;

    /// The leaf id the tests enter under `low`: distinct per low, recoverable from the id.
    fn leaf_for(low: u64) -> LeafId {
        LeafId(low as u32)
    }

    fn model_lookup(model: &BTreeMap<u64, LeafId>, key: u64) -> LeafId {
        *model.range(..=key).next_back().unwrap().1
    }

    #[test]
    fn random_inserts_and_removes_match_a_btreemap() {
        for seed in 0..4u64 {
            let mut rng = FastRng::new(seed);
            let d = Directory::new(LeafId(0));
            let mut model = BTreeMap::from([(0u64, LeafId(0))]);
            let space = [200u64, 5_000, 100_000, 1 << 31][seed as usize];
            // Grow, then shrink to a few entries, then grow again: node splits, root growth,
            // first-entry removals and unlinked nodes.
            for phase in 0..3 {
                let inserting = [0.9, 0.1, 0.7][phase];
                for _ in 0..20_000 {
                    let low = 1 + rng.below(space);
                    if rng.chance(inserting) {
                        if let std::collections::btree_map::Entry::Vacant(e) = model.entry(low) {
                            e.insert(leaf_for(low));
                            d.insert(low, leaf_for(low));
                        }
                    } else {
                        let present = model.get(&low) == Some(&leaf_for(low));
                        assert!(!d.remove(low, LeafId(low as u32 + 1)), "wrong leaf: kept");
                        assert_eq!(d.remove(low, leaf_for(low)), present);
                        model.remove(&low);
                    }
                    let k = rng.below(space + 10);
                    assert_eq!(d.lookup(k), model_lookup(&model, k));
                }
                let entries = d.check();
                assert_eq!(
                    entries,
                    model.iter().map(|(&k, &l)| (k, l)).collect::<Vec<_>>()
                );
            }
            assert!(d.node_count() > 1);
        }
    }

    #[test]
    fn ascending_appends_fill_nodes_and_grow_the_root() {
        let d = Directory::new(LeafId(0));
        let n = (NODE_CAPACITY * NODE_CAPACITY * 2) as u64;
        for low in 1..n {
            d.insert(low, leaf_for(low));
        }
        assert_eq!(d.check().len() as u64, n);
        assert_eq!(d.nodes.get(ROOT).level(), 2, "three levels");
        // Appends split 64/1: every level-0 node but the last is full.
        let level0 = n.div_ceil(NODE_CAPACITY as u64);
        assert!(u64::from(d.node_count()) <= level0 + level0 / 32 + 4);
        for k in [0, 1, 63, 64, 65, 4_095, 4_096, n - 1, n, u64::MAX] {
            assert_eq!(d.lookup(k), leaf_for(k.min(n - 1)));
        }
        // Remove everything but the head: first-entry removals all the way up, nodes unlinked.
        for low in 1..n {
            assert!(d.remove(low, leaf_for(low)));
            if low % 1_000 == 0 {
                assert_eq!(d.check().len() as u64, n - low);
            }
        }
        assert_eq!(d.check(), vec![(0, LeafId(0))]);
        assert_eq!(d.lookup(u64::MAX), LeafId(0));
    }

    /// Lookups racing with inserts (splitting nodes, growing the root) and removes (unlinking
    /// nodes, raising first keys). The stable entries (multiples of 64) are present throughout;
    /// each writer owns the churn lows `low % 64 == writer` and inserts and removes them. A
    /// lookup's answer must be an entry that was present at some point (a churn entry or a
    /// stable one, its id the one entered under that low), at most `key`, and not left of the
    /// greatest stable entry `<= key` (which was present throughout). Judged by the answers, and
    /// by the writers' final contents against their models.
    #[test]
    fn concurrent_lookups_during_splits_and_unlinks() {
        const SPACE: u64 = 1 << 16;
        const WRITERS: u64 = 3;
        let d = Directory::new(LeafId(0));
        for low in (64..SPACE).step_by(64) {
            d.insert(low, leaf_for(low));
        }
        let stop = AtomicBool::new(false);
        let models: Vec<BTreeMap<u64, LeafId>> = std::thread::scope(|s| {
            let readers: Vec<_> = (0..3u64)
                .map(|t| {
                    let (d, stop) = (&d, &stop);
                    s.spawn(move || {
                        let mut rng = FastRng::new(1_000 + t);
                        let mut lookups = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            let key = rng.below(SPACE + 64);
                            let got = d.lookup(key);
                            let low = u64::from(got.0);
                            assert!(low <= key, "lookup({key}) gave low {low} > key");
                            let stable = (key / 64 * 64).min(SPACE - 64);
                            assert!(low >= stable, "lookup({key}) gave {low} left of {stable}");
                            lookups += 1;
                        }
                        lookups
                    })
                })
                .collect();
            let writers: Vec<_> = (1..=WRITERS)
                .map(|w| {
                    let d = &d;
                    s.spawn(move || {
                        let mut rng = FastRng::new(w);
                        let mut model = BTreeMap::new();
                        for round in 0..200u64 {
                            // Fill phases then drain phases, so nodes fill, split, empty and unlink.
                            let p = if round % 20 < 10 { 0.8 } else { 0.2 };
                            for _ in 0..200 {
                                let low = rng.below(SPACE / 64) * 64 + w;
                                if rng.chance(p) {
                                    if model.insert(low, leaf_for(low)).is_none() {
                                        d.insert(low, leaf_for(low));
                                    }
                                } else {
                                    let present = model.remove(&low).is_some();
                                    assert_eq!(d.remove(low, leaf_for(low)), present);
                                }
                            }
                        }
                        model
                    })
                })
                .collect();
            let models = writers.into_iter().map(|h| h.join().unwrap()).collect();
            stop.store(true, Ordering::Relaxed);
            for h in readers {
                assert!(h.join().unwrap() > 0, "every reader looked up");
            }
            models
        });
        let mut want: BTreeMap<u64, LeafId> = BTreeMap::from([(0, LeafId(0))]);
        want.extend((64..SPACE).step_by(64).map(|low| (low, leaf_for(low))));
        for m in &models {
            want.extend(m.iter().map(|(&k, &l)| (k, l)));
        }
        assert_eq!(d.check(), want.into_iter().collect::<Vec<_>>());
    }
}
