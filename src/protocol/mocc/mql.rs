//! MQL: the MOCC queuing lock (MOCC section 4), a fair, cancellable, queue-based reader/writer lock.
//!
//! # Algorithm
//!
//! Requesters that cannot be granted at once join a FIFO queue of *queue nodes* (qnodes), one per
//! worker, preallocated in [`MqlNodes`] and named by a dense 20-bit id, so the lock word and the
//! nodes hold ids, never pointers, and a node never moves while linked. As in MQL (and the fair
//! reader/writer MCS lock it builds on), the queue is doubly linked (`prev` and `next`) so that any
//! waiter can leave; the lock word keeps the number of granted readers, whether a writer is
//! granted, and the queue's head and tail. Granting is FIFO: a reader behind a waiting writer waits
//! even if readers hold the lock (fairness, MOCC 4.2); a release grants the head and, if it is a
//! reader, every reader after it up to the next writer (reader batching). A waiter watches only its
//! own node word (local spinning): the granter unlinks the node and then stores `Granted` into it.
//!
//! The three modes of MOCC's Table 1 map onto the poll-based engine like this:
//! - **try**: [`MqlLock::try_lock`] takes the lock only if it is free for the mode *and* nobody is
//!   queued; it never links a node (MQL links and immediately unlinks; the outcome is the same).
//! - **asynchronous**: [`MqlLock::request`] links the worker's node and returns; [`MqlLock::poll`]
//!   checks the node; [`MqlLock::cancel`] unlinks it (or reports that the grant won the race).
//! - **unconditional**: an asynchronous request polled until granted. Operations never spin-wait on
//!   a grant: the protocol returns `Pending` and polls again when the executor resumes it.
//!
//! # Deviation from the paper
//!
//! The paper's MQL changes the queue with lock-free handshakes (an XCHG doorway on `tail`, CAS on
//! `[busy, stype, status, next]` composites, `SuccessorLeaving` sentinels; its extended version
//! has the full algorithm). Here every change to the queue *structure* (link, unlink, grant) is
//! made while holding a one-bit latch in the lock word, a bounded critical section of a few
//! loads and stores; uncontended acquire and release are a single CAS without the latch, and
//! waiting is local to the waiter's node as in MQL. This keeps the properties MOCC relies on
//! (reader/writer modes, FIFO fairness, try/async/cancel, per-worker nodes, local spinning) with a
//! much smaller proof obligation; the lock-free doorway is future work.
//!
//! # Invariants (while the latch is free)
//!
//! - `writer` implies `readers == 0`.
//! - `head == 0` iff `tail == 0`; the nodes from `head` along `next` are exactly the waiting nodes,
//!   in arrival order, each in state `Waiting`, with `prev` the inverse of `next`.
//! - If the queue is non-empty, its head is incompatible with the holders (otherwise the last
//!   change would have granted it).
//! - A node in state `Granted` or `Free` is linked nowhere; only its owner touches it.
//!
//! Every atomic here goes through the [`Word`] trait so the same code runs under the `shuttle`
//! model checker in tests (`shuttle_tests`).

use super::lock::{LockMode, RecordLock, Request};
use std::sync::atomic::{AtomicU64, Ordering};

/// A 64-bit atomic word: `std`'s in production, `shuttle`'s under the model checker.
pub trait Word: Default + Send + Sync {
    /// Atomic load.
    fn load(&self, o: Ordering) -> u64;
    /// Atomic store.
    fn store(&self, v: u64, o: Ordering);
    /// Atomic compare-and-exchange; `Ok` on success.
    fn cas(&self, old: u64, new: u64, ok: Ordering, err: Ordering) -> Result<u64, u64>;
    /// What to do between two attempts at a busy latch.
    fn relax();
}

impl Word for AtomicU64 {
    fn load(&self, o: Ordering) -> u64 {
        AtomicU64::load(self, o)
    }
    fn store(&self, v: u64, o: Ordering) {
        AtomicU64::store(self, v, o);
    }
    fn cas(&self, old: u64, new: u64, ok: Ordering, err: Ordering) -> Result<u64, u64> {
        self.compare_exchange(old, new, ok, err)
    }
    fn relax() {
        std::hint::spin_loop();
    }
}

const ID_BITS: u32 = 20;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
/// Largest node id (ids start at 1; 0 means "none").
pub const MAX_NODES: usize = (1 << ID_BITS) - 1;

/// The lock word.
///
/// ```text
///  63      62       61 ........ 40  39 ....... 20  19 ........ 0
/// +-------+--------+--------------+--------------+--------------+
/// | latch | writer |   readers    |  head (id)   |  tail (id)   |
/// +-------+--------+--------------+--------------+--------------+
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqlWord(u64);

impl MqlWord {
    const LATCH: u64 = 1 << 63;
    const WRITER: u64 = 1 << 62;
    const READER_SHIFT: u32 = 40;
    const READER_ONE: u64 = 1 << Self::READER_SHIFT;
    const READER_MASK: u64 = ((1 << 22) - 1) << Self::READER_SHIFT;

    /// Whether a structural change is in progress.
    pub fn latched(self) -> bool {
        self.0 & Self::LATCH != 0
    }
    /// Whether a writer holds the lock.
    pub fn writer(self) -> bool {
        self.0 & Self::WRITER != 0
    }
    /// Number of granted readers.
    pub fn readers(self) -> u64 {
        (self.0 & Self::READER_MASK) >> Self::READER_SHIFT
    }
    /// First waiting node (0: none).
    pub fn head(self) -> u32 {
        ((self.0 >> ID_BITS) & ID_MASK) as u32
    }
    /// Last waiting node (0: none).
    pub fn tail(self) -> u32 {
        (self.0 & ID_MASK) as u32
    }
    fn with_head(self, id: u32) -> Self {
        MqlWord((self.0 & !(ID_MASK << ID_BITS)) | (u64::from(id) << ID_BITS))
    }
    fn with_tail(self, id: u32) -> Self {
        MqlWord((self.0 & !ID_MASK) | u64::from(id))
    }
    /// Whether the holders allow `mode` (ignoring the queue).
    fn admits(self, mode: LockMode) -> bool {
        match mode {
            LockMode::Read => !self.writer(),
            LockMode::Write => !self.writer() && self.readers() == 0,
        }
    }
    fn granted(self, mode: LockMode) -> Self {
        match mode {
            LockMode::Read => MqlWord(self.0 + Self::READER_ONE),
            LockMode::Write => MqlWord(self.0 | Self::WRITER),
        }
    }
    fn released(self, mode: LockMode) -> Self {
        match mode {
            LockMode::Read => {
                debug_assert!(self.readers() > 0);
                MqlWord(self.0 - Self::READER_ONE)
            }
            LockMode::Write => {
                debug_assert!(self.writer());
                MqlWord(self.0 & !Self::WRITER)
            }
        }
    }
}

/// A queue node's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeState {
    Free = 0,
    Waiting = 1,
    Granted = 2,
}

/// A queue node word.
///
/// ```text
///  63 .. 62   61      60 ........ 40  39 ....... 20  19 ........ 0
/// +---------+------+----------------+--------------+--------------+
/// |  state  | mode |     unused     |  prev (id)   |  next (id)   |
/// +---------+------+----------------+--------------+--------------+
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NodeWord(u64);

impl NodeWord {
    const FREE: NodeWord = NodeWord(0);
    const GRANTED: NodeWord = NodeWord((NodeState::Granted as u64) << 62);
    const WRITE: u64 = 1 << 61;

    fn waiting(mode: LockMode, prev: u32) -> Self {
        let m = if mode == LockMode::Write {
            Self::WRITE
        } else {
            0
        };
        NodeWord(((NodeState::Waiting as u64) << 62) | m | (u64::from(prev) << ID_BITS))
    }
    fn state(self) -> NodeState {
        match self.0 >> 62 {
            0 => NodeState::Free,
            1 => NodeState::Waiting,
            _ => NodeState::Granted,
        }
    }
    fn mode(self) -> LockMode {
        if self.0 & Self::WRITE != 0 {
            LockMode::Write
        } else {
            LockMode::Read
        }
    }
    fn prev(self) -> u32 {
        ((self.0 >> ID_BITS) & ID_MASK) as u32
    }
    fn next(self) -> u32 {
        (self.0 & ID_MASK) as u32
    }
    fn with_prev(self, id: u32) -> Self {
        NodeWord((self.0 & !(ID_MASK << ID_BITS)) | (u64::from(id) << ID_BITS))
    }
    fn with_next(self, id: u32) -> Self {
        NodeWord((self.0 & !ID_MASK) | u64::from(id))
    }
}

/// The queue nodes of every worker: node id `w + 1` belongs to worker `w`.
pub struct MqlNodes<A = AtomicU64> {
    nodes: Box<[A]>,
}

impl<A: Word> MqlNodes<A> {
    /// One node per worker.
    pub fn new(workers: usize) -> Self {
        assert!(workers <= MAX_NODES, "at most {MAX_NODES} MQL nodes");
        MqlNodes {
            nodes: (0..=workers).map(|_| A::default()).collect(),
        }
    }
    fn get(&self, id: u32) -> NodeWord {
        // Relaxed: called under the latch, whose Acquire orders it after every earlier change.
        NodeWord(self.nodes[id as usize].load(Ordering::Relaxed))
    }
    fn set(&self, id: u32, n: NodeWord) {
        // Relaxed: under the latch, published by the latch's Release.
        self.nodes[id as usize].store(n.0, Ordering::Relaxed);
    }
}

/// An MQL lock word in a record header. Generic over the atomic for the model checker.
#[derive(Debug, Default)]
pub struct Mql<A = AtomicU64> {
    word: A,
}

/// MQL with `std` atomics, as records use it.
pub type MqlLock = Mql<AtomicU64>;

impl<A: Word> Mql<A> {
    /// The current value (tests, diagnostics).
    pub fn load(&self) -> MqlWord {
        // Relaxed: a snapshot for inspection only.
        MqlWord(self.word.load(Ordering::Relaxed))
    }

    /// Takes the latch; returns the word as it was (latch clear).
    fn latch(&self) -> MqlWord {
        loop {
            let w = self.load();
            // Acquire: pairs with `unlatch`'s Release, so every earlier structural change (node
            // words included) is visible inside our critical section.
            if !w.latched()
                && self
                    .word
                    .cas(
                        w.0,
                        w.0 | MqlWord::LATCH,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                return w;
            }
            A::relax();
        }
    }

    fn unlatch(&self, w: MqlWord) {
        debug_assert!(!w.latched());
        // Release: publishes the node and word changes made under the latch.
        self.word.store(w.0, Ordering::Release);
    }

    /// Grants waiting nodes from the head while the holders admit them (under the latch).
    fn grant_waiters(&self, nodes: &MqlNodes<A>, mut w: MqlWord) -> MqlWord {
        loop {
            let h = w.head();
            if h == 0 {
                return w;
            }
            let n = nodes.get(h);
            if !w.admits(n.mode()) {
                return w;
            }
            w = w.granted(n.mode()).with_head(n.next());
            if n.next() == 0 {
                w = w.with_tail(0);
            } else {
                nodes.set(n.next(), nodes.get(n.next()).with_prev(0));
            }
            // Release: the waiter's Acquire in `poll` sees the grant after the unlink, and (via
            // our latch Acquire) after the previous holder's critical section.
            nodes.nodes[h as usize].store(NodeWord::GRANTED.0, Ordering::Release);
            if n.mode() == LockMode::Write {
                return w;
            }
        }
    }

    /// try mode: takes the lock only if the holders admit `mode` and nobody waits.
    pub fn try_lock(&self, mode: LockMode) -> bool {
        loop {
            let w = self.load();
            if w.latched() {
                A::relax();
                continue;
            }
            if w.head() != 0 || !w.admits(mode) {
                return false;
            }
            // Acquire: pairs with the Release of the previous holder's unlock.
            if self
                .word
                .cas(w.0, w.granted(mode).0, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return true;
            }
        }
    }

    /// Asynchronous mode: grants at once or links node `id` at the tail.
    pub fn request(&self, nodes: &MqlNodes<A>, id: u32, mode: LockMode) -> Request {
        debug_assert!(id != 0 && nodes.get(id).state() == NodeState::Free);
        let w = self.latch();
        if w.head() == 0 && w.admits(mode) {
            self.unlatch(w.granted(mode));
            return Request::Granted;
        }
        let tail = w.tail();
        nodes.set(id, NodeWord::waiting(mode, tail));
        let w = if tail == 0 {
            w.with_head(id)
        } else {
            nodes.set(tail, nodes.get(tail).with_next(id));
            w
        };
        self.unlatch(w.with_tail(id));
        Request::Queued(id)
    }

    /// Whether node `id`'s request was granted; frees the node if so.
    pub fn poll(&self, nodes: &MqlNodes<A>, id: u32) -> bool {
        // Acquire: pairs with the Release store of GRANTED in `grant_waiters`.
        let n = NodeWord(nodes.nodes[id as usize].load(Ordering::Acquire));
        if n.state() != NodeState::Granted {
            return false;
        }
        // Relaxed: the node is unlinked; only its owner (us) touches it until it links it again,
        // which happens under the latch.
        nodes.nodes[id as usize].store(NodeWord::FREE.0, Ordering::Relaxed);
        true
    }

    /// Withdraws node `id`'s request. Returns true if the grant came first (the lock is held).
    pub fn cancel(&self, nodes: &MqlNodes<A>, id: u32) -> bool {
        let mut w = self.latch();
        let n = nodes.get(id);
        if n.state() == NodeState::Granted {
            nodes.set(id, NodeWord::FREE);
            self.unlatch(w);
            return true;
        }
        debug_assert_eq!(n.state(), NodeState::Waiting);
        let (prev, next) = (n.prev(), n.next());
        if prev == 0 {
            w = w.with_head(next);
        } else {
            nodes.set(prev, nodes.get(prev).with_next(next));
        }
        if next == 0 {
            w = w.with_tail(prev);
        } else {
            nodes.set(next, nodes.get(next).with_prev(prev));
        }
        nodes.set(id, NodeWord::FREE);
        // A cancelled head may have been the only thing blocking compatible waiters behind it.
        let w = self.grant_waiters(nodes, w);
        self.unlatch(w);
        false
    }

    /// Releases a lock held in `mode`, granting waiters it unblocks.
    pub fn unlock(&self, nodes: &MqlNodes<A>, mode: LockMode) {
        loop {
            let w = self.load();
            if w.latched() {
                A::relax();
                continue;
            }
            if w.head() != 0 {
                break;
            }
            // Release: our critical section happens before the next holder's Acquire.
            if self
                .word
                .cas(
                    w.0,
                    w.released(mode).0,
                    Ordering::Release,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                return;
            }
        }
        let w = self.latch().released(mode);
        let w = self.grant_waiters(nodes, w);
        self.unlatch(w);
    }
}

impl RecordLock for MqlLock {
    type Queue = MqlNodes;
    const NAME: &'static str = "mql";

    fn queue(workers: usize) -> MqlNodes {
        MqlNodes::new(workers)
    }
    fn try_lock(&self, _q: &MqlNodes, mode: LockMode) -> bool {
        Mql::try_lock(self, mode)
    }
    fn request(&self, q: &MqlNodes, worker: usize, mode: LockMode) -> Request {
        Mql::request(self, q, worker as u32 + 1, mode)
    }
    fn poll(&self, q: &MqlNodes, ticket: u32, _mode: LockMode) -> bool {
        Mql::poll(self, q, ticket)
    }
    fn cancel(&self, q: &MqlNodes, ticket: u32) -> bool {
        Mql::cancel(self, q, ticket)
    }
    fn unlock(&self, q: &MqlNodes, mode: LockMode) {
        Mql::unlock(self, q, mode);
    }
}

#[cfg(test)]
#[path = "mql_tests.rs"]
mod tests;
