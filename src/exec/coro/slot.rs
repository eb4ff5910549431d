//! One coroutine slot: a protocol worker that runs transactions one after another, as the thread
//! executor's worker does, but suspends (returns `Pending` to its thread's scheduler) instead of
//! spinning whenever an operation waits, after every completed transaction and before rerunning an
//! aborted one.
//!
//! Measurements follow the thread executor exactly (`exec/thread.rs`): a commit or an abort
//! counts when it happens during measure; latency runs from the first attempt's start to the
//! commit, time
//! spent suspended and in the global queue included; wait time is measured from an attempt's first
//! `Pending` to the program's (or commit's) completion; retries reuse the request and tell the
//! protocol they retry.
//!
//! What happens after an abort is the protocol's signal ([`RunHooks::signal`](crate::protocol::parts::RunHooks::signal)): RR reruns in
//! place after one switch; ML and SF hand the transaction to the global queue (tail or front) and
//! take its front, so that another transaction, perhaps this one, runs in the slot; NB (a batch
//! protocol's conflict: Aria) reruns it in this slot as a retry, which the protocol's batch layer
//! places in a later batch with its age kept (`protocol::batch`). A transaction that moves starts over on its new
//! slot as a first attempt of that worker (`retry: false`): protocols keep per-worker state across
//! retries (WOUND_WAIT's timestamp) that belongs to the old slot. During stop no transaction moves,
//! so that every slot finishes the transaction in hand, as the thread executor's workers do.

use super::super::backoff::AdaptiveBackoff;
use super::super::durable_acks::{Committed, DurableAcks};
use super::super::thread::{MEASURE, STOP, nanos};
use super::super::wait::pause;
use super::global_queue::GlobalQueue;
use super::suspend::{sleep_ns, yield_now};
use crate::metrics::rate_series::RateSlot;
use crate::metrics::{Phase, WorkerStats};
use crate::park::ParkingLot;
use crate::protocol::signal::Signal;
use crate::protocol::{Abort, AttemptStart, Protocol};
use crate::random::FastRng;
use crate::txn::Txn;
use crate::workload::Workload;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::Poll;
use std::time::Instant;

/// A transaction: its request and what the executor has measured of it so far.
pub struct Job<R> {
    req: R,
    ty: usize,
    read_only: bool,
    /// The first attempt's start; `None` before it.
    first_start: Option<Instant>,
    /// Attempts that aborted so far (on any slot).
    aborts: u32,
}

/// What a thread's slots share: the run's and their thread's.
pub struct SlotEnv<'r, W: Workload> {
    pub workload: &'r W,
    pub period: &'r AtomicU8,
    pub queue: &'r GlobalQueue<Job<W::Request>>,
    pub backoff: Option<&'r AdaptiveBackoff>,
    /// Whom the thread wakes when an attempt ends (the process's lot, where waiters park).
    pub lot: &'static ParkingLot,
    pub read_phase_extension_ns: u64,
    /// The thread's statistics (slots never hold the borrow across a suspension).
    pub stats: &'r RefCell<WorkerStats>,
    /// The thread's live counts, when the runner samples them.
    pub rates: Option<&'r RateSlot>,
    /// Attempts ended on this thread: the scheduler's sign of progress.
    pub attempts_ended: &'r Cell<u64>,
    /// Commits on this thread (published for AdaptiveBackoff).
    pub commits: &'r Cell<u64>,
    /// With a log: the thread's commits waiting for their durable acknowledgement
    /// (`exec::durable_acks`; never borrowed across a suspension).
    pub acks: &'r RefCell<DurableAcks>,
    /// The thread's index.
    pub thread: usize,
    /// Slots per thread (Q).
    pub queue_len: usize,
}

impl<W: Workload> SlotEnv<'_, W> {
    /// Whether the run is in its measured period (what the thread's wait counts follow).
    pub fn measuring(&self) -> bool {
        // Acquire: pairs with the coordinator's Release, as every read of the period.
        self.period.load(Ordering::Acquire) == MEASURE
    }

    fn attempt_ended(&self) {
        self.attempts_ended.set(self.attempts_ended.get() + 1);
        self.lot.attempt_ended();
    }

    fn count(&self, s: Signal) {
        self.stats.borrow_mut().signal(s);
    }
}

/// Runs transactions on `tx` until stop, generating from `rng` as worker `tx.worker_id()`.
pub async fn run_slot<P: Protocol, W: Workload>(
    env: &SlotEnv<'_, W>,
    tx: &mut Txn<'_, P>,
    mut rng: FastRng,
) {
    let mut job = Job::blank(env.workload.new_request());
    // A request kept from a job that left the slot, for the next move's placeholder: moves
    // allocate only until every moved job has a request to come back to.
    let mut spare: Option<W::Request> = None;
    loop {
        // Acquire: pairs with the coordinator's Release (see `thread.rs`).
        let period = env.period.load(Ordering::Acquire);
        if period == STOP {
            break;
        }
        match env.queue.pop_front() {
            Some(moved) => spare = Some(std::mem::replace(&mut job, moved).req),
            None => job.generate(env, tx.worker_id(), &mut rng),
        }
        while let Some(signal) = run_job(env, tx, &mut job, &mut rng).await {
            let placeholder =
                Job::blank(spare.take().unwrap_or_else(|| env.workload.new_request()));
            let leaving = std::mem::replace(&mut job, placeholder);
            let front = match signal {
                Signal::Sf => env.queue.move_front(leaving),
                _ => env.queue.move_back(leaving),
            };
            match front {
                Some(moved) => spare = Some(std::mem::replace(&mut job, moved).req),
                None => job.generate(env, tx.worker_id(), &mut rng),
            }
        }
        // Switch on completion: the thread's other transactions run before this slot's next.
        yield_now().await;
    }
    // The thread's other slots may still wait for this worker (DecentSched's epoch barrier).
    tx.stopped();
}

impl<R> Job<R> {
    fn blank(req: R) -> Self {
        Job {
            req,
            ty: 0,
            read_only: false,
            first_start: None,
            aborts: 0,
        }
    }

    /// Makes this a fresh transaction generated by `worker` (as the thread executor's worker
    /// generates: its own stream).
    fn generate<W: Workload<Request = R>>(
        &mut self,
        env: &SlotEnv<'_, W>,
        worker: usize,
        rng: &mut FastRng,
    ) {
        env.workload.generate(worker, rng, &mut self.req);
        self.ty = env.workload.txn_type(&self.req);
        self.read_only = env.workload.is_read_only(&self.req);
        self.first_start = None;
        self.aborts = 0;
    }
}

/// Runs the slot's job until it commits or aborts for good (`None`), or until its protocol's
/// signal says it must leave the slot (`Some(ML | SF)`: the caller moves it).
async fn run_job<P: Protocol, W: Workload>(
    env: &SlotEnv<'_, W>,
    tx: &mut Txn<'_, P>,
    job: &mut Job<W::Request>,
    rng: &mut FastRng,
) -> Option<Signal> {
    let mut retry_here = false;
    // The first attempt starts before the declaration, as under the thread executor: declaring
    // (and sorting) the access set is the transaction's work, in its latency and execute phase.
    let mut attempt_start = Instant::now();
    if P::DECLARED_SET.is_some() {
        // Once per job on this slot (a moved job declares again on its new slot's worker): its
        // retries run the same request.
        let workload = env.workload;
        tx.declare(|set| workload.declare(&job.req, set));
    }
    loop {
        let first_start = *job.first_start.get_or_insert(attempt_start);
        tx.begin(AttemptStart {
            retry: retry_here,
            read_only: job.read_only,
        });
        // A deterministic protocol schedules the attempt from its declared set first, as under
        // the thread executor; its waits suspend the slot (AG) like any other.
        let (scheduled, schedule_wait) = if P::DECLARED_SET.is_some() {
            timed(env, std::future::poll_fn(|_| tx.poll_schedule())).await
        } else {
            (Ok(()), 0)
        };
        let (result, exec_wait) = match scheduled {
            Ok(()) => timed(env, env.workload.run(tx, &job.req)).await,
            Err(why) => (Err(why), 0),
        };
        // A deterministic protocol confirms a user abort first, as under the thread executor.
        let (result, confirm_wait) = match result {
            Err(Abort::User) if P::DECLARED_SET.is_some() => {
                let poll = std::future::poll_fn(|_| tx.poll_confirm_user_abort());
                let (confirmed, wait) = timed(env, poll).await;
                if confirmed.is_ok() {
                    tx.user_abort_stands();
                }
                (confirmed.and(Err(Abort::User)), wait)
            }
            other => (other, 0),
        };
        let exec_wait = exec_wait + schedule_wait + confirm_wait;
        let (result, commit_wait, exec_end) = match result {
            Ok(()) => {
                if env.read_phase_extension_ns > 0 {
                    sleep_ns(env.read_phase_extension_ns).await;
                }
                let exec_end = Instant::now();
                let (r, w) = timed(env, std::future::poll_fn(|_| tx.poll_commit())).await;
                (r, w, Some(exec_end))
            }
            Err(why) => (Err(why), 0, None),
        };
        let end = Instant::now();
        let waited = exec_wait + commit_wait;
        // Read after `end`, as the thread executor does: only what ends inside the measured
        // window counts.
        let counted = env.measuring();
        match result {
            Ok(()) => {
                tx.committed();
                env.attempt_ended();
                let epoch = tx.take_committed_epoch();
                if let Some(log) = tx.logger() {
                    let committed = Committed {
                        worker: tx.worker_id(),
                        txn_id: tx.id(),
                        epoch,
                        first_start,
                        counted,
                    };
                    let mut stats = env.stats.borrow_mut();
                    env.acks.borrow_mut().queue(log, committed, &mut stats);
                }
                if counted {
                    let exec_end = exec_end.expect("commit follows execution");
                    let exec = nanos(exec_end - attempt_start).saturating_sub(exec_wait);
                    let commit = nanos(end - exec_end).saturating_sub(commit_wait);
                    let mut stats = env.stats.borrow_mut();
                    stats.add_phase(Phase::Execute, exec);
                    stats.add_phase(Phase::Commit, commit);
                    stats.add_phase(Phase::Wait, waited);
                    stats.commit(job.ty, nanos(end - first_start), u64::from(job.aborts) + 1);
                    if let Some(r) = env.rates {
                        r.commit(job.ty);
                    }
                }
                env.commits.set(env.commits.get() + 1);
                if let Some(b) = env.backoff {
                    b.publish_commits(env.thread, env.commits.get());
                }
                return None;
            }
            Err(why) => {
                tx.aborted(why);
                env.attempt_ended();
                let signal = if why.is_retried() {
                    P::RUN_HOOKS.signal(tx.protocol(), why)
                } else {
                    Signal::Nt
                };
                let mut abort_ns = nanos(end - attempt_start).saturating_sub(waited);
                let mut backoff_ns = 0;
                // A re-execution is already scheduled: nothing to back off from.
                if why.is_retried() && why != Abort::Reexecute {
                    if let Some(b) = env.backoff {
                        backoff_ns = b.delay_ns(rng);
                        abort_ns += backoff_ns;
                    }
                }
                if counted {
                    let mut stats = env.stats.borrow_mut();
                    stats.abort(job.ty, why);
                    if let Some(r) = env.rates {
                        r.abort(why);
                    }
                    stats.add_phase(Phase::Wait, waited);
                    stats.add_phase(Phase::Abort, abort_ns);
                    stats.signal(signal);
                }
                if !why.is_retried() {
                    return None;
                }
                job.aborts = job.aborts.saturating_add(1);
                sleep_ns(backoff_ns).await;
                // Acquire: pairs with the coordinator's Release.
                let stopping = env.period.load(Ordering::Acquire) == STOP;
                match signal {
                    Signal::Ml | Signal::Sf if !stopping => return Some(signal),
                    // NB: the next batch is where this slot's retry goes anyway (its batch is
                    // over for it); staying keeps the worker, hence its age in batches.
                    _ => retry_here = true,
                }
                if why == Abort::Reexecute {
                    // Scheduled already, and perhaps waited for by this thread's other
                    // transactions: rerun at once.
                } else if env.queue_len == 1 {
                    // No other coroutine to switch to: the thread executor's pause before a
                    // retry (spin, then yield), so that Q = 1 retries as it does.
                    pause(job.aborts - 1);
                } else {
                    // Switch before the rerun: whatever this attempt conflicted with is likely
                    // held by another transaction, perhaps one of this thread's.
                    yield_now().await;
                }
                attempt_start = Instant::now();
            }
        }
    }
}

/// Polls `fut` to completion, suspending the coroutine (SGPM's AG) whenever it is `Pending`.
/// Returns its output and the nanoseconds from its first `Pending` to its completion (what the
/// thread executor's `drive` measures).
/// A wait's AG signal is counted when it happens during measure.
async fn timed<F: Future, W: Workload>(env: &SlotEnv<'_, W>, fut: F) -> (F::Output, u64) {
    let mut fut = pin!(fut);
    let mut waiting_since: Option<Instant> = None;
    std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        Poll::Ready(out) => Poll::Ready((out, waiting_since.map_or(0, |s| nanos(s.elapsed())))),
        Poll::Pending => {
            waiting_since.get_or_insert_with(Instant::now);
            if env.measuring() {
                env.count(Signal::Ag);
            }
            Poll::Pending
        }
    })
    .await
}
