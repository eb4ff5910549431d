//! The epoch clock of group commit: a global epoch every committing transaction takes at its
//! commit point, the epoch each worker is committing in, and the durable frontier.
//!
//! # Why an epoch gives a consistent cut (SiloR, section 4)
//!
//! A transaction takes the current epoch in the shared install path, *before its first write
//! becomes visible* (`protocol::InstallLog`). A transaction T2 that reads or overwrites a
//! version T1 wrote does so after T1's install, hence after T1 took its epoch; the epoch only
//! grows, so `epoch(T1) <= epoch(T2)` along every write-read and write-write dependency.
//! Recovery keeps exactly the transactions of epochs at or below the durable frontier `D`, a
//! set closed under those dependencies: dropping every transaction after `D` drops the readers
//! and overwriters of whatever it drops, so what stays is a serializable prefix. (A
//! read-write anti-dependency from a dropped reader to a kept writer is harmless: the reader's
//! effects are gone with it.)
//!
//! # Closing an epoch
//!
//! The flusher closes epoch `e` by advancing the clock to `e + 1` and then waiting until no
//! worker is still committing in an epoch at or below `e`. A worker announces its epoch in its
//! own slot with a Dekker handshake ([`EpochClock::enter`]):
//!
//! ```text
//!  worker                               flusher
//!  x = current            (SeqCst)      current = e + 1          (SeqCst)
//!  slot = x               (SeqCst)      wait while slot <= e     (SeqCst loads)
//!  if current != x: retry (SeqCst)
//! ```
//!
//! All four accesses are `SeqCst`, so they sit in one total order. If the worker keeps
//! `x = e`, its re-load of `current` came before the flusher's store of `e + 1`, so its slot
//! store did too, and the flusher's later slot load sees `e` (or a later value) and waits. If
//! the flusher's slot load came first, the worker's re-load comes after the store of `e + 1`
//! and it retries with `e + 1`. The worker leaves (slot back to [`IDLE`], `Release`) only after
//! its transaction's bytes are in its log buffer, so a flusher that sees the slot idle or past
//! `e` (its loads are `SeqCst`, hence `Acquire`) and then locks the buffer finds them.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// A slot's value while its worker commits nothing.
pub const IDLE: u64 = u64::MAX;

/// The first epoch transactions commit in; the durable frontier starts one below.
pub const FIRST_EPOCH: u64 = 1;

/// Epochs of one log: the current one, each worker's, and the durable frontier.
pub struct EpochClock {
    /// The epoch a transaction taking one now gets. Written by the flusher only.
    current: CachePadded<AtomicU64>,
    /// Every transaction of an epoch at or below it is on disk in every file (group and txn
    /// sync) or at least handed to the OS (no sync). Written by the flusher only.
    durable: CachePadded<AtomicU64>,
    /// Per worker: the epoch of the transaction it is committing, or [`IDLE`]. Written by its
    /// worker, read by the flusher.
    slots: Box<[CachePadded<AtomicU64>]>,
}

impl EpochClock {
    /// A clock for `workers` workers, at [`FIRST_EPOCH`], nothing durable.
    pub fn new(workers: usize) -> Self {
        Self::starting_at(workers, FIRST_EPOCH)
    }

    /// A clock for `workers` workers at epoch `first` (at least [`FIRST_EPOCH`]), every epoch
    /// below it durable: a log resumed after a restart (`resume.rs`), whose earlier epochs are
    /// in its restart checkpoint.
    pub fn starting_at(workers: usize, first: u64) -> Self {
        assert!(first >= FIRST_EPOCH, "epochs start at {FIRST_EPOCH}");
        EpochClock {
            current: CachePadded::new(AtomicU64::new(first)),
            durable: CachePadded::new(AtomicU64::new(first - 1)),
            slots: (0..workers)
                .map(|_| CachePadded::new(AtomicU64::new(IDLE)))
                .collect(),
        }
    }

    /// Worker `worker` is about to make a transaction's first write visible: takes its epoch
    /// and announces it (module docs).
    #[inline]
    pub fn enter(&self, worker: usize) -> u64 {
        let slot = &self.slots[worker];
        loop {
            // SeqCst, all three: the Dekker handshake with `close` (module docs).
            let e = self.current.load(Ordering::SeqCst);
            slot.store(e, Ordering::SeqCst);
            if self.current.load(Ordering::SeqCst) == e {
                return e;
            }
        }
    }

    /// Worker `worker`'s transaction is in its log buffer (or was abandoned).
    #[inline]
    pub fn leave(&self, worker: usize) {
        // Release: the buffer append before it is seen by a flusher that reads IDLE.
        self.slots[worker].store(IDLE, Ordering::Release);
    }

    /// Closes the current epoch: advances the clock, then waits until no worker commits in the
    /// closed epoch or an earlier one. Returns the closed epoch. Only the flusher calls it (one
    /// at a time, under the log's flush lock).
    pub fn close(&self) -> u64 {
        // SeqCst: the handshake (module docs).
        let closed = self.current.fetch_add(1, Ordering::SeqCst);
        for slot in self.slots.iter() {
            let mut spins = 0u32;
            // SeqCst: the handshake; it is also an Acquire of the worker's `leave`.
            while slot.load(Ordering::SeqCst) <= closed {
                // A worker between its first install and its append: a few microseconds,
                // unless it is descheduled (more workers than cores), so give the CPU away.
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else if spins < 128 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
            }
        }
        closed
    }

    /// The epoch transactions commit in now.
    pub fn current(&self) -> u64 {
        // Relaxed: a report, not a synchronisation.
        self.current.load(Ordering::Relaxed)
    }

    /// The durable frontier.
    #[inline]
    pub fn durable(&self) -> u64 {
        // Acquire: pairs with `publish_durable`.
        self.durable.load(Ordering::Acquire)
    }

    /// Every transaction of an epoch at or below `epoch` is durable.
    pub fn publish_durable(&self, epoch: u64) {
        // Release: the flush (write and sync) happens before a worker that sees it acknowledges.
        self.durable.store(epoch, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn close_advances_and_waits_for_workers_inside() {
        let clock = EpochClock::new(2);
        assert_eq!(clock.enter(0), FIRST_EPOCH);
        let left = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                left.store(true, Ordering::SeqCst);
                clock.leave(0);
            });
            assert_eq!(clock.close(), FIRST_EPOCH);
            assert!(
                left.load(Ordering::SeqCst),
                "close returned while worker 0 was inside"
            );
        });
        assert_eq!(clock.enter(1), FIRST_EPOCH + 1);
        // A worker inside a later epoch does not hold up closing an earlier one... but does
        // hold up its own.
        assert_eq!(clock.current(), FIRST_EPOCH + 1);
    }

    /// Many workers enter and leave while a flusher closes epochs: every transaction's epoch
    /// is above every epoch closed before it entered, and no close returns while a worker it
    /// must wait for is inside (each worker checks, while inside, that its epoch is still open).
    #[test]
    fn no_close_passes_a_worker_inside_its_epoch() {
        let clock = EpochClock::new(4);
        let closed = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for w in 0..4 {
                let (clock, closed, stop) = (&clock, &closed, &stop);
                s.spawn(move || {
                    let mut n = 0;
                    while !stop.load(Ordering::Relaxed) || n < 1000 {
                        let e = clock.enter(w);
                        assert!(e > closed.load(Ordering::SeqCst), "entered a closed epoch");
                        std::hint::spin_loop();
                        assert!(
                            e > closed.load(Ordering::SeqCst),
                            "epoch closed while inside"
                        );
                        clock.leave(w);
                        n += 1;
                    }
                });
            }
            for _ in 0..200 {
                let e = clock.close();
                closed.store(e, Ordering::SeqCst);
            }
            stop.store(true, Ordering::Relaxed);
        });
    }
}
