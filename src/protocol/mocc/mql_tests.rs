//! MQL unit tests (deterministic, one thread) and shuttle model-checking of its races.

use super::*;

fn lock_and_nodes(n: usize) -> (MqlLock, MqlNodes) {
    (MqlLock::default(), MqlNodes::new(n))
}

#[test]
fn try_fails_when_held_and_readers_share() {
    let (l, _q) = lock_and_nodes(2);
    assert!(l.try_lock(LockMode::Read));
    assert!(l.try_lock(LockMode::Read));
    assert!(!l.try_lock(LockMode::Write));
    assert_eq!(l.load().readers(), 2);
}

#[test]
fn grants_in_fifo_order_with_reader_batching() {
    let (l, q) = lock_and_nodes(4);
    assert!(l.try_lock(LockMode::Write));
    assert_eq!(l.request(&q, 1, LockMode::Read), Request::Queued(1));
    assert_eq!(l.request(&q, 2, LockMode::Read), Request::Queued(2));
    assert_eq!(l.request(&q, 3, LockMode::Write), Request::Queued(3));
    assert_eq!(l.request(&q, 4, LockMode::Read), Request::Queued(4));
    assert!(!l.try_lock(LockMode::Read), "try never jumps the queue");
    assert!(!l.poll(&q, 1));
    l.unlock(&q, LockMode::Write);
    assert!(
        l.poll(&q, 1) && l.poll(&q, 2),
        "both readers granted together"
    );
    assert!(
        !l.poll(&q, 3) && !l.poll(&q, 4),
        "reader 4 waits behind writer 3"
    );
    l.unlock(&q, LockMode::Read);
    assert!(!l.poll(&q, 3));
    l.unlock(&q, LockMode::Read);
    assert!(l.poll(&q, 3) && !l.poll(&q, 4));
    l.unlock(&q, LockMode::Write);
    assert!(l.poll(&q, 4));
    l.unlock(&q, LockMode::Read);
    assert_eq!(l.load(), MqlWord(0));
}

#[test]
fn cancel_in_the_middle_keeps_the_queue_linked() {
    let (l, q) = lock_and_nodes(3);
    assert!(l.try_lock(LockMode::Write));
    for id in 1..=3 {
        assert_eq!(l.request(&q, id, LockMode::Write), Request::Queued(id));
    }
    assert!(!l.cancel(&q, 2));
    assert_eq!((l.load().head(), l.load().tail()), (1, 3));
    assert_eq!(q.successor(1, 3), 3);
    assert_eq!(q.get(3).prev(), 1);
    // The freed node can queue again, at the tail.
    assert_eq!(l.request(&q, 2, LockMode::Write), Request::Queued(2));
    assert!(!l.cancel(&q, 3), "cancel the tail's predecessor-of-tail");
    assert_eq!(l.load().tail(), 2);
    l.unlock(&q, LockMode::Write);
    assert!(l.poll(&q, 1));
    l.unlock(&q, LockMode::Write);
    assert!(l.poll(&q, 2));
    l.unlock(&q, LockMode::Write);
    assert_eq!(l.load(), MqlWord(0));
}

#[test]
fn cancelling_a_blocking_writer_grants_the_readers_behind_it() {
    let (l, q) = lock_and_nodes(3);
    assert!(l.try_lock(LockMode::Read));
    assert_eq!(l.request(&q, 1, LockMode::Write), Request::Queued(1));
    assert_eq!(l.request(&q, 2, LockMode::Read), Request::Queued(2));
    assert!(!l.cancel(&q, 1));
    assert!(l.poll(&q, 2), "the reader joins the reading holder");
    assert_eq!(l.load().readers(), 2);
    assert_eq!((l.load().head(), l.load().tail()), (0, 0));
}

#[test]
fn cancel_after_grant_reports_the_lock_held() {
    let (l, q) = lock_and_nodes(1);
    assert!(l.try_lock(LockMode::Write));
    assert_eq!(l.request(&q, 1, LockMode::Write), Request::Queued(1));
    l.unlock(&q, LockMode::Write);
    assert!(
        l.cancel(&q, 1),
        "granted before the cancel: caller holds it"
    );
    assert!(l.load().writer());
    l.unlock(&q, LockMode::Write);
    assert_eq!(l.load(), MqlWord(0));
}

#[test]
fn a_reader_behind_a_waiting_writer_waits_although_readers_hold() {
    let (l, q) = lock_and_nodes(3);
    assert!(l.try_lock(LockMode::Read));
    assert_eq!(l.request(&q, 1, LockMode::Write), Request::Queued(1));
    assert_eq!(l.request(&q, 2, LockMode::Read), Request::Queued(2));
    assert!(!l.try_lock(LockMode::Read), "try does not pass the writer");
    assert!(!l.poll(&q, 2), "the reader does not pass the writer");
    l.unlock(&q, LockMode::Read);
    assert!(l.poll(&q, 1) && !l.poll(&q, 2));
    l.unlock(&q, LockMode::Write);
    assert!(l.poll(&q, 2));
    l.unlock(&q, LockMode::Read);
    assert_eq!(l.load(), MqlWord(0));
}

#[test]
fn a_release_during_a_busy_pass_is_granted_by_the_busy_holder() {
    let (l, q) = lock_and_nodes(2);
    assert!(l.try_lock(LockMode::Write));
    assert_eq!(l.request(&q, 1, LockMode::Write), Request::Queued(1));
    // Worker 2 is (say) cancelling: it holds `busy` when the writer releases.
    let w = l.take_busy();
    l.unlock(&q, LockMode::Write);
    assert!(
        !l.poll(&q, 1),
        "the releaser left the grant to the busy holder"
    );
    assert!(l.load().busy() && !l.load().writer());
    l.grant_and_unbusy(&q, w);
    assert!(
        l.poll(&q, 1),
        "the busy holder's closing CAS saw the release"
    );
    l.unlock(&q, LockMode::Write);
    assert_eq!(l.load(), MqlWord(0));
}

/// Shuttle's atomics behind the same [`Word`] interface.
mod shuttle_tests {
    use super::super::*;
    use shuttle::scheduler::{PctScheduler, RandomScheduler};
    use shuttle::sync::Arc;
    use shuttle::sync::atomic::{AtomicBool, AtomicU64 as ShuttleU64, AtomicUsize};
    use shuttle::{Config, MaxSteps, Runner};

    impl Word for ShuttleU64 {
        fn load(&self, o: Ordering) -> u64 {
            ShuttleU64::load(self, o)
        }
        fn store(&self, v: u64, o: Ordering) {
            ShuttleU64::store(self, v, o);
        }
        fn cas(&self, old: u64, new: u64, ok: Ordering, err: Ordering) -> Result<u64, u64> {
            self.compare_exchange(old, new, ok, err)
        }
        fn relax(_attempt: u32) {
            shuttle::thread::yield_now();
        }
    }

    /// Runs `f` under `random` random schedules and `pct` PCT schedules (depth 3). A schedule that
    /// runs past a step bound fails: a waiter polling forever means a lost grant.
    fn check(f: fn(), random: usize, pct: usize) {
        let config = || {
            let mut c = Config::new();
            c.max_steps = MaxSteps::FailAfter(200_000);
            c
        };
        Runner::new(RandomScheduler::new(random), config()).run(f);
        Runner::new(PctScheduler::new(3, pct), config()).run(f);
    }

    struct Shared {
        lock: Mql<ShuttleU64>,
        nodes: MqlNodes<ShuttleU64>,
        readers: AtomicUsize,
        writers: AtomicUsize,
        /// Per node: its owner has a request outstanding on it (between `request` and the poll or
        /// cancel that ends it). A linked `Waiting` node must have one; an abandoned
        /// (`Leaving`) one may be linked after its owner's cancel returned.
        outstanding: Vec<AtomicBool>,
        /// Per node: its owner is inside `cancel`.
        cancelling: Vec<AtomicBool>,
        /// Sequence numbers for critical-section entry and exit, per node (FIFO checks).
        clock: AtomicUsize,
        entered: Vec<AtomicUsize>,
        exited: Vec<AtomicUsize>,
    }

    impl Shared {
        fn new(workers: u32) -> Arc<Self> {
            let per_node = || (0..=workers).map(|_| AtomicUsize::new(0)).collect();
            Arc::new(Shared {
                lock: Mql::default(),
                nodes: MqlNodes::new(workers as usize),
                readers: AtomicUsize::new(0),
                writers: AtomicUsize::new(0),
                outstanding: (0..=workers as usize * NODES_PER_WORKER)
                    .map(|_| AtomicBool::new(false))
                    .collect(),
                cancelling: (0..=workers as usize * NODES_PER_WORKER)
                    .map(|_| AtomicBool::new(false))
                    .collect(),
                clock: AtomicUsize::new(1),
                entered: per_node(),
                exited: per_node(),
            })
        }

        /// Runs a critical section in `mode` for node `id`, checking exclusion, then releases.
        fn enter(&self, id: u32, mode: LockMode) {
            let tick = || self.clock.fetch_add(1, Ordering::SeqCst);
            self.entered[id as usize].store(tick(), Ordering::SeqCst);
            match mode {
                LockMode::Read => {
                    self.readers.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(
                        self.writers.load(Ordering::SeqCst),
                        0,
                        "reader met a writer"
                    );
                }
                LockMode::Write => {
                    assert_eq!(
                        self.writers.fetch_add(1, Ordering::SeqCst),
                        0,
                        "two writers"
                    );
                    assert_eq!(
                        self.readers.load(Ordering::SeqCst),
                        0,
                        "writer met a reader"
                    );
                }
            }
            shuttle::thread::yield_now();
            match mode {
                LockMode::Read => self.readers.fetch_sub(1, Ordering::SeqCst),
                LockMode::Write => self.writers.fetch_sub(1, Ordering::SeqCst),
            };
            self.exited[id as usize].store(tick(), Ordering::SeqCst);
            self.lock.unlock(&self.nodes, mode);
        }

        /// Requests and then polls up to `polls` times (`None`: until granted) before
        /// cancelling. Returns whether the lock is held.
        fn acquire(&self, id: u32, mode: LockMode, polls: Option<u32>) -> bool {
            let node = self.begin(id);
            let held = match self.lock.request(&self.nodes, node, mode) {
                Request::Granted => true,
                Request::Queued(t) => {
                    let mut n = 0;
                    loop {
                        if self.lock.poll(&self.nodes, t) {
                            break true;
                        }
                        if polls.is_some_and(|p| n >= p) {
                            self.cancelling[t as usize].store(true, Ordering::SeqCst);
                            let held = self.lock.cancel(&self.nodes, t);
                            self.cancelling[t as usize].store(false, Ordering::SeqCst);
                            break held;
                        }
                        n += 1;
                        shuttle::thread::yield_now();
                    }
                }
            };
            self.outstanding[node as usize].store(false, Ordering::SeqCst);
            held
        }

        /// Picks worker `id`'s (1-based) free node and marks a request outstanding on it.
        fn begin(&self, id: u32) -> u32 {
            let node = self.nodes.free_node(id as usize - 1);
            self.outstanding[node as usize].store(true, Ordering::SeqCst);
            node
        }

        /// The queue from head to tail, checked while holding `busy`: the chain from the tail
        /// reaches the head through distinct `Waiting` nodes whose owners have a request
        /// outstanding (no node reused while linked), and `head == 0` iff `tail == 0`.
        fn queue(&self, w: MqlWord) -> Vec<u32> {
            let mut order = Vec::new();
            let mut c = w.tail();
            assert_eq!(w.head() == 0, c == 0, "head and tail disagree");
            while c != 0 {
                assert!(!order.contains(&c), "cycle through node {c}");
                assert!(order.len() < self.outstanding.len(), "runaway chain");
                // The flag first: an owner marks its node `Leaving` before it clears the flag.
                let requested = self.outstanding[c as usize].load(Ordering::SeqCst);
                let n = self.nodes.get(c);
                match n.state() {
                    NodeState::Waiting => {
                        assert!(
                            requested,
                            "node {c} linked without a request: {n:?} in {w:?}"
                        )
                    }
                    NodeState::Leaving => {}
                    s => panic!("linked node {c} is {s:?}"),
                }
                order.push(c);
                c = if c == w.head() { 0 } else { n.prev() };
            }
            assert_eq!(
                order.last().copied().unwrap_or(0),
                w.head(),
                "chain misses head"
            );
            order.reverse();
            order
        }

        /// An observer pass: takes `busy` like a canceller, checks that the word it took is
        /// quiescent (no waiting head admitted by the holders: no lost grant) and that the
        /// queue is well formed, then hands `busy` back through the normal closing path.
        fn observe(&self) {
            let w = self.lock.take_busy();
            let q = self.queue(w);
            // An abandoned node whose owner has left `cancel` was announced (`leaving`) to a
            // `busy` holder, which unlinks it before clearing `busy`; so if it is still linked,
            // it was announced to us and `leaving` is set now.
            let left: Vec<u32> = q
                .iter()
                .copied()
                .filter(|&c| self.nodes.get(c).state() == NodeState::Leaving)
                .filter(|&c| !self.cancelling[c as usize].load(Ordering::SeqCst))
                .collect();
            if !left.is_empty() {
                assert!(
                    self.lock.load().leaving(),
                    "abandoned nodes {left:?} linked, unannounced"
                );
            }
            if let Some(&h) = q.first()
                && self.nodes.get(h).state() == NodeState::Waiting
            {
                let mode = self.nodes.get(h).mode();
                // `take_busy` returned the word its CAS replaced, plus `busy`: a word with
                // `busy` clear, which must not leave an admitted head waiting.
                assert!(!w.admits(mode), "head {h} left waiting while admitted");
            }
            self.lock.grant_and_unbusy(&self.nodes, w);
        }

        fn assert_idle(&self) {
            assert_eq!(self.lock.load(), MqlWord(0), "lock free, queue empty");
            for id in 1..self.outstanding.len() as u32 {
                assert_eq!(self.nodes.get(id), NodeWord::FREE, "node {id} not freed");
            }
        }
    }

    fn mode_of(x: u32) -> LockMode {
        if x.is_multiple_of(2) {
            LockMode::Write
        } else {
            LockMode::Read
        }
    }

    /// Three workers race: each requests (read or write), polls a bounded number of times, and
    /// then cancels; a grant that wins the race against the cancel must be honoured. Mutual
    /// exclusion holds throughout, and at the end the lock is free with an empty queue.
    fn cancel_races() {
        const WORKERS: u32 = 3;
        let s = Shared::new(WORKERS);
        let handles: Vec<_> = (1..=WORKERS)
            .map(|id| {
                let s = Arc::clone(&s);
                shuttle::thread::spawn(move || {
                    for round in 0..2u32 {
                        let mode = mode_of(id + round);
                        if id == 3 && round == 0 && s.lock.try_lock(mode) {
                            s.enter(id, mode);
                            continue;
                        }
                        if s.acquire(id, mode, Some((id + round) % 3)) {
                            s.enter(id, mode);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        s.assert_idle();
    }

    #[test]
    fn cancellation_races_keep_exclusion_and_the_queue() {
        check(cancel_races, 10_000, 5000);
    }

    /// `WORKERS` workers mix readers and writers, try, unconditional waits (polled until granted:
    /// a lost grant never terminates) and cancels after a few polls, while an observer
    /// repeatedly takes `busy` and checks the queue's shape and that no admitted head waits.
    fn mixed_with_observer<const WORKERS: u32>() {
        let s = Shared::new(WORKERS);
        let mut handles: Vec<_> = (1..=WORKERS)
            .map(|id| {
                let s = Arc::clone(&s);
                shuttle::thread::spawn(move || {
                    for round in 0..2u32 {
                        let mode = mode_of(id / 2 + round);
                        let held = match (id + round) % 4 {
                            0 => s.lock.try_lock(mode),
                            1 => s.acquire(id, mode, Some(round)),
                            _ => s.acquire(id, mode, None),
                        };
                        if held {
                            s.enter(id, mode);
                        }
                    }
                })
            })
            .collect();
        let observer = Arc::clone(&s);
        handles.push(shuttle::thread::spawn(move || {
            for _ in 0..3 {
                observer.observe();
                shuttle::thread::yield_now();
            }
        }));
        for h in handles {
            h.join().unwrap();
        }
        s.assert_idle();
    }

    #[test]
    fn mixed_workers_never_lose_a_grant_or_corrupt_the_queue() {
        check(mixed_with_observer::<5>, 10_000, 5000);
    }

    #[test]
    fn eight_workers_never_lose_a_grant_or_corrupt_the_queue() {
        check(mixed_with_observer::<8>, 3000, 2000);
    }

    /// FIFO: the main thread holds the write lock while four workers queue (modes W R R W; one
    /// of them may cancel), records the queue order, and releases. For any two nodes granted in
    /// that order where either is a writer, the first leaves before the second enters; readers
    /// next to each other may overlap (batching), and a reader behind a writer waits for it.
    fn fifo() {
        const WORKERS: u32 = 4;
        let s = Shared::new(WORKERS);
        let go = Arc::new(AtomicBool::new(false));
        let mode = |id: u32| {
            if id == 1 || id == 4 {
                LockMode::Write
            } else {
                LockMode::Read
            }
        };
        assert!(s.lock.try_lock(LockMode::Write));
        let handles: Vec<_> = (1..=WORKERS)
            .map(|id| {
                let (s, go) = (Arc::clone(&s), Arc::clone(&go));
                shuttle::thread::spawn(move || {
                    let node = s.begin(id);
                    let Request::Queued(t) = s.lock.request(&s.nodes, node, mode(id)) else {
                        panic!("granted past a writer");
                    };
                    while !go.load(Ordering::SeqCst) {
                        shuttle::thread::yield_now();
                    }
                    let held = loop {
                        if s.lock.poll(&s.nodes, t) {
                            break true;
                        }
                        if id == 2 {
                            break s.lock.cancel(&s.nodes, t);
                        }
                        shuttle::thread::yield_now();
                    };
                    s.outstanding[node as usize].store(false, Ordering::SeqCst);
                    if held {
                        s.enter(id, mode(id));
                    }
                    held
                })
            })
            .collect();
        let order = loop {
            let w = s.lock.take_busy();
            let order = s.queue(w);
            s.lock.grant_and_unbusy(&s.nodes, w);
            if order.len() == WORKERS as usize {
                // Node ids to worker ids (1-based).
                break order
                    .into_iter()
                    .map(|n| (n - 1) / NODES_PER_WORKER as u32 + 1)
                    .collect::<Vec<_>>();
            }
            shuttle::thread::yield_now();
        };
        go.store(true, Ordering::SeqCst);
        s.lock.unlock(&s.nodes, LockMode::Write);
        let held: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let granted: Vec<u32> = order
            .into_iter()
            .filter(|&id| held[id as usize - 1])
            .collect();
        for (i, &a) in granted.iter().enumerate() {
            for &b in &granted[i + 1..] {
                if mode(a) == LockMode::Write || mode(b) == LockMode::Write {
                    let left = s.exited[a as usize].load(Ordering::SeqCst);
                    let entered = s.entered[b as usize].load(Ordering::SeqCst);
                    assert!(
                        left < entered,
                        "node {b} entered before node {a} (ahead) left"
                    );
                }
            }
        }
        s.assert_idle();
    }

    #[test]
    fn grants_follow_the_queue_order() {
        check(fifo, 3000, 2000);
    }

    /// Fairness: the main thread holds a read lock (and releases it at some point); a writer
    /// requests; a reader that arrives after the writer's request must not be let in beside the
    /// main thread's read hold: it is granted only after the writer has been and gone.
    fn reader_behind_writer() {
        let s = Shared::new(2);
        let queued = Arc::new(AtomicBool::new(false));
        assert!(s.lock.try_lock(LockMode::Read));
        let writer = {
            let (s, queued) = (Arc::clone(&s), Arc::clone(&queued));
            shuttle::thread::spawn(move || {
                let node = s.begin(1);
                // Granted at once only if the main thread has already released.
                let ticket = match s.lock.request(&s.nodes, node, LockMode::Write) {
                    Request::Granted => None,
                    Request::Queued(t) => Some(t),
                };
                queued.store(true, Ordering::SeqCst);
                if let Some(t) = ticket {
                    while !s.lock.poll(&s.nodes, t) {
                        shuttle::thread::yield_now();
                    }
                }
                s.outstanding[node as usize].store(false, Ordering::SeqCst);
                s.enter(1, LockMode::Write);
            })
        };
        let reader = {
            let (s, queued) = (Arc::clone(&s), Arc::clone(&queued));
            shuttle::thread::spawn(move || {
                while !queued.load(Ordering::SeqCst) {
                    shuttle::thread::yield_now();
                }
                assert!(s.acquire(2, LockMode::Read, None));
                assert_ne!(
                    s.exited[1].load(Ordering::SeqCst),
                    0,
                    "reader passed a waiting writer"
                );
                s.enter(2, LockMode::Read);
            })
        };
        shuttle::thread::yield_now();
        s.lock.unlock(&s.nodes, LockMode::Read);
        writer.join().unwrap();
        reader.join().unwrap();
        s.assert_idle();
    }

    #[test]
    fn a_reader_never_passes_a_waiting_writer() {
        check(reader_behind_writer, 3000, 2000);
    }
}
