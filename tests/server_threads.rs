//! The server's event loops (`exec::interactive::server`, "Threads and tasks"): sessions are
//! tasks, not threads, and a session whose operation waits holds no thread, so one loop thread
//! serves other sessions meanwhile.

#[path = "common/in_process_server.rs"]
// Not every helper is used here.
#[allow(dead_code)]
mod in_process_server;

use in_process_server::{row, serving};
use std::sync::mpsc;
use std::time::Duration;
use txbench::client::Session;
use txbench::ids::{RecordId, TableId};

const T: TableId = TableId(0);

/// Threads of this process, from `/proc/self/status`.
fn threads_now() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads line")
}

/// With one loop thread: a session waits for a lock (wound-wait: the younger waits for the
/// older holder) while a third session runs a whole transaction on the same thread, and the
/// waiter goes on once the holder commits.
#[test]
fn a_session_waiting_for_a_lock_holds_no_thread() {
    let argv = [
        "txbench",
        "serve",
        "-p",
        "wound_wait",
        "--records",
        "64",
        "--ops",
        "4",
        "--max-connections",
        "4",
        "--server-threads",
        "1",
        "--listen",
        "127.0.0.1:0",
    ];
    let served = serving(&argv, |addr| {
        let mut holder = Session::connect(addr, None).unwrap();
        let data = row(&holder, 7);
        holder.begin().unwrap();
        holder.write(T, RecordId(1), &data).unwrap();
        let (wrote, waiter_wrote) = mpsc::channel();
        std::thread::scope(|s| {
            let waiter_data = data.clone();
            s.spawn(move || {
                let mut waiter = Session::connect(addr, None).unwrap();
                waiter.begin().unwrap();
                // Waits on the server until the holder commits.
                waiter.write(T, RecordId(1), &waiter_data).unwrap();
                wrote.send(()).unwrap();
                waiter.commit().unwrap();
            });
            // The waiter's request is on the server (or about to be): a long time beside a
            // round trip, and the waiter cannot finish before the holder ends either way.
            std::thread::sleep(Duration::from_millis(100));
            assert!(
                waiter_wrote.try_recv().is_err(),
                "the waiter's write did not wait for the holder"
            );
            // The one loop thread serves this session while the waiter waits.
            let mut other = Session::connect(addr, None).unwrap();
            other.begin().unwrap();
            other.write(T, RecordId(2), &data).unwrap();
            other.commit().unwrap();
            assert!(
                waiter_wrote.try_recv().is_err(),
                "the waiter's write completed while the holder still held the lock"
            );
            holder.commit().unwrap();
            waiter_wrote
                .recv_timeout(Duration::from_secs(60))
                .expect("the waiter went on after the holder committed");
        });
    });
    assert_eq!(served.commits, 3);
    assert_eq!(served.faults, 0);
}

/// Forty open sessions on two loop threads add no thread per session.
#[test]
fn sessions_are_tasks_not_threads() {
    let argv = [
        "txbench",
        "serve",
        "-p",
        "silo",
        "--records",
        "64",
        "--max-connections",
        "48",
        "--server-threads",
        "2",
        "--listen",
        "127.0.0.1:0",
    ];
    const SESSIONS: usize = 40;
    let served = serving(&argv, |addr| {
        let before = threads_now();
        let mut sessions: Vec<Session> = (0..SESSIONS)
            .map(|_| Session::connect(addr, None).unwrap())
            .collect();
        for s in &mut sessions {
            s.ping().unwrap();
        }
        let during = threads_now();
        // The other test of this file may start a few threads meanwhile; a thread per session
        // would add forty.
        assert!(
            during < before + 12,
            "{SESSIONS} sessions took {} threads (from {before} to {during})",
            during.saturating_sub(before)
        );
        for s in &mut sessions {
            let data = row(s, 3);
            s.begin().unwrap();
            s.write(T, RecordId(5), &data).unwrap();
            s.commit().unwrap();
        }
    });
    assert_eq!(served.sessions, SESSIONS as u64);
    assert_eq!(served.commits, SESSIONS as u64);
}
