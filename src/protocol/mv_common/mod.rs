//! What the multi-version protocols (SI, ERMIA, MVTO, Cicada) do alike, written once. Each
//! protocol's own rules (when a version is visible, what a commit validates, what it leaves on a
//! version, how it collects) stay in its folder and reach the shared steps through closures that
//! inline away (no `dyn` on any path).
//!
//! | file | idea |
//! | --- | --- |
//! | `state.rs` | the watermark and version store a protocol owns; what a worker keeps for its versions (pool, scratch, RapidGC queue) and RapidGC's deferred pass |
//! | `read.rs` | the snapshot read of a record (inline copy as a seqlock, or the chain), a version off a chain, the conditional read-timestamp raise |
//! | `commit.rs` | the write-set lock loop (one lock ordering for the family), the install sequence, unlocking on abort |
//!
//! # The record word
//!
//! Every member keeps one word per record, SI's:
//!
//! ```text
//!  63  62                                                                            0
//! +----+-----------------------------------------------------------------------------+
//! |lock| timestamp of the inline version                                             |
//! +----+-----------------------------------------------------------------------------+
//! ```
//!
//! A committer locks it (compare-exchange from an unlocked value), installs, and stores the new
//! timestamp unlocked. While it installs, the word says `LOCK | c` (`c` its commit timestamp)
//! after the old inline version is in the chain, so a reader whose snapshot is below `c` reads
//! the chain rather than wait. The inline payload is copied by readers as a seqlock: a copy is
//! good when the word is the same, unlocked (or, for readers that skip in-flight versions, held
//! but not yet installing), before and after it.
//!
//! # The retry policy
//!
//! An operation that loses a race it can win by looking again (a torn inline copy, an overwriter
//! that finished under a commit's look) tries [`RETRIES`] times in all, then answers `Pending`:
//! the executor then yields or parks the transaction (never a spin without end inside an
//! operation; docs/ARCHITECTURE.md, "Waiting"), and polls it again.

mod commit;
mod read;
mod state;

pub(crate) use commit::{install_write, lock_write_set, push_version, unlock_write_set};
pub(crate) use read::{load_visible, raise_read_timestamp, snapshot_read, snapshot_read_skipping};
pub(crate) use state::{MvState, WorkerVersions};

use crate::storage::versions::VersionChain;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicU64;
use std::task::Poll;

/// The lock bit of the record word (module docs).
pub(crate) const LOCK: u64 = 1 << 63;

/// How many times an operation tries in all before answering `Pending` (module docs, "The retry
/// policy"). Eight, as Silo's and CCBench's readers: enough that a copy torn by one install
/// succeeds on the next look, few enough that a reader stuck behind a descheduled writer gives
/// the core back soon.
pub(crate) const RETRIES: usize = 8;

/// Runs `attempt` until it breaks with an answer, at most [`RETRIES`] times; `Pending` after
/// that (module docs, "The retry policy").
#[inline(always)]
pub(crate) fn retry<T>(mut attempt: impl FnMut() -> ControlFlow<Poll<T>>) -> Poll<T> {
    for _ in 0..RETRIES {
        if let ControlFlow::Break(answer) = attempt() {
            return answer;
        }
    }
    Poll::Pending
}

/// Implements [`MvRecord`] for a metadata type whose record word is its field `word` and whose
/// chain is its field `chain`: `mv_record!(SiMeta, ())`, or with a const parameter
/// `mv_record!(ErmiaMetaWith<WORDS>, Stamps, WORDS)`.
macro_rules! mv_record {
    ($meta:ty, $version:ty $(, $words:ident)?) => {
        impl$(<const $words: usize>)? $crate::protocol::mv_common::MvRecord for $meta {
            type Version = $version;

            #[inline]
            fn word(&self) -> &::std::sync::atomic::AtomicU64 {
                &self.word
            }

            #[inline]
            fn chain(&self) -> &$crate::storage::versions::VersionChain<$version> {
                &self.chain
            }
        }
    };
}
pub(crate) use mv_record;

/// A multi-version protocol's per-record metadata, as the shared steps reach it: the record
/// word (module docs) and the chain of older versions. Each protocol's metadata adds its own
/// words (SI's holder marker, ERMIA's stamps and readers, MVTO's and Cicada's read timestamp).
pub(crate) trait MvRecord: Sync {
    /// What the protocol keeps on each older version (ERMIA's stamps, MVTO's replacement
    /// timestamp; `()` for most).
    type Version: Default + Send + Sync;

    /// The record word (module docs).
    fn word(&self) -> &AtomicU64;

    /// The older versions, newest first.
    fn chain(&self) -> &VersionChain<Self::Version>;
}
