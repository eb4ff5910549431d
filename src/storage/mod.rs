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

mod budget;
mod chunks;
pub mod grace;
mod indexes;
mod payload;
mod retire;
pub mod stamp;
pub mod versions;

pub use budget::{GrowthRefused, TableMemory};
pub use chunks::{FIXED_CHUNK_BYTES, GROWING_CHUNK_BYTES};
pub use indexes::{END_SENTINEL_KEY, IndexId, IndexSpec, TableIndex};
pub use payload::Payload;
pub use retire::RetirementStats;

use crate::sync::atomic::AtomicU64;
use chunks::{Chunks, RECORD_ALIGN};
use grace::Grace;
use retire::Retirement;
use std::sync::{Arc, OnceLock};

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

/// What a table is: a name, how many records it can hold, and how large each payload is.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// Human name, used in errors and reports.
    pub name: String,
    /// Number of record ids: all allocated up front for a fixed table, the most a growing one
    /// can address (module docs).
    pub records: u64,
    /// Bytes per payload (at least 1).
    pub payload_bytes: usize,
}

/// A table of fixed-size records whose headers carry metadata of type `M`.
pub struct Table<M> {
    spec: TableSpec,
    chunks: Chunks<M>,
    /// The database's budget (a table built alone has its own, without a cap).
    memory: Arc<TableMemory>,
    growable: bool,
    len: usize,
    stride: usize,
    /// Offset of the payload within a record.
    payload_offset: usize,
    words_per_record: usize,
    /// Bytes of each stored payload: the row, then (check mode) its [`stamp`].
    stored_bytes: usize,
    /// Whether payloads carry a check-mode stamp after the row.
    stamped: bool,
    /// Set when the table retires its deleted slots (`retire.rs`), before transactions run.
    retire: OnceLock<Retirement>,
}

// SAFETY: a table owns `M` values and `AtomicU64` words (in its chunks); sharing it across
// threads shares `&M` and `&AtomicU64`, which is sound when `M: Sync` (atomics are `Sync`).
// Sending it moves the `M` values, which needs `M: Send`. A growing table also lets any thread
// that shares it build `M` values in a new chunk, which the owner later drops; only `M: Send`
// tables grow (their constructors require it, see `Chunks::grows`).
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

/// A growing table's memory at the end of a run, for reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GrowingTableStats {
    /// The table's name.
    pub table: String,
    /// Bytes it holds: chunks (in use, or retired and not yet reused) and its directory.
    pub memory_bytes: u64,
    /// Bytes of one chunk.
    pub chunk_bytes: u64,
    /// For a table that retires its deleted slots: chunks retired and reused. Without reuse it
    /// would hold `chunks_reused * chunk_bytes` more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retirement: Option<RetirementStats>,
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
        Self::build_in(spec, stamped, false, Arc::new(TableMemory::unlimited()), 0)
    }

    /// Builds a fixed or growing table whose chunks count against `memory`. `growable` must be
    /// false unless `M: Send` (see `Chunks::grows`); the public constructors guarantee it. A
    /// growing table's chunks aim at `growing_chunk_bytes` (0: [`GROWING_CHUNK_BYTES`]).
    fn build_in(
        spec: TableSpec,
        stamped: bool,
        growable: bool,
        memory: Arc<TableMemory>,
        growing_chunk_bytes: usize,
    ) -> Result<Self, TableAllocError> {
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
        // The whole table must fit in the address space (each chunk's layout is then valid).
        let Some(len) = usize::try_from(spec.records).ok().filter(|&len| {
            len.checked_mul(stride)
                .is_some_and(|b| b <= isize::MAX as usize - RECORD_ALIGN)
        }) else {
            return Err(too_large);
        };
        let chunk_bytes = if growable && growing_chunk_bytes > 0 {
            growing_chunk_bytes
        } else if growable {
            GROWING_CHUNK_BYTES
        } else {
            FIXED_CHUNK_BYTES
        };
        let Some(mut chunks) = Chunks::new(len, stride, chunk_bytes, growable) else {
            return Err(too_large);
        };
        if !growable && !chunks.allocate_whole(&memory) {
            return Err(too_large);
        }
        Ok(Table {
            spec,
            chunks,
            memory,
            growable,
            len,
            stride,
            payload_offset,
            words_per_record,
            stored_bytes,
            stamped,
            retire: OnceLock::new(),
        })
    }
}

impl<M> Drop for Table<M> {
    fn drop(&mut self) {
        let freed = self.chunks.free_all();
        self.memory.give_back(freed);
    }
}

impl<M: Default + Send> Table<M> {
    /// A table of `spec` that grows (module docs): nothing but its directory is allocated now.
    pub fn growable(spec: TableSpec, stamped: bool) -> Result<Self, TableAllocError> {
        Self::build_in(spec, stamped, true, Arc::new(TableMemory::unlimited()), 0)
    }
}

impl<M> Table<M> {
    /// The record at `rid`, or `None` past the end, or when its chunk is not allocated yet and
    /// cannot be (a growing table past its database's cap, see [`TableMemory`]).
    #[inline]
    pub fn get(&self, rid: RecordId) -> Option<Record<'_, M>> {
        let i = usize::try_from(rid.0).ok().filter(|&i| i < self.len)?;
        let start = self
            .chunks
            .lookup(i, &self.memory, &self.spec.name, &self.retire)?;
        // SAFETY: `start` is record `i` of an installed chunk (see `record_at`).
        Some(unsafe { self.record_at(rid, start) })
    }

    /// Makes sure the record at `rid` exists in memory (allocating its chunk); `false` past the
    /// end or when the chunk is refused. Workloads reserve the slots they insert into, so that
    /// a table that cannot grow ends the transaction cleanly (module docs).
    pub fn reserve(&self, rid: RecordId) -> bool {
        self.get(rid).is_some()
    }

    /// What this table was created from.
    pub fn spec(&self) -> &TableSpec {
        &self.spec
    }

    /// Number of record ids (see [`TableSpec::records`]).
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

    /// Whether the table grows (module docs).
    pub fn is_growable(&self) -> bool {
        self.growable
    }

    /// Records per chunk.
    pub fn records_per_chunk(&self) -> u64 {
        self.chunks.per_chunk() as u64
    }

    /// Bytes the table holds: its allocated chunks and its directory.
    pub fn memory_bytes(&self) -> usize {
        self.chunks.held_bytes() + self.chunks.directory_bytes()
    }

    /// Bytes of one full chunk of this table.
    pub fn chunk_bytes(&self) -> usize {
        self.chunks.per_chunk() * self.stride
    }

    /// Makes this growing table retire its deleted slots (module docs, "Slots freed by
    /// deletes"; `retire.rs`), with `grace` (the database's) for the grace periods. Call before
    /// any transaction runs; a second call changes nothing. A fixed table keeps its one
    /// allocation: nothing happens.
    fn retire_deleted_slots(&self, grace: &Arc<Grace>) {
        if self.growable {
            self.retire
                .get_or_init(|| Retirement::new(self.chunks.count(), Arc::clone(grace)));
        }
    }

    /// Whether this table retires its deleted slots.
    pub fn retires_slots(&self) -> bool {
        self.retire.get().is_some()
    }

    /// Notes that slot `rid` will never be used again: its row was deleted and its index
    /// entries taken out (or it never held a row and never will). Nothing happens for a table
    /// that does not retire slots. Each slot is retired at most once (a second time panics: it
    /// would let a live chunk be reused).
    pub fn retire_slot(&self, rid: RecordId) {
        self.retire_slots(rid.0..rid.0 + 1);
    }

    /// [`Table::retire_slot`] for every slot of `rids`.
    pub fn retire_slots(&self, rids: std::ops::Range<u64>) {
        let Some(r) = self.retire.get() else {
            return;
        };
        assert!(rids.end <= self.spec.records, "slots past the table's end");
        let mut i = rids.start as usize;
        let end = rids.end as usize;
        while i < end {
            let (c, records) = self.chunks.chunk_of(i);
            let chunk_end = (c * self.chunks.per_chunk() + records).min(end);
            let n = u32::try_from(chunk_end - i).expect("a chunk's slots fit in u32");
            self.chunks.retire_slots(i, n, r);
            i = chunk_end;
        }
    }

    /// Whether `rid`'s chunk is retired (every slot of it retired): such a record may be gone.
    /// Index walks skip entries that point into one (`txn/index_ops.rs`).
    #[inline]
    pub fn is_retired(&self, rid: RecordId) -> bool {
        let Some(r) = self.retire.get() else {
            return false;
        };
        let Some(i) = usize::try_from(rid.0).ok().filter(|&i| i < self.len) else {
            return false;
        };
        let (c, records) = self.chunks.chunk_of(i);
        r.is_retired(c, records)
    }

    /// Retirement counters of a table that retires slots.
    pub fn retirement_stats(&self) -> Option<RetirementStats> {
        self.retire.get().map(Retirement::stats)
    }

    /// What a report says of this table if it grows.
    pub fn growing_stats(&self) -> Option<GrowingTableStats> {
        self.growable.then(|| GrowingTableStats {
            table: self.spec.name.clone(),
            memory_bytes: self.memory_bytes() as u64,
            chunk_bytes: self.chunk_bytes() as u64,
            retirement: self.retirement_stats(),
        })
    }

    /// The record at `rid` if it is in memory, without allocating: `None` past the end and for a
    /// record of a growing table whose chunk was never needed (a vacant slot; checks and
    /// after-run scans read such slots as vacant).
    #[inline]
    pub fn peek(&self, rid: RecordId) -> Option<Record<'_, M>> {
        let i = usize::try_from(rid.0).ok().filter(|&i| i < self.len)?;
        let start = self.chunks.peek(i)?;
        // SAFETY: `start` is record `i` of an installed chunk (see `record_at`).
        Some(unsafe { self.record_at(rid, start) })
    }

    /// The ranges of record ids whose chunks are allocated, in order (one range per chunk).
    pub fn allocated_ranges(&self) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        let per = self.chunks.per_chunk() as u64;
        (0..self.chunks.count())
            .filter(|&c| self.chunks.is_allocated(c))
            .map(move |c| {
                let lo = c as u64 * per;
                lo..(lo + per).min(self.spec.records)
            })
    }

    /// The record whose start is `start`.
    ///
    /// # Safety
    ///
    /// `start` is the start of record `rid` in an installed chunk of this table.
    #[inline]
    unsafe fn record_at(&self, rid: RecordId, start: *mut u8) -> Record<'_, M> {
        // SAFETY: the record lies inside an installed chunk (the caller's contract); its
        // metadata was initialised before the chunk was published and is only ever accessed
        // through shared references (it is `Sync`); its payload is `words_per_record`
        // initialised (zeroed) `AtomicU64`s at an 8-byte-aligned offset. The references live as
        // long as `&self`, and chunks never move or are freed while the table exists.
        unsafe {
            let header = &*start.cast::<RecordHeader<M>>();
            let words = std::slice::from_raw_parts(
                start.add(self.payload_offset).cast::<AtomicU64>(),
                self.words_per_record,
            );
            Record {
                rid,
                header,
                payload: Payload::new(words, self.stored_bytes),
            }
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
    /// What the tables hold, against the cap ([`Database::table_memory`]).
    memory: Arc<TableMemory>,
    /// Grace periods for the tables that retire deleted slots; set by the first of them.
    grace: OnceLock<Arc<Grace>>,
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
        Self::assemble(specs, indexes, stamped, &[], 0)
    }

    /// The tables and indexes; the tables named in `growable` grow, which needs `M: Send` (see
    /// `Table::build_in`): only [`Database::try_build_growable`] passes any.
    fn assemble(
        specs: &[TableSpec],
        indexes: &[IndexSpec],
        stamped: bool,
        growable: &[TableId],
        growing_chunk_bytes: usize,
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
        let memory = Arc::new(TableMemory::unlimited());
        Ok(Database {
            tables: specs
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, spec)| {
                    let grows = growable.contains(&TableId(i as u32));
                    Table::build_in(
                        spec,
                        stamped,
                        grows,
                        Arc::clone(&memory),
                        growing_chunk_bytes,
                    )
                })
                .collect::<Result<_, _>>()?,
            indexes: indexes.iter().cloned().map(TableIndex::new).collect(),
            memory,
            grace: OnceLock::new(),
        })
    }
}

impl<M: Default + Send> Database<M> {
    /// [`Database::try_build`], where the tables named in `growable` grow (see the module docs):
    /// only their directories are allocated now, their chunks as their records are first used.
    pub fn try_build_growable(
        specs: &[TableSpec],
        indexes: &[IndexSpec],
        stamped: bool,
        growable: &[TableId],
    ) -> Result<Self, TableAllocError> {
        Self::assemble(specs, indexes, stamped, growable, 0)
    }

    /// [`Database::try_build_growable`] with chunks of about `chunk_bytes` (a power of two
    /// records of at least one) for the tables that grow, instead of [`GROWING_CHUNK_BYTES`]:
    /// small chunks make growth and slot retirement happen within a short test.
    pub fn try_build_growable_chunked(
        specs: &[TableSpec],
        indexes: &[IndexSpec],
        stamped: bool,
        growable: &[TableId],
        chunk_bytes: usize,
    ) -> Result<Self, TableAllocError> {
        Self::assemble(specs, indexes, stamped, growable, chunk_bytes.max(1))
    }
}

impl<M> Database<M> {
    /// The table with this id. Panics on an id this database did not create (a workload bug).
    #[inline]
    pub fn table(&self, id: TableId) -> &Table<M> {
        &self.tables[id.0 as usize]
    }

    /// Makes growing table `id` retire its deleted slots (module docs, "Slots freed by
    /// deletes"): the workload promises that a slot whose row was deleted, once its index
    /// entries are out, never holds a row again. Call before any transaction runs (workloads
    /// do it when they load). A fixed table is left as it is (its memory is one allocation).
    pub fn retire_deleted_slots(&self, id: TableId) {
        if self.table(id).is_growable() {
            let grace = self.grace.get_or_init(|| Arc::new(Grace::new()));
            self.table(id).retire_deleted_slots(grace);
        }
    }

    /// The grace periods of a database with a table that retires slots: every transaction
    /// handle claims a slot in it (`Txn`).
    pub fn grace(&self) -> Option<&Grace> {
        self.grace.get().map(|g| &**g)
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
            // Records of chunks never allocated are zeroed rows, which need nothing.
            for i in table.allocated_ranges().flatten() {
                let payload = table.peek(RecordId(i)).expect("an allocated chunk").payload;
                payload.load(&mut row);
                let checksum = stamp::row_checksum(0, &row[..table.payload_bytes()]);
                if checksum != 0 {
                    payload.store_word(seq + 1, checksum);
                }
            }
        }
    }

    /// Bytes held by records (metadata, payloads, padding) and the tables' chunk directories:
    /// what the tables cost in memory now.
    pub fn memory_bytes(&self) -> usize {
        self.tables.iter().map(Table::memory_bytes).sum()
    }

    /// The tables' memory budget: set its cap ([`TableMemory::set_cap`]) to bound growth; the
    /// executor stops a run when it refuses a chunk ([`TableMemory::refused`]).
    pub fn table_memory(&self) -> &TableMemory {
        &self.memory
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

    fn growing(records: u64) -> Table<[u64; 2]> {
        Table::growable(
            TableSpec {
                name: "grows".into(),
                records,
                payload_bytes: 40,
            },
            false,
        )
        .expect("a directory")
    }

    #[test]
    fn a_growing_table_allocates_a_chunk_when_a_record_is_first_used() {
        let t = growing(1 << 20);
        assert!(t.is_growable());
        assert_eq!(t.stride(), 64);
        let per = t.records_per_chunk();
        assert_eq!(per as usize, GROWING_CHUNK_BYTES / 64);
        assert_eq!(
            t.memory_bytes(),
            (1 << 20) / per as usize * 8,
            "the directory only"
        );
        assert!(t.peek(RecordId(5)).is_none());
        let r5 = t.get(RecordId(5)).expect("grows");
        assert_eq!(r5.order_key() % 64, 0);
        assert_eq!(
            t.peek(RecordId(per - 1)).map(|r| r.rid),
            Some(RecordId(per - 1))
        );
        assert!(
            t.peek(RecordId(per)).is_none(),
            "the next chunk is not allocated"
        );
        r5.payload.store(&[9; 40]);
        // Growth elsewhere moves nothing.
        for i in [per, 7 * per + 3, (1 << 20) - 1] {
            assert!(t.reserve(RecordId(i)));
        }
        let again = t.get(RecordId(5)).unwrap();
        assert_eq!(again.order_key(), r5.order_key());
        let mut out = [0u8; 40];
        again.payload.load(&mut out);
        assert_eq!(out, [9; 40]);
        assert_eq!(
            t.allocated_ranges().collect::<Vec<_>>(),
            [
                0..per,
                per..2 * per,
                7 * per..8 * per,
                (1 << 20) - per..1 << 20
            ]
        );
        assert_eq!(
            t.memory_bytes(),
            4 * GROWING_CHUNK_BYTES + (1 << 20) / per as usize * 8
        );
        assert!(t.get(RecordId(1 << 20)).is_none(), "past the end");
    }

    #[test]
    fn growth_past_the_cap_is_refused_and_remembered() {
        let db: Database<u64> = Database::try_build_growable(
            &[
                TableSpec {
                    name: "fixed".into(),
                    records: 10,
                    payload_bytes: 8,
                },
                TableSpec {
                    name: "log".into(),
                    records: 1 << 20,
                    payload_bytes: 8,
                },
            ],
            &[],
            false,
            &[TableId(1)],
        )
        .unwrap();
        let fixed = db.table(TableId(0));
        assert!(!fixed.is_growable() && fixed.peek(RecordId(9)).is_some());
        let log = db.table(TableId(1));
        let per = log.records_per_chunk();
        let used = db.table_memory().used();
        assert_eq!(used, 10 * 64, "the fixed table");
        db.table_memory().set_cap(used + 2 * GROWING_CHUNK_BYTES);
        assert!(log.reserve(RecordId(0)) && log.reserve(RecordId(per)));
        assert!(!db.table_memory().refused());
        assert!(
            !log.reserve(RecordId(2 * per)),
            "a third chunk passes the cap"
        );
        assert!(log.get(RecordId(2 * per + 1)).is_none());
        assert!(
            log.get(RecordId(per + 1)).is_some(),
            "allocated chunks stay usable"
        );
        assert!(db.table_memory().refused());
        let why = db.table_memory().first_refusal().unwrap();
        assert_eq!(why.table, "log");
        assert_eq!(why.chunk, GROWING_CHUNK_BYTES);
        assert_eq!(
            fixed.memory_bytes(),
            10 * 64 + 8,
            "records and a one-chunk directory"
        );
        assert_eq!(db.memory_bytes(), fixed.memory_bytes() + log.memory_bytes());
    }

    #[test]
    fn threads_racing_for_one_chunk_share_the_winner() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        #[derive(Default)]
        struct Counted;
        static LIVE: AtomicUsize = AtomicUsize::new(0);
        impl Drop for Counted {
            fn drop(&mut self) {
                // Relaxed: a test counter read after the threads joined.
                LIVE.fetch_add(1, Ordering::Relaxed);
            }
        }
        let t: Table<Counted> = Table::growable(
            TableSpec {
                name: "race".into(),
                records: 1 << 16,
                payload_bytes: 8,
            },
            false,
        )
        .unwrap();
        let per = t.records_per_chunk();
        let addrs: Vec<Vec<usize>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|k| {
                    let t = &t;
                    s.spawn(move || {
                        (0..8)
                            .map(|c| {
                                t.get(RecordId(c * per + k)).unwrap().order_key() - 64 * k as usize
                            })
                            .collect()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(addrs.iter().all(|a| a == &addrs[0]), "one chunk per slot");
        assert_eq!(
            t.memory_bytes() - t.chunks.directory_bytes(),
            8 * per as usize * 64
        );
        let losers = LIVE.load(Ordering::Relaxed);
        drop(t);
        // Every record built was dropped once: the winners' at the end, the losers' at once.
        assert_eq!(LIVE.load(Ordering::Relaxed) - losers, 8 * per as usize);
        assert_eq!(losers % per as usize, 0);
    }

    /// A retiring table of 4-record chunks: fills chunk 0, lets a pinned reader hold record 1,
    /// deletes and retires the whole chunk, grows while the reader runs and again after it
    /// ended. Returns whether the reader's record kept its contents while it ran, and checks
    /// everything else about retirement and reuse.
    fn retire_under_a_reader() -> bool {
        let db: Database<u64> = Database::try_build_growable_chunked(
            &[TableSpec {
                name: "queue".into(),
                records: 64,
                payload_bytes: 8,
            }],
            &[],
            false,
            &[TableId(0)],
            4 * 64,
        )
        .unwrap();
        db.retire_deleted_slots(TableId(0));
        let t = db.table(TableId(0));
        let per = t.records_per_chunk();
        assert_eq!(per, 4);
        for i in 0..per {
            t.get(RecordId(i)).unwrap().payload.store(&[1; 8]);
        }
        let chunk0 = t.peek(RecordId(0)).unwrap().order_key();
        let grace = db.grace().expect("a table retires slots");
        let mut reader = grace.claim();
        reader.pin();
        let held = t.get(RecordId(1)).unwrap();
        for i in 0..per {
            t.get(RecordId(i)).unwrap().payload.store(&[0; 8]);
            assert!(
                !t.is_retired(RecordId(0)),
                "retired only once every slot is"
            );
            t.retire_slot(RecordId(i));
        }
        assert!(t.is_retired(RecordId(0)) && !t.is_retired(RecordId(per)));
        let stats = t.retirement_stats().unwrap();
        assert_eq!((stats.chunks_retired, stats.chunks_waiting), (1, 1));
        // The reader still works with its record (an optimistic read, a lock word).
        held.payload.store(&[7; 8]);
        let memory = t.memory_bytes();
        let next = t.get(RecordId(per)).expect("grows");
        let mut out = [0u8; 8];
        held.payload.load(&mut out);
        let kept = out == [7; 8];
        if next.order_key() == chunk0 {
            return kept; // reused under the reader: only the mutant gets here
        }
        assert_eq!(t.memory_bytes(), memory + 4 * 64, "a fresh chunk");
        assert_eq!(t.retirement_stats().unwrap().chunks_reused, 0);
        reader.unpin();
        let reused = t.get(RecordId(2 * per + 1)).expect("grows");
        assert_eq!(
            reused.order_key(),
            chunk0 + 64,
            "chunk 0's memory, record 1 of the new chunk"
        );
        assert_eq!(t.memory_bytes(), memory + 4 * 64, "reuse takes no memory");
        for i in 2 * per..3 * per {
            let r = t.peek(RecordId(i)).unwrap();
            r.payload.load(&mut out);
            assert_eq!((out, *r.meta()), ([0; 8], 0), "exactly like a fresh chunk");
        }
        assert!(
            t.peek(RecordId(1)).is_none(),
            "a retired slot reads as never used"
        );
        assert!(t.get(RecordId(1)).is_none(), "and is never allocated again");
        assert_eq!(
            t.allocated_ranges().collect::<Vec<_>>(),
            [per..2 * per, 2 * per..3 * per]
        );
        let stats = t.retirement_stats().unwrap();
        assert_eq!(
            (
                stats.chunks_retired,
                stats.chunks_reused,
                stats.chunks_waiting
            ),
            (1, 1, 0)
        );
        kept
    }

    #[test]
    fn a_retired_chunk_is_reused_only_after_its_readers_ended() {
        assert!(retire_under_a_reader());
    }

    #[test]
    fn reuse_without_a_grace_period_is_caught() {
        chunks::mutant::set_reuse_without_grace(true);
        let kept = retire_under_a_reader();
        chunks::mutant::set_reuse_without_grace(false);
        assert!(!kept, "the mutant reused the chunk under its reader");
    }

    #[test]
    #[should_panic(expected = "a slot retired twice")]
    fn retiring_a_slot_twice_is_a_bug() {
        let t: Database<u64> = Database::try_build_growable_chunked(
            &[TableSpec {
                name: "queue".into(),
                records: 8,
                payload_bytes: 8,
            }],
            &[],
            false,
            &[TableId(0)],
            4 * 64,
        )
        .unwrap();
        t.retire_deleted_slots(TableId(0));
        t.table(TableId(0)).retire_slots(0..3);
        t.table(TableId(0)).retire_slots(2..5);
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
