//! The command line as clap sees it: subcommands and every flag of `txbench run`, unvalidated.

use super::Format;
use super::whole::Whole;
use crate::metrics::progress::ProgressMode;
use crate::workload::tpcc::{StockLevelIsolation, WarehouseBinding};
use clap::{Args, Parser, Subcommand, ValueEnum};

/// The `txbench` command line.
#[derive(Debug, Parser)]
#[command(
    name = "txbench",
    // The commit too: a sweep that runs another build (`binary`) records it from this line.
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("TXBENCH_GIT_COMMIT"), ")"),
    about = "In-memory transaction engine and concurrency-control testbed"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workload on one or more protocols and print a comparison.
    Run(Box<RunArgs>),
    /// List protocols, workloads, presets and options.
    List,
    /// Run the grid of an experiment file, appending one JSON row per run to a results file.
    Sweep(super::experiment_cli::SweepArgs),
    /// Combine results files (from --emit-jobs or several machines) into one.
    Merge(super::experiment_cli::MergeArgs),
    /// Print a results file as Markdown tables: medians with min-max across repetitions.
    Report(super::experiment_cli::ReportArgs),
    /// Compare two results files (two builds or machines): per point and protocol, the ratio of
    /// medians with its range, changes beyond the runs' own min-max spread flagged.
    Compare(super::experiment_cli::CompareArgs),
    /// Draw a results file's figures (PNG and SVG): each metric against a swept parameter, and
    /// p99.9 latency against throughput.
    Plot(super::experiment_cli::PlotArgs),
    /// Serve a workload's tables to interactive clients over TCP (docs/PROTOCOL.md).
    Serve(Box<super::serve_cli::ServeArgs>),
    /// Measure the bare round trip to a `txbench serve` server.
    Ping(super::serve_cli::PingArgs),
    /// Rebuild the database a `txbench run --log DIR` left, replaying its log files in
    /// parallel, and check it (TPC-C's consistency conditions).
    Recover(RecoverArgs),
}

/// Flags of `txbench recover`.
#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The log directory (`txbench run --log DIR`).
    pub dir: std::path::PathBuf,
    /// Output format: a summary (table), or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the id of every replayed transaction to this file, one per line (crash tests).
    #[arg(long, value_name = "FILE")]
    pub txn_ids: Option<std::path::PathBuf>,
}

/// PLOR commit priority as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlorPriorityArg {
    /// Arrival timestamp (PLOR).
    Arrival,
    /// Deadline A + SF x R (PLOR-RT).
    Deadline,
}

/// Who runs C-Sched's scheduling passes, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CSchedHelpArg {
    /// Waiting workers run passes when no core is spare for the scheduler thread.
    Auto,
    /// Waiting workers always run passes when the scheduler is free.
    Always,
    /// Only the scheduler thread runs passes.
    Never,
}

/// YCSB's key access method as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IndexArg {
    /// Key k is record k: no lookup cost (the default).
    Array,
    /// The concurrent hash index (DBx1000's YCSB access path).
    Hash,
    /// The ordered B+-tree index (in place of CCBench's Masstree).
    Ordered,
}

/// Lock waiting policy as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LockWaitArg {
    /// Abort when a lock is busy.
    NoWait,
    /// Wait for a busy lock.
    Wait,
}

/// MOCC temperature granularity as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MoccTemperatureArg {
    /// One counter per 4 KiB page of records.
    Page,
    /// One counter per record.
    Record,
}

/// MOCC record lock as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MoccLockArg {
    /// CCBench's reader/writer lock.
    Rw,
    /// MQL, the cancellable queue lock.
    Mql,
}

/// Flags of `txbench run`. Unset workload flags take the preset's value (or YCSB-A's).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Protocols: one name, a comma-separated list, or `all` (which includes `nocc` as the ceiling,
    /// and the deterministic protocols where the workload declares access sets).
    #[arg(long, short = 'p', default_value = "all")]
    pub protocol: String,
    /// Workload: ycsb, long-scan, tpcc, write-skew or shifting.
    #[arg(long, short = 'w', default_value = "ycsb")]
    pub workload: String,
    /// Workload preset: ycsb-a, ycsb-b, ycsb-c, ycsb-f, ycsb-a-bimodal, sgpm-high, sgpm-low.
    #[arg(long)]
    pub preset: Option<String>,
    /// Number of records (cardinality).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub records: Option<u64>,
    /// Payload bytes per record.
    #[arg(long, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub payload: Option<usize>,
    /// Operations per transaction (per short transaction with bimodal sizes).
    #[arg(long, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub ops: Option<usize>,
    /// Operations per long transaction (bimodal sizes).
    #[arg(long, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub long_ops: Option<usize>,
    /// Share of long transactions, 0..1 (0 = one size only).
    #[arg(long, allow_negative_numbers = true)]
    pub long_share: Option<f64>,
    /// Probability that an operation reads, 0..1.
    #[arg(long, allow_negative_numbers = true)]
    pub read_ratio: Option<f64>,
    /// Exactly this many writes per transaction, at random positions (overrides --read-ratio).
    #[arg(long, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub writes: Option<usize>,
    /// long-scan, shifting: records in the small hot table.
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub hot_records: Option<u64>,
    /// long-scan: consecutive records each transaction scans.
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub scan_length: Option<u64>,
    /// shifting: distinct large-table records each transaction reads, 1..=min(records, 4096)
    /// (default 20, MOCC's figure 8).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub large_reads: Option<u64>,
    /// shifting: milliseconds the small-table operation stays a read, then a read-modify-write,
    /// and so on, 1..=60000 (default 100, MOCC's 0.1 s).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub shift_period_ms: Option<u64>,
    /// tpcc: warehouses W, 1..=1024 (default 1).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub warehouses: Option<u64>,
    /// tpcc: transaction mix, `full`, `np` or `new_order=50,payment=40,...` summing to 100
    /// (default full).
    #[arg(long)]
    pub mix: Option<String>,
    /// tpcc: Stock-Level isolation (default serializable).
    #[arg(long, value_enum)]
    pub stock_level_isolation: Option<StockLevelIsolation>,
    /// tpcc: home warehouse per worker (home: worker i uses i % W + 1) or per transaction (random)
    /// (default home).
    #[arg(long, value_enum)]
    pub warehouse_binding: Option<WarehouseBinding>,
    /// tpcc: order ids each district can address beyond its 3000 loaded orders, a cap that
    /// costs no memory until used (tables grow as rows are inserted); default: enough for
    /// 500,000 New-Orders per second over --duration + --warmup, at least 2000.
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub tpcc_spare_orders: Option<u64>,
    /// Writes are read-modify-writes.
    #[arg(long, conflicts_with = "blind")]
    pub rmw: bool,
    /// Writes are blind writes.
    #[arg(long)]
    pub blind: bool,
    /// ycsb: access a transaction's records one after another without loading its index
    /// entries and records ahead of the first access (the anchors' way; by default their
    /// cache misses overlap).
    #[arg(long)]
    pub no_prefetch: bool,
    /// Zipfian skew, 0 <= theta <= 10 (0 = uniform; Gray et al.'s generator below 1, exact
    /// rejection-inversion from 1).
    #[arg(long, allow_negative_numbers = true)]
    pub theta: Option<f64>,
    /// ycsb, long-scan: how every access finds its record: `array` (key k is record k, no
    /// lookup; the default), `hash` or `ordered` (a lookup in that index, for every protocol
    /// alike; long-scan's scans are one lookup per key through `hash`, a range walk through
    /// `ordered`).
    #[arg(long, value_enum)]
    pub index: Option<IndexArg>,
    /// Worker threads (default: the number of cores); with --interactive or --connect, the
    /// clients (--clients is the same flag).
    #[arg(long, short = 't', visible_alias = "clients", value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub threads: Option<usize>,
    /// Measured seconds per protocol.
    #[arg(
        long,
        short = 'd',
        default_value_t = 2.0,
        allow_negative_numbers = true
    )]
    pub duration: f64,
    /// Warm-up seconds before measuring (not counted).
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub warmup: f64,
    /// Runs per protocol (round-robin over protocols); the table shows medians.
    #[arg(long, default_value_t = 1, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub repeat: usize,
    /// Seed: the same seed gives each worker the same transaction stream.
    #[arg(long, default_value_t = 1, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub seed: u64,
    /// Record the history and run the serializability checker after each run.
    #[arg(long)]
    pub check: bool,
    /// With --check: the most operations the history records, all workers together; past it
    /// recording stops with a warning (default: 8M operations, or what a quarter of the
    /// available memory holds if less).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub check_limit: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Table: every column, also those that carry no information in this run (the default
    /// table leaves them out to fit 100 columns).
    #[arg(long)]
    pub wide: bool,
    /// Show loading, running and checking on stderr: a spinner on a terminal, otherwise a line
    /// every 5 s while a phase lasts (always: also when each phase starts).
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
    /// NoWait or Wait when an optimistic protocol finds a write lock busy at commit (Silo, TicToc).
    #[arg(long, value_enum, default_value_t = LockWaitArg::NoWait)]
    pub lock_wait: LockWaitArg,
    /// AdaptiveBackoff: random delay before retrying, maximum tuned by throughput (all protocols).
    #[arg(long)]
    pub backoff: bool,
    /// ReadPhaseExtension: artificial delay at the end of the read phase, in ns (all protocols).
    #[arg(long, default_value_t = 0, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub read_phase_extension: u64,
    /// CoreSlice: with more workers than cores (thread executor), a worker that has run this
    /// many microseconds since it last gave up its core hands its core's seat to a waiting
    /// worker (or, with --no-core-seats, yields) between two transactions, so the switch falls
    /// where it holds no locks (0: never; the kernel preempts wherever it is). 0..=1000000
    /// (default 200)
    #[arg(long, default_value_t = 200, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub core_slice_us: u64,
    /// CoreSeats off: with more workers than cores (thread executor), let every worker run at
    /// once and the kernel time-slice them, instead of one seat per core handed over between
    /// transactions after each slice (`exec::core_seats`).
    #[arg(long)]
    pub no_core_seats: bool,
    /// TicToc NoWaitTT: on a busy lock in validation, release all locks, pause and retry.
    #[arg(long)]
    pub tictoc_nowait_tt: bool,
    /// TicToc PreemptiveAbort: abort before locking when a read cannot validate.
    #[arg(long)]
    pub tictoc_preemptive_abort: bool,
    /// TicToc TimestampHistory: keep the previous write timestamp for validation.
    #[arg(long)]
    pub tictoc_timestamp_history: bool,
    /// Silo epoch length in milliseconds.
    #[arg(long, default_value_t = 40, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub silo_epoch_ms: u64,
    /// MOCC temperature threshold H (read-lock records at or above it), 0..=63 (0: every
    /// record is hot, so every read locks: MOCC's pessimistic end).
    #[arg(long, default_value_t = 10, value_parser = Whole::<u32>::new(), allow_negative_numbers = true)]
    pub mocc_threshold: u32,
    /// MOCC temperature granularity.
    #[arg(long, value_enum, default_value_t = MoccTemperatureArg::Page)]
    pub mocc_temperature: MoccTemperatureArg,
    /// MOCC record lock: CCBench's reader/writer lock or MQL.
    #[arg(long, value_enum, default_value_t = MoccLockArg::Rw)]
    pub mocc_lock: MoccLockArg,
    /// PLOR delayed write-lock acquisition: blind writes lock at commit, RMWs upgrade at commit.
    #[arg(long)]
    pub plor_dwa: bool,
    /// PLOR: aborts after which a read-only transaction takes read locks (0 = always).
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = Whole::<u32>::new())]
    pub plor_ro_threshold: u32,
    /// PLOR commit priority: arrival timestamp, or deadline A + SF x R (PLOR-RT).
    #[arg(long, value_enum, default_value_t = PlorPriorityArg::Arrival)]
    pub plor_priority: PlorPriorityArg,
    /// PLOR-RT slack factor SF (arrival ticks per record accessed), >= 0.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub plor_slack: f64,
    /// Do not pin worker threads to cores.
    #[arg(long)]
    pub no_pin: bool,

    // Version memory of the multi-version protocols (si).
    /// RapidGC: interval between recomputations of the version-reclamation watermark, in
    /// microseconds (0: at every transaction start).
    #[arg(long, default_value_t = 10, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub gc_interval_us: u64,
    /// AssertiveVersionReuse off: each version node comes from the allocator and goes back to
    /// it when collected (AggressiveGC's type-stable store: one shared, locked free list),
    /// instead of per-worker caches reserved ahead.
    #[arg(long)]
    pub no_version_reuse: bool,
    /// Most memory older versions may take, in MiB; past it the run stops with a message
    /// (default 1024, or what the memory left beside the tables holds when that is less).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub version_memory_mb: Option<u64>,
    /// DecentSched: shared queues objects are hashed onto, 1..=16777216.
    #[arg(long, default_value_t = 16_384, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub ds_queues: usize,
    /// DecentSched: transactions a worker may run per epoch, 1..=1048576.
    #[arg(long, default_value_t = 1024, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub ds_epoch_txns: usize,
    /// DecentSched: longest epoch in microseconds, 1..=10000000.
    #[arg(long, default_value_t = 1000, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub ds_epoch_us: u64,
    /// DecentSched: opportunistic execution: a transaction runs while it waits for its turn and
    /// re-executes in place when what it read changed (re-executions are reported, not aborts).
    #[arg(long)]
    pub ds_opportunistic: bool,
    /// Batch protocols (aria, calvin, bohm, pwv): most transactions per batch, 1..=1024. A batch holds at most one
    /// transaction per worker in flight (threads, or threads x --queue).
    #[arg(long, default_value_t = 1024, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub batch_size: usize,
    /// Batch protocols (aria, calvin, bohm, pwv): a batch closes this many microseconds after its first
    /// transaction joined, full or not, 0..=10000000.
    #[arg(long, default_value_t = 100, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub batch_timeout_us: u64,
    /// Aria: deterministic reordering: a read-after-write conflict aborts only together with a
    /// write-after-read conflict.
    #[arg(long)]
    pub aria_reordering: bool,
    /// Aria: the fallback phase (AriaFB): a transaction that loses a conflict reruns in its
    /// own batch, after the batch's commits, under locks granted in batch order over what its
    /// first run touched; only a rerun that touches something else moves to the next batch.
    #[arg(long)]
    pub aria_fallback: bool,
    /// Calvin (batched): the no-wait form: a transaction whose locks are not all free at its
    /// turn in the batch reruns in the next batch instead of waiting (SGPM's Calvin_NW).
    #[arg(long)]
    pub calvin_no_wait: bool,
    /// BOHM: the no-wait form: a transaction that would wait for a version an earlier member of
    /// its batch has not produced reruns in the next batch instead (SGPM's BOHM_NW).
    #[arg(long)]
    pub bohm_no_wait: bool,
    /// PWV: the no-wait form: a transaction that would wait for a version an earlier member of
    /// its batch has not made visible reruns in the next batch instead (SGPM's PWV_NW).
    #[arg(long)]
    pub pwv_no_wait: bool,
    /// C-Sched: who runs the scheduler's passes: waiting workers help when no core is spare for
    /// the scheduler thread (auto), always, or never (the scheduler thread alone).
    #[arg(long, value_enum, default_value_t = CSchedHelpArg::Auto)]
    pub c_sched_help: CSchedHelpArg,
    /// AggressiveGC (mvto): installs free all but the newest older version, even ones readers
    /// still need (those readers abort and retry at a new timestamp).
    #[arg(long)]
    pub aggressive_gc: bool,
    /// With --aggressive-gc: keep the newest older versions contiguous (kVSR-like; under
    /// starvation protection every version above the protected snapshot) instead of the newest
    /// and the protected snapshot's own version only (CCBench 7.3's non-contiguous proposal).
    #[arg(long)]
    pub aggressive_gc_contiguous: bool,
    // ---- execution model (issue 11) ----
    /// Execution model: thread (one transaction in flight per thread) or coro (SGPM coroutines:
    /// up to --queue transactions in flight per thread, switching on conflict or completion).
    #[arg(long, value_enum, default_value_t = ExecutorArg::Thread)]
    pub executor: ExecutorArg,
    /// --executor coro: transactions in flight per thread, Q >= 1 (default 1). Every in-flight
    /// transaction is a protocol worker: threads x Q must fit the protocols' worker limits.
    #[arg(long, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub queue: Option<usize>,
    /// YCSB key distribution: zipf (skew --theta; the default) or normal (SGPM: --key-mean,
    /// --key-sd).
    #[arg(long, value_enum)]
    pub key_dist: Option<KeyDistArg>,
    /// --key-dist normal: the mean key, 0 <= mean < records (default records / 2).
    #[arg(long, allow_negative_numbers = true)]
    pub key_mean: Option<f64>,
    /// --key-dist normal: the standard deviation in keys, at least the operations per
    /// transaction (default records / 20).
    #[arg(long, allow_negative_numbers = true)]
    pub key_sd: Option<f64>,
    // ---- open-loop offered load (issue 12) ----
    /// Open loop: transactions arrive at this many per second across all workers (each worker
    /// draws rate / threads), and latency counts from the arrival, queueing included; without
    /// it each worker starts its next transaction when the last ends (closed loop). Thread
    /// executor only.
    #[arg(long, allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// With --rate: arrival process, poisson (exponential gaps; the default) or uniform (equal
    /// gaps).
    #[arg(long, value_enum)]
    pub arrival: Option<ArrivalArg>,
    // ---- Cicada's optimisations (issue 9), all on by default as in the Cicada paper; RapidGC
    // is --gc-interval-us and AssertiveVersionReuse --no-version-reuse ----
    /// Cicada EarlyAbort off: a write that must fail validation aborts at commit, not at once.
    #[arg(long)]
    pub cicada_no_early_abort: bool,
    /// Cicada BestEffortInlining off: every version, the newest too, is a chain node.
    #[arg(long)]
    pub cicada_no_inlining: bool,
    /// Cicada PrecheckVersionConsistency off: no check of reads and writes before locking.
    #[arg(long)]
    pub cicada_no_precheck: bool,
    /// Cicada SortWriteSetByContention off: lock the write set in record order.
    #[arg(long)]
    pub cicada_no_sort: bool,
    /// Cicada's adaptive omission off: precheck and sort run at every commit (on: a worker
    /// whose last 5 transactions committed skips both, CCBench's CONTINUING_COMMIT_THRESHOLD).
    #[arg(long)]
    pub cicada_no_adaptive_skip: bool,
    /// Cicada AdaptiveBackoff off (on for Cicada by default; --backoff turns it on for all).
    #[arg(long)]
    pub cicada_no_backoff: bool,
    /// Cicada as CCBench's default build compiles it (INLINE_VERSION_OPT=0: no inline version,
    /// every version a chain node, i.e. --cicada-no-inlining; its write set sorted by key, not
    /// by contention, i.e. --cicada-no-sort); the other switches as given. CCBench's
    /// WRITE_LATEST_ONLY=0 (blind writes between older versions) is not built: writes always
    /// create the newest version.
    #[arg(long)]
    pub cicada_ccbench_build: bool,
    /// SI and ERMIA readers skip a version still being committed when its committer's
    /// timestamp is certainly above their snapshot, as CCBench's readers do (off: they wait
    /// for the committer whenever its version may be visible to them).
    #[arg(long)]
    pub skip_in_flight: bool,
    /// ERMIA: no early exclusion check (on: every read and write checks SSN's exclusion window
    /// with what it knows so far and aborts at once, CCBench's verify_exclusion_or_abort).
    #[arg(long)]
    pub ermia_no_early_check: bool,
    /// ERMIA: keep a read when the same transaction overwrites the record (on: the read is
    /// dropped from the read set, as CCBench's ssn_twrite does).
    #[arg(long)]
    pub ermia_no_read_pruning: bool,

    // Tables that grow (issue 13).
    /// Most memory the tables may take, in MiB, loaded rows included; a run whose inserts need
    /// more stops early with its results so far and a warning (default: the memory validation
    /// found free for the tables before the run).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub table_memory_mb: Option<u64>,
    // ---- CCBench's long-transaction workload (issue 9) ----
    /// YCSB: worker 0 pauses this many microseconds at the end of each read phase, before
    /// commit, while the other workers run unchanged (CCBench figure 14), 0..=10000000.
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub long_txn_delay_us: Option<u64>,
    // ---- time series: live versions (issue 9), rates (issue 27) ----
    /// Sample every this many milliseconds while the run goes on: each interval's throughput
    /// and abort ratio (the report's `rate_samples`), and for multi-version protocols live
    /// versions and version memory (`version_samples`); `txbench plot` draws them over time.
    /// 1..=60000, at most 100000 samples over warm-up and duration (default 100, or what keeps
    /// a longer run within 100000 samples).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub sample_ms: Option<u64>,
    // ---- interactive transactions (issue 24) ----
    /// Interactive transactions: a server and --threads clients in this process, over
    /// loopback; each client sends every operation to the server and waits for its reply
    /// (docs/PROTOCOL.md), so transactions hold their locks across round trips.
    #[arg(long)]
    pub interactive: bool,
    /// Drive a running `txbench serve` at HOST:PORT with --clients clients; the workload flags
    /// must be the server's, -p names the server's protocol in the report.
    #[arg(long, value_name = "HOST:PORT")]
    pub connect: Option<String>,
    /// An added delay per round trip, in microseconds, on the server's reply path (`serve`,
    /// `run --interactive`), 0..=1000000: sweeps network latency on one machine.
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub rtt_us: Option<u64>,
    /// The server's secret: `serve` requires it of every client (and needs it to listen
    /// beyond loopback); `run --connect` presents it.
    #[arg(long)]
    pub token: Option<String>,
    // ---- durability (issue 25) ----
    /// Redo-log every committed write, insert and delete to log files (--log-files) in this
    /// directory, which must exist and hold no other run's log; `txbench recover DIR` rebuilds
    /// the database from it. One protocol, one repetition (under --executor coro, each
    /// coroutine slot is a logged worker, and no --log-sync txn).
    #[arg(long, value_name = "DIR")]
    pub log: Option<std::path::PathBuf>,
    /// With --log: when a commit is acknowledged: group (once a group flush has synced the
    /// log up to its epoch; the default), txn (after a sync the commit itself starts) or none
    /// (at once; the log is written every group interval and synced only at the end).
    #[arg(long, value_enum)]
    pub log_sync: Option<LogSyncArg>,
    /// With --log: the group commit interval (how often an epoch closes and the log is
    /// flushed), in microseconds, 100..=1000000 (default 2000).
    #[arg(long, value_parser = Whole::<u64>::new(), allow_negative_numbers = true)]
    pub log_group_us: Option<u64>,
    /// With --log: what is logged: redo (each committed transaction's new rows, at commit;
    /// the default; `txbench recover` rebuilds the database from it) or undo (PLOR's figure
    /// 14: each attempt's before-images, copied at its first write to each record while it
    /// holds it, and its outcome, committed or aborted; not recoverable, since the tables are
    /// in memory). Undo runs with no_wait, wait_die, wound_wait, plor (without --plor-dwa),
    /// twopl_er, ord_lock, c_sched, calvin_ticket and decentsched.
    #[arg(long, value_enum)]
    pub log_kind: Option<LogKindArg>,
    /// With --log: how many log files are written in parallel (SiloR's loggers), 1 up to
    /// one per worker; worker W's transactions go to file W mod N. Each group flush writes
    /// and syncs each file with something new once, so fewer files mean fewer syncs; recovery
    /// reads each file on a thread of its own. Default: one file per 8 workers.
    #[arg(long, value_parser = Whole::<usize>::new(), allow_negative_numbers = true)]
    pub log_files: Option<usize>,
    /// With --log, for crash tests: after each durable acknowledgement, append the
    /// transaction's id to ack-W.txt (W: the worker) in this existing directory.
    #[arg(long, value_name = "DIR")]
    pub log_acks: Option<std::path::PathBuf>,
    /// Not a flag: set by `txbench serve`, whose `--log` directory may hold its previous
    /// log, which it recovers and continues (`log::resume`) instead of refusing it.
    #[arg(skip)]
    pub resume_log: bool,
    /// With --log: every this many seconds (> 0, fractions allowed), a fuzzy checkpoint of
    /// every record is written beside the log while the run goes on (checkpoint-N.ckpt), each
    /// log is split into segment files, and the segments no checkpoint still needs
    /// are removed (the newest two checkpoints are kept); `txbench recover` then starts from
    /// the newest complete checkpoint.
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub checkpoint_s: Option<f64>,
}

/// `--log-sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogSyncArg {
    /// Acknowledge at once; sync only at the end of the run.
    None,
    /// Acknowledge once a group flush synced the transaction's epoch.
    Group,
    /// Acknowledge after a sync started by the commit itself.
    Txn,
}

/// `--log-kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogKindArg {
    /// Each committed transaction's new rows (recoverable).
    Redo,
    /// Each attempt's before-images and outcome (PLOR figure 14's cost; not recoverable).
    Undo,
}

/// `--arrival`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArrivalArg {
    /// Exponential gaps (a Poisson process).
    Poisson,
    /// Equal gaps of 1 / rate.
    Uniform,
}

/// `--key-dist`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeyDistArg {
    /// Zipfian keys with skew --theta.
    Zipf,
    /// Normal keys around --key-mean with standard deviation --key-sd (SGPM).
    Normal,
}

/// `--executor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExecutorArg {
    /// Worker threads running one transaction each, in place.
    Thread,
    /// SGPM coroutines: each thread keeps up to --queue transactions in flight.
    Coro,
}
