//! A researcher's own protocol, defined outside txbench's source: basic timestamp ordering
//! (Bernstein and Goodman 1980, with pre-writes so that no transaction reads uncommitted data),
//! run through txbench's runner next to built-in protocols on the same workload, with the same
//! history checker and the same reports.
//!
//! ```text
//! cargo run --release --example custom_protocol                    # the defaults below
//! cargo run --release --example custom_protocol -- -p silo,nocc -t 8 --theta 0.9 --check
//! ```
//!
//! The arguments are `txbench run`'s flags (validated the same way: a bad one exits 2 naming
//! it); `-p` names the built-in protocols to compare with. The table has one row per protocol,
//! `basic_to` last; with `--check` each row says whether its history was serializable, and the
//! exit status is 1 if a serializable protocol's was not.
//!
//! # The protocol
//!
//! Every attempt takes a timestamp `ts` from a global counter (basic T/O needs one: a retry gets
//! a new, larger one). Each record keeps the largest timestamp that read it (`rts`), the
//! timestamp of its committed version (`wts`) and the timestamp of the transaction that
//! pre-wrote it and has not finished (`writer`, 0 for none):
//!
//! - read: too late if `ts < wts` (abort); wait (`Pending`) while an older transaction's
//!   pre-write is pending, since its version comes before ours; else copy and raise `rts`;
//! - write: too late if `ts < rts` or `ts < wts` (abort), wait while an older pre-write is
//!   pending, abort if a younger one is; else pre-write (`writer = ts`) and buffer the data;
//! - commit: install every buffered write ([`WriteSet::install`], which gives the checker the
//!   version order), set `wts`, clear `writer`; it never fails, all checks were made before;
//! - abort: clear the pre-writes.
//!
//! Waits only ever go from a younger transaction to an older one, so they form no cycle, and
//! committed transactions are serializable in timestamp order. A record's three words change
//! only under its latch, held inside one call and never across `Pending`.

use clap::Parser;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::Poll;
use txbench::config::{Cli, Command, RunConfig, describe_run};
use txbench::metrics::report::{ProtocolLabel, RunReport, medians, render_table};
use txbench::protocol::{Abort, AttemptStart, InstallLog, OpResult, Protocol, WriteKind, WriteSet};
use txbench::runner::{run_all, run_custom};
use txbench::storage::Record;

/// Basic timestamp ordering. `skip_read_timestamp` is a deliberately broken variant for the
/// test below: writes ignore `rts`, so a write may slip under a younger transaction's read.
#[derive(Default)]
pub struct BasicTo {
    /// The timestamp counter.
    clock: AtomicU64,
    skip_read_timestamp: bool,
}

/// Per-record metadata (24 bytes and a latch; it shares the record's cache line with the
/// payload).
#[derive(Default)]
pub struct ToMeta {
    latch: AtomicBool,
    rts: AtomicU64,
    wts: AtomicU64,
    writer: AtomicU64,
}

/// The latch of one record, released on drop.
struct Latched<'a>(&'a ToMeta);

impl ToMeta {
    /// Takes the latch: spins briefly, then yields the CPU (with more workers than cores the
    /// holder may be descheduled; it holds the latch for a few instructions only).
    fn latch(&self) -> Latched<'_> {
        let mut round = 0u32;
        // Acquire: pairs with the Release in `Latched::drop`, so the previous holder's updates
        // of the words and of the payload are visible to this one.
        while self
            .latch
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            round += 1;
            if round % 32 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        Latched(self)
    }
}

impl Drop for Latched<'_> {
    fn drop(&mut self) {
        // Release: publishes what the holder did under the latch to the next holder.
        self.0.latch.store(false, Ordering::Release);
    }
}

// Under the latch the words need no ordering of their own: the latch's Acquire and Release
// order them, so every access below is Relaxed.
impl Latched<'_> {
    fn get(&self, word: &AtomicU64) -> u64 {
        word.load(Ordering::Relaxed)
    }
    fn set(&self, word: &AtomicU64, v: u64) {
        word.store(v, Ordering::Relaxed);
    }
}

/// A worker: the attempt's timestamp and its buffered writes.
pub struct ToWorker<'db> {
    ts: u64,
    writes: WriteSet<'db, ToMeta, ()>,
}

impl Protocol for BasicTo {
    type RecordMeta = ToMeta;
    type Worker<'db> = ToWorker<'db>;

    fn new_worker<'db>(&'db self, _id: usize) -> ToWorker<'db> {
        ToWorker {
            ts: 0,
            writes: WriteSet::default(),
        }
    }

    fn begin(&self, w: &mut ToWorker<'_>, _start: AttemptStart) {
        // Relaxed: the timestamp only has to be unique and increasing; records' latches order
        // everything else.
        w.ts = self.clock.fetch_add(1, Ordering::Relaxed) + 1;
        w.writes.clear();
    }

    fn read<'db>(
        &self,
        w: &mut ToWorker<'db>,
        rec: Record<'db, ToMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        let m = rec.meta().latch();
        let writer = m.get(&m.0.writer);
        if writer != 0 && writer < w.ts {
            // An older transaction's version is about to be installed: ours comes after it.
            return Poll::Pending;
        }
        if w.ts < m.get(&m.0.wts) {
            return Poll::Ready(Err(Abort::TimestampOrder));
        }
        rec.payload.load(out);
        m.set(&m.0.rts, m.get(&m.0.rts).max(w.ts));
        Poll::Ready(Ok(()))
    }

    fn read_committed<'db>(
        &self,
        w: &mut ToWorker<'db>,
        rec: Record<'db, ToMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if !w.writes.read_own(&rec, out) {
            // Writes are buffered until commit, so the payload is always committed; the latch
            // keeps an install from tearing the copy.
            let _m = rec.meta().latch();
            rec.payload.load(out);
        }
        Poll::Ready(Ok(()))
    }

    fn write<'db>(
        &self,
        w: &mut ToWorker<'db>,
        rec: Record<'db, ToMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        {
            let m = rec.meta().latch();
            let read_too_late = !self.skip_read_timestamp && w.ts < m.get(&m.0.rts);
            if read_too_late || w.ts < m.get(&m.0.wts) {
                return Poll::Ready(Err(Abort::TimestampOrder));
            }
            match m.get(&m.0.writer) {
                0 => m.set(&m.0.writer, w.ts),
                t if t == w.ts => {}
                t if t < w.ts => return Poll::Pending,
                _ => return Poll::Ready(Err(Abort::TimestampOrder)),
            }
        }
        w.writes.put(rec, kind, data, ());
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut ToWorker<'_>) -> OpResult {
        for i in 0..w.writes.len() {
            let rec = w.writes.entries()[i].rec;
            let m = rec.meta().latch();
            // The record is ours (`writer == ts`) and latched: the install is exclusive, as
            // `WriteSet::install` requires.
            w.writes.install(i);
            m.set(&m.0.wts, m.get(&m.0.wts).max(w.ts));
            m.set(&m.0.writer, 0);
        }
        w.writes.clear();
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut ToWorker<'_>, _why: Abort) {
        for e in w.writes.entries() {
            let m = e.rec.meta().latch();
            if m.get(&m.0.writer) == w.ts {
                m.set(&m.0.writer, 0);
            }
        }
        w.writes.clear();
    }

    fn install_log<'w>(&self, w: &'w mut ToWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

/// `txbench run ARGS`, validated; a bad flag is the error message, as `txbench run` prints it.
fn config(args: &[String]) -> Result<RunConfig, String> {
    let argv = ["txbench", "run"]
        .into_iter()
        .map(String::from)
        .chain(args.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    let Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    run.validate().map_err(|e| format!("error: {e}"))
}

/// Runs `cfg`'s built-in protocols, then basic T/O (`broken`: the variant without the read
/// timestamp check) on the same workload.
fn compare(cfg: &RunConfig, broken: bool) -> Vec<RunReport> {
    let mut reports = run_all(cfg, |_| {}).expect("the tables fit (validated)");
    let (name, skip_read_timestamp) = if broken {
        ("basic_to_without_rts", true)
    } else {
        ("basic_to", false)
    };
    let label = ProtocolLabel::new(name, true);
    let make = |_: &RunConfig| BasicTo {
        skip_read_timestamp,
        ..BasicTo::default()
    };
    reports.extend(run_custom(&label, cfg, make, |_| {}).expect("the tables fit (validated)"));
    reports
}

/// The flags used without arguments: contended YCSB with read-modify-writes, checked.
const DEFAULT_ARGS: &[&str] = &[
    "-p",
    "nocc,silo,wound_wait",
    "--records",
    "1000",
    "--ops",
    "8",
    "--theta",
    "0.9",
    "--rmw",
    "-t",
    "4",
    "-d",
    "1",
    "--check",
];

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        args = DEFAULT_ARGS.iter().map(|s| s.to_string()).collect();
    }
    let cfg = match config(&args) {
        Ok(cfg) => cfg,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let reports = compare(&cfg, false);
    println!("{}", describe_run(&cfg));
    println!("{}", render_table(&medians(&reports)));
    let failed = reports
        .iter()
        .any(|r| r.protocol_serializable && r.check.as_ref().is_some_and(|c| !c.is_serializable()));
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contended read-modify-write YCSB, checked, with 4 workers on the CI machine's 2 cores.
    fn contended(seed: u64) -> RunConfig {
        let args = format!(
            "-p silo --records 64 --payload 16 --ops 8 --theta 0.99 --rmw -t 4 -d 0.3 \
             --warmup 0 --no-pin --check --seed {seed}"
        );
        config(&args.split(' ').map(String::from).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn basic_to_runs_beside_the_built_ins_and_its_history_is_serializable() {
        let reports = compare(&contended(1), false);
        let names: Vec<&str> = reports.iter().map(|r| r.protocol.as_str()).collect();
        assert_eq!(names, ["silo", "basic_to"]);
        for r in &reports {
            let check = r.check.as_ref().expect("checked");
            assert!(r.commits > 0, "{}: nothing committed", r.protocol);
            assert!(check.is_serializable(), "{}: {check:?}", r.protocol);
            assert!(check.transactions > 0);
        }
        // The same reports as a built-in's: the table names it, the JSON row has every field.
        assert!(render_table(&reports).contains("basic_to"));
        let json = reports[1].to_json_line();
        assert!(json.contains("\"protocol\":\"basic_to\""), "{json}");
        assert!(json.contains("\"aborts_by_reason\""), "{json}");
    }

    #[test]
    fn the_checker_catches_basic_to_without_read_timestamps() {
        // Writes that ignore younger readers make read-write cycles; under contention one shows
        // within a few seeds (each run is 0.3 s).
        let caught = (1..=6).any(|seed| {
            let reports = compare(&contended(seed), true);
            let broken = reports.last().expect("the custom run");
            !broken.check.as_ref().expect("checked").is_serializable()
        });
        assert!(caught, "no seed showed a cycle");
    }

    #[test]
    fn bad_flags_are_named() {
        let e = config(&["--theta".into(), "-1".into()]).unwrap_err();
        assert!(e.contains("--theta"), "{e}");
    }
}
