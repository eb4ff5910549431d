//! Identifiers of tables and records: the vocabulary `storage` and `index` share. They live below
//! both so that indexes (which map keys to record ids) need not import storage, which owns the
//! database's ordered indexes: dependencies run one way, `storage` -> `index` -> `ids`.

/// Index of a table within a [`Database`](crate::storage::Database).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub u32);

/// Position of a record within its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordId(pub u64);
