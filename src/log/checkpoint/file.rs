//! The bytes of a checkpoint file: the log's checksummed frames (`log::format`), with kinds of
//! their own.
//!
//! ```text
//!  kind 4, header:  magic "TXBCKP01" (u64), format (u32), run id (u64), number (u64),
//!                   start epoch (u64)
//!  kind 5, records: count (u32), then per record, as a log entry: table (u32), bytes (u32),
//!                   record id (u64), seq (u64), the row
//!  kind 6, trailer: end epoch (u64), records (u64), record frames (u64), vacant ranges (u64)
//!  kind 7, vacant:  table (u32), first record id (u64), end (u64): every record of the
//!                   range is deleted for good (its chunk was retired: `storage::retire`)
//! ```
//!
//! A vacant range stands for records a growing table gave back after deleting them (TPC-C's
//! delivered NEW-ORDER rows): their memory may be gone or reused, so no (row, seq) can be
//! copied, yet a loaded row among them must not come back at recovery.
//!
//! A checkpoint is complete only when it is exactly a header, record frames and a trailer whose
//! counts match them, and nothing after. [`read_checkpoint`] names the offset of the first
//! frame that is cut short, fails its CRC-32C or breaks that shape, so a torn or corrupted
//! checkpoint is never half-loaded (recovery then falls back to an older one).

use super::super::format::{
    FRAME_HEADER, Torn, begin_frame, end_frame, parse_entry, push_entry, read_raw_frame, u32_at,
    u64_at,
};
use std::io::{self, Write};

/// The first eight bytes of a checkpoint header's body.
pub const CHECKPOINT_MAGIC: u64 = u64::from_le_bytes(*b"TXBCKP01");
/// The checkpoint format this build writes and reads.
pub const CHECKPOINT_FORMAT: u32 = 1;
/// Frame kinds (the log's own are 1 to 3).
const KIND_HEADER: u8 = 4;
const KIND_RECORDS: u8 = 5;
const KIND_TRAILER: u8 = 6;
const KIND_VACANT: u8 = 7;
/// A records frame is written once its entries pass this many bytes.
const FRAME_TARGET: usize = 64 << 10;

/// What a checkpoint's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointHeader {
    /// The run it belongs to.
    pub run_id: u64,
    /// Its number (1 first).
    pub number: u64,
    /// The epoch after the durable frontier when the copy began: every transaction of a lower
    /// epoch had installed all its writes before (`checkpoint` module docs).
    pub start_epoch: u64,
}

/// Writes a checkpoint's frames to `out`, records batched into frames of about 64 KiB.
pub struct CheckpointWriter<W: Write> {
    out: W,
    frame: Vec<u8>,
    entries: Vec<u8>,
    count: u32,
    records: u64,
    frames: u64,
    vacant: u64,
}

impl<W: Write> CheckpointWriter<W> {
    /// Starts a checkpoint: writes its header to `out`.
    pub fn new(mut out: W, h: &CheckpointHeader) -> io::Result<Self> {
        let mut frame = Vec::with_capacity(FRAME_TARGET + 4096);
        let start = begin_frame(&mut frame, KIND_HEADER);
        frame.extend_from_slice(&CHECKPOINT_MAGIC.to_le_bytes());
        frame.extend_from_slice(&CHECKPOINT_FORMAT.to_le_bytes());
        frame.extend_from_slice(&h.run_id.to_le_bytes());
        frame.extend_from_slice(&h.number.to_le_bytes());
        frame.extend_from_slice(&h.start_epoch.to_le_bytes());
        end_frame(&mut frame, start);
        out.write_all(&frame)?;
        frame.clear();
        Ok(CheckpointWriter {
            out,
            frame,
            entries: Vec::with_capacity(FRAME_TARGET + 4096),
            count: 0,
            records: 0,
            frames: 0,
            vacant: 0,
        })
    }

    /// Adds one record's version: `row` (without its stamp) with its `seq`.
    pub fn push(&mut self, table: u32, rid: u64, seq: u64, row: &[u8]) -> io::Result<()> {
        push_entry(&mut self.entries, table, rid, seq, row);
        self.count += 1;
        self.records += 1;
        if self.entries.len() >= FRAME_TARGET {
            self.write_records()?;
        }
        Ok(())
    }

    /// Adds a vacant range (module docs): records `rids` of `table` are deleted for good.
    pub fn push_vacant(&mut self, table: u32, rids: std::ops::Range<u64>) -> io::Result<()> {
        self.write_records()?;
        let start = begin_frame(&mut self.frame, KIND_VACANT);
        self.frame.extend_from_slice(&table.to_le_bytes());
        self.frame.extend_from_slice(&rids.start.to_le_bytes());
        self.frame.extend_from_slice(&rids.end.to_le_bytes());
        end_frame(&mut self.frame, start);
        self.out.write_all(&self.frame)?;
        self.frame.clear();
        self.vacant += 1;
        Ok(())
    }

    fn write_records(&mut self) -> io::Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let start = begin_frame(&mut self.frame, KIND_RECORDS);
        self.frame.extend_from_slice(&self.count.to_le_bytes());
        self.frame.extend_from_slice(&self.entries);
        end_frame(&mut self.frame, start);
        self.out.write_all(&self.frame)?;
        self.frame.clear();
        self.entries.clear();
        self.count = 0;
        self.frames += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes the last records and the trailer naming `end_epoch`; returns the output.
    pub fn finish(mut self, end_epoch: u64) -> io::Result<W> {
        self.write_records()?;
        let start = begin_frame(&mut self.frame, KIND_TRAILER);
        self.frame.extend_from_slice(&end_epoch.to_le_bytes());
        self.frame.extend_from_slice(&self.records.to_le_bytes());
        self.frame.extend_from_slice(&self.frames.to_le_bytes());
        self.frame.extend_from_slice(&self.vacant.to_le_bytes());
        end_frame(&mut self.frame, start);
        self.out.write_all(&self.frame)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A complete checkpoint, read and checked.
#[derive(Debug, Clone)]
pub struct CheckpointContents<'a> {
    /// Its header.
    pub header: CheckpointHeader,
    /// The current epoch when the copy ended: every version copied is of an epoch at or
    /// below it.
    pub end_epoch: u64,
    /// Records in it.
    pub records: u64,
    /// Each records frame: its count and its encoded entries.
    frames: Vec<(u32, &'a [u8])>,
    /// The vacant ranges: table and record ids.
    pub vacant: Vec<(u32, std::ops::Range<u64>)>,
}

impl<'a> CheckpointContents<'a> {
    /// Every record, as (table, record id, seq, row) log entries.
    pub fn entries(&self) -> impl Iterator<Item = super::super::format::Entry<'a>> + '_ {
        self.frames.iter().flat_map(|&(count, bytes)| {
            let mut rest = bytes;
            (0..count).map(move |_| {
                let (e, tail) = parse_entry(rest).expect("checked when the file was read");
                rest = tail;
                e
            })
        })
    }

    /// The records frames' entry bytes, for parallel loading (each a self-contained batch).
    pub fn frames(&self) -> &[(u32, &'a [u8])] {
        &self.frames
    }
}

/// Entries of one records frame's bytes (`count` of them, as [`CheckpointContents::frames`]
/// gives them).
pub fn frame_entries(
    count: u32,
    bytes: &[u8],
) -> impl Iterator<Item = super::super::format::Entry<'_>> {
    let mut rest = bytes;
    (0..count).map(move |_| {
        let (e, tail) = parse_entry(rest).expect("checked when the file was read");
        rest = tail;
        e
    })
}

/// Why a checkpoint file is not a complete checkpoint, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why} at byte offset {offset}")]
pub struct CheckpointFault {
    /// Offset of the frame that is wrong (or of the end, for a missing trailer).
    pub offset: usize,
    /// What is wrong.
    pub why: String,
}

/// Reads a checkpoint file's bytes, all or nothing (module docs).
pub fn read_checkpoint(bytes: &[u8]) -> Result<CheckpointContents<'_>, CheckpointFault> {
    let fault = |offset: usize, why: String| CheckpointFault { offset, why };
    let mut at = 0;
    let mut header = None;
    let mut frames = Vec::new();
    let mut vacant = Vec::new();
    let mut records = 0u64;
    loop {
        if at == bytes.len() {
            return Err(fault(at, "no trailer: the checkpoint is incomplete".into()));
        }
        let (kind, body, len) = read_raw_frame(&bytes[at..]).map_err(|t: Torn| {
            fault(
                at,
                match t {
                    Torn::Truncated => "frame cut short".into(),
                    Torn::Checksum => "checksum mismatch".into(),
                    Torn::Malformed => "malformed frame".into(),
                },
            )
        })?;
        let malformed = |what: &str| fault(at, format!("malformed {what}"));
        match (kind, header) {
            (KIND_HEADER, None) => {
                if body.len() != 36 || u64_at(body, 0) != Some(CHECKPOINT_MAGIC) {
                    return Err(malformed("header"));
                }
                let format = u32_at(body, 8).ok_or_else(|| malformed("header"))?;
                if format != CHECKPOINT_FORMAT {
                    return Err(fault(
                        at,
                        format!(
                            "checkpoint format {format} (this build reads {CHECKPOINT_FORMAT})"
                        ),
                    ));
                }
                let field = |i| u64_at(body, i).ok_or_else(|| malformed("header"));
                header = Some(CheckpointHeader {
                    run_id: field(12)?,
                    number: field(20)?,
                    start_epoch: field(28)?,
                });
            }
            (KIND_RECORDS, Some(_)) => {
                let count = u32_at(body, 0).ok_or_else(|| malformed("records frame"))?;
                let entries = &body[4..];
                let mut tail = entries;
                for _ in 0..count {
                    tail = parse_entry(tail)
                        .ok_or_else(|| malformed("records frame"))?
                        .1;
                }
                if !tail.is_empty() {
                    return Err(malformed("records frame"));
                }
                records += u64::from(count);
                frames.push((count, entries));
            }
            (KIND_VACANT, Some(_)) => {
                let (Some(table), Some(lo), Some(hi)) =
                    (u32_at(body, 0), u64_at(body, 4), u64_at(body, 12))
                else {
                    return Err(malformed("vacant range"));
                };
                if body.len() != 20 || lo > hi {
                    return Err(malformed("vacant range"));
                }
                vacant.push((table, lo..hi));
            }
            (KIND_TRAILER, Some(h)) => {
                let (Some(end_epoch), Some(n), Some(f), Some(v)) = (
                    u64_at(body, 0),
                    u64_at(body, 8),
                    u64_at(body, 16),
                    u64_at(body, 24),
                ) else {
                    return Err(malformed("trailer"));
                };
                if body.len() != 32
                    || n != records
                    || f != frames.len() as u64
                    || v != vacant.len() as u64
                {
                    return Err(fault(
                        at,
                        format!(
                            "trailer counts {n} records in {f} frames and {v} vacant ranges, \
                             the file {records} in {} and {}",
                            frames.len(),
                            vacant.len()
                        ),
                    ));
                }
                if at + len != bytes.len() {
                    return Err(fault(at + len, "bytes after the trailer".into()));
                }
                return Ok(CheckpointContents {
                    header: h,
                    end_epoch,
                    records,
                    frames,
                    vacant,
                });
            }
            (_, None) => return Err(fault(at, "no checkpoint header".into())),
            _ => return Err(malformed("checkpoint (a frame out of place)")),
        }
        at += len;
        debug_assert!(len >= FRAME_HEADER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkpoint of `n` records (rows of 8 to 40 bytes), small frames forced by size.
    fn sample(n: u64) -> Vec<u8> {
        let h = CheckpointHeader {
            run_id: 9,
            number: 3,
            start_epoch: 17,
        };
        let mut w = CheckpointWriter::new(Vec::new(), &h).expect("header");
        for i in 0..n {
            let row = vec![i as u8; 8 + (i as usize % 5) * 8];
            w.push((i % 3) as u32, i * 7, i + 1, &row).expect("push");
            if i % 17 == 5 {
                w.push_vacant(1, i * 10..i * 10 + 4).expect("vacant");
            }
        }
        w.finish(21).expect("finish")
    }

    #[test]
    fn a_checkpoint_round_trips() {
        let bytes = sample(5000);
        let c = read_checkpoint(&bytes).expect("complete");
        assert_eq!(
            c.header,
            CheckpointHeader {
                run_id: 9,
                number: 3,
                start_epoch: 17
            }
        );
        assert_eq!((c.end_epoch, c.records), (21, 5000));
        assert_eq!(c.vacant.len(), (0..5000).filter(|i| i % 17 == 5).count());
        assert_eq!(c.vacant[0], (1, 50..54));
        assert!(c.frames().len() > 1, "several records frames");
        for (i, e) in c.entries().enumerate() {
            let i = i as u64;
            assert_eq!((e.table, e.rid, e.seq), ((i % 3) as u32, i * 7, i + 1));
            assert_eq!(e.row, &vec![i as u8; 8 + (i as usize % 5) * 8][..]);
        }
        let by_frames: u64 = c
            .frames()
            .iter()
            .map(|&(n, b)| frame_entries(n, b).count() as u64)
            .sum();
        assert_eq!(by_frames, 5000);
    }

    /// A checkpoint cut at any byte offset short of its end is refused, naming an offset at
    /// or before the cut; never half-read.
    #[test]
    fn a_checkpoint_torn_at_every_offset_is_refused() {
        let bytes = sample(40);
        for cut in 0..bytes.len() {
            let err = read_checkpoint(&bytes[..cut]).expect_err("torn");
            assert!(err.offset <= cut, "cut {cut}: {err}");
        }
        assert!(read_checkpoint(&bytes).is_ok());
    }

    /// Any flipped bit, and any byte appended, makes the checkpoint refused.
    #[test]
    fn a_flipped_bit_or_extra_bytes_are_refused() {
        let bytes = sample(40);
        for byte in 0..bytes.len() {
            for bit in [0, 4, 7] {
                let mut bad = bytes.clone();
                bad[byte] ^= 1 << bit;
                let err = read_checkpoint(&bad).expect_err("flipped");
                assert!(err.offset <= byte, "byte {byte} bit {bit}: {err}");
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let err = read_checkpoint(&longer).expect_err("extra byte");
        assert_eq!(err.offset, bytes.len());
    }

    #[test]
    fn an_empty_checkpoint_is_complete() {
        let bytes = sample(0);
        let c = read_checkpoint(&bytes).expect("complete");
        assert_eq!((c.records, c.entries().count()), (0, 0));
    }
}
