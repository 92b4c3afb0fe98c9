//! Measuring a session: which cells (`plan`, `shell_syntax`), in
//! which order and how many runs (`schedule`), the machine checks recorded
//! with it (`preflight`), the loop that drives cells through `exec`
//! (`runner`) and the events it emits (`events`), what it shows meanwhile
//! (`progress`), the result
//! model it fills (`session`) and what the session was run with
//! (`settings`).

pub mod events;
pub mod plan;
pub mod preflight;
pub mod progress;
pub mod runner;
pub mod schedule;
pub mod session;
pub mod settings;
pub mod shell_syntax;
