//! What the run's data may take of the memory budget: the records of a workload ([`Fit`]), the
//! versions of a multi-version protocol (`--version-memory-mb`) and the tables' cap
//! (`--table-memory-mb`).

use super::out_of_range;
use crate::config::ConfigError;
use crate::config::cli::RunArgs;
use crate::config::memory::{self, MemoryBudget, round_down};
use crate::protocol::{ProtocolKind, ProtocolOptions};
use crate::storage::record_stride;
use crate::workload::WorkloadConfig;

/// What a workload's data may take: the run's memory budget and the largest record metadata of
/// its protocols.
pub(in crate::config) struct Fit {
    pub(in crate::config) budget: MemoryBudget,
    pub(in crate::config) meta: usize,
}

impl Fit {
    /// Checks that `records` records plus `fixed_records` more (long-scan's hot table), all with
    /// `payload`-byte payloads, fit, with `index_bytes` of key index for each of the `records`;
    /// the error names `--records` with the most that fit.
    pub(super) fn records(
        &self,
        records: u64,
        fixed_records: u64,
        payload: usize,
        index_bytes: usize,
    ) -> Result<(), ConfigError> {
        let stride = (record_stride(self.meta, payload) + index_bytes) as u128;
        let data = u128::from(records + fixed_records) * stride;
        if data <= self.budget.data_room() {
            return Ok(());
        }
        let max = (self.budget.data_room() / stride).saturating_sub(u128::from(fixed_records));
        Err(self.budget.too_large(
            "records",
            records,
            data,
            format!(
                "at most {} records fit ({stride} bytes each with --payload {payload})",
                round_down(max)
            ),
        ))
    }
}

impl RunArgs {
    /// The version memory of a run with a multi-version protocol (`config::memory`, "The
    /// estimate"): sets the cap (`options.mv.version_memory_bytes`) and returns what the versions
    /// may take from the heap, with `used` bytes (tables, indexes, history) already planned; 0
    /// for a run without one. An explicit `--version-memory-mb` that does not fit beside the
    /// rest, or any cap below what the workers reserve ahead, is an error naming the flag and
    /// the most (or least) that works.
    pub(super) fn version_memory(
        &self,
        budget: &MemoryBudget,
        used: u128,
        protocols: &[ProtocolKind],
        workload: &WorkloadConfig,
        workers: usize,
        options: &mut ProtocolOptions,
    ) -> Result<u128, ConfigError> {
        // A version copies its record's payload (check-mode stamp included), so nodes come in
        // one size per table payload (the largest per-version metadata of the protocols run).
        // The heap bound assumes the cap filled with the smallest nodes, whose overhead weighs
        // most; every worker's pool reserves ahead in each size.
        let stamp = if self.check || self.log.is_some() {
            crate::storage::stamp::STAMP_BYTES
        } else {
            0
        };
        let mut payloads: Vec<usize> = workload
            .tables()
            .iter()
            .map(|t| t.payload_bytes + stamp)
            .collect();
        payloads.sort_unstable();
        payloads.dedup();
        let nodes: Vec<usize> = payloads
            .iter()
            .filter_map(|&b| {
                protocols
                    .iter()
                    .filter_map(|p| p.version_node_bytes(b))
                    .max()
            })
            .collect();
        let Some(&node) = nodes.iter().min() else {
            return Ok(0);
        };
        let payload = payloads[0];
        let room = budget.data_room().saturating_sub(used);
        let most = memory::version_cap_within(room, node);
        let reserved: u128 = nodes
            .iter()
            .map(|&n| memory::versions_reserved(workers, n, options.mv.version_reuse))
            .sum();
        let cap = match self.version_memory_mb {
            Some(mb) => {
                let cap = u128::from(mb) << 20;
                let footprint = memory::version_footprint(cap, node);
                if footprint > room {
                    return Err(budget.too_large(
                        "version-memory-mb",
                        mb,
                        used + footprint,
                        format!(
                            "at most {} MiB of versions fit beside the tables ({} bytes a \
                             version of a {payload}-byte payload, {} with the heap's)",
                            most >> 20,
                            node,
                            node + memory::VERSION_NODE_OVERHEAD_BYTES
                        ),
                    ));
                }
                if cap < reserved {
                    return Err(out_of_range(
                        "version-memory-mb",
                        mb,
                        format!(
                            "at least {} MiB: {workers} workers reserve {} versions of each \
                             payload size ahead ({} bytes)",
                            reserved.div_ceil(1 << 20),
                            if options.mv.version_reuse {
                                crate::storage::versions::RESERVE
                            } else {
                                1
                            },
                            reserved
                        ),
                    ));
                }
                cap
            }
            None => {
                let cap = (u128::from(memory::DEFAULT_VERSION_MEMORY_MB) << 20).min(most);
                if cap < reserved {
                    return Err(budget.too_large(
                        "version-memory-mb",
                        format!("{} (the default)", memory::DEFAULT_VERSION_MEMORY_MB),
                        used + memory::version_footprint(reserved, node),
                        format!(
                            "the tables leave room for {most} bytes of versions and the \
                             {workers} workers reserve {reserved} ahead: lower --records, \
                             --threads or --check-limit"
                        ),
                    ));
                }
                cap
            }
        };
        options.mv.version_memory_bytes = usize::try_from(cap).unwrap_or(usize::MAX);
        Ok(memory::version_footprint(cap, node))
    }

    /// `--table-memory-mb` in bytes, or by default the room validation found for the tables:
    /// what the budget leaves once the loaded data (`data`), the check history and the versions
    /// (`versions`, [`Self::version_memory`]) are counted, less an eighth kept for what grows
    /// beside the rows (index entries of inserted rows), plus the loaded data itself (the cap
    /// counts every table byte).
    pub(super) fn table_memory(
        &self,
        budget: &MemoryBudget,
        data: u128,
        check_ops: u64,
        versions: u128,
    ) -> Result<u64, ConfigError> {
        let history = u128::from(check_ops) * crate::check::history::CHECK_BYTES_PER_OP as u128;
        let room = budget
            .data_room()
            .saturating_sub(history)
            .saturating_sub(versions);
        let Some(mb) = self.table_memory_mb else {
            let growth = room.saturating_sub(data) / 8 * 7;
            return Ok(u64::try_from(data + growth).unwrap_or(u64::MAX));
        };
        let most = room >> 20;
        // The cap counts the loaded tables too: below them the run would stop at its first
        // insert, its measured period cut to nothing. One MiB more leaves room to grow.
        let least = data.div_ceil(1 << 20) + 1;
        if u128::from(mb) < least {
            return Err(out_of_range(
                "table-memory-mb",
                mb,
                format!(
                    "{least} <= MiB <= {most} (the loaded tables take {} MiB; the cap counts \
                     them)",
                    data.div_ceil(1 << 20)
                ),
            ));
        }
        if u128::from(mb) > most {
            return Err(out_of_range(
                "table-memory-mb",
                mb,
                format!("{least} <= MiB <= {most} (the memory free for the tables)"),
            ));
        }
        Ok(mb << 20)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_args::*;
    use super::*;
    use crate::check::history::CHECK_BYTES_PER_OP;

    /// The most MiB a `--version-memory-mb` error says fit.
    fn stated_most_version_mib(e: &ConfigError) -> u64 {
        let text = e.to_string();
        let tail = text
            .split("at most ")
            .nth(1)
            .expect("states the most that fits");
        tail.split(' ').next().unwrap().parse().unwrap()
    }

    #[test]
    fn version_memory_counts_in_the_estimate_and_names_its_flag() {
        let memory = 4 * GB;
        let si = |extra: &[&str]| {
            let mut a = vec!["-p", "si", "--records", "1000000", "--payload", "100"];
            a.extend_from_slice(extra);
            args_with(memory, &a)
        };
        // 3.6 GB usable: 4 GiB of versions do not fit beside 1M rows; the error names the
        // flag and the most that fits, and that most fits.
        let e = si(&["--version-memory-mb", "4096"]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("--version-memory-mb 4096 needs about"),
            "{text}"
        );
        let most = stated_most_version_mib(&e);
        assert!((1000..3600).contains(&most), "{text}");
        let fits = si(&["--version-memory-mb", &most.to_string()]).unwrap();
        assert_eq!(fits.options.mv.version_memory_bytes, (most as usize) << 20);
        assert!(si(&["--version-memory-mb", &(most + 1).to_string()]).is_err());
        // The same cap for a single-version protocol costs nothing (and is warned about).
        let silo = args_with(
            memory,
            &[
                "-p",
                "silo",
                "--records",
                "1000000",
                "--version-memory-mb",
                "4096",
            ],
        );
        assert!(silo.is_ok());
    }

    #[test]
    fn the_default_version_cap_yields_to_the_memory_left_and_counts_against_table_growth() {
        let default = |memory: u64| args_with(memory, &["-p", "si", "--records", "1000"]).unwrap();
        let roomy = default(64 << 30);
        assert_eq!(roomy.options.mv.version_memory_bytes, 1 << 30);
        // 1 GB available: 0.9 GB usable, so the versions get less than the default 1 GiB.
        let tight = default(GB);
        let cap = tight.options.mv.version_memory_bytes;
        assert!(cap < 900_000_000 && cap > 100 << 20, "{cap}");
        // What the versions may take is not offered to the tables: with si the tables' default
        // cap is smaller than with silo by at least the versions' cap.
        let silo = args_with(GB, &["-p", "silo", "--records", "1000"]).unwrap();
        assert!(
            silo.table_memory_bytes >= tight.table_memory_bytes + cap as u64 / 8 * 7,
            "{} {}",
            silo.table_memory_bytes,
            tight.table_memory_bytes
        );
    }

    #[test]
    fn a_version_cap_below_the_workers_reserve_is_refused() {
        // 64 workers reserve 64 nodes of 1000-byte payloads each: about 4.2 MB.
        let e = args(&[
            "-p",
            "si",
            "-t",
            "64",
            "--payload",
            "1000",
            "--records",
            "1000",
            "--version-memory-mb",
            "1",
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("--version-memory-mb"), "{e}");
        assert!(
            e.contains("at least 5 MiB: 64 workers reserve 64 versions"),
            "{e}"
        );
        // TPC-C's tables have several payload sizes: a pool reserves ahead in each.
        let tpcc = |mb: &str| {
            args(&[
                "-p",
                "si",
                "-w",
                "tpcc",
                "-t",
                "64",
                "--version-memory-mb",
                mb,
            ])
        };
        let least: u64 = {
            let e = tpcc("1").unwrap_err().to_string();
            let tail = e.split("at least ").nth(1).expect("states the least");
            tail.split(' ').next().unwrap().parse().unwrap()
        };
        assert!(least > 5, "more than one size: {least} MiB");
        assert!(tpcc(&least.to_string()).is_ok());
        // Without AssertiveVersionReuse a worker takes one node at a time.
        let one_each = args(&[
            "-p",
            "si",
            "-t",
            "64",
            "--payload",
            "1000",
            "--records",
            "1000",
            "--version-memory-mb",
            "1",
            "--no-version-reuse",
        ]);
        assert!(one_each.is_ok());
    }

    /// The most records a `--records` memory error says fit.
    fn stated_max_records(err: &ConfigError) -> u64 {
        let ConfigError::TooLarge { param, fits, .. } = err else {
            panic!("{err}")
        };
        assert_eq!(*param, "records", "{err}");
        fits.split_whitespace().nth(2).unwrap().parse().unwrap()
    }

    #[test]
    fn records_are_sized_against_the_available_memory() {
        // 2^28 records of 100 bytes take 128 bytes each with Silo's 8-byte metadata: 34.4 GB;
        // 21 GB are available.
        let err = args_with(21 * GB, &["-p", "silo", "--records", "268435456"]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("--records 268435456 needs about 34.4 GB of memory, and 21.0 GB"),
            "{text}"
        );
        let max = stated_max_records(&err);
        // 90% of 21 GB less the workers, at 128 bytes a record, rounded down.
        assert!((140_000_000..=147_656_250).contains(&max), "{max}");
        let fits = max.to_string();
        let ok = args_with(21 * GB, &["-p", "silo", "--records", &fits])
            .expect("the stated maximum fits");
        assert!(matches!(ok.workload, WorkloadConfig::Ycsb(ref y) if y.records == max));
        // The same records fit in more memory.
        assert!(args_with(64 * GB, &["-p", "silo", "--records", "268435456"]).is_ok());
    }

    #[test]
    fn a_key_index_counts_against_the_records_that_fit() {
        // The array index costs nothing; a hash index adds its bytes per key to each record.
        let array = stated_max_records(
            &args_with(21 * GB, &["-p", "silo", "--records", "268435456"]).unwrap_err(),
        );
        for index in ["hash", "ordered"] {
            let err = args_with(
                21 * GB,
                &["-p", "silo", "--records", "268435456", "--index", index],
            )
            .unwrap_err();
            let max = stated_max_records(&err);
            assert!(max < array, "--index {index}: {max} vs {array}");
            let fits = max.to_string();
            args_with(
                21 * GB,
                &["-p", "silo", "--records", &fits, "--index", index],
            )
            .expect("the stated maximum fits");
        }
    }

    #[test]
    fn the_largest_record_metadata_of_the_run_sets_the_stride() {
        // 40 bytes of payload: 64-byte records for nocc (no metadata), 128 for protocols whose
        // metadata takes more than 24 bytes; the run's estimate follows its largest.
        let flags = |p| {
            [
                "--records",
                "100000000",
                "--payload",
                "40",
                "-p",
                p,
                "-t",
                "1",
            ]
        };
        let memory = 7 * GB; // 6.3 GB usable: 6.4 GB of 64-byte records do not fit
        let max = |p| stated_max_records(&args_with(memory, &flags(p)).unwrap_err());
        assert!(max("nocc") > 90_000_000, "{}", max("nocc"));
        let options = ProtocolOptions::default();
        let widest = ProtocolKind::ALL
            .iter()
            .map(|p| p.record_meta_bytes(&options))
            .max()
            .unwrap();
        let all = max("all");
        assert_eq!(
            u128::from(all),
            round_down(
                (u128::from(memory) * 9 / 10 - u128::from(memory::WORKER_BYTES))
                    / record_stride(widest, 40) as u128
            )
        );
    }

    #[test]
    fn the_check_limit_defaults_from_memory_and_counts_in_the_estimate() {
        let c = args_with(16 * GB, &["--check", "--records", "1000"]).unwrap();
        let expected = (16 * GB / memory::DEFAULT_CHECK_SHARE / CHECK_BYTES_PER_OP as u64)
            .min(memory::MAX_DEFAULT_CHECK_OPS);
        assert_eq!(c.exec.check_limit_ops, expected);
        assert!(c.exec.record_history);
        let given = args_with(16 * GB, &["--check", "--check-limit", "1234"]).unwrap();
        assert_eq!(given.exec.check_limit_ops, 1234);
        assert_eq!(args(&[]).unwrap().exec.check_limit_ops, 0, "no --check");
        // 73 million stamped records (14.0 GB) leave 0.4 GB of 14.4 GB: the default yields.
        let big = args_with(16 * GB, &["-p", "silo", "--check", "--records", "73000000"]).unwrap();
        assert!(
            big.exec.check_limit_ops < expected / 2,
            "{}",
            big.exec.check_limit_ops
        );
        assert!(big.exec.check_limit_ops > 0);
        // A history that would not fit beside the tables names --check-limit.
        let err = args_with(
            16 * GB,
            &[
                "-p",
                "silo",
                "--check",
                "--records",
                "73000000",
                "--check-limit",
                "200000000",
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("--check-limit 200000000 needs about"), "{err}");
    }
}
