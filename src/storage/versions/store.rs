//! The store that owns every version node and counts them against the cap, and the workers'
//! pools the nodes come from (module docs, "Pools and the memory bound" and "Who owns a node").

use super::{RESERVE, Version};
use crate::storage::Payload;
use crate::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use serde::Serialize;
use std::ptr::NonNull;
use std::sync::{Mutex, OnceLock};

#[cfg(doc)]
use super::VersionChain;

/// A node owned by one worker between [`VersionPool::take`] and [`VersionChain::push`].
pub struct VersionNode<V>(pub(super) NonNull<Version<V>>);

impl<V> VersionNode<V> {
    /// Sets the version's timestamp and copies its payload from `src` (the record's inline
    /// payload, which the caller holds exclusively).
    pub fn fill(&mut self, ts: u64, src: Payload<'_>, buf: &mut [u8]) -> &V {
        // SAFETY: the node is owned by this handle until pushed.
        let v = unsafe { self.0.as_ref() };
        // Relaxed: published by the push's Release.
        v.ts.store(ts, Ordering::Relaxed);
        let buf = &mut buf[..src.len()];
        src.load(buf);
        v.payload().store(buf);
        &v.meta
    }
}

/// The run stopped: versions need more memory than the configured cap.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error(
    "version memory cap reached: {cap} bytes of versions are allocated ({live} versions live) and \
     another is needed; raise --version-memory-mb, lower --gc-interval-us, or shorten the long \
     transactions that hold old snapshots"
)]
pub struct VersionMemoryExhausted {
    /// The cap, in bytes.
    pub cap: usize,
    /// Versions in chains when it was reached.
    pub live: i64,
}

/// What a run's versions cost, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct VersionStats {
    /// Older versions in chains at the end of the run.
    pub live_versions: i64,
    /// Bytes of version nodes taken from the allocator (the high-water mark: never given back
    /// during a run).
    pub version_bytes: usize,
    /// Nodes taken from the allocator.
    pub allocated_versions: usize,
    /// The cap on `version_bytes`.
    pub cap_bytes: usize,
}

/// Shared owner of every version node: the allocations, the cap, the statistics.
///
/// Shared words, who writes them, who reads them: `bytes` and `allocated` are written by a
/// worker that refills its pool (once per [`RESERVE`] nodes with reuse on), read by the report;
/// `live[i]` is written by worker `i` only, read by the report and the cap's message;
/// `shared_free` is locked on every take and give with reuse off in a type-stable store, and
/// when a pool is dropped.
pub struct VersionStore<V> {
    cap: usize,
    reuse: bool,
    /// Nodes are never given back to the allocator during a run ([`Self::type_stable`]).
    type_stable: bool,
    bytes: AtomicUsize,
    allocated: AtomicUsize,
    live: Box<[CachePadded<AtomicI64>]>,
    /// Free nodes the store owns: with reuse off in a type-stable store, every worker's; with it
    /// on, those of dropped pools. Freed when the store is dropped (module docs, "Who owns a node").
    shared_free: Mutex<Vec<NonNull<Version<V>>>>,
    /// The first time a commit needed a node past the cap ([`VersionPool::take_past_cap`]).
    exhausted: OnceLock<VersionMemoryExhausted>,
}

// SAFETY: the store owns its nodes (`V` values and atomics); they are shared between workers as
// `&Version<V>` (needs `V: Sync`) and moved between pools (needs `V: Send`). The raw pointers are
// only dereferenced under the rules in the module docs.
unsafe impl<V: Send + Sync> Send for VersionStore<V> {}
// SAFETY: as above; the mutable parts are atomics and mutexes.
unsafe impl<V: Send + Sync> Sync for VersionStore<V> {}

impl<V: Default> VersionStore<V> {
    /// A store for `workers` workers whose nodes may take at most `cap` bytes; `reuse` turns
    /// AssertiveVersionReuse on.
    pub fn new(workers: usize, cap: usize, reuse: bool) -> Self {
        VersionStore {
            cap,
            reuse,
            type_stable: false,
            bytes: AtomicUsize::new(0),
            allocated: AtomicUsize::new(0),
            live: (0..workers.max(1))
                .map(|_| CachePadded::new(AtomicI64::new(0)))
                .collect(),
            shared_free: Mutex::new(Vec::new()),
            exhausted: OnceLock::new(),
        }
    }

    /// The same store, but its nodes stay version nodes until the store is dropped (type-stable
    /// memory): what a store needs whose readers may still read a node after it was collected
    /// (AggressiveGC's [`VersionChain::read_validated`]). With reuse off, collected nodes then go
    /// to one shared, locked free list instead of back to the allocator.
    pub fn type_stable(mut self) -> Self {
        self.type_stable = true;
        self
    }

    /// The pool of worker `id`.
    pub fn pool(&self, id: usize) -> VersionPool<'_, V> {
        VersionPool {
            store: self,
            id,
            free: Vec::new(),
        }
    }

    /// Allocates `n` nodes with payloads of `bytes`, within the cap.
    fn allocate(
        &self,
        bytes: usize,
        n: usize,
        into: &mut Vec<NonNull<Version<V>>>,
    ) -> Result<(), VersionMemoryExhausted> {
        self.allocate_within(bytes, n, self.cap, into)
    }

    /// [`allocate`](Self::allocate) with the bound `cap` instead of the store's.
    fn allocate_within(
        &self,
        bytes: usize,
        n: usize,
        cap: usize,
        into: &mut Vec<NonNull<Version<V>>>,
    ) -> Result<(), VersionMemoryExhausted> {
        let need = n * Version::<V>::node_bytes(bytes);
        // Relaxed: a counter; the cap is a bound, not a synchronisation point.
        let before = self.bytes.fetch_add(need, Ordering::Relaxed);
        if before + need > cap {
            self.bytes.fetch_sub(need, Ordering::Relaxed);
            return Err(VersionMemoryExhausted {
                cap: self.cap,
                live: self.stats().live_versions,
            });
        }
        self.allocated.fetch_add(n, Ordering::Relaxed);
        for _ in 0..n {
            let node = Box::new(Version {
                ts: AtomicU64::new(0),
                meta: V::default(),
                next: AtomicPtr::new(std::ptr::null_mut()),
                generation: AtomicU64::new(0),
                words: (0..bytes.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
                bytes,
            });
            into.push(NonNull::from(Box::leak(node)));
        }
        Ok(())
    }

    /// The error that stopped the run, once a commit needed a node past the cap.
    pub fn exhausted(&self) -> Option<VersionMemoryExhausted> {
        self.exhausted.get().cloned()
    }

    /// What the versions cost so far.
    pub fn stats(&self) -> VersionStats {
        VersionStats {
            // Relaxed: statistics.
            live_versions: self.live.iter().map(|l| l.load(Ordering::Relaxed)).sum(),
            version_bytes: self.bytes.load(Ordering::Relaxed),
            allocated_versions: self.allocated.load(Ordering::Relaxed),
            cap_bytes: self.cap,
        }
    }
}

impl<V> Drop for VersionStore<V> {
    fn drop(&mut self) {
        let free = self
            .shared_free
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        for p in free.drain(..) {
            // SAFETY: every node was leaked from a Box in `allocate`; a free node is owned by
            // the list that holds it (module docs), and every pool gave its own back when it was
            // dropped (`&mut self` proves none is left). Nodes linked in chains are not here:
            // their chains own them. Freed once, here.
            drop(unsafe { Box::from_raw(p.as_ptr()) });
        }
    }
}

impl<V> Drop for VersionPool<'_, V> {
    fn drop(&mut self) {
        if self.free.iter().all(|(_, list)| list.is_empty()) {
            return;
        }
        // The nodes stay allocated until the store is dropped: a validated reader of another
        // worker may still be reading one of them (`VersionChain::read_validated`).
        let mut shared = self
            .store
            .shared_free
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (_, list) in self.free.drain(..) {
            shared.extend(list);
        }
    }
}

/// One worker's free version nodes (module docs, "Pools").
pub struct VersionPool<'s, V> {
    store: &'s VersionStore<V>,
    id: usize,
    /// Free nodes by payload size (a run has a few table sizes, so a short list).
    free: Vec<(usize, Vec<NonNull<Version<V>>>)>,
}

// SAFETY: the pool owns its free nodes exclusively; moving it to another thread moves that
// ownership (`V: Send`); the store reference needs `V: Sync` (see the store's impls).
unsafe impl<V: Send + Sync> Send for VersionPool<'_, V> {}

impl<V: Default> VersionPool<'_, V> {
    /// A free node for a payload of `bytes`, or the cap's error.
    #[inline]
    pub fn take(&mut self, bytes: usize) -> Result<VersionNode<V>, VersionMemoryExhausted> {
        if !self.store.reuse && !self.store.type_stable {
            // CCBench's baseline: one node from the general allocator (`give` frees it).
            let mut one = Vec::with_capacity(1);
            self.store.allocate(bytes, 1, &mut one)?;
            return Ok(VersionNode(one[0]));
        }
        if !self.store.reuse {
            let mut shared = self
                .store
                .shared_free
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(i) = shared.iter().rposition(|n| {
                // SAFETY: free nodes are live allocations the shared list owns; nobody reads them.
                unsafe { n.as_ref() }.bytes == bytes
            }) {
                return Ok(VersionNode(shared.swap_remove(i)));
            }
            drop(shared);
            let mut one = Vec::with_capacity(1);
            self.store.allocate(bytes, 1, &mut one)?;
            return Ok(VersionNode(one[0]));
        }
        let class = match self.free.iter().position(|(b, _)| *b == bytes) {
            Some(c) => c,
            None => {
                self.free.push((bytes, Vec::with_capacity(RESERVE)));
                self.free.len() - 1
            }
        };
        if self.free[class].1.is_empty() {
            self.store
                .allocate(bytes, RESERVE, &mut self.free[class].1)?;
        }
        Ok(VersionNode(self.free[class].1.pop().expect("refilled")))
    }

    /// A node for a commit that is past its point of no return (its version must be saved): one
    /// within the cap if there is one, else one allocated past it, and the store then records the
    /// cap's error ([`VersionStore::exhausted`]), which stops the run within a poll interval
    /// (the executors poll [`MultiVersion::version_memory_exhausted`](crate::protocol::parts::MultiVersion::version_memory_exhausted)). The
    /// overshoot is bounded by what the workers install until they stop.
    #[inline]
    pub fn take_past_cap(&mut self, bytes: usize) -> VersionNode<V> {
        match self.take(bytes) {
            Ok(node) => node,
            Err(e) => self.overdraw(bytes, e),
        }
    }

    #[cold]
    #[inline(never)]
    fn overdraw(&mut self, bytes: usize, e: VersionMemoryExhausted) -> VersionNode<V> {
        let _ = self.store.exhausted.set(e);
        let mut one = Vec::with_capacity(1);
        self.store
            .allocate_within(bytes, 1, usize::MAX, &mut one)
            .expect("no cap");
        VersionNode(one[0])
    }

    /// Reserves [`RESERVE`] nodes for payloads of `bytes` ahead of the first write (with
    /// AssertiveVersionReuse on; nothing otherwise).
    pub fn reserve(&mut self, bytes: usize) -> Result<(), VersionMemoryExhausted> {
        if self.store.reuse && !self.free.iter().any(|(b, _)| *b == bytes) {
            let mut nodes = Vec::with_capacity(RESERVE);
            self.store.allocate(bytes, RESERVE, &mut nodes)?;
            self.free.push((bytes, nodes));
        }
        Ok(())
    }
}

impl<V> VersionPool<'_, V> {
    /// A node went into a chain.
    #[inline]
    pub(super) fn linked(&self) {
        // Relaxed: a statistic written by this worker only.
        self.store.live[self.id].fetch_add(1, Ordering::Relaxed);
    }

    /// Returns a node that left its chain.
    #[inline]
    pub(super) fn give(&mut self, node: VersionNode<V>) {
        // Relaxed: a statistic written by this worker only.
        self.store.live[self.id].fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the node is a live allocation now owned by the caller.
        let bytes = unsafe { node.0.as_ref() }.bytes;
        if !self.store.reuse && !self.store.type_stable {
            // Relaxed: counters; the cap counts the bytes held now.
            self.store
                .bytes
                .fetch_sub(Version::<V>::node_bytes(bytes), Ordering::Relaxed);
            // SAFETY: every node was leaked from a Box in `allocate`; this one is owned by the
            // caller (collected: no chain links it) and, the store not being type-stable, no
            // reader can reach it (the watermark argument, module docs); freed once, here.
            drop(unsafe { Box::from_raw(node.0.as_ptr()) });
            return;
        }
        if !self.store.reuse {
            self.store
                .shared_free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(node.0);
            return;
        }
        match self.free.iter_mut().find(|(b, _)| *b == bytes) {
            Some((_, list)) => list.push(node.0),
            None => self.free.push((bytes, vec![node.0])),
        }
    }

    /// Returns a node taken but not pushed (an attempt that failed after `take`).
    pub fn put_back(&mut self, node: VersionNode<V>) {
        // Undo `give`'s decrement: the node was never linked.
        // Relaxed: a statistic written by this worker only.
        self.store.live[self.id].fetch_add(1, Ordering::Relaxed);
        self.give(node);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_nodes::*;
    use super::*;
    use crate::storage::versions::VersionChain;

    #[test]
    fn the_cap_is_an_error_not_an_allocation() {
        let node = Version::<()>::node_bytes(8);
        let store: VersionStore<()> = VersionStore::new(1, 3 * node, false);
        let mut pool = store.pool(0);
        let chain = VersionChain::default();
        for ts in 1..=3 {
            push(&chain, &mut pool, ts, ts);
        }
        let err = pool.take(8).err().expect("past the cap");
        assert_eq!(err.live, 3);
        assert!(err.to_string().contains("--version-memory-mb"), "{err}");
        // Without reuse, collected nodes go back to the allocator: the cap has room again, and
        // the next take allocates anew.
        assert_eq!(chain.collect(4, 4, &mut pool), 3);
        assert_eq!(store.stats().version_bytes, 0);
        let taken = pool.take(8).expect("room again");
        assert_eq!(store.stats().allocated_versions, 4);
        assert_eq!(store.stats().version_bytes, node);
        // A node taken and not pushed goes back, or it leaks (AddressSanitizer's leak check).
        pool.put_back(taken);
        // A type-stable store (AggressiveGC) keeps them: a freed node serves the next take.
        let stable: VersionStore<()> = VersionStore::new(1, 3 * node, false).type_stable();
        let mut pool = stable.pool(0);
        let chain = VersionChain::default();
        for ts in 1..=3 {
            push(&chain, &mut pool, ts, ts);
        }
        assert_eq!(chain.collect(4, 4, &mut pool), 3);
        let taken = pool.take(8).expect("a freed node");
        assert_eq!(stable.stats().allocated_versions, 3);
        pool.put_back(taken);
        // With reuse, a pool reserves a whole batch: a cap below it fails at once.
        let small: VersionStore<()> = VersionStore::new(1, node, true);
        assert!(small.pool(0).reserve(8).is_err());
    }
}
