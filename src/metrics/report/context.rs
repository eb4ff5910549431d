//! What a report records about its run besides the workers' counts. The caller hands it in
//! (the runner builds it with `RunConfig::report_context`), so that metrics depends on neither
//! the configuration's nor the workloads' types.

/// The run a report summarises: its workload, its settings as recorded, its executor and load.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The workload's name (`workload` in every report).
    pub workload: &'static str,
    /// The workload's transaction types, in the order of
    /// [`WorkerStats::types`](crate::metrics::WorkerStats::types).
    pub txn_types: &'static [&'static str],
    /// The run's settings as reports record them (`config`): the workload's parameters, the
    /// threads and periods, the protocol options, the open loop.
    pub config: serde_json::Value,
    /// Worker threads (`threads`).
    pub threads: usize,
    /// The executor's name (`executor`).
    pub executor: &'static str,
    /// Transactions in flight per thread (`queue`; 1 under the thread executor).
    pub queue: usize,
    /// Whether the executor counts scheduling signals (the coroutine executor's `signals`).
    pub reports_signals: bool,
    /// `--rate`: offered transactions per second; `None` in a closed loop.
    pub offered_tps: Option<f64>,
    /// `--arrival`, with `--rate`.
    pub arrival: Option<&'static str>,
}
