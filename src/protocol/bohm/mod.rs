//! BOHM (Faleiro and Abadi, VLDB 2015): multi-version concurrency control in batches, with every
//! version's place decided before any transaction runs. No validation, no aborts (the no-wait
//! form aside).
//!
//! # Phases
//!
//! Transactions are collected into batches by the shared batch layer ([`super::batch`]); a
//! member's timestamp is its batch and its position in it (arrival order), `batch << 24 |
//! (position + 1)`, so timestamps grow with the batch order.
//!
//! 1. **Concurrency control.** The members take turns in position order ([`Turn`]; BOHM's CC
//!    threads walk the batch in order, here each member places its own accesses in that same
//!    order), starting with the first member, before the batch closes: a later arrival comes
//!    later in the walk anyway, so the order is the one a CC phase over the closed batch
//!    would give. For each record of its declared set a member reads the
//!    record's *last writer* (the timestamp of the newest version placed so far, committed or
//!    not): that is the version its read of the record must see. For each record it writes, it
//!    then becomes the last writer: a *placeholder* for the version it will produce. A member
//!    that writes a record reads the version before its own.
//! 2. **Execution.** The program runs: a read of a declared record waits (`Pending`) until the
//!    version it is bound to is produced, then copies it (inline or from the record's chain of
//!    older versions, on the shared version storage); writes are buffered. At commit the member
//!    produces its versions: each record's versions are installed in timestamp order (the
//!    storage keeps the newest inline and older ones in a chain of decreasing timestamps, so a
//!    version is installed once the version before it is), then it leaves the batch.
//!
//! Waiting: a read or an install that waits answers `Pending`, and the executor yields or parks
//! the transaction. What it waits for is an older member's install; a commit that installed
//! some versions and then waits for another record wakes parked waiters itself
//! ([`super::wake`]), since its attempt (whose end wakes them) goes on.
//!
//! Why it is serializable: every read sees the version of the last writer before it in timestamp
//! order, and every record's versions are installed in timestamp order: exactly the serial
//! execution in timestamp order. Nothing aborts: conflicts were ordered before execution. No
//! deadlock: a read waits for an older writer's install, an install for an older writer's
//! install, and the oldest member of a batch waits for nothing of its batch.
//!
//! # The no-wait form (`--bohm-no-wait`, `--pwv-no-wait`)
//!
//! SGPM's BOHM_NW and PWV_NW. For a placeholder protocol "a conflict reruns the transaction
//! instead of waiting" is decided where the wait is created: at the member's turn in the CC
//! phase. If a record of its declared set still has an unproduced placeholder of an earlier
//! member of its batch ([`no_wait`]'s *free* test: its newest placed version is not installed),
//! the member places nothing, passes the turn, and aborts with [`Abort::LockConflict`] to rerun
//! in a later batch (under coroutines SGPM's SF, [`Signal::Sf`]: it swaps places with the global
//! queue's front and the next free slot takes it), with a new timestamp; otherwise it places as above. So a
//! placed member's reads are bound to versions that exist and each of its installs follows a
//! version that exists: no placed member waits for another (PWV_NW's reader still waits at its
//! commit for the writer of a version made visible early, the commit dependency). A read of a
//! record leaves it free, so readers followed by writers of a record are placed together: the
//! versions keep them apart.
//!
//! The batch's first member always places: the batches before it produced every placeholder
//! (they are sequential), so every record is free for it and each batch commits at least one
//! transaction. It is tested like the others: a bug that left a placeholder unproduced shows as
//! a first member that reruns (a step test catches it), not as one that waits forever for a
//! version no one will produce. As Calvin_NW, a member is placed by arrival, not age: one that
//! conflicts every time could in principle be passed over batch after batch.
//!
//! Why it is serializable: the placed members of a batch are exactly a BOHM batch whose
//! declared sets are theirs (a member that places nothing takes no part: it binds nothing and
//! no one binds to it), so the argument above holds unchanged; the rerun is a new transaction
//! of a later batch.
//!
//! Where this differs from SGPM: its table 1 has BOHM_NW and PWV_NW answer SF at a read or
//! write that would wait (reset, swap with the global queue's front, and rerun with the same
//! place in the batch). The signal is the same here (SF), but the test comes before anything
//! is placed and the rerun joins a later batch with a new timestamp, as Calvin_NW's does here
//! (`protocol::calvin`), so a placeholder is never left for a transaction that restarts.
//! SGPM's code was not available to compare.
//!
//! # Where this differs from the paper
//!
//! - BOHM fills a placeholder wherever it sits, so a writer never waits for an older writer of
//!   the same record; here the storage keeps versions ordered (the newest inline), so a member's
//!   install waits at commit until the record's previous version is installed. Reads are as in
//!   BOHM: a reader waits for exactly the version it is bound to, and never for a later writer.
//! - The paper pipelines the CC phase of one batch with the execution of the one before; here
//!   batches are sequential (the batch layer's rule), so a batch's CC starts once the previous
//!   batch has finished. Within a batch, CC starts with the first arrival rather than once the
//!   batch is whole (phase 1 above), the small part of that pipelining a sequential batch
//!   allows.
//! - Versions no one is bound to read are not kept (below).
//! - A user abort (TPC-C New-Order's rollback) produces, at each placeholder, a copy of the
//!   version before it ([`DeclaredSet::confirm_user_abort`], which may wait): readers bound to it
//!   see the value the rolled-back transaction never changed.
//!
//! # Versions no one reads
//!
//! An install keeps the version it replaces (pushes it onto the record's chain of older
//! versions) only if some member is bound to read it. Who can be is known at the writer's turn:
//! a member binds a read to the record's last writer at its own turn, so the readers of the
//! version a writer replaces (its `before`) are exactly the members placed after `before`'s
//! writer and before this writer, and every one of them placed before the writer did. The CC
//! phase counts them per record (`BohmMeta::last_readers`, tagged with the batch, since readers
//! of earlier batches are done: batches are sequential), and the writer takes the count with
//! its placeholder. With no reader bound to it, `before` is overwritten in place: no read can
//! ask for it (a covered record's reads copy only the newest version), so pushing it would
//! only cost a node and its collection. This is BOHM's garbage collection done at the install:
//! the paper frees a version once no transaction can read it; here a version no one is bound to
//! is never kept at all.
//!
//! Records reached through a declared set's *cover* (`protocol::declared`: TPC-C NP's inserted
//! rows) have no placeholder: every transaction that touches them writes their covering record,
//! so they are read and written in that record's version order. A read of one copies the newest
//! installed version; a write installs at commit, before the member's declared writes (so that
//! the next writer of the covering record finds them installed).
//!
//! Record metadata: SI's record word (`LOCK | timestamp of the inline version`), the chain of
//! older versions, and the last writer placed.

pub mod no_wait;
#[cfg(test)]
mod no_wait_tests;
#[cfg(test)]
mod pwv_tests;
#[cfg(test)]
mod tests;

use super::batch::{BatchTicket, Batches, MAX_BATCH_SIZE, Turn};
#[cfg(test)]
use super::mutants::Mutant;
use super::mv_common::{LOCK, MvState, mv_record, push_version, snapshot_read};
use super::parts::{
    DeclaredSet, DeclaredSetPart, MultiVersion, MultiVersionPart, RunHooks, RunHooksPart,
};
use super::signal::Signal;
use super::{
    Abort, AccessMode, AttemptStart, DeclaredRecord, InstallLog, OpResult, Protocol,
    ProtocolOptions, WriteKind, WriteSet,
};
use crate::storage::grace::Holds;
use crate::storage::versions::{VersionChain, VersionPool, VersionStore, Watermark};
use crate::storage::{Record, stamp};
use crossbeam_utils::CachePadded;
pub use no_wait::PlacedOptions;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::task::Poll;

/// Bits of a position in a timestamp (a batch holds at most 1024 members).
const POSITION_BITS: u32 = 24;

/// The timestamp of the member of `t`: its batch, then its position (plus one: 0 is the loaded
/// version's).
#[inline]
fn timestamp(t: &BatchTicket) -> u64 {
    t.batch() << POSITION_BITS | (u64::from(t.position()) + 1)
}

/// Below every timestamp of the ticket's batch and at or above every earlier batch's: what a
/// member's install collects its record's chain below (module docs of `collect_below`).
#[inline]
fn batch_floor(t: &BatchTicket) -> u64 {
    t.batch() << POSITION_BITS
}

/// Per-record metadata.
#[derive(Default)]
pub struct BohmMeta {
    /// `LOCK | timestamp of the inline version` (SI's record word).
    word: AtomicU64,
    /// Older versions, newest first.
    chain: VersionChain<()>,
    /// The timestamp of the newest version placed by the CC phase (its placeholder), installed
    /// or not. Written only by the member holding the turn.
    last_writer: AtomicU64,
    /// `batch << 24 | readers`: how many members of `batch` bound a read to `last_writer`'s
    /// version (placed after its writer). Written only by the member holding the turn. The next
    /// writer takes the count as its `before_readers`; a count of an earlier batch is zero (its
    /// readers are done: batches are sequential).
    last_readers: AtomicU64,
}

mv_record!(BohmMeta, ());

/// BOHM's engine: the batch layer, the CC phase's turn and the version storage. `EARLY` is
/// whether a write becomes visible once its transaction is past its commit point (PWV,
/// [`super::pwv`]) rather than at its commit (BOHM).
pub struct PlacedVersions<const EARLY: bool> {
    batches: Batches,
    turn: Turn,
    /// The workload's transactions may abort by their own logic (PWV then makes nothing visible
    /// before commit: `ProtocolOptions::user_aborts`).
    user_aborts: bool,
    /// The no-wait form (module docs): `ProtocolOptions::bohm` or `pwv`.
    no_wait: bool,
    /// Transactions the no-wait form sent to the next batch (report).
    conflicts: CachePadded<AtomicU64>,
    /// PWV: per position in the batch, the timestamp of the last member at that position whose
    /// attempt ended (committed, or rolled back with its placeholders produced): readers of a
    /// version made visible early commit once its writer's entry is there. Empty for BOHM.
    ended: Box<[AtomicU64]>,
    /// The version store; its watermark is never entered: BOHM's collections are bounded by
    /// the batch floor instead (`batch_floor`), and the trait's watermark is only reported.
    mv: MvState<()>,
    #[cfg(test)]
    mutant: Mutant,
}

/// BOHM: every write becomes visible at its transaction's commit.
pub type Bohm = PlacedVersions<false>;
/// PWV ([`super::pwv`]): a write becomes visible once its transaction is past its commit point.
pub type Pwv = PlacedVersions<true>;
/// A BOHM worker.
pub type BohmWorker<'db> = PlacedWorker<'db, false>;
/// A PWV worker.
pub type PwvWorker<'db> = PlacedWorker<'db, true>;

impl<const EARLY: bool> PlacedVersions<EARLY> {
    /// The protocol for `opts.threads` workers, with batches formed by `opts.batch`, version
    /// memory bounded by `opts.mv`, and the form `opts.bohm` (BOHM) or `opts.pwv` (PWV) selects.
    pub fn new(opts: &ProtocolOptions) -> Self {
        PlacedVersions {
            batches: Batches::new(&opts.batch),
            turn: Turn::default(),
            user_aborts: opts.user_aborts,
            no_wait: if EARLY { opts.pwv } else { opts.bohm }.no_wait,
            conflicts: CachePadded::new(AtomicU64::new(0)),
            ended: if EARLY {
                (0..MAX_BATCH_SIZE).map(|_| AtomicU64::new(0)).collect()
            } else {
                Box::default()
            },
            mv: MvState::new(opts),
            #[cfg(test)]
            mutant: Mutant::None,
        }
    }

    #[cfg(test)]
    crate::protocol::mutants::with_mutant!();

    /// The CC phase for one member, in its turn: binds every declared record to the version
    /// its read must see, and places a placeholder for every record it writes.
    fn place(&self, w: &mut PlacedWorker<'_, EARLY>, set: &[DeclaredRecord<'_, BohmMeta>]) {
        let ts = timestamp(&w.ticket);
        w.bound.clear();
        for d in set {
            let meta = d.record.meta();
            // Relaxed: only the turn holder writes `last_writer`, and the turn's hand-over
            // (Release / Acquire) orders the previous holder's store before this load.
            let before = meta.last_writer.load(Ordering::Relaxed);
            #[cfg(test)]
            let read_at = if self.mutant == Mutant::BohmBindToInstalled {
                // The bug: bind to the version installed now, missing the placeholders of the
                // members before us.
                meta.word.load(Ordering::Acquire) & !LOCK
            } else {
                before
            };
            #[cfg(not(test))]
            let read_at = before;
            // Relaxed: written only by the turn holder, as `last_writer`.
            let readers = meta.last_readers.load(Ordering::Relaxed);
            let readers_now = if readers >> POSITION_BITS == w.ticket.batch() {
                readers & ((1 << POSITION_BITS) - 1)
            } else {
                0
            };
            let before_read = if d.mode == AccessMode::Write {
                // Relaxed: as above.
                meta.last_writer.store(ts, Ordering::Relaxed);
                // Relaxed: as above. No reader of our version yet.
                meta.last_readers.store(0, Ordering::Relaxed);
                readers_now > 0
            } else {
                // Relaxed: as above. One more reader of `before`, in this batch.
                meta.last_readers.store(
                    w.ticket.batch() << POSITION_BITS | (readers_now + 1),
                    Ordering::Relaxed,
                );
                false
            };
            w.bound.push(Bound {
                order_key: d.record.order_key(),
                mode: d.mode,
                read_at,
                before,
                produced: false,
                before_read,
            });
        }
        w.ts = ts;
        // PWV's commit point (`super::pwv`): where no user abort can come, the member cannot
        // abort any more once placed.
        w.early = EARLY && !self.user_aborts;
    }

    /// The no-wait form's test at `w`'s turn: whether every record of `set` is free
    /// ([`no_wait::all_free`]).
    fn free_at_turn(
        &self,
        w: &mut PlacedWorker<'_, EARLY>,
        set: &[DeclaredRecord<'_, BohmMeta>],
    ) -> bool {
        #[cfg(test)]
        match self.mutant {
            // The bug: no test, the member places anyway (and its reads, which the no-wait
            // form expects never to wait, copy whatever is installed: `read_version`).
            Mutant::PlacedNoWaitSkipsCheck => return true,
            Mutant::PlacedNoWaitConflictKeepsPlaceholders if !no_wait::all_free(set) => {
                // The bug: the member places its placeholders before it gives up, and aborts
                // with them placed; no one will produce them.
                self.place(w, set);
                return false;
            }
            _ => {}
        }
        let _ = w;
        no_wait::all_free(set)
    }

    /// Copies into `out` the version of `rec` with timestamp `at` once it is produced
    /// (`Pending` before).
    #[inline]
    fn read_version(&self, rec: Record<'_, BohmMeta>, at: u64, out: &mut [u8]) -> OpResult {
        let meta = rec.meta();
        // Acquire: as in `snapshot_read`.
        let installed = meta.word.load(Ordering::Acquire) & !LOCK;
        #[cfg(test)]
        let wait = self.mutant != Mutant::BohmReadDoesNotWait
            && self.mutant != Mutant::PlacedNoWaitSkipsCheck;
        #[cfg(not(test))]
        let wait = true;
        if installed < at && wait {
            debug_assert!(
                !self.no_wait,
                "no-wait: a placed member's bound versions were produced at its turn"
            );
            // Not produced yet: its writer (older than us) has not installed.
            return Poll::Pending;
        }
        // SAFETY: `snapshot_read` walks the chain to the first node at or below `at` and stops
        // there. Every collect of this chain is an install of a member of our batch (batches
        // are sequential) and frees only the nodes past the first one at or below the batch's
        // floor (`batch_floor`), keeping that one. `at` is the timestamp of a version placed in
        // our batch (above the floor) or of the newest version placed before it, which is
        // inline or that kept node itself (no version of an earlier batch is newer). So the
        // walk never passes the kept node. Our batch cannot end while we read. (And the node
        // of `at` is there once `at` is not inline: the install that replaced it counted us
        // among its readers and kept it: "Versions no one reads".)
        let read = unsafe { snapshot_read(rec, at, out) };
        read.map(|r| r.map(|_| ()))
    }

    /// Replaces the inline version of `rec` (timestamp `old`, which the caller has just locked)
    /// with the attempt's write `entry`, or with a copy of itself when the attempt did not write
    /// it (a placeholder the attempt leaves unchanged), at timestamp `ts`; unlocks at `ts`.
    /// `old` goes into the record's chain only if `old_read`: some member is bound to read it
    /// (module docs, "Versions no one reads").
    fn install_over(
        &self,
        w: &mut PlacedWorker<'_, EARLY>,
        rec: Record<'_, BohmMeta>,
        old: u64,
        entry: Option<usize>,
        old_read: bool,
    ) {
        let meta = rec.meta();
        #[cfg(test)]
        let old_read = match self.mutant {
            Mutant::BohmDropsBoundVersions => false,
            // These mutants read versions no count saw (bound to an older version; a member's
            // own read after it published a copy at the read): keep every version, so that
            // their reads find what they bound to and the tests see the wrong values.
            Mutant::BohmBindToInstalled | Mutant::PwvPublishesAtRead => true,
            _ => old_read,
        };
        // Release fence, the seqlock writer's half (as SI's commit): the lock CAS before it is
        // ordered before the payload stores after it (pairs with `snapshot_read`'s fence).
        fence(Ordering::Release);
        if old_read {
            push_version(
                &meta.chain,
                &mut w.pool,
                &mut w.scratch,
                old,
                rec.payload,
                |_| (),
            );
        }
        // Release: the pushed node is reachable before a reader bound to `old` sees a newer
        // word and walks the chain.
        meta.word.store(LOCK | w.ts, Ordering::Release);
        if let Some(i) = entry {
            w.writes.install(i);
        }
        if old_read {
            // Only a push lengthens the chain, so only a push needs a collect after it.
            meta.chain
                .collect(w.ts, batch_floor(&w.ticket), &mut w.pool);
        }
        // Release: the install happens before a reader bound to this version copies it.
        meta.word.store(w.ts, Ordering::Release);
    }

    /// Installs the covered writes (no placeholder), then produces every placeholder in set
    /// order, from where the last call stopped: `Pending` while a record's previous version is
    /// not installed yet. `write` false produces each placeholder as a copy of the version
    /// before it (a user abort).
    fn produce(&self, w: &mut PlacedWorker<'_, EARLY>, write: bool) -> Poll<()> {
        let mut installed = false;
        let done = self.produce_from(w, write, &mut installed);
        #[cfg(test)]
        let installed = installed && self.mutant != Mutant::BohmCommitSleepsMidway;
        if installed && done.is_pending() {
            // Readers bound to the versions just installed may be parked, and this attempt
            // does not end yet (the executors wake waiters when an attempt ends).
            super::wake::wake_waiters();
        }
        done
    }

    /// [`produce`](Self::produce)'s steps; sets `installed` when it installed a version.
    fn produce_from(
        &self,
        w: &mut PlacedWorker<'_, EARLY>,
        write: bool,
        installed: &mut bool,
    ) -> Poll<()> {
        while w.covered_done < w.writes.len() {
            let i = w.covered_done;
            let rec = w.writes.entries()[i].rec;
            if !write || w.binding(&rec).is_some() {
                w.covered_done += 1;
                continue;
            }
            let meta = rec.meta();
            // Acquire: after the previous install (its Release unlock).
            let seen = meta.word.load(Ordering::Acquire);
            if seen & LOCK != 0
                || meta
                    .word
                    .compare_exchange(seen, seen | LOCK, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
            {
                return Poll::Pending;
            }
            debug_assert!(
                seen < w.ts,
                "covered records are written in timestamp order"
            );
            // A covered record's reads copy the newest installed version (`read_newest`),
            // never the chain.
            self.install_over(w, rec, seen, Some(i), false);
            *installed = true;
            w.covered_done += 1;
        }
        while let Some(b) = w.bound.get(w.produced).copied() {
            if b.mode == AccessMode::Read || b.produced {
                w.produced += 1;
                continue;
            }
            let rec = w.bound_records[w.produced];
            let meta = rec.meta();
            // Acquire: pairs with the previous writer's Release unlock, so our install follows
            // its install.
            if meta
                .word
                .compare_exchange(
                    b.before,
                    b.before | LOCK,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_err()
            {
                // The version before ours is not installed yet (or is being installed).
                return Poll::Pending;
            }
            let entry = if write { w.writes.position(&rec) } else { None };
            self.install_over(w, rec, b.before, entry, b.before_read);
            *installed = true;
            w.produced += 1;
        }
        Poll::Ready(())
    }
}

impl<const EARLY: bool> PlacedVersions<EARLY> {
    /// PWV: makes the attempt's write of `rec` (write-set entry `entry`, binding `i`) visible
    /// now that it is written, if the version before it is installed. Otherwise the commit
    /// produces it, as BOHM's does (an older writer that has not produced yet).
    fn publish_early(
        &self,
        w: &mut PlacedWorker<'_, EARLY>,
        i: usize,
        rec: Record<'_, BohmMeta>,
        entry: usize,
    ) {
        if w.bound[i].produced {
            #[cfg(test)]
            if self.mutant == Mutant::PwvPublishesAtRead {
                // The mutant published at the read: this write goes nowhere.
                return;
            }
            panic!(
                "pwv: a transaction wrote new bytes to a record whose version it had already \
                 made visible (under PWV a program writes each declared record once: \
                 `protocol::pwv`)"
            );
        }
        self.try_publish(w, i, rec, Some(entry));
    }

    /// PWV: whether this write of `rec`, whose binding is produced, repeats the attempt's write
    /// whose version it already made visible, row for row. Such a write changes nothing and is skipped (its kind too: the
    /// visible version stays an insert if it was one). An index's next-key path makes it: an
    /// insert into a slot, then the path after the new key passes an older entry into the same
    /// slot (an aborted attempt's, never removed) and rewrites its record unchanged
    /// (`txn::index_ops`); under coroutines the slot's earlier request, moved by a signal, may
    /// still be in flight and have entered such a key. In check mode the two differ in the
    /// stamp's seq word only (the visible version's was set at its install, the rewrite's is
    /// the uninstalled mark), so that word is not compared. Only a write with a different row
    /// breaks the rule that a version made visible is final.
    fn rewrites_the_visible_version(
        &self,
        w: &mut PlacedWorker<'_, EARLY>,
        rec: &Record<'_, BohmMeta>,
        data: &[u8],
    ) -> bool {
        let Some(e) = w.writes.position(rec) else {
            return false;
        };
        let stamped = w.writes.install_log().is_enabled();
        let visible = w.writes.data(e);
        if !stamped {
            return visible == data;
        }
        let seq = 8 * stamp::seq_word(data.len());
        visible[..seq] == data[..seq] && visible[seq + 8..] == data[seq + 8..]
    }

    /// Installs binding `i`'s version of `rec` (the attempt's write `entry`, or a copy of the
    /// version before it) if the version before it is installed; wakes the readers that may
    /// wait for it.
    fn try_publish(
        &self,
        w: &mut PlacedWorker<'_, EARLY>,
        i: usize,
        rec: Record<'_, BohmMeta>,
        entry: Option<usize>,
    ) {
        let before = w.bound[i].before;
        // Acquire: pairs with the previous writer's Release unlock, so our install follows
        // its install (as in `produce_from`).
        if rec
            .meta()
            .word
            .compare_exchange(before, before | LOCK, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let before_read = w.bound[i].before_read;
        self.install_over(w, rec, before, entry, before_read);
        w.bound[i].produced = true;
        // Readers bound to this version may be parked; the writer's attempt goes on.
        super::wake::wake_waiters();
    }

    /// PWV's commit dependency: whether every member of this batch whose version the attempt
    /// read has ended (committed, or rolled back with its placeholders produced).
    fn writers_ended(&self, w: &PlacedWorker<'_, EARLY>) -> bool {
        #[cfg(test)]
        if self.mutant == Mutant::PwvSkipsCommitDependency {
            return true;
        }
        w.deps.iter().all(|&at| {
            // Acquire: pairs with the writer's Release in `ended`: its commit happens before
            // ours. An entry is a later timestamp only once our batch is over, so `>=`.
            self.ended[position_of(at)].load(Ordering::Acquire) >= at
        })
    }

    /// PWV: the attempt of `w` has ended; readers of its versions may commit.
    fn mark_ended(&self, w: &PlacedWorker<'_, EARLY>) {
        if EARLY {
            // Release: pairs with the Acquire in `writers_ended`.
            self.ended[position_of(w.ts)].store(w.ts, Ordering::Release);
        }
    }
}

/// The position in its batch of the member with timestamp `ts` (an index of `ended`).
#[inline]
fn position_of(ts: u64) -> usize {
    ((ts & ((1 << POSITION_BITS) - 1)) - 1) as usize
}

/// Copies into `out` the newest installed version of `rec` (a covered record: module docs);
/// `Pending` while an install holds it.
#[inline]
fn read_newest(rec: Record<'_, BohmMeta>, out: &mut [u8]) -> OpResult {
    // SAFETY: no inline timestamp is above `LOCK - 1`, so the read copies the inline version
    // (or waits) and never walks the chain.
    let read = unsafe { snapshot_read(rec, LOCK - 1, out) };
    read.map(|r| r.map(|_| ()))
}

/// A declared record's place in the CC phase.
#[derive(Debug, Clone, Copy)]
struct Bound {
    /// The record's `order_key` (bindings are in set order, which is by order key).
    order_key: usize,
    mode: AccessMode,
    /// The version a read of the record sees (the last writer before us).
    read_at: u64,
    /// The version our own version follows (a writer installs once it is installed).
    before: u64,
    /// Our version of the record is installed (PWV: made visible before commit).
    produced: bool,
    /// A write: whether any other member is bound to read `before` (placed after its writer and
    /// before us). If none is, our install overwrites `before` in place instead of keeping it
    /// in the record's chain: no reader can ask for it (module docs, "Versions no one reads").
    before_read: bool,
}

/// Where a worker's attempt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not placed yet: joining a batch, or a member waiting for its turn
    /// (its ticket holds the batch).
    Idle,
    /// Placed: the program runs, then commit produces the versions.
    Running,
    /// No-wait: a record was not free at the turn; nothing placed, the attempt aborts.
    Conflicted,
}

/// A worker of BOHM or PWV.
pub struct PlacedWorker<'db, const EARLY: bool> {
    protocol: &'db PlacedVersions<EARLY>,
    ticket: BatchTicket,
    stage: Stage,
    /// The attempt's timestamp (set in its CC turn).
    ts: u64,
    /// The CC phase's bindings, one per declared record, in set order.
    bound: Vec<Bound>,
    /// The declared records, beside `bound`.
    bound_records: Vec<Record<'db, BohmMeta>>,
    writes: WriteSet<'db, BohmMeta, ()>,
    /// Commit progress: write-set entries past the covered-write pass, bindings produced.
    covered_done: usize,
    produced: usize,
    pool: VersionPool<'db, ()>,
    scratch: Vec<u8>,
    /// The timestamp of the last attempt that committed.
    committed_at: u64,
    /// PWV: the attempt is past its commit point, so its writes become visible as they are
    /// made.
    early: bool,
    /// PWV: the timestamps of the versions of this batch's members the attempt read (its
    /// commit waits for their writers to end).
    deps: Vec<u64>,
    /// Always empty: a worker keeps no record reference past its commit (its collections run
    /// while it holds the record), so it pins no grace-period epoch.
    holds: Holds,
}

impl<'db, const EARLY: bool> PlacedWorker<'db, EARLY> {
    /// The binding of `rec`, if declared.
    #[inline]
    fn binding(&self, rec: &Record<'db, BohmMeta>) -> Option<Bound> {
        self.binding_index(rec).map(|i| self.bound[i])
    }

    /// Where the binding of `rec` is in `bound`, if declared.
    #[inline]
    fn binding_index(&self, rec: &Record<'_, BohmMeta>) -> Option<usize> {
        let key = rec.order_key();
        self.bound.binary_search_by_key(&key, |b| b.order_key).ok()
    }

    /// Leaves the batch and gets ready for the next attempt.
    fn end_attempt(&mut self) {
        self.protocol.batches.finished(&mut self.ticket);
        self.stage = Stage::Idle;
        self.writes.clear();
        self.bound.clear();
        self.bound_records.clear();
        self.covered_done = 0;
        self.produced = 0;
        self.early = false;
        self.deps.clear();
    }
}

impl<const EARLY: bool> Drop for PlacedWorker<'_, EARLY> {
    fn drop(&mut self) {
        // Batches must not wait for a worker that is gone (once per worker: `leave` knows).
        self.protocol.batches.leave(&mut self.ticket);
    }
}

impl<const EARLY: bool> Protocol for PlacedVersions<EARLY> {
    type RecordMeta = BohmMeta;
    type Worker<'db> = PlacedWorker<'db, EARLY>;

    const MULTI_VERSION: Option<MultiVersionPart<Self>> = Some(MultiVersionPart::from_impl());
    const DECLARED_SET: Option<DeclaredSetPart<Self>> = Some(DeclaredSetPart::from_impl());
    const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

    fn new_worker<'db>(&'db self, id: usize) -> PlacedWorker<'db, EARLY> {
        PlacedWorker {
            protocol: self,
            ticket: self.batches.register(id),
            stage: Stage::Idle,
            ts: 0,
            bound: Vec::with_capacity(64),
            bound_records: Vec::with_capacity(64),
            writes: WriteSet::default(),
            covered_done: 0,
            produced: 0,
            pool: self.mv.versions.pool(id),
            holds: Holds::default(),
            scratch: Vec::new(),
            committed_at: 0,
            early: false,
            deps: Vec::with_capacity(if EARLY { 64 } else { 0 }),
        }
    }

    fn begin(&self, w: &mut PlacedWorker<'_, EARLY>, start: AttemptStart) {
        debug_assert_eq!(w.ticket.batch(), 0, "the last attempt left its batch");
        if !start.retry {
            w.ticket.new_transaction();
        }
        w.stage = Stage::Idle;
        w.writes.clear();
    }

    #[inline]
    fn read<'db>(
        &self,
        w: &mut PlacedWorker<'db, EARLY>,
        rec: Record<'db, BohmMeta>,
        out: &mut [u8],
    ) -> OpResult {
        if w.writes.read_own(&rec, out) {
            return Poll::Ready(Ok(()));
        }
        let Some(i) = w.binding_index(&rec) else {
            return read_newest(rec, out);
        };
        let b = w.bound[i];
        #[cfg(test)]
        let at = if EARLY && self.mutant == Mutant::PwvReadsNewestVisible {
            // The bug: once the bound version exists, take the newest visible one, which
            // early visibility may have made a later member's.
            (rec.meta().word.load(Ordering::Acquire) & !LOCK).max(b.read_at)
        } else {
            b.read_at
        };
        #[cfg(not(test))]
        let at = b.read_at;
        let read = self.read_version(rec, at, out);
        if EARLY && b.read_at > batch_floor(&w.ticket) && matches!(read, Poll::Ready(Ok(()))) {
            // A version of a member of this batch, maybe made visible before its writer ended.
            w.deps.push(b.read_at);
        }
        #[cfg(test)]
        if EARLY
            && self.mutant == Mutant::PwvPublishesAtRead
            && w.early
            && b.mode == AccessMode::Write
            && !b.produced
            && matches!(read, Poll::Ready(Ok(())))
        {
            // The bug: the placeholder is made visible at the read of the record, before the
            // member wrote it (a copy of what it read).
            self.try_publish(w, i, rec, None);
        }
        read
    }

    /// The bound version is committed (or will be before it is read) and whole; BOHM validates
    /// nothing, so read committed is the same read.
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut PlacedWorker<'db, EARLY>,
        rec: Record<'db, BohmMeta>,
        out: &mut [u8],
    ) -> OpResult {
        self.read(w, rec, out)
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut PlacedWorker<'db, EARLY>,
        rec: Record<'db, BohmMeta>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        if !(EARLY && w.early) {
            w.writes.put(rec, kind, data, ());
            return Poll::Ready(Ok(()));
        }
        // PWV past its commit point (`protocol::pwv`): one binding lookup per write. A covered
        // record has no binding; the commit produces it.
        let i = w.binding_index(&rec);
        if i.is_some_and(|i| w.bound[i].produced)
            && self.rewrites_the_visible_version(w, &rec, data)
        {
            return Poll::Ready(Ok(()));
        }
        let entry = w.writes.put(rec, kind, data, ());
        if let Some(i) = i {
            self.publish_early(w, i, rec, entry);
        }
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut PlacedWorker<'_, EARLY>) -> OpResult {
        debug_assert_eq!(w.stage, Stage::Running, "commit after the schedule");
        if self.produce(w, true).is_pending() {
            return Poll::Pending;
        }
        if EARLY && !self.writers_ended(w) {
            // The executors wake waiters as the writer's attempt ends.
            return Poll::Pending;
        }
        self.mark_ended(w);
        w.committed_at = w.ts;
        w.end_attempt();
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut PlacedWorker<'_, EARLY>, _why: Abort) {
        // A placed member aborts only by its own logic, after `confirm_user_abort` produced
        // every placeholder; a no-wait conflict placed none.
        debug_assert!(
            w.stage != Stage::Running || w.produced == w.bound.len(),
            "a user abort produces its placeholders first"
        );
        if w.ticket.batch() != 0 {
            if w.stage == Stage::Running {
                self.mark_ended(w);
            }
            w.end_attempt();
        }
    }

    fn install_log<'w>(&self, w: &'w mut PlacedWorker<'_, EARLY>) -> &'w mut InstallLog {
        w.writes.install_log()
    }
}

impl<const EARLY: bool> DeclaredSet for PlacedVersions<EARLY> {
    fn schedule<'db>(
        &self,
        w: &mut PlacedWorker<'db, EARLY>,
        set: &[DeclaredRecord<'db, BohmMeta>],
    ) -> OpResult {
        loop {
            match w.stage {
                Stage::Idle => {
                    if self
                        .turn
                        .wait_for_turn(&self.batches, &mut w.ticket)
                        .is_pending()
                    {
                        return Poll::Pending;
                    }
                    if self.no_wait && !self.free_at_turn(w, set) {
                        self.turn.pass(&w.ticket);
                        // Relaxed: a report counter, read after the workers were joined.
                        self.conflicts.fetch_add(1, Ordering::Relaxed);
                        w.stage = Stage::Conflicted;
                        return Poll::Ready(Err(Abort::LockConflict));
                    }
                    self.place(w, set);
                    w.bound_records.clear();
                    w.bound_records.extend(set.iter().map(|d| d.record));
                    self.turn.pass(&w.ticket);
                    w.stage = Stage::Running;
                }
                Stage::Running => return Poll::Ready(Ok(())),
                Stage::Conflicted => unreachable!("schedule after a no-wait conflict"),
            }
        }
    }

    /// A rolled-back transaction still owes its placeholders their versions: each becomes a
    /// copy of the version before it, once that one is installed (`Pending` until then).
    fn confirm_user_abort(&self, w: &mut PlacedWorker<'_, EARLY>) -> OpResult {
        if w.stage != Stage::Running {
            return Poll::Ready(Ok(()));
        }
        assert!(
            !EARLY || !w.bound.iter().any(|b| b.produced),
            "pwv: a transaction rolled back after making a write visible (configuration sets \
             `ProtocolOptions::user_aborts` for workloads whose transactions abort by their own \
             logic, and PWV then makes nothing visible before commit)"
        );
        match self.produce(w, false) {
            Poll::Ready(()) => Poll::Ready(Ok(())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<const EARLY: bool> MultiVersion for PlacedVersions<EARLY> {
    type VersionMeta = ();

    fn version_store(&self) -> &VersionStore<()> {
        &self.mv.versions
    }

    fn watermark(&self) -> &Watermark {
        &self.mv.watermark
    }

    fn grace_holds<'w>(&self, w: &'w mut PlacedWorker<'_, EARLY>) -> &'w mut Holds {
        &mut w.holds
    }

    fn snapshot_commit_stamp(&self, w: &PlacedWorker<'_, EARLY>) -> u64 {
        w.committed_at
    }

    /// Zero: a deleted record's index entry then stays for the rest of the run, which is always
    /// safe. No workload that declares its sets deletes (TPC-C's Delivery cannot declare), so
    /// nothing is kept in practice.
    fn oldest_snapshot(&self) -> u64 {
        0
    }
}

impl<const EARLY: bool> RunHooks for PlacedVersions<EARLY> {
    const RUNS_IN_BATCHES: bool = true;

    /// PWV built without `user_aborts` makes a write visible at the write (`protocol::pwv`, the
    /// commit point): a client's abort after it could not be undone (the protocol panics on
    /// such an abort). `txbench serve` and `run --interactive` set `user_aborts`; a program
    /// serving PWV through the library must too.
    fn not_served_because(&self) -> Option<&'static str> {
        (EARLY && !self.user_aborts).then_some(
            "PWV built without `ProtocolOptions::user_aborts` makes writes visible before the \
             commit, so a client's abort or disconnect after a write could not be undone",
        )
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        self.batches
            .stats_with_conflicts(self.no_wait, &self.conflicts)
    }

    /// A no-wait conflict reruns in the next batch (SGPM's BOHM_NW and PWV_NW; module docs):
    /// its batch has gone on without it.
    fn signal(&self, why: Abort) -> Signal {
        super::batch::no_wait_signal(why)
    }

    fn stop_worker(&self, w: &mut PlacedWorker<'_, EARLY>) {
        self.batches.leave(&mut w.ticket);
    }

    /// An idle worker is not waited for: a batch closes without it (it is a member of none
    /// between attempts: the last one finished).
    const IDLE_WORKERS_HOLD_OTHERS: bool = true;

    fn worker_away(&self, w: &mut PlacedWorker<'_, EARLY>) {
        debug_assert_eq!(w.ticket.batch(), 0, "away between attempts only");
        self.batches.leave(&mut w.ticket);
    }

    fn worker_back(&self, w: &mut PlacedWorker<'_, EARLY>) {
        self.batches.rejoin(&mut w.ticket);
    }
}
