//! A forward walk over the index's entries from a start key, one entry at a time: the range
//! iteration a workload's scan takes when it wants the index's order without collecting the
//! range into a buffer first (long-scan's `--index ordered`).
//!
//! The walk finds the start key's leaf through the directory once, then moves from leaf to leaf
//! along the `next` links, as [`OrderedIndex::scan`] does. It holds no lock and buffers nothing:
//! it remembers the leaf it is in, the version it positioned itself at and the slot of the next
//! entry, and validates that version after reading each entry (the seqlock read of `leaf.rs`).
//! When the leaf changed in between (a split, an insert, a remove, a merge), it finds the leaf
//! owning the smallest key it has not yet passed and goes on from there, so every entry it
//! returns was in the index when read, keys strictly ascend, and no key present throughout the
//! walk is skipped.
//!
//! Unlike [`OrderedIndex::scan`] it records no [`LeafVersion`](super::LeafVersion)s: the whole
//! walk is not one atomic snapshot, and a caller that needs phantom protection over the range
//! must get it elsewhere (long-scan's key set never changes, so it needs none).

use super::leaf::Bounds;
use super::{LeafId, OrderedIndex, VersionWord};
use crate::ids::RecordId;

/// The entries of an [`OrderedIndex`] at or after a start key, in ascending key order
/// ([`OrderedIndex::walk_from`]).
pub struct RangeCursor<'a> {
    index: &'a OrderedIndex,
    /// The leaf the walk is in; its `low` is at most `from` (or it is dead, which repositioning
    /// handles by restarting from the directory).
    leaf: LeafId,
    /// `leaf`'s version when the walk positioned itself in it; each entry read is validated
    /// against it.
    version: VersionWord,
    /// `leaf`'s bounds under `version`.
    bounds: Bounds,
    /// The slot in `leaf` of the next entry to return.
    slot: usize,
    /// The smallest key the walk has not passed (every key returned is below it); `None` once it
    /// has passed `u64::MAX` or the last leaf's last entry.
    from: Option<u64>,
}

impl OrderedIndex {
    /// A walk over the entries with keys `>= start`, in ascending order (see [`RangeCursor`]).
    /// Costs one directory lookup here and none after, unless a concurrent writer changes a leaf
    /// under the walk.
    pub fn walk_from(&self, start: u64) -> RangeCursor<'_> {
        let (leaf, node, version, bounds) = self.find_leaf(start);
        RangeCursor {
            index: self,
            leaf,
            version,
            bounds,
            slot: node.lower_bound(start, node.len()),
            from: Some(start),
        }
    }
}

impl RangeCursor<'_> {
    /// Finds the leaf owning `from` again after the one the walk was in changed, and the slot of
    /// the first key `>= from` in it (read under the new version, validated with the next entry).
    fn reposition(&mut self, from: u64) {
        let (leaf, node, version, bounds) = self.index.find_leaf_from(self.leaf, from);
        self.leaf = leaf;
        self.version = version;
        self.bounds = bounds;
        self.slot = node.lower_bound(from, node.len());
    }
}

impl Iterator for RangeCursor<'_> {
    type Item = (u64, RecordId);

    fn next(&mut self) -> Option<(u64, RecordId)> {
        loop {
            let from = self.from?;
            let node = self.index.leaves.get(self.leaf);
            let len = node.len();
            if self.slot < len {
                let (key, rid) = (node.key(self.slot), node.rid(self.slot));
                // The slot, the length and the entry were all read after `version` (Acquire in
                // `find_leaf_from`) and before this validation (Acquire fence inside): if it
                // holds, they are one consistent state of the leaf.
                if node.unchanged_since(self.version) {
                    self.slot += 1;
                    self.from = key.checked_add(1);
                    return Some((key, RecordId(rid)));
                }
            } else if node.unchanged_since(self.version) {
                // Every key of this leaf at or after `from` was returned. The right neighbour's
                // `low` is this leaf's `high` (read under the validated version), so it is a valid
                // place to go on from without a directory lookup.
                if self.bounds.is_last() {
                    self.from = None;
                    return None;
                }
                let high = self.bounds.high;
                self.leaf = LeafId(self.bounds.next);
                self.from = Some(high);
                self.reposition(high);
                continue;
            }
            // Changed under us: the entries at or after `from` may have moved (a split) or
            // changed. `self.leaf`'s `low` is still at most `from`, so start there.
            self.reposition(from);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::FastRng;
    use std::collections::BTreeMap;

    fn walk(ix: &OrderedIndex, start: u64) -> Vec<(u64, RecordId)> {
        ix.walk_from(start).collect()
    }

    #[test]
    fn walks_match_a_btreemap_from_every_kind_of_start() {
        let mut rng = FastRng::new(7);
        let (ix, mut model) = (OrderedIndex::new(), BTreeMap::new());
        // Enough keys for dozens of leaves, with gaps so starts fall between keys too.
        for _ in 0..3_000 {
            let k = rng.below(20_000);
            if ix.insert(k, RecordId(k + 1)).is_ok() {
                model.insert(k, RecordId(k + 1));
            }
        }
        for _ in 0..200 {
            let k = rng.below(20_000);
            if ix.remove(k).is_some() {
                model.remove(&k);
            }
        }
        let (&first, &last) = (model.keys().next().unwrap(), model.keys().last().unwrap());
        for start in [0, first, first + 1, 9_999, 10_000, last, last + 1, u64::MAX] {
            let want: Vec<_> = model.range(start..).map(|(&k, &r)| (k, r)).collect();
            assert_eq!(walk(&ix, start), want, "walk from {start}");
        }
    }

    #[test]
    fn a_walk_ends_at_the_greatest_key() {
        let ix = OrderedIndex::new();
        assert_eq!(walk(&ix, 0), vec![], "an empty index");
        ix.insert(u64::MAX, RecordId(1)).unwrap();
        ix.insert(5, RecordId(2)).unwrap();
        assert_eq!(
            walk(&ix, 0),
            vec![(5, RecordId(2)), (u64::MAX, RecordId(1))]
        );
        assert_eq!(walk(&ix, u64::MAX), vec![(u64::MAX, RecordId(1))]);
    }

    #[test]
    fn a_walk_goes_on_past_changes_made_under_it() {
        let ix = OrderedIndex::new();
        for k in (0..1_000).step_by(2) {
            ix.insert(k, RecordId(k)).unwrap();
        }
        let mut cursor = ix.walk_from(0);
        let taken: Vec<u64> = cursor.by_ref().take(10).map(|(k, _)| k).collect();
        assert_eq!(taken, (0..20).step_by(2).collect::<Vec<_>>());
        // Writes behind and ahead of the cursor's position (18 returned last): odd keys behind it
        // that it must not return, odd keys ahead of it (from 19) that it must, splitting its
        // leaf, and a removed key ahead of it.
        for k in (1..200).step_by(2) {
            ix.insert(k, RecordId(k)).unwrap();
        }
        ix.remove(100).unwrap();
        let rest: Vec<u64> = cursor.map(|(k, _)| k).collect();
        let want: Vec<u64> = (19..1_000)
            .filter(|&k| k != 100 && (k % 2 == 0 || k < 200))
            .collect();
        assert_eq!(rest, want);
    }
}
