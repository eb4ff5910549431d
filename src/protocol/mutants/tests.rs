//! The mutation table: every mutant, run under contention in check mode, must be caught; the
//! same protocol and workload without it must pass.
//!
//! Each row of [`CASES`] runs [`THREADS`] workers (more than the 2 cores of the development
//! machines, so workers are preempted inside transactions) for [`RUN`] on a small, skewed YCSB
//! table, retrying with a new seed up to [`ATTEMPTS`] times until the checker reports the run not
//! serializable. Nearly every row is caught by its first run. [`RACE_CASES`] holds the mutants
//! that only two truly parallel commits expose; their test is `#[ignore]`d (see there).

use super::Mutant;
use crate::check::CheckReport;
use crate::config::{Format, RunConfig};
use crate::exec::ExecConfig;
use crate::metrics::machine::MachineInfo;
use crate::protocol::aria::Aria;
use crate::protocol::bohm::Bohm;
use crate::protocol::c_sched::CSched;
use crate::protocol::calvin::Calvin;
use crate::protocol::calvin_ticket::CalvinTicket;
use crate::protocol::cicada::Cicada;
use crate::protocol::decentsched::DecentSched;
use crate::protocol::ermia::Ermia;
use crate::protocol::mocc::{Mocc, MqlLock, RwLock};
use crate::protocol::mvto::Mvto;
use crate::protocol::ord_lock::OrdLock;
use crate::protocol::plor::Plor;
use crate::protocol::pwv::Pwv;
use crate::protocol::si::Si;
use crate::protocol::silo::Silo;
use crate::protocol::tictoc::TicToc;
use crate::protocol::twopl::{NoWait, WaitDie, WoundWait};
use crate::protocol::twopl_er::TwoPlEr;
use crate::protocol::{MoccLockKind, ProtocolKind, ProtocolOptions};
use crate::runner::run_with;
use crate::workload::WorkloadConfig;
use crate::workload::ycsb::{Ycsb, YcsbConfig};
use std::time::{Duration, Instant};

/// Workers per run of the main table: two per core on the 2-core development machines.
const THREADS: usize = 4;
/// Measured time of one run.
const RUN: Duration = Duration::from_millis(250);
/// Runs a mutant of the main table gets before the test gives up on catching it.
const ATTEMPTS: u64 = 8;

/// MOCC's temperature threshold in these runs (`run`): a page is hot after about 2^2
/// verification failures in an epoch instead of 2^10, so hot pages, their read locks and the
/// canonical-mode releases of those locks (what `MoccTrustHotReads` gets wrong) are in play from
/// the first milliseconds of every epoch. At 10, whether the small table's pages ever got hot in
/// a 250 ms run was a matter of luck (measured: the RwLock variant caught 3 runs in 10).
const MOCC_THRESHOLD: u32 = 2;

/// A protocol as the table names it (MOCC once per lock kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proto {
    NoWait,
    WaitDie,
    WoundWait,
    Silo,
    TicToc,
    MoccRw,
    MoccMql,
    Plor,
    OrdLock,
    DecentSched,
    Ermia,
    Mvto,
    CSched,
    /// Calvin with a ticket per transaction.
    CalvinTicket,
    /// Batched Calvin.
    Calvin,
    /// Batched Calvin's no-wait form (`--calvin-no-wait`).
    CalvinNoWait,
    Bohm,
    Pwv,
    /// BOHM's no-wait form (`--bohm-no-wait`).
    BohmNoWait,
    /// PWV's no-wait form (`--pwv-no-wait`).
    PwvNoWait,
    /// DecentSched with opportunistic execution (`--ds-opportunistic`).
    DecentSchedOpportunistic,
    Cicada,
    TwoPlEr,
    /// Snapshot isolation, on loads whose transactions write everything they read (where SI is
    /// serializable, so the checker's verdict applies).
    Si,
    Aria,
    /// Aria with deterministic reordering (`--aria-reordering`).
    AriaReordering,
    /// Aria with the fallback phase (`--aria-fallback`).
    AriaFallback,
}

/// The workload that provokes a mutant's bug (YCSB, theta 0.99, 16-byte rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Load {
    /// 64 records, 8 operations, half of them read-modify-writes: lost updates and stale reads
    /// under every broken lock or validation.
    HotRmw,
    /// 16 records, 4 operations, half of them blind writes: writes that no read locked first, and
    /// transactions that read records they do not write, which write skew needs (a read
    /// validated against a record another committer has locked).
    HotBlind,
    /// 64 records, 8 operations, 90% reads (read-modify-writes otherwise): four in ten
    /// transactions are read-only.
    ReadMostly,
    /// `HotRmw` with 200 us between a program's end and its commit (read-phase extension, which
    /// yields the CPU at that length), for C-Sched, Calvin's writer mutants (the no-wait form's
    /// shared-write-lock mutant went uncaught in all 8 `HotRmw` runs at load 5-6, stop 24) and DecentSched's
    /// rule mutants: a wrongly granted pair of transactions otherwise each run within one time
    /// slice of a loaded 2-core machine and never overlap (DecentSched's were missed in 8 runs
    /// once at load 15, and every time with the test pinned to one core; with the extension,
    /// pinned to one core, each run shows 130-260 cycles). Cicada's mutants use it too: on
    /// `HotRmw`, pinned to one core, its skipped read validation went uncaught in all 8 runs 2
    /// times in 6; with the extension each is caught in the first run (5-83 cycles). AriaFB's
    /// fallback mutants too: on `HotRmw` two fallback reruns rarely overlap on a loaded machine
    /// (the ungranted-locks mutant survived all 8 runs in CI, stop 28, and every time pinned to
    /// one core); with the extension, pinned to one core, each is caught in the first run
    /// (about 400 cycles).
    HotRmwSlowCommit,
    /// `HotBlind` with the same 200 us before each commit, for ERMIA: its mutants need two
    /// transactions whose snapshots overlap (each reads what the other writes, and neither sees
    /// the other's write). On a loaded 2-core machine the four workers of `HotBlind` often run
    /// one at a time, each transaction inside one time slice, and such pairs get rare (ERMIA's
    /// mutants were seen surviving all [`ATTEMPTS`] runs once under load 12-16); with the pause
    /// every transaction overlaps the others' whatever the scheduler does.
    HotBlindSlowCommit,
    /// `HotRmw` with every operation a read-modify-write: no transaction reads what it does
    /// not write, so snapshot isolation admits no write skew and is serializable here, and a
    /// missing write-write check shows as lost updates.
    AllRmw,
    /// `HotBlind` run by one thread driving [`INTERLEAVED_QUEUE`] coroutines, each suspended for
    /// 20 us between its program's end and its commit: every transaction's snapshot overlaps the
    /// others' and commits follow one another on one thread, whatever the machine's load (the
    /// write-skew test's schedule). ERMIA's `ErmiaIgnoreReaders` needs exactly that: a reader
    /// that committed before the overwriter of what it read validates.
    HotBlindInterleaved,
}

/// Coroutines per thread of [`Load::HotBlindInterleaved`].
const INTERLEAVED_QUEUE: usize = 8;

impl Load {
    /// Read-phase extension of the load's runs.
    fn read_phase_extension_ns(self) -> u64 {
        match self {
            Load::HotRmwSlowCommit | Load::HotBlindSlowCommit => 200_000,
            Load::HotBlindInterleaved => 20_000,
            _ => 0,
        }
    }

    /// How the load's transactions run, given the table's worker count.
    fn executor(self, threads: usize) -> (crate::config::Executor, usize) {
        match self {
            Load::HotBlindInterleaved => (
                crate::config::Executor::Coro {
                    queue: INTERLEAVED_QUEUE,
                },
                1,
            ),
            _ => (crate::config::Executor::Thread, threads),
        }
    }
}

impl Load {
    fn ycsb(self) -> YcsbConfig {
        let (records, ops, read_ratio, rmw) = match self {
            Load::HotRmw | Load::HotRmwSlowCommit => (64, 8, 0.5, true),
            Load::AllRmw => (64, 8, 0.0, true),
            Load::HotBlind | Load::HotBlindSlowCommit | Load::HotBlindInterleaved => {
                (16, 4, 0.5, false)
            }
            Load::ReadMostly => (64, 8, 0.9, true),
        };
        YcsbConfig {
            records,
            payload: 16,
            ops,
            long_ops: ops,
            long_share: 0.0,
            read_ratio,
            writes: None,
            rmw,
            theta: 0.99,
            ..YcsbConfig::default()
        }
    }
}

/// One row: the protocol, the mutant that breaks it, and the workload that shows it.
type Case = (Proto, Mutant, Load);

/// Every mutant whose bug stays open for the rest of a transaction (a lock missing or gone, a
/// check skipped): the checker catches each in the first run or two even on a loaded 2-core
/// machine.
#[rustfmt::skip]
const CASES: &[Case] = &[
    (Proto::NoWait, Mutant::TwoPlReleaseReadLocksEarly, Load::HotRmw),
    (Proto::NoWait, Mutant::TwoPlBlindWriteWithoutLock, Load::HotBlind),
    (Proto::WaitDie, Mutant::TwoPlReleaseReadLocksEarly, Load::HotRmw),
    (Proto::WaitDie, Mutant::TwoPlBlindWriteWithoutLock, Load::HotBlind),
    (Proto::WaitDie, Mutant::OwnedLockWriterIgnoresReaders, Load::HotRmw),
    (Proto::WoundWait, Mutant::TwoPlReleaseReadLocksEarly, Load::HotRmw),
    (Proto::WoundWait, Mutant::TwoPlBlindWriteWithoutLock, Load::HotBlind),
    (Proto::WoundWait, Mutant::OwnedLockWriterIgnoresReaders, Load::HotRmw),
    (Proto::Silo, Mutant::SiloSkipReadValidation, Load::HotRmw),
    (Proto::Silo, Mutant::SiloInstallBeforeValidation, Load::HotRmw),
    (Proto::TicToc, Mutant::TicTocSkipValidation, Load::HotRmw),
    (Proto::TicToc, Mutant::TicTocValidationIgnoresWts, Load::HotRmw),
    (Proto::MoccRw, Mutant::MoccSkipVerification, Load::HotRmw),
    (Proto::MoccRw, Mutant::MoccTrustHotReads, Load::HotRmw),
    (Proto::MoccMql, Mutant::MoccSkipVerification, Load::HotRmw),
    (Proto::MoccMql, Mutant::MoccTrustHotReads, Load::HotRmw),
    (Proto::Plor, Mutant::PlorSkipReaderWait, Load::HotRmw),
    (Proto::Plor, Mutant::PlorReleaseReadsEarly, Load::HotRmw),
    (Proto::Plor, Mutant::PlorSkipReadOnlyValidation, Load::ReadMostly),
    (Proto::OrdLock, Mutant::OrdLockReadsUnlocked, Load::HotRmw),
    (Proto::OrdLock, Mutant::OrdLockWritesShared, Load::HotRmw),
    (Proto::DecentSched, Mutant::DecentSchedHigherIdRunsAhead, Load::HotRmwSlowCommit),
    (Proto::DecentSched, Mutant::DecentSchedOnlyWritesConflict, Load::HotRmwSlowCommit),
    (Proto::Ermia, Mutant::ErmiaSkipExclusionCheck, Load::HotBlindSlowCommit),
    (Proto::Ermia, Mutant::ErmiaIgnoreOverwriters, Load::HotBlindSlowCommit),
    (Proto::Ermia, Mutant::ErmiaIgnoreReaders, Load::HotBlindInterleaved),
    (Proto::Si, Mutant::SiSkipFirstCommitterWins, Load::AllRmw),
    (Proto::Mvto, Mutant::MvtoSkipReadTimestamp, Load::HotRmw),
    (Proto::Mvto, Mutant::MvtoSkipWriteCheck, Load::HotRmw),
    (Proto::CSched, Mutant::CSchedWritersIgnoreWriters, Load::HotRmwSlowCommit),
    (Proto::CSched, Mutant::CSchedChecksFirstKeyOnly, Load::HotRmwSlowCommit),
    (Proto::CalvinTicket, Mutant::CalvinWritesLockShared, Load::HotRmw),
    (Proto::CalvinTicket, Mutant::CalvinWritersIgnoreWriters, Load::HotRmwSlowCommit),
    (Proto::Calvin, Mutant::CalvinWritesLockShared, Load::HotRmwSlowCommit),
    (Proto::Calvin, Mutant::CalvinWritersIgnoreWriters, Load::HotRmwSlowCommit),
    (Proto::Calvin, Mutant::CalvinBatchRunsBeforeGrants, Load::HotRmwSlowCommit),
    (Proto::CalvinNoWait, Mutant::CalvinWritesLockShared, Load::HotRmwSlowCommit),
    (Proto::CalvinNoWait, Mutant::CalvinWritersIgnoreWriters, Load::HotRmwSlowCommit),
    (Proto::Bohm, Mutant::BohmReadDoesNotWait, Load::HotRmw),
    (Proto::Bohm, Mutant::BohmBindToInstalled, Load::HotRmw),
    (Proto::Pwv, Mutant::PwvReadsNewestVisible, Load::HotRmw),
    (Proto::Pwv, Mutant::PwvPublishesAtRead, Load::HotRmw),
    (Proto::BohmNoWait, Mutant::PlacedNoWaitSkipsCheck, Load::HotRmwSlowCommit),
    (Proto::PwvNoWait, Mutant::PlacedNoWaitSkipsCheck, Load::HotRmwSlowCommit),
    (Proto::DecentSchedOpportunistic, Mutant::DecentSchedSkipReexecution, Load::HotRmw),
    (Proto::DecentSchedOpportunistic, Mutant::DecentSchedInstallWithoutVersion, Load::HotRmw),
    (Proto::Cicada, Mutant::CicadaSkipReadValidation, Load::HotRmwSlowCommit),
    (Proto::Cicada, Mutant::CicadaSkipReadTimestamp, Load::HotRmwSlowCommit),
    (Proto::TwoPlEr, Mutant::TwoPlErReadsUnlocked, Load::HotRmw),
    (Proto::TwoPlEr, Mutant::TwoPlErReleaseBeforeInstall, Load::HotRmw),
    (Proto::TwoPlEr, Mutant::TwoPlErLocksAtFirstUse, Load::HotRmw),
    (Proto::Aria, Mutant::AriaSkipReadAfterWrite, Load::HotRmw),
    (Proto::Aria, Mutant::AriaReservationKeepsFirst, Load::HotRmw),
    (Proto::AriaReordering, Mutant::AriaReorderingWithoutReadReservations, Load::HotRmw),
    (Proto::AriaReordering, Mutant::AriaReservationKeepsFirst, Load::HotRmw),
    (
        Proto::AriaFallback,
        Mutant::AriaFallbackGrantsWithoutWaiting,
        Load::HotRmwSlowCommit,
    ),
    (
        Proto::AriaFallback,
        Mutant::AriaFallbackWritesLockShared,
        Load::HotRmwSlowCommit,
    ),
];

/// Mutants whose bug is open only for a sub-microsecond window: between a lock's release and the
/// install that should have preceded it, or between two committers' locking and installing (both
/// validate against the other's locked record), or (Aria's fallback) between a lower-ranked
/// fallback member's grant and its install. Two truly parallel cores hit the window hundreds
/// of times per run; a 2-core machine busy with other work often runs the workers one core at a
/// time, and then run after run can miss it (measured on the shared development machine: caught
/// in 2 to 9 runs of 10, varying with its load). Not in CI: `cargo test --lib race_window --
/// --ignored` on an idle or larger machine.
#[rustfmt::skip]
const RACE_CASES: &[Case] = &[
    (Proto::NoWait, Mutant::TwoPlUnlockBeforeInstall, Load::HotRmw),
    (Proto::WaitDie, Mutant::TwoPlUnlockBeforeInstall, Load::HotRmw),
    (Proto::WoundWait, Mutant::TwoPlUnlockBeforeInstall, Load::HotRmw),
    (Proto::Silo, Mutant::SiloUnlockBeforeInstall, Load::HotRmw),
    (Proto::Silo, Mutant::SiloValidationIgnoresLockBit, Load::HotBlind),
    (Proto::TicToc, Mutant::TicTocValidationIgnoresLock, Load::HotBlind),
    (Proto::AriaFallback, Mutant::AriaFallbackReadsUnlocked, Load::HotRmw),
];

/// Workers per run of [`RACE_CASES`].
const RACE_THREADS: usize = 8;
/// Runs a mutant of [`RACE_CASES`] gets.
const RACE_ATTEMPTS: u64 = 12;

/// Runs `load` on `proto` with `mutant` and `threads` workers in check mode; the checker's
/// report.
fn run(proto: Proto, mutant: Mutant, load: Load, threads: usize, seed: u64) -> CheckReport {
    let report = run_report(proto, mutant, load, threads, seed);
    assert!(report.commits > 0, "{proto:?} {mutant:?}: no commit");
    report.check.expect("check mode")
}

/// [`run`]'s run, whose report this returns whole.
fn run_report(
    proto: Proto,
    mutant: Mutant,
    load: Load,
    threads: usize,
    seed: u64,
) -> crate::metrics::report::RunReport {
    let ycsb = load.ycsb();
    let workload = Ycsb::new(ycsb.clone());
    let mut options = ProtocolOptions {
        threads,
        ..Default::default()
    };
    let kind = match proto {
        Proto::NoWait => ProtocolKind::NoWait,
        Proto::WaitDie => ProtocolKind::WaitDie,
        Proto::WoundWait => ProtocolKind::WoundWait,
        Proto::Silo => ProtocolKind::Silo,
        Proto::TicToc => ProtocolKind::TicToc,
        Proto::MoccRw | Proto::MoccMql => ProtocolKind::Mocc,
        Proto::Plor => ProtocolKind::Plor,
        Proto::OrdLock => ProtocolKind::OrdLock,
        Proto::DecentSched => ProtocolKind::DecentSched,
        Proto::Ermia => ProtocolKind::Ermia,
        Proto::Mvto => ProtocolKind::Mvto,
        Proto::CSched => ProtocolKind::CSched,
        Proto::CalvinTicket => ProtocolKind::CalvinTicket,
        Proto::Calvin | Proto::CalvinNoWait => ProtocolKind::Calvin,
        Proto::Bohm | Proto::BohmNoWait => ProtocolKind::Bohm,
        Proto::Pwv | Proto::PwvNoWait => ProtocolKind::Pwv,
        Proto::DecentSchedOpportunistic => ProtocolKind::DecentSched,
        Proto::Cicada => ProtocolKind::Cicada,
        Proto::TwoPlEr => ProtocolKind::TwoPlEr,
        Proto::Si => ProtocolKind::Si,
        Proto::Aria | Proto::AriaReordering | Proto::AriaFallback => ProtocolKind::Aria,
    };
    options.aria.reordering = proto == Proto::AriaReordering;
    options.aria.fallback = proto == Proto::AriaFallback;
    options.calvin.no_wait = proto == Proto::CalvinNoWait;
    options.bohm.no_wait = proto == Proto::BohmNoWait;
    options.pwv.no_wait = proto == Proto::PwvNoWait;
    let (executor, threads) = load.executor(threads);
    let workers = match executor {
        crate::config::Executor::Coro { queue } => threads * queue,
        crate::config::Executor::Thread => threads,
    };
    options.threads = workers;
    options.decentsched.opportunistic = proto == Proto::DecentSchedOpportunistic;
    if matches!(proto, Proto::MoccRw | Proto::MoccMql) {
        options.mocc.threshold = MOCC_THRESHOLD;
    }
    if proto == Proto::MoccMql {
        options.mocc.lock = MoccLockKind::Mql;
    }
    let cfg = RunConfig {
        protocols: vec![kind],
        preset: None,
        workload: WorkloadConfig::Ycsb(ycsb),
        exec: ExecConfig {
            threads,
            duration: RUN,
            warmup: Duration::ZERO,
            seed,
            record_history: true,
            check_limit_ops: u64::MAX,
            adaptive_backoff: false,
            read_phase_extension_ns: load.read_phase_extension_ns(),
            pin_threads: false,
            core_slice: std::time::Duration::ZERO,
            core_seats: false,
        },
        options,
        check: true,
        repeat: 1,
        format: Format::Table,
        executor,
        progress: crate::metrics::progress::ProgressMode::Never,
        open_loop: None,
        table_memory_bytes: u64::MAX,
        log: None,
        interactive: None,
    };
    let machine = MachineInfo::detect();
    let o = &cfg.options;
    match proto {
        Proto::NoWait => {
            let p = NoWait::new(o).unwrap().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::WaitDie => {
            let p = WaitDie::new(o).unwrap().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::WoundWait => {
            let p = WoundWait::new(o).unwrap().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Silo => run_with(
            kind,
            Silo::new(o).with_mutant(mutant),
            &cfg,
            &workload,
            &machine,
        ),
        Proto::TicToc => {
            let p = TicToc::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::MoccRw => {
            let p = Mocc::<RwLock>::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::MoccMql => {
            let p = Mocc::<MqlLock>::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Plor => {
            let p = Plor::new(o).unwrap().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::OrdLock => {
            let p = OrdLock::new().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::DecentSched | Proto::DecentSchedOpportunistic => {
            let p = DecentSched::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Ermia => {
            let p = Ermia::new(o).unwrap().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Mvto => {
            let p = Mvto::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::CSched => {
            let p = CSched::with_mutant(o, mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::CalvinTicket => {
            let p = CalvinTicket::new().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Calvin | Proto::CalvinNoWait => {
            let p = Calvin::new(&o.batch, o.calvin).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Bohm | Proto::BohmNoWait => {
            let p = Bohm::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Pwv | Proto::PwvNoWait => {
            let p = Pwv::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Cicada => {
            let p = Cicada::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::TwoPlEr => {
            let p = TwoPlEr::new().with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Si => {
            let p = Si::new(o).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
        Proto::Aria | Proto::AriaReordering | Proto::AriaFallback => {
            let p = Aria::new(&o.batch, o.aria).with_mutant(mutant);
            run_with(kind, p, &cfg, &workload, &machine)
        }
    }
    .expect("a small table fits")
}

/// What the checker found, in one line: cycle classes and anomaly kinds with their counts.
fn findings(r: &CheckReport) -> String {
    let all: Vec<String> = r
        .cycle_kinds
        .iter()
        .chain(&r.anomaly_counts)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    format!("{} cycles [{}]", r.cycles, all.join(", "))
}

/// Runs every row of `rows` that breaks `proto`: each mutant must be caught within `attempts`
/// runs, and every workload the rows use must pass without a mutant.
fn check_rows(rows: &[Case], proto: Proto, threads: usize, attempts: u64) {
    let rows: Vec<&Case> = rows.iter().filter(|c| c.0 == proto).collect();
    let mut loads: Vec<Load> = Vec::new();
    for &&(_, _, load) in &rows {
        if !loads.contains(&load) {
            loads.push(load);
        }
    }
    for load in loads {
        let r = run(proto, Mutant::None, load, threads, 1);
        assert!(
            r.is_serializable(),
            "{proto:?} without a mutant failed on {load:?}: {}\n{:?}",
            findings(&r),
            r.examples
        );
    }
    for &&(_, mutant, load) in &rows {
        let started = Instant::now();
        let caught = (1..=attempts).find_map(|seed| {
            let r = run(proto, mutant, load, threads, seed);
            eprintln!(
                "  {proto:?} {mutant:?} seed {seed}: {} txns, {}",
                r.transactions,
                findings(&r)
            );
            (!r.is_serializable()).then_some((seed, r))
        });
        let Some((runs, r)) = caught else {
            panic!(
                "{proto:?} {mutant:?} on {load:?}: the checker never caught it in {attempts} runs"
            );
        };
        eprintln!(
            "mutant caught: {proto:?} {mutant:?} on {load:?} after {runs} run(s), {:.1} s: {}",
            started.elapsed().as_secs_f64(),
            findings(&r)
        );
    }
}

/// The main table's rows for `proto`: at least two mutants, each caught.
fn check_protocol(proto: Proto) {
    assert!(
        CASES.iter().filter(|c| c.0 == proto).count() >= 2,
        "{proto:?}: fewer than two mutants"
    );
    check_rows(CASES, proto, THREADS, ATTEMPTS);
}

#[test]
fn no_wait_mutants_are_caught() {
    check_protocol(Proto::NoWait);
}

#[test]
fn wait_die_mutants_are_caught() {
    check_protocol(Proto::WaitDie);
}

#[test]
fn wound_wait_mutants_are_caught() {
    check_protocol(Proto::WoundWait);
}

#[test]
fn silo_mutants_are_caught() {
    check_protocol(Proto::Silo);
}

#[test]
fn tictoc_mutants_are_caught() {
    check_protocol(Proto::TicToc);
}

#[test]
fn mocc_rw_mutants_are_caught() {
    check_protocol(Proto::MoccRw);
}

#[test]
fn mocc_mql_mutants_are_caught() {
    check_protocol(Proto::MoccMql);
}

#[test]
fn c_sched_mutants_are_caught() {
    check_protocol(Proto::CSched);
}

#[test]
fn calvin_ticket_mutants_are_caught() {
    check_protocol(Proto::CalvinTicket);
}

#[test]
fn calvin_mutants_are_caught() {
    check_protocol(Proto::Calvin);
}

#[test]
fn calvin_no_wait_mutants_are_caught() {
    check_protocol(Proto::CalvinNoWait);
}

#[test]
fn bohm_mutants_are_caught() {
    check_protocol(Proto::Bohm);
}

#[test]
fn pwv_mutants_are_caught() {
    check_protocol(Proto::Pwv);
}

/// The no-wait forms' mutants and a property of the real forms. The skipped test is caught by
/// the checker (the main table's row). `PlacedNoWaitConflictKeepsPlaceholders` is caught step
/// by step only (`bohm::no_wait_tests`): in a run, a transaction that touches a record whose
/// placeholder no one will produce conflicts at every retry, and the executors retry it until
/// it commits, so the run would never end. The real forms' runs are serializable and commit at
/// least the first member of every batch; BOHM_NW's also reruns some members (the pause before
/// each commit keeps placeholders unproduced while later members take their turns: on
/// `HotRmw`, in the test build, one run saw no conflict in 3,361 batches). PWV_NW's may not:
/// each write is visible at the write, before the pause, so a member conflicts only if its
/// turn falls between an earlier member's placement and its writes, a window of microseconds
/// (unpinned runs saw 0 to 30 conflicts); `bohm::no_wait_tests` shows its conflict step by
/// step.
fn check_placed_no_wait(proto: Proto) {
    check_rows(CASES, proto, THREADS, ATTEMPTS);
    let r = run_report(proto, Mutant::None, Load::HotRmwSlowCommit, THREADS, 2);
    let stat = |name: &str| r.protocol_stats[name] as u64;
    let (batches, conflicts) = (stat("batches"), stat("no_wait_conflicts"));
    eprintln!(
        "  {proto:?}: {} commits, {batches} batches, {conflicts} no-wait conflicts",
        r.commits
    );
    assert!(
        r.check.as_ref().expect("check mode").is_serializable(),
        "{proto:?} without a mutant"
    );
    // Reruns during the measured period (all of the run: no warm-up) are `lock_conflict`
    // aborts; the counter also has those of the stop.
    let reruns = r
        .aborts_by_reason
        .get("lock_conflict")
        .copied()
        .unwrap_or(0);
    assert!(reruns <= conflicts, "{proto:?}: {reruns} reruns");
    if proto == Proto::BohmNoWait {
        assert!(reruns > 0, "{proto:?}: a hot table conflicts");
    }
    // The batches still open when the run stopped may have committed nothing yet.
    assert!(
        r.commits + THREADS as u64 >= batches,
        "{proto:?}: a batch committed nothing"
    );
}

#[test]
fn bohm_no_wait_mutants_are_caught() {
    check_placed_no_wait(Proto::BohmNoWait);
}

#[test]
fn pwv_no_wait_mutants_are_caught() {
    check_placed_no_wait(Proto::PwvNoWait);
}

#[test]
fn decentsched_mutants_are_caught() {
    check_protocol(Proto::DecentSched);
}

#[test]
fn decentsched_opportunistic_mutants_are_caught() {
    check_protocol(Proto::DecentSchedOpportunistic);
}

#[test]
fn ord_lock_mutants_are_caught() {
    check_protocol(Proto::OrdLock);
}

#[test]
fn plor_mutants_are_caught() {
    check_protocol(Proto::Plor);
}

#[test]
#[ignore = "needs two cores free of other work (see RACE_CASES)"]
fn race_window_mutants_are_caught() {
    for proto in [
        Proto::NoWait,
        Proto::WaitDie,
        Proto::WoundWait,
        Proto::Silo,
        Proto::TicToc,
        Proto::AriaFallback,
    ] {
        check_rows(RACE_CASES, proto, RACE_THREADS, RACE_ATTEMPTS);
    }
}

#[test]
fn ermia_mutants_are_caught() {
    check_protocol(Proto::Ermia);
}

#[test]
fn mvto_mutants_are_caught() {
    check_protocol(Proto::Mvto);
}

#[test]
fn cicada_mutants_are_caught() {
    check_protocol(Proto::Cicada);
}

/// SI's mutant table holds one row (the other SI mutants are caught by its unit tests, where
/// their bugs show: `si::tests`), so it is checked on its own.
#[test]
fn si_mutants_are_caught() {
    check_rows(CASES, Proto::Si, THREADS, ATTEMPTS);
}

#[test]
fn twopl_er_mutants_are_caught() {
    check_protocol(Proto::TwoPlEr);
}

/// Runs the audit workload (`audit.rs`) on DecentSched with opportunistic execution and
/// `mutant`, [`THREADS`] workers for [`RUN`], in check mode; the checker's report.
fn audit_run(mutant: Mutant, seed: u64) -> CheckReport {
    use crate::storage::Database;
    use crate::workload::Workload;
    let workload = super::audit::Audit;
    let mut options = ProtocolOptions {
        threads: THREADS,
        ..Default::default()
    };
    options.decentsched.opportunistic = true;
    let p = DecentSched::new(&options).with_mutant(mutant);
    let db: Database<<DecentSched as crate::protocol::Protocol>::RecordMeta> =
        Database::try_build_growable(&workload.tables(), &workload.indexes(), true, &[])
            .expect("a small table fits");
    workload.load(&db);
    db.stamp_loaded_rows();
    let exec = ExecConfig {
        threads: THREADS,
        duration: RUN,
        warmup: Duration::ZERO,
        seed,
        record_history: true,
        check_limit_ops: u64::MAX,
        adaptive_backoff: false,
        read_phase_extension_ns: 0,
        pin_threads: false,
        core_slice: std::time::Duration::ZERO,
        core_seats: false,
    };
    let out = crate::exec::run_threads(&p, &db, &workload, &exec);
    crate::check::check(&out.histories)
}

/// A rollback decided on reads taken ahead of the transaction's turn must not stand unchecked
/// (`Protocol::confirm_user_abort`): with check mode keeping the reads of every rollback that
/// stood, the mutant that lets them all stand shows cycles; the real protocol shows none.
///
/// Not caught by runs yet: 8 runs in 8 came out serializable with a 20 us pause between the
/// audit's reads (whether audits speculate ahead of a transfer on their pair at all on this
/// load is not measured). The mutant is caught in CI step by step instead:
/// `decentsched::tests::a_rollback_on_a_stale_read_does_not_stand`.
#[test]
#[ignore = "the checker has not caught the mutant yet (see the doc comment)"]
fn decentsched_unconfirmed_user_aborts_are_caught() {
    let r = audit_run(Mutant::None, 1);
    assert!(
        r.is_serializable(),
        "without a mutant: {}\n{:?}",
        findings(&r),
        r.examples
    );
    let caught = (1..=ATTEMPTS).find_map(|seed| {
        let r = audit_run(Mutant::DecentSchedUserAbortUnconfirmed, seed);
        eprintln!(
            "  audit seed {seed}: {} txns, {}",
            r.transactions,
            findings(&r)
        );
        (!r.is_serializable()).then_some((seed, r))
    });
    let Some((runs, r)) = caught else {
        panic!("DecentSchedUserAbortUnconfirmed: never caught in {ATTEMPTS} runs");
    };
    eprintln!(
        "mutant caught: DecentSchedUserAbortUnconfirmed after {runs} run(s): {}",
        findings(&r)
    );
}

#[test]
fn aria_mutants_are_caught() {
    check_protocol(Proto::Aria);
}

#[test]
fn aria_reordering_mutants_are_caught() {
    check_protocol(Proto::AriaReordering);
}

#[test]
fn aria_fallback_mutants_are_caught() {
    check_protocol(Proto::AriaFallback);
}
