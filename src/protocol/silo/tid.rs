//! Silo's TID word: the per-record version and lock in one atomic 64-bit word.
//!
//! ```text
//!  63                32 31                          2    1      0
//! +--------------------+-----------------------------+--------+------+
//! |       epoch        |          sequence           | absent | lock |
//! +--------------------+-----------------------------+--------+------+
//! ```
//!
//! - `lock`: held by the committing writer from write-set locking until install.
//! - `absent`: the record holds no live value (reserved for inserts and deletes).
//! - `epoch`, `sequence`: the TID of the transaction that wrote the current version. TIDs compare
//!   as integers over the bits above the status bits, so a later epoch is always a larger TID.

use crate::storage::Payload;
use crate::sync::atomic::{AtomicU64, Ordering, fence};

const LOCK: u64 = 1;
const ABSENT: u64 = 1 << 1;
const STATUS_BITS: u64 = LOCK | ABSENT;
const SEQ_SHIFT: u32 = 2;
const SEQ_BITS: u32 = 30;
const EPOCH_SHIFT: u32 = 32;

/// A decoded TID word value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TidWord(u64);

impl TidWord {
    /// The TID `(epoch, sequence)`, unlocked and present.
    pub fn new(epoch: u32, sequence: u32) -> Self {
        debug_assert!(u64::from(sequence) < 1 << SEQ_BITS);
        TidWord((u64::from(epoch) << EPOCH_SHIFT) | (u64::from(sequence) << SEQ_SHIFT))
    }

    /// Whether a committing writer holds the record.
    #[inline]
    pub fn is_locked(self) -> bool {
        self.0 & LOCK != 0
    }

    /// The same word with the lock bit set.
    #[inline]
    pub fn locked(self) -> Self {
        TidWord(self.0 | LOCK)
    }

    /// The same word with the lock bit cleared.
    #[inline]
    pub fn unlocked(self) -> Self {
        TidWord(self.0 & !LOCK)
    }

    /// The TID alone (status bits cleared), for comparing versions.
    #[inline]
    pub fn tid(self) -> u64 {
        self.0 & !STATUS_BITS
    }

    /// Epoch of the TID.
    #[inline]
    pub fn epoch(self) -> u32 {
        (self.0 >> EPOCH_SHIFT) as u32
    }

    /// Sequence number within the epoch.
    #[inline]
    pub fn sequence(self) -> u32 {
        ((self.0 >> SEQ_SHIFT) & ((1 << SEQ_BITS) - 1)) as u32
    }

    /// The smallest TID in `epoch` larger than every TID in `seen` (Silo 4.2: larger than any TID
    /// read or written, larger than the worker's last TID, in the current epoch).
    pub fn next_after(seen: u64, epoch: u32) -> Self {
        let seen = TidWord(seen & !STATUS_BITS);
        if seen.epoch() < epoch {
            return TidWord::new(epoch, 1);
        }
        // Sequence exhaustion within one epoch would need 2^30 commits by one worker in 40 ms.
        debug_assert!(u64::from(seen.sequence()) + 1 < 1 << SEQ_BITS);
        TidWord::new(seen.epoch(), seen.sequence() + 1)
    }
}

/// The atomic TID word in a record header.
#[derive(Debug, Default)]
pub struct TidCell(AtomicU64);

impl TidCell {
    /// Reads the word. `Acquire` pairs with the `Release` store that installed the version, so
    /// the payload copy that follows sees at least that version's bytes.
    #[inline]
    pub fn load(&self) -> TidWord {
        TidWord(self.0.load(Ordering::Acquire))
    }

    /// Tries to lock the record, expecting it unlocked at `seen`. `Acquire` on success pairs with
    /// the previous holder's release, so our install follows theirs.
    #[inline]
    pub fn try_lock(&self, seen: TidWord) -> bool {
        debug_assert!(!seen.is_locked());
        self.0
            .compare_exchange(
                seen.0,
                seen.locked().0,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Copies `payload` into `out` between two loads of this word (the seqlock read side) and
    /// returns the word the copy belongs to; `None` when the record is locked by a committer or
    /// kept changing for `retries` tries, in which case the caller should wait (`Pending`).
    #[inline]
    pub fn read_consistent(
        &self,
        payload: Payload<'_>,
        out: &mut [u8],
        retries: usize,
    ) -> Option<TidWord> {
        for _ in 0..retries {
            let before = self.load();
            if before.is_locked() {
                return None;
            }
            payload.load(out);
            // Acquire fence: pairs with the committer's fence between its lock CAS and its
            // payload stores (Silo's and MOCC's serialization-point `SeqCst` fence, which is
            // also a Release fence): if the copy read an installed word, the re-load below sees
            // the lock or a later word, so an unchanged word proves no install overlapped it.
            fence(Ordering::Acquire);
            if before == self.load() {
                return Some(before);
            }
        }
        None
    }

    /// Publishes `word` (unlocked). `Release` orders the payload install before it, pairing with
    /// readers' `Acquire` loads.
    #[inline]
    pub fn store(&self, word: TidWord) {
        debug_assert!(!word.is_locked());
        self.0.store(word.0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_order() {
        let w = TidWord::new(7, 12345);
        assert_eq!((w.epoch(), w.sequence()), (7, 12345));
        assert!(!w.is_locked());
        assert!(w.locked().is_locked());
        assert_eq!(w.locked().tid(), w.tid());
        assert!(TidWord::new(8, 0).tid() > TidWord::new(7, (1 << SEQ_BITS) - 1).tid());
    }

    #[test]
    fn next_after_moves_to_current_epoch() {
        assert_eq!(
            TidWord::next_after(TidWord::new(3, 9).tid(), 5),
            TidWord::new(5, 1)
        );
        assert_eq!(
            TidWord::next_after(TidWord::new(5, 9).tid(), 5),
            TidWord::new(5, 10)
        );
    }

    #[test]
    fn lock_is_exclusive() {
        let c = TidCell::default();
        let w = c.load();
        assert!(c.try_lock(w));
        assert!(c.load().is_locked());
        assert!(!c.try_lock(w));
        c.store(TidWord::new(1, 1));
        assert_eq!(c.load(), TidWord::new(1, 1));
    }
}
