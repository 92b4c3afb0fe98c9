//! Measuring a session: which cells (`plan`, with the parameter grammar
//! in `parameters`, and `shell_syntax`), in
//! which order and how many runs (`schedule`), the machine checks recorded
//! with it (`preflight`), the loop that drives cells through `exec`
//! (`runner`) and the events it emits (`events`), what it shows meanwhile
//! (`progress`), the result model it fills (`session`), what one
//! benchmark asks for (`request`) and what the session was run with
//! (`settings`).

pub mod ahead;
pub mod concurrent;
pub mod events;
pub mod hooks;
pub mod host;
pub mod isolate;
pub mod parameters;
pub mod plan;
pub mod preflight;
pub mod progress;
pub mod request;
pub mod runner;
pub mod schedule;
pub mod session;
pub mod settings;
pub mod shell_syntax;
