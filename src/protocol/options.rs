//! Which protocol runs, and the options that change how it behaves.
//!
//! Protocols are a closed set matched once at the top of a run (`ProtocolKind`), after which the
//! chosen protocol's code runs monomorphised. Options are plain data, validated once.

use super::aria::AriaOptions;
use super::batch::BatchOptions;
use super::bohm::PlacedOptions;
use super::c_sched::CSchedOptions;
use super::calvin::CalvinOptions;
use super::decentsched::DecentSchedOptions;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Every protocol txbench implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolKind {
    /// No concurrency control: the throughput ceiling, and the canary the checker must catch.
    Nocc,
    /// Two-phase locking; abort on any lock conflict.
    NoWait,
    /// Two-phase locking; an older requester waits, a younger one dies.
    WaitDie,
    /// Two-phase locking; an older requester wounds a younger holder, a younger one waits.
    WoundWait,
    /// Silo: optimistic, epoch-based commit TIDs, invisible reads.
    Silo,
    /// TicToc: optimistic with data-driven commit timestamps.
    TicToc,
    /// MOCC: Silo plus read locks on hot records, retrospective lock lists, canonical locking.
    Mocc,
    /// PLOR: pessimistic locking, optimistic reading; WOUND_WAIT at commit.
    Plor,
    /// Ord-Lock: reader/writer locks on the declared access set, taken in one global order
    /// before the program runs (deterministic, abort-free).
    OrdLock,
    /// Snapshot isolation on the shared version storage (NOT serializable: write skew).
    Si,
    /// DecentSched: per-object queues and decentralised scheduling of declared access sets
    /// (deterministic, abort-free).
    DecentSched,
    /// ERMIA: snapshot isolation plus the serial safety net (SSN), serializable.
    Ermia,
    /// Multi-version timestamp ordering, serializable.
    Mvto,
    /// C-Sched: a central scheduler thread grants declared sets that conflict with no running
    /// transaction (deterministic, abort-free).
    CSched,
    /// Calvin's locking with a ticket per transaction instead of batches: a global sequence,
    /// each record's locks granted in sequence order (deterministic, abort-free).
    CalvinTicket,
    /// Cicada: multi-version timestamp ordering with OCC validation and loosely synchronised
    /// per-worker clocks, serializable.
    Cicada,
    /// 2PL with early release (SGPM): rw locks on the declared set in one global order, each
    /// released after the record's last use (serializable; refused where user aborts exist).
    TwoPlEr,
    /// Aria: batches executed against one snapshot, per-record reservations, conflicting
    /// transactions moved to the next batch (deterministic, no declared sets needed).
    Aria,
    /// Calvin: a sequencer forms batches, a lock manager grants each batch's locks in batch
    /// order (deterministic, abort-free; `--calvin-no-wait`: a conflict reruns next batch).
    Calvin,
    /// BOHM: batches whose CC phase places every write's version and binds every read to one,
    /// then execution waits only for the versions it reads (multi-version, abort-free;
    /// `--bohm-no-wait`: a member that would wait reruns next batch).
    Bohm,
    /// PWV: BOHM's placed versions, but a write is visible to its readers once its transaction
    /// is past its commit point, before it ends (readers commit after their writers;
    /// `--pwv-no-wait`: a member that would wait reruns next batch).
    Pwv,
}

impl ProtocolKind {
    /// Every protocol, in the order reports list them (`nocc` first: the ceiling row).
    pub const ALL: [ProtocolKind; 21] = [
        ProtocolKind::Nocc,
        ProtocolKind::NoWait,
        ProtocolKind::WaitDie,
        ProtocolKind::WoundWait,
        ProtocolKind::Silo,
        ProtocolKind::TicToc,
        ProtocolKind::Mocc,
        ProtocolKind::Plor,
        ProtocolKind::OrdLock,
        ProtocolKind::Si,
        ProtocolKind::DecentSched,
        ProtocolKind::Ermia,
        ProtocolKind::Mvto,
        ProtocolKind::CSched,
        ProtocolKind::CalvinTicket,
        ProtocolKind::Cicada,
        ProtocolKind::TwoPlEr,
        ProtocolKind::Aria,
        ProtocolKind::Calvin,
        ProtocolKind::Bohm,
        ProtocolKind::Pwv,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ProtocolKind::Nocc => "nocc",
            ProtocolKind::NoWait => "no_wait",
            ProtocolKind::WaitDie => "wait_die",
            ProtocolKind::WoundWait => "wound_wait",
            ProtocolKind::Silo => "silo",
            ProtocolKind::TicToc => "tictoc",
            ProtocolKind::Mocc => "mocc",
            ProtocolKind::Plor => "plor",
            ProtocolKind::OrdLock => "ord_lock",
            ProtocolKind::Si => "si",
            ProtocolKind::DecentSched => "decentsched",
            ProtocolKind::Ermia => "ermia",
            ProtocolKind::Mvto => "mvto",
            ProtocolKind::CSched => "c_sched",
            ProtocolKind::CalvinTicket => "calvin_ticket",
            ProtocolKind::Cicada => "cicada",
            ProtocolKind::TwoPlEr => "twopl_er",
            ProtocolKind::Aria => "aria",
            ProtocolKind::Calvin => "calvin",
            ProtocolKind::Bohm => "bohm",
            ProtocolKind::Pwv => "pwv",
        }
    }

    /// Whether the protocol guarantees serializable executions.
    pub fn is_serializable(self) -> bool {
        !matches!(self, ProtocolKind::Nocc | ProtocolKind::Si)
    }

    /// One line for `txbench list`.
    pub fn description(self) -> &'static str {
        match self {
            ProtocolKind::Nocc => "no concurrency control (throughput ceiling; NOT serializable)",
            ProtocolKind::NoWait => "2PL, abort immediately on a lock conflict (PLOR 2.1)",
            ProtocolKind::WaitDie => "2PL, older waits for younger, younger dies (PLOR 2.1)",
            ProtocolKind::WoundWait => {
                "2PL, older wounds younger, younger waits; locks go to the oldest waiter (PLOR 2.1)"
            }
            ProtocolKind::Silo => "OCC with epoch-based TIDs and invisible reads (CCBench 2)",
            ProtocolKind::TicToc => "OCC with data-driven read/write timestamps (CCBench 2)",
            ProtocolKind::Mocc => {
                "Silo + read locks on hot records, retrospective lock list, canonical locking (MOCC 3)"
            }
            ProtocolKind::Plor => {
                "locks for reads and writes, conflicts resolved at commit by WOUND_WAIT (PLOR 4)"
            }
            ProtocolKind::OrdLock => {
                "deterministic: rw locks on the declared access set in one global order, no aborts (DecentSched V)"
            }
            ProtocolKind::Si => {
                "snapshot isolation, first committer wins (CCBench 2; NOT serializable: write skew)"
            }
            ProtocolKind::DecentSched => {
                "deterministic: per-object queues, decentralised dependency scheduling, no aborts (DecentSched III)"
            }
            ProtocolKind::Ermia => {
                "snapshot isolation + serial safety net: exclusion-window test at commit (CCBench 2)"
            }
            ProtocolKind::Mvto => {
                "multi-version timestamp ordering: read timestamps, writes create the newest version"
            }
            ProtocolKind::CSched => {
                "deterministic: a scheduler thread grants non-conflicting declared sets, no aborts (DecentSched V)"
            }
            ProtocolKind::CalvinTicket => {
                "deterministic: a ticket per transaction, record locks granted in ticket order, no aborts (DecentSched V)"
            }
            ProtocolKind::Cicada => {
                "multi-version TO + OCC validation, per-worker clocks, six switchable optimizations (CCBench 2)"
            }
            ProtocolKind::TwoPlEr => {
                "2PL with early release: declared set locked in key order, each lock freed after its last use (SGPM)"
            }
            ProtocolKind::Aria => {
                "deterministic batches: one snapshot per batch, reservations, WAW/RAW conflicts rerun next batch (Aria); --aria-fallback reruns them in their batch under locks granted in batch order (AriaFB)"
            }
            ProtocolKind::Calvin => {
                "deterministic batches: sequencer batches, locks granted in batch order; --calvin-no-wait reruns conflicts next batch (Calvin)"
            }
            ProtocolKind::Bohm => {
                "deterministic batches, multi-version: versions placed in batch order, reads wait for theirs, no aborts; --bohm-no-wait reruns next batch a member that would wait (BOHM)"
            }
            ProtocolKind::Pwv => {
                "BOHM with early write visibility: a write is visible once its writer is past its commit point; readers commit after it; --pwv-no-wait reruns next batch a member that would wait (PWV)"
            }
        }
    }
}

impl fmt::Display for ProtocolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A protocol name that txbench does not know.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown protocol '{0}' (known: {known})", known = ProtocolKind::ALL.map(|p| p.name()).join(", "))]
pub struct UnknownProtocol(pub String);

impl FromStr for ProtocolKind {
    type Err = UnknownProtocol;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        ProtocolKind::ALL
            .into_iter()
            .find(|p| p.name() == norm)
            .ok_or_else(|| UnknownProtocol(s.to_string()))
    }
}

/// What an optimistic protocol does when it finds a write lock taken during commit
/// (CCBench's NoWait vs Wait).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LockWait {
    /// Abort at once and retry the transaction (CCBench's default for Silo and TicToc).
    #[default]
    NoWait,
    /// Wait for the lock (locks are taken in a global order, so waiting cannot deadlock).
    Wait,
}

/// TicToc's own optimizations (CCBench Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct TicTocOptions {
    /// NoWaitTT: on a busy lock in validation, release every lock, pause, and retry validation.
    pub nowait_tt: bool,
    /// PreemptiveAbort: abort before locking when a read is already known to fail validation.
    pub preemptive_abort: bool,
    /// TimestampHistory: keep the previous write timestamp so some reads validate after overwrite.
    pub timestamp_history: bool,
}

/// MOCC's temperature granularity (MOCC 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MoccTemperature {
    /// One counter per 4 KiB page of records (the paper's choice).
    #[default]
    Page,
    /// One counter per record.
    Record,
}

/// MOCC's record lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MoccLockKind {
    /// CCBench's reader/writer lock (one word, no queue).
    #[default]
    Rw,
    /// MQL: the cancellable queue-based reader/writer lock (MOCC 4).
    Mql,
}

/// MOCC's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MoccOptions {
    /// Temperature threshold H: a record at or above it is read-locked (1..=63, default 10).
    pub threshold: u32,
    /// Per-page or per-record temperature.
    pub temperature: MoccTemperature,
    /// Which lock implementation records carry.
    pub lock: MoccLockKind,
}

impl Default for MoccOptions {
    fn default() -> Self {
        MoccOptions {
            threshold: 10,
            temperature: MoccTemperature::Page,
            lock: MoccLockKind::Rw,
        }
    }
}

/// What orders PLOR's transactions at commit (PLOR 6.4, "Effects of Commit Priority").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PlorPriority {
    /// Arrival timestamp, kept across retries (PLOR).
    #[default]
    Arrival,
    /// Deadline `A + SF x R` (PLOR-RT): arrival plus slack factor times records accessed.
    Deadline,
}

/// PLOR's options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlorOptions {
    /// Delayed write-lock acquisition (PLOR 4.1.4): blind writes lock at commit, read-modify-writes
    /// read-lock and upgrade at commit.
    pub dwa: bool,
    /// Aborts after which a read-only transaction stops validating optimistically and takes read
    /// locks (PLOR 4.1.3; 0 = always lock).
    pub ro_threshold: u32,
    /// Commit priority.
    pub priority: PlorPriority,
    /// Slack factor `SF` of the deadline (priority `deadline` only), in arrival ticks per record.
    pub slack: f64,
}

impl Default for PlorOptions {
    fn default() -> Self {
        PlorOptions {
            dwa: false,
            ro_threshold: 3,
            priority: PlorPriority::Arrival,
            slack: 1.0,
        }
    }
}

/// Options a protocol may consult. Fields irrelevant to the chosen protocol are ignored (and
/// `txbench list` says which protocol each applies to).
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolOptions {
    /// NoWait vs Wait for write locks in optimistic commit (Silo, TicToc).
    pub lock_wait: LockWait,
    /// TicToc optimizations.
    pub tictoc: TicTocOptions,
    /// Silo's epoch length in milliseconds (also MOCC's, which resets temperatures per epoch).
    pub silo_epoch_ms: u64,
    /// MOCC options.
    pub mocc: MoccOptions,
    /// PLOR's options.
    pub plor: PlorOptions,
    /// Number of workers that will run (sizes per-worker tables).
    pub threads: usize,
    /// Version memory of the multi-version protocols.
    pub mv: MvOptions,
    /// DecentSched's options.
    pub decentsched: DecentSchedOptions,
    /// Cicada's optimizations.
    pub cicada: CicadaOptions,
    /// ERMIA's (SSN's) read-phase checks.
    pub ermia: ErmiaOptions,
    /// How the batch protocols (Aria, batched Calvin) form batches.
    pub batch: BatchOptions,
    /// Aria's options.
    pub aria: AriaOptions,
    /// Batched Calvin's options.
    pub calvin: CalvinOptions,
    /// BOHM's options (`--bohm-no-wait`).
    pub bohm: PlacedOptions,
    /// PWV's options (`--pwv-no-wait`).
    pub pwv: PlacedOptions,
    /// The workload's transactions may abort by their own logic (`Abort::User`: TPC-C). PWV
    /// then puts a transaction's commit point at its commit, making nothing visible before
    /// (`protocol::pwv`). Configuration sets it from the workload, and always for interactive
    /// sessions (a client may abort any transaction, or vanish).
    pub user_aborts: bool,
    /// C-Sched's options (who runs the scheduler's passes).
    pub c_sched: CSchedOptions,
}

impl Default for ProtocolOptions {
    fn default() -> Self {
        ProtocolOptions {
            lock_wait: LockWait::NoWait,
            tictoc: TicTocOptions::default(),
            silo_epoch_ms: 40,
            mocc: MoccOptions::default(),
            plor: PlorOptions::default(),
            threads: 1,
            mv: MvOptions::default(),
            decentsched: DecentSchedOptions::default(),
            cicada: CicadaOptions::default(),
            ermia: ErmiaOptions::default(),
            batch: BatchOptions::default(),
            aria: AriaOptions::default(),
            calvin: CalvinOptions::default(),
            bohm: PlacedOptions::default(),
            pwv: PlacedOptions::default(),
            user_aborts: false,
            c_sched: CSchedOptions::default(),
        }
    }
}

/// The default `--sample-ms`: ten samples a second, enough to see a 0.5 s cell's curve and few
/// enough that an hour's run stays within `metrics::version_series::MAX_VERSION_SAMPLES`.
pub const DEFAULT_VERSION_SAMPLE_MS: u64 = 100;

/// Version-memory methods of every multi-version protocol (CCBench Table 1; `storage::versions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MvOptions {
    /// RapidGC: how often the reclamation watermark is recomputed, in microseconds (0: at every
    /// transaction start).
    pub gc_interval_us: u64,
    /// AssertiveVersionReuse: per-worker version caches reserved ahead (off: one shared, locked
    /// free list).
    pub version_reuse: bool,
    /// Bytes version nodes may take; past it the run stops with a message.
    pub version_memory_bytes: usize,
    /// AggressiveGC (CCBench 7.3; MVTO): every install frees the older versions but the newest
    /// (and, under starvation protection, the protected snapshot's), even ones active readers
    /// still need; such a reader aborts (`version_collected`).
    pub aggressive_gc: bool,
    /// AggressiveGC's contiguous variant (kVSR-like): keep the newest older versions in one run
    /// (under starvation protection, every version above the protected snapshot) instead of the
    /// newest and the protected snapshot's own, non-contiguous (CCBench 7.3's proposal).
    pub aggressive_contiguous: bool,
    /// How often the runner samples live versions and version memory while a multi-version
    /// protocol runs (`--sample-ms`; `metrics::version_series`), in milliseconds.
    pub version_sample_ms: u64,
    /// Readers skip in-flight versions (SI, ERMIA; CCBench's readers): a reader that finds a
    /// record held by a committer whose commit timestamp is certainly above its snapshot reads
    /// the committed version instead of waiting for the holder (off: it waits whenever the
    /// holder's inline version is visible to it).
    pub skip_in_flight: bool,
}

impl Default for MvOptions {
    fn default() -> Self {
        MvOptions {
            gc_interval_us: 10,
            version_reuse: true,
            version_memory_bytes: 1 << 30,
            aggressive_gc: false,
            aggressive_contiguous: false,
            version_sample_ms: DEFAULT_VERSION_SAMPLE_MS,
            skip_in_flight: false,
        }
    }
}

/// Consecutive commits after which a Cicada worker omits the precheck and the sort
/// ([`CicadaOptions::adaptive_skip`]): 5, as in the Cicada paper and CCBench's
/// `CONTINUING_COMMIT_THRESHOLD`.
pub const CICADA_CONTINUING_COMMITS: u32 = 5;

/// Cicada's optimizations as switches (CCBench Table 1 and section 2), all on by default as in
/// the Cicada paper. RapidGC, the sixth, is the shared `MvOptions::gc_interval_us` (Cicada's
/// 10 us by default); AssertiveVersionReuse is `MvOptions::version_reuse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CicadaOptions {
    /// EarlyAbort: a write whose record already carries a newer version or a younger read
    /// aborts at the write, not at commit.
    pub early_abort: bool,
    /// BestEffortInlining: the newest version lives in the record itself (off: every version,
    /// the newest included, is a node in the chain that reads walk).
    pub inlining: bool,
    /// PrecheckVersionConsistency: before locking anything, check that no read and no write
    /// already fails validation.
    pub precheck: bool,
    /// SortWriteSetByContention: validate the most recently written records first.
    pub sort_by_contention: bool,
    /// Adaptive omission of PrecheckVersionConsistency and SortWriteSetByContention: a worker
    /// whose last [`CICADA_CONTINUING_COMMITS`] transactions committed skips both (the Cicada paper:
    /// they add overhead without contention; CCBench's `CONTINUING_COMMIT_THRESHOLD`).
    pub adaptive_skip: bool,
    /// AdaptiveBackoff: the executor's backoff (`--backoff`) runs under Cicada by default.
    pub backoff: bool,
}

impl Default for CicadaOptions {
    fn default() -> Self {
        CicadaOptions {
            early_abort: true,
            inlining: true,
            precheck: true,
            sort_by_contention: true,
            adaptive_skip: true,
            backoff: true,
        }
    }
}

/// SSN's work during the read phase (CCBench's `ssn_tread` / `ssn_twrite`), both on by default
/// as CCBench runs ERMIA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ErmiaOptions {
    /// Early exclusion check (CCBench's `verify_exclusion_or_abort`): every read and write
    /// updates the transaction's running `π` and `η` with what it already knows (the overwriter
    /// stamps of a version read, the pstamp of a record written) and aborts as soon as
    /// `π <= η`, instead of running on to a commit that must fail.
    pub early_exclusion: bool,
    /// Read-set pruning: a write to a record the transaction read drops the read (its entry
    /// and its reader bit; the write's own checks cover it), so overwriters of that record no
    /// longer count it.
    pub prune_overwritten_reads: bool,
}

impl Default for ErmiaOptions {
    fn default() -> Self {
        ErmiaOptions {
            early_exclusion: true,
            prune_overwritten_reads: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in ProtocolKind::ALL {
            assert_eq!(p.name().parse::<ProtocolKind>().unwrap(), p);
        }
        assert_eq!(
            "WAIT-DIE".parse::<ProtocolKind>().unwrap(),
            ProtocolKind::WaitDie
        );
        let err = "bogus".parse::<ProtocolKind>().unwrap_err().to_string();
        assert!(err.contains("bogus") && err.contains("silo"), "{err}");
    }
}
