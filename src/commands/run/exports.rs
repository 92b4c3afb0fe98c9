//! `run`'s exports: the one table of `--export-*` flags, their paths
//! checked before the first run (with `--plot` and `--output`, against the
//! store and each other), and the files written after the last.

use std::path::PathBuf;

use crate::cli::run::{ExportFiles, RunArgs, SortOrder};
use crate::error::{Error, OptionError, Result};
use crate::exec::Output;
use crate::output::{same_file, Named};
use crate::report::csv::{Columns, Csv};
use crate::report::json::Json;
use crate::report::markdown::{Markup, Rows, Table};
use crate::report::sweep::SweepSvg;
use crate::report::{Exporter, Report};
use crate::run::plan::Parameter;
use crate::run::request::Request;
use crate::run::settings::Export;
use crate::store::record;

/// What an `--output` value names.
pub(super) fn parse_output(text: &str) -> Output {
    match text {
        "null" => Output::Null,
        "pipe" => Output::Pipe,
        "inherit" => Output::Inherit,
        path => Output::File(PathBuf::from(path)),
    }
}

/// One `--export-*` flag: the format (as the session's settings name it),
/// where the flag's path is, and the format's exporter (markup tables in
/// the rows' order).
pub(crate) struct ExportFlag {
    pub(super) format: &'static str,
    path: fn(&ExportFiles) -> &Option<PathBuf>,
    exporter: fn(Layout) -> Box<dyn Exporter>,
}

/// How the tables are laid out: the rows' order (`--sort`) and, for the
/// CSV, whose column order (hyperfine's in its front door).
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    rows: Rows,
    csv: Columns,
}

impl Layout {
    /// By `--sort`, in hyperfine's columns in its front door.
    pub(crate) fn of(sort: SortOrder, hyperfine_words: bool) -> Layout {
        Layout {
            rows: match sort {
                SortOrder::Auto | SortOrder::Command => Rows::Command,
                SortOrder::MeanTime => Rows::MeanTime,
            },
            csv: if hyperfine_words {
                Columns::Hyperfine
            } else {
                Columns::Cmdscope
            },
        }
    }
}

/// Every `--export-*` flag, in the order exports are written: the one list
/// that checking, writing and storing exports iterate (`--plot`, drawn
/// only for a sweep, comes after them).
const EXPORT_FLAGS: [ExportFlag; 5] = [
    ExportFlag {
        format: "json",
        path: |f| &f.export_json,
        exporter: |_| Box::new(Json),
    },
    ExportFlag {
        format: "csv",
        path: |f| &f.export_csv,
        exporter: |layout| {
            Box::new(Csv {
                columns: layout.csv,
            })
        },
    },
    ExportFlag {
        format: "markdown",
        path: |f| &f.export_markdown,
        exporter: |layout| {
            Box::new(Table {
                markup: Markup::Markdown,
                rows: layout.rows,
            })
        },
    },
    ExportFlag {
        format: "asciidoc",
        path: |f| &f.export_asciidoc,
        exporter: |layout| {
            Box::new(Table {
                markup: Markup::AsciiDoc,
                rows: layout.rows,
            })
        },
    },
    ExportFlag {
        format: "orgmode",
        path: |f| &f.export_orgmode,
        exporter: |layout| {
            Box::new(Table {
                markup: Markup::OrgMode,
                rows: layout.rows,
            })
        },
    },
];

/// The export files asked for: each flag given, with its path.
pub(crate) fn export_paths(
    files: &ExportFiles,
) -> impl Iterator<Item = (&'static ExportFlag, &PathBuf)> {
    EXPORT_FLAGS
        .iter()
        .filter_map(move |flag| Some((flag, (flag.path)(files).as_ref()?)))
}

/// The `--export-*` flags given, by name.
pub fn exports_given(args: &RunArgs) -> Vec<String> {
    export_paths(&args.report.exports)
        .map(|(flag, _)| format!("--export-{}", flag.format))
        .collect()
}

/// The export files, each named by its flag, for the check that no output
/// is the store or another output.
pub(crate) fn named_exports(files: &ExportFiles) -> Vec<Named> {
    export_paths(files)
        .map(|(flag, path)| Named::flag(&format!("--export-{}", flag.format), path))
        .collect()
}

/// The export paths checked writable, at most one of them standard
/// output; returns how many go there.
pub(crate) fn check_export_files(files: &ExportFiles) -> Result<usize> {
    let stdout_exports = export_paths(files)
        .filter(|(_, path)| crate::output::is_stdout(path))
        .count();
    if stdout_exports > 1 {
        return Err(OptionError::OneStdoutExport.into());
    }
    for (_, path) in export_paths(files) {
        crate::output::check_writable(path)?;
    }
    Ok(stdout_exports)
}

/// The files a session writes after its last run, decided before its
/// first: each export asked for, `--plot`'s chart, and the tables' layout.
pub(super) struct Exports {
    files: ExportFiles,
    plot: Option<PathBuf>,
    layout: Layout,
}

impl Exports {
    /// `--plot` and the `--export-*` paths, checked writable (and apart
    /// from the store and each other) before the first run; with how many
    /// exports go to stdout.
    pub(super) fn decide(
        args: &RunArgs,
        r: &Request,
        parameters: &[Parameter],
    ) -> Result<(Exports, usize)> {
        if args.report.plot.is_some() && parameters.is_empty() {
            return Err(OptionError::PlotNeedsSweep.into());
        }
        if let Some(p) = &args.report.plot {
            crate::output::check_writable(p)?;
        }
        let stdout_exports = check_export_files(&args.report.exports)?;
        check_collisions(args, r)?;
        let exports = Exports {
            files: args.report.exports.clone(),
            plot: args.report.plot.clone(),
            layout: Layout::of(args.report.sort, args.report.hyperfine_words),
        };
        Ok((exports, stdout_exports))
    }

    /// Whether any file was asked for (the chart included).
    pub(super) fn asked(&self) -> bool {
        export_paths(&self.files).next().is_some() || self.plot.is_some()
    }

    /// The files as the session's settings store them, the chart last.
    pub(super) fn stored(&self) -> Vec<Export> {
        export_paths(&self.files)
            .map(|(flag, path)| (flag.format, path))
            .chain(self.plot.iter().map(|path| ("svg", path)))
            .map(|(format, path)| Export {
                format: format.to_string(),
                path: path.display().to_string(),
            })
            .collect()
    }

    /// Writes every file, in order; returns the first error (the others
    /// are written all the same).
    pub(super) fn write(&self, report: &Report) -> Option<Error> {
        write_exports(&self.files, self.layout, self.plot.as_ref(), report)
    }
}

/// Writes every export of `files` (and the sweep's chart to `plot`), in
/// order; returns the first error (the others are written all the same).
pub(crate) fn write_exports(
    files: &ExportFiles,
    layout: Layout,
    plot: Option<&PathBuf>,
    report: &Report,
) -> Option<Error> {
    // Exports are written whatever happened, so an interrupted or failed
    // session still leaves its finished runs behind; but a session that
    // failed before its first run leaves existing exports as they were.
    let session = report.session;
    let measured = session.results.iter().any(|r| !r.samples.is_empty());
    if !measured && session.failure.is_some() {
        return None;
    }
    // The chart only when there is a sweep to draw.
    let plot = plot.filter(|_| report.sweep.is_some());
    let exporters = export_paths(files)
        .map(|(flag, path)| (path, (flag.exporter)(layout)))
        .chain(plot.map(|path| (path, Box::new(SweepSvg) as Box<dyn Exporter>)));
    let mut error = None;
    for (path, exporter) in exporters {
        if let Err(e) = exporter
            .render(report)
            .and_then(|text| crate::output::write_file(path, text.as_bytes()))
        {
            error.get_or_insert(e);
        }
    }
    error
}

/// Refuses, before the first run, an export, `--plot` or `--output` file
/// that is the store (or one of its journal files) or another output: the
/// later write would destroy the earlier file. The commands' `--output`
/// files may be one file among themselves (each run empties it).
fn check_collisions(args: &RunArgs, r: &Request) -> Result<()> {
    let mut outputs: Vec<Named> = named_exports(&args.report.exports)
        .into_iter()
        .chain(
            args.report
                .plot
                .iter()
                .map(|path| Named::flag("--plot", path)),
        )
        .collect();
    let mut runs_write: Vec<&std::path::Path> = Vec::new();
    for o in &r.output {
        let path = std::path::Path::new(o.as_str());
        if matches!(parse_output(o), Output::File(_))
            && !runs_write.iter().any(|w| same_file(w, path))
        {
            runs_write.push(path);
        }
    }
    outputs.extend(runs_write.into_iter().map(|p| Named::flag("--output", p)));
    record::check_outputs(args.no_store, args.store.store.as_deref(), &outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_export_flag_is_in_the_one_table() {
        use clap::{CommandFactory, Parser};
        let cli = crate::cli::Cli::command();
        let run = cli.find_subcommand("run").unwrap();
        let flags: Vec<&str> = run
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|l| l.starts_with("export-"))
            .collect();
        assert_eq!(flags.len(), EXPORT_FLAGS.len(), "{flags:?}");
        for flag in flags {
            let given = format!("--{flag}");
            let parsed =
                crate::cli::Cli::try_parse_from(["cmdscope", "run", &given, "x.out", "true"])
                    .unwrap();
            let crate::cli::Command::Run(args) = parsed.command else {
                unreachable!()
            };
            let asked: Vec<_> = export_paths(&args.report.exports).collect();
            assert_eq!(asked.len(), 1, "{flag}");
            assert_eq!(asked[0].1, &PathBuf::from("x.out"), "{flag}");
            assert_eq!(flag, format!("export-{}", asked[0].0.format));
            assert_eq!(exports_given(&args), [given.as_str()]);
        }
    }
}
