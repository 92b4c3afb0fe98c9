//! Measuring a session: which cells (`plan`, with the parameter grammar
//! in `parameters`, and `shell_syntax`), in
//! which order and how many runs (`schedule`), the machine checks recorded
//! with it (`preflight`), the loop that drives cells through `exec`
//! (`runner`, making each run and hook through an `executor`) and the
//! events it emits (`events`), what it shows meanwhile
//! (`progress`), the result model it fills (`session`), what one
//! benchmark asks for (`request`) and what the session was run with
//! (`settings`).

pub(crate) mod progress;
pub(crate) mod runner;

// The measuring half of `run` is in the cmdscope-measure crate.
pub use cmdscope_measure::run::{
    ahead, concurrent, counted, events, executor, hooks, host, isolate, parameters, plan,
    preflight, request, schedule, session, settings, shell_syntax,
};
