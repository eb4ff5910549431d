//! Deterministic interleavings of MOCC workers on one thread.

use super::*;
use crate::protocol::AttemptStart;
use crate::storage::{RecordId, Table, TableSpec};

fn setup<L: RecordLock>(threshold: u32) -> (Mocc<L>, Table<MoccMeta<L>>) {
    let opts = ProtocolOptions {
        threads: 2,
        silo_epoch_ms: 10_000,
        mocc: crate::protocol::MoccOptions {
            threshold,
            temperature: MoccTemperature::Record,
            ..Default::default()
        },
        ..Default::default()
    };
    let t = Table::new(TableSpec {
        name: "t".into(),
        records: 4,
        payload_bytes: 8,
    });
    (Mocc::new(&opts), t)
}

fn heat<L: RecordLock>(m: &Mocc<L>, rec: &Rec<'_, L>) {
    let mut rng = FastRng::new(1);
    let epoch = m.epochs.epochs().global();
    m.temp_cell(rec).hotter(epoch, &mut rng);
}

const OK: OpResult = Poll::Ready(Ok(()));

#[test]
fn verification_failure_heats_builds_rll_and_retry_read_locks() {
    let (m, t) = setup::<RwLock>(63);
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    let mut a = m.new_worker(0);
    let mut b = m.new_worker(1);
    let mut buf = [0u8; 8];
    m.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(m.read(&mut a, x, &mut buf), OK);
    assert!(!a.holds(&x, LockMode::Read), "cold record: optimistic read");
    assert_eq!(m.write(&mut a, y, &[1; 8], WriteKind::Blind), OK);
    m.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(m.write(&mut b, x, &[2; 8], WriteKind::Blind), OK);
    assert_eq!(m.commit(&mut b), OK);
    assert_eq!(m.commit(&mut a), Poll::Ready(Err(Abort::ReadValidation)));
    assert_eq!(
        m.temp_cell(&x).get(a.epoch),
        1,
        "the clobbered read heats x"
    );
    m.abort(&mut a, Abort::ReadValidation);
    assert_eq!(x.meta().lock.load().readers(), 0);
    assert!(!y.meta().lock.load().is_write_locked(), "abort releases");
    assert_eq!(
        a.rll(),
        vec![
            (RecordId(0), LockMode::Read),
            (RecordId(1), LockMode::Write)
        ]
    );
    // The retry read-locks x in its read phase although x is far below the threshold.
    m.begin(&mut a, AttemptStart::RETRY);
    assert_eq!(m.read(&mut a, x, &mut buf), OK);
    assert!(a.holds(&x, LockMode::Read));
    assert_eq!(buf, [2; 8]);
    // A writer of x now waits for the reader instead of clobbering it.
    m.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(m.write(&mut b, x, &[3; 8], WriteKind::Blind), OK);
    assert_eq!(m.commit(&mut b), Poll::Pending);
    assert_eq!(m.write(&mut a, y, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(m.commit(&mut a), OK, "the retry commits");
    assert!(a.rll().is_empty());
    assert_eq!(m.commit(&mut b), OK, "the writer gets the lock after");
    // A fresh transaction (not a retry) forgets the RLL.
    m.begin(&mut a, AttemptStart::FIRST);
    assert!(a.rll().is_empty());
}

#[test]
fn rll_prefix_is_locked_before_the_access() {
    let (m, t) = setup::<RwLock>(1);
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(3)).unwrap());
    heat(&m, &y);
    let mut a = m.new_worker(0);
    let mut buf = [0u8; 8];
    m.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(m.read_for_update(&mut a, x, &mut buf), OK);
    assert_eq!(m.write(&mut a, x, &[1; 8], WriteKind::ReadModifyWrite), OK);
    assert_eq!(m.read(&mut a, y, &mut buf), OK);
    m.abort(&mut a, Abort::LockConflict);
    assert_eq!(
        a.rll(),
        vec![
            (RecordId(0), LockMode::Write),
            (RecordId(3), LockMode::Read)
        ],
        "written x in write mode, hot y in read mode"
    );
    m.begin(&mut a, AttemptStart::RETRY);
    assert_eq!(m.read(&mut a, y, &mut buf), OK);
    assert!(
        a.holds(&x, LockMode::Write),
        "x (in RLL, before y) locked first"
    );
    assert!(a.holds(&y, LockMode::Read));
    m.abort(&mut a, Abort::User);
    assert!(a.rll().is_empty(), "no retry: RLL dropped");
    assert!(!x.meta().lock.load().is_write_locked());
}

#[test]
fn canonical_mode_releases_a_later_lock_to_take_an_earlier_one() {
    let (m, t) = setup::<RwLock>(1);
    let (r0, r2) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(2)).unwrap());
    heat(&m, &r0);
    heat(&m, &r2);
    let mut a = m.new_worker(0);
    let mut buf = [0u8; 8];
    m.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(m.read(&mut a, r2, &mut buf), OK);
    assert!(a.holds(&r2, LockMode::Read), "hot record read-locked");
    assert_eq!(m.read(&mut a, r0, &mut buf), OK);
    assert!(a.holds(&r0, LockMode::Read));
    assert!(
        !a.holds(&r2, LockMode::Read),
        "r2 > r0 released to stay canonical"
    );
    assert_eq!(r2.meta().lock.load().readers(), 0);
    // Re-reading r2 takes it again, in order.
    assert_eq!(m.read(&mut a, r2, &mut buf), OK);
    assert!(a.holds(&r0, LockMode::Read) && a.holds(&r2, LockMode::Read));
    assert_eq!(m.commit(&mut a), OK);
    assert_eq!(r0.meta().lock.load().readers(), 0);
}

#[test]
fn mql_queued_writer_is_granted_on_release_and_abort_withdraws() {
    let (m, t) = setup::<MqlLock>(1);
    let x = t.get(RecordId(1)).unwrap();
    heat(&m, &x);
    let mut a = m.new_worker(0);
    let mut b = m.new_worker(1);
    let mut buf = [0u8; 8];
    m.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(m.read(&mut a, x, &mut buf), OK);
    assert!(a.holds(&x, LockMode::Read));
    m.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(m.read_for_update(&mut b, x, &mut buf), Poll::Pending);
    assert_eq!(
        x.meta().lock.load().head(),
        3,
        "b's (worker 1's) first node queued"
    );
    assert_eq!(m.read_for_update(&mut b, x, &mut buf), Poll::Pending);
    assert_eq!(m.commit(&mut a), OK);
    assert_eq!(m.read_for_update(&mut b, x, &mut buf), OK);
    assert!(b.holds(&x, LockMode::Write));
    assert_eq!(m.write(&mut b, x, &[5; 8], WriteKind::ReadModifyWrite), OK);
    // Now a queues behind b, then aborts while queued: the queue is left empty.
    m.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(m.read(&mut a, x, &mut buf), Poll::Pending);
    m.abort(&mut a, Abort::LockConflict);
    let w = x.meta().lock.load();
    assert!(w.writer() && w.head() == 0 && w.tail() == 0);
    assert_eq!(m.commit(&mut b), OK);
    let w = x.meta().lock.load();
    assert!(
        !w.writer() && w.readers() == 0 && w.head() == 0,
        "free after commit"
    );
}

#[test]
fn read_committed_takes_no_lock_on_a_hot_record_and_is_not_verified() {
    let (m, t) = setup::<RwLock>(1);
    let (x, y) = (t.get(RecordId(0)).unwrap(), t.get(RecordId(1)).unwrap());
    heat(&m, &x);
    let mut a = m.new_worker(0);
    let mut b = m.new_worker(1);
    let mut buf = [0u8; 8];
    m.begin(&mut a, AttemptStart::FIRST);
    assert_eq!(m.read_committed(&mut a, x, &mut buf), OK);
    assert!(!a.holds(&x, LockMode::Read), "hot, but no read lock");
    assert_eq!(x.meta().lock.load().readers(), 0);
    assert_eq!(m.write(&mut a, y, &[1; 8], WriteKind::Blind), OK);
    assert_eq!(m.read_committed(&mut a, y, &mut buf), OK);
    assert_eq!(buf, [1; 8], "own write");
    // A writer of x is not held up by the reader (it would wait for a read lock)...
    m.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(m.write(&mut b, x, &[2; 8], WriteKind::Blind), OK);
    assert_eq!(m.commit(&mut b), OK);
    // ...and the reader's commit does not verify x.
    let temp = m.temp_cell(&x).get(a.epoch);
    assert_eq!(m.commit(&mut a), OK);
    assert_eq!(m.temp_cell(&x).get(a.epoch), temp, "x not heated");
}

#[test]
fn read_committed_skips_buffered_writes_and_waits_for_an_install() {
    let (m, t) = setup::<MqlLock>(1);
    let x = t.get(RecordId(2)).unwrap();
    heat(&m, &x);
    let mut a = m.new_worker(0);
    let mut b = m.new_worker(1);
    let mut buf = [0u8; 8];
    m.begin(&mut a, AttemptStart::FIRST);
    m.begin(&mut b, AttemptStart::FIRST);
    assert_eq!(m.read_for_update(&mut b, x, &mut buf), OK);
    assert!(b.holds(&x, LockMode::Write));
    assert_eq!(m.write(&mut b, x, &[3; 8], WriteKind::ReadModifyWrite), OK);
    // b's write lock does not block an RC read (a serializable read of hot x would queue).
    assert_eq!(m.read_committed(&mut a, x, &mut buf), OK);
    assert_eq!(buf, [0; 8], "b's write is buffered, not committed");
    // The install bit does: a committer is copying its payload in.
    let seen = x.meta().tid.load();
    assert!(x.meta().tid.try_lock(seen));
    assert_eq!(m.read_committed(&mut a, x, &mut buf), Poll::Pending);
    x.meta().tid.store(seen);
    assert_eq!(m.commit(&mut b), OK);
    assert_eq!(m.read_committed(&mut a, x, &mut buf), OK);
    assert_eq!(buf, [3; 8], "committed value seen");
    assert_eq!(m.commit(&mut a), OK);
}
