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
    assert_eq!(q.get(1).next(), 3);
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

/// Shuttle's atomics behind the same [`Word`] interface.
mod shuttle_tests {
    use super::super::*;
    use shuttle::sync::Arc;
    use shuttle::sync::atomic::{AtomicU64 as ShuttleU64, AtomicUsize};

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
        fn relax() {
            shuttle::thread::yield_now();
        }
    }

    struct Shared {
        lock: Mql<ShuttleU64>,
        nodes: MqlNodes<ShuttleU64>,
        readers: AtomicUsize,
        writers: AtomicUsize,
    }

    impl Shared {
        fn enter(&self, mode: LockMode) {
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
            self.lock.unlock(&self.nodes, mode);
        }
    }

    /// Three workers race: each requests (read or write), polls a bounded number of times, and
    /// then cancels; a grant that wins the race against the cancel must be honoured. Mutual
    /// exclusion holds throughout, and at the end the lock is free with an empty queue.
    fn scenario() {
        const WORKERS: u32 = 3;
        let s = Arc::new(Shared {
            lock: Mql::default(),
            nodes: MqlNodes::new(WORKERS as usize),
            readers: AtomicUsize::new(0),
            writers: AtomicUsize::new(0),
        });
        let handles: Vec<_> = (1..=WORKERS)
            .map(|id| {
                let s = Arc::clone(&s);
                shuttle::thread::spawn(move || {
                    for round in 0..2u32 {
                        let mode = if (id + round) % 2 == 0 {
                            LockMode::Write
                        } else {
                            LockMode::Read
                        };
                        if id == 3 && round == 0 && s.lock.try_lock(mode) {
                            s.enter(mode);
                            continue;
                        }
                        let granted = match s.lock.request(&s.nodes, id, mode) {
                            Request::Granted => true,
                            Request::Queued(t) => {
                                let polls = (id + round) % 3;
                                let mut got = false;
                                for _ in 0..polls {
                                    if s.lock.poll(&s.nodes, t) {
                                        got = true;
                                        break;
                                    }
                                    shuttle::thread::yield_now();
                                }
                                got || s.lock.cancel(&s.nodes, t)
                            }
                        };
                        if granted {
                            s.enter(mode);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(s.lock.load(), MqlWord(0), "lock free, queue empty");
        for id in 1..=WORKERS {
            assert_eq!(s.nodes.get(id), NodeWord::FREE);
        }
    }

    #[test]
    fn cancellation_races_keep_exclusion_and_the_queue() {
        shuttle::check_random(scenario, 3000);
        shuttle::check_pct(scenario, 2000, 3);
    }
}
