//! Hermitage's isolation scenarios (https://github.com/ept/hermitage), driven step by step over
//! the wire: two or three client sessions of an in-process server, each step one request, and a
//! table of the outcome every protocol's isolation level allows.
//!
//! # The scenarios
//!
//! Records `x = 10` and `y = 20` (table 0); an ordered index over a table of rows (table 1)
//! whose keys `1`, `2`, `5` and `10` are present (and the end sentinel): the scanned range
//! `3..=9` holds key 5 only. A row's slot is its key. Key 5 is a fence inside the range, so that
//! inserting key 3 (whose index insert writes the path after it: key 5) and inserting key 6
//! (writing key 10) touch no common record, as the predicate form of write skew needs (in
//! Hermitage's G2 the two inserts do not conflict either). `Tn: op` is one step; a transaction
//! begins at its first step. The anomaly is what a committed outcome must not show under
//! serializability.
//!
//! | case | steps | the anomaly |
//! |---|---|---|
//! | G0 write cycle | T1 w x=11, T2 w x=12, T1 w y=21, T1 commit, T2 w y=22, T2 commit; T3 reads x, y | the final x and y come from different writers |
//! | G1a aborted read | T1 w x=101, T2 r x, T1 abort, T2 r x, T2 commit | T2 read 101 |
//! | G1b intermediate read | T1 w x=101, T2 r x, T1 w x=11, T1 commit, T2 r x, T2 commit | T2 read 101 |
//! | G1c circular information flow | T1 w x=11, T2 w y=22, T1 r y, T2 r x, both commit | both commit, each having read the other's write |
//! | OTV observed transaction vanishes | T1 w x=11, T1 w y=19, T2 w x=12, T1 commit, T3 r x, T2 w y=18, T3 r y, T2 commit, T3 r y, T3 r x, T3 commit | T3's four reads are not one committed state |
//! | PMP predicate-many-preceders | T1 scan 3..=9, T2 insert key 3, T2 commit, T1 scan 3..=9, T1 commit | T1's two scans differ |
//! | P4 lost update | T1 r x, T2 r x, T1 w x=11, T2 w x=11, both commit | both commit, both having read x=10 |
//! | G-single read skew | T1 r x, T2 r x, T2 r y, T2 w x=12, T2 w y=18, T2 commit, T1 r y, T1 commit | T1 read x=10 with y=18 |
//! | G2-item write skew | T1 r x, T1 r y, T2 r x, T2 r y, T1 w x=11, T2 w y=21, both commit | both commit, both having read (10, 20) |
//! | G2 anti-dependency cycle (predicate) | T1 scan 3..=9, T2 scan 3..=9, T1 insert key 3, T2 insert key 6, both commit | both commit, neither scan having seen the other's insert |
//!
//! # Waiting steps
//!
//! A step whose operation waits on the server (`Pending`: a lock another session holds) gets no
//! reply. The driver sends each request and waits a short while ([`SETTLE`]) for its reply; if
//! none came, the session is *waiting*: its later steps queue behind that reply and the driver
//! goes on with the other sessions' steps, collecting the reply once it comes (after the holder
//! ends, or when the protocol resolves a deadlock by aborting someone). A reply that is merely
//! slow is treated the same way, which can only reorder steps, never change what a protocol
//! allows: a `Prevented` row holds under any interleaving, and a `Shows` row (which needs the
//! written order) gets [`TRIES`] runs.
//!
//! # Which protocol allows what
//!
//! * Serializable protocols: every anomaly is prevented (the transaction that would complete it
//!   aborts, or waits until the other ends).
//! * Snapshot isolation (`si`): write skew shows (G2-item, and its predicate form G2); the rest is
//!   prevented.
//! * NoCC: OTV, PMP, P4, G-single, G2-item and G2 show. G0, G1a, G1b and G1c are not
//!   provokable: like every protocol here NoCC buffers its writes and installs them at commit, so
//!   no read sees an uncommitted write, and in G0 the two commits happen one after the other
//!   (installs racing within one commit is what `tests/anomalies.rs` provokes).
//! * DecentSched and the batch protocols (Aria, Calvin, BOHM, PWV) are serializable too: every
//!   anomaly prevented, most by making the later transaction wait (an idle session steps away
//!   from their epoch barrier and batches). They run with the options a served run gets
//!   (`user_aborts`: [`options`]).
//! * Not applicable: 2PL with early release (`twopl_er`) is not served: it installs each write in place at once,
//!   so a client's abort or disconnect after a write could not be undone (the protocol panics on
//!   such an abort, and on a record touched again after its early release, which G1b, OTV and
//!   PMP do: a client could crash the server; `ProtocolKind::not_served_because`).
//!
//! Deterministic protocols get each transaction's declared access set at `BEGIN`, computed from
//! its steps (a scan declares the range's slots and the fence after it; an insert declares its
//! slot and the slots up to the fence, its next-key path).
//!
//! The table is shown able to fail by `a_wrong_expectation_fails`: NoCC expected to prevent
//! write skew, and a serializable protocol expected to show it, are both judged failures.

use std::collections::VecDeque;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use txbench::Abort;
use txbench::client::{Session, SessionError};
use txbench::exec::interactive::server::{ServeConfig, serve};
use txbench::exec::interactive::wire::{Declared, DeclaredSet, ErrorCode, Reply, Request};
use txbench::protocol::bohm::Pwv;
use txbench::protocol::twopl_er::TwoPlEr;
use txbench::protocol::{Protocol, ProtocolKind, ProtocolOptions, ProtocolVisitor};
use txbench::storage::{Database, END_SENTINEL_KEY, IndexSpec, RecordId, TableId, TableSpec};

// ---------------------------------------------------------------------------------------------
// The tables: cases and expectations
// ---------------------------------------------------------------------------------------------

/// A Hermitage case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    G0,
    G1a,
    G1b,
    G1c,
    Otv,
    Pmp,
    P4,
    GSingle,
    G2Item,
    G2,
}

impl Case {
    /// The case's steps (module docs).
    fn steps(self) -> Vec<(usize, Op)> {
        use Op::*;
        let (t1, t2, t3) = (0, 1, 2);
        match self {
            Case::G0 => vec![
                (t1, Write(X, 11)),
                (t2, Write(X, 12)),
                (t1, Write(Y, 21)),
                (t1, Commit),
                (t2, Write(Y, 22)),
                (t2, Commit),
                (t3, Read(X)),
                (t3, Read(Y)),
                (t3, Commit),
            ],
            Case::G1a => vec![
                (t1, Write(X, 101)),
                (t2, Read(X)),
                (t1, Abort),
                (t2, Read(X)),
                (t2, Commit),
            ],
            Case::G1b => vec![
                (t1, Write(X, 101)),
                (t2, Read(X)),
                (t1, Write(X, 11)),
                (t1, Commit),
                (t2, Read(X)),
                (t2, Commit),
            ],
            Case::G1c => vec![
                (t1, Write(X, 11)),
                (t2, Write(Y, 22)),
                (t1, Read(Y)),
                (t2, Read(X)),
                (t1, Commit),
                (t2, Commit),
            ],
            Case::Otv => vec![
                (t1, Write(X, 11)),
                (t1, Write(Y, 19)),
                (t2, Write(X, 12)),
                (t1, Commit),
                (t3, Read(X)),
                (t2, Write(Y, 18)),
                (t3, Read(Y)),
                (t2, Commit),
                (t3, Read(Y)),
                (t3, Read(X)),
                (t3, Commit),
            ],
            Case::Pmp => vec![
                (t1, Scan),
                (t2, Insert(3)),
                (t2, Commit),
                (t1, Scan),
                (t1, Commit),
            ],
            Case::P4 => vec![
                (t1, Read(X)),
                (t2, Read(X)),
                (t1, Write(X, 11)),
                (t2, Write(X, 11)),
                (t1, Commit),
                (t2, Commit),
            ],
            Case::GSingle => vec![
                (t1, Read(X)),
                (t2, Read(X)),
                (t2, Read(Y)),
                (t2, Write(X, 12)),
                (t2, Write(Y, 18)),
                (t2, Commit),
                (t1, Read(Y)),
                (t1, Commit),
            ],
            Case::G2Item => vec![
                (t1, Read(X)),
                (t1, Read(Y)),
                (t2, Read(X)),
                (t2, Read(Y)),
                (t1, Write(X, 11)),
                (t2, Write(Y, 21)),
                (t1, Commit),
                (t2, Commit),
            ],
            Case::G2 => vec![
                (t1, Scan),
                (t2, Scan),
                (t1, Insert(3)),
                (t2, Insert(6)),
                (t1, Commit),
                (t2, Commit),
            ],
        }
    }

    /// Whether `o` shows the case's anomaly (module docs, "the anomaly").
    fn anomaly(self, o: &Outcome) -> bool {
        let [t1, t2, t3] = &o.txns;
        match self {
            Case::G0 => matches!(t3.reads.as_slice(), [11, 22] | [12, 21]),
            Case::G1a | Case::G1b => t2.reads.contains(&101),
            // The cycle: each read the other's write, and both committed.
            Case::G1c => t1.committed() && t2.committed() && t1.reads == [22] && t2.reads == [11],
            Case::Otv => {
                let states: &[[u64; 4]] = &[[10, 20, 20, 10], [11, 19, 19, 11], [12, 18, 18, 12]];
                t3.committed() && !states.iter().any(|s| t3.reads == s)
            }
            Case::Pmp => t1.committed() && t1.scans.len() == 2 && t1.scans[0] != t1.scans[1],
            // Both read the value before either write and both committed (a transaction that
            // waited for the other and read its write is the serial order).
            Case::P4 => t1.committed() && t2.committed() && t1.reads == [10] && t2.reads == [10],
            Case::GSingle => t1.committed() && t1.reads == [10, 18],
            Case::G2Item => {
                t1.committed() && t2.committed() && t1.reads == [10, 20] && t2.reads == [10, 20]
            }
            Case::G2 => {
                let initial = [vec![INNER_FENCE]];
                t1.committed() && t2.committed() && t1.scans == initial && t2.scans == initial
            }
        }
    }
}

/// What a protocol's run of a case must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The anomaly commits (within [`TRIES`] runs).
    Shows,
    /// The protocol's isolation level prevents it.
    Prevented,
    /// No protocol that installs writes at commit can show it (module docs).
    NotProvokable,
    /// Not run, for the reason given.
    NotApplicable(&'static str),
}

const EARLY_RELEASE_NOT_SERVED: &str = "not served interactively: 2PL with early release installs writes in place at once, so a client's abort or disconnect after a write could not be undone";

/// What `kind` must show on `case`.
fn expected(kind: ProtocolKind, case: Case) -> Expect {
    match (kind, case) {
        (ProtocolKind::TwoPlEr, _) => Expect::NotApplicable(EARLY_RELEASE_NOT_SERVED),
        (ProtocolKind::Nocc, Case::G0 | Case::G1a | Case::G1b | Case::G1c) => Expect::NotProvokable,
        (ProtocolKind::Nocc, _) => Expect::Shows,
        (ProtocolKind::Si, Case::G2Item | Case::G2) => Expect::Shows,
        (ProtocolKind::Si, Case::G1a | Case::G1b) => Expect::NotProvokable,
        (k, _) => {
            assert!(
                k.is_serializable() || k == ProtocolKind::Si,
                "{k}: a protocol below serializability needs its own row"
            );
            Expect::Prevented
        }
    }
}

/// Runs of a `Shows` expectation before it counts as not shown (a slow reply can reorder steps).
const TRIES: usize = 3;

/// How long the driver waits for a reply before it counts the step as waiting on the server.
const SETTLE: Duration = Duration::from_millis(300);

/// How many [`SETTLE`]-long waits for the outstanding replies before a case counts as stuck.
const STUCK_AFTER: usize = 100;

// ---------------------------------------------------------------------------------------------
// The tests: one per case, each over every protocol
// ---------------------------------------------------------------------------------------------

#[test]
fn g0_write_cycles() {
    check_case(Case::G0);
}

#[test]
fn g1a_aborted_reads() {
    check_case(Case::G1a);
}

#[test]
fn g1b_intermediate_reads() {
    check_case(Case::G1b);
}

#[test]
fn g1c_circular_information_flow() {
    check_case(Case::G1c);
}

#[test]
fn otv_observed_transaction_vanishes() {
    check_case(Case::Otv);
}

#[test]
fn pmp_predicate_many_preceders() {
    check_case(Case::Pmp);
}

#[test]
fn p4_lost_update() {
    check_case(Case::P4);
}

#[test]
fn g_single_read_skew() {
    check_case(Case::GSingle);
}

#[test]
fn g2_item_write_skew() {
    check_case(Case::G2Item);
}

#[test]
fn g2_anti_dependency_cycles() {
    check_case(Case::G2);
}

/// The judge can fail: a wrong expectation in either direction is a failure.
#[test]
fn a_wrong_expectation_fails() {
    let nocc = judge(ProtocolKind::Nocc, Case::G2Item, Expect::Prevented);
    assert!(nocc.is_err(), "NoCC expected to prevent write skew passed");
    let silo = judge(ProtocolKind::Silo, Case::G2Item, Expect::Shows);
    assert!(silo.is_err(), "Silo expected to show write skew passed");
}

/// Issue 24: under every served protocol that schedules from declared sets, a scan, and an index
/// insert whose next-key path it rewrites, that reach a record outside the declared set are
/// refused with `ERROR BadRequest` (the attempt aborted on the server), neither served unchecked
/// nor a panic of the server; the session goes on, and a scan of records it declared runs.
#[test]
fn an_index_walk_outside_the_declared_set_is_refused() {
    let mut declaring_kinds = 0;
    for kind in ProtocolKind::ALL {
        if kind.not_served_because().is_some() {
            continue;
        }
        declaring_kinds += with_server(kind, |addr, declaring| {
            if !declaring {
                return 0;
            }
            let mut s = Session::connect(addr, None).expect("connects");
            let mut rows = Vec::new();
            // Only `x` declared: the scan's first read (the present key 5's slot) is outside.
            let scan = until_not_aborted(&mut s, &[(KEYS, X, true)], |s| {
                s.scan(INDEX, SCAN_LO, SCAN_HI, 16, &mut rows)
            });
            refused(scan, kind, "a scan");
            // The slot declared, not the path: entering key 4 rewrites key 5's slot, undeclared.
            let insert = until_not_aborted(&mut s, &[(ROWS, 4, true)], |s| {
                s.insert(ROWS, RecordId(4), &index_row(4))?;
                s.index_insert(INDEX, 4, RecordId(4)).map(|_| ())
            });
            refused(insert, kind, "an index insert's path");
            // Declared as Hermitage's scans declare: the range's slots and the fence.
            let set: Vec<_> = (SCAN_LO..=FENCE).map(|slot| (ROWS, slot, false)).collect();
            rows.clear();
            let scan = until_not_aborted(&mut s, &set, |s| {
                s.scan(INDEX, SCAN_LO, SCAN_HI, 16, &mut rows)?;
                s.commit()
            });
            scan.unwrap_or_else(|e| panic!("{kind}: the declared scan: {e}"));
            assert_eq!(rows, [(INNER_FENCE, RecordId(INNER_FENCE))], "{kind}");
            1
        });
    }
    // Ord-Lock, C-Sched, Calvin with tickets, DecentSched, batched Calvin, BOHM, PWV.
    assert!(
        declaring_kinds >= 7,
        "{declaring_kinds} declaring protocols served"
    );
}

/// Begins a transaction declaring `set` (table, record, written) and runs `attempt`, again
/// (with the retry flag) while the protocol aborts it.
fn until_not_aborted(
    s: &mut Session,
    set: &[(TableId, u64, bool)],
    mut attempt: impl FnMut(&mut Session) -> Result<(), SessionError>,
) -> Result<(), SessionError> {
    let mut bytes = Vec::new();
    for &(table, rid, write) in set {
        let d = Declared {
            table: table.0,
            rid,
            write,
        };
        DeclaredSet::encode_entry(&mut bytes, d);
    }
    let declared = DeclaredSet::from_wire(&bytes).expect("valid entries");
    let mut retry = false;
    loop {
        let begun = s.begin_declared(false, retry, declared);
        retry = true;
        match begun.and_then(|()| attempt(s)) {
            Err(SessionError::Aborted(_)) => continue,
            other => return other,
        }
    }
}

/// Asserts `r` is `ERROR BadRequest` naming an access outside the declared set.
fn refused(r: Result<(), SessionError>, kind: ProtocolKind, what: &str) {
    match r {
        Err(SessionError::Server { code, message }) => {
            assert_eq!(code, ErrorCode::BadRequest, "{kind} {what}: {message}");
            assert!(
                message.contains("outside the transaction's declared access set"),
                "{kind} {what}: {message}"
            );
        }
        other => panic!("{kind} {what}: expected BadRequest, got {other:?}"),
    }
}

/// Runs `case` under every protocol and asserts the table's expectation for each.
fn check_case(case: Case) {
    let mut failures = Vec::new();
    for kind in ProtocolKind::ALL {
        match judge(kind, case, expected(kind, case)) {
            Ok(line) => println!("{case:?} {kind}: {line}"),
            Err(why) => failures.push(format!("{kind}: {why}")),
        }
    }
    assert!(failures.is_empty(), "{case:?}:\n{}", failures.join("\n"));
}

/// Runs `case` under `kind` and judges the outcome against `expect`: `Ok` with what was seen,
/// or `Err` with why it differs.
fn judge(kind: ProtocolKind, case: Case, expect: Expect) -> Result<String, String> {
    let tries = match expect {
        Expect::NotApplicable(why) => return Ok(format!("not applicable: {why}")),
        Expect::Shows => TRIES,
        Expect::Prevented | Expect::NotProvokable => 1,
    };
    let mut last = String::new();
    for _ in 0..tries {
        let outcome = run_case(kind, case)?;
        let shows = case.anomaly(&outcome);
        last = format!("{outcome}");
        match (expect, shows) {
            (Expect::Shows, true) => return Ok(format!("shows: {last}")),
            (Expect::Shows, false) => continue,
            (_, false) => return Ok(format!("prevented: {last}")),
            (_, true) => return Err(format!("expected {expect:?}, the anomaly shows: {last}")),
        }
    }
    Err(format!(
        "expected it to show, it did not in {tries} runs: {last}"
    ))
}

// ---------------------------------------------------------------------------------------------
// The database and the server
// ---------------------------------------------------------------------------------------------

const KEYS: TableId = TableId(0);
const X: u64 = 0;
const Y: u64 = 1;
const ROWS: TableId = TableId(1);
const INDEX: u32 = 0;
/// The scanned key range.
const SCAN_LO: u64 = 3;
const SCAN_HI: u64 = 9;
/// The one key present in the range at the start (module docs).
const INNER_FENCE: u64 = 5;
/// The fence row closing the range (its slot is its key).
const FENCE: u64 = 10;
/// The end sentinel's slot.
const SENTINEL_SLOT: u64 = 11;

fn word(row: &[u8]) -> u64 {
    u64::from_le_bytes(row[..8].try_into().expect("8-byte rows"))
}

/// A row of the indexed table: its key + 1 (never all zero, which is vacant).
fn index_row(key: u64) -> [u8; 8] {
    (key + 1).to_le_bytes()
}

fn build_db<M: Default>() -> Database<M> {
    let spec = |name: &str, records| TableSpec {
        name: name.into(),
        records,
        payload_bytes: 8,
    };
    let tables = [spec("keys", 2), spec("rows", SENTINEL_SLOT + 1)];
    let indexes = [IndexSpec {
        name: "rows".into(),
        table: ROWS,
        key_of: |row| word(row) - 1,
    }];
    let db = Database::try_build(&tables, &indexes, false).expect("tiny tables");
    let keys = db.table(KEYS);
    for (rid, value) in [(X, 10u64), (Y, 20)] {
        let rec = keys.get(RecordId(rid)).expect("record");
        rec.payload.store(&value.to_le_bytes());
    }
    let rows = db.table(ROWS);
    let index = &db.ordered_index(txbench::storage::IndexId(INDEX)).map;
    let present = [1, 2, INNER_FENCE, FENCE].map(|k| (k, k));
    for (slot, key) in present
        .into_iter()
        .chain([(SENTINEL_SLOT, END_SENTINEL_KEY)])
    {
        let row = index_row(key.min(END_SENTINEL_KEY - 1));
        let rec = rows.get(RecordId(slot)).expect("slot");
        rec.payload.store(&row);
        index.insert(key, RecordId(slot)).expect("fresh key");
    }
    db
}

/// Sessions a case uses (T1, T2, T3).
const SESSIONS: usize = 3;

/// Serves a fresh database under `kind` while `body` drives it.
fn with_server<T>(kind: ProtocolKind, body: impl FnOnce(SocketAddr, bool) -> T) -> T {
    struct Run<F>(F);
    impl<T, F: FnOnce(SocketAddr, bool) -> T> ProtocolVisitor for Run<F> {
        type Output = T;
        fn visit<P: Protocol>(self, build: fn(&ProtocolOptions) -> P) -> T {
            let protocol = build(&options());
            let db: Database<P::RecordMeta> = build_db();
            let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind loopback");
            let addr = listener.local_addr().expect("bound address");
            let cfg = ServeConfig::loopback(SESSIONS, Duration::ZERO, false, 0);
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                let server = s.spawn(|| serve(&protocol, &db, listener, &cfg, &stop));
                let out = (self.0)(addr, P::DECLARED_SET.is_some());
                // Release: pairs with the accept loop's Acquire load.
                stop.store(true, Ordering::Release);
                server.join().expect("server thread").expect("served");
                out
            })
        }
    }
    kind.visit(&options(), Run(body))
}

/// The options a served run gets (`txbench serve` and `run --interactive` set `user_aborts`):
/// a client may abort any transaction, so PWV must make nothing visible before the commit.
/// Without it, G1a's client abort after a write and G1b's second write of `x` panic PWV's
/// server (both seen when this table first ran PWV).
fn options() -> ProtocolOptions {
    ProtocolOptions {
        threads: SESSIONS,
        user_aborts: true,
        ..ProtocolOptions::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

/// One step's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Read record `x` or `y`.
    Read(u64),
    /// Overwrite record `x` or `y` with a value.
    Write(u64, u64),
    /// Scan the index over `SCAN_LO..=SCAN_HI`.
    Scan,
    /// Insert a row with this key (into the slot of the same number) and index it.
    Insert(u64),
    Commit,
    Abort,
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// Still open, or never begun.
    Open,
    Committed,
    /// The protocol aborted it, or its own `Abort` step.
    Aborted(Abort),
}

/// What one transaction saw.
#[derive(Debug, Clone)]
struct Seen {
    /// Values its reads returned, in order.
    reads: Vec<u64>,
    /// Keys each of its scans returned.
    scans: Vec<Vec<u64>>,
    end: End,
    /// Some step of it waited on the server.
    waited: bool,
}

impl Seen {
    fn committed(&self) -> bool {
        self.end == End::Committed
    }
}

/// A case's outcome.
struct Outcome {
    txns: [Seen; SESSIONS],
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, t) in self.txns.iter().enumerate() {
            if t.reads.is_empty() && t.scans.is_empty() && t.end == End::Open {
                continue;
            }
            let end = match t.end {
                End::Open => "open".to_string(),
                End::Committed => "committed".to_string(),
                End::Aborted(why) => format!("aborted ({})", why.name()),
            };
            let waited = if t.waited { ", waited" } else { "" };
            write!(f, "T{} reads {:?}", i + 1, t.reads)?;
            if !t.scans.is_empty() {
                write!(f, " scans {:?}", t.scans)?;
            }
            write!(f, " {end}{waited}; ")?;
        }
        Ok(())
    }
}

/// A session in the driver.
struct Conn {
    session: Session,
    /// The request awaiting its reply (sent, not yet collected).
    awaiting: Option<Sent>,
    /// Steps queued behind the awaited reply.
    queue: VecDeque<Op>,
    begun: bool,
    seen: Seen,
    /// The declared access set of its transaction, wire form (deterministic protocols).
    declared: Vec<u8>,
}

/// A reply, owned (the session's reply borrows its buffer).
#[derive(Debug)]
enum Got {
    Ok,
    Value(u64),
    Flag(bool),
    Rows(Vec<u64>),
    Aborted(Abort),
}

/// What an awaited reply answers.
#[derive(Debug, Clone, Copy)]
enum Sent {
    Begin,
    Op(Op),
    /// The index entry of an `Insert` step (its second request, after the row's).
    IndexEntry,
}

/// Runs `case` under `kind`; `Err` when a session failed or the case got stuck.
fn run_case(kind: ProtocolKind, case: Case) -> Result<Outcome, String> {
    let steps = case.steps();
    with_server(kind, |addr, declares| {
        let mut conns = Vec::new();
        for t in 0..SESSIONS {
            let session = Session::connect(addr, None).map_err(|e| format!("connect: {e}"))?;
            let mut declared = Vec::new();
            if declares {
                declare(&steps, t, &mut declared);
            }
            conns.push(Conn {
                session,
                awaiting: None,
                queue: VecDeque::new(),
                begun: false,
                seen: Seen {
                    reads: Vec::new(),
                    scans: Vec::new(),
                    end: End::Open,
                    waited: false,
                },
                declared,
            });
        }
        for &(t, op) in &steps {
            if conns[t].awaiting.is_some() {
                conns[t].queue.push_back(op);
            } else {
                conns[t].start(op)?;
            }
            for c in &mut conns {
                c.collect(Duration::from_millis(1))?;
            }
        }
        let mut rounds = 0;
        while conns.iter().any(|c| c.awaiting.is_some()) {
            rounds += 1;
            if rounds > STUCK_AFTER {
                let seen: Vec<_> = conns.iter().map(|c| (c.awaiting, c.seen.clone())).collect();
                return Err(format!("stuck: replies never came: {seen:?}"));
            }
            for c in &mut conns {
                c.collect(SETTLE / 10)?;
            }
        }
        let mut txns = conns.into_iter().map(|c| c.seen);
        let mut next = || txns.next().expect("three sessions");
        Ok(Outcome {
            txns: [next(), next(), next()],
        })
    })
}

impl Conn {
    /// Sends `op` (beginning the transaction first if needed) and waits [`SETTLE`] for the
    /// reply; an unanswered request leaves the session awaiting it.
    fn start(&mut self, op: Op) -> Result<(), String> {
        if matches!(self.seen.end, End::Aborted(_) | End::Committed) {
            return Ok(()); // the transaction is over: its later steps do not run
        }
        if !self.begun {
            self.begun = true;
            // Sent once: a transaction begins once (no step retries it).
            let bytes = std::mem::take(&mut self.declared);
            let declared = DeclaredSet::from_wire(&bytes).map_err(|e| e.to_string())?;
            let begin = Request::Begin {
                read_only: false,
                retry: false,
                declared,
            };
            self.send(begin, Sent::Begin)?;
            if self.awaiting.is_some() {
                self.queue.push_front(op);
                return Ok(());
            }
            if self.seen.end != End::Open {
                return Ok(());
            }
        }
        // A written or inserted row (unused by the other operations).
        let row = match op {
            Op::Write(_, v) => v.to_le_bytes(),
            Op::Insert(key) => index_row(key),
            _ => [0; 8],
        };
        let req = match op {
            Op::Read(rid) => Request::Read { table: KEYS.0, rid },
            Op::Write(rid, _) => Request::Write {
                table: KEYS.0,
                rid,
                data: &row,
            },
            Op::Scan => Request::Scan {
                index: INDEX,
                lo: SCAN_LO,
                hi: SCAN_HI,
                limit: 64,
            },
            // The key's slot is the key.
            Op::Insert(key) => Request::Insert {
                table: ROWS.0,
                rid: key,
                data: &row,
            },
            Op::Commit => Request::Commit,
            Op::Abort => Request::Abort,
        };
        self.send(req, Sent::Op(op))
    }

    /// Sends one request and collects its reply if it comes within [`SETTLE`].
    fn send(&mut self, req: Request<'_>, what: Sent) -> Result<(), String> {
        self.session
            .send_request(req)
            .map_err(|e| format!("send: {e}"))?;
        self.awaiting = Some(what);
        self.collect(SETTLE)?;
        if self.awaiting.is_some() {
            self.seen.waited = true;
        }
        Ok(())
    }

    /// Collects the awaited reply if it arrives within `within`, then runs the queued steps.
    fn collect(&mut self, within: Duration) -> Result<(), String> {
        let Some(what) = self.awaiting else {
            return Ok(());
        };
        let arrived = self
            .session
            .reply_arrived(within)
            .map_err(|e| format!("waiting for a reply: {e}"))?;
        if !arrived {
            return Ok(());
        }
        self.awaiting = None;
        let got = match self.session.receive_reply() {
            Ok(Reply::Ok) => Got::Ok,
            Ok(Reply::Value(v)) => Got::Value(word(v)),
            Ok(Reply::Flag(b)) => Got::Flag(b),
            Ok(Reply::Rows(rows)) => Got::Rows(rows.iter().map(|(k, _)| k).collect()),
            Err(SessionError::Aborted(why)) => Got::Aborted(why),
            Ok(other) => return Err(format!("{what:?}: unexpected reply {other:?}")),
            Err(e) => return Err(format!("{what:?}: {e}")),
        };
        match (what, got) {
            (_, Got::Aborted(why)) => self.seen.end = End::Aborted(why),
            (Sent::Begin, Got::Ok) => {}
            (Sent::Op(Op::Read(_)), Got::Value(v)) => self.seen.reads.push(v),
            (Sent::Op(Op::Write(..)), Got::Ok) => {}
            (Sent::Op(Op::Scan), Got::Rows(keys)) => self.seen.scans.push(keys),
            (Sent::Op(Op::Insert(key)), Got::Flag(true)) => {
                // The row is in; its index entry is the step's second request.
                let enter = Request::IndexInsert {
                    index: INDEX,
                    key,
                    rid: key,
                };
                return self.send(enter, Sent::IndexEntry);
            }
            (Sent::IndexEntry, Got::Flag(true)) => {}
            (Sent::Op(Op::Commit), Got::Ok) => self.seen.end = End::Committed,
            (Sent::Op(Op::Abort), Got::Ok) => self.seen.end = End::Aborted(Abort::User),
            (what, got) => return Err(format!("{what:?}: unexpected reply {got:?}")),
        }
        while self.awaiting.is_none() {
            let Some(op) = self.queue.pop_front() else {
                break;
            };
            self.start(op)?;
        }
        Ok(())
    }
}

/// Appends transaction `t`'s declared access set, computed from its steps (module docs): each
/// record once, written if any step writes it.
fn declare(steps: &[(usize, Op)], t: usize, out: &mut Vec<u8>) {
    let mut set = std::collections::BTreeMap::new();
    let mut add = |table: TableId, rid: u64, write: bool| {
        *set.entry((table.0, rid)).or_insert(false) |= write;
    };
    for &(_, op) in steps.iter().filter(|(s, _)| *s == t) {
        match op {
            Op::Read(r) => add(KEYS, r, false),
            Op::Write(r, _) => add(KEYS, r, true),
            Op::Scan => {
                for slot in SCAN_LO..=FENCE {
                    add(ROWS, slot, false);
                }
            }
            Op::Insert(key) => {
                for slot in key..=FENCE {
                    add(ROWS, slot, true);
                }
            }
            Op::Commit | Op::Abort => {}
        }
    }
    for ((table, rid), write) in set {
        DeclaredSet::encode_entry(out, Declared { table, rid, write });
    }
}

/// A protocol that could not undo a client's abort is refused before the server listens, as an
/// error, not a panic at the first abort: PWV built without `user_aborts` (the G1a and G1b
/// panics this table found), and 2PL with early release. PWV with it serves.
#[test]
fn a_protocol_that_cannot_undo_a_client_abort_is_refused() {
    fn serve_briefly<P: Protocol>(protocol: &P) -> std::io::Result<()> {
        let db: Database<P::RecordMeta> = build_db();
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind loopback");
        let cfg = ServeConfig::loopback(SESSIONS, Duration::ZERO, false, 0);
        // Set before serving: a server that starts ends at once.
        let stop = AtomicBool::new(true);
        serve(protocol, &db, listener, &cfg, &stop).map(|_| ())
    }
    let early = Pwv::new(&ProtocolOptions {
        user_aborts: false,
        ..options()
    });
    let refused = serve_briefly(&early).expect_err("PWV making writes visible early");
    assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
    assert!(refused.to_string().contains("user_aborts"), "{refused}");
    let refused = serve_briefly(&TwoPlEr::new()).expect_err("2PL with early release");
    assert!(refused.to_string().contains("in place"), "{refused}");
    serve_briefly(&Pwv::new(&options())).expect("PWV with user_aborts serves");
}
