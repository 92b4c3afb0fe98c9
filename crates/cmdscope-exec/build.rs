//! Builds the spawner helper (src/exec/spawner.c), a static C program that
//! cmdscope embeds and starts once per session: see the comment at its top.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let source = "src/exec/spawner.c";
    println!("cargo:rerun-if-changed={source}");
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("cmdscope-spawner");
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let build = |extra: &[&str]| {
        Command::new(compiler.path())
            .args(["-O2", "-Wall", "-Wextra", "-o"])
            .arg(&out)
            .arg(source)
            .args(extra)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    // Static: no dynamic loader, no shared libraries, so the fewest resident
    // pages. Dynamic only where no static C library is installed (the floor
    // is then larger, and still measured). Stripped: cmdscope writes the
    // whole program into a file (a memory file, or its cache's copy once),
    // and the symbols were a tenth of it.
    if !build(&["-static", "-s"]) {
        println!(
            "cargo:warning=cannot link the spawner statically (no static C library?); \
             linking it dynamically: small commands' peak memory will read higher"
        );
        if !build(&["-s"]) {
            panic!("cannot compile {source} with {}", compiler.path().display());
        }
    }
    // The cached copy's name carries a hash of the bytes (spawn/program.rs):
    // a build whose spawner differs never execs another build's copy (two
    // programs of one size colliding in 64 bits is not a practical risk).
    // Std's hasher may change with the compiler: identical bytes then get
    // a second copy, nothing worse.
    let bytes = std::fs::read(&out).expect("read the spawner just built");
    let mut hasher = std::hash::DefaultHasher::new();
    bytes.hash(&mut hasher);
    println!(
        "cargo:rustc-env=CMDSCOPE_SPAWNER_NAME=spawner-{:016x}-{}",
        hasher.finish(),
        bytes.len()
    );
}
