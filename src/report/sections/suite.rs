//! A suite run's report ([`SuiteDoc`]), in the post's order: the header
//! citing the post and the machine, the A/B section's post-shaped tables
//! with each profiled comparison (`perf diff`'s shares, then where the
//! time goes), the runs section, how the baseline run's machine differs,
//! the SELinux AVC counters, then the legend of the marks, how the values
//! were computed, the notes, the skipped mechanisms and how to measure
//! the other side.

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::{Align, Cell, Column, Markup, Table};
use super::super::model::PostSection;
use super::super::suite::SuiteDoc;
use super::{attribution, post};
use crate::model::{AvcDelta, AvcStats};

/// Writes the suite report of `doc`; nothing for a run of another kind.
pub fn suite(doc: &RunDoc, m: &mut dyn Markup) {
    let Some(s) = &doc.suite else { return };
    header(doc, s, m);
    if let Some(ab) = &s.ab {
        section(ab, "suite_ab", m);
        profiles(doc, m);
    }
    section(&s.runs, "suite_runs", m);
    if !s.differences.is_empty() {
        let items: Vec<String> = s
            .differences
            .iter()
            .map(|d| format!("differs between the runs: {d}"))
            .collect();
        m.list(&items);
    }
    if s.collects_avc {
        avc(s.avc.as_deref(), m);
    }
    remarks(doc, s, m);
}

/// "lsm-hooks-2020 v1: what the post measured", the citation with the
/// archive link alone on its line (to copy it whole), and the machine.
fn header(doc: &RunDoc, s: &SuiteDoc, m: &mut dyn Markup) {
    m.heading(&format!("{} v{}: {}", s.name, s.version, s.title));
    let mut items = vec![format!("reproduces: {}", s.reproduces.text())];
    items.extend(s.reproduces.link.clone());
    items.push(format!("measured on {}", machine_line(&doc.meta.system)));
    m.list(&items);
}

/// "linux 6.18.0, LSMs lockdown,capability,landlock,bpf, 2 CPUs".
pub fn machine_line(system: &serde_json::Value) -> String {
    crate::probe::MachineFacts::of(system).line()
}

/// A section: its title, its tables, its warnings.
fn section(s: &PostSection, id: &str, m: &mut dyn Markup) {
    m.heading(&s.report.title);
    for t in post::tables(s, id) {
        m.table(&t);
    }
    for w in &s.report.warnings {
        m.text(&format!("warning: {w}"));
    }
}

/// Each profiled comparison: the shares of samples as the posts showed
/// profiles, then what those shares are in ns/op.
fn profiles(doc: &RunDoc, m: &mut dyn Markup) {
    for c in &doc.comparisons {
        let Some(a) = &c.attribution else { continue };
        let what = label::comparison(c);
        if !a.symbols.is_empty() {
            m.heading(&format!("Profile: {what} (share of samples, as perf diff)"));
            m.table(&attribution::shares(&what, a));
        }
        m.heading(&format!("Where the time goes: {what}"));
        for line in attribution::preamble(a) {
            m.text(&line);
        }
        if !a.groups.is_empty() {
            m.table(&attribution::table(&what, a));
        }
    }
}

/// The AVC counters of each workload; `None`: SELinux was not active.
fn avc(deltas: Option<&[AvcDelta]>, m: &mut dyn Markup) {
    let Some(deltas) = deltas else {
        m.text(&format!(
            "SELinux AVC statistics: not collected: SELinux is not active here ({} absent)",
            AvcStats::FILE
        ));
        return;
    };
    if deltas.is_empty() {
        m.text("SELinux AVC statistics: none stored with this run");
        return;
    }
    m.heading(&format!(
        "SELinux AVC statistics during each measurement ({})",
        AvcStats::FILE
    ));
    m.table(&avc_table(deltas));
}

fn avc_table(deltas: &[AvcDelta]) -> Table {
    let mut columns = vec![
        Column::new("workload", Align::Left, "workload"),
        Column::new("tasks", Align::Right, "tasks"),
    ];
    columns.extend(
        AvcStats::FIELDS
            .iter()
            .map(|f| Column::new(f, Align::Right, f)),
    );
    columns.push(Column::new("hit rate", Align::Right, "hit_rate_pct"));
    let mut t = Table::new("avc", columns);
    for d in deltas {
        let mut cells = vec![
            Cell::text(d.workload.as_str()),
            Cell::value(d.tasks.to_string(), d.tasks),
        ];
        cells.extend(
            d.stats
                .values()
                .iter()
                .map(|&v| Cell::value(v.to_string(), v)),
        );
        let hit = d.stats.hit_pct();
        cells.push(Cell::value(
            hit.map_or("-".into(), |h| format!("{h:.2}%")),
            hit,
        ));
        t.row(cells);
    }
    t
}

/// The legend, how the values were computed, the notes, the skipped
/// mechanisms and the other side.
fn remarks(doc: &RunDoc, s: &SuiteDoc, m: &mut dyn Markup) {
    let settings = doc.settings();
    m.text(&crate::report::number::marks_legend(
        &settings.decision.unwrap_or_default(),
    ));
    if s.ab.is_some() {
        m.text(
            "A/B: the baseline value is the median of the baseline halves over all pairs; a \
             mechanism's value is that baseline times its paired ratio (the median of the \
             per-pair ratios, with its 95% interval), so value / baseline - 1 is the % shown",
        );
    }
    m.text(
        "Runs: each value is the median over the run's samples; a % against a baseline run is \
         the Hodges-Lehmann shift between the two runs' samples, with the interval that inverts \
         the Mann-Whitney test at the level the verdicts were decided at",
    );
    let mut items: Vec<String> = s.notes.iter().map(|n| format!("note: {n}")).collect();
    items.extend(
        settings
            .skipped
            .iter()
            .map(|sk| format!("skipped: {}: {}", sk.mechanism, sk.reason)),
    );
    items.push(format!("other side: {}", s.other_side));
    m.list(&items);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::markup::{Kind, writer};
    use crate::report::sections::testing::suite_doc;

    fn render(doc: &RunDoc, kind: Kind) -> String {
        let mut m = writer(kind);
        suite(doc, m.as_mut());
        m.finish()
    }

    #[test]
    fn the_report_cites_the_post_then_draws_its_tables() {
        let doc = suite_doc();
        let text = render(&doc, Kind::Plain);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("access-2023 v1: "), "{text}");
        // The citation (author, subject, list, date), the link whole on a
        // line of its own, the machine.
        let header: Vec<&str> = lines
            .iter()
            .take_while(|l| !l.is_empty())
            .copied()
            .collect();
        assert!(header[1].starts_with("  reproduces: Paul Moore"), "{text}");
        let cited = header
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            cited.contains(
                "\"Re: [PATCH v2 2/2] vfs: avoid duplicating creds in faccessat if possible\""
            ),
            "{text}"
        );
        assert!(cited.contains("linux-fsdevel, 2023-01-23"), "{text}");
        assert!(header.contains(&"  https://lore.kernel.org/x/"), "{text}");
        assert!(text.contains("measured on linux 6.18.0, LSMs capability,landlock, 2 CPUs"));
        // Both sections, in the post's shape between rules, with units.
        for title in [
            "This boot, A/B pairs on the live kernel:",
            "This run, current configuration:",
        ] {
            assert!(lines.contains(&title), "{title}: {text}");
        }
        assert!(text.contains("access1 [ops/s]"), "{text}");
        assert!(lines.iter().any(|l| l.starts_with("-----")), "{text}");
        // The profile, as perf diff and in ns/op.
        assert!(
            text.contains("Profile: cred:fsuid on access1 tasks=1 (share of samples"),
            "{text}"
        );
        assert!(
            text.contains("Where the time goes: cred:fsuid on access1"),
            "{text}"
        );
        // AVC, legend, notes, skips, the other side.
        assert!(text.contains("75.00%"), "{text}");
        assert!(text.contains("A/B: the baseline value"), "{text}");
        assert!(text.contains("note: ladders capped"), "{text}");
        assert!(
            text.contains("skipped: selinux: SELinux is not active"),
            "{text}"
        );
        assert!(text.contains("other side: boot the other kernel"), "{text}");
        assert!(text.contains("* slower or faster: p < 0.05"), "{text}");
    }

    #[test]
    fn without_pairs_or_selinux_those_parts_say_so_or_stay_out() {
        let mut doc = suite_doc();
        let s = doc.suite.as_mut().unwrap();
        s.ab = None;
        s.avc = None;
        let text = render(&doc, Kind::Plain);
        assert!(!text.contains("A/B"), "{text}");
        assert!(!text.contains("Profile:"), "{text}");
        assert!(
            text.contains("not collected: SELinux is not active here"),
            "{text}"
        );
        doc.suite.as_mut().unwrap().collects_avc = false;
        assert!(!render(&doc, Kind::Plain).contains("AVC"));
        // Another kind of run: nothing.
        doc.suite = None;
        assert!(render(&doc, Kind::Plain).is_empty());
    }

    #[test]
    fn every_format_draws_it() {
        let doc = suite_doc();
        for kind in [
            Kind::Terminal { color: false },
            Kind::Email,
            Kind::Markdown,
            Kind::Plain,
        ] {
            let text = render(&doc, kind);
            assert!(text.contains("access1 [ops/s]"), "{kind:?}: {text}");
            assert!(text.contains("other side:"), "{kind:?}: {text}");
        }
        let csv = render(&doc, Kind::Csv);
        assert!(csv.contains("item,unit"), "{csv}");
        assert!(csv.contains("hit_rate_pct"), "{csv}");
        assert!(csv.contains("baseline_share_pct"), "{csv}");
    }
}
