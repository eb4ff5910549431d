//! From a [`ProtocolKind`] to the protocol type it names: the one place that knows which type
//! (and which width of it) each kind runs, and how to build it from the options.
//!
//! Everything that needs the type behind a kind goes through [`ProtocolKind::visit`] with a
//! [`ProtocolVisitor`]: the runner builds the protocol and runs it, memory estimates read the
//! size of its record metadata, tests read its constants. Adding a protocol adds its line to
//! `visit` (and its `ProtocolKind` variant with its name); nothing else matches on kinds to find
//! a type.
//!
//! Each line of `visit` names its type through `visit_type!`, which also checks, at compile
//! time, that the type opted into exactly the optional parts whose traits it implements
//! ([`parts::Implements`](super::parts::Implements)): a protocol that implements
//! `MultiVersion` but forgets `const MULTI_VERSION` would otherwise run without its part.

use super::parts::NotImplemented as _;
use super::{
    MoccLockKind, Protocol, ProtocolKind, ProtocolOptions, aria, bohm, c_sched, calvin,
    calvin_ticket, cicada, decentsched, ermia, mocc, mvto, nocc, ord_lock, plor, pwv, si, silo,
    tictoc, twopl, twopl_er,
};
use std::fmt::Display;

/// `visitor.visit::<P>(build)`, after a compile-time check that `P` opted into the parts it
/// implements (module docs).
macro_rules! visit_type {
    ($visitor:ident, $p:ty, $build:expr) => {{
        const _: () = assert!(
            super::parts::opted_into_what_it_implements::<$p>([
                <super::parts::Implements<$p>>::MULTI_VERSION,
                <super::parts::Implements<$p>>::DECLARED_SET,
                <super::parts::Implements<$p>>::RUN_HOOKS,
            ]),
            concat!(
                stringify!($p),
                " implements an optional part's trait without setting the part's constant in its \
                 `impl Protocol` (or sets a constant without the trait): protocol/parts.rs"
            )
        );
        $visitor.visit::<$p>($build)
    }};
}

/// Something to do with the protocol type a [`ProtocolKind`] names ([`ProtocolKind::visit`]),
/// monomorphised for that type.
pub trait ProtocolVisitor {
    /// What the visit returns.
    type Output;

    /// Called once with the protocol type `P` and the function that builds it from the options
    /// (building may start threads or allocate: call `build` only to run the protocol).
    fn visit<P: Protocol>(self, build: fn(&ProtocolOptions) -> P) -> Self::Output;
}

/// Unwraps a constructor that refuses worker counts its lock words cannot name. Configuration
/// validation rejects those counts before a run starts; reaching the panic is a validation bug.
fn built<P, E: Display>(protocol: Result<P, E>) -> P {
    protocol.unwrap_or_else(|e| panic!("{e} (config validation should have rejected this)"))
}

impl ProtocolKind {
    /// Calls `visitor` with the protocol type this kind runs with `options` (which decide the
    /// variant: wide lock words when the workers outnumber one word's bits, MOCC's lock), and
    /// returns what it returns.
    pub fn visit<V: ProtocolVisitor>(self, options: &ProtocolOptions, visitor: V) -> V::Output {
        let v = visitor;
        match self {
            ProtocolKind::Nocc => visit_type!(v, nocc::Nocc, |_| nocc::Nocc),
            ProtocolKind::NoWait => {
                visit_type!(v, twopl::NoWait, |o| built(twopl::NoWait::new(o)))
            }
            // More workers than one-word lock bitmaps name (coroutines: threads x Q): wide locks.
            ProtocolKind::WaitDie if twopl::needs_wide_locks(options.threads) => {
                visit_type!(v, twopl::WaitDieWide, |o| built(twopl::WaitDieWide::new(o)))
            }
            ProtocolKind::WaitDie => {
                visit_type!(v, twopl::WaitDie, |o| built(twopl::WaitDie::new(o)))
            }
            ProtocolKind::WoundWait if twopl::needs_wide_locks(options.threads) => {
                visit_type!(v, twopl::WoundWaitWide, |o| built(
                    twopl::WoundWaitWide::new(o)
                ))
            }
            ProtocolKind::WoundWait => {
                visit_type!(v, twopl::WoundWait, |o| built(twopl::WoundWait::new(o)))
            }
            ProtocolKind::Silo => visit_type!(v, silo::Silo, silo::Silo::new),
            ProtocolKind::TicToc => visit_type!(v, tictoc::TicToc, tictoc::TicToc::new),
            ProtocolKind::Mocc => match options.mocc.lock {
                MoccLockKind::Rw => {
                    visit_type!(v, mocc::Mocc<mocc::RwLock>, mocc::Mocc::<mocc::RwLock>::new)
                }
                MoccLockKind::Mql => {
                    visit_type!(
                        v,
                        mocc::Mocc<mocc::MqlLock>,
                        mocc::Mocc::<mocc::MqlLock>::new
                    )
                }
            },
            // More workers than the two-word locker names (coroutines: threads x Q): the wide one.
            ProtocolKind::Plor if plor::needs_wide_locker(options.threads) => {
                visit_type!(v, plor::PlorWide, |o| built(plor::PlorWide::new(o)))
            }
            ProtocolKind::Plor => visit_type!(v, plor::Plor, |o| built(plor::Plor::new(o))),
            ProtocolKind::OrdLock => {
                visit_type!(v, ord_lock::OrdLock, |_| ord_lock::OrdLock::new())
            }
            ProtocolKind::Si => visit_type!(v, si::Si, si::Si::new),
            ProtocolKind::DecentSched => {
                visit_type!(v, decentsched::DecentSched, decentsched::DecentSched::new)
            }
            // More workers than one-word reader registries name (coroutines: threads x Q).
            ProtocolKind::Ermia if ermia::needs_wide_readers(options.threads) => {
                visit_type!(v, ermia::ErmiaWide, |o| built(ermia::ErmiaWide::new(o)))
            }
            ProtocolKind::Ermia => visit_type!(v, ermia::Ermia, |o| built(ermia::Ermia::new(o))),
            ProtocolKind::Mvto => visit_type!(v, mvto::Mvto, mvto::Mvto::new),
            ProtocolKind::CSched => visit_type!(v, c_sched::CSched, c_sched::CSched::new),
            ProtocolKind::Calvin => {
                visit_type!(v, calvin::Calvin, |o| calvin::Calvin::new(
                    &o.batch, o.calvin
                ))
            }
            ProtocolKind::Cicada => visit_type!(v, cicada::Cicada, cicada::Cicada::new),
            ProtocolKind::TwoPlEr => {
                visit_type!(v, twopl_er::TwoPlEr, |_| twopl_er::TwoPlEr::new())
            }
            ProtocolKind::Aria => {
                visit_type!(v, aria::Aria, |o| aria::Aria::new(&o.batch, o.aria))
            }
            ProtocolKind::CalvinTicket => visit_type!(v, calvin_ticket::CalvinTicket, |_| {
                calvin_ticket::CalvinTicket::new()
            }),
            ProtocolKind::Bohm => visit_type!(v, bohm::Bohm, bohm::Bohm::new),
            ProtocolKind::Pwv => visit_type!(v, pwv::Pwv, pwv::Pwv::new),
        }
    }

    /// Bytes of metadata this protocol keeps in every record header (`size_of` its
    /// [`Protocol::RecordMeta`] with `options`), which with the payload sets the tables' stride
    /// ([`storage::record_stride`](crate::storage::record_stride)); memory estimates use it
    /// before anything is allocated.
    pub fn record_meta_bytes(self, options: &ProtocolOptions) -> usize {
        struct MetaBytes;
        impl ProtocolVisitor for MetaBytes {
            type Output = usize;
            fn visit<P: Protocol>(self, _: fn(&ProtocolOptions) -> P) -> usize {
                std::mem::size_of::<P::RecordMeta>()
            }
        }
        self.visit(options, MetaBytes)
    }

    /// Whether the protocol schedules transactions from declared access sets
    /// ([`Protocol::DECLARED_SET`]): it runs only on workloads that declare them.
    pub fn needs_declared_set(self) -> bool {
        struct Declares;
        impl ProtocolVisitor for Declares {
            type Output = bool;
            fn visit<P: Protocol>(self, _: fn(&ProtocolOptions) -> P) -> bool {
                P::DECLARED_SET.is_some()
            }
        }
        // Every variant of a kind (narrow or wide) schedules alike: the defaults pick one.
        self.visit(&ProtocolOptions::default(), Declares)
    }

    /// Why the protocol cannot serve interactive sessions (`txbench serve`, `run --interactive`),
    /// or `None` when it can. A session's worker is idle whenever its client thinks, and its
    /// client may abort or vanish at any request. 2PL with early release installs each write in
    /// place at once, so an abort after a write (the client's, or the server's when the client
    /// disconnects or times out) could not be undone: the protocol refuses such aborts (it
    /// panics), which a client must not be able to cause.
    ///
    /// Every other protocol is served. DecentSched's epoch barrier and the batch protocols'
    /// batches wait for every worker, but an idle session steps away from them
    /// ([`RunHooks::worker_away`](super::parts::RunHooks::worker_away), `exec::interactive::server`,
    /// "Idle sessions"), and a session stalled mid-transaction is ended by the session timeout.
    pub fn not_served_because(self) -> Option<&'static str> {
        match self {
            ProtocolKind::TwoPlEr => Some(super::twopl_er::NOT_SERVED),
            _ => None,
        }
    }

    /// Whether the protocol runs transactions in batches ([`RunHooks::RUNS_IN_BATCHES`](
    /// super::parts::RunHooks::RUNS_IN_BATCHES)), each waiting for every member of its batch.
    pub fn runs_in_batches(self) -> bool {
        struct Batched;
        impl ProtocolVisitor for Batched {
            type Output = bool;
            fn visit<P: Protocol>(self, _: fn(&ProtocolOptions) -> P) -> bool {
                P::RUN_HOOKS.runs_in_batches
            }
        }
        // Every variant of a kind (narrow or wide) batches alike: the defaults pick one.
        self.visit(&ProtocolOptions::default(), Batched)
    }

    /// Multi-version protocols: bytes one older version of a `payload`-byte record takes as a
    /// node of the shared version storage
    /// ([`MultiVersionPart::version_node_bytes`](super::parts::MultiVersionPart::version_node_bytes)),
    /// as the version memory cap counts them; `None` for protocols that keep no older versions.
    /// Memory estimates use it before anything is allocated.
    pub fn version_node_bytes(self, payload: usize) -> Option<usize> {
        struct NodeBytes(usize);
        impl ProtocolVisitor for NodeBytes {
            type Output = Option<usize>;
            fn visit<P: Protocol>(self, _: fn(&ProtocolOptions) -> P) -> Option<usize> {
                P::MULTI_VERSION.map(|mv| mv.version_node_bytes(self.0))
            }
        }
        // Every variant of a kind (narrow or wide) keeps the same version nodes.
        self.visit(&ProtocolOptions::default(), NodeBytes(payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_metadata_fits_a_cache_line() {
        // At the default worker count: the wide variants' locks are larger by design (docs/
        // ARCHITECTURE.md, "Worker limits").
        let mut options = ProtocolOptions::default();
        for lock in [MoccLockKind::Rw, MoccLockKind::Mql] {
            options.mocc.lock = lock;
            for p in ProtocolKind::ALL {
                let bytes = p.record_meta_bytes(&options);
                assert!(bytes <= 64, "{p}: {bytes}");
            }
        }
        assert_eq!(ProtocolKind::Nocc.record_meta_bytes(&options), 0);
        // More workers than one word names: the wide 2PL lock (16 words of waiters).
        options.threads = 1024;
        assert!(ProtocolKind::WaitDie.record_meta_bytes(&options) > 64);
    }

    #[test]
    fn the_multi_version_kinds_count_version_nodes() {
        let multi_version = ProtocolKind::ALL.map(|p| p.version_node_bytes(100).is_some());
        let declaring = ProtocolKind::ALL.map(ProtocolKind::needs_declared_set);
        // Which kinds have which part: `parts`' tests.
        assert_eq!(multi_version.iter().filter(|&&m| m).count(), 6);
        assert_eq!(declaring.iter().filter(|&&d| d).count(), 8);
        let bytes = |p: ProtocolKind| p.version_node_bytes(100).unwrap_or(0);
        // ERMIA's nodes carry its stamps, MVTO's the replacement timestamp, the others' nothing
        // but the header: each as its store allocates them.
        assert!(bytes(ProtocolKind::Ermia) > bytes(ProtocolKind::Si));
        assert!(bytes(ProtocolKind::Mvto) > bytes(ProtocolKind::Si));
        assert_eq!(bytes(ProtocolKind::Si), bytes(ProtocolKind::Cicada));
        assert!(bytes(ProtocolKind::Si) >= 100);
    }

    /// Each kind builds a protocol of the type it visits with, named as the kind (a kind mapped
    /// to another kind's type would run the wrong protocol under its name).
    #[test]
    fn each_kind_builds_its_own_type() {
        struct TypeName;
        impl ProtocolVisitor for TypeName {
            type Output = &'static str;
            fn visit<P: Protocol>(self, _: fn(&ProtocolOptions) -> P) -> &'static str {
                std::any::type_name::<P>()
            }
        }
        let options = ProtocolOptions::default();
        for p in ProtocolKind::ALL {
            // `txbench::protocol::<module>::<Type>`: the module is the protocol's file, and
            // the three 2PL kinds share one type with different conflict rules, BOHM and PWV
            // one engine with visibility at commit or early.
            let name = p.visit(&options, TypeName);
            let (module, marker) = match p {
                ProtocolKind::NoWait => ("twopl", "NoWaitRule"),
                ProtocolKind::WaitDie => ("twopl", "WaitDieRule"),
                ProtocolKind::WoundWait => ("twopl", "WoundWaitRule"),
                ProtocolKind::Bohm => ("bohm", "PlacedVersions<false>"),
                ProtocolKind::Pwv => ("bohm", "PlacedVersions<true>"),
                other => (other.name(), ""),
            };
            assert_eq!(name.split("::").nth(2), Some(module), "{p}: {name}");
            assert!(name.contains(marker), "{p}: {name}");
        }
    }
}
