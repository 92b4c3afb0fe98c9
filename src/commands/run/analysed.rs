//! The one analysis of a session, for a live `run` and for `report`'s
//! replay of a stored one alike: a function of what is stored with the
//! session (its `Settings`, the `Session`, and the search's result and the
//! monitor's counts where there are), so that both give the same
//! [`Report`], and so the same terminal report and exports.

use crate::analysis::comparison::{self, Comparison};
use crate::analysis::sweep::Sweep;
use crate::analysis::{self, CellAnalysis};
use crate::error::Result;
use crate::monitor::Counts;
use crate::report::terminal::Wording;
use crate::report::{Report, SearchSection};
use crate::run::plan::Cell;
use crate::run::session::Session;
use crate::run::settings::Settings;
use crate::search::SearchResult;

/// An optimum search's result and the grid's cells it names by index.
#[derive(Clone, Copy)]
pub struct Searched<'a> {
    pub result: &'a SearchResult,
    pub cells: &'a [Cell],
}

/// The answers drawn from the measurements.
pub struct Analysed {
    pub analyses: Vec<CellAnalysis>,
    pub comparisons: Vec<Comparison>,
    pub sweep: Option<Sweep>,
    pub concurrency: Option<crate::analysis::concurrency::Concurrency>,
}

/// Summaries, comparisons (the search's and the monitor's included), the
/// sweep and concurrency mode's throughput; `--remove-outliers` takes the
/// outliers out of `session` first. `rules` are the warnings' (the front
/// door's are hyperfine's).
pub fn analyse(
    settings: &Settings,
    rules: analysis::warning::Rules,
    session: &mut Session,
    search: Option<Searched>,
    monitor: Option<&Counts>,
) -> Result<Analysed> {
    let source = crate::monitor::metric_source(settings, monitor)?;
    let precision = settings.precision.unwrap_or(comparison::DEFAULT_PRECISION);
    if settings.remove_outliers {
        analysis::remove_outliers(session);
    }
    let session = &*session;
    let analyses: Vec<CellAnalysis> = (session.results.iter())
        .map(|r| analysis::analyse_reported(r, session, rules, session.results.len()))
        .collect();
    let mut comparisons = comparison::compare_cells(
        &session.results,
        session.reference,
        session.order,
        session.final_alpha,
        precision,
        session.rss_floor,
    );
    if session.simulated.is_some() {
        // The kernel's figures of a simulated run (times, memory, faults,
        // switches, I/O) are the simulator's process's: only its counts
        // are compared.
        comparisons
            .retain(|c| crate::metrics::Metric::from_name(c.metric).is_some_and(|m| m.simulated()));
    }
    if settings.until_decided {
        comparisons
            .iter_mut()
            .for_each(comparison::advise_longer_max_time);
    }
    if let Some(s) = search {
        // The searched metric's comparisons are the search's own (unpaired:
        // runs of different rounds are not pairs), so the summary and the
        // search's set come from one analysis.
        comparisons.retain(|c| c.metric != source.name());
        comparisons.extend(s.result.comparisons(s.cells));
    }
    if let Some(c) = monitor {
        let mut counted = crate::monitor::compare(c, session, precision);
        if search.is_some() {
            // The searched count's comparisons are the search's own, as
            // for a metric.
            counted.retain(|c| c.metric != source.name());
        }
        comparisons.extend(counted);
    }
    let maximize = settings.search.as_ref().is_some_and(|s| s.maximize);
    let mut sweep = crate::analysis::sweep::build(
        session,
        &analyses,
        &settings.parameters,
        &crate::analysis::sweep::Measure {
            source: &source,
            series: monitor.map(|c| c as &dyn crate::analysis::source::RunSeries),
            maximize,
        },
        &settings.commands,
        &crate::analysis::sweep::SetRules {
            comparisons: &comparisons,
            alpha: session.final_alpha,
            precision,
        },
    );
    if let (Some(s), Some(sweep)) = (search, sweep.as_mut()) {
        crate::search::mark_sweep(s.result, sweep);
    }
    Ok(Analysed {
        concurrency: crate::analysis::concurrency::analyse(session, precision),
        analyses,
        comparisons,
        sweep,
    })
}

/// The report every output reads, of a session and its analysis.
pub fn report<'a>(
    settings: &'a Settings,
    session: &'a Session,
    analysed: &'a Analysed,
    search: Option<&'a SearchResult>,
    monitor: Option<&'a Counts>,
) -> Report<'a> {
    Report {
        session,
        analyses: &analysed.analyses,
        comparisons: &analysed.comparisons,
        named_reference: settings.named_reference.then_some(session.reference),
        search: search.map(|result| SearchSection {
            result,
            parameters: &settings.parameters,
            maximize: settings.search.as_ref().is_some_and(|s| s.maximize),
        }),
        monitor,
        sweep: analysed.sweep.as_ref(),
        concurrency: analysed.concurrency.as_ref(),
    }
}

/// Prints the terminal report, each part to its stream.
pub fn print(report: &Report, paint: crate::report::paint::Paint, wording: Wording) {
    for part in crate::report::terminal::render_parts(report, paint, wording) {
        if part.stderr {
            crate::output::print_err_text(&part.text);
        } else {
            crate::output::print(&part.text);
        }
    }
}
