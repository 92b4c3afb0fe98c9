//! `cmdscope status --run ID`: which partitions of a suite run reported,
//! which are missing (and where and when each was last seen), and how many
//! cells and runs the store holds for the run (`suite::status` works it out).

use crate::cli::store::{StatusArgs, StatusFormat};
use crate::error::{exit, Result};
use crate::store::record::open_read_only;
use crate::suite::status::{json, read, text};

pub fn run(args: &StatusArgs) -> Result<i32> {
    let mut store = open_read_only(args.store.store.as_deref())?;
    let s = read(&mut store, &args.run)?;
    match args.format {
        StatusFormat::Text => crate::output::print(&text(&s)),
        StatusFormat::Json => crate::output::print(&json(&s)),
    }
    Ok(if s.complete { exit::OK } else { exit::FAILURE })
}
