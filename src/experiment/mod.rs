//! Experiments as files: `txbench sweep FILE` runs the grid an experiment file describes and
//! appends one row per run to a results file; `txbench report`, `plot` and `merge` read results
//! files.
//!
//! Files: `file.rs` (the TOML format, with errors by line and field), `grid.rs` (points as
//! `txbench run` command lines, parsed and validated before any run), `sweep.rs` (running the
//! grid with progress), `child.rs` (points run by another txbench executable, `binary`), `run_log.rs` (each
//! run's fresh log directory, `log`), `results.rs` (the row format, reading, resuming, merging),
//! `compare.rs` (two results files against each other, by the runs' own noise).
//!
//! This module sits beside `main`, above [`runner`](crate::runner): it builds ordinary run
//! configurations through the same clap parser and validation as `txbench run`, so any run flag is
//! a sweep parameter.

pub mod child;
pub mod commands;
pub mod compare;
pub mod file;
pub mod grid;
pub mod plot;
mod plot_axis;
mod plot_breakdown;
mod plot_caption;
mod plot_draw;
mod plot_series;
mod plot_style;
pub mod results;
pub mod run_log;
pub mod summary;
pub mod sweep;

pub use file::{Experiment, FileError, parse_experiment};
pub use grid::{Point, plan, points, run_flags};
pub use results::{ResultRow, read_rows};
pub use sweep::{SweepPlan, run_sweep};
