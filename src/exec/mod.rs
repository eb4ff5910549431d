//! Executors: how transactions are driven: worker threads running stored procedures
//! ([`thread`]) and SGPM coroutines, up to Q transactions in flight per thread ([`coro`]), both
//! driving the same `async` programs and waiting by the same steps ([`wait`]); and the
//! interactive server ([`interactive`]), which runs one protocol worker per client session,
//! operation by operation, as the client sends them.

mod arrivals;
pub mod backoff;
pub mod core_seats;
pub mod coro;
pub mod durable_acks;
pub mod interactive;
pub(crate) mod panic_watch;
pub(crate) mod start_gate;
pub mod thread;
pub mod wait;

pub use coro::{run_coro, run_coro_sampled};
pub use thread::{
    ExecConfig, ExecOutcome, run_threads, run_threads_logged, run_threads_open_loop,
    run_threads_sampled,
};
