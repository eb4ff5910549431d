//! Running a planned grid: every (point, repetition) run in order, each appended to the results
//! file as it finishes, with a progress bar on stderr (runs done, the current point, ETA) on a
//! terminal, and otherwise a progress line every few seconds. A point that names a `binary` runs
//! in a child process of it ([`child`](super::child)); the others run here.

use super::child::run_point;
use super::grid::Point;
use super::results::{BuildInfo, ResultRow, append_row, now_iso8601, open_for_append};
use super::run_log::RunLogDir;
use crate::config::RunConfig;
use crate::metrics::machine::MachineInfo;
use crate::runner::run_all;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::{HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::Path;

/// How often a sweep whose stderr is not a terminal writes a progress line (at most once a run).
const LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// What to run of a planned grid.
pub struct SweepPlan<'a> {
    /// The experiment's name, recorded in every row.
    pub experiment: &'a str,
    /// The points with their validated configurations.
    pub points: &'a [(Point, RunConfig)],
    /// Runs per point.
    pub repetitions: usize,
    /// Repetition-major order (every point once, then again) rather than point-major.
    pub interleave: bool,
    /// (point key, repetition) pairs already in the results file: skipped.
    pub done: &'a HashSet<(String, usize)>,
    /// The build of each executable the points name (`binary`), from [`probe`](super::child::probe).
    pub builds: &'a HashMap<String, BuildInfo>,
    /// Keep each run's log directory (`keep_logs`) instead of removing it after the run.
    pub keep_logs: bool,
}

impl SweepPlan<'_> {
    /// The (point position, repetition) runs still to do, in run order.
    pub fn runs(&self) -> Vec<(usize, usize)> {
        let (n, r) = (self.points.len(), self.repetitions);
        let order: Vec<(usize, usize)> = if self.interleave {
            (0..r)
                .flat_map(|rep| (0..n).map(move |p| (p, rep)))
                .collect()
        } else {
            (0..n)
                .flat_map(|p| (0..r).map(move |rep| (p, rep)))
                .collect()
        };
        order
            .into_iter()
            .filter(|&(p, rep)| !self.done.contains(&(self.points[p].0.key(), rep)))
            .collect()
    }
}

/// How a sweep ended.
#[derive(Debug, Default)]
pub struct SweepOutcome {
    /// Runs measured and appended.
    pub runs: usize,
    /// Runs of serializable protocols whose history check failed (with `check = true`).
    pub failed_checks: usize,
    /// Warnings the runs gave, with their point.
    pub warnings: Vec<String>,
    /// Ctrl-C stopped the sweep before its last run ([`interrupt`](crate::interrupt)).
    pub interrupted: bool,
}

/// Why a sweep stopped early.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The results file cannot be written.
    #[error("cannot write the results file {path}: {source}")]
    Results {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A run's tables could not be allocated.
    #[error("point {point}: {message}")]
    Run {
        /// The point.
        point: String,
        /// Why.
        message: String,
    },
}

/// Runs `plan`, appending each run's row to `results`.
pub fn run_sweep(plan: &SweepPlan<'_>, results: &Path) -> Result<SweepOutcome, SweepError> {
    let write_err = |source| SweepError::Results {
        path: results.display().to_string(),
        source,
    };
    let runs = plan.runs();
    let mut outcome = SweepOutcome::default();
    if runs.is_empty() {
        return Ok(outcome);
    }
    let mut file = open_for_append(results).map_err(write_err)?;
    let machine = MachineInfo::detect();
    let machine_json = serde_json::to_value(&machine).expect("machine serialises");
    let build = BuildInfo::current();
    let bar = ProgressBar::with_draw_target(Some(runs.len() as u64), ProgressDrawTarget::stderr());
    // Where stderr is not a terminal (a log file, a batch job), the bar is hidden: a line every
    // few seconds says how far the sweep is instead, so a logged sweep is never silent for long.
    let logged = !std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let mut last_line = started;
    bar.set_style(
        ProgressStyle::with_template("{bar:24} {pos}/{len} runs, ETA {eta}  {wide_msg}")
            .expect("the template is valid"),
    );
    for &(p, rep) in &runs {
        if crate::interrupt::interrupted() {
            outcome.interrupted = true;
            break;
        }
        let (point, cfg) = &plan.points[p];
        bar.set_message(format!(
            "point {}/{} rep {}/{}: {}",
            point.index + 1,
            plan.points.len(),
            rep + 1,
            plan.repetitions,
            point.key()
        ));
        let run_err = |message: String| SweepError::Run {
            point: point.key(),
            message,
        };
        // A logged point's run gets a fresh log directory of its own, removed when this
        // iteration ends (on every path out of it) unless the file keeps them.
        let log_dir = match point.log_parent() {
            Some(parent) => Some(
                RunLogDir::create(
                    Path::new(parent),
                    plan.experiment,
                    point.index,
                    rep,
                    plan.keep_logs,
                )
                .map_err(run_err)?,
            ),
            None => None,
        };
        let run_point_here = log_dir
            .as_ref()
            .map_or_else(|| point.clone(), |d| point.with_log_dir(d.path()));
        let (reports, measured_by) = match point.binary() {
            None => {
                // The sweep's own bar or lines show its progress; a run's phases would
                // interleave with them.
                let mut quiet = RunConfig {
                    progress: crate::metrics::progress::ProgressMode::Never,
                    ..cfg.clone()
                };
                if let (Some(log), Some(d)) = (&mut quiet.log, &log_dir) {
                    // As `txbench run` does: the manifest keeps the run's arguments, from
                    // which recovery rebuilds the loaded tables.
                    log.dir = d.path().to_path_buf();
                    log.run_args = crate::log::run_args_without_log_flags(&point.argv()[2..]);
                }
                let reports = run_all(&quiet, |_| {}).map_err(|e| run_err(e.to_string()))?;
                // Ctrl-C during the point: a point cut short (some of its protocols or rounds
                // not run) is not recorded; `--resume` runs it again whole.
                if reports.len() < cfg.protocols.len() * cfg.repeat {
                    outcome.interrupted = true;
                    break;
                }
                let reports = reports
                    .into_iter()
                    .map(|mut r| {
                        r.point = point.axes.clone();
                        r.to_json_value()
                    })
                    .collect::<Vec<_>>();
                (reports, build.clone())
            }
            Some(binary) => {
                // The child gets the Ctrl-C too (same process group) and stops early: its
                // point is not recorded.
                let child = match run_point(binary, &run_point_here) {
                    Err(_) if crate::interrupt::interrupted() => {
                        outcome.interrupted = true;
                        break;
                    }
                    other => other.map_err(run_err)?,
                };
                let reports = child
                    .reports
                    .into_iter()
                    .map(|mut r| {
                        r["point"] = serde_json::to_value(&point.axes).expect("labels serialise");
                        r["process"] = child.process.clone();
                        r
                    })
                    .collect();
                let measured_by = plan
                    .builds
                    .get(binary)
                    .cloned()
                    .unwrap_or_else(|| BuildInfo {
                        version: "unknown".into(),
                        commit: "unknown".into(),
                    });
                (reports, measured_by)
            }
        };
        for report in reports {
            let serializable = report["protocol_serializable"].as_bool() == Some(true);
            if serializable && report["check"]["passed"].as_bool() == Some(false) {
                outcome.failed_checks += 1;
            }
            let protocol = report["protocol"].as_str().unwrap_or("?");
            for w in report["warnings"].as_array().into_iter().flatten() {
                outcome.warnings.push(format!(
                    "{} ({protocol}): {}",
                    point.key(),
                    w.as_str().unwrap_or_default()
                ));
            }
            let row = ResultRow {
                experiment: plan.experiment.to_string(),
                point: point.axes.clone(),
                repetition: rep,
                args: point.args_map(),
                txbench: measured_by.clone(),
                time: now_iso8601(),
                machine: machine_json.clone(),
                report,
            };
            append_row(&mut file, &row).map_err(write_err)?;
        }
        outcome.runs += 1;
        bar.inc(1);
        if logged && (last_line.elapsed() >= LOG_EVERY || outcome.runs == runs.len()) {
            last_line = std::time::Instant::now();
            let done = outcome.runs;
            let elapsed = started.elapsed().as_secs_f64();
            let left = elapsed / done as f64 * (runs.len() - done) as f64;
            let _ = writeln!(
                std::io::stderr(),
                "sweep: {done}/{} runs done ({}, repetition {}), {elapsed:.0} s so far, about \
                 {left:.0} s left",
                runs.len(),
                point.key(),
                rep + 1
            );
        }
    }
    bar.finish_and_clear();
    Ok(outcome)
}
