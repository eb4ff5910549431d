//! Which workers are on a CPU: how a waiter tells a holder that is about to release from one
//! that cannot release until it runs again.
//!
//! A waiter's spin is worth its cost only while the transaction it waits for runs: then the
//! release comes within a transaction's length. When the holder has parked in a wait of its
//! own, every pause the waiter spins is CPU the holder may need, and with more workers than
//! cores the waiter's core is often exactly what the holder needs. So:
//!
//! - **The executor says who is away.** Each executor thread names the protocol workers it
//!   drives ([`drive_workers`]: one under the thread executor, its Q slots under the coroutine
//!   executor), and every place it sleeps runs inside [`while_away`], which marks those workers
//!   away for the duration (`exec/wait.rs`: its parks; also the pause before a retry and
//!   CoreSlice's yield, where the worker holds nothing). A wait's *yields* are not marked: a
//!   yielding holder runs again within a scheduler decision, and with yields marked its waiters
//!   parked at once behind it, which cost WOUND_WAIT and PLOR about a quarter of their
//!   throughput at 4 workers on 2 cores (docs/RESULTS.md, "Waiters that look at their holder"). A thread that named no workers (tests, the interactive server's
//!   sessions) marks nothing, and its workers count as running.
//! - **The protocol says whom it waits for.** A protocol whose lock names its holders calls
//!   [`note_holder`] for each conflicting holder as it returns `Pending` (WOUND_WAIT and WAIT_DIE
//!   through the owner and reader bits of their lock, PLOR through the owner word and reader
//!   bits). It needs to know nothing of executors: a function call, no `dyn`.
//! - **The waiter looks.** The executor's next wait step reads what the polls since its last step
//!   noted ([`take_holders_seen`]): if every holder noted was away, it parks at once instead of
//!   spinning out its budget (`exec/wait.rs`, `Waiting::next`).
//!
//! What it cannot see: a holder the kernel preempted in the middle of its time slice looks
//! running. Its waiters spin and park by the executor's ordinary steps, as before.
//!
//! One table per process, like the parking lot ([`crate::park`]): the holders are named by
//! protocol code that must not know the executor. Each worker's entry is a count of the threads
//! that have it away, not a flag, so two runs in one process (parallel tests) that share worker
//! ids cannot clear each other's marks; they can only make each other's hint wrong, which costs
//! a park too early or a spin too long, never correctness: a parked waiter is still woken by
//! every event that can end its wait, and polls again.

use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

/// Workers the table tracks: every worker id a run may have (`config::MAX_WORKERS`). Ids past it
/// count as running.
pub const TRACKED_WORKERS: usize = 1024;

/// Per worker, how many threads have it away now (0: running).
static AWAY: [CachePadded<AtomicU32>; TRACKED_WORKERS] =
    [const { CachePadded::new(AtomicU32::new(0)) }; TRACKED_WORKERS];

/// The protocol workers one executor thread drives: `count` ids, `first`, `first + stride`, ...
/// (the coroutine executor's slot k of thread t is worker `k * threads + t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerIds {
    first: usize,
    stride: usize,
    count: usize,
}

impl WorkerIds {
    /// One worker: the thread executor's.
    pub const fn one(id: usize) -> Self {
        WorkerIds {
            first: id,
            stride: 1,
            count: 1,
        }
    }

    /// `count` workers `first`, `first + stride`, ...
    pub const fn strided(first: usize, stride: usize, count: usize) -> Self {
        WorkerIds {
            first,
            stride,
            count,
        }
    }

    /// No worker (a thread that drives none).
    const NONE: WorkerIds = WorkerIds::strided(0, 1, 0);

    fn ids(self) -> impl Iterator<Item = usize> {
        (0..self.count)
            .map(move |k| self.first + k * self.stride)
            .filter(|&id| id < TRACKED_WORKERS)
    }
}

thread_local! {
    /// The workers this thread drives ([`drive_workers`]).
    static MINE: Cell<WorkerIds> = const { Cell::new(WorkerIds::NONE) };
    /// What the polls since the last [`take_holders_seen`] noted.
    static SEEN: Cell<HoldersSeen> = const { Cell::new(HoldersSeen::Unknown) };
}

/// Whether worker `id` is running (not away). Ids the table does not track count as running.
#[inline]
pub fn is_running(id: usize) -> bool {
    // Relaxed: a hint that publishes no data. A stale value costs a waiter one park too early
    // (it is woken by every event that can end its wait, and re-polls) or one spin step too
    // many (bounded by its spin budget).
    AWAY.get(id).is_none_or(|a| a.load(Ordering::Relaxed) == 0)
}

/// While the returned guard lives, this thread drives `ids`: its [`while_away`] marks them.
/// Executors call it once per worker thread.
pub fn drive_workers(ids: WorkerIds) -> Driving {
    MINE.with(|m| m.set(ids));
    Driving(())
}

/// The registration [`drive_workers`] made; dropping it ends it.
#[must_use = "the thread drives its workers only while this lives"]
pub struct Driving(());

impl Drop for Driving {
    fn drop(&mut self) {
        MINE.with(|m| m.set(WorkerIds::NONE));
    }
}

/// Runs `give_cpu_away` (a yield, a park) with this thread's workers marked away.
#[inline]
pub fn while_away<R>(give_cpu_away: impl FnOnce() -> R) -> R {
    let _away = Away::mark(MINE.with(Cell::get));
    give_cpu_away()
}

/// Marks worker `id` away until the guard drops (tests of the protocols' notes).
#[cfg(test)]
pub(crate) fn mark_away(id: usize) -> impl Drop {
    Away::mark(WorkerIds::one(id))
}

/// Workers marked away until dropped (also on unwind, so a panicking poll inside a park cannot
/// leave them away for good).
struct Away(WorkerIds);

impl Away {
    fn mark(ids: WorkerIds) -> Self {
        for id in ids.ids() {
            // Relaxed: see `is_running`.
            AWAY[id].fetch_add(1, Ordering::Relaxed);
        }
        Away(ids)
    }
}

impl Drop for Away {
    fn drop(&mut self) {
        for id in self.0.ids() {
            // Relaxed: see `is_running`.
            AWAY[id].fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// What a waiter's polls said about the holders they wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldersSeen {
    /// No holder noted (the protocol names none, or nothing waited): wait as usual.
    Unknown,
    /// Every holder noted was away.
    AllAway,
    /// At least one holder noted was running.
    SomeRunning,
}

impl HoldersSeen {
    /// What two waiters' notes say together, for one step that serves both: all away only if
    /// both are; a waiter whose holders are unknown keeps the step as usual.
    pub fn together(self, other: HoldersSeen) -> HoldersSeen {
        use HoldersSeen::*;
        match (self, other) {
            (SomeRunning, _) | (_, SomeRunning) => SomeRunning,
            (Unknown, _) | (_, Unknown) => Unknown,
            (AllAway, AllAway) => AllAway,
        }
    }
}

/// A protocol's word as it returns `Pending`: this thread waits for worker `holder`.
#[inline]
pub fn note_holder(holder: usize) {
    let running = is_running(holder);
    SEEN.with(|s| {
        let next = match (s.get(), running) {
            (_, true) | (HoldersSeen::SomeRunning, _) => HoldersSeen::SomeRunning,
            (HoldersSeen::Unknown | HoldersSeen::AllAway, false) => HoldersSeen::AllAway,
        };
        s.set(next);
    });
}

/// What the polls on this thread noted since the last call, and forgets it.
#[inline]
pub fn take_holders_seen() -> HoldersSeen {
    SEEN.with(|s| s.replace(HoldersSeen::Unknown))
}

/// Leaves `seen` for the next [`take_holders_seen`] (an executor that polls several waiters
/// between two steps combines their notes first).
#[inline]
pub fn set_holders_seen(seen: HoldersSeen) {
    SEEN.with(|s| s.set(seen));
}

#[cfg(test)]
mod tests {
    use super::*;

    // Worker ids near the top of the table, one set per test (the tests run in parallel): no
    // test run has that many workers.
    const A: usize = TRACKED_WORKERS - 1;
    const B: usize = TRACKED_WORKERS - 2;
    const C: usize = TRACKED_WORKERS - 3;
    const D: usize = TRACKED_WORKERS - 4;
    const E: usize = TRACKED_WORKERS - 5;

    #[test]
    fn a_thread_marks_its_workers_away_only_while_away() {
        std::thread::spawn(|| {
            let _driving = drive_workers(WorkerIds::one(A));
            assert!(is_running(A));
            while_away(|| assert!(!is_running(A), "away inside"));
            assert!(is_running(A), "running again after");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_that_drives_nothing_marks_nothing() {
        std::thread::spawn(|| {
            while_away(|| assert!(is_running(B)));
        })
        .join()
        .unwrap();
        assert!(is_running(usize::MAX), "untracked ids run");
    }

    #[test]
    fn strided_ids_are_the_coroutine_slots() {
        let ids = WorkerIds::strided(1, 4, 3);
        assert_eq!(ids.ids().collect::<Vec<_>>(), vec![1, 5, 9]);
        let past = WorkerIds::strided(TRACKED_WORKERS - 1, 2, 2);
        assert_eq!(past.ids().collect::<Vec<_>>(), vec![TRACKED_WORKERS - 1]);
    }

    #[test]
    fn marks_from_two_threads_count() {
        let first = Away::mark(WorkerIds::one(C));
        let second = Away::mark(WorkerIds::one(C));
        drop(first);
        assert!(!is_running(C), "the other thread still has it away");
        drop(second);
        assert!(is_running(C));
    }

    #[test]
    fn every_holder_must_be_away_for_the_waiter_to_see_it() {
        let _ = take_holders_seen();
        assert_eq!(take_holders_seen(), HoldersSeen::Unknown);
        let away = Away::mark(WorkerIds::one(D));
        note_holder(D);
        assert_eq!(take_holders_seen(), HoldersSeen::AllAway);
        assert_eq!(take_holders_seen(), HoldersSeen::Unknown, "taken once");
        note_holder(D);
        note_holder(E);
        note_holder(D);
        assert_eq!(take_holders_seen(), HoldersSeen::SomeRunning);
        drop(away);
        note_holder(D);
        assert_eq!(take_holders_seen(), HoldersSeen::SomeRunning);
    }

    #[test]
    fn together_all_away_needs_every_waiter_away() {
        use HoldersSeen::*;
        assert_eq!(AllAway.together(AllAway), AllAway);
        assert_eq!(AllAway.together(Unknown), Unknown);
        assert_eq!(Unknown.together(AllAway), Unknown);
        assert_eq!(AllAway.together(SomeRunning), SomeRunning);
        assert_eq!(Unknown.together(SomeRunning), SomeRunning);
        assert_eq!(Unknown.together(Unknown), Unknown);
    }
}
