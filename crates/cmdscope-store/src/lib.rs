//! cmdscope's storing layer (docs/ARCHITECTURE.md's table): the results
//! store (`store`: SQLite and PostgreSQL, the writer process that commits
//! runs as they end, stored sessions, histories, replay and redaction). It
//! depends on the measuring crate (the session model and the events it
//! records), whose modules and those below it it names at their old paths
//! below; the crates above re-export `store` under its old path.

pub use cmdscope_measure::{
    dirs, eprint_line, error, exec, import, metrics, output, print_line, run, stats, units,
};

pub mod store;
