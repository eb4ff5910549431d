//! `txbench serve` and `txbench ping`: validate, run, print. Exit status 2 for invalid input
//! (naming the flag and what is allowed), 1 when the server could not run, 0 otherwise.

use super::client::Session;
use super::durable::describe_resumed;
use super::launch::serve_announced;
use crate::config::{PingArgs, ServeArgs};
use crate::metrics::output::{Output, OutputError};
use std::io::Write;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Set by SIGINT or SIGTERM; the server stops when it sees it.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_signal: libc::c_int) {
    // Release: pairs with the accept loop's Acquire load. An atomic store is async-signal-safe.
    STOP.store(true, Ordering::Release);
}

/// Makes SIGINT and SIGTERM set [`STOP`] instead of ending the process, so the server ends its
/// sessions (aborting their transactions) and reports.
fn stop_on_signals() {
    let handler = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to a static atomic, which is async-signal-safe, and
        // has the signature `signal` expects.
        unsafe {
            libc::signal(signal, handler);
        }
    }
}

fn note(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `txbench serve`.
pub fn serve_command(
    args: &mut ServeArgs,
    out: &mut Output<impl Write>,
) -> Result<u8, OutputError> {
    let (mut run, cfg) = match args.validate() {
        Ok(v) => v,
        Err(e) => {
            note(format_args!("error: {e}"));
            return Ok(2);
        }
    };
    if let Some(log) = &mut run.log {
        // The manifest keeps `txbench run` arguments that rebuild this server's tables.
        let argv: Vec<String> = std::env::args().skip(2).collect();
        log.run_args = crate::config::serve_manifest_args(&argv, cfg.max_connections);
    }
    // Refused before listening (`ProtocolKind::not_served_because`).
    if let Some((&kind, why)) = run
        .protocols
        .first()
        .and_then(|k| Some((k, k.not_served_because()?)))
    {
        note(format_args!(
            "error: {}",
            super::launch::ServeError::NotServed(kind, why)
        ));
        return Ok(2);
    }
    let listener = match TcpListener::bind(cfg.listen) {
        Ok(l) => l,
        Err(e) => {
            note(format_args!("error: cannot listen on {}: {e}", cfg.listen));
            return Ok(2);
        }
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            note(format_args!("error: listening socket: {e}"));
            return Ok(1);
        }
    };
    stop_on_signals();
    let tables: Vec<String> = run
        .workload
        .tables()
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{i}: {} {} x {} B", t.name, t.records, t.payload_bytes))
        .collect();
    let listening = format!(
        "listening on {addr} (protocol {}, up to {} sessions; tables {})",
        run.protocols[0],
        cfg.max_connections,
        tables.join(", ")
    );
    // Printed once the database is loaded and, with --log, recovered: clients that connect
    // before wait in the socket's backlog.
    let mut announced: Result<(), OutputError> = Ok(());
    let mut ready = |log: Option<&super::durable::ServerLog>| {
        let mut lines = Vec::with_capacity(2);
        if let (Some(settings), Some(log)) = (&run.log, log) {
            lines.push(match &log.resumed {
                Some((rec, restart, rebuilt)) => {
                    describe_resumed(&settings.dir, rec, restart, rebuilt)
                }
                None => format!(
                    "logging to {} (a new log; --log-sync {})",
                    settings.dir.display(),
                    settings.sync.name()
                ),
            });
        }
        lines.push(listening.clone());
        for line in &lines {
            if announced.is_ok() {
                announced = out.line(line);
            }
        }
        if announced.is_ok() {
            announced = out.flush();
        }
    };
    let served = serve_announced(&run, &cfg, listener, &STOP, &mut ready);
    announced?;
    match served {
        Ok(s) => {
            let secs = s.elapsed.as_secs_f64();
            out.line(&format!(
                "served {} sessions in {secs:.1} s: {} commits ({:.0}/s), {} protocol aborts, \
                 {} client aborts, {} requests; {} sessions closed on faults, {} refused",
                s.sessions,
                s.commits,
                s.commits as f64 / secs.max(1e-9),
                s.aborts,
                s.user_aborts,
                s.requests,
                s.faults,
                s.refused
            ))?;
            if let Some(log) = &s.log {
                out.line(&format!(
                    "log: {} transactions, {} bytes, {} flushes, {} fsyncs, durable epoch {}",
                    log.txns, log.bytes, log.flushes, log.fsyncs, log.durable_epoch
                ))?;
            }
            if cfg.record_history {
                // The whole run's verdict, as a client's `CHECK` gets it mid-run.
                let c = crate::check::check(&s.histories);
                out.line(&format!(
                    "check: {} transactions, {} cycles, {} anomalies: {}",
                    c.transactions,
                    c.cycles,
                    c.anomalies,
                    if c.is_serializable() {
                        "serializable"
                    } else {
                        "NOT serializable"
                    }
                ))?;
            }
            Ok(0)
        }
        Err(e) => {
            note(format_args!("error: {e}"));
            Ok(e.exit_code())
        }
    }
}

/// `txbench ping`: `count` bare round trips over one session; prints their median and p99.
pub fn ping_command(args: &PingArgs, out: &mut Output<impl Write>) -> Result<u8, OutputError> {
    if let Err(e) = args.validate() {
        note(format_args!("error: {e}"));
        return Ok(2);
    }
    let mut session = match Session::connect(&args.addr, args.token.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            note(format_args!("error: cannot connect to {}: {e}", args.addr));
            return Ok(1);
        }
    };
    let mut rtt_ns = Vec::with_capacity(args.count);
    for _ in 0..args.count {
        let t = Instant::now();
        if let Err(e) = session.ping() {
            note(format_args!("error: ping {}: {e}", args.addr));
            return Ok(1);
        }
        rtt_ns.push(t.elapsed().as_nanos() as u64);
    }
    let (median, p99) = median_and_p99(&mut rtt_ns);
    out.line(&format!(
        "ping {}: {} round trips, median {:.1} us, p99 {:.1} us",
        args.addr,
        args.count,
        median as f64 / 1e3,
        p99 as f64 / 1e3
    ))?;
    Ok(0)
}

/// The median and the 99th percentile (nearest rank) of `samples`, which it sorts.
fn median_and_p99(samples: &mut [u64]) -> (u64, u64) {
    samples.sort_unstable();
    let rank = |q: f64| {
        let i = (q * samples.len() as f64).ceil() as usize;
        samples[i.clamp(1, samples.len()) - 1]
    };
    (rank(0.5), rank(0.99))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(median_and_p99(&mut v), (50, 99));
        assert_eq!(median_and_p99(&mut [7]), (7, 7));
    }
}
