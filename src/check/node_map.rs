//! Transaction ids to graph nodes, looked up once for every recorded read.
//!
//! Ids are [`txn_id`](super::history::txn_id)`(worker, attempt)`: under one worker tag the
//! attempt numbers count up densely (aborted attempts leave gaps), so each worker's ids map
//! through a direct table indexed by attempt number: one load of 4 bytes per lookup instead of a
//! hash probe into a table many times larger (the probes were a fifth of a large check's time).
//! Ids of any other shape (hand-written histories in tests, a worker whose committed ids are too
//! sparse for a table) go to a hash map.

use std::collections::HashMap;

use super::graph::Node;
use super::history::worker_tag;

/// No node: an empty slot of a direct table.
const NONE: Node = Node::MAX;

/// Most worker tags given direct tables (tags are worker ids + 1).
const MAX_TAGS: u64 = 1 << 16;

/// A table is used when it has at most this many slots per id it holds (plus a little).
const MAX_SLOTS_PER_ID: u64 = 8;

/// The attempt part of an id.
fn attempt(id: u64) -> u64 {
    id & ((1 << 40) - 1)
}

/// One worker's ids: node of attempt `first + i` at `nodes[i]`.
#[derive(Default)]
struct Table {
    first: u64,
    nodes: Vec<Node>,
}

/// Maps transaction ids to nodes (see the module docs).
pub(super) struct NodeMap {
    tables: Vec<Table>,
    other: HashMap<u64, Node>,
}

impl NodeMap {
    /// A map shaped for `ids` (which it does not insert).
    pub(super) fn for_ids(ids: impl Iterator<Item = u64>) -> NodeMap {
        // Per tag: lowest attempt, highest attempt, count.
        let mut spans: Vec<(u64, u64, u64)> = Vec::new();
        for id in ids {
            let tag = worker_tag(id);
            if tag >= MAX_TAGS {
                continue;
            }
            if spans.len() <= tag as usize {
                spans.resize(tag as usize + 1, (u64::MAX, 0, 0));
            }
            let span = &mut spans[tag as usize];
            span.0 = span.0.min(attempt(id));
            span.1 = span.1.max(attempt(id));
            span.2 += 1;
        }
        let tables = spans
            .into_iter()
            .map(|(low, high, count)| {
                if count == 0 || high - low >= MAX_SLOTS_PER_ID * count + 64 {
                    return Table::default(); // empty or too sparse: hashed
                }
                Table {
                    first: low,
                    nodes: vec![NONE; (high - low + 1) as usize],
                }
            })
            .collect();
        NodeMap {
            tables,
            other: HashMap::new(),
        }
    }

    /// The slot of `id` in a direct table, if it has one.
    #[inline]
    fn slot(&self, id: u64) -> Option<usize> {
        let table = self.tables.get(worker_tag(id) as usize)?;
        let i = attempt(id).checked_sub(table.first)?;
        (i < table.nodes.len() as u64).then_some(i as usize)
    }

    /// Maps `id` to `node` unless it is mapped already; returns the node it maps to.
    pub(super) fn insert(&mut self, id: u64, node: Node) -> Node {
        match self.slot(id) {
            Some(i) => {
                let table = &mut self.tables[worker_tag(id) as usize];
                if table.nodes[i] == NONE {
                    table.nodes[i] = node;
                }
                table.nodes[i]
            }
            None => *self.other.entry(id).or_insert(node),
        }
    }

    /// The node of `id`, if it was inserted.
    #[inline]
    pub(super) fn get(&self, id: u64) -> Option<Node> {
        match self.slot(id) {
            Some(i) => {
                let node = self.tables[worker_tag(id) as usize].nodes[i];
                (node != NONE).then_some(node)
            }
            None => self.other.get(&id).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::history::txn_id;

    #[test]
    fn dense_sparse_and_foreign_ids_map_alike() {
        let dense: Vec<u64> = (1..1000).step_by(2).map(|a| txn_id(0, a)).collect();
        let sparse = [txn_id(1, 5), txn_id(1, 1 << 30)];
        let foreign = [7u64, 999, u64::MAX];
        let all: Vec<u64> = dense
            .iter()
            .chain(&sparse)
            .chain(&foreign)
            .copied()
            .collect();
        let mut map = NodeMap::for_ids(all.iter().copied());
        assert!(!map.tables[1].nodes.is_empty(), "worker 0 is dense");
        assert!(map.tables[2].nodes.is_empty(), "worker 1 is too sparse");
        for (node, &id) in all.iter().enumerate() {
            assert_eq!(map.insert(id, node as Node), node as Node);
        }
        assert_eq!(map.insert(all[3], 12345), 3, "the first node stays");
        for (node, &id) in all.iter().enumerate() {
            assert_eq!(map.get(id), Some(node as Node), "id {id:#x}");
        }
        assert_eq!(map.get(txn_id(0, 2)), None, "a gap");
        assert_eq!(map.get(txn_id(0, 5000)), None, "past the table");
        assert_eq!(map.get(txn_id(9, 1)), None, "an unknown worker");
        assert_eq!(map.get(8), None);
    }
}
