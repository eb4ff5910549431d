//! Each workload's parameters (YCSB with its key distribution, long-scan, shifting, write-skew;
//! TPC-C's are in `config::tpcc`), and the flags of the other workloads, which are an error, never
//! silently ignored.

use super::{Fit, out_of_range, reject_flags};
use crate::config::cli::{IndexArg, RunArgs};
use crate::config::presets::preset;
use crate::config::{ConfigError, KeyDistArg, MAX_PAYLOAD};
use crate::random::MAX_THETA;
use crate::workload::key_index::KeyIndexKind;
use crate::workload::long_scan::LongScanConfig;
use crate::workload::shifting::{MAX_LARGE_READS, MAX_SHIFT_PERIOD_MS, ShiftingConfig};
use crate::workload::write_skew::WriteSkewConfig;
use crate::workload::ycsb::KeyDist;
use crate::workload::ycsb::{MAX_DISTINCT_KEY_DRAWS, YcsbConfig, distinct_key_draws};

/// A large table of `records` and a small hot one of `hot_records` (long-scan's and the
/// shifting workload's pair): 1..=2^40 and 1..=2^20 records.
fn two_tables(records: u64, hot_records: u64) -> Result<(), ConfigError> {
    if records == 0 || records > 1 << 40 {
        return Err(out_of_range("records", records, "1 <= records <= 2^40"));
    }
    if hot_records == 0 || hot_records > 1 << 20 {
        return Err(out_of_range(
            "hot-records",
            hot_records,
            "1 <= records <= 2^20",
        ));
    }
    Ok(())
}

fn unit_interval(param: &'static str, v: f64) -> Result<f64, ConfigError> {
    if !(0.0..=1.0).contains(&v) {
        return Err(out_of_range(param, v, "0 <= value <= 1"));
    }
    Ok(v)
}

impl RunArgs {
    /// The YCSB parameters: the preset (YCSB-A by default) with explicit flags on top.
    pub(super) fn ycsb_config(&self, fit: &Fit) -> Result<YcsbConfig, ConfigError> {
        reject_flags("ycsb", &self.long_scan_flags())?;
        reject_flags("ycsb", &self.shifting_flags())?;
        reject_flags("ycsb", &self.tpcc_flags())?;
        let mut y = match &self.preset {
            Some(p) => preset(p)?,
            None => preset("ycsb-a")?,
        };
        if let Some(r) = self.records {
            y.records = r;
        }
        if let Some(p) = self.payload {
            y.payload = p;
        }
        if let Some(o) = self.ops {
            y.ops = o;
            if self.long_ops.is_none() && y.long_share == 0.0 {
                y.long_ops = o;
            }
        }
        if let Some(o) = self.long_ops {
            y.long_ops = o;
        }
        if let Some(s) = self.long_share {
            y.long_share = unit_interval("long-share", s)?;
        }
        if let Some(r) = self.read_ratio {
            y.read_ratio = unit_interval("read-ratio", r)?;
        }
        if let Some(d) = self.long_txn_delay_us {
            if d > 10_000_000 {
                return Err(out_of_range("long-txn-delay-us", d, "0 <= us <= 10000000"));
            }
            y.long_txn_delay_us = d;
        }
        if self.writes.is_some() {
            y.writes = self.writes;
        }
        if self.rmw {
            y.rmw = true;
        }
        if self.blind {
            y.rmw = false;
        }
        if self.no_prefetch {
            y.prefetch = false;
        }
        if let Some(t) = self.theta {
            y.theta = t;
        }
        if let Some(index) = self.index_kind() {
            y.index = index;
        }
        y.key_dist = self.key_dist(&y)?;
        self.validate_ycsb(&y, fit)?;
        Ok(y)
    }

    /// `--key-dist`, `--key-mean`, `--key-sd` for the YCSB configuration `y` (its records and
    /// operations final): the mean a key, the standard deviation at least the most operations of
    /// a transaction (so that distinct keys take few draws), no `--theta` with normal keys.
    fn key_dist(&self, y: &YcsbConfig) -> Result<KeyDist, ConfigError> {
        let from_preset = match y.key_dist {
            KeyDist::Normal { key_mean, key_sd } => Some((key_mean, key_sd)),
            KeyDist::Zipf => None,
        };
        let normal = match self.key_dist {
            Some(KeyDistArg::Normal) => true,
            Some(KeyDistArg::Zipf) => false,
            None => from_preset.is_some(),
        };
        if !normal {
            for (param, given) in [
                ("key-mean", self.key_mean.is_some()),
                ("key-sd", self.key_sd.is_some()),
            ] {
                if given {
                    return Err(ConfigError::NeedsFlag {
                        param,
                        needs: "key-dist normal",
                    });
                }
            }
            return Ok(KeyDist::Zipf);
        }
        if let Some(t) = self.theta {
            return Err(out_of_range(
                "theta",
                t,
                "no --theta with --key-dist normal (use --key-mean and --key-sd)",
            ));
        }
        let records = y.records as f64;
        let key_mean = self
            .key_mean
            .or(from_preset.map(|(m, _)| m))
            .unwrap_or((y.records / 2) as f64);
        if !(key_mean.is_finite() && (0.0..records).contains(&key_mean)) {
            return Err(out_of_range(
                "key-mean",
                key_mean,
                format!("0 <= mean < records ({})", y.records),
            ));
        }
        let most_ops = if y.long_share > 0.0 {
            y.ops.max(y.long_ops)
        } else {
            y.ops
        };
        let key_sd = self
            .key_sd
            .or(from_preset.map(|(_, sd)| sd))
            .unwrap_or((records / 20.0).max(most_ops as f64));
        // A key off the table is drawn again; an sd beyond the table's size would take many
        // draws a key (at sd = records, a mean at the table's edge keeps a third of them).
        if !(key_sd.is_finite() && key_sd >= most_ops as f64 && key_sd <= records) {
            return Err(out_of_range(
                "key-sd",
                key_sd,
                format!(
                    "{most_ops} (operations per transaction) <= sd <= {} (records; a wider \
                     normal is nearly uniform: use --key-dist zipf --theta 0)",
                    y.records
                ),
            ));
        }
        Ok(KeyDist::Normal { key_mean, key_sd })
    }

    /// `--key-dist` and its parameters, each with whether it was given (YCSB only).
    pub(in crate::config) fn key_dist_flags(&self) -> [(&'static str, bool); 3] {
        [
            ("key-dist", self.key_dist.is_some()),
            ("key-mean", self.key_mean.is_some()),
            ("key-sd", self.key_sd.is_some()),
        ]
    }

    /// `--index` as the workload's key access method, when given (YCSB and long-scan).
    fn index_kind(&self) -> Option<KeyIndexKind> {
        self.index.map(|index| match index {
            IndexArg::Array => KeyIndexKind::Array,
            IndexArg::Hash => KeyIndexKind::Hash,
            IndexArg::Ordered => KeyIndexKind::Ordered,
        })
    }

    /// `--index`, with whether it was given: YCSB and long-scan read it, the other workloads
    /// reject it.
    pub(in crate::config) fn index_flag(&self) -> [(&'static str, bool); 1] {
        [("index", self.index.is_some())]
    }

    /// The flags only YCSB reads, each with whether it was given.
    pub(in crate::config) fn ycsb_only_flags(&self) -> [(&'static str, bool); 11] {
        [
            ("preset", self.preset.is_some()),
            ("ops", self.ops.is_some()),
            ("long-ops", self.long_ops.is_some()),
            ("long-share", self.long_share.is_some()),
            ("read-ratio", self.read_ratio.is_some()),
            ("writes", self.writes.is_some()),
            ("rmw", self.rmw),
            ("blind", self.blind),
            ("no-prefetch", self.no_prefetch),
            ("theta", self.theta.is_some()),
            ("long-txn-delay-us", self.long_txn_delay_us.is_some()),
        ]
    }

    /// The flags only long-scan reads, each with whether it was given.
    pub(in crate::config) fn long_scan_flags(&self) -> [(&'static str, bool); 2] {
        [
            ("hot-records", self.hot_records.is_some()),
            ("scan-length", self.scan_length.is_some()),
        ]
    }

    /// The long-scan parameters; other workloads' flags are an error here, not silently ignored.
    pub(super) fn long_scan_config(&self, fit: &Fit) -> Result<LongScanConfig, ConfigError> {
        reject_flags("long-scan", &self.ycsb_only_flags())?;
        reject_flags("long-scan", &self.key_dist_flags())?;
        reject_flags("long-scan", &self.tpcc_flags())?;
        reject_flags("long-scan", &self.shifting_flags())?;
        let d = LongScanConfig::default();
        let c = LongScanConfig {
            records: self.records.unwrap_or(d.records),
            hot_records: self.hot_records.unwrap_or(d.hot_records),
            scan_length: self.scan_length.unwrap_or(d.scan_length),
            payload: self.payload.unwrap_or(d.payload),
            index: self.index_kind().unwrap_or(d.index),
        };
        two_tables(c.records, c.hot_records)?;
        if c.scan_length == 0 || c.scan_length > c.records {
            return Err(out_of_range(
                "scan-length",
                c.scan_length,
                format!("1 <= length <= records = {}", c.records),
            ));
        }
        self.validate_payload(c.payload)?;
        // Both tables' keys are indexed (the hot table's too), at the same bytes per key.
        fit.records(
            c.records,
            c.hot_records,
            c.payload,
            c.index.estimated_bytes_per_key(),
        )?;
        Ok(c)
    }

    /// The flags only the shifting workload reads, each with whether it was given.
    pub(in crate::config) fn shifting_flags(&self) -> [(&'static str, bool); 2] {
        [
            ("large-reads", self.large_reads.is_some()),
            ("shift-period-ms", self.shift_period_ms.is_some()),
        ]
    }

    /// The shifting workload's parameters: `--records` (the large table), `--hot-records` (the
    /// small one), `--large-reads`, `--shift-period-ms`, `--payload`; other workloads' flags are
    /// an error here.
    pub(super) fn shifting_config(&self, fit: &Fit) -> Result<ShiftingConfig, ConfigError> {
        reject_flags("shifting", &self.ycsb_only_flags())?;
        reject_flags("shifting", &self.key_dist_flags())?;
        reject_flags("shifting", &self.tpcc_flags())?;
        reject_flags("shifting", &self.index_flag())?;
        reject_flags("shifting", &[("scan-length", self.scan_length.is_some())])?;
        let d = ShiftingConfig::default();
        let c = ShiftingConfig {
            records: self.records.unwrap_or(d.records),
            hot_records: self.hot_records.unwrap_or(d.hot_records),
            large_reads: self.large_reads.unwrap_or(d.large_reads),
            payload: self.payload.unwrap_or(d.payload),
            shift_period_ms: self.shift_period_ms.unwrap_or(d.shift_period_ms),
        };
        two_tables(c.records, c.hot_records)?;
        if c.large_reads == 0 || c.large_reads > c.records.min(MAX_LARGE_READS) {
            return Err(out_of_range(
                "large-reads",
                c.large_reads,
                format!(
                    "1 <= reads <= min(records, {MAX_LARGE_READS}) = {}",
                    c.records.min(MAX_LARGE_READS)
                ),
            ));
        }
        if c.shift_period_ms == 0 || c.shift_period_ms > MAX_SHIFT_PERIOD_MS {
            return Err(out_of_range(
                "shift-period-ms",
                c.shift_period_ms,
                format!("1 <= ms <= {MAX_SHIFT_PERIOD_MS}"),
            ));
        }
        self.validate_payload(c.payload)?;
        fit.records(c.records, c.hot_records, c.payload, 0)?;
        Ok(c)
    }

    /// The write-skew parameters: `--records` only (an even count, two per pair).
    pub(super) fn write_skew_config(&self, fit: &Fit) -> Result<WriteSkewConfig, ConfigError> {
        reject_flags("write-skew", &self.ycsb_only_flags())?;
        reject_flags("write-skew", &self.long_scan_flags())?;
        reject_flags("write-skew", &self.index_flag())?;
        reject_flags("write-skew", &self.tpcc_flags())?;
        reject_flags("write-skew", &self.shifting_flags())?;
        reject_flags("write-skew", &[("payload", self.payload.is_some())])?;
        let c = WriteSkewConfig {
            records: self.records.unwrap_or(WriteSkewConfig::default().records),
        };
        if c.records < 2 || c.records > 1 << 40 || c.records % 2 != 0 {
            return Err(out_of_range(
                "records",
                c.records,
                "an even count, 2 <= records <= 2^40",
            ));
        }
        fit.records(c.records, crate::workload::write_skew::OBSERVERS, 8, 0)?;
        Ok(c)
    }

    fn validate_payload(&self, payload: usize) -> Result<(), ConfigError> {
        if payload == 0 || payload > MAX_PAYLOAD {
            return Err(out_of_range(
                "payload",
                payload,
                format!("1 <= bytes <= {MAX_PAYLOAD}"),
            ));
        }
        Ok(())
    }

    fn validate_ycsb(&self, y: &YcsbConfig, fit: &Fit) -> Result<(), ConfigError> {
        if y.records == 0 || y.records > 1 << 40 {
            return Err(out_of_range("records", y.records, "1 <= records <= 2^40"));
        }
        self.validate_payload(y.payload)?;
        fit.records(y.records, 0, y.payload, y.index.estimated_bytes_per_key())?;
        for (param, ops) in [("ops", y.ops), ("long-ops", y.long_ops)] {
            if ops == 0 || ops as u64 > y.records || ops > 4096 {
                return Err(out_of_range(
                    param,
                    ops,
                    format!("1 <= ops <= min(records = {}, 4096)", y.records),
                ));
            }
        }
        if let Some(w) = y.writes {
            let max = if y.long_share > 0.0 {
                y.ops.min(y.long_ops)
            } else {
                y.ops
            };
            if w > max {
                return Err(out_of_range(
                    "writes",
                    w,
                    format!("0 <= writes <= ops = {max}"),
                ));
            }
        }
        // `contains` is false for NaN, so NaN is rejected here too.
        if !(0.0..=MAX_THETA).contains(&y.theta) {
            return Err(out_of_range(
                "theta",
                y.theta,
                format!("0 <= theta <= {MAX_THETA} (0 is uniform)"),
            ));
        }
        let most_ops = if y.long_share > 0.0 {
            y.ops.max(y.long_ops)
        } else {
            y.ops
        };
        // Normal keys are bounded below by `key_normal` instead (sd at least the operations).
        let draws = match y.key_dist {
            KeyDist::Zipf => distinct_key_draws(y.records, most_ops, y.theta),
            KeyDist::Normal { .. } => 0.0,
        };
        if draws > MAX_DISTINCT_KEY_DRAWS {
            return Err(out_of_range(
                "theta",
                y.theta,
                format!(
                    "a skew at which {most_ops} distinct keys of --records {} take at most \
                     {MAX_DISTINCT_KEY_DRAWS:.0e} draws per transaction (this one may need \
                     {draws:.1e}); lower --theta or --ops",
                    y.records
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_args::*;
    use super::*;
    use crate::config::RunConfig;
    use crate::protocol::ProtocolKind;
    use crate::workload::WorkloadConfig;

    #[test]
    fn flags_override_the_preset() {
        let c = args(&[
            "--preset",
            "ycsb-b",
            "--theta",
            "0",
            "--ops",
            "4",
            "-p",
            "silo,nocc",
        ])
        .unwrap();
        let WorkloadConfig::Ycsb(y) = &c.workload else {
            panic!("ycsb expected")
        };
        assert_eq!(y.read_ratio, 0.95);
        assert_eq!(y.theta, 0.0);
        assert_eq!(y.ops, 4);
        assert_eq!(c.protocols, vec![ProtocolKind::Silo, ProtocolKind::Nocc]);
    }

    #[test]
    fn theta_one_and_above_is_accepted_where_distinct_keys_can_be_found() {
        for (theta, ops) in [("1", "16"), ("1.5", "16"), ("3", "16"), ("10", "1")] {
            let c = args(&["--theta", theta, "--ops", ops]).unwrap();
            let WorkloadConfig::Ycsb(y) = &c.workload else {
                panic!("ycsb expected")
            };
            assert_eq!(y.theta, theta.parse::<f64>().unwrap());
        }
    }

    #[test]
    fn long_scan_takes_its_own_flags() {
        let c = args(&[
            "--workload",
            "long-scan",
            "--records",
            "5000",
            "--scan-length",
            "100",
        ])
        .unwrap();
        assert_eq!(
            c.workload,
            WorkloadConfig::LongScan(LongScanConfig {
                records: 5000,
                hot_records: 1,
                scan_length: 100,
                payload: 100,
                index: KeyIndexKind::Array,
            })
        );
    }

    #[test]
    fn shifting_takes_its_own_flags_with_mocc_figure_8_defaults() {
        let c = args(&["-w", "shifting"]).unwrap();
        assert_eq!(
            c.workload,
            WorkloadConfig::Shifting(ShiftingConfig {
                records: 1_000_000,
                hot_records: 1,
                large_reads: 20,
                payload: 100,
                shift_period_ms: 100,
            })
        );
        let c = args(&[
            "-w",
            "shifting",
            "--records",
            "5000",
            "--hot-records",
            "2",
            "--large-reads",
            "7",
            "--shift-period-ms",
            "250",
            "--mocc-threshold",
            "0",
        ])
        .unwrap();
        assert_eq!(
            c.workload,
            WorkloadConfig::Shifting(ShiftingConfig {
                records: 5000,
                hot_records: 2,
                large_reads: 7,
                payload: 100,
                shift_period_ms: 250,
            })
        );
        assert_eq!(c.options.mocc.threshold, 0, "H = 0: MOCC's pessimistic end");
    }

    #[test]
    fn normal_keys_are_validated_and_the_sgpm_presets_use_them() {
        let ycsb = |c: RunConfig| match c.workload {
            WorkloadConfig::Ycsb(y) => y,
            _ => panic!("ycsb expected"),
        };
        let y = ycsb(args(&["--preset", "sgpm-high"]).unwrap());
        assert_eq!((y.ops, y.read_ratio, y.records), (100, 0.5, 2_000_000));
        assert_eq!(
            y.key_dist,
            KeyDist::Normal {
                key_mean: 1e6,
                key_sd: 1e4
            }
        );
        let y = ycsb(args(&["--preset", "sgpm-low", "--key-sd", "1000"]).unwrap());
        assert_eq!(
            y.key_dist,
            KeyDist::Normal {
                key_mean: 1e6,
                key_sd: 1e3
            }
        );
        let y = ycsb(args(&["--key-dist", "normal", "--records", "1000"]).unwrap());
        assert_eq!(
            y.key_dist,
            KeyDist::Normal {
                key_mean: 500.0,
                key_sd: 50.0
            }
        );
        let y = ycsb(args(&["--preset", "sgpm-high", "--key-dist", "zipf"]).unwrap());
        assert_eq!(y.key_dist, KeyDist::Zipf);
        let cases: &[(&[&str], &str)] = &[
            (
                &["--key-mean", "5"],
                "--key-mean applies only with --key-dist normal",
            ),
            (
                &["--key-sd", "5"],
                "--key-sd applies only with --key-dist normal",
            ),
            (
                &["--key-dist", "normal", "--theta", "0.5"],
                "no --theta with --key-dist normal",
            ),
            (
                &[
                    "--key-dist",
                    "normal",
                    "--records",
                    "1000",
                    "--key-mean",
                    "1000",
                ],
                "0 <= mean < records (1000)",
            ),
            (&["--key-dist", "normal", "--key-mean", "-1"], "--key-mean"),
            (&["--key-dist", "normal", "--key-mean", "nan"], "--key-mean"),
            (
                &["--key-dist", "normal", "--ops", "16", "--key-sd", "15"],
                "16 (operations per transaction) <= sd",
            ),
            (&["--key-dist", "normal", "--key-sd", "inf"], "--key-sd"),
            // Wider than the table: nearly every draw would land off it and be drawn again.
            (
                &[
                    "--key-dist",
                    "normal",
                    "--records",
                    "1000",
                    "--key-sd",
                    "1e15",
                ],
                "<= sd <= 1000 (records",
            ),
            (&["-d", "1e-9"], "0.01 <= seconds <= 86400"),
            (&["-d", "0.009"], "0.01 <= seconds <= 86400"),
            (
                &["--workload", "tpcc", "--table-memory-mb", "1"],
                "the loaded tables take",
            ),
            (
                &["--workload", "long-scan", "--key-dist", "normal"],
                "--key-dist does not apply",
            ),
            (
                &["--workload", "tpcc", "--key-sd", "9"],
                "--key-sd does not apply",
            ),
        ];
        for (flags, msg) in cases {
            let err = args(flags).expect_err("must be rejected").to_string();
            assert!(err.contains(msg), "{flags:?}: {err}");
        }
    }
}
