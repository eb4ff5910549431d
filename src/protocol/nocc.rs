//! NoCC: no concurrency control at all.
//!
//! Reads copy the record as it is; writes are buffered and installed at commit with no lock and no
//! validation. It is the throughput ceiling every other protocol is measured against, and the canary
//! the serializability checker must catch (lost updates and cycles appear as soon as two workers
//! touch one record).
//!
//! Its operations are the in-place family's (`protocol::in_place`) with nothing to release. Its
//! `read_committed` (like `read`) has the "not protected" half of read committed, as every NoCC
//! read does, but unlike the other protocols cannot promise the "committed, untorn" half: a
//! concurrent commit's install may tear the copy (NoCC is the no-isolation baseline; its writes
//! are buffered, so an uncommitted value is never seen).

use super::in_place::{InPlaceWorker, in_place_operations};
use super::{Protocol, WriteSet};

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

    in_place_operations!(read, read_committed, write, commit, abort, install_log);
}

impl<'db> InPlaceWorker<'db, ()> for NoccWorker<'db> {
    #[inline]
    fn writes(&mut self) -> &mut WriteSet<'db, (), ()> {
        &mut self.writes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AttemptStart, OpResult, WriteKind};
    use crate::storage::{RecordId, Table, TableSpec};
    use std::task::Poll;

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
