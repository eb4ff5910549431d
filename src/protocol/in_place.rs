//! The operations shared by the protocols that read in place and buffer writes to commit.
//!
//! NoCC (no concurrency control at all) and the declared-set protocols whose schedule keeps every
//! conflicting transaction out while the program runs (Ord-Lock's ordered locks, C-Sched's
//! scheduler, Calvin's sequenced locks) do their concurrency control outside the operations, or
//! none. Their operations are therefore the same:
//!
//! - `read` copies the attempt's own buffered write if there is one, or else the record in place
//!   ([`WriteSet::read_in_place`]): the schedule keeps writers out (NoCC: nothing does);
//! - `read_committed` is `read`: the record is protected for the whole attempt anyway (NoCC's
//!   copy is unprotected either way);
//! - `write` buffers the payload ([`WriteSet::put`]);
//! - `commit` installs every buffered write ([`WriteSet::install_all`], so check mode logs each
//!   install), clears the set and ends the attempt;
//! - `abort` discards the buffered writes and ends the attempt;
//! - `install_log` is the write set's.
//!
//! They differ only in what ending an attempt releases (Ord-Lock's locks, C-Sched's slot,
//! Calvin's lock positions; NoCC nothing): [`InPlaceWorker::end_attempt`]. A protocol's `impl
//! Protocol` takes the operations it shares with [`in_place_operations!`], naming them, and
//! writes the others itself: DecentSched and 2PL with early release read (and 2PL-ER writes)
//! their own way, but share `read_committed`, `install_log` and (DecentSched) `write`.

use super::WriteSet;

/// The worker of a protocol that takes operations from [`in_place_operations!`]: where its
/// buffered writes are and what ending an attempt releases.
pub trait InPlaceWorker<'db, M> {
    /// The attempt's buffered writes.
    fn writes(&mut self) -> &mut WriteSet<'db, M, ()>;

    /// The attempt ended: committed, its writes installed (while everything its schedule took is
    /// still held), or aborted, its writes discarded. Releases what the schedule took, so that
    /// the transactions waiting for it may go; the shared `commit` and `abort` call it. Nothing
    /// by default (NoCC; protocols that write their own `commit` and `abort`).
    #[inline]
    fn end_attempt(&mut self) {}
}

/// Writes the named operations of the in-place family (module docs) into an `impl Protocol`
/// block, whose worker implements [`InPlaceWorker`]:
///
/// ```ignore
/// impl Protocol for OrdLock {
///     // ...new_worker, begin
///     in_place_operations!(read, read_committed, write, commit, abort, install_log);
/// }
/// ```
///
/// Any subset of the six, in any order; the protocol writes the others itself.
macro_rules! in_place_operations {
    ($($op:ident),+ $(,)?) => {
        $( $crate::protocol::in_place::in_place_operations!(@ $op); )+
    };
    (@ read) => {
        /// In place: the protocol's schedule keeps writers out (own buffered writes first;
        /// `protocol::in_place`).
        #[inline]
        fn read<'db>(
            &self,
            w: &mut Self::Worker<'db>,
            rec: $crate::storage::Record<'db, Self::RecordMeta>,
            out: &mut [u8],
        ) -> $crate::protocol::OpResult {
            $crate::protocol::in_place::InPlaceWorker::writes(w).read_in_place(&rec, out);
            ::std::task::Poll::Ready(Ok(()))
        }
    };
    (@ read_committed) => {
        /// The same as `read`: the record is protected for the whole attempt anyway
        /// (`protocol::in_place`).
        #[inline]
        fn read_committed<'db>(
            &self,
            w: &mut Self::Worker<'db>,
            rec: $crate::storage::Record<'db, Self::RecordMeta>,
            out: &mut [u8],
        ) -> $crate::protocol::OpResult {
            $crate::protocol::Protocol::read(self, w, rec, out)
        }
    };
    (@ write) => {
        /// Buffered until commit.
        #[inline]
        fn write<'db>(
            &self,
            w: &mut Self::Worker<'db>,
            rec: $crate::storage::Record<'db, Self::RecordMeta>,
            data: &[u8],
            kind: $crate::protocol::WriteKind,
        ) -> $crate::protocol::OpResult {
            $crate::protocol::in_place::InPlaceWorker::writes(w).put(rec, kind, data, ());
            ::std::task::Poll::Ready(Ok(()))
        }
    };
    (@ commit) => {
        /// Installs every buffered write, then ends the attempt (releasing its schedule).
        fn commit(&self, w: &mut Self::Worker<'_>) -> $crate::protocol::OpResult {
            let writes = $crate::protocol::in_place::InPlaceWorker::writes(w);
            writes.install_all();
            writes.clear();
            $crate::protocol::in_place::InPlaceWorker::end_attempt(w);
            ::std::task::Poll::Ready(Ok(()))
        }
    };
    (@ abort) => {
        /// Discards the buffered writes and ends the attempt (releasing its schedule).
        fn abort(&self, w: &mut Self::Worker<'_>, _why: $crate::protocol::Abort) {
            $crate::protocol::in_place::InPlaceWorker::writes(w).clear();
            $crate::protocol::in_place::InPlaceWorker::end_attempt(w);
        }
    };
    (@ install_log) => {
        fn install_log<'w>(
            &self,
            w: &'w mut Self::Worker<'_>,
        ) -> &'w mut $crate::protocol::InstallLog {
            $crate::protocol::in_place::InPlaceWorker::writes(w).install_log()
        }
    };
}

pub(crate) use in_place_operations;
