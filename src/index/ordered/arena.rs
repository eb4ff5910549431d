//! Leaf storage: an append-only arena of segments that double in size, so a [`LeafId`] (an index)
//! maps to a `&Leaf` with a little arithmetic and one `OnceLock` load, and a leaf never moves or
//! is freed while the index lives.
//!
//! Segment `s` holds `BASE << s` leaves, the ids `BASE * (2^s - 1) .. BASE * (2^(s+1) - 1)`.
//! A segment is allocated (all slots vacant) by the first split that needs one; later segments
//! are never allocated ahead of use, so at most half the slots are unused.

use super::LeafId;
use super::leaf::Leaf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// Leaves in segment 0.
const BASE: u64 = 8;
/// Enough segments for every `u32` id below `NO_LEAF`.
const SEGMENTS: usize = 30;

pub(super) struct LeafArena {
    segments: [OnceLock<Box<[Leaf]>>; SEGMENTS],
    /// Number of ids handed out. Relaxed: a plain counter; the leaf itself is published through
    /// the segment's `OnceLock` (Acquire/Release inside) and the splitter's Release unlock.
    allocated: AtomicU32,
}

#[inline]
fn locate(id: LeafId) -> (usize, usize) {
    let i = u64::from(id.0) + BASE;
    let segment = (i.ilog2() - BASE.ilog2()) as usize;
    let offset = (i - (BASE << segment)) as usize;
    (segment, offset)
}

impl LeafArena {
    pub(super) fn new() -> LeafArena {
        LeafArena {
            segments: std::array::from_fn(|_| OnceLock::new()),
            allocated: AtomicU32::new(0),
        }
    }

    /// A fresh vacant leaf's id (allocates a segment when the current one is full).
    pub(super) fn alloc(&self) -> LeafId {
        let id = self.allocated.fetch_add(1, Ordering::Relaxed);
        assert!(id < super::leaf::NO_LEAF, "ordered index: out of leaf ids");
        let id = LeafId(id);
        let (segment, _) = locate(id);
        self.segments[segment]
            .get_or_init(|| (0..(BASE << segment)).map(|_| Leaf::vacant()).collect());
        id
    }

    /// The leaf `id`, or `None` when `id` was never allocated here.
    #[inline]
    pub(super) fn try_get(&self, id: LeafId) -> Option<&Leaf> {
        if id.0 >= self.allocated.load(Ordering::Relaxed) {
            return None;
        }
        let (segment, offset) = locate(id);
        self.segments.get(segment)?.get()?.get(offset)
    }

    /// The leaf `id`, which must have been allocated here and published to the caller (through a
    /// leaf's `next`, the directory, or a [`super::LeafVersion`] from this index).
    #[inline]
    pub(super) fn get(&self, id: LeafId) -> &Leaf {
        let (segment, offset) = locate(id);
        &self.segments[segment]
            .get()
            .expect("leaf id from another index")[offset]
    }

    /// Number of leaves allocated.
    pub(super) fn allocated(&self) -> u32 {
        self.allocated.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_map_to_consecutive_segments() {
        assert_eq!(locate(LeafId(0)), (0, 0));
        assert_eq!(locate(LeafId(7)), (0, 7));
        assert_eq!(locate(LeafId(8)), (1, 0));
        assert_eq!(locate(LeafId(23)), (1, 15));
        assert_eq!(locate(LeafId(24)), (2, 0));
        let (s, o) = locate(LeafId(u32::MAX - 1));
        assert!(s < SEGMENTS && (o as u64) < (BASE << s));
    }

    #[test]
    fn allocated_leaves_stay_put() {
        let arena = LeafArena::new();
        let ids: Vec<LeafId> = (0..100).map(|_| arena.alloc()).collect();
        let first = arena.get(ids[0]) as *const Leaf;
        assert_eq!(arena.get(LeafId(0)) as *const Leaf, first);
        assert!(arena.try_get(LeafId(99)).is_some());
        assert!(arena.try_get(LeafId(100)).is_none());
    }
}
