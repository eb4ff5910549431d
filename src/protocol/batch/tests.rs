//! The batch manager step by step on one thread: formation, the barrier, the next batch.

use super::*;

const READY: Poll<()> = Poll::Ready(());

fn batches(size: usize, timeout_us: u64) -> Batches {
    Batches::new(&BatchOptions { size, timeout_us })
}

/// A batch closes once every live worker joined, waits for all of them to execute, and the last
/// to finish opens the next one.
#[test]
fn a_batch_closes_when_everyone_joined_and_opens_the_next_when_all_finished() {
    let b = batches(64, 1_000_000);
    let (mut x, mut y) = (b.register(0), b.register(1));
    assert_eq!(b.join(&mut x), READY);
    assert_eq!(x.batch(), 1);
    b.executed(&x);
    assert_eq!(b.all_executed(&x), Poll::Pending, "y may still join");
    assert_eq!(b.join(&mut y), READY);
    assert_eq!(y.batch(), 1, "same batch");
    assert_eq!(b.all_executed(&x), Poll::Pending, "y has not executed");
    b.executed(&y);
    assert_eq!(b.all_executed(&x), READY);
    assert_eq!(b.all_executed(&y), READY);
    b.finished(&mut x);
    assert_eq!(b.join(&mut x), Poll::Pending, "batch 1 still has y");
    b.finished(&mut y);
    assert_eq!(b.join(&mut x), READY);
    assert_eq!(x.batch(), 2);
    assert_eq!(b.stats()[0], ("batches", 1.0));
    assert_eq!(b.stats()[1], ("mean_batch_size", 2.0));
}

/// `--batch-size` closes a batch before every worker joined.
#[test]
fn a_full_batch_closes() {
    let b = batches(1, 1_000_000);
    let (mut x, mut y) = (b.register(0), b.register(1));
    assert_eq!(b.join(&mut x), READY);
    assert_eq!(b.join(&mut y), Poll::Pending, "batch 1 is full");
    b.executed(&x);
    assert_eq!(b.all_executed(&x), READY);
    b.finished(&mut x);
    assert_eq!(b.join(&mut y), READY);
    assert_eq!(y.batch(), 2);
}

/// The time bound closes a batch that not every worker joined; without it the batch waits.
#[test]
fn the_time_bound_closes_a_batch_with_whoever_came() {
    let waits = batches(64, 1_000_000);
    let (mut x, _y) = (waits.register(0), waits.register(1));
    assert_eq!(waits.join(&mut x), READY);
    waits.executed(&x);
    assert_eq!(waits.all_executed(&x), Poll::Pending);

    let closes = batches(64, 0);
    let (mut x, _y) = (closes.register(0), closes.register(1));
    assert_eq!(closes.join(&mut x), READY);
    closes.executed(&x);
    assert_eq!(closes.all_executed(&x), READY, "closed by its time bound");
    assert_eq!(closes.stats()[2], ("batches_closed_by_timeout", 1.0));
}

/// A worker that leaves (stops) no longer holds the batch open.
#[test]
fn a_worker_that_leaves_is_not_waited_for() {
    let b = batches(64, 1_000_000);
    let (mut x, mut y) = (b.register(0), b.register(1));
    assert_eq!(b.join(&mut x), READY);
    b.executed(&x);
    assert_eq!(b.all_executed(&x), Poll::Pending);
    b.leave(&mut y);
    b.leave(&mut y);
    assert_eq!(b.all_executed(&x), READY);
}

/// A member that withdraws (its attempt ended before its commit phase) waits for the next
/// batch: it never joins the same batch twice.
#[test]
fn a_withdrawn_member_waits_for_the_next_batch() {
    let b = batches(64, 1_000_000);
    let (mut x, mut y) = (b.register(0), b.register(1));
    assert_eq!(b.join(&mut x), READY);
    b.withdraw(&mut x);
    assert_eq!(b.join(&mut x), Poll::Pending, "batch 1 is x's last");
    assert_eq!(b.join(&mut y), READY);
    assert_eq!(y.batch(), 1);
    b.executed(&y);
    assert_eq!(b.all_executed(&y), READY);
    b.finished(&mut y);
    assert_eq!(b.join(&mut x), READY);
    assert_eq!(x.batch(), 2);
}

/// Ranks: older transactions first, then worker ids; a retry keeps its age.
#[test]
fn ranks_put_older_transactions_first() {
    let b = batches(1, 0);
    let (mut old, mut young) = (b.register(5), b.register(2));
    assert_eq!(b.join(&mut old), READY);
    b.withdraw(&mut old);
    // `old` retries (keeps its first batch); `young` is new in batch 2.
    assert_eq!(b.join(&mut young), READY);
    b.withdraw(&mut young);
    assert_eq!(b.join(&mut old), READY);
    assert_eq!(old.batch(), 3);
    let old_rank = old.rank();
    b.withdraw(&mut old);
    young.new_transaction();
    assert_eq!(b.join(&mut young), READY);
    assert_eq!(young.batch(), 4);
    assert!(
        old_rank < young.rank(),
        "an older transaction ranks first whatever its worker id"
    );
    let (a, c) = (BatchTicket::new(3), BatchTicket::new(4));
    let (mut a, mut c) = (a, c);
    a.joined(9, 1);
    c.joined(9, 0);
    assert!(a.rank() < c.rank(), "same age: worker id");
    assert_eq!(
        (a.position(), c.position()),
        (1, 0),
        "arrival order, apart from rank"
    );
    assert!(c.rank() < RANK_LIMIT);
}

/// Turns go in arrival order and start before the batch closes: the first member acts at once,
/// the second once the first passed, a later joiner after both; a member of the next batch
/// waits until the batch is over.
#[test]
fn turns_follow_arrival_and_do_not_wait_for_the_close() {
    let b = batches(64, 1_000_000);
    let turn = Turn::default();
    let (mut x, mut y, mut z) = (b.register(0), b.register(1), b.register(2));
    assert_eq!(
        turn.wait_for_turn(&b, &mut x),
        READY,
        "first: no one before it"
    );
    assert_eq!(
        turn.wait_for_turn(&b, &mut y),
        Poll::Pending,
        "second: x has not passed"
    );
    turn.pass(&x);
    assert_eq!(
        turn.wait_for_turn(&b, &mut y),
        READY,
        "the batch is still open (z may join): y's turn comes all the same"
    );
    assert!(!Form::decode(b.form.load(Ordering::Relaxed)).closed);
    turn.pass(&y);
    b.finished(&mut x);
    assert_eq!(
        turn.wait_for_turn(&b, &mut z),
        READY,
        "z joined last: after y"
    );
    assert_eq!(z.position(), 2);
    turn.pass(&z);
    b.finished(&mut y);
    b.finished(&mut z);
    assert_eq!(
        turn.wait_for_turn(&b, &mut x),
        READY,
        "every member finished: x opens batch 2 and is first in it"
    );
    assert_eq!((x.batch(), x.position()), (2, 0));
}

/// A worker that left (away between transactions) does not hold a batch open, and one that
/// rejoined counts again: the batch waits for it until it joins (or the time is up).
#[test]
fn a_worker_away_does_not_hold_a_batch_and_counts_again_once_back() {
    let b = batches(64, 1_000_000);
    let (mut x, mut y) = (b.register(0), b.register(1));
    b.leave(&mut y);
    b.leave(&mut y);
    assert_eq!(b.join(&mut x), READY);
    b.executed(&x);
    assert_eq!(b.all_executed(&x), READY, "y is away: x alone is everyone");
    b.finished(&mut x);
    b.rejoin(&mut y);
    b.rejoin(&mut y);
    assert_eq!(b.join(&mut x), READY);
    assert_eq!(x.batch(), 2);
    b.executed(&x);
    assert_eq!(
        b.all_executed(&x),
        Poll::Pending,
        "y is back: it may still join"
    );
    assert_eq!(b.join(&mut y), READY);
    b.executed(&y);
    assert_eq!(b.all_executed(&x), READY);
    // Leaving while the others wait for it closes their batch at once.
    b.finished(&mut x);
    b.finished(&mut y);
    assert_eq!(b.join(&mut x), READY);
    b.executed(&x);
    assert_eq!(b.all_executed(&x), Poll::Pending);
    b.leave(&mut y);
    assert_eq!(
        b.all_executed(&x),
        READY,
        "y went away: the batch closed without it"
    );
}
