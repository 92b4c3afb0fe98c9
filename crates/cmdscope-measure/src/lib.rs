//! cmdscope's measuring layer (docs/ARCHITECTURE.md's table): what a
//! session measures and its model (`run::plan`, `run::schedule`,
//! `run::session`, ...), how each run is made through `exec` (the
//! cmdscope-exec crate), and the importers of other tools' results
//! (`import`). It depends on the execution and vocabulary crates, whose
//! modules it names at their old paths below; the `cmdscope` crate
//! re-exports these modules under their old paths.

pub use cmdscope_exec::exec;
pub use cmdscope_vocab::{dirs, eprint_line, error, metrics, output, print_line, stats, units};

pub mod import;
pub mod run;
