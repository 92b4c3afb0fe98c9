//! `cmdscope compare FILE...`: a benchstat-style table across saved results.
//!
//! Reads the files (`import`), checks the options, builds the tables
//! (`analysis::tables`: the model, the comparisons and the gate), renders
//! them in the requested format (`report::tables`), prints them and turns
//! a failed gate into exit code 1. It holds no statistics and no formats.

use crate::analysis::tables::{self, CompareOptions, Tables};
use crate::cli::compare::{CompareArgs, CompareFormat};
use crate::error::{exit, Error, GateError};
use crate::import::dataset::Dataset;
use crate::report::tables::{
    gate_failure, gate_failures, gate_not_compared, render_csv, render_json, render_markdown,
    render_text, unjudged,
};

/// The tables of `datasets` under `opts`, once the options are checked.
fn compare(datasets: &[Dataset], opts: &CompareOptions) -> Result<Tables, Error> {
    validate(datasets, opts)?;
    Ok(tables::build(datasets, opts))
}

fn validate(datasets: &[Dataset], opts: &CompareOptions) -> Result<(), Error> {
    if datasets.is_empty() {
        return Err(GateError::NoResultsFiles.into());
    }
    crate::cli::check_alpha(opts.alpha)?;
    if !(opts.level > 0.0 && opts.level < 1.0) {
        return Err(GateError::Level(opts.level).into());
    }
    if let Some(pct) = opts.fail_if_slower {
        if !(pct.is_finite() && pct >= 0.0) {
            return Err(GateError::Threshold(pct).into());
        }
    }
    if let Some(metric) = &opts.metric {
        check_metric(datasets, metric)?;
    }
    Ok(())
}

/// `--metric NAME` names a metric of the files, one where lower is better
/// (the gate judges slowdowns).
fn check_metric(datasets: &[Dataset], metric: &str) -> Result<(), Error> {
    let series = || {
        datasets
            .iter()
            .flat_map(|d| &d.benchmarks)
            .flat_map(|b| &b.series)
    };
    match series().find(|s| s.metric == metric) {
        Some(s) if s.higher_is_better => Err(GateError::HigherIsBetter(metric.into()).into()),
        Some(_) => Ok(()),
        None => {
            let mut names: Vec<&str> = series()
                .filter(|s| !s.higher_is_better)
                .map(|s| s.metric.as_str())
                .collect();
            names.sort_unstable();
            names.dedup();
            Err(GateError::MetricNotInFiles {
                metric: metric.into(),
                held: names.iter().map(|n| n.to_string()).collect(),
            }
            .into())
        }
    }
}

/// `cmdscope compare FILE...`: a benchstat-style table across saved results.
pub fn run(args: &CompareArgs) -> crate::error::Result<i32> {
    let datasets = args
        .files
        .iter()
        .map(|p| crate::import::read_dataset(p))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let opts = CompareOptions {
        fail_if_slower: args.fail_if_slower,
        metric: args.metric.clone(),
        alpha: args.alpha,
        gate: super::gate_options(&args.gate),
        ..CompareOptions::default()
    };
    let out = compare(&datasets, &opts)?;
    // A gate that judged nothing would pass on nothing.
    if !out.unjudged.is_empty() {
        return Err(GateError::Unjudged(unjudged(&out.unjudged)).into());
    }
    // Text and Markdown end with the gate's section; for CSV and JSON the
    // failing rows are marked by `gate_failed` and the lines go to stderr.
    let rendered = match args.format {
        CompareFormat::Text => render_text(&out),
        CompareFormat::Markdown => render_markdown(&out),
        CompareFormat::Csv => render_csv(&out)?,
        CompareFormat::Json => render_json(&out)?,
    };
    // Names and values come from files: shown, never obeyed by the terminal.
    match args.format {
        CompareFormat::Json => crate::output::print(&rendered),
        _ => crate::output::print(&crate::output::escape_controls(&rendered)),
    }
    if out.gate_failed() {
        if matches!(args.format, CompareFormat::Csv | CompareFormat::Json) {
            for f in &gate_failures(&out) {
                crate::eprint_line!(
                    "cmdscope: regression: {}",
                    crate::output::escape_controls(f)
                );
            }
            for f in &gate_not_compared(&out) {
                crate::eprint_line!("cmdscope: {}", crate::output::escape_controls(f));
            }
        }
        return Err(Error::Failed(gate_failure(&out)));
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests;
