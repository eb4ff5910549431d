//! Declared access sets over the wire (issue 24): a client of wire format version 3 sends its
//! set's covers with its records at `BEGIN`, and the server refuses an access outside both with
//! `ERROR BadRequest`, aborting the attempt (so it releases what it held), instead of serving
//! it unchecked (a silent race, or a panicked session under BOHM and PWV). A version-2 client's
//! `BEGIN` (records only) is still served, unchecked, as before. The TPC-C NP mix's covered
//! inserts over the wire under every deterministic protocol are in `interactive_programs.rs`.
//! Outcomes only, no timing.

#[path = "common/in_process_server.rs"]
mod in_process_server;

use in_process_server::{read_frame, row, serving};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use txbench::client::{Session, SessionError};
use txbench::exec::interactive::server::ServeSummary;
use txbench::exec::interactive::wire::{
    Declared, DeclaredCover, DeclaredSet, ErrorCode, Handshake, Reply, Request,
};
use txbench::ids::{RecordId, TableId};

const T: TableId = TableId(0);

/// Every protocol served that schedules from declared sets (2PL with early release is not
/// served).
const DECLARING: [&str; 7] = [
    "ord_lock",
    "c_sched",
    "calvin_ticket",
    "decentsched",
    "calvin",
    "bohm",
    "pwv",
];

/// Sets the stop flag when dropped, so a failing test body still ends its server.
/// Runs a checked YCSB server (64 records) for `protocol` while `body` runs against its
/// address; returns what it served.
fn with_server(protocol: &str, body: impl FnOnce(SocketAddr)) -> ServeSummary {
    let argv = [
        "txbench",
        "serve",
        "-p",
        protocol,
        "--listen",
        "127.0.0.1:0",
        "--records",
        "64",
        "--ops",
        "4",
        "--max-connections",
        "4",
        // Check mode: the handle checks declared sets in process (panicking there), so this
        // also shows a remote session's access is refused rather than a panic.
        "--check",
    ];
    serving(&argv, body)
}

/// Begins a transaction declaring `entries` (`(record, write)` of table 0) and covering
/// `covers` (`(start, end)`, half-open) of table 0.
fn begin_covered(
    s: &mut Session,
    entries: &[(u64, bool)],
    covers: &[(u64, u64)],
) -> Result<(), SessionError> {
    let mut records = Vec::new();
    for &(rid, write) in entries {
        let d = Declared {
            table: 0,
            rid,
            write,
        };
        DeclaredSet::encode_entry(&mut records, d);
    }
    let mut covered = Vec::new();
    for &(start, end) in covers {
        let c = DeclaredCover {
            table: 0,
            start,
            end,
        };
        DeclaredSet::encode_cover(&mut covered, c);
    }
    let set = DeclaredSet::with_covers(&records, &covered).expect("valid set");
    s.begin_declared(false, false, set)
}

/// Asserts `r` is an `ERROR BadRequest` naming an access outside the declared set.
fn refused<T: std::fmt::Debug>(r: Result<T, SessionError>, protocol: &str, what: &str) {
    match r {
        Err(SessionError::Server { code, message }) => {
            assert_eq!(code, ErrorCode::BadRequest, "{protocol} {what}: {message}");
            assert!(
                message.contains("outside the transaction's declared access set"),
                "{protocol} {what}: {message}"
            );
        }
        other => panic!("{protocol} {what}: expected BadRequest, got {other:?}"),
    }
}

/// Runs `attempt` until the protocol does not abort it (batched no-wait forms may); the first
/// try begins with `begin`, the retries with the retry flag.
fn until_not_aborted<T>(
    s: &mut Session,
    mut begin: impl FnMut(&mut Session) -> Result<(), SessionError>,
    mut attempt: impl FnMut(&mut Session) -> Result<T, SessionError>,
) -> Result<T, SessionError> {
    let mut first = true;
    loop {
        let begun = if first { begin(s) } else { s.begin_retry() };
        first = false;
        match begun.and_then(|()| attempt(s)) {
            Err(SessionError::Aborted(_)) => continue,
            other => return other,
        }
    }
}

/// Under every declaring protocol: accesses inside the declared records and covers are
/// served; a write, a read, a read for update, an update, an insert and a delete outside them
/// each get `ERROR BadRequest` and end the attempt, which releases what it held (another
/// session then writes the same records and commits), and the session goes on. No session
/// faults and the server is not panicked.
#[test]
fn an_access_outside_the_declared_set_and_covers_is_refused_and_nothing_hangs() {
    for protocol in DECLARING {
        let served = with_server(protocol, |addr| {
            let mut a = Session::connect(addr, None).unwrap();
            let data = row(&a, 0x5A);
            // Inside: declared records 1 (read) and 2 (written), covered 10..12.
            let inside = until_not_aborted(
                &mut a,
                |s| begin_covered(s, &[(1, false), (2, true)], &[(10, 12)]),
                |s| {
                    s.read(T, RecordId(1))?;
                    s.write(T, RecordId(2), &data)?;
                    s.write(T, RecordId(10), &data)?;
                    s.read(T, RecordId(11))?;
                    s.commit()
                },
            );
            inside.unwrap_or_else(|e| panic!("{protocol}: covered accesses: {e}"));
            // Outside, one kind of access per attempt; each attempt first writes record 2,
            // which it must give up when refused.
            type Op = fn(&mut Session, &[u8]) -> Result<(), SessionError>;
            let outside: [(&str, Op); 8] = [
                ("a write of an undeclared record", |s, d| {
                    s.write(T, RecordId(5), d)
                }),
                ("a write of a record declared read", |s, d| {
                    s.write(T, RecordId(1), d)
                }),
                ("a write past the cover", |s, d| s.write(T, RecordId(12), d)),
                ("a read of an undeclared record", |s, _| {
                    s.read(T, RecordId(6)).map(|_| ())
                }),
                ("a read for update of a record declared read", |s, _| {
                    s.read_for_update(T, RecordId(1)).map(|_| ())
                }),
                ("an update of an undeclared record", |s, d| {
                    s.update(T, RecordId(7), d)
                }),
                ("an insert into an undeclared record", |s, d| {
                    s.insert(T, RecordId(9), d).map(|_| ())
                }),
                ("a delete of an undeclared record", |s, _| {
                    s.delete(T, RecordId(8)).map(|_| ())
                }),
            ];
            let mut b = Session::connect(addr, None).unwrap();
            for (what, op) in outside {
                let got = until_not_aborted(
                    &mut a,
                    |s| begin_covered(s, &[(1, false), (2, true)], &[(10, 12)]),
                    |s| {
                        s.write(T, RecordId(2), &data)?;
                        op(s, &data)
                    },
                );
                refused(got, protocol, what);
                // The attempt is over on the server, and gave record 2 up: another session
                // writes it and commits.
                let other = until_not_aborted(
                    &mut b,
                    |s| begin_covered(s, &[(2, true)], &[]),
                    |s| {
                        s.write(T, RecordId(2), &row(s, 0x11))?;
                        s.commit()
                    },
                );
                other.unwrap_or_else(|e| panic!("{protocol} after {what}: {e}"));
            }
            // The refused session goes on.
            let again = until_not_aborted(
                &mut a,
                |s| begin_covered(s, &[(2, true)], &[]),
                |s| {
                    let seen = s.read(T, RecordId(2))?.to_vec();
                    s.write(T, RecordId(2), &data)?;
                    s.commit().map(|()| seen)
                },
            );
            let seen = again.unwrap_or_else(|e| panic!("{protocol}: the session after: {e}"));
            // The last committed write of record 2 is the other session's, never a refused
            // attempt's.
            assert_eq!(seen, row(&a, 0x11), "{protocol}");
        });
        assert_eq!(served.faults, 0, "{protocol}");
        assert_eq!(served.commits, 1 + 8 + 1, "{protocol}");
    }
}

/// A version-2 client (no covers in its `BEGIN`) is still served under a declaring protocol:
/// its set is scheduled as before and its declared accesses commit. Raw frames, as such a
/// client sends them.
#[test]
fn a_version_2_client_is_still_served() {
    for protocol in ["calvin_ticket", "bohm"] {
        let served = with_server(protocol, |addr| {
            let mut raw = TcpStream::connect(addr).unwrap();
            raw.set_nodelay(true).unwrap();
            let mut out = Vec::new();
            let hs = Handshake {
                version: 2,
                token: b"",
            };
            hs.encode(&mut out).unwrap();
            raw.write_all(&out).unwrap();
            let hello = read_frame(&mut raw);
            assert!(matches!(
                Reply::decode(&hello),
                Ok(Some((Reply::Hello(_), _)))
            ));
            let mut records = Vec::new();
            let d = Declared {
                table: 0,
                rid: 3,
                write: true,
            };
            DeclaredSet::encode_entry(&mut records, d);
            let payload = match Reply::decode(&hello) {
                Ok(Some((Reply::Hello(t), _))) => t.iter().next().unwrap().payload_bytes,
                other => panic!("{other:?}"),
            };
            let data = vec![7u8; payload as usize];
            let requests = [
                Request::Begin {
                    read_only: false,
                    retry: false,
                    declared: DeclaredSet::from_wire(&records).unwrap(),
                },
                Request::Write {
                    table: 0,
                    rid: 3,
                    data: &data,
                },
                Request::Commit,
            ];
            for req in requests {
                out.clear();
                req.encode_version(&mut out, 2);
                raw.write_all(&out).unwrap();
                let reply = read_frame(&mut raw);
                assert_eq!(
                    Reply::decode(&reply),
                    Ok(Some((Reply::Ok, reply.len()))),
                    "{protocol}: {req:?}"
                );
            }
        });
        assert_eq!((served.faults, served.commits), (0, 1), "{protocol}");
    }
}
