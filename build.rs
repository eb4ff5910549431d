//! Records the git commit txbench is built from (`TXBENCH_GIT_COMMIT`), so that every results row
//! says which code measured it. Without git (a source tarball), or outside a repository, the
//! commit is `unknown`; a `TXBENCH_GIT_COMMIT` set in the build environment wins (packagers).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=TXBENCH_GIT_COMMIT");
    // Rebuild when HEAD moves: HEAD itself (a branch switch) and the refs it may point to. In a
    // worktree the per-worktree HEAD and the shared refs live in different directories.
    for dir in [
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ]
    .into_iter()
    .flatten()
    {
        for f in ["HEAD", "packed-refs", "refs/heads"] {
            let p = std::path::Path::new(&dir).join(f);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let commit = std::env::var("TXBENCH_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=TXBENCH_GIT_COMMIT={commit}");
}
