//! How long `explain --profile` takes to name the frames of a large
//! binary: the first lookup reads its symbol table, the next ones search
//! it. Figures in docs/PERFORMANCE.md.
//!
//! cargo run --release --example profile_symbols -- BINARY

use std::time::Instant;

use cmdscope::profile::symbols::Symbolizer;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: profile_symbols BINARY");
    // Mapped files have absolute paths; anything else is a special mapping.
    let path = std::fs::canonicalize(&path)
        .expect("binary")
        .to_string_lossy()
        .into_owned();
    let size = std::fs::metadata(&path).expect("binary").len();
    let mut sym = Symbolizer::default();
    let t = Instant::now();
    let first = sym.frame(1, 0, false, Some(&(path.clone(), 0x1000)));
    let load = t.elapsed().as_secs_f64();
    // 100,000 lookups spread over the first 64 MiB of the file.
    let t = Instant::now();
    let mut named = 0;
    for i in 0..100_000u64 {
        let off = 0x1000 + (i * 671) % (64 << 20);
        let f = sym.frame(1, 0, false, Some(&(path.clone(), off)));
        if !f.function.contains("+0x") {
            named += 1;
        }
    }
    let lookups = t.elapsed().as_secs_f64();
    println!(
        "{path}: {} MB; symbol table read in {:.2} s (first frame: {}); 100,000 lookups in {:.3} s, {named} named",
        size / 1_000_000,
        load,
        first.function,
        lookups
    );
}
