//! The commit steps the multi-version protocols share: locking the write set, installing each
//! write over the record's inline version, and unlocking what an aborted commit held.
//!
//! A commit is `lock_write_set` (with the protocol's check on each record as it is locked:
//! SI's and ERMIA's first committer wins, MVTO's and Cicada's timestamp order), then the
//! protocol's validation, then `install_write` for each write (with the protocol's steps
//! between the install and the unlock); an abort calls `unlock_write_set`.

use super::{LOCK, MvRecord, WorkerVersions};
use crate::protocol::{Abort, WriteSet};
use crate::storage::Payload;
use crate::storage::versions::{VersionChain, VersionPool};
use std::sync::atomic::{Ordering, fence};

/// Locks the write set's records in the set's current order (the caller sorts it), from entry
/// `*locked` on, counting each lock in `*locked` and keeping the word it replaced (`LOCK` clear:
/// the inline version's timestamp) in the entry's state. A record found locked, or whose word
/// changes under the lock attempt, aborts with `LockConflict`: a commit never waits for a
/// lock, so commits cannot deadlock. `admit(meta, seen)` runs on each record once it is locked
/// and counted (an abort from it unlocks the record with the others): the protocol's check
/// (first committer wins, timestamp order) and its marks on the record.
///
/// The lock's ordering, chosen once for the family: `SeqCst` on success. MVTO and Cicada need
/// it (the lock precedes their load of the record's read timestamp in the one total order of
/// their reader/writer argument); SI and ERMIA need only `Acquire` (their installs follow the
/// previous holder's Release unlock), which `SeqCst` includes. On x86-64 every ordering of a
/// compare-exchange is the same `lock cmpxchg`; elsewhere the stronger ordering costs a fence
/// per written record.
#[inline]
pub(crate) fn lock_write_set<'db, M: MvRecord>(
    writes: &mut WriteSet<'db, M, u64>,
    locked: &mut usize,
    mut admit: impl FnMut(&'db M, u64) -> Result<(), Abort>,
) -> Result<(), Abort> {
    while *locked < writes.len() {
        let meta = writes.entries()[*locked].rec.meta();
        let word = meta.word();
        // Relaxed: the expected value of the compare-exchange, which orders what follows.
        let seen = word.load(Ordering::Relaxed);
        // SeqCst on success: the doc comment above. Relaxed on failure: nothing follows but the
        // abort.
        if seen & LOCK != 0
            || word
                .compare_exchange(seen, seen | LOCK, Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
        {
            return Err(Abort::LockConflict);
        }
        writes.entries_mut()[*locked].state = seen;
        *locked += 1;
        admit(meta, seen)?;
    }
    Ok(())
}

/// Unlocks the first `*locked` records of the write set, restoring the word each had when it
/// was locked (nothing was installed), and resets `*locked`. `before(meta)` runs on each record
/// first: the protocol takes back its marks (SI's holder, ERMIA's sstamp marker), which its
/// observers re-check against the word.
#[inline]
pub(crate) fn unlock_write_set<'db, M: MvRecord>(
    writes: &WriteSet<'db, M, u64>,
    locked: &mut usize,
    mut before: impl FnMut(&'db M),
) {
    for e in &writes.entries()[..*locked] {
        let meta = e.rec.meta();
        before(meta);
        // Release: restores the word seen at lock time; the marks taken back above are visible
        // to whoever sees the record unlocked.
        meta.word().store(e.state, Ordering::Release);
    }
    *locked = 0;
}

/// Saves `payload` (a record's inline version, which the caller is about to overwrite) with
/// timestamp `ts` as the newest node of the record's `chain`: a node from `pool` (past the cap
/// the commit still gets its node, and the run stops: [`VersionPool::take_past_cap`]), filled
/// through `scratch`, its metadata handed to `init` before the push publishes it. The caller
/// holds the record exclusively ([`VersionChain::push`]).
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

/// Installs write `i` of `writes`, locked by [`lock_write_set`] and validated, as the version
/// with timestamp `c`, in the family's order:
///
/// 1. the inline version goes into the chain as a node stamped with its own timestamp (the
///    entry's state), `init` filling the protocol's metadata on it;
/// 2. the word says `LOCK | c`: a reader below `c` now reads the chain, one at or above `c`
///    waits;
/// 3. a Release fence, then the new payload inline (logged for the checker);
/// 4. `installed(meta)`: the protocol's steps while it still holds the record (ERMIA's stamps,
///    SI's holder mark);
/// 5. `collect(chain, pool)`: the protocol's collection of the chain (below the watermark, or
///    AggressiveGC's);
/// 6. the word says `c`, unlocked, and the record is queued for RapidGC's deferred pass.
#[inline]
pub(crate) fn install_write<'db, M: MvRecord>(
    writes: &mut WriteSet<'db, M, u64>,
    i: usize,
    versions: &mut WorkerVersions<'db, M>,
    c: u64,
    init: impl FnOnce(&M::Version),
    installed: impl FnOnce(&'db M),
    collect: impl FnOnce(&VersionChain<M::Version>, &mut VersionPool<'db, M::Version>),
) {
    let (rec, old) = {
        let e = &writes.entries()[i];
        (e.rec, e.state)
    };
    let meta = rec.meta();
    push_version(
        meta.chain(),
        &mut versions.pool,
        &mut versions.scratch,
        old,
        rec.payload,
        init,
    );
    // Release: a reader that loads `LOCK | c` (Acquire) and walks the chain finds the node
    // pushed above.
    meta.word().store(LOCK | c, Ordering::Release);
    // Release fence, the seqlock writer's half: the word stores before it (the lock, `LOCK | c`)
    // are ordered before the payload stores after it, so a reader whose inline copy saw any of
    // them and then fences Acquire re-reads a changed word and retries (`read::snapshot_read`,
    // MVTO's read). The `LOCK | c` store matters to readers that copy while a holder they
    // skipped has not installed (`snapshot_read_skipping`): they saw the word locked already.
    fence(Ordering::Release);
    writes.install(i);
    installed(meta);
    collect(meta.chain(), &mut versions.pool);
    // Release: publishes the install to readers that load the word (Acquire).
    meta.word().store(c, Ordering::Release);
    versions.gc.defer(c, meta);
}
