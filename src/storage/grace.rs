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
//!   until its slot's next commit.
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
//! Cost: the pin's store and fence once per transaction (not per access), and only in
//! databases with a retiring table (TPC-C's NEW-ORDER); nothing on the access path.

use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
use crossbeam_utils::CachePadded;

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
                    pinned: false,
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
    /// Whether the slot holds an epoch now (only this handle writes it).
    pinned: bool,
}

impl PinSlot<'_> {
    /// Announces that a transaction runs from now on, unless one already does (it stays pinned
    /// across retries, see the module docs).
    #[inline]
    pub fn pin(&mut self) {
        if self.pinned {
            return;
        }
        self.pinned = true;
        // Acquire: pairs with `retire_epoch`'s AcqRel increment (module docs).
        let epoch = self.grace.epoch.load(Ordering::Acquire);
        // Release: a reclaimer that reads this pin also sees the end of this slot's previous
        // transaction.
        self.grace.slots[self.index].store(epoch, Ordering::Release);
        // SeqCst fence: the pin precedes this transaction's lookups in the SeqCst order.
        fence(Ordering::SeqCst);
    }

    /// The transaction ended: it holds no record any more.
    #[inline]
    pub fn unpin(&mut self) {
        if !self.pinned {
            return;
        }
        self.pinned = false;
        // Release: the transaction's accesses happen before a reclaimer that reads IDLE reuses
        // a chunk.
        self.grace.slots[self.index].store(IDLE, Ordering::Release);
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
}
