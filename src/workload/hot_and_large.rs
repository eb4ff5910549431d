//! The pair of tables long-scan and the shifting workload share: a small hot table (table 0)
//! whose records every transaction updates, and a large one (table 1) it reads, both of the same
//! payload size. Validation checks the pair's sizes once for both (`config::validate`,
//! `two_tables`).

use crate::storage::TableSpec;

/// Table 0, `hot_name`, of `hot_records` records, and table 1, `large`, of `records` records,
/// all of `payload`-byte payloads.
pub(crate) fn hot_and_large(
    hot_name: &str,
    hot_records: u64,
    records: u64,
    payload: usize,
) -> Vec<TableSpec> {
    vec![
        TableSpec {
            name: hot_name.into(),
            records: hot_records,
            payload_bytes: payload,
        },
        TableSpec {
            name: "large".into(),
            records,
            payload_bytes: payload,
        },
    ]
}
