//! Links the `cmdscope` binary as a position-dependent executable on Linux.
//!
//! As a position-independent one it carried about 24,000 relative
//! relocations (the addresses in its constant tables: clap's, the
//! formatting machinery's), which the dynamic loader applied at every
//! start: reading the relocation table and copying on write the hundred
//! pages they land in. Linked at a fixed address, it has 3, and
//! `cmdscope --version` a hundred page faults and over a quarter of its
//! CPU time fewer (docs/PERFORMANCE.md). The libraries it loads are still
//! placed at random.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
