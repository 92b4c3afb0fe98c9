//! cmdscope's measuring layer (docs/ARCHITECTURE.md's table): what a
//! session measures and its model (`run::plan`, `run::schedule`,
//! `run::session`, ...), the spawner that makes each run (`exec`), and the
//! importers of other tools' results (`import`). It depends only on the
//! vocabulary crate, whose modules it names at their old paths below; the
//! `cmdscope` crate re-exports these modules under their old paths.

pub use cmdscope_vocab::{eprint_line, error, metrics, output, print_line, stats, units};

pub mod exec;
pub mod import;
pub mod run;
