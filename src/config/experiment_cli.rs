//! The flags of the experiment subcommands: `sweep`, `report`, `plot`, `merge`, `compare`.

use super::whole::Whole;
use clap::Args;
use std::path::PathBuf;

/// Flags of `txbench sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The experiment file (TOML).
    pub file: PathBuf,
    /// Results file to append to (default: the file's `results`, else results/NAME.jsonl).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Skip the runs the results file already holds (an interrupted sweep goes on).
    #[arg(long)]
    pub resume: bool,
    /// Run only point N (1-based, as --emit-jobs numbers them).
    #[arg(long, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub point: Option<usize>,
    /// Print one self-contained command per point (for GNU parallel or a Slurm job array)
    /// instead of running.
    #[arg(long)]
    pub emit_jobs: bool,
    /// With --emit-jobs: directory for the per-point results files (default: results/NAME.d).
    #[arg(long, requires = "emit_jobs")]
    pub jobs_dir: Option<PathBuf>,
    /// Override a base setting of the file, KEY=VALUE (a `txbench run` flag, or `repetitions`);
    /// repeatable. E.g. `--set duration=0.3 --set repetitions=1` for a quick run.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Validate the file and list its points without running.
    #[arg(long)]
    pub dry_run: bool,
}

/// Flags of `txbench merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Results files to combine, in order.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where to write the combined rows (default: stdout).
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

/// Flags of `txbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The results file.
    pub results: PathBuf,
    /// Metrics to tabulate, comma-separated (default: throughput, abort, p999; with p50, p99 and
    /// reexecutions for deterministic protocols). Also: max_attempts, wait_share, offered,
    /// check_transactions, check_cycles, check_anomalies, and for runs in a child process
    /// (`binary`) wall and max_rss.
    #[arg(long)]
    pub metric: Option<String>,
}

/// Flags of `txbench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The results file measured first (the baseline): a sweep's, or `txbench run --format
    /// json` output.
    pub old: PathBuf,
    /// The results file to compare with it.
    pub new: PathBuf,
    /// Metrics to compare, comma-separated (default: throughput, abort, p999); the keys of
    /// `txbench report --metric`.
    #[arg(long)]
    pub metric: Option<String>,
}

/// Flags of `txbench plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The results file.
    pub results: PathBuf,
    /// The swept parameter on the x axis (default: the first one other than the protocol).
    #[arg(long)]
    pub x: Option<String>,
    /// Directory for the figures (default: the results file's directory).
    #[arg(long, short = 'o')]
    pub out_dir: Option<PathBuf>,
    /// Image formats, comma-separated: png, svg.
    #[arg(long, default_value = "png,svg")]
    pub formats: String,
    /// The value of the x parameter at which to draw the latency distribution and the phase
    /// breakdown (default: its largest value, or its last when it is not a number).
    #[arg(long)]
    pub at: Option<String>,
    /// Plot only the runs at AXIS=VALUE of another swept parameter (repeatable), e.g.
    /// `--select threads=2`; the figures' names and captions carry it.
    #[arg(long, value_name = "AXIS=VALUE")]
    pub select: Vec<String>,
}
