//! Experiment files (TOML): a base configuration and the axes to sweep, read into an
//! [`Experiment`] with every key and value located by line, so that a bad file is reported as
//! `FILE line N: field: what is wrong` and never panics.
//!
//! ```toml
//! name = "plor_fig6"          # optional; default: the file's stem
//! repetitions = 3             # runs per point (default 1)
//! interleave = true           # run repetition r of every point before r + 1 (default true)
//! results = "results/plor_fig6.jsonl"   # default: results/NAME.jsonl
//!
//! [base]                      # any `txbench run` flag, same name (dashes or underscores)
//! preset = "ycsb-a-bimodal"
//! duration = 2
//! plor_dwa = false            # a switch: true gives the flag, false leaves it out
//!
//! [axes]                      # each axis a list; every combination is a point, first axis slowest
//! threads = [1, 2, 4, 8]
//! protocol = ["nocc", "plor", { label = "plor+dwa", protocol = "plor", plor_dwa = true }]
//! ```
//!
//! `log = "DIR"` (in `[base]`, as an axis, or in an axis value's table) names a parent
//! directory: each run gets a fresh, empty log directory of its own under it, created before the
//! run and removed after it (`keep_logs = true` keeps them), since a log directory holds one
//! run's log. `log = false` is a run without a log, so one axis compares no log with logs
//! (`log = [{ label = "none", log = false }, { label = "redo", log = "/tmp", log_kind = "redo" }]`);
//! the log's own settings from `[base]` (`log_sync`, `log_kind`, ...) apply only to the points
//! that have a log. `exclude = [{ protocol = "silo", log = "undo" }]` leaves out every point
//! whose axes carry all the labels of one table (combinations a protocol does not support).
//!
//! `binary = "PATH"` (in `[base]` or as an axis) runs each point in a child process of that
//! txbench executable (`"self"`: this one) and records the child's build, wall time and peak
//! memory: the way to compare two builds in one interleaved sweep, or to measure a run's memory.
//!
//! An axis value may be an inline table that sets several flags at once, shown as its `label`
//! (a protocol variant, or parameters that move together). Keys are not interpreted here beyond
//! being `txbench run` flags: the sweep hands them to clap as flags, so a flag added to
//! `txbench run` later is sweepable without changing this file.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::{Spanned, Value};

/// Flags of `txbench run` that an experiment file may not set: the sweep decides them.
const RESERVED: &[(&str, &str)] = &[
    (
        "format",
        "a sweep always writes JSON rows to its results file",
    ),
    ("repeat", "use the top-level `repetitions`"),
    ("help", "not a run parameter"),
    ("version", "not a run parameter"),
];

/// The one key that is not a `txbench run` flag: the txbench executable that runs a point, in a
/// child process (`"self"`: this binary). Points without it run inside the sweep's process. As an
/// axis it compares builds (`binary = [{ label = "before", binary = "${BEFORE}" }, ...]`);
/// `${NAME}` is read from the environment when the sweep is planned.
pub const BINARY: &str = "binary";

/// `log`: a `txbench run` flag whose value in an experiment file is the parent of the runs' log
/// directories (each run gets a fresh one, [`sweep`](super::sweep)), or `false` for no log.
pub const LOG: &str = "log";

/// The flags that configure a log and mean nothing without one: a point without a log drops
/// them when they come from `[base]`.
pub const LOG_ONLY: &[&str] = &[
    "log-sync",
    "log-kind",
    "log-group-us",
    "log-acks",
    "checkpoint-s",
];

/// A bad experiment file: where, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct FileError {
    /// The file as given.
    pub file: String,
    /// 1-based line of the offending key or value, when known.
    pub line: Option<usize>,
    /// What is wrong, naming the field.
    pub message: String,
}

/// What a setting gives its flag.
#[derive(Debug, Clone, PartialEq)]
pub enum FlagValue {
    /// `--key value`: the value as a command-line string.
    Value(String),
    /// A switch: `--key` when on, nothing when off.
    Switch(bool),
}

impl FlagValue {
    /// How rows and labels show it.
    pub fn label(&self) -> String {
        match self {
            FlagValue::Value(v) => v.clone(),
            FlagValue::Switch(b) => b.to_string(),
        }
    }
}

/// One flag setting.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The flag's long name (dashes).
    pub key: String,
    /// What it gives the flag.
    pub value: FlagValue,
    /// Where it was written (1-based line).
    pub line: usize,
}

/// One value of an axis: the settings it applies and how rows show it.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisValue {
    /// Shown in results rows, tables and plot legends.
    pub label: String,
    /// Flags this value sets (one for a plain value; several for an inline table).
    pub settings: Vec<Setting>,
}

/// A swept parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis name (the flag's long name for a plain axis).
    pub name: String,
    /// Its values, in order.
    pub values: Vec<AxisValue>,
    /// Where it was written.
    pub line: usize,
}

/// A parsed experiment file.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// The experiment's name, recorded in every row.
    pub name: String,
    /// Runs per point.
    pub repetitions: usize,
    /// Run repetition r of every point before repetition r + 1 (slow drifts of a shared machine
    /// then spread over all points instead of favouring the early ones).
    pub interleave: bool,
    /// Where results go, as written (relative to the working directory).
    pub results: String,
    /// Settings every point starts from.
    pub base: Vec<Setting>,
    /// The axes, in file order; the first varies slowest.
    pub axes: Vec<Axis>,
    /// Keep each run's log directory after the run (`keep_logs`; default: removed).
    pub keep_logs: bool,
    /// Combinations of axis labels left out of the grid (`exclude`).
    pub exclude: Vec<Exclusion>,
}

/// One table of `exclude`: a point whose axes carry every one of these labels is left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Exclusion {
    /// (axis name, label) pairs, all of which a point must carry to be left out.
    pub labels: Vec<(String, String)>,
    /// Where `exclude` was written.
    pub line: usize,
}

impl Exclusion {
    /// Whether a point with these (axis, label) pairs is left out.
    pub fn matches(&self, point: &[(String, String)]) -> bool {
        self.labels.iter().all(|l| point.contains(l))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    name: Option<Spanned<String>>,
    repetitions: Option<Spanned<i64>>,
    interleave: Option<bool>,
    results: Option<String>,
    keep_logs: Option<bool>,
    exclude: Option<Spanned<Vec<Value>>>,
    #[serde(default)]
    base: BTreeMap<Spanned<String>, Spanned<Value>>,
    #[serde(default)]
    axes: BTreeMap<Spanned<String>, Spanned<Value>>,
}

/// The `txbench run` flags: long name and whether it takes a value.
pub type FlagTable = [(String, bool)];

/// Reads an experiment from `text`; `file` names it in errors and gives the default name;
/// `flags` are the `txbench run` flags (long name, takes a value).
pub fn parse_experiment(
    file: &str,
    text: &str,
    flags: &FlagTable,
) -> Result<Experiment, FileError> {
    let line_of = |span: Range<usize>| {
        1 + text.as_bytes()[..span.start.min(text.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
    };
    let err = |line: Option<usize>, message: String| FileError {
        file: file.to_string(),
        line,
        message,
    };
    let raw: RawExperiment = toml::from_str(text).map_err(|e| {
        let line = e.span().map(line_of);
        err(line, e.message().trim().to_string())
    })?;
    let name = match raw.name {
        Some(n) if n.get_ref().trim().is_empty() => {
            return Err(err(
                Some(line_of(n.span())),
                "name: must not be empty".into(),
            ));
        }
        Some(n) => n.into_inner(),
        None => std::path::Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "experiment".into()),
    };
    let repetitions = match raw.repetitions {
        None => 1,
        Some(r) if (1..=1000).contains(r.get_ref()) => *r.get_ref() as usize,
        Some(r) => {
            return Err(err(
                Some(line_of(r.span())),
                format!(
                    "repetitions: invalid value {}: allowed 1 <= repetitions <= 1000",
                    r.get_ref()
                ),
            ));
        }
    };
    let setting = |section: &str, key: &Spanned<String>, value: &Value, line: usize| {
        to_setting(section, key.get_ref(), value, line, flags).map_err(|m| err(Some(line), m))
    };
    let mut base = Vec::new();
    let mut base_entries: Vec<_> = raw.base.iter().collect();
    base_entries.sort_by_key(|(k, _)| k.span().start);
    for (key, value) in base_entries {
        let line = line_of(key.span());
        base.push(setting("base", key, value.get_ref(), line)?);
    }
    let mut axes = Vec::new();
    let mut axis_entries: Vec<_> = raw.axes.iter().collect();
    axis_entries.sort_by_key(|(k, _)| k.span().start);
    for (key, value) in axis_entries {
        let line = line_of(key.span());
        let name = key.get_ref().replace('_', "-");
        let Value::Array(items) = value.get_ref() else {
            return Err(err(
                Some(line),
                format!(
                    "axes.{}: an axis is a list of values, e.g. [1, 2, 4]",
                    key.get_ref()
                ),
            ));
        };
        if items.is_empty() {
            return Err(err(
                Some(line),
                format!("axes.{}: an axis needs at least one value", key.get_ref()),
            ));
        }
        let mut values = Vec::new();
        for item in items {
            let value = match item {
                Value::Table(t) => {
                    let mut label = None;
                    let mut settings = Vec::new();
                    for (k, v) in t {
                        if k == "label" {
                            match v {
                                Value::String(s) if !s.trim().is_empty() => label = Some(s.clone()),
                                _ => {
                                    return Err(err(
                                        Some(line),
                                        format!(
                                            "axes.{}: label: must be a non-empty string",
                                            key.get_ref()
                                        ),
                                    ));
                                }
                            }
                            continue;
                        }
                        let section = format!("axes.{}", key.get_ref());
                        let k = Spanned::new(key.span(), k.clone());
                        settings.push(setting(&section, &k, v, line)?);
                    }
                    // A table under an axis named for a flag must set that flag: without
                    // it the value would run at the base setting under a label that says
                    // otherwise (`protocol = [{ label = "a" }]` would run every protocol).
                    let is_flag = flags.iter().any(|(f, _)| *f == name);
                    if is_flag && !settings.iter().any(|s| s.key == name) {
                        return Err(err(
                            Some(line),
                            format!(
                                "axes.{}: the value {} does not set {}: a table under the {} \
                                 axis needs `{} = ...` (or name the axis for what it varies)",
                                key.get_ref(),
                                label.as_deref().map_or_else(
                                    || format!(
                                        "{{ {} }}",
                                        t.keys().cloned().collect::<Vec<_>>().join(", ")
                                    ),
                                    |l| format!("'{l}'")
                                ),
                                key.get_ref(),
                                key.get_ref(),
                                key.get_ref()
                            ),
                        ));
                    }
                    let label = label.unwrap_or_else(|| {
                        settings
                            .iter()
                            .map(|s| format!("{}={}", s.key, s.value.label()))
                            .collect::<Vec<_>>()
                            .join(",")
                    });
                    AxisValue { label, settings }
                }
                v => {
                    let section = "axes";
                    let s = setting(section, key, v, line)?;
                    AxisValue {
                        label: s.value.label(),
                        settings: vec![s],
                    }
                }
            };
            if values.iter().any(|v: &AxisValue| v.label == value.label) {
                return Err(err(
                    Some(line),
                    format!(
                        "axes.{}: value '{}' appears twice",
                        key.get_ref(),
                        value.label
                    ),
                ));
            }
            values.push(value);
        }
        if axes.iter().any(|a: &Axis| a.name == name) {
            return Err(err(
                Some(line),
                format!("axes.{}: axis given twice", key.get_ref()),
            ));
        }
        axes.push(Axis { name, values, line });
    }
    let exclude = match &raw.exclude {
        None => Vec::new(),
        Some(list) => {
            let line = line_of(list.span());
            list.get_ref()
                .iter()
                .map(|item| to_exclusion(item, &axes, line).map_err(|m| err(Some(line), m)))
                .collect::<Result<_, _>>()?
        }
    };
    if base.is_empty() && axes.is_empty() {
        return Err(err(
            None,
            "the experiment sets nothing ([base] and [axes] are empty or missing): it would run \
             every protocol at the defaults, which `txbench run` does; give at least one setting"
                .into(),
        ));
    }
    Ok(Experiment {
        results: raw
            .results
            .unwrap_or_else(|| format!("results/{name}.jsonl")),
        name,
        repetitions,
        interleave: raw.interleave.unwrap_or(true),
        base,
        axes,
        keep_logs: raw.keep_logs.unwrap_or(false),
        exclude,
    })
}

/// One table of `exclude`: axis names of `axes` to one of their labels.
fn to_exclusion(item: &Value, axes: &[Axis], line: usize) -> Result<Exclusion, String> {
    let Value::Table(t) = item else {
        return Err("exclude: expected a list of tables of axis labels, e.g. \
             [{ protocol = \"silo\", log = \"undo\" }]"
            .into());
    };
    if t.is_empty() {
        return Err("exclude: an empty table would leave out every point".into());
    }
    let mut labels = Vec::new();
    for (key, value) in t {
        let name = key.replace('_', "-");
        let Some(axis) = axes.iter().find(|a| a.name == name) else {
            let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
            return Err(format!(
                "exclude: '{key}' is not an axis of [axes] (the axes: {})",
                names.join(", ")
            ));
        };
        let label = match value {
            Value::String(s) => s.clone(),
            Value::Integer(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Boolean(b) => b.to_string(),
            _ => {
                return Err(format!(
                    "exclude: {key}: expected a label of the {key} axis"
                ));
            }
        };
        if !axis.values.iter().any(|v| v.label == label) {
            let known: Vec<&str> = axis.values.iter().map(|v| v.label.as_str()).collect();
            return Err(format!(
                "exclude: {key}: '{label}' is not a value of the {key} axis ({})",
                known.join(", ")
            ));
        }
        labels.push((name, label));
    }
    Ok(Exclusion { labels, line })
}

/// `key = value` of `section` as a flag setting. The key must be
/// a `txbench run` flag; the value a string, number or boolean (lists only in `[axes]`).
fn to_setting(
    section: &str,
    key: &str,
    value: &Value,
    line: usize,
    flags: &FlagTable,
) -> Result<Setting, String> {
    let flag = key.replace('_', "-");
    if flag == BINARY {
        return match value {
            Value::String(s) if !s.trim().is_empty() => Ok(Setting {
                key: flag,
                value: FlagValue::Value(s.clone()),
                line,
            }),
            Value::Array(_) => Err(format!(
                "{section}.{key}: a list sweeps a parameter: put it under [axes]"
            )),
            _ => Err(format!(
                "{section}.{key}: expected the path of a txbench executable as a string, \
                 or \"self\""
            )),
        };
    }
    if flag == LOG {
        return match value {
            Value::String(s) if !s.trim().is_empty() => Ok(Setting {
                key: flag,
                value: FlagValue::Value(s.clone()),
                line,
            }),
            Value::Boolean(false) => Ok(Setting {
                key: flag,
                value: FlagValue::Switch(false),
                line,
            }),
            Value::Array(_) => Err(format!(
                "{section}.{key}: a list sweeps a parameter: put it under [axes]"
            )),
            _ => Err(format!(
                "{section}.{key}: expected the parent directory of the runs' logs as a string \
                 (each run gets a fresh directory under it), or false for no log"
            )),
        };
    }
    if let Some((_, why)) = RESERVED.iter().find(|(r, _)| *r == flag) {
        return Err(format!(
            "{section}.{key}: not allowed in an experiment file ({why})"
        ));
    }
    let Some(takes_value) = flags.iter().find(|(f, _)| *f == flag).map(|(_, t)| *t) else {
        return Err(format!(
            "{section}.{key}: unknown run parameter (the keys are the flags of `txbench run --help`, \
             without the dashes)"
        ));
    };
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) if !takes_value => {
            return Ok(Setting {
                key: flag,
                value: FlagValue::Switch(*b),
                line,
            });
        }
        Value::Boolean(b) => b.to_string(),
        Value::Array(_) if section == "base" && flag == "protocol" => {
            return Err(format!(
                "{section}.{key}: a list of protocols is an axis: write it as \
                 `protocol = [...]` under [axes], or as one string \"a,b\""
            ));
        }
        Value::Array(_) => {
            return Err(format!(
                "{section}.{key}: a list sweeps a parameter: put it under [axes]"
            ));
        }
        Value::Table(_) | Value::Datetime(_) => {
            return Err(format!(
                "{section}.{key}: expected a string, number or boolean"
            ));
        }
    };
    if !takes_value {
        return Err(format!(
            "{section}.{key}: --{flag} is a switch: write true or false, not '{text}'"
        ));
    }
    Ok(Setting {
        key: flag,
        value: FlagValue::Value(text),
        line,
    })
}

impl Experiment {
    /// Applies a command-line override `KEY=VALUE` (`txbench sweep --set`): `repetitions`,
    /// `keep_logs`, a
    /// `txbench run` flag of `[base]` (replacing the file's value), or an axis narrowed to some of
    /// its values (`threads=2,4`, by label). A flag that an axis's inline tables set cannot be
    /// overridden (edit the axis instead). Errors name the `--set` value.
    pub fn override_setting(&mut self, assignment: &str, flags: &FlagTable) -> Result<(), String> {
        let bad = |why: String| format!("invalid value '{assignment}' for --set: {why}");
        let Some((key, value)) = assignment.split_once('=') else {
            return Err(bad("expected KEY=VALUE".into()));
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "keep_logs" || key == "keep-logs" {
            match value {
                "true" => self.keep_logs = true,
                "false" => self.keep_logs = false,
                _ => return Err(bad("keep_logs is true or false".into())),
            }
            return Ok(());
        }
        if key == "repetitions" {
            match value.parse::<usize>() {
                Ok(r) if (1..=1000).contains(&r) => self.repetitions = r,
                _ => return Err(bad("allowed 1 <= repetitions <= 1000".into())),
            }
            return Ok(());
        }
        let flag = key.replace('_', "-");
        if let Some(axis) = self.axes.iter_mut().find(|a| a.name == flag) {
            // An axis is narrowed to the listed values (by label), so that a long sweep can be
            // run in parts; the points keep their identity, so `--resume` still matches them.
            let wanted: Vec<&str> = value.split(',').map(str::trim).collect();
            if let Some(w) = wanted
                .iter()
                .find(|w| !axis.values.iter().any(|v| v.label == **w))
            {
                let labels: Vec<&str> = axis.values.iter().map(|v| v.label.as_str()).collect();
                return Err(bad(format!(
                    "{key} is an axis; '{w}' is not one of its values ({})",
                    labels.join(", ")
                )));
            }
            axis.values.retain(|v| wanted.contains(&v.label.as_str()));
            return Ok(());
        }
        if self.axes.iter().any(|a| {
            a.name == flag
                || a.values
                    .iter()
                    .any(|v| v.settings.iter().any(|s| s.key == flag))
        }) {
            return Err(bad(format!("{key} is swept by an axis of the file")));
        }
        let toml_value = match value {
            "true" => Value::Boolean(true),
            "false" => Value::Boolean(false),
            v => Value::String(v.to_string()),
        };
        let setting = to_setting("set", key, &toml_value, 0, flags).map_err(bad)?;
        self.base.retain(|s| s.key != setting.key);
        self.base.push(setting);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::grid::{plan, run_flags};

    /// The error of `text`, parsed and planned.
    fn error_of(text: &str) -> FileError {
        let flags = run_flags();
        parse_experiment("x.toml", text, &flags)
            .and_then(|e| plan(&e, "x.toml").map(|_| ()))
            .expect_err(text)
    }

    #[test]
    fn a_good_file_reads_in_file_order() {
        let text = "repetitions = 2\ninterleave = false\n[base]\nrecords = 1000\nrmw = true\n\
                    [axes]\ntheta = [0.5, 0.99]\nthreads = [1, 2]\n\
                    protocol = [\"silo\", { label = \"plor+dwa\", protocol = \"plor\", plor_dwa = true }]\n";
        let e = parse_experiment("dir/fig.toml", text, &run_flags()).unwrap();
        assert_eq!(e.name, "fig");
        assert_eq!(e.results, "results/fig.jsonl");
        assert_eq!((e.repetitions, e.interleave), (2, false));
        let names: Vec<&str> = e.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["theta", "threads", "protocol"]);
        assert_eq!(e.axes[2].values[1].label, "plor+dwa");
        assert_eq!(e.base[1].value, FlagValue::Switch(true));
        assert_eq!(e.base[0].line, 4);
        let planned = plan(&e, "dir/fig.toml").unwrap();
        assert_eq!(planned.len(), 8);
        assert!(planned[1].1.options.plor.dwa, "the variant sets its flag");
        assert!(!planned[0].1.options.plor.dwa);
    }

    #[test]
    fn bad_files_name_the_field_and_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("name = \"a\"\nrepetition = 3\n", 2, "repetition"),
            ("repetitions = 0\n", 1, "repetitions"),
            ("[base]\nthreads = 2\nthreds = 4\n", 3, "threds"),
            ("[base]\nformat = \"csv\"\n", 2, "format"),
            ("[base]\nrmw = \"yes\"\n", 2, "rmw"),
            ("[base]\nthreads = [1, 2]\n", 2, "[axes]"),
            ("[axes]\n\nthreads = 4\n", 3, "threads"),
            ("[axes]\nthreads = []\n", 2, "threads"),
            ("[axes]\nthreads = [1, 1]\n", 2, "twice"),
            ("[axes]\nthreads = [1, \"x\"]\n", 2, "threads"),
            (
                "[base]\nrecords = 100\n[axes]\ntheta = [0.5, 11]\n",
                4,
                "--theta",
            ),
            ("[base]\nprotocol = \"silo,nope\"\n", 2, "protocol"),
            ("[base]\nrecords = 10\nops = 11\n", 3, "--ops"),
            ("[base\nthreads = 1\n", 1, ""),
            ("[base]\nlog = true\n", 2, "log"),
            ("[base]\nlog = 3\n", 2, "parent directory"),
            ("exclude = [1]\n[axes]\nthreads = [1, 2]\n", 1, "exclude"),
            ("exclude = [{}]\n[axes]\nthreads = [1, 2]\n", 1, "exclude"),
            (
                "exclude = [{ theta = 0.5 }]\n[axes]\nthreads = [1, 2]\n",
                1,
                "not an axis",
            ),
            (
                "exclude = [{ threads = 4 }]\n[axes]\nthreads = [1, 2]\n",
                1,
                "'4' is not a value",
            ),
            ("[axes]\nthreads = [1, 2\n", 2, ""),
        ];
        for &(text, line, field) in cases {
            let e = error_of(text);
            assert_eq!(e.line, Some(line), "{text:?}: {e}");
            assert!(e.to_string().contains(field), "{text:?}: {e}");
            assert!(
                e.to_string().starts_with(&format!("x.toml line {line}")),
                "{e}"
            );
        }
    }

    #[test]
    fn command_line_overrides_replace_base_settings() {
        let flags = run_flags();
        let text = "[base]\nduration = 2\n[axes]\nthreads = [1, 2]\n";
        let mut e = parse_experiment("x.toml", text, &flags).unwrap();
        e.override_setting("duration=0.3", &flags).unwrap();
        e.override_setting("repetitions=4", &flags).unwrap();
        e.override_setting("rmw=true", &flags).unwrap();
        assert_eq!(e.repetitions, 4);
        assert_eq!(e.base.len(), 2);
        assert_eq!(e.base[0].value, FlagValue::Value("0.3".into()));
        assert_eq!(e.base[1].value, FlagValue::Switch(true));
        e.override_setting("threads=2", &flags).unwrap();
        assert_eq!(e.axes[0].values.len(), 1, "narrowed to one value");
        assert_eq!(e.axes[0].values[0].label, "2");
        for bad in ["threads=4", "nope=1", "duration", "repetitions=0", "rmw=1"] {
            let err = e.override_setting(bad, &flags).unwrap_err();
            assert!(err.contains("--set") && err.contains(bad), "{err}");
        }
    }

    /// Generated files (a seeded loop over mutations of a valid file: deleted, repeated and
    /// replaced characters and lines) never panic, and every error they give points at a line of
    /// the file.
    #[test]
    fn generated_files_never_panic_and_errors_point_into_the_file() {
        let valid = "name = \"g\"\nrepetitions = 2\n[base]\nrecords = 1000\nduration = 0.1\n\
                     rmw = true\nprotocol = \"silo,tictoc\"\n[axes]\nthreads = [1, 2]\n\
                     theta = [0.5, 0.99]\nprotocol = [\"nocc\", { label = \"v\", protocol = \"plor\", plor_dwa = true }]\n";
        let pieces = [
            "=", "[", "]", "{", "}", "\"", ",", "\n", "-1", "1e400", "true", "threads", "axes",
            "base", "x", "0", "#", "'", "1.5", "plor_dwa", "[[axes]]", "label", "binary", "${",
            "}",
        ];
        let flags = run_flags();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..400 {
            let mut text = valid.to_string();
            for _ in 0..1 + next(3) {
                let at = text.char_indices().map(|(i, _)| i).collect::<Vec<_>>();
                let i = at[next(at.len())];
                match next(3) {
                    0 => {
                        let j = (i + 1 + next(6)).min(text.len());
                        let j = (j..=text.len())
                            .find(|&j| text.is_char_boundary(j))
                            .unwrap();
                        text.replace_range(i..j, "");
                    }
                    1 => text.insert_str(i, pieces[next(pieces.len())]),
                    _ => {
                        let j = (i + 1).min(text.len());
                        let j = (j..=text.len())
                            .find(|&j| text.is_char_boundary(j))
                            .unwrap();
                        text.replace_range(i..j, pieces[next(pieces.len())]);
                    }
                }
            }
            let lines = text.lines().count().max(1);
            let result = parse_experiment("g.toml", &text, &flags).and_then(|e| {
                // Planning validates every point; skip grids too large to be a test.
                let n: usize = e.axes.iter().map(|a| a.values.len()).product();
                if n > 64 {
                    Ok(())
                } else {
                    plan(&e, "g.toml").map(|_| ())
                }
            });
            if let Err(e) = result {
                if let Some(l) = e.line {
                    assert!((1..=lines + 1).contains(&l), "{text:?}: {e}");
                }
                assert!(!e.message.is_empty(), "{text:?}");
            }
        }
    }
}
