//! The measuring half of `run`: which cells (`plan`, with the parameter
//! grammar in `parameters`, and `shell_syntax`), in which order and how
//! many runs (`schedule`), the machine checks recorded with it
//! (`preflight`), how each run and hook is made (`executor`, `hooks`,
//! `ahead`, `concurrent`), the events a session emits (`events`), the
//! result model it fills (`session`), what one benchmark asks for
//! (`request`), what the session was run with (`settings`) and what
//! counts a counted session's runs (`counted`). The loop
//! that drives them (`runner`) and what it shows (`progress`) are in the
//! `cmdscope` crate's `run`.

pub mod ahead;
pub mod concurrent;
pub mod counted;
pub mod events;
pub mod executor;
pub mod hooks;
pub mod host;
pub mod isolate;
pub mod parameters;
pub mod plan;
pub mod preflight;
pub mod request;
pub mod schedule;
pub mod session;
pub mod settings;
pub mod shell_syntax;
