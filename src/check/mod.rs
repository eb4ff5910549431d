//! Correctness checking: history capture ([`history`]) and the serializability checker
//! ([`check`]), which builds the direct serialization graph of committed transactions and reports
//! its cycles and anomalies.

mod graph;
pub mod history;

pub use graph::{CheckReport, check};
