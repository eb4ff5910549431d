//! Live versions over time: a multi-version run's report carries samples of its live versions
//! and version memory, in time order, from the warm-up through the measured period; a
//! single-version run's carries none.

use clap::Parser;
use txbench::config::{Cli, Command, RunConfig};
use txbench::runner::run_all;

/// `txbench run ARGS`, validated.
fn config(args: &[&str]) -> RunConfig {
    let cli = Cli::parse_from(["txbench", "run"].iter().chain(args));
    let Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    run.validate().expect("valid flags")
}

#[test]
fn multi_version_runs_record_versions_over_time_and_single_version_runs_do_not() {
    // Half blind writes on a small table: every committed write leaves an older version until
    // the watermark passes it, so some samples see versions live.
    let cfg = config(&[
        "-p",
        "si,mvto,silo",
        "--records",
        "1000",
        "--payload",
        "16",
        "--ops",
        "8",
        "--read-ratio",
        "0.5",
        "--blind",
        "-t",
        "4",
        "-d",
        "0.3",
        "--warmup",
        "0.1",
        "--sample-ms",
        "20",
        "--no-pin",
    ]);
    let reports = run_all(&cfg, |_| {}).expect("tables fit");
    for r in &reports {
        let samples = &r.version_samples;
        if r.protocol == "silo" {
            assert!(samples.is_empty(), "silo keeps no versions: {samples:?}");
            let json = serde_json::to_value(r).unwrap();
            assert!(
                json.get("version_samples").is_none(),
                "absent from silo's row"
            );
            continue;
        }
        assert!(r.commits > 0, "{}: nothing committed", r.protocol);
        // 0.4 s at 20 ms: about 20 samples, the first at the start and one at the end. A loaded
        // machine may stretch the sampler's sleeps, never below the first and last.
        assert!(samples.len() >= 2, "{}: {samples:?}", r.protocol);
        assert!(samples[0].t_s < 0.1, "{}: {samples:?}", r.protocol);
        assert!(
            samples.last().unwrap().t_s >= 0.4,
            "{}: the last sample ends the run: {samples:?}",
            r.protocol
        );
        assert!(
            samples
                .windows(2)
                .all(|w| w[0].t_s <= w[1].t_s && w[0].version_bytes <= w[1].version_bytes),
            "{}: time and the allocation high-water mark only grow: {samples:?}",
            r.protocol
        );
        assert!(
            samples.iter().any(|s| s.live_versions > 0),
            "{}: versions were live during the run: {samples:?}",
            r.protocol
        );
        assert!(samples.iter().all(|s| s.live_versions >= 0));
        let json = serde_json::to_value(r).unwrap();
        let row = json["version_samples"].as_array().expect("in the JSON row");
        assert_eq!(row.len(), samples.len());
        assert!(row[0].get("live_versions").is_some() && row[0].get("t_s").is_some());
    }
}
