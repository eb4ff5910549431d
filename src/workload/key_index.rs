//! How a key-value workload (YCSB) finds a key's record: the access method, chosen per run with
//! `--index`, that every protocol then goes through alike on every access.
//!
//! - `array` (the default): key `k` is record `k`; no memory is
//!   touched, so YCSB results measure the engine and the protocol alone.
//! - `hash`: a lookup in the shared concurrent hash index ([`HashIndex`]), like DBx1000's YCSB.
//! - `ordered`: a lookup in the shared ordered index ([`OrderedIndex`], a B+-tree), like CCBench's
//!   Masstree.
//!
//! The key-to-record mapping is the identity in all three (the table is loaded densely), so the
//! three methods run exactly the same transactions on the same records and differ only in what a
//! lookup costs: the ratio of a hash or ordered run to an array run is the index's price.
//!
//! Long-scan takes the same methods (`--index` there too): its point accesses are lookups, and its
//! scan of `n` consecutive keys is [`KeyIndex::scan`]: `n` lookups through the array or the hash
//! index (a hash index has no key order, so a scan through it can only look every key up), a
//! range walk ([`RangeCursor`]) through the ordered index, as a scan over a B-tree goes.
//!
//! A lookup is an `enum` match per access rather than a type parameter: three variants, one of
//! them taken for the whole run, is a branch the predictor never misses, and it keeps the runner
//! from monomorphising every protocol three more times.

use crate::index::{HashIndex, Index, OrderedIndex, RangeCursor};
use crate::storage::RecordId;
use serde::Serialize;
use std::fmt;

/// The access method a run's keys go through (`--index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyIndexKind {
    /// Key `k` is record `k`: no index memory, no lookup cost.
    #[default]
    Array,
    /// The concurrent hash index.
    Hash,
    /// The ordered (B+-tree) index.
    Ordered,
}

impl KeyIndexKind {
    /// Every kind, in `--index` order.
    pub const ALL: [KeyIndexKind; 3] = [
        KeyIndexKind::Array,
        KeyIndexKind::Hash,
        KeyIndexKind::Ordered,
    ];

    /// The name `--index` takes and reports print.
    pub fn name(self) -> &'static str {
        match self {
            KeyIndexKind::Array => "array",
            KeyIndexKind::Hash => "hash",
            KeyIndexKind::Ordered => "ordered",
        }
    }

    /// Estimated bytes per indexed key, for memory validation before anything is built.
    pub fn estimated_bytes_per_key(self) -> usize {
        match self {
            KeyIndexKind::Array => 0,
            KeyIndexKind::Hash => crate::index::hash::ESTIMATED_BYTES_PER_ENTRY,
            KeyIndexKind::Ordered => crate::index::ESTIMATED_BYTES_PER_ENTRY,
        }
    }
}

impl fmt::Display for KeyIndexKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A built access method over keys `0..records`.
pub enum KeyIndex {
    /// The identity over `0..records`.
    Array {
        /// Number of keys.
        records: u64,
    },
    /// Every key in a hash index.
    Hash(HashIndex),
    /// Every key in an ordered index (boxed: its root directory is hundreds of bytes inline,
    /// and the enum is matched on every access, so the small variants should stay small).
    Ordered(Box<OrderedIndex>),
}

impl KeyIndex {
    /// Builds `kind` over keys `0..records`, key `k` mapped to record `k`, inserting from all
    /// cores (each thread a contiguous key range, so the result does not depend on the thread
    /// count).
    pub fn build(kind: KeyIndexKind, records: u64) -> KeyIndex {
        match kind {
            KeyIndexKind::Array => KeyIndex::Array { records },
            KeyIndexKind::Hash => {
                let index = HashIndex::with_capacity(records as usize);
                insert_all(records, |k| {
                    index
                        .insert(k, RecordId(k))
                        .expect("keys 0..records are distinct");
                });
                KeyIndex::Hash(index)
            }
            KeyIndexKind::Ordered => {
                let index = Box::new(OrderedIndex::new());
                insert_all(records, |k| {
                    index
                        .insert(k, RecordId(k))
                        .expect("keys 0..records are distinct");
                });
                KeyIndex::Ordered(index)
            }
        }
    }

    /// Which method this is.
    pub fn kind(&self) -> KeyIndexKind {
        match self {
            KeyIndex::Array { .. } => KeyIndexKind::Array,
            KeyIndex::Hash(_) => KeyIndexKind::Hash,
            KeyIndex::Ordered(_) => KeyIndexKind::Ordered,
        }
    }

    /// The record of `key`, looked up through the method; `None` for a key that was never built.
    ///
    /// Always inlined, with the two real indexes behind a call of their own: the array's lookup
    /// is one comparison, but a body that also inlines the hash and B+-tree lookups is large
    /// enough that the compiler called it out of line, about 25 instructions per YCSB access for
    /// one comparison (issue 23, `docs/RESULTS.md`).
    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<RecordId> {
        match self {
            KeyIndex::Array { records } => (key < *records).then_some(RecordId(key)),
            KeyIndex::Hash(_) | KeyIndex::Ordered(_) => self.get_indexed(key),
        }
    }

    /// Starts loading the index entry of `key`, for a [`KeyIndex::get`] that comes soon: the hash
    /// index's first slot ([`Index::prefetch`]); nothing for the array, which has no entries,
    /// and the ordered index, whose path down is found only by reading it.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        if let KeyIndex::Hash(index) = self {
            index.prefetch(key);
        }
    }

    /// [`KeyIndex::get`] where finding a key costs about one probe (the array, the hash index),
    /// for loading its record ahead of the access that looks it up again; `None` through the
    /// ordered index, whose second walk down would cost more than the record miss it hides.
    #[inline(always)]
    pub fn get_if_cheap(&self, key: u64) -> Option<RecordId> {
        match self {
            KeyIndex::Array { .. } | KeyIndex::Hash(_) => self.get(key),
            KeyIndex::Ordered(_) => None,
        }
    }

    /// [`KeyIndex::get`] through the hash or ordered index.
    #[inline(never)]
    fn get_indexed(&self, key: u64) -> Option<RecordId> {
        match self {
            KeyIndex::Array { records } => (key < *records).then_some(RecordId(key)),
            KeyIndex::Hash(index) => index.get(key),
            KeyIndex::Ordered(index) => index.get(key),
        }
    }
}

impl KeyIndex {
    /// The records of the `n` keys from `start` upwards, in key order, found the way the method
    /// finds keys: the identity for the array, one point lookup per key through the hash index
    /// (it has no order to walk), one range walk from `start` through the ordered index (a
    /// directory lookup for the start, then leaf to leaf). Over a dense key set (every key of
    /// `start..start + n` present, as in long-scan's table) all three yield exactly those keys'
    /// records; otherwise the point methods stop at the first absent key and the walk yields the
    /// next `n` present keys. Allocates nothing.
    pub fn scan(&self, start: u64, n: u64) -> KeyScan<'_> {
        let walk = match self {
            KeyIndex::Array { .. } | KeyIndex::Hash(_) => KeyWalk::Points {
                index: self,
                next: start,
            },
            KeyIndex::Ordered(index) => KeyWalk::Range(index.walk_from(start)),
        };
        KeyScan { walk, left: n }
    }
}

/// The records of consecutive keys, as [`KeyIndex::scan`] finds them.
pub struct KeyScan<'a> {
    walk: KeyWalk<'a>,
    /// Records still to yield.
    left: u64,
}

/// How a [`KeyScan`] moves from one key to the next.
enum KeyWalk<'a> {
    /// Looks up `next`, then `next + 1`, ...
    Points { index: &'a KeyIndex, next: u64 },
    /// Follows the ordered index's leaves.
    Range(RangeCursor<'a>),
}

impl Iterator for KeyScan<'_> {
    type Item = RecordId;

    #[inline]
    fn next(&mut self) -> Option<RecordId> {
        if self.left == 0 {
            return None;
        }
        let rid = match &mut self.walk {
            KeyWalk::Points { index, next } => {
                let rid = index.get(*next)?;
                *next += 1;
                rid
            }
            KeyWalk::Range(cursor) => cursor.next()?.1,
        };
        self.left -= 1;
        Some(rid)
    }
}

/// Calls `insert(k)` for every key in `0..records`, split into contiguous ranges over the cores.
fn insert_all(records: u64, insert: impl Fn(u64) + Sync) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(1)
        .clamp(1, records.max(1));
    let per_thread = records.div_ceil(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            let insert = &insert;
            let keys = (t * per_thread)..((t + 1) * per_thread).min(records);
            s.spawn(move || keys.for_each(insert));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_maps_every_key_to_its_record_and_nothing_else() {
        for kind in KeyIndexKind::ALL {
            let index = KeyIndex::build(kind, 5000);
            assert_eq!(index.kind(), kind);
            for k in [0, 1, 2047, 2048, 4999] {
                assert_eq!(index.get(k), Some(RecordId(k)), "{kind} key {k}");
            }
            assert_eq!(index.get(5000), None, "{kind}");
            assert_eq!(index.get(u64::MAX - 1), None, "{kind}");
        }
    }

    #[test]
    fn every_method_scans_consecutive_keys_to_their_records() {
        for kind in KeyIndexKind::ALL {
            // Enough keys for the ordered index to have many leaves, so its walks cross them.
            let index = KeyIndex::build(kind, 5000);
            for (start, n) in [(0, 1), (0, 5000), (63, 70), (2047, 1000), (4990, 10)] {
                let got: Vec<RecordId> = index.scan(start, n).collect();
                let want: Vec<RecordId> = (start..start + n).map(RecordId).collect();
                assert_eq!(got, want, "{kind} scan of {n} from {start}");
            }
            assert_eq!(index.scan(17, 0).count(), 0, "{kind}: an empty scan");
            assert_eq!(
                index.scan(4998, 10).count(),
                2,
                "{kind}: a scan stops at the last key"
            );
        }
    }

    /// The lookups for loading ahead agree with `get` where they answer, answer through the array
    /// and the hash index, and do not walk the ordered index; a prefetch of any key, present or
    /// not, is only a hint.
    #[test]
    fn cheap_lookups_agree_with_get_and_skip_the_ordered_index() {
        for kind in KeyIndexKind::ALL {
            let index = KeyIndex::build(kind, 5000);
            for k in [0, 17, 4999, 5000, u64::MAX] {
                index.prefetch(k);
                let cheap = index.get_if_cheap(k);
                match kind {
                    KeyIndexKind::Ordered => assert_eq!(cheap, None, "{kind} key {k}"),
                    _ => assert_eq!(cheap, index.get(k), "{kind} key {k}"),
                }
            }
        }
    }

    #[test]
    fn a_single_key_builds() {
        for kind in KeyIndexKind::ALL {
            assert_eq!(KeyIndex::build(kind, 1).get(0), Some(RecordId(0)));
        }
    }
}
