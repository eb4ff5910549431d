//! The small futures a coroutine suspends on: give the thread to the next coroutine once, or
//! until a moment passes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Returns `Pending` once, so the scheduler runs the thread's other coroutines first.
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// See [`yield_now`].
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            Poll::Ready(())
        } else {
            self.yielded = true;
            Poll::Pending
        }
    }
}

/// Ready once `ns` nanoseconds have passed; until then the thread runs other coroutines (a
/// retry's backoff, the read phase extension: delays that must not block the thread).
pub async fn sleep_ns(ns: u64) {
    if ns == 0 {
        return;
    }
    let until = Instant::now() + Duration::from_nanos(ns);
    std::future::poll_fn(|_| {
        if Instant::now() >= until {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;
    use std::task::Waker;

    #[test]
    fn yield_now_is_pending_exactly_once() {
        let mut cx = Context::from_waker(Waker::noop());
        let mut y = pin!(yield_now());
        assert!(y.as_mut().poll(&mut cx).is_pending());
        assert!(y.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn sleep_is_pending_until_the_time_passed() {
        let mut cx = Context::from_waker(Waker::noop());
        let t = Instant::now();
        let mut s = pin!(sleep_ns(300_000));
        while s.as_mut().poll(&mut cx).is_pending() {}
        assert!(t.elapsed() >= Duration::from_micros(300));
        assert!(pin!(sleep_ns(0)).as_mut().poll(&mut cx).is_ready());
    }
}
