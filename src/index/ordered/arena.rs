//! Leaf and directory-node storage: an append-only arena of segments that double in size, so an id
//! (an index) maps to a `&T` with a little arithmetic and one `OnceLock` load, and a slot never
//! moves or is freed while the index lives. Both the leaves and the directory's nodes live in one
//! ([`super::OrderedIndex`] holds one of each), which is what lets optimistic readers hold plain
//! references to nodes that a writer may change, split or retire at any moment: the memory stays.
//!
//! Segment `s` holds `BASE << s` slots, the ids `BASE * (2^s - 1) .. BASE * (2^(s+1) - 1)`.
//! A segment is allocated (all slots vacant) by the first allocation that needs one; later
//! segments are never allocated ahead of use, so at most half the slots are unused.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// Slots in segment 0.
const BASE: u64 = 8;
/// Enough segments for every `u32` id below `u32::MAX` (the leaves' `NO_LEAF`).
const SEGMENTS: usize = 30;

/// What an arena holds: a type with a vacant value to fill fresh segments with.
pub(super) trait Slot {
    /// An unused slot.
    fn vacant() -> Self;
}

/// An id type for one arena (a newtype over the slot's index).
pub(super) trait SlotId: Copy {
    fn from_index(index: u32) -> Self;
    fn index(self) -> u32;
}

pub(super) struct Arena<T, I> {
    segments: [OnceLock<Box<[T]>>; SEGMENTS],
    /// Number of ids handed out. Relaxed: a plain counter; a slot itself is published through
    /// its segment's `OnceLock` (Acquire/Release inside) and the Release unlock of whichever
    /// version word first makes its id reachable (a split leaf's, a directory node's).
    allocated: AtomicU32,
    ids: std::marker::PhantomData<I>,
}

#[inline]
fn locate(index: u32) -> (usize, usize) {
    let i = u64::from(index) + BASE;
    let segment = (i.ilog2() - BASE.ilog2()) as usize;
    let offset = (i - (BASE << segment)) as usize;
    (segment, offset)
}

impl<T: Slot, I: SlotId> Arena<T, I> {
    pub(super) fn new() -> Self {
        Arena {
            segments: std::array::from_fn(|_| OnceLock::new()),
            allocated: AtomicU32::new(0),
            ids: std::marker::PhantomData,
        }
    }

    /// A fresh vacant slot's id (allocates a segment when the current one is full).
    pub(super) fn alloc(&self) -> I {
        let index = self.allocated.fetch_add(1, Ordering::Relaxed);
        assert!(index < u32::MAX, "ordered index: out of ids");
        let (segment, _) = locate(index);
        self.segments[segment]
            .get_or_init(|| (0..(BASE << segment)).map(|_| T::vacant()).collect());
        I::from_index(index)
    }

    /// The slot `id`, or `None` when `id` was never allocated here.
    #[inline]
    pub(super) fn try_get(&self, id: I) -> Option<&T> {
        let index = id.index();
        if index >= self.allocated.load(Ordering::Relaxed) {
            return None;
        }
        let (segment, offset) = locate(index);
        self.segments.get(segment)?.get()?.get(offset)
    }

    /// The slot `id`, which must have been allocated here and published to the caller (through a
    /// leaf's `next`, a directory node, or a [`super::LeafVersion`] from this index).
    #[inline]
    pub(super) fn get(&self, id: I) -> &T {
        let (segment, offset) = locate(id.index());
        &self.segments[segment].get().expect("id from another index")[offset]
    }

    /// Number of slots allocated.
    pub(super) fn allocated(&self) -> u32 {
        self.allocated.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::ordered::LeafId;
    use crate::index::ordered::leaf::Leaf;

    #[test]
    fn ids_map_to_consecutive_segments() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(7), (0, 7));
        assert_eq!(locate(8), (1, 0));
        assert_eq!(locate(23), (1, 15));
        assert_eq!(locate(24), (2, 0));
        let (s, o) = locate(u32::MAX - 1);
        assert!(s < SEGMENTS && (o as u64) < (BASE << s));
    }

    #[test]
    fn allocated_slots_stay_put() {
        let arena = Arena::<Leaf, LeafId>::new();
        let ids: Vec<LeafId> = (0..100).map(|_| arena.alloc()).collect();
        let first = arena.get(ids[0]) as *const Leaf;
        assert_eq!(arena.get(LeafId(0)) as *const Leaf, first);
        assert!(arena.try_get(LeafId(99)).is_some());
        assert!(arena.try_get(LeafId(100)).is_none());
    }
}
