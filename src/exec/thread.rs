//! The thread executor: N workers, each generating its next transaction locally and running it to
//! commit in place (stored-procedure style), retrying after concurrency-control aborts.
//!
//! A run has three periods, announced through one shared word written by the coordinator:
//! warm-up (transactions run but are not counted), measure (counted), stop (workers finish the
//! transaction in hand and exit). A commit or an abort counts when it happens during measure
//! (the period word is read as the attempt ends), so the commits counted are those inside the
//! measured window whose length divides them into throughput: a transaction in hand at the stop
//! commits uncounted, however short the window. A counted commit's latency runs from its first
//! attempt's start (which may lie in the warm-up) to its commit, retries and waits included.
//! Retries reuse the transaction's request and tell the protocol it is a retry, so wound-wait
//! families keep their timestamp. Every attempt also tells the protocol whether the workload
//! declared the request read-only ([`Workload::is_read_only`]).
//!
//! With an open loop ([`run_threads_open_loop`], `--rate`) each worker waits for its next
//! transaction's arrival (module `exec::arrivals`) instead of starting it at once, and its latency
//! runs from the arrival, so that time spent queued behind earlier transactions counts.

use super::arrivals::{ArrivalClock, wait_until};
use super::backoff::AdaptiveBackoff;
use super::core_seats::{CoreSeats, Seat, Stepping};
use super::durable_acks::{Committed, DurableAcks};
use super::panic_watch::PanicWatch;
use super::start_gate::StartGate;
use super::wait::{CoreSlice, WaitPolicy, delay, drive, pause};
use crate::check::history::WorkerHistory;
pub use crate::config::ExecConfig;
use crate::config::OpenLoop;
use crate::log::Logger;
use crate::metrics::rate_series::{RateCounters, RateSlot};
use crate::metrics::{Phase, WaitCounts, WorkerStats};
use crate::on_cpu::{self, WorkerIds};
use crate::park::ParkingLot;
use crate::protocol::parts::version_memory_exhausted;
use crate::protocol::{Abort, AttemptStart, Protocol};
use crate::random::FastRng;
use crate::storage::Database;
use crate::txn::Txn;
use crate::workload::Workload;
use crossbeam_utils::CachePadded;
use std::pin::pin;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// What a run produced.
pub struct ExecOutcome {
    /// Per-worker measurements.
    pub workers: Vec<WorkerStats>,
    /// Length of the measured period.
    pub measured: Duration,
    /// Per-worker committed histories (check mode only).
    pub histories: Vec<WorkerHistory>,
}

pub(super) const WARMUP: u8 = 0;
pub(super) const MEASURE: u8 = 1;
pub(super) const STOP: u8 = 2;

/// The coordinator's part of a run, shared by the executors: releases the workers waiting on
/// `start`, announces measure after the warm-up and stop after the measured period through
/// `period`, and returns the measured period's length. A run whose tables cannot grow any more
/// (`stop_early`, the database's [`TableMemory`](crate::storage::TableMemory) refusal) stops at
/// once, within a poll interval, and its measured period ends there: its results so far stand.
/// So does a run whose versions reached their cap (`MultiVersion::version_memory_exhausted`), which
/// the runner then reports as an error.
pub(super) fn coordinate(
    cfg: &ExecConfig,
    period: &AtomicU8,
    start: &Barrier,
    stop_early: &dyn Fn() -> bool,
) -> Duration {
    start.wait();
    let mut measured_from = Instant::now();
    if !cfg.warmup.is_zero() {
        sleep_unless(cfg.warmup, stop_early);
        measured_from = Instant::now();
        // Release: pairs with the workers' Acquire loads.
        period.store(MEASURE, Ordering::Release);
    }
    sleep_unless(cfg.duration, stop_early);
    let measured = measured_from.elapsed();
    // Release: pairs with the workers' Acquire loads.
    period.store(STOP, Ordering::Release);
    measured
}

/// How often the coordinator looks at the early-stop condition.
const STOP_POLL: Duration = Duration::from_millis(10);

/// Sleeps for `length`, or less when `stop` becomes true (checked every [`STOP_POLL`]).
fn sleep_unless(length: Duration, stop: &dyn Fn() -> bool) {
    let until = Instant::now() + length;
    loop {
        let now = Instant::now();
        if now >= until || stop() {
            return;
        }
        std::thread::sleep((until - now).min(STOP_POLL));
    }
}

/// The period word's first value: warm-up, or measure when there is none.
pub(super) fn first_period(cfg: &ExecConfig) -> u8 {
    if cfg.warmup.is_zero() {
        MEASURE
    } else {
        WARMUP
    }
}

/// Runs `workload` on `protocol` over `db` with `cfg.threads` workers.
pub fn run_threads<P: Protocol, W: Workload>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    workload: &W,
    cfg: &ExecConfig,
) -> ExecOutcome {
    run_threads_open_loop(protocol, db, workload, cfg, None)
}

/// [`run_threads`], with transactions arriving at `open_loop`'s offered load when given (each
/// worker draws its share, `rate / threads`, from its own arrival stream; see
/// module `exec::arrivals`) instead of each worker starting its next transaction when the last ends.
pub fn run_threads_open_loop<P: Protocol, W: Workload>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    workload: &W,
    cfg: &ExecConfig,
    open_loop: Option<OpenLoop>,
) -> ExecOutcome {
    run_threads_logged(protocol, db, workload, cfg, open_loop, None)
}

/// [`run_threads_sampled`] without live counts.
pub fn run_threads_logged<P: Protocol, W: Workload>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    workload: &W,
    cfg: &ExecConfig,
    open_loop: Option<OpenLoop>,
    log: Option<&Logger>,
) -> ExecOutcome {
    run_threads_sampled(protocol, db, workload, cfg, open_loop, log, None)
}

/// [`run_threads_open_loop`], logging every committed write to `log` when given (`crate::log`):
/// each worker acknowledges a commit that wrote only once the log says it is durable, and
/// records that latency apart (`WorkerStats::durable_latency`). A log that fails stops the run.
/// With `rates` (one slot per worker), every worker also counts its measured commits and aborts
/// in its slot as they happen, for the runner's time series (`metrics::rate_series`).
pub fn run_threads_sampled<P: Protocol, W: Workload>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    workload: &W,
    cfg: &ExecConfig,
    open_loop: Option<OpenLoop>,
    log: Option<&Logger>,
    rates: Option<&RateCounters>,
) -> ExecOutcome {
    // Written by the coordinator only; read by every worker once per transaction (Acquire pairs
    // with the coordinator's Release so a worker that sees STOP also sees everything before it).
    let period = CachePadded::new(AtomicU8::new(first_period(cfg)));
    let backoff = (cfg.adaptive_backoff || P::RUN_HOOKS.adaptive_backoff(protocol))
        .then(|| AdaptiveBackoff::new(cfg.threads));
    let start = Barrier::new(cfg.threads + 1);
    // Raised by a worker that panics, so the others and the coordinator stop for it.
    let watch = PanicWatch::new();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    // CoreSeats: with more workers than cores (closed loop), one seat per core. Seated workers
    // are as many as cores, so their waits are waits of workers with a core each.
    let seats = (cfg.core_seats
        && !cfg.core_slice.is_zero()
        && open_loop.is_none()
        && cfg.threads > cores.len().max(1))
    .then(|| {
        let pinned = cfg.pin_threads && !cores.is_empty();
        CoreSeats::new(cores.len().max(1), cfg.threads, pinned)
    });
    let running = seats.as_ref().map_or(cfg.threads, |_| cores.len().max(1));
    let policy = WaitPolicy::for_threads(running + P::RUN_HOOKS.helper_threads, cores.len());

    std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|id| {
                let (period, backoff, start, cores) = (&period, backoff.as_ref(), &start, &cores);
                let seats = seats.as_ref();
                let watch = &watch;
                s.spawn(move || {
                    // Declared first, so it drops last: a panic raises it after the unwinding
                    // worker's protocol state was dropped (left its batch, its epoch barrier).
                    let _watching = watch.watch();
                    let mut gate = StartGate::new(start);
                    if cfg.pin_threads && !cores.is_empty() {
                        core_affinity::set_for_current(cores[id % cores.len()]);
                    }
                    // Its yields and parks mark worker `id` away (`crate::on_cpu`).
                    let _driving = on_cpu::drive_workers(WorkerIds::one(id));
                    let mut tx = Txn::new(protocol, db, id, cfg.record_history);
                    if let Some(log) = log {
                        tx.attach_log(log);
                    }
                    let share = cfg.check_limit_ops / cfg.threads as u64;
                    tx.set_history_budget(usize::try_from(share).unwrap_or(usize::MAX));
                    let mut worker = Worker {
                        id,
                        workload,
                        tx,
                        rng: FastRng::for_worker(cfg.seed, id),
                        stats: WorkerStats::new(workload.txn_types().len()),
                        backoff,
                        lot: ParkingLot::global(),
                        policy,
                        // With seats, handing the seat over replaces CoreSlice's yield.
                        core_slice: CoreSlice::new(
                            if seats.is_some() {
                                Duration::ZERO
                            } else {
                                cfg.core_slice
                            },
                            policy,
                        ),
                        seat: seats.map(|s| Seat::new(s, id, cfg.core_slice)),
                        read_phase_extension_ns: cfg.read_phase_extension_ns,
                        acks: DurableAcks::default(),
                        rates: rates.map(|r| r.slot(id)),
                    };
                    gate.arrive();
                    // Every worker's arrivals count from the moment the run starts.
                    let mut arrivals = open_loop
                        .as_ref()
                        .map(|o| ArrivalClock::new(o, cfg.threads, id, cfg.seed, Instant::now()));
                    worker.run(period, arrivals.as_mut());
                    worker.acknowledge_all();
                    let history = worker.tx.take_history().unwrap_or_default();
                    (worker.stats, history)
                })
            })
            .collect();

        let measured = coordinate(cfg, &period, &start, &|| {
            watch.raised()
                || db.table_memory().refused()
                || version_memory_exhausted(protocol).is_some()
                || log.is_some_and(|l| l.failure().is_some())
        });

        let mut workers = Vec::with_capacity(cfg.threads);
        let mut histories = Vec::new();
        for h in handles {
            let (stats, history) = h.join().expect("worker thread panicked");
            workers.push(stats);
            if cfg.record_history {
                histories.push(history);
            }
        }
        ExecOutcome {
            workers,
            measured,
            histories,
        }
    })
}

/// One worker thread's state.
struct Worker<'db, 'w, P: Protocol, W: Workload> {
    id: usize,
    workload: &'w W,
    tx: Txn<'db, P>,
    rng: FastRng,
    stats: WorkerStats,
    backoff: Option<&'w AdaptiveBackoff>,
    /// Whom it wakes when an attempt ends (the process's lot, where waiters park).
    lot: &'static ParkingLot,
    /// How it waits: by whether the run's threads outnumber the cores (open-loop waits too).
    policy: WaitPolicy,
    /// Where it gives up a core it shares: between transactions (`--core-slice-us`).
    core_slice: CoreSlice,
    /// With CoreSeats (more workers than cores): its hold on a seat, taken and handed over
    /// between transactions.
    seat: Option<Seat<'w>>,
    read_phase_extension_ns: u64,
    /// With a log: commits waiting for their durable acknowledgement, oldest first.
    acks: DurableAcks,
    /// Its live counts, when the runner samples them.
    rates: Option<&'w RateSlot>,
}

impl<P: Protocol, W: Workload> Worker<'_, '_, P, W> {
    /// Runs transactions until stop: back to back, or each at its arrival from `arrivals`.
    fn run(&mut self, period: &AtomicU8, mut arrivals: Option<&mut ArrivalClock>) {
        let mut req = self.workload.new_request();
        let mut leader_clock = self
            .backoff
            .filter(|_| self.id == 0)
            .map(|b| b.leader_clock());
        let mut commits = 0u64;
        loop {
            let now_period = period.load(Ordering::Acquire);
            if now_period == STOP {
                break;
            }
            self.core_slice.at_boundary();
            if !self.take_seat(period) {
                break;
            }
            let arrived = match arrivals.as_deref_mut() {
                Some(clock) => {
                    let at = clock.take();
                    if !wait_until(at, period, STOP, self.policy.oversubscribed()) {
                        break;
                    }
                    Some(at)
                }
                None => None,
            };
            self.workload.generate(self.id, &mut self.rng, &mut req);
            let ty = self.workload.txn_type(&req);
            let committed = self.run_to_commit(&req, ty, period, arrived);
            if committed {
                commits += 1;
                if let Some(b) = self.backoff {
                    b.publish_commits(self.id, commits);
                    if let Some(clock) = &mut leader_clock {
                        b.tune(clock);
                    }
                }
            }
        }
        // Its seat goes to a queued worker, who will see the stop.
        self.seat = None;
    }

    /// With CoreSeats, between two transactions: keeps its seat, or hands it over after its
    /// slice and queues for the next, stepping away from the protocol while it waits
    /// (`exec::core_seats`). Returns false when the run stopped while it waited.
    fn take_seat(&mut self, period: &AtomicU8) -> bool {
        let Some(seat) = &mut self.seat else {
            return true;
        };
        let handed_before = seat.handed_over;
        let tx = &mut self.tx;
        // Acquire: as every read of the period.
        let stop = || period.load(Ordering::Acquire) == STOP;
        let seated = seat.at_boundary(
            |step| match step {
                Stepping::Away => tx.away(),
                Stepping::Back => tx.back(),
            },
            stop,
        );
        if seat.handed_over != handed_before && period.load(Ordering::Acquire) == MEASURE {
            self.stats.waits.seat_handovers += 1;
        }
        seated
    }

    /// With a log, after a commit: its durable acknowledgement (`exec::durable_acks`).
    fn queue_acknowledgement(&mut self, first_start: Instant, counted: bool) {
        let Some(log) = self.tx.logger() else {
            return;
        };
        let committed = Committed {
            worker: self.id,
            txn_id: self.tx.id(),
            epoch: self.tx.take_committed_epoch(),
            first_start,
            counted,
        };
        self.acks.queue(log, committed, &mut self.stats);
    }

    /// At the end of the run: waits until every queued commit is durable and acknowledges it.
    fn acknowledge_all(&mut self) {
        if let Some(log) = self.tx.logger() {
            self.acks.drain(log, &mut self.stats);
        }
    }

    /// Runs one transaction until it commits or aborts for a reason that is not retried.
    /// Returns whether it committed. Its latency runs from `arrived` (open loop: queueing
    /// included) or else from its first attempt's start. Each attempt's end counts when `period`
    /// says measure at that moment (module docs).
    fn run_to_commit(
        &mut self,
        req: &W::Request,
        ty: usize,
        period: &AtomicU8,
        arrived: Option<Instant>,
    ) -> bool {
        let mut attempt_start = Instant::now();
        let first_start = arrived.unwrap_or(attempt_start);
        let mut start = AttemptStart {
            retry: false,
            read_only: self.workload.is_read_only(req),
        };
        let mut aborts_in_a_row: u32 = 0;
        if P::DECLARED_SET.is_some() {
            // Once per transaction: its retries run the same request.
            let workload = self.workload;
            self.tx.declare(|set| workload.declare(req, set));
        }
        loop {
            let mut waits = WaitCounts::default();
            self.tx.begin(start);
            // A deterministic protocol schedules the attempt from its declared set first; its
            // waits count as waiting like any other.
            let (scheduled, schedule_wait) = if P::DECLARED_SET.is_some() {
                let tx = &mut self.tx;
                drive(
                    pin!(std::future::poll_fn(|_| tx.poll_schedule())),
                    self.policy,
                    &mut waits,
                )
            } else {
                (Ok(()), 0)
            };
            let (result, exec_wait) = match scheduled {
                Ok(()) => drive(
                    pin!(self.workload.run(&mut self.tx, req)),
                    self.policy,
                    &mut waits,
                ),
                Err(why) => (Err(why), 0),
            };
            // A deterministic protocol confirms a user abort first: its program may have
            // decided it on reads taken ahead of its turn (the abort stands, or it re-executes).
            let (result, confirm_wait) = match result {
                Err(Abort::User) if P::DECLARED_SET.is_some() => {
                    let tx = &mut self.tx;
                    let poll = std::future::poll_fn(|_| tx.poll_confirm_user_abort());
                    let (confirmed, wait) = drive(pin!(poll), self.policy, &mut waits);
                    if confirmed.is_ok() {
                        self.tx.user_abort_stands();
                    }
                    (confirmed.and(Err(Abort::User)), wait)
                }
                other => (other, 0),
            };
            let exec_wait = exec_wait + schedule_wait + confirm_wait;
            let (result, commit_wait, exec_end) = match result {
                Ok(()) => {
                    if self.read_phase_extension_ns > 0 {
                        delay(self.read_phase_extension_ns);
                    }
                    let exec_end = Instant::now();
                    let tx = &mut self.tx;
                    let (r, w) = drive(
                        pin!(std::future::poll_fn(|_| tx.poll_commit())),
                        self.policy,
                        &mut waits,
                    );
                    (r, w, Some(exec_end))
                }
                Err(why) => (Err(why), 0, None),
            };
            let end = Instant::now();
            let waited = exec_wait + commit_wait;
            // Acquire: pairs with the coordinator's Release, as every read of the period. Read
            // after `end`: an attempt that ended before the stop but reads STOP is dropped, never
            // one that ended after it counted.
            let counted = period.load(Ordering::Acquire) == MEASURE;
            match result {
                Ok(()) => {
                    self.tx.committed();
                    self.lot.attempt_ended();
                    self.queue_acknowledgement(first_start, counted);
                    if counted {
                        let exec_end = exec_end.expect("commit follows execution");
                        let exec = nanos(exec_end - attempt_start).saturating_sub(exec_wait);
                        let commit = nanos(end - exec_end).saturating_sub(commit_wait);
                        self.stats.add_phase(Phase::Execute, exec);
                        self.stats.add_phase(Phase::Commit, commit);
                        self.stats.add_phase(Phase::Wait, waited);
                        self.stats.waits.add(waits);
                        self.stats.commit(
                            ty,
                            nanos(end - first_start),
                            u64::from(aborts_in_a_row) + 1,
                        );
                        if let Some(r) = self.rates {
                            r.commit(ty);
                        }
                    }
                    return true;
                }
                Err(why) => {
                    self.tx.aborted(why);
                    self.lot.attempt_ended();
                    let mut abort_ns = nanos(end - attempt_start).saturating_sub(waited);
                    // A re-execution is already scheduled: nothing to back off from.
                    if why.is_retried() && why != Abort::Reexecute {
                        if let Some(b) = self.backoff {
                            let d = b.delay_ns(&mut self.rng);
                            delay(d);
                            abort_ns += d;
                        }
                    }
                    if counted {
                        self.stats.abort(ty, why);
                        if let Some(r) = self.rates {
                            r.abort(why);
                        }
                        self.stats.add_phase(Phase::Wait, waited);
                        self.stats.waits.add(waits);
                        self.stats.add_phase(Phase::Abort, abort_ns);
                    }
                    if !why.is_retried() {
                        return false;
                    }
                    // Before retrying, the same spin-then-yield step a wait takes: a conflict
                    // usually means another transaction holds what we need, and with more
                    // workers than cores that holder may be descheduled; retrying at once would
                    // burn our time slice re-aborting against it.
                    if why != Abort::Reexecute {
                        pause(aborts_in_a_row);
                    }
                    aborts_in_a_row = aborts_in_a_row.saturating_add(1);
                    start.retry = true;
                    attempt_start = Instant::now();
                }
            }
        }
    }
}

pub(super) fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}
