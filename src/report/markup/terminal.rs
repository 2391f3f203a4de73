//! The terminal format (the default, and `--format table`): comfy-table
//! grids, headings ending in a colon with their items indented under them,
//! slower changes red and faster green when colour is on (a terminal, no
//! `NO_COLOR`). Blocks are separated by one blank line.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Color, ColumnConstraint, ContentArrangement};

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
}

impl Terminal {
    pub fn new(color: bool) -> Terminal {
        Terminal {
            color,
            ..Default::default()
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
        let shown = table.shown();
        let titles: Vec<&str> = shown
            .iter()
            .map(|&i| table.columns[i].title.as_str())
            .collect();
        let mut t = new_table(&titles);
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
        // Numbers never wrap: only text columns give up width.
        for (k, &i) in shown.iter().enumerate() {
            if table.columns[i].align == Align::Right
                && let Some(col) = t.column_mut(k)
            {
                col.set_constraint(ColumnConstraint::ContentWidth);
            }
        }
        let text = t.to_string();
        self.line(&text);
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
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(color_from(false, true));
        assert!(!color_from(true, true));
        assert!(!color_from(false, false));
        assert!(!color_from(true, false));
    }
}
