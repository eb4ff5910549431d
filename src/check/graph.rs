//! TEMPORARY placeholder while the checker is written (replaced before commit).
use super::history::WorkerHistory;
use serde::Serialize;
use std::collections::BTreeMap;
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    pub transactions: u64,
    pub cycles: u64,
    pub anomalies: u64,
    pub anomaly_counts: BTreeMap<String, u64>,
    pub examples: Vec<String>,
}
impl CheckReport {
    pub fn is_serializable(&self) -> bool {
        self.cycles == 0 && self.anomalies == 0
    }
}
pub fn check(histories: &[WorkerHistory]) -> CheckReport {
    CheckReport {
        transactions: histories.iter().map(|h| h.len() as u64).sum(),
        ..Default::default()
    }
}
