//! Ctrl-C (SIGINT) during `txbench run` and `txbench sweep`: the first one lets the run in
//! progress finish and then stops, so that what was measured is kept and shown (a `run` prints
//! the table of the runs it finished, a sweep says how many rows it kept and that `--resume`
//! continues); a second one ends the process at once, as SIGINT does by default.
//!
//! The handler only stores a flag (an atomic store and one `write(2)` are async-signal-safe);
//! the loops that start runs read it between runs.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the SIGINT handler.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// What the first Ctrl-C prints, from the handler itself.
const NOTICE: &[u8] =
    b"\ninterrupted: finishing the run in progress, then stopping (Ctrl-C again quits now)\n";

extern "C" fn on_sigint(_: libc::c_int) {
    // Relaxed: the flag carries no data; readers only decide whether to start another run.
    INTERRUPTED.store(true, Ordering::Relaxed);
    // SAFETY: write(2) is async-signal-safe; NOTICE is a static buffer of the length given.
    unsafe {
        libc::write(2, NOTICE.as_ptr().cast(), NOTICE.len());
    }
}

/// Installs the handler; SA_RESETHAND restores the default action after the first signal, so
/// the second Ctrl-C ends the process. Best effort: if it cannot be installed, SIGINT keeps its
/// default action.
pub fn install() {
    // SAFETY: `action` is zeroed (a valid empty mask and flags) and then filled with a handler of
    // the signature SA_SIGINFO-less handlers take; sigaction reads it and does not keep it.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// Whether Ctrl-C was pressed since [`install`].
pub fn interrupted() -> bool {
    // Relaxed: see `on_sigint`.
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The exit status of a process stopped by SIGINT that ended on its own (128 + 2, as a shell
/// reports a process killed by it).
pub const EXIT_INTERRUPTED: u8 = 130;
