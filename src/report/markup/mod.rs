//! The small markup interface between what a report says and how a format
//! writes it, in the spirit of hyperfine's `MarkupExporter`: a section
//! (the comparisons, the negative control, a sweep) is written once as
//! headings, tables, paragraphs and verbatim blocks; each format supplies
//! only the primitives.
//!
//! A [`Table`] is handed over whole (header, rows, dividers between groups
//! of rows, footer lines), because fixed-width formats must see every cell
//! before they can choose widths. Each cell carries its text, its raw
//! values for the data formats (CSV writes numbers, never "12.3 ns"), and
//! a tone for colour.
//!
//! Formats: [`terminal`] (comfy-table, the default), [`markdown`],
//! [`email`] (72 ASCII columns for mailing lists, or in its plain style
//! fixed-width text at its natural width, the suites' default), [`csv`]
//! (the tables as data), and `report::html::writer` for the parts of the HTML page that
//! every format shares; [`text`] holds what the fixed-width formats share.

pub mod csv;
pub mod email;
pub mod markdown;
pub mod terminal;
pub mod text;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What a cell's figure concludes, for formats that colour it: a change
/// for the worse (slower: red in a terminal), for the better (faster:
/// green), one shown negligible, none detected, or nothing to conclude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Plain,
    Worse,
    Better,
    Negligible,
    NoChange,
}

impl Tone {
    /// The tone of a verdict.
    pub fn of(v: crate::stats::decision::Verdict) -> Tone {
        use crate::stats::decision::Verdict;
        match v {
            Verdict::Slower => Tone::Worse,
            Verdict::Faster => Tone::Better,
            Verdict::Negligible => Tone::Negligible,
            Verdict::NoChange => Tone::NoChange,
        }
    }
}

/// A raw value behind a cell, for the data formats.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    Text(String),
    Number(f64),
    Int(i64),
    Bool(bool),
    /// No value (a missing figure): an empty CSV field.
    Empty,
}

impl From<&str> for Raw {
    fn from(s: &str) -> Raw {
        Raw::Text(s.to_string())
    }
}

impl From<String> for Raw {
    fn from(s: String) -> Raw {
        Raw::Text(s)
    }
}

impl From<f64> for Raw {
    fn from(x: f64) -> Raw {
        Raw::Number(x)
    }
}

impl From<u32> for Raw {
    fn from(x: u32) -> Raw {
        Raw::Int(i64::from(x))
    }
}

impl From<u64> for Raw {
    fn from(x: u64) -> Raw {
        i64::try_from(x).map_or(Raw::Number(x as f64), Raw::Int)
    }
}

impl From<bool> for Raw {
    fn from(x: bool) -> Raw {
        Raw::Bool(x)
    }
}

impl<T: Into<Raw>> From<Option<T>> for Raw {
    fn from(x: Option<T>) -> Raw {
        x.map_or(Raw::Empty, Into::into)
    }
}

/// One column: its title for people, and the CSV fields its cells give.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub title: String,
    pub align: Align,
    /// The CSV header of each raw value of this column's cells, in order;
    /// empty: the column is left out of CSV.
    pub csv: Vec<String>,
    /// Shown to people (false: a CSV-only column).
    pub shown: bool,
    /// A narrow format (email) may leave it out when the table is too
    /// wide, saying so under the table.
    pub optional: bool,
    /// A terminal too narrow for the table may leave it out after the
    /// optional ones (email keeps it).
    pub optional_on_terminal: bool,
    /// A narrow format may wrap its cells at spaces even when they are
    /// right-aligned ("+12.3%" over "[8.0, 26.8] *"); left-aligned text
    /// always may.
    pub wraps: bool,
    /// A narrow terminal leaves it out first when every row has the same
    /// value (tasks, 1 in every row), saying what the value is.
    pub constant_may_go: bool,
    /// Of the optional columns, the last a narrow terminal leaves out
    /// (the verdict, after the p-value and the pairs).
    pub kept_longer: bool,
}

impl Column {
    /// A column shown with `title`, giving one CSV field `key`.
    pub fn new(title: &str, align: Align, key: &str) -> Column {
        Column {
            title: title.to_string(),
            align,
            csv: vec![key.to_string()],
            shown: true,
            optional: false,
            optional_on_terminal: false,
            wraps: align == Align::Left,
            constant_may_go: false,
            kept_longer: false,
        }
    }

    /// A column giving several CSV fields (an estimate and its interval).
    pub fn with_fields(title: &str, align: Align, keys: &[&str]) -> Column {
        Column {
            csv: keys.iter().map(|k| k.to_string()).collect(),
            ..Column::new(title, align, "")
        }
    }

    /// A column only people see: the data formats leave it out (a table
    /// of such columns only is left out of CSV whole).
    pub fn shown(title: &str, align: Align) -> Column {
        Column {
            csv: Vec::new(),
            ..Column::new(title, align, "")
        }
    }

    /// A column only the data formats write (a table of such columns only
    /// is data, which the formats for people leave out whole).
    pub fn data(key: &str) -> Column {
        Column {
            shown: false,
            ..Column::new(key, Align::Left, key)
        }
    }

    /// A column narrow formats may leave out.
    pub fn optional(mut self) -> Column {
        self.optional = true;
        self
    }

    /// A column a narrow terminal may leave out, after the optional ones.
    pub fn optional_on_terminal(mut self) -> Column {
        self.optional_on_terminal = true;
        self
    }

    /// A column whose cells narrow formats may wrap at spaces.
    pub fn wrapping(mut self) -> Column {
        self.wraps = true;
        self
    }

    /// A column a narrow terminal leaves out first where every row has the
    /// same value.
    pub fn left_out_when_constant(mut self) -> Column {
        self.constant_may_go = true;
        self
    }

    /// An optional column a narrow terminal keeps after the others.
    pub fn kept_longer(mut self) -> Column {
        self.kept_longer = true;
        self
    }
}

/// One cell: text for people, raw values for data formats (one per
/// `Column::csv` field), a tone for colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub raw: Vec<Raw>,
    pub tone: Tone,
    /// A fragment of the page the cell links to ("item-comparison-..."),
    /// for formats with links (HTML); the others show the text alone.
    pub link: Option<String>,
}

impl Cell {
    /// A cell whose text is also its one raw value.
    pub fn text(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell {
            raw: vec![Raw::Text(text.clone())],
            text,
            tone: Tone::Plain,
            link: None,
        }
    }

    /// A cell showing `text` for the raw `value`.
    pub fn value(text: impl Into<String>, value: impl Into<Raw>) -> Cell {
        Cell {
            text: text.into(),
            raw: vec![value.into()],
            tone: Tone::Plain,
            link: None,
        }
    }

    /// A cell showing `text` for several raw values.
    pub fn values(text: impl Into<String>, values: Vec<Raw>) -> Cell {
        Cell {
            text: text.into(),
            raw: values,
            tone: Tone::Plain,
            link: None,
        }
    }

    pub fn tone(mut self, tone: Tone) -> Cell {
        self.tone = tone;
        self
    }

    /// The cell links to `fragment` of the page (formats with links).
    pub fn link(mut self, fragment: impl Into<String>) -> Cell {
        self.link = Some(fragment.into());
        self
    }
}

/// One row, or a divider between groups of rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Row(Vec<Cell>),
    /// A row only the data formats write (CSV carries every stored
    /// symbol of a profile; people see the largest ten).
    Data(Vec<Cell>),
    /// A break between groups of rows, maybe with a label for the next
    /// group ("largest deltas by symbol").
    Divider(Option<String>),
}

/// A table as sections write it and formats draw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// What the table holds, for CSV blocks and HTML ids: "comparisons".
    pub id: String,
    pub columns: Vec<Column>,
    pub lines: Vec<Line>,
    /// Lines under the table: units, what the columns mean, legends.
    pub footer: Vec<String>,
    /// A column a narrow format may lift out of the grid into a line
    /// above each run of rows sharing its value (email: the mechanism).
    pub group: Option<usize>,
}

impl Table {
    pub fn new(id: &str, columns: Vec<Column>) -> Table {
        Table {
            id: id.to_string(),
            columns,
            lines: Vec::new(),
            footer: Vec::new(),
            group: None,
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(cells.len(), self.columns.len(), "table {}", self.id);
        self.lines.push(Line::Row(cells));
    }

    /// A row only the data formats write.
    pub fn data_row(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(cells.len(), self.columns.len(), "table {}", self.id);
        self.lines.push(Line::Data(cells));
    }

    pub fn divider(&mut self, label: Option<&str>) {
        self.lines.push(Line::Divider(label.map(str::to_string)));
    }

    pub fn footer(&mut self, line: impl Into<String>) {
        self.footer.push(line.into());
    }

    /// The rows people see, without dividers.
    pub fn rows(&self) -> impl Iterator<Item = &Vec<Cell>> {
        self.lines.iter().filter_map(|l| match l {
            Line::Row(r) => Some(r),
            _ => None,
        })
    }

    /// Every row, data-only rows included (what CSV writes).
    pub fn all_rows(&self) -> impl Iterator<Item = &Vec<Cell>> {
        self.lines.iter().filter_map(|l| match l {
            Line::Row(r) | Line::Data(r) => Some(r),
            Line::Divider(_) => None,
        })
    }

    /// Whether people see anything of it (false: a data-only table, which
    /// the formats for people leave out).
    pub fn is_shown(&self) -> bool {
        self.columns.iter().any(|c| c.shown)
    }

    /// The indices of the columns shown to people.
    pub fn shown(&self) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&i| self.columns[i].shown)
            .collect()
    }
}

/// What a format supplies: the primitives sections are written with.
pub trait Markup {
    /// A section's title.
    fn heading(&mut self, text: &str);
    /// A table with its footer.
    fn table(&mut self, table: &Table);
    /// A paragraph (formats that wrap, wrap it).
    fn text(&mut self, text: &str);
    /// Short lines that belong together, one item each.
    fn list(&mut self, items: &[String]);
    /// Lines laid out already that belong together, one under the other
    /// as they are where the format can (no bullet, indent or wrapping:
    /// a command's own summary); by default a list.
    fn lines(&mut self, lines: &[String]) {
        self.list(lines);
    }
    /// A file's content, as it is, under a title.
    fn verbatim(&mut self, title: &str, content: &str);
    /// The command line that reproduces what is shown.
    fn command(&mut self, label: &str, command: &str);
    /// The text written so far, ending in a newline (or empty).
    fn finish(&mut self) -> String;
    /// The columns a line of text has in this format, where it has a
    /// limit (a terminal's width, email's 72); None: no limit.
    fn columns(&self) -> Option<usize> {
        None
    }
}

/// The formats that write through [`Markup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Terminal grid (comfy-table), coloured when `color`.
    Terminal {
        color: bool,
    },
    /// A terminal grid fitted to `width` columns whatever stdout is.
    TerminalAt {
        color: bool,
        width: u16,
    },
    Email,
    /// Fixed-width text at its natural width, tables between ASCII rules
    /// (the suites' default: the posts' own shape).
    Plain,
    Markdown,
    Csv,
}

/// A fresh writer of `kind`.
pub fn writer(kind: Kind) -> Box<dyn Markup> {
    match kind {
        Kind::Terminal { color } => Box::new(terminal::Terminal::new(color)),
        Kind::TerminalAt { color, width } => Box::new(terminal::Terminal::with_width(color, width)),
        Kind::Email => Box::new(email::Email::default()),
        Kind::Plain => Box::new(email::Email::plain()),
        Kind::Markdown => Box::new(markdown::Markdown::default()),
        Kind::Csv => Box::new(csv::Csv::default()),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A table of every awkward shape, for the formats' tests.

    use super::*;

    /// Long and short cells, a comma and quotes, non-ASCII text, a
    /// divider, a missing value, a CSV-only column and a group column.
    pub fn awkward() -> Table {
        let mut t = Table::new(
            "comparisons",
            vec![
                Column::new("workload", Align::Left, "workload"),
                Column::new("mechanism", Align::Left, "mechanism"),
                Column::new("tasks", Align::Right, "tasks"),
                Column::with_fields(
                    "overhead [95% CI]",
                    Align::Right,
                    &["overhead_pct", "ci_low_pct", "ci_high_pct"],
                ),
                Column::new("p", Align::Right, "p_value").optional(),
                Column::data("hodges_lehmann_pct"),
            ],
        );
        t.group = Some(1);
        let row = |w: &str, m: &str, e: f64, tone: Tone| {
            vec![
                Cell::text(w),
                Cell::text(m),
                Cell::value("1", 1u32),
                Cell::values(
                    format!("{e:+.1}% [{:.1}, {:.1}] *", e - 1.0, e + 1.0),
                    vec![e.into(), (e - 1.0).into(), (e + 1.0).into()],
                )
                .tone(tone),
                Cell::value("0.001", 0.001),
                Cell::value("", Raw::Empty),
            ]
        };
        t.row(row("getppid", "seccomp:args,filters=4", 33.0, Tone::Worse));
        t.row(row(
            "dd if=/dev/zero of=/dev/null bs=1 count=200000 \"quoted, with comma\"",
            "seccomp:args,filters=4",
            -12.5,
            Tone::Better,
        ));
        t.divider(None);
        t.row(row(
            "tree_walk",
            "landlock:sandbox,ro=/usr:/etc,rw=/tmp \u{2192} \u{b1}1",
            0.2,
            Tone::Plain,
        ));
        t.footer("baseline: median ns per operation; overhead \u{2248} treatment / baseline - 1.");
        t
    }
}
