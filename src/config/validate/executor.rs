//! The executor (`--executor`, `--queue`), its open-loop arrivals (`--rate`, `--arrival`) and
//! the durability log (`--log` and its settings).

use super::out_of_range;
use crate::config::cli::{ArrivalArg, LogKindArg, LogSyncArg, RunArgs};
use crate::config::{
    ArrivalProcess, ConfigError, Executor, ExecutorArg, MAX_QUEUE, MAX_WORKERS, OpenLoop,
};
use crate::protocol::ProtocolKind;

use std::time::Duration;

/// Largest `--checkpoint-s` accepted: a day.
const MAX_CHECKPOINT_S: f64 = 86_400.0;

/// Largest `--rate` accepted, transactions per second (a gap of a nanosecond).
const MAX_RATE_TPS: f64 = 1e9;

impl RunArgs {
    /// `--log`, `--log-sync`, `--log-group-us`, `--log-acks`: the log's settings, after
    /// checking that the directory can take a new log and that the run can be logged (one
    /// protocol, one repetition; `--log-sync txn` with the thread executor only).
    pub(super) fn log_settings(
        &self,
        protocols: &[ProtocolKind],
        executor: Executor,
        workers: usize,
    ) -> Result<Option<crate::log::LogSettings>, ConfigError> {
        use crate::log::{DEFAULT_GROUP_US, LogKind, LogSettings, LogSync};
        let Some(dir) = &self.log else {
            for (given, param) in [
                (self.log_sync.is_some(), "log-sync"),
                (self.log_kind.is_some(), "log-kind"),
                (self.log_group_us.is_some(), "log-group-us"),
                (self.log_acks.is_some(), "log-acks"),
                (self.log_files.is_some(), "log-files"),
                (self.checkpoint_s.is_some(), "checkpoint-s"),
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
        if let Some(files) = self.log_files
            && !(1..=workers.max(1)).contains(&files)
        {
            return Err(out_of_range(
                "log-files",
                files,
                format!("1 <= files <= {} (one per worker at most)", workers.max(1)),
            ));
        }
        let checkpoint = match self.checkpoint_s {
            None => None,
            Some(secs) if secs.is_finite() && secs > 0.0 && secs <= MAX_CHECKPOINT_S => {
                Some(Duration::from_secs_f64(secs))
            }
            Some(secs) => {
                return Err(out_of_range(
                    "checkpoint-s",
                    secs,
                    format!("0 < seconds <= {MAX_CHECKPOINT_S}"),
                ));
            }
        };
        if protocols.len() != 1 || self.repeat != 1 {
            return Err(ConfigError::Log(format!(
                "a log holds one run: give one --protocol (not {}) and --repeat 1",
                self.protocol
            )));
        }
        // A coroutine thread acknowledges its slots' commits as they become durable without
        // waiting (`exec::durable_acks`); `--log-sync txn` waits for a flush in the commit,
        // which would block the thread's other transactions, one of which may hold the very
        // epoch that flush must close.
        if executor != Executor::Thread && self.log_sync == Some(LogSyncArg::Txn) {
            return Err(ConfigError::Log(
                "--log-sync txn runs with --executor thread only: a commit that waits for its \
                 own flush would block its coroutine thread's other transactions, one of which \
                 may be committing in the epoch the flush must close (use --log-sync group or \
                 none)"
                    .to_string(),
            ));
        }
        let kind = match self.log_kind {
            None | Some(LogKindArg::Redo) => LogKind::Redo,
            Some(LogKindArg::Undo) => LogKind::Undo,
        };
        if kind == LogKind::Undo {
            self.check_undo(protocols[0], checkpoint.is_some())?;
        }
        if self.resume_log {
            crate::log::files::check_resumable_log_dir(dir)
        } else {
            crate::log::files::check_log_dir(dir)
        }
        .map_err(|e| ConfigError::Log(e.to_string()))?;
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
            kind,
            sync: match self.log_sync {
                None | Some(LogSyncArg::Group) => LogSync::Group,
                Some(LogSyncArg::Txn) => LogSync::Txn,
                Some(LogSyncArg::None) => LogSync::None,
            },
            group: Duration::from_micros(group_us),
            acks: self.log_acks.clone(),
            files: self.log_files,
            checkpoint,
            run_args: Vec::new(),
        }))
    }

    /// `--log-kind undo`: a protocol that holds a record from its first write to it
    /// ([`LogKind::supports`](crate::log::LogKind::supports)), PLOR without `--plor-dwa`, no
    /// checkpoints (nothing recovers an undo log), and neither a server nor interactive
    /// clients (a server recovers its log when it restarts).
    fn check_undo(&self, protocol: ProtocolKind, checkpoint: bool) -> Result<(), ConfigError> {
        use crate::log::LogKind;
        if !LogKind::Undo.supports(protocol) || (protocol == ProtocolKind::Plor && self.plor_dwa) {
            let names: Vec<&str> = LogKind::UNDO_PROTOCOLS.iter().map(|p| p.name()).collect();
            let given = if self.plor_dwa && protocol == ProtocolKind::Plor {
                "plor --plor-dwa (its write locks wait for commit)".to_string()
            } else {
                protocol.name().to_string()
            };
            return Err(ConfigError::Log(format!(
                "--log-kind undo logs a before-image at each first write, which needs a protocol \
                 that holds the record from that write on: {} (plor without --plor-dwa), not \
                 {given}",
                names.join(", ")
            )));
        }
        if checkpoint {
            return Err(ConfigError::Log(
                "--log-kind undo takes no --checkpoint-s: checkpoints serve recovery, and an \
                 undo log is not recoverable (the tables are in memory)"
                    .to_string(),
            ));
        }
        if self.resume_log || self.interactive || self.connect.is_some() {
            return Err(ConfigError::Log(
                "--log-kind undo runs with `txbench run` and its thread executor only, not a \
                 server or interactive clients (a server recovers its log on restart, which \
                 needs --log-kind redo)"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// `--rate` and `--arrival`: a positive, finite rate; the arrival process only with a rate;
    /// the thread executor only (the coroutine executor has no arrival clock).
    pub(super) fn open_loop(&self, executor: Executor) -> Result<Option<OpenLoop>, ConfigError> {
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
    pub(super) fn executor(&self, threads: usize) -> Result<Executor, ConfigError> {
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
}

#[cfg(test)]
mod tests {
    use super::super::test_args::*;
    use super::*;

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
}
