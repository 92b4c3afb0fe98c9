//! Times the statistics module on 1,000,000 lognormal samples.
//!
//! Run with `cargo run --release --example stats_bench`. Each line is one
//! call on fresh inputs; timings are wall-clock, single-threaded.

use cmdscope::stats;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

const N: usize = 1_000_000;

/// exp(sigma * Z), Z standard normal by Box-Muller.
fn lognormal(rng: &mut ChaCha8Rng, n: usize, scale: f64, sigma: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let u1 = 1.0 - rng.random::<f64>();
            let u2 = rng.random::<f64>();
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            scale * (sigma * z).exp()
        })
        .collect()
}

fn time<T: std::fmt::Debug>(label: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    println!("{label:<44} {ms:>9.1} ms");
    out
}

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let a = lognormal(&mut rng, N, 1.0, 0.2);
    let b = lognormal(&mut rng, N, 1.02, 0.2);
    // A drifting series for the trend test: +1% over the whole run.
    let drift: Vec<f64> = a
        .iter()
        .enumerate()
        .map(|(i, x)| x * (1.0 + 0.01 * i as f64 / N as f64))
        .collect();
    let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
    println!("n = {N} lognormal samples (sigma 0.2); b = 1.02 a in distribution\n");

    let total = Instant::now();
    let s = time("summarize", || stats::summarize(&a));
    let ci = time("median_ci (95%)", || stats::median_ci(&a, 0.95));
    let ratio = time("ratio_of_medians (2000 resamples)", || {
        stats::ratio_of_medians(&a, &b, 0.95, 7)
    });
    let core = total.elapsed().as_secs_f64() * 1e3;
    println!(
        "{:<44} {core:>9.1} ms\n",
        "  summarize + median_ci + ratio_of_medians"
    );

    let mw = time("mann_whitney (1e6 vs 1e6)", || stats::mann_whitney(&a, &b));
    let tr = time("trend (Mann-Kendall + Theil-Sen)", || stats::trend(&drift));
    let wx = time("wilcoxon_signed_rank (1e6 differences)", || {
        stats::wilcoxon_signed_rank(&d)
    });
    let hl = time("hodges_lehmann_shift (1e12 pairs, exact)", || {
        stats::hodges_lehmann_shift(&a, &b, 0.95)
    });
    let hp = time("hodges_lehmann_paired (5e11 Walsh averages)", || {
        stats::hodges_lehmann_paired(&d, 0.95)
    });
    let out = time("outliers", || stats::outliers(&a).len());
    let gm = time("geometric_mean", || stats::geometric_mean(&a));
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        let k = v.len() / 2;
        *v.select_nth_unstable_by(k, f64::total_cmp).1
    };
    let bs = time("bootstrap_ci (median, 20 resamples only)", || {
        stats::bootstrap_ci(&a, &median, 0.95, 20, 7)
    });

    println!("\nresults:");
    println!("  summary        {s:?}");
    println!("  median_ci      {ci:?}");
    println!("  ratio          {ratio:?}");
    println!("  mann_whitney   {mw:?}");
    println!("  trend          {tr:?}");
    println!("  wilcoxon       {wx:?}");
    println!("  hl shift       {hl:?}");
    println!("  hl paired      {hp:?}");
    println!("  outliers       {out}");
    println!("  geometric_mean {gm:?}");
    println!("  bootstrap_ci   {bs:?}");
}
