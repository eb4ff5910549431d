//! Validation: flags to a [`RunConfig`], every range check in one place, before any work.
//!
//! One file per area of the run: [`workload`] (each workload's parameters and the flags that
//! belong to another), [`protocol`] (the protocol options), [`executor`] (the executor, its
//! open-loop arrivals and the durability log) and [`sizing`] (what the data, the versions and
//! the tables may take of the memory budget). This file holds the entry point, which calls them
//! in order, and the checks that span areas (worker limits, protocols a workload cannot run).

mod executor;
mod protocol;
mod sizing;
mod workload;

pub(super) use sizing::Fit;

use super::memory::{self, AvailableMemory, MemoryBudget};
use super::presets::WORKLOADS;
use super::{ConfigError, ExecConfig, Interactive, MAX_THREADS, RunConfig};
use super::{Executor, cli::RunArgs};
use crate::protocol::ProtocolKind;
use crate::protocol::ermia::MAX_ERMIA_WORKERS;
use crate::protocol::plor::MAX_PLOR_WORKERS;
use crate::protocol::twopl::MAX_WAITING_2PL_THREADS;
use crate::protocol::txn_table::MAX_TABLE_WORKERS;
use crate::workload::WorkloadConfig;

use std::time::Duration;

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
        // PWV's commit point depends on it (`protocol::pwv`).
        options.user_aborts = workload.user_aborts().is_some();
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
        if interactive.is_some() {
            // A client may abort any transaction, or vanish mid-way (the server then aborts
            // it): PWV puts its commit point at the commit, as for workloads that roll back.
            options.user_aborts = true;
        }
        if matches!(interactive, Some(Interactive::Connect { .. }))
            && matches!(workload, WorkloadConfig::Tpcc(_))
        {
            // The programs would panic on the index, and collide on the slots.
            return Err(out_of_range(
                "workload",
                "tpcc",
                "ycsb, long_scan, write_skew or shifting with --connect: tpcc's programs keep \
                 state beside the server's tables (CUSTOMER by last name, each district's next \
                 HISTORY slot) that a client process does not have; run tpcc with \
                 --interactive",
            ));
        }
        let log = self.log_settings(&protocols, executor, workers)?;
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
                core_seats: !self.no_core_seats,
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
}

/// The command lines the tests of every area validate.
#[cfg(test)]
mod test_args {
    use super::*;
    use crate::config::{Cli, Command};
    use clap::Parser;

    pub(super) const GB: u64 = 1_000_000_000;

    /// Validates `txbench run EXTRA` for a process that may use `memory` bytes.
    pub(super) fn args_with(memory: u64, extra: &[&str]) -> Result<RunConfig, ConfigError> {
        let mut argv = vec!["txbench", "run"];
        argv.extend_from_slice(extra);
        let cli = Cli::try_parse_from(argv).expect("clap accepts the flags");
        match cli.command {
            Command::Run(a) => a.validate_with(AvailableMemory::given(memory)),
            _ => unreachable!("a run command line"),
        }
    }

    /// Validates `txbench run EXTRA` with 64 GiB, whatever the machine has.
    pub(super) fn args(extra: &[&str]) -> Result<RunConfig, ConfigError> {
        args_with(64 << 30, extra)
    }
}

#[cfg(test)]
mod tests {
    use super::test_args::*;
    use super::*;
    use crate::config::presets::preset;

    #[test]
    fn defaults_are_ycsb_a_on_every_protocol() {
        let c = args(&[]).unwrap();
        assert_eq!(c.protocols, ProtocolKind::ALL.to_vec());
        assert_eq!(c.workload, WorkloadConfig::Ycsb(preset("ycsb-a").unwrap()));
    }

    /// `--interactive` serves every protocol but 2PL with early release (`-p all` drops it,
    /// naming it is an error), and PWV makes nothing visible before its commit there (a client
    /// may abort anywhere), while an in-process YCSB run lets it.
    #[test]
    fn interactive_runs_serve_every_protocol_but_early_release() {
        let all = args(&["--interactive", "-p", "all"]).unwrap();
        let mut served = ProtocolKind::ALL.to_vec();
        served.retain(|p| *p != ProtocolKind::TwoPlEr);
        assert_eq!(all.protocols, served);
        assert!(all.options.user_aborts);
        assert!(!args(&["-p", "pwv"]).unwrap().options.user_aborts);
        let batches = args(&["--interactive", "-p", "decentsched,aria,calvin,bohm,pwv"]).unwrap();
        assert_eq!(batches.protocols.len(), 5);
        let err = args(&["--interactive", "-p", "silo,twopl_er"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("twopl_er"), "{err}");
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
}
