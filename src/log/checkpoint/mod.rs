//! Fuzzy checkpoints (`--checkpoint-s`), after SiloR (OSDI 2014, section 4.4): a thread beside
//! the flusher copies every record's (row, seq) while the workload runs, so recovery starts
//! from the newest complete checkpoint instead of the load, and log segments wholly below a
//! durable checkpoint can be removed.
//!
//! # Taking checkpoint `n` ([`Checkpointer::take`])
//!
//! 1. Rotate: every worker starts a new log segment
//!    ([`Logger::rotate`](super::Logger::rotate)), which returns `M`, the highest transaction
//!    epoch of the segments closed so far. Wait until the durable frontier `D >= M`.
//! 2. Start epoch `S = D + 1`, `D` read now. Every transaction of an epoch below `S` had
//!    installed all its writes before `D` was published: the flusher publishes `D` only after
//!    closing it, which waits until no worker commits in an epoch at or below it
//!    (`epoch.rs`), and a worker leaves its epoch only after its last install. `S > M`, so
//!    the closed segments hold no transaction of an epoch at or above `S`.
//! 3. Copy: per table, per allocated record, one consistent (row, seq) pair, read through the
//!    seq word as a seqlock (the shared install path stores the seq last, with Release, after
//!    marking it; [`Payload::load_seqlocked`](crate::storage::Payload::load_seqlocked)).
//!    Records at seq 0 hold their loaded version and are left out: recovery loads first.
//!    Frames go to `checkpoint-n.tmp` (`file.rs`).
//! 4. End epoch `X` = the current epoch after the copy. Every version copied was installed by a
//!    transaction that had taken its epoch before the copy read it, so of an epoch at most `X`.
//!    Wait until `D >= X`: from then on every version in the checkpoint is of a durable
//!    transaction (none was acknowledged before, but none can be lost either).
//! 5. Write the trailer (`X`, counts), `fdatasync`, rename to `checkpoint-n.ckpt`, fsync the
//!    directory: only now is the checkpoint complete.
//! 6. Truncate, keeping two checkpoints: remove checkpoint `n - 2`'s file and every segment
//!    whose transactions all have epochs below checkpoint `n - 1`'s start. A damaged newest
//!    checkpoint thus always has a previous one to fall back to, with its logs.
//!
//! # Why a fuzzy copy plus highest-seq-wins gives the state at the frontier
//!
//! Recovery loads, applies checkpoint `c` (start `S`, end `X`), and replays every logged
//! transaction with `S <= epoch <= D` (`D` the frontier the logs show, `D >= X` by step 4),
//! keeping per record the version with the highest seq. Seqs order each record's versions in
//! install order, and epochs never decrease along a record's versions (`epoch.rs`), so the
//! versions of epochs at or below `D` are a prefix of each record's history; call its last
//! version `v*` (the loaded one, seq 0, when there is none). For each record `r`:
//!
//! - The copy `v_c` of `r` (or seq 0 when it was left out or not yet allocated) is of an epoch
//!   at most `X <= D`, so `seq(v_c) <= seq(v*)`: the checkpoint never holds a version beyond
//!   the frontier.
//! - Every version `v` of `r` with `seq(v) > seq(v_c)` was installed after the copy read `r`
//!   (seqs grow in install order and the seqlock read is of one instant), hence after the copy
//!   began, hence by a transaction of an epoch at least `S` (step 2). If its epoch is at most
//!   `D`, replay applies it. In particular `v*` is applied unless `v* = v_c`.
//!
//! So the highest seq recovery sees for `r` is exactly `seq(v*)`, for every record: the
//! state after every transaction at or below `D`, which is a dependency-closed prefix
//! (`epoch.rs`). No transaction is partial: one below `S` installed all its writes before any
//! copy (each copy holds its version or a later one of the prefix), one in `[S, D]` is replayed
//! whole, one above `D` is in neither. Starting replay at `X` instead of `S` would lose the
//! versions of epochs in `[S, X)` written after their record was copied (the test mutant
//! `ReplayFromEndEpoch`).
//!
//! # Why truncation loses nothing
//!
//! A segment is removed only when every transaction in it has an epoch below the start `S'`
//! of a checkpoint that is complete on disk (renamed and its directory synced) and that the
//! next one supersedes; recovery from that checkpoint or the newer one replays only epochs at
//! or above their starts, all in segments kept. Each new segment's header carries the
//! highest epoch and the last marker of the worker's earlier segments, so recovery checks
//! that the segments it needs are all there and still finds the frontier. A crash anywhere in
//! steps 1 to 6 leaves either a `.tmp` (ignored) or a complete checkpoint, and the segments
//! of the newest two complete checkpoints. Removing segments before the new checkpoint is
//! durable is the test mutant `TruncateBeforeDurable`; renaming the `.tmp` before its bytes
//! are synced, which power loss turns into a `.ckpt` that is not complete, is
//! `RenameBeforeSync` (`power_tests.rs` cuts a run on a simulated directory at every step).

pub mod file;
mod taker;

pub use taker::{CheckpointStats, Checkpointer};

/// Test-only mutant of recovery (`ReplayFromEndEpoch`, module docs), per thread.
#[cfg(test)]
pub(crate) mod mutant {
    thread_local! {
        static REPLAY_FROM_END: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Whether recovery on this thread replays from the checkpoint's end epoch.
    pub(crate) fn replays_from_end_epoch() -> bool {
        REPLAY_FROM_END.with(std::cell::Cell::get)
    }

    /// Turns the mutant on or off for this thread.
    pub(crate) fn set_replay_from_end_epoch(on: bool) {
        REPLAY_FROM_END.with(|m| m.set(on));
    }
}

/// The first epoch recovery replays on top of checkpoint `c`: its start (module docs).
pub fn replay_from(c: &file::CheckpointContents<'_>) -> u64 {
    #[cfg(test)]
    if mutant::replays_from_end_epoch() {
        return c.end_epoch;
    }
    c.header.start_epoch
}

#[cfg(test)]
mod power_tests;
#[cfg(test)]
mod tests;
