//! The grid of an experiment: every combination of axis values is a point, a `txbench run`
//! command line built from the base settings with the point's values on top. Each point is parsed
//! by clap and validated exactly as `txbench run` would be, before anything runs; an error names
//! the file's line of the setting at fault.

use super::file::{
    Axis, AxisValue, BINARY, Exclusion, Experiment, FileError, FlagValue, LOG, LOG_ONLY, Setting,
};
use crate::config::{Cli, Command, RunConfig, parse_protocols};
use clap::{CommandFactory, Parser};
use std::collections::BTreeMap;

/// The flags of `txbench run`: long name and whether the flag takes a value (false for switches).
pub fn run_flags() -> Vec<(String, bool)> {
    let cli = Cli::command();
    let run = cli
        .find_subcommand("run")
        .expect("txbench has a run subcommand");
    run.get_arguments()
        .filter_map(|a| Some((a.get_long()?.to_string(), a.get_action().takes_values())))
        .collect()
}

/// One point of the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Position in the grid, 0-based (first axis slowest).
    pub index: usize,
    /// Each axis and this point's label on it, in axis order.
    pub axes: Vec<(String, String)>,
    /// Every flag the run gets: the base settings with this point's values on top.
    pub settings: Vec<Setting>,
}

impl Point {
    /// `axis=label` pairs joined by spaces: the point's identity in a results file.
    pub fn key(&self) -> String {
        crate::metrics::report::point_label(&self.axes)
    }

    /// The txbench executable that runs this point in a child process (`binary`, with `${NAME}`
    /// expanded by [`plan`]); `None`: the point runs in the sweep's own process.
    pub fn binary(&self) -> Option<&str> {
        self.settings
            .iter()
            .find(|s| s.key == BINARY)
            .map(|s| match &s.value {
                FlagValue::Value(v) => v.as_str(),
                FlagValue::Switch(_) => "self",
            })
    }

    /// The parent directory of this point's runs' logs (`log`); `None`: the point runs without
    /// a log.
    pub fn log_parent(&self) -> Option<&str> {
        self.settings
            .iter()
            .find(|s| s.key == LOG)
            .and_then(|s| match &s.value {
                FlagValue::Value(v) => Some(v.as_str()),
                FlagValue::Switch(_) => None,
            })
    }

    /// This point with its runs' log in `dir` instead of under the parent the file names: the
    /// settings one run gets.
    pub fn with_log_dir(&self, dir: &std::path::Path) -> Point {
        let mut p = self.clone();
        for s in p.settings.iter_mut().filter(|s| s.key == LOG) {
            s.value = FlagValue::Value(dir.display().to_string());
        }
        p
    }

    /// The `txbench run` command line (program name first).
    pub fn argv(&self) -> Vec<String> {
        let mut argv = vec!["txbench".to_string(), "run".to_string()];
        argv.extend(setting_args(&self.settings));
        argv
    }

    /// The flags as recorded in a results row: flag name to value (`true` for a switch that is
    /// on; switches that are off are left out, as on the command line).
    pub fn args_map(&self) -> BTreeMap<String, String> {
        self.settings
            .iter()
            .filter(|s| s.value != FlagValue::Switch(false))
            .map(|s| (s.key.clone(), s.value.label()))
            .collect()
    }
}

/// Command-line arguments for `settings` (`binary` is not a flag: it says which executable gets
/// them).
pub fn setting_args(settings: &[Setting]) -> Vec<String> {
    let mut out = Vec::new();
    for s in settings.iter().filter(|s| s.key != BINARY) {
        match &s.value {
            FlagValue::Value(v) => {
                out.push(format!("--{}", s.key));
                out.push(v.clone());
            }
            FlagValue::Switch(true) => out.push(format!("--{}", s.key)),
            FlagValue::Switch(false) => {}
        }
    }
    out
}

/// The axes to sweep: the file's, plus an implicit innermost `protocol` axis when the protocols
/// come from `[base]` (or the default, all): each run is one protocol, so that repetitions
/// interleave protocols too and a results row is one measurement.
fn effective_axes(exp: &Experiment, file: &str) -> Result<Vec<Axis>, FileError> {
    let mut axes = exp.axes.clone();
    let swept = axes.iter().any(|a| {
        a.values
            .iter()
            .any(|v| v.settings.iter().any(|s| s.key == "protocol"))
    });
    if swept {
        return Ok(axes);
    }
    let base = exp.base.iter().find(|s| s.key == "protocol");
    let (list, line) = match base {
        Some(Setting {
            value: FlagValue::Value(v),
            line,
            ..
        }) => (v.as_str(), *line),
        _ => ("all", 0),
    };
    let protocols = parse_protocols(list).map_err(|e| FileError {
        file: file.to_string(),
        line: (line > 0).then_some(line),
        message: format!("base.protocol: {e}"),
    })?;
    if protocols.len() > 1 {
        axes.push(Axis {
            name: "protocol".into(),
            values: protocols
                .iter()
                .map(|p| AxisValue {
                    label: p.name().to_string(),
                    settings: vec![Setting {
                        key: "protocol".into(),
                        value: FlagValue::Value(p.name().to_string()),
                        line,
                    }],
                })
                .collect(),
            line,
        });
    }
    Ok(axes)
}

/// The most points a sweep's grid may have: each is parsed and validated before any run, and
/// even at a tenth of a second a run, more would take days.
pub const MAX_POINTS: usize = 10_000;

/// An experiment's grid: its axes (with the implicit protocol axis) and base settings, from
/// which any point is built by its index without building the others, so a grid too large to
/// hold in memory can still be listed point by point (`--dry-run`, `--emit-jobs`) or one of its
/// points run (`--point`).
#[derive(Debug, Clone)]
pub struct Grid {
    axes: Vec<Axis>,
    base: Vec<Setting>,
    exclude: Vec<Exclusion>,
    /// How many points; `None` past `usize::MAX`.
    count: Option<usize>,
}

impl Grid {
    /// The grid of `exp`.
    pub fn of(exp: &Experiment, file: &str) -> Result<Grid, FileError> {
        let axes = effective_axes(exp, file)?;
        let count = axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
        Ok(Grid {
            axes,
            base: exp.base.clone(),
            exclude: exp.exclude.clone(),
            count,
        })
    }

    /// How many points (`None`: more than `usize::MAX`).
    pub fn len(&self) -> Option<usize> {
        self.count
    }

    /// Whether the grid has no point (an axis without values).
    pub fn is_empty(&self) -> bool {
        self.count == Some(0)
    }

    /// `n x axis` per axis, for messages.
    pub fn sizes(&self) -> String {
        self.axes
            .iter()
            .map(|a| format!("{} {}", a.values.len(), a.name))
            .collect::<Vec<_>>()
            .join(" x ")
    }

    /// Whether the file's `exclude` leaves `p` out of the sweep.
    pub fn excluded(&self, p: &Point) -> bool {
        self.exclude.iter().any(|e| e.matches(&p.axes))
    }

    /// Point `index` (0-based, first axis slowest); `None` past the last. An excluded point is
    /// still built (its index keeps its place: `--point N` and the job files count every point);
    /// [`excluded`](Self::excluded) says whether it runs.
    pub fn point(&self, index: usize) -> Option<Point> {
        if self.count.is_some_and(|n| index >= n) {
            return None;
        }
        // Mixed radix, last axis fastest.
        let mut rest = index;
        let mut picked: Vec<(&Axis, &AxisValue)> = Vec::with_capacity(self.axes.len());
        for axis in self.axes.iter().rev() {
            let n = axis.values.len();
            picked.push((axis, &axis.values[rest % n]));
            rest /= n;
        }
        if rest > 0 {
            return None;
        }
        picked.reverse();
        let mut settings = self.base.clone();
        for (_, value) in &picked {
            for s in &value.settings {
                settings.retain(|b| b.key != s.key);
                settings.push(s.clone());
            }
        }
        // A point without a log runs without the log's settings of [base] (so that one axis
        // can compare no log with logs configured once in [base]); the same settings from an
        // axis stay, and validation refuses them without a log.
        let logged = settings
            .iter()
            .any(|s| s.key == LOG && matches!(s.value, FlagValue::Value(_)));
        if !logged {
            settings.retain(|s| !(LOG_ONLY.contains(&s.key.as_str()) && self.base.contains(s)));
        }
        Some(Point {
            index,
            axes: picked
                .iter()
                .map(|(a, v)| (a.name.clone(), v.label.clone()))
                .collect(),
            settings,
        })
    }

    /// The point whose axes carry these labels (a results row's `point`), if the grid has it.
    pub fn find(&self, labels: &[(String, String)]) -> Option<Point> {
        if labels.len() != self.axes.len() {
            return None;
        }
        let mut index = 0usize;
        for (axis, (name, label)) in self.axes.iter().zip(labels) {
            if axis.name != *name {
                return None;
            }
            let at = axis.values.iter().position(|v| v.label == *label)?;
            index = index.checked_mul(axis.values.len())?.checked_add(at)?;
        }
        self.point(index)
    }
}

/// Every point of `exp` that its `exclude` leaves in, first axis slowest; an error for a grid of
/// more than [`MAX_POINTS`].
pub fn points(exp: &Experiment, file: &str) -> Result<Vec<Point>, FileError> {
    let grid = Grid::of(exp, file)?;
    match grid.len() {
        Some(n) if n <= MAX_POINTS => Ok((0..n)
            .filter_map(|i| grid.point(i))
            .filter(|p| !grid.excluded(p))
            .collect()),
        count => Err(FileError {
            file: file.to_string(),
            line: None,
            message: format!(
                "the grid has {} points ({}): allowed at most {MAX_POINTS} points a sweep \
                 (--dry-run, --emit-jobs and --point take any grid); split it into several \
                 experiment files",
                count.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                grid.sizes()
            ),
        }),
    }
}

/// The first line of a clap error, without its `error: ` prefix.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// Parses a run command line into its validated configuration.
fn parse_run(argv: &[String]) -> Result<RunConfig, String> {
    match Cli::try_parse_from(argv) {
        Ok(Cli {
            command: Command::Run(args),
        }) => args.validate().map_err(|e| e.to_string()),
        Ok(_) => Err("not a run command line".into()),
        Err(e) => Err(clap_message(&e)),
    }
}

/// Checks every setting on its own (so that a bad value is reported at its line), then every
/// point as a whole (combinations clap or validation reject), and returns each point with its
/// validated configuration. Nothing runs.
pub fn plan(exp: &Experiment, file: &str) -> Result<Vec<(Point, RunConfig)>, FileError> {
    check_settings(exp, file)?;
    points(exp, file)?
        .into_iter()
        .map(|p| plan_point(p, file))
        .collect()
}

/// Checks every setting of `exp` on its own, so that a bad value is reported at its line before
/// any point is built.
pub fn check_settings(exp: &Experiment, file: &str) -> Result<(), FileError> {
    let mut seen: Vec<&Setting> = Vec::new();
    let every = exp.base.iter().chain(
        exp.axes
            .iter()
            .flat_map(|a| a.values.iter().flat_map(|v| &v.settings)),
    );
    for s in every {
        if seen.contains(&s) {
            continue;
        }
        seen.push(s);
        let mut argv = vec!["txbench".to_string(), "run".to_string()];
        argv.extend(setting_args(std::slice::from_ref(s)));
        if let Err(e) = Cli::try_parse_from(&argv) {
            // Line 0: a `--set` from the command line.
            return Err(FileError {
                file: file.to_string(),
                line: (s.line > 0).then_some(s.line),
                message: format!("{}: {}", s.key, clap_message(&e)),
            });
        }
    }
    Ok(())
}

/// Point `p` with its `binary` expanded and its validated configuration, or the error naming
/// the setting at fault and its line.
pub fn plan_point(mut p: Point, file: &str) -> Result<(Point, RunConfig), FileError> {
    let err = |line: Option<usize>, message: String| FileError {
        file: file.to_string(),
        line,
        message,
    };
    for s in p.settings.iter_mut().filter(|s| s.key == BINARY) {
        if let FlagValue::Value(v) = &s.value {
            let expanded = expand_env(v, |name| std::env::var(name).ok()).map_err(|message| {
                err(
                    (s.line > 0).then_some(s.line),
                    format!("{BINARY}: {message}"),
                )
            })?;
            s.value = FlagValue::Value(expanded);
        }
    }
    // The runs' log directories go under the parent, which validation then checks as it would
    // a run's log directory (a writable directory holding no log).
    if let Some(parent) = p.log_parent() {
        let line = p.settings.iter().find(|s| s.key == LOG).map(|s| s.line);
        std::fs::create_dir_all(parent).map_err(|e| {
            err(
                line.filter(|&l| l > 0),
                format!("{LOG}: cannot create the log parent directory {parent}: {e}"),
            )
        })?;
    }
    match parse_run(&p.argv()) {
        Ok(cfg) => Ok((p, cfg)),
        Err(message) => {
            // The setting the message names, if any, gives the line. A switch that is off gives
            // no flag: a message naming it says it is missing (`--log-kind applies only with
            // --log`), and the culprit is the flag that was given.
            let culprit = p
                .settings
                .iter()
                .filter(|s| s.value != FlagValue::Switch(false))
                .find(|s| {
                    let flag = format!("--{}", s.key);
                    message.match_indices(&flag).any(|(at, _)| {
                        !message[at + flag.len()..]
                            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
                    })
                });
            let at = if p.axes.is_empty() {
                String::new()
            } else {
                format!(" (point {})", p.key())
            };
            Err(err(
                culprit.map(|s| s.line).filter(|&l| l > 0),
                format!(
                    "{}{message}{at}",
                    culprit.map(|s| format!("{}: ", s.key)).unwrap_or_default()
                ),
            ))
        }
    }
}

/// `text` with every `${NAME}` replaced by `lookup(NAME)`; an unset variable or an unclosed `${`
/// is an error naming it.
pub fn expand_env(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("'{text}' opens '${{' without closing it"));
        };
        let name = &after[..end];
        match lookup(name) {
            Some(v) if !v.is_empty() => out.push_str(&v),
            _ => {
                return Err(format!(
                    "the environment variable {name} is not set (e.g. \
                     {name}=path/to/txbench txbench sweep ...)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The environment variables that the `binary` settings of `exp` name (`${NAME}`), in file
/// order without repeats: an emitted job command sets them so that it runs anywhere.
pub fn binary_variables(exp: &Experiment) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let settings = exp.base.iter().chain(
        exp.axes
            .iter()
            .flat_map(|a| a.values.iter().flat_map(|v| &v.settings)),
    );
    for s in settings.filter(|s| s.key == BINARY) {
        let mut rest = s.value.label();
        while let Some(at) = rest.find("${") {
            let after = rest[at + 2..].to_string();
            let Some(end) = after.find('}') else { break };
            let name = after[..end].to_string();
            if !names.contains(&name) {
                names.push(name);
            }
            rest = after[end + 1..].to_string();
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_variables_expand_and_unset_ones_are_named() {
        let env = |n: &str| (n == "BEFORE").then(|| "/tmp/old/txbench".to_string());
        assert_eq!(
            expand_env("${BEFORE}", env).unwrap(),
            "/tmp/old/txbench".to_string()
        );
        assert_eq!(
            expand_env("a/${BEFORE}/b", env).unwrap(),
            "a//tmp/old/txbench/b"
        );
        assert_eq!(expand_env("plain", env).unwrap(), "plain");
        assert!(expand_env("${AFTER}", env).unwrap_err().contains("AFTER"));
        assert!(expand_env("${BEFORE", env).unwrap_err().contains("closing"));
    }

    #[test]
    fn a_binary_is_not_a_run_flag_and_its_variables_are_listed() {
        let flags = run_flags();
        let text = "[base]\nrecords = 100\nprotocol = \"silo\"\n[axes]\nbinary = [{ label = \"old\", binary = \
                    \"${OLD_TXBENCH}\" }, { label = \"new\", binary = \"self\" }]\n";
        let exp = crate::experiment::parse_experiment("ab.toml", text, &flags).unwrap();
        assert_eq!(binary_variables(&exp), ["OLD_TXBENCH"]);
        let ps = points(&exp, "ab.toml").unwrap();
        assert_eq!(ps.len(), 2);
        let new = ps.iter().find(|p| p.binary() == Some("self")).unwrap();
        assert!(
            !new.argv()
                .iter()
                .any(|a| a.contains("binary") || a == "self")
        );
        assert_eq!(new.args_map()["binary"], "self");
    }

    /// `log = false` runs without a log and without [base]'s log settings; a logged point is
    /// validated against its parent, created by planning; `exclude` leaves a combination out
    /// while the others keep their grid index.
    #[test]
    fn a_log_axis_drops_base_log_settings_without_a_log_and_exclusions_leave_points_out() {
        let flags = run_flags();
        let parent =
            std::env::temp_dir().join(format!("txbench-grid-log-{}/logs", std::process::id()));
        let _ = std::fs::remove_dir_all(parent.parent().unwrap());
        let text = format!(
            "exclude = [{{ protocol = \"silo\", log = \"undo\" }}]\n[base]\nrecords = 100\n\
             log_sync = \"none\"\n[axes]\nprotocol = [\"silo\", \"no_wait\"]\n\
             log = [false, {{ label = \"redo\", log = {parent:?} }}, \
             {{ label = \"undo\", log = {parent:?}, log_kind = \"undo\" }}]\n"
        );
        let exp = crate::experiment::parse_experiment("l.toml", &text, &flags).unwrap();
        let planned = plan(&exp, "l.toml").unwrap();
        let indices: Vec<usize> = planned.iter().map(|(p, _)| p.index).collect();
        assert_eq!(
            indices,
            [0, 1, 3, 4, 5],
            "silo x undo (index 2) is left out"
        );
        assert!(parent.is_dir(), "planning creates the parent");
        for (p, cfg) in &planned {
            let logged = p.axes[1].1 != "false";
            assert_eq!(cfg.log.is_some(), logged, "{p:?}");
            assert_eq!(p.log_parent().is_some(), logged);
            assert_eq!(
                p.argv().iter().any(|a| a == "--log-sync"),
                logged,
                "{:?}",
                p.argv()
            );
        }
        let dir = parent.join("run");
        let one = planned[1].0.with_log_dir(&dir);
        let argv = one.argv();
        let at = argv.iter().position(|a| a == "--log").unwrap();
        assert_eq!(argv[at + 1], dir.display().to_string());
        // The log's settings from an axis stay on a point without a log, and are refused there.
        let text = format!(
            "[base]\nrecords = 100\nprotocol = \"silo\"\n[axes]\nlog = [false, {parent:?}]\n\
             log_kind = [\"redo\"]\n"
        );
        let exp = crate::experiment::parse_experiment("l.toml", &text, &flags).unwrap();
        let e = plan(&exp, "l.toml").unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.to_string().contains("--log-kind"), "{e}");
        std::fs::remove_dir_all(parent.parent().unwrap()).unwrap();
    }
}
