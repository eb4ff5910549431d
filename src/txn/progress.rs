//! A per-thread count of completed operations: how an executor that keeps several transactions
//! in flight on one thread (the coroutine executor) tells a pass over its transactions that
//! moved one of them forward from a pass in which every one is still blocked.
//!
//! Attempts ending are too coarse a sign for that: a 100-operation transaction (SGPM's workload)
//! may wait briefly at many of its operations, each wait resolved by another thread's progress,
//! and a scheduler that sees only attempt ends takes the whole run of such a transaction for
//! idleness, then spins, yields and parks while it could run. A completed operation (its
//! protocol call returned `Ready(Ok)`) is progress of the thread that completed it.
//!
//! The count is a plain thread-local cell (no atomic, no shared cache line), bumped by the
//! operation futures of `Txn` on completion; it costs one thread-local increment per operation
//! and nothing an executor that ignores it would notice.

use std::cell::Cell;

thread_local! {
    static OPS_COMPLETED: Cell<u64> = const { Cell::new(0) };
}

/// Notes that an operation of a transaction on this thread completed.
#[inline]
pub(crate) fn op_completed() {
    OPS_COMPLETED.with(|c| c.set(c.get().wrapping_add(1)));
}

/// Operations completed on this thread so far (wrapping): compare two readings for progress.
#[inline]
pub fn ops_completed() -> u64 {
    OPS_COMPLETED.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_are_counted_per_thread() {
        let before = ops_completed();
        op_completed();
        op_completed();
        assert_eq!(ops_completed().wrapping_sub(before), 2);
        let other = std::thread::spawn(ops_completed).join().unwrap();
        assert_eq!(other, 0);
    }
}
