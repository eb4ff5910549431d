//! The atomics of the lock-free primitives that the loom models check, routed through one place
//! (as crossbeam's `primitive` module does): the standard library's in a normal build, loom's
//! under `--cfg loom`, so the models run the production code itself.
//!
//! Only self-contained primitives use this module: the payload copy and the seqlock's fences
//! (`storage::payload`, whose words the log's delta capture reads in `log::format`), the version chains (`storage::versions`), the grace periods
//! (`storage::grace`), the worker sets (`protocol::worker_set`), the 2PL owned lock, PLOR's
//! locker word and the hash index's table (`index::hash`). Under `--cfg loom` the rest of the engine still builds but must not run (a
//! table casts zeroed memory to these atomic types, which loom's are not); the only tests
//! meant to run under that flag are the models, whose names contain `loom`:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release --lib loom
//! ```

/// `std::sync::atomic`, or loom's model of it.
pub(crate) mod atomic {
    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, fence};
    pub(crate) use std::sync::atomic::Ordering;
    #[cfg(not(loom))]
    pub(crate) use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, fence};
}

#[cfg(all(test, loom))]
mod loom_models;
