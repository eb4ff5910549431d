//! What the multi-version protocols (SI, MVTO, ERMIA, Cicada) do alike with their version
//! chains, kept in one place: saving the version a commit replaces, reading a version off a
//! chain, RapidGC's deferred collection, and stopping the run when version memory runs out.
//! Each protocol's own rules (when a version is visible, what a commit validates, the record
//! word's orderings) stay in its file.

use super::si::LOCK;
use crate::storage::versions::{GcQueue, VersionChain, VersionPool};
use crate::storage::{Payload, Record};
use std::sync::atomic::{AtomicU64, Ordering};

/// Saves `payload` (a record's inline version, which the caller is about to overwrite) with
/// timestamp `ts` as the newest node of the record's `chain`: a node from `pool` (past the cap
/// the commit still gets its node, and the run stops: [`VersionPool::take_past_cap`]), filled
/// through `scratch`, its metadata handed to `init`
/// before the push publishes it. The caller holds the record exclusively
/// ([`VersionChain::push`]).
#[inline]
pub(crate) fn push_version<V: Default>(
    chain: &VersionChain<V>,
    pool: &mut VersionPool<'_, V>,
    scratch: &mut Vec<u8>,
    ts: u64,
    payload: Payload<'_>,
    init: impl FnOnce(&V),
) {
    let mut node = pool.take_past_cap(payload.len());
    scratch.resize(payload.len(), 0);
    init(node.fill(ts, payload, scratch));
    chain.push(node, pool);
}

/// Copies into `out` the version of `rec` that its `chain` holds for timestamp `at`, and
/// returns that version's timestamp. A missing version is a protocol bug: it panics naming the
/// record.
///
/// # Safety
///
/// `at` is registered with the watermark that every collect of `chain` uses, and the record's
/// inline version is newer than `at` ([`VersionChain::find_visible`]).
#[inline]
pub(crate) unsafe fn load_visible<V, M>(
    chain: &VersionChain<V>,
    rec: Record<'_, M>,
    at: u64,
    out: &mut [u8],
) -> u64 {
    // SAFETY: the caller's contract.
    let version = unsafe { chain.find_visible(at) };
    let version =
        version.unwrap_or_else(|| panic!("no version of record {:?} at timestamp {at}", rec.rid));
    version.payload().load(out);
    version.ts()
}

/// RapidGC's deferred pass, shared by the multi-version protocols whose record word is SI's
/// (`LOCK | timestamp of the inline version`): collects the chain of every queued record whose
/// installed version `watermark` has passed ([`GcQueue`], [`VersionChain::collect_deferred`]).
/// `parts` gives a queued record's word and chain.
#[inline]
pub(crate) fn collect_queued<'db, M, V: Default>(
    gc: &mut GcQueue<&'db M>,
    watermark: u64,
    pool: &mut VersionPool<'db, V>,
    parts: impl Fn(&'db M) -> (&'db AtomicU64, &'db VersionChain<V>),
) {
    while let Some(meta) = gc.pop_ready(watermark) {
        let (word, chain) = parts(meta);
        chain.collect_deferred(
            || {
                // Acquire: after the collector bit's Acquire (see `collect_deferred`); a writer
                // that pushed before the bit was taken is seen holding the record.
                let seen = word.load(Ordering::Acquire);
                (seen & LOCK == 0).then_some(seen)
            },
            watermark,
            pool,
        );
    }
}

/// Raises a record's read timestamp `rts` to `ts` if it is below, and only then: Cicada's read
/// timestamp update (Lim et al. 2017; CCBench's `readTimestampUpdateInValidation`) and
/// MVTO's read registration. A record many transactions read is mostly already at or past the
/// reader's timestamp; loading first keeps its cache line shared among readers, where an
/// unconditional `fetch_max` takes it exclusively on every read.
///
/// Orderings: the load and the `fetch_max` are both `SeqCst`, so the caller's half of the
/// reader/writer argument (raise `rts`, then load the record word; the writer locks, then loads
/// `rts`) still holds when the raise is skipped. The skip happens only when the load returns a
/// value `v >= ts`, written by some `SeqCst` RMW `X` that precedes the load in the single total
/// order. A writer whose `rts` load follows `X` in that order sees `v >= ts` or more (`rts`
/// only grows) and fails the check exactly as if this reader had raised it; a writer whose `rts`
/// load precedes `X` locked before `X`, so before this reader's load of `rts` and of the word
/// after it, and the reader sees the lock. A failed or skipped raise is thus never weaker than
/// a successful one.
#[inline]
pub(crate) fn raise_read_timestamp(rts: &AtomicU64, ts: u64) {
    // SeqCst (both): the argument above.
    if rts.load(Ordering::SeqCst) < ts {
        rts.fetch_max(ts, Ordering::SeqCst);
    }
}
