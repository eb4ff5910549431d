//! The flags of the interactive subcommands, `serve` and `ping`, and their validation into a
//! [`ServeConfig`].

use super::{ConfigError, MAX_WORKERS, RunArgs, RunConfig};
use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;
use thiserror::Error;

/// Flags of `txbench serve`: the workload and protocol flags of `txbench run`, and the server's.
#[derive(Debug, Args)]
// Until interrupted unless told otherwise: `run`'s default duration would stop a server early.
#[command(mut_arg("duration", |a| a
    .default_value("0")
    .help("Seconds to serve, then stop as on SIGINT (0 = until SIGINT or SIGTERM)")))]
#[command(mut_arg("log", |a| a.help(
    "Redo-log every session's committed writes in this existing directory; a COMMIT is \
     answered once durable (--log-sync). A directory holding this server's previous log is \
     recovered on start and the log continues in it; an empty one starts a new log")))]
pub struct ServeArgs {
    /// The workload, protocol and its options, as for `txbench run` (one protocol; the
    /// protocol's workers are the sessions, so `--threads` does not apply).
    #[command(flatten)]
    pub run: RunArgs,
    /// Address to listen on, IP:PORT (port 0: any free port; the address is printed). An
    /// address other than loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:4780")]
    pub listen: String,
    /// Most sessions at once; the protocol is built for this many workers.
    #[arg(long, default_value_t = 64)]
    pub max_connections: usize,
    /// Seconds a session may stay silent before its transaction is aborted and it is closed.
    #[arg(long, default_value_t = 30.0, allow_negative_numbers = true)]
    pub session_timeout: f64,
    /// Threads that serve the sessions, each running many (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub server_threads: usize,
}

/// Flags of `txbench ping`.
#[derive(Debug, Args)]
pub struct PingArgs {
    /// The server, HOST:PORT.
    pub addr: String,
    /// Round trips to measure.
    #[arg(long, short = 'n', default_value_t = 1000)]
    pub count: usize,
    /// The server's token, if it needs one.
    #[arg(long)]
    pub token: Option<String>,
}

/// Most round trips `txbench ping` measures.
pub const MAX_PINGS: usize = 10_000_000;
/// Longest token, bytes (the wire format's limit).
pub const MAX_TOKEN_BYTES: usize = 256;
/// Largest `--rtt-us`: a second.
pub const MAX_RTT_US: u64 = 1_000_000;

/// How the server runs (validated from `txbench serve`'s flags).
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Most sessions at once (and the protocol workers built).
    pub max_connections: usize,
    /// A session silent this long has its transaction aborted and is closed.
    pub session_timeout: Duration,
    /// The token every client must present; `None` accepts any (loopback only).
    pub token: Option<String>,
    /// Stop after this long; `None` runs until stopped.
    pub duration: Option<Duration>,
    /// Added to every reply's path (`--rtt-us`): a controlled network round trip.
    pub rtt: Duration,
    /// Record each session's committed history for the checker (`--check`).
    pub record_history: bool,
    /// With `record_history`: most operations of committed transactions kept, over all
    /// sessions (`--check-limit`).
    pub history_ops: u64,
    /// Event-loop threads serving the sessions (`--server-threads`; 0: one per core).
    pub threads: usize,
}

impl ServeConfig {
    /// The server of `txbench run --interactive`: loopback, any free port, one session per
    /// client, until stopped.
    pub fn loopback(
        clients: usize,
        rtt: Duration,
        record_history: bool,
        history_ops: u64,
    ) -> ServeConfig {
        ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            max_connections: clients,
            session_timeout: Duration::from_secs(30),
            token: None,
            duration: None,
            rtt,
            record_history,
            history_ops,
            threads: 0,
        }
    }

    /// The event-loop threads to run: as configured, or one per core; never more than
    /// sessions can use.
    pub fn loop_threads(&self) -> usize {
        let wanted = match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        wanted.clamp(1, self.max_connections.max(1))
    }
}

/// Why `txbench serve`'s flags are invalid.
#[derive(Debug, Error)]
pub enum ServeConfigError {
    /// A `txbench run` flag is invalid.
    #[error(transparent)]
    Run(#[from] ConfigError),
    /// A value outside its allowed range.
    #[error("invalid value '{value}' for --{param}: allowed {allowed}")]
    OutOfRange {
        /// Flag name without dashes.
        param: &'static str,
        /// What was given.
        value: String,
        /// The allowed range, in words.
        allowed: &'static str,
    },
    /// Listening beyond loopback without a token.
    #[error(
        "--listen {0} is not a loopback address: anyone who can reach it could run transactions; \
         give --token SECRET (every client must then present it), or listen on 127.0.0.1"
    )]
    NeedsToken(SocketAddr),
}

fn out_of_range(
    param: &'static str,
    value: impl ToString,
    allowed: &'static str,
) -> ServeConfigError {
    ServeConfigError::OutOfRange {
        param,
        value: value.to_string(),
        allowed,
    }
}

impl ServeArgs {
    /// Validates the flags: the run configuration (built for `--max-connections` workers, one
    /// protocol) and the server's.
    pub fn validate(&mut self) -> Result<(RunConfig, ServeConfig), ServeConfigError> {
        if self.max_connections == 0 || self.max_connections > MAX_WORKERS {
            return Err(out_of_range(
                "max-connections",
                self.max_connections,
                "1 <= max-connections <= 1024",
            ));
        }
        if self.server_threads > MAX_WORKERS {
            return Err(out_of_range(
                "server-threads",
                self.server_threads,
                "0 <= server-threads <= 1024 (0: one per core)",
            ));
        }
        if let Some(t) = self.run.threads {
            return Err(out_of_range(
                "threads",
                t,
                "none: each session is a protocol worker; size them with --max-connections",
            ));
        }
        let served = self.run.duration;
        if !(served.is_finite() && (0.0..=86_400.0 * 365.0).contains(&served)) {
            return Err(out_of_range(
                "duration",
                served,
                "0 <= seconds <= 31536000 (0 = until interrupted)",
            ));
        }
        let timeout = self.session_timeout;
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
            return Err(out_of_range(
                "session-timeout",
                timeout,
                "0 < seconds <= 86400",
            ));
        }
        let listen: SocketAddr = self.listen.parse().map_err(|_| {
            out_of_range(
                "listen",
                &self.listen,
                "IP:PORT, e.g. 127.0.0.1:4780 or [::1]:0",
            )
        })?;
        let token = self.run.token.take();
        if let Some(t) = &token
            && (t.is_empty() || t.len() > MAX_TOKEN_BYTES)
        {
            return Err(out_of_range("token", "(hidden)", "1 to 256 bytes"));
        }
        if !listen.ip().is_loopback() && token.is_none() {
            return Err(ServeConfigError::NeedsToken(listen));
        }
        let rtt_us = self.run.rtt_us.take().unwrap_or(0);
        if rtt_us > MAX_RTT_US {
            return Err(out_of_range("rtt-us", rtt_us, "0 <= rtt-us <= 1000000"));
        }
        if self.run.interactive || self.run.connect.is_some() {
            return Err(out_of_range(
                if self.run.interactive {
                    "interactive"
                } else {
                    "connect"
                },
                "given",
                "not given: they are flags of `txbench run`",
            ));
        }
        // The run's timing does not apply to a server (it serves until stopped); validation
        // checks them as for a run, so they get values it accepts.
        self.run.threads = Some(self.max_connections);
        self.run.duration = 1.0;
        self.run.warmup = 0.0;
        // A server's log directory may hold its previous log: it is recovered and continued.
        self.run.resume_log = true;
        let mut run = self.run.validate()?;
        // A client may abort any transaction, or vanish mid-way (the server then aborts it):
        // PWV puts its commit point at the commit, as for workloads that roll back.
        run.options.user_aborts = true;
        if run.log.is_some() {
            durable_serving(&run, self.run.log_acks.is_some())?;
        }
        if run.protocols.len() != 1 {
            return Err(out_of_range(
                "protocol",
                &self.run.protocol,
                "one protocol name (a server runs one protocol)",
            ));
        }
        // The reason: `ProtocolKind::not_served_because`.
        if run.protocols[0].not_served_because().is_some() {
            return Err(out_of_range(
                "protocol",
                &self.run.protocol,
                "a protocol that can serve sessions: any but twopl_er (its in-place writes \
                 cannot be undone on a client's abort or disconnect)",
            ));
        }
        let config = ServeConfig {
            listen,
            max_connections: self.max_connections,
            session_timeout: Duration::from_secs_f64(timeout),
            token,
            duration: (served > 0.0).then(|| Duration::from_secs_f64(served)),
            rtt: Duration::from_micros(rtt_us),
            // `--check`: the sessions record the history, which a client's `CHECK` (`txbench run
            // --connect --check`) has checked.
            record_history: run.check,
            history_ops: run.exec.check_limit_ops,
            threads: self.server_threads,
        };
        Ok((run, config))
    }
}

/// The limits of `serve --log` (`exec::interactive::durable`).
fn durable_serving(run: &RunConfig, acks_given: bool) -> Result<(), ServeConfigError> {
    if acks_given {
        return Err(out_of_range(
            "log-acks",
            "given",
            "not with serve: a session's COMMIT reply is its durable acknowledgement",
        ));
    }
    // A new log (an empty directory) starts from the load, as the checker's history does, so
    // the two go together. A previous log is recovered before the first session: the
    // recovered versions' writers ran in an earlier server and are in no history here, and
    // the log's continuation needs their seqs (they order replay across generations), so the
    // history cannot restart from the recovered state by re-stamping it as loaded.
    if let Some(settings) = &run.log
        && run.check
        && crate::log::files::holds_log(&settings.dir).unwrap_or(true)
    {
        return Err(out_of_range(
            "check",
            "given",
            "with --log only on an empty log directory (a new log): this one holds a previous \
             server's log, which the server recovers on start, and the checker's history \
             starts at the load, so the recovered versions' writers are not in it (give an \
             empty directory, or serve without --check)",
        ));
    }
    Ok(())
}

/// The manifest's arguments for a server's log (`log::files::Manifest`): `txbench run`
/// arguments that rebuild exactly the database the server loaded (`txbench recover DIR`
/// reads them, and a restarted server compares them with its own). `argv` is the command
/// line after `serve`; the log's flags and the server's own go, and the run's sizing as the
/// server validated it (a worker per session, its fixed timing) is added.
pub fn serve_manifest_args(argv: &[String], max_connections: usize) -> Vec<String> {
    const SERVER_FLAGS: [&str; 7] = [
        "--listen",
        "--max-connections",
        "--session-timeout",
        "--token",
        "--rtt-us",
        "--duration",
        "-d",
    ];
    let mut out = Vec::with_capacity(argv.len() + 6);
    let mut skip_value = false;
    for a in crate::log::run_args_without_log_flags(argv) {
        if skip_value {
            skip_value = false;
            continue;
        }
        if SERVER_FLAGS.contains(&a.as_str()) {
            skip_value = true;
            continue;
        }
        if SERVER_FLAGS
            .iter()
            .any(|f| f.starts_with("--") && a.starts_with(&format!("{f}=")))
            || (a.starts_with("-d") && !a.starts_with("--"))
        {
            continue;
        }
        out.push(a);
    }
    out.extend(
        [
            "--threads",
            &max_connections.to_string(),
            "--duration",
            "1",
            "--warmup",
            "0",
        ]
        .map(String::from),
    );
    out
}

impl PingArgs {
    /// Validates the count.
    pub fn validate(&self) -> Result<(), ServeConfigError> {
        if self.count == 0 || self.count > MAX_PINGS {
            return Err(out_of_range("count", self.count, "1 <= count <= 10000000"));
        }
        if let Some(t) = &self.token
            && t.len() > MAX_TOKEN_BYTES
        {
            return Err(out_of_range("token", "(hidden)", "at most 256 bytes"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Cli, Command};
    use clap::Parser;

    fn validate(extra: &[&str]) -> Result<(RunConfig, ServeConfig), ServeConfigError> {
        let mut argv = vec!["txbench", "serve", "--records", "64"];
        if !extra.contains(&"-p") {
            argv.extend_from_slice(&["-p", "no_wait"]);
        }
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).expect("flags parse").command {
            Command::Serve(mut args) => args.validate(),
            _ => unreachable!("a serve command"),
        }
    }

    #[test]
    fn listening_beyond_loopback_needs_a_token() {
        let open = validate(&["--listen", "0.0.0.0:0"]);
        assert!(
            matches!(open, Err(ServeConfigError::NeedsToken(_))),
            "{open:?}"
        );
        let (_, cfg) = validate(&["--listen", "0.0.0.0:0", "--token", "s"]).unwrap();
        assert_eq!(cfg.token.as_deref(), Some("s"));
        let (_, cfg) = validate(&["--listen", "[::1]:0"]).unwrap();
        assert_eq!(cfg.token, None);
    }

    #[test]
    fn check_records_the_history_within_its_limit() {
        let (_, cfg) = validate(&["--check", "--check-limit", "5000"]).unwrap();
        assert!(cfg.record_history);
        assert_eq!(cfg.history_ops, 5000);
        let (_, cfg) = validate(&[]).unwrap();
        assert!(!cfg.record_history);
    }

    /// `--check` with `--log`: a new log (an empty directory) records the history; a
    /// directory holding a previous log, which the server would recover, is refused.
    #[test]
    fn check_with_a_log_needs_a_new_log() {
        let dir = std::env::temp_dir().join(format!("txbench-serve-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.to_str().unwrap();
        let (run, cfg) = validate(&["--check", "--log", d]).unwrap();
        assert!(cfg.record_history && run.log.is_some());
        std::fs::write(dir.join(crate::log::files::MANIFEST), b"{}").unwrap();
        match validate(&["--check", "--log", d]) {
            Err(e @ ServeConfigError::OutOfRange { param: "check", .. }) => {
                assert!(e.to_string().contains("previous server's log"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            validate(&["--log", d]).is_ok(),
            "without --check it is resumed"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_protocol_is_built_for_the_sessions_and_serves_until_stopped() {
        let (run, cfg) = validate(&["--max-connections", "3"]).unwrap();
        assert_eq!((run.options.threads, cfg.max_connections), (3, 3));
        assert_eq!(cfg.duration, None);
        for bad in [
            &["--threads", "2"][..],
            &["--max-connections", "0"],
            &["--session-timeout", "0"],
            &["--listen", "localhost"],
            &["--duration", "-1"],
            &["-p", "all"],
            &["-p", "twopl_er"],
        ] {
            let got = validate(bad);
            assert!(
                matches!(got, Err(ServeConfigError::OutOfRange { .. })),
                "{bad:?}: {got:?}"
            );
        }
        // Served: idle sessions step away from the epoch barrier and the batches, and PWV
        // makes nothing visible before the commit (a client may abort anywhere).
        for p in ["decentsched", "aria", "calvin", "bohm", "pwv"] {
            let (run, _) = validate(&["-p", p]).unwrap_or_else(|e| panic!("{p}: {e}"));
            assert!(run.options.user_aborts, "{p}");
        }
    }
}
