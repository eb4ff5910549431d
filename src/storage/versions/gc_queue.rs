//! RapidGC's per-worker queue of records to collect (module docs, "Deferred collection").

use crate::storage::grace::Holds;

/// RapidGC's per-worker queue of records whose chains to collect once the watermark passes the
/// version a commit installed (Cicada's GC queue; CCBench section 3.2).
///
/// A record's writer collects its chain while it holds the record ([`VersionChain::collect`](super::VersionChain::collect)),
/// but with the watermark of that moment, which is below its own snapshot: the version it just
/// pushed stays. Left there, that node is freed only when the record is written again, by then
/// usually long out of the cache, and a record written once keeps one older version for the rest
/// of the run. So a committer also queues each record it installed with its commit timestamp
/// `c`, and the worker collects the queued records whose `c` the watermark has passed
/// ([`VersionChain::collect_deferred`](super::VersionChain::collect_deferred)): every active snapshot then sees the inline version, and
/// the whole chain goes, a few microseconds after it was written, while it is still in cache.
/// A worker's commit timestamps only grow, so the queue is in timestamp order.
///
/// The queue has no cap of its own: an entry waits for the watermark to pass the version its
/// commit installed, and until then that version cannot be collected, so the entries waiting
/// are at most the live versions, which the version cap bounds (an entry costs 16 bytes, a
/// version at least its node). An earlier cap of 65,536 entries dropped the oldest entry when
/// full, and its record kept its older versions until written again: while a long transaction
/// held the watermark back for 100 ms (CCBench's figure 14), the short workers' commits
/// overflowed it every pause, and live versions climbed through the run (to 300-580k in 0.7 s,
/// never back to the floor) where collection should return them to a few thousand.
///
/// The queued references outlive the transaction that found their records, so in a database
/// whose tables retire chunks, the worker's grace-period slot must keep covering them after its
/// commit: `holds` records the epoch each was found at (`storage::grace`, "Records kept past a
/// commit"), and the transaction handle announces the oldest ([`GcQueue::holds`]).
pub struct GcQueue<T> {
    items: std::collections::VecDeque<(u64, T)>,
    /// The grace-period epochs the items were found at, in the same order.
    holds: Holds,
}

impl<T> Default for GcQueue<T> {
    fn default() -> Self {
        GcQueue {
            items: std::collections::VecDeque::new(),
            holds: Holds::default(),
        }
    }
}

impl<T> GcQueue<T> {
    /// The grace-period epochs of the queued references: the transaction handle tells it the
    /// epoch each transaction runs at and announces the oldest one kept.
    pub fn holds(&mut self) -> &mut Holds {
        &mut self.holds
    }
}

impl<T: Copy> GcQueue<T> {
    /// Queues `item`, whose version with timestamp `ts` was just installed.
    #[inline]
    pub fn defer(&mut self, ts: u64, item: T) {
        // Grows (amortised doubling) only while a held-back watermark lets entries pile up; a
        // warm queue reuses its buffer.
        self.items.push_back((ts, item));
        self.holds.keep();
    }

    /// The oldest queued item whose timestamp `watermark` has passed, dequeued.
    #[inline]
    pub fn pop_ready(&mut self, watermark: u64) -> Option<T> {
        match self.items.front() {
            Some(&(ts, item)) if ts <= watermark => {
                self.items.pop_front();
                // The caller's use of `item` comes before its next `hold`/`unpin` (the handle's
                // commit), which is what publishes the drop to reclaimers.
                self.holds.drop_oldest();
                Some(item)
            }
            _ => None,
        }
    }

    /// Entries queued.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gc_queue_hands_out_what_the_watermark_passed_in_order() {
        let mut q = GcQueue::default();
        for ts in [3u64, 7, 9] {
            q.defer(ts, ts);
        }
        assert_eq!(q.pop_ready(2), None);
        assert_eq!(q.pop_ready(8), Some(3));
        assert_eq!(q.pop_ready(8), Some(7));
        assert_eq!(q.pop_ready(8), None);
        assert_eq!(q.len(), 1);
        // Nothing is dropped however many wait (a dropped entry leaks its record's versions
        // until the record is written again).
        for ts in 10..10 + (1u64 << 17) {
            q.defer(ts, ts);
        }
        assert_eq!(q.len(), 1 + (1 << 17));
        assert_eq!(q.pop_ready(u64::MAX), Some(9));
        assert_eq!(q.pop_ready(u64::MAX), Some(10));
    }
}
