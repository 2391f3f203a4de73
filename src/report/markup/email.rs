//! Mailing-list text: plain ASCII (anything else is transliterated or
//! becomes '?'), no colour, at most [`WIDTH`] columns on every line, as a
//! cover letter or a commit message wants it.
//!
//! A table that is too wide is narrowed step by step: its group column
//! (the mechanism) is lifted into a line above each run of rows sharing
//! it; optional columns are left out, with a line saying which; left-
//! aligned text columns wrap inside their cells; column titles wrap onto
//! two lines. Numbers never wrap. A table that still cannot fit is written
//! as records: one line per row with its columns as "title: value" lines
//! under it. The command that reproduces a report is wrapped at shell word
//! boundaries with " \" continuations.
//!
//! The same writer in its plain style ([`Email::plain`], the suites'
//! default) is fixed-width text as the posts the suites reproduce drew
//! their tables: every table at its natural width (never narrowed, so a
//! column per CPU count stays a column), between ASCII rules above the
//! titles, under them and below the last row; headings on one line; text
//! as it is (no transliteration); paragraphs and lists wrapped at
//! [`PLAIN_WIDTH`] columns.

use super::text::{ascii, join_lines, reproduce, wrap};
use super::{Align, Line, Markup, Table};

/// The widest line the format writes.
pub use super::text::WIDTH;

/// Where the plain style wraps paragraphs (its tables are never narrowed).
pub const PLAIN_WIDTH: usize = 100;

/// Space between columns.
const GAP: usize = 2;

/// The narrowest a wrapping text column is made.
const MIN_TEXT: usize = 8;

/// How the writer writes.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// Paragraphs and lists wrap at this many columns.
    width: usize,
    /// Tables are narrowed to `width` (false: drawn at their natural
    /// width, titles on one line).
    narrow: bool,
    /// Text is made printable ASCII.
    ascii: bool,
    /// ASCII rules above a table's titles, under them and below its rows.
    rules: bool,
}

const EMAIL: Style = Style {
    width: WIDTH,
    narrow: true,
    ascii: true,
    rules: false,
};

const PLAIN: Style = Style {
    width: PLAIN_WIDTH,
    narrow: false,
    ascii: false,
    rules: true,
};

#[derive(Debug)]
pub struct Email {
    lines: Vec<String>,
    /// The last block was a heading: its content follows it directly.
    after_heading: bool,
    style: Style,
}

impl Default for Email {
    fn default() -> Email {
        Email {
            lines: Vec::new(),
            after_heading: false,
            style: EMAIL,
        }
    }
}

/// Columns a text takes (chars: the plain style keeps non-ASCII text).
fn cols(s: &str) -> usize {
    s.chars().count()
}

impl Email {
    /// The plain style: fixed-width text at its natural width, with the
    /// posts' ASCII rules around tables.
    pub fn plain() -> Email {
        Email {
            style: PLAIN,
            ..Email::default()
        }
    }

    /// `s` as this style writes it: ASCII for email; on one line always.
    fn clean(&self, s: &str) -> String {
        if self.style.ascii {
            ascii(s)
        } else {
            s.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect()
        }
    }

    fn block(&mut self) {
        if !self.lines.is_empty() && !self.after_heading {
            self.lines.push(String::new());
        }
        self.after_heading = false;
    }

    fn para(&mut self, text: &str, rest: &str) {
        let text = self.clean(text);
        self.lines.extend(wrap(&text, self.style.width, "", rest));
    }
}

/// How a table is laid out once narrowed.
struct Layout {
    /// Columns shown, in order.
    cols: Vec<usize>,
    /// Width of each shown column.
    widths: Vec<usize>,
    /// Space between columns.
    gap: usize,
    /// The lifted group column, if any.
    group: Option<usize>,
    indent: usize,
    /// Titles of optional columns left out.
    left_out: Vec<String>,
}

fn total(widths: &[usize], indent: usize, gap: usize) -> usize {
    indent + widths.iter().sum::<usize>() + gap * widths.len().saturating_sub(1)
}

/// The longest word of a title: titles may wrap.
fn title_width(title: &str) -> usize {
    title.split_whitespace().map(cols).max().unwrap_or(0)
}

/// The narrowest a wrapping column can be: its longest word, at least
/// [`MIN_TEXT`].
fn min_width(titles: &[String], text: &[Vec<String>], i: usize) -> usize {
    text.iter()
        .flat_map(|r| r[i].split_whitespace().map(cols))
        .max()
        .unwrap_or(0)
        .max(title_width(&titles[i]))
        .max(MIN_TEXT)
}

/// Narrows wrapping columns until the table fits; false when it cannot.
/// Text columns give up width first, down to their longest word; then
/// the widest wrapping column loses a column at a time (numbers wrap only
/// when wrapping text was not enough).
fn squeeze(
    t: &Table,
    titles: &[String],
    text: &[Vec<String>],
    l: &mut Layout,
    passes: &[bool],
) -> bool {
    let mins: Vec<usize> = l.cols.iter().map(|&i| min_width(titles, text, i)).collect();
    for &text_only in passes {
        loop {
            let excess = total(&l.widths, l.indent, l.gap).saturating_sub(WIDTH);
            if excess == 0 {
                return true;
            }
            let widest = (0..l.cols.len())
                .filter(|&k| {
                    let c = &t.columns[l.cols[k]];
                    c.wraps && (!text_only || c.align == Align::Left) && l.widths[k] > mins[k]
                })
                .max_by_key(|&k| l.widths[k]);
            let Some(k) = widest else { break };
            l.widths[k] -= 1;
        }
    }
    total(&l.widths, l.indent, l.gap) <= WIDTH
}

/// The plain style's layout: every shown column at the width of its
/// widest cell or its whole title.
fn natural_layout(t: &Table, titles: &[String], text: &[Vec<String>]) -> Layout {
    let cols_shown = t.shown();
    let widths = cols_shown
        .iter()
        .map(|&i| {
            let cells = text.iter().map(|r| cols(&r[i])).max().unwrap_or(0);
            cells.max(cols(&titles[i]))
        })
        .collect();
    Layout {
        cols: cols_shown,
        widths,
        gap: GAP,
        group: None,
        indent: 0,
        left_out: Vec::new(),
    }
}

/// The narrowing steps in order: lift the group, close the gaps to one
/// space, wrap text, leave out optional columns, wrap numbers.
fn layout(t: &Table, titles: &[String], text: &[Vec<String>]) -> Option<Layout> {
    let natural = |i: usize| {
        let cells = text.iter().map(|r| cols(&r[i])).max().unwrap_or(0);
        cells.max(title_width(&titles[i]))
    };
    let mut l = Layout {
        cols: t.shown(),
        widths: Vec::new(),
        gap: GAP,
        group: None,
        indent: 0,
        left_out: Vec::new(),
    };
    let fits = |l: &Layout| {
        let w: Vec<usize> = l.cols.iter().map(|&i| natural(i)).collect();
        total(&w, l.indent, l.gap) <= WIDTH
    };
    if !fits(&l)
        && let Some(g) = t.group.filter(|g| l.cols.contains(g))
    {
        l.cols.retain(|&i| i != g);
        l.group = Some(g);
        l.indent = 2;
    }
    if !fits(&l) {
        l.gap = 1;
    }
    // Wrap text before leaving out optional columns; wrap numbers last.
    let natural_widths = |l: &Layout| l.cols.iter().map(|&i| natural(i)).collect::<Vec<_>>();
    loop {
        l.widths = natural_widths(&l);
        if squeeze(t, titles, text, &mut l, &[true]) {
            return Some(l);
        }
        let Some(pos) = l.cols.iter().rposition(|&i| t.columns[i].optional) else {
            break;
        };
        l.left_out
            .insert(0, t.columns[l.cols.remove(pos)].title.clone());
    }
    l.widths = natural_widths(&l);
    if !squeeze(t, titles, text, &mut l, &[true, false]) {
        return None;
    }
    Some(l)
}

/// One cell's text in lines of at most `width`; a column that may not
/// wrap keeps its one line.
fn cell_lines(text: &str, width: usize, wraps: bool) -> Vec<String> {
    if !wraps || cols(text) <= width {
        return vec![text.to_string()];
    }
    wrap(text, width, "", "")
}

/// Writes a row of cells (each a list of lines) side by side.
fn side_by_side(cells: &[Vec<String>], l: &Layout, aligns: &[Align], out: &mut Vec<String>) {
    let height = cells.iter().map(Vec::len).max().unwrap_or(1);
    for h in 0..height {
        let mut line = " ".repeat(l.indent);
        for (k, c) in cells.iter().enumerate() {
            if k > 0 {
                line.push_str(&" ".repeat(l.gap));
            }
            let text = c.get(h).map_or("", String::as_str);
            let w = l.widths[k];
            match aligns[k] {
                Align::Left => line.push_str(&format!("{text:<w$}")),
                Align::Right => line.push_str(&format!("{text:>w$}")),
            }
        }
        out.push(line.trim_end().to_string());
    }
}

/// A table that cannot fit as a grid: each row's first column, then its
/// other columns as "title: value" lines.
fn records(t: &Table, titles: &[String], text: &[Vec<String>], out: &mut Vec<String>) {
    let shown = t.shown();
    for (r, row) in text.iter().enumerate() {
        if r > 0 {
            out.push(String::new());
        }
        let mut first = true;
        for &i in &shown {
            if first {
                out.extend(wrap(&row[i], WIDTH, "", "  "));
                first = false;
            } else {
                let title = format!("  {}: ", titles[i]);
                if cols(&title) > WIDTH / 2 {
                    out.extend(wrap(&title, WIDTH, "", "    "));
                    out.extend(wrap(&row[i], WIDTH, "      ", "      "));
                } else {
                    out.extend(wrap(&row[i], WIDTH, &title, "      "));
                }
            }
        }
    }
}

impl Markup for Email {
    fn heading(&mut self, text: &str) {
        self.block();
        if self.style.narrow {
            self.para(&format!("{text}:"), "  ");
        } else {
            // A title stays on its line, as tables keep their width.
            let line = self.clean(&format!("{text}:"));
            self.lines.push(line);
        }
        self.after_heading = true;
    }

    fn table(&mut self, t: &Table) {
        if !t.is_shown() {
            return;
        }
        self.block();
        let titles: Vec<String> = t.columns.iter().map(|c| self.clean(&c.title)).collect();
        let text: Vec<Vec<String>> = t
            .rows()
            .map(|r| r.iter().map(|c| self.clean(&c.text)).collect())
            .collect();
        let laid_out = if self.style.narrow {
            layout(t, &titles, &text)
        } else {
            Some(natural_layout(t, &titles, &text))
        };
        let Some(l) = laid_out else {
            records(t, &titles, &text, &mut self.lines);
            for f in &t.footer {
                self.para(f, "");
            }
            return;
        };
        let aligns: Vec<Align> = l.cols.iter().map(|&i| t.columns[i].align).collect();
        let rule = "-".repeat(total(&l.widths, l.indent, l.gap));
        // Titles, bottom-aligned, up to two lines each.
        let title_lines: Vec<Vec<String>> = l
            .cols
            .iter()
            .zip(&l.widths)
            .map(|(&i, &w)| {
                let mut lines = wrap(&titles[i], w, "", "");
                if lines.len() > 2 {
                    let rest = lines[1..].join(" ");
                    lines.truncate(1);
                    lines.push(rest.chars().take(w).collect());
                }
                lines
            })
            .collect();
        let height = title_lines.iter().map(Vec::len).max().unwrap_or(1);
        let title_lines: Vec<Vec<String>> = title_lines
            .into_iter()
            .map(|mut v| {
                let mut padded = vec![String::new(); height - v.len()];
                padded.append(&mut v);
                padded
            })
            .collect();
        if self.style.rules {
            self.lines.push(rule.clone());
        }
        side_by_side(&title_lines, &l, &aligns, &mut self.lines);
        if self.style.rules {
            self.lines.push(rule.clone());
        }
        let mut last_group: Option<&str> = None;
        let mut r = 0;
        for line in &t.lines {
            match line {
                Line::Data(_) => {}
                Line::Divider(label) => {
                    self.lines.push(String::new());
                    if let Some(label) = label {
                        self.para(&format!("{label}:"), "    ");
                    }
                }
                Line::Row(_) => {
                    if let Some(g) = l.group {
                        let value = text[r][g].as_str();
                        if last_group != Some(value) {
                            let label = if value.is_empty() { "-" } else { value };
                            self.lines
                                .extend(wrap(&format!("{label}:"), WIDTH, "", "    "));
                            last_group = Some(value);
                        }
                    }
                    let cells: Vec<Vec<String>> = l
                        .cols
                        .iter()
                        .zip(&l.widths)
                        .map(|(&i, &w)| cell_lines(&text[r][i], w, t.columns[i].wraps))
                        .collect();
                    side_by_side(&cells, &l, &aligns, &mut self.lines);
                    r += 1;
                }
            }
        }
        if self.style.rules {
            self.lines.push(rule);
        }
        if !l.left_out.is_empty() {
            let cols = l.left_out.join(", ");
            self.para(
                &format!("(left out for width: {cols}; see --format table or --json)"),
                "",
            );
        }
        for f in &t.footer {
            self.para(f, "");
        }
    }

    fn text(&mut self, text: &str) {
        self.block();
        self.para(text, "");
    }

    fn list(&mut self, items: &[String]) {
        self.block();
        for item in items {
            let item = self.clean(item);
            self.lines
                .extend(wrap(&item, self.style.width, "  ", "    "));
        }
    }

    fn verbatim(&mut self, title: &str, content: &str) {
        self.block();
        self.para(&format!("{title}:"), "  ");
        for l in content.lines() {
            let l = if self.style.ascii {
                ascii(l)
            } else {
                l.to_string()
            };
            if !self.style.narrow {
                self.lines.push(format!("  {l}").trim_end().to_string());
                continue;
            }
            // ASCII here: byte offsets are columns.
            let mut rest = l.as_str();
            loop {
                let cut = rest.len().min(WIDTH - 2);
                self.lines
                    .push(format!("  {}", &rest[..cut]).trim_end().to_string());
                rest = &rest[cut..];
                if rest.is_empty() {
                    break;
                }
            }
        }
    }

    fn command(&mut self, label: &str, command: &str) {
        self.block();
        if self.style.narrow {
            self.lines.extend(reproduce(&ascii(command)));
        } else {
            self.lines.push(format!("{label}: {command}"));
        }
    }

    fn finish(&mut self) -> String {
        join_lines(&std::mem::take(&mut self.lines))
    }

    fn columns(&self) -> Option<usize> {
        Some(self.style.width)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::awkward;
    use super::super::{Cell, Column};
    use super::*;

    fn check(s: &str) {
        for (i, l) in s.lines().enumerate() {
            assert!(l.len() <= WIDTH, "line {i} is {} wide: {l:?}\n{s}", l.len());
            assert!(l.bytes().all(|b| (0x20..0x7f).contains(&b)), "{l:?}");
            assert_eq!(l, l.trim_end());
        }
        assert!(s.is_empty() || s.ends_with('\n'));
    }

    #[test]
    fn a_wide_table_is_narrowed_to_72_ascii_columns() {
        let mut m = Email::default();
        m.heading("Overhead \u{2014} seccomp");
        m.table(&awkward());
        m.command(
            "Reproduce",
            "secperf overhead -m 'seccomp:args,filters=4' -w getppid --seed 7",
        );
        let s = m.finish();
        check(&s);
        // The mechanism became a group line, the numbers are whole.
        assert!(s.contains("\nseccomp:args,filters=4:\n"), "{s}");
        assert!(s.contains("+33.0% [32.0, 34.0] *"), "{s}");
        assert!(s.contains("Reproduce: secperf overhead"), "{s}");
    }

    #[test]
    fn what_cannot_fit_becomes_records() {
        let mut t = Table::new("x", vec![]);
        for k in 0..8 {
            t.columns
                .push(Column::new(&format!("number {k}"), Align::Right, "n"));
        }
        t.row(
            (0..8)
                .map(|k| Cell::text(format!("{k}").repeat(12)))
                .collect(),
        );
        let mut m = Email::default();
        m.table(&t);
        let s = m.finish();
        check(&s);
        assert!(s.contains("  number 1: 111111111111"), "{s}");
    }

    #[test]
    fn the_plain_style_keeps_a_wide_table_whole_between_rules() {
        let mut m = Email::plain();
        m.heading("Overhead \u{2014} seccomp");
        m.table(&awkward());
        let s = m.finish();
        let lines: Vec<&str> = s.lines().collect();
        // The heading, then rules above the titles, under them and below.
        assert_eq!(lines[0], "Overhead \u{2014} seccomp:", "{s}");
        let rule = lines[1];
        assert!(rule.len() > WIDTH && rule.chars().all(|c| c == '-'), "{s}");
        assert_eq!(lines[3], rule, "{s}");
        assert!(lines[2].starts_with("workload") && lines[2].contains("overhead [95% CI]"));
        assert_eq!(lines.iter().filter(|l| **l == rule).count(), 3, "{s}");
        // Nothing narrowed: the mechanism stays a column, p is kept, the
        // text keeps its arrows.
        assert!(!s.contains("left out for width"), "{s}");
        assert!(
            s.contains("landlock:sandbox,ro=/usr:/etc,rw=/tmp \u{2192} \u{b1}1"),
            "{s}"
        );
        let row = lines.iter().find(|l| l.starts_with("getppid")).unwrap();
        assert!(
            row.contains("seccomp:args,filters=4") && row.ends_with("0.001"),
            "{row}"
        );
        // Columns line up: every row is as wide as its rule or narrower.
        assert!(lines.iter().all(|l| l.chars().count() <= rule.len()), "{s}");
    }

    #[test]
    fn every_shape_fits() {
        for cols in 1..7 {
            for len in [1, 10, 40, 200] {
                let mut t = Table::new("x", vec![]);
                for k in 0..cols {
                    let align = if k % 2 == 0 {
                        Align::Left
                    } else {
                        Align::Right
                    };
                    t.columns
                        .push(Column::new(&"title ".repeat(len / 10 + 1), align, "k"));
                }
                t.group = Some(0);
                t.row((0..cols).map(|k| Cell::text("w".repeat(len + k))).collect());
                t.divider(Some("next"));
                t.row((0..cols).map(|_| Cell::text("\u{2192} x")).collect());
                t.footer("f ".repeat(len));
                let mut m = Email::default();
                m.table(&t);
                m.verbatim("file", &"long line ".repeat(len));
                check(&m.finish());
            }
        }
    }
}
