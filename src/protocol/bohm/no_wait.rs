//! The no-wait forms of BOHM and PWV (`--bohm-no-wait`, `--pwv-no-wait`; SGPM's BOHM_NW and
//! PWV_NW): the test a member makes at its turn in the CC phase, before it places anything.
//!
//! A record is *free* for a member at its turn when the newest version placed on it (its
//! `last_writer`) is already produced: the record word says exactly that timestamp, unlocked.
//! A placed member then binds its reads to versions that exist and follows, with each of its
//! own versions, a version that exists, so none of its reads and none of its installs can
//! wait for another member. A record is not free only while an earlier member of the *same*
//! batch holds an unproduced placeholder on it (the batches before have produced every
//! placeholder: they are sequential), so the member's turn is where a waiting protocol would
//! later wait, and where the no-wait form gives up instead.
//!
//! Only a placeholder makes a record busy: a member that merely reads a record leaves it free
//! for the writers after it (they install a newer version; the reader copies its own from the
//! chain), unlike Calvin_NW, whose read lock makes a later writer's lock busy.
//!
//! Under PWV a placeholder is produced as soon as its writer, past its commit point, makes the
//! version visible (`protocol::pwv`), so PWV_NW finds a record free earlier than BOHM_NW does.
//! The reader of such a version still waits at its commit for the writer to end (the commit
//! dependency): SGPM's table 1 gives PWV_NW that AG at commit too.

use super::BohmMeta;
use crate::protocol::DeclaredRecord;
use serde::Serialize;
use std::sync::atomic::Ordering;

/// BOHM's or PWV's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct PlacedOptions {
    /// The no-wait form: a member that would wait for a version an earlier member of its batch
    /// has not produced yet reruns in the next batch instead (`--bohm-no-wait`,
    /// `--pwv-no-wait`; `protocol::bohm`'s module docs).
    pub no_wait: bool,
}

/// Whether every record of `set` is free at the caller's turn: its newest placed version is
/// produced (module docs). The caller holds the CC phase's turn.
pub(super) fn all_free(set: &[DeclaredRecord<'_, BohmMeta>]) -> bool {
    set.iter().all(|d| {
        let meta = d.record.meta();
        // Relaxed: only the turn holder writes `last_writer`, and the turn's hand-over orders
        // the previous holder's store before this load (as in `place`).
        let placed = meta.last_writer.load(Ordering::Relaxed);
        // Acquire: pairs with the Release unlock of the install that produced `placed`, so the
        // member's later reads of the record (which check the word again) find it installed.
        // The word cannot move past `placed` before our turn ends: only a placeholder's holder
        // installs, and no one after `placed` has placed on the record yet.
        meta.word.load(Ordering::Acquire) == placed
    })
}
