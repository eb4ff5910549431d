//! How busy the machine was with other work during a run: the CPU time every process used
//! (`/proc/stat`'s first line) less this process's own (`/proc/self/stat`), over the run's wall
//! time. A comparison of protocols assumes the cores were the run's; when other processes took a
//! visible share, the numbers are low and noisy, and the report says so.
//!
//! Both files count in clock ticks (`sysconf(_SC_CLK_TCK)`, 100 on Linux), so a reading is
//! only as fine as a tick per core; [`OtherLoad::busy`] judges only what stands above that.

use std::time::{Duration, Instant};

/// CPU time, in clock ticks, at one moment: every process's, and this process's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTicks {
    /// Ticks the cores spent not idle (user, nice, system, irq, softirq, steal), all processes.
    pub machine_busy: u64,
    /// Ticks this process used (user and system, all its threads).
    pub own: u64,
}

/// A reading of [`CpuTicks`] with its time, taken before a run and compared after it.
#[derive(Debug, Clone, Copy)]
pub struct CpuSnapshot {
    ticks: CpuTicks,
    at: Instant,
}

/// What other processes used during an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OtherLoad {
    /// Cores other processes kept busy on average (CPU seconds per second of wall time).
    pub cores: f64,
    /// The ticks behind it, to tell a load from a tick's rounding.
    pub ticks: u64,
}

/// Other processes using more than this many cores on average make a run "busy": a quarter of a
/// core is more than background daemons take on an idle machine, and enough to move a
/// two-core comparison.
pub const BUSY_CORES: f64 = 0.25;

/// Fewer ticks than this are rounding (each of the two files is read at a tick's resolution per
/// core), not load, whatever the interval.
const MIN_TICKS: u64 = 5;

impl OtherLoad {
    /// Whether the load is above [`BUSY_CORES`] and above the readings' resolution.
    pub fn busy(&self) -> bool {
        self.cores > BUSY_CORES && self.ticks >= MIN_TICKS
    }
}

impl CpuSnapshot {
    /// Reads `/proc/stat` and `/proc/self/stat` now; `None` where they are missing or unreadable
    /// (not Linux), in which case no load is reported.
    pub fn take() -> Option<Self> {
        let machine = read_head("/proc/stat", 4096)?;
        let own = read_head("/proc/self/stat", 4096)?;
        Some(CpuSnapshot {
            ticks: CpuTicks {
                machine_busy: parse_machine_busy(&machine)?,
                own: parse_own(&own)?,
            },
            at: Instant::now(),
        })
    }

    /// What other processes used from `self` until `later`; `None` when no time passed or the
    /// clock-tick rate is unknown.
    pub fn others_until(&self, later: &CpuSnapshot) -> Option<OtherLoad> {
        others(
            self.ticks,
            later.ticks,
            later.at.saturating_duration_since(self.at),
            clock_ticks_per_second()?,
        )
    }
}

/// The load of other processes between two readings `wall` apart, at `hz` ticks a second:
/// the machine's busy ticks less ours (never below zero: the two files are not read at the same
/// instant).
pub fn others(before: CpuTicks, after: CpuTicks, wall: Duration, hz: u64) -> Option<OtherLoad> {
    if wall.is_zero() || hz == 0 {
        return None;
    }
    let machine = after.machine_busy.saturating_sub(before.machine_busy);
    let own = after.own.saturating_sub(before.own);
    let ticks = machine.saturating_sub(own);
    Some(OtherLoad {
        cores: ticks as f64 / hz as f64 / wall.as_secs_f64(),
        ticks,
    })
}

/// The busy ticks of `/proc/stat`'s first line (`cpu  user nice system idle iowait irq softirq
/// steal ...`): everything but idle and iowait. Guest time is already inside user and nice.
pub fn parse_machine_busy(text: &str) -> Option<u64> {
    let line = text.lines().next()?;
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 4 {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    // user nice system [idle] [iowait] irq softirq steal
    Some(at(0) + at(1) + at(2) + at(5) + at(6) + at(7))
}

/// This process's user and system ticks (fields 14 and 15) from `/proc/self/stat`. The second
/// field, the command name in parentheses, may itself hold spaces and parentheses: the fields
/// are counted from the last `)`.
pub fn parse_own(text: &str) -> Option<u64> {
    let after_name = &text[text.rfind(')')? + 1..];
    // After the name: field 3 (state) is the first; utime is field 14, stime 15.
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The first `limit` bytes of a file, as text (the files read here are a few hundred bytes; the
/// bound keeps a strange `/proc` from being read without end).
fn read_head(path: &str, limit: u64) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

fn clock_ticks_per_second() -> Option<u64> {
    // SAFETY: sysconf reads a constant of the system; it has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).ok().filter(|&hz| hz > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_busy_counts_all_but_idle_and_iowait() {
        let stat = "cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 50 2 25 500 10 1 1 3 0 0\n";
        assert_eq!(parse_machine_busy(stat), Some(100 + 5 + 50 + 3 + 2 + 7));
        assert_eq!(parse_machine_busy("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_machine_busy("cpu 1 x 3 4\n"), None);
        assert_eq!(parse_machine_busy(""), None);
    }

    #[test]
    fn own_ticks_are_read_past_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (tx (bench) x) R 1 2 3 4 5 6 7 8 9 10 130 70 1 1 20 0 9 0 100 0 0";
        assert_eq!(parse_own(stat), Some(200));
        assert_eq!(parse_own("4242 (short"), None);
    }

    #[test]
    fn others_are_the_machine_less_this_process() {
        let before = CpuTicks {
            machine_busy: 1000,
            own: 100,
        };
        // One second at 100 Hz: the machine used 250 ticks, we used 150 of them.
        let after = CpuTicks {
            machine_busy: 1250,
            own: 250,
        };
        let load = others(before, after, Duration::from_secs(1), 100).unwrap();
        assert_eq!(load.ticks, 100);
        assert!((load.cores - 1.0).abs() < 1e-9);
        assert!(load.busy());
        // A tick or two of difference is rounding, not a busy machine, even over a short time.
        let after = CpuTicks {
            machine_busy: 1152,
            own: 250,
        };
        let load = others(before, after, Duration::from_millis(20), 100).unwrap();
        assert_eq!(load.ticks, 2);
        assert!(!load.busy());
        // Our own work alone is not a busy machine.
        let after = CpuTicks {
            machine_busy: 1200,
            own: 300,
        };
        assert!(
            !others(before, after, Duration::from_secs(1), 100)
                .unwrap()
                .busy()
        );
        assert_eq!(others(before, after, Duration::ZERO, 100), None);
    }

    #[test]
    fn this_machine_can_be_read() {
        if cfg!(target_os = "linux") {
            let a = CpuSnapshot::take().expect("/proc readable on Linux");
            let b = CpuSnapshot::take().unwrap();
            assert!(b.ticks.own >= a.ticks.own);
        }
    }
}
