//! The `txbench` command line: parse, validate, dispatch, print. Nothing else lives here.
//!
//! Every byte of output goes through [`Output`] (stdout) or [`note`] (stderr), so no write error
//! panics: a reader closing the pipe ends the process quietly with status 0, any other error on
//! stdout with a message and status 1.

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use txbench::config::lists::{ListPoint, expand_lists};
use txbench::config::{Cli, Command, Format, PRESETS, RunArgs, RunConfig, WORKLOADS};
use txbench::experiment::commands::{merge_command, plot_command, report_command, sweep_command};
use txbench::metrics::output::{Output, OutputError};
use txbench::metrics::report::render_version_table;
use txbench::metrics::report::{
    describe_run, medians, point_label, render_table, render_type_table, write_csv,
};
use txbench::protocol::ProtocolKind;
use txbench::runner::run_all;
use txbench::workload::tpcc::{MAX_WAREHOUSES, TpccMix, TxnType};

fn main() -> ExitCode {
    let mut out = Output::new(std::io::stdout());
    let done = match list_points() {
        Some(points) => run_points(&points, &mut out),
        None => match Cli::parse().command {
            Command::List => out.write(&list_text()).map(|()| ExitCode::SUCCESS),
            Command::Run(args) => run(&args, &mut out),
            Command::Sweep(args) => sweep_command(&args, &mut out).map(ExitCode::from),
            Command::Merge(args) => merge_command(&args, &mut out).map(ExitCode::from),
            Command::Report(args) => report_command(&args, &mut out).map(ExitCode::from),
            Command::Plot(args) => plot_command(&args, &mut out).map(ExitCode::from),
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
    for p in points {
        let args = match Cli::try_parse_from(&p.argv) {
            Ok(Cli {
                command: Command::Run(args),
            }) => args,
            Ok(_) => unreachable!("expand_lists only expands `txbench run`"),
            Err(e) => e.exit(),
        };
        match args.validate() {
            Ok(cfg) => {
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
    execute(&configs, out)
}

/// `txbench run`: validate, run every protocol, print the reports. Exit status 2 for invalid
/// input, 1 when a serializable protocol failed the check, 0 otherwise; an output error is
/// returned to `main`, or, in the middle of the runs, ends the process at once (no point in
/// running the remaining protocols for a reader that is gone).
fn run(args: &RunArgs, out: &mut Output<impl Write>) -> Result<ExitCode, OutputError> {
    let cfg = match args.validate() {
        Ok(c) => c,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(ExitCode::from(2));
        }
    };
    for w in args.ineffective_flags(&cfg) {
        note(format_args!("warning: {w}"));
    }
    execute(&[(Vec::new(), cfg)], out)
}

/// Runs validated configurations in order, each tagged with its sweep point (empty for a plain
/// run), and prints the reports; see [`run`] for the exit status.
fn execute(
    points: &[(Vec<(String, String)>, RunConfig)],
    out: &mut Output<impl Write>,
) -> Result<ExitCode, OutputError> {
    let Some((_, cfg)) = points.first() else {
        return Ok(ExitCode::SUCCESS);
    };
    let format = cfg.format;
    let mut reports = Vec::new();
    for (i, (point, cfg)) in points.iter().enumerate() {
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
                    "{}: {:.0} txn/s, abort ratio {:.3}, p99.9 {:.1} us",
                    r.protocol, r.throughput_tps, r.abort_ratio, r.latency_us.p999
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
    match format {
        Format::Json => {}
        Format::Csv => write_csv(out.inner(), &reports)?,
        Format::Table => {
            out.line(&describe_run(cfg))?;
            if points.len() > 1 {
                let swept: Vec<&str> = points[0].0.iter().map(|(k, _)| k.as_str()).collect();
                out.line(&format!(
                    "(first point shown; the table's {} columns vary)",
                    swept.join(", ")
                ))?;
            }
            if cfg.repeat > 1 {
                out.line(&format!("medians of {} runs per protocol", cfg.repeat))?;
            }
            let medians = medians(&reports);
            out.line(&render_table(&medians))?;
            if let Some(types) = render_type_table(&medians) {
                out.line(&format!("per transaction type:\n{types}"))?;
            }
            if let Some(versions) = render_version_table(&medians) {
                out.line(&format!("version memory:\n{versions}"))?;
            }
        }
    }
    for r in &reports {
        for w in &r.warnings {
            note(format_args!("warning: {}: {w}", r.protocol));
        }
        if format != Format::Json {
            for (name, value) in &r.protocol_stats {
                note(format_args!("{}: {name} {value}", r.protocol));
            }
        }
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

fn list_text() -> String {
    let mut s = String::from("Protocols (--protocol NAME[,NAME...] or all):\n");
    for p in ProtocolKind::ALL {
        s += &format!("  {:<12} {}\n", p.name(), p.description());
    }
    s += "\nWorkloads (--workload):\n";
    for (n, d) in WORKLOADS {
        s += &format!("  {n:<12} {d}\n");
    }
    s += "\nPresets (--preset; explicit flags override them):\n";
    for (n, d) in PRESETS {
        s += &format!("  {n:<16} {d}\n");
    }
    s += "\nYCSB parameters:\n";
    for (n, d) in [
        ("--records N", "cardinality (default 1048576)"),
        (
            "--payload B",
            "bytes per record (default 100; >= 16 with --check)",
        ),
        ("--ops N", "operations per transaction (default 16)"),
        (
            "--long-ops N",
            "operations per long transaction (bimodal sizes)",
        ),
        (
            "--long-share F",
            "share of long transactions, 0..1 (default 0)",
        ),
        ("--read-ratio F", "probability an operation reads, 0..1"),
        (
            "--writes N",
            "exactly N writes per transaction (overrides --read-ratio)",
        ),
        (
            "--rmw | --blind",
            "writes are read-modify-writes or blind writes",
        ),
        (
            "--theta F",
            "zipfian skew, 0 <= theta <= 10 (0 = uniform; Gray et al. below 1, exact from 1)",
        ),
        (
            "--index KIND",
            "how each access finds its record: array (key = record id, default), hash, ordered",
        ),
        (
            "--key-dist D",
            "zipf (default; --theta) | normal (SGPM: --key-mean M, --key-sd S; no --theta)",
        ),
    ] {
        s += &format!("  {n:<18} {d}\n");
    }
    s += "\nlong-scan parameters (--workload long-scan):\n";
    for (n, d) in [
        (
            "--records N",
            "records in the large table (default 1048576)",
        ),
        (
            "--hot-records N",
            "records in the small hot table (default 1)",
        ),
        (
            "--scan-length N",
            "consecutive records each transaction scans (default 1000)",
        ),
        ("--payload B", "bytes per record (default 100)"),
        (
            "--index KIND",
            "array (default), hash (a lookup per scanned key), ordered (a range walk)",
        ),
    ] {
        s += &format!("  {n:<18} {d}\n");
    }
    s += &tpcc_list_text();
    s += "\nRun parameters:\n";
    for (n, d) in [
        ("--threads N", "worker threads (default: cores)"),
        (
            "-t 1,2,4 --theta A,B",
            "comma lists (threads, theta, ops, records, warehouses, read-ratio, writes, payload, \
             long-ops, long-share, hot-records, scan-length, duration): one run per combination",
        ),
        ("--duration S", "measured seconds per protocol (default 2)"),
        ("--warmup S", "unmeasured seconds first (default 0.5)"),
        ("--seed N", "same seed, same transaction stream per worker"),
        (
            "--repeat N",
            "runs per protocol, interleaved; the table shows medians",
        ),
        ("--check", "record history, run the serializability checker"),
        (
            "--check-limit N",
            "with --check: most operations recorded (default: 1/4 of memory)",
        ),
        (
            "--format F",
            "table | json (one object per run per line) | csv",
        ),
        ("--no-pin", "do not pin workers to cores"),
        (
            "--executor E",
            "thread (default) | coro: SGPM coroutines, --queue Q transactions in flight per thread",
        ),
    ] {
        s += &format!("  {n:<18} {d}\n");
    }
    s += "\nProtocol options (CCBench Table 1):\n";
    for (n, d) in [
        (
            "--lock-wait W",
            "no-wait | wait: busy write lock at commit (silo, tictoc)",
        ),
        (
            "--backoff",
            "AdaptiveBackoff before retries (all protocols)",
        ),
        (
            "--read-phase-extension NS",
            "delay at the end of the read phase (all protocols)",
        ),
        (
            "--tictoc-nowait-tt",
            "TicToc NoWaitTT: release locks, pause, retry validation",
        ),
        ("--tictoc-preemptive-abort", "TicToc PreemptiveAbort"),
        ("--tictoc-timestamp-history", "TicToc TimestampHistory"),
        (
            "--silo-epoch-ms MS",
            "Silo (and MOCC) epoch length (default 40)",
        ),
        (
            "--mocc-threshold H",
            "MOCC temperature threshold for read locks, 1..=63 (default 10)",
        ),
        (
            "--mocc-temperature T",
            "page | record: MOCC temperature granularity (default page)",
        ),
        (
            "--mocc-lock L",
            "rw | mql: MOCC record lock, CCBench's rw lock or MQL (default rw)",
        ),
        (
            "--plor-dwa",
            "PLOR delayed write-lock acquisition (lock/upgrade at commit)",
        ),
        (
            "--plor-ro-threshold N",
            "PLOR: read-only txns lock after N aborts (default 3; 0 = always)",
        ),
        (
            "--plor-priority P",
            "PLOR commit priority: arrival | deadline (PLOR-RT)",
        ),
        (
            "--plor-slack F",
            "PLOR-RT slack factor in D = A + F x records (default 1.0, >= 0)",
        ),
        (
            "--gc-interval-us N",
            "RapidGC: version watermark refresh interval (si, ermia, mvto, cicada; default 10)",
        ),
        (
            "--no-version-reuse",
            "AssertiveVersionReuse off: one shared version free list (si, ermia, mvto, cicada)",
        ),
        (
            "--version-memory-mb N",
            "cap on older versions' memory; past it the run stops (default 1024)",
        ),
        (
            "--aggressive-gc",
            "AggressiveGC (mvto): free still-visible versions; their readers abort",
        ),
        (
            "--cicada-no-early-abort",
            "Cicada EarlyAbort off (the six optimizations are on by default)",
        ),
        (
            "--cicada-no-inlining",
            "Cicada BestEffortInlining off: every version is a chain node",
        ),
        (
            "--cicada-no-precheck",
            "Cicada PrecheckVersionConsistency off",
        ),
        (
            "--cicada-no-sort",
            "Cicada SortWriteSetByContention off: lock in record order",
        ),
        (
            "--cicada-no-backoff",
            "Cicada AdaptiveBackoff off (RapidGC: --gc-interval-us)",
        ),
    ] {
        s += &format!("  {n:<28} {d}\n");
    }
    s += "\nDeterministic protocols (ord_lock, decentsched) schedule from access sets declared before \
          a transaction runs:\n  ycsb, long-scan and tpcc --mix np declare; tpcc mixes with \
          order_status, delivery or stock_level do not (rejected).\n";
    for (n, d) in [
        (
            "--ds-queues N",
            "DecentSched shared queues, objects hashed onto them (default 16384)",
        ),
        (
            "--ds-epoch-txns N",
            "DecentSched transactions per worker per epoch (default 1024)",
        ),
        (
            "--ds-epoch-us N",
            "DecentSched longest epoch in microseconds (default 1000)",
        ),
    ] {
        s += &format!("  {n:<28} {d}\n");
    }
    s
}

/// The TPC-C section of `txbench list`: flags, mix syntax, transaction names, run options.
fn tpcc_list_text() -> String {
    let mut s = String::from("\nTPC-C parameters (--workload tpcc):\n");
    for (n, d) in [
        (
            "--warehouses N",
            format!("1..={MAX_WAREHOUSES}, as many as fit in memory (default 1)"),
        ),
        (
            "--mix M",
            "full | np | NAME=PCT,... summing to 100, omitted = 0 (default full)".into(),
        ),
        (
            "--stock-level-isolation I",
            "serializable (default) | read-committed: Stock-Level (PLOR 6.1)".into(),
        ),
        (
            "--warehouse-binding B",
            "home (default): worker i uses warehouse i % W + 1 | random: per txn".into(),
        ),
        (
            "--tpcc-spare-orders N",
            "order slots per district (default: 500k New-Orders/s x run, >= 2000)".into(),
        ),
    ] {
        s += &format!("  {n:<28} {d}\n");
    }
    s += "\nTPC-C transactions (NAME in --mix; dashes also accepted: new-order):\n";
    s += &format!("  {:<14} {:>5} {:>5}\n", "", "full", "np");
    for t in TxnType::ALL {
        s += &format!(
            "  {:<14} {:>4}% {:>4}%\n",
            t.name(),
            TpccMix::FULL.percent(t),
            TpccMix::NP.percent(t)
        );
    }
    s += "  e.g. --mix new_order=50,payment=40,delivery=10\n";
    s
}
