//! Why an output file, or where stdout goes, was refused.

/// Outputs that would destroy a file cmdscope reads or writes (exit 2);
/// `what` and `kept` are the files' roles ("the --export-json file").
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OutputError {
    #[error("{what} is {kept}: writing it would destroy it; give another file")]
    WouldDestroy { what: String, kept: String },
    #[error("{earlier} and {later} are the same file: one would replace the other; give each its own file")]
    SameFile { earlier: String, later: String },
    #[error("{0} is an SQLite database (a results store?): writing it would destroy it; give another file")]
    Database(String),
    #[error("{what} is {kept}: what cmdscope prints would destroy it; redirect it elsewhere")]
    StdoutWouldDestroy { what: String, kept: String },
}
