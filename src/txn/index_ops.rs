//! Inserts, deletes and phantom-safe index scans, built once for every protocol.
//!
//! # Rows: slots that are vacant or present
//!
//! Tables are preallocated, so a row's existence is part of its record's payload: a slot whose
//! first 8 bytes are zero is vacant ([`is_vacant`]). [`Txn::insert`] fills a vacant slot and
//! [`Txn::delete`] zeroes a present one, both as read-modify-writes of that record. Existence is
//! therefore data, and every protocol protects it exactly as it protects data: two inserts of one
//! slot conflict like two updates, and a reader of a vacant slot conflicts with its inserter.
//!
//! # Ordered indexes: next-key protection expressed as record accesses
//!
//! An entry `key -> rid` is *present* when the row in `rid` is present and carries `key`
//! ([`IndexSpec::key_of`](crate::storage::IndexSpec::key_of)), and *vacant* otherwise. An entry
//! is not transactional by itself: [`Txn::index_insert`] enters it at once and it stays even if
//! the attempt aborts (a vacant entry, which scans read and skip like a
//! deleted row, and which a later insert of the same key reuses), and [`Txn::index_remove`] takes
//! it out after the deleting attempt committed. Undoing an aborted attempt's entries would be
//! wrong: two attempts may insert one key concurrently, the loser's undo would take out the
//! entry the winner's row needs. What makes scans serializable is which records the scans
//! read and which records index changes write (ARIES/KVL's next-key locking, Mohan 1990, with the
//! locks replaced by the protocol's own record accesses, so it works unchanged for locking and
//! optimistic protocols alike):
//!
//! - A scan of `[lo, hi]` reads, through the protocol, every entry's record from `lo` up to and
//!   including the first *present* record after `hi` (its "next key"), vacant ones included.
//! - An insert of `k`, once `k` is entered (by this attempt, or already by an earlier one that
//!   aborted), read-modify-writes (rewrites unchanged) the records of the entries after `k` up
//!   to and including the first present one: its next key, and any vacant entries before it.
//! - A delete writes the deleted record itself (to vacant) and, when its entry is to leave the
//!   index ([`Txn::index_remove`]), the same path as an insert: the entries after it up to the
//!   first present one. The entry leaves the index only after the commit.
//!
//! Why this excludes phantoms: let a scan S of `[lo, hi]` and an inserter I of `k` in `[lo, hi]`
//! (or of a key below S's next key) both commit, S without seeing `k`. If `k` was in the index
//! when S walked past its position, S read `k`'s record (vacant), which I writes: the protocol
//! orders S before I. Otherwise `k` was entered after S walked past, by I or by an earlier
//! attempt that aborted, and I's path (the entries after `k` up to the first present one)
//! runs into S's path, which covers every entry of the range and continues to the first present
//! entry after it. Where the two meet, I writes what S read, so again S is ordered before I,
//! unless an entry on I's path changed between S's read and I's (an entry entered after S's
//! walk, or a row that became present or vacant), and then the transaction that changed it
//! wrote it, and S and I both conflict with that one: a cycle through S and I would be a cycle
//! of record conflicts, which every serializable protocol prevents. Both paths must end at a
//! *present* entry, not merely at the next entry: entries can be vacant (rows deleted and not
//! yet taken out, inserts whose attempt aborted), and their records may be read or written by
//! nobody else, so a path ending at one would lose the chain. A delete inside `[lo, hi]` writes
//! a record S read.
//!
//! The insert writes its path also when it finds `k` already entered. Whoever entered `k` may
//! have been an attempt that aborted (TPC-C's New-Order retries reuse their order id, hence
//! their keys), and its path writes were undone with it; a scan that walked the gap before that
//! attempt entered `k` read neither `k`'s record nor anything the committing retry would
//! otherwise write, so it could be ordered after the retry while missing `k`. (Found by review:
//! the phantom test drew a fresh key for every attempt; it now also retries with the same key,
//! and a unit test below replays the interleaving.)
//!
//! The delete's write of the path after the removed entry matters for protocols that may order a
//! transaction before another that committed earlier in real time (TicToc's logical commit
//! timestamps): once the entry is out of the index, a walk no longer reads the deleted record,
//! so nothing would stop such a walker from being ordered before the delete while seeing the
//! index after it. Reading the next present record, which the delete wrote, orders it after.
//! (Found by the phantom test: TicToc failed it without that write; next-key locking on delete
//! is also what ARIES/KVL prescribes.)
//!
//! "Where the two meet" needs S to have read the meeting record *before* I wrote it, and a walk
//! reads its records one after another while the index changes. Two changes break that:
//!
//! - an insert slipping in between a step's lookup and its read. So every step repeats its
//!   lookup after the read and moves on only if it finds the same entry (see
//!   `access_entry_at_or_after`).
//! - a vacant entry `v` that S read leaving the index (its delete had committed) before I walks
//!   its path, which then runs past the gone entry to the next present one, `p`: a record S
//!   reads only later, possibly after I's write. S is then ordered after I (it read I's write of
//!   `p`) yet missed `k`, and since S's read of `v` was of the deleter's committed version, no
//!   record conflict closes a cycle, and no protocol's validation can see it. (This was the Silo
//!   family's phantom of stops 21-23, found by logging every committed transaction of a failing
//!   run.) So a forward walk goes in *runs*, each from a position up to and including the first
//!   present entry, and once a run's records are read it checks that every vacant entry it read
//!   is still in the index; if one has left, the run is walked again (see `access_run`). After
//!   a passing check, an entry that leaves lets only inserts *later* than the run's read of `p`
//!   run past it, and their write of `p` then comes after that read. Only removals fail the
//!   check, and each entry leaves once, so in a quiet index the check always passes: a walk
//!   cannot livelock on it. (A first fix, stop 23, re-walked a run whenever *any* entry of it
//!   changed, inserts included, and livelocked WOUND_WAIT in the phantom test.) A backward walk
//!   (`scan_last`) reads the next key after its range first, so every record an insert's path
//!   can write was read before the insert could write it, and needs no check.
//!
//! The argument also needs a present entry after
//! every range: every index holds an end sentinel at [`END_SENTINEL_KEY`], and workloads usually
//! add one per partition (TPC-C: one per district) so that inserts at the tail of one partition
//! do not write records of the next.
//!
//! The ordered index also records leaf versions for Silo-style node-set validation
//! ([`crate::index::OrderedIndex::scan`]); the scans here do not use them, so one mechanism serves
//! all protocols. The price is an extra read-modify-write per indexed insert (of a record that a
//! concurrent scan of the same gap reads anyway) and reading vacant entries that are about to
//! leave the index.
//!
//! # Snapshot readers
//!
//! Under a multi-version protocol a transaction reads at a snapshot, and a snapshot taken before a
//! delete committed must still find the deleted row: if its entry left the index at the delete's
//! commit, such a scan would skip a row its snapshot holds (a phantom that the next-key argument
//! does not cover, since the scan does see the next key at its snapshot). So for a protocol that
//! reports a commit stamp ([`MultiVersion::snapshot_commit_stamp`](crate::protocol::parts::MultiVersion::snapshot_commit_stamp)) the handle keeps each committed
//! removal, with that stamp, in a per-worker queue, and takes the entry out only once the
//! protocol's [`MultiVersion::oldest_snapshot`](crate::protocol::parts::MultiVersion::oldest_snapshot) (its reclamation watermark) has reached the stamp: every
//! snapshot then sees the row vacant, as scans already treat vacant entries. The queue is drained
//! after every commit and at every begin of the same worker; entries still queued when the run
//! ends stay in the index, vacant.
//!
//! # Limits
//!
//! - A key deleted with [`Txn::index_remove`] must not be inserted again while that removal may
//!   still be pending (it takes out whatever entry holds the key, right after the delete's
//!   commit). TPC-C never reuses a deleted key; a workload that does can leave deleted rows'
//!   entries in place instead (they are vacant entries, as above).
//! - Entries of aborted inserts whose key is never inserted again stay as vacant entries.
//! - A key names one row: [`Txn::index_insert`] of a key that is indexed with another record id
//!   panics (a workload bug), whether or not that entry is present.
//! - Index operations are `async fn`s (not the small hand-written futures of reads and writes):
//!   they are several protocol calls each and not on YCSB's hot path.

use super::Txn;
use crate::protocol::{Abort, Protocol};
use crate::storage::{END_SENTINEL_KEY, IndexId, RecordId, TableId, is_vacant};
use std::ops::RangeInclusive;

impl<'db, P: Protocol> Txn<'db, P> {
    /// Inserts a row into the vacant slot `rid`: `fill` writes the row's bytes into a zeroed,
    /// payload-sized buffer, and must leave its first 8 bytes nonzero. Returns `false`, writing
    /// nothing new, when the slot holds a row already (a duplicate key).
    pub async fn insert<F: FnOnce(&mut [u8])>(
        &mut self,
        table: TableId,
        rid: RecordId,
        fill: F,
    ) -> Result<bool, Abort> {
        self.update(table, rid, |buf| {
            if !is_vacant(buf) {
                return false;
            }
            fill(buf);
            assert!(!is_vacant(buf), "an inserted row must not look vacant");
            true
        })
        .await
    }

    /// Deletes the row in slot `rid` (zeroes it). Returns `false` when the slot was vacant.
    pub async fn delete(&mut self, table: TableId, rid: RecordId) -> Result<bool, Abort> {
        self.update(table, rid, |buf| {
            if is_vacant(buf) {
                return false;
            }
            buf.fill(0);
            true
        })
        .await
    }

    /// Enters `key -> rid` into `index` (`rid` should be a row this attempt inserted) and writes
    /// the path after it (the next key's record, and any vacant entries' records before it),
    /// which is what makes a concurrent scan of the gap conflict with this insert (module docs).
    /// The entry stays if the attempt aborts.
    ///
    /// Returns `true` when this call entered the entry, `false` when `key -> rid` was there
    /// already (left by an earlier attempt that aborted, typically this transaction's own
    /// previous attempt). The path is written in both cases: a scan may have walked the gap
    /// before the earlier attempt entered the key, and then only the path connects it to this
    /// insert.
    ///
    /// Panics when `key` is indexed with another record id: a key names one row, so that is a
    /// workload bug.
    pub async fn index_insert(
        &mut self,
        index: IndexId,
        key: u64,
        rid: RecordId,
    ) -> Result<bool, Abort> {
        assert!(key != END_SENTINEL_KEY, "key u64::MAX is the end sentinel");
        let ix = &self.indexes[index.0 as usize];
        let entered = loop {
            if ix.map.insert(key, rid).is_ok() {
                break true;
            }
            // The entry can leave between the failed insert and this lookup only through a
            // removal after a delete's commit (which the module docs' limits rule out for keys
            // being inserted); then enter it again.
            if let Some(existing) = ix.map.get(key) {
                assert_eq!(
                    existing, rid,
                    "index {} already maps key {key} to another record (a key names one row)",
                    ix.spec.name
                );
                break false;
            }
        };
        self.rewrite_path_after(index, key).await?;
        Ok(entered)
    }

    /// Takes `key` out of `index` once this attempt commits (the row itself is deleted with
    /// [`delete`](Self::delete)); nothing happens if it aborts. Writes the path after `key` now,
    /// as an insert does (module docs).
    pub async fn index_remove(&mut self, index: IndexId, key: u64) -> Result<(), Abort> {
        assert!(key != END_SENTINEL_KEY, "the end sentinel stays");
        self.rewrite_path_after(index, key).await?;
        self.index_removals.push((index, key));
        Ok(())
    }

    /// Read-modify-writes (unchanged) the records of the entries after `key` up to and including
    /// the first present one.
    async fn rewrite_path_after(&mut self, index: IndexId, key: u64) -> Result<(), Abort> {
        self.access_run(index, key + 1, true).await?;
        Ok(())
    }

    /// The smallest key in `range` whose row is present, and its record id; `None` when the
    /// range holds no present row. Phantom-safe (module docs): reads every entry from the range's
    /// start to the answer, or to the first present row after the range.
    pub async fn scan_first(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> Result<Option<(u64, RecordId)>, Abort> {
        let (lo, hi) = range.into_inner();
        let (key, rid, present) = self.access_run(index, lo, false).await?;
        Ok((present && key <= hi).then_some((key, rid)))
    }

    /// The greatest key in `range` whose row is present, and its record id; `None` when there is
    /// none. Phantom-safe: reads the first present row after the range (its next key), then
    /// every entry from the range's end down to the answer.
    pub async fn scan_last(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
    ) -> Result<Option<(u64, RecordId)>, Abort> {
        let (lo, hi) = range.into_inner();
        if hi < END_SENTINEL_KEY {
            self.read_next_present(index, hi + 1).await?;
        }
        let ix = &self.indexes[index.0 as usize];
        let (table, key_of) = (ix.spec.table, ix.spec.key_of);
        let mut top = hi;
        while let Some((key, rid)) = ix.map.last_at_or_before(lo..=top) {
            // A retired slot's entry is vacant for good (see `access_entry_at_or_after`).
            let present = !self.tables[table.0 as usize].is_retired(rid) && {
                let row = self.read(table, rid).await?;
                !is_vacant(row) && key_of(row) == key
            };
            if ix.map.last_at_or_before(lo..=top) != Some((key, rid)) {
                continue; // an entry appeared above `key` meanwhile: read it first
            }
            if present {
                return Ok(Some((key, rid)));
            }
            if key == lo {
                break;
            }
            top = key - 1;
        }
        Ok(None)
    }

    /// Appends to `out` every present row's key and record id in `range`, in key order.
    /// Phantom-safe: reads every entry of the range and the first present row after it.
    pub async fn scan(
        &mut self,
        index: IndexId,
        range: RangeInclusive<u64>,
        out: &mut Vec<(u64, RecordId)>,
    ) -> Result<(), Abort> {
        let (lo, hi) = range.into_inner();
        let mut at = lo;
        loop {
            // A run ends at a present entry or at the end sentinel.
            let (key, rid, present) = self.access_run(index, at, false).await?;
            if key > hi {
                return Ok(());
            }
            if present {
                out.push((key, rid));
            }
            if key == END_SENTINEL_KEY {
                return Ok(());
            }
            at = key + 1;
        }
    }

    /// Reads entries from `at` upwards until a present row (the next key of a range ending
    /// before `at`): one run.
    async fn read_next_present(&mut self, index: IndexId, at: u64) -> Result<(), Abort> {
        self.access_run(index, at, false).await?;
        Ok(())
    }

    /// Reads (or, with `rewrite`, read-modify-writes unchanged) the records of one *run*: the
    /// entries from `at` up to and including the first present one (or the end sentinel), and
    /// returns that last entry's key, record id and whether it is present (the end sentinel
    /// counts as present).
    ///
    /// Once the run's records are read, every vacant entry it read must still be in the index
    /// with the same record; if one has left (its delete committed and took it out), the run is
    /// walked again from `at` (module docs, "Why this excludes phantoms": an insert below the
    /// gone entry may have written the run's present entry, through a path that skipped the
    /// entry, before this walk read it). A re-walk does not access a record again that this
    /// call already accessed for the same entry: it takes the first access's answer, which the
    /// protocol keeps (validates, locks or reads at the snapshot), and a protocol may refuse a
    /// second access (twopl_er). Records read by a discarded walk stay in the read set:
    /// harmless, at worst a needless conflict. Entries into retired slots are not read, and no
    /// insert's path writes them either, so they are not checked. Only removals fail the check,
    /// and an entry leaves once: the number of re-walks is bounded by the removals in the run's
    /// range while it is walked.
    async fn access_run(
        &mut self,
        index: IndexId,
        at: u64,
        rewrite: bool,
    ) -> Result<(u64, RecordId, bool), Abort> {
        // Entries this call has accessed, with what it found: a re-walk takes an entry it meets
        // again from here instead of accessing its record a second time. The first access is
        // what the protocol keeps (validated at commit, or locked, or at the snapshot), so its
        // answer stands; and a protocol may refuse a second access (twopl_er releases a read
        // lock at the read and panics on a second read of the record).
        // Only a re-walk looks here (a pass meets each entry once), so the first pass pays no
        // extra lookup.
        self.run_seen.clear();
        let mut rewalk = false;
        loop {
            self.run_vacant.clear();
            let mut from = at;
            let last = loop {
                let seen = if rewalk {
                    let next = self.indexes[index.0 as usize]
                        .map
                        .first_at_or_after(from)
                        .expect("every index holds its end sentinel at u64::MAX");
                    self.run_seen
                        .iter()
                        .find(|&&(key, rid, _)| (key, rid) == next)
                        .map(|&(key, rid, present)| (key, rid, present, true))
                } else {
                    None
                };
                let (key, rid, present, read) = match seen {
                    Some(entry) => entry,
                    None => {
                        let entry = self.access_entry_at_or_after(index, from, rewrite).await?;
                        if entry.3 {
                            self.run_seen.push((entry.0, entry.1, entry.2));
                        }
                        entry
                    }
                };
                if present || key == END_SENTINEL_KEY {
                    break (key, rid, present);
                }
                if read {
                    self.run_vacant.push((key, rid));
                }
                from = key + 1;
            };
            let map = &self.indexes[index.0 as usize].map;
            if self
                .run_vacant
                .iter()
                .all(|&(key, rid)| map.get(key) == Some(rid))
            {
                return Ok(last);
            }
            rewalk = true;
        }
    }

    /// Reads (or, with `rewrite`, read-modify-writes unchanged) through the protocol the record
    /// of the first entry at or after `at`, and returns its key, record id, whether the entry
    /// is present (its row is present and carries the entry's key, see [`IndexSpec::key_of`](crate::storage::IndexSpec::key_of);
    /// the end sentinel always counts as present), and whether its record was read (not for an
    /// entry into a retired slot). One step of a run (`access_run`).
    ///
    /// The index lookup and the protocol's read are two steps, and an insert may slip between
    /// them: the walk finds `s`, an inserter enters `k < s` and writes `s` and commits, and only
    /// then the walk reads `s` (its new version, so nothing fails validation later) — having
    /// missed `k`. So after the read the lookup is repeated, and the walk moves on only when it
    /// still finds the record it read; otherwise it reads the newcomer first. An insert entered
    /// after the repeated lookup writes `s` after this read, which the protocol then orders (the
    /// inserter enters its key before writing the next key's record, and the read of `s`
    /// happens before the second lookup). Records read by a discarded lookup stay in the
    /// read set (harmless: at worst a needless conflict). An inserter's path is re-checked the
    /// same way.
    async fn access_entry_at_or_after(
        &mut self,
        index: IndexId,
        at: u64,
        rewrite: bool,
    ) -> Result<(u64, RecordId, bool, bool), Abort> {
        let ix = &self.indexes[index.0 as usize];
        let key_of = ix.spec.key_of;
        let first = || {
            ix.map
                .first_at_or_after(at)
                .expect("every index holds its end sentinel at u64::MAX")
        };
        let mut entry = first();
        loop {
            if self.tables[ix.spec.table.0 as usize].is_retired(entry.1) {
                // An entry into a retired slot (`storage/retire.rs`): its row was deleted and
                // can never be filled again, so it is vacant for good and nobody accesses its
                // record; only an attempt that aborted can have left it (an insert of a key
                // whose delete had already committed). Skipped like the vacant entry it is.
                return Ok((entry.0, entry.1, false, false));
            }
            let key = entry.0;
            let holds =
                |row: &[u8]| !is_vacant(row) && (key == END_SENTINEL_KEY || key_of(row) == key);
            let present = if rewrite {
                self.update(ix.spec.table, entry.1, |row| holds(row))
                    .await?
            } else {
                holds(self.read(ix.spec.table, entry.1).await?)
            };
            let again = first();
            if again == entry {
                return Ok((entry.0, entry.1, present, true));
            }
            entry = again;
        }
    }

    /// Applies the committed attempt's deletes to the indexes: at once, or for a multi-version
    /// protocol once no snapshot older than the delete remains (module docs, "Snapshot readers").
    pub(super) fn apply_index_removals(&mut self) {
        let snapshot_stamp =
            P::MULTI_VERSION.map(|mv| mv.snapshot_commit_stamp(self.protocol, &self.worker));
        match snapshot_stamp {
            None => {
                for k in 0..self.index_removals.len() {
                    let (index, key) = self.index_removals[k];
                    self.remove_entry(index, key);
                }
                self.index_removals.clear();
            }
            Some(stamp) => {
                for (index, key) in self.index_removals.drain(..) {
                    self.deferred_removals.push_back((stamp, index, key));
                }
            }
        }
        self.apply_deferred_removals();
    }

    /// Takes out the deferred entries whose delete every running snapshot sees.
    pub(super) fn apply_deferred_removals(&mut self) {
        if self.deferred_removals.is_empty() {
            return;
        }
        let horizon = P::MULTI_VERSION.map_or(u64::MAX, |mv| mv.oldest_snapshot(self.protocol));
        while let Some(&(stamp, index, key)) = self.deferred_removals.front() {
            if stamp > horizon {
                break;
            }
            self.remove_entry(index, key);
            self.deferred_removals.pop_front();
        }
    }

    /// Takes `key` out of `index` after its row's delete committed (and, for a snapshot
    /// protocol, every older snapshot ended), and retires the row's slot if its table retires
    /// deleted slots (`storage/retire.rs`): nothing can find the slot through the index any
    /// more, and the workload never fills it again.
    fn remove_entry(&mut self, index: IndexId, key: u64) {
        let ix = &self.indexes[index.0 as usize];
        if let Some((rid, _)) = ix.map.remove(key) {
            self.tables[ix.spec.table.0 as usize].retire_slot(rid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::silo::Silo;
    use crate::protocol::tictoc::TicToc;
    use crate::protocol::twopl::NoWait;
    use crate::protocol::{AttemptStart, ProtocolOptions};
    use crate::storage::{Database, IndexSpec, TableSpec};
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    const T: TableId = TableId(0);
    const IX: IndexId = IndexId(0);
    /// Slot of the end sentinel.
    const END: u64 = 9;

    /// Rows hold `key + 1` in their first word (so key 0 is not vacant).
    fn row(key: u64) -> [u8; 8] {
        (key + 1).to_le_bytes()
    }

    /// Ten slots; slots 1, 3, 5 present and indexed under keys 10, 30, 50; the end sentinel in
    /// slot 9.
    fn db<M: Default>() -> Database<M> {
        let db = Database::with_indexes(
            &[TableSpec {
                name: "t".into(),
                records: 10,
                payload_bytes: 8,
            }],
            &[IndexSpec {
                name: "t".into(),
                table: T,
                key_of: |r| u64::from_le_bytes(r[..8].try_into().unwrap()) - 1,
            }],
        );
        let index = &db.ordered_index(IX).map;
        for (slot, key) in [(1, 10), (3, 30), (5, 50)] {
            db.table(T)
                .get(RecordId(slot))
                .unwrap()
                .payload
                .store(&row(key));
            index.insert(key, RecordId(slot)).unwrap();
        }
        db.table(T)
            .get(RecordId(END))
            .unwrap()
            .payload
            .store(&row(END_SENTINEL_KEY - 1));
        index.insert(END_SENTINEL_KEY, RecordId(END)).unwrap();
        db
    }

    /// Polls a future that must not wait (one worker, no conflicts).
    fn now<F: Future>(fut: F) -> F::Output {
        let mut fut = std::pin::pin!(fut);
        match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(out) => out,
            Poll::Pending => panic!("a lone worker never waits"),
        }
    }

    #[test]
    fn scans_find_present_rows_and_skip_vacant_entries() {
        let p = Silo::new(&ProtocolOptions::default());
        let db = db();
        let mut tx = Txn::new(&p, &db, 0, false);
        tx.begin(AttemptStart::FIRST);
        let mut found = Vec::new();
        now(tx.scan(IX, 0..=49, &mut found)).unwrap();
        assert_eq!(found, [(10, RecordId(1)), (30, RecordId(3))]);
        assert_eq!(now(tx.scan_first(IX, 11..=60)), Ok(Some((30, RecordId(3)))));
        assert_eq!(now(tx.scan_last(IX, 0..=49)), Ok(Some((30, RecordId(3)))));
        assert_eq!(now(tx.scan_first(IX, 51..=99)), Ok(None));
        assert_eq!(now(tx.scan_last(IX, 0..=9)), Ok(None));
        // A deleted row's entry stays until commit, and scans skip it.
        assert_eq!(now(tx.delete(T, RecordId(3))), Ok(true));
        now(tx.index_remove(IX, 30)).unwrap();
        assert_eq!(now(tx.scan_first(IX, 11..=60)), Ok(Some((50, RecordId(5)))));
        assert!(db.ordered_index(IX).map.get(30).is_some());
        assert_eq!(tx.poll_commit(), Poll::Ready(Ok(())));
        tx.committed();
        assert_eq!(
            db.ordered_index(IX).map.get(30),
            None,
            "removed after commit"
        );
    }

    #[test]
    fn an_aborted_insert_leaves_a_vacant_entry_that_a_later_insert_reuses() {
        let p = Silo::new(&ProtocolOptions::default());
        let db = db();
        let mut tx = Txn::new(&p, &db, 0, false);
        tx.begin(AttemptStart::FIRST);
        assert_eq!(
            now(tx.insert(T, RecordId(2), |b| b.copy_from_slice(&row(20)))),
            Ok(true)
        );
        assert_eq!(now(tx.index_insert(IX, 20, RecordId(2))), Ok(true));
        tx.aborted(Abort::User);
        assert_eq!(
            db.ordered_index(IX).map.get(20),
            Some(RecordId(2)),
            "entry stays"
        );
        tx.begin(AttemptStart::FIRST);
        let mut found = Vec::new();
        now(tx.scan(IX, 0..=49, &mut found)).unwrap();
        assert_eq!(
            found,
            [(10, RecordId(1)), (30, RecordId(3))],
            "but is vacant"
        );
        assert_eq!(
            now(tx.insert(T, RecordId(2), |b| b.copy_from_slice(&row(20)))),
            Ok(true)
        );
        assert_eq!(
            now(tx.index_insert(IX, 20, RecordId(2))),
            Ok(false),
            "reused"
        );
        assert_eq!(tx.poll_commit(), Poll::Ready(Ok(())));
        tx.committed();
        tx.begin(AttemptStart::FIRST);
        found.clear();
        now(tx.scan(IX, 0..=49, &mut found)).unwrap();
        assert_eq!(
            found,
            [(10, RecordId(1)), (20, RecordId(2)), (30, RecordId(3))]
        );
        // Inserting into a present slot is refused and changes nothing.
        assert_eq!(now(tx.insert(T, RecordId(2), |b| b.fill(7))), Ok(false));
    }

    #[test]
    fn an_entry_whose_slot_holds_another_key_counts_as_vacant() {
        let p = Silo::new(&ProtocolOptions::default());
        let db = db();
        // A stale entry (key 40) pointing at slot 5, which holds key 50.
        db.ordered_index(IX).map.insert(40, RecordId(5)).unwrap();
        let mut tx = Txn::new(&p, &db, 0, false);
        tx.begin(AttemptStart::FIRST);
        assert_eq!(now(tx.scan_first(IX, 31..=45)), Ok(None));
        assert_eq!(now(tx.scan_last(IX, 31..=59)), Ok(Some((50, RecordId(5)))));
    }

    /// An insert writes its next key: a concurrent scan that read that record fails validation
    /// (Silo) once the insert commits, although it never saw the new key.
    #[test]
    fn an_insert_into_a_scanned_gap_fails_the_scan() {
        let p = Silo::new(&ProtocolOptions {
            threads: 2,
            ..ProtocolOptions::default()
        });
        let db = db();
        let mut scan = Txn::new(&p, &db, 0, false);
        let mut insert = Txn::new(&p, &db, 1, false);
        scan.begin(AttemptStart::FIRST);
        let mut found = Vec::new();
        now(scan.scan(IX, 11..=29, &mut found)).unwrap();
        assert!(found.is_empty());
        assert_eq!(now(scan.write(T, RecordId(8), &row(80))), Ok(()));
        insert.begin(AttemptStart::FIRST);
        assert_eq!(
            now(insert.insert(T, RecordId(2), |b| b.copy_from_slice(&row(20)))),
            Ok(true)
        );
        assert_eq!(now(insert.index_insert(IX, 20, RecordId(2))), Ok(true));
        assert_eq!(insert.poll_commit(), Poll::Ready(Ok(())));
        insert.committed();
        assert_eq!(scan.poll_commit(), Poll::Ready(Err(Abort::ReadValidation)));
    }

    /// The insert-retry interleaving: scan S walks the gap `11..=29` while it is empty; inserter
    /// I's first attempt enters key 20 (row in slot 2), writes (or fails to write) its next key
    /// and aborts, leaving a vacant entry; I's retry inserts the same key and row, finds the
    /// entry already there, increments a counter (slot 7) and commits; then S reads the counter
    /// and commits. If both commit, S must serialize before I (it missed key 20), yet it read
    /// I's counter: a phantom, unless the retry also wrote the path after its key, which S read.
    /// Returns the retry's outcome (its operations and commit) and S's commit.
    fn retry_into_a_scanned_gap<P: Protocol>(p: &P) -> (Result<(), Abort>, Result<(), Abort>) {
        let db = db();
        let mut scan = Txn::new(p, &db, 0, false);
        let mut insert = Txn::new(p, &db, 1, false);
        scan.begin(AttemptStart::FIRST);
        let mut found = Vec::new();
        now(scan.scan(IX, 11..=29, &mut found)).unwrap();
        assert!(found.is_empty());

        insert.begin(AttemptStart::FIRST);
        assert_eq!(
            now(insert.insert(T, RecordId(2), |b| b.copy_from_slice(&row(20)))),
            Ok(true)
        );
        // Enters key 20 whether or not the path write succeeds (a lock conflict with S).
        let first = now(insert.index_insert(IX, 20, RecordId(2)));
        assert_eq!(db.ordered_index(IX).map.get(20), Some(RecordId(2)));
        insert.aborted(first.err().unwrap_or(Abort::User));

        insert.begin(AttemptStart::RETRY);
        let retry = now(async {
            let inserted = insert
                .insert(T, RecordId(2), |b| b.copy_from_slice(&row(20)))
                .await?;
            assert!(inserted, "the first attempt's row was rolled back");
            let entered = insert.index_insert(IX, 20, RecordId(2)).await?;
            assert!(!entered, "the first attempt's entry is reused");
            insert
                .update(T, RecordId(7), |b| b.copy_from_slice(&row(70)))
                .await
        })
        .and_then(|()| match insert.poll_commit() {
            Poll::Ready(out) => out,
            Poll::Pending => panic!("nothing to wait for"),
        });
        match retry {
            Ok(()) => insert.committed(),
            Err(why) => insert.aborted(why),
        }

        let counter = now(scan.read(T, RecordId(7))).map(<[u8]>::to_vec);
        let scanned = counter.and_then(|c| {
            assert!(
                retry.is_err() || c == row(70),
                "S reads the retry's counter"
            );
            match scan.poll_commit() {
                Poll::Ready(out) => out,
                Poll::Pending => panic!("nothing to wait for"),
            }
        });
        (retry, scanned)
    }

    /// Optimistic protocols: the retry commits and S fails validation on I's next key.
    #[test]
    fn a_retried_insert_into_a_scanned_gap_fails_the_scan() {
        let opts = ProtocolOptions {
            threads: 2,
            ..ProtocolOptions::default()
        };
        let (retry, scan) = retry_into_a_scanned_gap(&Silo::new(&opts));
        assert_eq!((retry, scan), (Ok(()), Err(Abort::ReadValidation)), "silo");
        let (retry, scan) = retry_into_a_scanned_gap(&TicToc::new(&opts));
        assert_eq!(
            (retry, scan),
            (Ok(()), Err(Abort::ReadValidation)),
            "tictoc"
        );
    }

    /// A locking protocol: the retry conflicts with S's lock on its next key, as the first
    /// attempt did, and S commits.
    #[test]
    fn a_retried_insert_into_a_locked_gap_conflicts() {
        let opts = ProtocolOptions {
            threads: 2,
            ..ProtocolOptions::default()
        };
        let (retry, scan) = retry_into_a_scanned_gap(&NoWait::new(&opts).unwrap());
        assert!(retry.is_err(), "no_wait: the retry committed");
        assert_eq!(scan, Ok(()), "no_wait");
    }

    /// A vacant entry taken out of the index in the middle of a walk (stop 23's phantom, found
    /// by logging every committed Silo transaction of a failing `tests/phantom_serializable.rs`
    /// run). Deleter D has committed key 30's delete but not yet taken its entry out; scan S
    /// reads 30's record (vacant) and moves on to 50, whose record a committer holds, so S
    /// waits there; D takes 30 out; inserter I enters 20, whose path now runs past the gone
    /// entry straight to 50, and commits; S then reads I's version of 50. S has read I's write,
    /// so it serializes after I and must see key 20, although its step at 11 found 30 first.
    /// The record-level history has no cycle here (S's read of 30 is of D's committed version),
    /// so no protocol's validation catches it: the walk itself must notice that the vacant entry
    /// it walked through (30) has left the index, and walk that run again. On the walk without
    /// the run check (stop 23's tree) `found` is `[(50, RecordId(5))]`.
    #[test]
    fn a_vacant_entry_taken_out_mid_walk_does_not_hide_a_later_insert() {
        let p = Silo::new(&ProtocolOptions {
            threads: 3,
            ..ProtocolOptions::default()
        });
        let db = db();
        let mut delete = Txn::new(&p, &db, 0, false);
        let mut scan = Txn::new(&p, &db, 1, false);
        let mut insert = Txn::new(&p, &db, 2, false);
        delete.begin(AttemptStart::FIRST);
        assert_eq!(now(delete.delete(T, RecordId(3))), Ok(true));
        now(delete.index_remove(IX, 30)).unwrap();
        assert_eq!(delete.poll_commit(), Poll::Ready(Ok(())));
        // 50's record locked, as by a committer installing it: S's walk waits there.
        let meta = db.table(T).get(RecordId(5)).unwrap().meta();
        let seen = meta.load();
        assert!(meta.try_lock(seen));

        scan.begin(AttemptStart::FIRST);
        let mut found = Vec::new();
        {
            let mut walk = std::pin::pin!(scan.scan(IX, 11..=60, &mut found));
            let mut cx = Context::from_waker(Waker::noop());
            assert!(walk.as_mut().poll(&mut cx).is_pending(), "S waits at 50");
            delete.committed();
            assert_eq!(db.ordered_index(IX).map.get(30), None, "30 taken out");
            meta.store(seen);
            insert.begin(AttemptStart::FIRST);
            assert_eq!(
                now(insert.insert(T, RecordId(2), |b| b.copy_from_slice(&row(20)))),
                Ok(true)
            );
            assert_eq!(now(insert.index_insert(IX, 20, RecordId(2))), Ok(true));
            assert_eq!(insert.poll_commit(), Poll::Ready(Ok(())));
            insert.committed();
            assert_eq!(walk.as_mut().poll(&mut cx), Poll::Ready(Ok(())));
        }
        assert_eq!(
            found,
            [(20, RecordId(2)), (50, RecordId(5))],
            "S read I's write of 50, so it must see I's key 20"
        );
        assert_eq!(scan.poll_commit(), Poll::Ready(Ok(())));
    }

    /// A key names one row: entering it for another record is a workload bug.
    #[test]
    #[should_panic(expected = "index t already maps key 30 to another record")]
    fn a_key_indexed_with_another_record_panics() {
        let p = Silo::new(&ProtocolOptions::default());
        let db = db();
        let mut tx = Txn::new(&p, &db, 0, false);
        tx.begin(AttemptStart::FIRST);
        let _ = now(tx.index_insert(IX, 30, RecordId(2)));
    }
}
