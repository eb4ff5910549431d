//! TicToc's per-record timestamp word: a write lock, the version's write timestamp, and how far
//! past it the version is known to stay valid (its read timestamp), packed in one atomic `u64`.
//!
//! ```text
//!  63  62            48 47                                            0
//! +---+----------------+-----------------------------------------------+
//! | L |  delta (15 b)  |                  wts (48 b)                   |
//! +---+----------------+-----------------------------------------------+
//! L     1 while a committing transaction holds the record's write lock
//! wts   logical time at which the current version became valid
//! delta rts - wts: the version is valid over [wts, wts + delta]
//! ```
//!
//! Keeping `rts` as a delta lets lock, `wts` and `rts` change together in one compare-and-swap
//! (the TicToc paper, Section 3.6). When an extension needs a delta wider than 15 bits, `wts` is
//! moved up instead ([`TsWord::extended_to`]); that only shrinks the version's claimed interval
//! from below, so it can make other transactions abort but never validate wrongly.

use std::sync::atomic::{AtomicU64, Ordering};

/// One snapshot of a record's timestamp word. Plain data; [`AtomicTsWord`] is the shared cell.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct TsWord(u64);

impl TsWord {
    /// Bits of the write timestamp.
    pub const WTS_BITS: u32 = 48;
    /// Bits of `rts - wts`.
    pub const DELTA_BITS: u32 = 15;
    /// Largest representable write timestamp.
    pub const MAX_WTS: u64 = (1 << Self::WTS_BITS) - 1;
    /// Largest representable `rts - wts`.
    pub const MAX_DELTA: u64 = (1 << Self::DELTA_BITS) - 1;
    const LOCK_BIT: u64 = 1 << 63;

    /// A word for a version valid over `[wts, rts]`. Panics if `rts < wts`, `rts - wts` exceeds
    /// [`Self::MAX_DELTA`] or `wts` exceeds [`Self::MAX_WTS`] (protocol bugs, never user input).
    pub fn new(wts: u64, rts: u64, locked: bool) -> Self {
        assert!(wts <= Self::MAX_WTS, "wts {wts} exceeds 48 bits");
        let delta = rts
            .checked_sub(wts)
            .filter(|d| *d <= Self::MAX_DELTA)
            .unwrap_or_else(|| panic!("rts {rts} not within [wts {wts}, wts + MAX_DELTA]"));
        let lock = if locked { Self::LOCK_BIT } else { 0 };
        TsWord(lock | (delta << Self::WTS_BITS) | wts)
    }

    /// The word a committing writer installs: a fresh, unlocked version valid at `commit_ts` only.
    pub fn installed_at(commit_ts: u64) -> Self {
        Self::new(commit_ts, commit_ts, false)
    }

    /// Write timestamp of the current version.
    #[inline]
    pub fn wts(self) -> u64 {
        self.0 & Self::MAX_WTS
    }

    /// `rts - wts`.
    #[inline]
    pub fn delta(self) -> u64 {
        (self.0 >> Self::WTS_BITS) & Self::MAX_DELTA
    }

    /// Read timestamp: the last logical time at which the current version is known valid.
    #[inline]
    pub fn rts(self) -> u64 {
        self.wts() + self.delta()
    }

    /// Whether a committing transaction holds the write lock.
    #[inline]
    pub fn is_locked(self) -> bool {
        self.0 & Self::LOCK_BIT != 0
    }

    /// The same timestamps with the lock bit set.
    #[inline]
    pub fn locked(self) -> Self {
        TsWord(self.0 | Self::LOCK_BIT)
    }

    /// The same timestamps with the lock bit clear.
    #[inline]
    pub fn unlocked(self) -> Self {
        TsWord(self.0 & !Self::LOCK_BIT)
    }

    /// This word with `rts` raised to `rts` (which must be above the current one). If the delta
    /// would overflow, `wts` moves up to `rts - MAX_DELTA` (the paper's overflow rule). That is
    /// safe: `rts`, which orders later writers, is exact, and a transaction that read the version
    /// under its old `wts` sees a changed `wts` and fails validation (TimestampHistory consults
    /// the record's `installed_wts`, which shifts never touch).
    pub fn extended_to(self, rts: u64) -> Self {
        debug_assert!(rts > self.rts());
        let wts = self.wts().max(rts.saturating_sub(Self::MAX_DELTA));
        Self::new(wts, rts, self.is_locked())
    }

    /// Raw bits.
    #[inline]
    pub fn bits(self) -> u64 {
        self.0
    }
}

impl std::fmt::Debug for TsWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TsWord {{ wts: {}, rts: {}, locked: {} }}",
            self.wts(),
            self.rts(),
            self.is_locked()
        )
    }
}

/// The shared timestamp word of one record. Every method takes its `Ordering` from the caller,
/// who states what it pairs with.
#[derive(Default)]
pub struct AtomicTsWord(AtomicU64);

impl AtomicTsWord {
    /// Loads the word.
    #[inline]
    pub fn load(&self, order: Ordering) -> TsWord {
        TsWord(self.0.load(order))
    }

    /// Stores the word.
    #[inline]
    pub fn store(&self, word: TsWord, order: Ordering) {
        self.0.store(word.0, order);
    }

    /// Replaces `current` with `new` if the word still equals `current`; on failure returns what
    /// the word holds now.
    #[inline]
    pub fn compare_exchange(
        &self,
        current: TsWord,
        new: TsWord,
        success: Ordering,
        failure: Ordering,
    ) -> Result<TsWord, TsWord> {
        self.0
            .compare_exchange(current.0, new.0, success, failure)
            .map(TsWord)
            .map_err(TsWord)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let w = TsWord::new(TsWord::MAX_WTS - 5, TsWord::MAX_WTS, true);
        assert_eq!(w.wts(), TsWord::MAX_WTS - 5);
        assert_eq!(w.rts(), TsWord::MAX_WTS);
        assert_eq!(w.delta(), 5);
        assert!(w.is_locked());
        assert!(!w.unlocked().is_locked());
        assert_eq!(w.unlocked().locked(), w);
        assert_eq!(TsWord::default(), TsWord::new(0, 0, false));
    }

    #[test]
    fn extension_within_delta_keeps_wts() {
        let w = TsWord::new(10, 12, false).extended_to(10 + TsWord::MAX_DELTA);
        assert_eq!((w.wts(), w.rts()), (10, 10 + TsWord::MAX_DELTA));
    }

    #[test]
    fn extension_past_delta_shifts_wts() {
        let w = TsWord::new(10, 12, true).extended_to(100_000);
        assert_eq!(w.rts(), 100_000);
        assert_eq!(w.wts(), 100_000 - TsWord::MAX_DELTA);
        assert_eq!(w.delta(), TsWord::MAX_DELTA);
        assert!(w.is_locked());
    }

    #[test]
    #[should_panic(expected = "not within")]
    fn rts_below_wts_is_rejected() {
        TsWord::new(5, 4, false);
    }
}
