//! txbench: an in-memory transaction engine and concurrency-control testbed.
//!
//! Protocols ([`protocol`]) plug into one shared engine: storage ([`storage`]), indexes
//! ([`index`]), workloads ([`workload`]), executors ([`exec`]), metrics ([`metrics`]) and the
//! serializability checker ([`check`]). Transaction programs are `async` functions over a
//! [`Txn`] handle, written once and run by every executor. See `docs/ARCHITECTURE.md` and the
//! design notes in the repository for the map.

pub mod check;
pub mod config;
pub mod exec;
pub mod experiment;
pub mod ids;
pub mod index;
pub mod interrupt;
pub mod log;
pub mod metrics;
pub mod on_cpu;
pub mod park;
pub mod protocol;
pub mod random;
pub mod recovery;
pub mod runner;
pub mod storage;
mod sync;
pub mod txn;
pub mod workload;

pub use exec::interactive::client;
pub use protocol::{Abort, Protocol, ProtocolKind};
pub use txn::Txn;
