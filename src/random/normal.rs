//! Keys from a normal (Gaussian) distribution, SGPM's workload: `round(mean + sd * z)` for a
//! standard normal `z` (Box-Muller), drawn again while it falls outside `0..n`.
//!
//! With `mean` inside `0..n` at least half the mass lies in range, so a key takes at most two
//! draws on average; validation keeps it there.

use super::FastRng;

/// A generator of keys in `0..n`, normal around `mean` with standard deviation `sd`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NormalKeys {
    n: u64,
    mean: f64,
    sd: f64,
}

impl NormalKeys {
    /// Keys in `0..n` (`n >= 1`) around `mean` (`0 <= mean < n`) with `sd > 0`.
    pub fn new(n: u64, mean: f64, sd: f64) -> Self {
        assert!(n >= 1, "normal keys need at least one key");
        assert!(
            mean.is_finite() && (0.0..n as f64).contains(&mean),
            "the mean must be a key"
        );
        assert!(sd.is_finite() && sd > 0.0, "sd must be positive");
        NormalKeys { n, mean, sd }
    }

    /// Draws a key in `0..n`.
    #[inline]
    pub fn sample(&self, rng: &mut FastRng) -> u64 {
        loop {
            // Box-Muller: u1 in (0, 1] so that ln(u1) is finite.
            let u1 = 1.0 - rng.next_f64();
            let u2 = rng.next_f64();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            let k = (self.mean + self.sd * z).round();
            if k >= 0.0 && k < self.n as f64 {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_spread_match_and_keys_stay_in_range() {
        let keys = NormalKeys::new(2_000_000, 1e6, 1e4);
        let mut rng = FastRng::new(3);
        let draws = 200_000;
        let (mut sum, mut sq, mut within_one_sd) = (0.0, 0.0, 0u64);
        for _ in 0..draws {
            let k = keys.sample(&mut rng) as f64;
            sum += k;
            sq += k * k;
            within_one_sd += u64::from((k - 1e6).abs() <= 1e4);
        }
        let mean = sum / draws as f64;
        let sd = (sq / draws as f64 - mean * mean).sqrt();
        assert!((mean - 1e6).abs() < 100.0, "mean {mean}");
        assert!((sd / 1e4 - 1.0).abs() < 0.02, "sd {sd}");
        // 68.27% of a normal lies within one sd.
        let share = within_one_sd as f64 / draws as f64;
        assert!((share - 0.6827).abs() < 0.01, "{share}");
    }

    #[test]
    fn a_distribution_wider_than_the_table_is_cut_to_it() {
        let keys = NormalKeys::new(100, 2.0, 1e3);
        let mut rng = FastRng::new(1);
        assert!((0..10_000).all(|_| keys.sample(&mut rng) < 100));
    }
}
