//! The one table of the reading commands (`compare`, `check`, `changes`,
//! `history`): columns with a header and an alignment, rows of cells, an
//! optional title, lines before the table and notes after it, rendered as
//! aligned text, as a GitHub Markdown table, or as records (one block per
//! row, for rows too wide for a line). The cells arrive formatted (numbers
//! by `units`, words by each command's renderer); this file only lays them
//! out: padding, alignment, column widths, the Markdown pipes and their
//! escaping (`markdown::cell` and `markdown::code`, the one rule).

use std::fmt::Write as _;

use crate::error::Error;
use crate::report::markdown;

/// Where a cell's text sits in its column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// One column: its header, alignment and width limits.
#[derive(Clone, Debug)]
pub struct Column {
    header: String,
    /// The header in Markdown, where it differs (a title a terminal shows
    /// in a row of its own).
    markdown_header: Option<String>,
    align: Align,
    /// The alignment in Markdown, where it differs from the text's.
    markdown_align: Option<Align>,
    /// Text: the column is at least this wide.
    min_width: usize,
    /// Text: longer cells are cut to this width, ending in `…`.
    max_width: Option<usize>,
    /// Records: the word before the cell's value (none: the value alone).
    label: Option<String>,
}

impl Column {
    pub fn new(header: impl Into<String>, align: Align) -> Self {
        Column {
            header: header.into(),
            markdown_header: None,
            align,
            markdown_align: None,
            min_width: 0,
            max_width: None,
            label: None,
        }
    }

    pub fn left(header: impl Into<String>) -> Self {
        Column::new(header, Align::Left)
    }

    pub fn right(header: impl Into<String>) -> Self {
        Column::new(header, Align::Right)
    }

    pub fn markdown_header(mut self, header: impl Into<String>) -> Self {
        self.markdown_header = Some(header.into());
        self
    }

    pub fn markdown_align(mut self, align: Align) -> Self {
        self.markdown_align = Some(align);
        self
    }

    pub fn min_width(mut self, width: usize) -> Self {
        self.min_width = width;
        self
    }

    pub fn max_width(mut self, width: usize) -> Self {
        self.max_width = Some(width.max(1));
        self
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
}

/// A cell's content: text, or a name shown as code in Markdown, or parts
/// joined (text and code in one cell).
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    /// Shown as it is in text, as a code span in Markdown.
    Code(String),
    /// Concatenated, each part rendered by its own kind.
    Parts(Vec<Cell>),
}

impl Cell {
    pub fn code(text: impl Into<String>) -> Self {
        Cell::Code(text.into())
    }

    pub fn text(&self) -> String {
        match self {
            Cell::Text(t) | Cell::Code(t) => t.clone(),
            Cell::Parts(parts) => parts.iter().map(Cell::text).collect(),
        }
    }

    pub fn markdown(&self) -> String {
        match self {
            Cell::Text(t) => markdown::cell(t),
            Cell::Code(t) => markdown::code(t),
            Cell::Parts(parts) => parts.iter().map(Cell::markdown).collect(),
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Cell::Text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::Text(text.to_owned())
    }
}

#[derive(Clone, Debug)]
enum Row {
    Cells(Vec<Cell>),
    /// One text across every column (what a table with no rows says).
    Span(String),
}

/// A title over several adjacent columns: a row of its own in text, folded
/// into the group's first header in Markdown.
#[derive(Clone, Debug)]
struct Group {
    start: usize,
    len: usize,
    title: String,
}

/// How the Markdown table's alignment row is spelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rule {
    /// `|:---|---:|`
    #[default]
    Compact,
    /// `| :-- | --: |`
    Spaced,
}

#[derive(Clone, Debug, Default)]
pub struct Table {
    columns: Vec<Column>,
    groups: Vec<Group>,
    rows: Vec<Row>,
    title: Option<Cell>,
    intro: Vec<Cell>,
    notes: Vec<String>,
    rule: Rule,
}

/// Between two columns of text.
const SEP: &str = "  ";

fn width(s: &str) -> usize {
    s.chars().count()
}

/// `text` cut to `max` characters, the last one `…` when it was cut.
fn shorten(text: &str, max: usize) -> String {
    if width(text) <= max {
        text.to_owned()
    } else {
        let s: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{s}…")
    }
}

fn pad(s: &str, w: usize, align: Align) -> String {
    let fill = " ".repeat(w.saturating_sub(width(s)));
    match align {
        Align::Left => format!("{s}{fill}"),
        Align::Right => format!("{fill}{s}"),
    }
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Self {
        Table {
            columns,
            ..Table::default()
        }
    }

    /// The title: a line of its own in text, a `###` heading in Markdown.
    pub fn title(mut self, title: impl Into<Cell>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A line between the title and the table.
    pub fn intro(mut self, line: impl Into<Cell>) -> Self {
        self.intro.push(line.into());
        self
    }

    pub fn rule(mut self, rule: Rule) -> Self {
        self.rule = rule;
        self
    }

    /// A title over `len` columns from `start`.
    pub fn group(&mut self, start: usize, len: usize, title: impl Into<String>) {
        self.groups.push(Group {
            start,
            len,
            title: title.into(),
        });
    }

    /// A row; missing cells are empty, extra ones dropped.
    pub fn row(&mut self, cells: Vec<Cell>) {
        let mut cells = cells;
        cells.resize(self.columns.len(), Cell::Text(String::new()));
        self.rows.push(Row::Cells(cells));
    }

    /// A row of one text across every column.
    pub fn span_row(&mut self, text: impl Into<String>) {
        self.rows.push(Row::Span(text.into()));
    }

    /// Lines after the table.
    pub fn notes(&mut self, lines: impl IntoIterator<Item = String>) {
        self.notes.extend(lines);
    }

    pub fn has_notes(&self) -> bool {
        !self.notes.is_empty()
    }

    /// Every row's cells as text, cut to their columns' widest.
    fn text_rows(&self) -> Vec<Option<Vec<String>>> {
        self.rows
            .iter()
            .map(|r| match r {
                Row::Cells(cells) => Some(
                    cells
                        .iter()
                        .zip(&self.columns)
                        .map(|(c, col)| match col.max_width {
                            Some(max) => shorten(&c.text(), max),
                            None => c.text(),
                        })
                        .collect(),
                ),
                Row::Span(_) => None,
            })
            .collect()
    }

    /// Aligned columns, two spaces apart, no space at a line's end: the
    /// title, the lines before the table, the group titles, the headers
    /// (unless every one is empty), the rows and the notes, a line each.
    pub fn text(&self) -> String {
        let rows = self.text_rows();
        let headers: Vec<&str> = self.columns.iter().map(|c| c.header.as_str()).collect();
        let with_header = headers.iter().any(|h| !h.is_empty());
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.min_width).collect();
        let lines = rows
            .iter()
            .flatten()
            .map(|r| r.iter().map(String::as_str).collect::<Vec<_>>())
            .chain(with_header.then(|| headers.clone()));
        for line in lines {
            for (w, cell) in widths.iter_mut().zip(line) {
                *w = (*w).max(width(cell));
            }
        }
        let span = |widths: &[usize], g: &Group| {
            widths[g.start..g.start + g.len].iter().sum::<usize>() + SEP.len() * (g.len - 1)
        };
        for g in &self.groups {
            let s = span(&widths, g);
            if width(&g.title) > s {
                widths[g.start + g.len - 1] += width(&g.title) - s;
            }
        }
        let mut out = String::new();
        let mut line = |text: String| {
            out.push_str(text.trim_end());
            out.push('\n');
        };
        if let Some(t) = &self.title {
            line(t.text());
        }
        for l in &self.intro {
            line(l.text());
        }
        if !self.groups.is_empty() {
            let mut parts = Vec::new();
            let mut i = 0;
            while i < self.columns.len() {
                match self.groups.iter().find(|g| g.start == i) {
                    Some(g) => {
                        parts.push(pad(&g.title, span(&widths, g), Align::Left));
                        i += g.len;
                    }
                    None => {
                        parts.push(pad("", widths[i], Align::Left));
                        i += 1;
                    }
                }
            }
            line(parts.join(SEP));
        }
        let aligned = |cells: &[&str]| -> String {
            cells
                .iter()
                .zip(&self.columns)
                .zip(&widths)
                .map(|((c, col), w)| pad(c, *w, col.align))
                .collect::<Vec<_>>()
                .join(SEP)
        };
        if with_header {
            line(aligned(&headers));
        }
        for (r, cells) in self.rows.iter().zip(&rows) {
            match (r, cells) {
                (_, Some(cells)) => {
                    let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
                    line(aligned(&cells));
                }
                (Row::Span(text), None) => line(text.clone()),
                (Row::Cells(_), None) => {}
            }
        }
        for n in &self.notes {
            line(n.clone());
        }
        out
    }

    /// A GitHub table: `### title` and the lines before it as paragraphs,
    /// the header (with the group titles folded into each group's first
    /// column), the alignment row and the rows, every text escaped; then,
    /// after a blank line, the notes, each ending in a line break.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        if let Some(t) = &self.title {
            let _ = writeln!(out, "### {}\n", t.markdown());
        }
        for l in &self.intro {
            let _ = writeln!(out, "{}\n", l.markdown());
        }
        let mut headers: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                c.markdown_header
                    .clone()
                    .unwrap_or_else(|| c.header.clone())
            })
            .collect();
        for g in &self.groups {
            headers[g.start] = format!("{} {}", g.title, headers[g.start]);
        }
        let headers: Vec<String> = headers.iter().map(|h| markdown::cell(h)).collect();
        let _ = writeln!(out, "| {} |", headers.join(" | "));
        let rule: Vec<&str> = self
            .columns
            .iter()
            .map(|c| match (c.markdown_align.unwrap_or(c.align), self.rule) {
                (Align::Left, Rule::Compact) => ":---",
                (Align::Right, Rule::Compact) => "---:",
                (Align::Left, Rule::Spaced) => ":--",
                (Align::Right, Rule::Spaced) => "--:",
            })
            .collect();
        match self.rule {
            Rule::Compact => {
                let _ = writeln!(out, "|{}|", rule.join("|"));
            }
            Rule::Spaced => {
                let _ = writeln!(out, "| {} |", rule.join(" | "));
            }
        }
        for r in &self.rows {
            match r {
                Row::Cells(cells) => {
                    let cells: Vec<String> = cells.iter().map(Cell::markdown).collect();
                    let _ = writeln!(out, "| {} |", cells.join(" | "));
                }
                Row::Span(text) => {
                    let rest = " |".repeat(self.columns.len().saturating_sub(1));
                    let _ = writeln!(out, "| {} |{rest}", markdown::cell(text));
                }
            }
        }
        if !self.notes.is_empty() {
            out.push('\n');
        }
        for n in &self.notes {
            let _ = writeln!(out, "{}  ", markdown::cell(n));
        }
        out
    }

    /// RFC 4180 CSV: the headers, then a record per row (a span row's text
    /// in the first field, the others empty).
    pub fn csv(&self) -> Result<String, Error> {
        let to_io = |e: csv::Error| Error::Io(std::io::Error::other(e));
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(self.columns.iter().map(|c| c.header.as_str()))
            .map_err(to_io)?;
        for r in &self.rows {
            match r {
                Row::Cells(cells) => w.write_record(cells.iter().map(Cell::text)),
                Row::Span(text) => w.write_record(std::iter::once(text.as_str()).chain(
                    std::iter::repeat_n("", self.columns.len().saturating_sub(1)),
                )),
            }
            .map_err(to_io)?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?;
        String::from_utf8(bytes).map_err(|e| Error::Io(std::io::Error::other(e)))
    }

    /// One block per row, for rows too wide for a line: the first cell on
    /// a line, then the others indented on one line, `·` between them,
    /// each after its column's label. The title and the lines before the
    /// table come first, the notes last, each set apart by a blank line.
    pub fn records(&self) -> String {
        let mut out = String::new();
        let head: Vec<String> = self
            .title
            .iter()
            .chain(&self.intro)
            .map(Cell::text)
            .collect();
        for l in &head {
            let _ = writeln!(out, "{l}");
        }
        if !head.is_empty() {
            out.push('\n');
        }
        for r in &self.rows {
            match r {
                Row::Cells(cells) => {
                    let first = cells.first().map(Cell::text).unwrap_or_default();
                    let rest: Vec<String> = cells
                        .iter()
                        .zip(&self.columns)
                        .skip(1)
                        .map(|(c, col)| match &col.label {
                            Some(label) => format!("{label} {}", c.text()),
                            None => c.text(),
                        })
                        .collect();
                    let _ = writeln!(out, "{first}\n    {}", rest.join(" · "));
                }
                Row::Span(text) => {
                    let _ = writeln!(out, "{text}");
                }
            }
        }
        if !self.notes.is_empty() {
            out.push('\n');
        }
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        out
    }
}

/// A JSON document as these commands print it (a tabular one is a list of
/// objects, one per row, its fields in the row's order): indented, ending
/// in a line break.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| Error::Io(std::io::Error::other(e)))?;
    text.push('\n');
    Ok(text)
}

/// Footnotes of one table, numbered in order of first use.
#[derive(Default)]
pub struct Footnotes {
    texts: Vec<String>,
}

impl Footnotes {
    pub fn number(&mut self, text: &str) -> usize {
        match self.texts.iter().position(|t| t == text) {
            Some(i) => i + 1,
            None => {
                self.texts.push(text.to_owned());
                self.texts.len()
            }
        }
    }

    /// The marker of `text`: "¹".
    pub fn mark(&mut self, text: &str) -> String {
        superscript(self.number(text))
    }

    /// Markers for several notes: " ¹,³" (empty for none).
    pub fn marks(&mut self, texts: &[String]) -> String {
        if texts.is_empty() {
            return String::new();
        }
        let mut numbers: Vec<usize> = texts.iter().map(|t| self.number(t)).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let marks: Vec<String> = numbers.into_iter().map(superscript).collect();
        format!(" {}", marks.join(","))
    }

    /// "¹ text", one per footnote.
    pub fn lines(&self) -> Vec<String> {
        self.texts
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{} {t}", superscript(i + 1)))
            .collect()
    }
}

pub fn superscript(n: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .bytes()
        .map(|b| DIGITS[usize::from(b - b'0')])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(vec![
            Column::left("name").max_width(8),
            Column::right("n").min_width(3),
            Column::left("what"),
        ])
        .title("Title")
        .intro("before");
        t.row(vec![Cell::code("a|b"), "1".into(), "x".into()]);
        t.row(vec![Cell::code("a much longer name"), "1234".into()]);
        t.notes(["¹ a note".to_string()]);
        t
    }

    #[test]
    fn text_pads_to_the_widest_cell_cuts_long_ones_and_trims_line_ends() {
        assert_eq!(
            sample().text(),
            "Title\nbefore\nname         n  what\na|b          1  x\na much …  1234\n¹ a note\n"
        );
    }

    #[test]
    fn markdown_escapes_every_cell_and_shows_names_as_code() {
        assert_eq!(
            sample().markdown(),
            "### Title\n\nbefore\n\n| name | n | what |\n|:---|---:|:---|\n\
             | `a\\|b` | 1 | x |\n| `a much longer name` | 1234 |  |\n\n¹ a note  \n"
        );
    }

    #[test]
    fn groups_get_a_row_in_text_and_fold_into_the_header_in_markdown() {
        let mut t = Table::new(vec![
            Column::left("").markdown_header("benchmark"),
            Column::left("median").markdown_align(Align::Right),
            Column::right("n"),
        ])
        .rule(Rule::Spaced);
        t.group(1, 2, "a-very-long-file.json");
        t.row(vec!["x".into(), "1ms".into(), "3".into()]);
        assert_eq!(
            t.text(),
            "   a-very-long-file.json\n   median              n\nx  1ms                 3\n"
        );
        assert_eq!(
            t.markdown(),
            "| benchmark | a-very-long-file.json median | n |\n| :-- | --: | --: |\n| x | 1ms | 3 |\n"
        );
    }

    #[test]
    fn records_label_their_cells_and_span_rows_fill_every_column() {
        let mut t = Table::new(vec![
            Column::left("Name"),
            Column::right("Time").label("time"),
            Column::left("Verdict"),
        ])
        .title("head");
        t.row(vec!["x".into(), "1 ms".into(), "faster".into()]);
        t.notes(["end".to_string()]);
        assert_eq!(t.records(), "head\n\nx\n    time 1 ms · faster\n\nend\n");
        let mut empty = Table::new(vec![Column::left("a"), Column::left("b")]);
        empty.span_row("nothing | here");
        assert_eq!(
            empty.markdown(),
            "| a | b |\n|:---|:---|\n| nothing \\| here | |\n"
        );
    }

    #[test]
    fn csv_quotes_what_needs_it_and_keeps_every_record_as_wide() {
        let mut t = sample();
        t.span_row("all, of it");
        assert_eq!(
            t.csv().unwrap(),
            "name,n,what\na|b,1,x\na much longer name,1234,\n\"all, of it\",,\n"
        );
    }

    #[test]
    fn footnote_markers() {
        assert_eq!(superscript(1), "¹");
        assert_eq!(superscript(12), "¹²");
        let mut f = Footnotes::default();
        assert_eq!(f.mark("a"), "¹");
        assert_eq!(f.mark("b"), "²");
        assert_eq!(f.mark("a"), "¹");
        assert_eq!(f.marks(&["b".into(), "a".into()]), " ¹,²");
        assert_eq!(f.lines(), ["¹ a", "² b"]);
    }
}
