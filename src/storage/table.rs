//! A table of fixed-size records: built whole or grown a chunk at a time, its slots retired when
//! the workload says so (module docs, "Tables that grow" and "Slots freed by deletes").

use super::chunks::{Chunks, RECORD_ALIGN};
use super::grace::Grace;
use super::retire::Retirement;
use super::{FIXED_CHUNK_BYTES, GROWING_CHUNK_BYTES, MAX_PAYLOAD_BYTES};
use super::{Payload, Record, RecordHeader, RecordId, RetirementStats, TableMemory};
use super::{record_stride, stored_payload_bytes};
use crate::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

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
    /// Bytes of each stored payload: the row, then (check mode) its [`stamp`](super::stamp).
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

    /// Like [`Table::new`], with room for a check-mode [`stamp`](super::stamp) after each row (a zeroed stamp
    /// is the loaded version's, see [`stamp::row_checksum`](super::stamp::row_checksum)).
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
    pub(super) fn build_in(
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

    /// Starts loading record `rid`'s cache lines (its header and payload, the first four lines
    /// and the last) so that a later access finds them ([`super::prefetch::prefetch`]). Nothing
    /// past the end or in a chunk not allocated: it allocates nothing.
    #[inline]
    pub fn prefetch(&self, rid: RecordId) {
        let Some(record) = self.peek(rid) else {
            return;
        };
        // The header is at the record's start (`record_at`).
        let start = std::ptr::from_ref(record.header).cast::<u8>();
        let bytes = self.payload_offset + self.words_per_record * 8;
        // The addresses are only hinted, never dereferenced: `wrapping_add` needs no `unsafe`.
        for line in (0..bytes.min(4 * 64)).step_by(64) {
            super::prefetch::prefetch(start.wrapping_add(line));
        }
        super::prefetch::prefetch(start.wrapping_add(bytes - 1));
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

    /// Whether payloads carry a check-mode [`stamp`](super::stamp) after the row.
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
    pub(super) fn retire_deleted_slots(&self, grace: &Arc<Grace>) {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A prefetch is a hint: it allocates no chunk of a growing table, and past the end or in a
    /// chunk not allocated it does nothing at all.
    #[test]
    fn a_prefetch_allocates_nothing() {
        let t = growing(1 << 20);
        let before = t.memory_bytes();
        for i in [0, 5, (1 << 20) - 1, 1 << 20, u64::MAX] {
            t.prefetch(RecordId(i));
        }
        assert_eq!(t.memory_bytes(), before, "no chunk allocated");
        assert_eq!(t.allocated_ranges().count(), 0);
        assert!(t.reserve(RecordId(5)));
        t.prefetch(RecordId(5));
        assert_eq!(t.allocated_ranges().count(), 1);
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
}
