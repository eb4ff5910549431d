//! Silo (Tu et al., SOSP 2013), as CCBench runs it.
//!
//! Optimistic concurrency control with invisible reads and epoch-based commit TIDs:
//!
//! - **Read phase.** A read copies the payload between two loads of the record's [`TidWord`] and
//!   retries until both agree and the record is unlocked; it remembers the TID it saw. Nothing is
//!   written to shared memory (InvisibleReads). Writes are buffered in the write set.
//! - **Commit phase 1.** Lock the write set in one global order (record address), so concurrent
//!   committers cannot deadlock. A busy lock either aborts (`LockWait::NoWait`, CCBench's default)
//!   or waits (`LockWait::Wait`: `Pending`, resuming at the same lock on the next poll).
//! - **Serialization point.** A `SeqCst` fence, then read the global epoch `E`.
//! - **Commit phase 2.** Validate the read set: every record read must still carry the TID seen
//!   and must not be locked by another transaction.
//! - **Commit phase 3.** Choose the commit TID: larger than every TID read or written and than this
//!   worker's previous TID, in epoch `E`. Install each write and release its lock by storing the new
//!   TID (`Release`).
//!
//! Invariant: a record's TID only grows, and a record is written only by the holder of its lock.

pub(crate) mod epoch;
mod tid;

pub use tid::{TidCell, TidWord};

#[cfg(test)]
use super::mutants::Mutant;
use super::{Abort, LockWait, OpResult, Protocol, ProtocolOptions, ReadSet, WriteKind, WriteSet};
use crate::storage::Record;
use epoch::EpochThread;
use std::sync::atomic::{Ordering, fence};
use std::task::Poll;
use std::time::Duration;

/// How many times a read retries a torn copy before yielding to the executor.
const READ_RETRIES: usize = 8;

/// The Silo protocol: its options and the epoch thread.
pub struct Silo {
    lock_wait: LockWait,
    epochs: EpochThread,
    /// Mutation testing: the deliberate bug this instance runs with (`protocol::mutants`).
    #[cfg(test)]
    mutant: Mutant,
}

impl Silo {
    /// Silo for `opts.threads` workers; starts the epoch thread (stopped on drop).
    pub fn new(opts: &ProtocolOptions) -> Self {
        Silo {
            lock_wait: opts.lock_wait,
            epochs: EpochThread::start(opts.threads, Duration::from_millis(opts.silo_epoch_ms)),
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();
}

/// Per-record metadata: the TID word.
pub type SiloMeta = TidCell;

/// A Silo worker's state.
pub struct SiloWorker<'db> {
    id: usize,
    /// Records read with the TID seen.
    reads: ReadSet<'db, SiloMeta, TidWord>,
    /// Buffered writes, with the TID word seen when the record was locked.
    writes: WriteSet<'db, SiloMeta, TidWord>,
    /// Commit progress: the write set is sorted and its first `locked` entries are locked.
    sorted: bool,
    locked: usize,
    /// The TID of this worker's last commit.
    last_tid: TidWord,
}

impl SiloWorker<'_> {
    fn unlock_held(&mut self) {
        for e in &self.writes.entries()[..self.locked] {
            // Restores the word seen at lock time: the version did not change.
            e.rec.meta().store(e.state);
        }
        self.locked = 0;
    }
}

impl Protocol for Silo {
    type RecordMeta = SiloMeta;
    type Worker<'db> = SiloWorker<'db>;

    fn new_worker<'db>(&'db self, id: usize) -> SiloWorker<'db> {
        SiloWorker {
            id,
            reads: ReadSet::default(),
            writes: WriteSet::default(),
            sorted: false,
            locked: 0,
            last_tid: TidWord::default(),
        }
    }

    fn begin(&self, w: &mut SiloWorker<'_>, _start: super::AttemptStart) {
        w.reads.clear();
        w.writes.clear();
        w.sorted = false;
        w.locked = 0;
        let epochs = self.epochs.epochs();
        epochs.observe(w.id, epochs.global());
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut SiloWorker<'db>,
        rec: Record<'db, SiloMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        match rec.meta().read_consistent(rec.payload, out, READ_RETRIES) {
            Some(seen) => {
                w.reads.push(rec, seen);
                Poll::Ready(Ok(()))
            }
            // Locked by a committer installing it, or torn repeatedly: let the executor wait.
            None => Poll::Pending,
        }
    }

    /// Read committed is Silo's read minus the read-set entry: the TID seqlock already guarantees
    /// a committed, untorn copy (a locked word means a committer is at work: wait, as `read`
    /// does; before its own commit this worker holds no TID lock, so nobody waits for it and the
    /// wait cannot close a cycle), and leaving the read set alone exempts it from validation.
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut SiloWorker<'db>,
        rec: Record<'db, SiloMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        match rec.meta().read_consistent(rec.payload, out, READ_RETRIES) {
            Some(_) => Poll::Ready(Ok(())),
            None => Poll::Pending,
        }
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut SiloWorker<'db>,
        rec: Record<'db, SiloMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        w.writes.put(rec, kind, data, TidWord::default());
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut SiloWorker<'_>) -> OpResult {
        // Phase 1: lock the write set in address order, resuming where a wait left off.
        if !w.sorted {
            w.writes.sort_by_record();
            w.sorted = true;
        }
        while w.locked < w.writes.len() {
            let meta = w.writes.entries()[w.locked].rec.meta();
            let seen = meta.load();
            if !seen.is_locked() && meta.try_lock(seen) {
                w.writes.entries_mut()[w.locked].state = seen;
                w.locked += 1;
                continue;
            }
            return match self.lock_wait {
                LockWait::Wait => Poll::Pending,
                LockWait::NoWait => Poll::Ready(Err(Abort::LockConflict)),
            };
        }

        // Serialization point: the lock CASes above are ordered before the epoch and read-set
        // loads below (SeqCst fence; Silo 4.2 requires this between phases 1 and 2). Being
        // also a Release fence, it is the seqlock writer's half: the lock CASes are ordered
        // before phase 3's payload stores (pairs with `TidCell::read_consistent`'s fence).
        fence(Ordering::SeqCst);
        let epoch = self.epochs.epochs().global();

        #[cfg(test)]
        if self.mutant == Mutant::SiloInstallBeforeValidation {
            for i in 0..w.writes.len() {
                w.writes.install(i);
            }
        }

        // Phase 2: validate reads.
        let mut max_tid = w.last_tid.tid();
        for (rec, seen) in w.reads.iter() {
            #[cfg(test)]
            if self.mutant == Mutant::SiloSkipReadValidation {
                max_tid = max_tid.max(seen.tid());
                continue;
            }
            let now = rec.meta().load();
            if now.tid() != seen.tid() {
                return Poll::Ready(Err(Abort::ReadValidation));
            }
            #[cfg(test)]
            let now = match self.mutant {
                Mutant::SiloValidationIgnoresLockBit => now.unlocked(),
                _ => now,
            };
            if now.is_locked()
                && !w
                    .writes
                    .entries()
                    .iter()
                    .any(|e| e.rec.order_key() == rec.order_key())
            {
                return Poll::Ready(Err(Abort::ReadValidation));
            }
            max_tid = max_tid.max(seen.tid());
        }
        for e in w.writes.entries() {
            max_tid = max_tid.max(e.state.tid());
        }

        // Phase 3: install with the new TID, which also releases each lock.
        let tid = TidWord::next_after(max_tid, epoch);
        for i in 0..w.writes.len() {
            #[cfg(test)]
            match self.mutant {
                Mutant::SiloUnlockBeforeInstall => {
                    w.writes.entries()[i].rec.meta().store(tid);
                    w.writes.install(i);
                    continue;
                }
                Mutant::SiloInstallBeforeValidation => {
                    w.writes.entries()[i].rec.meta().store(tid);
                    continue;
                }
                _ => {}
            }
            w.writes.install(i);
            w.writes.entries()[i].rec.meta().store(tid);
        }
        w.locked = 0;
        w.last_tid = tid;
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut SiloWorker<'_>, _why: Abort) {
        w.unlock_held();
        w.reads.clear();
        w.writes.clear();
        w.sorted = false;
    }

    fn install_log<'w>(&self, w: &'w mut SiloWorker<'_>) -> &'w mut crate::protocol::InstallLog {
        w.writes.install_log()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AttemptStart;
    use crate::storage::{RecordId, Table, TableSpec};

    fn setup() -> (Silo, Table<SiloMeta>) {
        let opts = ProtocolOptions {
            threads: 2,
            ..Default::default()
        };
        let t = Table::new(TableSpec {
            name: "t".into(),
            records: 4,
            payload_bytes: 8,
        });
        (Silo::new(&opts), t)
    }

    #[test]
    fn read_validation_catches_a_concurrent_commit() {
        let (silo, t) = setup();
        let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
        let mut a = silo.new_worker(0);
        let mut b = silo.new_worker(1);
        let mut buf = [0u8; 8];
        silo.begin(&mut a, AttemptStart::FIRST);
        assert_eq!(silo.read(&mut a, x, &mut buf), Poll::Ready(Ok(())));
        assert_eq!(
            silo.write(&mut a, y, &[1; 8], WriteKind::Blind),
            Poll::Ready(Ok(()))
        );
        silo.begin(&mut b, AttemptStart::FIRST);
        assert_eq!(
            silo.write(&mut b, x, &[2; 8], WriteKind::Blind),
            Poll::Ready(Ok(()))
        );
        assert_eq!(silo.commit(&mut b), Poll::Ready(Ok(())));
        assert_eq!(silo.commit(&mut a), Poll::Ready(Err(Abort::ReadValidation)));
        silo.abort(&mut a, Abort::ReadValidation);
        assert!(
            !y.meta().load().is_locked(),
            "abort releases the write lock"
        );
    }

    #[test]
    fn locked_record_makes_readers_wait_and_nowait_committers_abort() {
        let (silo, t) = setup();
        let x = t.get(RecordId(2)).unwrap();
        let mut a = silo.new_worker(0);
        let mut b = silo.new_worker(1);
        let mut buf = [0u8; 8];
        let seen = x.meta().load();
        assert!(x.meta().try_lock(seen));
        silo.begin(&mut a, AttemptStart::FIRST);
        assert_eq!(silo.read(&mut a, x, &mut buf), Poll::Pending);
        silo.begin(&mut b, AttemptStart::FIRST);
        assert_eq!(
            silo.write(&mut b, x, &[3; 8], WriteKind::Blind),
            Poll::Ready(Ok(()))
        );
        assert_eq!(silo.commit(&mut b), Poll::Ready(Err(Abort::LockConflict)));
        silo.abort(&mut b, Abort::LockConflict);
        x.meta().store(seen);
        assert_eq!(silo.read(&mut a, x, &mut buf), Poll::Ready(Ok(())));
    }

    #[test]
    fn commit_tids_grow_and_install_data() {
        let (silo, t) = setup();
        let x = t.get(RecordId(3)).unwrap();
        let mut a = silo.new_worker(0);
        let mut buf = [0u8; 8];
        let mut last = 0;
        for i in 0..3u8 {
            silo.begin(&mut a, AttemptStart::FIRST);
            assert_eq!(silo.read(&mut a, x, &mut buf), Poll::Ready(Ok(())));
            assert_eq!(buf, [i; 8]);
            assert_eq!(
                silo.write(&mut a, x, &[i + 1; 8], WriteKind::ReadModifyWrite),
                Poll::Ready(Ok(()))
            );
            assert_eq!(silo.commit(&mut a), Poll::Ready(Ok(())));
            let tid = x.meta().load().tid();
            assert!(tid > last);
            last = tid;
        }
    }

    #[test]
    fn read_committed_skips_buffered_writes_and_waits_for_an_install() {
        let (silo, t) = setup();
        let x = t.get(RecordId(0)).unwrap();
        let mut a = silo.new_worker(0);
        let mut b = silo.new_worker(1);
        let mut buf = [0u8; 8];
        silo.begin(&mut a, AttemptStart::FIRST);
        silo.begin(&mut b, AttemptStart::FIRST);
        assert_eq!(
            silo.write(&mut b, x, &[4; 8], WriteKind::Blind),
            Poll::Ready(Ok(()))
        );
        assert_eq!(
            silo.read_committed(&mut a, x, &mut buf),
            Poll::Ready(Ok(()))
        );
        assert_eq!(buf, [0; 8], "b's write is buffered, not committed");
        // A committer holding the TID lock is installing: wait rather than copy.
        let seen = x.meta().load();
        assert!(x.meta().try_lock(seen));
        assert_eq!(silo.read_committed(&mut a, x, &mut buf), Poll::Pending);
        x.meta().store(seen);
        assert_eq!(silo.commit(&mut b), Poll::Ready(Ok(())));
        assert_eq!(
            silo.read_committed(&mut a, x, &mut buf),
            Poll::Ready(Ok(()))
        );
        assert_eq!(buf, [4; 8], "committed value seen");
        assert_eq!(silo.commit(&mut a), Poll::Ready(Ok(())));
    }

    #[test]
    fn read_committed_is_not_validated_and_reads_own_writes() {
        let (silo, t) = setup();
        let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
        let mut a = silo.new_worker(0);
        let mut b = silo.new_worker(1);
        let mut buf = [0u8; 8];
        silo.begin(&mut a, AttemptStart::FIRST);
        assert_eq!(
            silo.read_committed(&mut a, x, &mut buf),
            Poll::Ready(Ok(()))
        );
        assert_eq!(
            silo.write(&mut a, y, &[1; 8], WriteKind::Blind),
            Poll::Ready(Ok(()))
        );
        assert_eq!(
            silo.read_committed(&mut a, y, &mut buf),
            Poll::Ready(Ok(()))
        );
        assert_eq!(buf, [1; 8], "own write");
        silo.begin(&mut b, AttemptStart::FIRST);
        assert_eq!(
            silo.write(&mut b, x, &[2; 8], WriteKind::Blind),
            Poll::Ready(Ok(()))
        );
        assert_eq!(silo.commit(&mut b), Poll::Ready(Ok(())));
        // A serializable read of x would fail validation here (see the test above).
        assert_eq!(silo.commit(&mut a), Poll::Ready(Ok(())));
        let mut out = [0u8; 8];
        y.payload.load(&mut out);
        assert_eq!(out, [1; 8]);
    }
}
