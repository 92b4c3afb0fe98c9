//! Output: the terminal report and the export formats, one file per format.
//!
//! Every rendering of a run reads one typed model, [`Report`], which holds
//! everything already computed: the report layer formats, it does no
//! statistics and decides nothing. The formats written to files implement
//! [`Exporter`]; the terminal report is printed, not written, and is a
//! plain function of the same model (`terminal::render`).

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod search;
pub mod site;
pub mod svg;
pub mod terminal;

use crate::analysis::comparison::Comparison;
use crate::analysis::sweep::Sweep;
use crate::analysis::CellAnalysis;
use crate::error::{Error, Result};
use crate::explain::run_monitor::Counts;
use crate::metrics::Metric;
use crate::run::plan::Parameter;
use crate::run::runner::Session;
use crate::search::SearchResult;

/// A finished (or interrupted) run, as every output reads it.
pub struct Report<'a> {
    pub session: &'a Session,
    /// One per result of the session, in the same order.
    pub analyses: &'a [CellAnalysis],
    /// The engine's comparisons, the search's and the monitor's included.
    pub comparisons: &'a [Comparison],
    /// The result the user named as the reference (`--reference`); None:
    /// the tables relate every command to the fastest (hyperfine's rule).
    pub named_reference: Option<usize>,
    pub search: Option<SearchSection<'a>>,
    /// What `--monitor` counted per run.
    pub monitor: Option<&'a Counts>,
    pub sweep: Option<&'a Sweep>,
}

/// The optimum search (`--minimize`/`--maximize`) and what it searched.
#[derive(Clone, Copy)]
pub struct SearchSection<'a> {
    pub result: &'a SearchResult,
    /// Every parameter of the plan, in plan order: the searched grid.
    pub parameters: &'a [Parameter],
    pub metric: Metric,
    pub maximize: bool,
}

/// A format a report can be written in.
pub trait Exporter {
    /// The report as the file's content.
    fn render(&self, report: &Report) -> Result<String>;
}

/// The sweep's chart (`--plot`), an SVG curve with the interval band.
pub struct SweepSvg;

impl Exporter for SweepSvg {
    fn render(&self, report: &Report) -> Result<String> {
        report
            .sweep
            .map(crate::analysis::sweep::render_svg)
            .ok_or_else(|| Error::Usage("--plot needs a parameter sweep (-P or -L)".into()))
    }
}
