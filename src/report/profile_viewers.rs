//! `explain --profile`'s files for the viewers people open: speedscope's
//! file format (one sampled profile per cell, side by side in one file)
//! and the Firefox Profiler's processed profile format as samply writes it
//! (one process track per cell). Both hold what the flame graphs hold:
//! every cell's on-CPU stacks, averaged per run, in seconds (speedscope)
//! or milliseconds (the Firefox Profiler's "tracing-ms" weights).
//! Formatting only: the stacks come from `profile`.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::profile::{function_id, CellProfile, Profile};

/// speedscope's schema URL, which its importer recognises the format by.
pub const SPEEDSCOPE_SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// The processed format version written: samply's (fxprof-processed-profile
/// 0.8); the profiler upgrades older versions as it loads them.
pub const FIREFOX_PROCESSED_VERSION: u32 = 55;

/// A cell's stacks, root first, with seconds per run, in a fixed order (by
/// stack) so that the same profile always gives the same file. Frames are
/// functions: an inlined one is the same frame as when it was called, as
/// in the tables (neither format has a place for the mark).
fn cell_stacks(c: &CellProfile) -> Vec<(Vec<u32>, f64)> {
    let mut merged: HashMap<Vec<u32>, f64> = HashMap::new();
    for (s, w) in c.stacks_per_run() {
        if !s.is_empty() && w > 0.0 {
            *merged
                .entry(s.into_iter().map(function_id).collect())
                .or_insert(0.0) += w;
        }
    }
    let mut v: Vec<(Vec<u32>, f64)> = merged.into_iter().collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The frames every stack of the profile uses, in id order, and each
/// one's index among them.
fn used_frames(p: &Profile) -> (Vec<u32>, HashMap<u32, usize>) {
    let mut used: Vec<u32> = p
        .cells
        .iter()
        .flat_map(|c| c.stacks_per_run().into_keys().flatten())
        .map(function_id)
        .collect();
    used.sort_unstable();
    used.dedup();
    let index = used.iter().enumerate().map(|(i, &f)| (f, i)).collect();
    (used, index)
}

/// speedscope's file: shared frames (function name, module as the file),
/// then one "sampled" profile per cell whose samples are its stacks and
/// whose weights are seconds per run.
pub fn speedscope(p: &Profile) -> Vec<u8> {
    let (used, index) = used_frames(p);
    let frames: Vec<Value> = used
        .iter()
        .map(|&f| {
            let fr = p.frame(f);
            json!({ "name": fr.function, "file": fr.module })
        })
        .collect();
    let profiles: Vec<Value> = p
        .cells
        .iter()
        .map(|c| {
            let stacks = cell_stacks(c);
            let samples: Vec<Vec<usize>> = stacks
                .iter()
                .map(|(s, _)| s.iter().map(|f| index[f]).collect())
                .collect();
            let weights: Vec<f64> = stacks.iter().map(|(_, w)| *w).collect();
            let end = weights.iter().fold(0.0, |a, b| a + b);
            // Counted instructions are speedscope's unitless weights.
            let (what, unit) = if p.simulation.is_some() {
                ("instructions", "none")
            } else {
                ("on-CPU time", "seconds")
            };
            json!({
                "type": "sampled",
                "name": format!("{} ({what} per run, {} runs)", c.name, c.runs.len()),
                "unit": unit,
                "startValue": 0.0,
                "endValue": end,
                "samples": samples,
                "weights": weights,
            })
        })
        .collect();
    let doc = json!({
        "$schema": SPEEDSCOPE_SCHEMA,
        "name": "cmdscope explain --profile",
        "exporter": concat!("cmdscope ", env!("CARGO_PKG_VERSION")),
        "activeProfileIndex": 0,
        "shared": { "frames": frames },
        "profiles": profiles,
    });
    let mut out = serde_json::to_vec(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}

/// The Firefox Profiler's categories: which colour a frame gets.
const CATEGORIES: [(&str, &str); 4] = [
    ("Other", "grey"),
    ("Kernel", "orange"),
    ("JIT", "yellow"),
    ("User", "blue"),
];

fn category(module: &str) -> usize {
    match module {
        "[kernel]" => 1,
        "[jit]" => 2,
        m if m.starts_with('[') => 0,
        _ => 3,
    }
}

/// One cell as a Firefox Profiler thread: its own string, function,
/// resource (module), frame and stack tables, and one sample per stack
/// laid end to end on the timeline, weighted by its milliseconds per run.
fn firefox_thread(p: &Profile, c: &CellProfile, pid: usize) -> Value {
    let mut strings: Vec<String> = Vec::new();
    let mut string_ids: HashMap<String, usize> = HashMap::new();
    let mut intern = |s: &str| -> usize {
        if let Some(&i) = string_ids.get(s) {
            return i;
        }
        strings.push(s.to_string());
        string_ids.insert(s.to_string(), strings.len() - 1);
        strings.len() - 1
    };
    let mut resources: Vec<usize> = Vec::new();
    let mut resource_of: HashMap<String, usize> = HashMap::new();
    // Functions and frames are one to one: a frame of the model is a
    // function in a module.
    let mut funcs: Vec<(usize, usize)> = Vec::new();
    let mut frame_categories: Vec<usize> = Vec::new();
    let mut func_of: HashMap<u32, usize> = HashMap::new();
    // Stacks: (prefix, frame), deduplicated.
    let mut stack_rows: Vec<(Option<usize>, usize)> = Vec::new();
    let mut stack_of: HashMap<(Option<usize>, usize), usize> = HashMap::new();
    let mut samples: Vec<(usize, f64)> = Vec::new();
    for (stack, seconds) in cell_stacks(c) {
        let mut prefix: Option<usize> = None;
        for f in stack {
            let func = match func_of.get(&f) {
                Some(&i) => i,
                None => {
                    let fr = p.frame(f);
                    let resource = match resource_of.get(&fr.module) {
                        Some(&r) => r,
                        None => {
                            resources.push(intern(&fr.module));
                            resource_of.insert(fr.module.clone(), resources.len() - 1);
                            resources.len() - 1
                        }
                    };
                    funcs.push((intern(&fr.function), resource));
                    frame_categories.push(category(&fr.module));
                    func_of.insert(f, funcs.len() - 1);
                    funcs.len() - 1
                }
            };
            let key = (prefix, func);
            let s = match stack_of.get(&key) {
                Some(&s) => s,
                None => {
                    stack_rows.push(key);
                    stack_of.insert(key, stack_rows.len() - 1);
                    stack_rows.len() - 1
                }
            };
            prefix = Some(s);
        }
        if let Some(s) = prefix {
            samples.push((s, seconds * 1e3));
        }
    }
    let n_funcs = funcs.len();
    let n_res = resources.len();
    let n_stacks = stack_rows.len();
    let n = samples.len();
    // Each sample starts where the one before ended.
    let mut deltas = Vec::with_capacity(n);
    let mut prev = 0.0;
    for (_, ms) in &samples {
        deltas.push(prev);
        prev = *ms;
    }
    let end: f64 = samples.iter().map(|(_, ms)| ms).fold(0.0, |a, b| a + b);
    json!({
        "frameTable": {
            "length": n_funcs,
            "address": vec![-1; n_funcs],
            "inlineDepth": vec![0; n_funcs],
            "category": frame_categories,
            "subcategory": vec![0; n_funcs],
            "func": (0..n_funcs).collect::<Vec<_>>(),
            "nativeSymbol": vec![Value::Null; n_funcs],
            "innerWindowID": vec![0; n_funcs],
            "line": vec![Value::Null; n_funcs],
            "column": vec![Value::Null; n_funcs],
        },
        "funcTable": {
            "length": n_funcs,
            "name": funcs.iter().map(|f| f.0).collect::<Vec<_>>(),
            "isJS": vec![false; n_funcs],
            "relevantForJS": vec![false; n_funcs],
            "resource": funcs.iter().map(|f| f.1).collect::<Vec<_>>(),
            "fileName": vec![Value::Null; n_funcs],
            "lineNumber": vec![Value::Null; n_funcs],
            "columnNumber": vec![Value::Null; n_funcs],
        },
        "markers": {
            "length": 0, "category": [], "data": [], "endTime": [], "name": [],
            "phase": [], "startTime": [],
        },
        "name": c.name,
        "isMainThread": true,
        "nativeSymbols": {
            "length": 0, "address": [], "functionSize": [], "libIndex": [], "name": [],
        },
        "pausedRanges": [],
        "pid": pid.to_string(),
        "processName": c.name,
        "processShutdownTime": end,
        "processStartupTime": 0.0,
        "processType": "default",
        "registerTime": 0.0,
        "resourceTable": {
            "length": n_res,
            "lib": vec![Value::Null; n_res],
            "name": resources,
            "host": vec![Value::Null; n_res],
            // 1: a library.
            "type": vec![1; n_res],
        },
        "samples": {
            "length": n,
            "weightType": "tracing-ms",
            "stack": samples.iter().map(|s| s.0).collect::<Vec<_>>(),
            "timeDeltas": deltas,
            "weight": samples.iter().map(|s| s.1).collect::<Vec<_>>(),
            // Microseconds of CPU since the sample before: the sample's own.
            "threadCPUDelta": samples.iter().map(|s| s.1 * 1e3).collect::<Vec<_>>(),
        },
        "stackTable": {
            "length": n_stacks,
            "prefix": stack_rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            "frame": stack_rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        },
        "stringArray": strings,
        "tid": pid,
        "unregisterTime": end,
        "showMarkersInTimeline": false,
    })
}

/// The Firefox Profiler's processed profile: one process per cell (named
/// after it, one thread), all starting at 0 so their tracks line up.
pub fn firefox(p: &Profile) -> Vec<u8> {
    let threads: Vec<Value> = p
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| firefox_thread(p, c, i + 1))
        .collect();
    let categories: Vec<Value> = CATEGORIES
        .iter()
        .map(|(name, color)| json!({ "name": name, "color": color, "subcategories": ["Other"] }))
        .collect();
    let doc = json!({
        "meta": {
            "categories": categories,
            "debug": false,
            "extensions": { "length": 0, "baseURL": [], "id": [], "name": [] },
            "interval": 1e3 / p.frequency.max(1) as f64,
            "preprocessedProfileVersion": FIREFOX_PROCESSED_VERSION,
            "processType": 0,
            "product": "cmdscope explain --profile",
            "sampleUnits": { "time": "ms", "eventDelay": "ms", "threadCPUDelta": "µs" },
            "startTime": 0.0,
            "symbolicated": true,
            "pausedRanges": [],
            "version": 24,
            "usesOnlyOneStackType": true,
            "sourceCodeIsNotOnSearchfox": true,
            "markerSchema": [],
            "initialVisibleThreads": (0..p.cells.len()).collect::<Vec<_>>(),
            "initialSelectedThreads": [0],
        },
        "libs": [],
        "threads": threads,
        "pages": [],
        "profilerOverhead": [],
        "counters": [],
    });
    let mut out = serde_json::to_vec(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{RunStacks, INLINED};

    #[test]
    fn an_inlined_frame_is_its_function_in_the_viewers_stacks() {
        let mut run = RunStacks::default();
        // main calls work; once it was inlined into main, once called.
        run.stacks.insert(vec![1, 2 | INLINED], 0.25);
        run.stacks.insert(vec![1, 2], 0.5);
        run.stacks.insert(vec![1], 0.125);
        let c = CellProfile {
            name: "a".into(),
            runs: vec![run],
            functions: Vec::new(),
            hot_stacks: Vec::new(),
            off_cpu_stacks: Vec::new(),
            blocked: 0.0,
            runnable: 0.0,
        };
        assert_eq!(cell_stacks(&c), vec![(vec![1], 0.125), (vec![1, 2], 0.75)]);
    }
}
