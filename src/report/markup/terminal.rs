//! The terminal format (the default, and `--format table`): comfy-table
//! grids, headings ending in a colon with their items indented under them,
//! slower changes red and faster green when colour is on (a terminal, no
//! `NO_COLOR`). Blocks are separated by one blank line.
//!
//! A table fits its terminal with no word broken: text columns narrow
//! down to their longest word, numbers keep their width; where that is
//! not enough, columns with one value in every row that may go (tasks,
//! 1 in every row) are left out first, then the optional ones (the
//! p-value) from the last, then those only a terminal may leave out (the
//! pairs), saying so in one line; then numbers that may wrap do, at their
//! first space only ("+12.3%" over "[8.0, 26.8] *", the mark never
//! alone); then the optional ones kept longer go (the verdict, whose mark
//! is also in the overhead cell); where even that is not enough, each row is
//! a short block of its own: its first column, then "title value" pairs
//! wrapped at words. A pipe gets the whole table at [`PIPE_WIDTH`], every
//! column, its text wrapped where it must. On a terminal (or a width
//! asked for) every paragraph, list item and legend is wrapped at words
//! to its width; a pipe gets each on one line.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Color, ColumnConstraint, ContentArrangement, Width};

use super::{Align, Line, Markup, Table, Tone};

/// Width a table takes when stdout is not a terminal: wide enough for a
/// review, fixed so that files and pipes get the same text every time.
pub const PIPE_WIDTH: u16 = 140;

/// A comfy-table in secperf's style: condensed UTF-8 lines, wrapped to the
/// terminal, or to [`PIPE_WIDTH`] when stdout is not one.
pub fn new_table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        t.set_width(PIPE_WIDTH);
    }
    t.set_header(header.to_vec());
    t
}

#[derive(Debug, Default)]
pub struct Terminal {
    out: String,
    color: bool,
    /// Whether the last block was a heading (its items follow unseparated).
    after_heading: bool,
    /// The width to fit tables in; None: the terminal's, or [`PIPE_WIDTH`].
    width: Option<u16>,
}

impl Terminal {
    pub fn new(color: bool) -> Terminal {
        Terminal {
            color,
            ..Default::default()
        }
    }

    /// Tables fitted to `width` columns whatever stdout is.
    pub fn with_width(color: bool, width: u16) -> Terminal {
        Terminal {
            width: Some(width),
            ..Terminal::new(color)
        }
    }

    /// Starts a block: a blank line after the previous one, unless it
    /// was a heading (its content follows it directly).
    fn block(&mut self) {
        if !self.out.is_empty() && !self.after_heading {
            self.out.push('\n');
        }
        self.after_heading = false;
    }

    fn line(&mut self, text: &str) {
        self.out.push_str(text.trim_end());
        self.out.push('\n');
    }

    /// The width paragraphs are wrapped to: the terminal's (or the one
    /// asked for); None in a pipe.
    fn wrap_width(&self) -> Option<usize> {
        if let Some(w) = self.width {
            return Some(usize::from(w));
        }
        std::io::IsTerminal::is_terminal(&std::io::stdout())
            .then(|| new_table(&[]).width().map(usize::from))
            .flatten()
    }

    /// A paragraph, wrapped at words where the width is known, its first
    /// line after `first` and the others after `rest`.
    fn paragraph(&mut self, text: &str, first: &str, rest: &str) {
        match self.wrap_width() {
            Some(w) => {
                let opts = textwrap::Options::new(w.max(20))
                    .initial_indent(first)
                    .subsequent_indent(rest)
                    .break_words(false)
                    .word_splitter(textwrap::WordSplitter::NoHyphenation);
                for l in textwrap::wrap(text, opts) {
                    self.line(&l);
                }
            }
            None => self.line(&format!("{first}{text}")),
        }
    }

    /// A table too wide for any grid: each row a short block, the first
    /// column's value as its head, then "title: value" pairs separated by
    /// "; " and wrapped at words (columns with one value in every row that
    /// may go said once, above the blocks).
    fn stacked(&mut self, table: &Table) {
        let constant: Vec<usize> = table
            .shown()
            .into_iter()
            .filter(|&i| table.columns[i].constant_may_go && constant_value(table, i).is_some())
            .collect();
        if !constant.is_empty() {
            let said: Vec<String> = constant
                .iter()
                .map(|&i| {
                    format!(
                        "{} {}",
                        table.columns[i].title,
                        constant_value(table, i).unwrap_or_default()
                    )
                })
                .collect();
            self.paragraph(&format!("In every row: {}.", said.join(", ")), "", "");
        }
        let shown: Vec<usize> = table
            .shown()
            .into_iter()
            .filter(|i| !constant.contains(i))
            .collect();
        let mut first = true;
        for line in &table.lines {
            match line {
                Line::Row(cells) => {
                    if !first {
                        self.out.push('\n');
                    }
                    first = false;
                    let mut cols = shown.iter();
                    if let Some(&head) = cols.next() {
                        self.line(&cells[head].text);
                    }
                    // A number keeps its unit and an interval its mark:
                    // only text breaks inside a value.
                    let pairs: Vec<String> = cols
                        .filter(|&&i| !cells[i].text.is_empty())
                        .map(|&i| {
                            let text = match table.columns[i].align {
                                Align::Right => cells[i].text.replace(' ', "\u{a0}"),
                                Align::Left => cells[i].text.clone(),
                            };
                            let title = table.columns[i].title.replace(' ', "\u{a0}");
                            format!("{title}:\u{a0}{text}")
                        })
                        .collect();
                    if !pairs.is_empty() {
                        self.paragraph(&pairs.join("; "), "  ", "  ");
                    }
                }
                Line::Divider(Some(label)) => {
                    self.out.push('\n');
                    self.line(&format!("{label}:"));
                    first = true;
                }
                Line::Data(_) | Line::Divider(None) => {}
            }
        }
        for f in &table.footer {
            self.paragraph(f, "", "");
        }
    }
}

impl Markup for Terminal {
    fn heading(&mut self, text: &str) {
        self.block();
        self.paragraph(&format!("{text}:"), "", "  ");
        self.after_heading = true;
    }

    fn table(&mut self, table: &Table) {
        if !table.is_shown() {
            return;
        }
        self.block();
        let mut probe = new_table(&[]);
        if let Some(w) = self.width {
            probe.set_width(w);
        }
        let width = probe.width().unwrap_or(PIPE_WIDTH);
        // A terminal (or a width asked for) is fitted; a pipe is not.
        let fitted = self.width.is_some() || std::io::IsTerminal::is_terminal(&std::io::stdout());
        let whole = Fit {
            shown: table.shown(),
            left_out: Vec::new(),
            wrap_numbers: false,
        };
        let Some(Fit {
            shown,
            left_out,
            wrap_numbers,
        }) = (if fitted {
            fit(table, usize::from(width))
        } else {
            Some(whole)
        })
        else {
            self.stacked(table);
            return;
        };
        let titles: Vec<&str> = shown
            .iter()
            .map(|&i| table.columns[i].title.as_str())
            .collect();
        let mut t = new_table(&titles);
        t.set_width(width);
        if self.color {
            // Style even when comfy-table would not detect a terminal.
            t.enforce_styling();
        }
        for line in &table.lines {
            // comfy-table draws no divider: a labelled one becomes a row
            // with its label in the first column.
            let cells = match line {
                Line::Row(cells) => cells,
                Line::Data(_) | Line::Divider(None) => continue,
                Line::Divider(Some(label)) => {
                    t.add_row(vec![comfy_table::Cell::new(format!("{label}:"))]);
                    continue;
                }
            };
            t.add_row(shown.iter().map(|&i| {
                let cell = &cells[i];
                let text = if fitted {
                    shown_text(table, i, &cell.text)
                } else {
                    cell.text.clone()
                };
                let mut c = comfy_table::Cell::new(text);
                if table.columns[i].align == Align::Right {
                    c = c.set_alignment(CellAlignment::Right);
                }
                match (self.color, cell.tone) {
                    (true, Tone::Worse) => c.fg(Color::Red),
                    (true, Tone::Better) => c.fg(Color::Green),
                    _ => c,
                }
            }));
        }
        // Text narrows down to its longest word, no further; numbers keep
        // their width unless the fit needs those that may wrap to.
        for (k, &i) in shown.iter().enumerate() {
            let constraint = match (wraps(table, i, wrap_numbers), fitted) {
                (false, _) => ColumnConstraint::ContentWidth,
                // The boundary counts the column's padding.
                (true, true) => ColumnConstraint::LowerBoundary(Width::Fixed(
                    u16::try_from(min_width(table, i, true) + 2).unwrap_or(u16::MAX),
                )),
                (true, false) => continue,
            };
            if let Some(col) = t.column_mut(k) {
                col.set_constraint(constraint);
            }
        }
        let text = t.to_string();
        self.line(&text);
        if !left_out.is_empty() {
            self.paragraph(
                &format!(
                    "Left out to fit {width} columns: {} (a wider terminal shows {}, as do \
                     --json and --format csv).",
                    left_out.join(", "),
                    if left_out.len() == 1 { "it" } else { "them" }
                ),
                "",
                "",
            );
        }
        for f in &table.footer {
            self.paragraph(f, "", "");
        }
    }

    fn text(&mut self, text: &str) {
        self.block();
        let one_line = text.split(['\n', '\r']).collect::<Vec<_>>().join(" ");
        self.paragraph(&one_line, "", "");
    }

    fn list(&mut self, items: &[String]) {
        self.block();
        for item in items {
            self.paragraph(item, "  ", "    ");
        }
    }

    fn lines(&mut self, lines: &[String]) {
        self.block();
        for l in lines {
            self.line(l);
        }
    }

    fn verbatim(&mut self, title: &str, content: &str) {
        self.block();
        self.line(&format!("{title}:"));
        for l in content.lines() {
            self.line(&format!("    {l}"));
        }
    }

    fn command(&mut self, label: &str, command: &str) {
        self.block();
        let whole = format!("{label}: {command}");
        match self.wrap_width() {
            Some(w) if whole.chars().count() > w => {
                for l in shell_lines(label, command, w) {
                    self.line(&l);
                }
            }
            _ => self.line(&whole),
        }
    }

    fn finish(&mut self) -> String {
        self.after_heading = false;
        std::mem::take(&mut self.out)
    }

    fn columns(&self) -> Option<usize> {
        self.wrap_width()
    }
}

/// Whether colour should be used on stdout: false when NO_COLOR is set (any
/// value) or stdout is not a terminal.
pub fn color_default() -> bool {
    color_from(
        std::env::var_os("NO_COLOR").is_some(),
        std::io::IsTerminal::is_terminal(&std::io::stdout()),
    )
}

fn color_from(no_color_set: bool, stdout_is_terminal: bool) -> bool {
    !no_color_set && stdout_is_terminal
}

/// Columns a text takes on a terminal.
fn cols(s: &str) -> usize {
    s.chars().count()
}

/// Whether column `i` may wrap at spaces: text always, numbers that may
/// wrap only when `numbers` says so.
fn wraps(table: &Table, i: usize, numbers: bool) -> bool {
    let col = &table.columns[i];
    col.wraps && (col.align == Align::Left || numbers)
}

/// The narrowest column `i` can be drawn with no word broken: its longest
/// word (title, cells and the labels of dividers in the first column)
/// where it wraps, else its widest cell.
fn min_width(table: &Table, i: usize, wrapping: bool) -> usize {
    let col = &table.columns[i];
    let longest_word = |s: &str| s.split(' ').map(cols).max().unwrap_or(0);
    let title = longest_word(&col.title);
    let cells = table
        .rows()
        .map(|r| match wrapping {
            true => longest_word(&shown_text(table, i, &r[i].text)),
            false => cols(&r[i].text),
        })
        .max()
        .unwrap_or(0);
    let labels = match table.shown().first() == Some(&i) {
        true => table
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Divider(Some(label)) => Some(longest_word(label) + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0),
        false => 0,
    };
    title.max(cells).max(labels)
}

/// A command too long for `width`, as lines a shell reads as one: broken
/// between its words, each line but the last ending in " \\", the rest
/// indented; a command that does not split as a shell would is one line.
fn shell_lines(label: &str, command: &str, width: usize) -> Vec<String> {
    let Some(words) = shell_word_spans(command) else {
        return vec![format!("{label}: {command}")];
    };
    let mut lines = Vec::new();
    let mut line = format!("{label}:");
    let indent = "    ";
    for word in words {
        let fits = line.chars().count() + 1 + word.chars().count() + 2 <= width;
        if fits || line.trim() == format!("{label}:") || line.trim().is_empty() {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(format!("{line} \\"));
            line = format!("{indent}{word}");
        }
    }
    lines.push(line);
    lines
}

/// The words of a command line as written (quotes kept), split at the
/// spaces a shell splits at; None where its quotes do not close.
fn shell_word_spans(command: &str) -> Option<Vec<&str>> {
    let mut words = Vec::new();
    let (mut start, mut quote, mut escaped) = (None, None, false);
    for (i, c) in command.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('"'), '\\') | (None, '\\') => escaped = true,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ' ') => {
                if let Some(s) = start.take() {
                    words.push(&command[s..i]);
                }
                continue;
            }
            (None, _) => {}
        }
        start.get_or_insert(i);
    }
    if quote.is_some() || escaped {
        return None;
    }
    if let Some(s) = start {
        words.push(&command[s..]);
    }
    Some(words)
}

/// The one value every row of column `i` has (a one-row table's are all
/// constant: only a column that may go when constant is left out so).
fn constant_value(table: &Table, i: usize) -> Option<String> {
    let mut values = table.rows().map(|r| r[i].text.as_str());
    let first = values.next()?;
    (values.all(|v| v == first) && !first.is_empty()).then(|| first.to_string())
}

/// A cell's text as a grid shows it: in a right-aligned column that may
/// wrap, only its first space may break ("+12.3%" over "[8.0, 26.8] *"):
/// the others are no-break spaces, so an interval keeps its mark.
fn shown_text(table: &Table, i: usize, text: &str) -> String {
    let col = &table.columns[i];
    if !(col.wraps && col.align == Align::Right) {
        return text.to_string();
    }
    match text.split_once(' ') {
        Some((head, rest)) => format!("{head} {}", rest.replace(' ', "\u{a0}")),
        None => text.to_string(),
    }
}

/// How a table is drawn in a width.
struct Fit {
    /// The columns drawn.
    shown: Vec<usize>,
    /// The titles of the optional columns left out to get there.
    left_out: Vec<String>,
    /// Numbers that may wrap at spaces do.
    wrap_numbers: bool,
}

/// How to draw `table` in `width` with no word broken: text narrowed to
/// its longest word; then optional columns left out, from the last; then
/// numbers that may wrap, wrapped. None when even that does not fit (the
/// table is then stacked).
fn fit(table: &Table, width: usize) -> Option<Fit> {
    // Each column's narrowest, wrapped and whole, measured once.
    let mins: Vec<[usize; 2]> = (0..table.columns.len())
        .map(|i| [min_width(table, i, false), min_width(table, i, true)])
        .collect();
    // A grid of n columns takes one space each side of each and a rule
    // between and around them.
    let drawn = |cols: &[usize], numbers: bool| -> usize {
        cols.iter()
            .map(|&i| mins[i][usize::from(wraps(table, i, numbers))] + 3)
            .sum::<usize>()
            + 1
    };
    let mut shown = table.shown();
    let mut left_out = Vec::new();
    // What goes first: a column with one value in every row that may go
    // (said with its value), then the optional ones, then those only a
    // terminal may leave out, then the optional ones kept longer.
    let constant = |i: usize| constant_value(table, i).is_some();
    let tiers: [&dyn Fn(usize) -> bool; 3] = [
        &|i| table.columns[i].constant_may_go && constant(i),
        &|i| table.columns[i].optional && !table.columns[i].kept_longer,
        &|i| table.columns[i].optional_on_terminal,
    ];
    for may_go in tiers {
        while drawn(&shown, false) > width {
            let Some(pos) = shown.iter().rposition(|&i| may_go(i)) else {
                break;
            };
            left_out.push(shown.remove(pos));
        }
    }
    // Then numbers wrap (at their first space) before a column kept
    // longer goes.
    let wrap_numbers = drawn(&shown, false) > width;
    while drawn(&shown, wrap_numbers) > width {
        let Some(pos) = shown.iter().rposition(|&i| table.columns[i].optional) else {
            break;
        };
        left_out.push(shown.remove(pos));
    }
    left_out.sort_unstable();
    let left_out = left_out
        .into_iter()
        .map(|i| match constant_value(table, i) {
            Some(v) if table.columns[i].constant_may_go => {
                format!("{} ({v} in every row)", table.columns[i].title)
            }
            _ => table.columns[i].title.clone(),
        })
        .collect();
    (drawn(&shown, wrap_numbers) <= width).then_some(Fit {
        shown,
        left_out,
        wrap_numbers,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::awkward;
    use super::*;

    #[test]
    fn lines_are_written_as_they_are_under_one_another() {
        let mut m = Terminal::with_width(false, 20);
        m.text("first");
        let long = "a line longer than twenty columns, never wrapped".to_string();
        m.lines(&[long.clone(), "  indented  ".into()]);
        assert_eq!(m.finish(), format!("first\n\n{long}\n  indented\n"));
    }

    #[test]
    fn tables_show_shown_columns_and_their_footer() {
        let mut m = Terminal::new(false);
        m.heading("Overhead");
        m.table(&awkward());
        m.list(&["one".into(), "two".into()]);
        let s = m.finish();
        assert!(s.starts_with("Overhead:\n\u{250c}"), "{s}");
        assert!(s.contains("overhead [95% CI]"));
        assert!(!s.contains("hodges_lehmann"), "a data column is not shown");
        assert!(s.contains("baseline: median ns per operation"));
        assert!(s.ends_with("\n\n  one\n  two\n"), "{s}");
        assert!(!s.contains('\x1b'));
    }

    #[test]
    fn colour_marks_worse_and_better_only_when_on() {
        let mut m = Terminal::new(true);
        m.table(&awkward());
        let s = m.finish();
        assert!(
            s.contains("\x1b[38;5;9m") || s.contains("\x1b[31m"),
            "{s:?}"
        );
    }

    #[test]
    fn a_narrow_terminal_leaves_out_optional_columns_then_stacks_the_rows() {
        let t = awkward();
        let mut m = Terminal::with_width(false, 90);
        m.table(&t);
        let s = m.finish();
        assert!(s.contains("Left out to fit 90 columns: p (a wider"), "{s}");
        assert!(
            s.contains("landlock:sandbox,ro=/usr:/etc,rw=/tmp"),
            "no word broken: {s}"
        );
        let grid = |l: &&str| l.starts_with(['\u{250c}', '\u{2502}', '\u{2514}']);
        assert!(
            s.lines().filter(grid).all(|l| l.chars().count() <= 90),
            "{s}"
        );
        let mut m = Terminal::with_width(false, 30);
        m.table(&t);
        let s = m.finish();
        assert!(
            s.starts_with("getppid\n  mechanism:\u{a0}seccomp:args,filters=4;"),
            "{s}"
        );
        assert!(
            s.contains("  overhead\u{a0}[95%\u{a0}CI]:\u{a0}+33.0%\u{a0}[32.0,\u{a0}34.0]\u{a0}*"),
            "{s}"
        );
    }

    #[test]
    fn a_long_command_breaks_between_its_words_as_a_shell_reads_it() {
        assert_eq!(
            shell_word_spans("secperf run -l 'a b' --x \"c d\" e\\ f"),
            Some(vec![
                "secperf", "run", "-l", "'a b'", "--x", "\"c d\"", "e\\ f"
            ])
        );
        assert_eq!(shell_word_spans("unclosed 'quote"), None);
        let lines = shell_lines(
            "Reproduce",
            "secperf overhead -m 'audit:rules=/a b/c.rules' -m landlock:fs --quick --seed 11",
            40,
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert!(lines[..lines.len() - 1].iter().all(|l| l.ends_with(" \\")));
        let joined = lines
            .iter()
            .map(|l| l.trim_end_matches(" \\").trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            joined,
            "Reproduce: secperf overhead -m 'audit:rules=/a b/c.rules' -m landlock:fs --quick \
             --seed 11"
        );
    }

    #[test]
    fn paragraphs_wrap_at_words_and_one_row_keeps_its_verdict() {
        // Issue 53: at 80 columns legends broke mid-word ("negligib/le"),
        // and a one-row table kept tasks (1) and dropped the verdict.
        let mut m = Terminal::with_width(false, 40);
        m.text("every paragraph is wrapped at words to the terminal and none is broken");
        let s = m.finish();
        assert!(s.lines().all(|l| l.chars().count() <= 40), "{s}");
        assert!(s.contains("broken") && s.contains("terminal"), "{s}");
        let mut t = Table::new(
            "comparisons",
            vec![
                super::super::Column::new("workload", Align::Left, "workload"),
                super::super::Column::new("mechanism", Align::Left, "mechanism"),
                super::super::Column::new("tasks", Align::Right, "tasks").left_out_when_constant(),
                super::super::Column::new("overhead [95% CI]", Align::Right, "o").wrapping(),
                super::super::Column::new("p", Align::Right, "p").optional(),
                super::super::Column::new("verdict", Align::Left, "verdict")
                    .optional()
                    .kept_longer(),
            ],
        );
        t.row(
            [
                "getppid",
                "seccomp:allow",
                "1",
                "+44.3% [43.9, 44.7] *",
                "0.007",
                "slower",
            ]
            .map(super::super::Cell::text)
            .to_vec(),
        );
        let draw = |width: u16| {
            let mut m = Terminal::with_width(false, width);
            m.table(&t);
            m.finish()
        };
        let grid = |s: &str| {
            s.lines()
                .find(|l| l.starts_with('\u{2502}'))
                .map(|l| l.chars().count())
                .unwrap_or(0)
        };
        let whole = grid(&draw(200));
        // Just too narrow for the whole row: tasks goes first, and the
        // verdict stays.
        let s = draw((whole - 2) as u16);
        assert!(s.contains("Left out to fit"), "{s}");
        assert!(s.contains("tasks (1 in every row)"), "{s}");
        assert!(s.contains("slower") && s.contains("0.007"), "{s}");
        // Narrower: the p-value goes before the verdict.
        let s = draw((whole - 10) as u16);
        assert!(s.contains("slower") && !s.contains("0.007"), "{s}");
        // Narrower still: the change wraps at its first space only, and
        // the mark stays with its interval.
        let s = draw(40);
        assert!(
            s.lines()
                .all(|l| l.trim_end_matches(['\u{2502}', ' ']).trim() != "*"),
            "{s}"
        );
    }

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(color_from(false, true));
        assert!(!color_from(true, true));
        assert!(!color_from(false, false));
        assert!(!color_from(true, false));
    }
}
