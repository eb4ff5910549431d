//! The SGPM coroutine executor (`--executor coro --queue Q`): each worker thread keeps up to Q
//! transactions in flight and switches between them only when one waits (an operation returned
//! `Pending`: SGPM's AG), completes, or aborts; never on a time slice.
//!
//! The transactions are the same `async` programs the thread executor runs. Each of a thread's Q
//! slots (module `slot`) is a protocol worker of its own (its own `Txn`), running one transaction after
//! another as a stackless coroutine: a boxed future per
//! slot, allocated once, polled round-robin by its thread with a no-op waker. Slot k of thread t
//! is worker `k * threads + t`, so Q = 1 gives every worker the id (and so the request stream)
//! it has under the thread executor, and workers with neighbouring ids run on different threads. A shared global
//! queue (module `global_queue`) holds transactions that a protocol's signal moved out of their slot
//! (ML, SF); a slot that needs work takes its front, and generates a fresh request when it is
//! empty. Batch protocols (Aria) keep their batch manager in `protocol::batch`: a slot's
//! transaction joins the open batch at its first operation, and NB reruns it in its slot, in a
//! later batch.
//!
//! A thread whose every slot waits on other threads waits by the thread executor's steps
//! (`exec/wait.rs`: spin while the run's threads have cores of their own, yield, then park until a
//! waking event); progress is an attempt ending or an operation completing on the thread
//! (`txn::progress`).
//!
//! Statistics are kept per thread (one `WorkerStats` shared by its slots); histories per slot.

mod global_queue;
mod slot;
mod suspend;

use super::backoff::AdaptiveBackoff;
use super::durable_acks::DurableAcks;
use super::panic_watch::PanicWatch;
use super::start_gate::StartGate;
use super::thread::{ExecOutcome, coordinate, first_period};
use super::wait::{StepOutcome, WaitPolicy, Waiting};
use crate::check::history::WorkerHistory;
use crate::config::ExecConfig;
use crate::log::Logger;
use crate::metrics::rate_series::RateCounters;
use crate::metrics::{WaitCounts, WorkerStats};
use crate::on_cpu::{self, HoldersSeen, WorkerIds};
use crate::park::ParkingLot;
use crate::protocol::Protocol;
use crate::protocol::parts::version_memory_exhausted;
use crate::random::FastRng;
use crate::storage::Database;
use crate::txn::Txn;
use crate::workload::Workload;
use crossbeam_utils::CachePadded;
use global_queue::GlobalQueue;
use slot::{SlotEnv, run_slot};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::Barrier;
use std::sync::atomic::AtomicU8;
use std::task::{Context, Waker};

/// Runs `workload` on `protocol` over `db` with `cfg.threads` threads of `queue` coroutines each
/// (`queue * cfg.threads` protocol workers; the protocol must have been built for that many).
pub fn run_coro<P: Protocol, W: Workload>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    workload: &W,
    cfg: &ExecConfig,
    queue: usize,
) -> ExecOutcome {
    run_coro_sampled(protocol, db, workload, cfg, queue, None, None)
}

/// [`run_coro`], each thread also counting its measured commits and aborts in its slot of
/// `rates` (one per thread) as they happen, for the runner's time series
/// (`metrics::rate_series`), and every slot's transactions logged to `log` when given (one
/// log file per slot worker; the log must have been created for `queue * cfg.threads`
/// workers). A logged commit is acknowledged once durable, as under the thread executor
/// (`exec::durable_acks`), by its thread, in the thread's commit order; a log that fails stops
/// the run. Validation gives it group commit or none only: `--log-sync txn` would block the
/// thread.
pub fn run_coro_sampled<P: Protocol, W: Workload>(
    protocol: &P,
    db: &Database<P::RecordMeta>,
    workload: &W,
    cfg: &ExecConfig,
    queue: usize,
    rates: Option<&RateCounters>,
    log: Option<&Logger>,
) -> ExecOutcome {
    assert!(queue >= 1, "validated: --queue >= 1");
    let workers = cfg.threads * queue;
    // Written by the coordinator only; Acquire loads in the slots pair with its Release stores.
    let period = CachePadded::new(AtomicU8::new(first_period(cfg)));
    let backoff = (cfg.adaptive_backoff || P::RUN_HOOKS.adaptive_backoff(protocol))
        .then(|| AdaptiveBackoff::new(cfg.threads));
    let start = Barrier::new(cfg.threads + 1);
    // Raised by a worker that panics, so the others and the coordinator stop for it.
    let watch = PanicWatch::new();
    let global = GlobalQueue::new();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let policy = WaitPolicy::for_threads(cfg.threads + P::RUN_HOOKS.helper_threads, cores.len());
    let history_share = usize::try_from(cfg.check_limit_ops / workers as u64).unwrap_or(usize::MAX);

    std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|thread| {
                let (period, backoff, start, cores) = (&period, backoff.as_ref(), &start, &cores);
                let watch = &watch;
                let global = &global;
                s.spawn(move || {
                    // Declared first, so it drops last: a panic raises it after the unwinding
                    // worker's protocol state was dropped (left its batch, its epoch barrier).
                    let _watching = watch.watch();
                    let mut gate = StartGate::new(start);
                    if cfg.pin_threads && !cores.is_empty() {
                        core_affinity::set_for_current(cores[thread % cores.len()]);
                    }
                    // Its yields and parks mark all its slots' workers away (`crate::on_cpu`).
                    let _driving =
                        on_cpu::drive_workers(WorkerIds::strided(thread, cfg.threads, queue));
                    let stats = RefCell::new(WorkerStats::new(workload.txn_types().len()));
                    let acks = RefCell::new(DurableAcks::default());
                    let (attempts_ended, commits) = (Cell::new(0), Cell::new(0));
                    let env = SlotEnv {
                        workload,
                        period,
                        queue: global,
                        backoff,
                        lot: ParkingLot::global(),
                        read_phase_extension_ns: cfg.read_phase_extension_ns,
                        stats: &stats,
                        rates: rates.map(|r| r.slot(thread)),
                        attempts_ended: &attempts_ended,
                        commits: &commits,
                        acks: &acks,
                        thread,
                        queue_len: queue,
                    };
                    let mut txs: Vec<Txn<'_, P>> = (0..queue)
                        .map(|k| {
                            let mut tx = Txn::new(
                                protocol,
                                db,
                                k * cfg.threads + thread,
                                cfg.record_history,
                            );
                            tx.set_history_budget(history_share);
                            if let Some(log) = log {
                                tx.attach_log(log);
                            }
                            tx
                        })
                        .collect();
                    {
                        let mut slots: Vec<_> = txs
                            .iter_mut()
                            .map(|tx| {
                                let rng = FastRng::for_worker(cfg.seed, tx.worker_id());
                                Some(Box::pin(run_slot(&env, tx, rng)))
                            })
                            .collect();
                        gate.arrive();
                        schedule(&mut slots, &env, policy, thread == 0);
                    }
                    // Every slot has finished, so none holds an epoch the flush must close:
                    // blocking the thread until its commits are durable stalls nothing.
                    if let Some(log) = log {
                        acks.borrow_mut().drain(log, &mut stats.borrow_mut());
                    }
                    let histories: Vec<WorkerHistory> = txs
                        .iter_mut()
                        .map(|tx| tx.take_history().unwrap_or_default())
                        .collect();
                    (stats.into_inner(), histories)
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
            let (stats, thread_histories) = h.join().expect("worker thread panicked");
            workers.push(stats);
            if cfg.record_history {
                histories.extend(thread_histories);
            }
        }
        ExecOutcome {
            workers,
            measured,
            histories,
        }
    })
}

/// What the scheduler counts as progress of the thread: attempts ended plus operations
/// completed on it. A pass over the slots that changes neither moved no transaction forward.
fn progress<W: Workload>(env: &SlotEnv<'_, W>) -> u64 {
    env.attempts_ended
        .get()
        .wrapping_add(crate::txn::progress::ops_completed())
}

/// Polls the thread's slots round-robin until every one has finished (after stop). When a whole
/// pass makes no progress (no operation completed, no attempt ended: every slot is blocked), the
/// thread waits as a thread-executor waiter would, by `policy` (`exec/wait.rs`): spin, yield,
/// then park until a waking event, re-polling its slots between steps. `leader` tunes
/// AdaptiveBackoff.
fn schedule<F: Future<Output = ()>, W: Workload>(
    slots: &mut [Option<Pin<Box<F>>>],
    env: &SlotEnv<'_, W>,
    policy: WaitPolicy,
    leader: bool,
) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut live = slots.len();
    let mut waiting: Option<Waiting> = None;
    let mut leader_clock = env.backoff.filter(|_| leader).map(|b| b.leader_clock());
    while live > 0 {
        let before = progress(env);
        live -= poll_all(slots, &mut cx);
        if let (Some(b), Some(clock)) = (env.backoff, leader_clock.as_mut()) {
            b.tune(clock);
        }
        if progress(env) != before || live == 0 {
            waiting = None;
            continue;
        }
        let mut counts = WaitCounts::default();
        let step =
            waiting
                .get_or_insert_with(Waiting::start)
                .take(policy, env.lot, &mut counts, || {
                    live -= poll_all(slots, &mut cx);
                    (progress(env) != before || live == 0).then_some(())
                });
        if let StepOutcome::Polled(Some(())) = step {
            waiting = None;
        }
        if counts != WaitCounts::default() && env.measuring() {
            env.stats.borrow_mut().waits.add(counts);
        }
    }
}

/// Polls every live slot once; returns how many finished. Leaves what the pass's waiting slots
/// noted of their holders, together (`crate::on_cpu`), for the next wait step: all away only if
/// every waiting slot's holders are, since the thread's next step serves them all.
fn poll_all<F: Future<Output = ()>>(
    slots: &mut [Option<Pin<Box<F>>>],
    cx: &mut Context<'_>,
) -> usize {
    let mut finished = 0;
    let mut seen: Option<HoldersSeen> = None;
    for slot in slots.iter_mut() {
        if let Some(fut) = slot {
            let _ = on_cpu::take_holders_seen();
            if fut.as_mut().poll(cx).is_ready() {
                *slot = None;
                finished += 1;
            } else {
                let this = on_cpu::take_holders_seen();
                seen = Some(seen.map_or(this, |s| s.together(this)));
            }
        }
    }
    on_cpu::set_holders_seen(seen.unwrap_or(HoldersSeen::Unknown));
    finished
}
