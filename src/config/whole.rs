//! Whole-number flags: the clap value parser every integer flag uses.
//!
//! It accepts what a user or a script writes for a whole number, `1000000`, `1e6`, `2.5e3`,
//! `1_000_000`, as long as the value is an exact integer that fits the flag's type; anything else
//! (`-1`, `1.5`, `1e-3`, `abc`, a value past the type) is refused with the flag's allowed range,
//! as validation words it for the float flags (`invalid value '-1' for --threads: allowed 1 <=
//! threads <= 1024`). The range named here is the flag's own where [`allowed`] knows it;
//! validation still checks every value against the run (records against memory, ops against
//! records), so a range that depends on other flags is worded that way.

use super::{MAX_PAYLOAD, MAX_QUEUE, MAX_THREADS};
use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use std::ffi::OsStr;
use std::marker::PhantomData;

/// The allowed range of integer flag `flag` (long name), in the words validation uses; `None`
/// for a flag whose only bound is its type's.
pub fn allowed(flag: &str) -> Option<String> {
    use crate::metrics::version_series::MAX_SAMPLE_MS;
    use crate::workload::shifting::{MAX_LARGE_READS, MAX_SHIFT_PERIOD_MS};
    use crate::workload::tpcc::MAX_WAREHOUSES;
    Some(match flag {
        "threads" => format!("1 <= threads <= {MAX_THREADS}"),
        "queue" => format!("1 <= queue <= {MAX_QUEUE}"),
        "records" => "1 <= records <= 2^40 (and what memory holds)".into(),
        "payload" => format!("1 <= bytes <= {MAX_PAYLOAD}"),
        "ops" | "long-ops" => "1 <= ops <= min(records, 4096)".into(),
        "writes" => "0 <= writes <= ops".into(),
        "hot-records" => "1 <= records <= 2^20".into(),
        "scan-length" => "1 <= length <= records".into(),
        "large-reads" => format!("1 <= reads <= min(records, {MAX_LARGE_READS})"),
        "shift-period-ms" => format!("1 <= ms <= {MAX_SHIFT_PERIOD_MS}"),
        "warehouses" => format!("1 <= warehouses <= {MAX_WAREHOUSES}"),
        "repeat" => "1 <= repeat <= 1000".into(),
        "read-phase-extension" => "0 <= ns <= 1000000000".into(),
        "silo-epoch-ms" => "1 <= ms <= 10000".into(),
        "mocc-threshold" => "0 <= H <= 63".into(),
        "plor-ro-threshold" => "0 <= aborts <= 1000000".into(),
        "gc-interval-us" => "0 <= us <= 10000000".into(),
        "version-memory-mb" => "1 <= MiB <= 16777216 (and what memory holds)".into(),
        "table-memory-mb" => "the loaded tables' MiB <= MiB <= what memory holds".into(),
        "ds-queues" => "1 <= queues <= 16777216".into(),
        "ds-epoch-txns" => "1 <= transactions <= 1048576".into(),
        "ds-epoch-us" => "1 <= us <= 10000000".into(),
        "long-txn-delay-us" => "0 <= us <= 10000000".into(),
        "sample-ms" => format!("1 <= ms <= {MAX_SAMPLE_MS}"),
        "check-limit" => "1 <= operations (and what memory holds)".into(),
        "point" => "1 <= point <= the grid's points".into(),
        _ => return None,
    })
}

/// The exact non-negative integer `text` writes (`1000`, `1_000`, `1e6`, `2.5e3`, `+7`), or
/// `None` when it writes a negative number, a fraction, or no number.
pub fn parse_whole(text: &str) -> Option<u128> {
    let t = text.trim().replace('_', "");
    let t = t.strip_prefix('+').unwrap_or(&t);
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(at) => (&t[..at], t[at + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    // The digits as one integer, scaled by 10^(exponent - fraction digits).
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let mut value: u128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let scale = exponent - i32::try_from(frac.len()).ok()?;
    if scale >= 0 {
        for _ in 0..scale {
            if value == 0 {
                break;
            }
            value = value.checked_mul(10)?;
        }
    } else {
        for _ in 0..scale.unsigned_abs() {
            if value % 10 != 0 {
                return None;
            }
            value /= 10;
        }
    }
    Some(value)
}

/// The value parser of an integer flag of type `T` ([`parse_whole`], the error naming the
/// flag's allowed range).
#[derive(Clone)]
pub struct Whole<T>(PhantomData<T>);

impl<T> Whole<T> {
    /// The parser.
    pub fn new() -> Self {
        Whole(PhantomData)
    }
}

impl<T> Default for Whole<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TypedValueParser for Whole<T>
where
    T: TryFrom<u128> + Clone + Send + Sync + 'static,
    T: num_bound::Bounded,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        if let Some(v) = parse_whole(&text).and_then(|v| T::try_from(v).ok()) {
            return Ok(v);
        }
        let flag = arg
            .and_then(|a| a.get_long())
            .map(str::to_string)
            .unwrap_or_else(|| "value".into());
        let range = allowed(&flag).unwrap_or_else(|| format!("0 <= value <= {}", T::max_text()));
        let message = format!(
            "invalid value '{text}' for --{flag}: allowed {range} (a whole number; 1e6 is \
             1000000)\n"
        );
        Err(clap::Error::raw(ErrorKind::ValueValidation, message).with_cmd(cmd))
    }
}

/// The largest value of each integer type a flag uses, in words.
pub mod num_bound {
    /// An integer type whose largest value an error message names.
    pub trait Bounded {
        /// The maximum, as digits.
        fn max_text() -> String;
    }
    macro_rules! bounded {
        ($($t:ty),*) => {$(
            impl Bounded for $t {
                fn max_text() -> String {
                    <$t>::MAX.to_string()
                }
            }
        )*};
    }
    bounded!(u32, u64, usize);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_parse_in_every_exact_spelling() {
        for (text, value) in [
            ("0", 0),
            ("1000000", 1_000_000),
            ("1e6", 1_000_000),
            ("1E6", 1_000_000),
            ("2.5e3", 2500),
            ("1_000", 1000),
            ("+7", 7),
            ("100e-2", 1),
            ("1.0", 1),
            ("0e999", 0),
        ] {
            assert_eq!(parse_whole(text), Some(value), "{text}");
        }
        for text in [
            "-1",
            "1.5",
            "1e-3",
            "abc",
            "",
            "e5",
            ".",
            "1e",
            "1e99999999999",
            "1e40",
            "0x10",
        ] {
            assert_eq!(parse_whole(text), None, "{text}");
        }
    }
}
