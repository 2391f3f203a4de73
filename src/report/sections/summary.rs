//! A run's comparisons at a glance: one line each, its verdict, its change
//! with the interval the verdict was decided on, and what was compared,
//! within 80 columns (or the format's, when narrower), before the tables (which a narrow terminal draws as
//! a block per comparison). Written for runs of two comparisons or more;
//! one comparison's table is its own summary.

use super::super::doc::RunDoc;
use super::super::markup::Markup;
use super::super::number::{comparison_overhead, comparison_verdict, verdict_text};
use crate::model::Comparison;
use crate::stats::decision::Verdict;

/// The widest a summary line is, the list's indent included.
pub const WIDTH: usize = 80;

pub fn summary(doc: &RunDoc, m: &mut dyn Markup) {
    if doc.comparisons.len() < 2 || doc.suite.is_some() {
        return;
    }
    let metric = doc.metric();
    let mut counts = vec![];
    for v in [
        Verdict::Slower,
        Verdict::Faster,
        Verdict::Negligible,
        Verdict::NoChange,
    ] {
        let n = doc
            .comparisons
            .iter()
            .filter(|c| !c.unfinished && c.overhead_pct.verdict == v)
            .count();
        if n > 0 {
            let word = match v {
                Verdict::NoChange => "no difference detected".to_string(),
                v => verdict_text(metric, v),
            };
            counts.push(format!("{n} {word}"));
        }
    }
    let unfinished = doc.comparisons.iter().filter(|c| c.unfinished).count();
    if unfinished > 0 {
        counts.push(format!("{unfinished} unfinished"));
    }
    m.heading(&format!(
        "Summary of {}: {}",
        crate::report::number::count(doc.comparisons.len(), "comparison"),
        counts.join(", ")
    ));
    let tasks = doc.comparisons.iter().any(|c| c.tasks != 1);
    let rows: Vec<(String, String, String)> = doc
        .comparisons
        .iter()
        .map(|c| (comparison_verdict(c, metric), change(c), compared(c, tasks)))
        .collect();
    let width = m.columns().map_or(WIDTH, |c| c.min(WIDTH));
    let verdict_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let change_w = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    let lines: Vec<String> = rows
        .iter()
        .map(|(v, ch, what)| {
            let head = format!("{v:<verdict_w$}  {ch:>change_w$}  ");
            // The list's indent is 2.
            let room = width.saturating_sub(2 + head.chars().count()).max(16);
            format!("{head}{}", cut(what, room))
        })
        .collect();
    m.list(&lines);
}

/// Its change with its interval and mark (an unfinished one's "so far").
fn change(c: &Comparison) -> String {
    if c.unfinished {
        format!("{} so far", comparison_overhead(c))
    } else {
        comparison_overhead(c)
    }
}

/// "getppid: seccomp:allow" (with its tasks where a run has several
/// counts).
fn compared(c: &Comparison, tasks: bool) -> String {
    let workload = crate::report::label::workload(&c.workload, &c.workload_params);
    let tasks = if tasks {
        format!(" tasks={}", c.tasks)
    } else {
        String::new()
    };
    format!("{workload}{tasks}: {}", crate::report::label::treatment(c))
}

/// `text` within `room` columns, its end replaced by "..." when cut.
fn cut(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_string();
    }
    let kept: String = text.chars().take(room.saturating_sub(3)).collect();
    format!("{}...", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_line_per_comparison_fits_80_columns() {
        let mut doc = crate::report::sections::testing::overhead_doc();
        let mut m = crate::report::markup::writer(crate::report::markup::Kind::Plain);
        doc.comparisons.truncate(1);
        summary(&doc, m.as_mut());
        assert!(m.finish().is_empty(), "one comparison is its own summary");
        let mut long = doc.comparisons[0].clone();
        long.workload = "a_workload_with_a_long_name".into();
        long.unfinished = true;
        doc.comparisons.push(long);
        summary(&doc, m.as_mut());
        let text = m.finish();
        assert!(text.contains("unfinished"), "{text}");
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
        assert_eq!(lines.len(), doc.comparisons.len(), "{text}");
        for l in &lines {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        assert!(text.starts_with("Summary of "), "{text}");
        assert_eq!(cut("abcdefghij", 8), "abcde...");
        assert_eq!(cut("abc", 8), "abc");
    }
}
