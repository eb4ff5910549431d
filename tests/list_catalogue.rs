//! `txbench list` documents every flag of `txbench run`: each flag clap knows, with its short
//! name, its possible values and its default, has an entry of its own in the listing, so a flag
//! added to the command line cannot be missing from the reference.

use clap::CommandFactory;
use std::process::Command;
use txbench::config::Cli;

fn list_text() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .arg("list")
        .output()
        .expect("run txbench list");
    assert!(out.status.success(), "txbench list failed: {out:?}");
    String::from_utf8(out.stdout).expect("txbench list prints UTF-8")
}

/// The listing's entry for `--long`: the lines from the one that starts with the flag (after
/// the indentation and an optional `-x, `) up to the next entry or section.
fn entry<'a>(text: &'a str, long: &str) -> Option<Vec<&'a str>> {
    let flag = format!("--{long}");
    let mut lines = text.lines().skip_while(|line| {
        let t = line.trim_start();
        let t = match t.split_once(", ") {
            Some((short, rest)) if short.len() == 2 && short.starts_with('-') => rest,
            _ => t,
        };
        !(t.starts_with(&flag)
            && t[flag.len()..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace))
    });
    let first = lines.next()?;
    let mut found = vec![first];
    // Continuation lines are indented past the flag column; the next entry or section is not.
    found.extend(lines.take_while(|l| l.starts_with(&" ".repeat(20))));
    Some(found)
}

#[test]
fn list_has_an_entry_for_every_run_flag() {
    let text = list_text();
    let mut cli = Cli::command();
    cli.build();
    let run = cli.find_subcommand("run").expect("run subcommand");
    let mut checked = 0;
    let mut missing = Vec::new();
    let mut wrong = Vec::new();
    for arg in run.get_arguments() {
        let Some(long) = arg.get_long() else {
            continue;
        };
        if long == "help" {
            continue;
        }
        let Some(lines) = entry(&text, long) else {
            missing.push(format!("--{long}"));
            continue;
        };
        // Wrapping may break a line anywhere between words.
        let body = lines
            .iter()
            .flat_map(|l| l.split_whitespace())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(short) = arg.get_short()
            && !lines[0]
                .trim_start()
                .starts_with(&format!("-{short}, --{long}"))
        {
            wrong.push(format!("--{long}: short -{short} not shown"));
        }
        if arg.get_action().takes_values() {
            for v in arg.get_possible_values() {
                if !body.contains(v.get_name()) {
                    wrong.push(format!("--{long}: value {} not listed", v.get_name()));
                }
            }
            for d in arg.get_default_values() {
                let d = d.to_string_lossy();
                if !body.contains(&format!("[default: {d}]")) {
                    wrong.push(format!("--{long}: default {d} not listed"));
                }
            }
        }
        checked += 1;
    }
    assert!(
        missing.is_empty(),
        "txbench list has no entry for {}",
        missing.join(", ")
    );
    assert!(wrong.is_empty(), "txbench list: {}", wrong.join("; "));
    // The run command has dozens of flags; a listing that matched none would prove nothing.
    assert!(checked > 50, "only {checked} run flags found");
}

#[test]
fn help_run_prints_the_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(["help", "run"])
        .output()
        .expect("run txbench help run");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in ["--rate", "--executor", "--sample-ms", "--table-memory-mb"] {
        assert!(text.contains(flag), "txbench help run lacks {flag}");
    }
}
