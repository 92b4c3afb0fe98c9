//! cmdscope: a performance lab for commands.
//!
//! Data flow: cli -> commands -> run (plan, schedule, runner) -> exec ->
//! samples -> store and analysis -> search -> report -> output.
//! docs/ARCHITECTURE.md draws it and says what each module owns.

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod error;
pub mod exec;
pub(crate) mod explain;
pub mod import;
pub mod metrics;
pub mod output;
pub mod profile;
pub mod report;
pub mod run;
pub mod search;
pub mod stats;
pub mod store;
pub mod suite;
pub mod units;
