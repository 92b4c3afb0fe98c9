// A Rust program with one hot function called from a caller, for the
// profile tests; built as a release binary without frame pointers.
use std::hint::black_box;

#[inline(never)]
fn hot_work(n: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..n {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

#[inline(never)]
fn caller_of_hot_work(n: u64) -> u64 {
    hot_work(black_box(n)) ^ 7
}

fn main() {
    let n = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000_000);
    if caller_of_hot_work(n) == 42 {
        std::process::exit(3);
    }
}
