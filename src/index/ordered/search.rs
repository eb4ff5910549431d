//! The search inside a leaf or a directory node: a binary search over all the node's slots with a
//! fixed number of steps, each a load, a compare and a conditional move.
//!
//! Both node kinds keep their unused slots (those at and after `len`) at [`PAD`], the greatest
//! key, so the whole key array is sorted and a search needs no `len`: the number of slots whose
//! key passes a test that holds on a prefix of the keys ("`< key`", "`<= key`") is found by
//! halving a window of the array, `log2(N) + 1` steps, with no loop left after unrolling and no
//! data-dependent branch. The variable-length loop this replaces (`while size > 1`) cost about
//! nine instructions per step, and LLVM turned its select into a branch (x86's cmov conversion
//! works on loops), mispredicted half the time for random keys: about fifteen steps per lookup
//! through a three-level directory and a leaf. The callers clamp the count to `len`, since a padded
//! slot also passes "`<= u64::MAX`" and a torn read (a writer inside the node; the version check
//! rejects the result) can give any count.

use std::sync::atomic::{AtomicU64, Ordering};

/// The key in every unused slot of a leaf or a directory node. Real keys may equal it (the end
/// sentinel key is `u64::MAX`), so the callers compare slots with `len`, not with `PAD`.
pub(super) const PAD: u64 = u64::MAX;

/// The number of slots whose key passes `below`, for a `below` that holds on a prefix of `keys`
/// (keys ascending, padding included). Any answer in `0..=N` when the keys are not sorted (torn
/// reads); it always terminates and never indexes out of bounds. `N` must be a power of two.
///
/// Relaxed loads: the callers read inside a version-validated section (seqlock) and discard the
/// answer when the version changed.
#[inline(always)]
pub(super) fn count_prefix<const N: usize>(
    keys: &[AtomicU64; N],
    below: impl Fn(u64) -> bool,
) -> usize {
    const { assert!(N.is_power_of_two()) };
    // Slots below `n` pass; slots from `n + step * 2` on (after the first step) fail: the window
    // `[n, n + step * 2)` holds the boundary and halves each step. The loop has a constant trip
    // count, so it is unrolled into straight-line code and each `if` becomes a conditional move.
    let mut n = 0;
    let mut step = N / 2;
    while step > 0 {
        // In bounds: `n` is a sum of distinct earlier steps (`N / 2` down to `step * 2`), so
        // `n <= N - 2 * step` and the probe `<= N - step - 1`; the mask only lets the compiler
        // see it (one `and` instead of a bounds check).
        let probe = (n + step - 1) & (N - 1);
        if below(keys[probe].load(Ordering::Relaxed)) {
            n += step;
        }
        step /= 2;
    }
    // The window is the single slot `n` (`n <= N - 1`, the sum of all the steps).
    n + usize::from(below(keys[n & (N - 1)].load(Ordering::Relaxed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(present: &[u64]) -> [AtomicU64; 64] {
        std::array::from_fn(|i| AtomicU64::new(present.get(i).copied().unwrap_or(PAD)))
    }

    /// Every count against a linear one, for every length and probe around every key.
    #[test]
    fn counts_match_a_linear_count() {
        for len in 0..=64usize {
            let present: Vec<u64> = (0..len as u64).map(|i| 10 + 3 * i).collect();
            let keys = keys(&present);
            for probe in (0..230).chain([u64::MAX - 1, u64::MAX]) {
                let lt = present.iter().filter(|&&k| k < probe).count();
                let le = present.iter().filter(|&&k| k <= probe).count();
                assert_eq!(
                    count_prefix(&keys, |k| k < probe),
                    lt,
                    "len {len} < {probe}"
                );
                let le_padded = if probe == PAD { 64 } else { le };
                assert_eq!(
                    count_prefix(&keys, |k| k <= probe),
                    le_padded,
                    "len {len} <= {probe}"
                );
            }
        }
    }

    /// Unsorted (torn) contents: any answer, but in range and without a panic.
    #[test]
    fn unsorted_keys_give_an_answer_in_range() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1_000 {
            let keys: [AtomicU64; 64] = std::array::from_fn(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                AtomicU64::new(x % 100)
            });
            assert!(count_prefix(&keys, |k| k < 50) <= 64);
        }
    }
}
