//! A run's watch for a worker thread that panicked mid-run, so that the others stop waiting for
//! it.
//!
//! A worker that panics leaves its transactions unfinished, and whatever they held stays held:
//! a batch member's placeholder that is never filled (BOHM, PWV), a turn never taken, a lock
//! never released. Its siblings then wait for it for good, and the run hangs instead of failing
//! (CI once timed out on a PWV assertion in one coroutine worker). So each worker thread of a
//! run holds a [`Watching`] on the run's [`PanicWatch`]: a thread that unwinds raises the watch
//! as its `Watching` drops, the coordinator ends the run's period early, and a sibling that
//! yields or parks in a wait (`exec/wait.rs`, the only way a blocked worker waits) panics in
//! turn, so every worker ends and the first panic surfaces where the workers are joined.
//!
//! This is [`StartGate`](super::start_gate::StartGate)'s guarantee carried past the start: a
//! worker that fails never leaves the others waiting.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// One run's flag: raised once any of its worker threads panicked.
#[derive(Default)]
pub(crate) struct PanicWatch {
    raised: Arc<AtomicBool>,
}

thread_local! {
    /// The flag of the run this thread works for, while its [`Watching`] lives.
    static WATCHED: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

impl PanicWatch {
    /// A run's watch, not raised.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Registers this thread as one of the run's workers until the guard drops; a panic that
    /// unwinds through the guard raises the watch.
    pub(crate) fn watch(&self) -> Watching {
        WATCHED.with_borrow_mut(|w| *w = Some(Arc::clone(&self.raised)));
        Watching(Arc::clone(&self.raised))
    }

    /// Whether a worker of the run panicked.
    pub(crate) fn raised(&self) -> bool {
        // Relaxed: a flag alone; nothing is published with it.
        self.raised.load(Ordering::Relaxed)
    }
}

/// A worker thread's registration with its run's [`PanicWatch`].
#[must_use = "the thread is watched only while this lives"]
pub(crate) struct Watching(Arc<AtomicBool>);

impl Drop for Watching {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Relaxed: as in `raised`.
            self.0.store(true, Ordering::Relaxed);
        }
        WATCHED.with_borrow_mut(|w| *w = None);
    }
}

/// Panics if another worker of this thread's run panicked (a thread no run watches never
/// does): called by a waiter before it yields or parks, so that no worker waits for good on a
/// transaction the panicked worker will never finish.
#[inline]
pub(crate) fn stop_if_a_sibling_panicked() {
    // Relaxed: as in `raised`.
    let raised = WATCHED.with_borrow(|w| w.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)));
    if raised {
        panic!("another worker thread of this run panicked (see its message): this one stops");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A worker that panics mid-run raises the watch, and a sibling waiting on it (for a flag
    /// the panicked one would have set) stops at its next check instead of waiting for good.
    /// Without the raise in `Watching::drop` the sibling's loop never ends (shown by removing
    /// it: the test hangs).
    #[test]
    fn a_waiter_stops_once_a_sibling_panicked() {
        let watch = PanicWatch::new();
        let never_set = AtomicBool::new(false);
        std::thread::scope(|s| {
            let failing = s.spawn(|| {
                let _w = watch.watch();
                panic!("a worker fails mid-run (deliberately, in a test)");
            });
            let waiter = s.spawn(|| {
                let _w = watch.watch();
                while !never_set.load(Ordering::Relaxed) {
                    stop_if_a_sibling_panicked();
                    std::thread::yield_now();
                }
            });
            assert!(failing.join().is_err());
            assert!(waiter.join().is_err(), "the waiter stopped by panicking");
        });
        assert!(watch.raised());
    }

    /// A thread outside any run, or in a run nobody failed, never stops.
    #[test]
    fn no_panic_no_stop() {
        stop_if_a_sibling_panicked();
        let watch = PanicWatch::new();
        let _w = watch.watch();
        stop_if_a_sibling_panicked();
        assert!(!watch.raised());
    }
}
