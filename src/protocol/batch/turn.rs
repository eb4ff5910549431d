//! Taking turns in a batch's arrival order: the member at position `p` of a closed batch acts
//! (batched Calvin requests its locks, BOHM places its versions) when the member before it has,
//! so that what they do to shared records happens in batch order exactly as if one thread had
//! walked the batch (Calvin's lock manager, BOHM's concurrency-control phase).

use super::{BatchTicket, Batches};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

/// Bits of a position in the turn word (a batch holds at most 1024 members).
const POSITION_BITS: u32 = 24;

/// The turn word's value that lets the member at `position` of `batch` act.
#[inline]
fn turn_of(batch: u64, position: u32) -> u64 {
    batch << POSITION_BITS | u64::from(position)
}

/// Whose turn it is: `[ batch | position ]`. Position 0 of a batch needs no turn: batches are
/// sequential, so everything the batches before it did is done when its batch is open.
#[derive(Debug, Default)]
pub struct Turn {
    word: CachePadded<AtomicU64>,
}

impl Turn {
    /// Joins the open batch (unless the ticket holds one already) and waits, `Pending`, until
    /// it is the member's turn: `Ready` once it may act, then [`pass`](Self::pass) when it is
    /// done. A member publishes nothing before its turn (it announces itself executed as it
    /// joins), so nothing waits for the batch to close: positions are handed out in arrival
    /// order, so every member that joins later comes after this one, and the member before it
    /// has joined already. Polled again after `Pending`, it goes on from where it was: the
    /// ticket's batch says whether it joined.
    ///
    /// Not waiting for the close is where this differs from a lock manager (or CC phase) that
    /// takes a whole batch at once: the walk through the batch starts with its first member
    /// instead of after its last one joined, so the gap between the first and the last join
    /// (up to `--batch-timeout-us` on a light load) is not added to every member's latency. The
    /// order of the walk is the same.
    pub fn wait_for_turn(&self, batches: &Batches, t: &mut BatchTicket) -> Poll<()> {
        if t.batch() == 0 {
            if batches.join(t).is_pending() {
                return Poll::Pending;
            }
            batches.executed(t);
        }
        if !self.is_mine(t) {
            return Poll::Pending;
        }
        Poll::Ready(())
    }

    /// Whether the member of `t` may act: it is first in its batch, or the member before it
    /// passed the turn. Members that join after it take later positions, so none of them can
    /// come before it.
    #[inline]
    pub fn is_mine(&self, t: &BatchTicket) -> bool {
        // Acquire: pairs with the previous member's Release in `pass`, so what it did to shared
        // records (lock requests, placed versions) is visible to this member.
        t.position() == 0 || self.word.load(Ordering::Acquire) == turn_of(t.batch(), t.position())
    }

    /// Passes the turn from the member of `t` to the one after it, and wakes parked waiters
    /// (it may be one of them).
    #[inline]
    pub fn pass(&self, t: &BatchTicket) {
        // Release: publishes what this member did in its turn (its Acquire in `is_mine`).
        self.word
            .store(turn_of(t.batch(), t.position() + 1), Ordering::Release);
        crate::protocol::wake::wake_waiters();
    }
}
