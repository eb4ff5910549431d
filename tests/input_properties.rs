//! Property tests of user input (issue 21): any `txbench run` argument vector either validates or
//! is refused with a message (which `main` turns into exit status 2), never a panic; any
//! experiment-file text either loads or fails with its line and a message naming the field.
//! The functions `main` calls are tested directly (no processes), so that a few hundred cases
//! take a second or two.
//!
//! The argument vectors are drawn from `txbench run`'s own flags (clap's metadata, so a new flag
//! is covered without editing this file) with values from a vocabulary of edge cases (zero,
//! negative, huge, fractional, not a number, empty, comma lists, out-of-range skews), and a few
//! unknown tokens.

use clap::Parser;
use proptest::prelude::*;
use txbench::config::lists::expand_lists;
use txbench::config::memory::AvailableMemory;
use txbench::config::{Cli, Command};
use txbench::experiment::{parse_experiment, run_flags};

/// Values a flag may get: valid ones, edge cases and garbage.
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "8",
    "-1",
    "0.5",
    "0.99",
    "1.5",
    "1e9",
    "1e308",
    "nan",
    "inf",
    "-0",
    "18446744073709551616",
    "99999999999999999999999",
    "4096",
    "",
    "abc",
    "1,2",
    "1,,2",
    "silo",
    "silo,mvto",
    "si",
    "calvin",
    "nocc",
    "ycsb",
    "tpcc",
    "smallbank",
    "uniform",
    "thread",
    "coro",
    "0.000001",
    "/nonexistent/dir",
];

/// Tokens that are not flags of `txbench run`.
const JUNK: &[&str] = &["--no-such-flag", "-Z", "--", "run", "---", "-"];

/// The memory a validation is sized against: fixed, so that the outcome does not depend on the
/// machine running the test.
const MEMORY: u64 = 8 << 30;

/// An argument vector: `txbench run` and up to 10 flags of `txbench run` (with a value from
/// [`VALUES`] when the flag takes one), or junk tokens.
fn argv() -> impl Strategy<Value = Vec<String>> {
    let flags = run_flags();
    let flag = (0..flags.len(), 0..VALUES.len(), any::<bool>()).prop_map(move |(f, v, inline)| {
        let (name, takes) = &flags[f];
        match (takes, inline) {
            (false, _) => vec![format!("--{name}")],
            (true, true) => vec![format!("--{name}={}", VALUES[v])],
            (true, false) => vec![format!("--{name}"), VALUES[v].to_string()],
        }
    });
    let junk = (0..JUNK.len()).prop_map(|j| vec![JUNK[j].to_string()]);
    let token = prop_oneof![9 => flag, 1 => junk];
    proptest::collection::vec(token, 0..10).prop_map(|tokens| {
        let mut argv = vec!["txbench".to_string(), "run".to_string()];
        argv.extend(tokens.into_iter().flatten());
        argv
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// What `main` does with a `txbench run` command line, up to running it: expand the comma
    /// lists, parse each point with clap, validate it. Each step either succeeds or gives an
    /// error with a message; none panics.
    #[test]
    fn run_arguments_validate_or_are_refused_with_a_message(argv in argv()) {
        for point in expand_lists(&argv).into_iter().take(16) {
            match Cli::try_parse_from(&point.argv) {
                Err(e) => {
                    // clap's own exit status for a usage error is 2 (help and version: 0).
                    let status = e.exit_code();
                    prop_assert!(status == 2 || status == 0, "{:?}: status {status}", point.argv);
                    prop_assert!(!e.to_string().trim().is_empty());
                }
                Ok(Cli { command: Command::Run(args) }) => {
                    if let Err(e) = args.validate_with(AvailableMemory::given(MEMORY)) {
                        prop_assert!(!e.to_string().trim().is_empty(), "{:?}", point.argv);
                    }
                }
                Ok(_) => prop_assert!(false, "{:?} parsed as another command", point.argv),
            }
        }
    }
}

/// Keys an experiment file may hold at the top level.
const TOP_KEYS: &[&str] = &["name", "repetitions", "interleave", "results", "nonsense"];

/// TOML values, valid and not.
const TOML_VALUES: &[&str] = &[
    "1",
    "0",
    "-3",
    "1001",
    "2.5",
    "true",
    "\"silo\"",
    "\"\"",
    "\"1,2\"",
    "[1, 2, 4]",
    "[]",
    "[\"silo\", \"mvto\"]",
    "[{ label = \"a\", threads = 2 }]",
    "[{ threads = 2 }]",
    "{ a = 1 }",
    "[1, \"x\"]",
    "\"unterminated",
    "= 3",
    "",
];

/// One line of an experiment file: a section header, a key and a value, or noise.
fn line() -> impl Strategy<Value = String> {
    let flags = run_flags();
    let key = prop_oneof![
        (0..flags.len()).prop_map(move |f| flags[f].0.clone()),
        (0..TOP_KEYS.len()).prop_map(|k| TOP_KEYS[k].to_string()),
    ];
    prop_oneof![
        2 => Just("[base]".to_string()),
        2 => Just("[axes]".to_string()),
        1 => Just("[other]".to_string()),
        12 => (key, 0..TOML_VALUES.len()).prop_map(|(k, v)| format!("{k} = {}", TOML_VALUES[v])),
        1 => Just("# a comment".to_string()),
        1 => "[ -~]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// An experiment file either loads or fails naming a line inside the file and saying what is
    /// wrong (but for a file that sets nothing at all); never a panic.
    #[test]
    fn experiment_files_load_or_fail_with_line_and_field(lines in proptest::collection::vec(line(), 0..12)) {
        let text = lines.join("\n");
        let flags = run_flags();
        if let Err(e) = parse_experiment("exp.toml", &text, &flags) {
            prop_assert!(!e.message.trim().is_empty(), "{text}");
            // The one error about the file as a whole (it sets nothing) has no line.
            let whole_file = e.message.starts_with("the experiment sets nothing");
            let line = e.line;
            prop_assert!(
                line.is_some_and(|l| l >= 1 && l <= lines.len().max(1)) || (whole_file && line.is_none()),
                "line {line:?} of {} in {e} for:\n{text}",
                lines.len()
            );
        }
    }
}

/// The property's check can fail: a setting's error names the setting's line and its field.
#[test]
fn a_bad_setting_names_its_line_and_field() {
    let text = "name = \"t\"\n\nrepetitions = 0\n";
    let e = parse_experiment("exp.toml", text, &run_flags()).unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.message.starts_with("repetitions:"), "{e}");
}
