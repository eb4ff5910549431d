//! The anomaly suite: small workloads, each built to provoke one of Adya's phenomena (in the
//! spirit of Jepsen's Elle), run in check mode under every protocol with more workers than
//! cores, and a table of which protocol must show which phenomenon.
//!
//! # Phenomena and their workloads
//!
//! Keys come in pairs `(x, y)` where a phenomenon needs two; `think` is a few microseconds of
//! busy work inside a transaction that widens the windows the races need (it never waits for
//! another transaction, so 8 workers on 2 cores cannot livelock on it).
//!
//! | phenomenon | workload | seen as |
//! |---|---|---|
//! | G0 dirty write | blind writes of `x` then `y`, or of `y` then `x` (one pair, 512-byte rows) | `G0` cycle |
//! | G1a aborted read | write `k`, think, abort (user abort); or read `k` | `aborted_read` |
//! | G1b intermediate read | write `k`, think, write `k` again, commit; or read `k` | `intermediate_read` (any read of a write before its install, the final one too) |
//! | G1c circular information flow | write my own key, think, read my partner worker's key | `G1c` cycle |
//! | G-single read skew | read `x`, think, read `y`; or write `x` and `y` | `G-single` cycle |
//! | G2-item write skew | read `x` and `y`, think, write one of them | `G2-item` cycle |
//! | lost update | read-modify-write increments of one counter, thinking in between | `lost_update`, or a final counter below the committed increments |
//! | G2 predicate phantom | scan a bucket of an ordered index and write its row count to the bucket's summary; or read the summary and insert (or delete) a row of the bucket | `G-single` or `G2-item` cycle |
//!
//! The phantom workload gives each worker its own gap of each bucket (between two fence rows),
//! which only that worker inserts into or deletes from, so inserters never conflict with each
//! other: every cycle then runs through a scan that missed an insert or a delete (the scan read
//! the gap's next key, or the row's slot, before the inserter wrote it) while the inserter read
//! the summary before the scan wrote it. That is the predicate form of write skew (two
//! anti-dependencies, `G2-item`), or read skew when a later scan that did see the insert wrote
//! the summary first (`G-single`).
//!
//! # Which protocol can show what
//!
//! * Every serializable protocol must show nothing at all on every workload: no cycle, no
//!   anomaly of any kind, and the lost-update counter exact.
//! * NoCC (no concurrency control) must show each phenomenon its workloads can provoke: G0
//!   (its commits install one record after another, unlocked, so two commits interleave), read
//!   skew, write skew, lost updates and phantoms. The tests assert that it does, which proves each
//!   of those workloads, and the checker, able to catch its phenomenon. Each is a race, so a run
//!   that misses is repeated a few times before NoCC counts as not provoked.
//! * NoCC cannot show G1a, G1b or G1c, and the table says so (not provokable, which is asserted
//!   too: showing one would be the checker's invention). Like every protocol here it buffers
//!   writes and installs them at commit, so no reader sees an aborted or intermediate write. Nor
//!   circular information flow: a read sees only installed versions, so a `wr` edge `T → U`
//!   means `T` began its commit before `U` did; and in the G1c workload each key has one writer
//!   (workers write only their own key), so a `ww` edge joins two transactions of one worker, in
//!   order. Every dependency points forward in commit order, and no cycle of them can form. Both
//!   halves matter: with keys shared between writers, NoCC's unlocked installs race on a
//!   record's version seq (lost updates, and a delayed install that puts an older seq back), the
//!   version order stops being an order, and dependency cycles do appear (the lost-update
//!   workload shows them); G0 is that race on two records.
//! * Showing G1a, G1b and G1c takes writes that are visible before their commit, so the suite
//!   defines a test-only protocol, [`InPlace`]: Adya's PL-1 ("read uncommitted" with long write
//!   locks). Writes take a no-wait exclusive lock and go to the record at once (the before-image
//!   is kept and put back on abort); reads take no lock; commit puts the before-image back and
//!   installs the final value through the shared `WriteSet::install`, so the version order and
//!   the install log are exactly those of any other protocol. It must show G1a, G1b and G1c, and
//!   also read skew, write skew, lost updates and phantoms (PL-1 prevents none of them), but
//!   never G0: its write locks are held to the end.
//!
//! Adding a protocol is one row of [`PROTOCOLS`]; a protocol with a new expected outcome (for
//! example snapshot isolation: write skew and the phantom, nothing else) lists the phenomena it
//! shows in its row. Adding a phenomenon is a [`Scenario`] (its program), one row of
//! [`PHENOMENA`] and one `#[test]` line.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Instant;

use common::{checked_db, checked_exec};
use txbench::check::history::{OpKind, WorkerHistory};
use txbench::check::{CheckReport, check};
use txbench::exec::{ExecConfig, run_coro, run_threads};
use txbench::protocol::aria::Aria;
use txbench::protocol::bohm::Bohm;
use txbench::protocol::c_sched::CSched;
use txbench::protocol::calvin::Calvin;
use txbench::protocol::calvin_ticket::CalvinTicket;
use txbench::protocol::cicada::Cicada;
use txbench::protocol::decentsched::DecentSched;
use txbench::protocol::ermia::Ermia;
use txbench::protocol::mocc::{Mocc, MqlLock, RwLock};
use txbench::protocol::mvto::Mvto;
use txbench::protocol::nocc::Nocc;
use txbench::protocol::ord_lock::OrdLock;
use txbench::protocol::plor::Plor;
use txbench::protocol::pwv::Pwv;
use txbench::protocol::si::Si;
use txbench::protocol::silo::Silo;
use txbench::protocol::tictoc::TicToc;
use txbench::protocol::twopl::{NoWait, WaitDie, WoundWait};
use txbench::protocol::twopl_er::TwoPlEr;
use txbench::protocol::{
    Abort, AccessSet, AttemptStart, InstallLog, OpResult, Protocol, ProtocolOptions, WriteKind,
    WriteSet,
};
use txbench::random::FastRng;
use txbench::storage::{
    Database, END_SENTINEL_KEY, IndexId, IndexSpec, Record, RecordId, TableId, TableSpec,
};
use txbench::txn::TxnOps;
use txbench::workload::Workload;

// ---------------------------------------------------------------------------------------------
// The tables
// ---------------------------------------------------------------------------------------------

/// A phenomenon: the workload that provokes it, and the report entries that show it.
struct Phenomenon {
    name: &'static str,
    scenario: Scenario,
    /// Cycle classes and anomaly names (`CheckReport::count`), any of which shows it.
    seen_as: &'static [&'static str],
}

const PHENOMENA: &[Phenomenon] = &[
    phenomenon("G0 dirty write", Scenario::DirtyWrite, &["G0"]),
    phenomenon("G1a aborted read", Scenario::AbortedRead, &["aborted_read"]),
    phenomenon(
        "G1b intermediate read",
        Scenario::IntermediateRead,
        &["intermediate_read"],
    ),
    phenomenon(
        "G1c circular information flow",
        Scenario::CircularFlow,
        &["G1c"],
    ),
    phenomenon("G-single read skew", Scenario::ReadSkew, &["G-single"]),
    phenomenon("G2-item write skew", Scenario::WriteSkew, &["G2-item"]),
    // Also seen when the final counter is below the committed increments (`violations`).
    phenomenon("lost update", Scenario::LostUpdate, &["lost_update"]),
    phenomenon(
        "G2 predicate phantom",
        Scenario::Phantom,
        &["G-single", "G2-item"],
    ),
];

/// A row of [`PHENOMENA`].
const fn phenomenon(
    name: &'static str,
    scenario: Scenario,
    seen_as: &'static [&'static str],
) -> Phenomenon {
    Phenomenon {
        name,
        scenario,
        seen_as,
    }
}

/// What a protocol's run of a phenomenon's workload must show. Every outcome is asserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Must show it (within [`TRIES`] runs): the workload can provoke it and nothing prevents it.
    Shows,
    /// Must not show it: the protocol's concurrency control prevents it. A serializable
    /// protocol's whole report must be clean (no cycle, no anomaly of any kind).
    Prevented,
    /// Must not show it: the workload cannot provoke it under this protocol at all (module
    /// docs), so showing it would be the checker's invention.
    NotProvokable,
    /// Not run: configuration refuses the protocol on workloads like this one (2PL with early
    /// release where transactions abort by their own logic or touch a record after its last
    /// declared use).
    Refused,
}

/// A protocol and what it must show.
struct ProtocolRow {
    name: &'static str,
    serializable: bool,
    /// Expected outcomes; a phenomenon not listed is [`Expect::Prevented`].
    expect: &'static [(Scenario, Expect)],
    /// Runs a scenario under a fresh instance of the protocol.
    run: fn(Scenario, &ExecConfig) -> Observed,
}

const PROTOCOLS: &[ProtocolRow] = &[
    serializable("no_wait", |s, e| {
        s.observe(NoWait::new(&opts(e)).unwrap(), e)
    }),
    serializable("wait_die", |s, e| {
        s.observe(WaitDie::new(&opts(e)).unwrap(), e)
    }),
    serializable("wound_wait", |s, e| {
        s.observe(WoundWait::new(&opts(e)).unwrap(), e)
    }),
    serializable("silo", |s, e| s.observe(Silo::new(&opts(e)), e)),
    serializable("tictoc", |s, e| s.observe(TicToc::new(&opts(e)), e)),
    serializable("mocc_rw", |s, e| {
        s.observe(Mocc::<RwLock>::new(&opts(e)), e)
    }),
    serializable("mocc_mql", |s, e| {
        s.observe(Mocc::<MqlLock>::new(&opts(e)), e)
    }),
    serializable("plor", |s, e| s.observe(Plor::new(&opts(e)).unwrap(), e)),
    serializable("ord_lock", |s, e| s.observe(OrdLock::new(), e)),
    serializable("decentsched", |s, e| {
        s.observe(DecentSched::new(&opts(e)), e)
    }),
    serializable("ermia", |s, e| s.observe(Ermia::new(&opts(e)).unwrap(), e)),
    serializable("mvto", |s, e| s.observe(Mvto::new(&opts(e)), e)),
    serializable("c_sched", |s, e| s.observe(CSched::new(&opts(e)), e)),
    serializable("calvin_ticket", |s, e| s.observe(CalvinTicket::new(), e)),
    serializable("cicada", |s, e| s.observe(Cicada::new(&opts(e)), e)),
    ProtocolRow {
        name: "twopl_er",
        serializable: true,
        // G1a's writer aborts by its own logic after writing (refused on TPC-C for that reason);
        // G1b's writer writes its key twice, after the first write released it.
        expect: &[
            (Scenario::AbortedRead, Expect::Refused),
            (Scenario::IntermediateRead, Expect::Refused),
        ],
        run: |s, e| s.observe(TwoPlEr::new(), e),
    },
    ProtocolRow {
        name: "nocc",
        serializable: false,
        expect: &[
            (Scenario::DirtyWrite, Expect::Shows),
            (Scenario::AbortedRead, Expect::NotProvokable),
            (Scenario::IntermediateRead, Expect::NotProvokable),
            (Scenario::CircularFlow, Expect::NotProvokable),
            (Scenario::ReadSkew, Expect::Shows),
            (Scenario::WriteSkew, Expect::Shows),
            (Scenario::LostUpdate, Expect::Shows),
            (Scenario::Phantom, Expect::Shows),
        ],
        run: |s, e| s.observe(Nocc, e),
    },
    ProtocolRow {
        name: "in_place (PL-1, test only)",
        serializable: false,
        expect: &[
            (Scenario::DirtyWrite, Expect::Prevented),
            (Scenario::AbortedRead, Expect::Shows),
            (Scenario::IntermediateRead, Expect::Shows),
            (Scenario::CircularFlow, Expect::Shows),
            (Scenario::ReadSkew, Expect::Shows),
            (Scenario::WriteSkew, Expect::Shows),
            (Scenario::LostUpdate, Expect::Shows),
            (Scenario::Phantom, Expect::Shows),
        ],
        run: |s, e| s.observe(InPlace, e),
    },
    // Snapshot isolation: write skew, on items and over a scan's predicate, and nothing else.
    ProtocolRow {
        name: "si",
        serializable: false,
        expect: &[
            (Scenario::DirtyWrite, Expect::Prevented),
            (Scenario::AbortedRead, Expect::NotProvokable),
            (Scenario::IntermediateRead, Expect::NotProvokable),
            (Scenario::CircularFlow, Expect::Prevented),
            (Scenario::ReadSkew, Expect::Prevented),
            (Scenario::WriteSkew, Expect::Shows),
            (Scenario::LostUpdate, Expect::Prevented),
            (Scenario::Phantom, Expect::Shows),
        ],
        run: |s, e| s.observe(Si::new(&opts(e)), e),
    },
    serializable("aria", |s, e| {
        let o = opts(e);
        s.observe(Aria::new(&o.batch, o.aria), e)
    }),
    serializable("aria_reordering", |s, e| {
        let mut o = opts(e);
        o.aria.reordering = true;
        s.observe(Aria::new(&o.batch, o.aria), e)
    }),
    serializable("aria_fallback", |s, e| {
        let mut o = opts(e);
        o.aria.fallback = true;
        s.observe(Aria::new(&o.batch, o.aria), e)
    }),
    serializable("aria_reordering_fallback", |s, e| {
        let mut o = opts(e);
        o.aria.reordering = true;
        o.aria.fallback = true;
        s.observe(Aria::new(&o.batch, o.aria), e)
    }),
    serializable("calvin", |s, e| {
        let o = opts(e);
        s.observe(Calvin::new(&o.batch, o.calvin), e)
    }),
    serializable("bohm", |s, e| s.observe(Bohm::new(&opts(e)), e)),
    serializable("pwv", |s, e| {
        // G1a's writers roll back by their own logic and G1b's write a key twice: PWV's commit
        // point is then its commit, as configuration sets it for such workloads
        // (`protocol::pwv`); every other scenario runs with writes visible early.
        let mut o = opts(e);
        o.user_aborts = matches!(s, Scenario::AbortedRead | Scenario::IntermediateRead);
        s.observe(Pwv::new(&o), e)
    }),
    serializable("calvin_no_wait", |s, e| {
        let mut o = opts(e);
        o.calvin.no_wait = true;
        s.observe(Calvin::new(&o.batch, o.calvin), e)
    }),
    serializable("bohm_no_wait", |s, e| {
        let mut o = opts(e);
        o.bohm.no_wait = true;
        s.observe(Bohm::new(&o), e)
    }),
    serializable("pwv_no_wait", |s, e| {
        // As the `pwv` row: commit point at the commit where the scenario's writers roll back.
        let mut o = opts(e);
        o.pwv.no_wait = true;
        o.user_aborts = matches!(s, Scenario::AbortedRead | Scenario::IntermediateRead);
        s.observe(Pwv::new(&o), e)
    }),
    serializable("decentsched_opportunistic", |s, e| {
        let mut o = opts(e);
        o.decentsched.opportunistic = true;
        s.observe(DecentSched::new(&o), e)
    }),
];

/// The row of a serializable protocol: it must show nothing.
const fn serializable(
    name: &'static str,
    run: fn(Scenario, &ExecConfig) -> Observed,
) -> ProtocolRow {
    ProtocolRow {
        name,
        serializable: true,
        expect: &[],
        run,
    }
}

// ---------------------------------------------------------------------------------------------
// The tests: one per phenomenon, each over every protocol
// ---------------------------------------------------------------------------------------------

#[test]
fn g0_dirty_write() {
    check_phenomenon(Scenario::DirtyWrite);
}

#[test]
fn g1a_aborted_read() {
    check_phenomenon(Scenario::AbortedRead);
}

#[test]
fn g1b_intermediate_read() {
    check_phenomenon(Scenario::IntermediateRead);
}

#[test]
fn g1c_circular_information_flow() {
    check_phenomenon(Scenario::CircularFlow);
}

#[test]
fn g_single_read_skew() {
    check_phenomenon(Scenario::ReadSkew);
}

#[test]
fn g2_item_write_skew() {
    check_phenomenon(Scenario::WriteSkew);
}

#[test]
fn lost_update() {
    check_phenomenon(Scenario::LostUpdate);
}

#[test]
fn g2_predicate_phantom() {
    check_phenomenon(Scenario::Phantom);
}

thread_local! {
    /// Q when this test thread runs its scenarios under the coroutine executor (`THREADS / Q`
    /// threads of Q coroutines: still `THREADS` protocol workers), 0 for the thread executor.
    /// Each `#[test]` runs on its own thread, so setting it changes that test only.
    static CORO_QUEUE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Whether the protocol being run must show the phenomenon ([`Expect::Shows`]): only then
    /// does the coroutine executor's write skew get its pause ([`WRITE_SKEW_CORO_EXTENSION_NS`]).
    static MUST_SHOW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The whole table again under the SGPM coroutine executor, 4 threads x 2 coroutines: every
/// expectation holds there too. (Coroutines of one thread interleave only where one waits, so
/// the races that NoCC and PL-1 must show need threads running side by side; with 2 threads x 4
/// coroutines PL-1's write skew was missed in 6 runs about once in 4.)
/// How long a write-skew transaction under the coroutine executor waits, suspended, between
/// its reads and its commit. A suspended coroutine lets the others of its thread run, so two
/// transactions on one pair overlap on one thread whatever the machine's load; without it the
/// race came only from threads running side by side, and with the test pinned to one core NoCC
/// and PL-1 missed their write skew (G-single cycles only) in all 6 runs in 2 test runs of 3.
/// Only write skew gets it: the other races (a dirty write, for one) happen inside a program,
/// which a wait after the program does not widen, and a thread busy in the wait is preempted
/// there rather than inside a program.
///
/// And only the protocols that must show write skew get it (NoCC, PL-1, SI): the pause exists
/// to provoke the race, and a protocol that prevents write skew is judged by its whole report
/// being clean, which the threads running side by side and the coroutines' own waits already
/// exercise. Under MVTO the pause made the workload a near-livelock (issue 21, item 8): two
/// transactions on one pair each read both keys and then sat suspended before commit; each
/// one's retry (with a new, younger timestamp) read the pair again and raised the keys' read
/// timestamps past the other's, so each commit aborted on the other's reads, over and over
/// (62-78 commits in runs doubled six times in release builds, against the 100 a run needs).
/// That is MVTO's known behaviour (a writer loses to any younger reader, and a retry cannot keep
/// its old timestamp: the reads that aborted it stay above it), not a bug the suite should
/// report, so the fix is in the scenario: a serializable protocol's transactions are not held
/// suspended between their reads and their commit.
const WRITE_SKEW_CORO_EXTENSION_NS: u64 = 20_000;

#[test]
fn every_phenomenon_under_coroutines() {
    CORO_QUEUE.with(|q| q.set(2));
    for p in PHENOMENA {
        check_phenomenon(p.scenario);
    }
}

/// Workers per run: four per core on the 2-core development machines.
const THREADS: usize = 8;

/// Length of one run.
const RUN_MILLIS: u64 = 150;
/// Runs a protocol gets to show a phenomenon it must show.
const TRIES: u64 = 6;
/// Fewest commits a run must reach: fewer means a protocol (or the workload) stopped making
/// progress, and a clean report would prove nothing.
const MIN_COMMITS: usize = 100;

/// Runs `scenario` under every protocol and compares what each showed with its row.
fn check_phenomenon(scenario: Scenario) {
    let phenomenon = PHENOMENA
        .iter()
        .find(|p| p.scenario == scenario)
        .expect("every scenario has a row");
    let mut failures = Vec::new();
    // `TXBENCH_ANOMALY_PROTOCOL=name` runs one row only (to repeat a failure; unset, all).
    let only = std::env::var("TXBENCH_ANOMALY_PROTOCOL").ok();
    if let Some(name) = &only {
        assert!(
            PROTOCOLS.iter().any(|row| row.name == name),
            "TXBENCH_ANOMALY_PROTOCOL={name}: no such row"
        );
    }
    for row in PROTOCOLS {
        if only.as_deref().is_some_and(|name| name != row.name) {
            continue;
        }
        let expect = row
            .expect
            .iter()
            .find(|(s, _)| *s == scenario)
            .map_or(Expect::Prevented, |&(_, e)| e);
        if expect == Expect::Refused {
            eprintln!("{}: {} not run (refused)", phenomenon.name, row.name);
            continue;
        }
        let started = Instant::now();
        MUST_SHOW.with(|m| m.set(expect == Expect::Shows));
        let mut verdict = Err(String::new());
        let mut millis = RUN_MILLIS;
        for attempt in 1..=TRIES {
            let mut exec = checked_exec(THREADS, millis);
            exec.seed = attempt;
            let o = (row.run)(scenario, &exec);
            verdict = judge(phenomenon, row, expect, &o).map(|()| attempt);
            // Only a phenomenon that must show is run again for lack of it; any run is run
            // again, longer, for lack of progress (wound-wait families with 8 workers on 2
            // cores wait for descheduled holders, and may commit little in a short run).
            let too_few = o.committed < MIN_COMMITS;
            if verdict.is_ok() || (expect != Expect::Shows && !too_few) {
                break;
            }
            if too_few {
                millis *= 2;
            }
        }
        match verdict {
            Ok(runs) => eprintln!(
                "{}: {} {expect:?} (runs: {runs}, {:.2?})",
                phenomenon.name,
                row.name,
                started.elapsed()
            ),
            Err(why) => failures.push(format!("{}: {why}", row.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{}:\n{}",
        phenomenon.name,
        failures.join("\n")
    );
}

/// Whether one run met the expectation; the reason when it did not.
fn judge(
    phenomenon: &Phenomenon,
    row: &ProtocolRow,
    expect: Expect,
    o: &Observed,
) -> Result<(), String> {
    if o.committed < MIN_COMMITS {
        return Err(format!("only {} commits", o.committed));
    }
    let seen = phenomenon
        .seen_as
        .iter()
        .map(|name| o.report.count(name))
        .sum::<u64>()
        + o.violations;
    let summary = || {
        format!(
            "{} commits, cycles {:?}, anomalies {:?}, {} lost increments, examples {:#?}",
            o.committed,
            o.report.cycle_kinds,
            o.report.anomaly_counts,
            o.violations,
            o.report.examples
        )
    };
    let clean = o.report.is_serializable() && o.violations == 0;
    match expect {
        Expect::Shows if seen == 0 => Err(format!(
            "must show {}, did not in {TRIES} runs; last: {}",
            phenomenon.name,
            summary()
        )),
        Expect::Shows => Ok(()),
        _ if row.serializable && !clean => Err(format!("serializable, but: {}", summary())),
        _ if seen > 0 => Err(format!(
            "must not show {} ({expect:?}), but: {}",
            phenomenon.name,
            summary()
        )),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Running a scenario
// ---------------------------------------------------------------------------------------------

fn opts(exec: &ExecConfig) -> ProtocolOptions {
    ProtocolOptions {
        threads: exec.threads,
        ..ProtocolOptions::default()
    }
}

/// What a checked run showed.
struct Observed {
    report: CheckReport,
    /// Committed transactions, all workers.
    committed: usize,
    /// Violations of the scenario's own invariant on the final database (lost update: the
    /// increments missing from the counter).
    violations: u64,
}

impl Scenario {
    /// Runs this scenario's workload on `protocol` in check mode and checks it.
    fn observe<P: Protocol>(self, protocol: P, exec: &ExecConfig) -> Observed {
        let workload = Provoke::new(self);
        let db: Database<P::RecordMeta> = checked_db(&workload);
        let out = match CORO_QUEUE.with(|q| q.get()) {
            0 => run_threads(&protocol, &db, &workload, exec),
            queue => {
                let threads = exec.threads / queue;
                run_coro(
                    &protocol,
                    &db,
                    &workload,
                    &ExecConfig {
                        threads,
                        read_phase_extension_ns: if self == Scenario::WriteSkew
                            && MUST_SHOW.with(std::cell::Cell::get)
                        {
                            WRITE_SKEW_CORO_EXTENSION_NS
                        } else {
                            0
                        },
                        ..exec.clone()
                    },
                    queue,
                )
            }
        };
        Observed {
            report: check(&out.histories),
            committed: out.histories.iter().map(WorkerHistory::len).sum(),
            violations: workload.violations(&db, &out.histories),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The workloads
// ---------------------------------------------------------------------------------------------

/// Which phenomenon a [`Provoke`] workload is built for (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    /// G0: blind writes of `x` and `y`, in either order.
    DirtyWrite,
    /// G1a: writes that abort, reads of the same keys.
    AbortedRead,
    /// G1b: keys written twice per transaction, reads of them.
    IntermediateRead,
    /// G1c: each worker writes its own key and reads its partner's.
    CircularFlow,
    /// G-single: reads of `x` then `y`, writes of both.
    ReadSkew,
    /// G2-item: reads of `x` and `y`, a write of one.
    WriteSkew,
    /// Lost update: increments of one counter.
    LostUpdate,
    /// G2 over a scan: bucket summaries against inserts and deletes in the bucket.
    Phantom,
}

/// The table of keys of every scenario but the phantom.
const KEYS: TableId = TableId(0);
/// Pairs of keys `(2p, 2p + 1)` in the two-key scenarios: few, so that races are frequent, but
/// more than one, so that a cycle rarely merges with another into a component of another class.
const PAIRS: u64 = 4;
/// Keys of the single-key scenarios (G1a, G1b).
const SINGLE_KEYS: u64 = 4;
/// Workers a scenario has keys or gaps for: the G1c scenario's own keys, the phantom's gaps.
const MAX_WORKERS: u64 = 8;
/// Row bytes of the dirty-write scenario: long installs, so that two commits interleave.
const DIRTY_WRITE_ROW: usize = 512;
/// Spin-loop hints in one [`think`].
const THINK_SPINS: u32 = 64;

/// Phantom scenario: rows in an ordered index, and one summary record per bucket.
const ROWS: TableId = TableId(0);
const SUMMARIES: TableId = TableId(1);
const INDEX: IndexId = IndexId(0);
const BUCKETS: u64 = 2;
/// Fence rows per bucket: fence `w` opens worker `w`'s gap, fence `MAX_WORKERS` closes the last.
const FENCES: u64 = MAX_WORKERS + 1;
/// Row slots: the fences, then one slot per bucket and worker, then the end sentinel.
const SENTINEL_SLOT: u64 = BUCKETS * FENCES + BUCKETS * MAX_WORKERS;

/// One transaction's parameters, kept across its retries.
#[derive(Debug, Clone, Copy, Default)]
struct Request {
    /// Which of the scenario's programs ([`Workload::txn_types`]).
    role: usize,
    /// The pair, key or bucket it works on.
    target: u64,
    /// Phantom inserts: a key offset never used before (a retry reuses its own).
    fresh: u64,
    /// The worker that runs it (the circular-flow and phantom programs use their worker's key,
    /// which the declared access set must name before the program runs).
    worker: u64,
}

/// The workload of one [`Scenario`].
struct Provoke {
    scenario: Scenario,
    /// Phantom scenario: each worker's next fresh key offset.
    next_fresh: Vec<AtomicU64>,
}

impl Provoke {
    fn new(scenario: Scenario) -> Self {
        Provoke {
            scenario,
            next_fresh: (0..MAX_WORKERS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Violations of the scenario's invariant on the final database: for the lost-update
    /// scenario, the committed increments missing from the counter.
    fn violations<M>(&self, db: &Database<M>, histories: &[WorkerHistory]) -> u64 {
        if self.scenario != Scenario::LostUpdate {
            return 0;
        }
        let increments = histories
            .iter()
            .flat_map(|h| h.txns().iter().map(move |t| (h, t)))
            .filter(|(h, t)| h.ops(t).iter().any(|op| op.kind() == OpKind::Write))
            .count() as u64;
        let mut row = vec![0u8; db.table(KEYS).stored_bytes()];
        db.table(KEYS)
            .get(RecordId(0))
            .expect("the counter")
            .payload
            .load(&mut row);
        increments.saturating_sub(word(&row))
    }
}

fn word(row: &[u8]) -> u64 {
    u64::from_le_bytes(row[..8].try_into().expect("8-byte row"))
}

/// Busy work inside a transaction (module docs): widens race windows, never waits.
fn think() {
    for _ in 0..THINK_SPINS {
        std::hint::spin_loop();
    }
}

/// Phantom scenario: the key of fence `f` of bucket `b`.
fn fence_key(b: u64, f: u64) -> u64 {
    b << 48 | f << 40
}

/// Phantom scenario: every key of bucket `b`.
fn bucket_range(b: u64) -> std::ops::RangeInclusive<u64> {
    fence_key(b, 0)..=fence_key(b + 1, 0) - 1
}

/// Phantom scenario: worker `w`'s gap of bucket `b`, between fences `w` and `w + 1`.
fn gap(b: u64, w: u64) -> std::ops::RangeInclusive<u64> {
    fence_key(b, w) + 1..=fence_key(b, w + 1) - 1
}

/// Phantom scenario: the row that carries `key` (present rows are nonzero).
fn phantom_row(key: u64) -> [u8; 8] {
    (key + 1).to_le_bytes()
}

impl Workload for Provoke {
    type Request = Request;

    fn name(&self) -> &'static str {
        "provoke"
    }

    fn tables(&self) -> Vec<TableSpec> {
        let spec = |name: &str, records, payload_bytes| TableSpec {
            name: name.into(),
            records,
            payload_bytes,
        };
        match self.scenario {
            Scenario::DirtyWrite => vec![spec("keys", 2, DIRTY_WRITE_ROW)],
            Scenario::AbortedRead | Scenario::IntermediateRead => {
                vec![spec("keys", SINGLE_KEYS, 8)]
            }
            Scenario::LostUpdate => vec![spec("keys", 1, 8)],
            Scenario::CircularFlow => vec![spec("keys", MAX_WORKERS, 8)],
            Scenario::ReadSkew | Scenario::WriteSkew => vec![spec("keys", 2 * PAIRS, 8)],
            Scenario::Phantom => vec![
                spec("rows", SENTINEL_SLOT + 1, 8),
                spec("summaries", BUCKETS, 8),
            ],
        }
    }

    fn indexes(&self) -> Vec<IndexSpec> {
        if self.scenario != Scenario::Phantom {
            return Vec::new();
        }
        vec![IndexSpec {
            name: "rows".into(),
            table: ROWS,
            key_of: |row| word(row) - 1,
        }]
    }

    fn load<M: Sync>(&self, db: &Database<M>) {
        if self.scenario != Scenario::Phantom {
            return; // zeroed keys are the loaded versions
        }
        let rows = db.table(ROWS);
        let index = &db.ordered_index(INDEX).map;
        let put = |slot: u64, key: u64| {
            // The sentinel's row only needs to be present (its entry always counts as such).
            let row = phantom_row(key.min(END_SENTINEL_KEY - 1));
            rows.get(RecordId(slot))
                .expect("slot in the table")
                .payload
                .store(&row);
            index.insert(key, RecordId(slot)).expect("fresh key");
        };
        put(SENTINEL_SLOT, END_SENTINEL_KEY);
        for b in 0..BUCKETS {
            for f in 0..FENCES {
                put(b * FENCES + f, fence_key(b, f));
            }
        }
    }

    fn new_request(&self) -> Request {
        Request::default()
    }

    fn generate(&self, worker: usize, rng: &mut FastRng, req: &mut Request) {
        req.worker = worker as u64;
        req.role = rng.below(self.txn_types().len() as u64) as usize;
        req.target = match self.scenario {
            Scenario::DirtyWrite | Scenario::LostUpdate | Scenario::CircularFlow => 0,
            Scenario::AbortedRead | Scenario::IntermediateRead => rng.below(SINGLE_KEYS),
            Scenario::ReadSkew | Scenario::WriteSkew => rng.below(PAIRS),
            Scenario::Phantom => rng.below(BUCKETS),
        };
        if self.scenario == Scenario::Phantom {
            // Relaxed: only worker `worker` touches its counter.
            req.fresh = self.next_fresh[worker].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn txn_types(&self) -> &'static [&'static str] {
        match self.scenario {
            Scenario::DirtyWrite => &["x_then_y", "y_then_x"],
            Scenario::AbortedRead => &["write_then_abort", "read"],
            Scenario::IntermediateRead => &["write_twice", "read"],
            Scenario::CircularFlow => &["write_mine_read_partners"],
            Scenario::ReadSkew => &["read_x_then_y", "write_both"],
            Scenario::WriteSkew => &["read_both_write_x", "read_both_write_y"],
            Scenario::LostUpdate => &["increment"],
            Scenario::Phantom => &["summarize", "insert_or_delete"],
        }
    }

    fn txn_type(&self, req: &Request) -> usize {
        req.role
    }

    /// Every scenario declares (for the deterministic protocols' rows): each program's records
    /// follow from its request, the phantom scan's too (the rows of one bucket sit in known
    /// slots, and the next present entry after a bucket or gap is a fence or the sentinel).
    fn declares_access_sets(&self) -> Result<(), String> {
        Ok(())
    }

    fn declare(&self, req: &Request, set: &mut AccessSet) {
        let (x, y) = (RecordId(2 * req.target), RecordId(2 * req.target + 1));
        let key = RecordId(req.target);
        let first = req.role == 0;
        match self.scenario {
            Scenario::DirtyWrite => {
                set.write(KEYS, x);
                set.write(KEYS, y);
            }
            Scenario::AbortedRead | Scenario::IntermediateRead if first => set.write(KEYS, key),
            Scenario::AbortedRead | Scenario::IntermediateRead => set.read(KEYS, key),
            Scenario::CircularFlow => {
                set.write(KEYS, RecordId(req.worker));
                set.read(KEYS, RecordId(req.worker ^ 1));
            }
            Scenario::ReadSkew if first => {
                set.read(KEYS, x);
                set.read(KEYS, y);
            }
            Scenario::ReadSkew => {
                set.write(KEYS, x);
                set.write(KEYS, y);
            }
            Scenario::WriteSkew => {
                set.read(KEYS, x);
                set.read(KEYS, y);
                set.write(KEYS, if first { x } else { y });
            }
            Scenario::LostUpdate => set.write(KEYS, key),
            Scenario::Phantom if first => {
                let b = req.target;
                // The bucket's fences and worker slots, then the next present entry after the
                // bucket: the next bucket's first fence, or the end sentinel after the last.
                for slot in b * FENCES..(b + 1) * FENCES {
                    set.read(ROWS, RecordId(slot));
                }
                let workers = BUCKETS * FENCES + b * MAX_WORKERS;
                for slot in workers..workers + MAX_WORKERS {
                    set.read(ROWS, RecordId(slot));
                }
                let next = if b + 1 < BUCKETS {
                    (b + 1) * FENCES
                } else {
                    SENTINEL_SLOT
                };
                set.read(ROWS, RecordId(next));
                set.write(SUMMARIES, RecordId(b));
            }
            Scenario::Phantom => {
                let (b, me) = (req.target, req.worker);
                set.read(SUMMARIES, RecordId(b));
                // The worker's own slot, and the fence ending its gap: what its gap scan reads
                // and what its insert's or delete's next-key path writes.
                set.write(ROWS, RecordId(BUCKETS * FENCES + b * MAX_WORKERS + me));
                set.write(ROWS, RecordId(b * FENCES + me + 1));
            }
        }
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a Request,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        program(self.scenario, tx, *req)
    }
}

/// The transaction programs (module docs).
async fn program<Tx: TxnOps>(scenario: Scenario, tx: &mut Tx, req: Request) -> Result<(), Abort> {
    let mark = |row: &mut [u8]| row.fill(0x5a);
    let (x, y) = (RecordId(2 * req.target), RecordId(2 * req.target + 1));
    let key = RecordId(req.target);
    let first = req.role == 0;
    match scenario {
        Scenario::DirtyWrite => {
            let (a, b) = if first { (x, y) } else { (y, x) };
            tx.write_with(KEYS, a, mark).await?;
            tx.write_with(KEYS, b, mark).await?;
        }
        Scenario::AbortedRead if first => {
            tx.write_with(KEYS, key, mark).await?;
            think();
            return Err(Abort::User);
        }
        Scenario::IntermediateRead if first => {
            tx.write_with(KEYS, key, |row| row.fill(1)).await?;
            think();
            tx.write_with(KEYS, key, |row| row.fill(2)).await?;
        }
        Scenario::AbortedRead | Scenario::IntermediateRead => {
            tx.read(KEYS, key).await?;
        }
        Scenario::CircularFlow => {
            // Workers pair up (0 and 1, 2 and 3, ...); each writes only its own key. "Its own":
            // the worker that generated the request, which the declared set names (under
            // coroutines a transaction the protocol signals ML or SF moves to another worker).
            let me = req.worker;
            tx.write_with(KEYS, RecordId(me), mark).await?;
            think();
            tx.read(KEYS, RecordId(me ^ 1)).await?;
        }
        Scenario::ReadSkew if first => {
            tx.read(KEYS, x).await?;
            think();
            tx.read(KEYS, y).await?;
        }
        Scenario::ReadSkew => {
            tx.write_with(KEYS, x, mark).await?;
            tx.write_with(KEYS, y, mark).await?;
        }
        Scenario::WriteSkew => {
            tx.read(KEYS, x).await?;
            tx.read(KEYS, y).await?;
            think();
            tx.write_with(KEYS, if first { x } else { y }, mark).await?;
        }
        Scenario::LostUpdate => {
            tx.update(KEYS, key, |row| {
                think();
                let n = word(row) + 1;
                row[..8].copy_from_slice(&n.to_le_bytes());
            })
            .await?;
        }
        Scenario::Phantom if first => {
            let bucket = req.target;
            let mut found = Vec::new();
            tx.scan(INDEX, bucket_range(bucket), &mut found).await?;
            think();
            let count = (found.len() as u64).to_le_bytes();
            tx.write(SUMMARIES, RecordId(bucket), &count).await?;
        }
        Scenario::Phantom => {
            // The generating worker's gap, as in the circular-flow program.
            let (bucket, me) = (req.target, req.worker);
            tx.read(SUMMARIES, RecordId(bucket)).await?;
            think();
            // Only this worker changes its gap, so the gap holds at most its one row.
            match tx.scan_first(INDEX, gap(bucket, me)).await? {
                Some((old, rid)) => {
                    tx.delete(ROWS, rid).await?;
                    tx.index_remove(INDEX, old).await?;
                }
                None => {
                    let new = gap(bucket, me).start() + req.fresh;
                    let slot = RecordId(BUCKETS * FENCES + bucket * MAX_WORKERS + me);
                    tx.insert(ROWS, slot, |row| row.copy_from_slice(&phantom_row(new)))
                        .await?;
                    // Already indexed when an aborted attempt of this request entered it.
                    tx.index_insert(INDEX, new, slot).await?;
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// InPlace: a test-only PL-1 protocol whose writes are visible before they commit
// ---------------------------------------------------------------------------------------------

/// Adya's PL-1 ("read uncommitted"; module docs): no-wait write locks held to the end, writes
/// in place at once, reads without locks. It exists to show that the checker catches G1a and
/// G1b, which no protocol that installs at commit can produce, and G1c through exposed writes.
struct InPlace;

/// An [`InPlace`] worker.
struct InPlaceWorker<'db> {
    /// Lock word value while this worker holds a record: its id + 1 (0 is free).
    tag: u64,
    /// The final payload of each written record (for reading own writes and the install at
    /// commit); an entry's state is where its before-image starts in `before`.
    writes: WriteSet<'db, AtomicU64, usize>,
    /// Before-images of the written records, back to back.
    before: Vec<u8>,
}

impl InPlaceWorker<'_> {
    /// Puts every written record back as it was and releases the locks.
    fn undo(&mut self) {
        for e in self.writes.entries() {
            let len = e.rec.payload.len();
            e.rec.payload.store(&self.before[e.state..e.state + len]);
            // Release: the next holder's Acquire sees the restored payload.
            e.rec.meta().store(0, Ordering::Release);
        }
        self.writes.clear();
        self.before.clear();
    }
}

impl Protocol for InPlace {
    /// The write lock: 0 when free, else the holder's tag.
    type RecordMeta = AtomicU64;
    type Worker<'db> = InPlaceWorker<'db>;

    fn new_worker<'db>(&'db self, id: usize) -> InPlaceWorker<'db> {
        InPlaceWorker {
            tag: id as u64 + 1,
            writes: WriteSet::default(),
            before: Vec::new(),
        }
    }

    fn begin(&self, w: &mut InPlaceWorker<'_>, _start: AttemptStart) {
        debug_assert!(w.writes.is_empty() && w.before.is_empty());
    }

    fn read<'db>(
        &self,
        w: &mut InPlaceWorker<'db>,
        rec: Record<'db, AtomicU64>,
        out: &mut [u8],
    ) -> OpResult {
        if !w.writes.read_own(&rec, out) {
            rec.payload.load(out); // whatever is there, committed or not
        }
        Poll::Ready(Ok(()))
    }

    /// The same read: PL-1 promises nothing more (no workload here uses it).
    fn read_committed<'db>(
        &self,
        w: &mut InPlaceWorker<'db>,
        rec: Record<'db, AtomicU64>,
        out: &mut [u8],
    ) -> OpResult {
        self.read(w, rec, out)
    }

    fn write<'db>(
        &self,
        w: &mut InPlaceWorker<'db>,
        rec: Record<'db, AtomicU64>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        if w.writes.position(&rec).is_some() {
            w.writes.put(rec, kind, data, 0); // a second write: the entry keeps its state
        } else {
            // Acquire: pairs with the previous holder's Release, so the before-image is the
            // payload it left.
            let locked =
                rec.meta()
                    .compare_exchange(0, w.tag, Ordering::Acquire, Ordering::Relaxed);
            if locked.is_err() {
                return Poll::Ready(Err(Abort::LockConflict));
            }
            let at = w.before.len();
            w.before.resize(at + rec.payload.len(), 0);
            rec.payload.load(&mut w.before[at..]);
            w.writes.put(rec, kind, data, at);
        }
        rec.payload.store(data); // visible at once: what PL-1 allows
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut InPlaceWorker<'_>) -> OpResult {
        for i in 0..w.writes.len() {
            let (rec, at) = {
                let e = &w.writes.entries()[i];
                (e.rec, e.state)
            };
            // Put the before-image back, then install the final payload as every protocol
            // does: the install gives it the seq after the before-image's and logs it.
            rec.payload.store(&w.before[at..at + rec.payload.len()]);
            w.writes.install(i);
            // Release: the next holder's Acquire sees the installed payload.
            rec.meta().store(0, Ordering::Release);
        }
        w.writes.clear();
        w.before.clear();
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut InPlaceWorker<'_>, _why: Abort) {
        w.undo();
    }

    fn install_log<'w>(&self, w: &'w mut InPlaceWorker<'_>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}
