//! Keys from a normal (Gaussian) distribution, SGPM's workload: `round(mean + sd * z)` for a
//! standard normal `z`, drawn again while it falls outside `0..n`.
//!
//! `z` comes from the ziggurat method (Marsaglia and Tsang, "The Ziggurat Method for Generating
//! Random Variables", 2000, in the form Doornik's "An Improved Ziggurat Method to Generate Normal
//! Random Samples" gives it): the area under the density is cut into 128 horizontal layers of
//! equal area, and a draw picks a layer and a point across it. About 99% of draws land in a
//! layer's rectangle that lies wholly under the curve and are accepted with one random word,
//! one table lookup, one multiplication and one comparison; only the thin wedges at the layers'
//! right ends and the tail past the bottom layer take an exponential or a logarithm. The draw is
//! exact, not an approximation of the normal.
//!
//! SGPM's transactions draw 100 keys each, so the generator is a visible share of a run: the
//! Box-Muller form (a logarithm, root and cosine per key) took about a tenth of a NoCC run, and
//! Marsaglia's polar method that replaced it (a logarithm and a root per two keys) still about a
//! sixth of a NoCC profile on sgpm-high.
//!
//! With `mean` inside `0..n` at least half the mass lies in range, so a key takes at most two
//! draws on average; validation keeps it there.

use super::FastRng;

/// Layers of the ziggurat.
const LAYERS: usize = 128;
/// Where the bottom layer's tail starts: the `x` at which 128 layers of equal area close up.
const TAIL_START: f64 = 3.442_619_855_899;
/// The area of each layer, under the unnormalised density `exp(-x^2 / 2)`.
const LAYER_AREA: f64 = 9.912_563_035_262_17e-3;

/// The ziggurat's tables, computed once per generator (a microsecond; generators are built once
/// per run).
#[derive(Debug, Clone, PartialEq)]
struct Ziggurat {
    /// `x[i]` is the right edge of layer `i` (`x[0]`, the bottom layer, is the width of a
    /// rectangle of the layer's area: wider than `TAIL_START`, as the tail is included);
    /// `x[LAYERS] = 0` is the peak.
    x: [f64; LAYERS + 1],
    /// `x[i + 1] / x[i]`: a point of layer `i` at `|u| * x[i]` with `|u|` below this lies in the
    /// part of the layer wholly under the curve.
    inner: [f64; LAYERS],
}

impl Ziggurat {
    fn new() -> Self {
        let mut x = [0.0; LAYERS + 1];
        let mut f = density(TAIL_START);
        x[0] = LAYER_AREA / f;
        x[1] = TAIL_START;
        for i in 2..LAYERS {
            // Layer i - 1 spans heights f(x[i - 1]) to f(x[i]) over width x[i - 1] and has the
            // common area: f(x[i]) = area / x[i - 1] + f(x[i - 1]).
            x[i] = (-2.0 * (LAYER_AREA / x[i - 1] + f).ln()).sqrt();
            f = density(x[i]);
        }
        x[LAYERS] = 0.0;
        let mut inner = [0.0; LAYERS];
        for i in 0..LAYERS {
            inner[i] = x[i + 1] / x[i];
        }
        Ziggurat { x, inner }
    }

    /// A standard normal.
    #[inline]
    fn sample(&self, rng: &mut FastRng) -> f64 {
        loop {
            // One word gives both the layer (its low 7 bits) and the position across it (its
            // high 53 bits, uniform in -1..1): disjoint bits of a uniform word are independent.
            let word = rng.next_u64();
            let i = (word as usize) & (LAYERS - 1);
            let u = 2.0 * ((word >> 11) as f64 * (1.0 / (1u64 << 53) as f64)) - 1.0;
            if u.abs() < self.inner[i] {
                return u * self.x[i];
            }
            if i == 0 {
                return tail(rng, u < 0.0);
            }
            // A wedge: accept x when a uniform height in layer i falls under the curve at x.
            let x = u * self.x[i];
            let below = density(self.x[i]) / density(x);
            let above = density(self.x[i + 1]) / density(x);
            if above + rng.next_f64() * (below - above) < 1.0 {
                return x;
            }
        }
    }
}

/// The unnormalised standard normal density.
#[inline]
fn density(x: f64) -> f64 {
    (-0.5 * x * x).exp()
}

/// A draw from the normal's tail past `TAIL_START` (Marsaglia's method), on the side `negative`
/// says.
#[cold]
fn tail(rng: &mut FastRng, negative: bool) -> f64 {
    loop {
        // 1 - next_f64() lies in (0, 1], so its logarithm is finite.
        let x = (1.0 - rng.next_f64()).ln() / TAIL_START;
        let y = (1.0 - rng.next_f64()).ln();
        if -2.0 * y >= x * x {
            return if negative {
                x - TAIL_START
            } else {
                TAIL_START - x
            };
        }
    }
}

/// A generator of keys in `0..n`, normal around `mean` with standard deviation `sd`.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalKeys {
    n: u64,
    mean: f64,
    sd: f64,
    ziggurat: Ziggurat,
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
        NormalKeys {
            n,
            mean,
            sd,
            ziggurat: Ziggurat::new(),
        }
    }

    /// Draws a key in `0..n`: the normal cut to the table (a draw outside it is drawn again).
    #[inline]
    pub fn sample(&self, rng: &mut FastRng) -> u64 {
        loop {
            if let Some(k) = self.key(self.ziggurat.sample(rng)) {
                return k;
            }
        }
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
    fn the_standard_normal_matches_its_distribution_function_into_the_tails() {
        let zig = Ziggurat::new();
        // The layers close up: the top layer's edge is near the peak, and the bottom layer's
        // rectangle plus the tail has the common area.
        assert!(
            zig.x[LAYERS - 1] > 0.0 && zig.x[LAYERS - 1] < 0.3,
            "{}",
            zig.x[LAYERS - 1]
        );
        let mut rng = FastRng::new(11);
        let draws = 1_000_000;
        let mut z: Vec<f64> = (0..draws).map(|_| zig.sample(&mut rng)).collect();
        z.sort_by(f64::total_cmp);
        let cdf = |t: f64| z.partition_point(|&v| v < t) as f64 / draws as f64;
        // Phi(t), the standard normal distribution function, at points across the body, the
        // wedges and past TAIL_START (where only the tail sampler produces values).
        for (t, phi) in [
            (-4.0, 3.167e-5),
            (-3.5, 2.326e-4),
            (-3.0, 1.350e-3),
            (-2.0, 2.275e-2),
            (-1.0, 0.158_655),
            (-0.25, 0.401_294),
            (0.0, 0.5),
            (0.25, 0.598_706),
            (1.0, 0.841_345),
            (2.0, 0.977_250),
            (3.0, 0.998_650),
            (3.5, 0.999_767),
            (4.0, 0.999_968),
        ] {
            let got = cdf(t);
            // Five standard errors of a proportion over a million draws.
            let tolerance = 5.0 * (phi * (1.0 - phi) / draws as f64).sqrt();
            assert!(
                (got - phi).abs() < tolerance,
                "P(z < {t}) = {got}, expected {phi}"
            );
        }
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
