//! SGPM's scheduling signals (table 1 of the SGPM paper): what a coroutine executor does with a
//! transaction after one of its operations.
//!
//! `Pending` from an operation is always [`Signal::Ag`] (blocked: resume later at the same point).
//! What an abort means for scheduling is the protocol's call ([`RunHooks::signal`]); the default
//! follows table 1: a lock conflict, a die or a wound (the 2PL family, PLOR) and an optimistic
//! protocol's write conflict rerun in place (RR); a failed validation (OCC read validation,
//! TicToc's timestamp extension and its predicted failure) moves the transaction to the global
//! queue's tail (ML), so the thread runs other work before the conflicting writer is retried
//! against again.
//!
//! [`RunHooks::signal`]: crate::protocol::parts::RunHooks::signal

use super::Abort;
use serde::Serialize;

/// One scheduling signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Signal {
    /// Continue: the operation succeeded (or the transaction ended for good).
    Nt,
    /// Again: blocked; resume later at the same point.
    Ag,
    /// Rerun: reset and rerun from scratch in place.
    Rr,
    /// Swap front: reset and swap with the global queue's front.
    Sf,
    /// Move last: reset and move to the global queue's tail.
    Ml,
    /// Next batch: reset and move to the next batch.
    Nb,
}

impl Signal {
    /// Every signal, in the order reports list them.
    pub const ALL: [Signal; 6] = [
        Signal::Nt,
        Signal::Ag,
        Signal::Rr,
        Signal::Sf,
        Signal::Ml,
        Signal::Nb,
    ];
    /// Number of signals; sizes counter arrays.
    pub const COUNT: usize = Self::ALL.len();

    /// Dense index into counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Nt => "nt",
            Signal::Ag => "ag",
            Signal::Rr => "rr",
            Signal::Sf => "sf",
            Signal::Ml => "ml",
            Signal::Nb => "nb",
        }
    }

    /// Table 1's mapping of an abort reason (the default of `RunHooks::signal`).
    pub fn for_abort(why: Abort) -> Signal {
        match why {
            Abort::LockConflict | Abort::Die | Abort::Wounded => Signal::Rr,
            Abort::ReadValidation | Abort::TimestampExtension | Abort::Preemptive => Signal::Ml,
            // Multi-version: SGPM's MVCC returns ML for its write (validation) conflicts: the
            // retry takes a new timestamp, so it leaves the queue rather than rerun in place
            // ahead of the transactions it conflicted with. A collected version (AggressiveGC)
            // is the same case: the retry reads at a new timestamp.
            Abort::WriteWriteConflict
            | Abort::SsnExclusion
            | Abort::TimestampOrder
            | Abort::VersionCollected => Signal::Ml,
            // Not retried: the transaction is over, the slot continues with the next one.
            Abort::User => Signal::Nt,
            // Opportunistic execution: the transaction keeps its place in the deterministic
            // schedule (it is already scheduled) and reruns there at once.
            Abort::Reexecute => Signal::Rr,
            // Aria: the batch's snapshot is spent; the transaction reruns in the next batch.
            // (With Aria's fallback phase the first two rerun in their batch instead: Aria's
            // `RunHooks::signal` says RR for them.)
            Abort::BatchWriteAfterWrite
            | Abort::BatchReadAfterWrite
            | Abort::BatchAccessSetChanged => Signal::Nb,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_one_defaults() {
        assert_eq!(Signal::for_abort(Abort::LockConflict), Signal::Rr);
        assert_eq!(Signal::for_abort(Abort::Wounded), Signal::Rr);
        assert_eq!(Signal::for_abort(Abort::Die), Signal::Rr);
        assert_eq!(Signal::for_abort(Abort::ReadValidation), Signal::Ml);
        assert_eq!(Signal::for_abort(Abort::TimestampExtension), Signal::Ml);
        assert_eq!(Signal::for_abort(Abort::User), Signal::Nt);
        assert_eq!(Signal::for_abort(Abort::Reexecute), Signal::Rr);
        assert_eq!(Signal::for_abort(Abort::WriteWriteConflict), Signal::Ml);
        assert_eq!(Signal::for_abort(Abort::TimestampOrder), Signal::Ml);
        assert_eq!(Signal::for_abort(Abort::BatchReadAfterWrite), Signal::Nb);
        assert_eq!(Signal::for_abort(Abort::BatchWriteAfterWrite), Signal::Nb);
        assert_eq!(Signal::for_abort(Abort::BatchAccessSetChanged), Signal::Nb);
        for (i, s) in Signal::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
        }
    }
}
