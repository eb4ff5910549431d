//! The keys a long transaction has drawn so far, for drawing distinct keys: an open-addressing
//! hash set, used above [`DistinctKeys::SCAN_UP_TO`] keys, where scanning the operations drawn
//! so far costs quadratically (SGPM's 100-operation transactions compared about 5,000 key pairs
//! each). Shorter transactions scan; the workload chooses once per transaction, so neither
//! path tests the other's condition per key (`ycsb.rs`).
//!
//! The set lives in the request and is reused: it allocates when a request is created (or first
//! sees a longer transaction), never per transaction. Clearing it is one `fill` of its slots.

/// A set of `u64` keys, cleared per transaction.
#[derive(Debug, Clone, Default)]
pub struct DistinctKeys {
    /// Open addressing, linear probing; a slot holds `key + 1`, so 0 marks it empty (keys are
    /// record keys below `u64::MAX`).
    slots: Vec<u64>,
}

impl DistinctKeys {
    /// Transactions with at most this many keys find duplicates by scanning their operations.
    pub const SCAN_UP_TO: usize = 16;

    /// A set ready for transactions of up to `keys` keys.
    pub fn with_capacity(keys: usize) -> Self {
        let mut set = DistinctKeys::default();
        set.prepare(keys);
        set
    }

    /// Empties the set before a transaction of `keys` keys, sizing it for them.
    #[inline]
    pub fn prepare(&mut self, keys: usize) {
        // At most half full: probes stay short.
        let want = (keys * 2).next_power_of_two();
        if self.slots.len() < want {
            self.slots = vec![0; want];
        } else {
            self.slots.fill(0);
        }
    }

    /// Adds `key` unless present; returns whether it was new. At most the `keys` of the last
    /// [`DistinctKeys::prepare`] are added.
    #[inline]
    pub fn insert(&mut self, key: u64) -> bool {
        let mask = self.slots.len() - 1;
        // Fibonacci hashing: the multiply spreads neighbouring keys (normal and zipfian keys
        // cluster) over the table's top bits.
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = key + 1;
                    return true;
                }
                k if k == key + 1 => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_across_clears() {
        for keys in [4, 100, 1000] {
            let mut set = DistinctKeys::with_capacity(keys);
            for round in 0..2 {
                set.prepare(keys);
                let mut drawn: Vec<u64> = Vec::new();
                // Neighbouring keys, each offered twice: half are new.
                for k in (0..keys as u64).flat_map(|k| [k + round, k + round]) {
                    if set.insert(k) {
                        drawn.push(k);
                    }
                }
                let expect: Vec<u64> = (round..keys as u64 + round).collect();
                assert_eq!(drawn, expect, "{keys} keys, round {round}");
            }
        }
    }

    #[test]
    fn a_set_grows_for_longer_transactions() {
        let mut set = DistinctKeys::with_capacity(4);
        set.prepare(64);
        assert!((0..64u64).all(|k| set.insert(k * 1024)));
        assert!(!set.insert(0));
    }
}
