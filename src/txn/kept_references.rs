//! The grace period covers the record references a multi-version protocol keeps past a commit
//! (its garbage queue, `storage::versions::GcQueue`), step by step (issue 21): a worker commits a
//! write to a record of a retiring table and goes idle with the record queued; every slot of the
//! record's chunk is then retired, and the table grows. Before the fix the worker's slot went
//! IDLE at its commit, so the growth reset the chunk under the queued reference (or freed it,
//! for a short last chunk), and the worker's next start collected the chain of a record another
//! thread was dropping. Now the slot holds the epoch the reference was found at until the queue
//! lets it go: the chunk waits, and is reused once the worker's next start has collected it.

use super::*;
use crate::protocol::ProtocolOptions;
use crate::protocol::cicada::Cicada;
use crate::protocol::ermia::Ermia;
use crate::protocol::mvto::Mvto;
use crate::protocol::si::Si;
use crate::storage::TableSpec;
use std::task::Waker;

const T: TableId = TableId(0);

fn options() -> ProtocolOptions {
    let mut opts = ProtocolOptions {
        threads: 2,
        ..ProtocolOptions::default()
    };
    // The watermark is fresh at every start: the queued record is collected at the first one.
    opts.mv.gc_interval_us = 0;
    opts
}

/// Polls a future that must not wait (no other transaction runs).
fn now<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a lone transaction never waits"),
    }
}

/// Runs one transaction on `tx`: writes `rid` if given, commits.
fn commit<P: Protocol>(tx: &mut Txn<'_, P>, rid: Option<RecordId>) {
    tx.begin(AttemptStart::FIRST);
    if let Some(rid) = rid {
        now(tx.write(T, rid, &[7; 8])).expect("a lone write");
    }
    assert_eq!(tx.poll_commit(), Poll::Ready(Ok(())));
    tx.committed();
}

/// What the scenario saw: chunks reused while the worker's queue still referenced a record of
/// the retired chunk, and after its next start collected it.
#[derive(Debug, PartialEq, Eq)]
struct Reuse {
    while_queued: u64,
    after_collection: u64,
}

/// The scenario of the module docs under protocol `p`.
fn retire_under_a_queued_record<P: Protocol>(p: &P) -> Reuse
where
    P::RecordMeta: Default + Send,
{
    let db: Database<P::RecordMeta> = Database::try_build_growable_chunked(
        &[TableSpec {
            name: "new_order".into(),
            records: 64,
            payload_bytes: 8,
        }],
        &[],
        false,
        &[T],
        1,
    )
    .unwrap();
    db.retire_deleted_slots(T);
    let t = db.table(T);
    let per = t.records_per_chunk();
    let mut worker = Txn::new(p, &db, 0, false);
    commit(&mut worker, Some(RecordId(0)));
    let mv = P::MULTI_VERSION.expect("a multi-version protocol");
    assert!(
        mv.grace_holds(p, &mut worker.worker).oldest().is_some(),
        "the commit queued its record for deferred collection"
    );
    // Every row of chunk 0 deleted and its index entry taken out (what `Txn::remove_entry`
    // does for each), then the table grows into a new chunk.
    t.retire_slots(0..per);
    t.get(RecordId(per)).expect("grows");
    let while_queued = t.retirement_stats().unwrap().chunks_reused;
    // The worker's next start collects the queued record; its commit lets the epoch go.
    commit(&mut worker, None);
    assert_eq!(
        mv.grace_holds(p, &mut worker.worker).oldest(),
        None,
        "the start collected the queue"
    );
    t.get(RecordId(2 * per)).expect("grows");
    Reuse {
        while_queued,
        after_collection: t.retirement_stats().unwrap().chunks_reused,
    }
}

/// Each multi-version protocol's scenario, with or without the mutant (the worker's slot goes
/// IDLE at its commit whatever it keeps: the code before the fix).
fn every_protocol(mutant: bool) -> Vec<(&'static str, Reuse)> {
    mutant::set_unpin_over_kept_references(mutant);
    let found = vec![
        ("si", retire_under_a_queued_record(&Si::new(&options()))),
        (
            "ermia",
            retire_under_a_queued_record(&Ermia::new(&options()).unwrap()),
        ),
        ("mvto", retire_under_a_queued_record(&Mvto::new(&options()))),
        (
            "cicada",
            retire_under_a_queued_record(&Cicada::new(&options())),
        ),
    ];
    mutant::set_unpin_over_kept_references(false);
    found
}

#[test]
fn a_chunk_is_not_reused_under_a_queued_record() {
    for (name, reuse) in every_protocol(false) {
        assert_eq!(
            reuse,
            Reuse {
                while_queued: 0,
                after_collection: 1
            },
            "{name}"
        );
    }
}

#[test]
fn unpinning_over_a_queued_record_is_caught() {
    for (name, reuse) in every_protocol(true) {
        assert_eq!(
            reuse.while_queued, 1,
            "{name}: the mutant reuses the chunk under the queued record"
        );
    }
}
