//! TicToc's read phase: copy a record and the timestamp word that describes it, consistently.
//!
//! The copy is seqlock-style. The word is loaded with Acquire before the copy and reloaded behind
//! an Acquire fence after it; a writer sets the lock bit, issues a Release fence, and only then
//! stores payload words (see `commit::install`). If the copy saw any word of a newer install, the
//! reload sees that writer's lock or its new `wts`, and the copy is retried. A read-committed read
//! makes the same copy and forgets it.

use super::{TicTocMeta, TicTocWorker, TsWord};
use crate::protocol::OpResult;
use crate::storage::Record;
use std::sync::atomic::{Ordering, fence};
use std::task::Poll;

/// Copies attempted before a read that keeps racing with installs returns `Pending`.
const COPY_ATTEMPTS: usize = 4;

/// Reads `rec` into `out` and remembers the version's timestamps in the read set.
pub(super) fn read<'db>(
    w: &mut TicTocWorker<'db>,
    rec: Record<'db, TicTocMeta>,
    out: &mut [u8],
) -> OpResult {
    if w.writes.read_own(&rec, out) {
        return Poll::Ready(Ok(()));
    }
    match copy_consistent(&rec, out) {
        Some(seen) => {
            remember(w, rec, seen);
            Poll::Ready(Ok(()))
        }
        None => Poll::Pending,
    }
}

/// Read committed: the same consistent copy, not remembered, so commit neither validates nor
/// extends it (the version may be replaced right after, and the transaction's `commit_ts` is not
/// bound by its `wts`). The copy is still of one committed version: a writer installs only under
/// the lock bit, and the seqlock check rejects any copy that overlapped an install.
pub(super) fn read_committed<'db>(
    w: &mut TicTocWorker<'db>,
    rec: Record<'db, TicTocMeta>,
    out: &mut [u8],
) -> OpResult {
    if w.writes.read_own(&rec, out) {
        return Poll::Ready(Ok(()));
    }
    match copy_consistent(&rec, out) {
        Some(_) => Poll::Ready(Ok(())),
        None => Poll::Pending,
    }
}

/// Copies `rec` into `out` between two loads of its word; returns the word the copy belongs to, or
/// `None` (the caller returns `Pending`) while a committer holds the record or the copy keeps
/// racing with installs. Waiting is deadlock-free: a reader holds no lock before its commit.
fn copy_consistent(rec: &Record<'_, TicTocMeta>, out: &mut [u8]) -> Option<TsWord> {
    let word = &rec.meta().word;
    for _ in 0..COPY_ATTEMPTS {
        // Acquire: pairs with the Release store that installed this version, so the copy below
        // sees at least that version's payload.
        let before = word.load(Ordering::Acquire);
        if before.is_locked() {
            // A committing writer holds the record: wait for it instead of spinning here.
            return None;
        }
        rec.payload.load(out);
        // Acquire fence: pairs with the Release fence a writer issues after locking and before
        // storing payload words (module docs).
        fence(Ordering::Acquire);
        // Relaxed: ordered after the copy by the fence above; it only needs to be a later value.
        let after = word.load(Ordering::Relaxed);
        if !after.is_locked() && after.wts() == before.wts() {
            // Same version. `after` may carry a larger rts (an extension in between): keep it.
            return Some(after);
        }
    }
    None
}

/// Adds the read to the read set unless the same version of the record is already there.
///
/// Duplicates must not reach validation: extending the first copy's rts can move the record's
/// `wts` (the word keeps `rts` as a bounded delta above `wts`, and an extension past the delta's
/// range raises `wts`), after which the second copy's `wts` no longer matches and the
/// transaction aborts itself (measured: 0.3% spurious read-validation aborts on one-thread
/// TPC-C when only the last entry was checked). The lookup is hashed past a few entries, so this
/// costs O(1) per read (`ReadSet::find`).
fn remember<'db>(w: &mut TicTocWorker<'db>, rec: Record<'db, TicTocMeta>, seen: TsWord) {
    if let Some(known) = w.reads.find(&rec) {
        if known.wts() == seen.wts() {
            return;
        }
    }
    w.reads.push(rec, seen);
}
