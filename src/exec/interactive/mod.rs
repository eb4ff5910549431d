//! Interactive mode: a server that owns the database and runs the protocol ([`server`]), and a
//! client library ([`client`]) whose [`Session`](client::Session) sends each operation over TCP
//! and waits for its reply, so that a transaction holds what it locked across network round
//! trips (PLOR section 5). The wire format is in [`wire`] and, for writers of other clients, in
//! `docs/PROTOCOL.md`.
//!
//! # Why blocking sockets and a thread per session
//!
//! The server uses the standard library's blocking `TcpStream`s with one thread per session, not
//! an async runtime (tokio). A session is a protocol worker that runs one transaction at a time,
//! and the protocols' waits (`Poll::Pending`) are about other transactions, not about sockets:
//! with a thread per session a waiting operation is simply polled again on its own thread
//! ([`server`], "Waiting"), nothing needs a waker, and no dependency or runtime is added. The
//! price is one thread per connection, which the connection limit bounds (each session is also
//! a protocol worker, of which the protocol is built for a fixed number). A design that serves
//! many more connections than threads (the connection's task parked on `Pending`, its thread
//! serving others) is the next step, and changes only `server.rs`: the wire format, the client
//! and the commands stay.
//!
//! The codec is hand-written (fixed little-endian fields, length-prefixed byte strings): it
//! needs no serialization crate, decodes without allocating, and its layout is exactly what
//! `docs/PROTOCOL.md` documents.

pub mod client;
pub mod clients;
pub mod commands;
pub mod durable;
mod launch;
pub mod loopback;
pub mod remote_txn;
pub mod server;
pub mod wire;

pub use launch::serve_configured;
pub use remote_txn::RemoteTxn;
