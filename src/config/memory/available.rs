//! How much memory this process may use now: the least of
//!
//! - what the machine has free: `MemAvailable` in `/proc/meminfo` (free memory plus what the
//!   kernel can reclaim without swapping);
//! - what its cgroup allows, at every level from its own cgroup up to the hierarchy's root: v2
//!   `memory.max - memory.current`, v1 `memory.limit_in_bytes - memory.usage_in_bytes`, where the
//!   usage leaves out the reclaimable inactive page cache (`inactive_file` in `memory.stat`, as
//!   container runtimes count a working set), or a container whose cache filled up would seem full;
//! - what its resource limits allow: `RLIMIT_AS` (`ulimit -v`) minus the address space mapped
//!   now (`VmSize`), `RLIMIT_DATA` (`ulimit -d`) minus the data mapped now (`VmData`), read from
//!   `/proc/self/limits` and `/proc/self/status` (no libc needed).
//!
//! Everything is read through one function from path to contents, so the parsing is tested on
//! canned files. Where nothing can be read (not Linux), [`FALLBACK_BYTES`] stands in, the fixed
//! guard txbench had before it looked.

use std::fmt;

/// Memory assumed where none of the sources can be read: 64 GiB, a guard against typos such as
/// `--records 1e12`, not a measurement.
pub const FALLBACK_BYTES: u64 = 64 << 30;

/// v1 reports "no limit" as a huge number (`PAGE_COUNTER_MAX` pages); anything from 2^60 up is
/// taken to mean that.
const V1_UNLIMITED: u64 = 1 << 60;

/// Address space set aside under `RLIMIT_AS` for the threads a run starts beside its workers
/// (progress, sampling, logging) and the malloc arenas they map: two arenas of 64 MiB. Without it
/// the stated maximum `--records` failed to allocate once a progress thread was added.
pub const THREAD_ADDRESS_SPACE_BYTES: u64 = 128 << 20;

/// Which limit is the tightest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySource {
    /// `MemAvailable` in `/proc/meminfo`.
    MemAvailable,
    /// A cgroup v2 `memory.max`.
    CgroupV2,
    /// A cgroup v1 `memory.limit_in_bytes`.
    CgroupV1,
    /// `RLIMIT_AS`.
    AddressSpaceLimit,
    /// `RLIMIT_DATA`.
    DataLimit,
    /// [`FALLBACK_BYTES`]: nothing could be read.
    Fallback,
    /// Given by the caller (tests, embedders).
    Given,
}

impl fmt::Display for MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemorySource::MemAvailable => "MemAvailable in /proc/meminfo",
            MemorySource::CgroupV2 => "the cgroup's memory.max less its usage",
            MemorySource::CgroupV1 => "the cgroup's memory.limit_in_bytes less its usage",
            MemorySource::AddressSpaceLimit => {
                "RLIMIT_AS (ulimit -v) less the address space in use"
            }
            MemorySource::DataLimit => "RLIMIT_DATA (ulimit -d) less the data in use",
            MemorySource::Fallback => "a fixed guard: the system's memory could not be read",
            MemorySource::Given => "as given",
        })
    }
}

/// Bytes this process may still allocate, and the limit that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvailableMemory {
    /// Bytes.
    pub bytes: u64,
    /// The tightest limit.
    pub source: MemorySource,
}

impl AvailableMemory {
    /// A given amount (tests, or an embedder that knows better).
    pub fn given(bytes: u64) -> Self {
        AvailableMemory {
            bytes,
            source: MemorySource::Given,
        }
    }

    /// Reads the system's limits now.
    pub fn detect() -> Self {
        Self::from_files(|path| std::fs::read_to_string(path).ok())
    }

    /// The least of every limit found through `read` (path to contents), or the fallback.
    fn from_files(read: impl Fn(&str) -> Option<String>) -> Self {
        let mut found: Vec<AvailableMemory> = Vec::new();
        let mut add = |bytes: Option<u64>, source| {
            if let Some(bytes) = bytes {
                found.push(AvailableMemory { bytes, source });
            }
        };
        add(
            read("/proc/meminfo").and_then(|m| kib_field(&m, "MemAvailable:")),
            MemorySource::MemAvailable,
        );
        if let (Some(limits), Some(status)) = (read("/proc/self/limits"), read("/proc/self/status"))
        {
            for (limit, used, source) in [
                (
                    "Max address space",
                    "VmSize:",
                    MemorySource::AddressSpaceLimit,
                ),
                ("Max data size", "VmData:", MemorySource::DataLimit),
            ] {
                // The address-space limit also counts what the run's threads will reserve but
                // not use: each thread's stack and the malloc arena glibc maps for a thread that
                // allocates (64 MiB of address space each, mostly never touched).
                let reserved = if source == MemorySource::AddressSpaceLimit {
                    THREAD_ADDRESS_SPACE_BYTES
                } else {
                    0
                };
                let left = soft_limit(&limits, limit).map(|max| {
                    max.saturating_sub(kib_field(&status, used).unwrap_or(0))
                        .saturating_sub(reserved)
                });
                add(left, source);
            }
        }
        if let (Some(cgroups), Some(mounts)) =
            (read("/proc/self/cgroup"), read("/proc/self/mountinfo"))
        {
            for (dir, top, v2) in cgroup_dirs(&cgroups, &mounts) {
                let source = if v2 {
                    MemorySource::CgroupV2
                } else {
                    MemorySource::CgroupV1
                };
                add(cgroup_left(&read, &dir, &top, v2), source);
            }
        }
        found
            .into_iter()
            .min_by_key(|a| a.bytes)
            .unwrap_or(AvailableMemory {
                bytes: FALLBACK_BYTES,
                source: MemorySource::Fallback,
            })
    }
}

/// A `Name:   123 kB` field of `/proc/meminfo` or `/proc/self/status`, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let rest = text.lines().find_map(|l| l.strip_prefix(name))?;
    let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The soft limit of row `name` of `/proc/self/limits` (`Max address space  unlimited
/// unlimited  bytes`); `None` when unlimited or absent.
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let rest = limits.lines().find_map(|l| l.strip_prefix(name))?;
    rest.split_whitespace().next()?.parse().ok()
}

/// The directories of this process's memory cgroups, each with its hierarchy's mount point and
/// whether it is v2: for each line of `/proc/self/cgroup` (`0::/path` for v2, `4:memory:/path` or
/// `4:cpu,memory:/path` for v1), the matching mount of `/proc/self/mountinfo` with the path below
/// that mount's root.
fn cgroup_dirs(cgroups: &str, mountinfo: &str) -> Vec<(String, String, bool)> {
    let mut dirs = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let v2 = controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == "memory") {
            continue;
        }
        let mount = mountinfo.lines().find_map(|m| {
            let (fields, fs) = m.split_once(" - ")?;
            let fields: Vec<&str> = fields.split_whitespace().collect();
            let fs: Vec<&str> = fs.split_whitespace().collect();
            let matches = match (v2, fs.first(), fs.get(2)) {
                (true, Some(&"cgroup2"), _) => true,
                (false, Some(&"cgroup"), Some(opts)) => opts.split(',').any(|o| o == "memory"),
                _ => false,
            };
            if !matches {
                return None;
            }
            Some((*fields.get(3)?, *fields.get(4)?))
        });
        let Some((root, point)) = mount else {
            continue;
        };
        // Inside a cgroup namespace the mount's root is the process's own cgroup; elsewhere the
        // process's path lies below the root.
        let below = path
            .strip_prefix(root)
            .unwrap_or("")
            .trim_start_matches('/');
        let top = point.trim_end_matches('/').to_string();
        let dir = if below.is_empty() {
            top.clone()
        } else {
            format!("{top}/{below}")
        };
        dirs.push((dir, top, v2));
    }
    dirs
}

/// The least memory left under any limit from `dir` up to `top`, its hierarchy's mount point (a
/// level without the files, such as a v2 cgroup whose parent does not delegate the memory
/// controller, or the v2 root, sets no limit); `None` when no level has a limit.
fn cgroup_left(
    read: &impl Fn(&str) -> Option<String>,
    dir: &str,
    top: &str,
    v2: bool,
) -> Option<u64> {
    let (limit_file, usage_file, inactive) = if v2 {
        ("memory.max", "memory.current", "inactive_file")
    } else {
        (
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
            "total_inactive_file",
        )
    };
    let number = |path: String| -> Option<u64> { read(&path)?.trim().parse().ok() };
    let mut least: Option<u64> = None;
    let mut level = dir.trim_end_matches('/').to_string();
    loop {
        // "max" (v2) does not parse: no limit at this level.
        let limit = number(format!("{level}/{limit_file}")).filter(|&l| l < V1_UNLIMITED);
        if let Some(limit) = limit {
            let usage = number(format!("{level}/{usage_file}")).unwrap_or(0);
            let cache = read(&format!("{level}/memory.stat"))
                .and_then(|s| {
                    s.lines().find_map(|l| {
                        let (k, v) = l.split_once(' ')?;
                        (k == inactive).then(|| v.trim().parse().ok())?
                    })
                })
                .unwrap_or(0);
            let left = limit.saturating_sub(usage.saturating_sub(cache));
            least = Some(least.map_or(left, |l| l.min(left)));
        }
        match level.rfind('/') {
            Some(i) if level.len() > top.len() && i >= top.len() => level.truncate(i),
            _ => break,
        }
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn files(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |p| map.get(p).cloned()
    }

    const LIMITS_UNLIMITED: &str = "\
Limit                     Soft Limit           Hard Limit           Units
Max data size             unlimited            unlimited            bytes
Max address space         unlimited            unlimited            bytes
";
    const STATUS: &str = "Name:\ttxbench\nVmSize:\t    4000 kB\nVmData:\t     500 kB\n";

    #[test]
    fn nothing_readable_falls_back_to_the_fixed_guard() {
        let a = AvailableMemory::from_files(|_| None);
        assert_eq!(a.bytes, FALLBACK_BYTES);
        assert_eq!(a.source, MemorySource::Fallback);
    }

    #[test]
    fn meminfo_alone() {
        let a = AvailableMemory::from_files(files(&[
            (
                "/proc/meminfo",
                "MemTotal: 100 kB\nMemFree: 5 kB\nMemAvailable:   2000 kB\n",
            ),
            ("/proc/self/limits", LIMITS_UNLIMITED),
            ("/proc/self/status", STATUS),
        ]));
        assert_eq!(
            a,
            AvailableMemory {
                bytes: 2000 * 1024,
                source: MemorySource::MemAvailable
            }
        );
    }

    #[test]
    fn an_address_space_limit_counts_what_is_mapped() {
        let limits = LIMITS_UNLIMITED.replace(
            "Max address space         unlimited",
            "Max address space         8000000000",
        );
        let a = AvailableMemory::from_files(files(&[
            ("/proc/meminfo", "MemAvailable: 20000000 kB\n"),
            ("/proc/self/limits", &limits),
            ("/proc/self/status", STATUS),
        ]));
        assert_eq!(
            a.bytes,
            8_000_000_000 - 4000 * 1024 - THREAD_ADDRESS_SPACE_BYTES
        );
        assert_eq!(a.source, MemorySource::AddressSpaceLimit);
        let data = LIMITS_UNLIMITED.replace(
            "Max data size             unlimited",
            "Max data size             1000000",
        );
        let a = AvailableMemory::from_files(files(&[
            ("/proc/self/limits", &data),
            ("/proc/self/status", STATUS),
        ]));
        assert_eq!(a.bytes, 1_000_000 - 500 * 1024);
        assert_eq!(a.source, MemorySource::DataLimit);
    }

    #[test]
    fn cgroup_v2_takes_the_tightest_level_less_inactive_cache() {
        let a = AvailableMemory::from_files(files(&[
            ("/proc/meminfo", "MemAvailable: 20000000 kB\n"),
            ("/proc/self/cgroup", "0::/box/job\n"),
            (
                "/proc/self/mountinfo",
                "30 1 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n",
            ),
            ("/sys/fs/cgroup/box/job/memory.max", "max\n"),
            ("/sys/fs/cgroup/box/job/memory.current", "100\n"),
            ("/sys/fs/cgroup/box/memory.max", "3000000000\n"),
            ("/sys/fs/cgroup/box/memory.current", "1000000000\n"),
            (
                "/sys/fs/cgroup/box/memory.stat",
                "anon 600000000\ninactive_file 400000000\nactive_file 1\n",
            ),
        ]));
        assert_eq!(a.bytes, 3_000_000_000 - 600_000_000);
        assert_eq!(a.source, MemorySource::CgroupV2);
    }

    #[test]
    fn cgroup_v1_in_a_namespace_and_unlimited_levels() {
        // Inside a container the mount's root is the container's own cgroup.
        let mountinfo = "\
35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 /docker/abc /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
";
        let read = files(&[
            (
                "/proc/self/cgroup",
                "5:cpu:/docker/abc\n4:memory:/docker/abc\n",
            ),
            ("/proc/self/mountinfo", mountinfo),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "2147483648\n",
            ),
            ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "147483648\n"),
            (
                "/sys/fs/cgroup/memory/memory.stat",
                "cache 1\ntotal_inactive_file 47483648\n",
            ),
        ]);
        let a = AvailableMemory::from_files(read);
        assert_eq!(a.bytes, 2_147_483_648 - 100_000_000);
        assert_eq!(a.source, MemorySource::CgroupV1);

        // A host-side hierarchy with no limit anywhere: the cgroup adds nothing.
        let read = files(&[
            ("/proc/meminfo", "MemAvailable: 1000 kB\n"),
            ("/proc/self/cgroup", "4:memory:/jobs/x\n"),
            (
                "/proc/self/mountinfo",
                "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
            ),
            (
                "/sys/fs/cgroup/memory/jobs/x/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            (
                "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
        ]);
        assert_eq!(
            AvailableMemory::from_files(read).source,
            MemorySource::MemAvailable
        );
    }

    #[test]
    fn this_machine_reports_something() {
        let a = AvailableMemory::detect();
        assert!(a.bytes > 0, "{a:?}");
    }
}
