//! Storage: tables of fixed-size records, preallocated once.
//!
//! A table is two parallel arrays indexed by [`RecordId`]:
//! - headers: one `#[repr(align(64))]` [`RecordHeader`] per record, holding the protocol's
//!   per-record metadata (`Protocol::RecordMeta`: a TID word, a lock word, timestamps...). Aligning
//!   each header to a cache line keeps two records' lock words from false sharing.
//! - payloads: `payload_bytes` per record, stored as 64-bit words ([`Payload`]).
//!
//! Payload words are `AtomicU64` accessed with `Relaxed` loads and stores. Optimistic protocols
//! (Silo, TicToc) read a payload while a writer may be installing it and detect the race afterwards
//! through their version word; with plain memory that overlap would be a data race (undefined
//! behaviour in Rust's model), with relaxed atomics it is merely a torn value that validation
//! rejects. On x86-64 a relaxed 64-bit load or store is an ordinary `mov`. The ordering that makes
//! the protocol correct lives in the protocol's own metadata word (acquire/release around the copy).
//!
//! Tables never move or shrink during a run, so a [`Record`] is a pair of plain references that
//! protocols keep in their read/write sets for the length of a transaction.

mod payload;

pub use payload::Payload;

use std::sync::atomic::AtomicU64;

/// Index of a table within a [`Database`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub u32);

/// Position of a record within its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordId(pub u64);

/// Largest payload a table accepts, in bytes.
pub const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// The cache-line-aligned header of one record: the protocol's metadata and nothing else.
#[repr(C, align(64))]
#[derive(Default)]
pub struct RecordHeader<M> {
    /// Protocol-owned metadata (lock word, TID, timestamps).
    pub meta: M,
}

/// What a table is: a name, how many records it holds, and how large each payload is.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// Human name, used in errors and reports.
    pub name: String,
    /// Number of records, all allocated up front.
    pub records: u64,
    /// Bytes per payload (at least 1).
    pub payload_bytes: usize,
}

/// A table of fixed-size records whose headers carry metadata of type `M`.
pub struct Table<M> {
    spec: TableSpec,
    headers: Box<[RecordHeader<M>]>,
    words_per_record: usize,
    payloads: Box<[AtomicU64]>,
}

impl<M: Default> Table<M> {
    /// Allocates every record of `spec`, zeroed payloads and default metadata.
    pub fn new(spec: TableSpec) -> Self {
        assert!(spec.payload_bytes >= 1 && spec.payload_bytes <= MAX_PAYLOAD_BYTES);
        let n = usize::try_from(spec.records).expect("record count fits in usize");
        let words_per_record = spec.payload_bytes.div_ceil(8);
        let headers = (0..n).map(|_| RecordHeader::default()).collect();
        let payloads = (0..n * words_per_record)
            .map(|_| AtomicU64::new(0))
            .collect();
        Table {
            spec,
            headers,
            words_per_record,
            payloads,
        }
    }
}

impl<M> Table<M> {
    /// What this table was created from.
    pub fn spec(&self) -> &TableSpec {
        &self.spec
    }

    /// Number of records.
    pub fn len(&self) -> u64 {
        self.spec.records
    }

    /// Whether the table holds no records.
    pub fn is_empty(&self) -> bool {
        self.spec.records == 0
    }

    /// Payload size in bytes.
    pub fn payload_bytes(&self) -> usize {
        self.spec.payload_bytes
    }

    /// The record at `rid`, or `None` past the end.
    #[inline]
    pub fn get(&self, rid: RecordId) -> Option<Record<'_, M>> {
        let i = usize::try_from(rid.0).ok()?;
        let header = self.headers.get(i)?;
        let start = i * self.words_per_record;
        let words = &self.payloads[start..start + self.words_per_record];
        Some(Record {
            rid,
            header,
            payload: Payload::new(words, self.spec.payload_bytes),
        })
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

    /// Address of the header, a total order over all records of all tables used to lock write
    /// sets in one global order (deadlock freedom for Silo, TicToc and friends).
    #[inline]
    pub fn order_key(&self) -> usize {
        std::ptr::from_ref(self.header) as usize
    }
}

/// All tables of one run, each with the same protocol metadata type.
pub struct Database<M> {
    tables: Vec<Table<M>>,
}

impl<M: Default> Database<M> {
    /// Allocates every table in `specs`; table `i` gets `TableId(i)`.
    pub fn new(specs: &[TableSpec]) -> Self {
        Database {
            tables: specs.iter().cloned().map(Table::new).collect(),
        }
    }
}

impl<M> Database<M> {
    /// The table with this id. Panics on an id this database did not create (a workload bug).
    #[inline]
    pub fn table(&self, id: TableId) -> &Table<M> {
        &self.tables[id.0 as usize]
    }

    /// Every table, in id order.
    pub fn tables(&self) -> &[Table<M>] {
        &self.tables
    }

    /// Bytes held by record headers and payloads (what a table costs in memory).
    pub fn memory_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(|t| {
                t.headers.len() * std::mem::size_of::<RecordHeader<M>>() + t.payloads.len() * 8
            })
            .sum()
    }
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
