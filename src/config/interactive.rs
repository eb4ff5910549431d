//! `txbench run`'s interactive flags (`--interactive`, `--connect`, `--rtt-us`, `--token`),
//! validated into [`Interactive`].

use super::cli::RunArgs;
use super::serve_cli::{MAX_RTT_US, MAX_TOKEN_BYTES};
use super::validate::out_of_range;
use super::{ConfigError, Executor};
use crate::protocol::ProtocolKind;
use std::net::ToSocketAddrs;

/// How a run's clients reach a server, when they do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interactive {
    /// `--interactive`: a server in this process on a loopback port, one session per client.
    Loopback {
        /// `--rtt-us`: added to every reply's path, microseconds.
        rtt_us: u64,
    },
    /// `--connect`: a running `txbench serve`.
    Connect {
        /// HOST:PORT, as given (it resolved when validated).
        addr: String,
        /// `--token`, presented in the handshake.
        token: Option<String>,
    },
}

impl Interactive {
    /// The report's name for the execution model.
    pub fn name(&self) -> &'static str {
        match self {
            Interactive::Loopback { .. } => "interactive",
            Interactive::Connect { .. } => "connect",
        }
    }
}

impl RunArgs {
    /// The interactive mode, if any, checked against the rest of the run; with `--interactive
    /// -p all`, drops the protocol a server cannot serve (2PL with early release: a client's
    /// abort after a write could not be undone).
    pub(super) fn interactive_mode(
        &self,
        executor: Executor,
        open_loop: bool,
        protocols: &mut Vec<ProtocolKind>,
    ) -> Result<Option<Interactive>, ConfigError> {
        let rtt_us = self.rtt_us;
        if let Some(rtt) = rtt_us
            && rtt > MAX_RTT_US
        {
            return Err(out_of_range("rtt-us", rtt, "0 <= rtt-us <= 1000000"));
        }
        if let Some(t) = &self.token
            && (t.is_empty() || t.len() > MAX_TOKEN_BYTES)
        {
            return Err(out_of_range("token", "(hidden)", "1 to 256 bytes"));
        }
        let mode = match (&self.connect, self.interactive) {
            (None, false) => {
                if rtt_us.is_some() {
                    return Err(ConfigError::NeedsFlag {
                        param: "rtt-us",
                        needs: "interactive",
                    });
                }
                if self.token.is_some() {
                    return Err(ConfigError::NeedsFlag {
                        param: "token",
                        needs: "connect",
                    });
                }
                return Ok(None);
            }
            (Some(addr), true) => {
                return Err(out_of_range(
                    "connect",
                    addr,
                    "not with --interactive, which runs its own server",
                ));
            }
            (None, true) => {
                if self.token.is_some() {
                    return Err(ConfigError::NeedsFlag {
                        param: "token",
                        needs: "connect",
                    });
                }
                Interactive::Loopback {
                    rtt_us: rtt_us.unwrap_or(0),
                }
            }
            (Some(addr), false) => {
                if rtt_us.is_some() {
                    return Err(out_of_range(
                        "rtt-us",
                        rtt_us.unwrap_or(0),
                        "none with --connect: give it to the server (txbench serve --rtt-us)",
                    ));
                }
                let resolves = addr.to_socket_addrs().is_ok_and(|mut a| a.next().is_some());
                if !resolves {
                    return Err(out_of_range(
                        "connect",
                        addr,
                        "HOST:PORT of a running txbench serve",
                    ));
                }
                if protocols.len() != 1 {
                    return Err(out_of_range(
                        "protocol",
                        &self.protocol,
                        "one name with --connect: the server's protocol, for the report",
                    ));
                }
                Interactive::Connect {
                    addr: addr.clone(),
                    token: self.token.clone(),
                }
            }
        };
        let flag = if self.interactive {
            "interactive"
        } else {
            "connect"
        };
        if matches!(executor, Executor::Coro { .. }) {
            return Err(out_of_range(
                "executor",
                "coro",
                format!("thread with --{flag} (each client runs one transaction at a time)"),
            ));
        }
        if open_loop {
            return Err(out_of_range(
                "rate",
                "given",
                format!("none with --{flag} (the clients run a closed loop)"),
            ));
        }
        if matches!(mode, Interactive::Loopback { .. }) {
            // Not served (as `txbench serve` refuses them: `ProtocolKind::not_served_because`).
            let unserved = |p: &ProtocolKind| p.not_served_because().is_some();
            if self.protocol.trim().eq_ignore_ascii_case("all") {
                protocols.retain(|p| !unserved(p));
            } else if protocols.iter().any(unserved) {
                return Err(out_of_range(
                    "protocol",
                    &self.protocol,
                    "any protocol but twopl_er with --interactive (its in-place writes cannot \
                     be undone on a client's abort)",
                ));
            }
        }
        Ok(Some(mode))
    }
}
