//! cmdscope's execution, part of the measuring layer (docs/ARCHITECTURE.md's
//! table): the spawner helper (`exec/spawner.c`, compiled by this crate's
//! build script) that starts each measured run, the kernel's accounting,
//! perf counters and the cache simulator. It depends only on the
//! vocabulary crate, whose modules it names at their old paths below; the
//! crates above re-export `exec` under its old path.

pub use cmdscope_vocab::{dirs, eprint_line, error, metrics, output, print_line, stats, units};

pub mod exec;
