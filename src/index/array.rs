//! The dense array index: key `k` lives in record `k`. YCSB's keys are `0..records`, so the index
//! is the identity plus a bounds check and costs no memory access at all, which keeps index cost
//! out of YCSB comparisons (DBx1000 and CCBench pay a hash or Masstree lookup here).

use super::Index;
use crate::ids::RecordId;

/// Identity index over `0..len`.
#[derive(Debug, Clone, Copy)]
pub struct ArrayIndex {
    len: u64,
}

impl ArrayIndex {
    /// An index over keys `0..len`.
    pub fn new(len: u64) -> Self {
        ArrayIndex { len }
    }
}

impl Index for ArrayIndex {
    #[inline]
    fn get(&self, key: u64) -> Option<RecordId> {
        (key < self.len).then_some(RecordId(key))
    }

    fn len(&self) -> u64 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_in_range_keys_only() {
        let ix = ArrayIndex::new(10);
        assert_eq!(ix.get(0), Some(RecordId(0)));
        assert_eq!(ix.get(9), Some(RecordId(9)));
        assert_eq!(ix.get(10), None);
        assert_eq!(ix.len(), 10);
    }
}
