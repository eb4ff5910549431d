//! Workload presets and the workload names, each with one line for `txbench list`.

use super::ConfigError;
use crate::workload::ycsb::{KeyDist, YcsbConfig};

/// The workload presets, with one line each for `txbench list`.
pub const PRESETS: &[(&str, &str)] = &[
    ("ycsb-a", "50% reads / 50% blind writes, theta 0.99, 16 ops"),
    ("ycsb-b", "95% reads / 5% blind writes, theta 0.5, 16 ops"),
    ("ycsb-c", "read-only, theta 0.99, 16 ops"),
    (
        "ycsb-f",
        "50% reads / 50% read-modify-writes, theta 0.99, 16 ops",
    ),
    (
        "ycsb-a-bimodal",
        "PLOR's YCSB-A: 50% writes, theta 0.99, 90% of txns with 4 ops and 10% with 16",
    ),
    (
        "sgpm-high",
        "SGPM high contention: 2M records, normal keys (mean 1e6, sd 1e4), 50% blind writes, 100 ops",
    ),
    (
        "sgpm-low",
        "SGPM low contention: 2M records, normal keys (mean 1e6, sd 5e5), 20% blind writes, 100 ops",
    ),
];

/// The YCSB configuration of a preset.
pub fn preset(name: &str) -> Result<YcsbConfig, ConfigError> {
    let base = YcsbConfig::default();
    let cfg = match name {
        "ycsb-a" => YcsbConfig {
            read_ratio: 0.5,
            theta: 0.99,
            rmw: false,
            ..base
        },
        "ycsb-b" => YcsbConfig {
            read_ratio: 0.95,
            theta: 0.5,
            rmw: false,
            ..base
        },
        "ycsb-c" => YcsbConfig {
            read_ratio: 1.0,
            theta: 0.99,
            rmw: false,
            ..base
        },
        "ycsb-f" => YcsbConfig {
            read_ratio: 0.5,
            theta: 0.99,
            rmw: true,
            ..base
        },
        "ycsb-a-bimodal" => YcsbConfig {
            read_ratio: 0.5,
            theta: 0.99,
            rmw: false,
            ops: 4,
            long_ops: 16,
            long_share: 0.1,
            ..base
        },
        "sgpm-high" | "sgpm-low" => {
            let high = name == "sgpm-high";
            YcsbConfig {
                records: 2_000_000,
                ops: 100,
                long_ops: 100,
                read_ratio: if high { 0.5 } else { 0.8 },
                rmw: false,
                key_dist: KeyDist::Normal {
                    key_mean: 1e6,
                    key_sd: if high { 1e4 } else { 5e5 },
                },
                ..base
            }
        }
        _ => {
            return Err(ConfigError::UnknownName {
                param: "preset",
                value: name.to_string(),
                allowed: PRESETS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    };
    Ok(cfg)
}

/// The workloads, with one line each for `txbench list`.
pub const WORKLOADS: &[(&str, &str)] = &[
    (
        "ycsb",
        "YCSB with CCBench's seven parameters; one table, dense integer keys",
    ),
    (
        "long-scan",
        "MOCC 5.6: read a hot record, scan --scan-length records of a large table, update the hot record",
    ),
    (
        "tpcc",
        "TPC-C 5.11: nine tables over --warehouses W, the five transactions drawn by --mix",
    ),
    (
        "write-skew",
        "pairs of --records/2 record pairs whose counts must add up to 1 or more: SI breaks it",
    ),
    (
        "shifting",
        "MOCC 5.5: one op on a small table (a read, then an RMW, switching every --shift-period-ms) and --large-reads reads of a large one",
    ),
];
