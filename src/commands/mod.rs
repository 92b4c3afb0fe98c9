//! The subcommands, one module each, from parsed arguments to an exit
//! code: `run`, `compare`, `explain`, the store's readers and writers
//! (`history`, `check`, `changes`, `report`, `import`, `status`), `suite`,
//! `doctor`, and `completions` and `man` (generated from the parser).
//! Nothing below this layer imports it; shared helpers here.

pub mod changes;
pub mod check;
pub mod compare;
pub mod completions;
pub mod doctor;
pub mod explain;
pub mod history;
pub mod import;
pub mod report;
pub mod run;
pub mod status;
pub mod suite;

use crate::error::{Error, Result};
use crate::store::{Filter, Store};

/// Session filter from the shared flags.
pub fn filter(args: &crate::cli::SessionFilterArgs) -> Result<Filter> {
    Ok(Filter {
        labels: crate::store::parse_labels(&args.labels)?,
        machine: args.machine.clone(),
        ..Filter::default()
    })
}

/// "no sessions in store X" with what was asked.
pub fn nothing_found(store: &Store, what: &str) -> Error {
    Error::Usage(format!("no {what} in store '{}'", store.location()))
}
