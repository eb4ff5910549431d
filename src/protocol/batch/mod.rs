//! The batch layer shared by the batch-executing protocols (Aria, batched Calvin, BOHM and
//! PWV): transactions are collected into batches, each batch is ordered deterministically, and
//! batches run one after another (SGPM's batch manager, section 3 and figure 7).
//!
//! # Batches in this engine
//!
//! Every in-flight transaction is a protocol worker (a thread, or a coroutine slot under
//! `--executor coro`), and a worker runs one transaction at a time. A batch is therefore the
//! set of transactions that workers bring to it while it is open: a worker *joins* the open batch
//! at its transaction's first operation, and the batch *closes* (takes no more members) when the
//! first of these holds:
//!
//! - it has `--batch-size` members;
//! - every live worker is a member (no one else can come: a closed loop at full load);
//! - `--batch-timeout-us` passed since its first member joined (a light load, an open loop, a
//!   worker busy elsewhere: the batch goes with whoever came).
//!
//! A batch holds at most one transaction per worker, so its size is at most the workers in
//! flight (threads, or threads x Q). Batches are strictly sequential: the next batch opens only
//! when every member of the current one has finished (committed, or aborted and left for a later
//! batch), so a member of batch `n` sees every write of batch `n - 1` and none of batch `n + 1`.
//! A worker that wants to join while the batch is closed, or while it is still a member of the
//! open batch (its transaction ended early, a user abort), waits (`Pending`) for the next one.
//!
//! Inside a batch the order is deterministic: a member's [`rank`](BatchTicket::rank) is its
//! transaction's age in batches (older first: a transaction that moved to the next batch keeps its
//! first batch) and then its worker id. The protocol decides what the rank means (Aria: the
//! lowest rank wins a reservation). Since every transaction newer than an old one ranks after it,
//! the oldest transaction of a batch is first in it: no transaction starves behind newer ones.
//! A member also has a [`position`](BatchTicket::position), the order in which members joined
//! (a sequencer's arrival order, which batched Calvin's lock manager follows): fixed as soon as
//! the member joined, so a protocol can act on it before the batch is closed.
//!
//! Latency is the executor's, from the transaction's first attempt (or its arrival, open loop):
//! the wait to join a batch and for the batch's other members is inside it, as SGPM's and Aria's
//! batching cost should be.
//!
//! # Phases and the shared words
//!
//! A member *executes* (the protocol's execution phase: Aria reads its snapshot and buffers
//! writes), announces [`executed`](Batches::executed), waits until the batch is closed and every
//! member has executed ([`all_executed`](Batches::all_executed)), runs the protocol's commit phase,
//! and announces [`finished`](Batches::finished). The last member to finish opens the next batch.
//!
//! Two words, on cache lines of their own:
//!
//! ```text
//! form:     [ batch: 40 | closed: 1 | members: 23 ]   who joined the open batch
//! progress: [ batch: 40 | executed: 12 | finished: 12 ] how far its members are
//! ```
//!
//! Batch ids start at 1 and never wrap in practice (2^40 batches). A batch moves on in two steps,
//! both by compare-and-swap: `progress` from `(n, m, m)` to `(n + 1, 0, 0)` (one helper wins),
//! then `form` to `(n + 1, open, 0)`. Nobody can join `n + 1` in between, so its counters start
//! from zero.

mod ticket;
mod turn;

pub use ticket::{BatchTicket, RANK_LIMIT};
pub use turn::Turn;

/// The coroutine signal for a batch protocol's abort. A no-wait form's conflict
/// ([`super::Abort::LockConflict`]: SGPM's Calvin_NW, BOHM_NW, PWV_NW) is SF, as table 1 of
/// the SGPM paper gives it: the transaction swaps places with the global queue's front, so the
/// thread runs the transaction that waited longest there while this one waits at the front for
/// the next slot that frees up (its batch has gone on without it; it reruns in a later one).
/// Any other abort as [`super::signal::Signal::for_abort`] says (Aria's batch conflicts: NB).
pub fn no_wait_signal(why: super::Abort) -> super::signal::Signal {
    match why {
        super::Abort::LockConflict => super::signal::Signal::Sf,
        other => super::signal::Signal::for_abort(other),
    }
}

use crossbeam_utils::CachePadded;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Instant;

/// How batches are formed (`--batch-size`, `--batch-timeout-us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BatchOptions {
    /// Most members of one batch (at most the workers in flight take part).
    pub size: usize,
    /// A batch closes this long after its first member joined, full or not (microseconds).
    pub timeout_us: u64,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            size: MAX_BATCH_SIZE,
            timeout_us: 100,
        }
    }
}

/// The largest `--batch-size`: a batch holds at most one transaction per worker, and a run has
/// at most 1024 workers.
pub const MAX_BATCH_SIZE: usize = 1024;

/// Bits of a batch id in the shared words.
const BATCH_BITS: u32 = 40;
/// Bits below the batch id.
const LOW_BITS: u32 = 64 - BATCH_BITS;
const CLOSED: u64 = 1 << (LOW_BITS - 1);
const MEMBERS_MASK: u64 = CLOSED - 1;
/// Bits of each progress counter (executed, finished).
const COUNT_BITS: u32 = 12;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const EXECUTED_ONE: u64 = 1 << COUNT_BITS;

/// The form word, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Form {
    batch: u64,
    closed: bool,
    members: u64,
}

impl Form {
    fn decode(word: u64) -> Form {
        Form {
            batch: word >> LOW_BITS,
            closed: word & CLOSED != 0,
            members: word & MEMBERS_MASK,
        }
    }

    fn encode(self) -> u64 {
        self.batch << LOW_BITS | if self.closed { CLOSED } else { 0 } | self.members
    }
}

/// The progress word, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Progress {
    batch: u64,
    executed: u64,
    finished: u64,
}

impl Progress {
    fn decode(word: u64) -> Progress {
        Progress {
            batch: word >> LOW_BITS,
            executed: (word >> COUNT_BITS) & COUNT_MASK,
            finished: word & COUNT_MASK,
        }
    }

    fn encode(self) -> u64 {
        self.batch << LOW_BITS | self.executed << COUNT_BITS | self.finished
    }
}

/// Counts of the batches formed, for the report (written once per batch, by whoever closes or
/// opens it, never per operation).
#[derive(Debug, Default)]
struct BatchCounts {
    batches: AtomicU64,
    members: AtomicU64,
    closed_by_timeout: AtomicU64,
}

/// The batch manager of one run: which batch is open, who joined it, how far its members are.
pub struct Batches {
    /// `[ batch | closed | members ]`: joins, closes and openings CAS it.
    form: CachePadded<AtomicU64>,
    /// `[ batch | executed | finished ]`: members add to it; the last finisher moves it on.
    progress: CachePadded<AtomicU64>,
    /// When the open batch's first member joined, in nanoseconds since `epoch` (written by
    /// joiners that saw no member yet, read by members waiting for the batch to close).
    opened_at_ns: CachePadded<AtomicU64>,
    /// Workers that may join a batch now: registered and not left (stopped, or away between
    /// transactions until they rejoin).
    live: CachePadded<AtomicU64>,
    size: u64,
    timeout_ns: u64,
    epoch: Instant,
    counts: CachePadded<BatchCounts>,
}

impl Batches {
    /// A manager whose first batch (id 1) is open.
    pub fn new(options: &BatchOptions) -> Self {
        Batches {
            form: CachePadded::new(AtomicU64::new(
                Form {
                    batch: 1,
                    closed: false,
                    members: 0,
                }
                .encode(),
            )),
            progress: CachePadded::new(AtomicU64::new(
                Progress {
                    batch: 1,
                    executed: 0,
                    finished: 0,
                }
                .encode(),
            )),
            opened_at_ns: CachePadded::new(AtomicU64::new(0)),
            live: CachePadded::new(AtomicU64::new(0)),
            size: options.size.clamp(1, MAX_BATCH_SIZE) as u64,
            timeout_ns: options.timeout_us.saturating_mul(1000),
            epoch: Instant::now(),
            counts: CachePadded::new(BatchCounts::default()),
        }
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// A new worker that will join batches: a ticket for it (it counts as live until it leaves).
    pub fn register(&self, worker: usize) -> BatchTicket {
        // Relaxed: `live` only decides when a batch may close early; members re-read it while
        // they wait, and a stale value only delays the close until a re-read or the timeout.
        self.live.fetch_add(1, Ordering::Relaxed);
        BatchTicket::new(worker)
    }

    /// The worker will join no more batches until it [`rejoin`](Self::rejoin)s, if ever (it
    /// stopped, is dropped, or is away between transactions: an interactive session waiting
    /// for its client). Repeating it does nothing.
    pub fn leave(&self, t: &mut BatchTicket) {
        if t.left {
            return;
        }
        t.left = true;
        // Relaxed: as in `register`.
        self.live.fetch_sub(1, Ordering::Relaxed);
        // Members may have waited for this worker to join: the batch may close now.
        // Acquire: as every read of the form word (see `join`).
        let form = self.form.load(Ordering::Acquire);
        self.try_close(form);
        crate::protocol::wake::wake_waiters();
    }

    /// A worker that [`left`](Self::leave) will join batches again: it counts as live once
    /// more, so a batch may wait for it to join (until the batch's time is up). Does nothing
    /// for a ticket that did not leave.
    pub fn rejoin(&self, t: &mut BatchTicket) {
        if !t.left {
            return;
        }
        t.left = false;
        // Relaxed: as in `register`. A batch that closed early because this worker was not
        // live has closed; the worker joins the next one.
        self.live.fetch_add(1, Ordering::Relaxed);
    }

    /// Joins the open batch unless the ticket holds one already: `Pending` while the batch is
    /// closed or is the one this worker last took part in (wait for the next).
    pub fn join(&self, t: &mut BatchTicket) -> Poll<()> {
        if t.batch != 0 {
            return Poll::Ready(());
        }
        loop {
            // Acquire: pairs with the Release of whoever opened this batch (`try_advance`), so
            // the previous batch's installs are visible to this member's reads.
            let word = self.form.load(Ordering::Acquire);
            let f = Form::decode(word);
            if f.closed || f.batch <= t.last {
                // Help the batch along: it may be due to close or done.
                if !self.try_close(word) && !self.try_advance(word) {
                    return Poll::Pending;
                }
                continue;
            }
            let members = f.members + 1;
            // Relaxed: see `register`.
            let live = self.live.load(Ordering::Relaxed);
            let closes = members >= self.size || members >= live;
            if f.members == 0 {
                // Before the CAS that makes us a member (its Release publishes this store): a
                // waiter that sees a member sees an opening time at least this recent. A store
                // from a joiner that lost its race is just as recent, never earlier.
                // Relaxed: ordered by the CAS below.
                self.opened_at_ns.store(self.now_ns(), Ordering::Relaxed);
            }
            let joined = Form {
                batch: f.batch,
                closed: closes,
                members,
            };
            // AcqRel: Release publishes the opening time; Acquire as the load above.
            if self
                .form
                .compare_exchange(word, joined.encode(), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                t.joined(f.batch, f.members);
                if closes {
                    self.counted_close(members, false);
                    // Members waiting for the batch to close.
                    crate::protocol::wake::wake_waiters();
                }
                return Poll::Ready(());
            }
        }
    }

    /// Closes the batch of `word` if it is open, has members, and either every live worker is
    /// one or its time is up. Returns whether the form word changed (by us or anyone).
    fn try_close(&self, word: u64) -> bool {
        let f = Form::decode(word);
        if f.closed || f.members == 0 {
            return false;
        }
        // Relaxed: see `register`.
        let everyone = f.members >= self.live.load(Ordering::Relaxed);
        // Relaxed: the CAS that made the first member published it (see `join`), and our
        // Acquire load of `word` saw that CAS.
        let opened = self.opened_at_ns.load(Ordering::Relaxed);
        let timed_out = self.now_ns().saturating_sub(opened) >= self.timeout_ns;
        if !everyone && !timed_out {
            return false;
        }
        let closed = Form { closed: true, ..f };
        // AcqRel: members that then see it closed read `progress` after it.
        match self
            .form
            .compare_exchange(word, closed.encode(), Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                self.counted_close(f.members, !everyone);
                crate::protocol::wake::wake_waiters();
                true
            }
            Err(_) => true,
        }
    }

    fn counted_close(&self, members: u64, by_timeout: bool) {
        // Relaxed: report counters, read after the workers were joined.
        self.counts.batches.fetch_add(1, Ordering::Relaxed);
        self.counts.members.fetch_add(members, Ordering::Relaxed);
        if by_timeout {
            self.counts
                .closed_by_timeout
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Opens the next batch if the batch of `word` is closed and every member finished.
    /// Returns whether the form word changed.
    fn try_advance(&self, word: u64) -> bool {
        let f = Form::decode(word);
        if !f.closed {
            return false;
        }
        let done = Progress {
            batch: f.batch,
            executed: f.members,
            finished: f.members,
        };
        let next = Progress {
            batch: f.batch + 1,
            executed: 0,
            finished: 0,
        };
        // AcqRel: Acquire takes in every member's installs (each `finished` is a Release
        // increment of this word); Release is not needed by anyone reading `progress`, but the
        // form store below carries them on.
        if self
            .progress
            .compare_exchange(
                done.encode(),
                next.encode(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_err()
        {
            // Not done, or another helper moved it on (and stores the form next).
            return Form::decode(self.form.load(Ordering::Acquire)) != f;
        }
        let open = Form {
            batch: f.batch + 1,
            closed: false,
            members: 0,
        };
        // Release: pairs with the Acquire loads of joiners: the installs of every member of the
        // batch that ended happen before any read of the next.
        self.form.store(open.encode(), Ordering::Release);
        crate::protocol::wake::wake_waiters();
        true
    }

    /// The ticket's member has executed (its reservations, or whatever the protocol publishes
    /// before the barrier, are made).
    pub fn executed(&self, t: &BatchTicket) {
        debug_assert!(t.batch != 0, "a member");
        // Release: publishes what the member did before (Aria's reservations) to the members
        // that see the count complete (their Acquire load in `all_executed`).
        let before = Progress::decode(self.progress.fetch_add(EXECUTED_ONE, Ordering::Release));
        debug_assert_eq!(before.batch, t.batch);
        // Acquire: as in `all_executed`.
        let f = Form::decode(self.form.load(Ordering::Acquire));
        if f.closed && before.executed + 1 == f.members {
            // The last one: members may be parked at the barrier.
            crate::protocol::wake::wake_waiters();
        }
    }

    /// Whether the ticket's batch is closed and every member has executed: `Pending` until
    /// then (closing the batch when it is due).
    pub fn all_executed(&self, t: &BatchTicket) -> Poll<()> {
        // Acquire: the closed flag and member count.
        let mut word = self.form.load(Ordering::Acquire);
        if !Form::decode(word).closed {
            self.try_close(word);
            // Acquire: as above.
            word = self.form.load(Ordering::Acquire);
        }
        let f = Form::decode(word);
        debug_assert_eq!(f.batch, t.batch, "the batch waits for its members");
        if !f.closed {
            return Poll::Pending;
        }
        // Acquire: pairs with every member's Release increment (`executed`), a release sequence
        // on this word: their reservations are visible from here.
        let p = Progress::decode(self.progress.load(Ordering::Acquire));
        if p.executed == f.members {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// The ticket's member is done with the batch (committed, or aborted); the last one opens
    /// the next batch. The ticket is free to join the next batch.
    pub fn finished(&self, t: &mut BatchTicket) {
        debug_assert!(t.batch != 0, "a member");
        // Release: the member's installs happen before the next batch opens (`try_advance`'s
        // Acquire CAS reads this increment's release sequence).
        self.progress.fetch_add(1, Ordering::Release);
        t.batch = 0;
        // Acquire: as in `join`.
        let word = self.form.load(Ordering::Acquire);
        self.try_advance(word);
    }

    /// Whether every member of the ticket's closed batch has finished, but for `staying`
    /// members that stay in it past its commit phase and finish only after this holds (Aria's
    /// fallback members, which wait here for every other member's installs). The caller reads
    /// `staying` before calling: both counts only grow while the ticket's member is in the
    /// batch, and a staying member adds to `finished` only after this held, so a sum that
    /// reaches the batch's members is never early.
    pub fn all_finished_but(&self, t: &BatchTicket, staying: u64) -> bool {
        // Acquire: the member count (the batch is closed: its ticket passed `all_executed`).
        let f = Form::decode(self.form.load(Ordering::Acquire));
        debug_assert!(
            f.batch == t.batch && f.closed,
            "a member of the closed batch"
        );
        // Acquire: pairs with every finisher's Release increment (`finished`): their installs
        // are visible from here.
        let p = Progress::decode(self.progress.load(Ordering::Acquire));
        debug_assert_eq!(p.batch, t.batch);
        p.finished + staying >= f.members
    }

    /// Leaves the batch without executing anything (an attempt that ended before its commit
    /// phase: a user abort): executed and finished at once.
    pub fn withdraw(&self, t: &mut BatchTicket) {
        self.executed(t);
        self.finished(t);
    }

    /// [`stats`](Self::stats), and for a protocol's no-wait form (`no_wait`) the conflicts it
    /// reran in a later batch (`no_wait_conflicts`, counted by the protocol in `conflicts`).
    pub fn stats_with_conflicts(
        &self,
        no_wait: bool,
        conflicts: &AtomicU64,
    ) -> Vec<(&'static str, f64)> {
        let mut stats = self.stats();
        if no_wait {
            // Relaxed: read after the workers were joined.
            stats.push((
                "no_wait_conflicts",
                conflicts.load(Ordering::Relaxed) as f64,
            ));
        }
        stats
    }

    /// Named numbers for the report: batches closed, their mean size, and how many closed
    /// because their time was up.
    pub fn stats(&self) -> Vec<(&'static str, f64)> {
        // Relaxed: read after the workers were joined.
        let batches = self.counts.batches.load(Ordering::Relaxed);
        let members = self.counts.members.load(Ordering::Relaxed);
        let timeouts = self.counts.closed_by_timeout.load(Ordering::Relaxed);
        vec![
            ("batches", batches as f64),
            (
                "mean_batch_size",
                if batches == 0 {
                    0.0
                } else {
                    members as f64 / batches as f64
                },
            ),
            ("batches_closed_by_timeout", timeouts as f64),
        ]
    }
}

#[cfg(test)]
mod tests;
