//! BOHM_NW and PWV_NW step by step (`no_wait`): workers on one thread, one batch at a time.

use super::tests::{options, read, rec, table, write};
use super::*;
use crate::protocol::declared::declared_records as declared;

const OK: OpResult = Poll::Ready(Ok(()));
const CONFLICT: OpResult = Poll::Ready(Err(Abort::LockConflict));
const W: AccessMode = AccessMode::Write;
const R: AccessMode = AccessMode::Read;

/// BOHM (`EARLY` false) or PWV in the no-wait form, four workers, batches that close when every
/// worker joined.
fn no_wait_form<const EARLY: bool>() -> PlacedVersions<EARLY> {
    let mut o = options(false);
    o.bohm.no_wait = true;
    o.pwv.no_wait = true;
    PlacedVersions::new(&o)
}

/// Begins every worker's attempt. A worker joins the batch at its first `schedule` and takes its
/// turn in the same call once the members before it passed theirs (turns do not wait for the
/// batch to close), so the order of the tests' first `schedule` calls is the batch order, and
/// each turn comes exactly where the test calls it.
fn begin_all<const E: bool>(p: &PlacedVersions<E>, ws: &mut [PlacedWorker<'_, E>]) {
    for w in ws.iter_mut() {
        p.begin(w, AttemptStart::FIRST);
    }
}

/// Two read-modify-writes of record 0 (+1, then +10) in one batch. The second finds the
/// first's placeholder at its turn; it reads record 0 before the first wrote it, if it was
/// placed. Then it reruns in the next batch (alone: the first worker is gone by then). The
/// record's final value, or how the rerun's turn ended if it did not place.
fn read_modify_writes<const E: bool>(p: &PlacedVersions<E>) -> Result<u64, Abort> {
    let t = table();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let set = declared(&t, &[(0, W)]);
    begin_all(p, &mut ws);
    assert_eq!(p.schedule(&mut ws[0], &set), OK, "first in the batch");
    let second = p.schedule(&mut ws[1], &set);
    let early = if second == OK {
        Some(read(p, &mut ws[1], rec(&t, 0)))
    } else {
        assert_eq!(second, CONFLICT);
        assert_eq!(p.signal(Abort::LockConflict), Signal::Sf);
        p.abort(&mut ws[1], Abort::LockConflict);
        None
    };
    assert_eq!(read(p, &mut ws[0], rec(&t, 0)), Poll::Ready(0));
    write(p, &mut ws[0], rec(&t, 0), 1);
    assert_eq!(
        p.commit(&mut ws[0]),
        OK,
        "its version follows the loaded one"
    );
    if let Some(seen) = early {
        let Poll::Ready(v) = seen else {
            panic!("a placed member of the no-wait form waited");
        };
        write(p, &mut ws[1], rec(&t, 0), v + 10);
        assert_eq!(p.commit(&mut ws[1]), OK);
        return Ok(rec(&t, 0).payload.word(0));
    }
    // The rerun joins the next batch once the first member has finished; with the first worker
    // gone it is alone there, so it comes first.
    p.begin(&mut ws[1], AttemptStart::RETRY);
    drop(ws.remove(0));
    let rerun = &mut ws[0];
    match p.schedule(rerun, &set) {
        OK => {}
        Poll::Ready(Err(why)) => return Err(why),
        Poll::Pending => panic!("the first member of a batch waited for its turn"),
    }
    assert_eq!(read(p, rerun, rec(&t, 0)), Poll::Ready(1), "no wait");
    write(p, rerun, rec(&t, 0), 11);
    assert_eq!(p.commit(rerun), OK);
    assert_eq!(p.stats().last(), Some(&("no_wait_conflicts", 1.0)));
    Ok(rec(&t, 0).payload.word(0))
}

/// A member that would wait reruns in the next batch (SF under coroutines), where it comes first and reads the
/// version it would have waited for, without waiting: no update is lost.
#[test]
fn a_member_that_would_wait_reruns_in_the_next_batch() {
    assert_eq!(read_modify_writes(&no_wait_form::<false>()), Ok(11), "bohm");
    assert_eq!(read_modify_writes(&no_wait_form::<true>()), Ok(11), "pwv");
}

/// The mutant that skips the test places the second member, whose read copies the loaded
/// version before the first wrote: the first's update is lost (10, not 11).
#[test]
fn the_mutant_that_skips_the_test_loses_an_update() {
    let mutant = Mutant::PlacedNoWaitSkipsCheck;
    assert_eq!(
        read_modify_writes(&no_wait_form::<false>().with_mutant(mutant)),
        Ok(10)
    );
    assert_eq!(
        read_modify_writes(&no_wait_form::<true>().with_mutant(mutant)),
        Ok(10)
    );
}

/// The mutant that leaves a conflicted member's placeholders placed makes the record busy for
/// good: the next batch's first member, which must always place, finds it busy.
#[test]
fn the_mutant_that_keeps_placeholders_blocks_the_next_batch() {
    let mutant = Mutant::PlacedNoWaitConflictKeepsPlaceholders;
    let bohm = no_wait_form::<false>().with_mutant(mutant);
    assert_eq!(read_modify_writes(&bohm), Err(Abort::LockConflict));
    let pwv = no_wait_form::<true>().with_mutant(mutant);
    assert_eq!(read_modify_writes(&pwv), Err(Abort::LockConflict));
}

/// Only a placeholder makes a record busy: a reader leaves it free for a later writer (which
/// installs while the reader still runs; the reader keeps its version), and members with
/// disjoint records are placed together.
#[test]
fn a_read_leaves_the_record_free() {
    let t = table();
    let p = no_wait_form::<false>();
    let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
    let sets = [
        declared(&t, &[(0, R)]),
        declared(&t, &[(0, W)]),
        declared(&t, &[(1, W)]),
    ];
    begin_all(&p, &mut ws);
    for (w, s) in ws.iter_mut().zip(&sets) {
        assert_eq!(p.schedule(w, s), OK, "placed");
    }
    write(&p, &mut ws[1], rec(&t, 0), 4);
    assert_eq!(p.commit(&mut ws[1]), OK, "the version before it exists");
    assert_eq!(
        read(&p, &mut ws[0], rec(&t, 0)),
        Poll::Ready(0),
        "its own version"
    );
    write(&p, &mut ws[2], rec(&t, 1), 2);
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.commit(&mut ws[2]), OK);
    assert_eq!(p.stats().last(), Some(&("no_wait_conflicts", 0.0)));
}

/// Worker 0 writes record 0 and record 1; once it wrote record 0 (its program still running),
/// worker 1, which reads record 0, takes its turn: how that turn ends, and, if it was placed,
/// whether its commit went through before worker 0 ended.
fn reader_after_a_write<const E: bool>(p: &PlacedVersions<E>) -> (OpResult, Option<OpResult>) {
    let t = table();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let sets = [declared(&t, &[(0, W), (1, W)]), declared(&t, &[(0, R)])];
    begin_all(p, &mut ws);
    assert_eq!(p.schedule(&mut ws[0], &sets[0]), OK);
    write(p, &mut ws[0], rec(&t, 0), 5);
    let turn = p.schedule(&mut ws[1], &sets[1]);
    let early_commit = (turn == OK).then(|| {
        assert_eq!(read(p, &mut ws[1], rec(&t, 0)), Poll::Ready(5), "no wait");
        p.commit(&mut ws[1])
    });
    if turn != OK {
        p.abort(&mut ws[1], Abort::LockConflict);
    }
    write(p, &mut ws[0], rec(&t, 1), 6);
    assert_eq!(p.commit(&mut ws[0]), OK);
    if turn == OK {
        assert_eq!(p.commit(&mut ws[1]), OK, "once its writer ended");
    }
    (turn, early_commit)
}

/// PWV_NW finds a record free once its writer, past its commit point, made the version visible;
/// the reader's commit still waits for the writer to end (SGPM's AG at commit). BOHM_NW waits
/// for nothing: the version is not produced before the writer's commit, so the reader reruns.
#[test]
fn pwv_no_wait_places_a_reader_of_a_visible_version() {
    assert_eq!(
        reader_after_a_write(&no_wait_form::<true>()),
        (OK, Some(Poll::Pending))
    );
    assert_eq!(
        reader_after_a_write(&no_wait_form::<false>()),
        (CONFLICT, None)
    );
}

/// The waiting forms report no no-wait counter and never answer a turn with a conflict.
#[test]
fn the_waiting_forms_have_no_conflicts() {
    let p = Bohm::new(&options(false));
    assert!(
        p.stats()
            .iter()
            .all(|(name, _)| *name != "no_wait_conflicts")
    );
    let t = table();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let set = declared(&t, &[(0, W)]);
    begin_all(&p, &mut ws);
    assert_eq!(p.schedule(&mut ws[0], &set), OK);
    assert_eq!(p.schedule(&mut ws[1], &set), OK, "placed; it will wait");
    assert_eq!(read(&p, &mut ws[1], rec(&t, 0)), Poll::Pending);
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.commit(&mut ws[1]), OK);
}
