//! The TPC-C flags to a [`TpccConfig`]: warehouse count, mix, Stock-Level isolation, warehouse
//! binding and spare order slots, all checked before anything is allocated or loaded.
//!
//! Spare order slots default to [`spare_orders_for`] the whole run (measured plus warm-up
//! seconds). They are a capacity, not an allocation: the tables that receive inserts grow
//! (`storage`, "Tables that grow"), so spare slots cost only their chunk directories (8 bytes per
//! chunk of 256 KiB) until rows fill them. The memory check below counts the loaded database,
//! the partly filled chunk at each district's growing end, and the directories, and names
//! `--warehouses` (or, for a capacity whose directories alone do not fit,
//! `--tpcc-spare-orders`) when they would not fit in the memory the process may use (see
//! `config::memory`). Growth during the run is bounded by `--table-memory-mb` instead.

use super::ConfigError;
use super::cli::RunArgs;
use super::memory::data_bytes;
use super::validate::{Fit, out_of_range, reject_flags};
use crate::storage::{FIXED_CHUNK_BYTES, GROWING_CHUNK_BYTES, TableId, record_stride};
use crate::workload::tpcc::schema::DISTRICTS_PER_WAREHOUSE;
use crate::workload::tpcc::schema::INITIAL_ORDERS_PER_DISTRICT;
use crate::workload::tpcc::{
    MAX_WAREHOUSES, TpccConfig, TpccMix, WarehouseBinding, spare_orders_for,
};
use std::time::Duration;

/// Largest `--tpcc-spare-orders`: order ids are `u32`, and each district holds its 3,000 initial
/// orders plus the spare ones.
const MAX_SPARE_ORDERS: u64 = u32::MAX as u64 - INITIAL_ORDERS_PER_DISTRICT;

/// Estimated bytes of the TPC-C tables and indexes of `c`, with `meta`-byte record metadata,
/// once loaded: the loaded rows (and their index entries), one partly filled chunk per district
/// at the end of each table that grows, and every table's chunk directory.
pub(super) fn tpcc_bytes(c: &TpccConfig, meta: usize) -> u128 {
    let loaded = TpccConfig {
        spare_orders_per_district: 0,
        ..c.clone()
    };
    let districts = u128::from(c.warehouses * DISTRICTS_PER_WAREHOUSE);
    let growing = TpccConfig::GROWING_TABLES;
    let ends = districts * growing.len() as u128 * GROWING_CHUNK_BYTES as u128;
    let directories: u128 = c
        .tables()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let stride = record_stride(meta, t.payload_bytes);
            let chunk = if growing.contains(&TableId(i as u32)) {
                GROWING_CHUNK_BYTES
            } else {
                FIXED_CHUNK_BYTES
            };
            let per_chunk = 1u64 << (chunk / stride).max(1).ilog2();
            u128::from(t.records.div_ceil(per_chunk)) * 8
        })
        .sum();
    data_bytes(&loaded.tables(), &loaded.indexes(), meta) + ends + directories
}

impl RunArgs {
    /// The flags only TPC-C reads, each with whether it was given.
    pub(super) fn tpcc_flags(&self) -> [(&'static str, bool); 5] {
        [
            ("warehouses", self.warehouses.is_some()),
            ("mix", self.mix.is_some()),
            (
                "stock-level-isolation",
                self.stock_level_isolation.is_some(),
            ),
            ("warehouse-binding", self.warehouse_binding.is_some()),
            ("tpcc-spare-orders", self.tpcc_spare_orders.is_some()),
        ]
    }

    /// The TPC-C parameters for a run of `run_length` (measured plus warm-up) with `threads`
    /// workers whose tables and indexes must `fit`; other workloads' flags are an error here, not
    /// silently ignored.
    pub(super) fn tpcc_config(
        &self,
        run_length: Duration,
        threads: usize,
        fit: &Fit,
    ) -> Result<TpccConfig, ConfigError> {
        reject_flags("tpcc", &self.ycsb_only_flags())?;
        reject_flags("tpcc", &self.key_dist_flags())?;
        reject_flags("tpcc", &self.long_scan_flags())?;
        reject_flags("tpcc", &self.shifting_flags())?;
        reject_flags("tpcc", &self.index_flag())?;
        reject_flags(
            "tpcc",
            &[
                ("records", self.records.is_some()),
                ("payload", self.payload.is_some()),
            ],
        )?;
        let d = TpccConfig::default();
        let warehouses = self.warehouses.unwrap_or(d.warehouses);
        if !(1..=MAX_WAREHOUSES).contains(&warehouses) {
            return Err(out_of_range(
                "warehouses",
                warehouses,
                format!("1 <= warehouses <= {MAX_WAREHOUSES}"),
            ));
        }
        let mix = match &self.mix {
            None => d.mix,
            Some(m) => TpccMix::parse(m).map_err(|e| {
                out_of_range(
                    "mix",
                    m,
                    format!("full, np, or NAME=PERCENT,... summing to 100; {e}"),
                )
            })?,
        };
        let run_seconds = run_length.as_secs_f64();
        let binding = self.warehouse_binding.unwrap_or(d.binding);
        // Warehouses that receive New-Orders: with home binding only the first `threads` ones.
        let busy = |w: u64| match binding {
            WarehouseBinding::Home => w.min(threads as u64),
            WarehouseBinding::Random => w,
        };
        let spare = self
            .tpcc_spare_orders
            .unwrap_or_else(|| spare_orders_for(run_seconds, busy(warehouses)));
        if spare == 0 || spare > MAX_SPARE_ORDERS {
            let note = if self.tpcc_spare_orders.is_none() {
                " (the default grows with --duration + --warmup)"
            } else {
                ""
            };
            return Err(out_of_range(
                "tpcc-spare-orders",
                spare,
                format!("1 <= orders <= {MAX_SPARE_ORDERS}{note}"),
            ));
        }
        let c = TpccConfig {
            warehouses,
            spare_orders_per_district: spare,
            mix,
            stock_level: self.stock_level_isolation.unwrap_or(d.stock_level),
            binding,
        };
        if tpcc_bytes(&c, fit.meta) > fit.budget.data_room() {
            return Err(too_large(&c, self.tpcc_spare_orders, fit, |w| {
                spare_orders_for(run_seconds, busy(w))
            }));
        }
        Ok(c)
    }
}

/// The error for a configuration whose tables and indexes do not `fit`. When even one spare
/// order per district does not fit, the warehouse count is at fault: the error gives the largest
/// count that fits with the spare orders the user would get (`spare_given`, or the default
/// `default_spare(warehouses)`). Otherwise it names `--tpcc-spare-orders` with the largest count
/// that fits; bytes are linear in the spare orders, which gives that limit in closed form.
fn too_large(
    c: &TpccConfig,
    spare_given: Option<u64>,
    fit: &Fit,
    default_spare: impl Fn(u64) -> u64,
) -> ConfigError {
    let limit = fit.budget.data_room();
    let at = |warehouses: u64, spare: u64| {
        tpcc_bytes(
            &TpccConfig {
                warehouses,
                spare_orders_per_district: spare,
                ..c.clone()
            },
            fit.meta,
        )
    };
    let needed = at(c.warehouses, c.spare_orders_per_district);
    if at(c.warehouses, 1) > limit {
        let spare_at = |w| spare_given.unwrap_or_else(|| default_spare(w));
        // Bytes grow with the warehouse count (the default spare orders shrink with it, but the
        // spare slots in total do not), so the first count that fits, from the top, is the largest.
        let max = (1..c.warehouses)
            .rev()
            .find(|&w| at(w, spare_at(w)) <= limit);
        let spare = match spare_given {
            Some(n) => format!("--tpcc-spare-orders {n}"),
            None => "the default spare orders for --duration + --warmup".to_string(),
        };
        let fits = match max {
            Some(max) => format!("at most {max} warehouses fit with {spare}"),
            None => format!("not even one warehouse fits with {spare}"),
        };
        return fit
            .budget
            .too_large("warehouses", c.warehouses, needed, fits);
    }
    let fixed = at(c.warehouses, 0);
    // Spare orders cost directory words only; one more costs less than a byte, so step by a
    // million (the directories' rounding to whole chunks makes the cost a step function).
    let per_million = (at(c.warehouses, 1_000_000) - fixed).max(1);
    let max = limit.saturating_sub(fixed) * 1_000_000 / per_million;
    let default_note = if spare_given.is_none() {
        " (the default grows with --duration + --warmup)"
    } else {
        ""
    };
    fit.budget.too_large(
        "tpcc-spare-orders",
        c.spare_orders_per_district,
        needed,
        format!(
            "at most {max} spare orders per district fit with --warehouses {}{default_note}",
            c.warehouses
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::memory::{AvailableMemory, MemoryBudget};
    use crate::config::{Cli, Command, RunConfig};
    use crate::storage::record_stride;
    use crate::workload::WorkloadConfig;
    use crate::workload::tpcc::{StockLevelIsolation, WarehouseBinding};
    use clap::Parser;

    /// Memory the tests validate against, whatever the machine has.
    const TEST_MEMORY: u64 = 64 << 30;

    fn args(extra: &[&str]) -> Result<RunConfig, ConfigError> {
        let mut argv = vec!["txbench", "run", "--workload", "tpcc"];
        argv.extend_from_slice(extra);
        let cli = Cli::try_parse_from(argv).expect("clap accepts the flags");
        match cli.command {
            Command::Run(a) => a.validate_with(AvailableMemory::given(TEST_MEMORY)),
            _ => unreachable!("a run command line"),
        }
    }

    fn tpcc(extra: &[&str]) -> TpccConfig {
        match args(extra).unwrap().workload {
            WorkloadConfig::Tpcc(c) => c,
            other => panic!("tpcc expected, got {other:?}"),
        }
    }

    #[test]
    fn defaults_are_one_warehouse_full_mix_sized_by_run_length() {
        let c = tpcc(&[]);
        assert_eq!(c.warehouses, 1);
        assert_eq!(c.mix, TpccMix::FULL);
        assert_eq!(c.stock_level, StockLevelIsolation::Serializable);
        assert_eq!(c.binding, WarehouseBinding::Home);
        // Default --duration 2 plus --warmup 0.5.
        assert_eq!(c.spare_orders_per_district, spare_orders_for(2.5, 1));
        let longer = tpcc(&[
            "--duration",
            "10",
            "--warmup",
            "0",
            "--warehouses",
            "4",
            "-t",
            "8",
        ]);
        assert_eq!(longer.spare_orders_per_district, spare_orders_for(10.0, 4));
        // Home binding with 2 workers on 4 warehouses: only 2 warehouses take New-Orders.
        let two = tpcc(&["--warehouses", "4", "--threads", "2"]);
        assert_eq!(two.spare_orders_per_district, spare_orders_for(2.5, 2));
        let random = tpcc(&[
            "--warehouses",
            "4",
            "-t",
            "2",
            "--warehouse-binding",
            "random",
        ]);
        assert_eq!(random.spare_orders_per_district, spare_orders_for(2.5, 4));
    }

    #[test]
    fn flags_set_every_field() {
        let c = tpcc(&[
            "--warehouses",
            "8",
            "--mix",
            "np",
            "--stock-level-isolation",
            "read-committed",
            "--warehouse-binding",
            "random",
            "--tpcc-spare-orders",
            "123",
        ]);
        assert_eq!(
            c,
            TpccConfig {
                warehouses: 8,
                spare_orders_per_district: 123,
                mix: TpccMix::NP,
                stock_level: StockLevelIsolation::ReadCommitted,
                binding: WarehouseBinding::Random,
            }
        );
        let custom = tpcc(&["--mix", "new-order=90,delivery=10"]);
        assert_eq!(custom.mix.to_string(), "new_order=90,delivery=10");
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let cases: &[(&[&str], &str)] = &[
            (&["--warehouses", "0"], "--warehouses"),
            (&["--warehouses", "1025"], "--warehouses"),
            (&["--mix", "new_order=50,payment=40"], "sum to 90"),
            (
                &["--mix", "new_order=50,foo=50"],
                "unknown transaction 'foo'",
            ),
            (&["--mix", "new_order"], "--mix"),
            (&["--tpcc-spare-orders", "0"], "--tpcc-spare-orders"),
            (
                &["--tpcc-spare-orders", "4294967295"],
                "--tpcc-spare-orders",
            ),
            (
                &["--tpcc-spare-orders", "5000000000"],
                "--tpcc-spare-orders",
            ),
            (&["--duration", "86400"], "--duration + --warmup"),
            (
                &["--theta", "0.5"],
                "--theta does not apply to --workload tpcc",
            ),
            (&["--preset", "ycsb-a"], "--preset"),
            (&["--records", "10"], "--records"),
            (&["--payload", "10"], "--payload"),
            (&["--scan-length", "10"], "--scan-length"),
        ];
        for (flags, expected) in cases {
            let err = args(flags).expect_err("must be rejected").to_string();
            assert!(err.contains(expected), "{flags:?}: {err}");
        }
        let mix = args(&["--mix", "new_order=50,payment=40"]).unwrap_err();
        assert!(mix.to_string().contains("--mix"), "{mix}");
    }

    #[test]
    fn too_many_warehouses_for_memory_names_warehouses() {
        let fit = Fit {
            budget: MemoryBudget::new(AvailableMemory::given(TEST_MEMORY), 1).unwrap(),
            meta: 8,
        };
        let c = TpccConfig {
            warehouses: MAX_WAREHOUSES,
            spare_orders_per_district: 1,
            ..TpccConfig::default()
        };
        let err = too_large(&c, Some(1), &fit, |w| spare_orders_for(1.0, w)).to_string();
        assert!(err.contains("--warehouses 1024 needs about"), "{err}");
        let tiny = Fit {
            budget: MemoryBudget::new(AvailableMemory::given(100 << 20), 1).unwrap(),
            meta: 8,
        };
        let err = too_large(&c, Some(1), &tiny, |w| spare_orders_for(1.0, w)).to_string();
        assert!(err.contains("not even one warehouse fits"), "{err}");
    }

    /// The largest warehouse count in a `--warehouses` memory error for `flags`.
    fn stated_max_warehouses(flags: &[&str]) -> u64 {
        let err = args(flags).unwrap_err();
        let ConfigError::TooLarge { param, fits, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(*param, "warehouses", "{err}");
        fits.split_whitespace()
            .nth(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no maximum in '{fits}'"))
    }

    #[test]
    fn the_memory_limit_on_warehouses_is_exact() {
        // 1024 warehouses of TPC-C exceed the test's 64 GiB; the error states the largest count
        // that fits with the spare orders the run would get, and that count is accepted.
        for spare in [&["--tpcc-spare-orders", "1"][..], &[]] {
            let mut flags = vec!["--warehouses", "1024"];
            flags.extend_from_slice(spare);
            let max = stated_max_warehouses(&flags);
            assert!((1..MAX_WAREHOUSES).contains(&max), "{max}");
            let (max, next) = (max.to_string(), (max + 1).to_string());
            flags[1] = &max;
            assert!(args(&flags).is_ok(), "{flags:?}");
            flags[1] = &next;
            assert!(args(&flags).is_err(), "{flags:?}");
        }
    }

    #[test]
    fn spare_orders_cost_directories_not_rows() {
        // A run of an hour gets its default capacity for the price of its directories.
        let short = tpcc_bytes(&tpcc(&["-d", "2"]), 8);
        let hour = tpcc(&["-d", "3600"]);
        assert_eq!(hour.spare_orders_per_district, spare_orders_for(3600.5, 1));
        let long = tpcc_bytes(&hour, 8);
        assert!(long > short && long - short < 200_000_000, "{short} {long}");
        // Directories for 2^32 orders in each of 1024 warehouses' districts do not fit in 64 GiB.
        let err = args(&["--warehouses", "1024", "--tpcc-spare-orders", "4000000000"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--warehouses"), "{err}");
    }

    #[test]
    fn the_estimate_counts_loaded_rows_ends_and_directories_at_the_protocol_stride() {
        let c = TpccConfig::default();
        let loaded = TpccConfig {
            spare_orders_per_district: 0,
            ..c.clone()
        };
        let tables: u128 = loaded
            .tables()
            .iter()
            .map(|t| u128::from(t.records) * record_stride(8, t.payload_bytes) as u128)
            .sum();
        let bytes = tpcc_bytes(&c, 8);
        let ends = 10 * 4 * GROWING_CHUNK_BYTES as u128;
        assert!(bytes > tables + ends, "indexes and directories count too");
        // One warehouse loads about 100 MB of rows at 8 bytes of metadata.
        assert!((80_000_000..200_000_000).contains(&bytes), "{bytes}");
        assert!(tpcc_bytes(&c, 64) > bytes, "a larger stride");
    }

    #[test]
    fn tpcc_flags_are_rejected_elsewhere() {
        for workload in ["ycsb", "long-scan"] {
            for flag in [
                &["--warehouses", "2"][..],
                &["--mix", "np"],
                &["--stock-level-isolation", "read-committed"],
                &["--warehouse-binding", "random"],
                &["--tpcc-spare-orders", "10"],
            ] {
                let mut argv = vec!["txbench", "run", "--workload", workload];
                argv.extend_from_slice(flag);
                let Command::Run(a) = Cli::try_parse_from(argv).unwrap().command else {
                    unreachable!()
                };
                let err = a
                    .validate_with(AvailableMemory::given(TEST_MEMORY))
                    .expect_err("must be rejected");
                assert_eq!(
                    err.to_string(),
                    format!("{} does not apply to --workload {workload}", flag[0]),
                );
            }
        }
    }
}
