//! Driving a future in place, and how a worker thread waits when a protocol says `Pending`.
//!
//! Waiting spins briefly (the holder is usually on another core and about to release), then yields
//! the CPU for a few tries, then parks the thread ([`ParkingLot`]) until a transaction attempt ends:
//! with more workers than cores the holder may need this very core to make progress, and a waiter
//! that only yields keeps competing with it for the core.

use super::park::ParkingLot;
use crate::protocol::wake::take_victim_signalled;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// Spins before the first yield; each spin round doubles, up to this many rounds.
const SPIN_ROUNDS: u32 = 6;
/// Rounds (spins, then yields) before a waiter parks.
pub(super) const PARK_AFTER_ROUNDS: u32 = SPIN_ROUNDS + 2;

/// Polls `fut` to completion on this thread. Returns the output and the nanoseconds spent waiting
/// (between a `Pending` and the poll that followed it). A wait that lasts parks in `lot`.
#[inline]
pub fn drive<F: Future>(mut fut: Pin<&mut F>, lot: &ParkingLot) -> (F::Output, u64) {
    let mut cx = Context::from_waker(Waker::noop());
    // Fast path: most operations never wait.
    if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
        return (out, 0);
    }
    let started = Instant::now();
    let mut round = 0;
    let mut poll = || {
        let out = fut.as_mut().poll(&mut cx);
        if take_victim_signalled() {
            // The poll wounded a transaction that may be parked: it must run to notice.
            lot.wake_parked();
        }
        match out {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        }
    };
    if take_victim_signalled() {
        lot.wake_parked();
    }
    loop {
        let ready = if round < PARK_AFTER_ROUNDS {
            pause(round);
            round += 1;
            poll()
        } else {
            lot.park_while(&mut poll)
        };
        if let Some(out) = ready {
            return (out, started.elapsed().as_nanos() as u64);
        }
    }
}

/// One waiting step: exponential spinning for the first rounds, then yield the CPU.
#[inline]
pub fn pause(round: u32) {
    if round < SPIN_ROUNDS {
        for _ in 0..(1u32 << round) {
            std::hint::spin_loop();
        }
    } else {
        std::thread::yield_now();
    }
}

/// Busy-waits for `ns` nanoseconds, yielding the CPU once past a microsecond-scale delay so an
/// oversubscribed machine keeps making progress.
pub fn delay(ns: u64) {
    if ns == 0 {
        return;
    }
    let start = Instant::now();
    let mut round = 0;
    while (start.elapsed().as_nanos() as u64) < ns {
        pause(round.min(if ns > 20_000 {
            u32::MAX
        } else {
            SPIN_ROUNDS - 1
        }));
        round += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;

    #[test]
    fn drive_repolls_until_ready() {
        let mut left = 3;
        let fut = std::future::poll_fn(|_| {
            if left == 0 {
                Poll::Ready(7)
            } else {
                left -= 1;
                Poll::Pending
            }
        });
        let (out, _) = drive(pin!(fut), &ParkingLot::new());
        assert_eq!(out, 7);
    }

    #[test]
    fn delay_waits_at_least_the_time() {
        let t = Instant::now();
        delay(200_000);
        assert!(t.elapsed().as_nanos() >= 200_000);
    }
}
