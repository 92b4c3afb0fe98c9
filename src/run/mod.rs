//! Measuring a session: which cells (`plan`, with the parameter grammar
//! in `parameters`, and `shell_syntax`), in
//! which order and how many runs (`schedule`), the machine checks recorded
//! with it (`preflight`), the loop that drives cells through `exec`
//! (`runner`, making each run and hook through an `executor`) and the
//! events it emits (`events`), what it shows meanwhile
//! (`progress`), the result model it fills (`session`), what one
//! benchmark asks for (`request`) and what the session was run with
//! (`settings`).

pub(crate) mod ahead;
pub(crate) mod concurrent;
pub(crate) mod events;
pub(crate) mod executor;
pub(crate) mod hooks;
pub(crate) mod host;
pub mod isolate;
pub(crate) mod parameters;
pub mod plan;
pub(crate) mod preflight;
pub(crate) mod progress;
pub(crate) mod request;
pub(crate) mod runner;
pub(crate) mod schedule;
pub(crate) mod session;
pub(crate) mod settings;
pub(crate) mod shell_syntax;
