//! NoCC: no concurrency control at all.
//!
//! Reads copy the record as it is; writes are buffered and installed at commit with no lock and no
//! validation. It is the throughput ceiling every other protocol is measured against, and the canary
//! the serializability checker must catch (lost updates and cycles appear as soon as two workers
//! touch one record).

use super::{OpResult, Protocol, WriteKind, WriteSet};
use crate::storage::Record;
use std::task::Poll;

/// The protocol without concurrency control.
#[derive(Debug, Default)]
pub struct Nocc;

/// A NoCC worker: just its buffered writes.
pub struct NoccWorker<'db> {
    writes: WriteSet<'db, (), ()>,
}

impl Protocol for Nocc {
    type RecordMeta = ();
    type Worker<'db> = NoccWorker<'db>;

    fn new_worker<'db>(&'db self, _id: usize) -> NoccWorker<'db> {
        NoccWorker {
            writes: WriteSet::default(),
        }
    }

    fn begin(&self, w: &mut NoccWorker<'_>, _start: super::AttemptStart) {
        w.writes.clear();
    }

    #[inline]
    fn read<'db>(&self, w: &mut NoccWorker<'db>, rec: Record<'db, ()>, out: &mut [u8]) -> OpResult {
        w.writes.read_in_place(&rec, out);
        Poll::Ready(Ok(()))
    }

    /// The same copy as `read`: NoCC never validates nor locks, so every read already has the
    /// "not protected" half of read committed. Unlike the other protocols it cannot promise the
    /// "committed, untorn" half: a concurrent commit's install may tear the copy (NoCC is the
    /// no-isolation baseline; its writes are buffered, so an uncommitted value is never seen).
    #[inline]
    fn read_committed<'db>(
        &self,
        w: &mut NoccWorker<'db>,
        rec: Record<'db, ()>,
        out: &mut [u8],
    ) -> OpResult {
        self.read(w, rec, out)
    }

    #[inline]
    fn write<'db>(
        &self,
        w: &mut NoccWorker<'db>,
        rec: Record<'db, ()>,
        data: &[u8],
        kind: WriteKind,
    ) -> OpResult {
        w.writes.put(rec, kind, data, ());
        Poll::Ready(Ok(()))
    }

    fn commit(&self, w: &mut NoccWorker<'_>) -> OpResult {
        w.writes.install_all();
        w.writes.clear();
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut NoccWorker<'_>, _why: super::Abort) {
        w.writes.clear();
    }

    fn install_log<'w>(&self, w: &'w mut NoccWorker<'_>) -> &'w mut super::InstallLog {
        w.writes.install_log()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AttemptStart;
    use crate::storage::{RecordId, Table, TableSpec};

    const OK: OpResult = Poll::Ready(Ok(()));

    #[test]
    fn read_committed_sees_committed_and_own_writes_only() {
        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 2,
            payload_bytes: 8,
        });
        let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
        let p = Nocc;
        let (mut a, mut b) = (p.new_worker(0), p.new_worker(1));
        let mut buf = [9u8; 8];
        p.begin(&mut a, AttemptStart::FIRST);
        p.begin(&mut b, AttemptStart::FIRST);
        assert_eq!(p.write(&mut b, x, &[1; 8], WriteKind::Blind), OK);
        assert_eq!(p.read_committed(&mut a, x, &mut buf), OK);
        assert_eq!(buf, [0; 8], "another worker's buffered write is not seen");
        assert_eq!(p.commit(&mut b), OK);
        assert_eq!(p.read_committed(&mut a, x, &mut buf), OK);
        assert_eq!(buf, [1; 8], "seen once committed");
        assert_eq!(p.write(&mut a, y, &[2; 8], WriteKind::Blind), OK);
        assert_eq!(p.read_committed(&mut a, y, &mut buf), OK);
        assert_eq!(buf, [2; 8], "own write");
        assert_eq!(p.commit(&mut a), OK);
    }
}
