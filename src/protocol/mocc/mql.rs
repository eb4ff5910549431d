//! MQL: the MOCC queuing lock (MOCC section 4), a fair, cancellable, queue-based reader/writer lock.
//!
//! # Algorithm
//!
//! Requesters that cannot be granted at once join a FIFO queue of *queue nodes* (qnodes),
//! preallocated in [`MqlNodes`] ([`NODES_PER_WORKER`] per worker) and named by a dense 20-bit id,
//! so the lock word and the nodes hold ids, never pointers, and a node never moves while linked.
//! Unlike MCS/MQL, where a holder keeps its node in the queue until release, a node here leaves
//! the queue when it is *granted*: a MOCC worker holds many locks but has one request outstanding,
//! and [`RecordLock::unlock`] names no node. So the queue holds only waiters, and the lock word
//! counts the holders: `[busy | leaving | writer | readers | head | tail]`.
//!
//! Granting is FIFO: a reader behind a waiting writer waits even if readers hold the lock
//! (fairness, MOCC 4.2); a grant takes the head and, if it is a reader, every reader after it up
//! to the next writer (reader batching). A waiter watches only its own node word (local spinning,
//! turned into polling): the granter unlinks the node and then CASes `Granted` into it.
//!
//! The three modes of MOCC's Table 1 map onto the poll-based engine like this:
//! - **try**: [`MqlLock::try_lock`] takes the lock only if it is free for the mode *and* nobody is
//!   queued; it never links a node (MQL links and immediately unlinks; the outcome is the same).
//! - **asynchronous**: [`MqlLock::request`] links a node of the worker and returns;
//!   [`MqlLock::poll`] checks the node; [`MqlLock::cancel`] withdraws it (or reports that the
//!   grant won the race).
//! - **unconditional**: an asynchronous request polled until granted. Operations never wait for a
//!   grant: the protocol returns `Pending` and polls again when the executor resumes it.
//!
//! # The handshakes
//!
//! Links are *backward*: a node's word holds its predecessor (`prev`), written by its owner before
//! the doorway publishes the node, so the chain `tail -> prev -> ... -> head` is complete the
//! moment a node is visible, and no forward link has to be filled in later (MCS's window between
//! swapping the tail and linking `pred.next`, which a granter must wait out, does not exist). The
//! successor of a node is found by walking back from the tail (at most one step per node).
//!
//! The `busy` bit names the one worker allowed to edit existing links (move `head`, unlink a node,
//! grant). It is a *combining* bit, not a latch: nobody waits for it (one exception below).
//! Whoever holds it ends with a CAS that clears it *only if the lock word is unchanged since it
//! last evaluated the queue*; anyone who finds it set records their change in the lock word and
//! leaves, and the holder, its closing CAS failing, handles that change on their behalf.
//!
//! - **Doorway** (request): one CAS on the lock word. If nobody waits and the holders admit the
//!   mode, it takes the lock (`readers + 1` or `writer`); otherwise it swaps in the requester's id
//!   as `tail` (and `head` if the queue was empty), its node already holding the old tail as
//!   `prev`. This is MCS's XCHG on the tail as a CAS, because the tail shares the word with the
//!   holder counts: the arrival sees atomically whether it may pass the queue. It ignores `busy`.
//! - **Handoff** (release): the releaser's CAS drops its hold; if waiters remain and `busy` is
//!   clear it sets `busy` in the same CAS and grants; if `busy` is set it only drops its hold.
//! - **Grant** (by the `busy` holder): while the head is admitted by the holders, one CAS adds the
//!   head to the holders and moves `head` to its successor, then a CAS on the head's node word
//!   turns `Waiting` into `Granted`; a reader head continues with the next reader (batching). If
//!   that node CAS finds `Leaving` instead, the cancel won: the holder frees the node and releases
//!   the hold it had just counted for it.
//! - **Cancel** (lock-free when the worker's other node is free): the owner CASes its node from
//!   `Waiting` to `Leaving` (if it finds `Granted`, the grant won and the caller holds the lock).
//!   The node is now *abandoned*: it may stay linked after `cancel` returns, and the worker's next
//!   request uses its other node. To get it unlinked, the owner either takes `busy` itself (if
//!   clear) or sets `leaving` in the lock word (if set), which fails the holder's closing CAS; the
//!   holder clears `leaving`, then unlinks every `Leaving` node (one CAS moves `head`/`tail` past
//!   it if it is an end, a CAS on the successor's node word points it at the predecessor) and
//!   frees it. A leaving node and a concurrent grant race on one CAS of the node word: exactly one
//!   of `Leaving` and `Granted` lands.
//!
//! The one wait: a cancel whose worker's other node is itself still abandoned (linked in some
//! queue whose `busy` holder has not got to it) cannot abandon a second node, so it takes `busy`
//! (waiting, bounded by one grant/unlink pass of another worker; it yields to the OS scheduler
//! while it waits so a preempted holder gets the core back) and unlinks its node before returning.
//! This needs two cancels in a row racing a `busy` pass; it is the only spin in the lock.
//!
//! # Deviation from the paper
//!
//! The paper's MQL (its extended version has the full algorithm) lets a leaving node negotiate
//! with *both* neighbours by CAS on `[busy, stype, status, next]` composites and
//! `SuccessorLeaving` sentinels, so several unlinks proceed in parallel. Here only the `busy`
//! holder edits existing links, one pass at a time; everyone else's changes (appends, releases,
//! abandonments) are single CASes that the holder picks up. Grants and cancels thus stay
//! serialised per lock, but no operation ever waits for another except the double-cancel case
//! above, and the proof obligation is much smaller.
//!
//! # Invariants
//!
//! - `writer` implies `readers == 0`; `leaving` implies `busy`.
//! - `head == 0` iff `tail == 0`; walking `prev` from `tail` reaches `head`, visiting exactly the
//!   linked nodes, newest first, each `Waiting` or `Leaving`. Every `prev` is exact except the
//!   head's (it may name a node granted since; nobody reads it).
//! - Only the `busy` holder moves `head`, unlinks, grants or edits a linked node's `prev`; an
//!   owner changes its linked node only from `Waiting` to `Leaving`. Both edit node words by CAS.
//! - The lock word changes only by CAS, so a `busy` holder's decision is committed only if nothing
//!   changed under it, and `busy` is cleared only after a pass that saw the current word.
//! - When `busy` is clear and the queue's head is `Waiting`, the holders do not admit it (no grant
//!   is lost); when `busy` is clear, every linked `Leaving` node's owner is still inside `cancel`
//!   (every abandonment announced to a `busy` holder is unlinked before `busy` clears).
//! - A `Free` or `Granted` node is linked nowhere; only its owner touches it. A worker requests
//!   only with a `Free` node, so no node is reused while linked.
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
///  63     62        61       60 ........ 40  39 ....... 20  19 ........ 0
/// +------+---------+--------+--------------+--------------+--------------+
/// | busy | leaving | writer |   readers    |  head (id)   |  tail (id)   |
/// +------+---------+--------+--------------+--------------+--------------+
/// ```
///
/// `leaving` is set only while `busy` is, by a canceller that left its node for the `busy` holder
/// to unlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqlWord(u64);

impl MqlWord {
    const BUSY: u64 = 1 << 63;
    const LEAVING: u64 = 1 << 62;
    const WRITER: u64 = 1 << 61;
    const READER_SHIFT: u32 = 40;
    const READER_ONE: u64 = 1 << Self::READER_SHIFT;
    const READER_MASK: u64 = ((1 << 21) - 1) << Self::READER_SHIFT;

    /// Whether a worker is editing the queue's links (granting or unlinking).
    pub fn busy(self) -> bool {
        self.0 & Self::BUSY != 0
    }
    /// Whether an abandoned node waits to be unlinked by the `busy` holder.
    pub fn leaving(self) -> bool {
        self.0 & Self::LEAVING != 0
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
    fn with_leaving(self, leaving: bool) -> Self {
        if leaving {
            MqlWord(self.0 | Self::LEAVING)
        } else {
            MqlWord(self.0 & !Self::LEAVING)
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
    /// Not in any queue; its owner may link it.
    Free = 0,
    /// Linked, waiting for a grant.
    Waiting = 1,
    /// Unlinked and granted; its owner frees it when it sees the grant.
    Granted = 2,
    /// Abandoned by a cancel while linked; the `busy` holder unlinks and frees it.
    Leaving = 3,
}

/// A queue node word.
///
/// ```text
///  63 .. 62   61      60 ........................ 20  19 ........ 0
/// +---------+------+--------------------------------+--------------+
/// |  state  | mode |             unused             |  prev (id)   |
/// +---------+------+--------------------------------+--------------+
/// ```
///
/// While a node is linked two parties change its word, so both use CAS: its owner (`Waiting` to
/// `Leaving`) and the `busy` holder (`prev`, or `Waiting` to `Granted`). Whichever CAS lands
/// first decides between a cancel and a grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NodeWord(u64);

impl NodeWord {
    const FREE: NodeWord = NodeWord(0);
    const GRANTED: NodeWord = NodeWord((NodeState::Granted as u64) << 62);
    const STATE_MASK: u64 = 3 << 62;
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
            2 => NodeState::Granted,
            _ => NodeState::Leaving,
        }
    }
    fn leaving(self) -> Self {
        NodeWord((self.0 & !Self::STATE_MASK) | ((NodeState::Leaving as u64) << 62))
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

/// Queue nodes per worker: one for the outstanding request, and one spare so that a cancel can
/// leave its node for the `busy` holder to unlink instead of waiting for `busy`.
pub const NODES_PER_WORKER: usize = 2;

/// The queue nodes of every worker: node ids `2w + 1` and `2w + 2` belong to worker `w`.
pub struct MqlNodes<A = AtomicU64> {
    nodes: Box<[A]>,
}

impl<A: Word> MqlNodes<A> {
    /// [`NODES_PER_WORKER`] nodes per worker.
    pub fn new(workers: usize) -> Self {
        let n = workers * NODES_PER_WORKER;
        assert!(n <= MAX_NODES, "at most {MAX_NODES} MQL nodes");
        MqlNodes {
            nodes: (0..=n).map(|_| A::default()).collect(),
        }
    }
    fn get(&self, id: u32) -> NodeWord {
        // Acquire: pairs with the Release of whoever last changed the node while it was shared
        // (a `busy` holder's `Free`, an owner's `Leaving`); a linked node's link edits are
        // also ordered by the lock word's release sequence (see `Mql::snapshot`).
        NodeWord(self.nodes[id as usize].load(Ordering::Acquire))
    }
    fn set(&self, id: u32, n: NodeWord) {
        // Release: used for nodes nobody else changes concurrently (the owner's own node before
        // its doorway, which publishes it; a node a `busy` holder frees, whose owner picks it
        // with an Acquire in `free_node`).
        self.nodes[id as usize].store(n.0, Ordering::Release);
    }
    fn cas(&self, id: u32, old: NodeWord, new: NodeWord) -> Result<NodeWord, NodeWord> {
        // AcqRel: the owner's `Leaving` and the `busy` holder's edits of a linked node race;
        // each side acquires what the other published with its node word.
        self.nodes[id as usize]
            .cas(old.0, new.0, Ordering::AcqRel, Ordering::Acquire)
            .map(NodeWord)
            .map_err(NodeWord)
    }
    /// A free node of `worker` for its next request.
    pub fn free_node(&self, worker: usize) -> u32 {
        let first = (worker * NODES_PER_WORKER + 1) as u32;
        // At most one node of a worker is abandoned at a time (`cancel` abandons only if the
        // other is free), so one is free whenever the worker has no request outstanding.
        (first..first + NODES_PER_WORKER as u32)
            .find(|&id| self.get(id).state() == NodeState::Free)
            .expect("a worker with a request outstanding requested again")
    }
    /// The other node of the worker owning `id`.
    fn sibling(id: u32) -> u32 {
        if id % 2 == 1 { id + 1 } else { id - 1 }
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
    /// Points linked node `id`'s `prev` at `prev`, keeping its state (its owner may be marking
    /// it `Leaving` at the same time).
    fn relink(&self, id: u32, prev: u32) {
        let mut n = self.get(id);
        while let Err(now) = self.cas(id, n, n.with_prev(prev)) {
            n = now;
        }
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
        // Acquire: every change to the lock word is a CAS with Release (AcqRel), so reading any
        // value of it synchronises with the doorways that linked the nodes it names and with
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

    /// Holding `busy` (set in `w`, the word as last read): moves `head`/`tail` past linked node
    /// `id` and points its successor at its predecessor. Returns the word after.
    fn unlink(&self, nodes: &MqlNodes<A>, id: u32, mut w: MqlWord) -> MqlWord {
        // The head's `prev` is stale; any other node's names its live predecessor.
        let prev = if w.head() == id {
            0
        } else {
            nodes.get(id).prev()
        };
        loop {
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
                        nodes.relink(next, prev);
                    }
                    return u;
                }
                // An append (new tail, perhaps our new successor) or a hold changed: re-plan.
                Err(now) => w = now,
            }
        }
    }

    /// Holding `busy`: unlinks and frees every abandoned (`Leaving`) node in the queue.
    fn unlink_abandoned(&self, nodes: &MqlNodes<A>, mut w: MqlWord) -> MqlWord {
        let mut c = w.tail();
        while c != 0 {
            let n = nodes.get(c);
            let before = if c == w.head() { 0 } else { n.prev() };
            if n.state() == NodeState::Leaving {
                w = self.unlink(nodes, c, w);
                nodes.set(c, NodeWord::FREE);
            }
            c = before;
        }
        w
    }

    /// Holding `busy` (set in `w`, the word as last read): unlinks abandoned nodes and grants
    /// waiters from the head while the holders admit them, then clears `busy` with a CAS that
    /// succeeds only if nothing changed since the last evaluation. A release, append or
    /// abandonment that lands meanwhile fails that CAS and is handled in the next round, so
    /// nothing it makes grantable is left waiting and no abandoned node stays linked.
    fn grant_and_unbusy(&self, nodes: &MqlNodes<A>, mut w: MqlWord) {
        loop {
            debug_assert!(w.busy());
            if w.leaving() {
                // Clear the flag before scanning: an abandonment after this CAS sets it again.
                match self.cas(w, w.with_leaving(false)) {
                    Ok(_) => w = self.unlink_abandoned(nodes, w.with_leaving(false)),
                    Err(now) => w = now,
                }
                continue;
            }
            let h = w.head();
            if h != 0 {
                let n = nodes.get(h);
                if n.state() == NodeState::Leaving {
                    w = self.unlink(nodes, h, w);
                    nodes.set(h, NodeWord::FREE);
                    continue;
                }
                let mode = n.mode();
                if w.admits(mode) {
                    let next = nodes.successor(h, w.tail());
                    let mut g = w.granted(mode).with_head(next);
                    if next == 0 {
                        g = g.with_tail(0);
                    }
                    match self.cas(w, g) {
                        Ok(_) => {
                            w = self.hand_over(nodes, h, mode, g);
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

    /// Holding `busy`, after the lock word counted node `h` as a holder and unlinked it: tells
    /// its owner, unless the owner abandoned it first; then the hold is released on its behalf.
    fn hand_over(&self, nodes: &MqlNodes<A>, h: u32, mode: LockMode, mut w: MqlWord) -> MqlWord {
        let mut n = nodes.get(h);
        loop {
            match n.state() {
                NodeState::Waiting => match nodes.cas(h, n, NodeWord::GRANTED) {
                    // The CAS's Release lets the owner's Acquire in `poll` see the previous
                    // holder's critical section (ours acquired it through the lock word).
                    Ok(_) => return w,
                    Err(now) => n = now,
                },
                NodeState::Leaving => {
                    nodes.set(h, NodeWord::FREE);
                    loop {
                        match self.cas(w, w.released(mode)) {
                            Ok(_) => return w.released(mode),
                            Err(now) => w = now,
                        }
                    }
                }
                s => unreachable!("granted node {h} in state {s:?}"),
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

    /// Asynchronous mode: grants at once or links node `id` (free, see
    /// [`MqlNodes::free_node`]) at the tail (the doorway).
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
        if nodes.get(id).state() != NodeState::Granted {
            return false;
        }
        // The node is unlinked and the granter is done with it; only its owner (us) touches it
        // until the next doorway publishes it.
        nodes.set(id, NodeWord::FREE);
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
    ///
    /// If the worker's other node is free, this never waits: it marks the node `Leaving` (a CAS
    /// that a grant's CAS on the same word excludes) and either takes `busy` to unlink it or,
    /// if another worker holds `busy`, sets `leaving` for that worker to unlink it. Otherwise
    /// (its other node is still abandoned in some queue) it waits for `busy` and unlinks now.
    pub fn cancel(&self, nodes: &MqlNodes<A>, id: u32) -> bool {
        if nodes.get(MqlNodes::<A>::sibling(id)).state() != NodeState::Free {
            return self.cancel_now(nodes, id);
        }
        let mut n = nodes.get(id);
        loop {
            match n.state() {
                NodeState::Granted => {
                    nodes.set(id, NodeWord::FREE);
                    return true;
                }
                NodeState::Waiting => match nodes.cas(id, n, n.leaving()) {
                    Ok(_) => break,
                    Err(now) => n = now,
                },
                s => unreachable!("cancelled node {id} in state {s:?}"),
            }
        }
        // Abandoned: from here only a `busy` holder touches the node. Make sure one will.
        let mut w = self.snapshot();
        loop {
            let (next, mine) = if w.busy() {
                // Even if `leaving` is already set, the CAS (then a no-op) orders our
                // `Leaving` before the holder's clearing CAS, which rescans after it.
                (w.with_leaving(true), false)
            } else {
                (w.with_busy(true).with_leaving(true), true)
            };
            match self.cas(w, next) {
                Ok(_) => {
                    if mine {
                        self.grant_and_unbusy(nodes, next);
                    }
                    return false;
                }
                Err(now) => w = now,
            }
        }
    }

    /// Cancel under `busy`, waiting for it: the node is unlinked (or found granted) on return.
    fn cancel_now(&self, nodes: &MqlNodes<A>, id: u32) -> bool {
        let w = self.take_busy();
        let n = nodes.get(id);
        if n.state() == NodeState::Granted {
            nodes.set(id, NodeWord::FREE);
            self.grant_and_unbusy(nodes, w);
            return true;
        }
        debug_assert_eq!(n.state(), NodeState::Waiting);
        let w = self.unlink(nodes, id, w);
        nodes.set(id, NodeWord::FREE);
        // A cancelled head may have been the only thing blocking compatible waiters behind it.
        self.grant_and_unbusy(nodes, w);
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
        Mql::request(self, q, q.free_node(worker), mode)
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
