//! A record's chain of older versions: pushes, reads and collection (module docs, "Reclamation"
//! and "Deferred collection").

use super::{Version, VersionNode, VersionPool};
use crate::sync::atomic::{AtomicPtr, Ordering, fence};
use std::marker::PhantomData;
use std::ptr::NonNull;

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
    /// [`Watermark`](super::Watermark) that every concurrent [`collect`](Self::collect) of this chain uses (so the
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
        // fields (the pushes' Release), the links the previous collector cut (its
        // `end_collecting`'s Release; the walk's link loads are Relaxed, and a stale link leads
        // into nodes that collector freed and a pool may have reused: the loom model
        // `loom_version_chain_collector_bit_orders_the_next_collector` fails without it), and,
        // for `collect_deferred`, the record-word store that preceded the last push (its writer
        // locked before pushing).
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

    /// RapidGC's deferred pass ([`GcQueue`](super::GcQueue)): collects the chain without holding the record, at
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

#[cfg(test)]
mod tests {
    use super::super::test_nodes::*;
    use super::*;
    use crate::storage::versions::{RESERVE, VersionStore};
    use crate::sync::atomic::AtomicU64;

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
}
