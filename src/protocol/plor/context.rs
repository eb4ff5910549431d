//! PLOR's worker contexts (PLOR 4.1.1, "Data Structures" and "Liveness").
//!
//! Every worker publishes one [`CtxWord`] in a cache-padded slot of the [`ContextTable`]
//! (`ctx_arr[]` in the paper). The word names the transaction the worker runs: its commit priority
//! (arrival timestamp, or deadline for PLOR-RT) and the worker id, plus one status bit. A wound is a
//! single compare-and-swap from the exact running word to the same word with `ABORTED` set, so it
//! succeeds only against the transaction the wounder compared with: once the victim has published a
//! new transaction, a late wound fails instead of killing it.
//!
//! Who writes what: the owning worker stores a fresh running word at `begin`; any other worker
//! may only turn `ABORTED` on, by CAS. The owner reads its own status at every operation and poll
//! (`POLLONCE`), and stops reading it once commit phase 1 is over (a later wound is ignored).

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of the priority field.
pub const PRIORITY_BITS: u32 = 47;
/// Largest priority value a context word can hold.
pub const MAX_PRIORITY: u64 = (1 << PRIORITY_BITS) - 1;
/// Most workers a context word can name (16-bit `wid + 1`, zero reserved for "nobody").
pub const MAX_CONTEXT_WORKERS: usize = u16::MAX as usize;

/// One transaction's published identity and status:
///
/// ```text
///  63        62 ........................... 16  15 .............. 0
/// +---------+--------------------------------+-------------------+
/// | ABORTED |  priority (47 bits)            |  wid + 1 (16 bits)|
/// +---------+--------------------------------+-------------------+
/// ```
///
/// - `priority`: smaller commits first. The arrival timestamp (kept across retries), or for
///   PLOR-RT the deadline `A + SF x R`.
/// - `wid + 1`: the worker, never zero, so a live identity is never 0 (0 = "no owner" in locks).
/// - `ABORTED`: an older transaction wounded this one.
///
/// The word without its status bit is the transaction's [identity](CtxWord::ident): unique among
/// running transactions, and comparing identities as integers orders them by priority, then by
/// worker id, which is a total order (ties in deadline are broken by worker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CtxWord(u64);

impl CtxWord {
    const ABORTED: u64 = 1 << 63;
    const WID_BITS: u32 = 16;
    const WID_MASK: u64 = (1 << Self::WID_BITS) - 1;

    /// The running transaction of worker `wid` with priority `priority`.
    #[inline]
    pub fn running(wid: usize, priority: u64) -> Self {
        debug_assert!(wid < MAX_CONTEXT_WORKERS, "worker id {wid} does not fit");
        debug_assert!(priority <= MAX_PRIORITY, "priority overflows 47 bits");
        CtxWord(((priority & MAX_PRIORITY) << Self::WID_BITS) | (wid as u64 + 1))
    }

    /// Rebuilds a word from its raw bits (an owner word in a lock).
    #[inline]
    pub fn from_raw(raw: u64) -> Self {
        CtxWord(raw)
    }

    /// The raw bits.
    #[inline]
    pub fn raw(self) -> u64 {
        self.0
    }

    /// The worker running the transaction.
    #[inline]
    pub fn wid(self) -> usize {
        (self.0 & Self::WID_MASK) as usize - 1
    }

    /// The commit priority (smaller first).
    #[inline]
    pub fn priority(self) -> u64 {
        (self.0 & !Self::ABORTED) >> Self::WID_BITS
    }

    /// Whether an older transaction wounded this one.
    #[inline]
    pub fn is_aborted(self) -> bool {
        self.0 & Self::ABORTED != 0
    }

    /// The word with the status bit cleared: who the transaction is.
    #[inline]
    pub fn ident(self) -> Self {
        CtxWord(self.0 & !Self::ABORTED)
    }

    /// Whether this transaction commits before `other` (smaller priority, then smaller worker).
    #[inline]
    pub fn is_older_than(self, other: CtxWord) -> bool {
        self.ident().0 < other.ident().0
    }

    #[inline]
    fn aborted(self) -> Self {
        CtxWord(self.0 | Self::ABORTED)
    }
}

/// The arrival counter and `ctx_arr[]`: one published [`CtxWord`] per worker.
pub struct ContextTable {
    /// Arrival timestamps: one global counter (PLOR needs a total age order).
    next_arrival: CachePadded<AtomicU64>,
    words: Box<[CachePadded<AtomicU64>]>,
}

impl ContextTable {
    /// A table for `workers` workers, none running.
    pub fn new(workers: usize) -> Self {
        assert!(
            workers <= MAX_CONTEXT_WORKERS,
            "{workers} workers do not fit a context word"
        );
        ContextTable {
            next_arrival: CachePadded::new(AtomicU64::new(1)),
            words: (0..workers)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    /// Number of worker slots.
    pub fn workers(&self) -> usize {
        self.words.len()
    }

    /// A fresh arrival timestamp, larger than every one drawn before.
    #[inline]
    pub fn arrive(&self) -> u64 {
        // Relaxed: only uniqueness and monotonicity of the counter matter; the value is published
        // through the context word.
        self.next_arrival.fetch_add(1, Ordering::Relaxed)
    }

    /// Publishes worker `wid`'s new attempt with `priority`, running (dropping any wound aimed at
    /// its previous attempt). Returns the word published.
    pub fn begin(&self, wid: usize, priority: u64) -> CtxWord {
        let word = CtxWord::running(wid, priority.min(MAX_PRIORITY));
        // Release: pairs with the Acquire in `load`, so whoever sees this word also sees that the
        // previous attempt's locks were released before it.
        self.words[wid].store(word.0, Ordering::Release);
        word
    }

    /// Worker `wid`'s published word.
    #[inline]
    pub fn load(&self, wid: usize) -> CtxWord {
        // Acquire: pairs with the Release store in `begin`.
        CtxWord(self.words[wid].load(Ordering::Acquire))
    }

    /// Whether worker `wid`'s current attempt was wounded (`POLLONCE`).
    #[inline]
    pub fn is_aborted(&self, wid: usize) -> bool {
        // Relaxed: the flag carries no data; a wound seen one poll late only delays the abort.
        CtxWord(self.words[wid].load(Ordering::Relaxed)).is_aborted()
    }

    /// Wounds the transaction `victim` (an identity read from a lock or the table): sets
    /// `ABORTED` only if its worker still runs exactly that transaction. Returns whether that
    /// transaction is now wounded (by us or before).
    pub fn wound(&self, victim: CtxWord) -> bool {
        let victim = victim.ident();
        let slot = &self.words[victim.wid()];
        // Relaxed: a cheap look first, so that a waiter re-wounding on every poll does not take
        // the victim's cache line exclusively each time; the CAS below decides.
        let seen = slot.load(Ordering::Relaxed);
        if seen != victim.0 {
            return seen == victim.aborted().0;
        }
        // AcqRel: the CAS is the linearization point against the victim's next `begin`; a failure
        // (Acquire) tells us what it runs now.
        match slot.compare_exchange(
            victim.0,
            victim.aborted().0,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                // The victim may be parked: it must run to notice the wound.
                crate::protocol::wake::wake_waiters();
                true
            }
            Err(now) => now == victim.aborted().0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_order() {
        let w = CtxWord::running(5, 42);
        assert_eq!((w.wid(), w.priority()), (5, 42));
        assert!(!w.is_aborted());
        assert!(w.aborted().is_aborted());
        assert_eq!(w.aborted().ident(), w);
        assert_eq!(w.aborted().priority(), 42);
        let max = CtxWord::running(MAX_CONTEXT_WORKERS - 1, MAX_PRIORITY);
        assert_eq!(
            (max.wid(), max.priority()),
            (MAX_CONTEXT_WORKERS - 1, MAX_PRIORITY)
        );
        assert!(!max.is_aborted());
        // Priority first, worker id breaks ties.
        assert!(CtxWord::running(9, 1).is_older_than(CtxWord::running(0, 2)));
        assert!(CtxWord::running(0, 2).is_older_than(CtxWord::running(1, 2)));
        assert!(!CtxWord::running(1, 2).is_older_than(CtxWord::running(1, 2)));
    }

    #[test]
    fn wound_needs_the_exact_transaction() {
        let t = ContextTable::new(2);
        let first = t.begin(1, t.arrive());
        let next = t.begin(1, t.arrive());
        assert!(
            !t.wound(first),
            "a stale wound must miss the next transaction"
        );
        assert!(!t.is_aborted(1));
        assert!(t.wound(next));
        assert!(t.is_aborted(1));
        assert!(t.wound(next), "wounding twice reports the wound");
        // A retry keeps its priority and starts running again.
        let retry = t.begin(1, next.priority());
        assert_eq!(retry, next);
        assert!(!t.is_aborted(1));
    }

    #[test]
    fn a_hundred_workers_have_distinct_contexts() {
        let t = ContextTable::new(100);
        let words: Vec<_> = (0..100).map(|w| t.begin(w, 7)).collect();
        for (w, word) in words.iter().enumerate() {
            assert_eq!(word.wid(), w);
            assert_eq!(t.load(w), *word);
        }
        assert!(t.wound(words[99]));
        assert!(t.is_aborted(99) && !t.is_aborted(98));
        assert!(words[3].is_older_than(words[99]));
    }
}
