//! What a TPC-C run executes: the five transaction types, the mix that draws them, and the two
//! run options that change how they execute (Stock-Level's isolation, the home-warehouse binding).
//!
//! A mix is five percentages summing to 100, indexed by [`TxnType`]. Two are named:
//!
//! - `full` ([`TpccMix::FULL`]): 45% New-Order, 43% Payment, 4% each Order-Status, Delivery and
//!   Stock-Level. Clause 5.2.3 sets minimums of 43% Payment and 4% for each of the other three;
//!   New-Order takes the rest, as in DBx1000, Silo and CCBench.
//! - `np` ([`TpccMix::NP`]): 50% New-Order, 50% Payment, the write-heavy subset most CC papers run.
//!
//! Any other mix is written `new_order=50,payment=40,delivery=10` (omitted types get 0%).
//! [`TpccMix::pick`] draws a type with one uniform draw in `0..100` against the cumulative
//! percentages, so a type at 0% is never drawn.

use crate::random::FastRng;
use serde::{Serialize, Serializer};
use std::fmt;

/// The five TPC-C transactions; `as usize` is the index into mix percentages and
/// `Workload::txn_types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnType {
    /// New-Order (2.4): read-write, inserts an order and its lines.
    NewOrder = 0,
    /// Payment (2.5): read-write, updates warehouse, district and customer balances.
    Payment = 1,
    /// Order-Status (2.6): read-only, a customer's last order.
    OrderStatus = 2,
    /// Delivery (2.7): read-write, delivers the oldest undelivered order of each district.
    Delivery = 3,
    /// Stock-Level (2.8): read-only, counts low-stock items of a district's last 20 orders.
    StockLevel = 4,
}

impl TxnType {
    /// Every type, in index order.
    pub const ALL: [TxnType; 5] = [
        TxnType::NewOrder,
        TxnType::Payment,
        TxnType::OrderStatus,
        TxnType::Delivery,
        TxnType::StockLevel,
    ];

    /// Whether the transaction only reads (Order-Status, Stock-Level): its program never writes,
    /// inserts or deletes.
    pub const fn is_read_only(self) -> bool {
        matches!(self, TxnType::OrderStatus | TxnType::StockLevel)
    }

    /// The name used in reports and in custom mixes: "new_order", "payment", "order_status",
    /// "delivery", "stock_level".
    pub const fn name(self) -> &'static str {
        match self {
            TxnType::NewOrder => "new_order",
            TxnType::Payment => "payment",
            TxnType::OrderStatus => "order_status",
            TxnType::Delivery => "delivery",
            TxnType::StockLevel => "stock_level",
        }
    }

    /// The type named `name` (as [`TxnType::name`], or with dashes: `new-order`), ignoring ASCII
    /// case.
    fn from_name(name: &str) -> Option<TxnType> {
        let name = name.to_ascii_lowercase().replace('-', "_");
        TxnType::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// Names in [`TxnType`] order (for `Workload::txn_types`).
pub const TXN_NAMES: [&str; 5] = [
    TxnType::NewOrder.name(),
    TxnType::Payment.name(),
    TxnType::OrderStatus.name(),
    TxnType::Delivery.name(),
    TxnType::StockLevel.name(),
];

/// Why a `--mix` value could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    /// A transaction name that is not one of the five.
    #[error("unknown transaction '{name}': allowed {}", TXN_NAMES.join(", "))]
    UnknownTxn {
        /// The name given.
        name: String,
    },
    /// A part of the list that is not `NAME=PERCENT`.
    #[error("'{part}' is not NAME=PERCENT, full or np")]
    NotAssignment {
        /// The part given.
        part: String,
    },
    /// A percentage that is not an integer in 0..=100.
    #[error("percentage '{value}' for {name} is not an integer in 0..=100")]
    BadPercent {
        /// The transaction it was given for.
        name: &'static str,
        /// What was given.
        value: String,
    },
    /// A transaction named twice.
    #[error("{name} is given twice")]
    Duplicate {
        /// The transaction.
        name: &'static str,
    },
    /// Percentages that do not add up to 100.
    #[error("percentages sum to {sum}, not 100")]
    BadSum {
        /// Their sum.
        sum: u32,
    },
}

/// Percent of each transaction type, indexed by `TxnType as usize`; sums to 100 (every
/// constructor guarantees it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpccMix {
    percent: [u8; 5],
}

impl TpccMix {
    /// The standard mix: 45/43/4/4/4 (the spec's minimums, New-Order takes the rest).
    pub const FULL: TpccMix = TpccMix {
        percent: [45, 43, 4, 4, 4],
    };
    /// New-Order and Payment only, 50/50.
    pub const NP: TpccMix = TpccMix {
        percent: [50, 50, 0, 0, 0],
    };

    /// Parses `full`, `np`, or a custom list `new_order=50,payment=40,delivery=10` (names as
    /// [`TxnType::name`] or with dashes; omitted types are 0%; must sum to 100).
    pub fn parse(s: &str) -> Result<TpccMix, MixError> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("full") {
            return Ok(TpccMix::FULL);
        }
        if s.eq_ignore_ascii_case("np") {
            return Ok(TpccMix::NP);
        }
        let mut percent = [0u8; 5];
        let mut given = [false; 5];
        for part in s.split(',') {
            let Some((name, value)) = part.split_once('=') else {
                return Err(MixError::NotAssignment {
                    part: part.trim().to_string(),
                });
            };
            let name = name.trim();
            let t = TxnType::from_name(name).ok_or_else(|| MixError::UnknownTxn {
                name: name.to_string(),
            })?;
            let p = value
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| MixError::BadPercent {
                    name: t.name(),
                    value: value.trim().to_string(),
                })?;
            if given[t as usize] {
                return Err(MixError::Duplicate { name: t.name() });
            }
            given[t as usize] = true;
            percent[t as usize] = p;
        }
        let sum: u32 = percent.iter().map(|&p| u32::from(p)).sum();
        if sum != 100 {
            return Err(MixError::BadSum { sum });
        }
        Ok(TpccMix { percent })
    }

    /// Percent of transactions of type `t`.
    #[inline]
    pub fn percent(&self, t: TxnType) -> u8 {
        self.percent[t as usize]
    }

    /// Draws a type: one uniform draw in `0..100` against the cumulative percentages.
    #[inline]
    pub fn pick(&self, rng: &mut FastRng) -> TxnType {
        let draw = rng.below(100) as u32;
        let mut cumulative = 0u32;
        for t in [
            TxnType::NewOrder,
            TxnType::Payment,
            TxnType::OrderStatus,
            TxnType::Delivery,
        ] {
            cumulative += u32::from(self.percent[t as usize]);
            if draw < cumulative {
                return t;
            }
        }
        // The percentages sum to 100 and `draw < 100`, so reaching here means the draw fell in
        // Stock-Level's share, which is then non-empty.
        TxnType::StockLevel
    }
}

impl fmt::Display for TpccMix {
    /// `full` or `np` for those mixes, otherwise the canonical list: non-zero types in
    /// [`TxnType`] order, `new_order=50,payment=40,delivery=10`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == TpccMix::FULL {
            return f.write_str("full");
        }
        if *self == TpccMix::NP {
            return f.write_str("np");
        }
        let mut first = true;
        for t in TxnType::ALL {
            let p = self.percent(t);
            if p == 0 {
                continue;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{}={p}", t.name())?;
        }
        Ok(())
    }
}

impl Serialize for TpccMix {
    /// As its [`Display`](fmt::Display) string, which [`TpccMix::parse`] reads back.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// How Stock-Level reads: serializable (default) or read committed (PLOR paper 6.1 lets
/// Stock-Level run at read committed; clause 2.8.2.3 does not require serializability for it,
/// only that it reads committed data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum StockLevelIsolation {
    /// Stock-Level runs under the protocol like every other transaction.
    Serializable,
    /// Stock-Level reads committed data; its reads are not kept stable until commit.
    ReadCommitted,
}

/// Which warehouse a worker's transactions use as home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum WarehouseBinding {
    /// Worker i always uses warehouse i % W + 1 (the usual testbed setup).
    Home,
    /// Each transaction draws its home warehouse uniformly.
    Random,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn percents(m: &TpccMix) -> [u8; 5] {
        TxnType::ALL.map(|t| m.percent(t))
    }

    #[test]
    fn names_follow_the_index_order() {
        for (i, t) in TxnType::ALL.into_iter().enumerate() {
            assert_eq!(t as usize, i);
            assert_eq!(TXN_NAMES[i], t.name());
        }
        assert_eq!(
            serde_json::to_string(&TxnType::OrderStatus).unwrap(),
            "\"order_status\""
        );
    }

    #[test]
    fn only_order_status_and_stock_level_are_read_only() {
        let ro: Vec<_> = TxnType::ALL
            .into_iter()
            .filter(|t| t.is_read_only())
            .collect();
        assert_eq!(ro, [TxnType::OrderStatus, TxnType::StockLevel]);
    }

    #[test]
    fn presets_parse_and_sum_to_100() {
        assert_eq!(TpccMix::parse("full"), Ok(TpccMix::FULL));
        assert_eq!(TpccMix::parse(" FULL "), Ok(TpccMix::FULL));
        assert_eq!(TpccMix::parse("np"), Ok(TpccMix::NP));
        assert_eq!(percents(&TpccMix::FULL), [45, 43, 4, 4, 4]);
        assert_eq!(percents(&TpccMix::NP), [50, 50, 0, 0, 0]);
        for m in [TpccMix::FULL, TpccMix::NP] {
            assert_eq!(percents(&m).iter().map(|&p| u32::from(p)).sum::<u32>(), 100);
        }
    }

    #[test]
    fn custom_lists_parse_with_either_spelling() {
        let m = TpccMix::parse("new_order=50, payment=40,Delivery=10").unwrap();
        assert_eq!(percents(&m), [50, 40, 0, 10, 0]);
        let dashed = TpccMix::parse("new-order=50,payment=40,delivery=10").unwrap();
        assert_eq!(dashed, m);
        let explicit_zero = TpccMix::parse("stock-level=100,order_status=0").unwrap();
        assert_eq!(percents(&explicit_zero), [0, 0, 0, 0, 100]);
        // A custom list equal to a preset is that preset.
        assert_eq!(TpccMix::parse("payment=50,new_order=50"), Ok(TpccMix::NP));
    }

    #[test]
    fn every_error_names_the_problem() {
        let cases: &[(&str, MixError, &str)] = &[
            (
                "new_order=50,foo=50",
                MixError::UnknownTxn { name: "foo".into() },
                "unknown transaction 'foo': allowed new_order, payment, order_status, delivery, \
                 stock_level",
            ),
            (
                "new_order=50,payment",
                MixError::NotAssignment {
                    part: "payment".into(),
                },
                "'payment' is not NAME=PERCENT",
            ),
            (
                "",
                MixError::NotAssignment { part: "".into() },
                "'' is not NAME=PERCENT",
            ),
            (
                "new_order=100,",
                MixError::NotAssignment { part: "".into() },
                "'' is not NAME=PERCENT",
            ),
            (
                "new_order=abc,payment=50",
                MixError::BadPercent {
                    name: "new_order",
                    value: "abc".into(),
                },
                "percentage 'abc' for new_order is not an integer in 0..=100",
            ),
            (
                "new_order=101",
                MixError::BadPercent {
                    name: "new_order",
                    value: "101".into(),
                },
                "percentage '101' for new_order",
            ),
            (
                "new_order=-5,payment=105",
                MixError::BadPercent {
                    name: "new_order",
                    value: "-5".into(),
                },
                "percentage '-5'",
            ),
            (
                "new_order=50,new-order=50",
                MixError::Duplicate { name: "new_order" },
                "new_order is given twice",
            ),
            (
                "new_order=50,payment=40",
                MixError::BadSum { sum: 90 },
                "percentages sum to 90, not 100",
            ),
            (
                "new_order=100,payment=100",
                MixError::BadSum { sum: 200 },
                "percentages sum to 200, not 100",
            ),
        ];
        for (input, err, message) in cases {
            let got = TpccMix::parse(input).expect_err(input);
            assert_eq!(&got, err, "{input}");
            assert!(got.to_string().contains(message), "{input}: {got}");
        }
    }

    #[test]
    fn display_round_trips_through_parse() {
        let mixes = [
            TpccMix::FULL,
            TpccMix::NP,
            TpccMix::parse("new_order=50,payment=40,delivery=10").unwrap(),
            TpccMix::parse("stock_level=1,order_status=99").unwrap(),
            TpccMix::parse("new_order=20,payment=20,order_status=20,delivery=20,stock_level=20")
                .unwrap(),
        ];
        for m in mixes {
            assert_eq!(TpccMix::parse(&m.to_string()), Ok(m), "{m}");
        }
        assert_eq!(TpccMix::FULL.to_string(), "full");
        assert_eq!(TpccMix::NP.to_string(), "np");
        assert_eq!(mixes[2].to_string(), "new_order=50,payment=40,delivery=10");
        assert_eq!(serde_json::to_string(&mixes[1]).unwrap(), "\"np\"");
    }

    #[test]
    fn pick_follows_the_percentages() {
        const DRAWS: u32 = 100_000;
        let mixes = [
            TpccMix::FULL,
            TpccMix::NP,
            TpccMix::parse("order_status=30,stock_level=70").unwrap(),
        ];
        for m in mixes {
            let mut rng = FastRng::new(7);
            let mut counts = [0u32; 5];
            for _ in 0..DRAWS {
                counts[m.pick(&mut rng) as usize] += 1;
            }
            for t in TxnType::ALL {
                let expected = f64::from(m.percent(t)) / 100.0;
                let got = f64::from(counts[t as usize]) / f64::from(DRAWS);
                if m.percent(t) == 0 {
                    assert_eq!(counts[t as usize], 0, "{m}: 0% {t:?} drawn");
                } else {
                    // Binomial standard deviation at 100k draws is at most 0.0016.
                    assert!(
                        (got - expected).abs() < 0.006,
                        "{m}: {t:?} {got} vs {expected}"
                    );
                }
            }
        }
    }

    #[test]
    fn run_options_use_kebab_case() {
        assert_eq!(
            serde_json::to_string(&StockLevelIsolation::ReadCommitted).unwrap(),
            "\"read-committed\""
        );
        assert_eq!(
            serde_json::to_string(&WarehouseBinding::Home).unwrap(),
            "\"home\""
        );
    }
}
