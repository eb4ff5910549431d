//! MQL: the MOCC queuing lock (MOCC section 4), a fair, cancellable, queue-based reader/writer lock.
//!
//! # Algorithm
//!
//! Requesters that cannot be granted at once join a FIFO queue of *queue nodes* (qnodes), one per
//! worker, preallocated in [`MqlNodes`] and named by a dense 20-bit id, so the lock word and the
//! nodes hold ids, never pointers, and a node never moves while linked. Unlike MCS/MQL, where a
//! holder keeps its node in the queue until release, a node here leaves the queue when it is
//! *granted*: a MOCC worker holds many locks but has one node, and [`RecordLock::unlock`] names no
//! node. So the queue holds only waiters, and the lock word counts the holders:
//! `[busy | writer | readers | head | tail]`.
//!
//! Granting is FIFO: a reader behind a waiting writer waits even if readers hold the lock
//! (fairness, MOCC 4.2); a grant takes the head and, if it is a reader, every reader after it up
//! to the next writer (reader batching). A waiter watches only its own node word (local spinning,
//! turned into polling): the granter unlinks the node and then stores `Granted` into it.
//!
//! The three modes of MOCC's Table 1 map onto the poll-based engine like this:
//! - **try**: [`MqlLock::try_lock`] takes the lock only if it is free for the mode *and* nobody is
//!   queued; it never links a node (MQL links and immediately unlinks; the outcome is the same).
//! - **asynchronous**: [`MqlLock::request`] links the worker's node and returns; [`MqlLock::poll`]
//!   checks the node; [`MqlLock::cancel`] unlinks it (or reports that the grant won the race).
//! - **unconditional**: an asynchronous request polled until granted. Operations never wait for a
//!   grant: the protocol returns `Pending` and polls again when the executor resumes it.
//!
//! # The handshakes
//!
//! Links are *backward*: a node's word holds its predecessor (`prev`), written by its owner before
//! the doorway publishes the node, so the chain `tail -> prev -> ... -> head` is complete the
//! moment a node is visible, and no forward link has to be filled in later (MCS's window between
//! swapping the tail and linking `pred.next`, which a granter must wait out, does not exist). The
//! successor of a node is found by walking back from the tail (at most one step per worker).
//!
//! - **Doorway** (request, lock-free): one CAS on the lock word. If nobody waits and the holders
//!   admit the mode, it takes the lock (`readers + 1` or `writer`); otherwise it swaps in the
//!   requester's id as `tail` (and `head` if the queue was empty), its node already holding the
//!   old tail as `prev`. This is MCS's XCHG on the tail as a CAS, because the tail shares the word
//!   with the holder counts: the arrival sees atomically whether it may pass the queue. A doorway
//!   never waits for `busy`: appending changes only `tail` and a node no one else reads yet.
//! - **Handoff** (release, never waits): the releaser's CAS drops its hold; if waiters remain it
//!   sets `busy` in the same CAS and grants (below). If `busy` is already set, it only drops its
//!   hold and leaves: the `busy` holder ends with a CAS that clears `busy` *only if the word is
//!   unchanged since it last evaluated the head*, so it sees the release and grants on its behalf
//!   (combining; nobody spins on `busy` to grant).
//! - **Grant** (by the `busy` holder): while the head is admitted by the holders, one CAS adds the
//!   head to the holders and moves `head` to its successor (or empties the queue), then stores
//!   `Granted` into the head's node; a reader head continues with the next reader (batching).
//! - **Cancel**: takes `busy` (a CAS that sets it when clear; the only operation that waits for
//!   it), then either finds its node `Granted` (the grant won: the caller holds the lock) or
//!   unlinks it: one CAS moves `head`/`tail` past it if it is an end, and the successor's `prev`
//!   is pointed at its predecessor. It then grants (a cancelled head may have blocked compatible
//!   waiters) and clears `busy` as above.
//!
//! # Why cancel still takes a latch (deviation from the paper)
//!
//! The paper's MQL lets a leaving node negotiate with both neighbours by CAS on
//! `[busy, stype, status, next]` composites and `SuccessorLeaving` sentinels (the full algorithm is
//! in its extended version). Here `busy` serialises every *edit of existing links* (grant and
//! cancel); appends (the common path) and releases never wait for it, and a grant is made by
//! whoever holds `busy` on behalf of everyone who released meanwhile. Only cancel (a read request
//! polled too long, or an abort with a request outstanding) waits for `busy`, and that wait is
//! bounded by one grant or unlink pass of another worker (a few loads and CASes; it yields to the
//! scheduler while it waits, so a preempted holder gets the core back). Making cancel lock-free too
//! would need a node to stay linked after its owner returned from `cancel`, which a single
//! per-worker node cannot allow.
//!
//! # Invariants
//!
//! - `writer` implies `readers == 0`.
//! - `head == 0` iff `tail == 0`; walking `prev` from `tail` reaches `head`, visiting exactly the
//!   waiting nodes, each in state `Waiting`, newest first. Every `prev` is exact except the head's
//!   (it may name a node granted since; nobody reads it).
//! - Only the `busy` holder changes `head`, a linked node's word, or grants; the lock word changes
//!   only by CAS, so a `busy` holder's decision is committed only if nothing changed under it.
//! - When `busy` is clear and the queue is non-empty, the head is not admitted by the holders
//!   (otherwise the last change would have granted it): no grant is ever lost.
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
    /// What to do between two attempts at a busy word; `attempt` counts from 0.
    fn relax(attempt: u32);
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
    fn relax(attempt: u32) {
        // With more workers than cores the `busy` holder may be preempted: give it the core.
        if attempt % 16 == 15 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

const ID_BITS: u32 = 20;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
/// Largest node id (ids start at 1; 0 means "none").
pub const MAX_NODES: usize = (1 << ID_BITS) - 1;

/// The lock word.
///
/// ```text
///  63     62       61 ........ 40  39 ....... 20  19 ........ 0
/// +------+--------+--------------+--------------+--------------+
/// | busy | writer |   readers    |  head (id)   |  tail (id)   |
/// +------+--------+--------------+--------------+--------------+
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqlWord(u64);

impl MqlWord {
    const BUSY: u64 = 1 << 63;
    const WRITER: u64 = 1 << 62;
    const READER_SHIFT: u32 = 40;
    const READER_ONE: u64 = 1 << Self::READER_SHIFT;
    const READER_MASK: u64 = ((1 << 22) - 1) << Self::READER_SHIFT;

    /// Whether a worker is editing the queue's links (granting or cancelling).
    pub fn busy(self) -> bool {
        self.0 & Self::BUSY != 0
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
    fn with_busy(self, busy: bool) -> Self {
        if busy {
            MqlWord(self.0 | Self::BUSY)
        } else {
            MqlWord(self.0 & !Self::BUSY)
        }
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
///  63 .. 62   61      60 ........................ 20  19 ........ 0
/// +---------+------+--------------------------------+--------------+
/// |  state  | mode |             unused             |  prev (id)   |
/// +---------+------+--------------------------------+--------------+
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
        NodeWord(((NodeState::Waiting as u64) << 62) | m | u64::from(prev))
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
        (self.0 & ID_MASK) as u32
    }
    fn with_prev(self, id: u32) -> Self {
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
        // Relaxed: callers read either their own node, or a linked node while holding `busy`,
        // whose Acquire (and the lock word's release sequence) orders the read after the owner's
        // write before its doorway CAS and after every earlier `busy` holder's edits.
        NodeWord(self.nodes[id as usize].load(Ordering::Relaxed))
    }
    fn set(&self, id: u32, n: NodeWord) {
        // Relaxed: the owner's write before its doorway (published by the doorway's Release), or
        // a `busy` holder's edit of a linked node (published by the CAS that clears `busy`).
        self.nodes[id as usize].store(n.0, Ordering::Relaxed);
    }
    /// The waiting node whose predecessor is `id`, found by walking back from `tail`; 0 if `id`
    /// is the tail. Caller holds `busy` and `id` is linked, so the chain is stable except for
    /// appends beyond `tail`, which the walk does not see (and the caller's CAS then fails).
    fn successor(&self, id: u32, tail: u32) -> u32 {
        let mut c = tail;
        if c == id {
            return 0;
        }
        for _ in 0..self.nodes.len() {
            let p = self.get(c).prev();
            if p == id {
                return c;
            }
            debug_assert!(p != 0, "node {id} is not linked behind tail {tail}");
            c = p;
        }
        unreachable!("MQL queue has a cycle: node {id} not found from tail {tail}");
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

    fn snapshot(&self) -> MqlWord {
        // Acquire: every change to the lock word is a CAS with Release (or AcqRel), so reading
        // any value of it synchronises with the doorways that linked the nodes it names and with
        // the releases that dropped the holds it no longer counts.
        MqlWord(self.word.load(Ordering::Acquire))
    }

    fn cas(&self, old: MqlWord, new: MqlWord) -> Result<MqlWord, MqlWord> {
        // AcqRel on success: Release publishes our node edits and the end of a critical section
        // (release) to whoever reads this value next; Acquire orders our following edits after
        // everything the value we replace carries. Acquire on failure: the caller re-plans from
        // the returned value.
        self.word
            .cas(old.0, new.0, Ordering::AcqRel, Ordering::Acquire)
            .map(MqlWord)
            .map_err(MqlWord)
    }

    /// Holding `busy` (set in `w`, the word as last read): grants waiters from the head while the
    /// holders admit them, then clears `busy` with a CAS that succeeds only if nothing changed
    /// since the last evaluation. A release or append that lands meanwhile fails that CAS and is
    /// evaluated in the next round, so nothing it makes grantable is left waiting.
    fn grant_and_unbusy(&self, nodes: &MqlNodes<A>, mut w: MqlWord) {
        loop {
            debug_assert!(w.busy());
            let h = w.head();
            if h != 0 {
                let mode = nodes.get(h).mode();
                if w.admits(mode) {
                    let next = nodes.successor(h, w.tail());
                    let mut g = w.granted(mode).with_head(next);
                    if next == 0 {
                        g = g.with_tail(0);
                    }
                    match self.cas(w, g) {
                        Ok(_) => {
                            // Release: the waiter's Acquire in `poll` then sees the previous
                            // holder's critical section (ours acquired it through the lock word).
                            nodes.nodes[h as usize].store(NodeWord::GRANTED.0, Ordering::Release);
                            w = g;
                        }
                        Err(now) => w = now,
                    }
                    continue;
                }
            }
            match self.cas(w, w.with_busy(false)) {
                Ok(_) => return,
                Err(now) => w = now,
            }
        }
    }

    /// try mode: takes the lock only if the holders admit `mode` and nobody waits.
    pub fn try_lock(&self, mode: LockMode) -> bool {
        let mut w = self.snapshot();
        loop {
            // `busy` does not matter: with an empty queue a `busy` holder has nothing to grant,
            // and its closing CAS notices our change.
            if w.head() != 0 || !w.admits(mode) {
                return false;
            }
            match self.cas(w, w.granted(mode)) {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
    }

    /// Asynchronous mode: grants at once or links node `id` at the tail (the doorway).
    pub fn request(&self, nodes: &MqlNodes<A>, id: u32, mode: LockMode) -> Request {
        debug_assert!(id != 0 && nodes.get(id).state() == NodeState::Free);
        let mut w = self.snapshot();
        let mut written = false;
        loop {
            if w.head() == 0 && w.admits(mode) {
                match self.cas(w, w.granted(mode)) {
                    Ok(_) => {
                        if written {
                            // An earlier attempt filled the node; it was never published.
                            nodes.set(id, NodeWord::FREE);
                        }
                        return Request::Granted;
                    }
                    Err(now) => w = now,
                }
                continue;
            }
            // Not linked yet: nobody else reads the node until the CAS below publishes it.
            nodes.set(id, NodeWord::waiting(mode, w.tail()));
            written = true;
            let mut linked = w.with_tail(id);
            if w.tail() == 0 {
                linked = linked.with_head(id);
            }
            match self.cas(w, linked) {
                Ok(_) => return Request::Queued(id),
                Err(now) => w = now,
            }
        }
    }

    /// Whether node `id`'s request was granted; frees the node if so.
    pub fn poll(&self, nodes: &MqlNodes<A>, id: u32) -> bool {
        // Acquire: pairs with the Release store of GRANTED in `grant_and_unbusy`.
        let n = NodeWord(nodes.nodes[id as usize].load(Ordering::Acquire));
        if n.state() != NodeState::Granted {
            return false;
        }
        // Relaxed: the node is unlinked and the granter is done with it; only its owner (us)
        // touches it until the next doorway publishes it.
        nodes.nodes[id as usize].store(NodeWord::FREE.0, Ordering::Relaxed);
        true
    }

    /// Takes `busy` (waiting while another worker holds it); returns the word with `busy` set.
    fn take_busy(&self) -> MqlWord {
        let mut w = self.snapshot();
        let mut attempt = 0;
        loop {
            if !w.busy() {
                let b = w.with_busy(true);
                match self.cas(w, b) {
                    Ok(_) => return b,
                    Err(now) => w = now,
                }
                continue;
            }
            A::relax(attempt);
            attempt = attempt.wrapping_add(1);
            w = self.snapshot();
        }
    }

    /// Withdraws node `id`'s request. Returns true if the grant came first (the lock is held).
    pub fn cancel(&self, nodes: &MqlNodes<A>, id: u32) -> bool {
        let mut w = self.take_busy();
        let n = nodes.get(id);
        if n.state() == NodeState::Granted {
            nodes.set(id, NodeWord::FREE);
            self.grant_and_unbusy(nodes, w);
            return true;
        }
        debug_assert_eq!(n.state(), NodeState::Waiting);
        // The head's `prev` is stale; any other node's names its live predecessor.
        let unlinked = loop {
            let prev = if w.head() == id { 0 } else { n.prev() };
            let next = nodes.successor(id, w.tail());
            let mut u = w;
            if prev == 0 {
                u = u.with_head(next);
            }
            if next == 0 {
                u = u.with_tail(prev);
            }
            match self.cas(w, u) {
                Ok(_) => {
                    if next != 0 {
                        nodes.set(next, nodes.get(next).with_prev(prev));
                    }
                    break u;
                }
                // An append (new tail, perhaps our new successor) or a hold changed: re-plan.
                Err(now) => w = now,
            }
        };
        nodes.set(id, NodeWord::FREE);
        // A cancelled head may have been the only thing blocking compatible waiters behind it.
        self.grant_and_unbusy(nodes, unlinked);
        false
    }

    /// Releases a lock held in `mode`, granting the waiters it unblocks (or leaving that to the
    /// current `busy` holder).
    pub fn unlock(&self, nodes: &MqlNodes<A>, mode: LockMode) {
        let mut w = self.snapshot();
        loop {
            let r = w.released(mode);
            // Take `busy` with the release only if someone waits and nobody else holds it.
            let take = r.head() != 0 && !r.busy();
            let r = r.with_busy(r.busy() || take);
            match self.cas(w, r) {
                Ok(_) => {
                    if take {
                        self.grant_and_unbusy(nodes, r);
                    }
                    return;
                }
                Err(now) => w = now,
            }
        }
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
