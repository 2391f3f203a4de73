//! The terminal format (the default, and `--format table`): comfy-table
//! grids, headings ending in a colon with their items indented under them,
//! slower changes red and faster green when colour is on (a terminal, no
//! `NO_COLOR`). Blocks are separated by one blank line.
//!
//! A table fits its terminal with no word broken: text columns narrow
//! down to their longest word, numbers keep their width; where that is
//! not enough, optional columns (the p-value, the verdict, whose mark is
//! in the overhead cell) are left out from the last, then those only a
//! terminal may leave out (the pairs), saying so in one line; then numbers that may wrap at spaces do ("+12.3%" over "[8.0,
//! 26.8] *"); where even that is not enough, each row is a block of its
//! own ("title: value" lines). A pipe gets the whole table at
//! [`PIPE_WIDTH`], every column, its text wrapped where it must.

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

    /// A table too wide for any grid: each row a block of "title: value"
    /// lines, the first column's value as its head.
    fn stacked(&mut self, table: &Table) {
        let shown = table.shown();
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
                    for &i in cols {
                        self.line(&format!("  {}: {}", table.columns[i].title, cells[i].text));
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
            self.line(f);
        }
    }
}

impl Markup for Terminal {
    fn heading(&mut self, text: &str) {
        self.block();
        self.line(&format!("{text}:"));
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
                let mut c = comfy_table::Cell::new(&cell.text);
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
            self.line(&format!(
                "Left out to fit {width} columns: {} (a wider terminal shows {}, as do --json \
                 and --format csv).",
                left_out.join(", "),
                if left_out.len() == 1 { "it" } else { "them" }
            ));
        }
        for f in &table.footer {
            self.line(f);
        }
    }

    fn text(&mut self, text: &str) {
        self.block();
        let one_line = text.split(['\n', '\r']).collect::<Vec<_>>().join(" ");
        self.line(&one_line);
    }

    fn list(&mut self, items: &[String]) {
        self.block();
        for item in items {
            self.line(&format!("  {item}"));
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
        self.line(&format!("{label}: {command}"));
    }

    fn finish(&mut self) -> String {
        self.after_heading = false;
        std::mem::take(&mut self.out)
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
    let longest_word = |s: &str| s.split_whitespace().map(cols).max().unwrap_or(0);
    let title = longest_word(&col.title);
    let cells = table
        .rows()
        .map(|r| match wrapping {
            true => longest_word(&r[i].text),
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
    let tiers: [fn(&super::Column) -> bool; 2] = [|c| c.optional, |c| c.optional_on_terminal];
    for may_go in tiers {
        while drawn(&shown, false) > width {
            let Some(pos) = shown.iter().rposition(|&i| may_go(&table.columns[i])) else {
                break;
            };
            left_out.push(shown.remove(pos));
        }
    }
    left_out.sort_unstable();
    let left_out = left_out
        .into_iter()
        .map(|i| table.columns[i].title.clone())
        .collect();
    let wrap_numbers = drawn(&shown, false) > width;
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
            s.starts_with("getppid\n  mechanism: seccomp:args,filters=4\n"),
            "{s}"
        );
        assert!(
            s.contains("  overhead [95% CI]: +33.0% [32.0, 34.0] *"),
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
