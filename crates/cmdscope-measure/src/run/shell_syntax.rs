//! Does a command line need a shell? make's rule: a command is executed
//! directly when it has no shell syntax, and through `sh -c` otherwise.
//! Quotes and backslashes alone do not need a shell (cmdscope splits words
//! the way sh does); what does: operators and redirections, expansions
//! (`$`, backquotes, globs, `~`), comments, variable assignments before the
//! command, and builtins that exist only inside a shell.

/// Words that only a shell can run (special builtins, keywords, and
/// builtins with no executable of the same name on a normal system).
const SHELL_ONLY: &[&str] = &[
    ".", ":", "!", "{", "}", "[[", "alias", "bg", "break", "case", "cd", "command", "continue",
    "eval", "exec", "exit", "export", "fc", "fg", "for", "function", "getopts", "hash", "if",
    "jobs", "local", "read", "readonly", "return", "select", "set", "shift", "source", "times",
    "trap", "type", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

/// The first piece of shell syntax in `command`, as a short description
/// ("'>>'", "the builtin 'exit'"), or None when it can be executed directly.
pub fn shell_syntax(command: &[u8]) -> Option<String> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut quote = Quote::None;
    let mut word_start = true;
    // The command word as the shell sees it after quote removal (a quoted
    // builtin is still the builtin).
    let mut first_word = Vec::new();
    let mut in_first_word = true;
    let mut i = 0;
    while i < command.len() {
        let b = command[i];
        let mut literal = None;
        match quote {
            Quote::Single if b == b'\'' => quote = Quote::None,
            Quote::Single => literal = Some(b),
            Quote::Double => match b {
                b'"' => quote = Quote::None,
                b'$' => return Some("'$' (an expansion)".into()),
                b'`' => return Some("'`' (command substitution)".into()),
                b'\\' => {
                    i += 1;
                    literal = command.get(i).copied();
                }
                _ => literal = Some(b),
            },
            Quote::None => {
                if b == b' ' || b == b'\t' {
                    if !first_word.is_empty() {
                        in_first_word = false;
                    }
                    word_start = true;
                    i += 1;
                    continue;
                }
                match b {
                    b'\'' => quote = Quote::Single,
                    b'"' => quote = Quote::Double,
                    b'\\' => {
                        i += 1;
                        literal = command.get(i).copied();
                    }
                    b'\n' => return Some("a line break (several commands)".into()),
                    b'|' | b'&' | b';' | b'<' | b'>' | b'(' | b')' => {
                        let end = command[i..]
                            .iter()
                            .position(|c| !b"|&;<>".contains(c))
                            .map_or(command.len(), |p| i + p.max(1));
                        let op = String::from_utf8_lossy(&command[i..end]);
                        return Some(format!("'{op}'"));
                    }
                    b'$' => return Some("'$' (an expansion)".into()),
                    b'`' => return Some("'`' (command substitution)".into()),
                    b'*' | b'?' | b'[' => return Some(format!("'{}' (a glob)", b as char)),
                    b'~' if word_start => return Some("'~' (home directory)".into()),
                    b'#' if word_start => return Some("'#' (a comment)".into()),
                    b'=' if in_first_word && !first_word.is_empty() => {
                        return Some("a variable assignment before the command".into())
                    }
                    _ => literal = Some(b),
                }
                word_start = false;
            }
        }
        if let (true, Some(c)) = (in_first_word, literal) {
            first_word.push(c);
        }
        i += 1;
    }
    let word = String::from_utf8_lossy(&first_word);
    SHELL_ONLY
        .contains(&word.as_ref())
        .then(|| format!("the shell builtin '{word}'"))
}

#[cfg(test)]
mod tests {
    use super::shell_syntax;

    fn needs(c: &str) -> bool {
        shell_syntax(c.as_bytes()).is_some()
    }

    #[test]
    fn plain_commands_are_executed_directly() {
        for c in [
            "sleep 0.1",
            "grep -r 'a|b' src",
            r#"printf "%s\n" 'x > y'"#,
            r"find . -name x -exec true {} \;",
            "awk '{print $1}' f",
            "ls a=b",
            "echo x#y",
            "git log --format=%h",
            "true",
            "test -f x",
        ] {
            assert!(!needs(c), "{c}: {:?}", shell_syntax(c.as_bytes()));
        }
    }

    #[test]
    fn shell_syntax_is_found() {
        for (c, what) in [
            ("echo x >> log", "'>>'"),
            ("cat f | wc -l", "'|'"),
            ("exit 1", "builtin 'exit'"),
            ("cd /tmp", "builtin 'cd'"),
            ("export A=1", "builtin 'export'"),
            ("echo $HOME", "'$'"),
            ("echo \"$HOME\"", "'$'"),
            ("ls *.rs", "glob"),
            ("ls ~/x", "'~'"),
            ("A=1 env", "assignment"),
            ("a && b", "'&&'"),
            ("sleep 1 &", "'&'"),
            ("echo `date`", "'`'"),
            ("(cd x)", "'('"),
            ("true # c", "comment"),
            ("a\nb", "line break"),
            ("\"exit\" 1", "builtin 'exit'"),
            ("ex'it' 1", "builtin 'exit'"),
        ] {
            let got = shell_syntax(c.as_bytes()).unwrap_or_default();
            assert!(got.contains(what), "{c}: {got}");
        }
    }
}
