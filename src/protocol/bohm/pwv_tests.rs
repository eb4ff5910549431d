//! PWV step by step (`protocol::pwv`): workers on one thread, one batch at a time, against
//! BOHM on the same schedules.

use super::tests::{options, place_all, read, rec, table, write};
use super::*;
use crate::protocol::declared::declared_records as declared;

const OK: OpResult = Poll::Ready(Ok(()));
const W: AccessMode = AccessMode::Write;
const R: AccessMode = AccessMode::Read;

fn pwv() -> Pwv {
    Pwv::new(&options(false))
}

/// Worker 0 writes record 0 and record 1; worker 1 reads record 0. After worker 0's write of
/// record 0 (its program not finished, no commit yet): what worker 1 reads.
fn read_before_the_writer_ends<const E: bool>(p: &PlacedVersions<E>) -> Poll<u64> {
    let t = table();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let sets = [declared(&t, &[(0, W), (1, W)]), declared(&t, &[(0, R)])];
    place_all(p, &mut ws, &sets);
    assert_eq!(
        read(p, &mut ws[1], rec(&t, 0)),
        Poll::Pending,
        "not written"
    );
    write(p, &mut ws[0], rec(&t, 0), 5);
    let early = read(p, &mut ws[1], rec(&t, 0));
    write(p, &mut ws[0], rec(&t, 1), 6);
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(read(p, &mut ws[1], rec(&t, 0)), Poll::Ready(5));
    assert_eq!(p.commit(&mut ws[1]), OK);
    early
}

/// PWV's point: the write is visible while its writer is still running. BOHM's reader waits
/// for the writer's commit; so does PWV's where the workload has user aborts (the commit point
/// is then the commit).
#[test]
fn a_write_is_visible_before_its_writer_ends_past_the_commit_point() {
    assert_eq!(read_before_the_writer_ends(&pwv()), Poll::Ready(5));
    let bohm = Bohm::new(&options(false));
    assert_eq!(read_before_the_writer_ends(&bohm), Poll::Pending);
    let with_user_aborts = Pwv::new(&options(true));
    assert_eq!(
        read_before_the_writer_ends(&with_user_aborts),
        Poll::Pending
    );
}

/// Worker 0 writes record 0 (made visible at once) and then record 1; worker 1 reads record 0
/// and commits: whether its commit went through while worker 0 had not ended.
fn reader_commits_before_its_writer(p: &Pwv) -> bool {
    let t = table();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let sets = [declared(&t, &[(0, W), (1, W)]), declared(&t, &[(0, R)])];
    place_all(p, &mut ws, &sets);
    write(p, &mut ws[0], rec(&t, 0), 5);
    assert_eq!(read(p, &mut ws[1], rec(&t, 0)), Poll::Ready(5));
    let early = p.commit(&mut ws[1]) == OK;
    write(p, &mut ws[0], rec(&t, 1), 6);
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert!(early || p.commit(&mut ws[1]) == OK, "once the writer ended");
    early
}

/// The commit dependency holds the reader's commit until the writer's; the mutant that skips
/// it lets the reader commit first (no outcome changes in a run, so only this test sees it).
#[test]
fn a_reader_of_an_early_write_commits_after_its_writer() {
    assert!(!reader_commits_before_its_writer(&pwv()));
    let p = pwv().with_mutant(Mutant::PwvSkipsCommitDependency);
    assert!(reader_commits_before_its_writer(&p));
}

/// A write whose record's previous version is a placeholder still waits for it: it is made
/// visible at commit instead, after the older writer's version, and its readers see it then.
#[test]
fn a_write_after_an_unproduced_older_version_is_visible_at_commit() {
    let t = table();
    let p = pwv();
    let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
    let sets = [
        declared(&t, &[(0, W)]),
        declared(&t, &[(0, W)]),
        declared(&t, &[(0, R)]),
    ];
    place_all(&p, &mut ws, &sets);
    write(&p, &mut ws[1], rec(&t, 0), 7);
    assert_eq!(read(&p, &mut ws[2], rec(&t, 0)), Poll::Pending);
    write(&p, &mut ws[0], rec(&t, 0), 3);
    assert_eq!(
        read(&p, &mut ws[2], rec(&t, 0)),
        Poll::Pending,
        "worker 2 is bound to worker 1's version, not worker 0's"
    );
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.commit(&mut ws[1]), OK, "installs over worker 0's version");
    assert_eq!(read(&p, &mut ws[2], rec(&t, 0)), Poll::Ready(7));
    assert_eq!(p.commit(&mut ws[2]), OK);
}

/// Worker 0 reads and then writes record 0 (+1); worker 1 reads record 0 and, being later in
/// the batch, writes it too (+10): what worker 1 reads, and what the record holds in the end.
fn read_modify_writes<const E: bool>(p: &PlacedVersions<E>) -> (Poll<u64>, u64) {
    let t = table();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let sets = [declared(&t, &[(0, W)]), declared(&t, &[(0, W)])];
    place_all(p, &mut ws, &sets);
    let v = read(p, &mut ws[0], rec(&t, 0));
    assert_eq!(v, Poll::Ready(0));
    let seen = read(p, &mut ws[1], rec(&t, 0));
    write(p, &mut ws[0], rec(&t, 0), 1);
    let after = read(p, &mut ws[1], rec(&t, 0));
    let Poll::Ready(x) = after else {
        return (seen, u64::MAX);
    };
    write(p, &mut ws[1], rec(&t, 0), x + 10);
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.commit(&mut ws[1]), OK);
    (seen, rec(&t, 0).payload.word(0))
}

/// The read-modify-writes follow one another: the later one reads the earlier's write, made
/// visible at the write. The mutant that publishes at the read hands the later one the value
/// before the write, and loses both writes (each member published a copy at its read).
#[test]
fn an_early_version_is_the_writers_final_one() {
    assert_eq!(read_modify_writes(&pwv()), (Poll::Pending, 11));
    let p = pwv().with_mutant(Mutant::PwvPublishesAtRead);
    assert_eq!(read_modify_writes(&p), (Poll::Ready(0), 0));
}

/// Worker 0 writes record 0, worker 1 reads it, worker 2 overwrites it blind; worker 2 writes
/// (after worker 0, so its version is visible at once) before worker 1 reads: what worker 1
/// reads.
fn reader_between_two_early_writers(p: &Pwv) -> Poll<u64> {
    let t = table();
    let mut ws: Vec<_> = (0..3).map(|i| p.new_worker(i)).collect();
    let sets = [
        declared(&t, &[(0, W)]),
        declared(&t, &[(0, R)]),
        declared(&t, &[(0, W)]),
    ];
    place_all(p, &mut ws, &sets);
    write(p, &mut ws[0], rec(&t, 0), 5);
    write(p, &mut ws[2], rec(&t, 0), 7);
    let seen = read(p, &mut ws[1], rec(&t, 0));
    for w in &mut ws {
        assert_eq!(p.commit(w), OK);
    }
    seen
}

/// The reader sees the version it is bound to (worker 0's), not the newer one worker 2 made
/// visible; the mutant that takes the newest visible version reads worker 2's.
#[test]
fn a_read_takes_its_bound_version_not_the_newest_visible() {
    assert_eq!(reader_between_two_early_writers(&pwv()), Poll::Ready(5));
    let p = pwv().with_mutant(Mutant::PwvReadsNewestVisible);
    assert_eq!(reader_between_two_early_writers(&p), Poll::Ready(7));
}

/// A user abort after a write made visible cannot be undone: configuration never lets it
/// happen (`user_aborts`), and the protocol refuses it loudly rather than leave the version.
#[test]
#[should_panic(expected = "rolled back after making a write visible")]
fn a_user_abort_after_an_early_write_panics() {
    let t = table();
    let p = pwv();
    let mut ws: Vec<_> = (0..1).map(|i| p.new_worker(i)).collect();
    let sets = [declared(&t, &[(0, W)])];
    place_all(&p, &mut ws, &sets);
    write(&p, &mut ws[0], rec(&t, 0), 9);
    let _ = p.confirm_user_abort(&mut ws[0]);
}

/// With user aborts configured, a rolled-back member's placeholders become copies, as BOHM's,
/// and its reader (which waited for it to end) goes on.
#[test]
fn with_user_aborts_a_rollback_produces_copies() {
    let t = table();
    let p = Pwv::new(&options(true));
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let sets = [declared(&t, &[(0, W)]), declared(&t, &[(0, R)])];
    place_all(&p, &mut ws, &sets);
    write(&p, &mut ws[0], rec(&t, 0), 9);
    assert_eq!(read(&p, &mut ws[1], rec(&t, 0)), Poll::Pending);
    assert_eq!(p.confirm_user_abort(&mut ws[0]), OK);
    p.abort(&mut ws[0], Abort::User);
    assert_eq!(read(&p, &mut ws[1], rec(&t, 0)), Poll::Ready(0), "not 9");
    assert_eq!(p.commit(&mut ws[1]), OK, "its writer ended");
}

/// Worker 0 writes record 0 (made visible at once), then writes it again with `again`; worker
/// 1 reads it after the second write.
fn write_twice(again: u64) -> Poll<u64> {
    let t = table();
    let p = pwv();
    let mut ws: Vec<_> = (0..2).map(|i| p.new_worker(i)).collect();
    let sets = [declared(&t, &[(0, W)]), declared(&t, &[(0, R)])];
    place_all(&p, &mut ws, &sets);
    write(&p, &mut ws[0], rec(&t, 0), 4);
    write(&p, &mut ws[0], rec(&t, 0), again);
    let seen = read(&p, &mut ws[1], rec(&t, 0));
    assert_eq!(p.commit(&mut ws[0]), OK);
    assert_eq!(p.commit(&mut ws[1]), OK);
    seen
}

/// A second write of the same bytes (an ordered index's next-key path rewriting a record the
/// attempt inserted: `txn::index_ops`) changes nothing the reader can see, and is no error.
#[test]
fn rewriting_a_visible_version_unchanged_is_no_second_write() {
    assert_eq!(write_twice(4), Poll::Ready(4));
}

/// A second write with new bytes would change a version a reader may have read already: the
/// workload bug the module docs name, refused loudly.
#[test]
#[should_panic(expected = "wrote new bytes to a record whose version it had already made visible")]
fn a_second_write_with_new_bytes_panics() {
    let _ = write_twice(5);
}
