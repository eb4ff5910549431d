//! A hint to the processor to start loading a cache line, so that the misses of accesses known
//! ahead (a stored procedure's keys, drawn before it runs) overlap instead of coming one after
//! another. It changes nothing a program can observe.

/// Starts loading the cache line holding `p` into every cache level; returns at once.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetch` only hints the processor; it reads no memory architecturally and
    // cannot fault, whatever the address. SSE, which it belongs to, is part of x86-64's
    // baseline, so the instruction is always available.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
