//! The dependency arrows (docs/ARCHITECTURE.md): main -> runner -> exec -> workload -> txn ->
//! protocol -> storage/index, with `config` beside the runner and `metrics` and `check` low.
//! A module may not name a module above it: each rule below lists the paths a layer's non-test
//! code must not use. Test code (everything from a file's first `#[cfg(test)]` on, and files
//! that hold only tests) may reach anywhere to build a run.

use std::path::{Path, PathBuf};

/// (layer directory under `src/`, paths its code must not name)
const RULES: &[(&str, &[&str])] = &[
    (
        "metrics",
        &[
            "crate::config",
            "crate::workload",
            "crate::exec",
            "crate::runner",
            "crate::experiment",
        ],
    ),
    (
        "check",
        &[
            "crate::config",
            "crate::workload",
            "crate::exec",
            "crate::runner",
            "crate::experiment",
        ],
    ),
    ("config", &["crate::exec", "crate::runner"]),
    (
        "workload",
        &[
            "crate::config",
            "crate::exec",
            "crate::runner",
            "crate::experiment",
        ],
    ),
    (
        "txn",
        &[
            "crate::config",
            "crate::exec",
            "crate::runner",
            "crate::experiment",
        ],
    ),
    (
        "protocol",
        &[
            "crate::config",
            "crate::exec",
            "crate::runner",
            "crate::experiment",
        ],
    ),
    (
        "storage",
        &[
            "crate::config",
            "crate::exec",
            "crate::runner",
            "crate::experiment",
        ],
    ),
    (
        "index",
        &[
            "crate::config",
            "crate::exec",
            "crate::runner",
            "crate::experiment",
        ],
    ),
];

/// The lines of `text` before its first `#[cfg(test)]` that are code (not comments) and name
/// one of `forbidden` (followed by `::`, `;`, `}` or `,`, so `crate::exec` does not match
/// `crate::execution`), as `line number: line`.
fn violations(text: &str, forbidden: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        for path in forbidden {
            let named = code.match_indices(path).any(|(at, _)| {
                matches!(
                    code[at + path.len()..].chars().next(),
                    Some(':' | ';' | '}' | ',') | None
                )
            });
            if named {
                out.push(format!("{}: {}", i + 1, line.trim()));
            }
        }
    }
    out
}

/// Whether `path` holds only tests: `tests.rs`, `*_tests.rs`, or a file under a `tests/` folder.
fn test_only(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_layer_names_a_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut files_read = 0;
    for (layer, forbidden) in RULES {
        let dir = src.join(layer);
        let mut files = Vec::new();
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        let single = src.join(format!("{layer}.rs"));
        if single.is_file() {
            files.push(single);
        }
        assert!(!files.is_empty(), "no source for layer {layer}");
        for file in files
            .iter()
            .filter(|f| !test_only(f.strip_prefix(&src).unwrap()))
        {
            let text = std::fs::read_to_string(file).expect("readable source");
            files_read += 1;
            for v in violations(&text, forbidden) {
                found.push(format!("{}:{v}", file.display()));
            }
        }
    }
    assert!(files_read > 50, "read only {files_read} files");
    assert!(
        found.is_empty(),
        "upward dependencies (docs/ARCHITECTURE.md, the arrows):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scanner_sees_code_not_comments_or_tests() {
    let text = "\
//! Uses [`x`](crate::config::X) in a doc comment only.
use crate::storage::Table;
use crate::configure::Y;
    let n = crate::config::MAX;
#[cfg(test)]
use crate::config::RunConfig;
";
    assert_eq!(
        violations(text, &["crate::config"]),
        vec!["4: let n = crate::config::MAX;".to_string()]
    );
    assert!(violations("use crate::execution::Plan;", &["crate::exec"]).is_empty());
    assert_eq!(violations("use crate::exec;", &["crate::exec"]).len(), 1);
    assert!(test_only(Path::new("protocol/twopl/tests.rs")));
    assert!(test_only(Path::new("check/graph_tests.rs")));
    assert!(test_only(Path::new(
        "workload/tpcc/consistency/tests/mod.rs"
    )));
    assert!(!test_only(Path::new("metrics/report/mod.rs")));
}
