//! A table's records, in chunks allocated when first needed.
//!
//! ```text
//!  directory (fixed size, one pointer per chunk, null until allocated)
//! +------+------+------+------+-----+
//! | c0 * | c1 * | null | c3 * | ... |      record i: chunk i >> shift, slot i & mask
//! +--|---+--|---+------+--|---+-----+
//!    v      v             v
//!  chunk: 2^shift records, each `stride` bytes (metadata + payload, see the storage docs),
//!  one zeroed, 64-byte-aligned allocation; the last chunk stops at the table's length
//! ```
//!
//! A record id maps to its address by one shift, one mask and one load of a directory word that
//! stays in cache, and a record never moves: chunks are never reallocated, and the directory has
//! a slot for every chunk the table may ever need (its capacity is fixed when it is built), so
//! growing is installing a pointer. Memory is taken one chunk at a time, when a record of that
//! chunk is first looked up ([`Chunks::lookup`]), and counted against the database's
//! [`TableMemory`].
//!
//! Publication: the allocating thread zeroes the chunk (the allocator does) and writes every
//! record's default metadata, then installs the pointer with a Release compare-and-swap; a
//! lookup loads it with Acquire, so whoever sees the pointer sees initialised records. Two
//! threads that race for one chunk both build it; the loser frees its copy and uses the winner's.

use super::budget::{GrowthRefused, TableMemory};
use super::retire::{Retirement, Waiting};
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Records start on cache-line boundaries.
pub(super) const RECORD_ALIGN: usize = 64;

/// Bytes a chunk of a table that grows aims at: small enough that the partly filled chunk at each
/// growing end (TPC-C has one per district and table) costs little, large enough that growth is
/// one allocation per few thousand rows.
pub const GROWING_CHUNK_BYTES: usize = 256 << 10;

/// Bytes a chunk of a table allocated whole aims at (fewer directory words for large tables).
pub const FIXED_CHUNK_BYTES: usize = 2 << 20;

/// The chunks of one table (module docs).
pub(super) struct Chunks<M> {
    directory: Box<[AtomicPtr<u8>]>,
    /// log2 of the records per chunk.
    shift: u32,
    /// Records in the table (the last chunk stops here).
    len: usize,
    stride: usize,
    /// Bytes of chunks this table holds.
    held: AtomicUsize,
    /// Writes `M::default()` at a record's start (captured where `M: Default` is known, so that
    /// lookups need no bound on `M`).
    init: unsafe fn(*mut u8),
    /// Whether a lookup may allocate a missing chunk. Only tables whose metadata is `Send` grow:
    /// a chunk built by one thread holds `M` values that the table's owner later drops.
    grows: bool,
    /// A fixed table's one allocation, which its chunks divide ([`Chunks::allocate_whole`]).
    whole: Option<(*mut u8, Layout)>,
    _meta: PhantomData<M>,
}

/// Initialises the metadata of the record starting at `at`.
///
/// # Safety
///
/// `at` is the start of a record in a chunk being built: writable, 64-byte aligned, unreferenced.
unsafe fn init_meta<M: Default>(at: *mut u8) {
    // SAFETY: the caller's contract; the alignment of `M` is at most 64 (checked by the table).
    unsafe { at.cast::<M>().write(M::default()) }
}

impl<M: Default> Chunks<M> {
    /// An empty directory for `len` records of `stride` bytes, in chunks of about `chunk_bytes`
    /// (a power of two records, at most the table's length rounded up to one), that allocates
    /// chunks on lookup when `grows`; `None` when the directory itself cannot be allocated.
    /// Callers pass `grows` only for metadata that is `Send` (see the field).
    pub(super) fn new(len: usize, stride: usize, chunk_bytes: usize, grows: bool) -> Option<Self> {
        let per_chunk = (chunk_bytes / stride).max(1);
        let per_chunk = (1usize << per_chunk.ilog2()).min(len.max(1).next_power_of_two());
        let shift = per_chunk.trailing_zeros();
        let count = len.div_ceil(per_chunk);
        let mut directory = Vec::new();
        directory.try_reserve_exact(count).ok()?;
        directory.extend((0..count).map(|_| AtomicPtr::new(std::ptr::null_mut())));
        Some(Chunks {
            directory: directory.into_boxed_slice(),
            shift,
            len,
            stride,
            held: AtomicUsize::new(0),
            init: init_meta::<M>,
            grows,
            whole: None,
            _meta: PhantomData,
        })
    }

    /// Allocates a fixed table: one zeroed allocation for every record, divided into the
    /// directory's chunks, so that a table too large for memory fails here, at once, as a
    /// single allocation, whatever the overcommit policy (not after filling memory chunk by
    /// chunk). `false` when the allocator refuses.
    pub(super) fn allocate_whole(&mut self, memory: &TableMemory) -> bool {
        debug_assert!(self.whole.is_none() && !self.grows);
        let size = (self.len * self.stride).max(RECORD_ALIGN);
        let Ok(layout) = Layout::from_size_align(size, RECORD_ALIGN) else {
            return false;
        };
        // SAFETY: `layout` has a non-zero size (at least one cache line).
        let raw = unsafe { alloc_zeroed(layout) };
        if raw.is_null() {
            return false;
        }
        for r in 0..self.len {
            // SAFETY: record `r` lies within the allocation, 64-byte aligned, unreferenced.
            unsafe { (self.init)(raw.add(r * self.stride)) };
        }
        for (c, slot) in self.directory.iter_mut().enumerate() {
            // SAFETY: chunk `c` starts at record `c << shift < len`, inside the allocation.
            *slot.get_mut() = unsafe { raw.add((c << self.shift) * self.stride) };
        }
        self.whole = Some((raw, layout));
        *self.held.get_mut() = size;
        // Uncapped at build time: only tables that grow are ever refused.
        let _ = memory.take(size, "");
        true
    }
}

impl<M> Chunks<M> {
    /// Records per chunk.
    pub(super) fn per_chunk(&self) -> usize {
        1 << self.shift
    }

    /// Number of directory slots.
    pub(super) fn count(&self) -> usize {
        self.directory.len()
    }

    /// Records in chunk `c` (the last one may be short).
    fn records_in(&self, c: usize) -> usize {
        (self.len - (c << self.shift)).min(self.per_chunk())
    }

    fn layout(&self, c: usize) -> Layout {
        Layout::from_size_align(self.records_in(c) * self.stride, RECORD_ALIGN)
            .expect("checked when the table was built")
    }

    /// Bytes of chunks held.
    pub(super) fn held_bytes(&self) -> usize {
        // Relaxed: a statistic.
        self.held.load(Ordering::Relaxed)
    }

    /// Bytes of the directory itself.
    pub(super) fn directory_bytes(&self) -> usize {
        self.directory.len() * std::mem::size_of::<AtomicPtr<u8>>()
    }

    /// Start of record `i` (`i < len`) if its chunk is allocated.
    #[inline]
    pub(super) fn peek(&self, i: usize) -> Option<*mut u8> {
        debug_assert!(i < self.len);
        // Acquire: pairs with the Release in `grow`, so the chunk's metadata is initialised.
        let chunk = self.directory[i >> self.shift].load(Ordering::Acquire);
        // SAFETY: `i & mask < records_in(chunk)`, so the offset stays inside the chunk's
        // allocation.
        (!chunk.is_null()).then(|| unsafe { chunk.add((i & (self.per_chunk() - 1)) * self.stride) })
    }

    /// Whether chunk `c` is allocated.
    pub(super) fn is_allocated(&self, c: usize) -> bool {
        // Acquire: as in `peek`.
        !self.directory[c].load(Ordering::Acquire).is_null()
    }

    /// Start of record `i` (`i < len`), allocating its chunk on first use in a growing table;
    /// `None` when `memory` or the allocator refuses the chunk (recorded in `memory`, naming
    /// `table`), or when the chunk was retired (`retire`: the table's retirement, if it retires
    /// deleted slots; see `retire.rs`).
    #[inline]
    pub(super) fn lookup(
        &self,
        i: usize,
        memory: &TableMemory,
        table: &str,
        retire: &OnceLock<Retirement>,
    ) -> Option<*mut u8> {
        match self.peek(i) {
            Some(p) => Some(p),
            // The retirement is looked at only in the cold call, off the path of allocated
            // records: inline, its check made every record lookup too large to inline into the
            // operation futures (about 16 instructions a lookup on YCSB, counted by cachegrind).
            None if self.grows => self.grow_or_reuse(i, memory, table, retire),
            None => None,
        }
    }

    /// [`Chunks::lookup`]'s path for a growing table's chunk that is not allocated.
    #[cold]
    #[inline(never)]
    fn grow_or_reuse(
        &self,
        i: usize,
        memory: &TableMemory,
        table: &str,
        retire: &OnceLock<Retirement>,
    ) -> Option<*mut u8> {
        match retire.get() {
            None => self.grow(i, memory, table),
            Some(r) => self.grow_retiring(i, memory, table, r),
        }
    }

    /// Chunk of record `i`, and the records it holds.
    pub(super) fn chunk_of(&self, i: usize) -> (usize, usize) {
        let c = i >> self.shift;
        (c, self.records_in(c))
    }

    /// Notes that slot `i` is retired (`retire.rs`): the chunk is queued for reuse once all of
    /// its slots are, or only marked retired if it was never allocated.
    pub(super) fn retire_slots(&self, i: usize, n: u32, r: &Retirement) {
        let (c, records) = self.chunk_of(i);
        debug_assert!((i & (self.per_chunk() - 1)) + n as usize <= records);
        if !r.add(c, n, records) {
            return;
        }
        let mut waiting = r.lock();
        let epoch = r.grace.retire_epoch();
        r.counted_retired();
        if self.is_allocated(c) {
            waiting.push_back(Waiting { chunk: c, epoch });
        }
    }

    /// [`Chunks::grow`] for a table that retires its deleted slots: serialised by the retirement
    /// queue's lock; reuses the oldest retired chunk whose grace period has passed, or else
    /// allocates; refuses a retired chunk.
    #[cold]
    #[inline(never)]
    fn grow_retiring(
        &self,
        i: usize,
        memory: &TableMemory,
        table: &str,
        r: &Retirement,
    ) -> Option<*mut u8> {
        let mut waiting = r.lock();
        if let Some(p) = self.peek(i) {
            return Some(p); // another thread grew it while we waited for the lock
        }
        let (c, records) = self.chunk_of(i);
        if r.is_retired(c, records) {
            return None;
        }
        while let Some(&oldest) = waiting.front() {
            if !r.grace.quiescent_since(oldest.epoch) && !mutant::reuses_without_grace() {
                break;
            }
            waiting.pop_front();
            // Relaxed: the grace period ensures that no transaction will look chunk `old` up
            // again, and the queue's lock orders this thread after the one that queued it.
            let raw = self.directory[oldest.chunk].swap(std::ptr::null_mut(), Ordering::Relaxed);
            if self.records_in(oldest.chunk) != records {
                // A short last chunk: no use for it here, so it goes back to the allocator.
                let size = self.layout(oldest.chunk).size();
                // SAFETY: the chunk was installed (initialised) and, past its grace period and
                // out of the directory, nothing references it; freed once.
                unsafe { self.free_chunk(raw, oldest.chunk) };
                // Relaxed: a statistic.
                self.held.fetch_sub(size, Ordering::Relaxed);
                memory.give_back(size);
                continue;
            }
            // SAFETY: as above; the chunk has `records` records of `stride` bytes.
            unsafe { self.reset_chunk(raw, records) };
            // Release: publishes the reset chunk to `peek`'s Acquire, as a fresh one.
            self.directory[c].store(raw, Ordering::Release);
            r.counted_reused();
            return self.peek(i);
        }
        // Still under the lock: no reuse above can install into this slot meanwhile.
        let grown = self.grow(i, memory, table);
        drop(waiting);
        grown
    }

    /// Makes a retired chunk of `records` records at `raw` exactly like a freshly allocated one:
    /// drops and rebuilds every record's metadata and zeroes everything else.
    ///
    /// # Safety
    ///
    /// `raw` is an initialised chunk of this table with `records` records that nothing
    /// references and that is in no directory slot.
    unsafe fn reset_chunk(&self, raw: *mut u8, records: usize) {
        for r in 0..records {
            let at = raw.wrapping_add(r * self.stride);
            if std::mem::needs_drop::<M>() {
                // SAFETY: the record's metadata was initialised and is dropped once here.
                unsafe { std::ptr::drop_in_place(at.cast::<M>()) };
            }
            // SAFETY: the record's `stride` bytes lie inside the chunk, which nothing else
            // references (the caller's contract); zero bytes are valid payload words.
            unsafe { std::ptr::write_bytes(at, 0, self.stride) };
            // SAFETY: `at` is a 64-byte-aligned record start in the unreferenced chunk.
            unsafe { (self.init)(at) };
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&self, i: usize, memory: &TableMemory, table: &str) -> Option<*mut u8> {
        let c = i >> self.shift;
        let layout = self.layout(c);
        if !memory.take(layout.size(), table) {
            return None;
        }
        // SAFETY: `layout` has a non-zero size (at least one record of at least one line).
        let raw = unsafe { alloc_zeroed(layout) };
        if raw.is_null() {
            memory.give_back(layout.size());
            memory.refuse(GrowthRefused {
                table: table.to_string(),
                chunk: layout.size(),
                used: memory.used(),
                cap: memory.cap(),
                allocator: true,
            });
            return None;
        }
        for r in 0..self.records_in(c) {
            // SAFETY: record `r` lies within the new allocation, starts 64-byte aligned (the
            // allocation and the stride are multiples of 64), and nothing references it yet;
            // `init` writes the metadata in place. The zeroed payload words are valid
            // `AtomicU64`s already.
            unsafe { (self.init)(raw.add(r * self.stride)) };
        }
        // Release on success: publishes the initialised chunk to `peek`'s Acquire. Acquire on
        // failure: the winner's chunk is initialised before we use it.
        match self.directory[c].compare_exchange(
            std::ptr::null_mut(),
            raw,
            Ordering::Release,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                // Relaxed: a statistic.
                self.held.fetch_add(layout.size(), Ordering::Relaxed);
            }
            Err(_) => {
                // SAFETY: our chunk was never published; its metadata is dropped and its memory
                // freed once, here.
                unsafe { self.free_chunk(raw, c) };
                memory.give_back(layout.size());
            }
        }
        self.peek(i)
    }
}

impl<M> Chunks<M> {
    /// Drops the metadata of chunk `c` at `raw` and frees it.
    ///
    /// # Safety
    ///
    /// `raw` is chunk `c`'s allocation (from `grow`), fully initialised, and nothing references
    /// it or will use it again.
    unsafe fn free_chunk(&self, raw: *mut u8, c: usize) {
        if std::mem::needs_drop::<M>() {
            for r in 0..self.records_in(c) {
                // SAFETY: the caller guarantees the chunk is initialised and unreferenced; each
                // record's metadata is dropped once.
                unsafe { std::ptr::drop_in_place(raw.add(r * self.stride).cast::<M>()) };
            }
        }
        // SAFETY: `raw` came from `alloc_zeroed(self.layout(c))` (the caller's contract).
        unsafe { dealloc(raw, self.layout(c)) };
    }

    /// Frees every chunk; returns the bytes freed (for the database's budget).
    pub(super) fn free_all(&mut self) -> usize {
        if let Some((raw, layout)) = self.whole.take() {
            if std::mem::needs_drop::<M>() {
                for r in 0..self.len {
                    // SAFETY: every record was initialised in `allocate_whole`; `&mut self`
                    // proves none is referenced; each is dropped once (`whole` is taken).
                    unsafe { std::ptr::drop_in_place(raw.add(r * self.stride).cast::<M>()) };
                }
            }
            // SAFETY: `raw` came from `alloc_zeroed(layout)` and is freed once.
            unsafe { dealloc(raw, layout) };
            for slot in self.directory.iter_mut() {
                *slot.get_mut() = std::ptr::null_mut();
            }
            return std::mem::replace(self.held.get_mut(), 0);
        }
        let mut freed = 0;
        for c in 0..self.directory.len() {
            let raw = *self.directory[c].get_mut();
            if !raw.is_null() {
                freed += self.layout(c).size();
                // SAFETY: `&mut self` proves no reference into the chunk is alive; installed
                // chunks are initialised; the slot is cleared so it is freed once.
                unsafe { self.free_chunk(raw, c) };
                *self.directory[c].get_mut() = std::ptr::null_mut();
            }
        }
        *self.held.get_mut() = 0;
        freed
    }
}

/// A deliberately broken variant for tests: reuse retired chunks without waiting for their grace
/// period (the storage tests show that their reuse test catches it).
pub(super) mod mutant {
    #[cfg(test)]
    thread_local! {
        static REUSE_WITHOUT_GRACE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Whether this thread runs the mutant (always `false` outside tests).
    #[inline]
    pub(in crate::storage) fn reuses_without_grace() -> bool {
        #[cfg(test)]
        return REUSE_WITHOUT_GRACE.with(std::cell::Cell::get);
        #[cfg(not(test))]
        false
    }

    /// Turns the mutant on or off for this thread.
    #[cfg(test)]
    pub(in crate::storage) fn set_reuse_without_grace(on: bool) {
        REUSE_WITHOUT_GRACE.with(|m| m.set(on));
    }
}
