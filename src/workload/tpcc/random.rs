//! TPC-C's random rules (TPC-C 5.11, clauses 2.1.6 and 4.3.2), drawn from the engine's [`FastRng`].
//!
//! - `random(x, y)`: uniform in `[x, y]` ([`uniform`]).
//! - `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x` (2.1.6), with
//!   one run-time constant `C` per `A`: 255 for C_LAST, 1023 for C_ID, 8191 for OL_I_ID
//!   ([`NuRandConstants`]). The constants used to load C_LAST (C-Load) and to run (C-Run) must
//!   differ by a delta in `[65, 119]` other than 96 and 112 (2.1.6.1), so that runs do not hit
//!   exactly the names the load made popular.
//! - Random a-strings (alphanumeric) and n-strings (digits) of a random length in `[x, y]`
//!   (4.3.2.2), zip codes (4 random digits and "11111", 4.3.2.7), and the 10% of I_DATA / S_DATA
//!   that carry "ORIGINAL" at a random position (4.3.3.1).
//! - Last names: three syllables chosen by the digits of a number in `0..=999` (4.3.2.3).

use crate::random::FastRng;

/// `A` of NURand for C_LAST.
pub const A_C_LAST: u64 = 255;
/// `A` of NURand for C_ID.
pub const A_C_ID: u64 = 1023;
/// `A` of NURand for OL_I_ID.
pub const A_OL_I_ID: u64 = 8191;

/// Uniform in `[x, y]` (the spec's `random(x, y)`).
#[inline]
pub fn uniform(rng: &mut FastRng, x: u64, y: u64) -> u64 {
    debug_assert!(x <= y);
    x + rng.below(y - x + 1)
}

/// NURand's run-time constants `C`, one per `A` (2.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuRandConstants {
    /// `C` for C_LAST (`A` = 255).
    pub c_last: u64,
    /// `C` for C_ID (`A` = 1023).
    pub c_id: u64,
    /// `C` for OL_I_ID (`A` = 8191).
    pub ol_i_id: u64,
}

impl NuRandConstants {
    /// Constants for loading (C-Load): each uniform in `[0, A]`.
    pub fn for_load(rng: &mut FastRng) -> Self {
        NuRandConstants {
            c_last: uniform(rng, 0, A_C_LAST),
            c_id: uniform(rng, 0, A_C_ID),
            ol_i_id: uniform(rng, 0, A_OL_I_ID),
        }
    }

    /// Constants for a run (C-Run) against a database loaded with `load`: C_ID and OL_I_ID are
    /// drawn afresh; C_LAST is drawn until `|C-Run - C-Load|` is in `[65, 119]` and is neither 96
    /// nor 112 (2.1.6.1).
    pub fn for_run(load: &NuRandConstants, rng: &mut FastRng) -> Self {
        let c_last = loop {
            let c = uniform(rng, 0, A_C_LAST);
            if Self::valid_c_last_delta(load.c_last, c) {
                break c;
            }
        };
        NuRandConstants {
            c_last,
            c_id: uniform(rng, 0, A_C_ID),
            ol_i_id: uniform(rng, 0, A_OL_I_ID),
        }
    }

    /// Whether C-Load and C-Run for C_LAST satisfy 2.1.6.1.
    pub fn valid_c_last_delta(c_load: u64, c_run: u64) -> bool {
        let delta = c_load.abs_diff(c_run);
        (65..=119).contains(&delta) && delta != 96 && delta != 112
    }
}

/// `NURand(A, x, y)` with constant `c` (2.1.6).
#[inline]
pub fn nurand(rng: &mut FastRng, a: u64, c: u64, x: u64, y: u64) -> u64 {
    (((uniform(rng, 0, a) | uniform(rng, x, y)) + c) % (y - x + 1)) + x
}

const ALPHANUMERIC: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Fills `out` with random alphanumeric characters.
#[inline]
pub fn fill_alphanumeric(rng: &mut FastRng, out: &mut [u8]) {
    for b in out {
        *b = ALPHANUMERIC[rng.below(62) as usize];
    }
}

/// Fills `out` with random digits.
#[inline]
pub fn fill_digits(rng: &mut FastRng, out: &mut [u8]) {
    for b in out {
        *b = b'0' + rng.below(10) as u8;
    }
}

/// A random a-string of length in `[min, max]`, written to the front of `buf` (at least `max`
/// long); returns the text.
pub fn a_string<'b>(rng: &mut FastRng, buf: &'b mut [u8], min: usize, max: usize) -> &'b [u8] {
    let len = uniform(rng, min as u64, max as u64) as usize;
    fill_alphanumeric(rng, &mut buf[..len]);
    &buf[..len]
}

/// A random n-string of length in `[min, max]`, written to the front of `buf`; returns the text.
pub fn n_string<'b>(rng: &mut FastRng, buf: &'b mut [u8], min: usize, max: usize) -> &'b [u8] {
    let len = uniform(rng, min as u64, max as u64) as usize;
    fill_digits(rng, &mut buf[..len]);
    &buf[..len]
}

/// A zip code: four random digits followed by "11111" (4.3.2.7).
pub fn zip(rng: &mut FastRng) -> [u8; 9] {
    let mut z = *b"000011111";
    fill_digits(rng, &mut z[..4]);
    z
}

/// The marker 10% of I_DATA and S_DATA carry (4.3.3.1).
pub const ORIGINAL: &[u8] = b"ORIGINAL";

/// I_DATA / S_DATA: a random a-string of length `[26, 50]`; with probability 10% "ORIGINAL"
/// overwrites it at a random position.
pub fn data_with_original<'b>(rng: &mut FastRng, buf: &'b mut [u8; 50]) -> &'b [u8] {
    let len = a_string(rng, buf, 26, 50).len();
    if rng.below(10) == 0 {
        let at = uniform(rng, 0, (len - ORIGINAL.len()) as u64) as usize;
        buf[at..at + ORIGINAL.len()].copy_from_slice(ORIGINAL);
    }
    &buf[..len]
}

/// The ten syllables of last names (4.3.2.3), indexed by a digit.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Longest last name (three five-letter syllables); C_LAST holds up to 16.
pub const MAX_LAST_NAME: usize = 15;

/// The last name of `number` in `0..=999`: the syllables of its hundreds, tens and units digits
/// ("BARBARBAR" for 0, "OUGHTABLEPRI" for 123). Returns the buffer and the name's length.
pub fn last_name(number: u16) -> ([u8; MAX_LAST_NAME], usize) {
    assert!(number <= 999, "last-name number {number} outside 0..=999");
    let mut out = [0u8; MAX_LAST_NAME];
    let mut len = 0;
    for digit in [number / 100, (number / 10) % 10, number % 10] {
        let s = SYLLABLES[digit as usize].as_bytes();
        out[len..len + s.len()].copy_from_slice(s);
        len += s.len();
    }
    (out, len)
}

/// The number whose [`last_name`] is `name`, or `None` when `name` is not three syllables.
/// Syllable parsing is unambiguous (no syllable is a prefix of another), so this inverts
/// [`last_name`] exactly.
pub fn last_name_number(name: &[u8]) -> Option<u16> {
    let mut rest = name;
    let mut number = 0u16;
    for _ in 0..3 {
        let digit = SYLLABLES
            .iter()
            .position(|s| rest.starts_with(s.as_bytes()))?;
        rest = &rest[SYLLABLES[digit].len()..];
        number = number * 10 + digit as u16;
    }
    rest.is_empty().then_some(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_covers_its_closed_range() {
        let mut rng = FastRng::new(1);
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            let v = uniform(&mut rng, 5, 10);
            seen[(v - 5) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        // NURand(1023, 1, 3000): values in range, and clearly non-uniform (the OR with a value
        // in [0, 1023] concentrates mass: the most popular tenth of ids gets far more than a
        // tenth of the draws).
        let mut rng = FastRng::new(7);
        let c = NuRandConstants::for_load(&mut rng);
        let mut counts = vec![0u32; 3000];
        let draws = 300_000;
        for _ in 0..draws {
            let v = nurand(&mut rng, A_C_ID, c.c_id, 1, 3000);
            assert!((1..=3000).contains(&v));
            counts[v as usize - 1] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top_tenth: u32 = counts[..300].iter().sum();
        let share = f64::from(top_tenth) / f64::from(draws);
        assert!(share > 0.2, "top 10% of ids got {share:.3} of draws");
        // Every id is reachable (the least popular ones are drawn with probability about
        // 1 / (1024 * 3000), so 300,000 draws need not hit them all).
        let hit = counts.iter().filter(|&&n| n > 0).count();
        assert!(hit > 2_800, "{hit} of 3000 ids drawn");
    }

    #[test]
    fn nurand_c_last_range() {
        let mut rng = FastRng::new(3);
        for _ in 0..10_000 {
            let v = nurand(&mut rng, A_C_LAST, 200, 0, 999);
            assert!(v <= 999);
        }
    }

    #[test]
    fn run_constants_keep_the_c_last_delta_rule() {
        for seed in 0..200 {
            let mut rng = FastRng::new(seed);
            let load = NuRandConstants::for_load(&mut rng);
            let run = NuRandConstants::for_run(&load, &mut rng);
            let delta = load.c_last.abs_diff(run.c_last);
            assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
            assert!(run.c_last <= A_C_LAST && run.c_id <= A_C_ID && run.ol_i_id <= A_OL_I_ID);
        }
        assert!(!NuRandConstants::valid_c_last_delta(100, 196));
        assert!(!NuRandConstants::valid_c_last_delta(200, 88));
        assert!(NuRandConstants::valid_c_last_delta(0, 65));
        assert!(!NuRandConstants::valid_c_last_delta(0, 64));
    }

    #[test]
    fn strings_have_spec_lengths_and_alphabets() {
        let mut rng = FastRng::new(11);
        let mut buf = [0u8; 64];
        let mut lengths = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let s = a_string(&mut rng, &mut buf, 8, 16);
            assert!((8..=16).contains(&s.len()));
            assert!(s.iter().all(u8::is_ascii_alphanumeric));
            lengths.insert(s.len());
        }
        assert_eq!(lengths.len(), 9, "every length in [8, 16] occurs");
        let n = n_string(&mut rng, &mut buf, 16, 16);
        assert_eq!(n.len(), 16);
        assert!(n.iter().all(u8::is_ascii_digit));
        let z = zip(&mut rng);
        assert!(z[..4].iter().all(u8::is_ascii_digit));
        assert_eq!(&z[4..], b"11111");
    }

    #[test]
    fn original_appears_in_a_tenth_of_data() {
        let mut rng = FastRng::new(5);
        let mut buf = [0u8; 50];
        let rows = 100_000;
        let mut with = 0;
        for _ in 0..rows {
            let d = data_with_original(&mut rng, &mut buf);
            assert!((26..=50).contains(&d.len()));
            if d.windows(ORIGINAL.len()).any(|w| w == ORIGINAL) {
                with += 1;
            }
        }
        let share = f64::from(with) / f64::from(rows);
        assert!((0.097..0.103).contains(&share), "ORIGINAL share {share}");
    }

    #[test]
    fn last_names_are_three_syllables_and_invert() {
        let (name, len) = last_name(0);
        assert_eq!(&name[..len], b"BARBARBAR");
        let (name, len) = last_name(371);
        assert_eq!(&name[..len], b"PRICALLYOUGHT");
        let mut all = std::collections::HashSet::new();
        for n in 0..=999u16 {
            let (name, len) = last_name(n);
            assert!(len <= MAX_LAST_NAME);
            assert_eq!(last_name_number(&name[..len]), Some(n));
            assert!(all.insert(name[..len].to_vec()), "names are distinct");
        }
        assert_eq!(last_name_number(b"BARBAR"), None);
        assert_eq!(last_name_number(b"BARBARBARX"), None);
    }
}
