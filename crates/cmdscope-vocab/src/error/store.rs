//! Why what was asked of a results store cannot be answered.

/// A query or label a store cannot serve as asked (exit 2); `store` is its
/// location, without a password.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StoreQueryError {
    /// `what`: what was looked for ("session #3", "sessions").
    #[error("no {what} in store '{store}'")]
    NothingFound { what: String, store: String },
    /// `known`: the metrics a history can be read for, comma-separated.
    #[error("unknown metric '{name}'; one of: {known}")]
    UnknownMetric { name: String, known: String },
    #[error("labels are KEY=VALUE (e.g. commit=abc123), got '{0}'")]
    BadLabel(String),
    #[error("this command needs a store; drop --no-store")]
    NeedsStore,
    /// `why`: the stored settings' problem, in the flag's words without
    /// the flag's dashes.
    #[error("store '{store}': session #{session} has invalid stored settings (sessions.settings): {why}")]
    BadSettings {
        store: String,
        session: i64,
        why: String,
    },
    /// A session replayed whose part the store does not keep: `what` it
    /// did, with what is missing ("searched an optimum (its race)").
    #[error("store '{store}': session #{session} {what}, which the store does not keep: its terminal report and exports cannot be made again (its HTML report shows what is stored)")]
    NotReplayed {
        store: String,
        session: i64,
        what: String,
    },
    /// `why`: the stored race's problem, in the JSON reader's words.
    #[error(
        "store '{store}': session #{session} has an invalid stored race (sessions.race): {why}"
    )]
    BadRace {
        store: String,
        session: i64,
        why: String,
    },
    /// A search session stored before the store kept the search's race.
    #[error("store '{store}': session #{session} searched an optimum before the store kept the search's race (store schema 9): its terminal report and exports cannot be made again (its HTML report shows the search's answer)")]
    RaceNotKept { store: String, session: i64 },
    /// A search session whose race, raced again on its stored runs, asked
    /// at `round` for other values than the stored race measured (a race
    /// that no longer decides as the one that ran).
    #[error("store '{store}': session #{session}'s stored race does not replay: at round {round} this cmdscope's search asks for other values or runs than were measured (its HTML report shows the search's answer)")]
    RaceDiffers {
        store: String,
        session: i64,
        round: usize,
    },
}
