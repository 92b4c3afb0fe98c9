//! cmdscope: a performance lab for commands.
//!
//! Data flow: CLI -> plan -> schedule -> exec -> sample -> export/store ->
//! analysis -> report. docs/ARCHITECTURE.md draws it and says what each
//! module owns.

pub mod analysis;
pub mod app;
pub mod changes;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod dataset;
pub mod drift;
pub mod error;
pub mod exec;
pub mod explain;
pub mod import;
pub mod input;
pub mod metrics;
pub mod optimize;
pub mod output;
pub mod plan;
pub mod preflight;
pub mod report;
pub mod runner;
pub mod schedule;
pub mod shell_syntax;
pub mod stats;
pub mod store;
pub mod suite;
pub mod svg;
pub mod sweep;
pub mod units;
pub mod workdir;
