//! Exact zipfian sampling for any exponent by rejection-inversion (Hörmann and Derflinger,
//! "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS
//! 1996), the method of Apache Commons' `RejectionInversionZipfSampler` and the `zipf` crate.
//!
//! Target: rank `k` in `1..=n` with probability `h(k) / sum_{i=1..n} h(i)`, `h(x) = x^-s`.
//!
//! Algorithm. `h` is decreasing and convex on `x >= 1`; `H(x) = ∫_1^x h = (x^(1-s) - 1) / (1 - s)`
//! (`ln x` at `s = 1`) is increasing and has a closed-form inverse. Draw `u` uniformly in
//! `(H(1.5) - 1, H(n + 0.5)]`, let `x = H⁻¹(u)` and `k = round(x)`, so `u` fell in rank `k`'s
//! cell `(H(k - 0.5), H(k + 0.5)]`. Accept `k` when `u > H(k + 0.5) - h(k)`, the top piece of the
//! cell of length exactly `h(k)`; otherwise draw again.
//!
//! Invariants that make it exact and fast:
//! - Convexity gives `∫_{k-0.5}^{k+0.5} h >= h(k)` (the midpoint rule underestimates a convex
//!   function), so every accepting piece lies inside its cell; pieces of different ranks are
//!   disjoint and each has length `h(k)`, so an accepted rank is drawn with probability `∝ k^-s`.
//! - Rank 1's cell starts at `H(1.5) - 1`, so its length is exactly `h(1) = 1`: always accepted.
//! - The rejected area is the midpoint rule's error, a few percent of the total at most, so a draw
//!   takes barely more than one iteration on average.
//! - Squeeze: the acceptance bound `H(k + 0.5) - h(k)` maps back through `H⁻¹` to a point at most
//!   `k - squeeze` for every `k >= 2`, with equality at `k = 2` (the paper's bound), so a draw with
//!   `k - x <= squeeze` is accepted without evaluating `H` (most draws take this exit).
//!
//! `H` and `H⁻¹` are written with `exp_m1` / `ln_1p` so that they stay accurate as `s -> 1`, where
//! the closed forms above divide by a vanishing `1 - s`.

use super::FastRng;

/// Rejection-inversion sampler over ranks `1..=n` with exponent `s > 0`; allocation-free, O(1)
/// setup (no zeta sum).
#[derive(Debug, Clone)]
pub struct RejectionInversion {
    n: u64,
    s: f64,
    /// `H(1.5) - 1`: the low end of `u`, which gives rank 1 a cell of length `h(1)`.
    h_low: f64,
    /// `H(n + 0.5)`: the high end of `u`.
    h_high: f64,
    /// `2 - H⁻¹(H(2.5) - h(2))`: the squeeze (see the module docs).
    squeeze: f64,
}

impl RejectionInversion {
    /// A sampler over ranks `1..=n` (`n >= 1`) with exponent `s` (finite, `s > 0`).
    pub fn new(n: u64, s: f64) -> Self {
        assert!(n >= 1, "zipf needs at least one item");
        assert!(
            s.is_finite() && s > 0.0,
            "zipf exponent must be finite and > 0"
        );
        let mut r = RejectionInversion {
            n,
            s,
            h_low: 0.0,
            h_high: 0.0,
            squeeze: 0.0,
        };
        r.h_low = r.big_h(1.5) - 1.0;
        r.h_high = r.big_h(n as f64 + 0.5);
        r.squeeze = 2.0 - r.big_h_inv(r.big_h(2.5) - r.h(2.0));
        r
    }

    /// Number of ranks.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Draws a rank in `1..=n`; rank 1 is the most frequent.
    #[inline]
    pub fn sample_rank(&self, rng: &mut FastRng) -> u64 {
        loop {
            // next_f64 is in [0, 1), so u is in (h_low, h_high].
            let u = self.h_high + rng.next_f64() * (self.h_low - self.h_high);
            let x = self.big_h_inv(u);
            // `as` saturates (an overflowed x is +inf), and rounding error can push x a hair
            // outside [0.5, n + 0.5]: the clamp keeps k a valid rank.
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.squeeze || u >= self.big_h(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }

    /// `h(x) = x^-s`.
    #[inline]
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// `H(x) = (x^(1-s) - 1) / (1 - s)`, written as `ln x * expm1(t) / t` with `t = (1-s) ln x`.
    #[inline]
    fn big_h(&self, x: f64) -> f64 {
        let log_x = x.ln();
        expm1_over_x((1.0 - self.s) * log_x) * log_x
    }

    /// `H⁻¹(y) = (1 + (1-s) y)^(1/(1-s))`, written as `exp(y * ln1p(t) / t)` with `t = (1-s) y`.
    #[inline]
    fn big_h_inv(&self, y: f64) -> f64 {
        // For s > 1, H is bounded by 1 / (s - 1), so t >= -1 in exact arithmetic; rounding can step
        // past it, where ln1p would return NaN.
        let t = ((1.0 - self.s) * y).max(-1.0);
        (ln1p_over_x(t) * y).exp()
    }
}

/// `ln(1 + x) / x`, continuous at 0 (Taylor series near it, where the quotient loses digits).
#[inline]
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1) / x`, continuous at 0 (Taylor series near it).
#[inline]
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_the_integral() {
        for s in [0.5, 0.999_999_999_9, 1.0, 1.000_000_000_1, 1.5, 10.0] {
            let r = RejectionInversion::new(100, s);
            for x in [1.0, 1.5, 2.5, 17.0, 100.5] {
                let back = r.big_h_inv(r.big_h(x));
                // H is flat where h(x) is tiny (large s and x): an error of a few ulps in H(x)
                // moves its inverse by about ulps * H(x) / h(x).
                let conditioning = 1e-15 * r.big_h(x).abs() / r.h(x);
                if conditioning > x {
                    // H(x) is its asymptote 1 / (s - 1) to within rounding, so the inverse is
                    // +inf; the sampler clamps such draws to n (their mass is below 1e-15).
                    continue;
                }
                let tolerance = 1e-12 * x + conditioning;
                assert!((back - x).abs() < tolerance, "s {s} x {x} back {back}");
            }
        }
    }

    #[test]
    fn ranks_stay_in_range_even_at_extreme_exponents() {
        let mut rng = FastRng::new(3);
        for (n, s) in [
            (1, 1.0),
            (2, 10.0),
            (1 << 40, 1.0),
            (1 << 40, 10.0),
            (5, 1e-3),
        ] {
            let r = RejectionInversion::new(n, s);
            for _ in 0..10_000 {
                let k = r.sample_rank(&mut rng);
                assert!((1..=n).contains(&k), "n {n} s {s} k {k}");
            }
        }
    }
}
