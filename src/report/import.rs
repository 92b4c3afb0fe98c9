//! `cmdscope import`'s lines: one per results file stored as a session.

/// One results file stored as a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The file as the user named it.
    pub file: String,
    /// The format it was read as (`hyperfine-1`, `go`, `cmdscope`, ...).
    pub format: String,
    pub session: i64,
    pub benchmarks: usize,
    pub runs: usize,
}

/// One line per file, naming the store. Untrusted text (the file names)
/// is escaped by the caller's writer, not here.
pub fn render(store: &str, imported: &[Imported]) -> String {
    let mut out = String::new();
    for i in imported {
        out.push_str(&format!(
            "{store}: {} ({}) stored as session #{}: {} benchmark{}, {} runs\n",
            i.file,
            i.format,
            i.session,
            i.benchmarks,
            if i.benchmarks == 1 { "" } else { "s" },
            i.runs
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_file_with_its_session_and_counts() {
        let imported = [
            Imported {
                file: "a.json".into(),
                format: "hyperfine-1".into(),
                session: 3,
                benchmarks: 2,
                runs: 20,
            },
            Imported {
                file: "go.txt".into(),
                format: "go".into(),
                session: 4,
                benchmarks: 1,
                runs: 5,
            },
        ];
        assert_eq!(
            render("s.sqlite", &imported),
            "s.sqlite: a.json (hyperfine-1) stored as session #3: 2 benchmarks, 20 runs\n\
             s.sqlite: go.txt (go) stored as session #4: 1 benchmark, 5 runs\n"
        );
        assert_eq!(render("s.sqlite", &[]), "");
    }
}
