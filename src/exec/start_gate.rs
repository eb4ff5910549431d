//! The start barrier's worker side, safe against a worker that fails while setting up.
//!
//! Every worker thread and the coordinator meet at one barrier before the run starts. A worker
//! that panicked before reaching it (a workload bug, a setup assertion such as check mode on a
//! database built without check stamps) used to leave the coordinator waiting at the barrier
//! forever: the run hung instead of failing, and the panic's message, captured by the test
//! harness, was never shown. A [`StartGate`] arrives at the barrier when it is dropped without
//! having arrived, so the unwinding worker releases the others; the coordinator then runs its
//! (short) course, and the panic surfaces where the worker is joined.

use std::sync::Barrier;

/// One worker's pass through the start barrier.
pub(crate) struct StartGate<'a> {
    barrier: &'a Barrier,
    arrived: bool,
}

impl<'a> StartGate<'a> {
    /// The gate of a worker that will wait at `barrier`.
    pub(crate) fn new(barrier: &'a Barrier) -> Self {
        StartGate {
            barrier,
            arrived: false,
        }
    }

    /// Waits at the barrier until every worker and the coordinator are there.
    pub(crate) fn arrive(&mut self) {
        self.arrived = true;
        self.barrier.wait();
    }
}

impl Drop for StartGate<'_> {
    fn drop(&mut self) {
        if !self.arrived {
            // Unwinding before the start: count this worker in, so nobody waits for it.
            self.barrier.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A worker that panics before the start still lets the coordinator through, and the panic
    /// comes out at the join. Without the gate's drop the coordinator's wait never returns
    /// (the test would hang: shown by replacing `drop` with a no-op).
    #[test]
    fn a_worker_that_fails_before_the_start_does_not_hang_the_run() {
        let barrier = Barrier::new(3);
        std::thread::scope(|s| {
            let fine = s.spawn(|| {
                let mut gate = StartGate::new(&barrier);
                gate.arrive();
            });
            let failing = s.spawn(|| {
                let _gate = StartGate::new(&barrier);
                std::thread::sleep(Duration::from_millis(10));
                panic!("setup failed (deliberately, in a test)");
            });
            barrier.wait();
            fine.join().expect("the other worker runs");
            assert!(failing.join().is_err(), "the panic surfaces at the join");
        });
    }
}
