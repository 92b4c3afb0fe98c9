//! Measuring a session: which cells (`cells`, `plan`, `shell_syntax`), in
//! which order and how many runs (`schedule`), the machine checks recorded
//! with it (`preflight`), and the loop that drives cells through `exec`
//! into the sinks (`runner`).

pub mod cells;
pub mod plan;
pub mod preflight;
pub mod runner;
pub mod schedule;
pub mod shell_syntax;
