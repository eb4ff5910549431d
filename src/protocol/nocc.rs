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

    fn begin(&self, w: &mut NoccWorker<'_>, _retry: bool) {
        w.writes.clear();
    }

    #[inline]
    fn read<'db>(&self, w: &mut NoccWorker<'db>, rec: Record<'db, ()>, out: &mut [u8]) -> OpResult {
        if !w.writes.read_own(&rec, out) {
            rec.payload.load(out);
        }
        Poll::Ready(Ok(()))
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
        for i in 0..w.writes.len() {
            w.writes.install(i);
        }
        w.writes.clear();
        Poll::Ready(Ok(()))
    }

    fn abort(&self, w: &mut NoccWorker<'_>, _why: super::Abort) {
        w.writes.clear();
    }
}
