//! Calvin's record lock, shared by batched Calvin and the ticket variant: a reader/writer ticket
//! lock whose requests are made in one deterministic order and granted in that order.
//!
//! A request takes a position among the record's writers and readers (the two request counters
//! it saw); a writer is granted once every earlier request has been released, a reader once every
//! earlier writer has. Requests to one record are made by one transaction at a time (the
//! sequencer's turn), so reading the two request counters one after the other is a snapshot.
//! Grants compare the release counters with the snapshot one at a time, which is sound because
//! once a release counter reaches a request's snapshot it cannot move on until that request is
//! granted and released (later requests wait for it).

#[cfg(test)]
use crate::protocol::mutants::Mutant;
use crate::protocol::{AccessMode, DeclaredRecord};
use crate::storage::Record;
use std::sync::atomic::{AtomicU32, Ordering};

/// A record's lock: writer and reader requests taken, and releases done. Counters wrap; only
/// equality is compared (module docs).
#[derive(Debug, Default)]
pub struct CalvinLock {
    writers_requested: AtomicU32,
    readers_requested: AtomicU32,
    writers_released: AtomicU32,
    readers_released: AtomicU32,
}

/// Whether a wrapping release counter has reached `target`. In the protocol it never passes a
/// waiting request's target (module docs), so this is equality; comparing by distance keeps a
/// broken variant (a test mutant that lets releases overtake) from waiting forever.
#[inline]
fn reached(released: u32, target: u32) -> bool {
    released.wrapping_sub(target) < 1 << 31
}

/// The request counters a lock request saw: how many writers and readers came before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    writers: u32,
    readers: u32,
}

impl CalvinLock {
    /// Requests the lock in `mode`, after every request made before: the caller holds the
    /// sequencer's turn (module docs). Returns the request's position.
    #[inline]
    pub(crate) fn request(&self, mode: AccessMode) -> Position {
        // Relaxed: requests are ordered by the turn, whose Release/Acquire hand-over makes the
        // previous holder's increments visible here; grants read the release counters.
        let at = Position {
            writers: self.writers_requested.load(Ordering::Relaxed),
            readers: self.readers_requested.load(Ordering::Relaxed),
        };
        let requested = match mode {
            AccessMode::Write => &self.writers_requested,
            AccessMode::Read => &self.readers_requested,
        };
        // Relaxed: as above; only the turn holder writes request counters.
        requested.fetch_add(1, Ordering::Relaxed);
        at
    }

    /// Releases a request made in `mode` (granted or not: a later request waits for each).
    #[inline]
    pub(crate) fn release(&self, mode: AccessMode) {
        let released = match mode {
            AccessMode::Write => &self.writers_released,
            AccessMode::Read => &self.readers_released,
        };
        // Release: the holder's reads and installs happen before the next holder's grant (its
        // Acquire load in `granted`).
        released.fetch_add(1, Ordering::Release);
    }
}

/// How a protocol applies the lock: the real rules, or (test builds) a mutant's broken ones.
/// Both Calvin variants take their modes and grants from here, so a lock mutant breaks either.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LockRules {
    #[cfg(test)]
    pub(crate) mutant: Mutant,
}

impl LockRules {
    /// The mode a declared access requests its lock in (a mutant may weaken it).
    #[inline]
    pub(crate) fn mode(self, mode: AccessMode) -> AccessMode {
        #[cfg(test)]
        if self.mutant == Mutant::CalvinWritesLockShared {
            return AccessMode::Read;
        }
        mode
    }

    /// Whether the request at `at` (in `mode`) is granted: every earlier writer released (a
    /// reader), every earlier request released (a writer).
    #[inline]
    pub(crate) fn granted(self, lock: &CalvinLock, mode: AccessMode, at: Position) -> bool {
        // Acquire: pairs with the earlier holders' Release in `release`, so their installs are
        // visible to us.
        let writers_done = reached(lock.writers_released.load(Ordering::Acquire), at.writers);
        let readers_done = || reached(lock.readers_released.load(Ordering::Acquire), at.readers);
        #[cfg(test)]
        if self.mutant == Mutant::CalvinWritersIgnoreWriters && mode == AccessMode::Write {
            return readers_done();
        }
        match mode {
            AccessMode::Read => writers_done,
            AccessMode::Write => writers_done && readers_done(),
        }
    }

    /// Whether a request in `mode` made now would be granted at once: no request it would wait
    /// for is outstanding (no-wait Calvin asks before requesting). The caller holds the turn, so
    /// the request counters are stable, and the release counters only move towards them.
    #[inline]
    pub(crate) fn free_for(self, lock: &CalvinLock, mode: AccessMode) -> bool {
        // Relaxed (request counters): as in `CalvinLock::request`.
        let at = Position {
            writers: lock.writers_requested.load(Ordering::Relaxed),
            readers: lock.readers_requested.load(Ordering::Relaxed),
        };
        // A request made now would take this position; it is free when granted there.
        self.granted(lock, mode, at)
    }
}

/// One attempt's lock requests: the declared records, their modes and the positions their
/// requests took, and how many of them are granted so far (in order). Reused across attempts.
#[derive(Default)]
pub(crate) struct Requests<'db> {
    locks: Vec<(Record<'db, CalvinLock>, AccessMode, Position)>,
    granted: usize,
}

impl<'db> Requests<'db> {
    /// Requests the lock of every record of `set`, in its order (the caller holds the turn).
    pub(crate) fn request_all(
        &mut self,
        rules: LockRules,
        set: &[DeclaredRecord<'db, CalvinLock>],
    ) {
        self.locks.clear();
        self.granted = 0;
        for d in set {
            let mode = rules.mode(d.mode);
            self.locks
                .push((d.record, mode, d.record.meta().request(mode)));
        }
    }

    /// Whether every lock of `set` is free for its mode now (no-wait Calvin, holding the turn,
    /// before it requests anything).
    pub(crate) fn all_free(rules: LockRules, set: &[DeclaredRecord<'db, CalvinLock>]) -> bool {
        set.iter()
            .all(|d| rules.free_for(d.record.meta(), rules.mode(d.mode)))
    }

    /// Whether every request is granted; goes on from the last one found granted.
    pub(crate) fn all_granted(&mut self, rules: LockRules) -> bool {
        while let Some(&(rec, mode, at)) = self.locks.get(self.granted) {
            if !rules.granted(rec.meta(), mode, at) {
                return false;
            }
            self.granted += 1;
        }
        true
    }

    /// Releases every request made (granted or not: a later request waits for each) and
    /// forgets them.
    pub(crate) fn release_all(&mut self) {
        for &(rec, mode, _) in &self.locks {
            rec.meta().release(mode);
        }
        self.locks.clear();
        self.granted = 0;
    }
}
