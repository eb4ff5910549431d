//! A `txbench serve --log DIR` child process for the durable-server tests
//! (`tests/durable_server.rs`, `tests/durable_tpcc_server.rs`; each includes this file with
//! `#[path]`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use txbench::client::Session;

/// A running `txbench serve`: the child, its address, and what it printed before listening.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub before_listening: Vec<String>,
    /// Kept open: a closed pipe would fail the server's later prints.
    _stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Starts `txbench ARGS --log DIR LOG_FLAGS` and waits for its "listening on" line.
    // The child is kept in the `Server` and reaped by its `Drop`, which clippy does not follow.
    #[allow(clippy::zombie_processes)]
    pub fn start(args: &[String], dir: &Path, log_flags: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_txbench"))
            .args(args)
            .arg("--log")
            .arg(dir)
            .args(log_flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn txbench serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut before_listening = Vec::new();
        loop {
            let mut line = String::new();
            let n = stdout.read_line(&mut line).expect("server output");
            assert!(
                n > 0,
                "the server ended before listening ({:?}); it printed {before_listening:?}",
                child.wait()
            );
            if let Some(rest) = line.strip_prefix("listening on ") {
                let addr = rest
                    .split_whitespace()
                    .next()
                    .expect("an address")
                    .to_string();
                return Server {
                    child,
                    addr,
                    before_listening,
                    _stdout: stdout,
                };
            }
            before_listening.push(line.trim_end().to_string());
        }
    }

    pub fn connect(&self) -> Session {
        Session::connect(self.addr.as_str(), None).expect("connect")
    }

    /// SIGKILL, then reap (`Drop`).
    #[allow(dead_code)] // one of the two including tests kills by dropping
    pub fn kill(self) {}
}

/// A server is SIGKILLed and reaped when dropped: by [`Server::kill`], or when a failing test
/// unwinds past it (no server outlives its test).
impl Drop for Server {
    fn drop(&mut self) {
        // Not `expect`: a panic here while a failing test unwinds would abort the run.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
