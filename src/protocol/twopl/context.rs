//! Transaction timestamps and the per-worker context table of WAIT_DIE and WOUND_WAIT.
//!
//! Each worker publishes one [`ContextWord`] (its transaction's timestamp plus status bits) in a
//! cache-padded slot of the [`ContextTable`]. Other workers read it to compare ages with a lock
//! holder or waiter, and WOUND_WAIT wounds a holder by a compare-and-swap on it that succeeds only
//! against the exact timestamp the wounder meant: once the victim has published a newer
//! transaction, a late (stale) wound fails instead of hitting it.
//!
//! Who writes what: the owning worker stores a fresh word at `begin`, sets and clears
//! `WANTS_EXCLUSIVE` while it waits, and sets `COMMITTING`; any other worker may only set `WOUNDED`.
//! Every change made while another worker may write the word is a read-modify-write, so neither
//! side's bits are lost.

use super::owned_lock::OwnedLock;
use super::rule::Locker;
use super::{LockMode, TooManyWorkers};
use crate::protocol::Abort;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// A transaction's age: smaller is older, older has priority. Drawn once per transaction from
/// one global counter and kept across its retries. Zero means "no transaction yet".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// Whether this transaction started before `other` (has priority over it).
    #[inline]
    pub fn is_older_than(self, other: Timestamp) -> bool {
        self.0 < other.0
    }
}

/// One worker's published state, packed so that a wound can be a single CAS:
///
/// ```text
///  63          62        61                60 ........................... 0
/// +-----------+---------+-----------------+--------------------------------+
/// | COMMITTING| WOUNDED | WANTS_EXCLUSIVE |  timestamp (61 bits)           |
/// +-----------+---------+-----------------+--------------------------------+
/// ```
///
/// - `COMMITTING`: the transaction passed its last wound check and is installing; it can no longer
///   be wounded (WOUND_WAIT waits for it instead).
/// - `WOUNDED`: an older transaction asked this one to abort; it does at its next operation or poll.
/// - `WANTS_EXCLUSIVE`: the mode of the lock request the worker is currently registered as waiting
///   for (meaningful only while its waiter bit is set on some record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWord(u64);

impl ContextWord {
    const COMMITTING: u64 = 1 << 63;
    const WOUNDED: u64 = 1 << 62;
    const WANTS_EXCLUSIVE: u64 = 1 << 61;
    const TS_MASK: u64 = (1 << 61) - 1;

    /// A running transaction with timestamp `ts`, no status bits.
    #[inline]
    pub fn running(ts: Timestamp) -> Self {
        debug_assert!(ts.0 <= Self::TS_MASK, "timestamp overflows 61 bits");
        ContextWord(ts.0 & Self::TS_MASK)
    }

    /// The transaction's timestamp.
    #[inline]
    pub fn ts(self) -> Timestamp {
        Timestamp(self.0 & Self::TS_MASK)
    }

    /// Whether the transaction started committing (cannot be wounded any more).
    #[inline]
    pub fn is_committing(self) -> bool {
        self.0 & Self::COMMITTING != 0
    }

    /// Whether an older transaction wounded this one.
    #[inline]
    pub fn is_wounded(self) -> bool {
        self.0 & Self::WOUNDED != 0
    }

    /// The mode of the request the worker waits for (if it is registered as a waiter).
    #[inline]
    pub fn wanted_mode(self) -> LockMode {
        if self.0 & Self::WANTS_EXCLUSIVE != 0 {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        }
    }

    #[inline]
    fn with_wounded(self) -> Self {
        ContextWord(self.0 | Self::WOUNDED)
    }

    #[inline]
    fn with_committing(self) -> Self {
        ContextWord(self.0 | Self::COMMITTING)
    }
}

/// The global timestamp counter and one published [`ContextWord`] per worker.
pub struct ContextTable {
    /// The protocol's one global counter (WAIT_DIE and WOUND_WAIT need a total age order).
    next_ts: CachePadded<AtomicU64>,
    words: Box<[CachePadded<AtomicU64>]>,
}

impl ContextTable {
    /// The table of a waiting rule (WAIT_DIE, WOUND_WAIT) named `rule`, whose locks name holders
    /// by one bit per worker: at most `capacity` workers (the locks' width).
    pub fn for_waiting_rule(
        rule: &'static str,
        workers: usize,
        capacity: usize,
    ) -> Result<Self, TooManyWorkers> {
        TooManyWorkers::check(rule, workers, capacity)?;
        Ok(ContextTable::new(workers))
    }

    /// Starts `me`'s attempt: a fresh timestamp, or the kept one on a retry.
    pub fn begin_attempt<const WORDS: usize>(
        &self,
        me: &mut Locker<'_, OwnedLock<WORDS>>,
        retry: bool,
    ) {
        debug_assert!(
            me.waiting_on.is_none(),
            "previous attempt left a wait registered"
        );
        me.ts = self.begin(me.id, me.ts, retry);
    }

    /// A table for `workers` workers, none running.
    pub fn new(workers: usize) -> Self {
        ContextTable {
            next_ts: CachePadded::new(AtomicU64::new(1)),
            words: (0..workers)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    /// Number of worker slots.
    pub fn workers(&self) -> usize {
        self.words.len()
    }

    /// Starts an attempt of worker `id`: keeps `ts` on a retry (if it has one), else draws a new
    /// one; publishes it with no status bits (dropping any wound aimed at the previous attempt).
    pub fn begin(&self, id: usize, ts: Timestamp, retry: bool) -> Timestamp {
        let ts = if retry && ts != Timestamp::default() {
            ts
        } else {
            // Relaxed: only uniqueness and per-counter monotonicity matter; the value is published
            // through the context word below.
            Timestamp(self.next_ts.fetch_add(1, Ordering::Relaxed))
        };
        // Release: pairs with the Acquire loads in `load`, so a worker that sees this timestamp
        // also sees that the previous attempt's locks were released before it.
        self.words[id].store(ContextWord::running(ts).0, Ordering::Release);
        ts
    }

    /// The published word of worker `id`.
    #[inline]
    pub fn load(&self, id: usize) -> ContextWord {
        // Acquire: pairs with the Release store in `begin` and the AcqRel updates below.
        ContextWord(self.words[id].load(Ordering::Acquire))
    }

    /// Whether worker `id`'s current attempt was wounded.
    #[inline]
    pub fn is_wounded(&self, id: usize) -> bool {
        // Relaxed: the flag carries no data; the authoritative check is the CAS in `start_commit`.
        ContextWord(self.words[id].load(Ordering::Relaxed)).is_wounded()
    }

    /// Wounds worker `victim` if it still runs the transaction with timestamp `ts` and has not
    /// started committing. Returns whether that transaction is now wounded (by us or before).
    pub fn wound(&self, victim: usize, ts: Timestamp) -> bool {
        let slot = &self.words[victim];
        // Acquire: pairs with the victim's Release store in `begin` (see `load`).
        let mut seen = ContextWord(slot.load(Ordering::Acquire));
        loop {
            if seen.ts() != ts || seen.is_committing() {
                return false;
            }
            if seen.is_wounded() {
                return true;
            }
            // AcqRel: the CAS is the linearization point against the victim's `start_commit` CAS
            // on the same word; exactly one of the two wins.
            match slot.compare_exchange_weak(
                seen.0,
                seen.with_wounded().0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // The victim may be parked: it must run to notice the wound.
                    crate::protocol::wake::wake_waiters();
                    return true;
                }
                Err(now) => seen = ContextWord(now),
            }
        }
    }

    /// Marks worker `id` as committing, unless it was wounded first (then `Err(Wounded)`).
    pub fn start_commit(&self, id: usize) -> Result<(), Abort> {
        let slot = &self.words[id];
        // Relaxed: the CAS below re-checks the exact value.
        let mut seen = ContextWord(slot.load(Ordering::Relaxed));
        loop {
            if seen.is_wounded() {
                return Err(Abort::Wounded);
            }
            // AcqRel: races only with a wounder's CAS (see `wound`).
            match slot.compare_exchange_weak(
                seen.0,
                seen.with_committing().0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => seen = ContextWord(now),
            }
        }
    }

    /// Publishes the mode worker `id` is about to wait for. Must precede setting its waiter bit.
    pub fn set_wanted_mode(&self, id: usize, mode: LockMode) {
        let slot = &self.words[id];
        // Relaxed: a read-modify-write so a concurrent wound bit is kept; the waiter bit's
        // Release (set right after) publishes this change to whoever sees the bit.
        match mode {
            LockMode::Exclusive => slot.fetch_or(ContextWord::WANTS_EXCLUSIVE, Ordering::Relaxed),
            LockMode::Shared => slot.fetch_and(!ContextWord::WANTS_EXCLUSIVE, Ordering::Relaxed),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_accessors_round_trip() {
        let w = ContextWord::running(Timestamp(42));
        assert_eq!(w.ts(), Timestamp(42));
        assert!(!w.is_wounded() && !w.is_committing());
        assert_eq!(w.wanted_mode(), LockMode::Shared);
        let w = w.with_wounded().with_committing();
        assert!(w.is_wounded() && w.is_committing());
        assert_eq!(w.ts(), Timestamp(42));
    }

    #[test]
    fn wound_needs_the_exact_timestamp_and_loses_to_commit() {
        let t = ContextTable::new(2);
        let first = t.begin(1, Timestamp::default(), false);
        let next = t.begin(1, first, false);
        assert!(next.0 > first.0);
        assert!(
            !t.wound(1, first),
            "stale wound must miss the next transaction"
        );
        assert!(!t.is_wounded(1));
        t.start_commit(1).unwrap();
        assert!(
            !t.wound(1, next),
            "a committing transaction cannot be wounded"
        );
        let kept = t.begin(1, next, true);
        assert_eq!(kept, next, "a retry keeps its timestamp");
        assert!(t.wound(1, kept));
        assert_eq!(t.start_commit(1), Err(Abort::Wounded));
    }

    #[test]
    fn wanted_mode_keeps_wound_bit() {
        let t = ContextTable::new(1);
        let ts = t.begin(0, Timestamp::default(), false);
        assert!(t.wound(0, ts));
        t.set_wanted_mode(0, LockMode::Exclusive);
        assert!(t.is_wounded(0));
        assert_eq!(t.load(0).wanted_mode(), LockMode::Exclusive);
        t.set_wanted_mode(0, LockMode::Shared);
        assert_eq!(t.load(0).wanted_mode(), LockMode::Shared);
    }
}
