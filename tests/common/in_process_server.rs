//! A `txbench serve` run inside the test process, on a loopback port, for the tests that drive
//! sessions against it (`tests/interactive.rs`, `tests/declared_over_wire.rs`; each includes this
//! file with `#[path]`).

use clap::Parser;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use txbench::client::Session;
use txbench::config::{Cli, Command};
use txbench::exec::interactive::serve_configured;
use txbench::exec::interactive::server::ServeSummary;

/// Stops the server when dropped: when the body returns, and when a failing body unwinds, so a
/// failing test ends instead of waiting on its server.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        // Release: pairs with the accept loop's Acquire load.
        self.0.store(true, Ordering::Release);
    }
}

/// Serves `argv` (a whole `txbench serve ...` command line) while `body` runs against its
/// address; returns what it served.
pub fn serving(argv: &[&str], body: impl FnOnce(SocketAddr)) -> ServeSummary {
    let Command::Serve(mut args) = Cli::try_parse_from(argv).expect("flags parse").command else {
        unreachable!("parsed a serve command")
    };
    let (run, cfg) = args.validate().expect("valid flags");
    let listener = TcpListener::bind(cfg.listen).expect("bind loopback");
    let addr = listener.local_addr().expect("bound address");
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let server = s.spawn(|| serve_configured(&run, &cfg, listener, &stop).expect("serves"));
        {
            let _stop = StopOnDrop(&stop);
            body(addr);
        }
        server.join().expect("server thread")
    })
}

/// A row of table 0 filled with `byte`.
pub fn row(s: &Session, byte: u8) -> Vec<u8> {
    vec![byte; s.tables()[0].payload_bytes as usize]
}

/// Reads one whole frame (its length word included) from a raw connection.
pub fn read_frame(raw: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    raw.read_exact(&mut len).unwrap();
    let mut frame = len.to_vec();
    frame.resize(4 + u32::from_le_bytes(len) as usize, 0);
    raw.read_exact(&mut frame[4..]).unwrap();
    frame
}
