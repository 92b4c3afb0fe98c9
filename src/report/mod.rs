//! Output: the terminal report and the export formats, one file per format.
//!
//! Every rendering of a run reads one typed model, [`Report`], which holds
//! everything already computed: the report layer formats, it does no
//! statistics and decides nothing. The formats written to files implement
//! [`Exporter`]; the terminal report is printed, not written, and is a
//! plain function of the same model (`terminal::render`).

pub mod changes;
pub(crate) mod changes_at;
pub(crate) mod check;
pub(crate) mod comparison;
pub(crate) mod concurrency;
pub(crate) mod csv;
pub(crate) mod doctor;
pub(crate) mod gate;
pub(crate) mod history;
pub mod html;
pub(crate) mod import;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod monitor;
pub(crate) mod paint;
pub(crate) mod pprof;
pub(crate) mod profile;
pub(crate) mod profile_viewers;
pub(crate) mod search;
pub mod site;
pub(crate) mod suite_list;
pub(crate) mod svg;
pub(crate) mod sweep;
pub(crate) mod table;
pub(crate) mod tables;
pub(crate) mod terminal;
pub(crate) mod warning;

use crate::analysis::comparison::Comparison;
use crate::analysis::sweep::Sweep;
use crate::analysis::CellAnalysis;
use crate::error::Result;
use crate::monitor::Counts;
use crate::run::plan::Parameter;
use crate::run::session::Session;
use crate::search::SearchResult;

/// One of the analysis's typed reasons (a comparison's `Note` and its
/// parts, a `Warning`) in words: `report` owns the wording, and Rust lets
/// it implement `Display` only on a type of its own, so on this wrapper
/// (`Words(&note).to_string()`, or `{}` in a format string).
pub struct Words<'a, T: ?Sized>(pub &'a T);

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
    /// Concurrency mode's throughput, comparisons and scaling.
    pub concurrency: Option<&'a crate::analysis::concurrency::Concurrency>,
}

/// The optimum search (`--minimize`/`--maximize`) and what it searched.
#[derive(Clone, Copy)]
pub struct SearchSection<'a> {
    pub result: &'a SearchResult,
    /// Every parameter of the plan, in plan order: the searched grid.
    pub parameters: &'a [Parameter],
    pub maximize: bool,
}

/// A format a report can be written in.
pub trait Exporter {
    /// The report as the file's content.
    fn render(&self, report: &Report) -> Result<String>;
}

/// A small session built by hand for the formats' tests.
#[cfg(test)]
pub(crate) mod fixture {
    use super::Report;
    use crate::analysis::comparison::{self, Comparison};
    use crate::analysis::{self, CellAnalysis};
    use crate::metrics::Metric;
    use crate::run::session::{CellResult, Session};

    /// Wall times of 'fast', about 10 ms; 'slow | grep x' takes twice as
    /// long plus 1 ms, run for run.
    pub const FAST: [f64; 8] = [
        0.010, 0.0102, 0.0098, 0.0101, 0.0099, 0.0100, 0.0103, 0.0097,
    ];

    pub struct Fixture {
        pub session: Session,
        pub analyses: Vec<CellAnalysis>,
        pub comparisons: Vec<Comparison>,
    }

    impl Fixture {
        pub fn report(&self) -> Report<'_> {
            Report {
                session: &self.session,
                analyses: &self.analyses,
                comparisons: &self.comparisons,
                named_reference: None,
                search: None,
                monitor: None,
                sweep: None,
                concurrency: None,
            }
        }
    }

    fn cell(name: &str, walls: &[f64]) -> CellResult {
        let mut r = CellResult::from_wall_times(name, walls);
        r.cell.short_name = name.into();
        r.cell.command = name.into();
        for s in &mut r.samples {
            s.set(Metric::UserTime, 0.002);
            s.set(Metric::SystemTime, 0.001);
            s.set(Metric::PeakRss, 4.0 * 1024.0 * 1024.0);
        }
        r
    }

    /// Two commands, eight interleaved runs each.
    pub fn two_cells() -> Fixture {
        let slow: Vec<f64> = FAST.iter().map(|w| 2.0 * w + 0.001).collect();
        let mut session = Session::empty();
        session.results = vec![cell("fast", &FAST), cell("slow | grep x", &slow)];
        let analyses = analysis::analyse(&session);
        let comparisons = comparison::compare_cells(
            &session.results,
            session.reference,
            session.order,
            session.final_alpha,
            comparison::DEFAULT_PRECISION,
            session.rss_floor,
        );
        Fixture {
            session,
            analyses,
            comparisons,
        }
    }

    /// The mean of `values`.
    pub fn mean(values: &[f64]) -> f64 {
        values.iter().sum::<f64>() / values.len() as f64
    }
}
