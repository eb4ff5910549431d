//! A protocol's note to the executor that it changed another transaction's fate while that
//! transaction may be waiting: a wound (WOUND_WAIT, PLOR). The victim must run to notice it and
//! release its locks, but a victim whose thread is parked (`exec::park`) would otherwise sleep until
//! a transaction ends or its park times out, while the wounder waits for it.
//!
//! The note is a flag of the calling thread: set by the operation that wounds, taken by the
//! executor after the operation returns (`Pending`: the wounder is about to wait for the victim),
//! which then wakes parked threads. It costs nothing on paths that wound nobody, and needs no
//! protocol to know how the executor waits.

use std::cell::Cell;

thread_local! {
    static VICTIM_SIGNALLED: Cell<bool> = const { Cell::new(false) };
}

/// Notes that this thread's operation just wounded (or otherwise signalled) another transaction.
#[inline]
pub fn note_victim_signalled() {
    VICTIM_SIGNALLED.with(|f| f.set(true));
}

/// Whether this thread signalled a victim since the last call, clearing the note.
#[inline]
pub fn take_victim_signalled() -> bool {
    VICTIM_SIGNALLED.with(|f| f.replace(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_is_taken_once_and_per_thread() {
        assert!(!take_victim_signalled());
        note_victim_signalled();
        std::thread::spawn(|| assert!(!take_victim_signalled()))
            .join()
            .unwrap();
        assert!(take_victim_signalled());
        assert!(!take_victim_signalled());
    }
}
