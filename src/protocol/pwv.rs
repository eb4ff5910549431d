//! PWV, piece-wise visibility (Faleiro, Abadi and Hellerstein, VLDB 2017): BOHM's placed
//! versions with *early write visibility*. A write becomes visible to the transactions bound to
//! it as soon as its transaction has passed its *commit point* (it can no longer abort), before
//! the writer finishes; a transaction that read such a write commits only after its writer has
//! (the commit dependency that keeps the execution recoverable).
//!
//! PWV runs on BOHM's engine ([`PlacedVersions`](super::bohm::PlacedVersions) with
//! `EARLY = true`): the same batches, the same concurrency-control phase (each member, in batch
//! order, binds every declared read to the record's last writer and places a placeholder for
//! every record it writes), the same reads that wait (`Pending`) for the version they are bound
//! to, the same version storage ([`super::bohm`]'s module docs say how). What differs:
//!
//! - **The commit point.** Nothing but its own logic (a user abort) aborts a member: the
//!   protocol has no concurrency-control aborts. On a workload whose transactions never abort by
//!   their own logic (`ProtocolOptions::user_aborts` false: YCSB, long-scan, write-skew,
//!   shifting), a member is past its commit point as soon as it is placed. On one whose
//!   transactions may (TPC-C), the commit point is the end of the program, its commit: the
//!   program model cannot say where its last abort decision is (below). Interactive sessions
//!   (`txbench serve`, `run --interactive`) always put it at the commit: a client may abort
//!   any transaction or vanish mid-way, and a write made visible could not be undone.
//! - **Early visibility.** Past the commit point, each write of a record with a placeholder is
//!   installed at the write, if the record's previous version is installed already (versions of
//!   a record are installed in timestamp order, as BOHM's); otherwise it is installed at commit,
//!   as BOHM's are. Readers bound to it go on at once ([`super::wake`] wakes the parked ones).
//! - **The commit dependency.** A member that read a version of a member of its own batch
//!   (earlier batches have ended) commits only once that member's attempt has ended: a
//!   per-position word of the batch holds the timestamp of the last member at that position
//!   that ended. The reader's commit answers `Pending` until then; no cycle, as a member only
//!   reads from members placed before it.
//!
//! Why it is serializable: as BOHM, every read sees the version of the last writer before it in
//! timestamp order and each record's versions are installed in timestamp order; early
//! visibility only changes *when* a bound version appears, never which one a read is bound to.
//! A version made visible early is the writer's final one: past its commit point the writer
//! cannot abort, and it writes the record no more (below).
//!
//! # Where this differs from the paper
//!
//! | the paper | here | why |
//! | --- | --- | --- |
//! | transactions are split into pieces; a piece's writes become visible when the piece has run | each write is its own piece: visible at the write | txbench's programs are not split into pieces; one write per record makes a write final when it is made |
//! | the commit point is the piece after which no abort can come (after the abort checks) | placement where the workload has no user aborts; the commit otherwise (TPC-C: PWV behaves as BOHM there) | a program does not say where its last abort decision is; TPC-C's New-Order can roll back after its district write (its order slots or storage run out) |
//! | pieces are scheduled by their dependencies, with no per-record order of installs | a write whose record's previous version is not installed yet is made visible at commit | the shared version storage keeps a record's versions in timestamp order (BOHM's deviation) |
//! | the concurrency-control phase of one batch is pipelined with the execution of the one before | batches are sequential | the batch layer's rule |
//! | commit dependencies keep the execution recoverable across failures | a reader's commit waits for its writers' ends | txbench does not fail mid-run: every placed member runs to its end, so the wait orders commits but never changes an outcome (a unit test shows it, the checker cannot) |
//!
//! A program run under PWV writes each declared record at most once (every workload that
//! declares its sets does: YCSB draws distinct keys); a second write of a record whose version it
//! made visible already is a workload bug, and panics naming it, as an undeclared access does in
//! check mode. A second write of the same bytes changes nothing and is skipped: an ordered
//! index's next-key path rewrites records unchanged, and may meet a record the attempt has
//! written (an insert's slot, behind an older entry into it that an aborted attempt left). Records reached through a cover (TPC-C's inserted rows) have no placeholder and
//! are installed at commit, as BOHM's.

pub use super::bohm::{Pwv, PwvWorker};
