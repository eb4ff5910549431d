//! All tables of one run and the ordered indexes over them.

use super::grace::Grace;
use super::{
    IndexId, IndexSpec, Table, TableAllocError, TableId, TableIndex, TableMemory, TableSpec,
};
use super::{RecordId, stamp};
use std::sync::{Arc, OnceLock};

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
    /// records of at least one) for the tables that grow, instead of [`GROWING_CHUNK_BYTES`](super::GROWING_CHUNK_BYTES):
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
        for table in self.tables.iter().filter(|t| t.is_stamped()) {
            row.resize(table.stored_bytes(), 0);
            let seq = stamp::seq_word(table.stored_bytes());
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
    use crate::storage::{GROWING_CHUNK_BYTES, chunks};

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
}
