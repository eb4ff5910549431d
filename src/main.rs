//! The `txbench` command line: parse, validate, dispatch, print. Nothing else lives here.
//!
//! Every byte of output goes through [`Output`] (stdout) or [`note`] (stderr), so no write error
//! panics: a reader closing the pipe ends the process quietly with status 0, any other error on
//! stdout with a message and status 1.

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use txbench::config::describe_run;
use txbench::config::lists::{LIST_FLAGS, ListPoint, expand_lists};
use txbench::config::{Cli, Command, Format, PRESETS, RunArgs, RunConfig, WORKLOADS};
use txbench::exec::interactive::commands::{ping_command, serve_command};
use txbench::experiment::commands::{
    compare_command, merge_command, plot_command, report_command, sweep_command,
};
use txbench::metrics::log_report::render_log_table;
use txbench::metrics::measured_time::short_measurements;
use txbench::metrics::output::{Output, OutputError};
use txbench::metrics::report::render_version_table;
use txbench::metrics::report::{
    leaders, medians, point_label, render_protocol_stats, render_table_with, render_type_table,
    short_number, write_csv,
};
use txbench::protocol::ProtocolKind;
use txbench::recovery::recover_command;
use txbench::runner::run_all;
use txbench::workload::tpcc::{MAX_WAREHOUSES, TpccMix, TxnType};

fn main() -> ExitCode {
    let mut out = Output::new(std::io::stdout());
    let done = match list_points() {
        Some(points) => run_points(&points, &mut out),
        None => match Cli::try_parse() {
            Err(e) => clap_exit(e, &mut out),
            Ok(cli) => match cli.command {
                Command::List => out.write(&list_text()).map(|()| ExitCode::SUCCESS),
                Command::Run(args) => run(&args, &mut out),
                Command::Sweep(args) => sweep_command(&args, &mut out).map(ExitCode::from),
                Command::Merge(args) => merge_command(&args, &mut out).map(ExitCode::from),
                Command::Report(args) => report_command(&args, &mut out).map(ExitCode::from),
                Command::Plot(args) => plot_command(&args, &mut out).map(ExitCode::from),
                Command::Compare(args) => compare_command(&args, &mut out).map(ExitCode::from),
                Command::Serve(mut args) => serve_command(&mut args, &mut out).map(ExitCode::from),
                Command::Ping(args) => ping_command(&args, &mut out).map(ExitCode::from),
                Command::Recover(args) => recover_command(&args, &mut out).map(ExitCode::from),
            },
        },
    };
    match done.and_then(|code| out.flush().map(|()| code)) {
        Ok(code) => code,
        Err(e) => ExitCode::from(output_status(&e)),
    }
}

/// The points of a `txbench run` command line with comma lists (`-t 1,2,4`), or `None` when it
/// has none (or is not valid UTF-8, which clap then reports).
fn list_points() -> Option<Vec<ListPoint>> {
    let argv: Option<Vec<String>> = std::env::args_os().map(|a| a.into_string().ok()).collect();
    let points = expand_lists(&argv?);
    (points.len() > 1).then_some(points)
}

/// `txbench run` with comma lists: parses and validates every combination before running any
/// (exit 2 naming the flag and value, as for one run), then runs them in order.
fn run_points(points: &[ListPoint], out: &mut Output<impl Write>) -> Result<ExitCode, OutputError> {
    let mut configs = Vec::with_capacity(points.len());
    let mut wide = false;
    for p in points {
        let args = match Cli::try_parse_from(&p.argv) {
            Ok(Cli {
                command: Command::Run(args),
            }) => args,
            Ok(_) => unreachable!("expand_lists only expands `txbench run`"),
            Err(e) => return clap_exit(e, out),
        };
        match args.validate() {
            Ok(cfg) => {
                wide |= args.wide;
                if configs.is_empty() {
                    for w in args.ineffective_flags(&cfg) {
                        note(format_args!("warning: {w}"));
                    }
                }
                configs.push((p.axes.clone(), cfg))
            }
            Err(e) => {
                note(format_args!("error: {e} (at {})", point_label(&p.axes)));
                return Ok(ExitCode::from(2));
            }
        }
    }
    if configs.iter().any(|(_, c)| c.log.is_some()) {
        note(format_args!(
            "error: invalid value for --log: a log holds one run, and comma lists make {}",
            configs.len()
        ));
        return Ok(ExitCode::from(2));
    }
    execute(&configs, wide, out)
}

/// `txbench run`: validate, run every protocol, print the reports. Exit status 2 for invalid
/// input, 1 when a serializable protocol failed the check, 0 otherwise; an output error is
/// returned to `main`, or, in the middle of the runs, ends the process at once (no point in
/// running the remaining protocols for a reader that is gone).
fn run(args: &RunArgs, out: &mut Output<impl Write>) -> Result<ExitCode, OutputError> {
    let mut cfg = match args.validate() {
        Ok(c) => c,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(log) = &mut cfg.log {
        // The manifest keeps the run's own arguments: recovery rebuilds the loaded tables from
        // them.
        let argv: Vec<String> = std::env::args().skip(2).collect();
        log.run_args = txbench::log::run_args_without_log_flags(&argv);
    }
    for w in args.ineffective_flags(&cfg) {
        note(format_args!("warning: {w}"));
    }
    execute(&[(Vec::new(), cfg)], args.wide, out)
}

/// Runs validated configurations in order, each tagged with its sweep point (empty for a plain
/// run), and prints the reports; see [`run`] for the exit status.
fn execute(
    points: &[(Vec<(String, String)>, RunConfig)],
    wide: bool,
    out: &mut Output<impl Write>,
) -> Result<ExitCode, OutputError> {
    let Some((_, cfg)) = points.first() else {
        return Ok(ExitCode::SUCCESS);
    };
    let format = cfg.format;
    let mut reports = Vec::new();
    txbench::interrupt::install();
    let planned: usize = points
        .iter()
        .map(|(_, c)| c.protocols.len() * c.repeat)
        .sum();
    for (i, (point, cfg)) in points.iter().enumerate() {
        if txbench::interrupt::interrupted() {
            break;
        }
        let label = point_label(point);
        if !point.is_empty() {
            note(format_args!("point {}/{}: {label}", i + 1, points.len()));
        }
        let ran = run_all(cfg, |r| {
            if format == Format::Json {
                let mut r = r.clone();
                r.point = point.clone();
                if let Err(e) = out.line(&r.to_json_line()) {
                    std::process::exit(output_status(&e).into());
                }
            } else {
                note(format_args!(
                    "{}: {:.0} txn/s, abort ratio {:.3}, p99.9 {} us",
                    r.protocol,
                    r.throughput_tps,
                    r.abort_ratio,
                    r.latency_cell(r.latency_us.p999)
                ));
            }
        });
        match ran {
            Ok(rs) => reports.extend(rs.into_iter().map(|mut r| {
                r.point = point.clone();
                r
            })),
            Err(e) => {
                note(format_args!("error: {e}"));
                return Ok(ExitCode::from(e.exit_code()));
            }
        }
    }
    let interrupted = txbench::interrupt::interrupted();
    if interrupted && reports.is_empty() {
        note(format_args!(
            "interrupted before any run finished: nothing to show"
        ));
        return Ok(ExitCode::from(txbench::interrupt::EXIT_INTERRUPTED));
    }
    match format {
        Format::Json => {}
        Format::Csv => write_csv(out.inner(), &reports)?,
        Format::Table => {
            out.line(&describe_run(cfg))?;
            if let Some(short) = short_measurements(&reports) {
                out.line(&short)?;
            }
            if points.len() > 1 {
                let swept: Vec<&str> = points[0].0.iter().map(|(k, _)| k.as_str()).collect();
                out.line(&format!(
                    "(first point shown; the table's {} columns vary)",
                    swept.join(", ")
                ))?;
            }
            if cfg.repeat > 1 {
                out.line(&format!(
                    "medians of {} runs per protocol, [min-max] of the runs beside txn/s and p99.9",
                    cfg.repeat
                ))?;
            }
            let medians = medians(&reports);
            out.line(&render_table_with(&medians, wide))?;
            if let Some(types) = render_type_table(&medians) {
                out.line(&format!("per transaction type:\n{types}"))?;
            }
            if let Some(versions) = render_version_table(&medians) {
                out.line(&format!("version memory:\n{versions}"))?;
            }
            let logged = medians.iter().filter_map(|r| {
                r.log
                    .as_ref()
                    .map(|l| (r.protocol.as_str(), l, &r.latency_us))
            });
            if let Some(log) = render_log_table(logged) {
                out.line(&format!("durability:\n{log}"))?;
            }
            if let Some(stats) = render_protocol_stats(&medians) {
                out.line(&format!("protocol statistics:\n{stats}"))?;
            }
            if let Some(line) = leaders(&medians) {
                out.line(&line)?;
            }
        }
    }
    for r in &reports {
        for w in &r.warnings {
            note(format_args!("warning: {}: {w}", r.protocol));
        }
        // The table shows them (rounded); CSV has no column for them.
        if format == Format::Csv {
            for (name, value) in &r.protocol_stats {
                note(format_args!(
                    "{}: {name} {}",
                    r.protocol,
                    short_number(*value)
                ));
            }
        }
    }
    if interrupted {
        note(format_args!(
            "interrupted: {} of {planned} runs finished; the output shows those",
            reports.len()
        ));
    }
    let broken = reports
        .iter()
        .filter(|r| {
            r.protocol_serializable && r.check.as_ref().is_some_and(|c| !c.is_serializable())
        })
        .count();
    if broken > 0 {
        note(format_args!(
            "error: {broken} serializable protocol(s) failed the check"
        ));
        return Ok(ExitCode::FAILURE);
    }
    // A deterministic protocol that aborted for a concurrency-control reason is broken, checked
    // or not (its warning above names the reasons).
    let aborting = reports
        .iter()
        .filter(|r| r.deterministic_abort_bug().is_some())
        .count();
    if aborting > 0 {
        note(format_args!(
            "error: {aborting} deterministic protocol run(s) aborted for concurrency control"
        ));
        return Ok(ExitCode::FAILURE);
    }
    if interrupted {
        return Ok(ExitCode::from(txbench::interrupt::EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}

/// What clap answers instead of a command: `--help` and `--version` text goes to stdout through
/// [`Output`] (so a failed write, `> /dev/full`, exits 1 as any other output error does), and
/// a usage error to stderr with clap's status (2).
fn clap_exit(e: clap::Error, out: &mut Output<impl Write>) -> Result<ExitCode, OutputError> {
    if e.use_stderr() {
        e.exit();
    }
    out.write(&e.render().to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// The exit status for an output error, after saying what went wrong: 0, silently, when the
/// reader closed the pipe (it took what it wanted, as `head` does; a shell would report 141 for a
/// C program killed by SIGPIPE, which scripts with `pipefail` would take for a failure); 1 with
/// a message for any other error, since the results are lost.
fn output_status(e: &OutputError) -> u8 {
    match e {
        OutputError::Closed => 0,
        OutputError::Failed(_) => {
            note(format_args!("error: {e}"));
            1
        }
    }
}

/// Writes a line to stderr. A failure there is ignored: there is nowhere left to report it, and
/// `eprintln!` would panic.
fn note(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `txbench list`: the protocols, workloads and presets (from their definitions in the library),
/// TPC-C's transaction mixes, then every flag of `txbench run` generated from clap's own
/// definition of the command line, so the listing cannot leave a flag out or state a stale
/// default.
fn list_text() -> String {
    let mut s = String::from("Protocols (--protocol NAME[,NAME...] or all):\n");
    for p in ProtocolKind::ALL {
        s += &format_entry(p.name(), 12, p.description());
    }
    let declared: Vec<&str> = ProtocolKind::ALL
        .into_iter()
        .filter(|p| p.needs_declared_set())
        .map(|p| p.name())
        .collect();
    s += &wrap(
        "  ",
        &format!(
            "{} schedule from access sets declared before a transaction runs: ycsb, long-scan, \
             write-skew, shifting and tpcc --mix np declare them; tpcc mixes with order_status, delivery or \
             stock_level do not (rejected).",
            declared.join(", ")
        ),
        "  ",
    );
    s += "\nWorkloads (--workload):\n";
    for (n, d) in WORKLOADS {
        s += &format_entry(n, 12, d);
    }
    s += "\nPresets (--preset; explicit flags override them):\n";
    for (n, d) in PRESETS {
        s += &format_entry(n, 16, d);
    }
    s += &tpcc_list_text();
    s += &run_flags_text();
    s
}

/// Width of the flag column in [`run_flags_text`].
const FLAG_COLUMN: usize = 31;
/// Width [`run_flags_text`] wraps its help text to.
const LIST_WIDTH: usize = 100;

/// Every flag of `txbench run`, in the order clap declares them, from clap's metadata: names,
/// value name, help text, possible values, default, and whether it takes a comma list.
fn run_flags_text() -> String {
    let mut cli = <Cli as clap::CommandFactory>::command();
    cli.build();
    let run = cli
        .find_subcommand("run")
        .expect("txbench has a run subcommand");
    let mut s = String::from("\nFlags of txbench run (`txbench help run` prints the same):\n");
    s += &wrap(
        "  ",
        "[list]: the flag takes a comma list, one run per combination (-t 1,2,4 --theta \
         0.6,0.99).",
        "  ",
    );
    for arg in run.get_arguments() {
        let Some(long) = arg.get_long() else {
            continue;
        };
        if matches!(long, "help" | "version") {
            continue;
        }
        let mut flag = match arg.get_short() {
            Some(c) => format!("-{c}, --{long}"),
            None => format!("    --{long}"),
        };
        if arg.get_action().takes_values() {
            let name = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map_or_else(|| arg.get_id().as_str().to_uppercase(), |v| v.to_string());
            flag += &format!(" {name}");
        }
        let mut help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() && arg.get_action().takes_values() {
            help += &format!(" [values: {}]", values.join(", "));
        }
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        if !defaults.is_empty() && arg.get_action().takes_values() {
            help += &format!(" [default: {}]", defaults.join(","));
        }
        if LIST_FLAGS.iter().any(|(name, _)| *name == long) {
            help += " [list]";
        }
        s += &format_entry(&flag, FLAG_COLUMN, &help);
    }
    s
}

/// One `txbench list` entry: `name` in a column `width` wide, `help` wrapped beside it
/// (starting on the next line when the name fills the column).
fn format_entry(name: &str, width: usize, help: &str) -> String {
    let indent = " ".repeat(2 + width + 1);
    if name.len() > width {
        format!("  {name}\n{}", wrap(&indent, help, &indent))
    } else {
        wrap(&format!("  {name:<width$} "), help, &indent)
    }
}

/// `text` wrapped to [`LIST_WIDTH`] columns after `first` on the first line and `rest` on the
/// others; ends with a newline.
fn wrap(first: &str, text: &str, rest: &str) -> String {
    let mut out = first.to_string();
    let mut col = first.len();
    let mut line_empty = true;
    for word in text.split_whitespace() {
        if !line_empty && col + 1 + word.len() > LIST_WIDTH {
            out.push('\n');
            out += rest;
            col = rest.len();
            line_empty = true;
        }
        if !line_empty {
            out.push(' ');
            col += 1;
        }
        out += word;
        col += word.len();
        line_empty = false;
    }
    out.push('\n');
    out
}

/// The TPC-C section of `txbench list`: the mix syntax and the two named mixes, which clap's
/// metadata does not hold (`--mix` is free text).
fn tpcc_list_text() -> String {
    let mut s = String::from("\n");
    s += &wrap(
        "",
        "TPC-C mixes (--workload tpcc --mix full | np | NAME=PCT,... summing to 100, omitted = 0; \
         NAME also with dashes: new-order):",
        "  ",
    );
    s += &format!("  {:<14} {:>5} {:>5}\n", "", "full", "np");
    for t in TxnType::ALL {
        s += &format!(
            "  {:<14} {:>4}% {:>4}%\n",
            t.name(),
            TpccMix::FULL.percent(t),
            TpccMix::NP.percent(t)
        );
    }
    s += &format!(
        "  e.g. --mix new_order=50,payment=40,delivery=10; --warehouses 1..={MAX_WAREHOUSES}\n"
    );
    s
}
