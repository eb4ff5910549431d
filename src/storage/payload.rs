//! A record's payload: bytes stored in 64-bit atomic words (see the module docs of `storage` for
//! why atomics). Copies go word by word with `Relaxed` ordering; the caller's protocol supplies the
//! ordering around the copy, as a seqlock on its record word:
//!
//! - writer: lock the word (CAS), `fence(Release)`, store the payload, store the unlocked word
//!   with `Release`;
//! - reader: load the word with `Acquire` (unlocked), copy the payload, `fence(Acquire)`, re-load
//!   the word and accept the copy only if it is unchanged.
//!
//! If the copy read any word a writer stored, the writer's Release fence synchronises with the
//! reader's Acquire fence, so the lock CAS happens before the re-load, which then cannot return
//! the old unlocked word. Without the writer's fence nothing orders the payload stores after the
//! lock (an `Acquire` CAS orders this thread's later accesses after it, but does not make them
//! visible only after it), and a weakly ordered machine may hand a reader new bytes with the old
//! word. The `loom` model `seqlock` (`storage::loom_models`) checks this cycle.

use crate::sync::atomic::{AtomicU64, Ordering};

/// A view of one record's payload.
#[derive(Clone, Copy)]
pub struct Payload<'a> {
    words: &'a [AtomicU64],
    bytes: usize,
}

impl<'a> Payload<'a> {
    pub(crate) fn new(words: &'a [AtomicU64], bytes: usize) -> Self {
        debug_assert_eq!(words.len(), bytes.div_ceil(8));
        Payload { words, bytes }
    }

    /// Payload size in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the payload is empty (never, for tables built by `Table::new`).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Copies the first `out.len()` bytes of the payload into `out`: all of it (`len()` bytes,
    /// what protocols copy) or the row of a stamped payload (see `stamp`).
    #[inline]
    pub fn load(&self, out: &mut [u8]) {
        assert!(out.len() <= self.bytes, "payload buffer size");
        let mut chunks = out.chunks_exact_mut(8);
        let mut words = self.words.iter();
        for (chunk, word) in (&mut chunks).zip(&mut words) {
            // Relaxed: ordering is the protocol's business (module docs).
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        let tail = chunks.into_remainder();
        if !tail.is_empty() {
            let w = words
                .next()
                .expect("tail word")
                .load(Ordering::Relaxed)
                .to_le_bytes();
            tail.copy_from_slice(&w[..tail.len()]);
        }
    }

    /// Overwrites the first `src.len()` bytes of the payload with `src` (zero-filling the rest
    /// of the last word touched): all of it (`len()` bytes, what protocols install) or the row of
    /// a stamped payload, whose stamp starts on the next word (see `stamp`).
    #[inline]
    pub fn store(&self, src: &[u8]) {
        assert!(src.len() <= self.bytes, "payload buffer size");
        let mut chunks = src.chunks_exact(8);
        let mut words = self.words.iter();
        for (chunk, word) in (&mut chunks).zip(&mut words) {
            let v = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
            // Relaxed: the writer's Release fence after its lock orders these stores after the
            // lock, and its unlocking Release store publishes them (module docs).
            word.store(v, Ordering::Relaxed);
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut w = [0u8; 8];
            for (dst, src) in w.iter_mut().zip(tail) {
                *dst = *src;
            }
            words
                .next()
                .expect("tail word")
                .store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
    }

    /// Installs `src` (a whole stamped payload, `len()` bytes) with the stamp's seq word
    /// `seq_at` as the seqlock word of the copy, for [`Payload::load_seqlocked`] readers that
    /// hold no protocol lock (the checkpointer, `crate::log::checkpoint`). The caller holds the
    /// record exclusively, as for [`Payload::store`]:
    ///
    /// ```text
    ///  seq word = UNINSTALLED_SEQ (Relaxed); fence(Release); the other words (Relaxed);
    ///  seq word = the new seq (Release)
    /// ```
    ///
    /// Seqs only grow, so the word never returns to a value a reader saw before (no ABA).
    #[inline]
    pub fn install_seqlocked(&self, src: &[u8], seq_at: usize) {
        assert_eq!(src.len(), self.bytes, "payload buffer size");
        debug_assert_eq!(self.bytes % 8, 0, "a stamped payload is whole words");
        let seq = u64::from_le_bytes(src[8 * seq_at..8 * seq_at + 8].try_into().expect("8"));
        // Relaxed: the fence below orders it before the payload stores.
        self.words[seq_at].store(super::stamp::UNINSTALLED_SEQ, Ordering::Relaxed);
        // Release fence: a reader whose copy saw any store below also sees the marker (or a
        // later seq) at its re-load (module docs: the seqlock writer's half).
        crate::sync::atomic::fence(Ordering::Release);
        // The words before and after the seq word, each a zipped loop without a bounds check
        // or a test per word (this runs for every install of a logged run).
        let (before, rest) = self.words.split_at(seq_at);
        store_words(before, &src[..8 * seq_at]);
        store_words(&rest[1..], &src[8 * (seq_at + 1)..]);
        // Release: a reader that loads this seq with Acquire sees every store above.
        self.words[seq_at].store(seq, Ordering::Release);
    }

    /// One seqlock copy of a whole stamped payload into `out` against its seq word `seq_at`
    /// ([`Payload::install_seqlocked`]): the seq of the version copied, or `None` when an
    /// install overlapped the copy (retry).
    #[inline]
    pub fn load_seqlocked(&self, out: &mut [u8], seq_at: usize) -> Option<u64> {
        // Acquire: pairs with the installer's Release store of the seq; the copy then sees
        // that install's words or later ones.
        let before = self.words[seq_at].load(Ordering::Acquire);
        if before == super::stamp::UNINSTALLED_SEQ {
            return None;
        }
        self.load(out);
        // Acquire fence: if the copy read a word of a later install, that installer's Release
        // fence makes its marker store visible to the re-load below.
        crate::sync::atomic::fence(Ordering::Acquire);
        // Relaxed: ordered after the copy by the fence.
        let after = self.words[seq_at].load(Ordering::Relaxed);
        (after == before).then_some(before)
    }

    /// Whether the payload holds no row ([`super::is_vacant`]), reading one word instead of
    /// copying the payload. The first word is exactly the first min(8, len) bytes followed by
    /// zeros: tables start zeroed and [`Payload::store`] zero-fills a short last word.
    #[inline]
    pub fn is_vacant(&self) -> bool {
        self.words
            .first()
            // Relaxed: as in `load`, ordering is the protocol's business.
            .is_none_or(|w| w.load(Ordering::Relaxed) == 0)
    }

    /// Address of the first payload word (layout tests).
    pub fn word_addr(&self) -> usize {
        self.words.as_ptr() as usize
    }

    /// Reads the `i`-th 64-bit little-endian word (used by loaders and the checker's version stamp).
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        // Relaxed: as in `load`, ordering is the protocol's business.
        self.words[i].load(Ordering::Relaxed)
    }

    /// The payload's words as they lie in the record, for a caller that holds the record
    /// exclusively and reads them all without a bounds check per word (the log's delta
    /// capture, `log::format::push_delta_with`); like every access here, the caller supplies
    /// the ordering.
    #[inline]
    pub fn word_cells(&self) -> &'a [AtomicU64] {
        self.words
    }

    /// Overwrites the `i`-th word (the check-mode stamp's words; the caller holds whatever
    /// protects the record, as for `store`).
    #[inline]
    pub fn store_word(&self, i: usize, value: u64) {
        // Relaxed: as in `store` (module docs).
        self.words[i].store(value, Ordering::Relaxed);
    }
}

/// Stores `src`'s 8-byte little-endian words into `words`, in order, as far as both go.
#[inline(always)]
fn store_words(words: &[AtomicU64], src: &[u8]) {
    for (chunk, word) in src.chunks_exact(8).zip(words) {
        // Relaxed: the caller publishes the words (`Payload::install_seqlocked`).
        word.store(
            u64::from_le_bytes(chunk.try_into().expect("8-byte chunk")),
            Ordering::Relaxed,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_odd_sizes() {
        for bytes in [1usize, 4, 8, 12, 100, 4096] {
            let words: Vec<AtomicU64> = (0..bytes.div_ceil(8)).map(|_| AtomicU64::new(0)).collect();
            let p = Payload::new(&words, bytes);
            let src: Vec<u8> = (0..bytes).map(|i| (i * 7 + 1) as u8).collect();
            p.store(&src);
            let mut out = vec![0u8; bytes];
            p.load(&mut out);
            assert_eq!(src, out);
        }
    }
}
