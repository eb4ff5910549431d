//! Indexes map a workload's keys to record ids.
//!
//! Every protocol shares the same index implementations (CCBench's fairness principle): a protocol
//! never builds its own access method. YCSB's keys are dense integers, so its index is an array
//! ([`ArrayIndex`]); TPC-C's composite keys need a hash index for point lookups ([`HashIndex`], a
//! read-mostly open-addressed table) and an ordered index for range scans with phantom detection ([`OrderedIndex`]), which
//! implements the same [`Index`] trait plus scans and per-leaf versions.

mod array;
pub mod hash;
pub mod ordered;

pub use array::ArrayIndex;
pub use hash::{Duplicate, HashIndex};
pub use ordered::{
    ESTIMATED_BYTES_PER_ENTRY, LeafChange, LeafId, LeafUpdate, LeafVersion, OrderedIndex,
    RangeCursor,
};

use crate::ids::RecordId;

/// A point-lookup index from a 64-bit key to a record id.
pub trait Index: Send + Sync {
    /// The record holding `key`, or `None` when the key is absent.
    fn get(&self, key: u64) -> Option<RecordId>;

    /// Number of keys indexed.
    fn len(&self) -> u64;

    /// Starts loading what a lookup of `key` reads first, for a lookup that will come soon
    /// (a hint: an index with nothing worth loading early does nothing).
    #[inline]
    fn prefetch(&self, key: u64) {
        let _ = key;
    }

    /// Whether the index holds no key.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
