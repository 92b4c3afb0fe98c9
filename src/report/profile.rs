//! `explain --profile`'s words and files: the terminal report, the JSON
//! `profile` object, folded stacks, flame graphs (inferno draws them, one
//! per cell and a differential one per pair) and pprof's profile.proto.
//! Formatting only: the numbers and verdicts come from `profile`.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::error::{Error, ProfileError, Result};
use crate::exec::simulate::Simulation;
use crate::profile::{self, CellProfile, FunctionDiff, ModuleInfo, PairDiff, Profile};
use crate::units;

use super::pprof::weight;

/// Said on every report: what the numbers are and are not.
pub const ON_CPU_ONLY: &str = "on-CPU time only: the kernel refused context-switch sampling, so time a process spends blocked (sleeping, waiting for I/O or locks) shows in the wall time but in no function";
/// Said when context switches were sampled.
pub const OFF_CPU: &str = "functions and differences are on-CPU time; off-CPU time (blocked, or waiting for a CPU) is measured from context switches and shown apart";

/// Said on every simulated report: what the counts are and are not.
pub const SIMULATED: &str = "instructions counted by the simulator in user space only: the kernel's work for system calls, waits for I/O, locks and sleeps are not in them (compare CPU and wall time with `cmdscope run`); work before an exec is counted, up to the exec";

fn scope_note(p: &Profile) -> &'static str {
    if p.simulation.is_some() {
        SIMULATED
    } else if p.off_cpu {
        OFF_CPU
    } else {
        ON_CPU_ONLY
    }
}

fn pct(x: f64) -> String {
    // No "-0 %".
    let x = if x == 0.0 { 0.0 } else { x };
    format!("{} %", units::significant(100.0 * x, 3))
}

fn interval(ci: [f64; 2]) -> String {
    let scale = units::scale_for(ci[0].abs().max(ci[1].abs()));
    format!(
        "{} to {}",
        units::time_in(ci[0], scale),
        units::time_in(ci[1], scale)
    )
}

fn frame_name(p: &Profile, id: u32) -> String {
    p.frame(id).function.clone()
}

/// A frame of a stack as the terminal shows it: inlined ones say so.
fn stack_frame_name(p: &Profile, id: u32) -> String {
    if profile::is_inlined(id) {
        format!("{} (inlined)", frame_name(p, id))
    } else {
        frame_name(p, id)
    }
}

/// One module's line: where its names and inlined frames came from, and
/// what else was found (or not).
pub fn module_line(m: &ModuleInfo) -> String {
    let mut parts: Vec<String> = Vec::new();
    if m.symbols.is_empty() {
        parts.push("no symbols".into());
    } else {
        parts.push(format!("names from {}", m.symbols.join(" + ")));
    }
    if let Some(d) = &m.dwarf {
        parts.push(format!("inlined frames and source files from DWARF {d}"));
    }
    let full_table = m.symbols.iter().any(|s| s != ".dynsym");
    if m.unwind_ranges && !full_table {
        parts.push(
            "functions without a symbol are grouped by .eh_frame ranges (NAME!fn@ADDRESS)".into(),
        );
    }
    parts.extend(m.notes.iter().cloned());
    let id = m
        .build_id
        .as_deref()
        .map_or(String::new(), |b| format!(" [{}]", &b[..b.len().min(12)]));
    format!("{}{id}: {}", m.path, parts.join("; "))
}

/// A stack root-to-leaf read leaf first: "leaf ← caller ← … ← root",
/// at most `max` frames (the leaf side kept).
fn chain(p: &Profile, stack: &[u32], max: usize) -> String {
    let mut names: Vec<String> = stack
        .iter()
        .rev()
        .map(|&f| stack_frame_name(p, f))
        .collect();
    if names.len() > max {
        names.truncate(max);
        names.push("…".into());
    }
    names.join(" ← ")
}

fn verdict_words(d: &FunctionDiff) -> &'static str {
    if d.real() {
        "real"
    } else {
        d.comparison.verdict.words()
    }
}

/// A simulated count change: exact ones in full, estimated ones with
/// their interval, and why there is none when the engine gave none.
fn count_change(c: &crate::analysis::comparison::Comparison) -> String {
    if c.exact_change() {
        format!("{:+.0} (exact)", c.shift)
    } else if c.shift.is_finite() {
        format!(
            "{}{} ({} to {})",
            if c.shift > 0.0 { "+" } else { "" },
            units::count(c.shift),
            units::count(c.shift_ci[0]),
            units::count(c.shift_ci[1])
        )
    } else {
        let why = c
            .note
            .as_ref()
            .map(|n| format!(": {}", crate::report::Words(n)))
            .unwrap_or_default();
        format!("not estimated (counts vary between runs{why})")
    }
}

/// A simulated frame: its name and, where callgrind knew one, its source
/// file.
fn counted_frame(p: &Profile, id: u32) -> String {
    let fr = p.frame(id);
    match &fr.file {
        Some(file) => format!("{} ({file})", fr.function),
        None => fr.function.clone(),
    }
}

/// The terminal report of a simulated profile.
fn simulated_terminal(p: &Profile, sim: &Simulation, top: usize) -> String {
    let runs = p.cells.first().map_or(0, |c| c.runs.len());
    let mut out = format!(
        "Simulated by {} ({}; I1 {}, D1 {}, LL {}) over each process tree, {} runs per cell in interleaved shuffled blocks\n  {}\n",
        sim.tool, sim.version, sim.i1, sim.d1, sim.ll, runs, SIMULATED
    );
    if let Some(first) = p.runs_raised_from {
        out.push_str(&format!(
            "  {runs} runs per cell, not {first}: counts that vary between runs repeated in every run of each cell and differed, which {first} runs do by chance up to {} of the time; {runs} make such a repetition evidence at the family-wise level\n",
            pct(crate::analysis::comparison::repeated_by_chance(first))
        ));
    }
    for c in &p.cells {
        let counted = c.counted();
        let (ir, cycles): (Vec<f64>, Vec<f64>) = counted.iter().copied().unzip();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let (wall, _) = c.measured_per_run();
        out.push_str(&format!(
            "\n{}: {} runs; per run: {} instructions, {} estimated cycles ({}), {} wall under the simulator\n",
            c.name,
            c.runs.len(),
            units::count(mean(&ir)),
            units::count(mean(&cycles)),
            if c.counts_repeat() {
                "identical in every run"
            } else {
                "varying between runs"
            },
            units::time(wall)
        ));
        out.push_str(&format!(
            "  {:>12}  {:>12}  {:>12}  function (source file), per run\n",
            "instructions", "with callees", "est. cycles"
        ));
        for f in c.functions.iter().take(top) {
            out.push_str(&format!(
                "  {:>12}  {:>12}  {:>12}  {}\n",
                units::count(f.self_time),
                units::count(f.total),
                units::count(c.cycles_per_run(f.frame)),
                counted_frame(p, f.frame)
            ));
        }
        if let Some((s, w)) = c.hot_stacks.first() {
            out.push_str(&format!(
                "  hottest stack: {} instructions  {}\n",
                units::count(*w),
                chain(p, s, 8)
            ));
        }
    }
    for d in &p.pairs {
        let (a, b) = (&p.cells[d.baseline].name, &p.cells[d.candidate].name);
        out.push_str(&format!("\n{b} − {a} per run:\n"));
        if let Some([ir, cycles]) = &d.counted {
            out.push_str(&format!(
                "  counted: {} instructions ({}); {} estimated cycles ({})\n",
                count_change(ir),
                ir.verdict.words(),
                count_change(cycles),
                cycles.verdict.words()
            ));
        }
        let m = d.functions.first().map_or(0, |f| f.comparison.family);
        out.push_str(&format!(
            "  change of instructions per run, by function ({m} compared; exact where the counts repeat in every run):\n"
        ));
        for f in d.functions.iter().take(top) {
            out.push_str(&format!(
                "  {:>22}  {}  {}\n",
                count_change(&f.comparison),
                counted_frame(p, f.frame),
                verdict_words(f)
            ));
        }
        let real = d.functions.iter().filter(|f| f.real()).count();
        out.push_str(&format!(
            "  the {real} function{} called real account for {:+.0} instructions per run\n",
            if real == 1 { "" } else { "s" },
            d.explained()
        ));
    }
    if p.interrupted {
        out.push_str("\ninterrupted: the profile covers the blocks finished before\n");
    }
    out
}

/// The terminal report.
pub fn terminal(p: &Profile, top: usize) -> String {
    if let Some(sim) = &p.simulation {
        return simulated_terminal(p, sim, top);
    }
    let mut out = String::new();
    let runs = p.cells.first().map_or(0, |c| c.runs.len());
    out.push_str(&format!(
        "Sampled with {} at {} Hz over each process tree, {} stacks ({}), {} runs per cell in interleaved shuffled blocks\n",
        p.event.name(),
        p.frequency,
        if p.kernel_frames {
            "kernel and user"
        } else {
            "user (kernel frames need perf_event_paranoid <= 1 or root)"
        },
        if p.dwarf {
            "user stacks unwound with DWARF"
        } else {
            "frame pointers"
        },
        runs
    ));
    if let Some(why) = &p.fallback {
        out.push_str(&format!("  cpu-clock, not cycles: {why}\n"));
    }
    out.push_str(&format!("  {}\n", scope_note(p)));
    if let Some(r) = &p.raised {
        out.push_str(&format!("  {}\n", raised_line(r)));
    }
    if !p.modules.is_empty() {
        out.push_str("  symbols, per module:\n");
        for m in &p.modules {
            out.push_str(&format!("    {}\n", module_line(m)));
        }
    }
    for c in &p.cells {
        out.push('\n');
        cell_text(p, c, top, &mut out);
    }
    for d in &p.pairs {
        out.push('\n');
        pair_text(p, d, top, &mut out);
    }
    if p.interrupted {
        out.push_str("\ninterrupted: the profile covers the blocks finished before\n");
    }
    out
}

/// What a short command's second phase did and how it ended.
fn raised_line(r: &crate::profile::rate::Raised) -> String {
    use crate::profile::rate::Ended;
    let ended = match r.ended {
        Ended::Explained => format!(
            "the functions called real account for the measured CPU difference (a look at family-wise level {})",
            crate::units::format_level(r.level)
        ),
        Ended::Budget => format!(
            "its {} budget ended before a look found the difference accounted for; the analysis below is at the family-wise level the looks left ({})",
            units::time(crate::profile::rate::BUDGET.as_secs_f64()),
            crate::units::format_level(r.level)
        ),
        Ended::Runs => format!(
            "its planned runs ended before a look found the difference accounted for; the analysis below is at the family-wise level the looks left ({})",
            crate::units::format_level(r.level)
        ),
        Ended::Interrupted => "interrupted before a look found the difference accounted for".into(),
    };
    format!(
        "a short difference: after {} runs per cell at {} Hz the functions called real did not account for half of the measured CPU difference, so it was sampled again at {} Hz: {} runs per cell in {}; {ended}",
        r.first_runs,
        r.first_frequency,
        r.frequency,
        r.blocks,
        units::time(r.seconds),
    )
}

fn cell_text(p: &Profile, c: &CellProfile, top: usize, out: &mut String) {
    let (wall, cpu) = c.measured_per_run();
    out.push_str(&format!(
        "{}: {} runs, {} samples; per run: {} sampled on the CPU, {} CPU measured, {} wall\n",
        c.name,
        c.runs.len(),
        units::count(c.samples() as f64),
        units::time(c.sampled_per_run()),
        units::time(cpu),
        units::time(wall)
    ));
    if c.lost() > 0 {
        out.push_str(&format!(
            "  {} samples lost (the buffer overflowed): lower --frequency\n",
            units::count(c.lost() as f64)
        ));
    }
    if c.throttled() > 0 {
        out.push_str(&format!(
            "  the kernel throttled sampling {} times: its sampling interrupts took too long at {} Hz (kernel.perf_event_max_sample_rate); lower --frequency\n",
            units::count(c.throttled() as f64),
            p.frequency
        ));
    }
    if let Some(d) = distortion(p, c) {
        out.push_str(&format!(
            "  sampling at {} Hz slowed these runs: {} wall per run sampled against {} unsampled ({}x); the profile shows the command under sampling: lower --frequency for one closer to its own\n",
            p.frequency,
            units::time(d.sampled),
            units::time(d.plain),
            units::significant(d.sampled / d.plain, 3)
        ));
    }
    if p.off_cpu {
        out.push_str(&format!(
            "  off the CPU per run: {} blocked, {} waiting for a CPU\n",
            units::time(c.blocked),
            units::time(c.runnable)
        ));
        for (s, w) in c.off_cpu_stacks.iter().take(top.min(3)) {
            out.push_str(&format!("  {:>10}  {}\n", units::time(*w), chain(p, s, 8)));
        }
    }
    if c.samples() == 0 {
        out.push_str(&format!(
            "  no on-CPU samples: it spent its {} per run off the CPU\n",
            units::time(wall)
        ));
        return;
    }
    out.push_str(&format!(
        "  {:>10}  {:>10}  function (module), seconds per run\n",
        "self", "total"
    ));
    for f in c.functions.iter().take(top) {
        let fr = p.frame(f.frame);
        out.push_str(&format!(
            "  {:>10}  {:>10}  {} ({})\n",
            units::time(f.self_time),
            units::time(f.total),
            fr.function,
            fr.module
        ));
    }
    out.push_str("  hottest stacks:\n");
    for (s, w) in c.hot_stacks.iter().take(top.min(5)) {
        out.push_str(&format!("  {:>10}  {}\n", units::time(*w), chain(p, s, 8)));
    }
}

fn pair_text(p: &Profile, d: &PairDiff, top: usize, out: &mut String) {
    let (a, b) = (&p.cells[d.baseline].name, &p.cells[d.candidate].name);
    let measured = |c: &crate::analysis::comparison::Comparison, what: &str| {
        format!(
            "{} {what} ({}, {})",
            units::time(c.shift),
            interval(c.shift_ci),
            c.verdict.words()
        )
    };
    out.push_str(&format!("{b} − {a} per run:\n"));
    out.push_str(&format!(
        "  measured: {}; {}\n",
        measured(&d.wall, "wall"),
        measured(&d.cpu, "CPU")
    ));
    if !d.hot_path.is_empty() {
        out.push_str(&format!(
            "  the {} time is under {}\n",
            if d.cpu.shift > 0.0 { "extra" } else { "saved" },
            chain(p, &d.hot_path, 8)
        ));
    }
    let m = d.functions.first().map_or(0, |f| f.comparison.family);
    let conf = d.functions.first().map_or(0.0, |f| f.comparison.confidence);
    out.push_str(&format!(
        "  change of self time per run, {} intervals (95 % for all {} functions together):\n",
        pct(conf),
        m
    ));
    for f in d.functions.iter().take(top) {
        let fr = p.frame(f.frame);
        out.push_str(&format!(
            "  {:>10}  ({})  {} ({})  {}\n",
            units::time(f.comparison.shift),
            interval(f.comparison.shift_ci),
            fr.function,
            fr.module,
            verdict_words(f)
        ));
    }
    let real = d.functions.iter().filter(|f| f.real()).count();
    let explained = d.explained();
    let share = |c: &crate::analysis::comparison::Comparison| {
        if c.shift.is_finite() && c.shift.abs() > 0.0 {
            pct(explained / c.shift)
        } else {
            "—".into()
        }
    };
    out.push_str(&format!(
        "  the {real} function{} called real account for {} per run: {} of the wall difference, {} of the CPU difference\n",
        if real == 1 { "" } else { "s" },
        units::time(explained),
        share(&d.wall),
        share(&d.cpu)
    ));
}

fn distortion<'a>(p: &'a Profile, c: &CellProfile) -> Option<&'a crate::profile::rate::Distortion> {
    let i = p.cells.iter().position(|x| std::ptr::eq(x, c))?;
    p.distorted.iter().find(|d| d.cell == i)
}

fn function_json(p: &Profile, c: &CellProfile) -> Vec<Value> {
    c.functions
        .iter()
        .map(|f| {
            let fr = p.frame(f.frame);
            json!({
                "function": fr.function,
                "module": fr.module,
                "file": fr.file,
                "self": f.self_time,
                "total": f.total,
                "estimated_cycles": p.simulation.is_some().then(|| c.cycles_per_run(f.frame)),
            })
        })
        .collect()
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn difference_json(p: &Profile, d: &PairDiff) -> Vec<Value> {
    d.functions
        .iter()
        .map(|f| {
            let fr = p.frame(f.frame);
            json!({
                "baseline": p.cells[d.baseline].name,
                "candidate": p.cells[d.candidate].name,
                "function": fr.function,
                "module": fr.module,
                "delta": finite(f.comparison.shift),
                "delta_ci": [finite(f.comparison.shift_ci[0]), finite(f.comparison.shift_ci[1])],
                "real": f.real(),
                "exact": f.comparison.exact_change(),
                "verdict": f.comparison.verdict.words(),
                "p_value": finite(f.comparison.p_value),
                "confidence": f.comparison.confidence,
            })
        })
        .collect()
}

/// `explain --profile --json`'s document: the profile under `"profile"`,
/// ending with a line break.
pub fn document(p: &Profile) -> String {
    let doc = json!({ "profile": json(p) });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// A stack root to leaf: its function names, and which were inlined into
/// the frame before them.
fn stack_json(p: &Profile, stack: &[u32], seconds: f64) -> Value {
    json!({
        "stack": stack.iter().map(|&f| frame_name(p, f)).collect::<Vec<_>>(),
        "inlined": stack.iter().map(|&f| profile::is_inlined(f)).collect::<Vec<_>>(),
        "seconds": seconds,
    })
}

/// The JSON `profile` object.
pub fn json(p: &Profile) -> Value {
    let cells: Vec<Value> = p
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let differences: Vec<Value> = p
                .pairs
                .iter()
                .filter(|d| d.candidate == i)
                .flat_map(|d| difference_json(p, d))
                .collect();
            json!({
                "name": c.name,
                "runs": c.runs.len(),
                "samples": c.samples(),
                "lost_samples": c.lost(),
                "throttled": c.throttled(),
                "distorted": distortion(p, c).map(|d| json!({
                    "sampled_wall": d.sampled,
                    "unsampled_wall": d.plain,
                })),
                "sampled_seconds": c.sampled_per_run(),
                "counted": p.simulation.is_some().then(|| {
                    let counted = c.counted();
                    json!({
                        "instructions": counted.iter().map(|t| t.0).collect::<Vec<_>>(),
                        "estimated_cycles": counted.iter().map(|t| t.1).collect::<Vec<_>>(),
                    })
                }),
                "functions": function_json(p, c),
                "off_cpu": if p.off_cpu { json!({
                    "blocked": c.blocked,
                    "runnable": c.runnable,
                    "stacks": c.off_cpu_stacks.iter().map(|(s, w)| stack_json(p, s, *w)).collect::<Vec<_>>(),
                }) } else { Value::Null },
                "differences": differences,
                "hot_stacks": c.hot_stacks.iter().map(|(s, w)| stack_json(p, s, *w)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let measured = |c: &crate::analysis::comparison::Comparison| {
        json!({
            "delta": finite(c.shift),
            "delta_ci": [finite(c.shift_ci[0]), finite(c.shift_ci[1])],
            "verdict": c.verdict.words(),
            "exact": c.exact_change(),
        })
    };
    let pairs: Vec<Value> = p
        .pairs
        .iter()
        .map(|d| {
            json!({
                "baseline": p.cells[d.baseline].name,
                "candidate": p.cells[d.candidate].name,
                "wall": measured(&d.wall),
                "cpu": measured(&d.cpu),
                "hot_path": d.hot_path.iter().map(|&f| json!({
                    "function": p.frame(f).function,
                    "module": p.frame(f).module,
                    "inlined": profile::is_inlined(f),
                })).collect::<Vec<_>>(),
                "explained": d.explained(),
                "counted": d.counted.as_ref().map(|[ir, cycles]| json!({
                    "instructions": measured(ir),
                    "estimated_cycles": measured(cycles),
                })),
                "differences": difference_json(p, d),
            })
        })
        .collect();
    json!({
        "unit": if p.simulation.is_some() { "instructions" } else { "seconds" },
        "simulation": p.simulation,
        "event": p.event.name(),
        "event_fallback": p.fallback,
        "frequency": p.frequency,
        "kernel_frames": p.kernel_frames,
        "unwind": if p.dwarf { "dwarf" } else { "fp" },
        "off_cpu": p.off_cpu,
        "note": scope_note(p),
        "runs_raised_from": p.runs_raised_from,
        "raised": p.raised.as_ref().map(|r| json!({
            "first_runs": r.first_runs,
            "first_frequency": r.first_frequency,
            "frequency": r.frequency,
            "runs": r.blocks,
            "seconds": r.seconds,
            "ended": match r.ended {
                crate::profile::rate::Ended::Explained => "explained",
                crate::profile::rate::Ended::Budget => "budget",
                crate::profile::rate::Ended::Runs => "runs",
                crate::profile::rate::Ended::Interrupted => "interrupted",
            },
            "level": r.level,
        })),
        "modules": p.modules.iter().map(|m| json!({
            "path": m.path,
            "build_id": m.build_id,
            "symbols": m.symbols,
            "dwarf": m.dwarf,
            "unwind_ranges": m.unwind_ranges,
            "notes": m.notes,
            "summary": module_line(m),
        })).collect::<Vec<_>>(),
        "cells": cells,
        "pairs": pairs,
    })
}

/// A frame as flame graph tools read it: `;` separates frames, and
/// kernel and inlined frames carry perf script's `_[k]` and `_[i]`
/// suffixes (inferno colours them).
fn folded_frame(p: &Profile, id: u32) -> String {
    let f = p.frame(id);
    let name = f.function.replace(';', ":");
    if f.module == "[kernel]" {
        format!("{name}_[k]")
    } else if profile::is_inlined(id) {
        format!("{name}_[i]")
    } else {
        name
    }
}

/// Folded stacks of one cell: `root;…;leaf COUNT` lines, COUNT in
/// microseconds of CPU time per run (instructions per run when counted),
/// sorted.
pub fn folded(p: &Profile, c: &CellProfile) -> String {
    let scale = weight(p).folded_scale;
    let mut lines: HashMap<String, f64> = HashMap::new();
    for (s, w) in c.stacks_per_run() {
        let key: Vec<String> = s.iter().map(|&f| folded_frame(p, f)).collect();
        *lines.entry(key.join(";")).or_insert(0.0) += w;
    }
    let mut v: Vec<(String, u64)> = lines
        .into_iter()
        .map(|(k, w)| (k, (w * scale).round() as u64))
        .filter(|(_, n)| *n > 0)
        .collect();
    v.sort();
    v.iter().map(|(k, n)| format!("{k} {n}\n")).collect()
}

fn inferno_error(e: impl std::fmt::Display) -> Error {
    ProfileError::FlameGraph(e.to_string()).into()
}

/// A flame graph SVG of folded stacks (inferno's, interactive when opened
/// on its own), their counts named `count_name`.
pub fn flamegraph(title: &str, count_name: &str, folded: &str) -> Result<Vec<u8>> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = count_name.into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut svg).map_err(inferno_error)?;
    Ok(svg)
}

/// A differential flame graph: the candidate's stacks, coloured by the
/// change from the baseline (red more, blue less), as difffolded.pl does.
pub fn differential(title: &str, count_name: &str, before: &str, after: &str) -> Result<Vec<u8>> {
    let mut diff = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        before.as_bytes(),
        after.as_bytes(),
        &mut diff,
    )
    .map_err(inferno_error)?;
    let text = String::from_utf8_lossy(&diff).into_owned();
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = count_name.into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, text.lines(), &mut svg).map_err(inferno_error)?;
    Ok(svg)
}

/// A file name from a cell name: letters, digits, `.`, `-`, `_` kept.
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches(|c| c == '_' || c == '.');
    let s: String = s.chars().take(60).collect();
    if s.is_empty() {
        "cell".into()
    } else {
        s
    }
}

/// Every file `--flamegraph DIR` holds: per cell `N-NAME.folded`, `.svg`,
/// `.pb.gz`; per pair a differential `diff-N-vs-M.svg`; every cell side by
/// side for speedscope and the Firefox Profiler; and `index.html`, the
/// report with every flame graph on one page.
pub fn files(p: &Profile) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    let names: Vec<String> = p
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{}-{}", i + 1, slug(&c.name)))
        .collect();
    let unit = weight(p);
    let folded_of: Vec<String> = p.cells.iter().map(|c| folded(p, c)).collect();
    for (i, c) in p.cells.iter().enumerate() {
        out.push((
            format!("{}.folded", names[i]),
            folded_of[i].clone().into_bytes(),
        ));
        out.push((
            format!("{}.svg", names[i]),
            flamegraph(
                &format!("{} ({} per run)", c.name, unit.what),
                unit.count_name,
                &folded_of[i],
            )?,
        ));
        out.push((format!("{}.pb.gz", names[i]), super::pprof::pprof(p, c)?));
    }
    let mut diffs = Vec::new();
    for d in &p.pairs {
        let title = format!(
            "{} − {} (red: more {} in the candidate, blue: less)",
            p.cells[d.candidate].name,
            p.cells[d.baseline].name,
            if p.simulation.is_some() {
                "instructions"
            } else {
                "time"
            }
        );
        let file = format!("diff-{}-vs-{}.svg", names[d.candidate], names[d.baseline]);
        diffs.push((title.clone(), file.clone()));
        out.push((
            file,
            differential(
                &title,
                unit.count_name,
                &folded_of[d.baseline],
                &folded_of[d.candidate],
            )?,
        ));
    }
    out.push((
        "profile.speedscope.json".to_string(),
        super::profile_viewers::speedscope(p),
    ));
    // The Firefox Profiler's tracks are time: not for counts.
    if p.simulation.is_none() {
        out.push((
            "profile.firefox.json".to_string(),
            super::profile_viewers::firefox(p),
        ));
    }
    let cells: Vec<(String, String)> = p
        .cells
        .iter()
        .zip(&names)
        .map(|(c, n)| (c.name.clone(), format!("{n}.svg")))
        .collect();
    out.push((
        "index.html".to_string(),
        index_html(&terminal(p, 10), &cells, &diffs).into_bytes(),
    ));
    Ok(out)
}

/// The directory's report page: the terminal report, then every flame
/// graph, static (each links to its SVG, which keeps inferno's search and
/// zoom when opened on its own). `cells` and `diffs` are (title, file).
fn index_html(report: &str, cells: &[(String, String)], diffs: &[(String, String)]) -> String {
    use super::svg::escape;
    let figure = |(title, file): &(String, String)| {
        format!(
            "<figure><figcaption>{t}</figcaption><a href=\"{f}\"><img src=\"{f}\" alt=\"{t}\"></a></figure>\n",
            t = escape(title),
            f = escape(file)
        )
    };
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>cmdscope explain --profile</title>\n<style>\n\
         body { font-family: sans-serif; margin: 2em; max-width: 1300px; }\n\
         pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }\n\
         img { width: 100%; border: 1px solid #ddd; }\n\
         figure { margin: 1.5em 0; }\n</style></head><body>\n\
         <h1>Where the time goes</h1>\n",
    );
    html.push_str(&format!("<pre>{}</pre>\n", escape(report)));
    if !diffs.is_empty() {
        html.push_str("<h2>Differences</h2>\n");
        diffs.iter().for_each(|d| html.push_str(&figure(d)));
    }
    html.push_str("<h2>Each command</h2>\n");
    cells.iter().for_each(|c| html.push_str(&figure(c)));
    html.push_str("</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_plain_file_names() {
        assert_eq!(slug("./fixture a"), "fixture_a");
        assert_eq!(slug("sh -c 'x;y'"), "sh_-c__x_y");
        assert_eq!(slug("///"), "cell");
    }
}
