//! The optional parts of a protocol: what only some protocols have, beside the core
//! [`Protocol`] every protocol implements.
//!
//! A single-version protocol implements the core and nothing here. A protocol that belongs to a
//! family the engine must know about opts into that family's part: it implements the part's
//! trait, and says so in its `impl Protocol` with the part's constant, for example
//!
//! ```ignore
//! impl Protocol for Si {
//!     // ...the core...
//!     const MULTI_VERSION: Option<MultiVersionPart<Self>> = Some(MultiVersionPart::from_impl());
//! }
//! impl MultiVersion for Si {
//!     // ...the part's methods...
//! }
//! ```
//!
//! | part | trait | constant | who |
//! | --- | --- | --- | --- |
//! | older versions: report, memory cap, reclamation watermark | [`MultiVersion`] | [`Protocol::MULTI_VERSION`] | si, ermia, mvto, cicada, bohm, pwv |
//! | scheduling from declared access sets | [`DeclaredSet`] | [`Protocol::DECLARED_SET`] | ord_lock, decentsched, c_sched, calvin, calvin_ticket, twopl_er, bohm, pwv |
//! | hooks into the run: statistics, helper threads, backoff, coroutine signals, stopping a worker, an idle worker stepping away | [`RunHooks`] | [`Protocol::RUN_HOOKS`] | c_sched, decentsched, cicada, aria, calvin, bohm, pwv |
//!
//! # Why constants
//!
//! The engine is generic over `P: Protocol` and must reach a part only when `P` has it, without
//! specialisation (not stable Rust) and without a `dyn` call per operation. Each constant holds
//! the part's functions, taken from the part's trait by the part's `from_impl()` (which only compiles
//! when `P` implements that trait), or `None` / the defaults. The constant is known at compile
//! time in every monomorphised copy of the engine, so `if let Some(part) = P::DECLARED_SET`
//! disappears for protocols without the part, and a call through the part's function is a direct
//! call the compiler inlines like any other. Facts the engine needs before a protocol exists
//! (whether it needs declared sets, how many bytes a version node takes) are read from the
//! constants through [`ProtocolKind::visit`](super::ProtocolKind::visit).

use super::declared::DeclaredRecord;
use super::signal::Signal;
use super::{Abort, OpResult, Protocol};
use crate::storage::grace::Holds;
use crate::storage::versions::{
    Version, VersionMemoryExhausted, VersionStats, VersionStore, Watermark,
};

/// The multi-version part: a protocol that keeps older versions of records in the shared version
/// storage (`storage::versions`), so that reads at a snapshot find them. A protocol names its
/// store and its watermark, and says which commit stamp a worker's last commit had; the
/// statistics, the memory check and the oldest snapshot follow from the store and the watermark.
pub trait MultiVersion: Protocol {
    /// The protocol's metadata in each version node (ERMIA's stamps, MVTO's replacement
    /// timestamp; `()` for most): the type its [`VersionStore`] holds, so memory estimates size
    /// a node exactly as the store allocates it, before anything is allocated.
    type VersionMeta: Default;

    /// The store of the protocol's older versions.
    fn version_store(&self) -> &VersionStore<Self::VersionMeta>;

    /// The watermark its collections use: the oldest snapshot of a running attempt.
    fn watermark(&self) -> &Watermark;

    /// The commit timestamp of the attempt that just committed, on the scale of
    /// [`oldest_snapshot`](Self::oldest_snapshot). A delete's index entry stays until no snapshot
    /// older than the delete remains (`txn::index_ops`, "Snapshot readers").
    fn snapshot_commit_stamp(&self, w: &Self::Worker<'_>) -> u64;

    /// What the older versions cost, for the report (after the run) and the version sampler
    /// (during it, from another thread).
    fn version_stats(&self) -> VersionStats {
        self.version_store().stats()
    }

    /// The error that stopped the run when version memory reached its cap
    /// ([`VersionPool::take_past_cap`](crate::storage::versions::VersionPool::take_past_cap)):
    /// the executors stop a run as soon as it is `Some`, and the runner returns it.
    fn version_memory_exhausted(&self) -> Option<VersionMemoryExhausted> {
        self.version_store().exhausted()
    }

    /// Every running and future attempt reads at a snapshot at or above this value (a
    /// reclamation watermark, possibly stale, hence possibly smaller).
    fn oldest_snapshot(&self) -> u64 {
        self.watermark().current()
    }

    /// The grace-period epochs of the record references the worker keeps past its commits
    /// (its [`GcQueue`](crate::storage::versions::GcQueue)): the transaction handle keeps its
    /// slot pinned at the oldest one (`storage::grace`, "Records kept past a commit").
    fn grace_holds<'w>(&self, w: &'w mut Self::Worker<'_>) -> &'w mut Holds;
}

/// The multi-version part's functions ([`Protocol::MULTI_VERSION`]; module docs).
pub struct MultiVersionPart<P: Protocol> {
    version_stats: fn(&P) -> VersionStats,
    version_memory_exhausted: fn(&P) -> Option<VersionMemoryExhausted>,
    snapshot_commit_stamp: for<'w, 'db> fn(&P, &'w P::Worker<'db>) -> u64,
    oldest_snapshot: fn(&P) -> u64,
    grace_holds: for<'w, 'db> fn(&P, &'w mut P::Worker<'db>) -> &'w mut Holds,
    version_node_bytes: fn(usize) -> usize,
}

impl<P: Protocol> Clone for MultiVersionPart<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Protocol> Copy for MultiVersionPart<P> {}

impl<P: MultiVersion> MultiVersionPart<P> {
    /// The part as `P` implements it.
    pub const fn from_impl() -> Self {
        MultiVersionPart {
            version_stats: P::version_stats,
            version_memory_exhausted: P::version_memory_exhausted,
            snapshot_commit_stamp: P::snapshot_commit_stamp,
            oldest_snapshot: P::oldest_snapshot,
            grace_holds: P::grace_holds,
            version_node_bytes: Version::<P::VersionMeta>::node_bytes,
        }
    }
}

impl<P: Protocol> MultiVersionPart<P> {
    /// [`MultiVersion::version_stats`].
    #[inline]
    pub fn version_stats(self, p: &P) -> VersionStats {
        (self.version_stats)(p)
    }

    /// [`MultiVersion::version_memory_exhausted`].
    #[inline]
    pub fn version_memory_exhausted(self, p: &P) -> Option<VersionMemoryExhausted> {
        (self.version_memory_exhausted)(p)
    }

    /// [`MultiVersion::snapshot_commit_stamp`].
    #[inline]
    pub fn snapshot_commit_stamp(self, p: &P, w: &P::Worker<'_>) -> u64 {
        (self.snapshot_commit_stamp)(p, w)
    }

    /// [`MultiVersion::oldest_snapshot`].
    #[inline]
    pub fn oldest_snapshot(self, p: &P) -> u64 {
        (self.oldest_snapshot)(p)
    }

    /// [`MultiVersion::grace_holds`].
    #[inline]
    pub fn grace_holds<'w>(self, p: &P, w: &'w mut P::Worker<'_>) -> &'w mut Holds {
        (self.grace_holds)(p, w)
    }

    /// Bytes one older version of a `payload`-byte record takes as a node of the shared version
    /// storage (its header with [`MultiVersion::VersionMeta`], and the payload copy), as the
    /// version memory cap counts them.
    #[inline]
    pub fn version_node_bytes(self, payload: usize) -> usize {
        (self.version_node_bytes)(payload)
    }
}

/// The declared-set part: a protocol that schedules each transaction from the access set it
/// declares before its program runs (`protocol::declared`). The executor then declares every
/// request's set and drives [`schedule`](DeclaredSet::schedule) before the program, and
/// configuration rejects workloads that cannot declare.
pub trait DeclaredSet: Protocol {
    /// Schedules the attempt from its declared access set, after `begin` and before the
    /// program's first operation: `set` holds one entry per record in the global record order
    /// (`Record::order_key`), a record both read and written once, as written. Like every
    /// operation it may return `Pending` (the executor polls it again with the same set) and must
    /// be safe to repeat.
    fn schedule<'db>(
        &self,
        w: &mut Self::Worker<'db>,
        set: &[DeclaredRecord<'db, Self::RecordMeta>],
    ) -> OpResult;

    /// The program ended in a user abort (the workload rolled itself back), which a protocol
    /// that may run programs ahead of their turn (DecentSched's opportunistic execution) must
    /// confirm, since the decision may rest on reads a run in place would not see:
    /// `Ready(Ok(()))` lets the abort stand, `Ready(Err(Abort::Reexecute))` runs the program
    /// again in its place (where it decides again), `Pending` until the attempt's turn. Called
    /// before `abort`; the default lets every user abort stand.
    fn confirm_user_abort(&self, _w: &mut Self::Worker<'_>) -> OpResult {
        std::task::Poll::Ready(Ok(()))
    }
}

/// [`DeclaredSet::schedule`] as a function pointer.
type ScheduleFn<P> = for<'w, 's, 'db> fn(
    &P,
    &'w mut <P as Protocol>::Worker<'db>,
    &'s [DeclaredRecord<'db, <P as Protocol>::RecordMeta>],
) -> OpResult;

/// The declared-set part's functions ([`Protocol::DECLARED_SET`]; module docs).
pub struct DeclaredSetPart<P: Protocol> {
    schedule: ScheduleFn<P>,
    confirm_user_abort: for<'w, 'db> fn(&P, &'w mut P::Worker<'db>) -> OpResult,
}

impl<P: Protocol> Clone for DeclaredSetPart<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Protocol> Copy for DeclaredSetPart<P> {}

impl<P: DeclaredSet> DeclaredSetPart<P> {
    /// The part as `P` implements it.
    pub const fn from_impl() -> Self {
        DeclaredSetPart {
            schedule: P::schedule,
            confirm_user_abort: P::confirm_user_abort,
        }
    }
}

impl<P: Protocol> DeclaredSetPart<P> {
    /// [`DeclaredSet::schedule`].
    #[inline]
    pub fn schedule<'db>(
        self,
        p: &P,
        w: &mut P::Worker<'db>,
        set: &[DeclaredRecord<'db, P::RecordMeta>],
    ) -> OpResult {
        (self.schedule)(p, w, set)
    }

    /// [`DeclaredSet::confirm_user_abort`].
    #[inline]
    pub fn confirm_user_abort(self, p: &P, w: &mut P::Worker<'_>) -> OpResult {
        (self.confirm_user_abort)(p, w)
    }
}

/// Hooks into the run, each with a default that suits most protocols: a protocol overrides
/// the ones it needs.
pub trait RunHooks: Protocol {
    /// Threads the protocol runs besides the workers, busy while the run lasts (C-Sched's
    /// scheduler). The executors count them when they decide whether threads outnumber cores,
    /// which decides how a waiter waits (`exec/wait.rs`).
    const HELPER_THREADS: usize = 0;

    /// Named statistics of the run, for the report (after the workers were joined): counters
    /// or facts only this protocol has (C-Sched's scheduler core). None by default.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// What a coroutine executor does with a transaction whose attempt aborted for `why`
    /// (SGPM's table 1; `Pending` is always [`Signal::Ag`]). The default maps the abort reason
    /// ([`Signal::for_abort`]); a protocol whose scheduling differs (batches, deterministic
    /// order) overrides it.
    fn signal(&self, why: Abort) -> Signal {
        Signal::for_abort(why)
    }

    /// The worker will run no more transactions, though it lives on until its thread ends (a
    /// coroutine slot that stopped while its thread's other slots finish theirs). A protocol
    /// whose workers belong to something the others wait for (DecentSched's epoch barrier)
    /// leaves it here, and must not leave twice when the worker is then dropped. Nothing by
    /// default.
    fn stop_worker(&self, _w: &mut Self::Worker<'_>) {}

    /// The worker will be idle between transactions for a while, maybe long (an interactive
    /// session whose client is thinking or gone, a session handle no client holds): it stops
    /// counting in whatever the others wait for every worker to reach (DecentSched's epoch
    /// barrier, a batch's close) until [`worker_back`](Self::worker_back), which the executor
    /// calls before the worker's next `begin`. Called between attempts only. An attempt that
    /// ended keeping a place for its retry (an Aria fallback member's locks, a DecentSched
    /// re-execution's place in its queues) gives the place up: the retry starts afresh.
    /// Repeating it does nothing; [`stop_worker`](Self::stop_worker) and the worker's drop
    /// after it must not leave twice. Nothing by default.
    fn worker_away(&self, _w: &mut Self::Worker<'_>) {}

    /// The worker that was [away](Self::worker_away) starts a transaction: it counts again in
    /// barriers and batches. Does nothing for a worker that is not away. Nothing by default.
    fn worker_back(&self, _w: &mut Self::Worker<'_>) {}

    /// Whether a worker idle between transactions holds up the others unless it is
    /// [away](Self::worker_away) (the protocol overrides both hooks): the interactive server
    /// then sends a session away once its client has been quiet for a moment between
    /// transactions (`exec::interactive::server`, "Idle sessions"). False by default.
    const IDLE_WORKERS_HOLD_OTHERS: bool = false;

    /// Whether the protocol runs with the executor's AdaptiveBackoff even when `--backoff` was
    /// not given (Cicada, whose paper makes it part of the protocol). False by default.
    fn adaptive_backoff(&self) -> bool {
        false
    }

    /// Why this protocol, as configured, cannot serve interactive clients
    /// (`exec::interactive::server`, which then refuses to start): a client may abort any
    /// transaction or vanish mid-way, and a protocol that installs a write, or makes it
    /// visible, before the commit could not undo it. `None` (it can) by default.
    fn not_served_because(&self) -> Option<&'static str> {
        None
    }

    /// Whether the protocol runs transactions in batches (`protocol::batch`), each attempt
    /// waiting for every member of its batch (Aria). False by default.
    const RUNS_IN_BATCHES: bool = false;
}

/// The run hooks' functions ([`Protocol::RUN_HOOKS`]; module docs): [`RunHooksPart::DEFAULT`]
/// for a protocol that overrides none.
pub struct RunHooksPart<P: Protocol> {
    /// Whether the protocol opted in ([`RunHooksPart::from_impl`]), rather than taking
    /// [`RunHooksPart::DEFAULT`].
    pub opted_in: bool,
    /// [`RunHooks::HELPER_THREADS`].
    pub helper_threads: usize,
    /// [`RunHooks::RUNS_IN_BATCHES`].
    pub runs_in_batches: bool,
    /// [`RunHooks::IDLE_WORKERS_HOLD_OTHERS`].
    pub idle_workers_hold_others: bool,
    stats: fn(&P) -> Vec<(&'static str, f64)>,
    signal: fn(&P, Abort) -> Signal,
    stop_worker: for<'w, 'db> fn(&P, &'w mut P::Worker<'db>),
    worker_away: for<'w, 'db> fn(&P, &'w mut P::Worker<'db>),
    worker_back: for<'w, 'db> fn(&P, &'w mut P::Worker<'db>),
    adaptive_backoff: fn(&P) -> bool,
    not_served_because: fn(&P) -> Option<&'static str>,
}

impl<P: Protocol> Clone for RunHooksPart<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Protocol> Copy for RunHooksPart<P> {}

impl<P: RunHooks> RunHooksPart<P> {
    /// The hooks as `P` implements them.
    pub const fn from_impl() -> Self {
        RunHooksPart {
            opted_in: true,
            helper_threads: P::HELPER_THREADS,
            runs_in_batches: P::RUNS_IN_BATCHES,
            idle_workers_hold_others: P::IDLE_WORKERS_HOLD_OTHERS,
            stats: P::stats,
            signal: P::signal,
            stop_worker: P::stop_worker,
            worker_away: P::worker_away,
            worker_back: P::worker_back,
            adaptive_backoff: P::adaptive_backoff,
            not_served_because: P::not_served_because,
        }
    }
}

impl<P: Protocol> RunHooksPart<P> {
    /// Every hook at its default ([`RunHooks`]' provided methods).
    pub const DEFAULT: Self = RunHooksPart {
        opted_in: false,
        helper_threads: 0,
        runs_in_batches: false,
        idle_workers_hold_others: false,
        stats: |_| Vec::new(),
        signal: |_, why| Signal::for_abort(why),
        stop_worker: |_, _| {},
        worker_away: |_, _| {},
        worker_back: |_, _| {},
        adaptive_backoff: |_| false,
        not_served_because: |_| None,
    };

    /// [`RunHooks::stats`].
    pub fn stats(self, p: &P) -> Vec<(&'static str, f64)> {
        (self.stats)(p)
    }

    /// [`RunHooks::signal`].
    #[inline]
    pub fn signal(self, p: &P, why: Abort) -> Signal {
        (self.signal)(p, why)
    }

    /// [`RunHooks::stop_worker`].
    #[inline]
    pub fn stop_worker(self, p: &P, w: &mut P::Worker<'_>) {
        (self.stop_worker)(p, w)
    }

    /// [`RunHooks::worker_away`].
    #[inline]
    pub fn worker_away(self, p: &P, w: &mut P::Worker<'_>) {
        (self.worker_away)(p, w)
    }

    /// [`RunHooks::worker_back`].
    #[inline]
    pub fn worker_back(self, p: &P, w: &mut P::Worker<'_>) {
        (self.worker_back)(p, w)
    }

    /// [`RunHooks::adaptive_backoff`].
    pub fn adaptive_backoff(self, p: &P) -> bool {
        (self.adaptive_backoff)(p)
    }

    /// [`RunHooks::not_served_because`].
    pub fn not_served_because(self, p: &P) -> Option<&'static str> {
        (self.not_served_because)(p)
    }
}

/// Which parts' traits a protocol type implements, read at compile time where the type is
/// concrete: for each part, an inherent constant `true` that exists only where the type
/// implements the part's trait, which takes precedence over [`NotImplemented`]'s `false`.
/// [`ProtocolKind::visit`](super::ProtocolKind::visit) compares it with the part's constant for
/// every protocol it names, so a protocol that implements a part's trait and forgets its
/// constant (or sets the constant without the trait) does not compile.
pub struct Implements<P>(std::marker::PhantomData<P>);

impl<P: MultiVersion> Implements<P> {
    /// `P` implements [`MultiVersion`].
    pub const MULTI_VERSION: bool = true;
}

impl<P: DeclaredSet> Implements<P> {
    /// `P` implements [`DeclaredSet`].
    pub const DECLARED_SET: bool = true;
}

impl<P: RunHooks> Implements<P> {
    /// `P` implements [`RunHooks`].
    pub const RUN_HOOKS: bool = true;
}

/// [`Implements`]' answer for a part whose trait the type does not implement (module docs).
pub trait NotImplemented {
    /// The type does not implement [`MultiVersion`].
    const MULTI_VERSION: bool = false;
    /// The type does not implement [`DeclaredSet`].
    const DECLARED_SET: bool = false;
    /// The type does not implement [`RunHooks`].
    const RUN_HOOKS: bool = false;
}

impl<P> NotImplemented for Implements<P> {}

/// Whether protocol `P` opted into exactly the parts whose traits it implements: `implements`
/// is [`Implements`]' answer for `P` (multi-version, declared set, run hooks), read where `P` is
/// concrete. Evaluated in a constant by [`ProtocolKind::visit`](super::ProtocolKind::visit).
pub const fn opted_into_what_it_implements<P: Protocol>(implements: [bool; 3]) -> bool {
    implements[0] == P::MULTI_VERSION.is_some()
        && implements[1] == P::DECLARED_SET.is_some()
        && implements[2] == P::RUN_HOOKS.opted_in
}

/// What the multi-version part says about version memory, for any protocol: the error that
/// stopped the run, or `None` (always, without the part).
#[inline]
pub fn version_memory_exhausted<P: Protocol>(p: &P) -> Option<VersionMemoryExhausted> {
    P::MULTI_VERSION.and_then(|mv| mv.version_memory_exhausted(p))
}

/// What the multi-version part says the older versions cost, for any protocol: `None` without
/// the part.
pub fn version_stats<P: Protocol>(p: &P) -> Option<VersionStats> {
    P::MULTI_VERSION.map(|mv| mv.version_stats(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::in_place::in_place_operations;
    use crate::protocol::nocc::{Nocc, NoccWorker};
    use crate::protocol::{AttemptStart, ProtocolKind, ProtocolOptions, ProtocolVisitor};

    /// NoCC opted into the run hooks, overriding none.
    struct Hooked;

    impl Protocol for Hooked {
        type RecordMeta = ();
        type Worker<'db> = NoccWorker<'db>;

        const RUN_HOOKS: RunHooksPart<Self> = RunHooksPart::from_impl();

        fn new_worker<'db>(&'db self, id: usize) -> NoccWorker<'db> {
            Nocc.new_worker(id)
        }

        fn begin(&self, w: &mut NoccWorker<'_>, start: AttemptStart) {
            Nocc.begin(w, start);
        }

        in_place_operations!(read, read_committed, write, commit, abort, install_log);
    }

    impl RunHooks for Hooked {}

    /// The defaults a protocol gets without the part are the trait's provided methods: opting
    /// in without overriding changes nothing.
    #[test]
    fn the_default_hooks_are_the_traits_defaults() {
        let (none, opted) = (
            RunHooksPart::<Hooked>::DEFAULT,
            RunHooksPart::<Hooked>::from_impl(),
        );
        assert!(opted.opted_in && !none.opted_in);
        assert_eq!(none.helper_threads, opted.helper_threads);
        assert_eq!(none.runs_in_batches, opted.runs_in_batches);
        assert_eq!(
            none.idle_workers_hold_others,
            opted.idle_workers_hold_others
        );
        assert_eq!(
            none.adaptive_backoff(&Hooked),
            opted.adaptive_backoff(&Hooked)
        );
        assert_eq!(none.stats(&Hooked), opted.stats(&Hooked));
        for why in Abort::ALL {
            assert_eq!(
                none.signal(&Hooked, why),
                opted.signal(&Hooked, why),
                "{why:?}"
            );
        }
        let mut w = Hooked.new_worker(0);
        none.worker_away(&Hooked, &mut w);
        none.worker_back(&Hooked, &mut w);
        none.stop_worker(&Hooked, &mut w);
    }

    /// The probe behind `ProtocolKind::visit`'s compile-time check tells the types that implement
    /// a part's trait from those that do not (were it always `false`, or always `true`, the
    /// check would pass a protocol that forgot its constant). The constant answers are
    /// asserted at compile time: a wrong probe fails the build of the tests.
    #[test]
    fn the_probe_sees_which_traits_a_type_implements() {
        use crate::protocol::{cicada::Cicada, ord_lock::OrdLock, silo::Silo};
        const { assert!(<Implements<Cicada>>::MULTI_VERSION && <Implements<Cicada>>::RUN_HOOKS) };
        const { assert!(!<Implements<Cicada>>::DECLARED_SET) };
        const { assert!(<Implements<OrdLock>>::DECLARED_SET && !<Implements<OrdLock>>::MULTI_VERSION) };
        const { assert!(<Implements<Hooked>>::RUN_HOOKS && !<Implements<Nocc>>::RUN_HOOKS) };
        let silo = [
            <Implements<Silo>>::MULTI_VERSION,
            <Implements<Silo>>::DECLARED_SET,
            <Implements<Silo>>::RUN_HOOKS,
        ];
        assert_eq!(silo, [false; 3]);
        assert!(opted_into_what_it_implements::<Silo>(silo));
        assert!(opted_into_what_it_implements::<Hooked>([
            false, false, true
        ]));
        assert!(
            !opted_into_what_it_implements::<Nocc>([true, false, false]),
            "a type that implemented MultiVersion without its constant"
        );
    }

    /// Which kinds set which part, read through the constants the engine reads: implementing a
    /// part's trait without setting its constant would leave the part unused.
    #[test]
    fn each_family_sets_its_constant() {
        struct Parts;
        impl ProtocolVisitor for Parts {
            type Output = (bool, bool, usize, bool, bool);
            fn visit<P: Protocol>(self, _: fn(&ProtocolOptions) -> P) -> Self::Output {
                (
                    P::MULTI_VERSION.is_some(),
                    P::DECLARED_SET.is_some(),
                    P::RUN_HOOKS.helper_threads,
                    P::RUN_HOOKS.runs_in_batches,
                    P::RUN_HOOKS.idle_workers_hold_others,
                )
            }
        }
        let options = ProtocolOptions::default();
        for p in ProtocolKind::ALL {
            let (mv, declared, helpers, batches, idle_holds) = p.visit(&options, Parts);
            let name = p.name();
            let expect_mv = ["si", "ermia", "mvto", "cicada", "bohm", "pwv"].contains(&name);
            let expect_declared = [
                "ord_lock",
                "decentsched",
                "c_sched",
                "calvin",
                "calvin_ticket",
                "twopl_er",
                "bohm",
                "pwv",
            ]
            .contains(&name);
            assert_eq!(mv, expect_mv, "{name}: multi-version part");
            assert_eq!(declared, expect_declared, "{name}: declared-set part");
            assert_eq!(
                helpers,
                usize::from(name == "c_sched"),
                "{name}: helper threads"
            );
            assert_eq!(
                batches,
                ["aria", "calvin", "bohm", "pwv"].contains(&name),
                "{name}: runs in batches"
            );
            assert_eq!(batches, p.runs_in_batches(), "{name}");
            // The interactive server sends idle sessions away from these protocols' barriers
            // and batches: a protocol whose workers wait for every worker must say so.
            assert_eq!(
                idle_holds,
                batches || name == "decentsched",
                "{name}: idle workers hold the others up"
            );
        }
    }
}
