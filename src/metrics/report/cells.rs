//! The tables' formatted cells: short numbers, abort percentages and the check verdicts.

use crate::check::CheckReport;

/// `v` with three significant digits (`1.50`, `0.0123`, `152`), a whole number without decimals.
pub fn short_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// The table's history check cell: `not checked` without `--check`; `ok (N txns)` when the
/// history has neither a cycle nor an anomaly (`ok, truncated` when `--check-limit` stopped
/// recording early, `not judged` when no transaction was recorded); the counts otherwise.
pub(super) fn history_cell(check: Option<&CheckReport>) -> String {
    match check {
        None => NOT_CHECKED.to_string(),
        Some(c) if c.cycles == 0 && c.anomalies == 0 && c.transactions == 0 => {
            if c.workers_truncated > 0 {
                "not judged: --check-limit left 0 txns".to_string()
            } else {
                "not judged: 0 txns".to_string()
            }
        }
        Some(c) if c.cycles == 0 && c.anomalies == 0 && c.workers_truncated > 0 => {
            format!("ok, truncated ({} txns)", c.transactions)
        }
        Some(c) if c.cycles == 0 && c.anomalies == 0 => format!("ok ({} txns)", c.transactions),
        Some(c) => format!("FAILED: {} cycles, {} anomalies", c.cycles, c.anomalies),
    }
}

/// The compact table's one check cell: `ok: N txns` (`, M conditions` when the workload has
/// consistency conditions), `ok, truncated: ...` when `--check-limit` cut the history, what
/// failed otherwise, `not checked` for a run without `--check`.
pub(super) fn check_cell(check: Option<&CheckReport>) -> String {
    let Some(c) = check else {
        return NOT_CHECKED.to_string();
    };
    let history_ok = c.cycles == 0 && c.anomalies == 0;
    let consistency_ok = c.consistency_violations.unwrap_or(0) == 0;
    if history_ok && consistency_ok && c.transactions > 0 {
        let conditions = c
            .conditions_checked
            .map(|n| format!(", {n} conditions"))
            .unwrap_or_default();
        let truncated = if c.workers_truncated > 0 {
            ", truncated"
        } else {
            ""
        };
        return format!("ok{truncated}: {} txns{conditions}", c.transactions);
    }
    let mut parts = Vec::new();
    if !history_ok || c.transactions == 0 {
        parts.push(history_cell(Some(c)));
    }
    if !consistency_ok {
        parts.push(consistency_cell(Some(c)));
    }
    parts.join("; ")
}

/// The table's consistency check cell: `not checked` without `--check` and for a workload that
/// defines no consistency conditions (never shown as passed); otherwise `ok (N conditions)` or
/// the violations.
pub(super) fn consistency_cell(check: Option<&CheckReport>) -> String {
    match check.map(|c| (c.conditions_checked, c.consistency_violations)) {
        Some((Some(n), Some(0))) => format!("ok ({n} conditions)"),
        Some((Some(n), Some(v))) => format!("FAILED: {v} violations of {n} conditions"),
        _ => NOT_CHECKED.to_string(),
    }
}

/// An abort ratio as a percentage with two decimals, or, below 0.01% but above zero, with two
/// significant digits: a rare abort must not read as `0.00` next to a named top abort reason.
pub fn abort_percent(ratio: f64) -> String {
    let pct = ratio * 100.0;
    if pct > 0.0 && pct < 0.01 {
        let decimals = (1.0 - pct.log10().floor()) as usize;
        format!("{pct:.decimals$}")
    } else {
        format!("{pct:.2}")
    }
}

/// What the table says for a check a run did not make.
const NOT_CHECKED: &str = "not checked";

#[cfg(test)]
mod tests {
    use super::super::checked;
    use super::*;

    #[test]
    fn rare_aborts_do_not_round_to_zero() {
        assert_eq!(abort_percent(0.0), "0.00");
        assert_eq!(abort_percent(0.1234), "12.34");
        assert_eq!(abort_percent(0.000_031), "0.0031");
        assert_eq!(abort_percent(0.000_000_5), "0.000050");
    }

    #[test]
    fn cells_say_not_checked_for_what_was_not_checked() {
        assert_eq!(history_cell(None), "not checked");
        assert_eq!(consistency_cell(None), "not checked");
        let ycsb = checked(0, None);
        assert_eq!(history_cell(Some(&ycsb)), "ok (10 txns)");
        assert_eq!(consistency_cell(Some(&ycsb)), "not checked");
        let tpcc = checked(0, Some((7, 0)));
        assert_eq!(consistency_cell(Some(&tpcc)), "ok (7 conditions)");
        let broken = checked(2, Some((7, 3)));
        assert_eq!(history_cell(Some(&broken)), "FAILED: 2 cycles, 0 anomalies");
        // A history cut short by --check-limit is never a bare `ok`.
        let cut = CheckReport {
            workers_truncated: 1,
            ..checked(0, None)
        };
        assert_eq!(history_cell(Some(&cut)), "ok, truncated (10 txns)");
        let empty = CheckReport {
            transactions: 0,
            ..cut
        };
        assert_eq!(
            history_cell(Some(&empty)),
            "not judged: --check-limit left 0 txns"
        );
        assert_eq!(
            consistency_cell(Some(&broken)),
            "FAILED: 3 violations of 7 conditions"
        );
    }
}
