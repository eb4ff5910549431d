//! The transaction table of the multi-version protocols whose committers draw a stamp from a
//! shared clock (ERMIA, and SI when readers skip in-flight versions): one entry per worker,
//! through which others learn a committer's stamp and outcome (SSN's parallel commit, Wang et
//! al. 2017, section 4).
//!
//! An entry is the state of the worker's current transaction, and a serial that names that
//! transaction: an in-flight overwriter marks the records it locked with a [`Marker`] (worker,
//! serial), and whoever finds the marker reads the entry and checks that the serial still names
//! the same transaction (otherwise that transaction finished, and its record shows the outcome).
//!
//! State word:
//!
//! ```text
//!  63 62 61                                                                  0
//! +-----+----------------------------------------------------------------------+
//! |phase| commit stamp (0 while active, and while committing before it is drawn) |
//! +-----+----------------------------------------------------------------------+
//! ```
//!
//! Shared words, who writes them, who reads them: every word of entry `i` is written by worker
//! `i` only; committers of other workers read them.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a transaction is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Reading and writing (or between transactions): no commit stamp yet.
    Active,
    /// Committing: stamp drawn (or about to be, when the stamp reads 0), outcome not decided.
    Committing,
    /// Committed with the stamp; its π (sstamp) is published.
    Committed,
    /// Aborted.
    Aborted,
}

/// A transaction's state as one word (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct State(u64);

const PHASE_SHIFT: u32 = 62;
const STAMP_MASK: u64 = (1 << PHASE_SHIFT) - 1;

impl State {
    fn new(phase: Phase, stamp: u64) -> Self {
        debug_assert!(stamp <= STAMP_MASK);
        let p = match phase {
            Phase::Active => 0,
            Phase::Committing => 1,
            Phase::Committed => 2,
            Phase::Aborted => 3,
        };
        State((p << PHASE_SHIFT) | stamp)
    }

    pub(crate) fn phase(self) -> Phase {
        match self.0 >> PHASE_SHIFT {
            0 => Phase::Active,
            1 => Phase::Committing,
            2 => Phase::Committed,
            _ => Phase::Aborted,
        }
    }

    /// The commit stamp (0 when not drawn yet).
    pub(crate) fn stamp(self) -> u64 {
        self.0 & STAMP_MASK
    }
}

/// A record's sstamp word while an overwriter holds it: the overwriter's worker and serial.
///
/// ```text
///  63  62          53 52                                              0
/// +---+--------------+------------------------------------------------+
/// | 1 | worker       | serial (low 53 bits)                           |
/// +---+--------------+------------------------------------------------+
/// ```
///
/// Ten worker bits name up to 1024 workers ([`MAX_TABLE_WORKERS`]); 53 serial bits wrap after
/// 9 x 10^15 transactions of one worker, and a marker is only ever compared with its worker's
/// current serial.
///
/// A zero word means "not being overwritten".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marker(pub(crate) u64);

const MARK: u64 = 1 << 63;
/// Most workers a [`Marker`] can name (ten worker bits).
pub const MAX_TABLE_WORKERS: usize = 1 << 10;
const WORKER_SHIFT: u32 = 53;
const SERIAL_MASK: u64 = (1 << WORKER_SHIFT) - 1;

impl Marker {
    pub(crate) fn new(worker: usize, serial: u64) -> Self {
        debug_assert!(worker < MAX_TABLE_WORKERS);
        Marker(MARK | ((worker as u64) << WORKER_SHIFT) | (serial & SERIAL_MASK))
    }

    /// The marker in a sstamp word, if it holds one.
    pub(crate) fn decode(word: u64) -> Option<Marker> {
        (word & MARK != 0).then_some(Marker(word))
    }

    pub(crate) fn worker(self) -> usize {
        ((self.0 & !MARK) >> WORKER_SHIFT) as usize
    }

    fn serial(self) -> u64 {
        self.0 & SERIAL_MASK
    }
}

/// One worker's entry.
#[derive(Default)]
struct Entry {
    serial: AtomicU64,
    state: AtomicU64,
    /// π (sstamp) of the committed transaction, written before its state says `Committed`.
    pi: AtomicU64,
}

/// The table.
pub(crate) struct TxnTable {
    entries: Box<[CachePadded<Entry>]>,
}

/// What a marker's transaction looks like now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// The marker's transaction has finished: look at the record again.
    Gone,
    /// Its state, and its π when committed.
    Now(State, u64),
}

impl TxnTable {
    pub(crate) fn new(workers: usize) -> Self {
        TxnTable {
            entries: (0..workers.max(1))
                .map(|_| CachePadded::new(Entry::default()))
                .collect(),
        }
    }

    /// Worker `id` starts a transaction: a new serial first, then the state (observers that
    /// read the old serial before and after the state load never see the new state).
    pub(crate) fn begin(&self, id: usize) -> u64 {
        let e = &self.entries[id];
        // SeqCst (both): observers' serial-state-serial loads rely on one total order.
        let serial = e.serial.fetch_add(1, Ordering::SeqCst) + 1;
        e.state
            .store(State::new(Phase::Active, 0).0, Ordering::SeqCst);
        serial
    }

    /// Worker `id` enters commit before drawing its stamp (stamp 0: observers wait), so an
    /// observer that sees it still active knows its stamp will be larger than the observer's.
    pub(crate) fn committing(&self, id: usize, stamp: u64) {
        // SeqCst: ordered against the commit clock's fetch_add and other committers' loads.
        self.entries[id]
            .state
            .store(State::new(Phase::Committing, stamp).0, Ordering::SeqCst);
    }

    /// Worker `id` committed with `stamp` and π `pi`.
    pub(crate) fn committed(&self, id: usize, stamp: u64, pi: u64) {
        let e = &self.entries[id];
        // Relaxed: published by the state store below.
        e.pi.store(pi, Ordering::Relaxed);
        // SeqCst (a Release would do for `pi`): one order with the other state words.
        e.state
            .store(State::new(Phase::Committed, stamp).0, Ordering::SeqCst);
    }

    /// Worker `id` aborted.
    pub(crate) fn aborted(&self, id: usize) {
        // SeqCst: as the other state stores.
        self.entries[id]
            .state
            .store(State::new(Phase::Aborted, 0).0, Ordering::SeqCst);
    }

    /// The state of the transaction `marker` names.
    pub(crate) fn seen(&self, marker: Marker) -> Seen {
        let e = &self.entries[marker.worker()];
        // SeqCst: see `begin`.
        let before = e.serial.load(Ordering::SeqCst) & SERIAL_MASK;
        let state = State(e.state.load(Ordering::SeqCst));
        // Relaxed: `pi` is written before the Committed state that was just loaded (SeqCst).
        let pi = e.pi.load(Ordering::Relaxed);
        let after = e.serial.load(Ordering::SeqCst) & SERIAL_MASK;
        if before != marker.serial() || after != marker.serial() {
            return Seen::Gone;
        }
        Seen::Now(state, pi)
    }

    /// Whether the transaction whose marker a held record carries (`marker_word`, loaded `SeqCst`
    /// after the reader's snapshot load; 0 when the holder has not marked it yet) will commit
    /// with a stamp above `snapshot`, so a snapshot reader may skip its in-flight version
    /// (`MvOptions::skip_in_flight`; `mv_common::snapshot_read_skipping`).
    ///
    /// A holder locks the record, then stores its marker, then says `Committing` with stamp 0,
    /// then draws its stamp from the clock, all but the lock `SeqCst`. So: no marker yet means
    /// the stamp is drawn after the marker load, itself after the reader's snapshot load: larger.
    /// A marker whose transaction is still `Active` (or `Aborted`) the same; a drawn stamp is
    /// compared; `Committing` with no stamp yet is unknown (the reader waits), and so is a
    /// marker whose transaction finished under it (the reader re-reads). A holder clears its
    /// marker only after copying its new version in (and before unlocking), so a reader that
    /// then finds the word unchanged copies the new version whole, with the stamp the word
    /// names, which its snapshot sees.
    pub(crate) fn holder_commits_after(&self, marker_word: u64, snapshot: u64) -> bool {
        let Some(marker) = Marker::decode(marker_word) else {
            return true;
        };
        match self.seen(marker) {
            Seen::Gone => false,
            Seen::Now(state, _) => match state.phase() {
                Phase::Active | Phase::Aborted => true,
                Phase::Committing | Phase::Committed => state.stamp() > snapshot,
            },
        }
    }

    /// The state of worker `id`'s current transaction (reader bitmaps name workers, not
    /// transactions: module docs of `ermia`).
    pub(crate) fn state_of(&self, id: usize) -> State {
        // SeqCst: ordered after the observer's own stamp draw and bitmap load.
        State(self.entries[id].state.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        let s = State::new(Phase::Committed, 12345);
        assert_eq!((s.phase(), s.stamp()), (Phase::Committed, 12345));
        let m = Marker::new(63, 7);
        assert_eq!(Marker::decode(m.0), Some(m));
        assert_eq!(m.worker(), 63);
        // The widest worker id, and a serial past the mask: the worker survives intact.
        let m = Marker::new(MAX_TABLE_WORKERS - 1, (1 << 60) | 9);
        assert_eq!(m.worker(), 1023);
        assert_eq!(m.0 & SERIAL_MASK, 9);
        assert_eq!(Marker::decode(0), None);
    }

    #[test]
    fn a_marker_of_a_finished_transaction_is_gone() {
        let t = TxnTable::new(2);
        let serial = t.begin(1);
        let m = Marker::new(1, serial);
        t.committing(1, 5);
        match t.seen(m) {
            Seen::Now(s, _) => assert_eq!((s.phase(), s.stamp()), (Phase::Committing, 5)),
            Seen::Gone => panic!("still running"),
        }
        t.committed(1, 5, 4);
        assert_eq!(t.seen(m), Seen::Now(State::new(Phase::Committed, 5), 4));
        t.begin(1);
        assert_eq!(t.seen(m), Seen::Gone);
    }
}
