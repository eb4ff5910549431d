//! Runs whose protocol runs elsewhere: the clients of `--connect` against a `txbench serve`,
//! the server's verdict when they ask for `--check`, and what an interactive run (connected or
//! `--interactive` loopback) adds to its report.

use crate::check;
use crate::config::RunConfig;
use crate::exec::interactive::client::{Session, SessionError};
use crate::exec::interactive::clients::{ClientsError, ClientsOutcome, run_clients};
use crate::exec::interactive::wire::ErrorCode;
use crate::metrics::machine::MachineInfo;
use crate::metrics::report::{ProtocolLabel, RunReport};
use crate::protocol::ProtocolKind;
use crate::workload::Workload;
use std::time::Duration;

use super::RunError;

/// Runs `workload`'s clients against the server at `addr` (`--connect`): the protocol is the
/// server's (`kind` names it in the report), and so is the history: with `--check` the server
/// (`txbench serve --check`) checks it and a last session asks for its verdict.
pub(super) fn run_connected<W: Workload>(
    kind: ProtocolKind,
    addr: &str,
    token: Option<&str>,
    cfg: &RunConfig,
    workload: &W,
    machine: &MachineInfo,
) -> Result<RunReport, RunError> {
    let declare = kind.needs_declared_set();
    let outcome = run_clients(addr, token, workload, &cfg.exec, declare)?;
    let check = if cfg.check {
        Some(server_verdict(addr, token).map_err(ClientsError::Verdict)?)
    } else {
        None
    };
    let mut report = RunReport::build_named(
        &ProtocolLabel::for_run(kind, &cfg.options),
        &cfg.report_context(workload),
        &outcome.exec.workers,
        outcome.exec.measured,
        check,
        machine,
    );
    InteractiveStats::new(&outcome).add_to(&mut report);
    Ok(report)
}

/// The checker's verdict from the server at `addr`, asked by a session of its own once the run's
/// clients are gone. Their sessions end on the server a moment after they disconnect, so a
/// server with no handle free yet refuses the connection as busy: that is retried a bounded
/// number of times, a fraction of a second apart.
fn server_verdict(addr: &str, token: Option<&str>) -> Result<check::CheckReport, SessionError> {
    const TRIES: u32 = 100;
    let mut tries = 0;
    loop {
        tries += 1;
        match Session::connect(addr, token) {
            Ok(mut s) => return s.verdict(),
            Err(SessionError::Server {
                code: ErrorCode::Busy,
                ..
            }) if tries < TRIES => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e),
        }
    }
}

/// What an interactive run adds to its report, in `protocol_stats` under `interactive.`
/// (docs/METRICS.md): the bare round trip, the operations' round trips, and the split of the
/// committed transactions' time into network and queueing versus server-side work.
pub(super) struct InteractiveStats {
    values: [(&'static str, f64); 8],
}

impl InteractiveStats {
    pub(super) fn new(o: &ClientsOutcome) -> InteractiveStats {
        let us = |ns: f64| ns / 1e3;
        let per_txn = |v: u64| {
            if o.commits == 0 {
                0.0
            } else {
                v as f64 / o.commits as f64
            }
        };
        let ping = o.ping_ns as f64;
        let op_p50 = o.op_ns.value_at_quantile(0.5) as f64;
        InteractiveStats {
            values: [
                ("interactive.ping_us", us(ping)),
                ("interactive.op_p50_us", us(op_p50)),
                (
                    "interactive.op_p99_us",
                    us(o.op_ns.value_at_quantile(0.99) as f64),
                ),
                (
                    "interactive.op_over_ping",
                    if ping > 0.0 { op_p50 / ping } else { 0.0 },
                ),
                ("interactive.round_trips_per_txn", per_txn(o.round_trips)),
                ("interactive.network_us_per_txn", us(per_txn(o.network_ns))),
                (
                    "interactive.server_us_per_txn",
                    us(per_txn(o.txn_ns.saturating_sub(o.network_ns))),
                ),
                ("interactive.ops_measured", o.op_ns.len() as f64),
            ],
        }
    }

    pub(super) fn add_to(&self, report: &mut RunReport) {
        for (name, value) in self.values {
            report.protocol_stats.insert(name.to_string(), value);
        }
    }
}
