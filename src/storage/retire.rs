//! Retiring the chunks of deleted rows, and reusing their memory.
//!
//! A table that grows keeps every chunk it ever allocated, so a table whose rows are inserted
//! at one end and deleted at the other (TPC-C's NEW-ORDER: New-Order inserts the newest order's
//! row, Delivery deletes the oldest) would hold memory for every row it ever had. A table that
//! *retires* its deleted slots ([`Table::retire_deleted_slots`](super::Table::retire_deleted_slots))
//! instead follows its live rows:
//!
//! 1. The workload promises that a slot, once its row is deleted and its index entry taken out,
//!    never holds a row again (record ids are never reused for another key), and the engine
//!    tells the table each time that happens ([`Table::retire_slot`](super::Table::retire_slot):
//!    `Txn` does it when it applies a committed delete's index removal; TPC-C's loader does it
//!    for the order ids that never get a NEW-ORDER row). A per-chunk counter adds them up.
//! 2. When a chunk's every slot is retired, the chunk is *retired*: tagged with a grace-period
//!    epoch (`grace.rs`) and queued, still in place, so transactions that found one of its
//!    records before the last removal keep reading valid memory.
//! 3. The next time the table needs a new chunk, it takes the oldest queued chunk whose grace
//!    period has passed (no transaction that began before its retirement is still running),
//!    takes it out of the directory, makes it exactly like a freshly allocated one (every
//!    record's metadata dropped and rebuilt, the payload zeroed, which also zeroes the
//!    check-mode stamp), and installs it at the new position. Memory is counted once: a reused
//!    chunk was counted when first allocated.
//!
//! What "slots reused" means here: a slot's *record id* is never reused (ids stay stable and
//! name one key for the whole run, so the checker and the indexes never see an id change
//! meaning); its *memory* is, at chunk granularity, for the ids the table grows into next.
//! A retired record id reads as a slot whose chunk is not allocated ([`Table::peek`] gives
//! `None`, as for a slot never used); [`Table::get`] of it gives `None` and nothing is
//! allocated for it again.
//!
//! Off the hot path: lookups of allocated records are unchanged (one directory load); the
//! counters are touched once per delete, the queue once per chunk, and the grace period costs
//! one pin per transaction (`grace.rs`).
//!
//! [`Table::peek`]: super::Table::peek
//! [`Table::get`]: super::Table::get

use super::grace::Grace;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// One table's retirement state (module docs).
pub(super) struct Retirement {
    pub(super) grace: Arc<Grace>,
    /// Per chunk: slots retired so far.
    retired: Box<[AtomicU32]>,
    /// Retired chunks waiting for their grace period, oldest first; the lock also serialises
    /// this table's growth, so a chunk is installed by one thread (growth is rare).
    waiting: Mutex<VecDeque<Waiting>>,
    chunks_retired: AtomicU64,
    chunks_reused: AtomicU64,
}

/// A retired chunk and the epoch it was retired at.
#[derive(Debug, Clone, Copy)]
pub(super) struct Waiting {
    pub(super) chunk: usize,
    pub(super) epoch: u64,
}

/// Counters of a retiring table, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RetirementStats {
    /// Chunks whose every slot was retired.
    pub chunks_retired: u64,
    /// Retired chunks whose memory was reused for a new chunk.
    pub chunks_reused: u64,
    /// Retired chunks still waiting (for their grace period or for the table to grow).
    pub chunks_waiting: u64,
}

impl Retirement {
    /// No slot retired among `chunks` chunks.
    pub(super) fn new(chunks: usize, grace: Arc<Grace>) -> Self {
        Retirement {
            grace,
            retired: (0..chunks).map(|_| AtomicU32::new(0)).collect(),
            waiting: Mutex::new(VecDeque::new()),
            chunks_retired: AtomicU64::new(0),
            chunks_reused: AtomicU64::new(0),
        }
    }

    /// The queue (and the table's growth lock).
    pub(super) fn lock(&self) -> MutexGuard<'_, VecDeque<Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts `n` more retired slots of chunk `c`, which holds `records` slots; `true` when
    /// that completes the chunk (for exactly one caller).
    pub(super) fn add(&self, c: usize, n: u32, records: usize) -> bool {
        // AcqRel: the removals counted before (Release) happen before whoever completes the
        // chunk (Acquire), which then retires it.
        let before = self.retired[c].fetch_add(n, Ordering::AcqRel);
        let after = before as usize + n as usize;
        assert!(
            after <= records,
            "chunk {c}: {after} slots retired of {records} (a slot retired twice)"
        );
        after == records && (before as usize) < records
    }

    /// Whether every slot of chunk `c` (of `records` slots) is retired.
    #[inline]
    pub(super) fn is_retired(&self, c: usize, records: usize) -> bool {
        // Relaxed: a retired chunk stays retired; callers that reuse memory go through the
        // queue's lock and the grace period.
        self.retired[c].load(Ordering::Relaxed) as usize >= records
    }

    /// Notes a retired chunk.
    pub(super) fn counted_retired(&self) {
        // Relaxed: a statistic.
        self.chunks_retired.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a reused chunk.
    pub(super) fn counted_reused(&self) {
        // Relaxed: a statistic.
        self.chunks_reused.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub(super) fn stats(&self) -> RetirementStats {
        let waiting = self.lock().len() as u64;
        RetirementStats {
            // Relaxed: statistics.
            chunks_retired: self.chunks_retired.load(Ordering::Relaxed),
            chunks_reused: self.chunks_reused.load(Ordering::Relaxed),
            chunks_waiting: waiting,
        }
    }
}
