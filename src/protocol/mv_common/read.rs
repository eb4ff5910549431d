//! Reads the multi-version protocols share: the snapshot read of a record (SI's, which ERMIA
//! and Cicada with BestEffortInlining use as is), a version off a chain, and the conditional
//! raise of a read timestamp (MVTO's and Cicada's).

use super::{LOCK, MvRecord, retry};
use crate::protocol::Abort;
use crate::storage::Record;
use crate::storage::versions::VersionChain;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::task::Poll;

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

/// Copies into `out` the version of `rec` visible at `snapshot` and returns the version's
/// timestamp. `Pending` when a committer holds the record and may be installing a version the
/// snapshot must see (the committer may already hold a commit timestamp at or below
/// `snapshot`), or when the inline copy kept tearing ([`RETRIES`](super::RETRIES)).
///
/// # Safety
///
/// `snapshot` is registered with the watermark that every collect of `rec`'s chain uses
/// ([`VersionChain::find_visible`]).
#[inline]
pub(crate) unsafe fn snapshot_read<M: MvRecord>(
    rec: Record<'_, M>,
    snapshot: u64,
    out: &mut [u8],
) -> Poll<Result<u64, Abort>> {
    // SAFETY: the caller's contract; a holder is never skipped.
    unsafe { snapshot_read_skipping(rec, snapshot, out, || false) }
}

/// [`snapshot_read`] for readers that skip in-flight versions (`MvOptions::skip_in_flight`):
/// where the record is held by a committer whose inline version is visible at `snapshot`,
/// `commits_after_snapshot` is asked whether that committer's commit timestamp is certainly
/// above `snapshot` (not drawn yet, or drawn larger); if so the reader takes the inline version
/// the holder has not replaced yet (the committed one the snapshot sees) instead of waiting.
/// The copy is validated like any inline copy: a holder that starts installing changes the word
/// first (`LOCK | c`, then a Release fence before the payload: `install_write`), so an unchanged
/// word proves the copy is the old version whole. The predicate runs after the word's first
/// load (its loads are ordered after it).
///
/// # Safety
///
/// As [`snapshot_read`].
#[inline]
pub(crate) unsafe fn snapshot_read_skipping<M: MvRecord>(
    rec: Record<'_, M>,
    snapshot: u64,
    out: &mut [u8],
    commits_after_snapshot: impl Fn() -> bool,
) -> Poll<Result<u64, Abort>> {
    let (word, chain) = (rec.meta().word(), rec.meta().chain());
    retry(|| {
        // Acquire: pairs with the committer's Release stores, so the chain push (and the payload
        // of an unlocked word) are visible.
        let seen = word.load(Ordering::Acquire);
        if seen & !LOCK > snapshot {
            // SAFETY: the caller's contract, and the inline version is newer than the snapshot.
            let ts = unsafe { load_visible(chain, rec, snapshot, out) };
            return ControlFlow::Break(Poll::Ready(Ok(ts)));
        }
        if seen & LOCK != 0 && !commits_after_snapshot() {
            // A committer may install a version this snapshot must see.
            return ControlFlow::Break(Poll::Pending);
        }
        rec.payload.load(out);
        // Acquire fence: pairs with the committer's Release fence between its word stores (the
        // lock CAS, `LOCK | c`) and its payload stores (`install_write`): if the copy read any
        // installed word, the re-load below sees the lock or a later word, so an unchanged word
        // proves no install overlapped the copy.
        fence(Ordering::Acquire);
        // Relaxed: ordered by the fence above.
        if word.load(Ordering::Relaxed) == seen {
            return ControlFlow::Break(Poll::Ready(Ok(seen & !LOCK)));
        }
        ControlFlow::Continue(())
    })
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
