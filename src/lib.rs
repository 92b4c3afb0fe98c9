//! cmdscope: a performance lab for commands.
//!
//! Data flow: CLI -> plan -> schedule -> exec -> sample -> export/store ->
//! analysis -> report. See ../shared/ARCHITECTURE.md.

pub mod compare;
pub mod dataset;
pub mod error;
pub mod import;
pub mod metrics;
pub mod stats;
