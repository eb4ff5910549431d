//! Tests of the ordered index: model-based (against `BTreeMap`), phantom detection driven step by
//! step on one thread, a multi-threaded stress test, and an `#[ignore]`d throughput measurement.

use super::*;
use crate::random::FastRng;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn r(x: u64) -> RecordId {
    RecordId(x)
}

fn scan_vec(ix: &OrderedIndex, range: RangeInclusive<u64>, limit: Option<usize>) -> Vec<u64> {
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    ix.scan(range, limit, &mut out, &mut obs);
    out.into_iter().map(|(k, _)| k).collect()
}

fn all_valid(ix: &OrderedIndex, obs: &[LeafVersion]) -> bool {
    obs.iter().all(|lv| ix.validate(lv))
}

/// An index holding `keys` (key -> rid key+1000), spread over several leaves.
fn index_with(keys: impl IntoIterator<Item = u64>) -> OrderedIndex {
    let ix = OrderedIndex::new();
    for k in keys {
        ix.insert(k, r(k + 1000)).unwrap();
    }
    ix
}

#[test]
fn insert_get_remove_and_duplicates() {
    let ix = OrderedIndex::new();
    assert!(ix.is_empty());
    ix.insert(42, r(7)).unwrap();
    assert_eq!(ix.get(42), Some(r(7)));
    assert_eq!(ix.get(41), None);
    assert_eq!(ix.insert(42, r(8)), Err(Duplicate { key: 42 }));
    assert_eq!(ix.get(42), Some(r(7)), "a failed insert changes nothing");
    assert_eq!(ix.len(), 1);
    assert_eq!(ix.remove(42).map(|(rid, _)| rid), Some(r(7)));
    assert!(ix.remove(42).is_none());
    assert_eq!(ix.get(42), None);
    ix.insert(u64::MAX, r(1)).unwrap();
    ix.insert(0, r(2)).unwrap();
    assert_eq!(scan_vec(&ix, 0..=u64::MAX, None), vec![0, u64::MAX]);
    ix.check_structure();
}

#[test]
fn random_operations_match_a_btreemap() {
    for seed in 0..4 {
        let mut rng = FastRng::new(seed);
        let ix = OrderedIndex::new();
        let mut model = BTreeMap::new();
        // A small key space forces collisions, removals of present keys and many splits.
        let space = [300, 5_000, 100_000, u64::MAX][seed as usize];
        for step in 0..20_000u64 {
            let k = rng.below(space);
            match rng.below(10) {
                0..=5 => {
                    let expect = match model.entry(k) {
                        std::collections::btree_map::Entry::Occupied(_) => {
                            Err(Duplicate { key: k })
                        }
                        std::collections::btree_map::Entry::Vacant(e) => {
                            e.insert(step);
                            Ok(())
                        }
                    };
                    assert_eq!(ix.insert(k, r(step)).map(|_| ()), expect);
                }
                6..=7 => {
                    assert_eq!(ix.remove(k).map(|(rid, _)| rid.0), model.remove(&k));
                }
                8 => assert_eq!(ix.get(k).map(|x| x.0), model.get(&k).copied()),
                _ => {
                    let hi = k.saturating_add(rng.below(space / 10 + 2));
                    let limit = rng.chance(0.5).then(|| rng.below(40) as usize);
                    let (mut out, mut obs) = (Vec::new(), Vec::new());
                    ix.scan(k..=hi, limit, &mut out, &mut obs);
                    let want: Vec<(u64, RecordId)> = model
                        .range(k..=hi)
                        .take(limit.unwrap_or(usize::MAX))
                        .map(|(&k, &v)| (k, r(v)))
                        .collect();
                    assert_eq!(out, want);
                    assert!(!obs.is_empty() || limit == Some(0));
                    assert!(all_valid(&ix, &obs));
                    let (mut rev, mut obs) = (Vec::new(), Vec::new());
                    ix.scan_reverse(k..=hi, limit, &mut rev, &mut obs);
                    let want: Vec<(u64, RecordId)> = model
                        .range(k..=hi)
                        .rev()
                        .take(limit.unwrap_or(usize::MAX))
                        .map(|(&k, &v)| (k, r(v)))
                        .collect();
                    assert_eq!(rev, want);
                    assert!(all_valid(&ix, &obs));
                    let mut obs = Vec::new();
                    let first = model.range(k..=hi).next().map(|(&k, &v)| (k, r(v)));
                    assert_eq!(ix.first_in_range(k..=hi, &mut obs), first);
                    let last = model.range(k..=hi).next_back().map(|(&k, &v)| (k, r(v)));
                    assert_eq!(ix.last_in_range(k..=hi, &mut obs), last);
                    let next = model
                        .range(k.saturating_add(1)..)
                        .next()
                        .filter(|_| k < u64::MAX)
                        .map(|(&k, &v)| (k, r(v)));
                    assert_eq!(ix.next_key_after(k), next);
                }
            }
        }
        let keys = ix.check_structure();
        assert_eq!(keys, model.keys().copied().collect::<Vec<_>>());
        assert_eq!(ix.len(), model.len() as u64);
        for (&k, &v) in &model {
            assert_eq!(ix.get(k), Some(r(v)));
        }
    }
}

#[test]
fn splits_keep_order_ascending_and_descending() {
    let n = 20 * LEAF_CAPACITY as u64;
    let up = index_with(0..n);
    assert_eq!(up.check_structure(), (0..n).collect::<Vec<_>>());
    // Appends split 64/1, so ascending inserts leave full leaves behind.
    assert_eq!(up.leaf_count() as u64, n / LEAF_CAPACITY as u64);
    let down = index_with((0..n).rev().map(|k| k * 7));
    assert_eq!(
        down.check_structure(),
        (0..n).map(|k| k * 7).collect::<Vec<_>>()
    );
    assert!(down.leaf_count() > 20);
    assert_eq!(scan_vec(&down, 70..=140, Some(3)), vec![70, 77, 84]);
}

#[test]
fn scans_with_limits_and_empty_ranges() {
    let ix = index_with((0..1000).map(|k| k * 10));
    assert_eq!(scan_vec(&ix, 15..=55, None), vec![20, 30, 40, 50]);
    assert_eq!(scan_vec(&ix, 15..=55, Some(2)), vec![20, 30]);
    assert_eq!(scan_vec(&ix, 15..=55, Some(0)), Vec::<u64>::new());
    assert_eq!(scan_vec(&ix, 11..=19, None), Vec::<u64>::new());
    assert_eq!(scan_vec(&ix, 20..=20, None), vec![20]);
    assert_eq!(
        scan_vec(&ix, RangeInclusive::new(30, 20), None),
        Vec::<u64>::new(),
        "start > end"
    );
    assert_eq!(scan_vec(&ix, 9_990..=u64::MAX, None), vec![9_990]);
    assert_eq!(scan_vec(&ix, 0..=u64::MAX, None).len(), 1000);
    let mut obs = Vec::new();
    assert_eq!(ix.first_in_range(11..=19, &mut obs), None);
    assert!(!obs.is_empty(), "an empty range still observes its leaf");
    assert_eq!(
        ix.last_in_range(0..=u64::MAX, &mut obs),
        Some((9_990, r(10_990)))
    );
    assert_eq!(
        ix.last_in_range(5..=4_444, &mut obs),
        Some((4_440, r(5_440)))
    );
    assert_eq!(ix.next_key_after(9_990), None);
    assert_eq!(ix.next_key_after(u64::MAX), None);
    assert_eq!(ix.next_key_after(15), Some((20, r(1020))));
}

// ----- phantom detection, driven step by step -----

/// 1000 keys 0, 10, .. 9990 over ~25 leaves (random order gives half-full leaves).
fn spread_index() -> OrderedIndex {
    let mut keys: Vec<u64> = (0..1000).map(|k| k * 10).collect();
    let mut rng = FastRng::new(9);
    for i in (1..keys.len()).rev() {
        keys.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let ix = index_with(keys);
    assert!(ix.leaf_count() > 10);
    ix
}

#[test]
fn insert_inside_a_scanned_range_fails_validation() {
    let ix = spread_index();
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    ix.scan(2_000..=3_000, None, &mut out, &mut obs);
    assert_eq!(out.len(), 101);
    assert!(obs.len() >= 2, "the range spans leaves");
    assert!(all_valid(&ix, &obs));
    ix.insert(2_505, r(1)).unwrap();
    assert!(!all_valid(&ix, &obs), "phantom insert detected");
}

#[test]
fn delete_inside_a_scanned_range_fails_validation() {
    let ix = spread_index();
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    ix.scan(2_000..=3_000, None, &mut out, &mut obs);
    ix.remove(3_000).unwrap();
    assert!(!all_valid(&ix, &obs));
}

#[test]
fn changes_outside_the_scanned_leaves_pass_validation() {
    let ix = spread_index();
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    ix.scan(2_000..=2_100, None, &mut out, &mut obs);
    let covered: Vec<LeafId> = obs.iter().map(|lv| lv.leaf).collect();
    for k in [5u64, 9_995, 7_005] {
        assert!(!covered.contains(&ix.leaf_of(k).leaf));
        ix.insert(k, r(1)).unwrap();
        ix.remove(k - 5).unwrap();
    }
    assert!(
        all_valid(&ix, &obs),
        "changes in other leaves are not phantoms"
    );
    // A failed insert and a remove of an absent key change nothing either.
    assert!(ix.insert(2_050, r(1)).is_err());
    assert!(ix.remove(2_051).is_none());
    assert!(all_valid(&ix, &obs));
}

#[test]
fn insert_after_a_limited_scan_but_inside_its_range_fails_validation() {
    let ix = spread_index();
    for probe in [4_000u64, 4_500, 6_000] {
        // Find a scan whose limit ends exactly at a leaf's last key, and one that does not.
        let (mut out, mut obs) = (Vec::new(), Vec::new());
        ix.scan(probe..=9_000, Some(5), &mut out, &mut obs);
        let last = out.last().unwrap().0;
        assert!(all_valid(&ix, &obs));
        ix.insert(last + 1, r(1)).unwrap();
        assert!(
            !all_valid(&ix, &obs),
            "insert right after the last returned key"
        );
        ix.remove(last + 1).unwrap();
    }
    // Make the limit end just below a leaf boundary: the leaf after must be observed too.
    // Ascending inserts give leaves [0, 64), [64, 128), ...; removing 64 leaves a gap at 64.
    let ix = index_with(0..1_000);
    ix.remove(LEAF_CAPACITY as u64).unwrap();
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    let b = LEAF_CAPACITY as u64 - 1;
    ix.scan(b - 1..=9_999, Some(2), &mut out, &mut obs);
    assert_eq!(out.last().unwrap().0, b);
    assert_eq!(obs.len(), 2, "the next leaf is observed");
    assert_eq!(obs[1], ix.leaf_of(b + 1));
    ix.insert(b + 1, r(1)).unwrap();
    assert!(!all_valid(&ix, &obs));
    // The same at the left end of a reverse scan: the limit stops at leaf [64, 128)'s first
    // key, 63 is absent, so the leaf before must be observed.
    ix.remove(b).unwrap();
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    ix.scan_reverse(0..=b + 1, Some(1), &mut out, &mut obs);
    assert_eq!(out, vec![(b + 1, r(1))]);
    assert_eq!(obs.len(), 2, "the previous leaf is observed");
    ix.insert(b, r(1)).unwrap();
    assert!(!all_valid(&ix, &obs));
}

#[test]
fn insert_into_an_empty_scanned_range_fails_validation() {
    let ix = spread_index();
    let mut obs = Vec::new();
    assert_eq!(ix.first_in_range(5_001..=5_009, &mut obs), None);
    assert!(all_valid(&ix, &obs));
    ix.insert(5_005, r(1)).unwrap();
    assert!(!all_valid(&ix, &obs));
    // Same for a reverse lookup and an empty index.
    let empty = OrderedIndex::new();
    let mut obs = Vec::new();
    assert_eq!(empty.last_in_range(10..=20, &mut obs), None);
    empty.insert(15, r(1)).unwrap();
    assert!(!all_valid(&empty, &obs));
}

#[test]
fn reverse_lookup_detects_a_newer_key() {
    let ix = spread_index();
    let mut obs = Vec::new();
    assert_eq!(ix.last_in_range(3_000..=3_999, &mut obs).unwrap().0, 3_990);
    ix.insert(3_995, r(1)).unwrap();
    assert!(
        !all_valid(&ix, &obs),
        "a key above the returned one is a phantom"
    );
}

#[test]
fn split_moving_scanned_keys_fails_validation() {
    let ix = OrderedIndex::new();
    for k in 0..LEAF_CAPACITY as u64 {
        ix.insert(k * 2, r(k)).unwrap();
    }
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    ix.scan(0..=1_000, None, &mut out, &mut obs);
    assert_eq!(obs.len(), 1);
    let update = ix.insert(1, r(0)).unwrap();
    assert!(update.split.is_some(), "the full leaf split");
    assert!(!all_valid(&ix, &obs));
}

#[test]
fn own_writes_are_refreshed_but_others_are_not() {
    let ix = spread_index();
    let (mut out, mut obs) = (Vec::new(), Vec::new());
    ix.scan(1_000..=2_000, None, &mut out, &mut obs);
    // Our own delete (Delivery) and insert: patched into the observed set.
    let (_, up) = ix.remove(1_000).unwrap();
    up.refresh(&mut obs);
    let up = ix.insert(1_001, r(1)).unwrap();
    up.refresh(&mut obs);
    assert!(all_valid(&ix, &obs));
    // Our insert that splits a leaf: the new leaf joins the set.
    let mut k = 1_002;
    loop {
        let up = ix.insert(k, r(1)).unwrap();
        up.refresh(&mut obs);
        if up.split.is_some() {
            break;
        }
        k += 1;
    }
    assert!(all_valid(&ix, &obs));
    let obs_len = obs.len();
    // Someone else's insert, then ours in the same leaf: ours must not hide theirs.
    ix.insert(1_505, r(2)).unwrap();
    let up = ix.insert(1_506, r(1)).unwrap();
    up.refresh(&mut obs);
    assert_eq!(obs.len(), obs_len);
    assert!(!all_valid(&ix, &obs));
}

#[test]
fn validate_rejects_locked_leaves_and_foreign_ids() {
    let ix = spread_index();
    let lv = ix.leaf_of(500);
    assert!(ix.validate(&lv));
    let leaf = ix.leaves.get(lv.leaf);
    assert!(leaf.try_lock(lv.version));
    assert!(!ix.validate(&lv), "a writer holds the leaf");
    leaf.unlock_unchanged(lv.version);
    assert!(ix.validate(&lv));
    let foreign = LeafVersion {
        leaf: LeafId(1_000_000),
        version: lv.version,
    };
    assert!(!ix.validate(&foreign));
}

// ----- merging emptied leaves -----

#[test]
fn random_removal_heavy_operations_match_a_btreemap() {
    for seed in 0..4u64 {
        let mut rng = FastRng::new(50 + seed);
        let ix = OrderedIndex::new();
        let mut model = BTreeMap::new();
        let space = [2_000, 20_000, 1 << 40, u64::MAX][seed as usize];
        let mut keys: Vec<u64> = Vec::new();
        for round in 0..8 {
            // Fill (ascending runs and random keys), then drain most of it in mixed orders.
            let base = rng.below(space / 2);
            for i in 0..1_500u64 {
                let k = if i % 2 == 0 {
                    base.saturating_add(i)
                } else {
                    rng.below(space)
                };
                let fresh = model.insert(k, i).is_none();
                if fresh {
                    keys.push(k);
                    ix.insert(k, r(i)).unwrap();
                } else {
                    model.insert(k, ix.get(k).unwrap().0);
                    assert!(ix.insert(k, r(i)).is_err());
                }
            }
            match round % 3 {
                0 => keys.sort_unstable(),
                1 => keys.sort_unstable_by(|a, b| b.cmp(a)),
                _ => {
                    for i in (1..keys.len()).rev() {
                        keys.swap(i, rng.below(i as u64 + 1) as usize);
                    }
                }
            }
            let keep = keys.len() / 10;
            for k in keys.drain(keep..) {
                assert_eq!(ix.remove(k).map(|(rid, _)| rid.0), model.remove(&k));
                if rng.chance(0.02) {
                    let lo = rng.below(space);
                    let hi = lo.saturating_add(rng.below(space / 50 + 2));
                    let (mut out, mut obs) = (Vec::new(), Vec::new());
                    ix.scan(lo..=hi, None, &mut out, &mut obs);
                    let want: Vec<(u64, RecordId)> =
                        model.range(lo..=hi).map(|(&k, &v)| (k, r(v))).collect();
                    assert_eq!(out, want);
                    assert!(all_valid(&ix, &obs));
                    let mut obs = Vec::new();
                    let last = model.range(lo..=hi).next_back().map(|(&k, &v)| (k, r(v)));
                    assert_eq!(ix.last_in_range(lo..=hi, &mut obs), last);
                    assert!(all_valid(&ix, &obs));
                }
            }
            assert_eq!(
                ix.check_structure(),
                model.keys().copied().collect::<Vec<_>>()
            );
        }
        assert!(ix.live_leaf_count() < ix.leaf_count(), "some leaves merged");
        for (&k, &v) in &model {
            assert_eq!(ix.get(k), Some(r(v)));
        }
        assert_eq!(ix.len(), model.len() as u64);
    }
}

#[test]
fn head_removals_unlink_emptied_leaves() {
    let n = 100 * LEAF_CAPACITY as u64;
    let ix = index_with(0..n);
    assert_eq!(ix.live_leaf_count(), 100);
    for k in 0..n - 1 {
        ix.remove(k).unwrap();
        let mut obs = Vec::new();
        assert_eq!(ix.first_in_range(0..=u64::MAX, &mut obs).unwrap().0, k + 1);
        // The (empty) head, the leaf holding k + 1, and the next one when k + 1 is its last key.
        assert!(
            obs.len() <= 3,
            "observed {} leaves after removing {k}",
            obs.len()
        );
    }
    assert_eq!(ix.leaf_count(), 100, "ids stay allocated");
    assert_eq!(
        ix.live_leaf_count(),
        2,
        "the head and the leaf holding the last key"
    );
    ix.remove(n - 1).unwrap();
    assert_eq!(ix.live_leaf_count(), 1, "everything merged into the head");
    assert_eq!(ix.check_structure(), Vec::<u64>::new());
    // TPC-C's NEW-ORDER: per district, insert at the tail and deliver from the head.
    let ix = OrderedIndex::new();
    let district = |d: u64, o: u64| (d << 32) | o;
    for o in 0..200 {
        for d in 0..4 {
            ix.insert(district(d, o), r(o)).unwrap();
        }
    }
    let mut worst = 0;
    for o in 200..200 + 100 * LEAF_CAPACITY as u64 {
        for d in 0..4 {
            ix.insert(district(d, o), r(o)).unwrap();
            let mut obs = Vec::new();
            let range = district(d, 0)..=district(d, u32::MAX.into());
            let (k, _) = ix.first_in_range(range, &mut obs).unwrap();
            assert_eq!(k, district(d, o - 200));
            ix.remove(k).unwrap();
            worst = worst.max(obs.len());
        }
    }
    assert!(worst <= 3, "first_in_range observed {worst} leaves");
    assert!(
        ix.live_leaf_count() < 30,
        "{} live leaves",
        ix.live_leaf_count()
    );
    ix.check_structure();
}

/// Leaves `[0, 64)`, `[64, 128)`, `[128, 192)`, with leaf 1 holding only 127.
fn merge_setup() -> (OrderedIndex, LeafId) {
    let ix = index_with(0..3 * LEAF_CAPACITY as u64);
    for k in 64..127 {
        ix.remove(k).unwrap();
    }
    let l = ix.leaf_of(127).leaf;
    assert_ne!(l, ix.leaf_of(63).leaf);
    (ix, l)
}

#[test]
fn a_scan_of_a_merged_away_leaf_fails_validation() {
    let (ix, l) = merge_setup();
    let mut obs = Vec::new();
    assert_eq!(ix.first_in_range(70..=100, &mut obs), None);
    assert_eq!(obs.len(), 1);
    assert_eq!(obs[0].leaf, l);
    let p = ix.leaf_of(10);
    let mut obs_p = vec![p];
    // Someone else empties L: it merges into P. Both observations fail.
    let (_, up) = ix.remove(127).unwrap();
    let merged = up.merged.expect("the emptied leaf merged");
    assert_eq!(merged.leaf, p.leaf);
    assert!(up.after.is_dead());
    assert_eq!(ix.leaf_of(100).leaf, p.leaf, "P owns L's former range");
    assert!(!all_valid(&ix, &obs), "the dead leaf fails validation");
    assert!(!all_valid(&ix, &obs_p), "P's range changed");
    // A phantom in L's former range lands in P and still fails the scan's validation.
    ix.insert(80, r(1)).unwrap();
    assert!(!all_valid(&ix, &obs));
    obs_p[0] = ix.leaf_of(10);
    assert!(all_valid(&ix, &obs_p));
    assert_eq!(
        scan_vec(&ix, 60..=130, None),
        vec![60, 61, 62, 63, 80, 128, 129, 130]
    );
    ix.check_structure();
}

#[test]
fn own_merging_remove_is_refreshed_but_a_later_phantom_is_not() {
    let (ix, l) = merge_setup();
    // Delivery: find the oldest key of [64, 191], delete it (this empties and merges L).
    let mut obs = Vec::new();
    assert_eq!(ix.first_in_range(64..=191, &mut obs).unwrap().0, 127);
    // L, and the leaf after it (127 is L's last key, so 128's position is observed too).
    assert_eq!(obs.len(), 2);
    assert_eq!(obs[0].leaf, l);
    let (_, up) = ix.remove(127).unwrap();
    assert!(up.merged.is_some());
    up.refresh(&mut obs);
    assert!(all_valid(&ix, &obs), "our own merge does not abort us");
    assert_eq!(obs.len(), 3, "P joined the observed set");
    ix.insert(100, r(1)).unwrap();
    assert!(
        !all_valid(&ix, &obs),
        "a phantom in L's former range is caught"
    );
}

#[test]
fn a_merge_that_cannot_lock_the_left_leaf_leaves_the_empty_leaf() {
    let (ix, l) = merge_setup();
    let p = ix.leaf_of(10);
    let pleaf = ix.leaves.get(p.leaf);
    assert!(pleaf.try_lock(p.version));
    let (_, up) = ix.remove(127).unwrap();
    pleaf.unlock_unchanged(p.version);
    assert!(up.merged.is_none() && !up.after.is_dead());
    assert_eq!(ix.leaf_of(100).leaf, l, "L stays, empty");
    assert_eq!(ix.live_leaf_count(), 3);
    assert!(ix.validate(&p), "P untouched");
    ix.check_structure();
    // L refills and drains again: this time it merges.
    ix.insert(70, r(1)).unwrap();
    assert!(ix.remove(70).unwrap().1.merged.is_some());
    assert_eq!(ix.live_leaf_count(), 2);
    ix.check_structure();
}

// ----- concurrency -----

/// 3 writers insert/remove keys of a churn set while 3 scanners scan and walk ([`RangeCursor`]);
/// the keys of a stable set (multiples of 4) are never touched. Scans and walks must be sorted,
/// distinct and contain every stable key of their range; a scan whose observed versions still validate after a second scan of the same
/// range must equal it (nothing it covered changed in between). Each writer owns the churn keys
/// `k % 4 == writer`, so the final contents are checked against per-writer models.
#[test]
fn concurrent_writers_and_scanners() {
    writers_and_scanners(8_000, |_| 0.55);
}

/// As `concurrent_writers_and_scanners`, but stable keys only in the lower half and writers that
/// alternate fill and drain phases, so leaves of the upper half empty and merge all the time.
#[test]
fn concurrent_merging_writers_and_scanners() {
    let ix = writers_and_scanners(4_000, |round| if round % 16 < 8 { 0.8 } else { 0.15 });
    // Whether merges happened during the concurrent phase depends on the schedule (a merge only
    // tries its neighbour's lock once), so it is reported, not asserted; draining the upper half
    // afterwards must merge, and the structure must stay valid either way.
    eprintln!(
        "after the concurrent phase: {} live of {} leaves",
        ix.live_leaf_count(),
        ix.leaf_count()
    );
    let upper: Vec<(u64, RecordId)> = {
        let (mut out, mut observed) = (Vec::new(), Vec::new());
        ix.scan(4_000..=u64::MAX, None, &mut out, &mut observed);
        out
    };
    for (k, _) in upper {
        ix.remove(k).expect("present");
    }
    ix.check_structure();
    assert!(
        ix.live_leaf_count() < ix.leaf_count(),
        "draining merged leaves"
    );
}

/// The stress test: stable keys are the multiples of 4 below `stable_below`; writers insert with
/// probability `insert_chance(round)` (64 operations a round).
fn writers_and_scanners(stable_below: u64, insert_chance: fn(u64) -> f64) -> OrderedIndex {
    const SPACE: u64 = 8_000;
    let ix = OrderedIndex::new();
    for k in (0..stable_below).step_by(4) {
        ix.insert(k, r(k)).unwrap();
    }
    let stop = AtomicBool::new(false);
    let validated_equal = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_millis(1_500);
    let models: Vec<BTreeMap<u64, u64>> = std::thread::scope(|s| {
        let scanners: Vec<_> = (0..3u64)
            .map(|t| {
                let (ix, stop, validated_equal) = (&ix, &stop, &validated_equal);
                s.spawn(move || {
                    let mut rng = FastRng::new(100 + t);
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let (mut obs_a, mut obs_b) = (Vec::new(), Vec::new());
                    while !stop.load(Ordering::Relaxed) {
                        let lo = rng.below(SPACE);
                        let hi = lo + rng.below(600);
                        let limit = rng.chance(0.3).then(|| 1 + rng.below(50) as usize);
                        let reverse = rng.chance(0.3);
                        for (out, obs) in [(&mut a, &mut obs_a), (&mut b, &mut obs_b)] {
                            out.clear();
                            obs.clear();
                            if reverse {
                                ix.scan_reverse(lo..=hi, limit, out, obs);
                                out.reverse();
                            } else {
                                ix.scan(lo..=hi, limit, out, obs);
                            }
                        }
                        assert!(a.windows(2).all(|w| w[0].0 < w[1].0), "sorted, distinct");
                        assert!(
                            a.iter()
                                .all(|&(k, rid)| (lo..=hi).contains(&k)
                                    && (k % 4 != 0 || rid == r(k)))
                        );
                        if limit.is_none() {
                            let stable = a.iter().filter(|&&(k, _)| k % 4 == 0).count() as u64;
                            let want = (lo..=hi)
                                .filter(|k| k % 4 == 0 && *k < stable_below)
                                .count();
                            assert_eq!(stable, want as u64, "a stable key went missing");
                        }
                        // The cursor walk over the same range: sorted, distinct, and every
                        // stable key of the range present, whatever the writers did meanwhile.
                        let walked: Vec<(u64, RecordId)> =
                            ix.walk_from(lo).take_while(|&(k, _)| k <= hi).collect();
                        assert!(walked.windows(2).all(|w| w[0].0 < w[1].0), "walk ascends");
                        assert!(
                            walked
                                .iter()
                                .all(|&(k, rid)| k >= lo && (k % 4 != 0 || rid == r(k)))
                        );
                        let stable_walked = walked.iter().filter(|&&(k, _)| k % 4 == 0).count();
                        let stable_want = (lo..=hi)
                            .filter(|k| k % 4 == 0 && *k < stable_below)
                            .count();
                        assert_eq!(stable_walked, stable_want, "the walk skipped a stable key");
                        if all_valid(ix, &obs_a) {
                            assert_eq!(a, b, "validated scan differs from a later one");
                            validated_equal.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        let writers: Vec<_> = (1..4u64)
            .map(|w| {
                let ix = &ix;
                s.spawn(move || {
                    let mut rng = FastRng::new(w);
                    let mut model = BTreeMap::new();
                    let mut round = 0;
                    while Instant::now() < deadline {
                        let p = insert_chance(round);
                        round += 1;
                        for _ in 0..64 {
                            let k = rng.below(SPACE / 4) * 4 + w;
                            if rng.chance(p) {
                                let ok = ix.insert(k, r(k + 1)).is_ok();
                                assert_eq!(ok, model.insert(k, k + 1).is_none());
                            } else {
                                let got = ix.remove(k).map(|(rid, _)| rid.0);
                                assert_eq!(got, model.remove(&k));
                            }
                        }
                    }
                    model
                })
            })
            .collect();
        let models = writers.into_iter().map(|h| h.join().unwrap()).collect();
        stop.store(true, Ordering::Relaxed);
        for h in scanners {
            h.join().unwrap();
        }
        models
    });
    let mut want: Vec<u64> = (0..stable_below).step_by(4).collect();
    for m in &models {
        want.extend(m.keys());
    }
    want.sort_unstable();
    assert_eq!(ix.check_structure(), want);
    assert!(validated_equal.load(Ordering::Relaxed) > 0);
    ix
}

/// Lookups while whole leaves fill, split, empty and merge around them: stable keys are sparse
/// (one per 2048 keys, so the leaves between them empty entirely and are merged away), and 3
/// writers alternate filling and draining the keys between. Every lookup a walk of an index
/// scan makes must find the stable keys: `first_at_or_after(x)` never answers past the first
/// stable key at or after `x`, `last_at_or_before` never below the last one in its range, and
/// forward and reverse scans contain every stable key of their range. (The stress test above
/// keeps its stable keys where no leaf can empty, so no merge happened near a key it checked.)
#[test]
fn lookups_find_stable_keys_while_leaves_merge_around_them() {
    const SPACE: u64 = 1 << 15;
    const STABLE_EVERY: u64 = 2048;
    let ix = OrderedIndex::new();
    for k in (0..SPACE).step_by(STABLE_EVERY as usize) {
        ix.insert(k, r(k)).unwrap();
    }
    const LAST_STABLE: u64 = SPACE - STABLE_EVERY;
    let stable_at_or_after = |x: u64| x.div_ceil(STABLE_EVERY) * STABLE_EVERY;
    let stable_at_or_before = |x: u64| x.min(LAST_STABLE) / STABLE_EVERY * STABLE_EVERY;
    let stop = AtomicBool::new(false);
    let deadline = Instant::now() + Duration::from_millis(1_500);
    let checks = AtomicU64::new(0);
    std::thread::scope(|s| {
        let readers: Vec<_> = (0..3u64)
            .map(|t| {
                let (ix, stop, checks) = (&ix, &stop, &checks);
                s.spawn(move || {
                    let mut rng = FastRng::new(500 + t);
                    let (mut out, mut obs) = (Vec::new(), Vec::new());
                    while !stop.load(Ordering::Relaxed) {
                        let x = rng.below(LAST_STABLE);
                        let want = stable_at_or_after(x);
                        let got = ix.first_at_or_after(x).expect("stable keys above").0;
                        assert!(
                            (x..=want).contains(&got),
                            "first_at_or_after({x}) = {got}, past the stable key {want}"
                        );
                        let hi = x + rng.below(3 * STABLE_EVERY);
                        let low_stable = stable_at_or_before(hi);
                        if low_stable >= x {
                            let got = ix.last_at_or_before(x..=hi).expect("a stable key in range");
                            assert!(
                                (low_stable..=hi).contains(&got.0),
                                "last_at_or_before({x}..={hi}) = {}, below the stable key {low_stable}",
                                got.0
                            );
                        }
                        let stable_in_range: Vec<u64> = (stable_at_or_after(x)..=hi.min(LAST_STABLE))
                            .step_by(STABLE_EVERY as usize)
                            .collect();
                        for reverse in [false, true] {
                            out.clear();
                            obs.clear();
                            if reverse {
                                ix.scan_reverse(x..=hi, None, &mut out, &mut obs);
                                out.reverse();
                            } else {
                                ix.scan(x..=hi, None, &mut out, &mut obs);
                            }
                            assert!(out.windows(2).all(|w| w[0].0 < w[1].0), "sorted, distinct");
                            for k in &stable_in_range {
                                assert!(
                                    out.binary_search_by_key(k, |&(k, _)| k).is_ok(),
                                    "scan (reverse: {reverse}) of {x}..={hi} missed stable key {k}"
                                );
                            }
                        }
                        // Relaxed: a count read after the join.
                        checks.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let writers: Vec<_> = (1..4u64)
            .map(|w| {
                let ix = &ix;
                s.spawn(move || {
                    let mut rng = FastRng::new(600 + w);
                    let mut round = 0u64;
                    while Instant::now() < deadline {
                        // Fill and drain phases, so leaves empty and merge.
                        let p = if round % 8 < 4 { 0.9 } else { 0.05 };
                        round += 1;
                        for _ in 0..256 {
                            // Residue w (1..=3) mod 4: never a stable key's.
                            let k = rng.below(SPACE / 4) * 4 + w;
                            if rng.chance(p) {
                                let _ = ix.insert(k, r(k));
                            } else {
                                ix.remove(k);
                            }
                        }
                    }
                })
            })
            .collect();
        for h in writers {
            h.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        for h in readers {
            h.join().unwrap();
        }
    });
    ix.check_structure();
    eprintln!(
        "{} checks; {} live of {} leaves",
        checks.load(Ordering::Relaxed),
        ix.live_leaf_count(),
        ix.leaf_count()
    );
    assert!(checks.load(Ordering::Relaxed) > 0);
    assert!(ix.live_leaf_count() < ix.leaf_count(), "leaves merged");
}

/// The directory under load: 3 writers insert fresh keys (each its own residue mod 4, in a
/// scrambled order, so leaves split in the middle and at the end, directory nodes split and the
/// root grows) while 3 readers look keys up and 2 scan and walk. Each writer publishes how many
/// of its keys it has inserted; a reader must find every key published before its lookup with
/// its record, never a key of residue 0 (never inserted), and a scan or walk must return every
/// key published before it started that lies in its range, sorted and distinct. Judged by those
/// answers and the final structure; readers run until the writers have made all their inserts.
#[test]
fn lookups_and_scans_while_inserts_split_the_directory() {
    const PER_WRITER: u64 = 12_000;
    const STEP: u64 = 7_919; // coprime with PER_WRITER: `i * STEP % PER_WRITER` is a permutation
    fn key(w: u64, i: u64) -> u64 {
        (i * STEP % PER_WRITER) * 4 + w
    }
    let ix = OrderedIndex::new();
    let published: [AtomicU64; 3] = std::array::from_fn(|_| AtomicU64::new(0));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let published = &published;
        let (ix, stop) = (&ix, &stop);
        let lookups: Vec<_> = (0..3u64)
            .map(|t| {
                s.spawn(move || {
                    let mut rng = FastRng::new(300 + t);
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let w = 1 + rng.below(3);
                        // Acquire: pairs with the writer's Release store after its insert, so
                        // keys below `p` are in the index.
                        let p = published[w as usize - 1].load(Ordering::Acquire);
                        if p > 0 {
                            let k = key(w, rng.below(p));
                            assert_eq!(ix.get(k), Some(r(k + 1)), "published key {k}");
                        }
                        let absent = rng.below(PER_WRITER) * 4;
                        assert_eq!(ix.get(absent), None, "never inserted: {absent}");
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let scanners: Vec<_> = (0..2u64)
            .map(|t| {
                s.spawn(move || {
                    let mut rng = FastRng::new(400 + t);
                    let (mut out, mut obs) = (Vec::new(), Vec::new());
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let before: Vec<u64> = published
                            .iter()
                            .map(|p| p.load(Ordering::Acquire))
                            .collect();
                        let lo = rng.below(PER_WRITER * 4);
                        let hi = lo + rng.below(2_000);
                        out.clear();
                        obs.clear();
                        ix.scan(lo..=hi, None, &mut out, &mut obs);
                        let walked: Vec<(u64, RecordId)> =
                            ix.walk_from(lo).take_while(|&(k, _)| k <= hi).collect();
                        for got in [&out, &walked] {
                            assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "sorted, distinct");
                            assert!(got.iter().all(|&(k, rid)| k % 4 != 0
                                && (lo..=hi).contains(&k)
                                && rid == r(k + 1)));
                            for (w, &p) in (1..=3).zip(&before) {
                                for i in 0..p {
                                    let k = key(w, i);
                                    if (lo..=hi).contains(&k) {
                                        assert!(
                                            got.binary_search_by_key(&k, |&(k, _)| k).is_ok(),
                                            "a scan of {lo}..={hi} missed published key {k}"
                                        );
                                    }
                                }
                            }
                        }
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let writers: Vec<_> = (1..=3u64)
            .map(|w| {
                s.spawn(move || {
                    for i in 0..PER_WRITER {
                        let k = key(w, i);
                        ix.insert(k, r(k + 1)).expect("fresh key");
                        // Release: pairs with the readers' Acquire loads above.
                        published[w as usize - 1].store(i + 1, Ordering::Release);
                    }
                })
            })
            .collect();
        for h in writers {
            h.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        for h in lookups.into_iter().chain(scanners) {
            assert!(h.join().unwrap() > 0, "every reader made progress");
        }
    });
    let mut want: Vec<u64> = (1..=3)
        .flat_map(|w| (0..PER_WRITER).map(move |i| key(w, i)))
        .collect();
    want.sort_unstable();
    assert_eq!(ix.check_structure(), want);
    assert!(
        ix.directory.node_count() > 3,
        "the directory split ({} nodes)",
        ix.directory.node_count()
    );
}

/// Throughput, single thread. Run with
/// `cargo test --release --lib index::ordered::tests::throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn throughput() {
    const N: u64 = 1_000_000;
    let mut rng = FastRng::new(1);
    let keys: Vec<u64> = (0..N).map(|_| rng.next_u64()).collect();
    let ix = OrderedIndex::new();
    let t = Instant::now();
    for &k in &keys {
        let _ = ix.insert(k, r(k));
    }
    let ins = N as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut hits = 0u64;
    for &k in &keys {
        hits += u64::from(ix.get(k).is_some());
    }
    let gets = N as f64 / t.elapsed().as_secs_f64();
    assert_eq!(hits, N);
    let scans_n = 200_000u64;
    let (mut out, mut obs) = (Vec::with_capacity(128), Vec::with_capacity(16));
    let t = Instant::now();
    let mut total = 0usize;
    for i in 0..scans_n {
        out.clear();
        obs.clear();
        ix.scan(keys[i as usize]..=u64::MAX, Some(100), &mut out, &mut obs);
        total += out.len();
    }
    let scans = scans_n as f64 / t.elapsed().as_secs_f64();
    assert!(total > 0);
    let seq = OrderedIndex::new();
    let t = Instant::now();
    for k in 0..N {
        seq.insert(k, r(k)).unwrap();
    }
    let seq_ins = N as f64 / t.elapsed().as_secs_f64();
    println!(
        "random inserts/s {ins:.0}, lookups/s {gets:.0}, 100-key scans/s {scans:.0}, \
         ascending inserts/s {seq_ins:.0}, leaves {} (random), {} (ascending)",
        ix.leaf_count(),
        seq.leaf_count()
    );
}
