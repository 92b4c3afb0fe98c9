//! cmdscope's vocabulary layer, the lowest of docs/ARCHITECTURE.md's
//! table: statistics, the metrics and their units, output that never
//! panics, the user's base directories (`dirs`) and the errors that reach
//! the user. It depends on no other
//! cmdscope crate; the `cmdscope` crate re-exports its modules under their
//! old paths (`cmdscope::stats`, `cmdscope::error`, ...).

pub mod dirs;
pub mod error;
pub mod metrics;
pub mod output;
pub mod stats;
pub mod units;
