//! A concurrent hash index for point lookups: `u64` key -> [`RecordId`], read-mostly, with
//! lookups that write nothing shared and touch one cache line in the common case.
//!
//! # Layout
//!
//! One open-addressed table of 16-byte slots (key word, value word), linear probing from the
//! key's hash, four slots to a cache line. A lookup loads the current table, hashes the key,
//! and reads slots until it finds the key or an empty slot: no guard, no reference count, no
//! lock, no bucket metadata to read first. That is what DBx1000's YCSB lookup costs (one bucket
//! walk) and what the workloads need: YCSB and long-scan build the index once and then only
//! read it, every access of every transaction.
//!
//! `scc::HashIndex` served here before. Its lookups write nothing shared either, but each one
//! enters an epoch guard and reads a bucket's metadata before its entry: two dependent misses
//! where this table has one. Measured against it: `docs/RESULTS.md`, "A read-mostly hash index
//! (issue 20)".
//!
//! # Slots and their words
//!
//! - The key word holds the key's complement (`!key`), so an all-zero table is empty: tables
//!   are allocated zeroed. A slot's key word is written once, from empty to its key (a CAS),
//!   and never changes afterwards: a key keeps its slot for the table's lifetime.
//! - The value word holds `rid + 1`, or 0 for "absent": never inserted yet (the inserter claimed
//!   the slot and has not stored the value) or removed. Removing a key clears its value and
//!   leaves its key word, so probes for other keys still pass over it (a tombstone); inserting
//!   the key again sets the value in the same slot.
//! - The key `u64::MAX`, whose complement is the empty word, has a value word of its own
//!   outside the table.
//!
//! # Writers
//!
//! Inserts and removes lock one of [`STRIPES`] mutexes, chosen by the key's hash, so two
//! writers of one key are serialised (which makes "insert fails on a present key" exact) while
//! writers of different keys run in parallel: building from all cores scales. A table holds at
//! most 3/4 of its slots claimed (a reservation counter), so a probe always meets an empty slot.
//! An insert that would pass that bound grows the index: it takes every stripe, so no writer is
//! inside, copies the present keys into a table twice the size, and publishes it. Readers that
//! loaded the old table go on reading it; it no longer changes, and its contents are the
//! index's contents at the moment of publication, a valid answer for any lookup that overlaps
//! it. Old tables are kept until the index is dropped (together at most as large as the current
//! one), so a reader never sees a freed table and no reclamation scheme is needed.
//!
//! The index maps keys to record ids only. Whether the record is visible to a transaction (an
//! insert not yet committed, a delete not yet applied) is the protocol's business, decided on the
//! record itself; phantom protection for inserts is likewise not this type's job.

use super::Index;
use crate::ids::RecordId;
use crossbeam_utils::CachePadded;
use std::hash::{BuildHasher, Hasher};
// The table's atomics through the loom shim: `loom_hash_index_publishes_the_record`
// (`sync::loom_models`) checks an insert's publication on this code.
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Bytes the index holds per key, for memory estimates made before a run. An index created
/// with capacity `n` has the first power of two of slots at or above `4n / 3` (16 bytes each),
/// at most `16 * 2 * 4n / 3`, about 43 bytes per key; 48 rounds up.
pub const ESTIMATED_BYTES_PER_ENTRY: usize = 48;

/// Writer stripes: inserts and removes of keys whose hashes share their top bits share a lock.
pub const STRIPES: usize = 64;

/// Generations of tables: each doubles the last, so 48 outgrow any memory.
const GENERATIONS: usize = 48;

/// Fewest slots a table has.
const MIN_SLOTS: usize = 16;

/// `insert` found the key already present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("key {key} is already in the index")]
pub struct Duplicate {
    /// The key that was present.
    pub key: u64,
}

/// A concurrent map from 64-bit keys to record ids.
pub struct HashIndex {
    /// The table lookups read: `tables[current]`.
    current: AtomicUsize,
    /// Every table the index has had, each twice its predecessor; set once, freed at drop.
    tables: Box<[OnceLock<Table>]>,
    /// The value word of key `u64::MAX` (its complement marks empty slots).
    max_key: AtomicU64,
    /// Writers' locks, by the key's hash ([`HashIndex`], "Writers").
    stripes: Box<[CachePadded<Mutex<()>>]>,
}

/// One open-addressed table.
pub(crate) struct Table {
    slots: Box<[Slot]>,
    /// `slots.len() - 1` (a power of two, less one).
    mask: usize,
    /// Claimed slots, and reservations for claims in progress; at most `limit`.
    claimed: CachePadded<AtomicUsize>,
    /// Most slots that may be claimed: 3/4 of them, so probes always meet an empty one.
    limit: usize,
}

/// A key and its value ([`HashIndex`], "Slots and their words").
#[derive(Default)]
#[repr(C, align(16))]
struct Slot {
    key: AtomicU64,
    value: AtomicU64,
}

/// A slot's key word for `key`.
#[inline(always)]
fn key_word(key: u64) -> u64 {
    !key
}

/// The key word of an empty slot.
const EMPTY: u64 = 0;

/// What inserting into one table did.
enum Inserted {
    Done,
    Present,
    /// The table has no room for another key: grow it.
    Full,
}

impl Table {
    /// A table of `slots` empty slots (a power of two).
    pub(crate) fn new(slots: usize) -> Table {
        debug_assert!(slots.is_power_of_two());
        Table {
            slots: (0..slots).map(|_| Slot::default()).collect(),
            mask: slots - 1,
            claimed: CachePadded::new(AtomicUsize::new(0)),
            limit: slots / 4 * 3,
        }
    }

    /// The slot holding `key` (by its key word), if any: linear probing from its hash to the
    /// key or the first empty slot.
    #[inline(always)]
    fn find(&self, word: u64, hash: u64) -> Option<&Slot> {
        let mut i = hash as usize & self.mask;
        loop {
            let slot = &self.slots[i];
            // Relaxed: a key word is written once and only names the slot; the value's Acquire
            // load orders what the caller reads of it.
            let k = slot.key.load(Ordering::Relaxed);
            if k == word {
                return Some(slot);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Inserts `word -> value`, the caller holding the key's stripe (so no other writer of
    /// this key runs) and no grow running (it holds every stripe).
    fn insert(&self, word: u64, hash: u64, value: u64) -> Inserted {
        if let Some(slot) = self.find(word, hash) {
            return set_if_absent(&slot.value, value);
        }
        // Reserve room before claiming: claimed slots never pass `limit`, so at least a
        // quarter of the slots stay empty and every probe ends. Relaxed: the counter orders
        // nothing; the grow that reads it holds every stripe.
        if self.claimed.fetch_add(1, Ordering::Relaxed) >= self.limit {
            self.claimed.fetch_sub(1, Ordering::Relaxed);
            return Inserted::Full;
        }
        let mut i = hash as usize & self.mask;
        loop {
            let slot = &self.slots[i];
            // Relaxed on failure: another key took the slot; probing on needs nothing from it.
            // AcqRel on success is more than the claim needs: the value's Release store below
            // is what publishes the entry, and a reader that finds the key before that store
            // reads value 0 and answers "absent", which a lookup overlapping the insert may.
            // (A locked CAS is a full barrier on x86 either way.)
            match slot
                .key
                .compare_exchange(EMPTY, word, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    // Release: a reader that loads the value with Acquire sees the record id
                    // and everything the inserter did before.
                    slot.value.store(value, Ordering::Release);
                    return Inserted::Done;
                }
                // Our key cannot appear here: its writers are serialised by the stripe, and
                // the probe above found it absent.
                Err(_) => i = (i + 1) & self.mask,
            }
        }
    }

    /// The loom model's insert: `key` (not `u64::MAX`) -> `rid`, the caller being the key's
    /// only writer (as the stripe makes it); whether it was absent.
    #[cfg(loom)]
    pub(crate) fn insert_for_model(&self, key: u64, rid: RecordId) -> bool {
        matches!(
            self.insert(key_word(key), hash(key), rid.0 + 1),
            Inserted::Done
        )
    }

    /// The loom model's lookup, as [`HashIndex::get`] does it in one table.
    #[cfg(loom)]
    pub(crate) fn get_for_model(&self, key: u64) -> Option<RecordId> {
        let slot = self.find(key_word(key), hash(key))?;
        match slot.value.load(Ordering::Acquire) {
            0 => None,
            v => Some(RecordId(v - 1)),
        }
    }

    /// Number of present keys (walks every slot).
    fn len(&self) -> u64 {
        self.slots
            .iter()
            // Relaxed: a count for reports and for a grow, which holds every stripe.
            .filter(|s| s.value.load(Ordering::Relaxed) != 0)
            .count() as u64
    }
}

/// Sets an absent value word to `value`: `Present` if it held one (the caller is the key's
/// only writer, so a plain load and store suffice).
#[inline]
fn set_if_absent(word: &AtomicU64, value: u64) -> Inserted {
    // Relaxed: the key's writers are serialised by its stripe lock, which orders them.
    if word.load(Ordering::Relaxed) != 0 {
        return Inserted::Present;
    }
    // Release: as for a new key's value.
    word.store(value, Ordering::Release);
    Inserted::Done
}

impl HashIndex {
    /// An empty index sized for about `capacity` keys (it grows past that on its own).
    pub fn with_capacity(capacity: usize) -> Self {
        let slots = capacity
            .saturating_mul(4)
            .div_ceil(3)
            .max(MIN_SLOTS)
            .checked_next_power_of_two()
            .expect("a capacity the memory estimate let through");
        let tables: Box<[OnceLock<Table>]> = (0..GENERATIONS).map(|_| OnceLock::new()).collect();
        // The first generation's size is the table's.
        let _ = tables[0].set(Table::new(slots));
        HashIndex {
            current: AtomicUsize::new(0),
            tables,
            max_key: AtomicU64::new(0),
            stripes: (0..STRIPES)
                .map(|_| CachePadded::new(Mutex::new(())))
                .collect(),
        }
    }

    /// The table lookups and writers use now.
    #[inline(always)]
    fn table(&self) -> &Table {
        // Acquire: pairs with the grow's Release store, so the new table's slots are seen as
        // the grow left them. The generation was set before it was published.
        let g = self.current.load(Ordering::Acquire);
        self.tables[g].get().expect("published generations are set")
    }

    /// The stripe that serialises `key`'s writers (by the hash's top bits; the table uses the
    /// low ones).
    fn stripe(&self, hash: u64) -> std::sync::MutexGuard<'_, ()> {
        let i = (hash >> (64 - STRIPES.trailing_zeros())) as usize;
        // A poisoned stripe only means a writer panicked while holding it: the table's words
        // are each written atomically, so there is nothing half-done to refuse.
        self.stripes[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Maps `key` to `rid`; fails, changing nothing, when `key` is already present.
    pub fn insert(&self, key: u64, rid: RecordId) -> Result<(), Duplicate> {
        let value = rid
            .0
            .checked_add(1)
            .expect("record ids stay below u64::MAX");
        let hash = hash(key);
        loop {
            let inserted = {
                let _writer = self.stripe(hash);
                if key == u64::MAX {
                    set_if_absent(&self.max_key, value)
                } else {
                    self.table().insert(key_word(key), hash, value)
                }
            };
            match inserted {
                Inserted::Done => return Ok(()),
                Inserted::Present => return Err(Duplicate { key }),
                Inserted::Full => self.grow(),
            }
        }
    }

    /// Removes `key`; returns whether it was present.
    pub fn remove(&self, key: u64) -> bool {
        let hash = hash(key);
        let _writer = self.stripe(hash);
        let word = if key == u64::MAX {
            &self.max_key
        } else {
            match self.table().find(key_word(key), hash) {
                Some(slot) => &slot.value,
                None => return false,
            }
        };
        // Relaxed: the stripe orders the key's writers; a reader that still finds the old
        // value read before the removal, which is a valid order.
        word.swap(0, Ordering::Relaxed) != 0
    }

    /// Moves every present key into a table twice the size, unless another writer grew the
    /// table first. Holds every stripe meanwhile, so no writer changes the old table.
    #[cold]
    fn grow(&self) {
        let _all: Vec<_> = self
            .stripes
            .iter()
            .map(|s| s.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            .collect();
        // Relaxed (both): every stripe is held, so every writer's changes to them, made under a
        // stripe, happen before these loads.
        let g = self.current.load(Ordering::Relaxed);
        let old = self.tables[g].get().expect("published generations are set");
        if old.claimed.load(Ordering::Relaxed) < old.limit {
            return; // another writer grew it while this one waited for the stripes
        }
        // Removed keys (tombstones) are not copied: the new table may need no more room.
        let live = old.len() as usize;
        let slots = (live.saturating_mul(2).div_ceil(3) * 4)
            .max(old.slots.len())
            .checked_next_power_of_two()
            .expect("a table that fits in memory");
        let new = Table::new(slots);
        for slot in old.slots.iter() {
            // Relaxed: no writer runs (every stripe is held), and each slot's words were
            // written under a stripe this thread has since taken.
            let value = slot.value.load(Ordering::Relaxed);
            if value != 0 {
                let word = slot.key.load(Ordering::Relaxed);
                let inserted = new.insert(word, hash(!word), value);
                debug_assert!(matches!(inserted, Inserted::Done), "distinct keys fit");
            }
        }
        let next = g + 1;
        if self.tables.get(next).is_none_or(|t| t.set(new).is_err()) {
            panic!("the hash index outgrew {GENERATIONS} generations");
        }
        // Release: publishes the new table's slots to lookups (`HashIndex::table`).
        self.current.store(next, Ordering::Release);
    }
}

impl Default for HashIndex {
    fn default() -> Self {
        HashIndex::with_capacity(0)
    }
}

impl Index for HashIndex {
    #[inline]
    fn get(&self, key: u64) -> Option<RecordId> {
        let word = if key == u64::MAX {
            &self.max_key
        } else {
            &self.table().find(key_word(key), hash(key))?.value
        };
        // Acquire: pairs with the inserter's Release store of the value.
        match word.load(Ordering::Acquire) {
            0 => None,
            v => Some(RecordId(v - 1)),
        }
    }

    /// Starts loading the slot where a lookup of `key` begins, so that the misses of lookups known
    /// ahead overlap (`crate::storage::prefetch`). Reads nothing a lookup could disagree with.
    #[inline]
    fn prefetch(&self, key: u64) {
        let table = self.table();
        crate::storage::prefetch::prefetch(&table.slots[hash(key) as usize & table.mask]);
    }

    /// Counts entries (walks the table: for reports and tests, not the hot path).
    fn len(&self) -> u64 {
        // Relaxed: a count for reports and tests.
        self.table().len() + u64::from(self.max_key.load(Ordering::Relaxed) != 0)
    }
}

/// The hash that places `key` ([`U64Hasher`]).
#[inline(always)]
fn hash(key: u64) -> u64 {
    let mut h = BuildU64Hasher.build_hasher();
    h.write_u64(key);
    h.finish()
}

/// Builds [`U64Hasher`]s (stateless: the same key always hashes the same).
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildU64Hasher;

impl BuildHasher for BuildU64Hasher {
    type Hasher = U64Hasher;
    #[inline]
    fn build_hasher(&self) -> U64Hasher {
        U64Hasher(0)
    }
}

/// Hashes one `u64` with MurmurHash3's `fmix64` (one multiply-xorshift chain with full
/// avalanche, so the dense and strided composite keys workloads build, district slot * 3000 +
/// customer, spread over slots; std's SipHash would cost several times more per lookup and
/// buys DoS resistance nobody needs here); other inputs are folded in 8 bytes at a time.
#[derive(Debug, Clone, Copy)]
pub struct U64Hasher(u64);

impl Hasher for U64Hasher {
    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = self.0.rotate_left(5) ^ i;
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove() {
        let ix = HashIndex::default();
        assert!(ix.is_empty());
        ix.insert(42, RecordId(7)).unwrap();
        assert_eq!(ix.get(42), Some(RecordId(7)));
        assert_eq!(ix.get(43), None);
        assert_eq!(ix.insert(42, RecordId(8)), Err(Duplicate { key: 42 }));
        assert_eq!(
            ix.get(42),
            Some(RecordId(7)),
            "a failed insert changes nothing"
        );
        assert_eq!(ix.len(), 1);
        assert!(ix.remove(42));
        assert!(!ix.remove(42));
        assert_eq!(ix.get(42), None);
        ix.insert(42, RecordId(9)).unwrap();
        assert_eq!(ix.get(42), Some(RecordId(9)));
    }

    /// The keys whose words are special: 0, and `u64::MAX`, whose complement is the empty
    /// word and which lives beside the table.
    #[test]
    fn the_extreme_keys_are_keys_like_the_others() {
        let ix = HashIndex::default();
        for key in [0, u64::MAX, u64::MAX - 1, 1 << 63] {
            assert_eq!(ix.get(key), None);
            ix.insert(key, RecordId(key / 2)).unwrap();
            assert_eq!(ix.insert(key, RecordId(1)), Err(Duplicate { key }));
            assert_eq!(ix.get(key), Some(RecordId(key / 2)));
        }
        assert_eq!(ix.len(), 4);
        assert!(ix.remove(u64::MAX));
        assert_eq!(ix.get(u64::MAX), None);
        assert_eq!(ix.len(), 3);
    }

    /// Growing from the smallest table through many generations keeps every key, drops the
    /// removed ones, and reuses tombstones' room.
    #[test]
    fn growth_keeps_every_present_key() {
        let ix = HashIndex::with_capacity(0);
        for k in 0..10_000u64 {
            ix.insert(k * 7, RecordId(k)).unwrap();
        }
        for k in (0..10_000u64).step_by(2) {
            assert!(ix.remove(k * 7));
        }
        for k in 10_000..20_000u64 {
            ix.insert(k * 7, RecordId(k)).unwrap();
        }
        assert_eq!(ix.len(), 15_000);
        for k in 0..20_000u64 {
            let expect = (k >= 10_000 || k % 2 == 1).then_some(RecordId(k));
            assert_eq!(ix.get(k * 7), expect, "key {}", k * 7);
        }
        assert!(ix.current.load(Ordering::Relaxed) > 5, "it grew");
    }

    /// Inserting and removing the same few keys forever neither fills the table with
    /// tombstones nor grows it: a removed key's slot is reused by its next insert.
    #[test]
    fn churn_on_few_keys_stays_in_one_table() {
        let ix = HashIndex::with_capacity(8);
        for round in 0..10_000u64 {
            let key = round % 5;
            ix.insert(key, RecordId(round)).unwrap();
            assert_eq!(ix.get(key), Some(RecordId(round)));
            assert!(ix.remove(key));
        }
        assert_eq!(ix.current.load(Ordering::Relaxed), 0);
        assert!(ix.is_empty());
    }

    #[test]
    fn concurrent_inserts_of_disjoint_keys_all_land() {
        let ix = HashIndex::with_capacity(16);
        let threads = 4u64;
        let per = 5_000u64;
        std::thread::scope(|s| {
            for t in 0..threads {
                let ix = &ix;
                s.spawn(move || {
                    for k in (t * per)..((t + 1) * per) {
                        ix.insert(k * 3000, RecordId(k)).unwrap();
                        // Readers race with other threads' inserts and grows.
                        assert_eq!(ix.get(k * 3000), Some(RecordId(k)));
                    }
                });
            }
        });
        assert_eq!(ix.len(), threads * per);
        for k in 0..threads * per {
            assert_eq!(ix.get(k * 3000), Some(RecordId(k)));
        }
    }

    /// Readers that never stop while writers grow the table many times: a key once inserted
    /// and never removed is found by every later lookup, whichever table it reads.
    #[test]
    fn lookups_racing_grows_find_every_settled_key() {
        let ix = HashIndex::with_capacity(0);
        let settled = AtomicU64::new(0);
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    while !done.load(Ordering::Acquire) {
                        let n = settled.load(Ordering::Acquire);
                        for k in n.saturating_sub(64)..n {
                            assert_eq!(ix.get(k), Some(RecordId(k)), "key {k} of {n}");
                        }
                        std::thread::yield_now();
                    }
                });
            }
            for k in 0..50_000u64 {
                ix.insert(k, RecordId(k)).unwrap();
                settled.store(k + 1, Ordering::Release);
            }
            done.store(true, Ordering::Release);
        });
    }

    #[test]
    fn concurrent_inserts_of_one_key_admit_exactly_one() {
        for _ in 0..50 {
            let ix = HashIndex::default();
            let winners: u32 = std::thread::scope(|s| {
                let handles: Vec<_> = (0..4)
                    .map(|t| {
                        let ix = &ix;
                        s.spawn(move || u32::from(ix.insert(1, RecordId(t)).is_ok()))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            assert_eq!(winners, 1);
            assert_eq!(ix.len(), 1);
        }
    }

    #[test]
    fn hasher_spreads_strided_keys() {
        // Keys 3000 apart must not collide in the low bits slots are chosen by.
        let mut low = std::collections::HashSet::new();
        for k in 0..1024u64 {
            low.insert(hash(k * 3000) & 1023);
        }
        assert!(
            low.len() > 600,
            "{} distinct low-bit buckets of 1024",
            low.len()
        );
    }
}
