//! Silo's global epoch and the thread that advances it.
//!
//! The global epoch `E` is part of every commit TID. A dedicated thread increments it every epoch
//! length, but only when every worker has observed the current value (each worker publishes the
//! epoch it saw at its last `begin`, as CCBench's Silo does); so no worker lags more than one epoch
//! behind, which is what epoch-based reclamation and group commit rely on.
//!
//! Shared words, who writes them, who reads them:
//! - `global`: written by the epoch thread, read by every worker at begin and at commit.
//! - `local[i]`: written by worker `i`, read by the epoch thread.
//!
//! Each is cache-padded so a worker's store does not invalidate anyone else's line.

use crossbeam_utils::CachePadded;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Epoch state shared by the workers and the epoch thread.
pub struct Epochs {
    global: CachePadded<AtomicU32>,
    local: Box<[CachePadded<AtomicU32>]>,
    stop: AtomicBool,
}

impl Epochs {
    /// The current global epoch. `Acquire` pairs with the epoch thread's `Release` increment;
    /// Silo's commit reads it after locking the write set behind a `SeqCst` fence.
    #[inline]
    pub fn global(&self) -> u32 {
        self.global.load(Ordering::Acquire)
    }

    /// Worker `id` announces that it has seen `epoch`.
    #[inline]
    pub fn observe(&self, id: usize, epoch: u32) {
        let slot = &self.local[id];
        // Relaxed: the epoch thread only needs to see the value eventually; skipping the store
        // when unchanged keeps the line clean.
        if slot.load(Ordering::Relaxed) != epoch {
            slot.store(epoch, Ordering::Relaxed);
        }
    }

    fn try_advance(&self) {
        let e = self.global.load(Ordering::Relaxed);
        if self.local.iter().all(|l| l.load(Ordering::Relaxed) >= e) {
            // Release: pairs with the workers' Acquire loads in `global`.
            self.global.store(e + 1, Ordering::Release);
        }
    }
}

/// Owns the epoch thread; stops and joins it on drop.
pub struct EpochThread {
    epochs: Arc<Epochs>,
    handle: Option<JoinHandle<()>>,
}

impl EpochThread {
    /// Starts advancing a fresh epoch (starting at 1) for `workers` workers every `period`.
    pub fn start(workers: usize, period: Duration) -> Self {
        let epochs = Arc::new(Epochs {
            global: CachePadded::new(AtomicU32::new(1)),
            local: (0..workers.max(1))
                .map(|_| CachePadded::new(AtomicU32::new(1)))
                .collect(),
            stop: AtomicBool::new(false),
        });
        let shared = Arc::clone(&epochs);
        let handle = std::thread::Builder::new()
            .name("silo-epoch".into())
            .spawn(move || {
                // Sleep in short slices so dropping the protocol never waits a whole epoch.
                let slice = period.min(Duration::from_millis(5));
                let mut slept = Duration::ZERO;
                // Relaxed: the flag carries no data; join() provides the synchronisation.
                while !shared.stop.load(Ordering::Relaxed) {
                    std::thread::sleep(slice);
                    slept += slice;
                    if slept >= period {
                        slept = Duration::ZERO;
                        shared.try_advance();
                    }
                }
            })
            .expect("spawn the Silo epoch thread");
        EpochThread {
            epochs,
            handle: Some(handle),
        }
    }

    /// The shared epochs.
    pub fn epochs(&self) -> &Epochs {
        &self.epochs
    }
}

impl Drop for EpochThread {
    fn drop(&mut self) {
        self.epochs.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances_only_when_every_worker_caught_up() {
        let t = EpochThread::start(2, Duration::from_millis(1));
        let e = t.epochs();
        // The first advance needs no worker (everyone starts at epoch 1); wait for it without
        // assuming how fast a loaded machine schedules the epoch thread.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while e.global() == 1 {
            assert!(std::time::Instant::now() < deadline, "epoch never advanced");
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        let first = e.global();
        assert_eq!(
            first, 2,
            "one advance, then blocked by workers still at epoch 1"
        );
        e.observe(0, first);
        e.observe(1, first);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while e.global() == first {
            assert!(std::time::Instant::now() < deadline, "epoch never advanced");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
