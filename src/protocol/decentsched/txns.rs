//! DecentSched's transaction table (paper III-A: `txns[tid]`): per transaction of the current
//! epoch, its flags and its dependency sets, readable by every worker.
//!
//! Transaction ids are thread-local (III-D3): worker `i` of `w` gives its `n`-th transaction of
//! an epoch the id `n * w + i`, so ids of one epoch are dense in `0..w * k` (`k` the
//! per-worker transaction limit of an epoch) and index the table directly. Each set is stored as
//! one word per worker: the id (plus one; 0 = none) of that worker's transaction in the set.
//! One word per worker is enough: a worker runs one transaction at a time, so when a set would
//! gain a second transaction of a worker, the first has finished, and finished transactions
//! never constrain scheduling (paper III-B5); the newer id replaces it.
//!
//! Three sets per transaction: `direct` (its direct dependencies, complete once `READY` is set),
//! `indirect` (grows during its dependency search; others read it concurrently, looking for
//! their own id), and `ahead` (transactions that were unfinished ahead of it in any of its queues,
//! conflicting or not: what its retirement waits for).

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// Its direct dependency set is complete.
const READY: u8 = 1;
/// It committed or aborted: its writes are installed (or discarded).
const FINISHED: u8 = 2;
/// It finished, and so did everything in its sets and everything ahead of it in its queues.
const RETIRED: u8 = 4;

/// Which set of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    /// Direct dependencies.
    Direct = 0,
    /// Indirect dependencies.
    Indirect = 1,
    /// Unfinished transactions ahead in a queue.
    Ahead = 2,
}

/// The table of one epoch's transactions (reused every epoch).
pub struct TxnTable {
    workers: usize,
    flags: Box<[AtomicU8]>,
    /// `[slot][set][worker]`, flattened.
    sets: Box<[AtomicU64]>,
}

impl TxnTable {
    /// A table for `workers` workers of at most `per_worker` transactions per epoch.
    pub fn new(workers: usize, per_worker: usize) -> Self {
        let slots = workers * per_worker;
        TxnTable {
            workers,
            flags: (0..slots).map(|_| AtomicU8::new(0)).collect(),
            sets: (0..slots * 3 * workers)
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// Bytes the table takes for `workers` and `per_worker` (configuration checks it).
    pub fn bytes(workers: usize, per_worker: usize) -> usize {
        workers * per_worker * (1 + 3 * workers * 8)
    }

    /// The worker that runs `tid`.
    #[inline]
    pub fn worker_of(&self, tid: u64) -> usize {
        (tid % self.workers as u64) as usize
    }

    #[inline]
    fn set(&self, tid: u64, set: Set) -> &[AtomicU64] {
        let at = (tid as usize * 3 + set as usize) * self.workers;
        &self.sets[at..at + self.workers]
    }

    /// Prepares `tid`'s slot for a new transaction (its worker, before pushing any entry: the
    /// push's Release publishes the cleared slot to everyone who finds the entry).
    pub fn reset(&self, tid: u64) {
        // Relaxed: published by the queue push that follows (module docs).
        self.flags[tid as usize].store(0, Ordering::Relaxed);
        let at = tid as usize * 3 * self.workers;
        for w in &self.sets[at..at + 3 * self.workers] {
            // Relaxed: as above.
            w.store(0, Ordering::Relaxed);
        }
    }

    /// Adds `dep` to `tid`'s `set` (only `tid`'s worker writes its sets).
    #[inline]
    pub fn add(&self, tid: u64, set: Set, dep: u64) {
        // Release: a reader that finds `dep` here (Acquire in `contains`) must not then miss
        // what we wrote before (our earlier set entries).
        self.set(tid, set)[self.worker_of(dep)].store(dep + 1, Ordering::Release);
    }

    /// Whether `dep` is in `tid`'s `set`.
    #[inline]
    pub fn contains(&self, tid: u64, set: Set, dep: u64) -> bool {
        // Acquire: pairs with `add`.
        self.set(tid, set)[self.worker_of(dep)].load(Ordering::Acquire) == dep + 1
    }

    /// The ids in `tid`'s `set`, into `out` (appended).
    #[inline]
    pub fn members(&self, tid: u64, set: Set, out: &mut Vec<u64>) {
        for w in self.set(tid, set) {
            // Acquire: pairs with `add`.
            let v = w.load(Ordering::Acquire);
            if v != 0 {
                out.push(v - 1);
            }
        }
    }

    /// Whether `tid`'s direct set is complete.
    #[inline]
    pub fn is_ready(&self, tid: u64) -> bool {
        // Acquire: pairs with `set_ready`'s Release, so the direct set reads complete.
        self.flags[tid as usize].load(Ordering::Acquire) & READY != 0
    }

    /// Whether `tid` finished.
    #[inline]
    pub fn is_finished(&self, tid: u64) -> bool {
        // Acquire: pairs with `set_finished`'s Release, so its installs are visible to whoever
        // runs after seeing it finished.
        self.flags[tid as usize].load(Ordering::Acquire) & FINISHED != 0
    }

    /// Whether `tid` is retired (never un-set within an epoch).
    #[inline]
    pub fn is_retired(&self, tid: u64) -> bool {
        // Acquire: a retired mark vouches for everything ahead having finished (its Release).
        self.flags[tid as usize].load(Ordering::Acquire) & RETIRED != 0
    }

    /// `tid`'s direct set is complete.
    pub fn set_ready(&self, tid: u64) {
        // Release: publishes the direct set.
        self.flags[tid as usize].fetch_or(READY, Ordering::Release);
    }

    /// `tid` finished.
    pub fn set_finished(&self, tid: u64) {
        // Release: publishes its installs (module docs of `decentsched`).
        self.flags[tid as usize].fetch_or(FINISHED | READY, Ordering::Release);
    }

    /// Whether `tid` is retired, evaluating it when it is finished but not yet marked (paper
    /// III-B5): every transaction in its sets (dependencies and the unfinished ones ahead of it)
    /// has finished. Any worker may evaluate and mark it.
    pub fn retire_if_done(&self, tid: u64) -> bool {
        if self.is_retired(tid) {
            return true;
        }
        if !self.is_finished(tid) {
            return false;
        }
        let at = tid as usize * 3 * self.workers;
        let done = self.sets[at..at + 3 * self.workers].iter().all(|w| {
            // Acquire: pairs with `add`.
            let v = w.load(Ordering::Acquire);
            v == 0 || self.is_finished(v - 1)
        });
        if done {
            // Release: whoever sees the mark sees the finishes it was based on.
            self.flags[tid as usize].fetch_or(RETIRED, Ordering::Release);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_hold_one_transaction_per_worker_and_retirement_follows_them() {
        let t = TxnTable::new(2, 4);
        // Worker 0's tids are even, worker 1's odd.
        t.reset(0);
        t.reset(1);
        t.reset(3);
        t.add(0, Set::Direct, 1);
        assert!(t.contains(0, Set::Direct, 1));
        t.add(0, Set::Direct, 3);
        assert!(
            !t.contains(0, Set::Direct, 1),
            "replaced by the worker's newer txn"
        );
        let mut v = Vec::new();
        t.members(0, Set::Direct, &mut v);
        assert_eq!(v, [3]);
        t.set_finished(0);
        assert!(t.is_ready(0) && t.is_finished(0));
        assert!(!t.retire_if_done(0), "3 is not finished");
        t.set_finished(3);
        assert!(t.retire_if_done(0));
        assert!(t.is_retired(0));
    }
}
