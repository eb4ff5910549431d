//! The wire format of interactive mode: a handshake, then length-prefixed frames, one request and
//! one reply per operation. `docs/PROTOCOL.md` is the reference for writers of other clients; this
//! file is its implementation, and the two must say the same.
//!
//! Every integer is little-endian. A frame is `length: u32 | opcode: u8 | fields`, where `length`
//! counts the opcode and the fields (never the length word itself) and is at most
//! [`MAX_FRAME_BYTES`]. Decoding borrows byte fields from the input (no allocation per frame),
//! checks every length against what is there and what is allowed, and rejects a frame with bytes
//! left over after its fields: arbitrary input yields a request, "need more bytes", or an error,
//! never a panic (the property test below feeds it random bytes).

use crate::protocol::Abort;
use thiserror::Error;

/// The first four bytes a client sends.
pub const MAGIC: [u8; 4] = *b"TXBN";
/// The wire format version this build speaks. Version 2 added `CHECK` and its `VERDICT` reply,
/// and the error code `NOT_CHECKABLE`; version 3 added the declared covers to `BEGIN`.
pub const VERSION: u16 = 3;
/// The oldest client version a server accepts: a version-1 client speaks a subset of version 2,
/// and a version-2 client's `BEGIN` lacks the covers of version 3 (decoded by the version the
/// connection's handshake named: [`Request::decode_version`]).
pub const MIN_VERSION: u16 = 1;
/// The first version whose `BEGIN` carries declared covers.
pub const COVERS_VERSION: u16 = 3;
/// Longest token accepted in the handshake, bytes.
pub const MAX_TOKEN_BYTES: usize = 256;
/// Largest frame, counting opcode and fields: a 64 KiB payload with room to spare, or a scan
/// reply of [`MAX_SCAN_ROWS`] rows.
pub const MAX_FRAME_BYTES: usize = 1 << 17;
/// Most rows a scan reply carries.
pub const MAX_SCAN_ROWS: u32 = 4096;
/// Bytes of one declared access in a `BEGIN` frame: table u32, record u64, mode u8.
const DECLARED_ENTRY_BYTES: usize = 13;
/// Bytes of one declared cover in a `BEGIN` frame (version 3): table u32, first record u64,
/// end record u64 (half-open).
const COVER_ENTRY_BYTES: usize = 20;

/// Request opcodes.
mod op {
    pub const BEGIN: u8 = 0x01;
    pub const READ: u8 = 0x02;
    pub const READ_FOR_UPDATE: u8 = 0x03;
    pub const WRITE: u8 = 0x04;
    pub const UPDATE: u8 = 0x05;
    pub const INSERT: u8 = 0x06;
    pub const DELETE: u8 = 0x07;
    pub const SCAN: u8 = 0x08;
    pub const COMMIT: u8 = 0x09;
    pub const ABORT: u8 = 0x0A;
    pub const PING: u8 = 0x0B;
    pub const READ_COMMITTED: u8 = 0x0C;
    pub const INDEX_INSERT: u8 = 0x0D;
    pub const INDEX_REMOVE: u8 = 0x0E;
    pub const SCAN_FIRST: u8 = 0x0F;
    pub const SCAN_LAST: u8 = 0x10;
    pub const RESERVE: u8 = 0x11;
    pub const CHECK: u8 = 0x12;
    pub const OK: u8 = 0x80;
    pub const VALUE: u8 = 0x81;
    pub const FLAG: u8 = 0x82;
    pub const ROWS: u8 = 0x83;
    pub const ABORTED: u8 = 0x84;
    pub const ERROR: u8 = 0x85;
    pub const HELLO: u8 = 0x86;
    pub const VERDICT: u8 = 0x87;
}

/// `BEGIN` flag bits.
const FLAG_READ_ONLY: u8 = 1;
const FLAG_RETRY: u8 = 2;

/// Why bytes are not a valid frame or handshake.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// The length word is 0 or above the limit.
    #[error("frame length {0} outside 1..={MAX_FRAME_BYTES}")]
    FrameLength(u64),
    /// An opcode this version does not know (or a reply opcode where a request was expected).
    #[error("unknown opcode {0:#04x}")]
    Opcode(u8),
    /// The fields end before the opcode's layout does.
    #[error("frame of opcode {0:#04x} ends inside its fields")]
    Truncated(u8),
    /// Bytes are left after the opcode's fields.
    #[error("frame of opcode {0:#04x} has {1} bytes after its fields")]
    Trailing(u8, usize),
    /// A field holds a value outside its range.
    #[error("invalid field: {0}")]
    Field(&'static str),
    /// The handshake does not start with [`MAGIC`].
    #[error("not a txbench client (bad magic)")]
    Magic,
}

/// A client's handshake: `MAGIC | version: u16 | token length: u16 | token`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake<'a> {
    /// The client's wire format version.
    pub version: u16,
    /// The token (empty when the client has none).
    pub token: &'a [u8],
}

impl Handshake<'_> {
    /// Appends the handshake's bytes to `out`. A token longer than [`MAX_TOKEN_BYTES`] is an
    /// error of the caller's input.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        if self.token.len() > MAX_TOKEN_BYTES {
            return Err(WireError::Field("token longer than 256 bytes"));
        }
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&(self.token.len() as u16).to_le_bytes());
        out.extend_from_slice(self.token);
        Ok(())
    }

    /// Decodes a handshake from the front of `buf`: `Ok(None)` when more bytes are needed,
    /// otherwise the handshake and how many bytes it took.
    pub fn decode(buf: &[u8]) -> Result<Option<(Handshake<'_>, usize)>, WireError> {
        let head = MAGIC.len() + 4;
        if buf.len() >= MAGIC.len() && buf[..MAGIC.len()] != MAGIC {
            return Err(WireError::Magic);
        }
        if buf.len() < head {
            return Ok(None);
        }
        let version = u16::from_le_bytes([buf[4], buf[5]]);
        let len = usize::from(u16::from_le_bytes([buf[6], buf[7]]));
        if len > MAX_TOKEN_BYTES {
            return Err(WireError::Field("token longer than 256 bytes"));
        }
        if buf.len() < head + len {
            return Ok(None);
        }
        let token = &buf[head..head + len];
        Ok(Some((Handshake { version, token }, head + len)))
    }
}

/// The declared access set of a `BEGIN`, still in its wire form (validated when decoded): the
/// declared records, and (version 3) the covered ranges (`protocol::declared`, "Covers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeclaredSet<'a> {
    bytes: &'a [u8],
    covers: &'a [u8],
}

/// One declared access of a `BEGIN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// Table id.
    pub table: u32,
    /// Record id.
    pub rid: u64,
    /// Written (else only read).
    pub write: bool,
}

/// One declared cover of a `BEGIN` (version 3): records `start..end` of `table` are covered by
/// a declared write of the covering record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeclaredCover {
    /// Table id.
    pub table: u32,
    /// First record covered.
    pub start: u64,
    /// One past the last record covered (`start <= end`).
    pub end: u64,
}

impl<'a> DeclaredSet<'a> {
    /// No declared accesses.
    pub const EMPTY: DeclaredSet<'static> = DeclaredSet {
        bytes: &[],
        covers: &[],
    };

    /// The set whose wire form is `bytes` (entries as [`DeclaredSet::encode_entry`] appends
    /// them), with no covers; an error when they are not whole entries with valid modes.
    pub fn from_wire(bytes: &'a [u8]) -> Result<DeclaredSet<'a>, WireError> {
        DeclaredSet::with_covers(bytes, &[])
    }

    /// The set of records `bytes` ([`DeclaredSet::encode_entry`]) and covers `covers`
    /// ([`DeclaredSet::encode_cover`]); an error when either is not whole valid entries.
    pub fn with_covers(bytes: &'a [u8], covers: &'a [u8]) -> Result<DeclaredSet<'a>, WireError> {
        check_entries(bytes)?;
        check_covers(covers)?;
        Ok(DeclaredSet { bytes, covers })
    }

    /// Appends one declared access in wire form to `out` (a client builds a set this way).
    pub fn encode_entry(out: &mut Vec<u8>, access: Declared) {
        out.extend_from_slice(&access.table.to_le_bytes());
        out.extend_from_slice(&access.rid.to_le_bytes());
        out.push(u8::from(access.write));
    }

    /// Appends one declared cover in wire form to `out`.
    pub fn encode_cover(out: &mut Vec<u8>, cover: DeclaredCover) {
        out.extend_from_slice(&cover.table.to_le_bytes());
        out.extend_from_slice(&cover.start.to_le_bytes());
        out.extend_from_slice(&cover.end.to_le_bytes());
    }

    /// Number of declared records (covers not counted).
    pub fn len(&self) -> usize {
        self.bytes.len() / DECLARED_ENTRY_BYTES
    }

    /// Whether no record is declared (covers not counted: a cover needs a declared write).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Number of covers.
    pub fn covers_len(&self) -> usize {
        self.covers.len() / COVER_ENTRY_BYTES
    }

    /// The accesses, in the order sent.
    pub fn iter(&self) -> impl Iterator<Item = Declared> + 'a {
        self.bytes
            .chunks_exact(DECLARED_ENTRY_BYTES)
            .map(|e| Declared {
                table: u32::from_le_bytes(e[0..4].try_into().expect("4 bytes")),
                rid: u64::from_le_bytes(e[4..12].try_into().expect("8 bytes")),
                write: e[12] == 1,
            })
    }

    /// The covers, in the order sent.
    pub fn covers(&self) -> impl Iterator<Item = DeclaredCover> + 'a {
        self.covers.chunks_exact(COVER_ENTRY_BYTES).map(cover_at)
    }
}

/// The cover in one entry's bytes.
fn cover_at(e: &[u8]) -> DeclaredCover {
    DeclaredCover {
        table: u32::from_le_bytes(e[0..4].try_into().expect("4 bytes")),
        start: u64::from_le_bytes(e[4..12].try_into().expect("8 bytes")),
        end: u64::from_le_bytes(e[12..20].try_into().expect("8 bytes")),
    }
}

/// Checks that `bytes` are whole declared entries with modes 0 or 1.
fn check_entries(bytes: &[u8]) -> Result<(), WireError> {
    if bytes.len() % DECLARED_ENTRY_BYTES != 0 {
        return Err(WireError::Field("declared set is not whole entries"));
    }
    if bytes
        .chunks_exact(DECLARED_ENTRY_BYTES)
        .any(|e| e[DECLARED_ENTRY_BYTES - 1] > 1)
    {
        return Err(WireError::Field("declared access mode is not 0 or 1"));
    }
    Ok(())
}

/// Checks that `bytes` are whole declared covers, each with `start <= end`.
fn check_covers(bytes: &[u8]) -> Result<(), WireError> {
    if bytes.len() % COVER_ENTRY_BYTES != 0 {
        return Err(WireError::Field("declared covers are not whole entries"));
    }
    if bytes
        .chunks_exact(COVER_ENTRY_BYTES)
        .map(cover_at)
        .any(|c| c.start > c.end)
    {
        return Err(WireError::Field("declared cover with start > end"));
    }
    Ok(())
}

/// A client's request: one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    /// Starts a transaction. `retry`: it retries the previous one (wound-wait families keep its
    /// timestamp). `declared`: the access set, for protocols that schedule from one.
    Begin {
        /// Declared read-only (a hint).
        read_only: bool,
        /// Retries the session's previous transaction.
        retry: bool,
        /// The declared access set (empty when the protocol needs none); its covers since
        /// version 3.
        declared: DeclaredSet<'a>,
    },
    /// Reads a record.
    Read {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
    },
    /// Reads a record the transaction will write (`UPDATE`) next.
    ReadForUpdate {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
    },
    /// Overwrites a record without reading it.
    Write {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
        /// The new payload (exactly the table's payload size).
        data: &'a [u8],
    },
    /// Writes a record as a read-modify-write: after `READ_FOR_UPDATE` of it, or reading it
    /// for update first on the server.
    Update {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
        /// The new payload (exactly the table's payload size).
        data: &'a [u8],
    },
    /// Fills a vacant record (reply: whether it was vacant).
    Insert {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
        /// The row (exactly the payload size; its first 8 bytes must not all be zero).
        data: &'a [u8],
    },
    /// Empties a present record (reply: whether it was present).
    Delete {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
    },
    /// Scans an ordered index over keys `lo..=hi`, phantom-safe (reply: up to `limit` rows).
    Scan {
        /// Index id.
        index: u32,
        /// Lowest key.
        lo: u64,
        /// Highest key.
        hi: u64,
        /// Most rows to return (at most [`MAX_SCAN_ROWS`]).
        limit: u32,
    },
    /// Reads a record at read committed (not kept stable until commit).
    ReadCommitted {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
    },
    /// Enters `key -> rid` into an ordered index and writes the path after it (reply: whether
    /// this call entered it).
    IndexInsert {
        /// Index id.
        index: u32,
        /// The key (below `u64::MAX`, the end sentinel).
        key: u64,
        /// The record the key names.
        rid: u64,
    },
    /// Takes `key` out of an ordered index once the transaction commits.
    IndexRemove {
        /// Index id.
        index: u32,
        /// The key (below `u64::MAX`).
        key: u64,
    },
    /// The smallest present key in `lo..=hi` (reply: zero or one row), phantom-safe.
    ScanFirst {
        /// Index id.
        index: u32,
        /// Lowest key.
        lo: u64,
        /// Highest key.
        hi: u64,
    },
    /// The greatest present key in `lo..=hi` (reply: zero or one row), phantom-safe.
    ScanLast {
        /// Index id.
        index: u32,
        /// Lowest key.
        lo: u64,
        /// Highest key.
        hi: u64,
    },
    /// Reserves a slot of a growable table (reply: whether it is within capacity).
    Reserve {
        /// Table id.
        table: u32,
        /// Record id.
        rid: u64,
    },
    /// Commits the transaction.
    Commit,
    /// Aborts the transaction (a user abort).
    Abort,
    /// Does nothing: the bare round trip (`txbench ping`). Allowed in or out of a transaction.
    Ping,
    /// Asks for the serializability checker's verdict on the history the server recorded (a
    /// server started with `--check`), once no other session is open; outside a transaction
    /// (reply: `VERDICT`). Since version 2.
    Check,
}

/// What a table looks like to a client (the `HELLO` reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableInfo {
    /// Records (slots) in the table.
    pub records: u64,
    /// Payload bytes of each record.
    pub payload_bytes: u32,
}

/// Error codes of an `ERROR` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum ErrorCode {
    /// The frame could not be decoded; the server closes the connection.
    Malformed = 1,
    /// The request is not allowed in the session's state (an operation outside a transaction,
    /// `BEGIN` inside one); the server closes the connection.
    OutOfOrder = 2,
    /// A table, record, index or payload size that does not exist, or (version 3) an access
    /// outside the transaction's declared set and covers; the transaction is aborted.
    BadRequest = 3,
    /// The handshake's token is missing or wrong; the server closes the connection.
    Unauthorized = 4,
    /// The handshake's version is not this server's; the server closes the connection.
    Version = 5,
    /// The server serves its maximum number of sessions; it closes the connection.
    Busy = 6,
    /// The server is stopping; the transaction is aborted and the connection closed.
    ShuttingDown = 7,
    /// The session was idle past the server's timeout; its transaction is aborted.
    TimedOut = 8,
    /// `CHECK` cannot be answered: the server does not record its history (it was not started
    /// with `--check`), or other sessions stayed open past the session timeout. The session goes
    /// on. Since version 2.
    NotCheckable = 9,
}

impl ErrorCode {
    const ALL: [ErrorCode; 9] = [
        ErrorCode::Malformed,
        ErrorCode::OutOfOrder,
        ErrorCode::BadRequest,
        ErrorCode::Unauthorized,
        ErrorCode::Version,
        ErrorCode::Busy,
        ErrorCode::ShuttingDown,
        ErrorCode::TimedOut,
        ErrorCode::NotCheckable,
    ];

    fn from_u16(v: u16) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| *c as u16 == v)
    }
}

/// A server's reply: one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    /// The handshake was accepted: the database's tables, by table id.
    Hello(Tables<'a>),
    /// The operation succeeded (`BEGIN`, `WRITE`, `UPDATE`, `COMMIT`, `ABORT`, `PING`).
    Ok,
    /// A read's payload.
    Value(&'a [u8]),
    /// `INSERT` / `DELETE`: whether the row was vacant / present.
    Flag(bool),
    /// A scan's rows.
    Rows(Rows<'a>),
    /// The protocol aborted the transaction (the session is outside a transaction again).
    Aborted(Abort),
    /// The checker's verdict (`CHECK`): the check report as a UTF-8 JSON object, the one
    /// `txbench run --check --json` prints under `check`.
    Verdict(&'a str),
    /// The request failed; see [`ErrorCode`] for what follows.
    Error {
        /// What failed.
        code: ErrorCode,
        /// Why, for people (UTF-8).
        message: &'a str,
    },
}

/// The tables of a `HELLO` reply, in wire form: per table `records: u64 | payload: u32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tables<'a> {
    bytes: &'a [u8],
}

impl<'a> Tables<'a> {
    /// The tables, by id.
    pub fn iter(&self) -> impl Iterator<Item = TableInfo> + 'a {
        self.bytes.chunks_exact(12).map(|e| TableInfo {
            records: u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
            payload_bytes: u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
        })
    }
}

/// The rows of a `ROWS` reply, in wire form: per row `key: u64 | record: u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rows<'a> {
    bytes: &'a [u8],
}

impl<'a> Rows<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.bytes.len() / 16
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The rows as (key, record id), in key order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        self.bytes.chunks_exact(16).map(|e| {
            (
                u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
                u64::from_le_bytes(e[8..16].try_into().expect("8 bytes")),
            )
        })
    }
}

/// Writes frames into a reused buffer: opens with a placeholder length, fills it in at the end.
pub struct FrameWriter<'o> {
    out: &'o mut Vec<u8>,
    start: usize,
}

impl<'o> FrameWriter<'o> {
    fn open(out: &'o mut Vec<u8>, opcode: u8) -> Self {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        out.push(opcode);
        FrameWriter { out, start }
    }
    fn u8(&mut self, v: u8) -> &mut Self {
        self.out.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.out.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.out.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.out.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.out.extend_from_slice(v);
        self
    }
    fn close(self) {
        let len = (self.out.len() - self.start - 4) as u32;
        self.out[self.start..self.start + 4].copy_from_slice(&len.to_le_bytes());
    }
}

/// Reads fields from one frame's body, every read checked.
struct Fields<'a> {
    opcode: u8,
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.rest.len() < n {
            return Err(WireError::Truncated(self.opcode));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    /// A `count: u32` followed by `count` entries of `entry` bytes.
    fn counted(&mut self, entry: usize) -> Result<&'a [u8], WireError> {
        let n = self.u32()? as usize;
        let bytes = n
            .checked_mul(entry)
            .ok_or(WireError::Truncated(self.opcode))?;
        self.take(bytes)
    }
    fn end(self) -> Result<(), WireError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(WireError::Trailing(self.opcode, self.rest.len()))
        }
    }
}

/// Splits the first frame off `buf`: `Ok(None)` when it is not all there yet, else its opcode,
/// its fields and the bytes it takes. The length word is checked before anything waits for it.
fn split_frame(buf: &[u8]) -> Result<Option<(Fields<'_>, usize)>, WireError> {
    let Some(word) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_le_bytes(word.try_into().expect("4 bytes")) as usize;
    if len == 0 || len > MAX_FRAME_BYTES {
        return Err(WireError::FrameLength(len as u64));
    }
    let Some(body) = buf.get(4..4 + len) else {
        return Ok(None);
    };
    Ok(Some((
        Fields {
            opcode: body[0],
            rest: &body[1..],
        },
        4 + len,
    )))
}

impl<'a> Request<'a> {
    /// Appends the request as one frame of this version ([`VERSION`]) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_version(out, VERSION);
    }

    /// Appends the request as one frame of wire format `version` to `out` (an older client's
    /// bytes, for tests): a `BEGIN` before version 3 carries no covers, so its set's covers are
    /// left out.
    pub fn encode_version(&self, out: &mut Vec<u8>, version: u16) {
        match *self {
            Request::Begin {
                read_only,
                retry,
                declared,
            } => {
                let flags = (u8::from(read_only) * FLAG_READ_ONLY) | (u8::from(retry) * FLAG_RETRY);
                let mut f = FrameWriter::open(out, op::BEGIN);
                f.u8(flags).u32(declared.len() as u32).bytes(declared.bytes);
                if version >= COVERS_VERSION {
                    f.u32(declared.covers_len() as u32).bytes(declared.covers);
                }
                f.close();
            }
            Request::Read { table, rid } => {
                let mut f = FrameWriter::open(out, op::READ);
                f.u32(table).u64(rid);
                f.close();
            }
            Request::ReadForUpdate { table, rid } => {
                let mut f = FrameWriter::open(out, op::READ_FOR_UPDATE);
                f.u32(table).u64(rid);
                f.close();
            }
            Request::Write { table, rid, data } => {
                Self::encode_data(out, op::WRITE, table, rid, data)
            }
            Request::Update { table, rid, data } => {
                Self::encode_data(out, op::UPDATE, table, rid, data)
            }
            Request::Insert { table, rid, data } => {
                Self::encode_data(out, op::INSERT, table, rid, data)
            }
            Request::Delete { table, rid } => {
                let mut f = FrameWriter::open(out, op::DELETE);
                f.u32(table).u64(rid);
                f.close();
            }
            Request::Scan {
                index,
                lo,
                hi,
                limit,
            } => {
                let mut f = FrameWriter::open(out, op::SCAN);
                f.u32(index).u64(lo).u64(hi).u32(limit);
                f.close();
            }
            Request::ReadCommitted { table, rid } => {
                let mut f = FrameWriter::open(out, op::READ_COMMITTED);
                f.u32(table).u64(rid);
                f.close();
            }
            Request::IndexInsert { index, key, rid } => {
                let mut f = FrameWriter::open(out, op::INDEX_INSERT);
                f.u32(index).u64(key).u64(rid);
                f.close();
            }
            Request::IndexRemove { index, key } => {
                let mut f = FrameWriter::open(out, op::INDEX_REMOVE);
                f.u32(index).u64(key);
                f.close();
            }
            Request::ScanFirst { index, lo, hi } => {
                let mut f = FrameWriter::open(out, op::SCAN_FIRST);
                f.u32(index).u64(lo).u64(hi);
                f.close();
            }
            Request::ScanLast { index, lo, hi } => {
                let mut f = FrameWriter::open(out, op::SCAN_LAST);
                f.u32(index).u64(lo).u64(hi);
                f.close();
            }
            Request::Reserve { table, rid } => {
                let mut f = FrameWriter::open(out, op::RESERVE);
                f.u32(table).u64(rid);
                f.close();
            }
            Request::Commit => FrameWriter::open(out, op::COMMIT).close(),
            Request::Abort => FrameWriter::open(out, op::ABORT).close(),
            Request::Ping => FrameWriter::open(out, op::PING).close(),
            Request::Check => FrameWriter::open(out, op::CHECK).close(),
        }
    }

    fn encode_data(out: &mut Vec<u8>, opcode: u8, table: u32, rid: u64, data: &[u8]) {
        let mut f = FrameWriter::open(out, opcode);
        f.u32(table).u64(rid).u32(data.len() as u32).bytes(data);
        f.close();
    }

    /// Decodes the first frame of `buf` as this version ([`VERSION`]) lays it out: `Ok(None)`
    /// when more bytes are needed, otherwise the request and the bytes it took.
    pub fn decode(buf: &'a [u8]) -> Result<Option<(Request<'a>, usize)>, WireError> {
        Request::decode_version(buf, VERSION)
    }

    /// [`Request::decode`] for a connection whose handshake named `version`: a `BEGIN` before
    /// version 3 has no covers (its set's covers are empty).
    pub fn decode_version(
        buf: &'a [u8],
        version: u16,
    ) -> Result<Option<(Request<'a>, usize)>, WireError> {
        let Some((mut f, used)) = split_frame(buf)? else {
            return Ok(None);
        };
        let req = match f.opcode {
            op::BEGIN => {
                let flags = f.u8()?;
                if flags & !(FLAG_READ_ONLY | FLAG_RETRY) != 0 {
                    return Err(WireError::Field("unknown BEGIN flag bits"));
                }
                let bytes = f.counted(DECLARED_ENTRY_BYTES)?;
                let covers = if version >= COVERS_VERSION {
                    f.counted(COVER_ENTRY_BYTES)?
                } else {
                    &[]
                };
                Request::Begin {
                    read_only: flags & FLAG_READ_ONLY != 0,
                    retry: flags & FLAG_RETRY != 0,
                    declared: DeclaredSet::with_covers(bytes, covers)?,
                }
            }
            op::READ => Request::Read {
                table: f.u32()?,
                rid: f.u64()?,
            },
            op::READ_FOR_UPDATE => Request::ReadForUpdate {
                table: f.u32()?,
                rid: f.u64()?,
            },
            op::WRITE => {
                let (table, rid, data) = (f.u32()?, f.u64()?, f.counted(1)?);
                Request::Write { table, rid, data }
            }
            op::UPDATE => {
                let (table, rid, data) = (f.u32()?, f.u64()?, f.counted(1)?);
                Request::Update { table, rid, data }
            }
            op::INSERT => {
                let (table, rid, data) = (f.u32()?, f.u64()?, f.counted(1)?);
                Request::Insert { table, rid, data }
            }
            op::DELETE => Request::Delete {
                table: f.u32()?,
                rid: f.u64()?,
            },
            op::SCAN => {
                let (index, lo, hi, limit) = (f.u32()?, f.u64()?, f.u64()?, f.u32()?);
                if lo > hi {
                    return Err(WireError::Field("scan range with lo > hi"));
                }
                if limit > MAX_SCAN_ROWS {
                    return Err(WireError::Field("scan limit above 4096"));
                }
                Request::Scan {
                    index,
                    lo,
                    hi,
                    limit,
                }
            }
            op::READ_COMMITTED => Request::ReadCommitted {
                table: f.u32()?,
                rid: f.u64()?,
            },
            op::INDEX_INSERT => {
                let (index, key, rid) = (f.u32()?, f.u64()?, f.u64()?);
                if key == u64::MAX {
                    return Err(WireError::Field("index key u64::MAX is the end sentinel"));
                }
                Request::IndexInsert { index, key, rid }
            }
            op::INDEX_REMOVE => {
                let (index, key) = (f.u32()?, f.u64()?);
                if key == u64::MAX {
                    return Err(WireError::Field("index key u64::MAX is the end sentinel"));
                }
                Request::IndexRemove { index, key }
            }
            op::SCAN_FIRST | op::SCAN_LAST => {
                let (index, lo, hi) = (f.u32()?, f.u64()?, f.u64()?);
                if lo > hi {
                    return Err(WireError::Field("scan range with lo > hi"));
                }
                if f.opcode == op::SCAN_FIRST {
                    Request::ScanFirst { index, lo, hi }
                } else {
                    Request::ScanLast { index, lo, hi }
                }
            }
            op::RESERVE => Request::Reserve {
                table: f.u32()?,
                rid: f.u64()?,
            },
            op::COMMIT => Request::Commit,
            op::ABORT => Request::Abort,
            op::PING => Request::Ping,
            op::CHECK => Request::Check,
            other => return Err(WireError::Opcode(other)),
        };
        f.end()?;
        Ok(Some((req, used)))
    }
}

impl<'a> Reply<'a> {
    /// Appends a `HELLO` reply describing `tables`.
    pub fn encode_hello(out: &mut Vec<u8>, tables: impl ExactSizeIterator<Item = TableInfo>) {
        let mut f = FrameWriter::open(out, op::HELLO);
        f.u32(tables.len() as u32);
        for t in tables {
            f.u64(t.records).u32(t.payload_bytes);
        }
        f.close();
    }

    /// Appends a `ROWS` reply of `rows` (key, record id).
    pub fn encode_rows(out: &mut Vec<u8>, rows: impl ExactSizeIterator<Item = (u64, u64)>) {
        let mut f = FrameWriter::open(out, op::ROWS);
        f.u32(rows.len() as u32);
        for (key, rid) in rows {
            f.u64(key).u64(rid);
        }
        f.close();
    }

    /// Appends the reply as one frame to `out`. A message is cut to fit the frame.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            Reply::Hello(t) => {
                let mut f = FrameWriter::open(out, op::HELLO);
                f.u32((t.bytes.len() / 12) as u32).bytes(t.bytes);
                f.close();
            }
            Reply::Ok => FrameWriter::open(out, op::OK).close(),
            Reply::Value(v) => {
                let mut f = FrameWriter::open(out, op::VALUE);
                f.u32(v.len() as u32).bytes(v);
                f.close();
            }
            Reply::Flag(b) => {
                let mut f = FrameWriter::open(out, op::FLAG);
                f.u8(u8::from(b));
                f.close();
            }
            Reply::Rows(r) => {
                let mut f = FrameWriter::open(out, op::ROWS);
                f.u32(r.len() as u32).bytes(r.bytes);
                f.close();
            }
            Reply::Aborted(why) => {
                let mut f = FrameWriter::open(out, op::ABORTED);
                f.u8(why.index() as u8);
                f.close();
            }
            Reply::Verdict(json) => {
                let mut f = FrameWriter::open(out, op::VERDICT);
                f.u32(json.len() as u32).bytes(json.as_bytes());
                f.close();
            }
            Reply::Error { code, message } => {
                let mut end = message.len().min(1024);
                while !message.is_char_boundary(end) {
                    end -= 1;
                }
                let mut f = FrameWriter::open(out, op::ERROR);
                f.u16(code as u16)
                    .u16(end as u16)
                    .bytes(&message.as_bytes()[..end]);
                f.close();
            }
        }
    }

    /// Decodes the first frame of `buf`: `Ok(None)` when more bytes are needed, otherwise the
    /// reply and the bytes it took.
    pub fn decode(buf: &'a [u8]) -> Result<Option<(Reply<'a>, usize)>, WireError> {
        let Some((mut f, used)) = split_frame(buf)? else {
            return Ok(None);
        };
        let reply = match f.opcode {
            op::HELLO => Reply::Hello(Tables {
                bytes: f.counted(12)?,
            }),
            op::OK => Reply::Ok,
            op::VALUE => Reply::Value(f.counted(1)?),
            op::FLAG => match f.u8()? {
                0 => Reply::Flag(false),
                1 => Reply::Flag(true),
                _ => return Err(WireError::Field("flag is not 0 or 1")),
            },
            op::ROWS => Reply::Rows(Rows {
                bytes: f.counted(16)?,
            }),
            op::ABORTED => {
                let code = f.u8()?;
                let why = Abort::ALL
                    .get(usize::from(code))
                    .copied()
                    .ok_or(WireError::Field("unknown abort reason"))?;
                Reply::Aborted(why)
            }
            op::VERDICT => {
                let json = std::str::from_utf8(f.counted(1)?)
                    .map_err(|_| WireError::Field("verdict is not UTF-8"))?;
                Reply::Verdict(json)
            }
            op::ERROR => {
                let code =
                    ErrorCode::from_u16(f.u16()?).ok_or(WireError::Field("unknown error code"))?;
                let len = usize::from(f.u16()?);
                let message = std::str::from_utf8(f.take(len)?)
                    .map_err(|_| WireError::Field("error message is not UTF-8"))?;
                Reply::Error { code, message }
            }
            other => return Err(WireError::Opcode(other)),
        };
        f.end()?;
        Ok(Some((reply, used)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(req: Request<'_>) {
        let mut out = Vec::new();
        req.encode(&mut out);
        let (back, used) = Request::decode(&out).unwrap().unwrap();
        assert_eq!(back, req);
        assert_eq!(used, out.len());
        // Every proper prefix asks for more bytes (or, once the length word is there, waits).
        for cut in 0..out.len() {
            assert_eq!(Request::decode(&out[..cut]), Ok(None), "prefix {cut}");
        }
    }

    /// A request from generated parts: `kind` picks the opcode.
    fn request_from<'a>(
        kind: u8,
        table: u32,
        rid: u64,
        a: u64,
        data: &'a [u8],
        declared: &'a [u8],
        covers: &'a [u8],
    ) -> Request<'a> {
        match kind % 18 {
            0 => Request::Begin {
                read_only: a & 1 == 1,
                retry: a & 2 == 2,
                declared: DeclaredSet::with_covers(declared, covers).expect("valid parts"),
            },
            1 => Request::Read { table, rid },
            2 => Request::ReadForUpdate { table, rid },
            3 => Request::Write { table, rid, data },
            4 => Request::Update { table, rid, data },
            5 => Request::Insert { table, rid, data },
            6 => Request::Delete { table, rid },
            7 => Request::Scan {
                index: table,
                lo: rid.min(a),
                hi: rid.max(a),
                limit: (a % u64::from(MAX_SCAN_ROWS + 1)) as u32,
            },
            8 => Request::Commit,
            9 => Request::Abort,
            10 => Request::ReadCommitted { table, rid },
            11 => Request::IndexInsert {
                index: table,
                key: rid.min(u64::MAX - 1),
                rid: a,
            },
            12 => Request::IndexRemove {
                index: table,
                key: rid.min(u64::MAX - 1),
            },
            13 => Request::ScanFirst {
                index: table,
                lo: rid.min(a),
                hi: rid.max(a),
            },
            14 => Request::ScanLast {
                index: table,
                lo: rid.min(a),
                hi: rid.max(a),
            },
            15 => Request::Reserve { table, rid },
            16 => Request::Check,
            _ => Request::Ping,
        }
    }

    /// Declared entries with valid modes, from arbitrary (table, rid, write) triples.
    fn declared_bytes(entries: &[(u32, u64, bool)]) -> Vec<u8> {
        let mut v = Vec::new();
        for &(t, r, w) in entries {
            v.extend_from_slice(&t.to_le_bytes());
            v.extend_from_slice(&r.to_le_bytes());
            v.push(u8::from(w));
        }
        v
    }

    /// Covers with `start <= end` from arbitrary (table, a, b) triples.
    fn cover_bytes(covers: &[(u32, u64, u64)]) -> Vec<u8> {
        let mut v = Vec::new();
        for &(table, a, b) in covers {
            let (start, end) = (a.min(b), a.max(b));
            DeclaredSet::encode_cover(&mut v, DeclaredCover { table, start, end });
        }
        v
    }

    /// Decodes `bytes` as every accepted version: never a panic; a request decoded as this
    /// version encodes back to exactly its bytes, and one decoded as an older version to exactly
    /// its bytes in that version (a `BEGIN` then has no covers).
    fn decode_as_every_version(bytes: &[u8]) -> Result<(), TestCaseError> {
        for version in MIN_VERSION..=VERSION {
            if let Ok(Some((req, used))) = Request::decode_version(bytes, version) {
                if let Request::Begin { declared, .. } = req {
                    prop_assert!(version >= COVERS_VERSION || declared.covers_len() == 0);
                    prop_assert!(declared.covers().all(|c| c.start <= c.end));
                }
                let mut again = Vec::new();
                req.encode_version(&mut again, version);
                prop_assert_eq!(&again[..], &bytes[..used]);
            }
        }
        Ok(())
    }

    proptest! {
        /// Arbitrary bytes decode to "need more", an error, or a request that encodes back to
        /// exactly the bytes it was decoded from; never a panic.
        #[test]
        fn arbitrary_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            decode_as_every_version(&bytes)?;
            let _ = Reply::decode(&bytes);
            let _ = Handshake::decode(&bytes);
        }

        /// Arbitrary bytes behind a plausible header (a valid length word and opcode) reach the
        /// field decoders, which random bytes alone rarely do.
        #[test]
        fn arbitrary_fields_never_panic_the_decoder(opcode in 0u8..0x90, body in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut bytes = ((body.len() + 1) as u32).to_le_bytes().to_vec();
            bytes.push(opcode);
            bytes.extend_from_slice(&body);
            decode_as_every_version(&bytes)?;
            let _ = Reply::decode(&bytes);
        }

        /// A `BEGIN` with well-formed counts and arbitrary entry bytes (records, then covers)
        /// reaches the entry checks, which random bodies rarely do: they accept or refuse it,
        /// never panic, and what they accept encodes back to the same bytes.
        #[test]
        fn arbitrary_declared_entries_never_panic_the_decoder(flags in 0u8..4, records in 0u32..3, covers in 0u32..3,
                                                              body in proptest::collection::vec(any::<u8>(), 0..100)) {
            let r = (records as usize * DECLARED_ENTRY_BYTES).min(body.len());
            let mut frame = vec![op::BEGIN, flags];
            frame.extend_from_slice(&records.to_le_bytes());
            frame.extend_from_slice(&body[..r]);
            frame.extend_from_slice(&covers.to_le_bytes());
            frame.extend_from_slice(&body[r..]);
            let mut bytes = (frame.len() as u32).to_le_bytes().to_vec();
            bytes.extend_from_slice(&frame);
            decode_as_every_version(&bytes)?;
        }

        /// Every request round-trips through encode and decode.
        #[test]
        fn requests_round_trip(kind in any::<u8>(), table in any::<u32>(), rid in any::<u64>(), a in any::<u64>(),
                               data in proptest::collection::vec(any::<u8>(), 0..80),
                               entries in proptest::collection::vec(any::<(u32, u64, bool)>(), 0..6),
                               covers in proptest::collection::vec(any::<(u32, u64, u64)>(), 0..4)) {
            let declared = declared_bytes(&entries);
            let covers = cover_bytes(&covers);
            round_trip(request_from(kind, table, rid, a, &data, &declared, &covers));
        }
    }

    /// A version-3 `BEGIN` carries its covers after its records, and they come back as sent.
    #[test]
    fn a_begin_with_covers_round_trips() {
        let mut records = Vec::new();
        DeclaredSet::encode_entry(
            &mut records,
            Declared {
                table: 1,
                rid: 7,
                write: true,
            },
        );
        let mut covers = Vec::new();
        let cover = DeclaredCover {
            table: 2,
            start: 70,
            end: 80,
        };
        DeclaredSet::encode_cover(&mut covers, cover);
        let empty = DeclaredCover {
            table: 3,
            start: 5,
            end: 5,
        };
        DeclaredSet::encode_cover(&mut covers, empty);
        let declared = DeclaredSet::with_covers(&records, &covers).unwrap();
        let req = Request::Begin {
            read_only: false,
            retry: false,
            declared,
        };
        round_trip(req);
        let mut out = Vec::new();
        req.encode(&mut out);
        // length, opcode, flags, 1 record, 2 covers.
        assert_eq!(
            out.len(),
            4 + 1 + 1 + 4 + DECLARED_ENTRY_BYTES + 4 + 2 * COVER_ENTRY_BYTES
        );
        let Ok(Some((Request::Begin { declared: back, .. }, _))) = Request::decode(&out) else {
            panic!("a BEGIN");
        };
        assert_eq!(back.covers().collect::<Vec<_>>(), [cover, empty]);
        assert_eq!(
            back.iter().collect::<Vec<_>>(),
            [Declared {
                table: 1,
                rid: 7,
                write: true
            }]
        );
    }

    /// A cover whose start is past its end, or a cover entry cut short, is malformed.
    #[test]
    fn a_backwards_or_partial_cover_is_malformed() {
        let mut covers = Vec::new();
        DeclaredSet::encode_cover(
            &mut covers,
            DeclaredCover {
                table: 0,
                start: 9,
                end: 8,
            },
        );
        assert_eq!(
            DeclaredSet::with_covers(&[], &covers),
            Err(WireError::Field("declared cover with start > end"))
        );
        assert_eq!(
            DeclaredSet::with_covers(&[], &covers[..19]),
            Err(WireError::Field("declared covers are not whole entries"))
        );
        // The same backwards cover in a frame.
        let mut out = Vec::new();
        let mut f = FrameWriter::open(&mut out, op::BEGIN);
        f.u8(0).u32(0).u32(1).bytes(&covers);
        f.close();
        assert_eq!(
            Request::decode(&out),
            Err(WireError::Field("declared cover with start > end"))
        );
        // A count of covers larger than the bytes there.
        let mut out = Vec::new();
        let mut f = FrameWriter::open(&mut out, op::BEGIN);
        f.u8(0).u32(0).u32(2).bytes(&covers);
        f.close();
        assert_eq!(Request::decode(&out), Err(WireError::Truncated(op::BEGIN)));
    }

    /// A version-2 client's `BEGIN` (records, no covers) still decodes on a connection that
    /// named version 2 (or 1), and is malformed as a version-3 frame (its covers count is
    /// missing).
    #[test]
    fn a_version_2_begin_still_decodes() {
        let mut records = Vec::new();
        DeclaredSet::encode_entry(
            &mut records,
            Declared {
                table: 0,
                rid: 3,
                write: false,
            },
        );
        // As a version-2 client writes it, by hand: flags, count, entries.
        let mut frame = vec![op::BEGIN, FLAG_RETRY];
        frame.extend_from_slice(&1u32.to_le_bytes());
        frame.extend_from_slice(&records);
        let mut bytes = (frame.len() as u32).to_le_bytes().to_vec();
        bytes.extend_from_slice(&frame);
        let want = Request::Begin {
            read_only: false,
            retry: true,
            declared: DeclaredSet::from_wire(&records).unwrap(),
        };
        for version in [1, 2] {
            assert_eq!(
                Request::decode_version(&bytes, version),
                Ok(Some((want, bytes.len())))
            );
            let mut again = Vec::new();
            want.encode_version(&mut again, version);
            assert_eq!(again, bytes);
        }
        assert_eq!(
            Request::decode_version(&bytes, 3),
            Err(WireError::Truncated(op::BEGIN))
        );
    }

    /// The reason codes are part of the wire format (docs/PROTOCOL.md): reordering `Abort`
    /// must not change them.
    #[test]
    fn abort_reason_codes_are_the_documented_ones() {
        let documented = [
            "lock_conflict",
            "die",
            "wounded",
            "read_validation",
            "timestamp_extension",
            "preemptive",
            "user",
            "write_write_conflict",
            "ssn_exclusion",
            "timestamp_order",
            "version_collected",
            "reexecute",
            "batch_write_after_write",
            "batch_read_after_write",
            "batch_access_set_changed",
        ];
        for (code, name) in documented.iter().enumerate() {
            let mut out = Vec::new();
            Reply::encode(&Reply::Aborted(Abort::ALL[code]), &mut out);
            assert_eq!(out[5] as usize, code);
            match Reply::decode(&out) {
                Ok(Some((Reply::Aborted(why), _))) => assert_eq!(why.name(), *name),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(Abort::COUNT, documented.len());
    }

    #[test]
    fn replies_round_trip() {
        let tables = [1u8; 24];
        let rows = [2u8; 32];
        for reply in [
            Reply::Hello(Tables { bytes: &tables }),
            Reply::Ok,
            Reply::Value(b"abc"),
            Reply::Flag(true),
            Reply::Rows(Rows { bytes: &rows }),
            Reply::Aborted(Abort::Wounded),
            Reply::Verdict("{\"cycles\":0}"),
            Reply::Error {
                code: ErrorCode::Busy,
                message: "full",
            },
        ] {
            let mut out = Vec::new();
            reply.encode(&mut out);
            assert_eq!(Reply::decode(&out), Ok(Some((reply, out.len()))));
        }
    }

    #[test]
    fn oversized_and_empty_frames_are_errors_before_their_bytes_arrive() {
        let big = ((MAX_FRAME_BYTES + 1) as u32).to_le_bytes();
        assert_eq!(
            Request::decode(&big),
            Err(WireError::FrameLength(MAX_FRAME_BYTES as u64 + 1))
        );
        assert_eq!(
            Request::decode(&[0, 0, 0, 0]),
            Err(WireError::FrameLength(0))
        );
        // A trailing byte after COMMIT's (empty) fields.
        assert_eq!(
            Request::decode(&[2, 0, 0, 0, 0x09, 7]),
            Err(WireError::Trailing(0x09, 1))
        );
        // A reply opcode where a request belongs.
        assert_eq!(
            Request::decode(&[1, 0, 0, 0, 0x80]),
            Err(WireError::Opcode(0x80))
        );
    }

    #[test]
    fn handshake_round_trips_and_rejects_bad_magic() {
        let mut out = Vec::new();
        let hs = Handshake {
            version: VERSION,
            token: b"secret",
        };
        hs.encode(&mut out).unwrap();
        assert_eq!(Handshake::decode(&out), Ok(Some((hs, out.len()))));
        assert_eq!(Handshake::decode(&out[..5]), Ok(None));
        assert_eq!(Handshake::decode(b"GET / HTTP"), Err(WireError::Magic));
    }
}
