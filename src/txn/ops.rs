//! [`TxnOps`]: the operations a transaction program calls, as a trait that both the local
//! engine's [`Txn`] and a remote session's handle (`exec::interactive::RemoteTxn`) implement, so
//! that one program (YCSB, long-scan, TPC-C, write skew, a user's own) runs unchanged in process
//! or over the wire.
//!
//! # No cost to the local path
//!
//! Programs are generic over `T: TxnOps` and monomorphised: a program instantiated for
//! `Txn<'db, P>` calls these methods statically, and each local implementation below only
//! forwards to the inherent method of the same name, which returns the same small hand-written
//! future it always did (`ReadOp`, `UpdateOp`, `WriteOp`). Nothing is boxed, nothing is
//! dispatched through a vtable, and the futures moved into a program's state machine are the
//! same types and sizes as before the trait existed (measured: docs/RESULTS.md, "Interactive
//! transactions").
//!
//! # Semantics both implementations keep
//!
//! - Bytes a read returns are valid until the next operation.
//! - An `Err(Abort)` ends the attempt: the program returns it (with `?`), and the executor
//!   aborts (locally) or learns the server already did (remotely).
//! - [`TxnOps::update`]'s closure runs once per completed read, on a copy the handle owns; a
//!   remote handle runs it on the client, between the read-for-update and the write half, so
//!   the record stays locked (or validated) across the round trip, as PLOR section 5 describes.

use super::Txn;
use crate::protocol::{Abort, Protocol};
use crate::storage::{IndexId, RecordId, TableId};
use std::future::Future;
use std::ops::RangeInclusive;

/// The operations of one running transaction attempt, as a program sees them (module docs).
///
/// The methods' documentation is on [`Txn`]'s inherent methods of the same names, which are the
/// reference implementation.
pub trait TxnOps {
    /// Unique id of the current attempt (see [`Txn::id`]); a remote handle numbers its own.
    fn id(&self) -> u64;

    /// The worker (locally) or client (remotely) running this transaction: programs that bind a
    /// worker to a partition or an observer row use it.
    fn worker_id(&self) -> usize;

    /// Starts loading a record the attempt will access soon ([`Txn::prefetch`]): a hint with no
    /// effect on the transaction. A handle with nothing to load early (a remote one) ignores it.
    #[inline]
    fn prefetch(&self, table: TableId, rid: RecordId) {
        let _ = (table, rid);
    }

    /// Reads a record (serializable); the bytes are valid until the next operation.
    fn read(&mut self, table: TableId, rid: RecordId)
    -> impl Future<Output = Result<&[u8], Abort>>;

    /// Reads a record at read committed ([`Txn::read_committed`]).
    fn read_committed(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> impl Future<Output = Result<&[u8], Abort>>;

    /// Reads a record for update, lets `update` edit the row in place, and writes the result
    /// as a read-modify-write ([`Txn::update`]).
    fn update<F: FnOnce(&mut [u8]) -> R, R>(
        &mut self,
        table: TableId,
        rid: RecordId,
        update: F,
    ) -> impl Future<Output = Result<R, Abort>>;

    /// Overwrites a record without reading it; `data` is the row size ([`Txn::write`]).
    fn write(
        &mut self,
        table: TableId,
        rid: RecordId,
        data: &[u8],
    ) -> impl Future<Output = Result<(), Abort>>;

    /// Blind write whose bytes `fill` produces ([`Txn::write_with`]). `fill` must write every
    /// byte of the row: what the buffer held before is unspecified.
    fn write_with<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> impl Future<Output = Result<(), Abort>>;

    /// Inserts a row into the vacant slot `rid` ([`Txn::insert`]); `false` when it holds a row.
    fn insert<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> impl Future<Output = Result<bool, Abort>>;

    /// Deletes the row in slot `rid` ([`Txn::delete`]); `false` when it was vacant.
    fn delete(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> impl Future<Output = Result<bool, Abort>>;

    /// Enters `key -> rid` into an ordered index ([`Txn::index_insert`]).
    fn index_insert(
        &mut self,
        index: IndexId,
        key: u64,
        rid: RecordId,
    ) -> impl Future<Output = Result<bool, Abort>>;

    /// Takes `key` out of an ordered index once this attempt commits ([`Txn::index_remove`]).
    fn index_remove(&mut self, index: IndexId, key: u64)
    -> impl Future<Output = Result<(), Abort>>;

    /// The smallest present key in `range` and its record ([`Txn::scan_first`]).
    fn scan_first(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> impl Future<Output = Result<Option<(u64, RecordId)>, Abort>>;

    /// The greatest present key in `range` and its record ([`Txn::scan_last`]).
    fn scan_last(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> impl Future<Output = Result<Option<(u64, RecordId)>, Abort>>;

    /// Appends every present key in `range` and its record to `out` ([`Txn::scan`]).
    fn scan(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
        out: &mut Vec<(u64, RecordId)>,
    ) -> impl Future<Output = Result<(), Abort>>;

    /// Reserves slot `rid` of a growable table ([`Txn::reserve`]); `false` past its capacity.
    fn reserve(&mut self, table: TableId, rid: RecordId) -> bool;
}

impl<'db, P: Protocol> TxnOps for Txn<'db, P> {
    #[inline]
    fn id(&self) -> u64 {
        Txn::id(self)
    }

    #[inline]
    fn worker_id(&self) -> usize {
        Txn::worker_id(self)
    }

    #[inline]
    fn prefetch(&self, table: TableId, rid: RecordId) {
        Txn::prefetch(self, table, rid);
    }

    #[inline]
    fn read(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> impl Future<Output = Result<&[u8], Abort>> {
        Txn::read(self, table, rid)
    }

    #[inline]
    fn read_committed(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> impl Future<Output = Result<&[u8], Abort>> {
        Txn::read_committed(self, table, rid)
    }

    #[inline]
    fn update<F: FnOnce(&mut [u8]) -> R, R>(
        &mut self,
        table: TableId,
        rid: RecordId,
        update: F,
    ) -> impl Future<Output = Result<R, Abort>> {
        Txn::update(self, table, rid, update)
    }

    #[inline]
    fn write(
        &mut self,
        table: TableId,
        rid: RecordId,
        data: &[u8],
    ) -> impl Future<Output = Result<(), Abort>> {
        // `Txn::write`'s body: its signature ties `data` to the borrow of the handle, which a
        // trait method's two independent lifetimes cannot name.
        Txn::write_with(self, table, rid, move |buf: &mut [u8]| {
            assert_eq!(
                data.len(),
                buf.len(),
                "write size must equal the payload size"
            );
            buf.copy_from_slice(data);
        })
    }

    #[inline]
    fn write_with<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> impl Future<Output = Result<(), Abort>> {
        Txn::write_with(self, table, rid, fill)
    }

    #[inline]
    fn insert<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> impl Future<Output = Result<bool, Abort>> {
        Txn::insert(self, table, rid, fill)
    }

    #[inline]
    fn delete(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> impl Future<Output = Result<bool, Abort>> {
        Txn::delete(self, table, rid)
    }

    #[inline]
    fn index_insert(
        &mut self,
        index: IndexId,
        key: u64,
        rid: RecordId,
    ) -> impl Future<Output = Result<bool, Abort>> {
        Txn::index_insert(self, index, key, rid)
    }

    #[inline]
    fn index_remove(
        &mut self,
        index: IndexId,
        key: u64,
    ) -> impl Future<Output = Result<(), Abort>> {
        Txn::index_remove(self, index, key)
    }

    #[inline]
    fn scan_first(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> impl Future<Output = Result<Option<(u64, RecordId)>, Abort>> {
        Txn::scan_first(self, index, range)
    }

    #[inline]
    fn scan_last(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> impl Future<Output = Result<Option<(u64, RecordId)>, Abort>> {
        Txn::scan_last(self, index, range)
    }

    #[inline]
    fn scan(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
        out: &mut Vec<(u64, RecordId)>,
    ) -> impl Future<Output = Result<(), Abort>> {
        Txn::scan(self, index, range, out)
    }

    #[inline]
    fn reserve(&mut self, table: TableId, rid: RecordId) -> bool {
        Txn::reserve(self, table, rid)
    }
}
