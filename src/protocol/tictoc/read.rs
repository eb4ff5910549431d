//! TicToc's read phase: copy a record and the timestamp word that describes it, consistently.
//!
//! The copy is seqlock-style. The word is loaded with Acquire before the copy and reloaded behind
//! an Acquire fence after it; a writer sets the lock bit, issues a Release fence, and only then
//! stores payload words (see `commit::install`). If the copy saw any word of a newer install, the
//! reload sees that writer's lock or its new `wts`, and the copy is retried.

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
    let word = &rec.meta().word;
    for _ in 0..COPY_ATTEMPTS {
        // Acquire: pairs with the Release store that installed this version, so the copy below
        // sees at least that version's payload.
        let before = word.load(Ordering::Acquire);
        if before.is_locked() {
            // A committing writer holds the record: wait for it instead of spinning here.
            return Poll::Pending;
        }
        rec.payload.load(out);
        // Acquire fence: pairs with the Release fence a writer issues after locking and before
        // storing payload words (module docs).
        fence(Ordering::Acquire);
        let after = word.load(Ordering::Relaxed);
        if !after.is_locked() && after.wts() == before.wts() {
            // Same version. `after` may carry a larger rts (an extension in between): keep it.
            remember(w, rec, after);
            return Poll::Ready(Ok(()));
        }
    }
    Poll::Pending
}

/// Adds the read to the read set unless the same version of the record is already there.
fn remember<'db>(w: &mut TicTocWorker<'db>, rec: Record<'db, TicTocMeta>, seen: TsWord) {
    if let Some(known) = w.reads.find(&rec) {
        if known.wts() == seen.wts() {
            return;
        }
    }
    w.reads.push(rec, seen);
}
