//! The outcome of a workload's consistency conditions on the final database (TPC-C's clause
//! 3.3.2, write-skew's pair constraint), in the checker's terms: the workload evaluates them, the
//! checker's report carries the counts beside the history's verdict
//! ([`CheckReport::add_consistency`](super::CheckReport::add_consistency)).

use serde::Serialize;

/// Outcome of the consistency checks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConsistencyReport {
    /// How many distinct conditions were evaluated (TPC-C's `CONDITIONS_CHECKED`).
    pub conditions_checked: u32,
    /// Violations found; each failing instance counts once (for TPC-C a warehouse for
    /// conditions 1 and 8, a district for 2-4, 9 and 11, an order for 5-6, an order line for 7,
    /// a customer for 10 and 12, and a HISTORY row or order naming no district or customer for
    /// 9 or 10).
    pub consistency_violations: u64,
    /// Descriptions of the first violations (at most the workload's own limit, TPC-C's
    /// `MAX_EXAMPLES`), warehouses first, then districts in id order ("condition 2, warehouse 1
    /// district 3: D_NEXT_O_ID - 1 = 3004 but max(O_ID) = 3005").
    pub examples: Vec<String>,
}

impl ConsistencyReport {
    /// Whether every condition held.
    pub fn is_consistent(&self) -> bool {
        self.consistency_violations == 0
    }
}
