//! Abort and the retrospective lock list (MOCC 3.3.3, Algorithm 1 `on_abort` / `construct_rll`).
//!
//! On an abort that will be retried, the RLL becomes: every written record in write mode, and
//! every read record that is hot or failed verification in read mode (one entry per record, the
//! stronger mode winning), sorted by address. The retry (`AttemptStart::retry`) locks RLL entries
//! in that order as its accesses reach them, so it usually stays in canonical mode and its
//! contended reads are protected. An abort that is not retried forgets the RLL.

use super::{LockMode, Mocc, MoccWorker, Planned, RecordLock};
use crate::protocol::Abort;

impl<L: RecordLock> Mocc<L> {
    pub(super) fn abort_impl(&self, w: &mut MoccWorker<'_, L>, why: Abort) {
        for e in &w.writes.entries()[..w.marked] {
            // Restores the word seen when marking: the version did not change.
            e.rec.meta().tid.store(e.state);
        }
        w.marked = 0;
        w.locked = 0;
        w.sorted = false;
        self.withdraw(w);
        if why.is_retried() {
            self.construct_rll(w);
        } else {
            w.rll.clear();
        }
        self.release_from(w, 0);
        w.reads.clear();
        w.writes.clear();
        w.op = None;
        w.failed = None;
    }

    fn construct_rll(&self, w: &mut MoccWorker<'_, L>) {
        w.rll.clear();
        for e in w.writes.entries() {
            w.rll.push(Planned {
                rec: e.rec,
                mode: LockMode::Write,
                done: false,
            });
        }
        for (rec, _) in w.reads.iter() {
            if w.failed == Some(rec.order_key()) || self.is_hot(w, rec) {
                w.rll.push(Planned {
                    rec: *rec,
                    mode: LockMode::Read,
                    done: false,
                });
            }
        }
        // Stronger mode first within a record, so dedup keeps it.
        w.rll
            .sort_unstable_by_key(|p| (p.rec.order_key(), std::cmp::Reverse(p.mode)));
        w.rll.dedup_by_key(|p| p.rec.order_key());
    }
}
