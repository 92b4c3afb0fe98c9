//! `cmdscope run`: one benchmark (`bench`), or with `--suite` every
//! benchmark of a suite file, each run as one benchmark (`suite`).

pub(crate) mod bench;
pub(crate) mod suite;

use crate::cli::run::RunArgs;
use crate::error::Result;

pub fn run(args: &RunArgs) -> Result<i32> {
    if args.suite.suite.is_some() {
        suite::run(args)
    } else {
        bench::run(args)
    }
}
