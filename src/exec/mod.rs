//! Executors: how transactions are driven: worker threads running stored procedures
//! ([`thread`]) and SGPM coroutines, up to Q transactions in flight per thread ([`coro`]). Both
//! (and, later, the interactive client/server executor) drive the same `async` programs with
//! different waiting policies.

mod arrivals;
pub mod backoff;
pub mod coro;
pub mod interactive;
mod park;
pub mod thread;
mod wait;

pub use coro::run_coro;
pub use thread::{ExecConfig, ExecOutcome, run_threads, run_threads_open_loop};
