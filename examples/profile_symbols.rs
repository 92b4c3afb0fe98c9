//! How long `explain --profile` takes to name the frames of a large
//! binary: the first lookup reads its symbol table and opens its DWARF;
//! the next ones search them, parsing each DWARF unit the first time an
//! address in it is asked for (inlined frames); an address asked for
//! again is answered from the cache. Times are CPU seconds of this
//! process (wall time stretches on a busy machine, CPU time does not).
//! Figures in docs/PERFORMANCE.md.
//!
//! cargo run --release --example profile_symbols -- BINARY [ADDRESSES]

use std::time::Instant;

use cmdscope::profile::sampler::Mapped;
use cmdscope::profile::symbols::Symbolizer;

/// CPU seconds (user + system) this process has used.
fn cpu() -> f64 {
    // SAFETY: rusage is plain data filled by getrusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to our own rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: profile_symbols BINARY [ADDRESSES]");
    let n: u64 = args
        .next()
        .map_or(100_000, |a| a.parse().expect("ADDRESSES"));
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
    let (t, c) = (Instant::now(), cpu());
    let first = sym
        .frames(0, false, Some(&at(0x1000)))
        .last()
        .map_or(String::new(), |f| f.function.clone());
    let load = (t.elapsed().as_secs_f64(), cpu() - c);
    // N lookups spread over the first 64 MiB of the file.
    let offsets: Vec<u64> = (0..n).map(|i| 0x1000 + (i * 671) % (64 << 20)).collect();
    let mut named = 0;
    let mut inlined = 0;
    let (t, c) = (Instant::now(), cpu());
    for &off in &offsets {
        let f = sym.frames(0, false, Some(&at(off)));
        named += usize::from(!f.last().is_some_and(|f| f.function.contains("+0x")));
        inlined += usize::from(f.len() > 1);
    }
    let lookups = (t.elapsed().as_secs_f64(), cpu() - c);
    let (t, c) = (Instant::now(), cpu());
    for &off in &offsets {
        sym.frames(0, false, Some(&at(off)));
    }
    let again = (t.elapsed().as_secs_f64(), cpu() - c);
    let module = sym.modules().into_iter().next().unwrap_or_default();
    println!(
        "{path}: {} MB\n  tables read: {:.2} s CPU ({:.2} s wall); first frame: {first}\n  \
         {n} addresses: {:.3} s CPU ({:.3} s wall), {named} named, {inlined} with inlined frames\n  \
         the same again (cached): {:.3} s CPU ({:.3} s wall)\n  names from {:?}; DWARF {:?}",
        size / 1_000_000,
        load.1,
        load.0,
        lookups.1,
        lookups.0,
        again.1,
        again.0,
        module.symbols,
        module.dwarf,
    );
}
