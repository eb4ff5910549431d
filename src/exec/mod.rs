//! Executors: how transactions are driven. Today: worker threads running stored procedures
//! ([`thread`]). The SGPM coroutine executor and the interactive client/server executor drive the
//! same `async` programs with different waiting policies.

pub mod backoff;
mod park;
pub mod thread;
mod wait;

pub use thread::{ExecConfig, ExecOutcome, run_threads};
