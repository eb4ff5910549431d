//! The text above a table: the workload, its parameters and the run's settings, wrapped to
//! the terminal.

use crate::config::RunConfig;

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
        crate::config::Executor::Thread => format!(
            "{} thread{} (thread executor)",
            cfg.exec.threads,
            if cfg.exec.threads == 1 { "" } else { "s" }
        ),
        crate::config::Executor::Coro { queue } => format!(
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
            crate::workload::WorkloadConfig::Ycsb(_) => "ycsb",
            crate::workload::WorkloadConfig::LongScan(_) => "long-scan",
            crate::workload::WorkloadConfig::Tpcc(_) => "tpcc",
            crate::workload::WorkloadConfig::WriteSkew(_) => "write-skew",
            crate::workload::WorkloadConfig::Shifting(_) => "shifting",
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

/// The widest line `describe_run` and `render_protocol_stats` write: the default table fits a
/// 100-column terminal, and so does the text around it.
pub(super) const HEADER_WIDTH: usize = 100;

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole),
/// continuation lines indented by two spaces.
pub(super) fn wrap_words(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut line_len = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = word.chars().count();
        if line_len > 0 && line_len + 1 + len > width {
            out.push_str("\n  ");
            line_len = 2;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_fit_the_width_and_keep_every_word() {
        let text = "ycsb: index array, key_dist zipf, long_ops 16, long_share 0.0, long_txn_delay_us 0, \
                    ops 16, payload 100, read_ratio 0.5, records 1048576, rmw false, theta 0.99;";
        let wrapped = wrap_words(text, 40);
        assert!(
            wrapped.lines().all(|l| l.chars().count() <= 40),
            "{wrapped}"
        );
        assert!(wrapped.lines().count() > 1);
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&wrapped), words(text));
        assert_eq!(wrap_words("short line", 40), "short line");
        // A word longer than the width stays whole on its own line.
        assert_eq!(wrap_words("a abcdefghij b", 5), "a\n  abcdefghij\n  b");
    }
}
