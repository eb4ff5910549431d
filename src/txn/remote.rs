//! The operations a remote session drives one request at a time (`exec::interactive`), beyond
//! the futures programs use: a read for update whose write comes in a later request, and the
//! write half of that read-modify-write. Both are polled like the futures (again with the same
//! arguments after `Pending`) and record the history in check mode exactly as [`Txn::update`]
//! does for its two halves.

use super::{HistoryStage, Txn, progress};
use crate::check::history::{HistOp, Version, history_key};
use crate::ids::{RecordId, TableId};
use crate::protocol::{Abort, AccessSet, Protocol, WriteKind};
use std::task::Poll;

impl<'db, P: Protocol> Txn<'db, P> {
    /// Polls [`Protocol::read_for_update`] of a record once; when ready, its row size (the row
    /// is then [`Txn::read_row`] of that size).
    pub(crate) fn poll_read_for_update(
        &mut self,
        table: TableId,
        rid: RecordId,
    ) -> Poll<Result<usize, Abort>> {
        self.check_declared(table, rid, true);
        let (rec, row) = self.record(table, rid);
        let n = rec.payload.len();
        match self
            .protocol
            .read_for_update(&mut self.worker, rec, &mut self.buf[..n])
        {
            Poll::Ready(Ok(())) => {
                progress::op_completed();
                if let Some(h) = &mut self.history {
                    h.read(history_key(table.0, rid.0), &self.buf[..n], row, self.id);
                }
                Poll::Ready(Ok(row))
            }
            Poll::Ready(Err(why)) => Poll::Ready(Err(why)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The first `row` bytes the last [`Txn::poll_read_for_update`] read.
    pub(crate) fn read_row(&self, row: usize) -> &[u8] {
        &self.buf[..row]
    }

    /// Polls the write half of a read-modify-write once: `data` (the row size) replaces the
    /// record the transaction read with [`Txn::poll_read_for_update`].
    pub(crate) fn poll_write_after_read(
        &mut self,
        table: TableId,
        rid: RecordId,
        data: &[u8],
    ) -> Poll<Result<(), Abort>> {
        self.check_declared(table, rid, true);
        let (rec, row) = self.record(table, rid);
        let buf = &mut self.buf[..rec.payload.len()];
        // Filled again on a repeated poll: the same bytes, as the protocol contract requires.
        buf[..row].copy_from_slice(data);
        if self.history.is_some() {
            HistoryStage::stamp_write(buf, row, self.id);
        }
        let written = self
            .protocol
            .write(&mut self.worker, rec, buf, WriteKind::ReadModifyWrite);
        if let Poll::Ready(Ok(())) = written {
            progress::op_completed();
            self.note_write(rec.order_key(), table);
            if let Some(h) = &mut self.history {
                h.attempt.push(HistOp::write(
                    history_key(table.0, rid.0),
                    Version::UNKNOWN_SEQ,
                ));
            }
        }
        written
    }

    /// [`Txn::declare`] for a remote session: the declared set comes from the client without
    /// its covered ranges (the wire format carries records only), so the session's accesses
    /// are not checked against it in check mode (an access outside it is the client's bug,
    /// which the workloads' in-process runs catch).
    pub(crate) fn declare_remote(&mut self, fill: impl FnOnce(&mut AccessSet)) {
        self.declare(fill);
        self.check_declared = false;
    }
}
