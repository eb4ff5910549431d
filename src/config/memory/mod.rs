//! Memory-aware validation: estimate what a run will allocate before anything is allocated, and
//! refuse what does not fit in the memory the process may use now ([`AvailableMemory`]: the least
//! of `MemAvailable`, the cgroup's limit and the resource limits).
//!
//! Linux overcommits: a zeroed allocation larger than the free memory usually succeeds, and the
//! process is killed later, when the pages are touched. So this estimate, not the allocator, is
//! the guard; `Table::try_new` turning a refused allocation into an error is only the backstop.
//!
//! # The estimate
//!
//! Protocols run one after another, each on a database of its own that is freed before the next
//! is allocated, so the peak is the run of the protocol with the largest record metadata:
//!
//! - tables: records x stride per table ([`record_stride`]: metadata and payload rounded up to a
//!   cache line), TPC-C's spare order slots included;
//! - ordered indexes (TPC-C): one entry per record of the indexed table, at
//!   [`ESTIMATED_BYTES_PER_ENTRY`];
//! - workers: [`WORKER_BYTES`] each (stack, statistics, read/write sets);
//! - check mode: the history, `--check-limit` operations of [`CHECK_BYTES_PER_OP`];
//! - multi-version protocols: their older versions, all that the cap `--version-memory-mb`
//!   allows ([`version_footprint`]: the cap counts version nodes, to which the heap adds
//!   [`VERSION_NODE_OVERHEAD_BYTES`] each), since a long transaction can hold every version
//!   back until the cap stops the run. The cap must hold the nodes every worker's pool reserves
//!   ahead ([`versions_reserved`]), or the run would stop at its first versions. Without the
//!   flag the cap is [`DEFAULT_VERSION_MEMORY_MB`], or what is left beside the tables and the
//!   history when that is less; what the versions may take is not left to the tables' growth.
//!
//! A run fits when its estimate is at most [`USABLE_PERCENT`] of the available memory; the rest
//! is headroom for what the estimate leaves out (the checker's graph, TPC-C's customer index,
//! allocator slack, the program itself). The error for a run that does not fit names the
//! parameter to lower and the most that fits with the others unchanged.

mod available;

pub use available::{AvailableMemory, FALLBACK_BYTES, MemorySource};

use super::ConfigError;
use super::validate::out_of_range;
use crate::check::history::CHECK_BYTES_PER_OP;
use crate::index::ESTIMATED_BYTES_PER_ENTRY;
use crate::protocol::{ProtocolKind, ProtocolOptions};
use crate::storage::{IndexSpec, TableSpec, record_stride};
use std::fmt;

/// Share of the available memory a run may plan to use, in percent.
pub const USABLE_PERCENT: u64 = 90;

/// Bytes counted per worker thread: its stack (2 MiB, Rust's default), its statistics (two HDR
/// histograms per transaction type, about 0.2 MB each) and its read and write sets.
pub const WORKER_BYTES: u64 = 4 << 20;

/// Without `--check-limit`, the history may take up to this fraction (1 / N) of the available
/// memory, and never more than the tables leave.
pub const DEFAULT_CHECK_SHARE: u64 = 4;

/// Without `--check-limit`, at most this many operations are recorded: the checker works through
/// roughly 8 million operations a second on one of this project's machines, so a default run's
/// check stays within about half of its measured time (docs/RESULTS.md, "Check mode cost").
pub const MAX_DEFAULT_CHECK_OPS: u64 = 8_000_000;

/// The version memory cap without `--version-memory-mb`, in MiB, when that much is free.
pub const DEFAULT_VERSION_MEMORY_MB: u64 = 1024;

/// Heap bytes one version node costs beyond what the cap counts for it
/// ([`Version::node_bytes`](crate::storage::versions::Version::node_bytes)): the node and its
/// payload are two allocations, each with the allocator's header and rounding (16 bytes or
/// so), and the store's registry keeps a pointer to every node in a vector that may be twice
/// its length (16 bytes).
pub const VERSION_NODE_OVERHEAD_BYTES: usize = 48;

/// What versions capped at `cap` bytes of `node`-byte nodes take from the heap at most.
pub fn version_footprint(cap: u128, node: usize) -> u128 {
    let node = node.max(1) as u128;
    cap.div_ceil(node) * (node + VERSION_NODE_OVERHEAD_BYTES as u128)
}

/// The largest cap of `node`-byte nodes whose [`version_footprint`] fits in `room` bytes.
pub fn version_cap_within(room: u128, node: usize) -> u128 {
    let node = node.max(1) as u128;
    room / (node + VERSION_NODE_OVERHEAD_BYTES as u128) * node
}

/// Bytes of `node`-byte versions that `workers` workers reserve before their first version is
/// written: [`RESERVE`](crate::storage::versions::RESERVE) nodes each with
/// AssertiveVersionReuse (`reuse`), one each without. They come out of the cap.
pub fn versions_reserved(workers: usize, node: usize, reuse: bool) -> u128 {
    let each = if reuse {
        crate::storage::versions::RESERVE
    } else {
        1
    };
    workers as u128 * each as u128 * node as u128
}

/// A byte count shown in decimal units: `34.4 GB`, `512.0 MB`, `20 KB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u128);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        match self.0 {
            n if n >= 1_000_000_000_000 => write!(f, "{:.1} TB", b / 1e12),
            n if n >= 1_000_000_000 => write!(f, "{:.1} GB", b / 1e9),
            n if n >= 1_000_000 => write!(f, "{:.1} MB", b / 1e6),
            n if n >= 1_000 => write!(f, "{:.0} KB", b / 1e3),
            n => write!(f, "{n} bytes"),
        }
    }
}

/// `n` rounded down to three significant digits (`163_871_234` -> `163_000_000`): the most that
/// fits, stated readably and still fitting.
pub fn round_down(n: u128) -> u128 {
    let mut unit = 1;
    while n / unit >= 1000 {
        unit *= 10;
    }
    n / unit * unit
}

/// The largest record metadata of `protocols` with `options`: the run's peak is that protocol's.
pub fn meta_bytes(protocols: &[ProtocolKind], options: &ProtocolOptions) -> usize {
    protocols
        .iter()
        .map(|p| p.record_meta_bytes(options))
        .max()
        .unwrap_or(0)
}

/// Estimated bytes of `tables` and `indexes` with `meta`-byte record metadata.
pub fn data_bytes(tables: &[TableSpec], indexes: &[IndexSpec], meta: usize) -> u128 {
    let table_bytes: u128 = tables
        .iter()
        .map(|t| u128::from(t.records) * record_stride(meta, t.payload_bytes) as u128)
        .sum();
    let index_bytes: u128 = indexes
        .iter()
        .filter_map(|ix| tables.get(ix.table.0 as usize))
        .map(|t| u128::from(t.records) * ESTIMATED_BYTES_PER_ENTRY as u128)
        .sum();
    table_bytes + index_bytes
}

/// The memory plan of a run being validated: what is available, what the run may use, and what
/// its workers take before any data.
#[derive(Debug, Clone, Copy)]
pub struct MemoryBudget {
    available: AvailableMemory,
    usable: u128,
    workers: u128,
}

impl MemoryBudget {
    /// The plan for `threads` workers with `available` memory; an error names `--threads` when
    /// the workers alone do not fit.
    pub fn new(available: AvailableMemory, threads: usize) -> Result<Self, ConfigError> {
        let usable = u128::from(available.bytes) * u128::from(USABLE_PERCENT) / 100;
        let workers = threads as u128 * u128::from(WORKER_BYTES);
        let budget = MemoryBudget {
            available,
            usable,
            workers,
        };
        if workers > usable {
            let max = usable / u128::from(WORKER_BYTES);
            return Err(budget.too_large(
                "threads",
                threads,
                0,
                format!("at most {max} threads fit"),
            ));
        }
        Ok(budget)
    }

    /// Bytes left for tables and indexes once the workers are counted.
    pub fn data_room(&self) -> u128 {
        self.usable - self.workers
    }

    /// The error for `--param value`, with which the run's tables and indexes take `data` bytes;
    /// `fits` says the most that fits.
    pub fn too_large(
        &self,
        param: &'static str,
        value: impl ToString,
        data: u128,
        fits: String,
    ) -> ConfigError {
        ConfigError::TooLarge {
            param,
            value: value.to_string(),
            needed: Bytes(self.workers + data),
            available: Bytes(u128::from(self.available.bytes)),
            limit: self.available.source,
            fits,
        }
    }

    /// The history limit of a checked run whose tables and indexes take `data` bytes: `given`
    /// (`--check-limit`) when its history fits in what is left, else an error naming
    /// `--check-limit`; by default what [`DEFAULT_CHECK_SHARE`] of the available memory holds,
    /// capped by what is left (at least one operation).
    pub fn check_limit(&self, data: u128, given: Option<u64>) -> Result<u64, ConfigError> {
        let left = self.data_room().saturating_sub(data);
        let op = CHECK_BYTES_PER_OP as u128;
        match given {
            Some(0) => Err(out_of_range(
                "check-limit",
                0,
                "at least 1 operation (and as many as fit in memory)",
            )),
            Some(n) if u128::from(n) * op > left => Err(self.too_large(
                "check-limit",
                n,
                data + u128::from(n) * op,
                format!(
                    "at most {} operations fit beside the tables",
                    round_down(left / op)
                ),
            )),
            Some(n) => Ok(n),
            None => {
                let share = u128::from(self.available.bytes / DEFAULT_CHECK_SHARE);
                let ops = (share.min(left) / op).min(u128::from(MAX_DEFAULT_CHECK_OPS));
                Ok(u64::try_from(ops).unwrap_or(u64::MAX).max(1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_decimal_units() {
        assert_eq!(Bytes(34_359_738_368).to_string(), "34.4 GB");
        assert_eq!(Bytes(21_000_000_000).to_string(), "21.0 GB");
        assert_eq!(Bytes(512_000_000).to_string(), "512.0 MB");
        assert_eq!(Bytes(20_480).to_string(), "20 KB");
        assert_eq!(Bytes(999).to_string(), "999 bytes");
        assert_eq!(Bytes(2_500_000_000_000).to_string(), "2.5 TB");
    }

    #[test]
    fn rounding_keeps_three_digits_and_never_rounds_up() {
        assert_eq!(round_down(163_871_234), 163_000_000);
        assert_eq!(round_down(999), 999);
        assert_eq!(round_down(1_999), 1_990);
        assert_eq!(round_down(0), 0);
    }

    #[test]
    fn the_largest_version_cap_within_a_room_is_the_footprints_inverse() {
        let node = 72;
        let per_node = (node + VERSION_NODE_OVERHEAD_BYTES) as u128;
        assert_eq!(version_footprint(0, node), 0);
        // A partial node counts whole: the cap is checked before a node is allocated.
        assert_eq!(version_footprint(1, node), per_node);
        assert_eq!(version_footprint(720, node), 10 * per_node);
        for room in [0u128, 119, 120, 1 << 20, 10_000_000_007] {
            let cap = version_cap_within(room, node);
            assert!(version_footprint(cap, node) <= room, "{room}");
            assert!(version_footprint(cap + node as u128, node) > room, "{room}");
        }
        assert_eq!(versions_reserved(4, node, true), 4 * 64 * 72);
        assert_eq!(versions_reserved(4, node, false), 4 * 72);
    }

    #[test]
    fn workers_count_first() {
        // 90% of 40 MB holds 8 workers of 4 MiB.
        let tiny = AvailableMemory::given(40_000_000);
        let err = MemoryBudget::new(tiny, 16).unwrap_err().to_string();
        assert!(err.contains("--threads 16"), "{err}");
        assert!(err.contains("at most 8 threads fit"), "{err}");
        assert!(MemoryBudget::new(tiny, 8).is_ok());
        assert!(MemoryBudget::new(tiny, 9).is_err());
    }

    #[test]
    fn the_check_limit_defaults_to_a_quarter_and_yields_to_the_tables() {
        let gb = 1_000_000_000u64;
        let b = MemoryBudget::new(AvailableMemory::given(10 * gb), 1).unwrap();
        let quarter = 10 * gb / 4 / CHECK_BYTES_PER_OP as u64;
        assert_eq!(
            b.check_limit(0, None).unwrap(),
            quarter.min(MAX_DEFAULT_CHECK_OPS)
        );
        let small = MemoryBudget::new(AvailableMemory::given(gb), 1).unwrap();
        let small_quarter = gb / 4 / CHECK_BYTES_PER_OP as u64;
        assert!(small_quarter < MAX_DEFAULT_CHECK_OPS);
        assert_eq!(small.check_limit(0, None).unwrap(), small_quarter);
        // Tables taking 8.9 of the 9 usable GB leave less than a quarter for the history.
        let left = b.data_room() - u128::from(8_900_000_000u64);
        assert_eq!(
            u128::from(b.check_limit(u128::from(8_900_000_000u64), None).unwrap()),
            left / CHECK_BYTES_PER_OP as u128
        );
        assert_eq!(b.check_limit(0, Some(1000)).unwrap(), 1000);
        let err = b.check_limit(0, Some(u64::MAX)).unwrap_err().to_string();
        assert!(err.contains("--check-limit"), "{err}");
        assert!(err.contains("operations fit"), "{err}");
        let zero = b.check_limit(0, Some(0)).unwrap_err().to_string();
        assert!(zero.contains("--check-limit"), "{zero}");
    }
}
