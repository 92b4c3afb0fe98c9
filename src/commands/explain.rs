//! `cmdscope explain`: checks the options, traces every cell planned as
//! `run` plans them (`explain::trace_cell`), writes the JSON first and
//! prints the report last.

use crate::cli::explain::ExplainArgs;
use crate::error::{exit, Error, ExecError, ExplainError, ProfileError, Result};
use crate::exec::signals;
use crate::explain;

pub fn run(args: &ExplainArgs) -> Result<i32> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(ExplainError::UnsupportedPlatform.into());
    }
    let cells = crate::cli::cells::explain_cells(args)?;
    if args.profile {
        return profile(args, &cells);
    }
    let opts = explain::Options {
        monitor: args.monitor.clone(),
        matches: args.matches.clone(),
        show_output: args.show_output,
        grace: crate::cli::seconds(args.monitor_grace, "--monitor-grace", true)?,
        wait: crate::cli::seconds(args.monitor_wait, "--monitor-wait", true)?,
        timeout: args
            .timeout
            .map(|t| crate::cli::seconds(t, "--timeout", false))
            .transpose()?,
    };
    crate::monitor::process::compile(&args.matches)?;
    if let Some(path) = &args.json {
        crate::output::check_writable(path)?;
    }
    // Every cell's program and user are checked before the first trace.
    for cell in &cells {
        let program = cell.argv.first().ok_or(ExecError::EmptyCommand)?;
        crate::exec::resolve_program(program)?;
        if let Some(u) = &cell.variant.user {
            crate::exec::resolve_user(u)?;
        }
    }

    signals::install();
    let mut explained = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        match explain::trace_cell(i, cell, &opts)? {
            Some(x) => {
                let stop = x.trace.interrupted;
                explained.push(x);
                if stop {
                    break;
                }
            }
            None => {
                crate::eprint_line!("cmdscope: interrupted before the command started");
                return Ok(exit::INTERRUPTED);
            }
        }
    }
    let interrupted = explained.iter().any(|x| x.trace.interrupted);

    let json_to_stdout = args.json.as_deref().is_some_and(crate::output::is_stdout);
    let several = cells.len() > 1;
    // The file first: the terminal's reader may be gone (`| head`).
    if let Some(path) = &args.json {
        let doc = if several {
            explain::variants::json(&explained)
        } else {
            explained
                .first()
                .map(explain::json::render)
                .unwrap_or_default()
        };
        crate::output::write_file(path, &doc)?;
    }
    if !json_to_stdout {
        let text = if several {
            explain::variants::render(&explained, args.top)
        } else {
            explained
                .first()
                .map(|x| explain::render::render(x, args.top, args.full_tree))
                .unwrap_or_default()
        };
        // Program names and arguments come from the traced command.
        crate::output::print(&crate::output::escape_controls(&text));
    }
    if interrupted {
        crate::eprint_line!(
            "cmdscope: interrupted; the traced command was killed (the report above is partial)"
        );
        return Ok(exit::INTERRUPTED);
    }
    Ok(exit::OK)
}

/// `explain --profile`: samples every cell in interleaved blocks, writes
/// the files and the JSON first, prints the report last.
fn profile(args: &ExplainArgs, cells: &[crate::run::plan::Cell]) -> Result<i32> {
    // Checked before any run, as `run --simulate` checks it.
    let simulate = args
        .simulate
        .then(|| {
            let (i1, d1, ll) = args.caches.geometry();
            crate::exec::simulate::Simulation::find("--simulate", &i1, &d1, &ll)
        })
        .transpose()?;
    if simulate.is_none() && args.runs.is_some_and(|n| n < 3) {
        return Err(ProfileError::NeedsThreeRuns.into());
    }
    let opts = crate::profile::Options {
        runs: args.runs.map_or(
            if simulate.is_some() {
                crate::profile::simulated::DEFAULT_RUNS
            } else {
                crate::profile::DEFAULT_RUNS
            },
            |n| n as usize,
        ),
        frequency: args.frequency.unwrap_or(crate::profile::DEFAULT_FREQUENCY),
        timeout: args
            .timeout
            .map(|t| crate::cli::seconds(t, "--timeout", false))
            .transpose()?,
        force_software: std::env::var_os("CMDSCOPE_PROFILE_SOFTWARE").is_some(),
        dwarf: args.unwind == "dwarf",
        seed: 0x5eed,
        raise_rate: args.runs.is_none() && args.frequency.is_none(),
        jit_symbols: args.jit_symbols,
        simulate,
        raise_runs: args.runs.is_none(),
    };
    // Every output is checked before the first run.
    for path in [&args.json, &args.speedscope, &args.firefox_profile]
        .into_iter()
        .flatten()
    {
        crate::output::check_writable(path)?;
    }
    if let Some(dir) = &args.flamegraph {
        crate::output::check_writable_dir(dir)?;
    }
    signals::install();
    let profile = match crate::profile::profile_cells(cells, &opts) {
        Err(Error::Interrupted) => {
            crate::eprint_line!("cmdscope: interrupted before a block of runs finished");
            return Ok(exit::INTERRUPTED);
        }
        other => other?,
    };
    if let Some(dir) = &args.flamegraph {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.clone(),
            source,
        })?;
        for (name, bytes) in crate::report::profile::files(&profile)? {
            crate::output::replace_in_dir(dir, &name, &bytes)?;
        }
    }
    if let Some(path) = &args.speedscope {
        crate::output::write_file(path, &crate::report::profile_viewers::speedscope(&profile))?;
    }
    if let Some(path) = &args.firefox_profile {
        crate::output::write_file(path, &crate::report::profile_viewers::firefox(&profile))?;
    }
    if let Some(path) = &args.json {
        let text = crate::report::profile::document(&profile);
        crate::output::write_file(path, text.as_bytes())?;
    }
    let to_stdout = [&args.json, &args.speedscope, &args.firefox_profile]
        .into_iter()
        .flatten()
        .any(|p| crate::output::is_stdout(p));
    if !to_stdout {
        let text = crate::report::profile::terminal(&profile, args.top);
        // Function names come from the profiled programs.
        crate::output::print(&crate::output::escape_controls(&text));
    }
    if profile.interrupted {
        crate::eprint_line!("cmdscope: interrupted; the profile covers the finished blocks");
        return Ok(exit::INTERRUPTED);
    }
    Ok(exit::OK)
}
