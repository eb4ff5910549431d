//! Storage: tables of fixed-size records, in chunks allocated as they are needed.
//!
//! A table is a fixed-size directory of chunks (`chunks.rs`), each a zeroed, 64-byte-aligned
//! allocation of a power-of-two number of records. Record `i` lives in chunk `i >> shift` at
//! `(i & mask) * stride`, a cache-line boundary, and holds the protocol's metadata followed by
//! the payload:
//!
//! ```text
//!  record i (stride = a multiple of 64 bytes)
//! +----------------------+-------------------------------------+---------+
//! | RecordHeader<M>      | payload: ceil(bytes / 8) x AtomicU64 | padding |
//! | (protocol metadata)  |                                     |         |
//! +----------------------+-------------------------------------+---------+
//! ^ 64-byte aligned       ^ 8-byte aligned
//! ```
//!
//! Keeping the metadata word (a TID, a lock word) in the same cache line as the start of the
//! payload means a read costs one miss, not two; aligning every record to a line keeps two
//! records' lock words from false sharing.
//!
//! Payload words are `AtomicU64` accessed with `Relaxed` loads and stores. Optimistic protocols
//! (Silo, TicToc) read a payload while a writer may be installing it and detect the race afterwards
//! through their version word; with plain memory that overlap would be a data race (undefined
//! behaviour in Rust's model), with relaxed atomics it is merely a torn value that validation
//! rejects. On x86-64 a relaxed 64-bit load or store is an ordinary `mov`. The ordering that makes
//! the protocol correct lives in the protocol's own metadata word (acquire/release around the copy).
//!
//! # Tables that grow
//!
//! A table's length ([`TableSpec::records`]) is the number of record ids it can address, fixed
//! when it is built. A *fixed* table allocates every chunk when it is built (what every table
//! did before tables could grow: its rows all exist from the start). A *growing* table
//! ([`Database::try_build_growable`]) allocates a chunk when one of its records is first looked
//! up, typically by the transaction that inserts the first row there, so its length costs only
//! its directory (8 bytes per chunk) and memory tracks the rows that exist. Chunks are never
//! moved, and never freed while a transaction may use them, so a [`Record`] is a pair of plain
//! references that protocols keep in their read/write sets for the length of a transaction,
//! exactly as before. All chunks count against the database's [`TableMemory`]; past its cap a
//! lookup that needs a new chunk gets `None`, and the run stops early (see `budget.rs`).
//! Workloads that insert reserve their slots first ([`Table::reserve`]) so that a refusal is a
//! clean end of the transaction, not a miss.
//!
//! # Slots freed by deletes
//!
//! A delete leaves its slot vacant and its record (metadata, version stamp, version chain) in
//! place, so an insert into it later is an ordinary read-modify-write of that record, ordered by
//! the protocol like any other; which slot an insert fills is the workload's choice (TPC-C: by
//! key arithmetic, see its schema). A workload whose deleted slots are never filled again (TPC-C's
//! NEW-ORDER: an order id is placed once) says so ([`Database::retire_deleted_slots`]), and
//! then the table's memory follows its live rows: a chunk whose every slot was deleted (and taken
//! out of its index) is retired, and once no transaction that could have found one of its
//! records is still running (a grace period, `grace.rs`), its memory becomes the next chunk the
//! table grows into, reset to exactly what a fresh chunk holds (`retire.rs`). Record ids are
//! never reused: a retired id reads as a slot never used.
//!
//! # Files
//!
//! This file holds a record's layout ([`RecordHeader`], [`record_stride`], [`Record`]);
//! `table.rs` a table and its growth, `database.rs` a run's tables and indexes, `chunks.rs` the
//! chunk directory, `budget.rs` the memory cap, `retire.rs` and `grace.rs` slot retirement,
//! `versions/` the multi-version family's version storage.

mod budget;
mod chunks;
mod database;
pub mod grace;
mod indexes;
mod payload;
pub mod prefetch;
mod retire;
pub mod stamp;
mod table;
pub mod versions;

pub use budget::{GrowthRefused, TableMemory};
pub use chunks::{FIXED_CHUNK_BYTES, GROWING_CHUNK_BYTES};
pub use database::Database;
pub use indexes::{END_SENTINEL_KEY, IndexId, IndexSpec, TableIndex};
pub use payload::Payload;
pub use retire::RetirementStats;
pub use table::{GrowingTableStats, Table, TableAllocError, TableSpec};

use chunks::RECORD_ALIGN;

pub use crate::ids::{RecordId, TableId};

/// Largest payload a table accepts, in bytes.
pub const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// The header of one record: the protocol's metadata and nothing else.
#[repr(transparent)]
#[derive(Default)]
pub struct RecordHeader<M> {
    /// Protocol-owned metadata (lock word, TID, timestamps).
    pub meta: M,
}

/// Bytes one record occupies in a table whose metadata takes `meta_bytes` (`size_of::<M>()`) and
/// whose payloads take `payload_bytes`: the metadata rounded up to 8 bytes, the payload in 8-byte
/// words, all rounded up to a cache line (see the layout above). Memory estimates use it before
/// anything is allocated, so they match the tables exactly.
pub const fn record_stride(meta_bytes: usize, payload_bytes: usize) -> usize {
    (meta_bytes.next_multiple_of(8) + payload_bytes.div_ceil(8) * 8).next_multiple_of(RECORD_ALIGN)
}

/// Bytes a payload of `row_bytes` stores: the row, and in check mode (`stamped`) the row padded
/// to a word and followed by its [`stamp`]. Memory estimates use it with [`record_stride`].
pub const fn stored_payload_bytes(row_bytes: usize, stamped: bool) -> usize {
    if stamped {
        row_bytes.next_multiple_of(8) + stamp::STAMP_BYTES
    } else {
        row_bytes
    }
}

/// One record: its id, its header and its payload. Cheap to copy; valid as long as the table.
pub struct Record<'a, M> {
    /// Where the record sits in its table.
    pub rid: RecordId,
    /// The protocol metadata.
    pub header: &'a RecordHeader<M>,
    /// The data.
    pub payload: Payload<'a>,
}

impl<M> Clone for Record<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for Record<'_, M> {}

impl<'a, M> Record<'a, M> {
    /// The protocol metadata of this record.
    #[inline]
    pub fn meta(&self) -> &'a M {
        &self.header.meta
    }

    /// Address of the record, a total order over all records of all tables used to lock write
    /// sets in one global order (deadlock freedom for Silo, TicToc and friends).
    #[inline]
    pub fn order_key(&self) -> usize {
        std::ptr::from_ref(self.header) as usize
    }
}

/// Whether a payload is a vacant slot: its first 8 bytes (or all of it, when shorter) are zero.
///
/// Tables are preallocated, so inserting a row means filling a vacant slot and deleting one means
/// zeroing it again ([`Txn::insert`](crate::txn::Txn::insert), [`Txn::delete`](crate::txn::Txn::delete)).
/// A workload that inserts or deletes therefore lays its rows out with a nonzero field in the
/// first 8 bytes (TPC-C's rows all begin with an id, and ids start at 1). Presence is part of
/// the payload, so every protocol protects it exactly as it protects the data: reading a vacant
/// slot is a read of that record, and a concurrent insert is a conflicting write of it.
/// [`Payload::is_vacant`] answers the same question without copying the payload.
#[inline]
pub fn is_vacant(payload: &[u8]) -> bool {
    payload[..payload.len().min(8)].iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_cache_line_aligned() {
        let t: Table<u64> = Table::new(TableSpec {
            name: "t".into(),
            records: 3,
            payload_bytes: 100,
        });
        for i in 0..3 {
            let r = t.get(RecordId(i)).unwrap();
            assert_eq!(r.order_key() % 64, 0);
            assert_eq!(r.payload.len(), 100);
        }
        assert!(t.get(RecordId(3)).is_none());
    }

    #[test]
    fn metadata_and_payload_share_a_cache_aligned_stride() {
        let t: Table<[u64; 3]> = Table::new(TableSpec {
            name: "t".into(),
            records: 5,
            payload_bytes: 100,
        });
        assert_eq!(t.stride(), 128, "24 bytes of metadata + 104 of payload");
        let r = t.get(RecordId(4)).unwrap();
        assert_eq!(*r.meta(), [0; 3]);
        let payload_addr = r.payload.word_addr();
        assert_eq!(payload_addr - r.order_key(), 24);
    }

    #[test]
    fn vacancy_looks_at_the_first_eight_bytes_only() {
        assert!(is_vacant(&[]));
        assert!(is_vacant(&[0; 3]));
        assert!(!is_vacant(&[0, 0, 1]));
        assert!(is_vacant(&[0, 0, 0, 0, 0, 0, 0, 0, 9]));
        assert!(!is_vacant(&[0, 0, 0, 0, 0, 0, 0, 1, 0]));

        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 1,
            payload_bytes: 12,
        });
        let p = t.get(RecordId(0)).unwrap().payload;
        assert!(p.is_vacant());
        let mut row = [0u8; 12];
        row[11] = 1;
        p.store(&row);
        assert!(p.is_vacant(), "a nonzero byte after the first eight");
        row[7] = 1;
        p.store(&row);
        assert!(!p.is_vacant());
        p.store(&[0; 12]);
        assert!(p.is_vacant(), "a delete writes zeros");

        let short: Table<()> = Table::new(TableSpec {
            name: "short".into(),
            records: 1,
            payload_bytes: 3,
        });
        let p = short.get(RecordId(0)).unwrap().payload;
        p.store(&[0, 0, 5]);
        assert!(!p.is_vacant());
        p.store(&[0, 0, 0]);
        assert!(p.is_vacant());
    }

    #[test]
    fn the_stride_function_matches_the_tables() {
        let t: Table<[u64; 3]> = Table::new(TableSpec {
            name: "t".into(),
            records: 1,
            payload_bytes: 100,
        });
        assert_eq!(record_stride(24, 100), t.stride());
        assert_eq!(record_stride(0, 100), 128);
        assert_eq!(record_stride(8, 1), 64);
        assert_eq!(
            record_stride(4, 56),
            64,
            "metadata is rounded up to 8 bytes"
        );
        assert_eq!(record_stride(4, 57), 128);
    }

    #[test]
    fn payloads_are_independent() {
        let t: Table<()> = Table::new(TableSpec {
            name: "t".into(),
            records: 2,
            payload_bytes: 12,
        });
        let a = t.get(RecordId(0)).unwrap();
        let b = t.get(RecordId(1)).unwrap();
        a.payload.store(&[7u8; 12]);
        let mut out = [0u8; 12];
        b.payload.load(&mut out);
        assert_eq!(out, [0u8; 12]);
        a.payload.load(&mut out);
        assert_eq!(out, [7u8; 12]);
    }
}
