//! What a run shows on stderr while it works (`--progress`): each phase (loading the tables,
//! running, checking) as a spinner with its elapsed time on a terminal, and where stderr is not
//! a terminal (a log file, a batch job) a line every few seconds while a phase lasts, so that a
//! long load or check is never silent and a short run's log stays clean.
//!
//! A phase is a [`Phase`] value: shown from its creation until it is dropped. The lines come
//! from a thread of the phase's own that sleeps between them, so the run's threads never write
//! or wait for the display.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `--progress`: when to show what a run is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ProgressMode {
    /// A spinner per phase on a terminal; otherwise a line every few seconds while a phase
    /// lasts (nothing for phases shorter than that).
    #[default]
    Auto,
    /// As `auto`, and where stderr is not a terminal also a line when each phase starts.
    Always,
    /// Nothing.
    Never,
}

/// How often a phase writes its line where stderr is not a terminal.
pub const LOG_EVERY: Duration = Duration::from_secs(5);

/// What a phase's display shares with its ticker thread.
struct Shared {
    /// Set when the phase ends.
    done: AtomicBool,
    /// The phase's current detail (the checker's step), shown after its name.
    detail: Mutex<String>,
}

/// One phase on display until dropped.
pub struct Phase {
    bar: Option<ProgressBar>,
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

impl Phase {
    /// Shows `what` of `label` (`silo: running, 2.5 s`) under `mode`, `every` apart where
    /// stderr is not a terminal ([`LOG_EVERY`] in the binary; tests pass less).
    pub fn start(mode: ProgressMode, label: &str, what: &str, every: Duration) -> Phase {
        let shared = Arc::new(Shared {
            done: AtomicBool::new(false),
            detail: Mutex::new(String::new()),
        });
        let mut phase = Phase {
            bar: None,
            shared,
            ticker: None,
        };
        if mode == ProgressMode::Never {
            return phase;
        }
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                    .expect("the template is valid"),
            );
            bar.set_prefix(format!("{label}: {what}"));
            bar.enable_steady_tick(Duration::from_millis(200));
            phase.bar = Some(bar);
            return phase;
        }
        let head = format!("{label}: {what}");
        if mode == ProgressMode::Always {
            line(format_args!("{head}"));
        }
        let shared = Arc::clone(&phase.shared);
        // A display thread that cannot start leaves the phase unshown; the run goes on.
        phase.ticker = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || tick(&shared, &head, every))
            .ok();
        phase
    }

    /// Replaces the detail shown after the phase's name (the checker's current step).
    pub fn set_detail(&self, detail: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(detail.to_string());
        }
        if let Ok(mut d) = self.shared.detail.lock() {
            d.clear();
            d.push_str(detail);
        }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        // Release: pairs with the ticker's Acquire; it then writes no further line.
        self.shared.done.store(true, Ordering::Release);
        if let Some(t) = self.ticker.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// The ticker thread: a line `every` until the phase is done.
fn tick(shared: &Shared, head: &str, every: Duration) {
    let started = Instant::now();
    let mut next = started + every;
    loop {
        // Acquire: pairs with the drop's Release.
        if shared.done.load(Ordering::Acquire) {
            return;
        }
        let now = Instant::now();
        if now < next {
            // Woken early by the drop (unpark) or spuriously: the loop looks again.
            std::thread::park_timeout(next - now);
            continue;
        }
        next += every;
        let detail = shared.detail.lock().map(|d| d.clone()).unwrap_or_default();
        let sep = if detail.is_empty() { "" } else { ": " };
        line(format_args!(
            "{head}, {:.0} s so far{sep}{detail}",
            started.elapsed().as_secs_f64()
        ));
    }
}

/// Writes a progress line to stderr; a failed write is ignored (progress is best effort and
/// must not end the run).
fn line(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{text}");
}
