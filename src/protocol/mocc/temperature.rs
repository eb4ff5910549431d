//! Temperature statistics (MOCC section 3.2): how likely a read of a record is to be clobbered.
//!
//! Each cell is an *approximate counter* of read-verification failures: a value `t` means about
//! `2^t` failures, and a failure increments it only with probability `2^-t`, so a hot cell is
//! written rarely (few cache-line invalidations). A record is hot when its cell reaches the
//! threshold `H`.
//!
//! Reset per epoch, as CCBench does it: the cell stores the epoch of its last change next to the
//! counter; a cell from an older epoch reads as 0 and its next increment restarts it at 1 in the
//! current epoch. No thread sweeps the cells, and a cell is reset at most once per epoch.
//!
//! ```text
//!  63             32 31             0
//! +-----------------+----------------+
//! |      epoch      |  temperature   |
//! +-----------------+----------------+
//! ```
//!
//! Granularity ([`crate::protocol::MoccTemperature`]): per record (a cell in each record header)
//! or per page. Per page follows the paper (records of one page share a counter); since the
//! protocol is built before tables exist, pages are the 4 KiB pages of the record's *address*
//! (`address / 4096`), hashed into a fixed array of [`PAGE_CELLS`] cells owned by the protocol.
//! Distinct pages may share a cell (a hash collision only makes both look hotter).

use crate::random::FastRng;
use std::sync::atomic::{AtomicU64, Ordering};

/// Temperatures saturate here (the threshold is at most this).
pub const MAX_TEMPERATURE: u32 = 63;
/// Cells in the per-page array (a power of two).
pub const PAGE_CELLS: usize = 4096;
/// Bytes of a page of records.
pub const PAGE_BYTES: usize = 4096;

/// One approximate counter with its epoch.
#[derive(Debug, Default)]
pub struct TempCell(AtomicU64);

impl TempCell {
    fn unpack(w: u64) -> (u32, u32) {
        ((w >> 32) as u32, w as u32)
    }

    /// The temperature in `epoch` (0 if the cell was last changed in another epoch).
    #[inline]
    pub fn get(&self, epoch: u32) -> u32 {
        // Relaxed: a heuristic; any recent value will do.
        let (e, t) = Self::unpack(self.0.load(Ordering::Relaxed));
        if e == epoch { t } else { 0 }
    }

    /// Records one verification failure: increments with probability `2^-t`.
    pub fn hotter(&self, epoch: u32, rng: &mut FastRng) {
        // Relaxed: the counter guards no other data.
        let w = self.0.load(Ordering::Relaxed);
        let (e, t) = Self::unpack(w);
        let t = if e == epoch { t } else { 0 };
        if t >= MAX_TEMPERATURE || rng.next_u64() & ((1u64 << t) - 1) != 0 {
            return;
        }
        let next = (u64::from(epoch) << 32) | u64::from(t + 1);
        // Relaxed: a lost race loses one approximate increment, which the estimator tolerates.
        let _ = self
            .0
            .compare_exchange(w, next, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// The per-page cells.
pub struct PageTemperatures {
    cells: Box<[TempCell]>,
}

impl Default for PageTemperatures {
    fn default() -> Self {
        PageTemperatures {
            cells: (0..PAGE_CELLS).map(|_| TempCell::default()).collect(),
        }
    }
}

impl PageTemperatures {
    /// The cell of the page holding the record at `address`.
    #[inline]
    pub fn cell(&self, address: usize) -> &TempCell {
        let page = (address / PAGE_BYTES) as u64;
        // Fibonacci hashing spreads consecutive pages over the array.
        let h = page.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PAGE_CELLS.trailing_zeros());
        &self.cells[h as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximate_increments_grow_logarithmically() {
        let c = TempCell::default();
        let mut rng = FastRng::new(3);
        for _ in 0..(1 << 10) {
            c.hotter(1, &mut rng);
        }
        let t = c.get(1);
        assert!((7..=13).contains(&t), "about log2(1024) = 10, got {t}");
        let c = TempCell::default();
        c.hotter(1, &mut rng);
        assert_eq!(c.get(1), 1, "the first failure always counts");
    }

    #[test]
    fn a_new_epoch_resets_lazily() {
        let c = TempCell::default();
        let mut rng = FastRng::new(4);
        for _ in 0..100 {
            c.hotter(5, &mut rng);
        }
        assert!(c.get(5) >= 3);
        assert_eq!(c.get(6), 0, "reads as cold in the next epoch");
        c.hotter(6, &mut rng);
        assert_eq!(c.get(6), 1);
    }

    #[test]
    fn records_of_one_page_share_a_cell() {
        let p = PageTemperatures::default();
        let base = 1 << 20;
        assert!(std::ptr::eq(p.cell(base), p.cell(base + 4032)));
        assert!(!std::ptr::eq(p.cell(base), p.cell(base + 4096)));
    }
}
