//! Tests of the serializability checker (split from graph.rs to keep that file one idea).
use super::*;
use crate::check::history::HistOp;

fn version(writer: u64, seq: u64) -> Version {
    Version { writer, seq }
}

/// A read of `key` written by `writer` (reads name writers; `_seq` documents the version).
fn read(key: u64, writer: u64, _seq: u64) -> HistOp {
    HistOp::read(key, writer)
}

/// A write of `key`'s version `seq` by `_writer` (the transaction it is in).
fn write(key: u64, _writer: u64, seq: u64) -> HistOp {
    HistOp::write(key, seq)
}

fn history(txns: &[(u64, &[HistOp])]) -> WorkerHistory {
    let mut history = WorkerHistory::default();
    for (id, ops) in txns {
        history.commit(*id, ops);
    }
    history
}

fn assert_clean(report: &CheckReport) {
    assert_eq!(report.cycles, 0, "{report:?}");
    assert_eq!(report.anomalies, 0, "{report:?}");
    assert!(report.anomaly_counts.is_empty(), "{report:?}");
    assert!(report.is_serializable());
}

fn count(report: &CheckReport, kind: &str) -> u64 {
    report.anomaly_counts.get(kind).copied().unwrap_or(0)
}

#[test]
fn serial_history_is_serializable() {
    let report = check(&[history(&[
        (1, &[read(1, 0, 0), write(1, 1, 1)]),
        (2, &[read(1, 1, 1), write(1, 2, 2)]),
    ])]);
    assert_eq!(report.transactions, 2);
    assert_clean(&report);
    assert!(report.examples.is_empty());
}

#[test]
fn lost_update_is_a_cycle_and_an_anomaly() {
    let report = check(&[history(&[
        (1, &[read(1, 0, 0), write(1, 1, 1)]),
        (2, &[read(1, 0, 0), write(1, 2, 1)]),
    ])]);
    assert!(report.cycles >= 1, "{report:?}");
    assert_eq!(count(&report, LOST_UPDATE), 1);
    assert_eq!(report.anomalies, 1);
    assert!(!report.is_serializable());
    assert!(
        report.examples.iter().any(|e| e.contains("rw")),
        "{:?}",
        report.examples
    );
    assert!(
        report.examples.iter().any(|e| e.starts_with(LOST_UPDATE)),
        "{:?}",
        report.examples
    );
}

#[test]
fn write_skew_is_one_cycle_without_anomalies() {
    let (x, y) = (1, 2);
    let report = check(&[history(&[
        (1, &[read(x, 0, 0), read(y, 0, 0), write(y, 1, 1)]),
        (2, &[read(y, 0, 0), read(x, 0, 0), write(x, 2, 1)]),
    ])]);
    assert_eq!(report.cycles, 1, "{report:?}");
    assert_eq!(report.anomalies, 0, "{report:?}");
    assert_eq!(report.examples.len(), 1);
    let example = &report.examples[0];
    assert!(
        example.contains("txn 1 -rw-> txn 2 -rw-> txn 1"),
        "{example}"
    );
}

#[test]
fn read_of_uncommitted_writer_is_aborted_read() {
    let report = check(&[history(&[(1, &[read(5, 999, 1)])])]);
    assert_eq!(count(&report, ABORTED_READ), 1, "{report:?}");
    assert_eq!(report.anomalies, 1);
    assert_eq!(report.cycles, 0);
    assert!(report.examples[0].contains("999"), "{:?}", report.examples);
}

#[test]
fn read_of_unwritten_version_is_unknown_version() {
    let report = check(&[history(&[
        (1, &[read(1, 0, 0), write(1, 1, 1)]),
        (2, &[read(1, 1, 1)]),
        (3, &[read(2, 1, 1)]), // txn 1 never wrote key 2
    ])]);
    assert_eq!(count(&report, UNKNOWN_VERSION), 1, "{report:?}");
    assert_eq!(report.anomalies, 1);
}

#[test]
fn torn_and_uninstalled_reads_are_anomalies_of_committed_readers() {
    let report = check(&[history(&[
        (1, &[write(1, 1, 1)]),
        (2, &[HistOp::torn_read(1, 1)]),
        (3, &[HistOp::uninstalled_read(1, 1)]),
        (4, &[HistOp::uninstalled_read(1, 999)]), // and never committed: aborted
    ])]);
    assert_eq!(count(&report, TORN_READ), 1, "{report:?}");
    assert_eq!(count(&report, INTERMEDIATE_READ), 1, "{report:?}");
    assert_eq!(count(&report, ABORTED_READ), 1, "{report:?}");
    assert_eq!(report.anomalies, 3);
}

/// Reads of exposed, not yet installed writes (in-place writes) are intermediate reads, and the
/// information still flows: two transactions that each read the other's exposed write form a
/// G1c cycle (without the `wr` edges of such reads, circular information flow through
/// uncommitted data would go unseen).
#[test]
fn uninstalled_reads_still_depend_on_their_writers() {
    let (x, y) = (1, 2);
    let report = check(&[history(&[
        (1, &[write(x, 1, 1), HistOp::uninstalled_read(y, 2)]),
        (2, &[write(y, 2, 1), HistOp::uninstalled_read(x, 1)]),
    ])]);
    assert_eq!(count(&report, INTERMEDIATE_READ), 2, "{report:?}");
    assert_eq!(report.cycles, 1, "{report:?}");
    assert_eq!(report.count("G1c"), 1, "{report:?}");
    // The reader is anti-dependent on the writer of the next version (read skew: 3 saw 1's x
    // but 2's y, and 2 overwrote 1's x).
    let skew = check(&[history(&[
        (1, &[write(x, 1, 1)]),
        (2, &[write(x, 2, 2), write(y, 2, 1)]),
        (3, &[HistOp::uninstalled_read(x, 1), read(y, 2, 1)]),
    ])]);
    assert_eq!(skew.cycles, 1, "{skew:?}");
    assert_eq!(skew.count("G-single"), 1, "{skew:?}");
}

#[test]
fn cycles_are_classified_by_the_strongest_phenomenon() {
    let (x, y) = (1, 2);
    let class = |report: &CheckReport| {
        assert_eq!(report.cycles, 1, "{report:?}");
        report
            .cycle_kinds
            .keys()
            .next()
            .cloned()
            .unwrap_or_default()
    };
    // Dirty write: x ordered 1 before 2, y ordered 2 before 1.
    let g0 = check(&[history(&[
        (1, &[write(x, 1, 1), write(y, 1, 2)]),
        (2, &[write(x, 2, 2), write(y, 2, 1)]),
    ])]);
    assert_eq!(class(&g0), "G0");
    assert!(g0.examples[0].starts_with("G0 "), "{:?}", g0.examples);
    // Circular information flow: each reads what the other wrote.
    let g1c = check(&[history(&[
        (1, &[write(x, 1, 1), read(y, 2, 1)]),
        (2, &[write(y, 2, 1), read(x, 1, 1)]),
    ])]);
    assert_eq!(class(&g1c), "G1c");
    // Read skew: 1 reads the old x and the new y that 2 wrote with x.
    let g_single = check(&[history(&[
        (1, &[read(x, 0, 0), read(y, 2, 1)]),
        (2, &[write(x, 2, 1), write(y, 2, 1)]),
    ])]);
    assert_eq!(class(&g_single), "G-single");
    // Write skew.
    let g2 = check(&[history(&[
        (1, &[read(x, 0, 0), read(y, 0, 0), write(y, 1, 1)]),
        (2, &[read(y, 0, 0), read(x, 0, 0), write(x, 2, 1)]),
    ])]);
    assert_eq!(class(&g2), "G2-item");
    assert_eq!(g2.count("G2-item"), 1);
}

#[test]
fn reads_of_unrecorded_writers_are_unresolved_not_aborted() {
    use crate::check::history::txn_id;
    // Worker 0 recorded one transaction and stopped at its attempt 2; worker 1 read a version
    // that worker 0's attempt 3 wrote after recording stopped.
    let mut stopped = WorkerHistory::with_budget(1);
    assert!(stopped.commit(txn_id(0, 1), &[write(1, 0, 1)]));
    assert!(!stopped.commit(txn_id(0, 2), &[write(1, 0, 2)]));
    let mut reader = WorkerHistory::default();
    reader.commit(txn_id(1, 1), &[read(1, txn_id(0, 3), 3)]);
    reader.commit(txn_id(1, 2), &[read(2, txn_id(2, 1), 1)]); // worker 2 never stopped
    let report = check(&[stopped, reader]);
    assert_eq!(report.workers_truncated, 1);
    assert_eq!(report.unresolved_reads, 1, "{report:?}");
    assert_eq!(count(&report, ABORTED_READ), 1, "{report:?}");
}

#[test]
fn duplicate_and_reserved_ids_are_anomalies() {
    let report = check(&[
        history(&[(1, &[read(1, 0, 0)]), (0, &[read(1, 0, 0)])]),
        history(&[(1, &[read(2, 0, 0)])]),
    ]);
    assert_eq!(report.transactions, 3);
    assert_eq!(count(&report, DUPLICATE_TXN_ID), 1, "{report:?}");
    assert_eq!(count(&report, RESERVED_TXN_ID), 1, "{report:?}");
}

#[test]
fn workers_are_merged() {
    // The serial history split across two workers: reads resolve writers in the other one.
    let serial = check(&[
        history(&[(1, &[read(1, 0, 0), write(1, 1, 1)]), (3, &[read(1, 2, 2)])]),
        history(&[(2, &[read(1, 1, 1), write(1, 2, 2)])]),
    ]);
    assert_eq!(serial.transactions, 3);
    assert_clean(&serial);

    // Write skew split across two workers is still one cycle.
    let (x, y) = (1, 2);
    let skew = check(&[
        history(&[(1, &[read(x, 0, 0), read(y, 0, 0), write(y, 1, 1)])]),
        history(&[(2, &[read(y, 0, 0), read(x, 0, 0), write(x, 2, 1)])]),
    ]);
    assert_eq!(skew.cycles, 1, "{skew:?}");
    assert_eq!(skew.anomalies, 0, "{skew:?}");
}

#[test]
fn unordered_writes_are_anomalies_with_wr_edges() {
    let unknown = Version::UNKNOWN_SEQ;
    // Txn 1 writes x, which txn 2 reads; txn 2 writes y, which txn 1 reads; no install known.
    let cycle = check(&[history(&[
        (1, &[write(1, 1, unknown), read(2, 2, unknown)]),
        (2, &[read(1, 1, unknown), write(2, 2, unknown)]),
    ])]);
    assert_eq!(count(&cycle, UNORDERED_WRITE), 2, "{cycle:?}");
    assert_eq!(cycle.cycles, 1, "{cycle:?}");
    assert!(
        cycle.examples.iter().any(|e| e.contains("-wr->")),
        "{:?}",
        cycle.examples
    );
}

#[test]
fn blind_writes_are_ordered_by_their_installs() {
    // Two blind writers of x and y in opposite install orders: a ww cycle, which blind writes
    // with unknown seqs could never show.
    let (x, y) = (1, 2);
    let report = check(&[history(&[
        (1, &[write(x, 1, 1), write(y, 1, 2)]),
        (2, &[write(x, 2, 2), write(y, 2, 1)]),
    ])]);
    assert_eq!(report.cycles, 1, "{report:?}");
    // A reader of the first blind write gets an rw edge to the second.
    let chain = check(&[history(&[
        (1, &[write(x, 1, 1)]),
        (3, &[read(x, 1, 1)]),
        (2, &[write(x, 2, 2)]),
    ])]);
    assert_clean(&chain);
}

#[test]
fn reading_own_writes_is_not_a_conflict() {
    let report = check(&[history(&[(
        1,
        &[read(1, 0, 0), write(1, 1, 1), read(1, 1, 1)],
    )])]);
    assert_clean(&report);
}

/// Txn 1 and txn 2 both overwrite key 1's seq 0 (a lost update), then txns 3..=n form a chain
/// of read-modify-writes after txn 2.
fn lost_update_then_chain(n: u64) -> WorkerHistory {
    let mut history = WorkerHistory::default();
    history.commit(1, &[read(1, 0, 0), write(1, 1, 1)]);
    history.commit(2, &[read(1, 0, 0), write(1, 2, 1)]);
    history.commit(3, &[read(1, 2, 1), write(1, 3, 2)]);
    for id in 4..=n {
        history.commit(id, &[read(1, id - 1, id - 2), write(1, id, id - 1)]);
    }
    history
}

#[test]
fn long_chains_do_not_overflow_the_stack() {
    // Acyclic: removed entirely by the topological peel.
    let mut serial = WorkerHistory::default();
    for id in 1..=300_000u64 {
        serial.commit(id, &[read(1, id - 1, id - 1), write(1, id, id)]);
    }
    let report = check(&[serial]);
    assert_eq!(report.transactions, 300_000);
    assert_clean(&report);

    // Downstream of a cycle: the whole chain reaches the strongly connected components pass.
    let report = check(&[lost_update_then_chain(300_000)]);
    assert_eq!(report.transactions, 300_000);
    assert_eq!(report.cycles, 1, "{report:?}");
    assert_eq!(count(&report, LOST_UPDATE), 1, "{report:?}");
}

/// xorshift64*: deterministic randomness without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound
    }
}

/// Transactions (id, ops) executed one at a time over `keys` keys: reads, read-modify-writes,
/// and re-reads of the transaction's own writes.
fn serial_transactions(
    txns: u64,
    keys: u64,
    ops_per_txn: u64,
    seed: u64,
) -> Vec<(u64, Vec<HistOp>)> {
    let mut rng = Rng(seed);
    let mut current = vec![version(0, 0); keys as usize];
    let mut result = Vec::with_capacity(txns as usize);
    for id in 1..=txns {
        let mut ops = Vec::new();
        let mut touched = Vec::new();
        for _ in 0..ops_per_txn {
            let key = rng.below(keys);
            if touched.contains(&key) {
                continue; // at most one access per key and transaction
            }
            touched.push(key);
            let seen = current[key as usize];
            ops.push(read(key, seen.writer, seen.seq));
            if rng.below(2) == 0 {
                let new = version(id, seen.seq + 1);
                ops.push(write(key, new.writer, new.seq));
                current[key as usize] = new;
                if rng.below(4) == 0 {
                    ops.push(read(key, new.writer, new.seq));
                }
            }
        }
        result.push((id, ops));
    }
    result
}

fn spread(txns: &[(u64, Vec<HistOp>)], workers: usize) -> Vec<WorkerHistory> {
    let mut histories = vec![WorkerHistory::default(); workers];
    for (position, (id, ops)) in txns.iter().enumerate() {
        histories[position % workers].commit(*id, ops);
    }
    histories
}

/// The writer of `key`'s version `seq` in a history from `serial_transactions`.
fn writer_of(txns: &[(u64, Vec<HistOp>)], key: u64, seq: u64) -> u64 {
    if seq == 0 {
        return Version::INITIAL_WRITER;
    }
    txns.iter()
        .find_map(|(id, ops)| {
            ops.iter()
                .any(|op| op.kind() == OpKind::Write && op.key() == key && op.word() == seq)
                .then_some(*id)
        })
        .expect("every seq was written")
}

#[test]
fn random_serial_history_is_serializable_until_corrupted() {
    let mut txns = serial_transactions(10_000, 50, 4, 0x5eed);
    let report = check(&spread(&txns, 4));
    assert_eq!(report.transactions, 10_000);
    assert_clean(&report);

    // Make one read-modify-write read the version before the one it overwrote.
    let (txn, op, overwritten_seq) = txns
        .iter()
        .enumerate()
        .find_map(|(txn, (_, ops))| {
            ops.windows(2)
                .position(|pair| {
                    pair[0].kind() == OpKind::Read
                        && pair[1].kind() == OpKind::Write
                        && pair[0].key() == pair[1].key()
                        && pair[1].word() >= 3
                })
                .map(|op| (txn, op, ops[op + 1].word() - 1))
        })
        .expect("some read-modify-write overwrote seq 2 or later");
    let key = txns[txn].1[op].key();
    let older = writer_of(&txns, key, overwritten_seq - 1);
    txns[txn].1[op] = HistOp::read(key, older);

    let report = check(&spread(&txns, 4));
    assert!(!report.is_serializable(), "{report:?}");
    assert!(report.cycles >= 1, "{report:?}");
}

/// Run with `cargo test --release -- --ignored --nocapture` to time a large check.
#[test]
#[ignore = "timing run"]
fn million_transactions_time() {
    let txns = serial_transactions(1_000_000, 100_000, 5, 7);
    let histories = spread(&txns, 16);
    let ops: usize = txns.iter().map(|(_, ops)| ops.len()).sum();
    let started = std::time::Instant::now();
    let report = check(&histories);
    println!(
        "serial: {} txns, {ops} ops in {:?}",
        report.transactions,
        started.elapsed()
    );
    assert_clean(&report);

    let cyclic = lost_update_then_chain(1_000_000);
    let started = std::time::Instant::now();
    let report = check(&[cyclic]);
    println!(
        "cyclic core of {} txns in {:?}",
        report.transactions,
        started.elapsed()
    );
    assert_eq!(report.cycles, 1);
}

/// The progress a terminal shows: every phase in order, each with a larger share done.
#[test]
fn progress_announces_each_phase_with_a_growing_percentage() {
    let h = history(&[(1, &[write(1, 1, 1)]), (2, &[read(1, 1, 1)])]);
    let mut lines = Vec::new();
    let report = check_with_progress(&[h], &mut |p| lines.push(p.to_string()));
    assert!(report.is_serializable());
    assert_eq!(lines.len(), 5, "{lines:?}");
    let percents: Vec<u32> = lines
        .iter()
        .map(|l| l.trim_start().split('%').next().unwrap().parse().unwrap())
        .collect();
    assert!(percents.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
    assert!(lines[4].ends_with("finding cycles"), "{lines:?}");
}
