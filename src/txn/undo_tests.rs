//! Undo logging through a transaction handle (`crate::log`, "Undo logging"): the hook in
//! `WriteSet::put` copies each record's before-image at the attempt's first write to it, and the
//! handle appends the images with the attempt's outcome when it ends.

use super::Txn;
use crate::log::device::{LogDevice, MemDevice};
use crate::log::format::{self, Frame, FrameReader, UndoFrame};
use crate::log::{LogKind, LogSync, Logger};
use crate::protocol::twopl::NoWait;
use crate::protocol::{Abort, AttemptStart, ProtocolOptions};
use crate::storage::{Database, RecordId, TableId, TableSpec};
use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

const T: TableId = TableId(0);
const ROW: usize = 16;

/// Polls a future that must not wait (one worker, no conflicts).
fn now<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a lone worker never waits"),
    }
}

/// Sets every byte of the row to `b`.
fn fill(b: u8) -> impl FnOnce(&mut [u8]) {
    move |row: &mut [u8]| row[..ROW].fill(b)
}

/// One before-image as read back: table, record id, seq, row.
type Image = (u32, u64, u64, Vec<u8>);

/// The undo frames in the log's written bytes, each as (committed, images).
fn undo_frames(bytes: &[u8]) -> Vec<(bool, Vec<Image>)> {
    FrameReader::new(bytes)
        .filter_map(|f| match f {
            Frame::Undo(UndoFrame {
                committed, images, ..
            }) => Some((
                committed,
                images
                    .entries()
                    .map(|e| {
                        assert!(!e.delta, "a before-image is a whole row");
                        (e.table, e.rid, e.seq, e.row.to_vec())
                    })
                    .collect(),
            )),
            Frame::Txn(_) => panic!("an undo log holds no redo transaction"),
            _ => None,
        })
        .collect()
}

/// A committed attempt's frame holds each written record's row as it was before the write
/// (not the new value) with that version's seq; an aborted attempt's before-images are written
/// too, marked aborted; a record written twice in one attempt has one image; a later attempt's
/// image of a record is the version the earlier commit installed; a read-only attempt writes
/// nothing.
#[test]
fn an_undo_log_holds_each_attempts_before_images_and_its_outcome() {
    let p = NoWait::new(&ProtocolOptions::default()).expect("one worker");
    let db = Database::with_check_stamps(
        &[TableSpec {
            name: "t".into(),
            records: 4,
            payload_bytes: ROW,
        }],
        &[],
    );
    for (rid, b) in [(1, 0x11u8), (2, 0x22)] {
        db.table(T)
            .get(RecordId(rid))
            .expect("record")
            .payload
            .store(&[b; ROW]);
    }
    let device = MemDevice::default();
    let mut header = Vec::new();
    format::write_file_header(&mut header, 0, 7);
    let mut boxed = device.clone();
    boxed.append(&header).expect("header");
    let log = Logger::new(
        vec![Box::new(boxed)],
        1,
        LogSync::Group,
        Duration::from_millis(1),
    )
    .with_kind(LogKind::Undo);
    let mut tx = Txn::new(&p, &db, 0, false);
    tx.attach_log(&log);

    // Committed: record 1 updated twice, record 3 written blind.
    tx.begin(AttemptStart::FIRST);
    now(tx.update(T, RecordId(1), fill(0xA1))).expect("update");
    now(tx.update(T, RecordId(1), fill(0xA2))).expect("update again");
    now(tx.write(T, RecordId(3), &[0x33; ROW])).expect("blind write");
    assert_eq!(tx.poll_commit(), Poll::Ready(Ok(())));
    tx.committed();
    assert!(
        tx.take_committed_epoch().is_some(),
        "a committed writer waits for its durable acknowledgement"
    );
    // Aborted after writing record 2.
    tx.begin(AttemptStart::FIRST);
    now(tx.update(T, RecordId(2), fill(0xB2))).expect("update");
    tx.aborted(Abort::User);
    // Read-only: no frame.
    tx.begin(AttemptStart::FIRST);
    now(tx.read(T, RecordId(2))).expect("read");
    assert_eq!(tx.poll_commit(), Poll::Ready(Ok(())));
    tx.committed();
    assert_eq!(tx.take_committed_epoch(), None);
    // Record 1 again: its before-image is now the first commit's version.
    tx.begin(AttemptStart::FIRST);
    now(tx.update(T, RecordId(1), fill(0xC1))).expect("update");
    assert_eq!(tx.poll_commit(), Poll::Ready(Ok(())));
    tx.committed();

    assert!(log.flush(None), "the log flushes");
    let frames = undo_frames(&device.written());
    let padded = |b: u8| [b; ROW].to_vec();
    assert_eq!(
        frames,
        vec![
            (true, vec![(0, 1, 0, padded(0x11)), (0, 3, 0, padded(0))]),
            (false, vec![(0, 2, 0, padded(0x22))]),
            (true, vec![(0, 1, 1, padded(0xA2))]),
        ]
    );
    let stats = log.stats();
    assert_eq!((stats.txns, stats.aborted), (2, 1));
    assert_eq!(
        db.table(T)
            .get(RecordId(2))
            .expect("record")
            .payload
            .word(0),
        u64::from_le_bytes([0x22; 8]),
        "the abort left record 2"
    );
}
