//! cmdscope's answering layer (docs/ARCHITECTURE.md's table): summaries,
//! the one comparison engine, drift, sweeps, concurrency's throughput,
//! change points and the gates (`analysis`), over a session or the store's
//! histories. It depends on the storing crate, whose modules and those
//! below it it names at their old paths below; the `cmdscope` crate
//! re-exports `analysis` under its old path.

pub use cmdscope_store::{
    eprint_line, error, exec, import, metrics, output, print_line, run, stats, store, units,
};

pub mod analysis;
