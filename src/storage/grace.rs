//! Grace periods for retired chunks: when no transaction can still hold a record of a chunk.
//!
//! A table that retires its deleted slots (`retire.rs`) must not reuse a chunk's memory while a
//! transaction that started before the chunk's last row left its index may still read it:
//! optimistic readers (Silo, TicToc, MOCC) read records without locks and may hold a record id
//! taken from the index just before the delete; a scan may have read the entry; a transaction
//! that aborts and retries keeps what its earlier attempt found. This is quiescent-state-based
//! reclamation with one announcement word per transaction slot:
//!
//! ```text
//!  epoch (global, only grows)        slots (one per Txn handle, padded to a cache line)
//! +------+                         +------+------+------+-----+
//! |  E   |                         | IDLE |  e1  | FREE | ... |   e1 <= E: the epoch the slot's
//! +------+                         +------+------+------+-----+   transaction saw when it began
//! ```
//!
//! - A transaction *pins* when it begins (or declares its access set, whichever is first): it
//!   copies the epoch into its slot and issues a SeqCst fence before it looks anything up. It
//!   stays pinned across aborts and retries and *unpins* (slot := IDLE) only once it commits
//!   (or its worker stops): a transaction that aborted for good stays pinned, conservatively,
//!   until its slot's next commit. A worker that keeps record references past the commit
//!   *holds* an epoch instead of unpinning (below, "Records kept past a commit").
//! - A chunk is *retired* after every row of it was deleted and its index entries were taken
//!   out ([`Grace::retire_epoch`]): a SeqCst fence, then the epoch is advanced from `e` to
//!   `e + 1`; the chunk is tagged with `e`.
//! - The chunk may be reused once every slot is IDLE, FREE or pinned at an epoch above `e`
//!   ([`Grace::quiescent_since`], which also fences before reading the slots).
//!
//! Why that is enough: a transaction pinned above `e` loaded the epoch after the advance (an
//! Acquire load reading the AcqRel increment), so every index removal made before the advance
//! happens before its lookups, and it cannot find the chunk's records. A transaction that pinned
//! at `e` or below is waited for. A transaction whose pin the reclaimer does not see at all
//! pinned after the reclaimer's fence in the SeqCst order (the pin's store precedes its own
//! fence); the removals precede the retiring thread's fence, which precedes the reclaimer's, so
//! that transaction's lookups see the removals too (the store-buffer argument of crossbeam-epoch
//! and of every QSBR scheme). Unpinning is a Release store read by the reclaimer's Acquire load,
//! so everything the transaction did with the chunk happens before the chunk is reinitialised.
//!
//! # Records kept past a commit: holds
//!
//! A multi-version protocol's worker keeps references to the records its commits installed in
//! its garbage queue (`versions::GcQueue`) and collects their chains at a *later* transaction's
//! start, once the reclamation watermark has passed them. Those references outlive the
//! transaction that found the records, so unpinning at its commit would let a chunk retired
//! meanwhile be reset, or freed, while the queue still points into it: the worker's next start
//! would then collect a chain that another thread is dropping (a use-after-free, reachable with
//! TPC-C's retiring NEW-ORDER table under SI, ERMIA, MVTO or Cicada). So the slot keeps
//! announcing the epoch at which the worker's *oldest* kept reference was found
//! ([`PinSlot::hold`]): every record a worker still references was found by a transaction
//! pinned at that epoch or later, which is exactly what a pin announces. [`Holds`] tracks,
//! queue order, the epoch each kept reference was found at. The announced epoch only moves
//! forward as the queue drains (a Release store: the collections of the references dropped
//! before it happen before a reclaimer that reads the new epoch reuses a chunk), and the slot
//! goes IDLE when nothing is kept.
//!
//! Cost: the pin's store and fence once per transaction (not per access), and only in
//! databases with a retiring table (TPC-C's NEW-ORDER); nothing on the access path.

use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
use crossbeam_utils::CachePadded;
use std::collections::VecDeque;

/// A slot whose transaction holds nothing.
const IDLE: u64 = 0;
/// A slot no `Txn` handle has claimed (also above every epoch, so it never holds reuse back).
const FREE: u64 = u64::MAX;

/// Most transaction slots a database tracks: the executors' most workers (threads x queue)
/// with room for handles that tests and tools make besides.
pub const MAX_SLOTS: usize = 4096;

/// The epoch and the slots' announcements (module docs).
pub struct Grace {
    /// The current epoch; starts at 1 (0 is IDLE).
    epoch: CachePadded<AtomicU64>,
    slots: Box<[CachePadded<AtomicU64>]>,
    /// Slots ever claimed (a prefix of `slots` holds every claimed one): bounds the scan.
    claimed: AtomicUsize,
}

impl Default for Grace {
    fn default() -> Self {
        Self::new()
    }
}

impl Grace {
    /// No slot claimed, epoch 1.
    pub fn new() -> Self {
        Self::with_slots(MAX_SLOTS)
    }

    /// No slot claimed, epoch 1, room for `slots` handles (the loom model uses two).
    pub(crate) fn with_slots(slots: usize) -> Self {
        Grace {
            epoch: CachePadded::new(AtomicU64::new(1)),
            slots: (0..slots)
                .map(|_| CachePadded::new(AtomicU64::new(FREE)))
                .collect(),
            claimed: AtomicUsize::new(0),
        }
    }

    /// Claims a free slot for one transaction handle; panics when all slots are taken
    /// (more concurrent handles than any executor makes: a bug, not user input).
    pub fn claim(&self) -> PinSlot<'_> {
        for (i, slot) in self.slots.iter().enumerate() {
            // Relaxed: the CAS only makes the slot ours; pins publish with their own orderings.
            if slot
                .compare_exchange(FREE, IDLE, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                // SeqCst: a reclaimer whose SeqCst load misses this raise comes before it in
                // the SeqCst order, so this slot's first pin (later, with its fence) comes after
                // the reclaimer's fence and is covered by the store-buffer argument (module docs).
                self.claimed.fetch_max(i + 1, Ordering::SeqCst);
                return PinSlot {
                    grace: self,
                    index: i,
                    announced: IDLE,
                    running: None,
                };
            }
        }
        panic!(
            "more than {} transaction handles on one database",
            self.slots.len()
        );
    }

    /// Advances the epoch for a chunk retired now and returns the epoch to tag it with: the
    /// chunk may be reused once [`Grace::quiescent_since`] that epoch.
    pub fn retire_epoch(&self) -> u64 {
        // SeqCst fence: orders the caller's index removals before the advance for transactions
        // that do not see the advance (module docs).
        fence(Ordering::SeqCst);
        // AcqRel: a transaction that pins at the new epoch (Acquire load) sees the removals.
        self.epoch.fetch_add(1, Ordering::AcqRel)
    }

    /// Whether no transaction pinned at `retired` or earlier is still running.
    pub fn quiescent_since(&self, retired: u64) -> bool {
        // SeqCst fence: pairs with the pins' fences (module docs).
        fence(Ordering::SeqCst);
        // SeqCst: read after the fence; a slot claimed later pins after it.
        let claimed = self.claimed.load(Ordering::SeqCst);
        self.slots[..claimed].iter().all(|slot| {
            // Acquire: pairs with the Release of an unpin (or of a later pin), so the
            // transaction's accesses happen before the caller reuses the chunk.
            let at = slot.load(Ordering::Acquire);
            at == IDLE || at > retired
        })
    }

    /// The current epoch (tests and statistics).
    pub fn epoch(&self) -> u64 {
        // Relaxed: a statistic.
        self.epoch.load(Ordering::Relaxed)
    }
}

/// One transaction handle's announcement slot (module docs); freed when dropped.
pub struct PinSlot<'g> {
    grace: &'g Grace,
    index: usize,
    /// What the slot holds now: IDLE, or an epoch (only this handle writes it).
    announced: u64,
    /// The epoch the running transaction was pinned at (it may run under an older announced
    /// one, see [`PinSlot::pin`]); `None` between transactions.
    running: Option<u64>,
}

impl PinSlot<'_> {
    /// Announces that a transaction runs from now on, unless one already does (it stays pinned
    /// across retries, see the module docs), and returns the epoch it runs at: the records it
    /// finds are from chunks not retired before that epoch ([`Holds::found_at`]).
    #[inline]
    pub fn pin(&mut self) -> u64 {
        if let Some(epoch) = self.running {
            return epoch;
        }
        // Acquire: pairs with `retire_epoch`'s AcqRel increment (module docs).
        let epoch = self.grace.epoch.load(Ordering::Acquire);
        if self.announced == IDLE {
            // Release: a reclaimer that reads this pin also sees the end of this slot's
            // previous transaction.
            self.grace.slots[self.index].store(epoch, Ordering::Release);
            // SeqCst fence: the pin precedes this transaction's lookups in the SeqCst order.
            fence(Ordering::SeqCst);
            self.announced = epoch;
        }
        // Else the slot holds an older epoch for references kept from earlier transactions
        // (`hold`), announced (and fenced) since before this transaction: it covers this
        // transaction's lookups too, conservatively. The epoch loaded above still says what
        // this transaction can find: a chunk retired before it had its entries removed before
        // the advance that this Acquire load read.
        self.running = Some(epoch);
        epoch
    }

    /// The transaction ended and nothing it or an earlier transaction found is kept: the slot
    /// holds no record any more.
    #[inline]
    pub fn unpin(&mut self) {
        self.running = None;
        if self.announced == IDLE {
            return;
        }
        self.announced = IDLE;
        // Release: the transaction's accesses happen before a reclaimer that reads IDLE reuses
        // a chunk.
        self.grace.slots[self.index].store(IDLE, Ordering::Release);
    }

    /// The transaction ended, but the worker keeps references to records found by
    /// transactions pinned at `oldest` or later ([`Holds::oldest`]; module docs, "Records kept
    /// past a commit"): the slot announces `oldest` until the next `hold` or `unpin`.
    #[inline]
    pub fn hold(&mut self, oldest: u64) {
        self.running = None;
        debug_assert!(
            self.announced != IDLE && oldest >= self.announced,
            "kept references come from transactions pinned at {oldest}, the slot holds {}",
            self.announced
        );
        if oldest > self.announced {
            self.announced = oldest;
            // Release: the accesses to the references dropped since the slot announced its
            // previous epoch happen before a reclaimer that reads this one reuses a chunk
            // retired in between. No fence: the slot was never IDLE since its pin's fence.
            self.grace.slots[self.index].store(oldest, Ordering::Release);
        }
    }
}

/// The epochs at which a worker's kept record references were found, in the order the worker
/// keeps them (a first-in, first-out queue; module docs, "Records kept past a commit"). Run-length
/// coded: the epoch changes only when a chunk is retired, so a run covers many references.
#[derive(Debug, Default)]
pub struct Holds {
    /// The epoch the worker's running transaction was pinned at ([`PinSlot::pin`]): the records
    /// it keeps are tagged with it. 0 in a database that retires nothing (never read there).
    current: u64,
    /// (epoch, references found at it), oldest first.
    runs: VecDeque<(u64, usize)>,
}

impl Holds {
    /// The worker's running transaction was pinned at `epoch`.
    #[inline]
    pub fn found_at(&mut self, epoch: u64) {
        self.current = epoch;
    }

    /// The epoch the oldest kept reference was found at; `None` when nothing is kept.
    #[inline]
    pub fn oldest(&self) -> Option<u64> {
        self.runs.front().map(|&(epoch, _)| epoch)
    }

    /// One more reference kept, found by the running transaction.
    #[inline]
    pub fn keep(&mut self) {
        match self.runs.back_mut() {
            Some((epoch, n)) if *epoch == self.current => *n += 1,
            // Allocates only when the epoch moved (a chunk retired) and the buffer is full.
            _ => self.runs.push_back((self.current, 1)),
        }
    }

    /// The oldest kept reference was dropped.
    #[inline]
    pub fn drop_oldest(&mut self) {
        let (_, n) = self
            .runs
            .front_mut()
            .expect("a reference is kept for every one dropped");
        *n -= 1;
        if *n == 0 {
            self.runs.pop_front();
        }
    }
}

impl Drop for PinSlot<'_> {
    fn drop(&mut self) {
        // Release: as in `unpin`; the slot may be claimed again.
        self.grace.slots[self.index].store(FREE, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_waits_for_transactions_pinned_at_or_before_its_epoch() {
        let g = Grace::new();
        let mut a = g.claim();
        let mut b = g.claim();
        a.pin();
        let e = g.retire_epoch();
        assert!(!g.quiescent_since(e), "a began before the retirement");
        b.pin();
        assert!(!g.quiescent_since(e), "a still runs");
        a.pin();
        assert!(!g.quiescent_since(e), "a retry keeps its first pin");
        a.unpin();
        assert!(g.quiescent_since(e), "b began after the retirement");
        let later = g.retire_epoch();
        assert!(!g.quiescent_since(later), "b began before the second one");
        b.unpin();
        assert!(g.quiescent_since(later));
        a.pin();
        drop(a);
        assert!(
            g.quiescent_since(g.retire_epoch()),
            "a dropped handle frees its slot"
        );
        let c = g.claim();
        assert_eq!(c.index, 0, "the freed slot is claimed again");
    }

    /// A worker that keeps references past its commits (a garbage queue) holds the epoch of the
    /// oldest one; the held epoch moves forward as the references are dropped.
    #[test]
    fn a_slot_holds_the_epoch_of_its_oldest_kept_reference() {
        let g = Grace::new();
        let mut slot = g.claim();
        let mut holds = Holds::default();
        let first = slot.pin();
        holds.found_at(first);
        holds.keep();
        holds.keep();
        assert_eq!(slot.pin(), first, "a retry runs at its first pin");
        slot.hold(holds.oldest().unwrap());
        let e1 = g.retire_epoch();
        assert_eq!(e1, first);
        assert!(
            !g.quiescent_since(e1),
            "two references from before e1 are kept"
        );
        let second = slot.pin();
        assert!(
            second > e1,
            "the next transaction runs after the retirement"
        );
        holds.found_at(second);
        holds.keep();
        holds.drop_oldest();
        slot.hold(holds.oldest().unwrap());
        assert!(
            !g.quiescent_since(e1),
            "one reference from before e1 is still kept"
        );
        holds.drop_oldest();
        assert_eq!(holds.oldest(), Some(second));
        slot.pin();
        slot.hold(holds.oldest().unwrap());
        assert!(
            g.quiescent_since(e1),
            "only references found after e1 are kept"
        );
        let e2 = g.retire_epoch();
        assert!(
            !g.quiescent_since(e2),
            "a reference found before e2 is kept"
        );
        holds.drop_oldest();
        assert_eq!(holds.oldest(), None);
        slot.pin();
        slot.unpin();
        assert!(g.quiescent_since(e2), "nothing kept");
    }
}
