//! PLOR's latch-free locker (PLOR 4.2): the per-record `RecordMeta`.
//!
//! ```text
//! owner:      identity (CtxWord without status) of the write-lock holder, 0 = free   (w)
//! readers[0]: bit 63 = EXCL (excl_sig), bits 0..62 = readers among workers 0..62    (R)
//! readers[1]: bits 0..63 = readers among workers 63..126
//! waiters[k]: bit i = worker 64k + i waits for the write lock, or to read           (W)
//! version:    bumped by every install (what read-only OCC reads validate against)
//! ```
//!
//! - **Read lock** (`LockRd`): set our reader bit, then check `EXCL`; if a committer holds it, clear
//!   the bit again and report the owner (the caller wounds it if younger, and waits).
//! - **Exclusive mode** (commit phase 1): the write-lock owner sets `EXCL`, then scans the reader
//!   bits. The reader's and the committer's steps form a Dekker handshake (each writes one word and
//!   reads the other), so all four accesses are `SeqCst`: in their single total order, either the
//!   committer sees the reader's bit, or the reader sees `EXCL` and backs off. Later readers are
//!   blocked; every earlier reader is visible to the committer.
//! - **Write lock** (`LockWr`): CAS on `owner` from 0 to our identity. A released lock is not
//!   written to a waiter's identity (the paper's handover), because a waiter may abort at that very
//!   moment and a retry reuses its identity, which would leak the lock; instead a free lock may be
//!   taken only by a requester with no older registered waiter, so it goes to the oldest waiter all
//!   the same (see `plor::write_lock`).
//!
//! More than 63 workers: the paper's one-word reader list names 63 workers. Here the reader and
//! waiter lists span `WORDS` words each (a const parameter chosen once per run from its worker
//! count): reader id `i` is bit `i` of the list for `i < 63` and bit `i + 1` beyond (bit 63 of
//! word 0 is `EXCL`), so a lock names `64 x WORDS - 1` workers. Two words ([`PlorLock`], 127
//! workers, a 48-byte header) serve thread runs; [`WIDE_WORDS`] words ([`MAX_PLOR_WORKERS`],
//! a 288-byte header) serve the coroutine executor's up to 1024 in-flight transactions. `EXCL`
//! stays in word 0; the handshake argument holds across words because it relies only on the
//! `SeqCst` total order, not on both bits sharing a word.

use crate::protocol::worker_set::{AtomicWorkerSet, WorkerSet};
use crate::sync::atomic::{AtomicU64, Ordering};

/// Words of the reader and waiter lists of the wide locker: 17 x 64 - 1 = 1087 workers, past the
/// 1024 a run may have.
pub const WIDE_WORDS: usize = 17;

/// Words of the default locker's lists: 127 workers.
pub const NARROW_WORDS: usize = 2;

/// Most workers the default (two-word) locker names; runs with more use the wide one.
pub const NARROW_PLOR_WORKERS: usize = PlorLock::<NARROW_WORDS>::CAPACITY;

/// Most workers PLOR runs with (the wide locker's capacity, capped at the engine's 1024).
pub const MAX_PLOR_WORKERS: usize = 1024;

const _: () = assert!(PlorLock::<WIDE_WORDS>::CAPACITY >= MAX_PLOR_WORKERS);

const EXCL: u64 = 1 << 63;
const WORD0_READERS: usize = 63;

/// Which word and bit name worker `id` in the reader list (bit 63 of word 0 is `EXCL`).
#[inline]
fn reader_slot<const WORDS: usize>(id: usize) -> (usize, u64) {
    debug_assert!(id < 64 * WORDS - 1, "worker {id} has no reader bit");
    let b = if id < WORD0_READERS { id } else { id + 1 };
    (b / 64, 1 << (b % 64))
}

/// A snapshot of a set of workers (reader or waiter bits), iterable as worker ids.
pub type Workers<const WORDS: usize> = WorkerSet<WORDS>;

/// The reader ids of raw reader words: drops `EXCL` and shifts the bits past it down by one.
#[inline]
fn readers_of<const WORDS: usize>(raw: [u64; WORDS]) -> Workers<WORDS> {
    let mut ids = [0u64; WORDS];
    ids[0] = raw[0] & !EXCL;
    for k in 1..WORDS {
        // Raw bit 64k + i is worker 64k + i - 1.
        ids[k - 1] |= raw[k] << 63;
        ids[k] = raw[k] >> 1;
    }
    WorkerSet::from_words(ids)
}

/// The per-record lock manager (`RecordMeta` of PLOR). See the module docs.
#[derive(Debug)]
pub struct PlorLock<const WORDS: usize = NARROW_WORDS> {
    owner: AtomicU64,
    readers: [AtomicU64; WORDS],
    waiters: AtomicWorkerSet<WORDS>,
    version: AtomicU64,
}

impl<const WORDS: usize> Default for PlorLock<WORDS> {
    fn default() -> Self {
        PlorLock {
            owner: AtomicU64::new(0),
            readers: std::array::from_fn(|_| AtomicU64::new(0)),
            waiters: AtomicWorkerSet::default(),
            version: AtomicU64::new(0),
        }
    }
}

impl<const WORDS: usize> PlorLock<WORDS> {
    /// Most workers the lock names (word 0 of the reader list gives one bit to `EXCL`).
    pub const CAPACITY: usize = 64 * WORDS - 1;

    // ---- read locks ----

    /// Worker `id` takes a read lock unless a committer holds the record in exclusive mode; then
    /// returns `Err(owner)` (the raw owner identity, 0 if it released meanwhile) with no bit left set.
    pub fn read_lock(&self, id: usize) -> Result<(), u64> {
        // SeqCst: cheap early exit, so a blocked reader does not flash its bit at the committer.
        if self.readers[0].load(Ordering::SeqCst) & EXCL != 0 {
            return Err(self.owner());
        }
        let (word, bit) = reader_slot::<WORDS>(id);
        // SeqCst: the reader's write of the handshake (module docs).
        self.readers[word].fetch_or(bit, Ordering::SeqCst);
        // SeqCst: the reader's read of the handshake. Also Acquire: when it reads the last
        // committer's EXCL clear (Release), that committer's install is visible to our copy.
        if self.readers[0].load(Ordering::SeqCst) & EXCL != 0 {
            // Relaxed: we read nothing under the bit; the committer only needs to see it vanish.
            self.readers[word].fetch_and(!bit, Ordering::Relaxed);
            return Err(self.owner());
        }
        Ok(())
    }

    /// Worker `id` drops its read lock (commit phase 2, or abort).
    pub fn read_unlock(&self, id: usize) {
        let (word, bit) = reader_slot::<WORDS>(id);
        // Release: our payload loads happen before a committer that waited for this bit installs
        // (pairs with the Acquire in `is_reading`).
        self.readers[word].fetch_and(!bit, Ordering::Release);
    }

    /// Whether worker `id` still holds a read lock.
    pub fn is_reading(&self, id: usize) -> bool {
        let (word, bit) = reader_slot::<WORDS>(id);
        // Acquire: pairs with the Release in `read_unlock` (see there).
        self.readers[word].load(Ordering::Acquire) & bit != 0
    }

    // ---- exclusive mode ----

    /// The write-lock owner enters exclusive mode (`R.insert(excl_sig)`), then returns every reader
    /// that set its bit before (possibly including the caller: filter it out).
    pub fn set_exclusive(&self) -> Workers<WORDS> {
        // SeqCst: the committer's write of the handshake (module docs).
        self.readers[0].fetch_or(EXCL, Ordering::SeqCst);
        self.readers_now()
    }

    /// The current reader bits. `SeqCst`: the committer's read of the handshake (every word's
    /// load is in the SeqCst total order).
    pub fn readers_now(&self) -> Workers<WORDS> {
        readers_of(std::array::from_fn(|k| {
            self.readers[k].load(Ordering::SeqCst)
        }))
    }

    /// Whether a committer holds the record in exclusive mode.
    #[inline]
    pub fn is_exclusive(&self) -> bool {
        // Acquire: reading a committer's clear (Release) makes its install and version bump
        // visible (OCC read validation relies on this).
        self.readers[0].load(Ordering::Acquire) & EXCL != 0
    }

    /// Leaves exclusive mode (after install, or on abort).
    pub fn clear_exclusive(&self) {
        // Release: the install and version bump before this are visible to whoever sees the bit
        // clear (readers' SeqCst loads, OCC readers' Acquire loads).
        self.readers[0].fetch_and(!EXCL, Ordering::Release);
    }

    // ---- write lock ----

    /// The current owner's identity (raw), 0 if free.
    #[inline]
    pub fn owner(&self) -> u64 {
        // Acquire: pairs with the Release in `write_unlock`.
        self.owner.load(Ordering::Acquire)
    }

    /// Takes the free write lock for identity `me` (raw, non-zero). Fails if it is owned.
    pub fn try_write_lock(&self, me: u64) -> bool {
        debug_assert!(me != 0);
        // Acquire on success: pairs with the previous owner's Release in `write_unlock`, so its
        // install is visible to our reads of the payload.
        self.owner
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// The owner `me` releases the write lock.
    pub fn write_unlock(&self, me: u64) {
        debug_assert_eq!(
            self.owner.load(Ordering::Relaxed),
            me,
            "unlock by a non-owner"
        );
        // Release: publishes the install made under the lock to the next owner.
        self.owner.store(0, Ordering::Release);
    }

    // ---- waiting writers ----

    /// Registers worker `id` as waiting for the write lock.
    pub fn add_waiter(&self, id: usize) {
        // Relaxed: the waiter's identity is read from the context table (Acquire there); a bit
        // seen late only lets one newcomer in before the waiter, never breaks exclusion.
        self.waiters.insert(id, Ordering::Relaxed);
    }

    /// Deregisters worker `id`.
    pub fn remove_waiter(&self, id: usize) {
        // Relaxed: as in `add_waiter`.
        self.waiters.remove(id, Ordering::Relaxed);
    }

    /// The registered waiters.
    pub fn waiters(&self) -> Workers<WORDS> {
        // Relaxed: see `add_waiter`.
        self.waiters.load(Ordering::Relaxed)
    }

    // ---- version (read-only OCC path) ----

    /// The install counter.
    #[inline]
    pub fn version(&self) -> u64 {
        // Acquire: pairs with the Release in `bump_version`, so the payload copy that follows sees
        // at least that install.
        self.version.load(Ordering::Acquire)
    }

    /// Counts an install (by the owner, in exclusive mode, after storing the payload).
    pub fn bump_version(&self) {
        // Release: the install before it is visible to an OCC reader that reads the new version.
        self.version.fetch_add(1, Ordering::Release);
    }
}

#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<PlorLock>() == 48);
const _: () = assert!(PlorLock::<NARROW_WORDS>::CAPACITY == 127);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_bitmap_and_exclusive_signal() {
        let l: PlorLock = PlorLock::default();
        l.read_lock(3).unwrap();
        l.read_lock(62).unwrap();
        l.read_lock(63).unwrap();
        l.read_lock(126).unwrap();
        assert!(l.is_reading(63) && l.is_reading(126) && !l.is_reading(64));
        assert!(l.try_write_lock(CtxWordRaw::A));
        let seen = l.set_exclusive();
        assert_eq!(seen.ids().collect::<Vec<_>>(), vec![3, 62, 63, 126]);
        assert!(l.is_exclusive());
        // A reader arriving in exclusive mode is refused, names the owner, and leaves no bit.
        assert_eq!(l.read_lock(10), Err(CtxWordRaw::A));
        assert!(!l.is_reading(10));
        for id in [3, 62, 63, 126] {
            l.read_unlock(id);
        }
        assert!(l.readers_now().is_empty());
        l.clear_exclusive();
        l.write_unlock(CtxWordRaw::A);
        assert!(!l.is_exclusive());
        l.read_lock(10).unwrap();
    }

    #[test]
    fn wide_lockers_name_1024_workers() {
        let l = PlorLock::<WIDE_WORDS>::default();
        let ids = [0, 62, 63, 64, 126, 127, 500, 1023, 1086];
        for id in ids {
            l.read_lock(id).unwrap();
            l.add_waiter(id);
        }
        assert!(l.is_reading(1023) && !l.is_reading(1022));
        assert!(l.try_write_lock(CtxWordRaw::A));
        assert_eq!(l.set_exclusive().ids().collect::<Vec<_>>(), ids);
        assert_eq!(l.waiters().ids().collect::<Vec<_>>(), ids);
        assert_eq!(l.read_lock(700), Err(CtxWordRaw::A));
        for id in ids {
            l.read_unlock(id);
        }
        assert!(l.readers_now().is_empty() && l.is_exclusive());
        l.clear_exclusive();
    }

    #[test]
    fn owner_is_taken_by_cas() {
        let l: PlorLock = PlorLock::default();
        assert!(l.try_write_lock(CtxWordRaw::A));
        assert!(!l.try_write_lock(CtxWordRaw::B));
        assert_eq!(l.owner(), CtxWordRaw::A);
        l.write_unlock(CtxWordRaw::A);
        assert!(l.try_write_lock(CtxWordRaw::B));
    }

    #[test]
    fn waiters_cover_127_workers() {
        let l: PlorLock = PlorLock::default();
        for id in [0, 63, 64, 100, 126] {
            l.add_waiter(id);
        }
        assert_eq!(
            l.waiters().ids().collect::<Vec<_>>(),
            vec![0, 63, 64, 100, 126]
        );
        assert_eq!(
            l.waiters().without(100).ids().collect::<Vec<_>>(),
            vec![0, 63, 64, 126]
        );
        l.remove_waiter(63);
        assert_eq!(l.waiters().ids().collect::<Vec<_>>(), vec![0, 64, 100, 126]);
    }

    /// Raw owner identities for tests.
    struct CtxWordRaw;
    impl CtxWordRaw {
        const A: u64 = 0x1_0001;
        const B: u64 = 0x2_0002;
    }
}
