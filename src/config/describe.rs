//! The line above a run's table: the workload and its parameters, the executor, the measured
//! period, whether the history is checked. Here, beside the configuration it describes, so that
//! metrics (which renders the table) needs no configuration type.

use super::{Executor, RunConfig};
use crate::metrics::report::{HEADER_WIDTH, wrap_words};
use crate::workload::WorkloadConfig;

/// The line above a table: the workload and its parameters, threads, duration and warm-up.
pub fn describe_run(cfg: &RunConfig) -> String {
    let params = match serde_json::to_value(&cfg.workload) {
        Ok(serde_json::Value::Object(m)) => m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k} {s}"),
                v => format!("{k} {v}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    let preset = cfg
        .preset
        .as_ref()
        .map(|p| format!(" (preset {p})"))
        .unwrap_or_default();
    let open_loop = cfg
        .open_loop
        .map(|o| {
            format!(
                "\nopen loop: {} txn/s offered ({} arrivals, latency from arrival)",
                o.rate_tps,
                o.arrival.name()
            )
        })
        .unwrap_or_default();
    let threads = match cfg.executor {
        Executor::Thread => format!(
            "{} thread{} (thread executor)",
            cfg.exec.threads,
            if cfg.exec.threads == 1 { "" } else { "s" }
        ),
        Executor::Coro { queue } => format!(
            "{} thread{} x {queue} coroutines (coro executor, queue {queue})",
            cfg.exec.threads,
            if cfg.exec.threads == 1 { "" } else { "s" }
        ),
    };
    let checked = if cfg.check {
        ", checked"
    } else {
        ", history not checked (--check)"
    };
    let workload = format!(
        "{}{preset}: {params};",
        match cfg.workload {
            WorkloadConfig::Ycsb(_) => "ycsb",
            WorkloadConfig::LongScan(_) => "long-scan",
            WorkloadConfig::Tpcc(_) => "tpcc",
            WorkloadConfig::WriteSkew(_) => "write-skew",
            WorkloadConfig::Shifting(_) => "shifting",
        },
    );
    let run = format!(
        "{threads}, {} s measured after {} s warm-up{checked}{open_loop}",
        cfg.exec.duration.as_secs_f64(),
        cfg.exec.warmup.as_secs_f64(),
    );
    // Each line of the run's part wraps on its own (the open loop's is one).
    let run: Vec<String> = run.lines().map(|l| wrap_words(l, HEADER_WIDTH)).collect();
    format!(
        "{}\n{}",
        wrap_words(&workload, HEADER_WIDTH),
        run.join("\n")
    )
}
