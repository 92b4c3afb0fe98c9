//! Several cells explained side by side: the same figures for each, the
//! difference of every later cell from the first, and hints about the
//! difference (not about one run) backed by those figures.

use std::fmt::Write as _;

use serde::Serialize;

use super::hints::{thousands, Hint};
use super::tracer::Created;
use super::tree::basename;
use super::{json, render, Explained};
use crate::metrics::Unit;
use crate::units;

pub const SCHEMA: &str = "cmdscope-explain-variants/1";

/// A difference in environment size worth a hint: at least this many bytes
/// per exec and twice as large.
const ENV_HINT_BYTES: f64 = 16.0 * 1024.0;
/// Processes created before a difference in creation method is worth a hint.
const SPAWN_HINT_MIN: u64 = 5;

/// One figure of every cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub metric: String,
    pub unit: Unit,
    /// One per cell; None where the figure does not exist (e.g. no exec).
    pub values: Vec<Option<f64>>,
}

/// How a cell is named in sentences: its parameter values, else its name.
pub fn label(x: &Explained) -> String {
    if x.parameters.is_empty() {
        x.name.clone()
    } else {
        x.parameters
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn mean(total: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| total / n as f64)
}

/// The figures compared, in display order. Syscalls: those among the
/// `top` by time in any cell.
pub fn rows(xs: &[Explained], top: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut add = |metric: &str, unit: Unit, f: &dyn Fn(&Explained) -> Option<f64>| {
        rows.push(Row {
            metric: metric.to_string(),
            unit,
            values: xs.iter().map(f).collect(),
        });
    };
    add("wall (traced)", Unit::Seconds, &|x| Some(x.trace.wall));
    add("user time", Unit::Seconds, &|x| {
        Some(x.model.processes.iter().map(|p| p.user).sum())
    });
    add("system time", Unit::Seconds, &|x| {
        Some(x.model.processes.iter().map(|p| p.sys).sum())
    });
    add("processes fork-style", Unit::Count, &|x| {
        Some(x.model.spawns[0] as f64)
    });
    add("processes vfork-style", Unit::Count, &|x| {
        Some(x.model.spawns[1] as f64)
    });
    add("threads", Unit::Count, &|x| Some(x.model.spawns[2] as f64));
    add("fork: creation to exec, each", Unit::Seconds, &|x| {
        let [(n, s), _] = x.model.spawn_time_by_method();
        mean(s, n)
    });
    add("vfork: creation to exec, each", Unit::Seconds, &|x| {
        let [_, (n, s)] = x.model.spawn_time_by_method();
        mean(s, n)
    });
    add("execs", Unit::Count, &|x| Some(x.trace.execs.count as f64));
    add("failed execs", Unit::Count, &|x| {
        Some(x.trace.execs.failed as f64)
    });
    add("intermediate shells", Unit::Count, &|x| {
        Some(x.model.intermediate_shells().count() as f64)
    });
    add("environment per exec", Unit::Bytes, &|x| {
        let e = &x.trace.execs;
        mean(e.env_bytes_total as f64, e.env_measured)
    });
    add("environment variables (max)", Unit::Count, &|x| {
        (x.trace.execs.env_measured > 0).then_some(x.trace.execs.env_vars_max as f64)
    });
    add("bytes read", Unit::Bytes, &|x| {
        Some(x.model.total_io().rchar as f64)
    });
    add("bytes written", Unit::Bytes, &|x| {
        Some(x.model.total_io().wchar as f64)
    });
    let per_cell: Vec<Vec<(String, u64, f64)>> =
        xs.iter().map(|x| json::syscall_rows(&x.trace)).collect();
    add("system calls", Unit::Count, &|x| {
        let i = index_of(xs, x);
        Some(per_cell[i].iter().map(|r| r.1 as f64).sum())
    });
    add("time in system calls", Unit::Seconds, &|x| {
        let i = index_of(xs, x);
        Some(per_cell[i].iter().map(|r| r.2).sum())
    });
    let mut names: Vec<&str> = Vec::new();
    for cell in &per_cell {
        for (name, _, _) in cell.iter().take(top) {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    for name in names {
        let find = |i: usize| per_cell[i].iter().find(|r| r.0 == name);
        add(&format!("{name} calls"), Unit::Count, &|x| {
            Some(find(index_of(xs, x)).map_or(0.0, |r| r.1 as f64))
        });
        add(&format!("{name} time"), Unit::Seconds, &|x| {
            Some(find(index_of(xs, x)).map_or(0.0, |r| r.2))
        });
    }
    // Monitor counts, by pattern (the same patterns for every cell).
    let patterns = xs
        .iter()
        .find_map(|x| x.monitor.as_ref().map(|m| m.patterns.clone()))
        .unwrap_or_default();
    for (i, p) in patterns.iter().enumerate() {
        add(&format!("monitor: {p}"), Unit::Count, &|x| {
            x.monitor
                .as_ref()
                .map(|m| m.counts.during.get(i).copied().unwrap_or(0) as f64)
        });
    }
    rows
}

fn index_of(xs: &[Explained], x: &Explained) -> usize {
    xs.iter().position(|y| std::ptr::eq(y, x)).unwrap_or(0)
}

fn show(v: Option<f64>, unit: Unit) -> String {
    match v {
        Some(v) => units::quantity(v, unit),
        None => "-".into(),
    }
}

/// "+1.2 ms (2.1x)": a later cell against the first.
fn difference(a: Option<f64>, b: Option<f64>, unit: Unit) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a == b => "=".into(),
        (Some(a), Some(b)) => {
            let sign = if b > a { "+" } else { "-" };
            let mut s = format!("{sign}{}", units::quantity((b - a).abs(), unit));
            if a > 0.0 && b > 0.0 {
                let _ = write!(s, " ({:.2}x)", b / a);
            }
            s
        }
        _ => "-".into(),
    }
}

/// Letters naming the cells in the table: A, B, ..., Z, AA, ...
fn letter(i: usize) -> String {
    let mut n = i;
    let mut s = String::new();
    loop {
        s.insert(0, (b'A' + (n % 26) as u8) as char);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    s
}

/// The terminal report for several cells.
pub fn render(xs: &[Explained], top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "explain: {} variants, one traced run each", xs.len());
    let _ = writeln!(out, "{}", render::CAVEAT_LINE);
    let _ = writeln!(out);
    for (i, x) in xs.iter().enumerate() {
        let command = x
            .command
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let mut line = format!("{}  {}", letter(i), label(x));
        if label(x) != command {
            let _ = write!(line, ": {}", render::shorten(&command, 80));
        }
        let _ = writeln!(out, "{line}");
    }
    let rows = rows(xs, top);
    let mut header = vec!["".to_string()];
    header.extend((0..xs.len()).map(letter));
    header.extend((1..xs.len()).map(|i| format!("{} - A", letter(i))));
    let mut table: Vec<Vec<String>> = vec![header];
    for r in &rows {
        let mut line = vec![r.metric.clone()];
        line.extend(r.values.iter().map(|&v| show(v, r.unit)));
        line.extend(
            r.values
                .iter()
                .skip(1)
                .map(|&v| difference(r.values[0], v, r.unit)),
        );
        table.push(line);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| {
            table
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let _ = writeln!(out);
    for line in &table {
        let mut text = String::new();
        for (c, cell) in line.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c == 0 {
                let _ = write!(text, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(text, "  {}{cell}", " ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    }
    // Who created the processes, and what each creation cost until exec.
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Process creation to exec, by method and creator (traced):"
    );
    for (i, x) in xs.iter().enumerate() {
        let times = x.model.spawn_times();
        if times.is_empty() {
            let _ = writeln!(out, "  {}  no process created and exec'd", letter(i));
            continue;
        }
        for t in times {
            let _ = writeln!(
                out,
                "  {}  {:<5} by {}: {} processes, {} in all, {} each",
                letter(i),
                t.created_by.name(),
                String::from_utf8_lossy(basename(&t.creator)),
                thousands(t.count),
                units::time(t.seconds),
                units::time(t.seconds / t.count as f64)
            );
        }
    }
    let diff = hints(xs);
    let _ = writeln!(out);
    if diff.is_empty() {
        let _ = writeln!(out, "Hints: no difference above the hint thresholds.");
    } else {
        let _ = writeln!(out, "Hints:");
        for h in &diff {
            let _ = writeln!(out, "  - {}", h.message);
        }
    }
    for (i, x) in xs.iter().enumerate() {
        for h in &x.hints {
            let _ = writeln!(out, "  {}: {}", letter(i), h.message);
        }
    }
    out
}

/// The program that created most processes of one method, and how many.
fn main_creator(x: &Explained, method: Created) -> Option<(String, u64, f64)> {
    x.model
        .spawn_times()
        .into_iter()
        .filter(|t| t.created_by == method)
        .max_by_key(|t| t.count)
        .map(|t| {
            (
                String::from_utf8_lossy(basename(&t.creator)).into_owned(),
                t.count,
                t.seconds,
            )
        })
}

/// Which method a cell mostly created processes with (that then exec'd).
fn dominant(x: &Explained) -> Option<Created> {
    let [(f, _), (v, _)] = x.model.spawn_time_by_method();
    if f >= SPAWN_HINT_MIN && f > v {
        Some(Created::Fork)
    } else if v >= SPAWN_HINT_MIN && v > f {
        Some(Created::Vfork)
    } else {
        None
    }
}

/// Hints about the differences between the first cell and each other one.
pub fn hints(xs: &[Explained]) -> Vec<Hint> {
    let mut out = Vec::new();
    let Some(a) = xs.first() else {
        return out;
    };
    for b in &xs[1..] {
        spawn_hint(a, b, &mut out);
        env_hint(a, b, &mut out);
        shell_hint(a, b, &mut out);
    }
    out
}

fn spawn_hint(a: &Explained, b: &Explained, out: &mut Vec<Hint>) {
    let (Some(ma), Some(mb)) = (dominant(a), dominant(b)) else {
        return;
    };
    if ma == mb {
        return;
    }
    let (Some((ca, na, sa)), Some((cb, nb, sb))) = (main_creator(a, ma), main_creator(b, mb))
    else {
        return;
    };
    let (each_a, each_b) = (sa / na as f64, sb / nb as f64);
    let (fork_each, vfork_each) = if ma == Created::Fork {
        (each_a, each_b)
    } else {
        (each_b, each_a)
    };
    let mut message = format!(
        "as {}, {ca} created {} processes with {}; as {}, {cb} created {} with {}",
        label(a),
        thousands(na),
        ma.name(),
        label(b),
        thousands(nb),
        mb.name()
    );
    if fork_each > 0.0 && vfork_each > 0.0 {
        let (slower, ratio) = if fork_each >= vfork_each {
            ("fork", fork_each / vfork_each)
        } else {
            ("vfork", vfork_each / fork_each)
        };
        let _ = write!(
            message,
            ": from creation to exec, a fork-style process took {}, a vfork-style one {} ({slower}-style {ratio:.1}x as long per process here, traced)",
            units::time(fork_each),
            units::time(vfork_each)
        );
    }
    out.push(Hint {
        kind: "fork",
        message,
        numbers: vec![
            (
                "fork_processes",
                if ma == Created::Fork { na } else { nb } as f64,
            ),
            (
                "vfork_processes",
                if ma == Created::Vfork { na } else { nb } as f64,
            ),
            ("fork_seconds_each", fork_each),
            ("vfork_seconds_each", vfork_each),
        ],
    });
}

fn env_hint(a: &Explained, b: &Explained, out: &mut Vec<Hint>) {
    let per_exec = |x: &Explained| {
        let e = &x.trace.execs;
        mean(e.env_bytes_total as f64, e.env_measured).map(|m| (m, e.env_vars_max))
    };
    let (Some((ea, va)), Some((eb, vb))) = (per_exec(a), per_exec(b)) else {
        return;
    };
    let (big, small) = if ea >= eb { (ea, eb) } else { (eb, ea) };
    if big < ENV_HINT_BYTES || big < 2.0 * small {
        return;
    }
    let ((lb, bb, vbig), (ls, bs, vsmall)) = if ea >= eb {
        ((label(a), ea, va), (label(b), eb, vb))
    } else {
        ((label(b), eb, vb), (label(a), ea, va))
    };
    // What an execve cost in each (traced), the measured side of the copy.
    let execve_each = |x: &Explained| {
        json::syscall_rows(&x.trace)
            .into_iter()
            .find(|r| r.0 == "execve")
            .filter(|r| r.1 > 0)
            .map(|r| r.2 / r.1 as f64)
    };
    let (xbig, xsmall) = if ea >= eb { (a, b) } else { (b, a) };
    let mut message = format!(
        "{lb} passed a {} environment to every exec (up to {} variables); {ls} passed {} (up to {}): the kernel copies it at every exec",
        units::bytes(bb),
        thousands(vbig),
        units::bytes(bs),
        thousands(vsmall)
    );
    let mut numbers = vec![
        ("env_bytes_per_exec_large", bb),
        ("env_bytes_per_exec_small", bs),
        ("env_vars_large", vbig as f64),
        ("env_vars_small", vsmall as f64),
    ];
    if let (Some(tb), Some(ts)) = (execve_each(xbig), execve_each(xsmall)) {
        let _ = write!(
            message,
            " (execve {} vs {} per call here, traced)",
            units::time(tb),
            units::time(ts)
        );
        numbers.push(("execve_seconds_each_large", tb));
        numbers.push(("execve_seconds_each_small", ts));
    }
    out.push(Hint {
        kind: "environment",
        message,
        numbers,
    });
}

fn shell_hint(a: &Explained, b: &Explained, out: &mut Vec<Hint>) {
    let shells = |x: &Explained| x.model.intermediate_shells().count() as u64;
    let (sa, sb) = (shells(a), shells(b));
    if sa == sb {
        return;
    }
    let overhead =
        |x: &Explained| -> f64 { x.model.intermediate_shells().map(|(_, s)| s.overhead).sum() };
    out.push(Hint {
        kind: "shell",
        message: format!(
            "{} started {} programs through an intermediate shell, {} {} ({} vs {} of shell time before the programs started, traced)",
            label(a),
            thousands(sa),
            label(b),
            thousands(sb),
            units::time(overhead(a)),
            units::time(overhead(b))
        ),
        numbers: vec![
            ("shells_first", sa as f64),
            ("shells_other", sb as f64),
        ],
    });
}

#[derive(Serialize)]
struct Difference {
    metric: String,
    unit: &'static str,
    reference: String,
    variant: String,
    reference_value: Option<f64>,
    value: Option<f64>,
    difference: Option<f64>,
    ratio: Option<f64>,
}

#[derive(Serialize)]
struct Variant {
    name: String,
    parameters: serde_json::Map<String, serde_json::Value>,
    #[serde(flatten)]
    run: serde_json::Value,
}

#[derive(Serialize)]
struct Document {
    schema: &'static str,
    note: &'static str,
    variants: Vec<Variant>,
    differences: Vec<Difference>,
    /// Hints about the differences (each cell's own hints are in its entry).
    hints: Vec<serde_json::Value>,
}

fn unit_name(u: Unit) -> &'static str {
    match u {
        Unit::Seconds => "seconds",
        Unit::Bytes => "bytes",
        Unit::Count => "count",
    }
}

/// The `--json` document for several cells.
pub fn json(xs: &[Explained]) -> Vec<u8> {
    let variants = xs
        .iter()
        .map(|x| {
            let mut run: serde_json::Value =
                serde_json::from_slice(&json::render(x)).unwrap_or_default();
            if let Some(o) = run.as_object_mut() {
                // Said once, at the top.
                o.remove("schema");
                o.remove("note");
            }
            Variant {
                name: x.name.clone(),
                parameters: x
                    .parameters
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
                run,
            }
        })
        .collect();
    let mut differences = Vec::new();
    if let Some(a) = xs.first() {
        for r in rows(xs, usize::MAX) {
            for (i, b) in xs.iter().enumerate().skip(1) {
                let (ra, rb) = (r.values[0], r.values[i]);
                differences.push(Difference {
                    metric: r.metric.clone(),
                    unit: unit_name(r.unit),
                    reference: a.name.clone(),
                    variant: b.name.clone(),
                    reference_value: ra,
                    value: rb,
                    difference: ra.zip(rb).map(|(x, y)| y - x),
                    ratio: ra.zip(rb).filter(|(x, _)| *x > 0.0).map(|(x, y)| y / x),
                });
            }
        }
    }
    let doc = Document {
        schema: SCHEMA,
        note: super::CAVEAT,
        variants,
        differences,
        hints: hints(xs)
            .iter()
            .map(|h| {
                serde_json::json!({
                    "kind": h.kind,
                    "message": h.message,
                    "numbers": h.numbers.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect(),
    };
    let mut out = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_name_cells() {
        assert_eq!(letter(0), "A");
        assert_eq!(letter(25), "Z");
        assert_eq!(letter(26), "AA");
        assert_eq!(letter(27), "AB");
    }

    #[test]
    fn differences_are_signed_with_ratios() {
        assert_eq!(difference(Some(2.0), Some(2.0), Unit::Count), "=");
        assert_eq!(difference(Some(2.0), Some(6.0), Unit::Count), "+4 (3.00x)");
        assert_eq!(difference(Some(6.0), Some(2.0), Unit::Count), "-4 (0.33x)");
        assert_eq!(difference(Some(0.0), Some(5.0), Unit::Count), "+5");
        assert_eq!(difference(None, Some(5.0), Unit::Count), "-");
    }
}
