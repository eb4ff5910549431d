//! DecentSched's epochs (paper III-D2): an epoch ends when a worker has run `k` transactions in
//! it (or used up its queue entries) or when it has lasted `t` microseconds; every registered
//! worker then meets at a barrier between two transactions, the last to arrive clears the queues,
//! and all start the next epoch with fresh transaction ids and arenas.
//!
//! Unlike the published code's spinning barrier, nobody spins here: a worker that has arrived
//! returns `Pending` from `schedule` until the epoch number moves (the executor yields between
//! polls), and a worker that stops deregisters (`leave`), completing the barrier when it was the
//! last one missing, so a run can always end and more workers than cores cannot livelock it. A
//! worker idle between transactions for a while (an interactive session whose client is away)
//! deregisters the same way and registers again (`join`) before its next transaction.

use super::queues::Queues;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Who is in the barrier.
#[derive(Debug, Default)]
struct Members {
    /// Registered workers.
    active: usize,
    /// Workers waiting at the barrier of the current epoch.
    arrived: usize,
}

/// The epoch clock and barrier.
pub struct Epochs {
    members: Mutex<Members>,
    /// The current epoch.
    number: AtomicU64,
    /// Some worker decided the current epoch ends: everyone joins the barrier at their next
    /// transaction.
    closing: AtomicBool,
    /// When the current epoch started, in nanoseconds since `base`.
    started_ns: AtomicU64,
    base: Instant,
    /// Epoch length limit.
    limit_ns: u64,
    /// Mutation testing (`Mutant::DecentSchedClearQueuesWhileLive`): the barrier completes
    /// when all but one registered worker arrived, clearing the queues while that worker's
    /// transaction may still be live.
    #[cfg(test)]
    pub(super) completes_one_short: bool,
}

impl Epochs {
    /// Epochs of at most `limit_us` microseconds.
    pub fn new(limit_us: u64) -> Self {
        Epochs {
            members: Mutex::new(Members::default()),
            number: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            started_ns: AtomicU64::new(0),
            base: Instant::now(),
            limit_ns: limit_us.saturating_mul(1000),
            #[cfg(test)]
            completes_one_short: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Members> {
        // A panic while holding this lock leaves plain counters behind: still usable.
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a worker (a new one, or one back from being away between transactions);
    /// returns the current epoch. A barrier in progress then waits for it too: it arrives at
    /// its next transaction, the epoch being marked closing.
    pub fn join(&self) -> u64 {
        self.lock().active += 1;
        // Acquire: pairs with the Release that started the epoch.
        self.number.load(Ordering::Acquire)
    }

    /// Deregisters a stopping worker (or one away between transactions), completing a barrier
    /// that only waited for it.
    pub fn leave(&self, queues: &Queues) {
        let mut m = self.lock();
        m.active -= 1;
        if m.arrived > 0 && m.arrived == m.active {
            self.advance(&mut m, queues);
        }
    }

    /// The current epoch number.
    #[inline]
    pub fn current(&self) -> u64 {
        // Acquire: a worker that sees the new number sees the cleared queues (Release below).
        self.number.load(Ordering::Acquire)
    }

    /// Whether the current epoch should end, for a worker whose share of it is used up
    /// (`mine_full`, which forces the end) and that ran a transaction in it (`ran`: only then
    /// does the time limit count, so a barrier is always followed by some work).
    #[inline]
    pub fn should_close(&self, mine_full: bool, ran: bool) -> bool {
        // Relaxed: a hint; the barrier itself is ordered by the mutex.
        if mine_full || self.closing.load(Ordering::Relaxed) {
            return true;
        }
        if !ran {
            return false;
        }
        // Relaxed: a timestamp compared loosely.
        let started = self.started_ns.load(Ordering::Relaxed);
        self.base.elapsed().as_nanos() as u64 > started + self.limit_ns
    }

    /// Arrives at the barrier of epoch `epoch`; returns true when the barrier completed here
    /// (the caller was the last), false when the caller must wait for `current()` to move.
    pub fn arrive(&self, epoch: u64, queues: &Queues) -> bool {
        let mut m = self.lock();
        if self.number.load(Ordering::Relaxed) != epoch {
            return true; // completed already (by a leaving worker)
        }
        // Relaxed: under the mutex; a hint to the others.
        self.closing.store(true, Ordering::Relaxed);
        m.arrived += 1;
        #[cfg(test)]
        if self.completes_one_short && m.arrived + 1 == m.active {
            self.advance(&mut m, queues);
            return true;
        }
        if m.arrived == m.active {
            self.advance(&mut m, queues);
            return true;
        }
        false
    }

    /// Ends the epoch: every registered worker is at the barrier, no transaction is live.
    fn advance(&self, m: &mut Members, queues: &Queues) {
        queues.clear();
        m.arrived = 0;
        // Relaxed: ordered before the number's Release below.
        self.closing.store(false, Ordering::Relaxed);
        self.started_ns
            .store(self.base.elapsed().as_nanos() as u64, Ordering::Relaxed);
        // Release: publishes the cleared queues to the workers that see the new number.
        self.number.fetch_add(1, Ordering::Release);
        // Workers waiting at the barrier may be parked.
        crate::protocol::wake::wake_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_arrival_or_a_leaving_worker_completes_the_barrier() {
        let q = Queues::new(4);
        let e = Epochs::new(1_000_000);
        assert_eq!(e.join(), 0);
        assert_eq!(e.join(), 0);
        assert_eq!(e.join(), 0);
        assert!(!e.arrive(0, &q));
        assert!(e.should_close(false, false), "closing once someone arrived");
        assert!(!e.arrive(0, &q));
        e.leave(&q);
        assert_eq!(e.current(), 1, "the leaver was the last one missing");
        assert!(!e.should_close(false, true));
        assert!(!e.arrive(1, &q));
        assert!(e.arrive(1, &q));
        assert_eq!(e.current(), 2);
    }
}
