//! Mutation evidence (test builds only): deliberately broken protocol variants that the
//! serializability checker must catch, two or more per protocol.
//!
//! A protocol value carries a [`Mutant`] (`with_mutant`, `#[cfg(test)]`), checked at the exact
//! place where the real code does what the mutant breaks: a skipped validation, a lock released
//! early or not taken, a missing check of a lock bit. Every mutant is a realistic bug that neither
//! crashes nor waits forever. The tests (`tests.rs`) run each under a contended workload at more
//! workers than cores and require the checker to report the run not serializable, and the same
//! configuration without the mutant to pass. None of this exists in a normal build (module,
//! fields and branches are `#[cfg(test)]`).

/// A deliberate bug a protocol value runs with (`None`: the real protocol).
/// Writes a protocol's `with_mutant` (the protocol with a deliberate bug: its field `mutant` set),
/// inside the protocol's `impl` block: `#[cfg(test)] crate::protocol::mutants::with_mutant!();`.
macro_rules! with_mutant {
    () => {
        /// The same protocol with a deliberate bug (`protocol::mutants`).
        pub(crate) fn with_mutant(mut self, mutant: $crate::protocol::mutants::Mutant) -> Self {
            self.mutant = mutant;
            self
        }
    };
}
pub(crate) use with_mutant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Mutant {
    /// The real protocol.
    #[default]
    None,
    /// 2PL (every rule): `read` releases its shared lock right after the copy, as
    /// `read_committed` does, so the read no longer holds until commit (not two-phase).
    TwoPlReleaseReadLocksEarly,
    /// 2PL (every rule): a blind write to a record the attempt has not locked is buffered
    /// without taking the exclusive lock (the read-modify-write path locks in
    /// `read_for_update`; this one forgets), and installed at commit unlocked.
    TwoPlBlindWriteWithoutLock,
    /// 2PL (every rule): commit releases every lock before installing the buffered writes.
    TwoPlUnlockBeforeInstall,
    /// WAIT_DIE and WOUND_WAIT: an exclusive request sets the owner without the writer's half
    /// of the handshake (it never looks at the reader bitmap), so writers ignore shared holders.
    OwnedLockWriterIgnoresReaders,
    /// Silo: commit phase 2 (read validation) is skipped.
    SiloSkipReadValidation,
    /// Silo: phase 2 compares TIDs but ignores the lock bit of a record another committer holds.
    SiloValidationIgnoresLockBit,
    /// Silo: phase 3 publishes the new (unlocked) TID before copying the payload in, so the
    /// record is unlocked while the install is still under way.
    SiloUnlockBeforeInstall,
    /// Silo: the write set is installed right after locking, before validation, and an attempt
    /// that then fails validation restores its TID words but not the payloads (no undo).
    SiloInstallBeforeValidation,
    /// TicToc: step 5 (validation and rts extension) is skipped.
    TicTocSkipValidation,
    /// TicToc: validation never compares the read's `wts` with the record's, so it extends
    /// whatever version is current now.
    TicTocValidationIgnoresWts,
    /// TicToc: validation accepts a read whose record another committer has locked, instead of
    /// failing to extend it.
    TicTocValidationIgnoresLock,
    /// MOCC: commit verifies no read.
    MoccSkipVerification,
    /// MOCC: commit skips verifying reads of hot records, as if a hot record's read lock were
    /// still held (canonical-mode restoration and non-canonical tries drop or skip it; MOCC
    /// 3.3.4 verifies every read for that reason).
    MoccTrustHotReads,
    /// PLOR: commit phase 1 wounds younger readers but does not wait for any reader to leave
    /// before installing.
    PlorSkipReaderWait,
    /// PLOR: phase 2 (releasing the read locks, the commit point) runs before phase 1 instead
    /// of after it.
    PlorReleaseReadsEarly,
    /// PLOR: a read-only attempt commits without validating its optimistic reads.
    PlorSkipReadOnlyValidation,
    /// Ord-Lock: declared reads take no shared lock (the program still reads in place).
    OrdLockReadsUnlocked,
    /// Ord-Lock: declared writes take a shared lock instead of the exclusive one.
    OrdLockWritesShared,
    /// SI: reads return the newest committed version instead of the one the snapshot sees.
    SiReadNewest,
    /// SI: commit installs over a version committed after the snapshot (no first-committer-wins).
    SiSkipFirstCommitterWins,
    /// SI (the multi-version watermark): a commit collects its records' chains below its own
    /// commit timestamp instead of the oldest active snapshot (unit tests only: an older
    /// snapshot's read then finds no version and panics, which a run would report as a crash,
    /// not a history).
    SiCollectPastSnapshots,
    /// SI (RapidGC's deferred collection): the deferred pass collects every queued record's
    /// chain whatever the watermark (unit tests only, as above).
    SiDeferredIgnoresWatermark,
    /// DecentSched: a transaction with a higher id does not wait for a conflicting dependency
    /// with a lower id to finish.
    DecentSchedHigherIdRunsAhead,
    /// DecentSched: only write-write accesses conflict (a read and a write of one object do
    /// not make a dependency).
    DecentSchedOnlyWritesConflict,
    /// DecentSched: the dependency search reads a visited transaction's direct set without
    /// waiting for its ready flag, so a set still being discovered is taken as complete and
    /// the indirect dependencies behind it are missed (unit tests only: the window between a
    /// transaction's queue pushes and its ready flag is a few instructions wide, which runs
    /// under the checker missed 8 times in 8; figure 2b's step-by-step test catches it).
    DecentSchedSkipReadyWait,
    /// DecentSched: queue walks stop at, and the search skips, a transaction that finished
    /// instead of one that retired, though what it depended on may still be running (unit
    /// tests only: `a_walk_passes_a_finished_transaction_that_is_not_retired`; 8 checked runs
    /// in 8 missed it).
    DecentSchedPruneAtFinished,
    /// DecentSched: the epoch barrier completes (clearing the queues, restarting the ids) when
    /// all but one worker arrived, while that worker's transaction may still be live (unit
    /// tests only: `the_epoch_barrier_waits_for_every_live_transaction`).
    DecentSchedClearQueuesWhileLive,
    /// DecentSched, opportunistic execution: a rollback the program decided while running
    /// ahead of its turn stands at once, without waiting for the turn and checking its reads
    /// (unit tests: `a_rollback_on_a_stale_read_does_not_stand`; through the checker, on
    /// `audit.rs`'s workload, runs have not caught it yet and that test is `#[ignore]`d).
    DecentSchedUserAbortUnconfirmed,
    /// DecentSched, test only: every transaction also waits until no other is executing (a
    /// serial schedule, which the parallelism test must tell apart from the real one).
    DecentSchedSerial,
    /// ERMIA: commit never aborts on the exclusion window (SI with SSN's bookkeeping).
    ErmiaSkipExclusionCheck,
    /// ERMIA: `π` ignores the overwriters of the versions read.
    ErmiaIgnoreOverwriters,
    /// ERMIA: `η` ignores the readers of the versions overwritten.
    ErmiaIgnoreReaders,
    /// MVTO: reads of the newest version do not raise its read timestamp.
    MvtoSkipReadTimestamp,
    /// MVTO: commit installs without checking the write and read timestamps of the version it
    /// replaces.
    MvtoSkipWriteCheck,
    /// Calvin (both variants, batched and ticket; `calvin::lock`): declared writes request
    /// reader locks (readers' counters stay consistent, so the
    /// bug never hangs: letting readers skip earlier writers would, as later readers' releases
    /// then overtake a writer's position).
    CalvinWritesLockShared,
    /// Calvin (both variants; the no-wait form's free check too): a writer waits only for
    /// earlier readers, not for earlier writers.
    CalvinWritersIgnoreWriters,
    /// Calvin with tickets: the sequencer's turn is passed on before the transaction's lock requests, and
    /// the worker is preempted between the two (unit tests only: in a run, requests made out
    /// of sequence order on two records can deadlock, which no run could end).
    CalvinPassTurnBeforeRequests,
    /// Batched Calvin: a member runs its program as soon as it made its requests, without
    /// waiting for them to be granted (the lock manager grants on request).
    CalvinBatchRunsBeforeGrants,
    /// BOHM: a read whose version is not produced yet copies whatever version is installed
    /// instead of waiting for it.
    BohmReadDoesNotWait,
    /// BOHM: the CC phase binds each read to the version installed at the member's turn
    /// instead of the last placeholder, missing the writes of earlier members of its batch
    /// (installs still follow the placeholders, so nothing hangs).
    BohmBindToInstalled,
    /// BOHM: an install never keeps the version it replaces, even when a member is bound to
    /// read it (the bound-reader count is ignored: `bohm`'s module docs, "Versions no one
    /// reads"); that reader finds no version of its timestamp in the chain. Unit tests only: the
    /// read panics (`load_visible`), which a step test expects.
    BohmDropsBoundVersions,
    /// BOHM: a commit that installed some versions and then waits for an older writer wakes
    /// no one, so readers of what it installed sleep until its attempt ends (or their park
    /// times out). A liveness bug the checker cannot see: caught step by step.
    BohmCommitSleepsMidway,
    /// BOHM_NW and PWV_NW: the free test at the turn is skipped, so a member places on records
    /// with unproduced placeholders, and its reads, which the no-wait form expects never to
    /// wait, copy whatever version is installed (installs still follow the placeholders, so
    /// nothing hangs).
    PlacedNoWaitSkipsCheck,
    /// BOHM_NW and PWV_NW: a member that finds a record busy places its placeholders anyway,
    /// then aborts with them placed. No one produces them, so the record is never free again:
    /// a liveness bug (unit tests only: in a run, a transaction on such a record conflicts at
    /// every retry and the executors retry it until it commits, so the run never ends;
    /// `bohm::no_wait_tests` shows the next batch's first member finding the record busy).
    PlacedNoWaitConflictKeepsPlaceholders,
    /// PWV: once the version a read is bound to exists, the read takes the newest visible
    /// version of the record instead, which early visibility may have made a later member's.
    PwvReadsNewestVisible,
    /// PWV: a member past its commit point makes its version of a record visible at its read
    /// of the record (a copy of what it read), before it wrote it: readers bound to it see the
    /// value before the write, and the write itself is lost.
    PwvPublishesAtRead,
    /// PWV: a member that read a version made visible early commits without waiting for its
    /// writer to end. txbench runs every placed member to its end, so no outcome changes: the
    /// checker cannot see it, a step-by-step test does.
    PwvSkipsCommitDependency,
    /// C-Sched: the scheduler grants a writer without looking at the keys' other writers.
    CSchedWritersIgnoreWriters,
    /// C-Sched: the scheduler checks only a transaction's first key before granting it.
    CSchedChecksFirstKeyOnly,
    /// DecentSched, opportunistic execution: a speculative attempt whose reads changed before
    /// its turn commits its stale writes instead of re-executing.
    DecentSchedSkipReexecution,
    /// DecentSched, opportunistic execution: installs leave the records' versions as they were,
    /// so a speculative attempt never sees that what it read changed.
    DecentSchedInstallWithoutVersion,
    /// Cicada: reads are never validated (commit step 5, and the same check in step 1's
    /// precheck, which would otherwise catch most stale reads).
    CicadaSkipReadValidation,
    /// Cicada: commit step 4 (raising the read records' `rts`) is skipped, so older writers
    /// overwrite versions younger transactions read.
    CicadaSkipReadTimestamp,
    /// Cicada: reads return the newest committed version instead of the one visible at the
    /// transaction's timestamp (unit tests only: validation then aborts such a read, so the
    /// checker sees nothing; the snapshot-read test must fail with it).
    CicadaReadNewest,
    /// MVTO with AggressiveGC: no starvation protection (unit tests only: the long reader's
    /// liveness, not serializability, depends on it).
    MvtoNoStarvationPriority,
    /// 2PL with early release: only declared writes are locked; declared reads read in place
    /// unlocked.
    TwoPlErReadsUnlocked,
    /// 2PL with early release: the program starts before any lock is taken, and each access
    /// locks its record when it reaches it, so a read's early release comes before the
    /// transaction's later locks (releasing before its lock point: not two-phase).
    TwoPlErLocksAtFirstUse,
    /// 2PL with early release: a write releases its lock at once but is buffered and installed
    /// at commit (early release combined with deferred install).
    TwoPlErReleaseBeforeInstall,
    /// Aria: commit never checks read-after-write conflicts (only write-after-write), so a
    /// member commits reads a lower-ranked member of its batch overwrote.
    AriaSkipReadAfterWrite,
    /// Aria: a reservation keeps its first comer instead of the lowest rank, so two writers of a
    /// record can each see only their own reservation and both install.
    AriaReservationKeepsFirst,
    /// Aria with deterministic reordering: reads are not reserved, so no write-after-read
    /// conflict is ever seen and every read-after-write conflict commits.
    AriaReorderingWithoutReadReservations,
    /// Aria's fallback phase: every lock is granted at once, so a fallback member reads and
    /// writes records that a lower-ranked fallback member is still reading or writing.
    AriaFallbackGrantsWithoutWaiting,
    /// Aria's fallback phase: a rerun starts without waiting for its read locks' grants (its
    /// write locks' still), so it may read a record before a lower-ranked fallback member
    /// installs it. Caught in some runs only (the read must fall between the lower-ranked
    /// member's grant and its install): a race case (`cargo test --lib race_window -- --ignored`).
    AriaFallbackReadsUnlocked,
    /// Aria's fallback phase: every lock is requested shared (as `CalvinWritesLockShared`), so
    /// two fallback members that read-modify-write one record rerun side by side and one update
    /// is lost.
    AriaFallbackWritesLockShared,
    /// Aria's fallback phase: a rerun that touches a record outside its lock set goes on
    /// (unlocked) instead of aborting for its changed access set. Caught by a unit test
    /// (`aria::tests::the_mutant_that_ignores_a_changed_access_set_admits_a_cycle`): the
    /// checker's YCSB loads retry the same request, whose access set never changes.
    AriaFallbackIgnoresChangedAccessSet,
}

mod audit;
mod tests;
