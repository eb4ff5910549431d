//! The per-object version of opportunistic execution (paper III-D4): "an atomic version number
//! is assigned to each object; when a transaction is committed, the version number of each
//! object in its write set is incremented".
//!
//! Here the word is a sequence lock as well, so that a transaction running ahead of its place in
//! the schedule never copies a half-installed row:
//!
//! ```text
//!  63                                                    1   0
//! +-------------------------------------------------------+---+
//! |           installs completed on this record           | I |
//! +-------------------------------------------------------+---+
//!   I = an install is in progress (the word is odd)
//! ```
//!
//! An install makes the word odd, stores the payload and makes it even again, one higher than
//! before in the count above (the word grows by 2 per install, 64 bits never wrap in a run, so
//! "unchanged" really means "not installed since"). Only one install runs per record at a time:
//! installs happen at commit, when the scheduling rules keep every conflicting transaction out.
//! Nothing bumps the word when opportunistic execution is off (no reader looks at it).

use crate::storage::Payload;
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// A record's install counter and sequence lock (DecentSched's `RecordMeta`).
#[derive(Debug, Default)]
pub struct ObjectVersion(AtomicU64);

impl ObjectVersion {
    /// Copies `payload` into `out` when no install overlaps the copy, returning the version
    /// the copy belongs to; `None` when an install ran during it (the caller waits and tries
    /// again).
    #[inline]
    pub fn read_stable(&self, payload: &Payload<'_>, out: &mut [u8]) -> Option<u64> {
        // Acquire: pairs with `end_install`'s Release, so the payload copied after seeing an
        // even version is at least the one that install stored.
        let before = self.0.load(Ordering::Acquire);
        if before & 1 == 1 {
            return None;
        }
        payload.load(out);
        // Acquire fence: orders the payload loads above before the re-read below (the seqlock
        // read side; pairs with `begin_install`'s Release fence).
        fence(Ordering::Acquire);
        // Relaxed: ordered by the fence above.
        let after = self.0.load(Ordering::Relaxed);
        (after == before).then_some(before)
    }

    /// The version now (validation at commit: unchanged since the read means no install).
    #[inline]
    pub fn current(&self) -> u64 {
        // Acquire: the validator then runs after every install it saw completed (the
        // scheduling rules already order it after the installs that matter; this makes the
        // comparison itself race-free to reason about).
        self.0.load(Ordering::Acquire)
    }

    /// Marks an install in progress (the installer runs alone on this record).
    #[inline]
    pub fn begin_install(&self) {
        // Relaxed load: only the installer writes the word now.
        let v = self.0.load(Ordering::Relaxed);
        // Relaxed store, then a Release fence: the payload stores that follow cannot become
        // visible before the odd word (seqlock write side; pairs with `read_stable`'s fence).
        self.0.store(v | 1, Ordering::Relaxed);
        fence(Ordering::Release);
    }

    /// Ends the install: the word is even again, one install higher.
    #[inline]
    pub fn end_install(&self) {
        // Relaxed load: only the installer writes the word now.
        let v = self.0.load(Ordering::Relaxed);
        // Release: publishes the payload stored since `begin_install` (pairs with the Acquire
        // loads of `read_stable` and `current`).
        self.0.store(v + 1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::RecordId;
    use crate::storage::{Table, TableSpec};

    #[test]
    fn an_install_in_progress_or_between_reads_is_seen() {
        let table: Table<ObjectVersion> = Table::new(TableSpec {
            name: "t".into(),
            records: 1,
            payload_bytes: 8,
        });
        let rec = table.get(RecordId(0)).expect("record 0");
        let v = rec.meta();
        let mut out = [0u8; 8];
        let first = v.read_stable(&rec.payload, &mut out).expect("no install");
        v.begin_install();
        assert_eq!(v.read_stable(&rec.payload, &mut out), None, "odd word");
        rec.payload.store(&7u64.to_le_bytes());
        v.end_install();
        let second = v.read_stable(&rec.payload, &mut out).expect("no install");
        assert_ne!(first, second, "the install changed the version");
        assert_eq!(v.current(), second);
        assert_eq!(u64::from_le_bytes(out), 7);
    }
}
