//! Correctness checking: history capture ([`history`]) and the serializability checker
//! ([`check`]), which builds the direct serialization graph of committed transactions and reports
//! its cycles (classified by Adya's phenomena) and anomalies.

mod consistency;
mod cycles;
mod graph;
pub mod history;
mod node_map;

pub use consistency::ConsistencyReport;
pub use graph::{
    ABORTED_READ, CheckReport, DUPLICATE_TXN_ID, INTERMEDIATE_READ, LOST_UPDATE, RESERVED_TXN_ID,
    TORN_READ, UNKNOWN_VERSION, UNORDERED_WRITE, check, check_with_progress,
};
