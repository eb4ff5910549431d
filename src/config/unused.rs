//! Flags that were given but have no effect on the run: a protocol option when that protocol is
//! not selected, or a workload flag another flag overrides. They are warned about (the run is
//! still valid), never silently ignored. Flags of another workload are rejected outright in
//! `validate/workload.rs`.

use super::RunConfig;
use super::cli::{
    CSchedHelpArg, LockWaitArg, MoccLockArg, MoccTemperatureArg, PlorPriorityArg, RunArgs,
};
use crate::protocol::ProtocolKind;

impl RunArgs {
    /// Warnings for the flags of `self` that do not affect the validated run `cfg`.
    pub fn ineffective_flags(&self, cfg: &RunConfig) -> Vec<String> {
        use ProtocolKind::{
            Aria, Bohm, CSched, Calvin, DecentSched, Ermia, Mocc, Mvto, Plor, Pwv, Si, Silo, TicToc,
        };
        // (flag, given with a non-default value, the protocols it applies to)
        let options: &[(&str, bool, &[ProtocolKind])] = &[
            (
                "lock-wait",
                self.lock_wait != LockWaitArg::NoWait,
                &[Silo, TicToc],
            ),
            ("tictoc-nowait-tt", self.tictoc_nowait_tt, &[TicToc]),
            (
                "tictoc-preemptive-abort",
                self.tictoc_preemptive_abort,
                &[TicToc],
            ),
            (
                "tictoc-timestamp-history",
                self.tictoc_timestamp_history,
                &[TicToc],
            ),
            ("silo-epoch-ms", self.silo_epoch_ms != 40, &[Silo, Mocc]),
            ("mocc-threshold", self.mocc_threshold != 10, &[Mocc]),
            (
                "mocc-temperature",
                self.mocc_temperature != MoccTemperatureArg::Page,
                &[Mocc],
            ),
            ("mocc-lock", self.mocc_lock != MoccLockArg::Rw, &[Mocc]),
            ("plor-dwa", self.plor_dwa, &[Plor]),
            ("plor-ro-threshold", self.plor_ro_threshold != 3, &[Plor]),
            (
                "plor-priority",
                self.plor_priority != PlorPriorityArg::Arrival,
                &[Plor],
            ),
            ("plor-slack", self.plor_slack != 1.0, &[Plor]),
            ("ds-queues", self.ds_queues != 16_384, &[DecentSched]),
            ("ds-epoch-txns", self.ds_epoch_txns != 1024, &[DecentSched]),
            ("ds-epoch-us", self.ds_epoch_us != 1000, &[DecentSched]),
            ("ds-opportunistic", self.ds_opportunistic, &[DecentSched]),
            (
                "batch-size",
                self.batch_size != 1024,
                &[Aria, Calvin, Bohm, Pwv],
            ),
            (
                "batch-timeout-us",
                self.batch_timeout_us != 100,
                &[Aria, Calvin, Bohm, Pwv],
            ),
            ("aria-reordering", self.aria_reordering, &[Aria]),
            ("aria-fallback", self.aria_fallback, &[Aria]),
            ("calvin-no-wait", self.calvin_no_wait, &[Calvin]),
            ("bohm-no-wait", self.bohm_no_wait, &[Bohm]),
            ("pwv-no-wait", self.pwv_no_wait, &[Pwv]),
            (
                "c-sched-help",
                self.c_sched_help != CSchedHelpArg::Auto,
                &[CSched],
            ),
            (
                "gc-interval-us",
                self.gc_interval_us != 10,
                &[Si, Ermia, Mvto, ProtocolKind::Cicada],
            ),
            (
                "no-version-reuse",
                self.no_version_reuse,
                &[Si, Ermia, Mvto, ProtocolKind::Cicada, Bohm, Pwv],
            ),
            (
                "version-memory-mb",
                self.version_memory_mb.is_some(),
                &[Si, Ermia, Mvto, ProtocolKind::Cicada, Bohm, Pwv],
            ),
            ("aggressive-gc", self.aggressive_gc, &[Mvto]),
            (
                "aggressive-gc-contiguous",
                self.aggressive_gc_contiguous,
                &[Mvto],
            ),
            (
                "cicada-no-early-abort",
                self.cicada_no_early_abort,
                &[ProtocolKind::Cicada],
            ),
            (
                "cicada-no-inlining",
                self.cicada_no_inlining,
                &[ProtocolKind::Cicada],
            ),
            (
                "cicada-no-precheck",
                self.cicada_no_precheck,
                &[ProtocolKind::Cicada],
            ),
            (
                "cicada-no-sort",
                self.cicada_no_sort,
                &[ProtocolKind::Cicada],
            ),
            (
                "cicada-no-adaptive-skip",
                self.cicada_no_adaptive_skip,
                &[ProtocolKind::Cicada],
            ),
            (
                "cicada-no-backoff",
                self.cicada_no_backoff,
                &[ProtocolKind::Cicada],
            ),
            (
                "cicada-ccbench-build",
                self.cicada_ccbench_build,
                &[ProtocolKind::Cicada],
            ),
            ("skip-in-flight", self.skip_in_flight, &[Si, Ermia]),
            ("ermia-no-early-check", self.ermia_no_early_check, &[Ermia]),
            (
                "ermia-no-read-pruning",
                self.ermia_no_read_pruning,
                &[Ermia],
            ),
        ];
        let mut out = Vec::new();
        for &(flag, given, applies) in options {
            if given && !cfg.protocols.iter().any(|p| applies.contains(p)) {
                let names: Vec<&str> = applies.iter().map(|p| p.name()).collect();
                out.push(format!(
                    "--{flag} has no effect: it applies to {} and none is selected",
                    names.join(", ")
                ));
            }
        }
        if self.plor_slack != 1.0
            && self.plor_priority != PlorPriorityArg::Deadline
            && cfg.protocols.contains(&Plor)
        {
            out.push("--plor-slack has no effect without --plor-priority deadline".into());
        }
        // Every in-process run samples its rates; an interactive run's clients count elsewhere,
        // so there only the multi-version protocols' version samples remain.
        let multi_version = [Si, Ermia, Mvto, ProtocolKind::Cicada];
        if self.sample_ms.is_some()
            && cfg.interactive.is_some()
            && !cfg.protocols.iter().any(|p| multi_version.contains(p))
        {
            out.push(
                "--sample-ms has no effect: interactive runs record no rates over time, and no \
                 multi-version protocol (si, ermia, mvto, cicada) is selected"
                    .into(),
            );
        }
        if self.writes.is_some() && self.read_ratio.is_some() {
            out.push("--read-ratio has no effect: --writes sets the writes per transaction".into());
        }
        if self.long_ops.is_some() && self.long_share.is_none_or(|s| s == 0.0) {
            out.push("--long-ops has no effect without --long-share above 0".into());
        }
        if let (crate::workload::WorkloadConfig::Ycsb(y), Some(long)) =
            (&cfg.workload, self.long_ops)
            && long < y.ops
            && y.long_share > 0.0
        {
            out.push(format!(
                "--long-ops {long} is below --ops {}: the \"long\" transactions are the short ones",
                y.ops
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Cli, Command};
    use clap::Parser;

    fn warnings(args: &[&str]) -> Vec<String> {
        let mut argv = vec!["txbench", "run", "--records", "1000"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Run(a) => a.ineffective_flags(&a.validate().unwrap()),
            _ => unreachable!("a run command line"),
        }
    }

    #[test]
    fn options_of_unselected_protocols_are_named() {
        let w = warnings(&["-p", "silo", "--plor-dwa", "--mocc-threshold", "3"]);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("--mocc-threshold") && w[0].contains("mocc"),
            "{w:?}"
        );
        assert!(w[1].contains("--plor-dwa"), "{w:?}");
        assert!(warnings(&["-p", "silo,plor", "--plor-dwa"]).is_empty());
        assert!(warnings(&["-p", "all"]).is_empty());
        let w = warnings(&["-p", "mvto", "--cicada-no-sort"]);
        assert!(w.len() == 1 && w[0].contains("cicada"), "{w:?}");
        assert!(warnings(&["-p", "cicada", "--cicada-no-sort"]).is_empty());
    }

    #[test]
    fn options_added_later_are_named_too() {
        let w = warnings(&[
            "-p",
            "silo",
            "--ds-queues",
            "8",
            "--ds-epoch-us",
            "5",
            "--version-memory-mb",
            "64",
            "--aggressive-gc",
        ]);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(
            w[0].contains("--ds-queues") && w[0].contains("decentsched"),
            "{w:?}"
        );
        assert!(w[1].contains("--ds-epoch-us"), "{w:?}");
        assert!(w[2].contains("--version-memory-mb") && w[2].contains("si, ermia, mvto"));
        assert!(
            w[3].contains("--aggressive-gc") && w[3].contains("mvto"),
            "{w:?}"
        );
        assert!(warnings(&["-p", "si", "--gc-interval-us", "0", "--no-version-reuse"]).is_empty());
        assert!(warnings(&["-p", "mvto", "--aggressive-gc"]).is_empty());
        assert!(warnings(&["-p", "decentsched", "--ds-epoch-txns", "16"]).is_empty());
    }

    #[test]
    fn overridden_workload_flags_are_named() {
        let w = warnings(&["-p", "silo", "--writes", "2", "--read-ratio", "0.5"]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("--read-ratio"), "{w:?}");
        let w = warnings(&["-p", "plor", "--plor-slack", "2"]);
        assert!(w[0].contains("--plor-priority deadline"), "{w:?}");
        let w = warnings(&["-p", "silo", "--ds-opportunistic"]);
        assert!(
            w.len() == 1 && w[0].contains("--ds-opportunistic") && w[0].contains("decentsched"),
            "{w:?}"
        );
        let w = warnings(&["--ops", "16", "--long-ops", "2", "--long-share", "0.5"]);
        assert!(
            w.len() == 1 && w[0].contains("--long-ops 2 is below --ops 16"),
            "{w:?}"
        );
        assert!(warnings(&["--ops", "2", "--long-ops", "16", "--long-share", "0.5"]).is_empty());
    }

    #[test]
    fn sample_ms_applies_to_every_in_process_run() {
        assert!(warnings(&["-p", "silo", "--sample-ms", "10"]).is_empty());
        let w = warnings(&["-p", "silo", "--interactive", "--sample-ms", "10"]);
        assert!(w.len() == 1 && w[0].contains("--sample-ms"), "{w:?}");
        assert!(warnings(&["-p", "si", "--interactive", "--sample-ms", "10"]).is_empty());
    }
}
