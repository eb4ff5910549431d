//! Why a transaction attempt ended without committing.
//!
//! Aborts are typed (never integer codes) so that reports can break them down by cause, and so a
//! protocol states exactly which rule it applied. The executor counts every abort once, in one place
//! (`exec`), whatever the protocol: the CCBench lesson that counting inside each protocol drifts.

use serde::Serialize;

/// The reason an attempt aborted. `User` aborts are part of the workload's logic (TPC-C's 1% invalid
/// items) and are not retried; every other reason is a concurrency-control abort and is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Abort {
    /// A lock was held in a conflicting mode and the protocol does not wait (NO_WAIT, Silo NoWait).
    LockConflict,
    /// WAIT_DIE: a younger transaction met an older lock holder and died.
    Die,
    /// WOUND_WAIT / PLOR: an older transaction wounded this one.
    Wounded,
    /// OCC read-set validation failed: a record read has since changed or is locked by another.
    ReadValidation,
    /// TicToc: the read timestamp could not be extended to the commit timestamp.
    TimestampExtension,
    /// TicToc PreemptiveAbort: validation was predicted to fail before locking the write set.
    Preemptive,
    /// The transaction's own logic asked to abort (not retried).
    User,
    /// Snapshot isolation's first-committer-wins: a record this attempt writes got a newer
    /// committed version after its snapshot was taken.
    WriteWriteConflict,
    /// ERMIA's serial safety net: the attempt's exclusion window closed (`π <= η`), so a
    /// dependency cycle through it could not be ruled out.
    SsnExclusion,
    /// Timestamp ordering (MVTO): a write would not create the newest version, or would replace
    /// a version a younger transaction already read.
    TimestampOrder,
    /// AggressiveGC (MVTO): the version the read needed was already reclaimed; the retry reads at
    /// a new timestamp.
    VersionCollected,
    /// Opportunistic execution (DecentSched `--ds-opportunistic`): the attempt ran ahead of its
    /// place in the schedule and something it read changed before that place came; the
    /// transaction runs again in its place. Not a concurrency-control abort: it is retried at
    /// once, and reports count it as a re-execution, never in the aborts or the abort ratio.
    Reexecute,
    /// A batch protocol (Aria): a member ranked before this one in its batch writes a record
    /// this one writes; the transaction moves to a later batch.
    BatchWriteAfterWrite,
    /// A batch protocol (Aria): a member ranked before this one in its batch writes a record
    /// this one read from the batch's snapshot (with deterministic reordering: and a member
    /// ranked before it read a record it writes); the transaction moves to a later batch.
    BatchReadAfterWrite,
    /// Aria's fallback phase (`--aria-fallback`): the rerun of a member that lost a conflict
    /// touched a record its first run did not (or wrote one it only read), so its locks do not
    /// cover it; the transaction moves to a later batch.
    BatchAccessSetChanged,
}

impl Abort {
    /// Every reason, in the order reports list them.
    pub const ALL: [Abort; 15] = [
        Abort::LockConflict,
        Abort::Die,
        Abort::Wounded,
        Abort::ReadValidation,
        Abort::TimestampExtension,
        Abort::Preemptive,
        Abort::User,
        Abort::WriteWriteConflict,
        Abort::SsnExclusion,
        Abort::TimestampOrder,
        Abort::VersionCollected,
        Abort::Reexecute,
        Abort::BatchWriteAfterWrite,
        Abort::BatchReadAfterWrite,
        Abort::BatchAccessSetChanged,
    ];
    /// Number of reasons; sizes per-reason counter arrays.
    pub const COUNT: usize = Self::ALL.len();

    /// Dense index into per-reason counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable name used in JSON, CSV and tables.
    pub fn name(self) -> &'static str {
        match self {
            Abort::LockConflict => "lock_conflict",
            Abort::Die => "die",
            Abort::Wounded => "wounded",
            Abort::ReadValidation => "read_validation",
            Abort::TimestampExtension => "timestamp_extension",
            Abort::Preemptive => "preemptive",
            Abort::User => "user",
            Abort::WriteWriteConflict => "write_write_conflict",
            Abort::SsnExclusion => "ssn_exclusion",
            Abort::TimestampOrder => "timestamp_order",
            Abort::VersionCollected => "version_collected",
            Abort::Reexecute => "reexecute",
            Abort::BatchWriteAfterWrite => "batch_write_after_write",
            Abort::BatchReadAfterWrite => "batch_read_after_write",
            Abort::BatchAccessSetChanged => "batch_access_set_changed",
        }
    }

    /// Whether the executor retries the transaction after this abort.
    pub fn is_retried(self) -> bool {
        self != Abort::User
    }

    /// Whether the reason is a concurrency-control abort: neither the workload's own decision
    /// (`User`) nor a re-execution of opportunistic execution (`Reexecute`). A protocol that
    /// schedules from declared access sets never has one.
    pub fn is_concurrency_control(self) -> bool {
        !matches!(self, Abort::User | Abort::Reexecute)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_are_dense_and_names_unique() {
        for (i, a) in Abort::ALL.iter().enumerate() {
            assert_eq!(a.index(), i);
        }
        let mut names: Vec<_> = Abort::ALL.iter().map(|a| a.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Abort::COUNT);
        assert!(!Abort::User.is_retried());
        assert!(Abort::Wounded.is_retried());
        assert!(Abort::Reexecute.is_retried());
        assert!(!Abort::Reexecute.is_concurrency_control());
        assert!(!Abort::User.is_concurrency_control());
        assert!(Abort::ReadValidation.is_concurrency_control());
    }
}
