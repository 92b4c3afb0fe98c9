//! cmdscope: a performance lab for commands.
//!
//! Data flow: cli -> commands -> run (plan, schedule, runner) -> exec ->
//! samples -> store and analysis -> search -> report -> output.
//! docs/ARCHITECTURE.md draws it and says what each module owns.

// The layers below are crates of their own; their modules keep their
// paths here.
pub use cmdscope_answer::analysis;
pub use cmdscope_measure::{exec, import, run};
pub use cmdscope_store::store;
pub use cmdscope_vocab::{dirs, eprint_line, error, metrics, output, print_line, stats, units};

pub mod cli;
pub mod commands;
pub(crate) mod explain;
pub(crate) mod monitor;
pub mod profile;
pub mod report;
pub(crate) mod runner;
pub mod search;
pub mod suite;
