//! Validation: flags to a [`RunConfig`], every range check in one place, before any work.

use super::cli::{
    CSchedHelpArg, IndexArg, LockWaitArg, LogSyncArg, MoccLockArg, MoccTemperatureArg,
    PlorPriorityArg, RunArgs,
};
use super::memory::{self, AvailableMemory, DEFAULT_VERSION_MEMORY_MB, MemoryBudget, round_down};
use super::presets::{WORKLOADS, preset};
use super::{ConfigError, ExecConfig, MAX_PAYLOAD, MAX_THREADS, RunConfig};
use super::{Executor, ExecutorArg, KeyDistArg, MAX_QUEUE, MAX_WORKERS};
use crate::metrics::version_series::{MAX_SAMPLE_MS, MAX_VERSION_SAMPLES};
use crate::protocol::MvOptions;
use crate::protocol::ermia::MAX_ERMIA_WORKERS;
use crate::protocol::plor::MAX_PLOR_WORKERS;
use crate::protocol::twopl::MAX_WAITING_2PL_THREADS;
use crate::protocol::txn_table::MAX_TABLE_WORKERS;
use crate::protocol::{
    LockWait, MoccLockKind, MoccOptions, MoccTemperature, PlorOptions, PlorPriority, ProtocolKind,
    ProtocolOptions, TicTocOptions,
};
use crate::random::MAX_THETA;
use crate::storage::record_stride;
use crate::workload::WorkloadConfig;
use crate::workload::key_index::KeyIndexKind;
use crate::workload::long_scan::LongScanConfig;
use crate::workload::shifting::{MAX_LARGE_READS, MAX_SHIFT_PERIOD_MS, ShiftingConfig};
use crate::workload::write_skew::WriteSkewConfig;
use crate::workload::ycsb::KeyDist;
use crate::workload::ycsb::{MAX_DISTINCT_KEY_DRAWS, YcsbConfig, distinct_key_draws};

use std::time::Duration;

use super::cli::ArrivalArg;
use super::{ArrivalProcess, OpenLoop};

/// Largest `--rate` accepted, transactions per second (a gap of a nanosecond).
const MAX_RATE_TPS: f64 = 1e9;

pub(super) fn out_of_range(
    param: &'static str,
    value: impl ToString,
    allowed: impl Into<String>,
) -> ConfigError {
    ConfigError::OutOfRange {
        param,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// The error for a run whose workers (threads, or threads x queue under the coroutine executor)
/// exceed what `protocol` can name.
fn worker_limit(executor: Executor, threads: usize, max: usize, protocol: &str) -> ConfigError {
    match executor {
        Executor::Thread => out_of_range(
            "threads",
            threads,
            format!("1 <= threads <= {max} with protocol {protocol}"),
        ),
        Executor::Coro { queue } => out_of_range(
            "queue",
            queue,
            format!(
                "1 <= threads x queue <= {max} with protocol {protocol} (every in-flight \
                 transaction is a worker; threads {threads})"
            ),
        ),
    }
}

/// Parses a protocol list: `all`, one name, or names separated by commas.
pub fn parse_protocols(list: &str) -> Result<Vec<ProtocolKind>, ConfigError> {
    if list.trim().eq_ignore_ascii_case("all") {
        return Ok(ProtocolKind::ALL.to_vec());
    }
    if list.split(',').count() > 1
        && list
            .split(',')
            .any(|n| n.trim().eq_ignore_ascii_case("all"))
    {
        return Err(out_of_range(
            "protocol",
            list,
            "`all` alone (every protocol), or a comma list of protocol names without it",
        ));
    }
    let mut out = Vec::new();
    for name in list.split(',') {
        let p: ProtocolKind = name.parse()?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// The shortest measured period: the coordinator polls every 10 ms, and workers still starting
/// or finishing a transaction weigh more than the period itself below it.
const MIN_DURATION_S: f64 = 0.01;

fn seconds(param: &'static str, s: f64, allow_zero: bool) -> Result<Duration, ConfigError> {
    let least = if allow_zero { 0.0 } else { MIN_DURATION_S };
    let ok = s.is_finite() && s <= 86_400.0 && s >= least;
    if !ok {
        let allowed = if allow_zero {
            "0 <= seconds <= 86400"
        } else {
            "0.01 <= seconds <= 86400 (a shorter period measures the clock and the start of \
             the workers, not the protocol)"
        };
        return Err(out_of_range(param, s, allowed));
    }
    Ok(Duration::from_secs_f64(s))
}

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

/// Rejects the first flag in `flags` that was given (`true`) as not applying to `workload`: a
/// flag of another workload is an error, never silently ignored.
pub(super) fn reject_flags(
    workload: &'static str,
    flags: &[(&'static str, bool)],
) -> Result<(), ConfigError> {
    match flags.iter().find(|(_, given)| *given) {
        Some(&(param, _)) => Err(ConfigError::NotForWorkload { param, workload }),
        None => Ok(()),
    }
}

fn unit_interval(param: &'static str, v: f64) -> Result<f64, ConfigError> {
    if !(0.0..=1.0).contains(&v) {
        return Err(out_of_range(param, v, "0 <= value <= 1"));
    }
    Ok(v)
}
/// What a workload's data may take: the run's memory budget and the largest record metadata of
/// its protocols.
pub(super) struct Fit {
    pub(super) budget: MemoryBudget,
    pub(super) meta: usize,
}

impl Fit {
    /// Checks that `records` records plus `fixed_records` more (long-scan's hot table), all with
    /// `payload`-byte payloads, fit, with `index_bytes` of key index for each of the `records`;
    /// the error names `--records` with the most that fit.
    fn records(
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
    /// Validates the flags into a [`RunConfig`], sizing the run against the memory this process
    /// may use now ([`AvailableMemory::detect`]).
    pub fn validate(&self) -> Result<RunConfig, ConfigError> {
        self.validate_with(AvailableMemory::detect())
    }

    /// Validates the flags into a [`RunConfig`] for a process that may use `available` memory.
    pub fn validate_with(&self, available: AvailableMemory) -> Result<RunConfig, ConfigError> {
        let mut protocols = parse_protocols(&self.protocol)?;
        let duration = seconds("duration", self.duration, false)?;
        let warmup = seconds("warmup", self.warmup, true)?;
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        if threads == 0 || threads > MAX_THREADS {
            return Err(out_of_range(
                "threads",
                threads,
                format!("1 <= threads <= {MAX_THREADS}"),
            ));
        }
        if self.check_limit.is_some() && !self.check {
            return Err(ConfigError::NeedsFlag {
                param: "check-limit",
                needs: "check",
            });
        }
        let executor = self.executor(threads)?;
        // Every in-flight transaction is a protocol worker (its own id, timestamp, lock bits).
        let workers = executor.workers(threads);
        // DecentSched's table is sized (and limited) only when DecentSched runs.
        let mut options = self.protocol_options(
            workers,
            protocols.contains(&ProtocolKind::DecentSched),
            duration,
            warmup,
        )?;
        // Per thread: its stack and statistics (coroutines share their thread's).
        let budget = MemoryBudget::new(available, threads)?;
        // A checked run's rows carry a stamp: the same stride as metadata larger by the stamp
        // (both are rounded to words before the record is rounded to a cache line).
        let stamp = if self.check || self.log.is_some() {
            crate::storage::stamp::STAMP_BYTES
        } else {
            0
        };
        let fit = Fit {
            budget,
            meta: memory::meta_bytes(&protocols, &options) + stamp,
        };
        let workload = match self.workload.as_str() {
            "ycsb" => WorkloadConfig::Ycsb(self.ycsb_config(&fit)?),
            "long-scan" => WorkloadConfig::LongScan(self.long_scan_config(&fit)?),
            "tpcc" => WorkloadConfig::Tpcc(self.tpcc_config(duration + warmup, workers, &fit)?),
            "write-skew" => WorkloadConfig::WriteSkew(self.write_skew_config(&fit)?),
            "shifting" => WorkloadConfig::Shifting(self.shifting_config(&fit)?),
            other => {
                return Err(ConfigError::UnknownName {
                    param: "workload",
                    value: other.to_string(),
                    allowed: WORKLOADS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        };
        // What the tables and indexes take once loaded (TPC-C's tables grow from there).
        let data = match &workload {
            WorkloadConfig::Tpcc(c) => super::tpcc::tpcc_bytes(c, fit.meta),
            _ => memory::data_bytes(&workload.tables(), &workload.indexes(), fit.meta),
        } + workload.key_index_bytes();
        let check_limit_ops = if self.check {
            budget.check_limit(data, self.check_limit)?
        } else {
            0
        };
        let history =
            u128::from(check_limit_ops) * crate::check::history::CHECK_BYTES_PER_OP as u128;
        let versions = self.version_memory(
            &budget,
            data + history,
            &protocols,
            &workload,
            workers,
            &mut options,
        )?;
        let table_memory_bytes = self.table_memory(&budget, data, check_limit_ops, versions)?;

        if workers > MAX_WAITING_2PL_THREADS {
            if let Some(p) = protocols
                .iter()
                .find(|p| matches!(p, ProtocolKind::WaitDie | ProtocolKind::WoundWait))
            {
                return Err(worker_limit(
                    executor,
                    threads,
                    MAX_WAITING_2PL_THREADS,
                    p.name(),
                ));
            }
        }
        if workers > MAX_PLOR_WORKERS && protocols.contains(&ProtocolKind::Plor) {
            return Err(worker_limit(executor, threads, MAX_PLOR_WORKERS, "plor"));
        }
        // `all` means every protocol that can run the workload: the deterministic ones only
        // where it declares access sets (so `run -w tpcc` keeps working with the full mix).
        if self.protocol.trim().eq_ignore_ascii_case("all") && workload.cannot_declare().is_some() {
            protocols.retain(|p| !p.needs_declared_set());
        }
        if let Some(p) = protocols.iter().find(|p| p.needs_declared_set())
            && let Some(why) = workload.cannot_declare()
        {
            return Err(ConfigError::CannotDeclare {
                protocol: p.name(),
                why,
            });
        }
        // 2PL with early release shows writes before their commit: `all` leaves it out where
        // transactions abort by their own logic, and naming it there is an error.
        if let Some(why) = workload.user_aborts() {
            if self.protocol.trim().eq_ignore_ascii_case("all") {
                protocols.retain(|p| *p != ProtocolKind::TwoPlEr);
            }
            if protocols.contains(&ProtocolKind::TwoPlEr) {
                return Err(ConfigError::UserAborts {
                    protocol: ProtocolKind::TwoPlEr.name(),
                    why,
                });
            }
        }
        if workers > MAX_ERMIA_WORKERS && protocols.contains(&ProtocolKind::Ermia) {
            return Err(worker_limit(executor, threads, MAX_ERMIA_WORKERS, "ermia"));
        }
        if workers > MAX_TABLE_WORKERS
            && self.skip_in_flight
            && protocols.contains(&ProtocolKind::Si)
        {
            return Err(worker_limit(
                executor,
                threads,
                MAX_TABLE_WORKERS,
                "si --skip-in-flight",
            ));
        }
        if self.read_phase_extension > 1_000_000_000 {
            return Err(out_of_range(
                "read-phase-extension",
                self.read_phase_extension,
                "0 <= ns <= 1000000000",
            ));
        }
        if self.core_slice_us > 1_000_000 {
            return Err(out_of_range(
                "core-slice-us",
                self.core_slice_us,
                "0 <= us <= 1000000",
            ));
        }
        if self.repeat == 0 || self.repeat > 1000 {
            return Err(out_of_range("repeat", self.repeat, "1 <= repeat <= 1000"));
        }
        let open_loop = self.open_loop(executor)?;
        let interactive = self.interactive_mode(executor, open_loop.is_some(), &mut protocols)?;
        let log = self.log_settings(&protocols, executor)?;
        if log.is_some() && interactive.is_some() {
            return Err(ConfigError::Log(
                "logging runs in process only (not with --interactive or --connect)".to_string(),
            ));
        }
        Ok(RunConfig {
            protocols,
            preset: self.preset.clone(),
            workload,
            exec: ExecConfig {
                threads,
                duration,
                warmup,
                seed: self.seed,
                record_history: self.check,
                check_limit_ops,
                adaptive_backoff: self.backoff,
                read_phase_extension_ns: self.read_phase_extension,
                pin_threads: !self.no_pin,
                core_slice: std::time::Duration::from_micros(self.core_slice_us),
            },
            options,
            check: self.check,
            repeat: self.repeat,
            format: self.format,
            executor,
            open_loop,
            interactive,
            table_memory_bytes,
            progress: self.progress,
            log,
        })
    }

    /// `--log`, `--log-sync`, `--log-group-us`, `--log-acks`: the log's settings, after
    /// checking that the directory can take a new log and that the run can be logged (one
    /// protocol, one repetition, the thread executor).
    fn log_settings(
        &self,
        protocols: &[ProtocolKind],
        executor: Executor,
    ) -> Result<Option<crate::log::LogSettings>, ConfigError> {
        use crate::log::{DEFAULT_GROUP_US, LogSettings, LogSync};
        let Some(dir) = &self.log else {
            for (given, param) in [
                (self.log_sync.is_some(), "log-sync"),
                (self.log_group_us.is_some(), "log-group-us"),
                (self.log_acks.is_some(), "log-acks"),
            ] {
                if given {
                    return Err(ConfigError::NeedsFlag {
                        param,
                        needs: "log",
                    });
                }
            }
            return Ok(None);
        };
        let group_us = self.log_group_us.unwrap_or(DEFAULT_GROUP_US);
        if !(100..=1_000_000).contains(&group_us) {
            return Err(out_of_range(
                "log-group-us",
                group_us,
                "100 <= microseconds <= 1000000",
            ));
        }
        if protocols.len() != 1 || self.repeat != 1 {
            return Err(ConfigError::Log(format!(
                "a log holds one run: give one --protocol (not {}) and --repeat 1",
                self.protocol
            )));
        }
        if executor != Executor::Thread {
            return Err(ConfigError::Log(
                "logging runs with --executor thread only (the coroutine executor cannot yet \
                 wait for durability without blocking its thread's other transactions)"
                    .to_string(),
            ));
        }
        crate::log::files::check_log_dir(dir).map_err(|e| ConfigError::Log(e.to_string()))?;
        if let Some(acks) = &self.log_acks
            && !acks.is_dir()
        {
            return Err(ConfigError::Log(format!(
                "--log-acks {} is not an existing directory",
                acks.display()
            )));
        }
        Ok(Some(LogSettings {
            dir: dir.clone(),
            sync: match self.log_sync {
                None | Some(LogSyncArg::Group) => LogSync::Group,
                Some(LogSyncArg::Txn) => LogSync::Txn,
                Some(LogSyncArg::None) => LogSync::None,
            },
            group: Duration::from_micros(group_us),
            acks: self.log_acks.clone(),
            run_args: Vec::new(),
        }))
    }

    /// `--sample-ms` for a run of `run` (warm-up and duration): 1..=60000 ms, with at most
    /// [`MAX_VERSION_SAMPLES`] samples over the run; by default
    /// [`DEFAULT_VERSION_SAMPLE_MS`](crate::protocol::DEFAULT_VERSION_SAMPLE_MS), or the
    /// shortest interval that keeps a longer run within the samples.
    fn sample_ms(&self, run: Duration) -> Result<u64, ConfigError> {
        let run_ms = run.as_millis();
        let least = run_ms.div_ceil(u128::from(MAX_VERSION_SAMPLES)).max(1);
        let Some(ms) = self.sample_ms else {
            let least = u64::try_from(least).unwrap_or(u64::MAX);
            return Ok(crate::protocol::DEFAULT_VERSION_SAMPLE_MS.max(least));
        };
        if ms == 0 || ms > MAX_SAMPLE_MS {
            return Err(out_of_range(
                "sample-ms",
                ms,
                format!("1 <= ms <= {MAX_SAMPLE_MS}"),
            ));
        }
        if u128::from(ms) < least {
            return Err(out_of_range(
                "sample-ms",
                ms,
                format!(
                    "{least} <= ms <= {MAX_SAMPLE_MS} for {:.1} s of warm-up and duration (at \
                     most {MAX_VERSION_SAMPLES} samples a run)",
                    run.as_secs_f64()
                ),
            ));
        }
        Ok(ms)
    }

    /// The version memory of a run with a multi-version protocol (`config::memory`, "The
    /// estimate"): sets the cap (`options.mv.version_memory_bytes`) and returns what the versions
    /// may take from the heap, with `used` bytes (tables, indexes, history) already planned; 0
    /// for a run without one. An explicit `--version-memory-mb` that does not fit beside the
    /// rest, or any cap below what the workers reserve ahead, is an error naming the flag and
    /// the most (or least) that works.
    fn version_memory(
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
    fn table_memory(
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

    /// `--rate` and `--arrival`: a positive, finite rate; the arrival process only with a rate;
    /// the thread executor only (the coroutine executor has no arrival clock).
    fn open_loop(&self, executor: Executor) -> Result<Option<OpenLoop>, ConfigError> {
        let Some(rate) = self.rate else {
            if self.arrival.is_some() {
                return Err(ConfigError::NeedsFlag {
                    param: "arrival",
                    needs: "rate",
                });
            }
            return Ok(None);
        };
        if !(rate.is_finite() && rate > 0.0 && rate <= MAX_RATE_TPS) {
            return Err(out_of_range(
                "rate",
                rate,
                format!("0 < rate <= {MAX_RATE_TPS:e} transactions per second"),
            ));
        }
        if matches!(executor, Executor::Coro { .. }) {
            return Err(out_of_range(
                "executor",
                "coro",
                "thread with --rate (the coroutine executor has no open-loop arrivals yet)",
            ));
        }
        let arrival = match self.arrival {
            None | Some(ArrivalArg::Poisson) => ArrivalProcess::Poisson,
            Some(ArrivalArg::Uniform) => ArrivalProcess::Uniform,
        };
        Ok(Some(OpenLoop {
            rate_tps: rate,
            arrival,
        }))
    }

    /// `--executor` and `--queue`: Q in range, only with the coroutine executor, and threads x Q
    /// within [`MAX_WORKERS`].
    fn executor(&self, threads: usize) -> Result<Executor, ConfigError> {
        match self.executor {
            ExecutorArg::Thread => {
                if self.queue.is_some() {
                    return Err(ConfigError::NeedsFlag {
                        param: "queue",
                        needs: "executor coro",
                    });
                }
                Ok(Executor::Thread)
            }
            ExecutorArg::Coro => {
                let queue = self.queue.unwrap_or(1);
                if queue == 0 || queue > MAX_QUEUE {
                    return Err(out_of_range(
                        "queue",
                        queue,
                        format!("1 <= queue <= {MAX_QUEUE}"),
                    ));
                }
                if threads * queue > MAX_WORKERS {
                    return Err(out_of_range(
                        "queue",
                        queue,
                        format!(
                            "1 <= threads x queue <= {MAX_WORKERS} (in-flight transactions; \
                             threads {threads})"
                        ),
                    ));
                }
                Ok(Executor::Coro { queue })
            }
        }
    }

    /// The protocol options, each within its range.
    fn protocol_options(
        &self,
        threads: usize,
        runs_decentsched: bool,
        duration: Duration,
        warmup: Duration,
    ) -> Result<ProtocolOptions, ConfigError> {
        if !(self.plor_slack.is_finite() && (0.0..=1e6).contains(&self.plor_slack)) {
            return Err(out_of_range(
                "plor-slack",
                self.plor_slack,
                "0 <= slack <= 1000000",
            ));
        }
        if self.plor_ro_threshold > 1_000_000 {
            return Err(out_of_range(
                "plor-ro-threshold",
                self.plor_ro_threshold,
                "0 <= aborts <= 1000000",
            ));
        }
        if self.silo_epoch_ms == 0 || self.silo_epoch_ms > 10_000 {
            return Err(out_of_range(
                "silo-epoch-ms",
                self.silo_epoch_ms,
                "1 <= ms <= 10000",
            ));
        }
        if self.mocc_threshold > 63 {
            return Err(out_of_range(
                "mocc-threshold",
                self.mocc_threshold,
                "0 <= H <= 63",
            ));
        }
        if self.gc_interval_us > 10_000_000 {
            return Err(out_of_range(
                "gc-interval-us",
                self.gc_interval_us,
                "0 <= us <= 10000000",
            ));
        }
        let version_memory_mb = self.version_memory_mb.unwrap_or(DEFAULT_VERSION_MEMORY_MB);
        if version_memory_mb == 0 || version_memory_mb > 1 << 24 {
            return Err(out_of_range(
                "version-memory-mb",
                version_memory_mb,
                "1 <= MiB <= 16777216",
            ));
        }
        if self.ds_queues == 0 || self.ds_queues > 1 << 24 {
            return Err(out_of_range(
                "ds-queues",
                self.ds_queues,
                "1 <= queues <= 16777216",
            ));
        }
        if self.ds_epoch_txns == 0 || self.ds_epoch_txns > 1 << 20 {
            return Err(out_of_range(
                "ds-epoch-txns",
                self.ds_epoch_txns,
                "1 <= transactions <= 1048576",
            ));
        }
        let table = crate::protocol::decentsched::table_bytes(threads, self.ds_epoch_txns);
        if runs_decentsched && table > crate::protocol::decentsched::MAX_TABLE_BYTES {
            let fits = (1..=self.ds_epoch_txns)
                .rev()
                .find(|&k| {
                    crate::protocol::decentsched::table_bytes(threads, k)
                        <= crate::protocol::decentsched::MAX_TABLE_BYTES
                })
                .unwrap_or(0);
            return Err(out_of_range(
                "ds-epoch-txns",
                self.ds_epoch_txns,
                format!(
                    "at most {fits} with {threads} threads (DecentSched's transaction table grows \
                     with threads^2 x transactions per epoch, capped at 1 GiB)"
                ),
            ));
        }
        if self.ds_epoch_us == 0 || self.ds_epoch_us > 10_000_000 {
            return Err(out_of_range(
                "ds-epoch-us",
                self.ds_epoch_us,
                "1 <= us <= 10000000",
            ));
        }
        if self.batch_size == 0 || self.batch_size > crate::protocol::batch::MAX_BATCH_SIZE {
            return Err(out_of_range(
                "batch-size",
                self.batch_size,
                "1 <= transactions <= 1024 (a batch holds one transaction per worker at most)",
            ));
        }
        if self.batch_timeout_us > 10_000_000 {
            return Err(out_of_range(
                "batch-timeout-us",
                self.batch_timeout_us,
                "0 <= us <= 10000000",
            ));
        }
        Ok(ProtocolOptions {
            lock_wait: match self.lock_wait {
                LockWaitArg::NoWait => LockWait::NoWait,
                LockWaitArg::Wait => LockWait::Wait,
            },
            tictoc: TicTocOptions {
                nowait_tt: self.tictoc_nowait_tt,
                preemptive_abort: self.tictoc_preemptive_abort,
                timestamp_history: self.tictoc_timestamp_history,
            },
            silo_epoch_ms: self.silo_epoch_ms,
            mocc: MoccOptions {
                threshold: self.mocc_threshold,
                temperature: match self.mocc_temperature {
                    MoccTemperatureArg::Page => MoccTemperature::Page,
                    MoccTemperatureArg::Record => MoccTemperature::Record,
                },
                lock: match self.mocc_lock {
                    MoccLockArg::Rw => MoccLockKind::Rw,
                    MoccLockArg::Mql => MoccLockKind::Mql,
                },
            },
            plor: PlorOptions {
                dwa: self.plor_dwa,
                ro_threshold: self.plor_ro_threshold,
                priority: match self.plor_priority {
                    PlorPriorityArg::Arrival => PlorPriority::Arrival,
                    PlorPriorityArg::Deadline => PlorPriority::Deadline,
                },
                slack: self.plor_slack,
            },
            threads,
            mv: MvOptions {
                gc_interval_us: self.gc_interval_us,
                version_reuse: !self.no_version_reuse,
                version_memory_bytes: usize::try_from(version_memory_mb << 20)
                    .unwrap_or(usize::MAX),
                aggressive_gc: self.aggressive_gc,
                aggressive_contiguous: self.aggressive_gc_contiguous,
                version_sample_ms: self.sample_ms(duration + warmup)?,
                skip_in_flight: self.skip_in_flight,
            },
            decentsched: crate::protocol::decentsched::DecentSchedOptions {
                queues: self.ds_queues,
                epoch_txns: self.ds_epoch_txns,
                epoch_us: self.ds_epoch_us,
                opportunistic: self.ds_opportunistic,
            },
            batch: crate::protocol::batch::BatchOptions {
                size: self.batch_size,
                timeout_us: self.batch_timeout_us,
            },
            aria: crate::protocol::aria::AriaOptions {
                reordering: self.aria_reordering,
            },
            calvin: crate::protocol::calvin::CalvinOptions {
                no_wait: self.calvin_no_wait,
            },
            c_sched: crate::protocol::c_sched::CSchedOptions {
                help: match self.c_sched_help {
                    CSchedHelpArg::Auto => crate::protocol::c_sched::SchedulerHelp::Auto,
                    CSchedHelpArg::Always => crate::protocol::c_sched::SchedulerHelp::Always,
                    CSchedHelpArg::Never => crate::protocol::c_sched::SchedulerHelp::Never,
                },
            },
            cicada: crate::protocol::CicadaOptions {
                early_abort: !self.cicada_no_early_abort,
                inlining: !self.cicada_no_inlining && !self.cicada_ccbench_build,
                precheck: !self.cicada_no_precheck,
                sort_by_contention: !self.cicada_no_sort && !self.cicada_ccbench_build,
                adaptive_skip: !self.cicada_no_adaptive_skip,
                backoff: !self.cicada_no_backoff,
            },
            ermia: crate::protocol::ErmiaOptions {
                early_exclusion: !self.ermia_no_early_check,
                prune_overwritten_reads: !self.ermia_no_read_pruning,
            },
        })
    }

    /// The YCSB parameters: the preset (YCSB-A by default) with explicit flags on top.
    fn ycsb_config(&self, fit: &Fit) -> Result<YcsbConfig, ConfigError> {
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
    pub(super) fn key_dist_flags(&self) -> [(&'static str, bool); 3] {
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
    pub(super) fn index_flag(&self) -> [(&'static str, bool); 1] {
        [("index", self.index.is_some())]
    }

    /// The flags only YCSB reads, each with whether it was given.
    pub(super) fn ycsb_only_flags(&self) -> [(&'static str, bool); 10] {
        [
            ("preset", self.preset.is_some()),
            ("ops", self.ops.is_some()),
            ("long-ops", self.long_ops.is_some()),
            ("long-share", self.long_share.is_some()),
            ("read-ratio", self.read_ratio.is_some()),
            ("writes", self.writes.is_some()),
            ("rmw", self.rmw),
            ("blind", self.blind),
            ("theta", self.theta.is_some()),
            ("long-txn-delay-us", self.long_txn_delay_us.is_some()),
        ]
    }

    /// The flags only long-scan reads, each with whether it was given.
    pub(super) fn long_scan_flags(&self) -> [(&'static str, bool); 2] {
        [
            ("hot-records", self.hot_records.is_some()),
            ("scan-length", self.scan_length.is_some()),
        ]
    }

    /// The long-scan parameters; other workloads' flags are an error here, not silently ignored.
    fn long_scan_config(&self, fit: &Fit) -> Result<LongScanConfig, ConfigError> {
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
    pub(super) fn shifting_flags(&self) -> [(&'static str, bool); 2] {
        [
            ("large-reads", self.large_reads.is_some()),
            ("shift-period-ms", self.shift_period_ms.is_some()),
        ]
    }

    /// The shifting workload's parameters: `--records` (the large table), `--hot-records` (the
    /// small one), `--large-reads`, `--shift-period-ms`, `--payload`; other workloads' flags are
    /// an error here.
    fn shifting_config(&self, fit: &Fit) -> Result<ShiftingConfig, ConfigError> {
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
    fn write_skew_config(&self, fit: &Fit) -> Result<WriteSkewConfig, ConfigError> {
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
    use super::*;
    use crate::check::history::CHECK_BYTES_PER_OP;
    use crate::config::{Cli, Command};
    use clap::Parser;

    const GB: u64 = 1_000_000_000;

    /// Validates `txbench run EXTRA` for a process that may use `memory` bytes.
    fn args_with(memory: u64, extra: &[&str]) -> Result<RunConfig, ConfigError> {
        let mut argv = vec!["txbench", "run"];
        argv.extend_from_slice(extra);
        let cli = Cli::try_parse_from(argv).expect("clap accepts the flags");
        match cli.command {
            Command::Run(a) => a.validate_with(AvailableMemory::given(memory)),
            _ => unreachable!("a run command line"),
        }
    }

    /// Validates `txbench run EXTRA` with 64 GiB, whatever the machine has.
    fn args(extra: &[&str]) -> Result<RunConfig, ConfigError> {
        args_with(64 << 30, extra)
    }

    #[test]
    fn defaults_are_ycsb_a_on_every_protocol() {
        let c = args(&[]).unwrap();
        assert_eq!(c.protocols, ProtocolKind::ALL.to_vec());
        assert_eq!(c.workload, WorkloadConfig::Ycsb(preset("ycsb-a").unwrap()));
    }

    #[test]
    fn deterministic_protocols_need_a_workload_that_declares() {
        let all = args(&["-w", "tpcc"]).unwrap();
        assert!(!all.protocols.iter().any(|p| p.needs_declared_set()));
        assert!(all.protocols.contains(&ProtocolKind::Silo));
        let np = args(&["-w", "tpcc", "--mix", "np"]).unwrap();
        assert!(np.protocols.contains(&ProtocolKind::OrdLock));
        let err = args(&["-w", "tpcc", "-p", "silo,ord_lock"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ord_lock") && err.contains("--mix np"),
            "{err}"
        );
    }

    #[test]
    fn early_release_is_refused_where_transactions_abort_by_their_own_logic() {
        let np = args(&["-w", "tpcc", "--mix", "np"]).unwrap();
        assert!(np.protocols.contains(&ProtocolKind::OrdLock));
        assert!(
            !np.protocols.contains(&ProtocolKind::TwoPlEr),
            "all leaves it out"
        );
        let err = args(&["-w", "tpcc", "--mix", "np", "-p", "ord_lock,twopl_er"]).unwrap_err();
        assert!(matches!(err, ConfigError::UserAborts { .. }), "{err}");
        let err = err.to_string();
        assert!(
            err.contains("twopl_er") && err.contains("New-Order") && err.contains("ycsb"),
            "{err}"
        );
        for w in ["ycsb", "long-scan"] {
            let c = args(&["-w", w, "-p", "twopl_er"]).unwrap();
            assert_eq!(c.protocols, [ProtocolKind::TwoPlEr]);
        }
    }

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

    #[test]
    fn the_version_sample_interval_defaults_to_100_ms_and_stretches_for_long_runs() {
        let mv = |a: &[&str]| args(a).unwrap().options.mv.version_sample_ms;
        assert_eq!(mv(&[]), crate::protocol::DEFAULT_VERSION_SAMPLE_MS);
        assert_eq!(mv(&["--sample-ms", "7"]), 7);
        // 20000.5 s at 100 000 samples: one every 201 ms (rounded up).
        assert_eq!(mv(&["-d", "20000"]), 201);
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let cases: &[(&[&str], &str)] = &[
            (&["--theta", "-0.5"], "--theta"),
            (&["--theta", "10.5"], "0 <= theta <= 10"),
            (&["--theta", "NaN"], "--theta"),
            (&["--theta", "inf"], "--theta"),
            (&["--theta", "10"], "16 distinct keys of --records"),
            (
                &["--theta", "2", "--records", "4096", "--ops", "4096"],
                "lower --theta or --ops",
            ),
            (&["--records", "0"], "--records"),
            (&["--records", "8", "--ops", "9"], "--ops"),
            (&["--read-ratio", "1.5"], "--read-ratio"),
            (&["--protocol", "bogus"], "--protocol"),
            (&["--threads", "0"], "--threads"),
            (&["--duration", "0"], "--duration"),
            (&["--protocol", "ermia", "--threads", "1025"], "--threads"),
            (&["--workload", "write-skew", "--records", "7"], "--records"),
            (&["--workload", "write-skew", "--theta", "0.5"], "--theta"),
            (
                &["--workload", "write-skew", "--payload", "16"],
                "--payload",
            ),
            (&["--version-memory-mb", "0"], "--version-memory-mb"),
            (&["--sample-ms", "0"], "1 <= ms <= 60000"),
            (&["--sample-ms", "60001"], "--sample-ms"),
            (
                &["--sample-ms", "1", "-d", "3600"],
                "37 <= ms <= 60000 for 3600.5 s",
            ),
            (&["--gc-interval-us", "20000000"], "--gc-interval-us"),
            (&["--preset", "ycsb-z"], "--preset"),
            (&["--ops", "4", "--writes", "5"], "--writes"),
            (&["--workload", "long-scan", "--theta", "0.5"], "--theta"),
            (&["--scan-length", "10"], "--scan-length does not apply"),
            (
                &[
                    "--workload",
                    "long-scan",
                    "--records",
                    "10",
                    "--scan-length",
                    "11",
                ],
                "--scan-length",
            ),
            (
                &["--workload", "long-scan", "--hot-records", "0"],
                "--hot-records",
            ),
            (
                &["--workload", "shifting", "--shift-period-ms", "0"],
                "1 <= ms <= 60000",
            ),
            (
                &["--workload", "shifting", "--shift-period-ms", "60001"],
                "--shift-period-ms",
            ),
            (
                &[
                    "--workload",
                    "shifting",
                    "--records",
                    "10",
                    "--large-reads",
                    "11",
                ],
                "1 <= reads <= min(records, 4096) = 10",
            ),
            (
                &["--workload", "shifting", "--large-reads", "0"],
                "--large-reads",
            ),
            (
                &["--workload", "shifting", "--hot-records", "0"],
                "--hot-records",
            ),
            (
                &["--workload", "shifting", "--scan-length", "5"],
                "--scan-length does not apply",
            ),
            (&["--workload", "shifting", "--theta", "0.5"], "--theta"),
            (&["--workload", "shifting", "--index", "hash"], "--index"),
            (
                &["--shift-period-ms", "50"],
                "--shift-period-ms does not apply",
            ),
            (
                &["--workload", "long-scan", "--large-reads", "5"],
                "--large-reads does not apply",
            ),
            (&["--mocc-threshold", "64"], "0 <= H <= 63"),
            (
                &["--check-limit", "10"],
                "--check-limit applies only with --check",
            ),
            (&["--check", "--check-limit", "0"], "--check-limit"),
            (
                &["--records", "1099511627776"],
                "--records 1099511627776 needs about",
            ),
            (
                &["--workload", "long-scan", "--records", "1099511627776"],
                "--records",
            ),
            (
                &["--check", "--check-limit", "100000000000"],
                "--check-limit",
            ),
        ];
        for (flags, param) in cases {
            let err = args(flags).expect_err("must be rejected").to_string();
            assert!(err.contains(param), "{flags:?}: {err}");
        }
    }

    #[test]
    fn rate_and_arrival_are_validated() {
        let c = args(&["--rate", "2500", "--arrival", "uniform"]).unwrap();
        assert_eq!(
            c.open_loop,
            Some(OpenLoop {
                rate_tps: 2500.0,
                arrival: ArrivalProcess::Uniform
            })
        );
        let c = args(&["--rate", "10"]).unwrap();
        assert_eq!(c.open_loop.unwrap().arrival, ArrivalProcess::Poisson);
        assert_eq!(args(&[]).unwrap().open_loop, None);
        let cases: &[(&[&str], &str)] = &[
            (&["--rate", "0"], "invalid value '0' for --rate"),
            (&["--rate", "-5"], "--rate"),
            (&["--rate", "inf"], "--rate"),
            (&["--rate", "NaN"], "--rate"),
            (&["--rate", "2e9"], "0 < rate <= 1e9"),
            (
                &["--arrival", "poisson"],
                "--arrival applies only with --rate",
            ),
            (
                &["--rate", "100", "--executor", "coro"],
                "thread with --rate",
            ),
        ];
        for (flags, want) in cases {
            let err = args(flags).expect_err("must be rejected").to_string();
            assert!(err.contains(want), "{flags:?}: {err}");
        }
    }

    #[test]
    fn executor_and_queue_are_validated() {
        let c = args(&[
            "--executor",
            "coro",
            "--queue",
            "4",
            "-t",
            "2",
            "-p",
            "silo",
        ])
        .unwrap();
        assert_eq!(c.executor, Executor::Coro { queue: 4 });
        assert_eq!(
            c.options.threads, 8,
            "every in-flight transaction is a worker"
        );
        assert_eq!(c.exec.threads, 2);
        let deterministic = args(&[
            "--executor",
            "coro",
            "-p",
            "decentsched,ord_lock,calvin,c_sched",
        ])
        .expect("the coroutine slots declare and schedule");
        assert_eq!(deterministic.protocols.len(), 4);
        assert_eq!(args(&[]).unwrap().executor, Executor::Thread);
        let cases: &[(&[&str], &str)] = &[
            (
                &["--queue", "2"],
                "--queue applies only with --executor coro",
            ),
            (
                &["--executor", "coro", "--queue", "0"],
                "1 <= queue <= 1024",
            ),
            (
                &["--executor", "coro", "-t", "2", "--queue", "1024"],
                "1 <= threads x queue <= 1024",
            ),
            (
                &[
                    "--executor",
                    "coro",
                    "-p",
                    "wound_wait",
                    "-t",
                    "2",
                    "--queue",
                    "513",
                ],
                "invalid value '513' for --queue: allowed 1 <= threads x queue <= 1024",
            ),
        ];
        for (flags, msg) in cases {
            let err = args(flags).expect_err("must be rejected").to_string();
            assert!(err.contains(msg), "{flags:?}: {err}");
        }
    }

    /// WAIT_DIE, WOUND_WAIT, PLOR and ERMIA run up to 1024 workers; past their one-word (64) and
    /// two-word (127) lock bitmaps or reader registries the run's records carry the wide ones,
    /// which the memory estimate counts.
    #[test]
    fn lock_protocols_take_1024_workers_with_wide_records() {
        for (p, narrow_limit) in [
            ("wait_die", 64),
            ("wound_wait", 64),
            ("plor", 127),
            ("ermia", 64),
        ] {
            let meta = |flags: &[&str]| {
                let c = args(flags).unwrap_or_else(|e| panic!("{p} {flags:?}: {e}"));
                c.protocols[0].record_meta_bytes(&c.options)
            };
            let narrow = narrow_limit.to_string();
            let at_limit = meta(&["-p", p, "-t", &narrow]);
            let wide = narrow_limit + 1;
            let past = meta(&["-p", p, "-t", &wide.to_string()]);
            assert!(at_limit <= 48 && past > at_limit, "{p}: {at_limit} {past}");
            let coro = meta(&["-p", p, "--executor", "coro", "-t", "4", "--queue", "256"]);
            assert_eq!(coro, past, "{p}: 1024 coroutine workers use the wide lock");
        }
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
