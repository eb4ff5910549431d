//! The machine a run used, recorded next to its results.

use serde::Serialize;

/// Cores and CPU model.
#[derive(Debug, Clone, Serialize)]
pub struct MachineInfo {
    /// Logical CPUs available to this process.
    pub cores: usize,
    /// CPU model name (from /proc/cpuinfo on Linux), or "unknown".
    pub cpu_model: String,
    /// Operating system.
    pub os: &'static str,
    /// Physical memory in bytes (MemTotal of /proc/meminfo on Linux), if known.
    pub memory_bytes: Option<u64>,
}

impl MachineInfo {
    /// Reads the current machine.
    pub fn detect() -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let memory_bytes = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        });
        MachineInfo {
            cores,
            cpu_model,
            os: std::env::consts::OS,
            memory_bytes,
        }
    }
}
