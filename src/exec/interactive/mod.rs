//! Interactive mode: a server that owns the database and runs the protocol ([`server`]), and a
//! client library ([`client`]) whose [`Session`](client::Session) sends each operation over TCP
//! and waits for its reply, so that a transaction holds what it locked across network round
//! trips (PLOR section 5). The wire format is in [`wire`] and, for writers of other clients, in
//! `docs/PROTOCOL.md`.
//!
//! # Why event loops of our own, not an async runtime
//!
//! The server runs `--server-threads` event loops (one per core by default), each serving many
//! sessions as tasks ([`server`], `event_loop`): a session whose operation the protocol answers
//! `Pending`, or that waits for its client, is set aside and its thread serves the others. The
//! protocols' waits are about other transactions, not sockets, and protocols announce what
//! ends them through the process's parking lot (`crate::park`), not through wakers; so a loop
//! sleeps in `ppoll(2)` on its sessions' sockets and on a pipe the parking lot writes to,
//! with microsecond timers for `--rtt-us`. An async runtime (tokio, mio) would add a reactor
//! whose timers tick in milliseconds and still could not hear the lot. The number of sessions
//! is bounded by `--max-connections` (each is a protocol worker, of which the protocol is built
//! for a fixed number), not by threads.
//!
//! The codec is hand-written (fixed little-endian fields, length-prefixed byte strings): it
//! needs no serialization crate, decodes without allocating, and its layout is exactly what
//! `docs/PROTOCOL.md` documents.

pub mod client;
pub mod clients;
pub mod commands;
pub mod durable;
mod event_loop;
mod launch;
pub mod loopback;
pub mod remote_txn;
pub mod server;
pub mod wire;

pub use launch::serve_configured;
pub use remote_txn::RemoteTxn;
