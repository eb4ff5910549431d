//! Serializability check: Adya's direct serialization graph (DSG) over the committed history.
//!
//! # Model
//!
//! * **Nodes** are committed transactions, identified by id across all workers. An id seen twice
//!   counts a `duplicate_txn_id` anomaly (both occurrences then share one node); the reserved id
//!   [`Version::INITIAL_WRITER`] counts `reserved_txn_id` and its operations are ignored.
//! * **Version order.** Every version of a key carries `(writer, seq)`. A read-modify-write turns
//!   `(w, s)` into `(its id, s + 1)`, so per key the versions with a known seq are ordered by seq.
//!   The loaded version `(0, 0)` is implicit; writer 0 is not a node.
//! * **Edges** (self edges are dropped: a transaction does not conflict with itself):
//!   * `wr`: the writer of a version → each committed reader of that version;
//!   * `ww`: each writer of `(key, s)` → each writer of `(key, s + 1)`;
//!   * `rw` (anti-dependency): each reader of `(key, s)` → each writer of `(key, s + 1)`.
//!
//!   Several committed writers of one `(key, seq)` are kept as a set, never dropped; that is a
//!   `lost_update`, and it also closes a cycle through the `rw` edges of their reads.
//! * **Cycles.** Every strongly connected component with more than one node counts as one cycle.
//!   (Self edges are never added, so there are no single-node cycles.)
//!
//! # Anomalies (each occurrence counted once)
//!
//! * `aborted_read`: a read saw a version whose writer is neither committed nor 0 (a dirty or
//!   aborted read, or a torn stamp);
//! * `unknown_version`: a read saw `(writer, seq)` that its writer never wrote for that key (a torn
//!   payload), including `(0, s)` with `s != 0`;
//! * `lost_update`: two or more committed transactions wrote the same `(key, seq)`; counted once per
//!   `(key, seq)`;
//! * `duplicate_txn_id`, `reserved_txn_id`: see above.
//!
//! # Limitations
//!
//! A blind write (`seq == Version::UNKNOWN_SEQ`) has no place in the version order: it yields `wr`
//! edges to the transactions that read it (matched by writer id and key, whatever seq the read
//! reports) but no `ww` or `rw` edges, so anomalies that only show through the order of blind writes
//! go unseen. A version that is read but has no known seq likewise yields no `rw` edge.
//!
//! # Cost
//!
//! Operations are flattened into a few vectors, sorted, and merge-joined; edges are sorted,
//! deduplicated (their kinds merged) and kept in compressed sparse row form. A topological peel
//! (Kahn) removes every node not downstream of a cycle, so a serializable history never builds a
//! petgraph graph. The rest goes to [`petgraph::algo::kosaraju_scc`], which keeps its DFS stack on
//! the heap: petgraph's `tarjan_scc` recurses once per node on a path, and overflows the stack on
//! the long chains that histories are. About 3 s for 1M transactions of 8 operations (release).
//!
//! Keys in examples are shown as `table/record` (see `history_key`).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;

use super::history::{HistOp, Version, WorkerHistory};

/// Anomaly name: a read saw a version written by no committed transaction.
pub const ABORTED_READ: &str = "aborted_read";
/// Anomaly name: a read saw a version its writer never wrote for that key.
pub const UNKNOWN_VERSION: &str = "unknown_version";
/// Anomaly name: several committed transactions wrote the same key and seq.
pub const LOST_UPDATE: &str = "lost_update";
/// Anomaly name: a transaction id was committed more than once.
pub const DUPLICATE_TXN_ID: &str = "duplicate_txn_id";
/// Anomaly name: a committed transaction used the initial writer's id.
pub const RESERVED_TXN_ID: &str = "reserved_txn_id";

/// Most examples a report keeps.
const MAX_EXAMPLES: usize = 5;
/// Most transactions an example cycle lists.
const MAX_CYCLE_TXNS_SHOWN: usize = 6;

/// Result of [`check`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    /// Committed transactions examined (duplicates included).
    pub transactions: u64,
    /// Strongly connected components with more than one transaction.
    pub cycles: u64,
    /// Anomalies counted, all kinds together.
    pub anomalies: u64,
    /// Anomalies per kind (`aborted_read`, `unknown_version`, `lost_update`, ...).
    pub anomaly_counts: BTreeMap<String, u64>,
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
    pub fn add_consistency(&mut self, c: crate::workload::tpcc::ConsistencyReport) {
        self.conditions_checked = Some(c.conditions_checked);
        self.consistency_violations = Some(c.consistency_violations);
        self.examples.extend(c.examples);
    }
}

/// Checks the committed histories of all workers; see the module documentation.
pub fn check(histories: &[WorkerHistory]) -> CheckReport {
    let mut anomalies = AnomalyLog::default();
    let txns = TxnIndex::build(histories, &mut anomalies);
    let mut ops = RecordedOps::collect(histories, &txns, &mut anomalies);
    ops.sort();

    let groups = version_groups(&ops.known_writes);
    let mut edges = Vec::with_capacity(ops.reads.len() * 2);
    add_write_edges(
        &ops.known_writes,
        &groups,
        &txns,
        &mut edges,
        &mut anomalies,
    );
    add_read_edges(&ops, &groups, &txns, &mut edges, &mut anomalies);

    let dependencies = DependencyGraph::build(txns.len(), edges);
    let (cycles, cycle_examples) = find_cycles(&dependencies, &txns);

    let mut examples = cycle_examples;
    examples.extend(anomalies.examples);
    examples.truncate(MAX_EXAMPLES);
    CheckReport {
        transactions: txns.transactions,
        cycles,
        anomalies: anomalies.total,
        anomaly_counts: anomalies.counts,
        examples,
        conditions_checked: None,
        consistency_violations: None,
    }
}

/// Dense index of a committed transaction (a graph node).
type Node = u32;

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

/// Hasher for transaction ids: one multiply, enough for ids that are not adversarial.
#[derive(Default)]
struct TxnIdHasher(u64);

impl Hasher for TxnIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        let mixed = (self.0 ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = mixed ^ (mixed >> 29);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Committed transaction ids and their nodes.
struct TxnIndex {
    node_of: HashMap<u64, Node, BuildHasherDefault<TxnIdHasher>>,
    /// Transaction id of each node.
    id_of: Vec<u64>,
    /// Committed transactions seen, duplicates included.
    transactions: u64,
    /// Operations seen, to size the flat vectors.
    ops: usize,
}

impl TxnIndex {
    fn build(histories: &[WorkerHistory], anomalies: &mut AnomalyLog) -> TxnIndex {
        let capacity = histories.iter().map(WorkerHistory::len).sum();
        let mut index = TxnIndex {
            node_of: HashMap::with_capacity_and_hasher(capacity, Default::default()),
            id_of: Vec::with_capacity(capacity),
            transactions: 0,
            ops: 0,
        };
        for history in histories {
            for txn in history.txns() {
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
                let node = *index.node_of.entry(txn.id).or_insert(next);
                if node == next {
                    index.id_of.push(txn.id);
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
        self.node_of.get(&id).copied()
    }

    fn id(&self, node: Node) -> u64 {
        self.id_of[node as usize]
    }
}

/// A write with a known seq. Field order is the sort order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct WriteRecord {
    key: u64,
    seq: u64,
    writer: Node,
}

/// A blind write: only the key and the writer are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct BlindWriteRecord {
    key: u64,
    writer: Node,
}

/// A read whose writer is committed (or the loader). Field order is the sort order.
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
    blind_writes: Vec<BlindWriteRecord>,
    reads: Vec<ReadRecord>,
}

impl RecordedOps {
    /// Flattens the operations; reads of uncommitted writers, and of initial versions other than
    /// `(0, 0)`, are recorded as anomalies here and dropped.
    fn collect(histories: &[WorkerHistory], txns: &TxnIndex, anomalies: &mut AnomalyLog) -> Self {
        let mut ops = RecordedOps {
            known_writes: Vec::with_capacity(txns.ops / 2),
            blind_writes: Vec::new(),
            reads: Vec::with_capacity(txns.ops / 2),
        };
        for history in histories {
            for txn in history.txns() {
                let Some(node) = txns.node(txn.id) else {
                    continue; // the reserved id 0, already reported
                };
                for op in history.ops(txn) {
                    match *op {
                        HistOp::Write { key, version } if version.seq == Version::UNKNOWN_SEQ => {
                            ops.blind_writes
                                .push(BlindWriteRecord { key, writer: node });
                        }
                        HistOp::Write { key, version } => {
                            ops.known_writes.push(WriteRecord {
                                key,
                                seq: version.seq,
                                writer: node,
                            });
                        }
                        HistOp::Read { key, version } => {
                            let writer = if version.writer == Version::INITIAL_WRITER {
                                if version.seq != 0 {
                                    anomalies.record(UNKNOWN_VERSION, || {
                                        describe_read(
                                            txn.id,
                                            key,
                                            version,
                                            "the loader wrote only seq 0",
                                        )
                                    });
                                    continue;
                                }
                                INITIAL_WRITER_NODE
                            } else if let Some(writer) = txns.node(version.writer) {
                                writer
                            } else {
                                anomalies.record(ABORTED_READ, || {
                                    describe_read(
                                        txn.id,
                                        key,
                                        version,
                                        "its writer never committed",
                                    )
                                });
                                continue;
                            };
                            ops.reads.push(ReadRecord {
                                key,
                                seq: version.seq,
                                writer,
                                reader: node,
                            });
                        }
                    }
                }
            }
        }
        ops
    }

    fn sort(&mut self) {
        self.known_writes.sort_unstable();
        self.known_writes.dedup();
        self.blind_writes.sort_unstable();
        self.blind_writes.dedup();
        self.reads.sort_unstable();
        self.reads.dedup();
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

/// Kinds of dependency between two transactions, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct EdgeKinds(u8);

impl EdgeKinds {
    const WR: EdgeKinds = EdgeKinds(1);
    const WW: EdgeKinds = EdgeKinds(2);
    const RW: EdgeKinds = EdgeKinds(4);
}

impl fmt::Display for EdgeKinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [(Self::WR, "wr"), (Self::WW, "ww"), (Self::RW, "rw")];
        let mut first = true;
        for (kind, name) in names {
            if self.0 & kind.0 != 0 {
                if !first {
                    f.write_str("+")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// A dependency `from → to`, before deduplication.
type Edge = (Node, Node, EdgeKinds);

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

/// `wr` and `rw` edges of every read, and `unknown_version` for reads matching no write.
fn add_read_edges(
    ops: &RecordedOps,
    groups: &[VersionGroup],
    txns: &TxnIndex,
    edges: &mut Vec<Edge>,
    anomalies: &mut AnomalyLog,
) {
    // Reads and groups are both sorted by (key, seq): walk the groups with one cursor.
    let mut cursor = 0;
    for read in &ops.reads {
        while groups
            .get(cursor)
            .is_some_and(|g| (g.key, g.seq) < (read.key, read.seq))
        {
            cursor += 1;
        }
        let same_version = groups
            .get(cursor)
            .filter(|g| g.key == read.key && g.seq == read.seq);
        let in_version_order = if read.writer == INITIAL_WRITER_NODE {
            true // collect() kept only (0, 0)
        } else {
            same_version.is_some_and(|g| g.writers(&ops.known_writes).any(|w| w == read.writer))
        };

        if in_version_order {
            if read.writer != INITIAL_WRITER_NODE {
                push_edge(edges, read.writer, read.reader, EdgeKinds::WR);
            }
            let next_position = if same_version.is_some() {
                cursor + 1
            } else {
                cursor
            };
            let next_version = groups
                .get(next_position)
                .filter(|next| next.key == read.key && Some(next.seq) == read.seq.checked_add(1));
            if let Some(next) = next_version {
                for overwriter in next.writers(&ops.known_writes) {
                    push_edge(edges, read.reader, overwriter, EdgeKinds::RW);
                }
            }
        } else if read.writer != INITIAL_WRITER_NODE
            && ops
                .blind_writes
                .binary_search(&BlindWriteRecord {
                    key: read.key,
                    writer: read.writer,
                })
                .is_ok()
        {
            push_edge(edges, read.writer, read.reader, EdgeKinds::WR);
        } else {
            anomalies.record(UNKNOWN_VERSION, || {
                let version = Version {
                    writer: txns.id(read.writer),
                    seq: read.seq,
                };
                describe_read(
                    txns.id(read.reader),
                    read.key,
                    version,
                    "its writer wrote no such version",
                )
            });
        }
    }
}

/// The deduplicated dependencies in compressed sparse row form: the edges leaving node `n` are
/// `targets[offsets[n]..offsets[n + 1]]`, with their kinds at the same positions in `kinds`.
struct DependencyGraph {
    offsets: Vec<usize>,
    targets: Vec<Node>,
    kinds: Vec<EdgeKinds>,
}

impl DependencyGraph {
    /// Deduplicates the edges (merging their kinds) over `nodes` transactions.
    fn build(nodes: usize, mut edges: Vec<Edge>) -> DependencyGraph {
        edges.sort_unstable_by_key(|&(from, to, _)| (from, to));
        let mut graph = DependencyGraph {
            offsets: vec![0; nodes + 1],
            targets: Vec::with_capacity(edges.len()),
            kinds: Vec::with_capacity(edges.len()),
        };
        let mut last: Option<(Node, Node)> = None;
        for (from, to, kind) in edges {
            if last == Some((from, to)) {
                let merged = graph.kinds.last_mut().expect("a previous edge exists");
                merged.0 |= kind.0;
                continue;
            }
            last = Some((from, to));
            graph.offsets[from as usize + 1] += 1;
            graph.targets.push(to);
            graph.kinds.push(kind);
        }
        for node in 0..nodes {
            graph.offsets[node + 1] += graph.offsets[node];
        }
        graph
    }

    fn successors(&self, node: Node) -> impl Iterator<Item = (Node, EdgeKinds)> + '_ {
        let range = self.offsets[node as usize]..self.offsets[node as usize + 1];
        self.targets[range.clone()]
            .iter()
            .copied()
            .zip(self.kinds[range].iter().copied())
    }

    /// Nodes that remain after repeatedly removing nodes without incoming edges (Kahn's
    /// topological sort). Every cycle lies among them; for an acyclic graph there are none.
    fn cyclic_core(&self) -> Vec<Node> {
        let nodes = self.offsets.len() - 1;
        let mut in_degree = vec![0u32; nodes];
        for &target in &self.targets {
            in_degree[target as usize] += 1;
        }
        let mut ready: Vec<Node> = (0..nodes as Node)
            .filter(|&n| in_degree[n as usize] == 0)
            .collect();
        while let Some(node) = ready.pop() {
            for (target, _) in self.successors(node) {
                in_degree[target as usize] -= 1;
                if in_degree[target as usize] == 0 {
                    ready.push(target);
                }
            }
        }
        (0..nodes as Node)
            .filter(|&n| in_degree[n as usize] > 0)
            .collect()
    }
}

/// Counts the strongly connected components with more than one node and describes a few.
///
/// Only the cyclic core goes into a petgraph graph, so a serializable history costs no more
/// than a topological sort.
fn find_cycles(dependencies: &DependencyGraph, txns: &TxnIndex) -> (u64, Vec<String>) {
    let core = dependencies.cyclic_core();
    if core.is_empty() {
        return (0, Vec::new());
    }
    let mut core_index = vec![Node::MAX; dependencies.offsets.len() - 1];
    let mut graph: DiGraph<Node, EdgeKinds, u32> = DiGraph::with_capacity(core.len(), 0);
    for &node in &core {
        core_index[node as usize] = graph.add_node(node).index() as Node;
    }
    for &node in &core {
        for (target, kinds) in dependencies.successors(node) {
            let target_index = core_index[target as usize];
            if target_index != Node::MAX {
                let from = NodeIndex::new(core_index[node as usize] as usize);
                graph.add_edge(from, NodeIndex::new(target_index as usize), kinds);
            }
        }
    }

    let mut cycles = 0;
    let mut examples = Vec::new();
    for component in petgraph::algo::kosaraju_scc(&graph) {
        if component.len() < 2 {
            continue;
        }
        cycles += 1;
        if examples.len() < MAX_EXAMPLES {
            examples.push(describe_cycle(&graph, &component, txns));
        }
    }
    (cycles, examples)
}

/// Describes a shortest cycle through the component's smallest node, found by BFS inside it.
/// Node weights are the transactions' nodes in the [`TxnIndex`].
fn describe_cycle(
    graph: &DiGraph<Node, EdgeKinds, u32>,
    component: &[NodeIndex],
    txns: &TxnIndex,
) -> String {
    let members: HashSet<NodeIndex> = component.iter().copied().collect();
    let start = *component.iter().min().expect("components are not empty");
    let mut parent: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    let mut closing = None;
    'search: while let Some(node) = queue.pop_front() {
        for next in graph.neighbors(node) {
            if next == start {
                closing = Some(node);
                break 'search;
            }
            if members.contains(&next) && !parent.contains_key(&next) {
                parent.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    let Some(last) = closing else {
        return format!("cycle among {} txns (no path found)", component.len());
    };
    let mut path = vec![last];
    while let Some(&previous) = path.last().and_then(|node| parent.get(node)) {
        path.push(previous);
    }
    path.reverse(); // start, ..., last
    path.push(start);

    let txn_id = |index: NodeIndex| txns.id(graph[index]);
    let mut text = format!(
        "cycle among {} txns: txn {}",
        component.len(),
        txn_id(start)
    );
    for (shown, pair) in path.windows(2).enumerate() {
        if shown == MAX_CYCLE_TXNS_SHOWN {
            text.push_str(&format!(" ... ({} edges in all)", path.len() - 1));
            break;
        }
        let kinds = graph
            .find_edge(pair[0], pair[1])
            .map(|edge| graph[edge])
            .unwrap_or_default();
        text.push_str(&format!(" -{kinds}-> txn {}", txn_id(pair[1])));
    }
    text
}

fn describe_key(key: u64) -> String {
    format!("{}/{}", key >> 48, key & ((1 << 48) - 1))
}

fn describe_read(reader: u64, key: u64, version: Version, why: &str) -> String {
    format!(
        "txn {reader} read key {} version (writer {}, seq {}), but {why}",
        describe_key(key),
        version.writer,
        version.seq
    )
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
