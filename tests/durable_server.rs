//! A durable server (issue 25): `txbench serve --log DIR` as a child process, driven through
//! the client library (`txbench::client::Session`), SIGKILLed, and started again on the same
//! directory, twice:
//!
//! - every write whose `COMMIT` was answered `OK` is read back after each restart, the last
//!   acknowledged value of a record written several times included (the server answers a
//!   commit only once it is durable);
//! - the writes of a transaction still open at the kill are absent;
//! - the second restart sees both earlier servers' writes: the log continued in the same
//!   directory after the first recovery (`log::resume`), and `txbench recover DIR` reads the
//!   result too.
//!
//! Silo with checkpoints every 50 ms (the restart's checkpoint is then followed by the running
//! server's own), `no_wait` (2PL) with `--log-sync txn`, and MVTO (multi-version). A SIGKILL keeps the page cache, so this tests
//! the process dying, as `tests/crash.rs` does for runs. Bad input: a directory holding the
//! log of another table layout or session count, and the flags `serve --log` refuses, exit 2
//! naming the parameter.

#[path = "common/serve.rs"]
mod serve;

use serve::Server;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;
use txbench::client::Session;
use txbench::ids::{RecordId, TableId};

const T: TableId = TableId(0);

/// A fresh directory under the system's temporary directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("txbench-durable-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// The server's flags, without its log's.
fn server_args(protocol: &str, records: &str, connections: &str) -> Vec<String> {
    [
        "serve",
        "-p",
        protocol,
        "--records",
        records,
        "--ops",
        "4",
        "--max-connections",
        connections,
        "--listen",
        "127.0.0.1:0",
    ]
    .map(String::from)
    .to_vec()
}

/// A row of `byte`s, as wide as the table's.
fn row(s: &Session, byte: u8) -> Vec<u8> {
    vec![byte; s.tables()[0].payload_bytes as usize]
}

/// Commits `writes` one transaction each, every commit acknowledged.
fn commit_each(s: &mut Session, writes: &[(u64, u8)]) {
    for &(rid, byte) in writes {
        let data = row(s, byte);
        s.begin().expect("BEGIN");
        s.write(T, RecordId(rid), &data).expect("WRITE");
        s.commit().expect("COMMIT acknowledged");
    }
}

/// Reads record `rid` in a read-only transaction.
fn read(s: &mut Session, rid: u64) -> Vec<u8> {
    s.begin_read_only().expect("BEGIN");
    let got = s.read(T, RecordId(rid)).expect("READ").to_vec();
    s.commit().expect("COMMIT");
    got
}

/// Requires every `(rid, byte)` of `expected` (later entries win) to be read back.
fn assert_holds(s: &mut Session, expected: &[(u64, u8)], when: &str) {
    let mut last = std::collections::BTreeMap::new();
    for &(rid, byte) in expected {
        last.insert(rid, byte);
    }
    for (&rid, &byte) in &last {
        let got = read(s, rid);
        assert!(
            got.iter().all(|&b| b == byte),
            "{when}: record {rid} lost its acknowledged write of {byte:#x} (holds {:?}...)",
            &got[..8.min(got.len())]
        );
    }
}

/// Starts, writes, kills and restarts twice (module docs).
fn durable_across_kills(name: &str, protocol: &str, log_flags: &[&str]) {
    let dir = fresh_dir(name);
    let args = server_args(protocol, "64", "4");
    // A transaction still open at the kill writes this record, loaded with `loaded`.
    const OPEN_RID: u64 = 40;

    let first = Server::start(&args, &dir, log_flags);
    assert!(
        first
            .before_listening
            .iter()
            .any(|l| l.starts_with("logging to")),
        "a new log: {:?}",
        first.before_listening
    );
    let mut a = first.connect();
    let loaded = read(&mut a, OPEN_RID);
    let mut acked: Vec<(u64, u8)> = (0..12u64).map(|i| (i, 0x10 + i as u8)).collect();
    acked.extend([(3, 0x31), (3, 0x32), (7, 0x71)]);
    commit_each(&mut a, &acked);
    // Let a checkpoint or two pass (with --checkpoint-s), then commit more.
    std::thread::sleep(Duration::from_millis(150));
    let more: Vec<(u64, u8)> = (12..20u64).map(|i| (i, 0x20 + i as u8)).collect();
    commit_each(&mut a, &more);
    acked.extend(more);
    let mut open = first.connect();
    open.begin().expect("BEGIN");
    open.write(T, RecordId(OPEN_RID), &row(&open, 0xEE))
        .expect("WRITE");
    open.write(T, RecordId(5), &row(&open, 0xEE))
        .expect("WRITE");
    first.kill();

    let second = Server::start(&args, &dir, log_flags);
    assert!(
        second
            .before_listening
            .iter()
            .any(|l| l.starts_with("recovered")),
        "the restart recovers: {:?}",
        second.before_listening
    );
    eprintln!("{name}, first restart: {:?}", second.before_listening);
    let mut b = second.connect();
    assert_holds(&mut b, &acked, "after the first restart");
    assert_eq!(
        read(&mut b, OPEN_RID),
        loaded,
        "after the first restart: the open transaction's write is there"
    );
    // The second generation of the log: overwrite some, write new ones, kill again.
    let third_gen: Vec<(u64, u8)> = vec![(3, 0x33), (30, 0x30), (31, 0x31), (0, 0x01)];
    commit_each(&mut b, &third_gen);
    std::thread::sleep(Duration::from_millis(150));
    commit_each(&mut b, &[(32, 0x32)]);
    acked.extend(third_gen);
    acked.push((32, 0x32));
    second.kill();

    let third = Server::start(&args, &dir, log_flags);
    eprintln!("{name}, second restart: {:?}", third.before_listening);
    let mut c = third.connect();
    assert_holds(&mut c, &acked, "after the second restart");
    assert_eq!(read(&mut c, OPEN_RID), loaded, "after the second restart");
    third.kill();

    // The directory is an ordinary log: `txbench recover` reads it.
    let recover = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .arg("recover")
        .arg(&dir)
        .output()
        .expect("run txbench recover");
    assert!(
        recover.status.success(),
        "txbench recover: {}{}",
        String::from_utf8_lossy(&recover.stdout),
        String::from_utf8_lossy(&recover.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn silo_with_checkpoints_keeps_every_acknowledged_write_across_kills() {
    durable_across_kills(
        "silo",
        "silo",
        &[
            "--log-sync",
            "group",
            "--log-group-us",
            "1000",
            "--checkpoint-s",
            "0.05",
        ],
    );
}

#[test]
fn no_wait_keeps_every_acknowledged_write_across_kills() {
    durable_across_kills("no_wait", "no_wait", &["--log-sync", "txn"]);
}

/// A multi-version protocol: the recovered rows are its sessions' first versions.
#[test]
fn mvto_keeps_every_acknowledged_write_across_kills() {
    durable_across_kills("mvto", "mvto", &["--log-sync", "group"]);
}

/// Runs `txbench ARGS` to its end; returns its exit code and stderr.
fn run_to_end(args: &[String]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_txbench"))
        .args(args)
        .stdout(Stdio::null())
        .output()
        .expect("run txbench");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_log_the_server_cannot_continue_is_refused_with_exit_2() {
    let dir = fresh_dir("bad");
    let server = Server::start(&server_args("silo", "64", "4"), &dir, &[]);
    let mut s = server.connect();
    commit_each(&mut s, &[(1, 0x11)]);
    server.kill();
    let with_log = |mut args: Vec<String>, extra: &[&str]| {
        args.push("--log".into());
        args.push(dir.display().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        run_to_end(&args)
    };
    for (args, extra, names) in [
        // Another table layout.
        (server_args("silo", "128", "4"), &[][..], "another workload"),
        // Another session count: one log file per session worker.
        (server_args("silo", "64", "3"), &[], "--max-connections 4"),
        // Flags `serve --log` refuses.
        (
            server_args("silo", "64", "4"),
            &["--log-acks", "/tmp"],
            "--log-acks",
        ),
        // A checked server starts only on a new log: the recovered versions' writers would
        // not be in its history (a new log with --check: `tests/interactive.rs`).
        (
            server_args("silo", "64", "4"),
            &["--check"],
            "--check: allowed with --log only on an empty log directory",
        ),
    ] {
        let (code, stderr) = with_log(args.clone(), extra);
        assert_eq!(code, Some(2), "{args:?} {extra:?}: {stderr}");
        assert!(stderr.contains(names), "{args:?} {extra:?}: {stderr}");
    }
    let mut tpcc = vec!["serve", "-w", "tpcc", "--warehouses", "1", "-p", "silo"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    tpcc.extend(["--listen".into(), "127.0.0.1:0".into()]);
    // A TPC-C server (served durably since its indexes are rebuilt) on a YCSB server's log.
    let (code, stderr) = with_log(tpcc, &[]);
    assert_eq!(code, Some(2), "tpcc: {stderr}");
    assert!(stderr.contains("another workload"), "tpcc: {stderr}");
    // A missing directory.
    let mut missing = server_args("silo", "64", "4");
    missing.extend(["--log".into(), dir.join("nope").display().to_string()]);
    let (code, stderr) = run_to_end(&missing);
    assert_eq!(code, Some(2), "missing: {stderr}");
    assert!(stderr.contains("--log"), "missing: {stderr}");
    // The refused starts left the log as it was: the first server's write is still there.
    let server = Server::start(&server_args("silo", "64", "4"), &dir, &[]);
    let mut s = server.connect();
    assert_holds(&mut s, &[(1, 0x11)], "after the refused starts");
    server.kill();
    let _ = std::fs::remove_dir_all(&dir);
}
