//! Aria's per-record reservations: the lowest-ranked transaction of the current batch that read
//! (or wrote) the record, in one word that needs no clearing between batches.
//!
//! ```text
//! [ batch: 40 | RANK_LIMIT - 1 - rank: 24 ]      0: no reservation
//! ```
//!
//! A later batch's word is larger than any of an earlier batch, and within one batch a lower
//! rank gives a larger word, so reserving is one `fetch_max`: it replaces a stale batch's
//! reservation and keeps the lowest rank of the current one (Aria's "the smallest TID wins").

use crate::protocol::batch::RANK_LIMIT;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of the inverted rank below the batch id.
const RANK_BITS: u32 = 24;
const RANK_MASK: u64 = (1 << RANK_BITS) - 1;

/// The word a member with `rank` in `batch` reserves with.
#[inline]
fn word(batch: u64, rank: u32) -> u64 {
    debug_assert!(rank < RANK_LIMIT);
    batch << RANK_BITS | (RANK_MASK - u64::from(rank))
}

/// Reserves `cell` for the member: it keeps the lowest rank of `batch`.
#[inline]
pub fn reserve(cell: &AtomicU64, batch: u64, rank: u32) {
    // Relaxed: the batch barrier publishes reservations (the members' Release increments of
    // the progress word, read with Acquire before any check).
    cell.fetch_max(word(batch, rank), Ordering::Relaxed);
}

/// Reserves `cell` only if no member of `batch` has: the first comer keeps it (the
/// `AriaReservationKeepsFirst` mutant's bug: the lowest rank no longer wins).
#[cfg(test)]
pub fn reserve_first_comer(cell: &AtomicU64, batch: u64, rank: u32) {
    // Relaxed: as in `reserve`.
    let current = cell.load(Ordering::Relaxed);
    if current >> RANK_BITS != batch {
        cell.store(word(batch, rank), Ordering::Relaxed);
    }
}

/// Whether a member of `batch` ranked before `rank` reserved `cell`.
#[inline]
pub fn reserved_before(cell: &AtomicU64, batch: u64, rank: u32) -> bool {
    // Relaxed: read after the batch barrier (see `reserve`).
    let w = cell.load(Ordering::Relaxed);
    w >> RANK_BITS == batch && RANK_MASK - (w & RANK_MASK) < u64::from(rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_rank_of_the_newest_batch_wins() {
        let cell = AtomicU64::new(0);
        assert!(!reserved_before(&cell, 1, 0));
        reserve(&cell, 1, 7);
        reserve(&cell, 1, 9);
        assert!(reserved_before(&cell, 1, 8));
        assert!(!reserved_before(&cell, 1, 7), "its own reservation");
        reserve(&cell, 1, 3);
        assert!(reserved_before(&cell, 1, 7));
        assert!(!reserved_before(&cell, 2, 7), "a stale batch's reservation");
        reserve(&cell, 2, RANK_LIMIT - 1);
        assert!(!reserved_before(&cell, 2, RANK_LIMIT - 1), "its own");
        assert!(!reserved_before(&cell, 1, 7), "replaced by batch 2");
    }
}
