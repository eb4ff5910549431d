//! Which txbench build measured a number: the crate version and the git commit `build.rs`
//! recorded. Every report line (`RunReport::to_json_line`) and every results-file row carries
//! it, so rows from several builds can be told apart when they are merged or compared.

use serde::{Deserialize, Serialize};

/// The txbench build that measured a run or a results row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// Crate version.
    pub version: String,
    /// Git commit txbench was built from (`unknown` when built without git).
    pub commit: String,
}

impl BuildInfo {
    /// This binary.
    pub fn current() -> Self {
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("TXBENCH_GIT_COMMIT").to_string(),
        }
    }
}
