//! Serializability check: Adya's direct serialization graph (DSG) over the committed history.
//!
//! # Model
//!
//! * **Nodes** are committed transactions, identified by id across all workers. An id seen twice
//!   counts a `duplicate_txn_id` anomaly (both occurrences then share one node); the reserved id
//!   [`Version::INITIAL_WRITER`] counts `reserved_txn_id` and its operations are ignored.
//! * **Version order.** Every write carries the seq its install gave it: one more than the seq of
//!   the version it replaced, read while the protocol held the record (`protocol::InstallLog`),
//!   so per key the versions are ordered by seq, blind writes and read-modify-writes alike. The
//!   loaded version `(0, 0)` is implicit; writer 0 is not a node.
//! * **Reads** name the writer of the version they saw; its seq is the one that writer's write of
//!   the key got.
//! * **Edges** (self edges are dropped: a transaction does not conflict with itself):
//!   * `wr`: the writer of a version → each committed reader of that version;
//!   * `ww`: each writer of `(key, s)` → each writer of `(key, s + 1)`;
//!   * `rw` (anti-dependency): each reader of `(key, s)` → each writer of `(key, s + 1)`.
//!
//!   Several committed writers of one `(key, seq)` are kept as a set, never dropped; that is a
//!   `lost_update` (two installs overlapped), and it also closes a cycle through the `rw` edges
//!   of their reads.
//! * **Cycles.** Every strongly connected component with more than one node counts as one cycle,
//!   classified by the strongest of Adya's phenomena it contains (`cycles::classify`): `G0`
//!   (a cycle of `ww` edges: dirty write), `G1c` (of `ww` and `wr` edges: circular information
//!   flow), `G-single` (exactly one `rw` edge: read skew) or `G2-item` (otherwise: write skew;
//!   a phantom through a scan's records shows here too).
//!
//! # Anomalies (each occurrence counted once)
//!
//! * `aborted_read` (G1a): a read saw a version whose writer never committed;
//! * `intermediate_read` (G1b): a read saw a version that never went through the install path
//!   (a write exposed before its commit installed it). The reader still depends on its writer:
//!   the read gets the edges of a read of the writer's (installed) version of the key, so
//!   circular information flow through exposed writes (G1c) shows as a cycle;
//! * `torn_read`: a read's row did not match its version's checksum (a copy of two versions);
//! * `unknown_version`: a read named a committed writer that wrote no such key;
//! * `lost_update`: two or more committed transactions wrote the same `(key, seq)`;
//! * `unordered_write`: a committed write whose install was not recorded (a protocol that
//!   installs outside the shared path without reporting it; its version has no place in the
//!   order, so it yields `wr` edges only);
//! * `duplicate_txn_id`, `reserved_txn_id`: see above.
//!
//! # What it cannot see
//!
//! * Reads at read committed (TPC-C's Stock-Level option) are not recorded, by design.
//! * With a history budget (`--check-limit`), recording stops per worker once its share is full:
//!   the check covers each worker's prefix. Reads of versions written by unrecorded transactions
//!   yield no edge (counted in `unresolved_reads`, not as anomalies), so a cycle through
//!   unrecorded transactions is missed; nothing recorded is judged wrongly.
//! * Consistency of the final database beyond the versions is the workload's own check (TPC-C).
//!
//! # Cost
//!
//! Operations are flattened into a few vectors, sorted, and merge-joined; edges are sorted,
//! deduplicated (their kinds merged) and kept in compressed sparse row form. A topological peel
//! (Kahn) removes every node not downstream of a cycle, so a serializable history never builds a
//! petgraph graph (see `cycles`).
//!
//! Keys in examples are shown as `table/record` (see `history_key`).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::cycles::{DependencyGraph, Edge, EdgeKinds, find_cycles};
use super::history::{HistOp, OpKind, Version, WorkerHistory, worker_tag};
use super::node_map::NodeMap;

/// Anomaly name (G1a): a read saw a version written by no committed transaction.
pub const ABORTED_READ: &str = "aborted_read";
/// Anomaly name (G1b): a read saw a version that was never installed.
pub const INTERMEDIATE_READ: &str = "intermediate_read";
/// Anomaly name: a read copied parts of two versions.
pub const TORN_READ: &str = "torn_read";
/// Anomaly name: a read named a committed writer that never wrote that key.
pub const UNKNOWN_VERSION: &str = "unknown_version";
/// Anomaly name: several committed transactions wrote the same key and seq.
pub const LOST_UPDATE: &str = "lost_update";
/// Anomaly name: a committed write whose install was not recorded.
pub const UNORDERED_WRITE: &str = "unordered_write";
/// Anomaly name: a transaction id was committed more than once.
pub const DUPLICATE_TXN_ID: &str = "duplicate_txn_id";
/// Anomaly name: a committed transaction used the initial writer's id.
pub const RESERVED_TXN_ID: &str = "reserved_txn_id";

/// Most examples a report keeps.
pub(super) const MAX_EXAMPLES: usize = 5;

/// Result of [`check`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CheckReport {
    /// Committed transactions examined (duplicates included).
    pub transactions: u64,
    /// Operations examined.
    pub operations: u64,
    /// Strongly connected components with more than one transaction.
    pub cycles: u64,
    /// Cycles per class (`G0`, `G1c`, `G-single`, `G2-item`; module docs).
    pub cycle_kinds: BTreeMap<String, u64>,
    /// Anomalies counted, all kinds together.
    pub anomalies: u64,
    /// Anomalies per kind (`aborted_read`, `torn_read`, `lost_update`, ...).
    pub anomaly_counts: BTreeMap<String, u64>,
    /// Workers whose history budget ran out (recording stopped early; module docs).
    pub workers_truncated: u64,
    /// Reads of versions whose writers were not recorded (budget), which yield no edge.
    pub unresolved_reads: u64,
    /// Up to five human-readable descriptions of cycles (first) and anomalies, then the
    /// consistency check's examples.
    pub examples: Vec<String>,
    /// Consistency conditions the workload checked on the final database (TPC-C: clause
    /// 3.3.2); absent for workloads without such conditions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions_checked: Option<u32>,
    /// Violations of those conditions (each failing instance counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency_violations: Option<u64>,
}

impl CheckReport {
    /// Whether the history has neither a dependency cycle nor an anomaly, and the final database
    /// violates none of the workload's consistency conditions (a violation can only come from a
    /// non-serializable execution, or a bug).
    pub fn is_serializable(&self) -> bool {
        self.cycles == 0 && self.anomalies == 0 && self.consistency_violations.unwrap_or(0) == 0
    }

    /// Adds the outcome of a workload's consistency check.
    pub fn add_consistency(&mut self, c: super::ConsistencyReport) {
        self.conditions_checked = Some(c.conditions_checked);
        self.consistency_violations = Some(c.consistency_violations);
        self.examples.extend(c.examples);
    }

    /// Occurrences of one cycle class or anomaly kind (0 when absent).
    pub fn count(&self, name: &str) -> u64 {
        self.cycle_kinds.get(name).copied().unwrap_or(0)
            + self.anomaly_counts.get(name).copied().unwrap_or(0)
    }
}

/// Checks the committed histories of all workers; see the module documentation.
pub fn check(histories: &[WorkerHistory]) -> CheckReport {
    check_with_progress(histories, &mut |_| {})
}

/// The share of a check's time spent before each phase starts, in percent, in phase order
/// (indexing, collecting, ordering, building the graph, finding cycles): from a profile of an
/// 8M-operation check of Silo on 64 records with 8 workers (collect 0.2 s, sort 0.3 s, edges
/// 0.1 s, cycles about 0.1 s), so the percentage a terminal shows is an estimate of the work
/// done, not a count.
const PHASE_START_PERCENT: [u32; 5] = [0, 5, 30, 70, 85];

/// `phase` prefixed with the estimated share of the check done before it.
fn phase_line(index: usize, phase: &str) -> String {
    format!("{:>2}% {phase}", PHASE_START_PERCENT[index])
}

/// [`check`], announcing each phase to `progress` before it starts, with the estimated share of
/// the check done so far (`30% ordering versions`; the graph of a long run takes seconds).
pub fn check_with_progress(
    histories: &[WorkerHistory],
    progress: &mut dyn FnMut(&str),
) -> CheckReport {
    let mut anomalies = AnomalyLog::default();
    progress(&phase_line(0, "indexing transactions"));
    let txns = TxnIndex::build(histories, &mut anomalies);
    progress(&phase_line(
        1,
        &format!(
            "collecting {} operations of {} transactions",
            txns.ops, txns.transactions
        ),
    ));
    let mut ops = RecordedOps::collect(histories, &txns, &mut anomalies);
    progress(&phase_line(2, "ordering versions"));
    ops.sort();

    progress(&phase_line(3, "building the dependency graph"));
    let groups = version_groups(&ops.known_writes);
    let mut edges = Vec::with_capacity(ops.reads.len() * 2);
    add_write_edges(
        &ops.known_writes,
        &groups,
        &txns,
        &mut edges,
        &mut anomalies,
    );
    add_read_edges(&ops, &groups, &mut edges);

    progress(&phase_line(4, "finding cycles"));
    let dependencies = DependencyGraph::build(txns.len(), edges);
    let cycles = find_cycles(&dependencies, &|node| txns.id(node));

    let mut examples = cycles.examples;
    examples.extend(anomalies.examples);
    examples.truncate(MAX_EXAMPLES);
    CheckReport {
        transactions: txns.transactions,
        operations: txns.ops as u64,
        cycles: cycles.count,
        cycle_kinds: cycles.kinds,
        anomalies: anomalies.total,
        anomaly_counts: anomalies.counts,
        workers_truncated: histories
            .iter()
            .filter(|h| h.stopped_at().is_some())
            .count() as u64,
        unresolved_reads: ops.unresolved_reads,
        examples,
        conditions_checked: None,
        consistency_violations: None,
    }
}

/// Dense index of a committed transaction (a graph node).
pub(super) type Node = u32;

/// Stands for writer 0 (the loader) in a [`ReadRecord`]; not a node.
const INITIAL_WRITER_NODE: Node = Node::MAX;

/// Anomaly counts and the first few descriptions.
#[derive(Default)]
struct AnomalyLog {
    total: u64,
    counts: BTreeMap<String, u64>,
    examples: Vec<String>,
}

impl AnomalyLog {
    fn record(&mut self, kind: &str, describe: impl FnOnce() -> String) {
        self.total += 1;
        *self.counts.entry(kind.to_owned()).or_default() += 1;
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(format!("{kind}: {}", describe()));
        }
    }
}

/// Committed transaction ids and their nodes, and where each worker stopped recording.
struct TxnIndex {
    node_of: NodeMap,
    /// Transaction id of each node.
    id_of: Vec<u64>,
    /// Where each node's operations are: (worker history, transaction) positions.
    location: Vec<(u32, u32)>,
    /// Committed transactions seen, duplicates included.
    transactions: u64,
    /// Operations seen, to size the flat vectors.
    ops: usize,
    /// Worker tag → first unrecorded transaction id, for workers whose budget ran out.
    stopped: HashMap<u64, u64>,
}

impl TxnIndex {
    fn build(histories: &[WorkerHistory], anomalies: &mut AnomalyLog) -> TxnIndex {
        let capacity = histories.iter().map(WorkerHistory::len).sum();
        let mut index = TxnIndex {
            node_of: NodeMap::for_ids(histories.iter().flat_map(|h| h.txns().iter().map(|t| t.id))),
            id_of: Vec::with_capacity(capacity),
            location: Vec::with_capacity(capacity),
            transactions: 0,
            ops: 0,
            stopped: histories
                .iter()
                .filter_map(WorkerHistory::stopped_at)
                .map(|id| (worker_tag(id), id))
                .collect(),
        };
        for (h, history) in histories.iter().enumerate() {
            for (t, txn) in history.txns().iter().enumerate() {
                index.transactions += 1;
                index.ops += history.ops(txn).len();
                if txn.id == Version::INITIAL_WRITER {
                    anomalies.record(RESERVED_TXN_ID, || {
                        "a committed transaction has the initial writer's id 0".to_owned()
                    });
                    continue;
                }
                let next = Node::try_from(index.id_of.len())
                    .ok()
                    .filter(|&next| next != INITIAL_WRITER_NODE)
                    .expect("fewer than 2^32 - 1 transactions");
                let node = index.node_of.insert(txn.id, next);
                if node == next {
                    index.id_of.push(txn.id);
                    index.location.push((h as u32, t as u32));
                } else {
                    anomalies.record(DUPLICATE_TXN_ID, || {
                        format!("txn {} committed twice", txn.id)
                    });
                }
            }
        }
        index
    }

    fn len(&self) -> usize {
        self.id_of.len()
    }

    fn node(&self, id: u64) -> Option<Node> {
        self.node_of.get(id)
    }

    fn id(&self, node: Node) -> u64 {
        self.id_of[node as usize]
    }

    /// The seq `node`'s write of `key` got ([`Version::UNKNOWN_SEQ`] for an unordered write),
    /// or `None` if it did not write `key`. A transaction's operations are sorted
    /// ([`WorkerHistory::commit`]), so its writes are found by binary search.
    fn written_seq(&self, histories: &[WorkerHistory], node: Node, key: u64) -> Option<u64> {
        let (h, t) = self.location[node as usize];
        let history = &histories[h as usize];
        let ops = history.ops(&history.txns()[t as usize]);
        let first = HistOp::write(key, 0);
        let at = ops.partition_point(|op| *op < first);
        ops.get(at)
            .filter(|op| op.kind() == OpKind::Write && op.key() == key)
            .map(|op| op.word())
    }

    /// Whether `id` may have committed without being recorded (its worker's budget ran out
    /// at or before it).
    fn maybe_unrecorded(&self, id: u64) -> bool {
        self.stopped
            .get(&worker_tag(id))
            .is_some_and(|&first| id >= first)
    }
}

/// A write with a known seq. Field order is the sort order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct WriteRecord {
    key: u64,
    seq: u64,
    writer: Node,
}

/// A read whose version is known. Field order is the sort order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ReadRecord {
    key: u64,
    seq: u64,
    /// Node of the version's writer, or [`INITIAL_WRITER_NODE`].
    writer: Node,
    reader: Node,
}

/// All operations of the committed transactions, flattened.
struct RecordedOps {
    known_writes: Vec<WriteRecord>,
    /// Reads with their versions' seqs (a read of an unordered write has
    /// [`Version::UNKNOWN_SEQ`]: a `wr` edge only).
    reads: Vec<ReadRecord>,
    /// Reads of versions whose writer may be unrecorded (budget).
    unresolved_reads: u64,
}

impl RecordedOps {
    /// Flattens the operations, giving each read the seq its writer's write of the key got.
    /// Reads of uncommitted writers, torn and uninstalled reads, reads of keys their writer did
    /// not write, and unordered writes are recorded as anomalies here.
    fn collect(histories: &[WorkerHistory], txns: &TxnIndex, anomalies: &mut AnomalyLog) -> Self {
        let mut ops = RecordedOps {
            known_writes: Vec::with_capacity(txns.ops / 2),
            reads: Vec::with_capacity(txns.ops / 2),
            unresolved_reads: 0,
        };
        for history in histories {
            for txn in history.txns() {
                let Some(node) = txns.node(txn.id) else {
                    continue; // the reserved id 0, already reported
                };
                for op in history.ops(txn) {
                    let (key, word) = (op.key(), op.word());
                    match op.kind() {
                        OpKind::Write if word == Version::UNKNOWN_SEQ => {
                            anomalies.record(UNORDERED_WRITE, || {
                                format!(
                                    "txn {} wrote key {} without a recorded install",
                                    txn.id,
                                    describe_key(key)
                                )
                            })
                        }
                        OpKind::Write => ops.known_writes.push(WriteRecord {
                            key,
                            seq: word,
                            writer: node,
                        }),
                        OpKind::TornRead => anomalies.record(TORN_READ, || {
                            format!(
                                "txn {} read key {} with a row that is not writer {}'s",
                                txn.id,
                                describe_key(key),
                                word
                            )
                        }),
                        OpKind::Read if word == Version::INITIAL_WRITER => {
                            ops.reads.push(ReadRecord {
                                key,
                                seq: 0,
                                writer: INITIAL_WRITER_NODE,
                                reader: node,
                            })
                        }
                        kind => {
                            let Some(writer) = txns.node(word) else {
                                if txns.maybe_unrecorded(word) {
                                    ops.unresolved_reads += 1;
                                } else {
                                    anomalies.record(ABORTED_READ, || {
                                        describe_read(
                                            txn.id,
                                            key,
                                            word,
                                            "its writer never committed",
                                        )
                                    });
                                }
                                continue;
                            };
                            if kind == OpKind::UninstalledRead {
                                anomalies.record(INTERMEDIATE_READ, || {
                                    describe_read(txn.id, key, word, "it was never installed")
                                });
                                // The reader still depends on the writer: go on to its edges.
                            }
                            match txns.written_seq(histories, writer, key) {
                                Some(seq) => ops.reads.push(ReadRecord {
                                    key,
                                    seq,
                                    writer,
                                    reader: node,
                                }),
                                None => anomalies.record(UNKNOWN_VERSION, || {
                                    describe_read(
                                        txn.id,
                                        key,
                                        word,
                                        "that transaction wrote no such key",
                                    )
                                }),
                            }
                        }
                    }
                }
            }
        }
        ops
    }

    /// Sorts and deduplicates writes and reads, the two on two threads (they are the bulk of
    /// a large check's time).
    fn sort(&mut self) {
        let (writes, reads) = (&mut self.known_writes, &mut self.reads);
        std::thread::scope(|s| {
            s.spawn(|| {
                writes.sort_unstable();
                writes.dedup();
            });
            reads.sort_unstable();
            reads.dedup();
        });
    }
}

/// The writers of one `(key, seq)`: a range of the sorted, deduplicated known writes.
#[derive(Debug, Clone, Copy)]
struct VersionGroup {
    key: u64,
    seq: u64,
    start: usize,
    end: usize,
}

impl VersionGroup {
    fn writers<'a>(&self, known_writes: &'a [WriteRecord]) -> impl Iterator<Item = Node> + 'a {
        known_writes[self.start..self.end]
            .iter()
            .map(|write| write.writer)
    }

    /// Whether `next` holds the version right after this one.
    fn is_followed_by(&self, next: &VersionGroup) -> bool {
        next.key == self.key && Some(next.seq) == self.seq.checked_add(1)
    }
}

fn version_groups(known_writes: &[WriteRecord]) -> Vec<VersionGroup> {
    let mut groups: Vec<VersionGroup> = Vec::new();
    for (position, write) in known_writes.iter().enumerate() {
        match groups.last_mut() {
            Some(group) if group.key == write.key && group.seq == write.seq => {
                group.end = position + 1
            }
            _ => groups.push(VersionGroup {
                key: write.key,
                seq: write.seq,
                start: position,
                end: position + 1,
            }),
        }
    }
    groups
}

fn push_edge(edges: &mut Vec<Edge>, from: Node, to: Node, kind: EdgeKinds) {
    if from != to {
        edges.push((from, to, kind));
    }
}

/// `ww` edges between consecutive versions, and `lost_update` for versions with several writers.
fn add_write_edges(
    known_writes: &[WriteRecord],
    groups: &[VersionGroup],
    txns: &TxnIndex,
    edges: &mut Vec<Edge>,
    anomalies: &mut AnomalyLog,
) {
    for (position, group) in groups.iter().enumerate() {
        if group.end - group.start > 1 {
            anomalies.record(LOST_UPDATE, || {
                let writers: Vec<u64> = group.writers(known_writes).map(|w| txns.id(w)).collect();
                format!(
                    "key {} seq {} written by txns {writers:?}",
                    describe_key(group.key),
                    group.seq
                )
            });
        }
        let Some(next) = groups
            .get(position + 1)
            .filter(|next| group.is_followed_by(next))
        else {
            continue;
        };
        for earlier in group.writers(known_writes) {
            for later in next.writers(known_writes) {
                push_edge(edges, earlier, later, EdgeKinds::WW);
            }
        }
    }
}

/// `wr` and `rw` edges of every resolved read (`reads` and `groups` are both sorted by key and
/// seq: one cursor walks the groups).
fn add_read_edges(ops: &RecordedOps, groups: &[VersionGroup], edges: &mut Vec<Edge>) {
    let mut cursor = 0;
    for read in &ops.reads {
        if read.writer != INITIAL_WRITER_NODE {
            push_edge(edges, read.writer, read.reader, EdgeKinds::WR);
        }
        let Some(next_seq) = read
            .seq
            .checked_add(1)
            .filter(|_| read.seq != Version::UNKNOWN_SEQ)
        else {
            continue; // an unordered write: no place in the version order
        };
        while groups
            .get(cursor)
            .is_some_and(|g| (g.key, g.seq) < (read.key, next_seq))
        {
            cursor += 1;
        }
        if let Some(next) = groups
            .get(cursor)
            .filter(|g| g.key == read.key && g.seq == next_seq)
        {
            for overwriter in next.writers(&ops.known_writes) {
                push_edge(edges, read.reader, overwriter, EdgeKinds::RW);
            }
        }
    }
}

pub(super) fn describe_key(key: u64) -> String {
    let (table, rid) = super::history::split_history_key(key);
    format!("{table}/{rid}")
}

fn describe_read(reader: u64, key: u64, writer: u64, why: &str) -> String {
    format!(
        "txn {reader} read key {} as written by txn {writer}, but {why}",
        describe_key(key),
    )
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
