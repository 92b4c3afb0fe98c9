//! How long `explain --profile` takes to name the frames of a large
//! binary: the first lookup reads its symbol table, unwind ranges and
//! opens its DWARF; the next ones search them, parsing each DWARF unit
//! the first time an address in it is asked for (inlined frames); an
//! address asked for again is answered from the cache. Figures in
//! docs/PERFORMANCE.md.
//!
//! cargo run --release --example profile_symbols -- BINARY

use std::time::Instant;

use cmdscope::profile::sampler::Mapped;
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
    let at = |offset: u64| Mapped {
        path: path.clone(),
        offset,
        ..Default::default()
    };
    let mut sym = Symbolizer::default();
    let t = Instant::now();
    let first = sym.frames(1, 0, false, Some(&at(0x1000)));
    let load = t.elapsed().as_secs_f64();
    // 100,000 lookups spread over the first 64 MiB of the file.
    let offsets: Vec<u64> = (0..100_000u64)
        .map(|i| 0x1000 + (i * 671) % (64 << 20))
        .collect();
    let mut named = 0;
    let mut inlined = 0;
    let t = Instant::now();
    for &off in &offsets {
        let f = sym.frames(1, 0, false, Some(&at(off)));
        named += usize::from(!f.last().is_some_and(|f| f.function.contains("+0x")));
        inlined += usize::from(f.len() > 1);
    }
    let lookups = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for &off in &offsets {
        sym.frames(1, 0, false, Some(&at(off)));
    }
    let again = t.elapsed().as_secs_f64();
    let module = sym.modules().into_iter().next().unwrap_or_default();
    println!(
        "{path}: {} MB; tables read in {:.2} s (first frame: {}); 100,000 lookups in {:.3} s, \
         {named} named, {inlined} with inlined frames; the same again in {:.3} s\n  {}: {:?}; DWARF: {:?}",
        size / 1_000_000,
        load,
        first.last().map_or("", |f| f.function.as_str()),
        lookups,
        again,
        module.path,
        module.symbols,
        module.dwarf,
    );
}
