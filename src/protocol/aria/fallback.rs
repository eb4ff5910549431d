//! Aria's fallback phase (`--aria-fallback`, Aria section 5): a member that loses a conflict in
//! the commit phase stays in its batch and reruns there under deterministic locks, instead of
//! moving to the next batch.
//!
//! # The phase
//!
//! 1. **Register.** A member whose verdict is an abort becomes a *fallback member*: it turns
//!    what its first run touched (reads, `read_committed` reads, writes) into a lock set (a
//!    record it writes is locked for writing, one it only reads for reading), publishes its rank
//!    in its worker's slot (`slots`), and counts itself in `staying`.
//! 2. **Wait for the installs.** Every other member commits (installs, then `finished`) or
//!    withdrew; [`Batches::all_finished_but`] says when all of them have, so the fallback
//!    members read the database as the batch's committers left it.
//! 3. **Request in rank order, then wait for the grants.** Each fallback member finds its
//!    predecessor (the fallback member of its batch ranked just before it) in the slots and
//!    requests all its locks when the turn word names that predecessor, then names itself
//!    there. The requests on every record are therefore made in rank order, as if one lock
//!    manager had walked the fallback members in rank order (Calvin's; the locks are batched
//!    Calvin's [`CalvinLock`]: each record's requests are granted in request order, readers
//!    together). The member then waits until every request is granted, as a Calvin
//!    transaction does before it runs.
//! 4. **Rerun.** The first run's abort is reported only now; the executor retries the
//!    transaction, which stays in the batch. Each access reads the record in place (the current
//!    database: the batch's installs and those of the lower-ranked fallback members that wrote
//!    it) or buffers the write; an access to a record outside the lock set (or a write to one
//!    locked for reading) aborts the rerun with [`Abort::BatchAccessSetChanged`], and the
//!    transaction moves to the next batch as Aria without the fallback does. The commit
//!    installs through the shared install path, releases every lock, and finishes.
//!
//! Why the wait comes before the rerun, not at each access: a rerun can end early (its access
//! set changed, or a user abort), and it must then release every request it made. The lock
//! counts releases, so a request released before its grant moves the record's release counter
//! as if an earlier holder had let go: a later request is granted while the earlier one is still
//! held. (A first version waited at each access, and the anomaly suite's phantom scenario found
//! the resulting cycle: a rerun whose scan changed left ungranted write requests behind it, and
//! a higher-ranked reader of the same summary record read it before a lower-ranked writer
//! installed.)
//!
//! [`CalvinLock`]: crate::protocol::calvin::lock::CalvinLock
//! [`Abort::BatchAccessSetChanged`]: crate::protocol::Abort::BatchAccessSetChanged
//!
//! Why it is serializable: the batch's committers are serializable among themselves and read
//! only the previous batch's state (Aria); every fallback member reads after all their installs,
//! so they come first. Fallback members conflict only on records in their lock sets (anything
//! else aborts), whose requests were made in rank order and are granted one conflicting request
//! at a time, held until commit: the fallback members are equivalent to running serially in rank
//! order after the committers. The batch finishes (the next opens) only when every fallback
//! member has committed or left.
//!
//! No deadlock: a member waits for the turn of, and the locks of, lower-ranked members only, and
//! those wait for nothing else in the batch (every other member finished before the requests
//! began). No livelock: the lowest-ranked fallback member is granted everything at once, and a
//! rerun ends (commits, or leaves for the next batch) without waiting for higher ranks.
//!
//! Words (each on its own cache line):
//!
//! ```text
//! staying:   [ batch: 40 | fallback members registered: 24 ]
//! turn:      [ batch: 40 | rank of the last member that requested: 24 ]
//! slots[w]:  [ batch: 40 | rank: 24 ]   worker w's fallback membership (0: none yet)
//! ```
//!
//! A stale batch's value in any of them is ignored, so none needs clearing between batches.

use super::AriaMeta;
use crate::protocol::batch::{BatchTicket, Batches};
use crate::protocol::calvin::lock::{LockRules, Position};
#[cfg(test)]
use crate::protocol::mutants::Mutant;
use crate::protocol::{AccessMode, ReadSet};
use crate::storage::Record;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Bits below the batch id in the phase's words.
const LOW_BITS: u32 = 24;
const LOW_MASK: u64 = (1 << LOW_BITS) - 1;
/// Worker slots: a rank's worker id has 10 bits (`batch::ticket`).
const SLOTS: usize = 1024;

#[inline]
fn word(batch: u64, low: u64) -> u64 {
    debug_assert!(low <= LOW_MASK);
    batch << LOW_BITS | low
}

/// One record of a fallback member's lock set: its mode, where its request stands, and
/// whether the grant was seen.
#[derive(Debug, Clone, Copy)]
pub(super) struct FallbackLock {
    pub(super) mode: AccessMode,
    at: Option<Position>,
    granted: bool,
}

impl FallbackLock {
    pub(super) fn new(mode: AccessMode) -> Self {
        FallbackLock {
            mode,
            at: None,
            granted: false,
        }
    }
}

/// A fallback member's lock set (reused across attempts).
pub(super) type LockSet<'db> = ReadSet<'db, AriaMeta, FallbackLock>;

/// The shared state of the fallback phase, and its report counters.
pub(super) struct Fallback {
    /// Fallback members registered in the current batch (module docs).
    staying: CachePadded<AtomicU64>,
    /// The last fallback member that made its requests (module docs).
    turn: CachePadded<AtomicU64>,
    /// Each worker's rank as a fallback member of a batch (module docs). Written once per
    /// fallback membership, read by the batch's fallback members once each: no padding.
    slots: Box<[AtomicU64]>,
    /// One past the highest worker id registered: how far predecessor searches look.
    workers: AtomicUsize,
    commits: CachePadded<AtomicU64>,
    aborts: CachePadded<AtomicU64>,
    #[cfg(test)]
    pub(super) mutant: Mutant,
}

impl Fallback {
    pub(super) fn new() -> Self {
        Fallback {
            staying: CachePadded::new(AtomicU64::new(0)),
            turn: CachePadded::new(AtomicU64::new(0)),
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            workers: AtomicUsize::new(0),
            commits: CachePadded::new(AtomicU64::new(0)),
            aborts: CachePadded::new(AtomicU64::new(0)),
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    /// A worker with this id exists (its slot may be searched).
    pub(super) fn add_worker(&self, id: usize) {
        // Relaxed: a worker's own slot store comes after this in its thread, and readers see
        // that store through the Acquire of `staying`, so they see this too.
        self.workers.fetch_max((id % SLOTS) + 1, Ordering::Relaxed);
    }

    /// The ticket's member becomes a fallback member of its batch (step 1).
    pub(super) fn register(&self, t: &BatchTicket) {
        let (batch, rank) = (t.batch(), u64::from(t.rank()));
        // Relaxed: published by the Release of the `staying` increment below, which every
        // fallback member reads (Acquire) before it searches the slots.
        self.slots[t.worker() % SLOTS].store(word(batch, rank), Ordering::Relaxed);
        // AcqRel: Release publishes the slot; Acquire keeps the release sequence of the
        // earlier registrations of this batch intact for readers.
        let mut cur = self.staying.load(Ordering::Relaxed);
        loop {
            let next = if cur >> LOW_BITS == batch {
                cur + 1
            } else {
                word(batch, 1)
            };
            match self
                .staying
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(seen) => cur = seen,
            }
        }
        // This registration may complete the wait of step 2 for parked fallback members.
        crate::protocol::wake::wake_waiters();
    }

    /// Whether every other member of the ticket's batch has installed and finished (step 2).
    pub(super) fn others_finished(&self, batches: &Batches, t: &BatchTicket) -> bool {
        // Acquire: pairs with the registrations' Release, so every registered slot is visible
        // once the count is complete.
        let s = self.staying.load(Ordering::Acquire);
        let staying = if s >> LOW_BITS == t.batch() {
            s & LOW_MASK
        } else {
            0
        };
        batches.all_finished_but(t, staying)
    }

    /// The rank of the fallback member of the ticket's batch ranked just before it, if any.
    /// Every fallback member of the batch is registered (step 2 held).
    pub(super) fn predecessor(&self, t: &BatchTicket) -> Option<u32> {
        let (batch, rank) = (t.batch(), t.rank());
        // Relaxed: as in `add_worker`.
        let workers = self.workers.load(Ordering::Relaxed);
        self.slots[..workers]
            .iter()
            // Relaxed: the Acquire of `staying` in `others_finished` made them visible.
            .map(|s| s.load(Ordering::Relaxed))
            .filter(|&w| w >> LOW_BITS == batch)
            .map(|w| (w & LOW_MASK) as u32)
            .filter(|&r| r < rank)
            .max()
    }

    /// Whether the member may make its requests: the predecessor made its own (step 3).
    pub(super) fn is_my_turn(&self, t: &BatchTicket, predecessor: Option<u32>) -> bool {
        match predecessor {
            // The first fallback member: every request of earlier batches was made before this
            // batch opened, and no one else of this batch requests before it.
            None => true,
            // Acquire: pairs with the predecessor's Release in `request_all`, so its requests
            // (and those before it) are visible to ours.
            Some(p) => self.turn.load(Ordering::Acquire) == word(t.batch(), u64::from(p)),
        }
    }

    /// Requests every lock of `locks` (the caller holds the turn), then passes the turn on.
    pub(super) fn request_all(&self, t: &BatchTicket, locks: &mut LockSet<'_>) {
        for (rec, l) in locks.iter_mut() {
            l.at = Some(rec.meta().lock.request(self.rules().mode(l.mode)));
            l.granted = false;
        }
        // Release: publishes the requests to the next fallback member (`is_my_turn`).
        self.turn
            .store(word(t.batch(), u64::from(t.rank())), Ordering::Release);
        crate::protocol::wake::wake_waiters();
    }

    /// Whether every request of `locks` is granted now (step 3's wait); goes on from the
    /// grants already seen.
    pub(super) fn all_granted(&self, locks: &mut LockSet<'_>) -> bool {
        if self.ignores_locks() {
            return true;
        }
        let rules = self.rules();
        for (rec, l) in locks.iter_mut() {
            #[cfg(test)]
            if self.mutant == Mutant::AriaFallbackReadsUnlocked && l.mode == AccessMode::Read {
                continue;
            }
            if !l.granted {
                let at = l.at.expect("requested at the member's turn");
                if !rules.granted(&rec.meta().lock, rules.mode(l.mode), at) {
                    return false;
                }
                l.granted = true;
            }
        }
        true
    }

    /// Whether the lock set covers an access to `rec` (a write needs a write lock).
    #[inline]
    pub(super) fn covers<'db>(
        &self,
        locks: &LockSet<'db>,
        rec: &Record<'db, AriaMeta>,
        write: bool,
    ) -> bool {
        locks
            .find(rec)
            .is_some_and(|l| !write || l.mode == AccessMode::Write)
    }

    /// Releases every request of `locks` and forgets them. Every request is granted by now
    /// (step 3 waits for the grants before the rerun starts): a request released before its
    /// grant would move a release counter past an earlier request still held, and grant a later
    /// one too early (module docs).
    pub(super) fn release_all(&self, locks: &mut LockSet<'_>) {
        for (rec, l) in locks.iter() {
            if l.at.is_some() {
                rec.meta().lock.release(self.rules().mode(l.mode));
            }
        }
        locks.clear();
        crate::protocol::wake::wake_waiters();
    }

    /// Counts a fallback member that committed (`true`) or whose access set changed.
    pub(super) fn count(&self, committed: bool) {
        let counter = if committed {
            &self.commits
        } else {
            &self.aborts
        };
        // Relaxed: report counters, read after the workers were joined.
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The report's counters.
    pub(super) fn stats(&self) -> [(&'static str, f64); 2] {
        // Relaxed: read after the workers were joined.
        [
            (
                "fallback_commits",
                self.commits.load(Ordering::Relaxed) as f64,
            ),
            (
                "fallback_aborts",
                self.aborts.load(Ordering::Relaxed) as f64,
            ),
        ]
    }

    /// The lock's rules; the `AriaFallbackWritesLockShared` mutant requests every lock shared.
    fn rules(&self) -> LockRules {
        #[cfg(test)]
        if self.mutant == Mutant::AriaFallbackWritesLockShared {
            return LockRules {
                mutant: Mutant::CalvinWritesLockShared,
            };
        }
        LockRules::default()
    }

    /// The `AriaFallbackGrantsWithoutWaiting` mutant: every request counts as granted at once.
    #[inline]
    fn ignores_locks(&self) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::AriaFallbackGrantsWithoutWaiting {
            return true;
        }
        false
    }
}
