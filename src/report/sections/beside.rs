//! The measures beside each comparison's own: a load client's figures
//! (`service` with a client secperf reads: requests/s, latencies), a
//! server's CPU per client run, and time beside counted instructions where
//! one run has both. One row per measure of each comparison: the baseline,
//! the treatment its paired change gives, the change with its interval and
//! its verdict, decided as the comparisons' own measure is, each measure
//! across the comparisons that have it
//! ([`crate::engine::ab::decide_all`]). The verdict of a comparison stays
//! its own measure's.

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::{Align, Cell, Column, Markup, Table, Tone};
use super::super::number::{figure, level_label};
use crate::model::{Measure, Per};
use crate::stats::decision::Verdict;

/// A measure's verdict in words that say which way it went: time's are
/// slower and faster, counted instructions' more and fewer; a figure of a
/// client's, higher or lower (requests/s higher is better, a latency
/// higher is worse).
pub fn verdict_word(measure: &Measure, v: Verdict) -> String {
    match (measure.metric(), v) {
        (None, Verdict::Slower) => "higher".into(),
        (None, Verdict::Faster) => "lower".into(),
        (None, v) => v.to_string(),
        (Some(metric), v) => crate::report::number::verdict_text(metric, v),
    }
}

/// Whether a verdict is for the better or the worse on `measure`.
pub fn verdict_tone(measure: &Measure, v: Verdict) -> Tone {
    match (measure.higher_is_better, Tone::of(v)) {
        (true, Tone::Worse) => Tone::Better,
        (true, Tone::Better) => Tone::Worse,
        (_, t) => t,
    }
}

/// The measures beside every comparison that has any, one row each; None
/// when no comparison has any. The HTML page shows the same table.
pub fn beside_table(doc: &RunDoc) -> Option<Table> {
    let with: Vec<_> = doc
        .comparisons
        .iter()
        .filter(|c| !c.beside.is_empty())
        .collect();
    if with.is_empty() {
        return None;
    }
    let level = with
        .iter()
        .flat_map(|c| &c.beside)
        .find_map(|f| f.ci_alpha)
        .map_or_else(|| "95%".to_string(), level_label);
    let mut t = Table::new(
        "beside",
        vec![
            Column::new("workload", Align::Left, "workload"),
            Column::new("mechanism", Align::Left, "treatment"),
            Column::new("measure", Align::Left, "measure"),
            Column::new("pairs", Align::Right, "pairs"),
            Column::new("baseline", Align::Right, "baseline"),
            Column::new("treatment", Align::Right, "treatment"),
            Column::with_fields(
                &format!("change [{level} CI]"),
                Align::Right,
                &["change_pct", "change_ci_low_pct", "change_ci_high_pct"],
            ),
            Column::new("verdict", Align::Left, "verdict"),
            Column::new("better", Align::Left, "better").optional(),
            Column::data("unit"),
            Column::data("per"),
            Column::data("treatment_median"),
        ],
    );
    t.group = Some(2);
    for c in &with {
        for f in &c.beside {
            let o = &f.change_pct;
            let m = &f.measure;
            let tone = verdict_tone(m, o.verdict);
            t.row(vec![
                Cell::text(label::workload(&c.workload, &c.workload_params)),
                Cell::text(label::treatment(c)),
                Cell::text(m.name.clone()),
                Cell::value(f.pairs.to_string(), f.pairs),
                Cell::value(figure(m, f.baseline), f.baseline),
                Cell::value(figure(m, f.treatment), f.treatment),
                Cell::values(
                    format!("{:+.1}% [{:+.1}, {:+.1}]", o.estimate, o.ci_low, o.ci_high),
                    vec![o.estimate.into(), o.ci_low.into(), o.ci_high.into()],
                )
                .tone(tone),
                Cell::text(verdict_word(m, o.verdict)).tone(tone),
                Cell::text(if m.higher_is_better {
                    "higher"
                } else {
                    "lower"
                }),
                Cell::text(m.unit.clone()),
                Cell::text(m.per.to_string()),
                Cell::value("", f.treatment_median),
            ]);
        }
    }
    let client = with
        .iter()
        .flat_map(|c| &c.beside)
        .any(|f| f.measure.per == Per::Run && !is_server_cpu(&f.measure.name));
    if client {
        t.footer(
            "What the client reported, per run: requests or transactions per second, latencies \
             in ms.",
        );
    }
    t.footer(
        "baseline: the median over pairs of the baseline half (a half's value is the median of \
         its slices or runs); treatment: baseline x the median paired ratio, so treatment / \
         baseline - 1 is the change (as in the overhead table); change and verdict: from the \
         pairs, figured and decided as the comparisons' own measure is, each measure across the \
         comparisons that have it (the comparison's verdict above is its own measure's). \
         better: which direction is better for that measure (a fall in requests/s is a cost, a \
         rise in latency is); higher or lower: which way it went.",
    );
    if with
        .iter()
        .any(|c| c.beside.iter().any(|f| is_server_cpu(&f.measure.name)))
    {
        t.footer(
            "server.*_ms_per_run: the server's CPU time per client run, its whole process \
             group's: cpu exact (each process's CPU clock), user and system its split in the \
             proportion of /proc's clock ticks; paired like the client's figures, so it has \
             an interval: the figure `secperf predict --pid` of the server is checked \
             against.",
        );
    }
    Some(t)
}

/// Whether a figure is the server's CPU time, not the client's.
fn is_server_cpu(name: &str) -> bool {
    name.starts_with("server.")
}

/// The heading of the measures beside, by what they are.
pub fn heading(doc: &RunDoc) -> &'static str {
    let all = || doc.comparisons.iter().flat_map(|c| &c.beside);
    let client = all().any(|f| f.measure.per == Per::Run && !is_server_cpu(&f.measure.name));
    let server = all().any(|f| is_server_cpu(&f.measure.name));
    let metric = all().any(|f| f.measure.metric().is_some());
    match (client, server, metric) {
        (true, true, _) => "The client's figures and the server's CPU",
        (true, false, false) => "The client's figures",
        (false, true, false) => "The server's CPU",
        _ => "Measures beside each comparison's own",
    }
}

/// The measures beside the comparisons' own, where any comparison has
/// some.
pub fn beside(doc: &RunDoc, m: &mut dyn Markup) {
    if let Some(t) = beside_table(doc) {
        m.heading(heading(doc));
        m.table(&t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Metric;

    #[test]
    fn verdicts_say_which_way_and_whether_for_the_better() {
        let rps = Measure::per_run("requests_per_sec", true);
        let latency = Measure::per_run("latency_p99_ms", false);
        let time = Measure::of(Metric::Time);
        assert_eq!(verdict_word(&rps, Verdict::Faster), "lower");
        assert_eq!(verdict_tone(&rps, Verdict::Faster), Tone::Worse);
        assert_eq!(verdict_word(&latency, Verdict::Slower), "higher");
        assert_eq!(verdict_tone(&latency, Verdict::Slower), Tone::Worse);
        assert_eq!(verdict_word(&time, Verdict::Slower), "slower");
        assert_eq!(verdict_tone(&time, Verdict::Faster), Tone::Better);
        assert_eq!(verdict_word(&rps, Verdict::Negligible), "negligible");
    }
}
