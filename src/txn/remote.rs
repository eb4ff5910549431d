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
        if let Err(why) = self.check_declared(table, rid, true) {
            return Poll::Ready(Err(why));
        }
        // A protocol may buffer the write here already (PLOR).
        self.name_write_table(table);
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
        if let Err(why) = self.check_declared(table, rid, true) {
            return Poll::Ready(Err(why));
        }
        self.name_write_table(table);
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

    /// [`Txn::declare`] for a remote session. `covered`: the client stated the set's covers
    /// (wire format version 3), so the set is complete and every access of the transaction is
    /// checked against it, in check mode or not; one outside it is refused, not a panic
    /// ([`Txn::take_undeclared`]). Without covers (an older client) a covered access could not
    /// be told from an undeclared one, so nothing is checked: an access outside the set is the
    /// client's bug, which the server does not detect.
    pub(crate) fn declare_remote(&mut self, covered: bool, fill: impl FnOnce(&mut AccessSet)) {
        self.declare(fill);
        self.check_declared = covered;
        self.refuse_undeclared = covered;
        self.undeclared = None;
    }

    /// The access a remote session's operation was refused for, outside the declared set and
    /// its covers ([`Txn::declare_remote`]); the operation answered [`Abort::User`], and the
    /// session ends the attempt as a bad request.
    pub(crate) fn take_undeclared(&mut self) -> Option<Undeclared> {
        self.undeclared.take()
    }
}

/// An access outside a remote transaction's declared set and covers, refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Undeclared {
    pub(crate) table: TableId,
    pub(crate) rid: RecordId,
    /// A write (else a read).
    pub(crate) write: bool,
}

impl std::fmt::Display for Undeclared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.write { "a write" } else { "a read" };
        write!(
            f,
            "{what} of table {} record {} is outside the transaction's declared access set and \
             its covers",
            self.table.0, self.rid.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AttemptStart;
    use crate::protocol::ord_lock::OrdLock;
    use crate::storage::{Database, TableSpec};
    use std::future::Future;
    use std::task::{Context, Waker};

    fn poll<F: Future>(fut: F) -> Poll<F::Output> {
        let mut fut = std::pin::pin!(fut);
        fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    }

    /// A remote set with its covers, outside check mode: accesses inside the declared records
    /// and covers run; one outside is refused before the protocol sees it (no panic, in check
    /// mode or not), and the handle names it once.
    #[test]
    fn a_covered_remote_set_refuses_an_access_outside_it() {
        let p = OrdLock::new();
        let spec = TableSpec {
            name: "t".into(),
            records: 8,
            payload_bytes: 8,
        };
        for check_mode in [false, true] {
            let db = if check_mode {
                Database::with_check_stamps(std::slice::from_ref(&spec), &[])
            } else {
                Database::new(std::slice::from_ref(&spec))
            };
            let t = TableId(0);
            let mut tx = Txn::new(&p, &db, 0, check_mode);
            tx.declare_remote(true, |set| {
                set.read(t, RecordId(0));
                set.write(t, RecordId(1));
                set.cover(t, 4..6);
            });
            tx.begin(AttemptStart::FIRST);
            assert_eq!(tx.poll_schedule(), Poll::Ready(Ok(())));
            assert!(matches!(poll(tx.read(t, RecordId(0))), Poll::Ready(Ok(_))));
            assert_eq!(poll(tx.write(t, RecordId(1), &[1; 8])), Poll::Ready(Ok(())));
            assert_eq!(poll(tx.write(t, RecordId(5), &[1; 8])), Poll::Ready(Ok(())));
            assert_eq!(tx.take_undeclared(), None);
            let refused = poll(tx.write(t, RecordId(0), &[1; 8]));
            assert_eq!(refused, Poll::Ready(Err(Abort::User)));
            let access = tx.take_undeclared().expect("the refused access");
            assert_eq!((access.rid, access.write), (RecordId(0), true));
            assert!(
                access
                    .to_string()
                    .contains("a write of table 0 record 0 is outside")
            );
            assert_eq!(tx.take_undeclared(), None);
            assert!(matches!(
                poll(tx.read(t, RecordId(6))),
                Poll::Ready(Err(Abort::User))
            ));
            assert!(tx.take_undeclared().is_some_and(|a| !a.write));
            // What a session does next: the protocol confirms the abort, the attempt ends.
            assert_eq!(tx.poll_confirm_user_abort(), Poll::Ready(Ok(())));
            tx.aborted(Abort::User);
        }
    }

    /// An older client's set (no covers) is not checked: the access the set leaves out runs.
    #[test]
    fn an_uncovered_remote_set_is_not_checked() {
        let p = OrdLock::new();
        let spec = TableSpec {
            name: "t".into(),
            records: 8,
            payload_bytes: 8,
        };
        let db = Database::with_check_stamps(&[spec], &[]);
        let t = TableId(0);
        let mut tx = Txn::new(&p, &db, 0, true);
        tx.declare_remote(false, |set| set.write(t, RecordId(1)));
        tx.begin(AttemptStart::FIRST);
        assert_eq!(tx.poll_schedule(), Poll::Ready(Ok(())));
        assert!(matches!(poll(tx.read(t, RecordId(3))), Poll::Ready(Ok(_))));
        assert_eq!(tx.take_undeclared(), None);
    }
}
