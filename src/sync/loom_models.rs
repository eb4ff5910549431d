//! loom models of the engine's lock-free primitives, run on the production code through the
//! atomics shim (`crate::sync`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release --lib loom
//! ```
//!
//! Each model explores every interleaving (and every value a weak load may return, within
//! loom's model of C11) up to a preemption bound, [`PREEMPTIONS`], which keeps the whole set to
//! minutes on two cores. Each names in its doc the ordering it was run weakened against, and
//! each failed for it (docs/TESTING.md records loom's messages). A reader or collector whose
//! loads must see another thread's stores runs on a spawned thread, the writer on the main one
//! (`spawn_reader` says why: loom runs the main thread on first). loom treats `SeqCst`
//! loads and stores as `AcqRel` (its README), so the Dekker-style reader/writer handshakes of the
//! 2PL owned lock and of PLOR's `EXCL` bit, which need the `SeqCst` total order, are not modelled:
//! loom would report executions the real order forbids. The models cover what rests on
//! acquire/release and `SeqCst` fences, which loom models exactly.

use crate::ids::RecordId;
use crate::index::hash::Table as HashTable;
use crate::protocol::plor::locker::PlorLock;
use crate::protocol::plor::optimistic_copy;
use crate::protocol::silo::{TidCell, TidWord};
use crate::protocol::twopl::{LockMode, OwnedLock};
use crate::storage::Payload;
use crate::storage::grace::Grace;
use crate::storage::versions::{VersionChain, VersionCollected, VersionPool, VersionStore};
use crate::sync::atomic::{AtomicU64, Ordering, fence};
use loom::sync::Arc;
use loom::thread;
use std::task::Poll;

/// Preemptions per execution: every model's bug shows within two.
const PREEMPTIONS: usize = 2;

/// Puts a free node in `store`'s shared list (reuse off), so that the model's writer takes a node
/// that exists before its thread starts: loom assumes an atomic is published properly when it is
/// created, so only stores to an existing node show a weakened publication.
fn free_node(store: &VersionStore<()>) {
    let mut pool = store.pool(1);
    let node = pool.take(16).expect("cap");
    pool.put_back(node);
}

/// A type-stable version store for two workers (reuse off) and an empty chain.
fn store_and_chain() -> (Arc<VersionStore<()>>, Arc<VersionChain<()>>) {
    (
        Arc::new(VersionStore::new(2, 1 << 20, false).type_stable()),
        Arc::new(VersionChain::default()),
    )
}

/// Pushes onto `chain` a version at `ts` whose payload holds `10 * ts` in both words, from a
/// node of `pool`.
fn push_version(chain: &VersionChain<()>, pool: &mut VersionPool<'_, ()>, ts: u64) {
    let src = words(10 * ts);
    let mut node = pool.take(16).expect("cap");
    node.fill(ts, payload(&src), &mut [0u8; 16]);
    chain.push(node, pool);
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(PREEMPTIONS);
    builder.check(f);
}

/// A two-word payload holding `v` in both words (a torn copy has two different words).
fn words(v: u64) -> Arc<[AtomicU64; 2]> {
    Arc::new([AtomicU64::new(v), AtomicU64::new(v)])
}

fn payload(words: &[AtomicU64; 2]) -> Payload<'_> {
    Payload::new(&words[..], 16)
}

fn two(v: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&v.to_le_bytes());
    b[8..].copy_from_slice(&v.to_le_bytes());
    b
}

fn halves(b: &[u8; 16]) -> (u64, u64) {
    (
        u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
        u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
    )
}

/// The seqlock write/read cycle on Silo's TID word and the payload copy: a committer locks the
/// word, fences (`Release`, as every committer does after its locks: SI, MVTO, Cicada, ERMIA,
/// TicToc, PLOR; Silo and MOCC with their `SeqCst` fence), stores the payload, unlocks with a new
/// TID; a reader's `read_consistent` never accepts a torn copy.
/// Weakened for the check: the committer's fence removed.
#[test]
fn loom_seqlock_write_read_cycle() {
    model(|| {
        let cell = Arc::new(TidCell::default());
        let data = words(1);
        let writer = {
            let (cell, data) = (cell.clone(), data.clone());
            thread::spawn(move || {
                let seen = cell.load();
                assert!(cell.try_lock(seen), "the only writer");
                fence(Ordering::Release);
                payload(&data).store(&two(2));
                cell.store(TidWord::new(0, 1));
            })
        };
        let mut out = [0u8; 16];
        if let Some(tid) = cell.read_consistent(payload(&data), &mut out, 1) {
            let (a, b) = halves(&out);
            assert_eq!(a, b, "a torn copy was accepted (TID {tid:?})");
            assert_eq!(a, if tid == TidWord::default() { 1 } else { 2 });
        }
        writer.join().expect("writer");
    });
}

/// A reader of `chain` on its own thread: the visible version at 5 is the one at 1 or the one at
/// 2, each with its own payload. Spawned *before* the push it races with: loom runs the main
/// thread on to its `join` first, and with the reader on the main thread (and the writer
/// spawned) the models explored one execution, in which the reader loaded the head before any
/// push (docs/TESTING.md).
fn spawn_reader(chain: &Arc<VersionChain<()>>) -> thread::JoinHandle<()> {
    let chain = chain.clone();
    thread::spawn(move || {
        // SAFETY: nothing collects this chain during the model.
        let v = unsafe { chain.find_visible(5) }.expect("ts 1 at least");
        let value = v.payload().word(0);
        assert!(
            (v.ts(), value) == (1, 10) || (v.ts(), value) == (2, 20),
            "version ts {} holds {value}",
            v.ts()
        );
    })
}

/// A version chain's push against a concurrent reader: the reader that reaches the new node sees
/// its timestamp and payload; the writer reuses a node that existed before the reader started.
/// Weakened for the check: `push`'s `Release` CAS made `Relaxed`.
#[test]
fn loom_version_chain_push_is_seen_initialised() {
    model(|| {
        let (store, chain) = store_and_chain();
        push_version(&chain, &mut store.pool(0), 1);
        free_node(&store);
        let reader = spawn_reader(&chain);
        push_version(&chain, &mut store.pool(1), 2);
        reader.join().expect("reader");
    });
}

/// The collector bit orders one collector's cut before the next collector's walk: a deferred
/// collector (watermark 2) cuts the chain 2 -> 1 below the version at 2, frees the node at 1
/// and, as any worker's pool may, reuses it at once for a version (at 7) of another record; then
/// the record's writer pushes the version at 3 and collects with the watermark it read earlier
/// (1), walking 3 -> 2 -> the link the deferred collector cut. The writer must see that link
/// cut (the bit's `Acquire` takes the deferred collector's `end_collecting` `Release`, through
/// the writer's own push in that release sequence); walking the old link would take the reused
/// node for the version at 1 and detach and free the other record's version at 6. The
/// deferred collector runs on the main thread, so loom's first schedule runs it to the end
/// before the writer (spawn_reader says why that matters).
/// Weakened for the check: `begin_collecting`'s `Acquire` CAS made `Relaxed`.
#[test]
fn loom_version_chain_collector_bit_orders_the_next_collector() {
    model(|| {
        let (store, chain) = store_and_chain();
        let other: Arc<VersionChain<()>> = Arc::new(VersionChain::default());
        {
            let mut pool = store.pool(0);
            push_version(&chain, &mut pool, 1);
            push_version(&chain, &mut pool, 2);
            push_version(&other, &mut pool, 6);
        }
        let writer = {
            let (store, chain) = (store.clone(), chain.clone());
            thread::spawn(move || {
                let mut pool = store.pool(0);
                push_version(&chain, &mut pool, 3);
                chain.collect(4, 1, &mut pool)
            })
        };
        let mut pool = store.pool(1);
        // The record locked for all the collector knows: it cuts below the version at 2.
        let deferred = chain.collect_deferred(|| None, 2, &mut pool);
        if deferred == 1 {
            // The freed node at 1 goes straight back into use (the store's shared free list).
            push_version(&other, &mut pool, 7);
        }
        drop(pool);
        let by_writer = writer.join().expect("writer");
        // Whichever collector comes second finds nothing at or below its watermark to cut.
        assert_eq!(
            by_writer, 0,
            "the writer freed a node it should not have reached"
        );
        assert!(deferred <= 1, "the node at 1 goes at most once: {deferred}");
        assert_eq!(store.stats().live_versions, 4);
        // SAFETY: the model's threads are done.
        let v = unsafe { other.find_visible(6) }.expect("the other record's version at 6 stays");
        assert_eq!((v.ts(), v.payload().word(0)), (6, 60));
        // SAFETY: as above.
        let v = unsafe { chain.find_visible(2) }.expect("the version at 2 stays");
        assert_eq!((v.ts(), v.payload().word(0)), (2, 20));
    });
}

/// [`loom_version_chain_push_is_seen_initialised`] with the writer's node allocated after the
/// reader started (reuse off, no free node): the allocation path of `take`, where a reader that
/// reaches the node unsynchronised loads atomics whose creation it has not seen (loom reports a
/// causality violation). Weakened for the check: `push`'s `Release` CAS made `Relaxed`.
#[test]
fn loom_version_chain_push_publishes_a_fresh_node() {
    model(|| {
        let (store, chain) = store_and_chain();
        push_version(&chain, &mut store.pool(0), 1);
        let reader = spawn_reader(&chain);
        push_version(&chain, &mut store.pool(1), 2);
        reader.join().expect("reader");
    });
}

/// A deferred collector against a writer that pushes a node allocated after the collector
/// started: the collector (record locked by the writer for all it knows: `inline_ts` says
/// `None`) takes the collector bit, re-reads the head and walks down to the first node at or
/// below the watermark, reading the new node's timestamp on the way when the push came first.
/// The node at 1 is freed at most once (not at all when the push moved the head under the
/// collector's CAS on the bit), and the versions at 2 and 3 stay. The collector is the spawned
/// thread for the reason given at [`spawn_reader`].
/// Weakened for the check: `push`'s `Release` CAS made `Relaxed` (the walk then reads a node
/// whose initialisation it has not seen). `collect_deferred`'s own `Acquire`s (the bit's CAS,
/// the re-load) each cover the other here: weakening one alone is not an error this model can
/// show (only a push between the two would need the re-load's).
#[test]
fn loom_version_chain_deferred_collector_walks_a_fresh_node() {
    model(|| {
        let (store, chain) = store_and_chain();
        {
            let mut pool = store.pool(0);
            push_version(&chain, &mut pool, 1);
            push_version(&chain, &mut pool, 2);
        }
        let collector = {
            let (store, chain) = (store.clone(), chain.clone());
            thread::spawn(move || chain.collect_deferred(|| None, 2, &mut store.pool(1)))
        };
        push_version(&chain, &mut store.pool(0), 3);
        let freed = collector.join().expect("collector");
        // 0 when the push moved the head between the collector's load and its CAS on the bit
        // (it then leaves the chain alone).
        assert!(freed <= 1, "the node at 1 goes at most once: {freed}");
        assert_eq!(store.stats().live_versions, 3 - freed as i64);
        // SAFETY: the model's threads are done.
        let v = unsafe { chain.find_visible(2) }.expect("the version at 2 stays");
        assert_eq!((v.ts(), v.payload().word(0)), (2, 20));
        if freed == 0 {
            // SAFETY: as above.
            let v = unsafe { chain.find_visible(1) }.expect("the version at 1 stays");
            assert_eq!((v.ts(), v.payload().word(0)), (1, 10));
        }
        // SAFETY: as above.
        let v = unsafe { chain.find_visible(3) }.expect("the version at 3");
        assert_eq!((v.ts(), v.payload().word(0)), (3, 30));
    });
}

/// AggressiveGC (issue 21, item 2): a writer cuts the chain below its newest node, recycles the
/// cut node and pushes it back as a newer version, while a validated reader walks the chain. The
/// reader returns the version at 1 intact, nothing, or `VersionCollected`; never a reused node
/// passed off as valid. Weakened for the check: the `Release` generation bump in `free_from` made
/// `Relaxed` (the unlink is then not ordered before it).
#[test]
fn loom_aggressive_gc_validated_read() {
    model(|| {
        let (store, chain) = store_and_chain();
        {
            let mut pool = store.pool(0);
            push_version(&chain, &mut pool, 1);
            push_version(&chain, &mut pool, 2);
        }
        let writer = {
            let (store, chain) = (store.clone(), chain.clone());
            thread::spawn(move || {
                let mut pool = store.pool(0);
                assert_eq!(chain.collect_aggressively(1, &mut pool), 1);
                // Reuse off: the freed node is the one the next take returns.
                push_version(&chain, &mut pool, 3);
            })
        };
        let mut out = [0u8; 16];
        match chain.read_validated(1, &mut out) {
            Ok(Some(ts)) => {
                assert_eq!(ts, 1, "a version above the snapshot");
                assert_eq!(
                    halves(&out),
                    (10, 10),
                    "a reused node read as the version at 1"
                );
            }
            Ok(None) | Err(VersionCollected) => {}
        }
        writer.join().expect("writer");
    });
}

/// The grace period of retired chunks (`storage::grace`): a transaction pins, looks a record up
/// in the "index" and reads its chunk; the reclaimer removes the entry, retires the chunk and
/// overwrites it once `quiescent_since` says so. The transaction never reads the overwrite.
/// Weakened for the check: the `SeqCst` fence in `PinSlot::pin` removed.
#[test]
fn loom_grace_period_guards_chunk_reuse() {
    const POISON: u64 = u64::MAX;
    model(|| {
        let grace = Arc::new(Grace::with_slots(2));
        let entry = Arc::new(AtomicU64::new(1));
        let chunk = Arc::new(AtomicU64::new(7));
        let reader = {
            let (grace, entry, chunk) = (grace.clone(), entry.clone(), chunk.clone());
            thread::spawn(move || {
                let mut slot = grace.claim();
                slot.pin();
                // Relaxed: the grace period alone must order these (module docs of `grace`).
                if entry.load(Ordering::Relaxed) == 1 {
                    assert_ne!(chunk.load(Ordering::Relaxed), POISON, "read a reused chunk");
                }
                slot.unpin();
            })
        };
        // Relaxed: as above.
        entry.store(0, Ordering::Relaxed);
        let retired = grace.retire_epoch();
        if grace.quiescent_since(retired) {
            // Relaxed: as above.
            chunk.store(POISON, Ordering::Relaxed);
        }
        reader.join().expect("reader");
    });
}

/// The worker-set handshake of the 2PL owned lock's waiter list: a waiter publishes what it
/// wants, then adds its bit (`add_waiter`, `Release` on the set's word); whoever sees the bit in
/// `waiters` (`Acquire`) sees what it wants. Weakened for the check: `add_waiter`'s `Release` made
/// `Relaxed`.
#[test]
fn loom_worker_set_publishes_the_waiters_request() {
    model(|| {
        let lock: Arc<OwnedLock<1>> = Arc::new(OwnedLock::default());
        let wanted = Arc::new(AtomicU64::new(0));
        let waiter = {
            let (lock, wanted) = (lock.clone(), wanted.clone());
            thread::spawn(move || {
                // Relaxed: published by `add_waiter`.
                wanted.store(2, Ordering::Relaxed);
                lock.add_waiter(5);
            })
        };
        if lock.waiters().contains(5) {
            // Relaxed: ordered by `waiters`' Acquire.
            assert_eq!(
                wanted.load(Ordering::Relaxed),
                2,
                "a waiter bit without its request"
            );
        }
        waiter.join().expect("waiter");
    });
}

/// The 2PL owned lock's owner word: two writers each try to take it exclusively and, if they
/// do, increment a payload word under it (a plain load and store) and release. No increment is
/// lost. Weakened for the check: `release`'s `Release` store of `owner` made `Relaxed`.
#[test]
fn loom_owned_lock_hands_the_payload_over() {
    model(|| {
        let lock: Arc<OwnedLock<1>> = Arc::new(OwnedLock::default());
        let counter = Arc::new(AtomicU64::new(0));
        let worker = |id: usize| {
            let (lock, counter) = (lock.clone(), counter.clone());
            thread::spawn(move || {
                if lock.try_acquire(id, LockMode::Exclusive, None).is_err() {
                    return 0u64;
                }
                // Relaxed: the lock orders these.
                let v = counter.load(Ordering::Relaxed);
                counter.store(v + 1, Ordering::Relaxed);
                lock.release(id, LockMode::Exclusive);
                1
            })
        };
        let (a, b) = (worker(0), worker(1));
        let took = a.join().expect("a") + b.join().expect("b");
        assert!(took >= 1, "a free lock refused both");
        // Relaxed: after both joins.
        assert_eq!(counter.load(Ordering::Relaxed), took, "an update was lost");
    });
}

/// PLOR's locker word on the read-only OCC path: a committer holds the write lock, enters
/// exclusive mode, fences (`Release`, commit phase 3), installs, bumps the version, leaves
/// exclusive mode and unlocks; `optimistic_copy` (what `optimistic_read` runs) never accepts a
/// torn copy. Weakened for the check: the committer's fence removed.
#[test]
fn loom_plor_locker_optimistic_read() {
    model(|| {
        let lock: Arc<PlorLock<1>> = Arc::new(PlorLock::default());
        let data = words(1);
        let committer = {
            let (lock, data) = (lock.clone(), data.clone());
            thread::spawn(move || {
                assert!(lock.try_write_lock(9), "the only writer");
                let readers = lock.set_exclusive();
                assert!(readers.is_empty(), "no reader takes a read lock here");
                fence(Ordering::Release);
                payload(&data).store(&two(2));
                lock.bump_version();
                lock.clear_exclusive();
                lock.write_unlock(9);
            })
        };
        let mut out = [0u8; 16];
        if let Poll::Ready(version) = optimistic_copy(&lock, payload(&data), &mut out) {
            let (a, b) = halves(&out);
            assert_eq!(a, b, "a torn copy was accepted (version {version})");
            assert_eq!(a, 1 + version, "the copy belongs to its version");
        }
        committer.join().expect("committer");
    });
}

/// The hash index's insert publishes what was written before it: a writer fills a record
/// (`Relaxed`), then inserts its key, while a second writer inserts another key that hashes to
/// the same slot (1 and 14 in a 16-slot table), so the two claim slots in either order. A
/// reader that finds the first key sees its record filled, and the right record id; both keys
/// are found after the joins. Weakened for the check: the value's `Release` store in
/// `Table::insert` made `Relaxed`.
#[test]
fn loom_hash_index_publishes_the_record() {
    model(|| {
        let table = Arc::new(HashTable::new(16));
        let record = Arc::new(AtomicU64::new(0));
        let other = {
            let table = table.clone();
            thread::spawn(move || assert!(table.insert_for_model(14, RecordId(9))))
        };
        let reader = {
            let (table, record) = (table.clone(), record.clone());
            thread::spawn(move || {
                if let Some(rid) = table.get_for_model(1) {
                    assert_eq!(rid, RecordId(3), "the wrong record id");
                    // Relaxed: ordered by the lookup's Acquire load of the value.
                    assert_eq!(record.load(Ordering::Relaxed), 1, "an unfilled record");
                }
            })
        };
        // Relaxed: published by the insert's Release store of the value.
        record.store(1, Ordering::Relaxed);
        assert!(table.insert_for_model(1, RecordId(3)));
        other.join().expect("other writer");
        reader.join().expect("reader");
        assert_eq!(table.get_for_model(1), Some(RecordId(3)));
        assert_eq!(table.get_for_model(14), Some(RecordId(9)));
    });
}
