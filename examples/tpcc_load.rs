//! Measures TPC-C loading: wall time to allocate and load W warehouses, and memory per warehouse.
//!
//! ```text
//! cargo run --release --example tpcc_load -- [WAREHOUSES...] [--threads N] [--spare ORDERS]
//! ```
//!
//! Defaults: warehouses 1 and 4, one thread per core, the default spare orders per district.
//! Records carry 8 bytes of metadata (a TID or lock word, as Silo, TicToc and 2PL use), so strides
//! and memory are what a protocol run sees. Numbers from a shared machine are indicative only.

use std::time::Instant;
use txbench::workload::tpcc::{LoadParams, TpccConfig, load, memory};

fn main() {
    let mut warehouses = Vec::new();
    let mut params = LoadParams::new(1);
    let mut spare = TpccConfig::default().spare_orders_per_district;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage(&format!("{name} needs a number")))
        };
        match arg.as_str() {
            "--threads" => params.threads = value("--threads").max(1) as usize,
            "--spare" => spare = value("--spare"),
            w => warehouses.push(
                w.parse::<u64>()
                    .ok()
                    .filter(|&w| w >= 1)
                    .unwrap_or_else(|| usage(&format!("bad warehouse count {w:?}"))),
            ),
        }
    }
    if warehouses.is_empty() {
        warehouses = vec![1, 4];
    }
    println!(
        "threads {}, spare orders per district {spare}, 8-byte record metadata",
        params.threads
    );
    println!(
        "{:>10} {:>10} {:>9} {:>9} {:>12} {:>14} {:>13}",
        "warehouses", "alloc_s", "load_s", "total_s", "table_MiB", "MiB_per_wh", "loaded_MiB_wh"
    );
    for w in warehouses {
        let config = TpccConfig {
            warehouses: w,
            spare_orders_per_district: spare,
            ..Default::default()
        };
        let start = Instant::now();
        let db =
            txbench::storage::Database::<u64>::with_indexes(&config.tables(), &config.indexes());
        let allocated = start.elapsed();
        let loaded = load(&db, &config, &params);
        let total = start.elapsed();
        let m = memory(&db, &config, &loaded);
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        println!(
            "{:>10} {:>10.3} {:>9.3} {:>9.3} {:>12.1} {:>14.1} {:>13.1}",
            w,
            allocated.as_secs_f64(),
            (total - allocated).as_secs_f64(),
            total.as_secs_f64(),
            mib(m.table_bytes),
            mib(m.bytes_per_warehouse),
            mib(m.loaded_bytes_per_warehouse),
        );
    }
}

fn usage(why: &str) -> ! {
    eprintln!("error: {why}");
    eprintln!("usage: tpcc_load [WAREHOUSES...] [--threads N] [--spare ORDERS_PER_DISTRICT]");
    std::process::exit(2);
}
