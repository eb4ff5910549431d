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
//! # Files
//!
//! `chain.rs` holds a record's chain and its collection, `store.rs` the store and the workers'
//! pools the nodes come from, `watermark.rs` the oldest active snapshot and `gc_queue.rs` the
//! deferred-collection queue.

mod chain;
mod gc_queue;
mod store;
mod watermark;

pub use chain::{VersionChain, VersionCollected};
pub use gc_queue::GcQueue;
pub use store::{VersionMemoryExhausted, VersionNode, VersionPool, VersionStats, VersionStore};
pub use watermark::Watermark;

use super::Payload;
use crate::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// Nodes a pool reserves at a time with `AssertiveVersionReuse` on.
pub const RESERVE: usize = 64;

/// One older version of a record: its timestamp, the protocol's per-version metadata, and a copy
/// of the payload (check-mode stamp included, so a version keeps the stamp it was written with).
pub struct Version<V> {
    /// When the version became visible: its writer's commit timestamp. Written by the writer that
    /// owns the node before [`VersionChain::push`] publishes it.
    pub(super) ts: AtomicU64,
    /// Protocol-owned per-version metadata.
    pub meta: V,
    pub(super) next: AtomicPtr<Version<V>>,
    /// Bumped every time the node leaves a chain (before it can be reused): lets AggressiveGC's
    /// readers detect that a node they reached was reclaimed under them (a seqlock on the node;
    /// [`VersionChain::read_validated`]).
    pub(super) generation: AtomicU64,
    pub(super) words: Box<[AtomicU64]>,
    pub(super) bytes: usize,
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

/// What the chain's and the store's tests build chains with.
#[cfg(test)]
mod test_nodes {
    use super::*;

    pub(super) fn payload_of(words: &[AtomicU64]) -> Payload<'_> {
        Payload::new(words, words.len() * 8)
    }

    pub(super) fn push(
        chain: &VersionChain<()>,
        pool: &mut VersionPool<'_, ()>,
        ts: u64,
        value: u64,
    ) {
        let src = [AtomicU64::new(value)];
        let mut node = pool.take(8).unwrap();
        node.fill(ts, payload_of(&src), &mut [0u8; 8]);
        chain.push(node, pool);
    }
}
