//! The protocol options: every protocol's flags, each within its range, and the version sample
//! interval the multi-version protocols report at.

use super::out_of_range;
use crate::config::ConfigError;
use crate::config::cli::{
    CSchedHelpArg, LockWaitArg, MoccLockArg, MoccTemperatureArg, PlorPriorityArg, RunArgs,
};
use crate::config::memory::DEFAULT_VERSION_MEMORY_MB;
use crate::metrics::version_series::{MAX_SAMPLE_MS, MAX_VERSION_SAMPLES};
use crate::protocol::MvOptions;
use crate::protocol::{
    LockWait, MoccLockKind, MoccOptions, MoccTemperature, PlorOptions, PlorPriority,
    ProtocolOptions, TicTocOptions,
};

use std::time::Duration;

impl RunArgs {
    /// The protocol options, each within its range.
    pub(super) fn protocol_options(
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
                fallback: self.aria_fallback,
            },
            calvin: crate::protocol::calvin::CalvinOptions {
                no_wait: self.calvin_no_wait,
            },
            bohm: crate::protocol::bohm::PlacedOptions {
                no_wait: self.bohm_no_wait,
            },
            pwv: crate::protocol::bohm::PlacedOptions {
                no_wait: self.pwv_no_wait,
            },
            // Set from the workload once it is known (`validate`).
            user_aborts: false,
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
}

#[cfg(test)]
mod tests {
    use super::super::test_args::*;

    #[test]
    fn the_version_sample_interval_defaults_to_100_ms_and_stretches_for_long_runs() {
        let mv = |a: &[&str]| args(a).unwrap().options.mv.version_sample_ms;
        assert_eq!(mv(&[]), crate::protocol::DEFAULT_VERSION_SAMPLE_MS);
        assert_eq!(mv(&["--sample-ms", "7"]), 7);
        // 20000.5 s at 100 000 samples: one every 201 ms (rounded up).
        assert_eq!(mv(&["-d", "20000"]), 201);
    }
}
