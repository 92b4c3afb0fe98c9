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
        "'cmdscope' has no subcommand 'nope'; its subcommands: run, compare,",
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
