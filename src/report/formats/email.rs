//! `--format email`: the report as a kernel mailing-list post or commit
//! message wants it, in the layout of mmtests' compare output that kernel
//! developers already read (audit-2017, avc-2004):
//!
//! ```text
//!                                 run 3 base         run 5 patched
//! getpid                1    297.50 (  0.00%)    334.10 (+12.30%)*
//! ```
//!
//! Rules: plain ASCII only (anything else is transliterated or becomes
//! '?'), no colour, and at most [`WIDTH`] columns on every line. Long
//! workload names are shortened in the middle ("a_really..for_testing"),
//! configuration names wrap onto two header lines, row labels (the
//! mechanism) get a line of their own above their rows, and columns that do
//! not fit are split into blocks that repeat the row keys and the baseline.
//! A legend explains the '*' and the sign; the machine and the command that
//! reproduces it (with shell " \" continuations) close it.

use super::{ascii, design_line, wrap};
use crate::report::model::{Cell, Report};
use crate::report::number::{change_pct, fixed};

/// The widest line the format writes.
pub const WIDTH: usize = 72;

/// Space between the row key and the first column (1 if that makes
/// another column fit).
const GAP: usize = 2;

pub fn render(report: &Report) -> String {
    let mut lines: Vec<String> = Vec::new();
    let n = report.columns.len();
    let (factor, unit) = display_unit(report);

    let para = |lines: &mut Vec<String>, text: &str, rest: &str| {
        lines.extend(wrap(&ascii(text), WIDTH, "", rest));
    };
    para(&mut lines, &report.title, "  ");
    para(&mut lines, design_line(report.design), "  ");
    if n > 1 {
        let base = ascii(&report.columns[0]);
        para(
            &mut lines,
            &format!("Median {unit} by workload and tasks; % change against \"{base}\"."),
            "",
        );
    } else {
        para(
            &mut lines,
            &format!("Median {unit} by workload and tasks."),
            "",
        );
    }
    for w in &report.warnings {
        para(&mut lines, &format!("warning: {w}"), "  ");
    }
    lines.push(String::new());

    if n == 0 || report.rows.is_empty() {
        lines.push("(no results)".into());
    } else {
        grid(report, factor, &mut lines);
    }

    lines.push(String::new());
    if n > 1 {
        para(
            &mut lines,
            &format!(
                "* significant change (verdict slower or faster); = negligible; ~ no \
                 difference detected. {}",
                report.sign_convention
            ),
            "",
        );
    }
    for s in &report.summary {
        para(&mut lines, s, "  ");
    }
    if !report.machine.is_empty() {
        lines.push(String::new());
        let kv: Vec<String> = report
            .machine
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        para(&mut lines, &format!("Machine: {}", kv.join("; ")), "  ");
    }
    if !report.command.trim().is_empty() {
        lines.push(String::new());
        lines.extend(reproduce(&ascii(&report.command)));
    }

    join_lines(&lines)
}

/// ns/op values are shown in the largest unit that keeps the smallest
/// value at 1 or more (a report mixing 300 ns getppid and 100 ms walks
/// stays in ns/op; the walks print without decimals).
fn display_unit(report: &Report) -> (f64, String) {
    if report.unit != "ns/op" {
        return (1.0, ascii(&report.unit));
    }
    let min = report
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .map(|c| c.value.abs())
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    match min {
        m if !m.is_finite() => (1.0, "ns/op".into()),
        m if m >= 1e11 => (1e9, "s/op".into()),
        m if m >= 1e8 => (1e6, "ms/op".into()),
        m if m >= 1e5 => (1e3, "us/op".into()),
        _ => (1.0, "ns/op".into()),
    }
}

/// The change text of a cell: "0.00%" for the baseline, "-" when the
/// change is unknown.
fn change_text(cell: &Cell, baseline: bool) -> String {
    match (baseline, cell.change_pct) {
        (true, _) => "0.00%".into(),
        (false, Some(c)) => change_pct(c),
        (false, None) => "-".into(),
    }
}

/// Shorten `s` to `w` chars by cutting out its middle: "abc..xyz".
fn shorten(s: &str, w: usize) -> String {
    let len = s.chars().count();
    if len <= w {
        return s.to_string();
    }
    if w <= 2 {
        return s.chars().take(w).collect();
    }
    let head = (w - 2).div_ceil(2);
    let tail = w - 2 - head;
    let mut out: String = s.chars().take(head).collect();
    out.push_str("..");
    out.extend(s.chars().skip(len - tail));
    out
}

/// Lay out the rows x columns part: header lines with the configuration
/// names, then one line per row, in blocks of columns that fit.
fn grid(report: &Report, factor: f64, lines: &mut Vec<String>) {
    let n = report.columns.len();
    let show_change = n > 1;
    let cells = || report.rows.iter().flat_map(|r| r.cells.iter().enumerate());

    // Column field: "<value> (<change>)<mark>", one width for all.
    let vw = cells()
        .map(|(_, c)| c.as_ref().map_or(1, |c| fixed(c.value / factor).len()))
        .max()
        .unwrap_or(1);
    let cw = cells()
        .filter_map(|(i, c)| c.as_ref().map(|c| change_text(c, i == 0).len()))
        .max()
        .unwrap_or(5)
        .max(7);
    let fw = if show_change { vw + 2 + cw + 2 } else { vw }.max(10);
    // Between columns: the mark slot already separates them by one.
    let sep = if show_change { 1 } else { 2 };

    // Row key: [indent] workload tasks.
    let labels = report.rows.iter().any(|r| !r.label.is_empty());
    let indent = if labels { 2 } else { 0 };
    let tw = report
        .rows
        .iter()
        .map(|r| r.tasks.to_string().len())
        .max()
        .unwrap_or(1);
    let natural = report
        .rows
        .iter()
        .map(|r| ascii(&r.workload).chars().count())
        .max()
        .unwrap_or(1);
    let fixed = indent + 1 + tw;
    let fit_two = WIDTH.saturating_sub(fixed + GAP + fw + sep + fw).max(10);
    let fit_one = WIDTH.saturating_sub(fixed + GAP + fw);
    let ww = natural.min(fit_two).min(30).min(fit_one).max(1);
    let kw = fixed + ww;

    // kw + gap + fw + (k - 1) * (sep + fw) <= WIDTH
    let fits = |gap: usize| ((WIDTH + sep).saturating_sub(kw + gap) / (sep + fw)).max(1);
    let gap = if fits(GAP) < n.min(fits(1)) { 1 } else { GAP };
    let per_block = fits(gap);
    let blocks: Vec<Vec<usize>> = if n <= per_block {
        vec![(0..n).collect()]
    } else if per_block >= 2 {
        // Every block repeats the baseline the changes are against.
        (1..n)
            .collect::<Vec<_>>()
            .chunks(per_block - 1)
            .map(|c| std::iter::once(0).chain(c.iter().copied()).collect())
            .collect()
    } else {
        (0..n).map(|i| vec![i]).collect()
    };

    for (b, block) in blocks.iter().enumerate() {
        if b > 0 {
            lines.push(String::new());
        }
        // Configuration names: up to two lines each, right-aligned over the
        // value and change (the mark column stays free), bottom-aligned.
        let nw = if show_change { fw - 1 } else { fw };
        let names: Vec<Vec<String>> = block
            .iter()
            .map(|&i| name_lines(&ascii(&report.columns[i]), nw))
            .collect();
        let height = names.iter().map(Vec::len).max().unwrap_or(1);
        for h in 0..height {
            let mut line = " ".repeat(kw);
            for (k, name) in names.iter().enumerate() {
                let skip = height - name.len();
                let text = if h >= skip {
                    name[h - skip].as_str()
                } else {
                    ""
                };
                line.push_str(&" ".repeat(if k == 0 { gap } else { sep }));
                line.push_str(&format!("{text:>nw$}"));
                if show_change {
                    line.push(' ');
                }
            }
            lines.push(line);
        }

        let mut last_label: Option<&str> = None;
        for row in &report.rows {
            if labels && last_label != Some(row.label.as_str()) {
                let label = if row.label.is_empty() {
                    "(no label)".to_string()
                } else {
                    ascii(&row.label)
                };
                lines.extend(wrap(&format!("{label}:"), WIDTH, "", "    "));
                last_label = Some(row.label.as_str());
            }
            let mut line = format!(
                "{:indent$}{:<ww$} {:>tw$}",
                "",
                shorten(&ascii(&row.workload), ww),
                row.tasks
            );
            for (k, &i) in block.iter().enumerate() {
                line.push_str(&" ".repeat(if k == 0 { gap } else { sep }));
                let cell = row.cells.get(i).and_then(Option::as_ref);
                line.push_str(&field(cell, i == 0, show_change, factor, vw, cw));
            }
            lines.push(line);
        }
    }
}

fn field(
    cell: Option<&Cell>,
    baseline: bool,
    show_change: bool,
    factor: f64,
    vw: usize,
    cw: usize,
) -> String {
    let Some(c) = cell else {
        let blank = if show_change { cw + 3 } else { 0 };
        return format!("{:>vw$}{:blank$}", "-", "");
    };
    let value = fixed(c.value / factor);
    if !show_change {
        return format!("{value:>vw$}");
    }
    let mark = match (baseline, c.verdict) {
        (false, Some(v)) => crate::report::number::mark(v),
        _ => " ",
    };
    format!("{value:>vw$} ({:>cw$}){mark}", change_text(c, baseline))
}

/// A configuration name in at most two lines of `w` columns; the second is
/// cut with ".." when the name needs more.
fn name_lines(name: &str, w: usize) -> Vec<String> {
    let mut l = wrap(name, w, "", "");
    if l.len() > 2 {
        let rest = l[1..].join(" ");
        l.truncate(1);
        let cut: String = rest.chars().take(w.saturating_sub(2)).collect();
        l.push(format!("{}..", cut.trim_end()));
    }
    l
}

/// Lines as text: trailing spaces dropped, no runs of blank lines and
/// none at the ends, each line ending in a newline.
pub(crate) fn join_lines(lines: &[String]) -> String {
    let mut out = String::new();
    let mut blank = true;
    for l in lines {
        let l = l.trim_end();
        if l.is_empty() && blank {
            continue;
        }
        blank = l.is_empty();
        out.push_str(l);
        out.push('\n');
    }
    if blank && !out.is_empty() {
        out.pop();
    }
    out
}

/// "Reproduce: <command>" wrapped to [`WIDTH`] with " \" continuations, at
/// shell word boundaries (quotes respected); a word longer than a line is
/// broken with a bare "\" and continues at column 0, which the shell joins.
pub(crate) fn reproduce(command: &str) -> Vec<String> {
    const FIRST: &str = "Reproduce: ";
    const REST: &str = "    ";
    // Every line but the last ends in " \".
    let room = WIDTH - 2;
    let mut lines = Vec::new();
    let mut line = FIRST.to_string();
    let mut fresh = true;
    for word in command_words(command) {
        let sep = usize::from(!fresh);
        if !fresh && line.len() + sep + word.len() > room {
            lines.push(format!("{line} \\"));
            line = REST.to_string();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        let mut word = word.as_str();
        while line.len() + word.len() > room {
            let cut = (room + 1).saturating_sub(line.len()).max(1).min(word.len());
            line.push_str(&word[..cut]);
            lines.push(format!("{line}\\"));
            line = String::new();
            word = &word[cut..];
        }
        line.push_str(word);
        fresh = false;
    }
    lines.push(line);
    lines
}

/// The words of a stored command line, each quoted again as the shell
/// needs (`shell_words::split`, then `shell_words::quote`), so a wrap never
/// falls inside a quoted argument. A line that does not parse (unbalanced
/// quotes, e.g. one stored unquoted by an older secperf) splits at
/// whitespace instead.
fn command_words(s: &str) -> Vec<String> {
    match shell_words::split(s) {
        Ok(words) => words
            .iter()
            .map(|w| shell_words::quote(w).into_owned())
            .collect(),
        Err(_) => s.split_whitespace().map(str::to_string).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;
    use crate::report::model::Row;

    fn check(s: &str) {
        for (i, l) in s.lines().enumerate() {
            assert!(l.len() <= WIDTH, "line {i} is {} wide: {l:?}\n{s}", l.len());
            assert!(
                l.bytes().all(|b| (0x20..0x7f).contains(&b)),
                "line {i}: {l:?}"
            );
            assert_eq!(l, l.trim_end(), "trailing space on line {i}");
        }
        assert!(s.bytes().all(|b| b < 0x80));
        assert!(s.ends_with('\n'));
    }

    /// Reports of many shapes: many columns, long names everywhere, huge
    /// and tiny values.
    fn shapes() -> Vec<Report> {
        let mut out = testing::all();
        for ncols in [1, 2, 4, 7, 12] {
            for name_len in [3, 20, 90] {
                let mut r = testing::awkward();
                r.columns = (0..ncols)
                    .map(|i| format!("{}{i}", "config-name ".repeat(name_len / 10 + 1)))
                    .collect();
                for (k, row) in r.rows.iter_mut().enumerate() {
                    row.workload = "w".repeat(name_len) + "_x";
                    row.cells = (0..ncols)
                        .map(|i| {
                            let v = 10f64.powi((i * 3 + k * 7) as i32 % 13);
                            if i == 0 {
                                testing::base(v)
                            } else if i % 4 == 3 {
                                None
                            } else {
                                Some(testing::cell(
                                    v,
                                    Some(-99.99 + 1e6 * (i % 2) as f64),
                                    (-100.0, 2e6),
                                    0.01,
                                    crate::stats::decision::Verdict::Slower,
                                ))
                            }
                        })
                        .collect();
                }
                out.push(r);
            }
        }
        out
    }

    #[test]
    fn every_line_fits_72_ascii_columns() {
        for r in shapes() {
            check(&render(&r));
        }
    }

    #[test]
    fn small_report_layout() {
        let r = testing::small();
        let s = render(&r);
        check(&s);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "secperf compare");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("warning: the runs were"))
        );
        // One header line (names fit), then one line per row.
        let header = lines
            .iter()
            .position(|l| l.starts_with("  ") && l.contains("run 3 base"))
            .unwrap();
        assert!(lines[header].contains("run 5 patched") && lines[header].contains("run 7 rcu"));
        let getpid = lines[header + 1];
        assert!(getpid.starts_with("getpid "), "{getpid:?}");
        assert!(getpid.contains("297.50 (  0.00%)"), "{getpid:?}");
        assert!(getpid.contains("334.10 (+12.30%)*"), "{getpid:?}");
        assert!(
            getpid.ends_with("299.00 ( +0.50%)~"),
            "~ on no-change: {getpid:?}"
        );
        let tree = lines[header + 2];
        assert!(tree.starts_with("tree_walk"), "{tree:?}");
        assert!(tree.contains("45000.00 (  0.00%)"), "{tree:?}");
        assert!(tree.contains("40500.00 (-10.00%)*"), "{tree:?}");
        // The missing cell is a dash where the value would be.
        let dash = tree.find(" - ").unwrap();
        let col2 = lines[header].find("run 5 patched").unwrap();
        assert!(dash > col2, "{tree:?}");
        assert!(s.contains("\n* significant change"));
        assert!(s.contains("\nMachine: host: box; kernel: 6.8.0-45-generic; cpu: AMD EPYC"));
        assert!(s.ends_with("\nReproduce: secperf compare 3 5 7 --format email\n"));
        // The '*' marks exactly the significant cells.
        assert_eq!(s.matches(")*").count(), 2);
    }

    #[test]
    fn columns_split_into_blocks_repeating_keys_and_baseline() {
        let r = testing::awkward();
        let s = render(&r);
        check(&s);
        // 5 columns do not fit in 72: several blocks, each with both rows.
        let row_lines: Vec<&str> = s.lines().filter(|l| l.starts_with("  a_really")).collect();
        assert!(row_lines.len() >= 2, "{s}");
        assert_eq!(
            row_lines.len(),
            s.lines().filter(|l| l.starts_with("  open,close")).count()
        );
        // Each block repeats the baseline's "(  0.00%)".
        assert!(row_lines.iter().all(|l| l.contains("(  0.00%)")), "{s}");
        // Labels on their own lines, once per block.
        let label_lines = s
            .lines()
            .filter(|l| l.starts_with("seccomp:allow/kill:"))
            .count();
        assert_eq!(label_lines, row_lines.len());
        // Every candidate column appears in some block.
        let stars = s.matches(")*").count();
        // Columns 1 (slower), 3 (faster), 4 (slower) in both rows.
        assert_eq!(stars, 6, "{s}");
    }

    #[test]
    fn long_workload_names_are_shortened_in_the_middle() {
        assert_eq!(shorten("abcdefghij", 6), "ab..ij");
        assert_eq!(shorten("abcdefghij", 7), "abc..ij");
        assert_eq!(shorten("abc", 6), "abc");
        let s = render(&testing::awkward());
        let row = s.lines().find(|l| l.starts_with("  a_really_..")).unwrap();
        assert!(row.contains("testing 4000000000 "), "{s}");
    }

    #[test]
    fn single_configuration_has_values_only() {
        let s = render(&testing::single());
        check(&s);
        assert!(!s.contains('%'), "{s}");
        assert!(s.contains("Median ns/op by workload and tasks."));
        assert!(s.contains("297.50"));
        assert!(!s.contains("\n\n\n"), "{s}");
    }

    #[test]
    fn units_scale_to_the_largest_value() {
        let mut r = testing::small();
        for row in &mut r.rows {
            for c in row.cells.iter_mut().flatten() {
                c.value *= 1e6;
            }
        }
        let s = render(&r);
        assert!(s.contains("Median ms/op"), "{s}");
        assert!(s.contains("297.50 (  0.00%)"), "{s}");
        let mut r = testing::small();
        r.unit = "ops/s".into();
        assert!(render(&r).contains("Median ops/s"));
    }

    #[test]
    fn reproduce_wraps_at_shell_words() {
        let cmd = "secperf overhead --mechanisms 'landlock:fs-ro seccomp:allow' --workloads a,b --tasks 1,2,4,8,16 --pairs 30 --format email --output /tmp/x";
        let lines = reproduce(cmd);
        assert!(lines.len() >= 2);
        for l in &lines[..lines.len() - 1] {
            assert!(l.ends_with(" \\"), "{l:?}");
        }
        for l in &lines {
            assert!(l.len() <= WIDTH, "{l:?}");
        }
        // Joining the continuations gives the command back, quotes intact.
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.trim_end_matches(" \\").trim().to_string())
            .collect();
        assert_eq!(joined.join(" "), format!("Reproduce: {cmd}"));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("'landlock:fs-ro seccomp:allow'"))
        );

        // A word longer than a line breaks with a bare backslash, and the
        // rest starts at column 0 so that the shell joins it.
        let long = format!("secperf run --output /{}", "d/".repeat(60));
        let lines = reproduce(&long);
        let mut rebuilt = String::new();
        let mut soft = false;
        for l in &lines {
            assert!(l.len() <= WIDTH, "{l:?}");
            let l = if soft { l.trim_start() } else { l.as_str() };
            soft = l.ends_with(" \\");
            if let Some(x) = l.strip_suffix(" \\") {
                rebuilt.push_str(x);
                rebuilt.push(' ');
            } else if let Some(x) = l.strip_suffix('\\') {
                rebuilt.push_str(x);
            } else {
                rebuilt.push_str(l);
            }
        }
        assert_eq!(rebuilt, format!("Reproduce: {long}"));
    }

    #[test]
    fn shell_words_keep_quoted_words_whole() {
        // Each word comes back quoted so that the shell reads the same word.
        let words = command_words(r#"a 'b c' "d \" e" f\ g"#);
        assert_eq!(words, ["a", "'b c'", r#"'d " e'"#, "'f g'"]);
        assert_eq!(
            shell_words::split(&words.join(" ")).unwrap(),
            ["a", "b c", "d \" e", "f g"]
        );
        // A line that does not parse (an old run's unquoted command)
        // splits at whitespace, as stored.
        assert_eq!(
            command_words("secperf run -l it's -- sh -c a b"),
            ["secperf", "run", "-l", "it's", "--", "sh", "-c", "a", "b"]
        );
    }

    #[test]
    fn reproduce_keeps_a_quoted_command_argument_whole() {
        // As engine::session::command_line_of stores it (shell_words::join).
        let cmd = shell_words::join([
            "secperf",
            "overhead",
            "-m",
            "seccomp:args,filters=4",
            "--tasks",
            "1,2,4,8,16",
            "--label",
            "seccomp cost",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3; do true; done",
        ]);
        let lines = reproduce(&cmd);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("'for i in 1 2 3; do true; done'")),
            "{lines:?}"
        );
        let joined: Vec<&str> = lines
            .iter()
            .map(|l| l.trim_end_matches(" \\").trim())
            .collect();
        assert_eq!(joined.join(" "), format!("Reproduce: {cmd}"));
    }

    #[test]
    fn empty_report() {
        let mut r = testing::small();
        r.rows.clear();
        let s = render(&r);
        check(&s);
        assert!(s.contains("(no results)"));
        r.columns.clear();
        check(&render(&r));
        let _ = Row {
            workload: String::new(),
            tasks: 0,
            label: String::new(),
            unit: None,
            cells: vec![],
        };
    }

    #[test]
    fn snapshot() {
        let got = render(&testing::small()) + "\n" + &render(&testing::awkward());
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/report/email.txt"
        );
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
            std::fs::write(path, &got).unwrap();
        }
        let want = std::fs::read_to_string(path).expect("run with UPDATE_SNAPSHOTS=1 to create");
        assert_eq!(
            got, want,
            "email output changed; UPDATE_SNAPSHOTS=1 rewrites {path}"
        );
    }
}
