//! The two ways PLOR reads a record: under a read lock (`LockRd`, PLOR Figure 4 lines 1-8), or
//! optimistically with validation (attempts of transactions declared read-only, until they have
//! aborted `ro_threshold` times; PLOR 4.1.3).

use super::context::{ContextTable, CtxWord};
use super::locker::PlorLock;
use super::write_lock::Requester;
use crate::on_cpu;
use crate::protocol::{Abort, OpResult};
use crate::storage::Payload;
use crate::storage::Record;
use crate::sync::atomic::{Ordering, fence};
use std::task::Poll;

/// How a read-set entry was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Under this worker's reader bit (released at commit phase 2 or abort).
    Locked,
    /// Optimistically, at this install count; validated at commit.
    Optimistic(u64),
}

/// How many torn optimistic copies a read retries before yielding to the executor.
const OPTIMISTIC_RETRIES: usize = 8;

/// Takes `req`'s read lock on `rec` and copies the payload. If a committer holds the record in
/// exclusive mode, wounds it when we are older, registers as a waiter and waits.
///
/// The registration keeps the reader's place: the paper's reader stays in the list `R`, so a
/// committer arriving later must deal with it, but a bitmap reader has to clear its bit while it
/// waits. Without the registration, a wounded younger writer could retry, retake the write lock
/// and re-enter exclusive mode before the older reader's next poll, again and again (measured:
/// thousands of attempts for one transaction on 8 workers over 2 cores). Registered, it makes
/// younger writers defer to it in `Requester::acquire`.
pub fn locked_read<'db, const WORDS: usize>(
    ctx: &ContextTable,
    req: &mut Requester<'db, WORDS>,
    rec: &Record<'db, PlorLock<WORDS>>,
    out: &mut [u8],
) -> OpResult {
    match rec.meta().read_lock(req.id) {
        Ok(()) => {
            req.stop_waiting();
            // Stable: an installer waits for (or wounds and then waits for) our bit to clear.
            rec.payload.load(out);
            Poll::Ready(Ok(()))
        }
        Err(owner) => {
            if owner != 0 {
                let owner = CtxWord::from_raw(owner);
                if req.me.is_older_than(owner) {
                    ctx.wound(owner);
                }
                // The executor parks at once if the committer is away (`crate::on_cpu`).
                on_cpu::note_holder(owner.wid());
            }
            req.register(rec.meta());
            Poll::Pending
        }
    }
}

/// Copies `rec`'s payload without locking; returns the install count it belongs to. `Pending`
/// while a committer is installing it (or after repeated torn copies).
///
/// Seqlock read side. The committer sets `EXCL`, issues a Release fence, installs, bumps the
/// version (Release) and clears `EXCL` (Release). If our copy saw any installed word, our Acquire
/// fence synchronizes with the committer's Release fence, so the `EXCL` load after it sees the bit
/// set or, when it reads the clear (Acquire), the bumped version: either way the copy is rejected.
pub fn optimistic_read<const WORDS: usize>(
    rec: &Record<'_, PlorLock<WORDS>>,
    out: &mut [u8],
) -> Poll<u64> {
    optimistic_copy(rec.meta(), rec.payload, out)
}

/// [`optimistic_read`] on a lock and a payload (the `loom` model `plor_optimistic_read` runs it
/// against a committer's phase 3).
#[inline]
pub(crate) fn optimistic_copy<const WORDS: usize>(
    lock: &PlorLock<WORDS>,
    payload: Payload<'_>,
    out: &mut [u8],
) -> Poll<u64> {
    for _ in 0..OPTIMISTIC_RETRIES {
        let before = lock.version();
        if lock.is_exclusive() {
            return Poll::Pending;
        }
        payload.load(out);
        // Acquire fence: pairs with the committer's Release fence of phase 3 (see above).
        fence(Ordering::Acquire);
        if !lock.is_exclusive() && lock.version() == before {
            return Poll::Ready(before);
        }
    }
    Poll::Pending
}

/// Whether an optimistic read at install count `seen` is still current: nobody installed since,
/// and nobody is committing the record now.
pub fn still_current<const WORDS: usize>(lock: &PlorLock<WORDS>, seen: u64) -> bool {
    !lock.is_exclusive() && lock.version() == seen
}

/// Turns worker `id`'s optimistic read (at `seen`) into a locked one: set the reader bit, then
/// check that the read is still current. From then on an installer must wait for our bit, so the
/// read is as good as one taken under the lock. `Err` if the read is stale (the bit is left set
/// only on `Ok`, or when the caller must release it: see the return).
pub fn lock_after_read<const WORDS: usize>(
    lock: &PlorLock<WORDS>,
    id: usize,
    seen: u64,
) -> Result<(), LockAfterRead> {
    if lock.read_lock(id).is_err() {
        return Err(LockAfterRead::Refused);
    }
    // The SeqCst bit set in `read_lock` precedes this check: an install we miss here must
    // happen after our bit is visible, and then waits for it.
    if lock.version() != seen {
        return Err(LockAfterRead::Stale);
    }
    Ok(())
}

/// Why an optimistic read could not be locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockAfterRead {
    /// A committer holds the record exclusively; no bit was set.
    Refused,
    /// The record changed since the read; our bit is set and must be released.
    Stale,
}

impl LockAfterRead {
    /// The abort reason.
    pub fn abort(self) -> Abort {
        Abort::ReadValidation
    }
}
