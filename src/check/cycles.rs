//! Cycles of the dependency graph: the graph in compressed sparse row form, its strongly
//! connected components, and each cyclic component's class among Adya's phenomena.
//!
//! # Classes
//!
//! A component with more than one transaction holds at least one cycle. It is classified by the
//! strongest phenomenon among its cycles (Adya, Liskov and O'Neil, "Generalized isolation level
//! definitions", 2000):
//!
//! * `G0`: a cycle of write-write edges only (dirty write);
//! * `G1c`: a cycle of write-write and write-read edges (circular information flow);
//! * `G-single`: a cycle with exactly one read-write anti-dependency (read skew);
//! * `G2-item`: any other cycle, with two or more anti-dependencies (write skew; a phantom through
//!   a scan's records shows here too, because scans read records, see `txn/index_ops.rs`).
//!
//! An edge merges every kind of dependency between its two transactions, so it counts as a
//! write-write edge if any of its dependencies is one. `G-single` is decided by searching, from
//! the head of each anti-dependency, for a path of dependency edges back to its tail; on very
//! large components the search has a step budget, past which the component counts as `G2-item`.
//!
//! # Cost
//!
//! A topological peel (Kahn) first removes every node not downstream of a cycle, so a
//! serializable history never builds a petgraph graph. The rest goes to
//! [`petgraph::algo::kosaraju_scc`], which keeps its DFS stack on the heap: petgraph's
//! `tarjan_scc` recurses once per node on a path, and overflows the stack on the long chains that
//! histories are.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;

use petgraph::graph::{DiGraph, NodeIndex};

use super::graph::{MAX_EXAMPLES, Node};

/// Most transactions an example cycle lists.
const MAX_CYCLE_TXNS_SHOWN: usize = 6;

/// Most search steps spent deciding `G-single` for one component.
const G_SINGLE_SEARCH_STEPS: usize = 4_000_000;

/// Kinds of dependency between two transactions, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct EdgeKinds(u8);

impl EdgeKinds {
    pub(super) const WR: EdgeKinds = EdgeKinds(1);
    pub(super) const WW: EdgeKinds = EdgeKinds(2);
    pub(super) const RW: EdgeKinds = EdgeKinds(4);

    fn has(self, kind: EdgeKinds) -> bool {
        self.0 & kind.0 != 0
    }

    /// Whether the edge is a dependency (write-write or write-read), not only an
    /// anti-dependency.
    fn is_dependency(self) -> bool {
        self.has(Self::WW) || self.has(Self::WR)
    }
}

impl fmt::Display for EdgeKinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [(Self::WR, "wr"), (Self::WW, "ww"), (Self::RW, "rw")];
        let mut first = true;
        for (kind, name) in names {
            if self.has(kind) {
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
pub(super) type Edge = (Node, Node, EdgeKinds);

/// What [`find_cycles`] found.
pub(super) struct Cycles {
    /// Components with more than one transaction.
    pub count: u64,
    /// Components per class.
    pub kinds: BTreeMap<String, u64>,
    /// A few described.
    pub examples: Vec<String>,
}

/// The deduplicated dependencies in compressed sparse row form: the edges leaving node `n` are
/// `targets[offsets[n]..offsets[n + 1]]`, with their kinds at the same positions in `kinds`.
pub(super) struct DependencyGraph {
    offsets: Vec<usize>,
    targets: Vec<Node>,
    kinds: Vec<EdgeKinds>,
}

impl DependencyGraph {
    /// Deduplicates the edges (merging their kinds) over `nodes` transactions.
    pub(super) fn build(nodes: usize, edges: Vec<Edge>) -> DependencyGraph {
        // Bucket the edges by source (a counting sort, linear), then sort and merge each node's
        // few targets: much cheaper than sorting all edges at once.
        let mut offsets = vec![0usize; nodes + 1];
        for &(from, _, _) in &edges {
            offsets[from as usize + 1] += 1;
        }
        for node in 0..nodes {
            offsets[node + 1] += offsets[node];
        }
        let mut bucketed = vec![(0 as Node, EdgeKinds::default()); edges.len()];
        let mut next = offsets.clone();
        for (from, to, kind) in edges {
            bucketed[next[from as usize]] = (to, kind);
            next[from as usize] += 1;
        }
        drop(next);
        let mut graph = DependencyGraph {
            offsets: vec![0; nodes + 1],
            targets: Vec::with_capacity(bucketed.len()),
            kinds: Vec::with_capacity(bucketed.len()),
        };
        for node in 0..nodes {
            let out = &mut bucketed[offsets[node]..offsets[node + 1]];
            out.sort_unstable_by_key(|&(to, _)| to);
            let first = graph.targets.len();
            for &(to, kind) in out.iter() {
                if graph.targets.len() > first && graph.targets.last() == Some(&to) {
                    let merged = graph.kinds.last_mut().expect("a previous edge exists");
                    merged.0 |= kind.0;
                } else {
                    graph.targets.push(to);
                    graph.kinds.push(kind);
                }
            }
            graph.offsets[node + 1] = graph.targets.len();
        }
        graph
    }

    pub(super) fn successors(&self, node: Node) -> impl Iterator<Item = (Node, EdgeKinds)> + '_ {
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

/// Counts the strongly connected components with more than one node, classifies them and
/// describes a few. `txn_id` names a node's transaction.
///
/// Only the cyclic core goes into a petgraph graph, so a serializable history costs no more
/// than a topological sort.
pub(super) fn find_cycles(dependencies: &DependencyGraph, txn_id: &dyn Fn(Node) -> u64) -> Cycles {
    let mut found = Cycles {
        count: 0,
        kinds: BTreeMap::new(),
        examples: Vec::new(),
    };
    let core = dependencies.cyclic_core();
    if core.is_empty() {
        return found;
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

    for component in petgraph::algo::kosaraju_scc(&graph) {
        if component.len() < 2 {
            continue;
        }
        found.count += 1;
        let class = classify(&graph, &component);
        *found.kinds.entry(class.to_owned()).or_default() += 1;
        if found.examples.len() < MAX_EXAMPLES {
            let text = describe_cycle(&graph, &component, txn_id);
            found.examples.push(format!("{class} {text}"));
        }
    }
    found
}

/// The class of a strongly connected component (module docs).
fn classify(graph: &DiGraph<Node, EdgeKinds, u32>, component: &[NodeIndex]) -> &'static str {
    let local: HashMap<NodeIndex, u32> = component
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, i as u32))
        .collect();
    let mut edges: Vec<(u32, u32, EdgeKinds)> = Vec::new();
    for &node in component {
        for edge in graph.edges(node) {
            use petgraph::visit::EdgeRef;
            if let Some(&to) = local.get(&edge.target()) {
                edges.push((local[&node], to, *edge.weight()));
            }
        }
    }
    let has_cycle = |keep: &dyn Fn(EdgeKinds) -> bool| {
        let mut sub: DiGraph<(), (), u32> = DiGraph::with_capacity(component.len(), edges.len());
        for _ in component {
            sub.add_node(());
        }
        for &(from, to, kinds) in &edges {
            if keep(kinds) {
                sub.add_edge(
                    NodeIndex::new(from as usize),
                    NodeIndex::new(to as usize),
                    (),
                );
            }
        }
        petgraph::algo::kosaraju_scc(&sub)
            .iter()
            .any(|scc| scc.len() > 1)
    };
    if has_cycle(&|k| k.has(EdgeKinds::WW)) {
        return "G0";
    }
    if has_cycle(&|k| k.is_dependency()) {
        return "G1c";
    }
    // No cycle of dependencies: a cycle with one anti-dependency `u -rw-> v` is a dependency
    // path from `v` back to `u`.
    let mut dependency_successors: Vec<Vec<u32>> = vec![Vec::new(); component.len()];
    for &(from, to, kinds) in &edges {
        if kinds.is_dependency() {
            dependency_successors[from as usize].push(to);
        }
    }
    let mut steps = 0usize;
    for &(from, to, kinds) in &edges {
        if kinds.is_dependency() || !kinds.has(EdgeKinds::RW) {
            continue;
        }
        let mut seen: HashSet<u32> = HashSet::from([to]);
        let mut queue = VecDeque::from([to]);
        while let Some(node) = queue.pop_front() {
            if node == from {
                return "G-single";
            }
            for &next in &dependency_successors[node as usize] {
                steps += 1;
                if seen.insert(next) {
                    queue.push_back(next);
                }
            }
            if steps > G_SINGLE_SEARCH_STEPS {
                return "G2-item";
            }
        }
    }
    "G2-item"
}

/// Describes a shortest cycle through the component's smallest node, found by BFS inside it.
/// Node weights are the transactions' nodes; `txn_id` names them.
fn describe_cycle(
    graph: &DiGraph<Node, EdgeKinds, u32>,
    component: &[NodeIndex],
    txn_id: &dyn Fn(Node) -> u64,
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

    let txn_id = |index: NodeIndex| txn_id(graph[index]);
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
