//! The layout's promise, checked on the code: the workspace's crates
//! depend on one another down docs/ARCHITECTURE.md's layers and only the
//! CLI crate on clap (read from `cargo metadata`); imports between the
//! files of `src/` and `crates/*/src/` form no circle, every file has a
//! layer of docs/ARCHITECTURE.md's table, no file imports one of a layer
//! above its own, commands compute no statistics, and command files write
//! no text themselves (the rule is at [`text_written`]).
//!
//! Imports are read as text (`crate::a::b` and `super::` paths, brace groups
//! included), outside comments and outside the items under `#[cfg(test)]`
//! (see [`code`]); a path names the longest module prefix that is a source
//! file. Every crate re-exports the modules of those below at their old
//! paths, so `crate::stats` names the same module in every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source folders: the root package's `src/` and each workspace
/// crate's (`crates/*/src`). Every crate names the modules of the crates
/// below it at their old paths (`crate::stats`, `crate::run::plan`), so the
/// files read as one tree of modules.
fn source_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs
}

/// Module path (`["analysis", "comparison"]`) of every source file, with
/// its files (a module whose folder is split between two crates, as `run`
/// is, has a `mod.rs` in each).
fn modules() -> BTreeMap<Vec<String>, Vec<PathBuf>> {
    let mut out: BTreeMap<Vec<String>, Vec<PathBuf>> = BTreeMap::new();
    for src in source_dirs() {
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let rel = path.strip_prefix(&src).unwrap().with_extension("");
                let mut parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                match parts.last().map(String::as_str) {
                    Some("lib") | Some("main") => parts = vec![parts.pop().unwrap()],
                    Some("mod") => {
                        parts.pop();
                    }
                    Some("tests") => continue, // test modules in their own file
                    _ => {}
                }
                out.entry(parts).or_default().push(path);
            }
        }
    }
    out
}

/// The file's code without comments and without the items under
/// `#[cfg(test)]` (a test module, or whatever single item follows the
/// attribute), so that test-only imports and test text are not checked but
/// everything after them is. String and character literals are kept as they
/// are, and a brace, `//` or `#[cfg(test)]` inside one is not code.
fn code(text: &str) -> String {
    read(text).0
}

/// [`code`], with for each of its bytes whether it belongs to a string or
/// character literal.
fn read(text: &str) -> (String, Vec<bool>) {
    let (clean, literal) = strip_comments(text);
    const TEST: &str = "#[cfg(test)]";
    let (mut out, mut mask) = (String::new(), Vec::new());
    let mut i = 0;
    while i < clean.len() {
        if !literal[i] && clean[i..].starts_with(TEST) {
            i = item_end(&clean, &literal, i + TEST.len());
            continue;
        }
        let c = clean[i..].chars().next().unwrap();
        out.push(c);
        mask.extend_from_slice(&literal[i..i + c.len_utf8()]);
        i += c.len_utf8();
    }
    (out, mask)
}

/// `text` without its comments (line, block and nested block comments; a
/// comment's newlines kept), and for each byte of the result whether it
/// belongs to a string or character literal.
fn strip_comments(text: &str) -> (String, Vec<bool>) {
    let b = text.as_bytes();
    let (mut out, mut literal) = (String::new(), Vec::new());
    fn keep(out: &mut String, literal: &mut Vec<bool>, s: &str, lit: bool) {
        out.push_str(s);
        literal.extend(std::iter::repeat_n(lit, s.len()));
    }
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        let after_ident = i > 0 && is_ident(b[i - 1] as char);
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if text[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if text[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[j] == b'\n' {
                        keep(&mut out, &mut literal, "\n", false);
                    }
                    j += 1;
                }
            }
            i = j;
        } else if let Some(len) = raw_string(rest).filter(|_| !after_ident) {
            keep(&mut out, &mut literal, &rest[..len], true);
            i += len;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            keep(&mut out, &mut literal, &text[i..end], true);
            i = end;
        } else if let Some(len) = char_literal(rest) {
            keep(&mut out, &mut literal, &rest[..len], true);
            i += len;
        } else {
            let c = rest.chars().next().unwrap();
            keep(&mut out, &mut literal, &rest[..c.len_utf8()], false);
            i += c.len_utf8();
        }
    }
    (out, literal)
}

/// The length of the raw string literal (`r"…"`, `r#"…"#`, `br"…"`) that
/// `text` starts with.
fn raw_string(text: &str) -> Option<usize> {
    let body = text.strip_prefix("br").or_else(|| text.strip_prefix('r'))?;
    let hashes = body.len() - body.trim_start_matches('#').len();
    let inner = body[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = inner.find(&close)?;
    Some(text.len() - inner.len() + end + close.len())
}

/// The length of the character literal (`'x'`, `'\n'`, `'\u{1f}'`) that
/// `text` starts with; None for a lifetime or a label (`'a`).
fn char_literal(text: &str) -> Option<usize> {
    let body = text.strip_prefix('\'')?;
    if let Some(escaped) = body.strip_prefix('\\') {
        let end = escaped.get(1..)?.find('\'')? + 1;
        return Some(2 + end + 1);
    }
    let c = body.chars().next()?;
    body[c.len_utf8()..]
        .starts_with('\'')
        .then_some(1 + c.len_utf8() + 1)
}

/// Where the item that starts at `from` ends: after the `;` or `,` at its
/// own depth, after the `}` that closes its body, or before a closing
/// bracket it did not open (the end of the block around it). Attributes
/// before the item are part of it. Generics (`<A, B>`) are not brackets, so
/// an item with them may end early: test code is then checked, never code
/// hidden.
fn item_end(text: &str, literal: &[bool], from: usize) -> usize {
    let mut depth = 0usize;
    for (j, c) in text[from..].char_indices() {
        let at = from + j;
        if literal[at] {
            continue;
        }
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return at,
            '}' if depth == 1 => return at + 1,
            ')' | ']' | '}' => depth -= 1,
            ';' | ',' if depth == 0 => return at + 1,
            _ => {}
        }
    }
    text.len()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path written after `crate::` or `super::` (with `{a, b::c}` groups
/// expanded), as segments relative to the crate root.
fn paths(code: &str, own: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (start, root) in [("crate::", 0usize), ("super::", 1)] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && code[..at].ends_with(|c: char| is_ident(c) || c == ':') {
                continue; // `foo::crate::` or `super::super::` handled below
            }
            // `super` of a module (a mod.rs is its folder's module) is the
            // module one level up.
            let mut base: Vec<String> = if root == 0 {
                Vec::new()
            } else {
                own[..own.len().saturating_sub(1)].to_vec()
            };
            let mut rest = &code[from..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            expand(rest, base, &mut out);
        }
    }
    out
}

fn expand(text: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = text;
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        let seg = &rest[..end];
        rest = &rest[end..];
        if seg.is_empty() {
            if let Some(group) = rest.strip_prefix('{') {
                let close = matching_brace(group);
                for item in split_top(&group[..close]) {
                    expand(item.trim(), prefix.clone(), out);
                }
            }
            break;
        }
        prefix.push(seg.to_string());
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    out.push(prefix);
}

fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

fn split_top(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// file -> files it imports (by module path).
fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mods = modules();
    let mut g = BTreeMap::new();
    for (m, files) in &mods {
        if m == &["main"] {
            continue; // the binary sits above everything
        }
        let text: String = files
            .iter()
            .map(|path| code(&std::fs::read_to_string(path).unwrap()))
            .collect();
        let mut deps = BTreeSet::new();
        for p in paths(&text, m) {
            // The longest prefix of the path that is a file.
            if let Some(k) = (1..=p.len()).rev().find(|&k| mods.contains_key(&p[..k])) {
                let target = p[..k].to_vec();
                if &target != m && target != ["lib"] {
                    deps.insert(target);
                }
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

fn name(m: &[String]) -> String {
    m.join("::")
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a Vec<String>) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let Some((w, _)) = t.g.get_key_value(w) else {
                continue;
            };
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[w].min(t.low[v]);
                t.low.insert(v, l);
            } else if t.on.contains(w) {
                let l = t.index[w].min(t.low[v]);
                t.low.insert(v, l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                c.push(name(w));
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn imports_form_no_circle() {
    let g = graph();
    assert!(g.len() > 50, "read only {} files", g.len());
    let found = circles(&g);
    let text: Vec<String> = found
        .iter()
        .map(|c| {
            let set: BTreeSet<&String> = c.iter().collect();
            let arrows: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    let key: Vec<String> = a.split("::").map(str::to_string).collect();
                    g[&key]
                        .iter()
                        .filter(|b| set.contains(&name(b)))
                        .map(move |b| format!("{a} -> {}", name(b)))
                })
                .collect();
            arrows.join(", ")
        })
        .collect();
    assert!(found.is_empty(), "import circles: {}", text.join(" | "));
}

#[test]
fn only_the_binary_and_commands_use_commands() {
    let g = graph();
    let up: Vec<String> = g
        .iter()
        .filter(|(m, _)| m[0] != "commands")
        .flat_map(|(m, deps)| {
            deps.iter()
                .filter(|d| d[0] == "commands")
                .map(move |d| format!("{} -> {}", name(m), name(d)))
        })
        .collect();
    assert!(up.is_empty(), "imports up into commands: {up:?}");
}

#[test]
fn the_lowest_layers_import_nothing_above_them() {
    // stats: pure numbers; exec: processes; metrics, units, output, error:
    // the vocabulary everything shares.
    let allowed: &[(&str, &[&str])] = &[
        ("stats", &["stats", "error"]),
        ("metrics", &[]),
        ("dirs", &[]),
        ("error", &["error"]),
        ("units", &["metrics", "output"]),
        ("output", &["error", "output"]),
        ("exec", &["exec", "error", "metrics", "run", "dirs"]),
    ];
    let g = graph();
    let mut bad = Vec::new();
    for (m, deps) in &g {
        let Some((_, ok)) = allowed.iter().find(|(top, _)| m[0] == *top) else {
            continue;
        };
        for d in deps {
            if !ok.contains(&d[0].as_str()) {
                bad.push(format!("{} -> {}", name(m), name(d)));
            }
        }
    }
    assert!(bad.is_empty(), "a low layer imports upward: {bad:?}");
}

/// Imports from `m` into modules whose path starts with one of `into`.
fn imports_into(
    g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    m: &str,
    into: &[&[&str]],
) -> Vec<String> {
    g.iter()
        .filter(|(from, _)| from[0] == m)
        .flat_map(|(from, deps)| {
            deps.iter()
                .filter(|d| {
                    into.iter()
                        .any(|p| d.len() >= p.len() && d.iter().zip(p.iter()).all(|(a, b)| a == b))
                })
                .map(move |d| format!("{} -> {}", name(from), name(d)))
        })
        .collect()
}

#[test]
fn commands_compute_no_statistics() {
    // Every estimate a command shows comes through `analysis/`, which
    // decides how it is computed (pairing, subsampling, levels).
    let bad = imports_into(&graph(), "commands", &[&["stats"]]);
    assert!(bad.is_empty(), "commands importing stats: {bad:?}");
}

#[test]
fn analysis_renders_nothing_and_report_decides_nothing() {
    let g = graph();
    // The answers know neither their words nor the command line.
    let bad = imports_into(&g, "analysis", &[&["report"], &["cli"], &["commands"]]);
    assert!(bad.is_empty(), "analysis imports a front end: {bad:?}");
    // The renderings read models; they neither run commands nor write the store.
    let bad = imports_into(
        &g,
        "report",
        &[&["commands"], &["store", "writer"], &["store", "record"]],
    );
    assert!(
        bad.is_empty(),
        "report imports a command or a store writer: {bad:?}"
    );
}

/// The layers of docs/ARCHITECTURE.md, from the top: a file may import
/// files of its own layer and of those below, never of a layer above. A
/// file's layer is that of the longest prefix of its module path listed
/// here.
const LAYERS: &[(&str, &[&str])] = &[
    ("binary", &["main"]),
    ("commands", &["commands"]),
    ("front ends", &["report", "explain", "suite", "cli"]),
    ("deciding", &["search", "runner", "profile", "monitor"]),
    ("answering", &["analysis"]),
    ("storing", &["store"]),
    ("measuring", &["run", "exec", "import"]),
    (
        "vocabulary",
        &["stats", "metrics", "units", "output", "error", "dirs"],
    ),
];

#[test]
fn the_store_observes_sessions_without_the_runner() {
    let g = graph();
    // The store is below the deciding layer: it consumes the session's
    // events (`run::events`) and never imports what emits or shows them.
    let bad = imports_into(&g, "store", &[&["runner"], &["search"]]);
    assert!(
        bad.is_empty(),
        "the store imports the deciding layer: {bad:?}"
    );
}

/// The layer (index into [`LAYERS`], 0 the top) of a module path.
fn layer(m: &[String]) -> Option<usize> {
    let path = name(m);
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |p| (i, *p)))
        .filter(|(_, p)| path == *p || path.starts_with(&format!("{p}::")))
        .max_by_key(|(_, p)| p.len())
        .map(|(i, _)| i)
}

/// Imports from a lower layer into a higher one, as "from -> to".
fn upward(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<String> {
    let mut out = Vec::new();
    for (m, deps) in g {
        let Some(from) = layer(m) else { continue };
        for d in deps {
            if layer(d).is_some_and(|to| to < from) {
                out.push(format!("{} -> {}", name(m), name(d)));
            }
        }
    }
    out
}

#[test]
fn every_file_has_a_layer() {
    let g = graph();
    let unplaced: Vec<String> = g
        .keys()
        .filter(|m| m.as_slice() != ["lib"] && layer(m).is_none())
        .map(|m| name(m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "files in no layer (add them to LAYERS and docs/ARCHITECTURE.md): {unplaced:?}"
    );
}

#[test]
fn no_file_imports_a_layer_above_its_own() {
    let found = upward(&graph());
    assert!(found.is_empty(), "imports up the layers: {found:?}");
}

#[test]
fn the_layer_check_sees_an_arrow_up() {
    let m = |p: &str| -> Vec<String> { p.split("::").map(str::to_string).collect() };
    let mut g = BTreeMap::new();
    g.insert(m("run::plan"), BTreeSet::from([m("runner")]));
    g.insert(m("runner"), BTreeSet::from([m("run::plan"), m("stats")]));
    g.insert(m("stats"), BTreeSet::from([m("error")]));
    assert_eq!(upward(&g), ["run::plan -> runner"]);
    assert_eq!(layer(&m("runner::drive")), Some(3));
    assert_eq!(layer(&m("run::plan")), Some(6));
    assert_eq!(layer(&m("analysis::changes::simulated")), Some(4));
    assert_eq!(layer(&m("nowhere")), None);
}

/// What a command file may not do with text, found in its code (see
/// [`read`]): each finding as "what (the code around it)".
///
/// Commands hand their models to `report/` (or `explain/`) for their words
/// and print what those return. They may build error values, names, labels,
/// file paths and one-line diagnostics (`eprint_line!`) with `format!`, so
/// the rule is on the means of writing output, not on `format!` itself:
/// - no `write!`, `writeln!`, `print!`, `println!`, `eprint!`, `eprintln!`,
///   and no `stdout()` or `stderr()` of their own but to ask whether it is a
///   terminal: stdout is `output::print`'s, stderr `eprint_line!`'s;
/// - no text built piece by piece (`push_str`), and no JSON of their own
///   (`serde_json::to_string*`);
/// - no line break in any string or character literal (a text of several
///   lines is a rendering; a diagnostic is one line), and no width,
///   alignment or precision in the placeholders of a `format!` or
///   `eprint_line!` (`{:<8}`, `{x:>5}`, `{:.2}`: laying out columns and
///   rounding numbers is the renderers' and `units`' work);
/// - what `output::print` and `output::print_bytes` are given holds no
///   `format!` and no string literal of the command's: a renderer made it;
///   `print_line!` only as `print_line!("{}", …)` with the same rule on
///   what it prints (a renderer's text on a line of its own).
fn text_written(text: &str) -> Vec<String> {
    let (code, literal) = read(text);
    let mut found = Vec::new();
    let around = |at: usize| -> String {
        let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = code[at..].find('\n').map_or(code.len(), |i| at + i);
        code[line_start..line_end].trim().to_string()
    };
    // Every occurrence of `word` in code (not in a literal) that does not
    // continue an identifier or a path segment before it.
    let at = |word: &str| -> Vec<usize> {
        code.match_indices(word)
            .map(|(i, _)| i)
            .filter(|&i| !literal[i])
            .filter(|&i| !code[..i].ends_with(|c: char| is_ident(c)))
            .collect()
    };
    for mac in [
        "write!(",
        "writeln!(",
        "print!(",
        "println!(",
        "eprint!(",
        "eprintln!(",
        "stdout()",
        "stderr()",
        "push_str(",
        "serde_json::to_string",
    ] {
        for i in at(mac) {
            if mac.ends_with("()") && code[i + mac.len()..].starts_with(".is_terminal()") {
                continue;
            }
            found.push(format!("{mac} ({})", around(i)));
        }
    }
    let mut i = 0;
    while i < code.len() {
        let len = literal[i..].iter().take_while(|&&l| l).count();
        if len > 0 && line_break(&code[i..i + len]) {
            found.push(format!("a line break ({})", around(i)));
        }
        i += len.max(1);
    }
    for mac in ["format!(", "eprint_line!("] {
        for i in at(mac) {
            let start = i + mac.len();
            let Some(lit) = literal_after(&code, &literal, start) else {
                continue;
            };
            if laid_out(lit) {
                found.push(format!("a laid-out placeholder in {mac} ({})", around(i)));
            }
        }
    }
    for call in ["output::print(", "output::print_bytes(", "print_line!("] {
        for i in at(call) {
            let mut start = i + call.len();
            if call == "print_line!(" {
                match literal_after(&code, &literal, start) {
                    Some("\"{}\"") => {
                        start = code[start..].find(',').map_or(start, |c| start + c + 1)
                    }
                    _ => {
                        found.push(format!("print_line! of its own text ({})", around(i)));
                        continue;
                    }
                }
            }
            let end = item_end(&code, &literal, start);
            let arg = &code[start..end];
            let has_literal = literal[start..end].iter().any(|&l| l);
            if arg.contains("format!(") || has_literal {
                found.push(format!("text of its own printed ({})", around(i)));
            }
        }
    }
    found
}

/// The string literal that starts `code[from..]` after blanks, if any.
fn literal_after<'a>(code: &'a str, literal: &[bool], from: usize) -> Option<&'a str> {
    let start = from + (code[from..].len() - code[from..].trim_start().len());
    if start >= code.len() || !literal[start] {
        return None;
    }
    let len = literal[start..].iter().take_while(|&&l| l).count();
    Some(&code[start..start + len])
}

/// Whether a literal's text holds a line break (`\n`, or a new line not
/// continued by a backslash).
fn line_break(lit: &str) -> bool {
    let mut chars = lit.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => return true,
                // A backslash at the end of a line continues the string.
                Some('\n') => {}
                _ => {}
            },
            '\n' => return true,
            _ => {}
        }
    }
    false
}

/// Whether a format string has a placeholder with a width, an alignment or
/// a precision.
fn laid_out(lit: &str) -> bool {
    let mut chars = lit.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.next_if_eq(&'{').is_some() => {}
            '{' => {
                let spec: String = chars.by_ref().take_while(|&c| c != '}').collect();
                if let Some((_, spec)) = spec.split_once(':') {
                    if spec.contains(['<', '>', '^', '.'])
                        || spec.contains(|c: char| c.is_ascii_digit())
                    {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// Every command hands its model to `report/` (or `explain/`) for its words.
#[test]
fn commands_hand_their_text_to_the_renderers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut bad = Vec::new();
    let mut stack = vec![dir.clone()];
    let mut files = 0;
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("tests.rs") {
                continue;
            }
            files += 1;
            let rel = path
                .strip_prefix(&dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            for f in text_written(&std::fs::read_to_string(&path).unwrap()) {
                bad.push(format!("{rel}: {f}"));
            }
        }
    }
    assert!(files > 10, "read only {files} command files");
    assert!(
        bad.is_empty(),
        "commands writing text themselves:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_text_rule_tells_renderings_from_errors_and_paths() {
    let allowed = r#"
fn run() -> Result<i32> {
    let path = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor");
    if bad {
        return Err(Error::Usage(format!("'{x}' is not a number: {e:?} (0x{n:x})")));
    }
    crate::eprint_line!("cmdscope: warning: {e}");
    let out = crate::report::doctor::text(&checks, fixed.as_ref());
    crate::output::print(&crate::output::escape_controls(&out));
    crate::print_line!("{}", suite_list::json(&listed)?);
    let colour = std::io::stderr().is_terminal();
    let _ = "print!(";
    Ok(0)
}
#[cfg(test)]
mod tests {
    fn t() { println!("{:>8}\n", 1); }
}
"#;
    assert_eq!(text_written(allowed), Vec::<String>::new());
    let written = r#"
fn run() {
    out.push_str(&render(&checks));
    out.push_str(&format!("{status:<8} {}\n", c.name));
    let line = format!("{:.2} ± {err:.2}", ratio);
    crate::output::print(&format!("No sessions in store '{}' match.", s));
    crate::output::print("done");
    println!("{}", x);
    std::io::stdout().lock();
    crate::print_line!("run id: {run_id}");
    crate::print_line!("{}", format!("{x}"));
    let doc = serde_json::to_string_pretty(&status);
    crate::eprint_line!("first line\nsecond line");
    let long = format!("a \
        continued line {x}");
    let text = lines.join("\n");
    out.push('\n');
}
"#;
    let found = text_written(written);
    let count = |what: &str| found.iter().filter(|f| f.starts_with(what)).count();
    assert_eq!(count("push_str("), 2, "{found:#?}");
    assert_eq!(count("a laid-out placeholder in format!("), 2, "{found:#?}");
    assert_eq!(count("a line break"), 4, "{found:#?}");
    assert_eq!(count("text of its own printed"), 3, "{found:#?}");
    assert_eq!(count("println!("), 1, "{found:#?}");
    assert_eq!(count("stdout()"), 1, "{found:#?}");
    assert_eq!(count("print_line! of its own text"), 1, "{found:#?}");
    assert_eq!(count("serde_json::to_string"), 1, "{found:#?}");
    assert_eq!(found.len(), 15, "{found:#?}");
}

#[test]
fn the_reader_sees_paths_through_groups_and_super() {
    let text = "use crate::exec::{self, signals, Input};\nuse super::comparison::Verdict;\n// use crate::commands::x;\n";
    let own = vec!["analysis".to_string(), "sequential".to_string()];
    let found = paths(&code(text), &own);
    let names: Vec<String> = found.iter().map(|p| name(p)).collect();
    assert!(names.contains(&"exec::signals".to_string()), "{names:?}");
    assert!(
        names.contains(&"analysis::comparison::Verdict".to_string()),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("commands")),
        "{names:?}"
    );
}

#[test]
fn the_reader_skips_only_the_test_items() {
    // Mirrors a mod.rs that declares a test-only module among the others:
    // everything after it is code again.
    let text = r##"pub mod a;
#[cfg(test)]
pub(crate) mod simulation;
use crate::kept::before;
#[cfg(test)]
#[allow(dead_code)]
fn only_in_tests() -> [u8; 2] { let _ = "}"; let _ = '{'; crate::hidden::one(); [0, 1] }
/* use crate::hidden::block; /* nested */ still a comment */
use crate::kept::after; // use crate::hidden::comment;
const TEXT: &str = r#"#[cfg(test)] { "#;
pub fn f<'a>(x: &'a str) -> &'a str { crate::kept::call(); x }
#[cfg(test)]
mod tests {
    use crate::hidden::tests;
    const S: &str = "{ not a brace";
    fn g() -> char { '}' }
}
pub fn last() { crate::kept::last(); }
"##;
    let own = vec!["analysis".to_string()];
    let names: Vec<String> = paths(&code(text), &own).iter().map(|p| name(p)).collect();
    for kept in ["kept::before", "kept::after", "kept::call", "kept::last"] {
        assert!(
            names.contains(&kept.to_string()),
            "{kept} missing: {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n.starts_with("hidden")), "{names:?}");
    // An item under `#[cfg(test)]` inside a block ends with that block.
    let inner = "fn f() {\n    #[cfg(test)]\n    let x = 1\n}\nuse crate::kept::out;\n";
    assert_eq!(code(inner), "fn f() {\n    }\nuse crate::kept::out;\n");
}

/// The string literals of `text`'s code (tests left out, see [`read`]) that
/// name a flag (" --" and a letter, or "--" and a letter at the start):
/// advice worded in the file. A literal given to an error value
/// (`Error::…` before it in its statement) is an error message, which may
/// name the flag the user typed.
fn flag_advice(text: &str) -> Vec<String> {
    let (code, literal) = read(text);
    let mut found = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let len = literal[i..].iter().take_while(|&&l| l).count();
        if len == 0 {
            i += 1;
            continue;
        }
        let lit = &code[i..i + len];
        let body = lit.trim_start_matches(['r', '#', '"']);
        let flag = |s: &str| {
            s.strip_prefix("--")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_lowercase()))
        };
        let names_flag = flag(body) || body.match_indices(" --").any(|(k, _)| flag(&body[k + 1..]));
        let statement = code[..i].rfind([';', '{', '}']).map_or(0, |s| s + 1);
        if names_flag && !code[statement..i].contains("Error::") {
            found.push(lit.to_string());
        }
        i += len;
    }
    found
}

/// The analysis layer returns typed reasons (`analysis::comparison::Note`,
/// `analysis::warning::Warning`); `report/` words them. No advice naming a
/// flag is written in `analysis/`.
#[test]
fn analysis_words_no_advice() {
    let mut bad = Vec::new();
    let mut files = 0;
    for (module, paths) in modules() {
        if module.first().map(String::as_str) != Some("analysis") {
            continue;
        }
        let [path] = paths.as_slice() else {
            panic!("{paths:?}: one module in two crates")
        };
        files += 1;
        for lit in flag_advice(&std::fs::read_to_string(path).unwrap()) {
            bad.push(format!("{}: {lit}", path.display()));
        }
    }
    assert!(files > 15, "read only {files} analysis files");
    assert!(
        bad.is_empty(),
        "advice worded in analysis/:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_advice_rule_tells_advice_from_errors() {
    let advice = r#"
fn more_runs(n: usize) -> String {
    format!("run longer with --runs {n}")
}
const HINT: &str = "--until-decided";
"#;
    assert_eq!(
        flag_advice(advice),
        ["\"run longer with --runs {n}\"", "\"--until-decided\""]
    );
    let allowed = r#"
fn parse(text: &str) -> Result<Source> {
    Err(Error::Usage(format!(
        "unknown --metric '{text}': one of {}",
        NAMES.join(", ")
    )))
}
fn range() -> String { format!("{}–{}", 1, 2) }
#[cfg(test)]
mod tests {
    fn t() { assert!(note.contains("--runs 5")); }
}
"#;
    assert!(
        flag_advice(allowed).is_empty(),
        "{:?}",
        flag_advice(allowed)
    );
}

/// Each file of `src/` stays one concept a reader can hold: none is over
/// 1,000 lines (a file that grows past it is split by concept, its tests
/// with it).
#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack = source_dirs();
    let mut long = Vec::new();
    let mut read = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                read += 1;
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > 1000 {
                    long.push(format!(
                        "{} ({lines})",
                        path.strip_prefix(root).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(read > 50, "read only {read} files");
    assert!(long.is_empty(), "files over 1,000 lines: {long:?}");
}

/// The layers of docs/ARCHITECTURE.md's "Layers" table, from the top, and
/// for each crate of its "Crates" table the layers it holds.
fn documented_crates() -> (Vec<String>, BTreeMap<String, Vec<String>>) {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .unwrap();
    // The rows of the table that follows `heading`, as their cells.
    let rows = |heading: &str| -> Vec<Vec<String>> {
        let at = doc
            .find(heading)
            .unwrap_or_else(|| panic!("no '{heading}' in ARCHITECTURE.md"));
        doc[at..]
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2) // the header and its rule
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_string())
                    .collect()
            })
            .collect()
    };
    let layers: Vec<String> = rows("\n## Layers\n")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let crates = rows("\n## Crates\n")
        .into_iter()
        .map(|r| {
            let name = r[0].split('`').nth(1).unwrap_or(&r[0]).to_string();
            let held = r[1].split(", ").map(str::to_string).collect();
            (name, held)
        })
        .collect();
    (layers, crates)
}

/// Every dependency between the workspace's crates (`cargo metadata`'s
/// `packages`) that climbs: into a crate holding a layer above the lowest
/// layer of the crate that depends on it (a crate may use one of its own
/// layer, as a module may). Also a crate missing from the
/// "Crates" table, a layer it names that the "Layers" table has not, and
/// any crate but the one holding the `binary` layer that depends on clap.
fn crate_edges_against_layers(
    metadata: &serde_json::Value,
    layers: &[String],
    crates: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let mut found = Vec::new();
    let rank = |layer: &str| layers.iter().position(|l| l == layer);
    // A crate's highest and lowest layer (0 is the top).
    let span = |name: &str| -> Option<(usize, usize)> {
        let ranks: Vec<usize> = crates.get(name)?.iter().filter_map(|l| rank(l)).collect();
        Some((*ranks.iter().min()?, *ranks.iter().max()?))
    };
    for (name, held) in crates {
        for l in held.iter().filter(|l| rank(l).is_none()) {
            found.push(format!("{name} holds '{l}', which is not a layer"));
        }
    }
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    for p in &packages {
        let from = p["name"].as_str().unwrap_or("?");
        let Some((_, from_low)) = span(from) else {
            found.push(format!(
                "crate {from} is not in ARCHITECTURE.md's Crates table"
            ));
            continue;
        };
        let is_cli = crates[from].iter().any(|l| l == "binary");
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let to = d["name"].as_str().unwrap_or("?");
            let kind = d["kind"].as_str().unwrap_or("normal");
            if to.starts_with("clap") && !is_cli {
                found.push(format!(
                    "{from} depends on {to} ({kind}): only the CLI crate may"
                ));
            }
            if !members.contains(to) {
                continue;
            }
            match span(to) {
                Some((to_high, _)) if to_high >= from_low => {}
                _ => found.push(format!("{from} -> {to} ({kind}) climbs the layers")),
            }
        }
    }
    found
}

fn cargo_metadata() -> serde_json::Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The walls the compiler keeps: each crate's dependencies on the others
/// point down docs/ARCHITECTURE.md's layers, and only the CLI crate knows
/// clap.
#[test]
fn crate_dependencies_follow_the_layers() {
    let (layers, crates) = documented_crates();
    assert!(layers.len() >= 7, "layers read: {layers:?}");
    let metadata = cargo_metadata();
    let names: BTreeSet<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.len() >= 4, "workspace crates: {names:?}");
    let documented: BTreeSet<&str> = crates.keys().map(String::as_str).collect();
    assert_eq!(
        names, documented,
        "the workspace's crates and ARCHITECTURE.md's"
    );
    let found = crate_edges_against_layers(&metadata, &layers, &crates);
    assert!(found.is_empty(), "{found:#?}");
}

/// Each file of a crate under `crates/` sits in one of the layers the
/// crate holds (the layer of [`LAYERS`] its module path falls in).
#[test]
fn every_crate_holds_the_files_of_its_layers() {
    let (_, crates) = documented_crates();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bad = Vec::new();
    for (m, files) in modules() {
        for f in files {
            let Ok(rel) = f.strip_prefix(root.join("crates")) else {
                continue;
            };
            let krate = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            if m == ["lib"] {
                continue;
            }
            let Some(layer) = layer(&m) else { continue }; // every_file_has_a_layer
            let name = LAYERS[layer].0;
            let held = crates.get(krate.as_ref()).cloned().unwrap_or_default();
            // LAYERS names "front ends" what the table calls "front ends and outputs".
            if !held.iter().any(|h| h.starts_with(name)) {
                bad.push(format!("{} ({name}) in {krate}", rel.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "files in the crate of another layer: {bad:?}"
    );
}

#[test]
fn the_crate_check_sees_a_climbing_edge_and_clap_below() {
    let layers: Vec<String> = ["top", "middle", "bottom"].map(String::from).to_vec();
    let crates: BTreeMap<String, Vec<String>> = [
        ("app", vec!["binary", "top"]),
        ("mid", vec!["middle"]),
        ("low", vec!["bottom"]),
    ]
    .into_iter()
    .map(|(c, l)| (c.to_string(), l.into_iter().map(String::from).collect()))
    .collect();
    let layers: Vec<String> = std::iter::once("binary".to_string())
        .chain(layers)
        .collect();
    let metadata = serde_json::json!({"packages": [
        {"name": "app", "dependencies": [
            {"name": "mid", "kind": null}, {"name": "clap", "kind": null}]},
        {"name": "mid", "dependencies": [
            {"name": "low", "kind": null}, {"name": "serde", "kind": null}]},
        {"name": "low", "dependencies": [
            {"name": "mid", "kind": "dev"}, {"name": "clap_complete", "kind": null}]},
    ]});
    assert_eq!(
        crate_edges_against_layers(&metadata, &layers, &crates),
        [
            "low -> mid (dev) climbs the layers",
            "low depends on clap_complete (normal): only the CLI crate may",
        ]
    );
    // Into a crate of one's own layer is no climb; into one that also
    // holds a layer above is.
    let mut same = crates.clone();
    same.insert("mid".into(), vec!["bottom".into()]);
    let found = crate_edges_against_layers(&metadata, &layers, &same);
    assert!(!found.iter().any(|f| f.starts_with("mid ->")), "{found:?}");
    same.insert("low".into(), vec!["middle".into(), "bottom".into()]);
    let found = crate_edges_against_layers(&metadata, &layers, &same);
    assert!(
        found.contains(&"mid -> low (normal) climbs the layers".to_string()),
        "{found:?}"
    );
    // An undocumented crate is reported.
    let mut missing = crates.clone();
    missing.remove("low");
    let found = crate_edges_against_layers(&metadata, &layers, &missing);
    assert!(found.contains(&"crate low is not in ARCHITECTURE.md's Crates table".to_string()));
}
