//! `cmdscope completions` and `cmdscope man`: generated from the parser,
//! loaded by the real shell and rendered by the real `man`.
//!
//! Without `man` (and without groff) the rendering test prints `SKIPPED: …`
//! and passes, except in CI (CI=true), where .ci/run installs man-db.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::*;

/// cmdscope in a fresh data directory, which must stay empty: generating
/// text never opens (or creates) the default store.
fn generate(args: &[&str]) -> Output {
    let data = tempdir();
    let o = Command::new(bin())
        .args(args)
        .env("XDG_DATA_HOME", data.path())
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE")
        .output()
        .expect("run cmdscope");
    let left: Vec<_> = std::fs::read_dir(data.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "{args:?} wrote to the data directory: {left:?}"
    );
    o
}

fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

/// Runs `script` in bash with `$1` the completion script's path.
fn bash(script: &str, completion: &Path) -> String {
    let o = Command::new("bash")
        .args(["-c", script, "bash"])
        .arg(completion)
        .output()
        .expect("run bash");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    text(&o)
}

#[test]
fn bash_loads_the_completions_and_completes_subcommands_and_flags() {
    let dir = tempdir();
    let file = dir.path().join("cmdscope.bash");
    std::fs::write(&file, ok(generate(&["completions", "bash"])).stdout).unwrap();
    assert_eq!(
        bash(r#"source "$1" && complete -p cmdscope"#, &file),
        "complete -o bashdefault -o default -o nosort -F _cmdscope cmdscope\n"
    );
    // The completion function itself: a subcommand's prefix, then one of
    // run's flags; the internal store writer is never offered.
    let complete = |words: &str| {
        bash(
            &format!(
                r#"source "$1"; COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
                _cmdscope cmdscope "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
                printf '%s\n' "${{COMPREPLY[@]}}""#
            ),
            &file,
        )
    };
    assert_eq!(complete("cmdscope hist"), "history\n");
    assert_eq!(complete("cmdscope run --reference-n"), "--reference-name\n");
    assert_eq!(complete("cmdscope __"), "\n");
    let all = complete("cmdscope ''");
    for sub in ["run", "compare", "history", "completions", "man"] {
        assert!(all.lines().any(|l| l == sub), "{sub} not offered: {all}");
    }
}

#[test]
fn every_shell_gets_a_script_naming_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = text(&ok(generate(&["completions", shell])));
        for word in ["history", "reference-name", "completions"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
        assert!(
            !script.contains("store-writer"),
            "{shell} offers the internal writer"
        );
    }
    assert!(text(&generate(&["completions", "zsh"])).starts_with("#compdef cmdscope\n"));
    let fish = text(&generate(&["completions", "fish"]));
    assert!(
        fish.contains(
            "complete -c cmdscope -n \"__fish_cmdscope_needs_command\" -f -a \"history\""
        ),
        "{fish}"
    );
}

#[test]
fn an_unknown_shell_is_clap_s_one_line_error() {
    let o = generate(&["completions", "tcsh"]);
    one_line_error(
        &o,
        "invalid value 'tcsh' for '<SHELL>' [possible values: bash, elvish, fish, powershell, zsh]",
    );
    let o = generate(&["completions"]);
    one_line_error(&o, "<SHELL>");
}

/// The page as `man` shows it, or None (with a loud message) when neither
/// man nor groff is installed.
fn render(page: &[u8]) -> Option<String> {
    let dir = tempdir();
    let file = dir.path().join("cmdscope.1");
    std::fs::write(&file, page).unwrap();
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut command = if have("man") {
        let mut c = Command::new("man");
        c.args(["-P", "cat", "-l"]).arg(&file);
        c
    } else if have("groff") {
        let mut c = Command::new("groff");
        c.args(["-man", "-Tascii"]).arg(&file);
        c
    } else {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("the man page test must run in CI, but neither man nor groff is installed");
        }
        eprintln!(
            "SKIPPED: man page rendering: neither man nor groff found (apt-get install man-db)"
        );
        return None;
    };
    // A fixed width and no hyphenation, so that phrases stay on one line.
    let o = command
        .env("MANWIDTH", "2000")
        .env("COLUMNS", "2000")
        .env("MAN_KEEP_FORMATTING", "")
        .env("LANG", "C")
        .output()
        .expect("run man");
    assert!(o.status.success(), "{}", stderr(&o));
    // groff warns on stderr about roff it cannot read.
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    // Bold and underlining by overstriking, if any, removed.
    let raw = text(&o);
    let mut plain = String::new();
    for c in raw.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    Some(plain)
}

#[test]
fn man_renders_the_page_and_each_subcommand_s() {
    let root = ok(generate(&["man"])).stdout;
    let run = ok(generate(&["man", "run"])).stdout;
    let submit = ok(generate(&["man", "suite", "submit"])).stdout;
    assert!(text(&ok(generate(&["man"]))).contains(".TH cmdscope 1 "));
    let Some(root) = render(&root) else { return };
    for line in [
        "NAME",
        "cmdscope - cmdscope: a performance lab for commands",
        "SUBCOMMANDS",
        "cmdscope-run(1)",
        "cmdscope-history(1)",
        "SUBCOMMAND PAGES",
    ] {
        assert!(root.contains(line), "no '{line}' in:\n{root}");
    }
    assert!(!root.contains("store-writer"), "{root}");
    let run = render(&run).unwrap();
    for line in [
        "cmdscope-run - Benchmark one or more commands",
        "--reference-name",
        "cmdscope run",
    ] {
        assert!(run.contains(line), "no '{line}' in:\n{run}");
    }
    let submit = render(&submit).unwrap();
    assert!(
        submit.contains("cmdscope-suite-submit - Submit a suite to Slurm"),
        "{submit}"
    );
}

#[test]
fn man_names_the_subcommands_when_asked_for_one_that_is_not() {
    one_line_error(
        &generate(&["man", "nope"]),
        "'cmdscope' has no subcommand 'nope'; its subcommands: run, hyperfine, compare,",
    );
    one_line_error(
        &generate(&["man", "__store-writer"]),
        "has no subcommand '__store-writer'",
    );
    one_line_error(
        &generate(&["man", "doctor", "x"]),
        "'cmdscope-doctor' has no subcommands (asked for 'x')",
    );
}

#[test]
fn a_closed_pipe_ends_the_page_quietly() {
    let mut child = Command::new(bin())
        .arg("man")
        .env_remove("CMDSCOPE_STORE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
}

/// Every visible subcommand's path (`["run"]`, `["suite", "submit"]`,
/// ...), from the parser itself.
fn subcommand_paths() -> Vec<Vec<String>> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            path.push(sub.get_name().to_string());
            out.push(path.clone());
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(&cmdscope::cli::Cli::command(), &mut Vec::new(), &mut out);
    out
}

/// The examples of `cmdscope PATH --help` printed 80 columns wide, each
/// as the shell reads it (a line ending in a backslash goes on), once
/// every line is checked to be whole: narrower than 80 columns, so that
/// nothing was wrapped, and either an example's first line (`cmdscope`,
/// `sudo cmdscope`) or the continuation of the line before.
fn help_examples(path: &[String]) -> Vec<String> {
    let o = Command::new(bin())
        .args(path)
        .arg("--help")
        .env("COLUMNS", "80")
        .env("LINES", "24")
        .env_remove("CMDSCOPE_STORE")
        .stdin(Stdio::null())
        .output()
        .expect("run cmdscope");
    let help = text(&ok(o));
    let Some((_, section)) = help.split_once("Examples:\n") else {
        return Vec::new();
    };
    let mut examples = Vec::new();
    let mut continued: Option<String> = None;
    for line in section.lines().take_while(|l| !l.trim().is_empty()) {
        assert!(
            line.chars().count() < 80,
            "{path:?}: 80 columns or wider: {line}"
        );
        let start = match continued.take() {
            Some(start) => start + " ",
            None => {
                let first = line.trim_start();
                assert!(
                    first.starts_with("cmdscope ") || first.starts_with("sudo cmdscope "),
                    "{path:?}: neither an example nor the continuation of one (a wrapped \
                     line?): {line}"
                );
                String::new()
            }
        };
        let line = line.trim();
        match line.strip_suffix('\\') {
            Some(part) => continued = Some(start + part.trim_end()),
            None => examples.push(start + line),
        }
    }
    assert!(continued.is_none(), "{path:?}: the last example goes on");
    examples
}

/// Every example of every subcommand's help can be copied as printed: each
/// line whole, no quote left open (sh reads it), and cmdscope's own
/// parser takes the command (before any pipe or redirection).
#[test]
fn every_help_example_is_whole_and_parses() {
    use clap::Parser;
    let mut count = 0;
    for path in subcommand_paths() {
        for example in help_examples(&path) {
            let sh = Command::new("sh")
                .args(["-n", "-c", &example])
                .output()
                .expect("run sh");
            assert!(
                sh.status.success(),
                "{path:?}: sh cannot read {example}: {}",
                stderr(&sh)
            );
            let words = shlex::split(&example).expect("sh read it");
            let words: Vec<&str> = words
                .iter()
                .map(String::as_str)
                .skip_while(|w| *w == "sudo")
                .take_while(|w| !matches!(*w, "|" | ">" | ">>"))
                .collect();
            if let Err(e) = cmdscope::cli::Cli::try_parse_from(&words) {
                panic!("{path:?}: {example}: {e}");
            }
            count += 1;
        }
    }
    assert!(count >= 50, "only {count} examples found");
}

/// Examples of `run --help` this test does not run, and why; it runs
/// every other one as written.
const NOT_RUN: &[(&str, &str)] = &[
    ("--user", "needs root"),
    ("busctl", "needs the system's D-Bus"),
    ("'rg ", "needs ripgrep"),
];

/// A directory holding what `run --help`'s examples name: a project to
/// build (here and in `src`), a list of `files`, and stand-ins for the
/// reader's own programs (`./request.sh`, `./bench`, ...) that do nothing.
fn examples_directory(d: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(d.join("src")).unwrap();
    let makefile = "# TODO: nothing to build\nall:\n\t@true\n";
    std::fs::write(d.join("Makefile"), makefile).unwrap();
    std::fs::write(d.join("src/Makefile"), makefile).unwrap();
    std::fs::write(d.join("files"), "Makefile\nsrc/Makefile\n").unwrap();
    for program in ["container-init", "request.sh", "bench", "build", "client"] {
        let p = d.join(program);
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The examples of `run --help` run as written, each in an
/// [`examples_directory`] of its own.
#[test]
fn run_help_examples_run_as_written() {
    let dir = tempdir();
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let data = tempdir();
    let examples: Vec<String> = help_examples(&["run".to_string()])
        .into_iter()
        .filter(
            |example| match NOT_RUN.iter().find(|(what, _)| example.contains(what)) {
                Some((_, why)) => {
                    eprintln!("not run ({why}): {example}");
                    false
                }
                None => true,
            },
        )
        .collect();
    assert!(examples.len() >= 14, "only {} examples", examples.len());
    // All at once: each takes seconds (sweeps of 3 s per value), and only
    // whether it works is checked here, not what it measures.
    let children: Vec<_> = examples
        .iter()
        .enumerate()
        .map(|(i, example)| {
            // Not one directory for all: one example's files (an export
            // replaced, a plot) would come and go under another's `find`.
            let d = dir.path().join(i.to_string());
            examples_directory(&d);
            Command::new("sh")
                .args(["-c", example])
                .current_dir(&d)
                .env("PATH", &path)
                .env("XDG_DATA_HOME", data.path())
                .env("CMDSCOPE_NO_STORE", "1")
                .env_remove("CMDSCOPE_STORE")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run sh")
        })
        .collect();
    for (example, child) in examples.iter().zip(children) {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{example}: {}", stderr(&o));
    }
}
