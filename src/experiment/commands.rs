//! The experiment subcommands as the command line runs them: `sweep`, `merge`, `report`,
//! `compare`, `plot`. Each returns its exit status (2 for bad input, 1 when a run failed its
//! check or the results cannot be written, 0 otherwise); stdout goes through [`Output`], so no
//! write error panics.

use super::file::{Experiment, FileError, parse_experiment};
use super::grid::{
    Grid, MAX_POINTS, Point, binary_variables, check_settings, plan, plan_point, run_flags,
};
use super::results::BuildInfo;
use super::results::{ResultRow, done, merge, read_rows};
use super::summary::{markdown_with, parse_metrics};
use super::sweep::{SweepPlan, run_sweep};
use crate::config::{CompareArgs, MergeArgs, PlotArgs, ReportArgs, SweepArgs};
use crate::metrics::output::{Output, OutputError};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes a line to stderr; a failure there is ignored (there is nowhere left to report it).
fn note(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Quotes `s` for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// The largest experiment file read: a hand-written grid is a few kilobytes.
const MAX_EXPERIMENT_BYTES: u64 = 4 << 20;

/// `txbench sweep FILE`.
pub fn sweep_command(args: &SweepArgs, out: &mut Output<impl Write>) -> Result<u8, OutputError> {
    let file = args.file.display().to_string();
    let text = match super::results::read_small_text(&args.file, MAX_EXPERIMENT_BYTES) {
        Ok(t) => t,
        Err(e) => {
            note(format_args!("error: cannot read the experiment file {e}"));
            return Ok(2);
        }
    };
    let flags = run_flags();
    let parsed = parse_experiment(&file, &text, &flags).and_then(|mut exp| {
        for assignment in &args.set {
            exp.override_setting(assignment, &flags)
                .map_err(|message| FileError {
                    file: file.clone(),
                    line: None,
                    message,
                })?;
        }
        check_settings(&exp, &file)?;
        let grid = Grid::of(&exp, &file)?;
        Ok((exp, grid))
    });
    let (exp, grid) = match parsed {
        Ok(p) => p,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| PathBuf::from(&exp.results));
    if let Some(n) = args.point {
        if n == 0 || grid.len().is_some_and(|len| n > len) {
            note(format_args!(
                "error: invalid value '{n}' for --point: allowed 1 <= point <= {}",
                grid.len().map_or_else(|| "2^64".into(), |l| l.to_string())
            ));
            return Ok(2);
        }
        if let Some(p) = grid.point(n - 1).filter(|p| grid.excluded(p)) {
            note(format_args!(
                "error: invalid value '{n}' for --point: point {n} ({}) is left out by the \
                 file's `exclude`",
                p.key()
            ));
            return Ok(2);
        }
    }
    // A grid too large to plan whole (`MAX_POINTS`) is listed, and its points run one by one,
    // point by point: each validated as it comes.
    let huge = grid.len().is_none_or(|n| n > MAX_POINTS);
    if (args.dry_run || args.emit_jobs) && huge && args.point.is_none() {
        let mut builds = HashMap::new();
        let mut index = 0;
        while let Some(p) = grid.point(index) {
            index += 1;
            if grid.excluded(&p) {
                continue;
            }
            let planned = match plan_point(p, &file) {
                Ok(planned) => [planned],
                Err(e) => {
                    note(format_args!("error: {e}"));
                    return Ok(2);
                }
            };
            match probe_binaries(&planned, &file) {
                Ok(b) => builds.extend(b),
                Err(e) => {
                    note(format_args!("error: {e}"));
                    return Ok(2);
                }
            }
            out.line(&job_line(args, &exp, &file, &planned[0].0))?;
        }
        return Ok(0);
    }
    let planned = match args.point {
        // One point of a huge grid: planned alone.
        Some(n) if huge => grid
            .point(n - 1)
            .ok_or_else(|| FileError {
                file: file.clone(),
                line: None,
                message: format!("the grid has no point {n}"),
            })
            .and_then(|p| plan_point(p, &file))
            .map(|planned| vec![planned]),
        _ => plan(&exp, &file),
    };
    let (planned, builds) = match planned.and_then(|planned| {
        let builds = probe_binaries(&planned, &file)?;
        Ok((planned, builds))
    }) {
        Ok(p) => p,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    let selected: Vec<_> = match args.point {
        Some(_) if huge => planned.clone(),
        // `--point` counts every point of the grid, excluded ones too (checked above).
        Some(n) => planned
            .iter()
            .filter(|(p, _)| p.index == n - 1)
            .cloned()
            .collect(),
        None => planned.clone(),
    };
    if args.dry_run || args.emit_jobs {
        for (p, _) in &selected {
            out.line(&job_line(args, &exp, &file, p))?;
        }
        return Ok(0);
    }
    let existing = if results.exists() {
        match read_rows(&results) {
            Ok(r) => r,
            Err(e) => {
                note(format_args!("error: {e}"));
                return Ok(2);
            }
        }
    } else {
        Default::default()
    };
    if let Some(line) = existing.truncated_line {
        note(format_args!(
            "warning: {} line {line} was cut off (an interrupted write); it is ignored",
            results.display()
        ));
    }
    if let Err(message) = same_experiment(&existing.rows, &exp.name, &planned, &grid, &file) {
        note(format_args!(
            "error: {}: {message}; pass --results to write elsewhere",
            results.display()
        ));
        return Ok(2);
    }
    let already = done(&existing.rows, &exp.name);
    if !args.resume && !already.is_empty() {
        note(format_args!(
            "error: {} already holds {} runs of experiment {}: pass --resume to skip them, or \
             --results to write elsewhere",
            results.display(),
            already.len(),
            exp.name
        ));
        return Ok(2);
    }
    let sweep = SweepPlan {
        experiment: &exp.name,
        points: &selected,
        repetitions: exp.repetitions,
        interleave: exp.interleave,
        done: &already,
        builds: &builds,
        keep_logs: exp.keep_logs,
    };
    let todo = sweep.runs().len();
    let total = selected.len() * exp.repetitions;
    note(format_args!(
        "{}: {} x {}; {todo} runs to do{} -> {}",
        exp.name,
        plural(selected.len(), "point"),
        plural(exp.repetitions, "repetition"),
        if todo < total {
            format!(" ({} already in the results file)", total - todo)
        } else {
            String::new()
        },
        results.display()
    ));
    crate::interrupt::install();
    match run_sweep(&sweep, &results) {
        Ok(outcome) => {
            for w in &outcome.warnings {
                note(format_args!("warning: {w}"));
            }
            note(format_args!(
                "{} runs appended to {}",
                outcome.runs,
                results.display()
            ));
            if outcome.interrupted {
                let mut again = vec![
                    "txbench".to_string(),
                    "sweep".into(),
                    file.clone(),
                    "--resume".into(),
                ];
                if args.results.is_some() {
                    again.extend(["--results".into(), results.display().to_string()]);
                }
                if let Some(n) = args.point {
                    again.extend(["--point".into(), n.to_string()]);
                }
                for a in &args.set {
                    again.extend(["--set".into(), a.clone()]);
                }
                let again: Vec<String> = again.iter().map(|w| shell_quote(w)).collect();
                note(format_args!(
                    "interrupted: {} of {todo} runs kept in {} ({} still to do); `{}` \
                     continues",
                    outcome.runs,
                    results.display(),
                    todo - outcome.runs,
                    again.join(" ")
                ));
                return Ok(crate::interrupt::EXIT_INTERRUPTED);
            }
            if outcome.failed_checks > 0 {
                note(format_args!(
                    "error: {} runs of serializable protocols failed the check",
                    outcome.failed_checks
                ));
                return Ok(1);
            }
            Ok(0)
        }
        Err(e) => {
            note(format_args!("error: {e}"));
            Ok(1)
        }
    }
}

/// What `--dry-run` (the point's command line) or `--emit-jobs` (a self-contained command that
/// runs the point into its own results file) prints for point `p`.
fn job_line(args: &SweepArgs, exp: &Experiment, file: &str, p: &Point) -> String {
    let dir = args
        .jobs_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/{}.d", exp.name)));
    let exe = std::env::args().next().unwrap_or_else(|| "txbench".into());
    if args.emit_jobs {
        let part = dir.join(format!("{}.point-{:04}.jsonl", exp.name, p.index + 1));
        // The variables the file's `binary` settings name travel with the command.
        let mut words: Vec<String> = Vec::new();
        let vars = binary_variables(exp);
        if !vars.is_empty() {
            words.push("env".into());
            for v in vars {
                let value = std::env::var(&v).unwrap_or_default();
                words.push(format!("{v}={value}"));
            }
        }
        words.extend([
            exe,
            "sweep".into(),
            file.to_string(),
            "--point".into(),
            (p.index + 1).to_string(),
            "--resume".into(),
            "--results".into(),
            part.display().to_string(),
        ]);
        for a in &args.set {
            words.push("--set".into());
            words.push(a.clone());
        }
        words
            .iter()
            .map(|s| shell_quote(s))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        let mut argv: Vec<String> = p.argv().iter().map(|a| shell_quote(a)).collect();
        if let Some(binary) = p.binary() {
            argv[0] = shell_quote(&super::child::resolve(binary).display().to_string());
        }
        format!("{:>4} {}: {}", p.index + 1, p.key(), argv.join(" "))
    }
}

/// Checks that the rows already in a results file measured this experiment with these settings,
/// so that resuming or appending never mixes runs of different settings: every row must be of
/// `experiment`, at one of its points, with the flags that point now has. The message names the
/// first row that differs and the setting.
fn same_experiment(
    rows: &[ResultRow],
    experiment: &str,
    planned: &[(Point, crate::config::RunConfig)],
    grid: &Grid,
    file: &str,
) -> Result<(), String> {
    let mut points: HashMap<String, std::collections::BTreeMap<String, String>> = planned
        .iter()
        .map(|(p, _)| (p.key(), p.args_map()))
        .collect();
    // A huge grid plans only the point run (`--point`): the rows of its other points are
    // looked up in the grid.
    for row in rows {
        if !points.contains_key(&row.point_key()) {
            if let Some(Ok((p, _))) = grid.find(&row.point).map(|p| plan_point(p, file)) {
                points.insert(p.key(), p.args_map());
            }
        }
    }
    for (i, row) in rows.iter().enumerate() {
        let n = i + 1;
        if row.experiment != experiment {
            return Err(format!(
                "row {n} is of experiment '{}', not '{experiment}' (a results file holds one \
                 experiment)",
                row.experiment
            ));
        }
        let Some(args) = points.get(&row.point_key()) else {
            return Err(format!(
                "row {n} measured point '{}', which this experiment does not have (its axes \
                 changed since)",
                row.point_key()
            ));
        };
        let keys: std::collections::BTreeSet<&String> =
            args.keys().chain(row.args.keys()).collect();
        for k in keys {
            let (old, new) = (row.args.get(k), args.get(k));
            if old != new {
                let show = |v: Option<&String>| {
                    v.map_or_else(|| "unset".to_string(), |v| format!("{k}={v}"))
                };
                return Err(format!(
                    "row {n} (point '{}', repetition {}) was measured with {}, and this sweep \
                     has {}",
                    row.point_key(),
                    row.repetition + 1,
                    show(old),
                    show(new)
                ));
            }
        }
    }
    Ok(())
}

/// The build of every executable the points name (`binary`), each probed once before anything
/// runs; one that cannot be run, or is not txbench, is an error at its line.
fn probe_binaries(
    planned: &[(Point, crate::config::RunConfig)],
    file: &str,
) -> Result<HashMap<String, BuildInfo>, FileError> {
    let mut builds = HashMap::new();
    for (p, _) in planned {
        let Some(binary) = p.binary() else { continue };
        if builds.contains_key(binary) {
            continue;
        }
        let build = super::child::probe(binary).map_err(|message| FileError {
            file: file.to_string(),
            line: p
                .settings
                .iter()
                .find(|s| s.key == super::file::BINARY)
                .map(|s| s.line)
                .filter(|&l| l > 0),
            message: format!("binary: {message}"),
        })?;
        builds.insert(binary.to_string(), build);
    }
    Ok(builds)
}

/// Reads every row of the files, or says which is bad.
fn read_all(paths: &[PathBuf]) -> Result<Vec<Vec<ResultRow>>, String> {
    paths
        .iter()
        .map(|p| {
            let r = read_rows(p).map_err(|e| e.to_string())?;
            if let Some(line) = r.truncated_line {
                note(format_args!(
                    "warning: {} line {line} was cut off (an interrupted write); it is ignored",
                    p.display()
                ));
            }
            Ok(r.rows)
        })
        .collect()
}

/// `txbench merge IN... [-o OUT]`.
pub fn merge_command(args: &MergeArgs, out: &mut Output<impl Write>) -> Result<u8, OutputError> {
    let files = match read_all(&args.inputs) {
        Ok(f) => f,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    let (rows, dropped) = merge(files);
    if dropped > 0 {
        note(format_args!(
            "warning: {dropped} rows measured a run (experiment, point, repetition) already \
             seen; the first is kept"
        ));
    }
    let lines: Vec<String> = rows
        .iter()
        .map(|r| serde_json::to_string(r).expect("rows serialise"))
        .collect();
    match &args.output {
        None => {
            for l in &lines {
                out.line(l)?;
            }
        }
        Some(path) => {
            if args.inputs.iter().any(|i| same_file(i, path)) {
                note(format_args!(
                    "error: --output {} is also an input",
                    path.display()
                ));
                return Ok(2);
            }
            let mut text = lines.join("\n");
            text.push('\n');
            if let Err(e) = std::fs::write(path, text) {
                note(format_args!("error: cannot write {}: {e}", path.display()));
                return Ok(1);
            }
            note(format_args!(
                "{} rows from {} files -> {}",
                rows.len(),
                args.inputs.len(),
                path.display()
            ));
        }
    }
    Ok(0)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `txbench report RESULTS`.
pub fn report_command(args: &ReportArgs, out: &mut Output<impl Write>) -> Result<u8, OutputError> {
    let rows = match read_all(std::slice::from_ref(&args.results)) {
        Ok(mut f) => f.remove(0),
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    if rows.is_empty() {
        note(format_args!(
            "error: {} holds no results rows",
            args.results.display()
        ));
        return Ok(2);
    }
    let metrics = match args.metric.as_deref().map(parse_metrics).transpose() {
        Ok(m) => m,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    out.write(&markdown_with(&rows, metrics.as_deref()))?;
    Ok(0)
}

/// `txbench compare OLD NEW`: Markdown tables of NEW against OLD ([`super::compare`]).
pub fn compare_command(
    args: &CompareArgs,
    out: &mut Output<impl Write>,
) -> Result<u8, OutputError> {
    let mut files = match read_all(&[args.old.clone(), args.new.clone()]) {
        Ok(f) => f,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    let new = files.pop().unwrap_or_default();
    let old = files.pop().unwrap_or_default();
    for (rows, path) in [(&old, &args.old), (&new, &args.new)] {
        if rows.is_empty() {
            note(format_args!(
                "error: {} holds no results rows",
                path.display()
            ));
            return Ok(2);
        }
    }
    let metrics = match args.metric.as_deref().map(parse_metrics).transpose() {
        Ok(Some(m)) => m,
        Ok(None) => super::summary::METRICS[..3].to_vec(),
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    let text = super::compare::markdown(
        &args.old.display().to_string(),
        &old,
        &args.new.display().to_string(),
        &new,
        &metrics,
    );
    if !text.contains("| --- |") {
        note(format_args!(
            "error: {} and {} have no point and protocol in common",
            args.old.display(),
            args.new.display()
        ));
        return Ok(2);
    }
    out.write(&text)?;
    Ok(0)
}

/// `txbench plot RESULTS`.
pub fn plot_command(args: &PlotArgs, out: &mut Output<impl Write>) -> Result<u8, OutputError> {
    let mut formats = Vec::new();
    for f in args.formats.split(',').map(str::trim) {
        match f {
            "png" | "svg" => formats.push(f),
            other => {
                note(format_args!(
                    "error: invalid value '{other}' for --formats: allowed png, svg"
                ));
                return Ok(2);
            }
        }
    }
    let rows = match read_all(std::slice::from_ref(&args.results)) {
        Ok(mut f) => f.remove(0),
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    if rows.is_empty() {
        note(format_args!(
            "error: {} holds no results rows",
            args.results.display()
        ));
        return Ok(2);
    }
    let dir = args.out_dir.clone().unwrap_or_else(|| {
        args.results
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    });
    match super::plot::plot_selected(
        &rows,
        &args.select,
        &dir,
        args.x.as_deref(),
        args.at.as_deref(),
        &formats,
    ) {
        Ok(files) => {
            for f in files {
                out.line(&f.display().to_string())?;
            }
            Ok(0)
        }
        Err(e @ super::plot::PlotError::NoData(_)) => {
            note(format_args!("error: {e}"));
            Ok(2)
        }
        Err(e) => {
            note(format_args!("error: {e}"));
            Ok(1)
        }
    }
}
