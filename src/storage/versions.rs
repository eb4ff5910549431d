//! Version storage shared by every multi-version protocol (SI, ERMIA, MVTO, Cicada).
//!
//! A record keeps its newest version inline, in the table's payload slot, exactly where a
//! single-version protocol keeps its only one; older versions hang off the record in a chain,
//! newest first:
//!
//! ```text
//!  record (table slot)                          Version<V> nodes (from the workers' pools)
//! +----------------------------------+        +------------------+     +------------------+
//! | protocol meta: word | chain head ------->  | ts | meta V |next ----> | ts | meta V |next ---> null
//! +----------------------------------+        | payload words    |     | payload words    |
//! | payload: the newest version      |        +------------------+     +------------------+
//! +----------------------------------+
//! ```
//!
//! The protocol owns the record header (its metadata type embeds a [`VersionChain`]) and the
//! per-version metadata `V` (ERMIA's stamps, say); storage owns the nodes, their timestamps, their
//! payload copies, the pools they come from, the bound on their memory and their reclamation.
//! A node's `ts` is the timestamp at which its version became visible (its writer's commit
//! timestamp); versions in a chain have strictly decreasing timestamps, all below the inline one.
//!
//! # Pools and the memory bound
//!
//! Nodes come from per-worker [`VersionPool`]s and go back to the pool of the worker that
//! reclaims them, so a warmed-up worker allocates nothing. Memory is only ever taken from the
//! allocator by [`VersionStore`], which counts every byte against a cap: past the cap the run stops
//! with [`VersionMemoryExhausted`]'s message (see [`VersionPool::take`]) instead of growing until
//! the kernel kills the process. With `AssertiveVersionReuse` (CCBench Table 1) a pool reserves
//! [`RESERVE`] nodes at a time for its worker alone and keeps what collection frees; without it
//! (CCBench's baseline), every node is taken from the process's general allocator when needed
//! and given back to it when collected, as CCBench's `new Version` / `delete` do (CCBench links
//! mimalloc; txbench uses Rust's global allocator, the system's malloc), so the on/off
//! comparison measures what reuse saves over a general allocator. A store whose readers may
//! read a node after its collection (AggressiveGC's validated reads, [`VersionStore::type_stable`])
//! never gives nodes back during a run: without reuse its nodes go through one shared, locked
//! free list instead.
//!
//! # Who owns a node
//!
//! Each node is its own allocation, owned by exactly one place at a time: a pool's free list (a
//! pool hands its free nodes to the store when dropped), the store's shared free list, a
//! [`VersionNode`] handle between take and push, or the chain that links it. The store frees the
//! free nodes when it is dropped; a chain frees the nodes it links when it is dropped, that is,
//! with the record metadata that embeds it (a table dropped or a retired chunk reset after its
//! grace period). So a database can outlive the protocol that wrote its chains and be run
//! again by another protocol instance: the chains still own live nodes (what freed them with the
//! store before was a use-after-free reachable from safe code; `tests/version_ownership.rs`).
//! No node is freed while a run can reach it: chains are dropped only with their records, and
//! free nodes only with the store, after every worker of the run.
//!
//! # Reclamation: the watermark
//!
//! A reader with snapshot `s` wants the newest version with `ts <= s`. [`Watermark`] tracks the
//! smallest snapshot of any active transaction (`wm`); every active reader has `s >= wm`. A
//! writer that holds a record exclusively may then free every chain node older than the first
//! node `K` with `ts <= wm` ([`VersionChain::collect`]): a reader walks the chain newest first and
//! stops at the first node with `ts <= s`, which is `K` or a node before it, so it never touches a
//! node past `K`; nor does it read `K.next`. When the inline version itself has `ts <= wm`, no
//! active reader enters the chain at all (a reader enters it only after seeing an inline `ts > s`,
//! and a record's inline `ts` only grows), so the whole chain can go. The watermark is refreshed at
//! most every `--gc-interval-us` (CCBench's RapidGC); a stale watermark is only smaller, which is
//! safe.
//!
//! # Deferred collection (RapidGC's queue) and the collector bit
//!
//! A writer collects with the watermark of its commit, which is below its own snapshot, so the
//! version it just pushed always stays. Freed only at the record's next write, that node is by
//! then cold (a cache miss per write, a fifth of SI's time at 1 thread), and every record written
//! once keeps a version for the rest of the run. So each committer also queues the records it
//! installed ([`GcQueue`]) and, at a later transaction start, collects those the watermark has
//! passed ([`VersionChain::collect_deferred`]) without holding the record: usually the whole
//! chain, microseconds after it was written. Collectors exclude each other with bit 0 of the
//! chain's head pointer (a writer's collect that finds it taken leaves the work to the holder);
//! pushes never wait for it (they CAS the head and keep the bit). Only the record's writer pushes,
//! so a deferred collector may empty the whole chain only when it sees the record unlocked with
//! an inline version at or below the watermark and no push came in since it took the bit.
//!
use super::Payload;
use super::grace::Holds;
use crate::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering, fence};
use crossbeam_utils::CachePadded;
use serde::Serialize;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Nodes a pool reserves at a time with `AssertiveVersionReuse` on.
pub const RESERVE: usize = 64;

/// One older version of a record: its timestamp, the protocol's per-version metadata, and a copy
/// of the payload (check-mode stamp included, so a version keeps the stamp it was written with).
pub struct Version<V> {
    /// When the version became visible: its writer's commit timestamp. Written by the writer that
    /// owns the node before [`VersionChain::push`] publishes it.
    ts: AtomicU64,
    /// Protocol-owned per-version metadata.
    pub meta: V,
    next: AtomicPtr<Version<V>>,
    /// Bumped every time the node leaves a chain (before it can be reused): lets AggressiveGC's
    /// readers detect that a node they reached was reclaimed under them (a seqlock on the node;
    /// [`VersionChain::read_validated`]).
    generation: AtomicU64,
    words: Box<[AtomicU64]>,
    bytes: usize,
}

impl<V> Version<V> {
    /// The version's timestamp.
    #[inline]
    pub fn ts(&self) -> u64 {
        // Relaxed: the node was published by a Release store of the pointer the reader reached
        // it through (Acquire), which orders this value; it does not change while reachable.
        self.ts.load(Ordering::Relaxed)
    }

    /// The version's payload (row and, in check mode, its stamp).
    #[inline]
    pub fn payload(&self) -> Payload<'_> {
        Payload::new(&self.words, self.bytes)
    }

    /// Bytes one node with a payload of `bytes` occupies.
    pub fn node_bytes(bytes: usize) -> usize {
        std::mem::size_of::<Self>() + bytes.div_ceil(8) * 8
    }
}

/// The head of a record's chain of older versions; lives in the protocol's record metadata and
/// owns the nodes it links (module docs, "Who owns a node").
pub struct VersionChain<V> {
    head: AtomicPtr<Version<V>>,
    /// The chain owns its nodes: it is `Send` / `Sync` only when they are.
    _nodes: PhantomData<Box<Version<V>>>,
}

impl<V> Default for VersionChain<V> {
    fn default() -> Self {
        VersionChain {
            head: AtomicPtr::new(std::ptr::null_mut()),
            _nodes: PhantomData,
        }
    }
}

impl<V> Drop for VersionChain<V> {
    fn drop(&mut self) {
        // Relaxed (every load): `&mut self` proves no other thread uses the chain any more.
        let mut p = untagged(self.head.load(Ordering::Relaxed));
        while let Some(node) = NonNull::new(p) {
            // SAFETY: a node linked from this chain was leaked from a `Box` in
            // `VersionStore::allocate` and is owned by the chain (module docs); nothing else
            // frees it, and nothing reads it after the chain is gone. Freed once, here.
            let v = unsafe { Box::from_raw(node.as_ptr()) };
            p = v.next.load(Ordering::Relaxed);
        }
    }
}

impl<V> VersionChain<V> {
    /// The newest version in the chain with `ts <= snapshot`, if the chain holds one.
    ///
    /// # Safety
    ///
    /// The caller runs a transaction whose snapshot `snapshot` is registered with the
    /// [`Watermark`] that every concurrent [`collect`](Self::collect) of this chain uses (so the
    /// watermark is at most `snapshot`), and saw the record's inline version with a timestamp
    /// above `snapshot` before calling (module docs, "Reclamation"), or every collect of this
    /// chain passes `u64::MAX` as the inline timestamp ([`collect`](Self::collect)). The
    /// returned reference is
    /// valid until that transaction leaves the watermark.
    #[inline]
    pub unsafe fn find_visible(&self, snapshot: u64) -> Option<&Version<V>> {
        // Acquire: pairs with the Release in `push`, so the node's fields are initialised.
        let mut p = untagged(self.head.load(Ordering::Acquire));
        while let Some(node) = NonNull::new(p) {
            // SAFETY: nodes reachable from the head are live allocations the chain owns; by the
            // caller's contract no collect frees a node this walk reaches (module docs): every
            // node passed has `ts > snapshot >= watermark`, so it is before the kept node `K`.
            let v = unsafe { node.as_ref() };
            if v.ts() <= snapshot {
                return Some(v);
            }
            // Acquire: as for the head.
            p = v.next.load(Ordering::Acquire);
        }
        None
    }

    /// Whether the chain holds no version.
    pub fn is_empty(&self) -> bool {
        // Relaxed: a hint only (tests, statistics).
        untagged(self.head.load(Ordering::Relaxed)).is_null()
    }

    /// Puts `node`, already filled by [`VersionPool::take`]'s caller, at the head of the chain.
    /// The caller holds the record exclusively (no other push, and no collect other than a
    /// [`collect_deferred`](Self::collect_deferred), runs on this chain).
    #[inline]
    pub fn push(&self, node: VersionNode<V>, pool: &mut VersionPool<'_, V>) {
        let p = node.0.as_ptr();
        // SAFETY: the node came from a pool and is owned by the caller until published here.
        let v = unsafe { &*p };
        // Relaxed: the CAS below publishes; a deferred collector may only set or clear the
        // collector bit meanwhile (and detach the whole chain, see `collect_deferred`), which
        // fails the CAS and retries.
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // Relaxed: published by the Release below.
            v.next.store(untagged(head), Ordering::Relaxed);
            let tagged = p.map_addr(|a| a | (head.addr() & COLLECTING));
            // Release: a reader that reaches the node (Acquire) sees its ts, meta and payload.
            match self.head.compare_exchange_weak(
                head,
                tagged,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => head = now,
            }
        }
        pool.linked();
    }

    /// Takes the collector bit (one collector at a time); the untagged head, or `None` when
    /// another collector holds it.
    #[inline]
    fn begin_collecting(&self) -> Option<*mut Version<V>> {
        // Relaxed, then Acquire on success: the walk that follows sees every pushed node's
        // fields (the pushes' Release), and, for `collect_deferred`, the record-word store that
        // preceded the last push (its writer locked before pushing).
        let head = self.head.load(Ordering::Relaxed);
        if head.addr() & COLLECTING != 0 {
            return None;
        }
        self.head
            .compare_exchange(
                head,
                head.map_addr(|a| a | COLLECTING),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .ok()
    }

    /// Gives the collector bit back (pushes may have moved the head meanwhile).
    #[inline]
    fn end_collecting(&self) {
        // Release: a later collector's Acquire sees the links this one cut. fetch_update: a
        // concurrent push may change the head between the load and the store.
        let _ = self
            .head
            .fetch_update(Ordering::Release, Ordering::Relaxed, |p| Some(untagged(p)));
    }

    /// Detaches the nodes past the first node `K` at or below `watermark` (module docs),
    /// starting from `head`; the detached list. The caller holds the collector bit.
    fn detach_below(head: *mut Version<V>, watermark: u64) -> *mut Version<V> {
        let mut p = head;
        loop {
            let Some(node) = NonNull::new(p) else {
                return std::ptr::null_mut();
            };
            // SAFETY: a live node of this chain; only the collector-bit holder frees nodes.
            let v = unsafe { node.as_ref() };
            if v.ts() <= watermark {
                // Relaxed: readers never read `K.next` (module docs).
                return v.next.swap(std::ptr::null_mut(), Ordering::Relaxed);
            }
            // Relaxed: links below the head change only under the collector bit, which we hold.
            p = v.next.load(Ordering::Relaxed);
        }
    }

    /// Frees the nodes no active reader can reach, given that the record's inline version has
    /// timestamp `inline_ts` and every active snapshot is at least `watermark` (module docs).
    /// The caller holds the record exclusively. Returns the nodes freed (0 when a deferred
    /// collector holds the chain: it collects instead).
    /// A protocol whose chain also holds a copy of the newest version (Cicada with
    /// BestEffortInlining off: readers always walk the chain) passes `u64::MAX` as `inline_ts`:
    /// the first node at or below the watermark is then always kept, so every snapshot at or
    /// above the watermark finds its version in the chain.
    pub fn collect(&self, inline_ts: u64, watermark: u64, pool: &mut VersionPool<'_, V>) -> usize {
        let Some(head) = self.begin_collecting() else {
            return 0;
        };
        let detached = if inline_ts <= watermark {
            // Relaxed: no reader enters the chain any more (module docs), and the caller is the
            // only pusher; the nodes go back to a pool, their reuse ordered by the next push's
            // Release. The bit stays set until `end_collecting`.
            self.head.store(
                std::ptr::null_mut::<Version<V>>().map_addr(|_| COLLECTING),
                Ordering::Relaxed,
            );
            head
        } else {
            Self::detach_below(head, watermark)
        };
        self.end_collecting();
        self.free_from(detached, pool)
    }

    /// RapidGC's deferred pass ([`GcQueue`]): collects the chain without holding the record, at
    /// most one collector at a time (the chain's collector bit; when another holds it, nothing
    /// happens). `inline_ts` is called after the bit is taken and returns the record's inline
    /// timestamp if the record is unlocked, `None` if a writer holds it (a writer pushes only
    /// while it holds the record, after locking it).
    ///
    /// The whole chain goes only when the record is unlocked with an inline timestamp at or
    /// below the watermark (as in [`collect`](Self::collect)) and no push came in between (the
    /// detaching CAS fails otherwise: a writer that pushed afterwards links its node to an
    /// empty chain, which is right, since its node holds the inline version that was at or below
    /// the watermark). A writer that locked before the bit was taken is seen locked: it locked
    /// before its push, whose Release the bit's Acquire follows, or it has not pushed yet, and
    /// then the CAS fails if it pushes before the detach. Otherwise the nodes past the first
    /// node at or below the watermark go, which is safe whatever the record holds (module docs).
    pub fn collect_deferred(
        &self,
        inline_ts: impl FnOnce() -> Option<u64>,
        watermark: u64,
        pool: &mut VersionPool<'_, V>,
    ) -> usize {
        let Some(head) = self.begin_collecting() else {
            return 0;
        };
        let mut detached = std::ptr::null_mut();
        let mut whole = false;
        if inline_ts().is_some_and(|ts| ts <= watermark) {
            let tagged = head.map_addr(|a| a | COLLECTING);
            let empty = std::ptr::null_mut::<Version<V>>().map_addr(|_| COLLECTING);
            // Relaxed: as in `collect`; a failure means a push came in, and the chain is
            // collected below the watermark instead.
            whole = self
                .head
                .compare_exchange(tagged, empty, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
            if whole {
                detached = head;
            }
        }
        if !whole {
            // Acquire: nodes pushed since the bit was taken are initialised.
            detached = Self::detach_below(untagged(self.head.load(Ordering::Acquire)), watermark);
        }
        self.end_collecting();
        self.free_from(detached, pool)
    }

    /// AggressiveGC: frees every node past the newest `keep`, whether or not an active reader
    /// still needs it. Readers of such a chain must use [`read_validated`](Self::read_validated),
    /// never [`find_visible`](Self::find_visible). The caller holds the record exclusively.
    /// Returns 0 when a deferred collector holds the chain.
    pub fn collect_aggressively(&self, keep: usize, pool: &mut VersionPool<'_, V>) -> usize {
        let Some(head) = self.begin_collecting() else {
            return 0;
        };
        let detached = if keep == 0 {
            // Relaxed: as in `collect`; validated readers re-check the link.
            self.head.store(
                std::ptr::null_mut::<Version<V>>().map_addr(|_| COLLECTING),
                Ordering::Relaxed,
            );
            head
        } else {
            let mut node = NonNull::new(head);
            for _ in 1..keep {
                // SAFETY: a live node of this chain; only the collector-bit holder frees nodes.
                // Relaxed: links below the head change only under the collector bit.
                node = node
                    .and_then(|n| NonNull::new(unsafe { n.as_ref() }.next.load(Ordering::Relaxed)));
            }
            match node {
                // SAFETY: as above.
                // Relaxed: validated readers re-check the link after reading the node's
                // generation.
                Some(n) => unsafe { n.as_ref() }
                    .next
                    .swap(std::ptr::null_mut(), Ordering::Relaxed),
                None => std::ptr::null_mut(),
            }
        };
        self.end_collecting();
        self.free_from(detached, pool)
    }

    /// AggressiveGC keeping non-contiguous versions (CCBench 7.3): keeps the newest `keep` nodes
    /// and the node visible at `snapshot` (the newest with `ts <= snapshot`), and frees every
    /// other node, those between the two groups included, whether or not an active reader still
    /// needs them. Readers must use [`read_validated_until`](Self::read_validated_until) with
    /// the nodes' replacement timestamps: a reader whose version was removed from between two
    /// kept ones would otherwise take the older kept one for it. The caller holds the record
    /// exclusively. Returns 0 when a deferred collector holds the chain.
    pub fn collect_keeping(
        &self,
        keep: usize,
        snapshot: u64,
        pool: &mut VersionPool<'_, V>,
    ) -> usize {
        let Some(head) = self.begin_collecting() else {
            return 0;
        };
        // The last of the newest `keep` nodes (None: keep none of them), and the first node
        // visible at `snapshot` (K). Relaxed (every link load): links change only under the
        // collector bit, which we hold.
        let mut last_kept: Option<NonNull<Version<V>>> = None;
        let mut p = NonNull::new(head);
        for _ in 0..keep {
            let Some(n) = p else { break };
            // SAFETY: a live node of this chain; only the collector-bit holder frees nodes.
            let v = unsafe { n.as_ref() };
            if v.ts() <= snapshot {
                break;
            }
            last_kept = Some(n);
            p = NonNull::new(v.next.load(Ordering::Relaxed));
        }
        let gap_start = p;
        let mut gap_end: Option<NonNull<Version<V>>> = None;
        while let Some(n) = p {
            // SAFETY: as above.
            let v = unsafe { n.as_ref() };
            if v.ts() <= snapshot {
                break;
            }
            gap_end = Some(n);
            p = NonNull::new(v.next.load(Ordering::Relaxed));
        }
        let k = p.map_or(std::ptr::null_mut(), NonNull::as_ptr);
        // Unlink the gap (the nodes after the kept newest ones and before K): the link into it
        // now points at K. Relaxed: validated readers re-check each link after reading the
        // generation of the node it led to (`read_validated_until`), and `free_from`'s Release
        // bump orders this unlink before the node's reuse.
        let gap = match gap_end {
            None => std::ptr::null_mut(),
            Some(end) => {
                let start = gap_start.expect("a gap has a first node").as_ptr();
                match last_kept {
                    // SAFETY: as above.
                    Some(n) => unsafe { n.as_ref() }.next.store(k, Ordering::Relaxed),
                    // The gap starts at the head: keep the collector bit we hold.
                    None => self
                        .head
                        .store(k.map_addr(|a| a | COLLECTING), Ordering::Relaxed),
                }
                // SAFETY: as above; the gap is unreachable from the chain now and ours.
                unsafe { end.as_ref() }
                    .next
                    .store(std::ptr::null_mut(), Ordering::Relaxed);
                start
            }
        };
        // Below K: K itself stays.
        let below = match p {
            // SAFETY: as above. Relaxed: as for the gap.
            Some(n) => unsafe { n.as_ref() }
                .next
                .swap(std::ptr::null_mut(), Ordering::Relaxed),
            None => std::ptr::null_mut(),
        };
        self.end_collecting();
        self.free_from(gap, pool) + self.free_from(below, pool)
    }

    /// Copies into `out` the newest version with `ts <= snapshot` and returns its timestamp, on a
    /// chain that AggressiveGC collects under its readers: `Ok(None)` when no such version is
    /// left, `Err(VersionCollected)` when a node was reclaimed while this walk used it (the walk
    /// cannot tell then what the chain held).
    ///
    /// Safe without the watermark contract: no node is returned to the allocator during a run
    /// (module docs, "Who owns a node") and every field a walk reads is atomic (or immutable
    /// since allocation), so reading a
    /// reclaimed node reads well-defined but meaningless values, which the generation checks
    /// reject: each node is read between two loads of its generation (a seqlock), and each link
    /// followed is re-read after the node's generation was, while the node holding the link is
    /// still of the generation the walk read.
    pub fn read_validated(
        &self,
        snapshot: u64,
        out: &mut [u8],
    ) -> Result<Option<u64>, VersionCollected> {
        self.read_validated_until(snapshot, out, |_| u64::MAX)
    }

    /// [`read_validated`](Self::read_validated) on a chain whose collection may also remove
    /// nodes between kept ones ([`collect_keeping`](Self::collect_keeping)): `replaced_at` gives
    /// from a node's metadata the timestamp of the version that replaced it (its writer's
    /// commit), and a node found at or below `snapshot` counts only if `snapshot` is below that,
    /// i.e. if no version the snapshot should see was removed above it; otherwise the walk
    /// answers `Err(VersionCollected)`. `replaced_at` reads atomics only (it runs inside the
    /// node's seqlock window).
    pub fn read_validated_until(
        &self,
        snapshot: u64,
        out: &mut [u8],
        replaced_at: impl Fn(&V) -> u64,
    ) -> Result<Option<u64>, VersionCollected> {
        /// Longest walk before giving up (a walk through reclaimed nodes could otherwise loop).
        const MAX_HOPS: usize = 1 << 16;
        let mut link = &self.head;
        let mut owner: Option<(&Version<V>, u64)> = None;
        // Acquire (every link load): pairs with `push`'s Release. Only the head carries the
        // collector bit; masking the other links changes nothing.
        let mut p = untagged(link.load(Ordering::Acquire));
        for _ in 0..MAX_HOPS {
            let Some(node) = NonNull::new(p) else {
                return Ok(None);
            };
            // SAFETY: `p` points into a node a store allocated, freed only with its chain or its
            // store, after the run (module docs); every field read below is atomic or immutable.
            let v = unsafe { node.as_ref() };
            // Acquire: the seqlock reader side. Pairs with the Release bump in `free_from`: a
            // reader that sees a node's new generation sees the unlink before it, so the link
            // re-check below fails; and with the Release fence after the bump (the re-check).
            let generation = v.generation.load(Ordering::Acquire);
            if untagged(link.load(Ordering::Acquire)) != p
                || owner.is_some_and(|(o, g)| o.generation.load(Ordering::Acquire) != g)
            {
                return Err(VersionCollected);
            }
            let ts = v.ts();
            let next = v.next.load(Ordering::Acquire);
            let found = ts <= snapshot;
            let mut current = true;
            if found {
                v.payload().load(out);
                current = snapshot < replaced_at(&v.meta);
            }
            // Acquire fence, then the re-check: the reads above saw no reuse of the node.
            fence(Ordering::Acquire);
            if v.generation.load(Ordering::Relaxed) != generation {
                return Err(VersionCollected);
            }
            if found {
                // A version between this one and the snapshot was collected.
                return if current {
                    Ok(Some(ts))
                } else {
                    Err(VersionCollected)
                };
            }
            link = &v.next;
            owner = Some((v, generation));
            p = next;
        }
        Err(VersionCollected)
    }

    fn free_from(&self, mut p: *mut Version<V>, pool: &mut VersionPool<'_, V>) -> usize {
        let mut freed = 0;
        while let Some(node) = NonNull::new(p) {
            // SAFETY: the detached nodes are unreachable from the chain and owned by the caller.
            let v = unsafe { node.as_ref() };
            p = v.next.load(Ordering::Relaxed);
            // Release bump: the unlink that detached the node (the swap of its predecessor's
            // link or the head store, both earlier in this thread) is ordered before it, so a
            // validated reader whose Acquire load sees the new generation re-reads the link
            // without the node and gives up (`read_validated`). Without it the reader could take
            // the new generation with the old link, then read the node's reuse as valid.
            v.generation.fetch_add(1, Ordering::Release);
            // Release fence: the seqlock writer side; the bump is ordered before every later
            // write to the node (its reuse), so a validated reader that saw any of those writes
            // sees the bump (`read_validated`).
            fence(Ordering::Release);
            pool.give(VersionNode(node));
            freed += 1;
        }
        freed
    }
}

/// The collector bit of a chain's head pointer (nodes are 8-byte aligned, so bit 0 of a node
/// address is free): set while one collector detaches nodes ([`VersionChain::collect`] and its
/// kin), so a writer's collect and a deferred one never free the same nodes.
const COLLECTING: usize = 1;

/// `p` without the collector bit.
#[inline]
fn untagged<V>(p: *mut Version<V>) -> *mut Version<V> {
    p.map_addr(|a| a & !COLLECTING)
}

/// A version a reader needed was reclaimed under it (AggressiveGC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionCollected;

/// A node owned by one worker between [`VersionPool::take`] and [`VersionChain::push`].
pub struct VersionNode<V>(NonNull<Version<V>>);

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
    fn linked(&self) {
        // Relaxed: a statistic written by this worker only.
        self.store.live[self.id].fetch_add(1, Ordering::Relaxed);
    }

    /// Returns a node that left its chain.
    #[inline]
    fn give(&mut self, node: VersionNode<V>) {
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

/// RapidGC's per-worker queue of records whose chains to collect once the watermark passes the
/// version a commit installed (Cicada's GC queue; CCBench section 3.2).
///
/// A record's writer collects its chain while it holds the record ([`VersionChain::collect`]),
/// but with the watermark of that moment, which is below its own snapshot: the version it just
/// pushed stays. Left there, that node is freed only when the record is written again, by then
/// usually long out of the cache, and a record written once keeps one older version for the rest
/// of the run. So a committer also queues each record it installed with its commit timestamp
/// `c`, and the worker collects the queued records whose `c` the watermark has passed
/// ([`VersionChain::collect_deferred`]): every active snapshot then sees the inline version, and
/// the whole chain goes, a few microseconds after it was written, while it is still in cache.
/// A worker's commit timestamps only grow, so the queue is in timestamp order.
///
/// The queue has no cap of its own: an entry waits for the watermark to pass the version its
/// commit installed, and until then that version cannot be collected, so the entries waiting
/// are at most the live versions, which the version cap bounds (an entry costs 16 bytes, a
/// version at least its node). An earlier cap of 65,536 entries dropped the oldest entry when
/// full, and its record kept its older versions until written again: while a long transaction
/// held the watermark back for 100 ms (CCBench's figure 14), the short workers' commits
/// overflowed it every pause, and live versions climbed through the run (to 300-580k in 0.7 s,
/// never back to the floor) where collection should return them to a few thousand.
///
/// The queued references outlive the transaction that found their records, so in a database
/// whose tables retire chunks, the worker's grace-period slot must keep covering them after its
/// commit: `holds` records the epoch each was found at (`storage::grace`, "Records kept past a
/// commit"), and the transaction handle announces the oldest ([`GcQueue::holds`]).
pub struct GcQueue<T> {
    items: std::collections::VecDeque<(u64, T)>,
    /// The grace-period epochs the items were found at, in the same order.
    holds: Holds,
}

impl<T> Default for GcQueue<T> {
    fn default() -> Self {
        GcQueue {
            items: std::collections::VecDeque::new(),
            holds: Holds::default(),
        }
    }
}

impl<T> GcQueue<T> {
    /// The grace-period epochs of the queued references: the transaction handle tells it the
    /// epoch each transaction runs at and announces the oldest one kept.
    pub fn holds(&mut self) -> &mut Holds {
        &mut self.holds
    }
}

impl<T: Copy> GcQueue<T> {
    /// Queues `item`, whose version with timestamp `ts` was just installed.
    #[inline]
    pub fn defer(&mut self, ts: u64, item: T) {
        // Grows (amortised doubling) only while a held-back watermark lets entries pile up; a
        // warm queue reuses its buffer.
        self.items.push_back((ts, item));
        self.holds.keep();
    }

    /// The oldest queued item whose timestamp `watermark` has passed, dequeued.
    #[inline]
    pub fn pop_ready(&mut self, watermark: u64) -> Option<T> {
        match self.items.front() {
            Some(&(ts, item)) if ts <= watermark => {
                self.items.pop_front();
                // The caller's use of `item` comes before its next `hold`/`unpin` (the handle's
                // commit), which is what publishes the drop to reclaimers.
                self.holds.drop_oldest();
                Some(item)
            }
            _ => None,
        }
    }

    /// Entries queued.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The smallest snapshot any active transaction holds, refreshed at most every interval
/// (RapidGC; module docs, "Reclamation").
///
/// The protocol's clock stays a `std` atomic under `--cfg loom` (no model uses the watermark).
///
/// Shared words, who writes them, who reads them: `active[i]` is written by worker `i` at begin
/// and end, read by whoever refreshes; `cached` is written by the refreshing worker (any), read by
/// every writer that collects.
pub struct Watermark {
    active: Box<[CachePadded<AtomicU64>]>,
    cached: CachePadded<AtomicU64>,
    interval: Duration,
}

/// An `active` slot of a worker outside any transaction.
const IDLE: u64 = u64::MAX;

impl Watermark {
    /// A watermark over `workers` workers, refreshed at most every `interval`.
    pub fn new(workers: usize, interval: Duration) -> Self {
        Watermark {
            active: (0..workers.max(1))
                .map(|_| CachePadded::new(AtomicU64::new(IDLE)))
                .collect(),
            cached: CachePadded::new(AtomicU64::new(0)),
            interval,
        }
    }

    /// The refresh interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Worker `id` starts a transaction: registers, then takes its snapshot from `clock`.
    ///
    /// The slot gets a clock value read before the slot store and the snapshot one read after it,
    /// all `SeqCst` (as `refresh`'s loads): a refresh that misses the slot store read the clock
    /// before the snapshot was read, so its watermark is at most the snapshot; a refresh that sees
    /// it uses a value at most the snapshot. Either way every active snapshot stays `>= wm`.
    #[inline]
    pub fn enter(&self, id: usize, clock: &std::sync::atomic::AtomicU64) -> u64 {
        // SeqCst (all three): the argument above needs one total order over the clock loads and
        // the slot's store and loads.
        let provisional = clock.load(Ordering::SeqCst);
        self.active[id].store(provisional, Ordering::SeqCst);
        clock.load(Ordering::SeqCst)
    }

    /// Worker `id` starts a transaction whose timestamp it draws from `clock` (`fetch_add`, a
    /// unique timestamp, as timestamp ordering needs): registers a clock value first, as
    /// [`enter`](Self::enter) does, so the same argument keeps every active timestamp `>= wm`.
    #[inline]
    pub fn enter_unique(&self, id: usize, clock: &std::sync::atomic::AtomicU64) -> u64 {
        // SeqCst (all three): see `enter`.
        let provisional = clock.load(Ordering::SeqCst);
        self.active[id].store(provisional, Ordering::SeqCst);
        clock.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Worker `id` starts a transaction on a clock that is not one shared word (Cicada's
    /// loosely synchronised per-worker clocks): `provisional` is a value of the clock read before
    /// this call, and the caller takes its timestamp from the clock after it returns, at least
    /// `provisional`. Refreshes must then use [`refresh_at`](Self::refresh_at) with a clock value
    /// read before they look at the slots. The argument is `enter`'s with the clock reads replaced
    /// by reads of a monotonic time source, ordered by the `SeqCst` fences here and in
    /// `refresh_at`.
    #[inline]
    pub fn enter_at(&self, id: usize, provisional: u64) {
        // SeqCst store and fence: the slot store is ordered before the caller's later clock read,
        // and against `refresh_at`'s fence (see above).
        self.active[id].store(provisional, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// [`maybe_refresh`](Self::maybe_refresh) for [`enter_at`](Self::enter_at)'s clocks: `now`
    /// reads the clock.
    #[inline]
    pub fn maybe_refresh_at(&self, now: impl FnOnce() -> u64, last: Instant) -> Instant {
        if self.interval.is_zero() {
            self.refresh_at(now());
            return last;
        }
        let t = Instant::now();
        if t.duration_since(last) < self.interval {
            return last;
        }
        self.refresh_at(now());
        t
    }

    /// Recomputes the watermark from `now`, a clock value read before this call, and the
    /// active slots ([`enter_at`](Self::enter_at)).
    pub fn refresh_at(&self, now: u64) {
        // SeqCst fence: the clock read before it precedes the slot loads (see `enter_at`).
        fence(Ordering::SeqCst);
        let mut wm = now;
        for slot in self.active.iter() {
            // SeqCst: see `enter_at`.
            wm = wm.min(slot.load(Ordering::SeqCst));
        }
        // Release: as in `refresh`.
        self.cached.fetch_max(wm, Ordering::Release);
    }

    /// Worker `id` left its transaction (it dereferences no version any more).
    #[inline]
    pub fn leave(&self, id: usize) {
        // Release: the worker's reads of versions happen before a refresh that sees it idle.
        self.active[id].store(IDLE, Ordering::Release);
    }

    /// The last computed watermark.
    #[inline]
    pub fn current(&self) -> u64 {
        // Acquire: pairs with `refresh`'s Release; the value itself is all that matters.
        self.cached.load(Ordering::Acquire)
    }

    /// Recomputes the watermark if `last` (the caller's last refresh) is at least an interval
    /// ago; returns the time of the refresh to remember.
    #[inline]
    pub fn maybe_refresh(&self, clock: &std::sync::atomic::AtomicU64, last: Instant) -> Instant {
        if self.interval.is_zero() {
            self.refresh(clock);
            return last;
        }
        let now = Instant::now();
        if now.duration_since(last) < self.interval {
            return last;
        }
        self.refresh(clock);
        now
    }

    /// Recomputes the watermark now: the clock, then the minimum of the active slots.
    pub fn refresh(&self, clock: &std::sync::atomic::AtomicU64) {
        // SeqCst: see `enter`.
        let mut wm = clock.load(Ordering::SeqCst);
        for slot in self.active.iter() {
            wm = wm.min(slot.load(Ordering::SeqCst));
        }
        // Release: publishes the value (no data depends on it); fetch_max keeps it monotone
        // when two workers refresh at once (both values are safe, the larger is fresher).
        self.cached.fetch_max(wm, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload_of(words: &[AtomicU64]) -> Payload<'_> {
        Payload::new(words, words.len() * 8)
    }

    fn push(chain: &VersionChain<()>, pool: &mut VersionPool<'_, ()>, ts: u64, value: u64) {
        let src = [AtomicU64::new(value)];
        let mut node = pool.take(8).unwrap();
        node.fill(ts, payload_of(&src), &mut [0u8; 8]);
        chain.push(node, pool);
    }

    fn value(v: &Version<()>) -> u64 {
        v.payload().word(0)
    }

    #[test]
    fn finds_the_newest_visible_version_and_collects_below_the_watermark() {
        let store: VersionStore<()> = VersionStore::new(1, 1 << 20, true);
        let mut pool = store.pool(0);
        let chain = VersionChain::default();
        for ts in [1u64, 5, 9] {
            push(&chain, &mut pool, ts, ts * 10);
        }
        // SAFETY: single-threaded test, nothing collects during the lookups.
        unsafe {
            assert_eq!(chain.find_visible(9).map(value), Some(90));
            assert_eq!(chain.find_visible(7).map(value), Some(50));
            assert_eq!(chain.find_visible(1).map(value), Some(10));
            assert!(chain.find_visible(0).is_none());
        }
        assert_eq!(store.stats().live_versions, 3);
        // Watermark 6: snapshots >= 6 stop at ts 5 at the latest; ts 1 goes.
        assert_eq!(chain.collect(12, 6, &mut pool), 1);
        // SAFETY: as above.
        unsafe {
            assert_eq!(chain.find_visible(6).map(value), Some(50));
        }
        assert_eq!(store.stats().live_versions, 2);
        // The inline version is below the watermark: nobody enters the chain any more.
        assert_eq!(chain.collect(12, 12, &mut pool), 2);
        assert!(chain.is_empty());
        assert_eq!(store.stats().live_versions, 0);
        // Freed nodes are reused: no new allocation past the first reserve.
        for ts in 20..20 + RESERVE as u64 {
            push(&chain, &mut pool, ts, ts);
        }
        assert_eq!(store.stats().allocated_versions, RESERVE);
    }

    #[test]
    fn deferred_collection_frees_the_whole_chain_only_when_no_writer_came_in() {
        let store: VersionStore<()> = VersionStore::new(1, 1 << 20, true);
        let mut pool = store.pool(0);
        let chain = VersionChain::default();
        for ts in [1u64, 5, 9] {
            push(&chain, &mut pool, ts, ts * 10);
        }
        // The record is held by a writer: only the nodes past the first at or below the
        // watermark go.
        assert_eq!(chain.collect_deferred(|| None, 4, &mut pool), 0);
        assert_eq!(
            chain.collect_deferred(|| None, 6, &mut pool),
            1,
            "ts 1 goes"
        );
        // Unlocked, inline version newer than the watermark: the same.
        assert_eq!(
            chain.collect_deferred(|| Some(12), 10, &mut pool),
            1,
            "ts 5 goes"
        );
        // A writer pushes after the collector took the chain: the chain is not emptied under it.
        let src = [AtomicU64::new(120)];
        let mut node = pool.take(8).unwrap();
        node.fill(12, payload_of(&src), &mut [0u8; 8]);
        let pushed = chain.collect_deferred(
            || {
                chain.push(node, &mut pool_for_closure(&store));
                Some(12)
            },
            12,
            &mut pool,
        );
        assert_eq!(pushed, 1, "only ts 9, past the pushed node at 12");
        // SAFETY: single-threaded test.
        unsafe {
            assert_eq!(chain.find_visible(12).map(value), Some(120));
        }
        // Unlocked, inline version at or below the watermark, no writer: everything goes, and the
        // collector bit is given back (a writer's collect works again).
        assert_eq!(chain.collect_deferred(|| Some(13), 13, &mut pool), 1);
        assert!(chain.is_empty());
        push(&chain, &mut pool, 13, 130);
        assert_eq!(chain.collect(20, 20, &mut pool), 1);
        assert!(chain.is_empty());
    }

    /// A second pool of `store` (a writer other than the collector).
    fn pool_for_closure(store: &VersionStore<()>) -> VersionPool<'_, ()> {
        store.pool(0)
    }

    #[test]
    fn the_gc_queue_hands_out_what_the_watermark_passed_in_order() {
        let mut q = GcQueue::default();
        for ts in [3u64, 7, 9] {
            q.defer(ts, ts);
        }
        assert_eq!(q.pop_ready(2), None);
        assert_eq!(q.pop_ready(8), Some(3));
        assert_eq!(q.pop_ready(8), Some(7));
        assert_eq!(q.pop_ready(8), None);
        assert_eq!(q.len(), 1);
        // Nothing is dropped however many wait (a dropped entry leaks its record's versions
        // until the record is written again).
        for ts in 10..10 + (1u64 << 17) {
            q.defer(ts, ts);
        }
        assert_eq!(q.len(), 1 + (1 << 17));
        assert_eq!(q.pop_ready(u64::MAX), Some(9));
        assert_eq!(q.pop_ready(u64::MAX), Some(10));
    }

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
        assert!(pool.take(8).is_ok());
        assert_eq!(store.stats().allocated_versions, 4);
        assert_eq!(store.stats().version_bytes, node);
        // A type-stable store (AggressiveGC) keeps them: a freed node serves the next take.
        let stable: VersionStore<()> = VersionStore::new(1, 3 * node, false).type_stable();
        let mut pool = stable.pool(0);
        let chain = VersionChain::default();
        for ts in 1..=3 {
            push(&chain, &mut pool, ts, ts);
        }
        assert_eq!(chain.collect(4, 4, &mut pool), 3);
        assert!(pool.take(8).is_ok());
        assert_eq!(stable.stats().allocated_versions, 3);
        // With reuse, a pool reserves a whole batch: a cap below it fails at once.
        let small: VersionStore<()> = VersionStore::new(1, node, true);
        assert!(small.pool(0).reserve(8).is_err());
    }

    #[test]
    fn aggressive_collection_is_seen_by_validated_reads() {
        let store: VersionStore<()> = VersionStore::new(1, 1 << 20, true);
        let mut pool = store.pool(0);
        let chain = VersionChain::default();
        for ts in [1u64, 5, 9] {
            push(&chain, &mut pool, ts, ts * 10);
        }
        let mut out = [0u8; 8];
        assert_eq!(chain.read_validated(6, &mut out), Ok(Some(5)));
        assert_eq!(u64::from_le_bytes(out), 50);
        assert_eq!(chain.collect_aggressively(1, &mut pool), 2);
        assert_eq!(chain.read_validated(6, &mut out), Ok(None), "ts 5 is gone");
        assert_eq!(chain.read_validated(9, &mut out), Ok(Some(9)));
        assert_eq!(store.stats().live_versions, 1);
    }

    #[test]
    fn non_contiguous_collection_keeps_the_newest_and_the_visible_version() {
        // Each node's metadata is the timestamp of the version that replaced it.
        let store: VersionStore<AtomicU64> = VersionStore::new(1, 1 << 20, true).type_stable();
        let mut pool = store.pool(0);
        let chain: VersionChain<AtomicU64> = VersionChain::default();
        let versions = [1u64, 3, 5, 7, 9];
        for (i, &ts) in versions.iter().enumerate() {
            let src = [AtomicU64::new(ts * 10)];
            let mut node = pool.take(8).unwrap();
            let replaced = versions.get(i + 1).copied().unwrap_or(11);
            node.fill(ts, payload_of(&src), &mut [0u8; 8])
                .store(replaced, Ordering::Relaxed);
            chain.push(node, &mut pool);
        }
        let mut out = [0u8; 8];
        let until = |m: &AtomicU64| m.load(Ordering::Relaxed);
        assert_eq!(chain.read_validated_until(6, &mut out, until), Ok(Some(5)));
        // Keep the newest (9) and the one visible at 4 (3); 7 and 5 go from between, 1 below.
        assert_eq!(chain.collect_keeping(1, 4, &mut pool), 3);
        assert_eq!(store.stats().live_versions, 2);
        assert_eq!(chain.read_validated_until(9, &mut out, until), Ok(Some(9)));
        assert_eq!(u64::from_le_bytes(out), 90);
        assert_eq!(chain.read_validated_until(4, &mut out, until), Ok(Some(3)));
        assert_eq!(u64::from_le_bytes(out), 30);
        // A snapshot that needed 5 or 7 finds them gone, not 3 in their place.
        assert_eq!(
            chain.read_validated_until(6, &mut out, until),
            Err(VersionCollected)
        );
        assert_eq!(
            chain.read_validated_until(8, &mut out, until),
            Err(VersionCollected)
        );
        // Without the replacement timestamps the walk would take 3 for them.
        assert_eq!(chain.read_validated(6, &mut out), Ok(Some(3)));
        assert_eq!(chain.read_validated_until(0, &mut out, until), Ok(None));
        // Keeping none of the newest: only the visible one stays.
        assert_eq!(chain.collect_keeping(0, 3, &mut pool), 1);
        assert_eq!(chain.read_validated_until(3, &mut out, until), Ok(Some(3)));
        assert_eq!(store.stats().live_versions, 1);
    }

    #[test]
    fn the_watermark_is_the_oldest_active_snapshot() {
        let clock = std::sync::atomic::AtomicU64::new(10);
        let wm = Watermark::new(2, Duration::ZERO);
        let s0 = wm.enter(0, &clock);
        clock.store(20, Ordering::SeqCst);
        let s1 = wm.enter(1, &clock);
        assert_eq!((s0, s1), (10, 20));
        wm.refresh(&clock);
        assert_eq!(wm.current(), 10);
        wm.leave(0);
        wm.refresh(&clock);
        assert_eq!(wm.current(), 20);
        wm.leave(1);
        clock.store(30, Ordering::SeqCst);
        let _ = wm.maybe_refresh(&clock, Instant::now());
        assert_eq!(wm.current(), 30, "interval 0 refreshes every time");
    }
}
