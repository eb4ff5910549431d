//! Measures the cost of one zipfian key: uniform, Gray et al.'s generator (theta < 1) and exact
//! rejection-inversion (theta >= 1), each through the `Zipf` enum, and Gray's generator called
//! directly to show what the enum's per-draw match costs.
//!
//! ```text
//! cargo run --release --example zipf_cost -- [RECORDS] [DRAWS]
//! ```
//!
//! Defaults: 2^20 records (the YCSB default), 2 * 10^7 draws per generator, best of 5 rounds.
//! Numbers from a shared machine are indicative only.

use std::hint::black_box;
use std::time::Instant;
use txbench::random::{FastRng, GrayZipf, Zipf};

/// Best nanoseconds per draw of `draw` over 5 rounds of `draws` draws.
fn ns_per_draw(draws: u64, mut draw: impl FnMut(&mut FastRng) -> u64) -> f64 {
    let mut rng = FastRng::new(1);
    (0..5)
        .map(|_| {
            let start = Instant::now();
            let mut sum = 0u64;
            for _ in 0..draws {
                sum = sum.wrapping_add(draw(&mut rng));
            }
            black_box(sum);
            start.elapsed().as_nanos() as f64 / draws as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let records: u64 = args.next().map_or(1 << 20, |a| a.parse().expect("RECORDS"));
    let draws: u64 = args
        .next()
        .map_or(20_000_000, |a| a.parse().expect("DRAWS"));
    println!("records {records}, {draws} draws per round, best of 5");
    println!(
        "{:<34} {:>8.1} ns/key",
        "FastRng::next_u64 (floor)",
        ns_per_draw(draws, |r| r.next_u64())
    );
    for theta in [0.0, 0.5, 0.99, 1.0, 1.2, 1.5, 3.0] {
        let z = black_box(Zipf::new(records, theta));
        let method = match &z {
            Zipf::Uniform { .. } => "uniform",
            Zipf::Gray(_) => "Gray",
            Zipf::RejectionInversion(_) => "rejection-inversion",
        };
        let label = format!("theta {theta} ({method})");
        println!(
            "{label:<34} {:>8.1} ns/key",
            ns_per_draw(draws, |r| z.sample(r))
        );
    }
    let gray = black_box(GrayZipf::new(records, 0.99));
    println!(
        "{:<34} {:>8.1} ns/key",
        "theta 0.99 (Gray, no enum)",
        ns_per_draw(draws, |r| gray.sample(r))
    );
}
