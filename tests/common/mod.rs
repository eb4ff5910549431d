//! Shared helpers for integration tests: run a protocol under high contention in check mode and
//! judge the result.

#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;
use txbench::check::history::{OpKind, WorkerHistory};
use txbench::check::{CheckReport, check};
use txbench::exec::{ExecConfig, run_threads};
use txbench::protocol::Protocol;
use txbench::storage::stamp::Stamp;
use txbench::storage::{Database, RecordId};
use txbench::workload::Workload;
use txbench::workload::ycsb::{TABLE, Ycsb, YcsbConfig};

/// The high-contention workload: 64 records, theta 0.99, 50% RMW, 8 ops per transaction.
pub fn contended_ycsb() -> YcsbConfig {
    YcsbConfig {
        records: 64,
        payload: 16,
        ops: 8,
        long_ops: 8,
        long_share: 0.0,
        read_ratio: 0.5,
        writes: None,
        rmw: true,
        theta: 0.99,
        ..YcsbConfig::default()
    }
}

/// Executor settings for a short checked run with `threads` workers (more than the 2 cores).
pub fn checked_exec(threads: usize, millis: u64) -> ExecConfig {
    ExecConfig {
        threads,
        duration: Duration::from_millis(millis),
        warmup: Duration::ZERO,
        seed: 7,
        record_history: true,
        check_limit_ops: u64::MAX,
        adaptive_backoff: false,
        read_phase_extension_ns: 0,
        pin_threads: false,
        core_slice: std::time::Duration::ZERO,
        core_seats: false,
    }
}

/// What a checked run produced.
pub struct Checked {
    /// The serializability checker's verdict.
    pub report: CheckReport,
    /// Committed transactions, all workers.
    pub committed: usize,
    /// Keys whose final version number differs from the number of committed writes to them
    /// (a lost update); only meaningful when every write is a read-modify-write.
    pub lost_update_keys: usize,
}

/// Runs `ycsb` on `protocol` with `exec` and checks the history and the final table state.
pub fn run_checked<P: Protocol>(protocol: P, ycsb: YcsbConfig, exec: &ExecConfig) -> Checked {
    let workload = Ycsb::new(ycsb.clone());
    let db: Database<P::RecordMeta> = checked_db(&workload);
    let out = run_threads(&protocol, &db, &workload, exec);
    let report = check(&out.histories);
    let committed = out.histories.iter().map(WorkerHistory::len).sum();
    let lost_update_keys = if ycsb.rmw {
        lost_updates(&db, &out.histories, ycsb.records)
    } else {
        0
    };
    Checked {
        report,
        committed,
        lost_update_keys,
    }
}

/// A database for `workload` in check mode: stamped tables, loaded, loaded rows stamped.
pub fn checked_db<W: Workload, M: Default + Send + Sync>(workload: &W) -> Database<M> {
    // Growing tables where the workload has them, as the runner builds them.
    let db = Database::try_build_growable(
        &workload.tables(),
        &workload.indexes(),
        true,
        &workload.growable_tables(),
    )
    .expect("the test's tables fit");
    workload.load(&db);
    db.stamp_loaded_rows();
    db
}

fn lost_updates<M>(db: &Database<M>, histories: &[WorkerHistory], records: u64) -> usize {
    let mut writes: HashMap<u64, u64> = HashMap::new();
    for h in histories {
        for t in h.txns() {
            for op in h.ops(t) {
                if op.kind() == OpKind::Write {
                    *writes.entry(op.key()).or_default() += 1;
                }
            }
        }
    }
    let table = db.table(TABLE);
    (0..records)
        .filter(|&k| {
            let rec = table.get(RecordId(k)).expect("record");
            let mut buf = vec![0u8; rec.payload.len()];
            rec.payload.load(&mut buf);
            let final_seq = Stamp::decode(&buf).seq;
            let key = txbench::check::history::history_key(TABLE.0, k);
            final_seq != writes.get(&key).copied().unwrap_or(0)
        })
        .count()
}

/// The transaction ids in the `ack-*.txt` files under `acks` (`Logger::record_acks_in`): one per
/// whole line; a cut last line, without its newline (the writer died mid-line), is skipped.
pub fn acknowledged<C: Default + Extend<u64>>(acks: &std::path::Path) -> C {
    let mut ids = C::default();
    ids.extend(acknowledged_with_epochs(acks).into_iter().map(|(id, _)| id));
    ids
}

/// The acknowledged transactions' (id, epoch) pairs in the ack files of `acks` (lines
/// `ID EPOCH`; a last line cut by a kill is skipped).
#[allow(dead_code)]
pub fn acknowledged_with_epochs(acks: &std::path::Path) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(acks).expect("ack directory") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("ack file");
        let whole = text.rfind('\n').map_or("", |end| &text[..end]);
        out.extend(whole.lines().map(|l| {
            let (id, epoch) = l.split_once(' ').expect("ID EPOCH per line");
            (
                id.parse::<u64>().expect("an id"),
                epoch.parse::<u64>().expect("an epoch"),
            )
        }));
    }
    out
}
