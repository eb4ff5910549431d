//! Keys from a normal (Gaussian) distribution, SGPM's workload: `round(mean + sd * z)` for a
//! standard normal `z`, drawn again while it falls outside `0..n`.
//!
//! `z` comes from Marsaglia's polar method, which turns one accepted point of the unit disc (a
//! pair of uniforms, accepted with probability pi/4) into two independent standard normals with
//! one logarithm and one square root and no trigonometry. SGPM's transactions draw 100 keys each,
//! so the generator is a visible share of a run (the earlier Box-Muller form, one logarithm,
//! root and cosine per key, was about a tenth of a NoCC run's time): [`NormalKeys::sample_two`]
//! hands out both normals of a draw, and a caller that needs many keys uses both.
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
            if let [Some(k), _] | [None, Some(k)] = self.sample_two(rng) {
                return k;
            }
        }
    }

    /// Two independent draws from one polar-method point, each the key `round(mean + sd * z)`
    /// or `None` when that falls outside `0..n` (the caller redraws: the distribution is the
    /// normal cut to the table).
    #[inline]
    pub fn sample_two(&self, rng: &mut FastRng) -> [Option<u64>; 2] {
        let (u, v, s) = loop {
            let u = 2.0 * rng.next_f64() - 1.0;
            let v = 2.0 * rng.next_f64() - 1.0;
            let s = u * u + v * v;
            // s = 0 would divide by zero below; it has probability 2^-106.
            if s < 1.0 && s > 0.0 {
                break (u, v, s);
            }
        };
        let f = (-2.0 * s.ln() / s).sqrt();
        [self.key(u * f), self.key(v * f)]
    }

    /// The key of the standard normal `z`: `round(mean + sd * z)` when it lies in `0..n`.
    #[inline]
    fn key(&self, z: f64) -> Option<u64> {
        let x = self.mean + self.sd * z;
        // round() halves away from zero, so it lands in 0..n exactly when -0.5 < x < n - 0.5,
        // and for such x (x + 0.5 > 0) it is floor(x + 0.5): a truncating cast, where round()
        // would be a library call on the baseline x86-64 target.
        (x > -0.5 && x < self.n as f64 - 0.5).then_some((x + 0.5) as u64)
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
    fn the_two_draws_of_a_point_are_each_normal_and_uncorrelated() {
        let keys = NormalKeys::new(2_000_000, 1e6, 1e4);
        let mut rng = FastRng::new(5);
        let draws = 100_000;
        let (mut sum, mut sq, mut cross) = ([0.0; 2], [0.0; 2], 0.0);
        for _ in 0..draws {
            let [Some(a), Some(b)] = keys.sample_two(&mut rng) else {
                panic!("at 100 sd from the edges every draw is in range");
            };
            let z = [(a as f64 - 1e6) / 1e4, (b as f64 - 1e6) / 1e4];
            for i in 0..2 {
                sum[i] += z[i];
                sq[i] += z[i] * z[i];
            }
            cross += z[0] * z[1];
        }
        let n = draws as f64;
        for i in 0..2 {
            assert!((sum[i] / n).abs() < 0.02, "mean {}", sum[i] / n);
            assert!((sq[i] / n - 1.0).abs() < 0.02, "variance {}", sq[i] / n);
        }
        assert!((cross / n).abs() < 0.02, "correlation {}", cross / n);
    }

    #[test]
    fn keys_round_to_the_nearest_and_stay_in_the_table() {
        let keys = NormalKeys::new(10, 0.0, 1.0);
        assert_eq!(keys.key(-0.6), None);
        assert_eq!(keys.key(-0.4), Some(0));
        assert_eq!(keys.key(0.5), Some(1));
        assert_eq!(keys.key(8.49), Some(8));
        assert_eq!(keys.key(9.4), Some(9));
        assert_eq!(keys.key(9.5), None);
    }

    #[test]
    fn a_distribution_wider_than_the_table_is_cut_to_it() {
        let keys = NormalKeys::new(100, 2.0, 1e3);
        let mut rng = FastRng::new(1);
        assert!((0..10_000).all(|_| keys.sample(&mut rng) < 100));
    }
}
