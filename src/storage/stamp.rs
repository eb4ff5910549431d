//! Check-mode version stamps: three words the engine appends to every payload when a run is
//! checked, so the serializability checker can name the version each read saw and order the
//! versions of each record, for every workload and every protocol alike.
//!
//! ```text
//!  payload of a stamped table (stamp offset = row bytes rounded up to 8)
//! +-------------------------------+--------+--------+----------+
//! | row (what the program sees)   | writer | seq    | checksum |
//! +-------------------------------+--------+--------+----------+
//!                                  word s   word s+1 word s+2
//! ```
//!
//! - `writer`: id of the transaction attempt that wrote this version (0: the loader).
//! - `seq`: the version's position in the record's history (0: the loaded version). It is not
//!   chosen by the writer: the shared install path ([`crate::protocol::WriteSet::install`]) reads
//!   the seq of the version it replaces while the protocol holds the record exclusively, and
//!   stores one more. Until then a buffered write carries [`UNINSTALLED_SEQ`]; a reader that sees
//!   it read a version that never went through the install path (an intermediate write).
//! - `checksum`: [`row_checksum`] of the writer and the row bytes. A reader recomputes it over the
//!   bytes it copied; a mismatch is a torn copy (part of one version, part of another).
//!
//! The stamp is copied with the row by every protocol (it is part of the payload), so it is
//! exactly as consistent as the row the program sees. Tables without stamps (runs without
//! `--check`) pay nothing.

/// Bytes of the stamp.
pub const STAMP_BYTES: usize = 24;

/// Seq of a write that has not been installed (see the module docs).
pub const UNINSTALLED_SEQ: u64 = u64::MAX;

/// The stamp of one version, as stored after the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Transaction attempt that wrote the version; 0 for the loader.
    pub writer: u64,
    /// Position in the record's version order (0: loaded), or [`UNINSTALLED_SEQ`].
    pub seq: u64,
    /// [`row_checksum`] of `writer` and the row.
    pub checksum: u64,
}

impl Stamp {
    /// Reads the stamp at the end of a stamped payload copy (`payload.len()` is a multiple of 8
    /// and at least [`STAMP_BYTES`]).
    #[inline]
    pub fn decode(payload: &[u8]) -> Stamp {
        let at = payload.len() - STAMP_BYTES;
        let word = |i: usize| {
            u64::from_le_bytes(
                payload[at + 8 * i..at + 8 * i + 8]
                    .try_into()
                    .expect("8 bytes"),
            )
        };
        Stamp {
            writer: word(0),
            seq: word(1),
            checksum: word(2),
        }
    }

    /// Writes the stamp at the end of a stamped payload buffer.
    #[inline]
    pub fn encode(self, payload: &mut [u8]) {
        let at = payload.len() - STAMP_BYTES;
        payload[at..at + 8].copy_from_slice(&self.writer.to_le_bytes());
        payload[at + 8..at + 16].copy_from_slice(&self.seq.to_le_bytes());
        payload[at + 16..at + 24].copy_from_slice(&self.checksum.to_le_bytes());
    }

    /// Whether `row` is the row this stamp describes.
    #[inline]
    pub fn matches(&self, row: &[u8]) -> bool {
        row_checksum(self.writer, row) == self.checksum
    }
}

/// Index, in a stamped payload of `payload_bytes`, of the word holding the seq.
#[inline]
pub fn seq_word(payload_bytes: usize) -> usize {
    (payload_bytes - STAMP_BYTES) / 8 + 1
}

/// A 64-bit checksum of a version's writer and row bytes.
///
/// Zero for writer 0 and an all-zero row, so a table that starts zeroed is already stamped
/// consistently (its loaded versions need no pass unless the loader wrote data). Each step mixes
/// one 8-byte chunk into the state and scrambles it, so a change in any byte, or bytes moved
/// between positions, changes the result.
pub fn row_checksum(writer: u64, row: &[u8]) -> u64 {
    #[inline]
    fn mix(state: u64, word: u64) -> u64 {
        // A multiply-xorshift step; `mix(0, 0) == 0`.
        let x = (state ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^ (x >> 31)
    }
    let mut state = mix(0, writer);
    let mut chunks = row.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
        state = mix(state.rotate_left(17), word);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        state = mix(state.rotate_left(17), u64::from_le_bytes(last));
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_round_trips_at_the_end() {
        let mut p = vec![0u8; 16 + STAMP_BYTES];
        let s = Stamp {
            writer: 0xdead_beef,
            seq: 42,
            checksum: 7,
        };
        s.encode(&mut p);
        assert_eq!(Stamp::decode(&p), s);
        assert!(p[..16].iter().all(|&b| b == 0));
        assert_eq!(seq_word(p.len()), 3);
    }

    #[test]
    fn checksum_is_zero_for_a_zeroed_loaded_row_and_sees_every_byte() {
        assert_eq!(row_checksum(0, &[0; 100]), 0);
        let base = row_checksum(5, &[0; 100]);
        assert_ne!(base, 0);
        assert_ne!(row_checksum(6, &[0; 100]), base, "the writer counts");
        for i in 0..100 {
            let mut row = [0u8; 100];
            row[i] = 1;
            assert_ne!(row_checksum(5, &row), base, "byte {i}");
        }
        let mut a = [0u8; 16];
        a[0] = 1;
        let mut b = [0u8; 16];
        b[8] = 1;
        assert_ne!(row_checksum(5, &a), row_checksum(5, &b), "positions count");
    }
}
