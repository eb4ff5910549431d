//! Storage: tables of fixed-size records, preallocated once.
//!
//! A table is one zeroed, 64-byte-aligned allocation of `records x stride` bytes. Record `i`
//! starts at `i * stride`, a cache-line boundary, and holds the protocol's metadata followed by
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
//! Tables never move or shrink during a run, so a [`Record`] is a pair of plain references that
//! protocols keep in their read/write sets for the length of a transaction.

mod indexes;
mod payload;
pub mod stamp;
pub mod versions;

pub use indexes::{END_SENTINEL_KEY, IndexId, IndexSpec, TableIndex};
pub use payload::Payload;

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

pub use crate::ids::{RecordId, TableId};

/// Largest payload a table accepts, in bytes.
pub const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// Records start on cache-line boundaries.
const RECORD_ALIGN: usize = 64;

/// The header of one record: the protocol's metadata and nothing else.
#[repr(transparent)]
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
    /// Start of the allocation (`layout`), `len * stride` bytes.
    base: NonNull<u8>,
    layout: Layout,
    len: usize,
    stride: usize,
    /// Offset of the payload within a record.
    payload_offset: usize,
    words_per_record: usize,
    /// Bytes of each stored payload: the row, then (check mode) its [`stamp`].
    stored_bytes: usize,
    /// Whether payloads carry a check-mode stamp after the row.
    stamped: bool,
    _meta: PhantomData<M>,
}

// SAFETY: a table owns `M` values and `AtomicU64` words; sharing it across threads shares `&M`
// and `&AtomicU64`, which is sound when `M: Sync` (atomics are `Sync`). Sending it moves the `M`
// values, which needs `M: Send`.
unsafe impl<M: Send> Send for Table<M> {}
// SAFETY: see `Send` above; `&Table` only hands out shared references.
unsafe impl<M: Sync> Sync for Table<M> {}

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

/// A table that could not be allocated: too large for the address space, or the allocator
/// refused (out of memory, an address-space limit such as `ulimit -v`).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error(
    "cannot allocate table '{table}': {records} records of {stride} bytes ({bytes} bytes); \
     not enough memory"
)]
pub struct TableAllocError {
    /// The table's name.
    pub table: String,
    /// Records asked for.
    pub records: u64,
    /// Bytes per record.
    pub stride: usize,
    /// Bytes asked for in all.
    pub bytes: u128,
}

impl<M: Default> Table<M> {
    /// Allocates every record of `spec`: zeroed payloads and default metadata.
    ///
    /// Panics when the memory cannot be allocated; [`Table::try_new`] returns an error instead.
    pub fn new(spec: TableSpec) -> Self {
        Self::try_build(spec, false).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Like [`Table::new`], with room for a check-mode [`stamp`] after each row (a zeroed stamp
    /// is the loaded version's, see [`stamp::row_checksum`]).
    pub fn with_stamps(spec: TableSpec) -> Self {
        Self::try_build(spec, true).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Allocates every record of `spec`, or says why it could not. Under Linux's overcommit a
    /// zeroed allocation may succeed and the process be killed later, when the pages are touched,
    /// so callers estimate memory before asking; this is the backstop for what the estimate
    /// missed (`ulimit -v`, `overcommit_memory = 2`, address-space exhaustion).
    pub fn try_new(spec: TableSpec) -> Result<Self, TableAllocError> {
        Self::try_build(spec, false)
    }

    /// [`Table::try_new`], with check-mode stamps after the rows when `stamped`.
    pub fn try_build(spec: TableSpec, stamped: bool) -> Result<Self, TableAllocError> {
        assert!(spec.payload_bytes >= 1 && spec.payload_bytes <= MAX_PAYLOAD_BYTES);
        assert!(
            std::mem::align_of::<M>() <= RECORD_ALIGN,
            "metadata alignment above 64"
        );
        let stored_bytes = stored_payload_bytes(spec.payload_bytes, stamped);
        let words_per_record = stored_bytes.div_ceil(8);
        let payload_offset = std::mem::size_of::<M>().next_multiple_of(8);
        let stride = record_stride(std::mem::size_of::<M>(), stored_bytes);
        let too_large = TableAllocError {
            table: spec.name.clone(),
            records: spec.records,
            stride,
            bytes: u128::from(spec.records) * stride as u128,
        };
        let Some((len, size)) = usize::try_from(spec.records)
            .ok()
            .and_then(|len| Some((len, len.checked_mul(stride)?.max(RECORD_ALIGN))))
        else {
            return Err(too_large);
        };
        let Ok(layout) = Layout::from_size_align(size, RECORD_ALIGN) else {
            return Err(too_large);
        };
        // SAFETY: `layout` has a non-zero size (at least one cache line).
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(base) = NonNull::new(raw) else {
            return Err(too_large);
        };
        for i in 0..len {
            // SAFETY: record `i` lies within the allocation (`i < len`), starts 64-byte aligned
            // (base and stride are multiples of 64, and `M` needs at most 64), and nothing
            // references it yet; writing initialises the metadata in place. The zeroed payload
            // words are valid `AtomicU64`s already.
            unsafe {
                base.as_ptr()
                    .add(i * stride)
                    .cast::<M>()
                    .write(M::default())
            };
        }
        Ok(Table {
            spec,
            base,
            layout,
            len,
            stride,
            payload_offset,
            words_per_record,
            stored_bytes,
            stamped,
            _meta: PhantomData,
        })
    }
}

impl<M> Drop for Table<M> {
    fn drop(&mut self) {
        if std::mem::needs_drop::<M>() {
            for i in 0..self.len {
                // SAFETY: every record's metadata was initialised in `new` and is dropped once,
                // here; `&mut self` proves no reference to it is alive.
                unsafe {
                    std::ptr::drop_in_place(self.base.as_ptr().add(i * self.stride).cast::<M>())
                };
            }
        }
        // SAFETY: `base` came from `alloc_zeroed(self.layout)` and is freed once.
        unsafe { dealloc(self.base.as_ptr(), self.layout) };
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

    /// Row size in bytes: what programs, loaders and checks read and write (the spec's payload).
    pub fn payload_bytes(&self) -> usize {
        self.spec.payload_bytes
    }

    /// Bytes each record stores and protocols copy: the row, plus the check-mode stamp on a
    /// stamped table ([`Record::payload`]'s length).
    pub fn stored_bytes(&self) -> usize {
        self.stored_bytes
    }

    /// Whether payloads carry a check-mode [`stamp`] after the row.
    pub fn is_stamped(&self) -> bool {
        self.stamped
    }

    /// Bytes one record occupies (metadata, payload and padding to a cache line).
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The record at `rid`, or `None` past the end.
    #[inline]
    pub fn get(&self, rid: RecordId) -> Option<Record<'_, M>> {
        let i = usize::try_from(rid.0).ok().filter(|&i| i < self.len)?;
        // SAFETY: `i < len`, so the record lies inside the allocation; its metadata was
        // initialised in `new` and is only ever accessed through shared references (it is
        // `Sync`); its payload is `words_per_record` initialised (zeroed) `AtomicU64`s at an
        // 8-byte-aligned offset. The references live as long as `&self`, and the allocation
        // never moves or shrinks while the table exists.
        unsafe {
            let start = self.base.as_ptr().add(i * self.stride);
            let header = &*start.cast::<RecordHeader<M>>();
            let words = std::slice::from_raw_parts(
                start.add(self.payload_offset).cast::<AtomicU64>(),
                self.words_per_record,
            );
            Some(Record {
                rid,
                header,
                payload: Payload::new(words, self.stored_bytes),
            })
        }
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

/// All tables of one run, each with the same protocol metadata type, and the ordered indexes over
/// them.
pub struct Database<M> {
    tables: Vec<Table<M>>,
    indexes: Vec<TableIndex>,
}

impl<M: Default> Database<M> {
    /// Allocates every table in `specs`; table `i` gets `TableId(i)`. No indexes.
    pub fn new(specs: &[TableSpec]) -> Self {
        Self::with_indexes(specs, &[])
    }

    /// Allocates the tables and creates the (empty) indexes; index `i` gets `IndexId(i)`.
    /// Panics when an index names a table that `specs` does not create (a workload bug), or when
    /// a table cannot be allocated ([`Database::try_with_indexes`] returns that error instead).
    pub fn with_indexes(specs: &[TableSpec], indexes: &[IndexSpec]) -> Self {
        Self::try_build(specs, indexes, false).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Like [`Database::with_indexes`], with check-mode [`stamp`]s after every row.
    pub fn with_check_stamps(specs: &[TableSpec], indexes: &[IndexSpec]) -> Self {
        Self::try_build(specs, indexes, true).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`Database::with_indexes`], but a table that cannot be allocated is an error (the
    /// tables allocated before it are freed).
    pub fn try_with_indexes(
        specs: &[TableSpec],
        indexes: &[IndexSpec],
    ) -> Result<Self, TableAllocError> {
        Self::try_build(specs, indexes, false)
    }

    /// [`Database::try_with_indexes`], with check-mode stamps after every row when `stamped`.
    pub fn try_build(
        specs: &[TableSpec],
        indexes: &[IndexSpec],
        stamped: bool,
    ) -> Result<Self, TableAllocError> {
        for ix in indexes {
            assert!(
                (ix.table.0 as usize) < specs.len(),
                "index {} names table {} of {}",
                ix.name,
                ix.table.0,
                specs.len()
            );
        }
        Ok(Database {
            tables: specs
                .iter()
                .cloned()
                .map(|spec| Table::try_build(spec, stamped))
                .collect::<Result<_, _>>()?,
            indexes: indexes.iter().cloned().map(TableIndex::new).collect(),
        })
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

    /// The index with this id. Panics on an id this database did not create (a workload bug).
    #[inline]
    pub fn ordered_index(&self, id: IndexId) -> &TableIndex {
        &self.indexes[id.0 as usize]
    }

    /// Every index, in id order.
    pub fn indexes(&self) -> &[TableIndex] {
        &self.indexes
    }

    /// Check mode: gives every loaded row of a stamped table the checksum of its loaded version
    /// (writer 0, seq 0). Loaders write rows only; rows left zeroed need nothing (their
    /// checksum is 0), so only rows with data are touched. Call once, after loading, before any
    /// transaction runs.
    pub fn stamp_loaded_rows(&self) {
        let mut row = Vec::new();
        for table in self.tables.iter().filter(|t| t.stamped) {
            row.resize(table.stored_bytes, 0);
            let seq = stamp::seq_word(table.stored_bytes);
            for i in 0..table.len {
                let payload = table
                    .get(RecordId(i as u64))
                    .expect("within the table")
                    .payload;
                payload.load(&mut row);
                let checksum = stamp::row_checksum(0, &row[..table.payload_bytes()]);
                if checksum != 0 {
                    payload.store_word(seq + 1, checksum);
                }
            }
        }
    }

    /// Bytes held by records (metadata, payloads, padding): what the tables cost in memory.
    pub fn memory_bytes(&self) -> usize {
        self.tables.iter().map(|t| t.len * t.stride).sum()
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
    fn metadata_destructors_run_once() {
        use std::sync::Arc;
        let counter = Arc::new(());
        #[derive(Default)]
        struct Holder(Option<Arc<()>>);
        {
            let t: Table<Holder> = Table::new(TableSpec {
                name: "t".into(),
                records: 3,
                payload_bytes: 4,
            });
            assert!(t.get(RecordId(0)).unwrap().meta().0.is_none());
            let _keep = Arc::clone(&counter);
        }
        assert_eq!(Arc::strong_count(&counter), 1);
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
    fn an_impossible_table_is_an_error_not_an_abort() {
        // Past usize, past isize::MAX bytes, and 8 PiB: more than a 47-bit address space, so the
        // allocator itself refuses whatever the overcommit policy.
        for records in [u64::MAX, 1 << 56, 1 << 46] {
            let e = Table::<u64>::try_new(TableSpec {
                name: "huge".into(),
                records,
                payload_bytes: 100,
            })
            .err()
            .expect("cannot be allocated");
            assert_eq!(e.records, records);
            assert_eq!(e.stride, 128);
            assert!(e.to_string().contains("'huge'"), "{e}");
        }
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
