//! The A/B comparisons of a run: one row per mechanism, workload and task
//! count with the baseline, the treatment, the overhead with its 95%
//! interval and mark, the corrected p-value and the verdict; and the CPU
//! time of a command's runs in each arm.
//!
//! The figures add up: `baseline` is the median over pairs of the baseline
//! halves, and `treatment` is the baseline times the median paired ratio
//! exp(median ln(treatment/baseline)), the estimate the overhead is, so
//! treatment / baseline - 1 is the printed overhead. (The treatment halves'
//! own median, which drift between pairs moves apart from that, is
//! `treatment_per_op` in the JSON and the CSV.)

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::{Align, Cell, Column, Markup, Raw, Table, Tone};
use super::super::number::{
    comparison_overhead, comparison_verdict, either_way, figure, level_label, marks_legend_in,
    p_value,
};
use crate::model::Comparison;
use crate::stats::decision::{ErrorRate, SeqTest};

/// The paired treatment figure: baseline x (1 + overhead).
pub fn paired_treatment_per_op(c: &Comparison) -> f64 {
    c.baseline_per_op * (1.0 + c.overhead_pct.estimate / 100.0)
}

/// "12/32" (sequential: measured of the budget), "12", with
/// " unfinished" when the run stopped inside it.
fn pairs_text(c: &Comparison) -> String {
    let n = match &c.sequential {
        Some(s) => format!("{}/{}", c.pairs, s.max_pairs),
        None => c.pairs.to_string(),
    };
    if c.unfinished {
        format!("{n} unfinished")
    } else {
        n
    }
}

/// The comparisons table, without its section heading.
pub fn comparisons_table(doc: &RunDoc) -> Table {
    // Intervals at the table's level (a table of several sequential
    // comparisons) say so in the header; the legend says why.
    let overhead_title = match doc.comparisons.iter().find_map(|c| c.ci_alpha) {
        Some(a) => format!("overhead [{} CI]", level_label(a)),
        None => "overhead [95% CI]".to_string(),
    };
    let mut t = Table::new(
        "comparisons",
        vec![
            Column::new("workload", Align::Left, "workload"),
            Column::new("mechanism", Align::Left, "treatment"),
            Column::data("workload_params"),
            Column::new("tasks", Align::Right, "tasks").left_out_when_constant(),
            // On a narrow terminal the pairs go before names and the
            // change (after the p-value and the verdict); email keeps them.
            Column::with_fields("pairs", Align::Right, &["pairs", "max_pairs", "unfinished"])
                .wrapping()
                .optional_on_terminal(),
            Column::new("baseline", Align::Right, "baseline_per_op").wrapping(),
            Column::new("treatment", Align::Right, "treatment_paired_per_op").wrapping(),
            Column::with_fields(
                &overhead_title,
                Align::Right,
                &["overhead_pct", "ci_low_pct", "ci_high_pct"],
            )
            .wrapping(),
            Column::new("p", Align::Right, "p_value").optional(),
            Column::new("verdict", Align::Left, "verdict")
                .optional()
                .kept_longer(),
            Column::data("treatment_per_op"),
            Column::data("measure"),
            Column::data("hodges_lehmann_pct"),
            Column::data("stopped"),
            Column::data("vm_accel"),
        ],
    );
    let accel = super::guest::accel_field(doc);
    let metric = doc.metric();
    t.group = Some(1);
    for c in &doc.comparisons {
        let o = &c.overhead_pct;
        let treatment = paired_treatment_per_op(c);
        // An unfinished comparison has no verdict: no colour either.
        let tone = if c.unfinished {
            Tone::Plain
        } else {
            Tone::of(o.verdict)
        };
        t.row(vec![
            Cell::value(
                label::workload(&c.workload, &c.workload_params),
                c.workload.as_str(),
            ),
            Cell::text(label::treatment(c)),
            Cell::text(label::params_field(&c.workload_params)),
            Cell::value(c.tasks.to_string(), c.tasks),
            Cell::values(
                pairs_text(c),
                vec![
                    c.pairs.into(),
                    c.sequential.map(|s| s.max_pairs).into(),
                    c.unfinished.into(),
                ],
            ),
            Cell::value(figure(&c.measure, c.baseline_per_op), c.baseline_per_op),
            Cell::value(figure(&c.measure, treatment), treatment),
            Cell::values(
                comparison_overhead(c),
                vec![o.estimate.into(), o.ci_low.into(), o.ci_high.into()],
            )
            .tone(tone),
            Cell::value(p_value(o.p_value), o.p_value),
            Cell::value(comparison_verdict(c, metric), o.verdict.to_string()).tone(tone),
            Cell::value("", c.treatment_per_op),
            Cell::value("", c.measure.name.as_str()),
            Cell::value("", c.hodges_lehmann_pct),
            Cell::value(
                "",
                c.sequential
                    .map_or(Raw::Empty, |s| Raw::Text(s.stopped.describe().to_string())),
            ),
            Cell::value("", accel.clone()),
        ]);
    }
    let decision = doc.settings().decision.unwrap_or_default();
    let sequential = doc.comparisons.iter().any(|c| c.sequential.is_some());
    let by_t = sequential && decision.test == SeqTest::T;
    let footer = if by_t {
        "baseline: median ns per operation of one task over the baseline halves; treatment: \
         baseline x the mean paired ratio (geometric), so treatment / baseline - 1 is the \
         overhead (overhead = exp(mean over pairs of ln(treatment/baseline)) - 1)."
    } else if sequential {
        "baseline: median ns per operation of one task over the baseline halves; treatment: \
         baseline x the median paired ratio, so treatment / baseline - 1 is the overhead \
         (overhead = exp(median over pairs of ln(treatment/baseline)) - 1)."
    } else {
        "baseline: median ns per operation of one task over the baseline halves; treatment: \
         baseline x the paired ratio the overhead estimates, so treatment / baseline - 1 is \
         the overhead (overhead = exp(HL) - 1, HL the Hodges-Lehmann estimate of \
         ln(treatment/baseline): the median of the pairs' Walsh averages)."
    };
    t.footer(footer.replace("ns per operation", metric.per_op()));
    let n = doc.comparisons.len();
    let over = match doc.settings().planned_comparisons.filter(|&p| p > n) {
        Some(planned) => format!(
            "the {} measured ({planned} planned: the run was interrupted, and {} never started)",
            crate::report::number::count(n, "comparison"),
            planned - n
        ),
        None => format!(
            "the {} of the run",
            crate::report::number::count(n, "comparison")
        ),
    };
    let either = either_way(metric);
    let correction = match decision.error_rate {
        ErrorRate::Fwer => {
            format!("p: Holm-corrected over {over} (the family-wise error rate)")
        }
        ErrorRate::Fdr => format!(
            "p: e-BH-adjusted over {over} (the false discovery rate: at most alpha of the \
             {either} verdicts false, on average)"
        ),
    };
    t.footer(format!(
        "{correction}; {}. {}",
        if by_t {
            "pairs N/M: sequential, N pairs measured of a budget of M, stopped once the verdict \
             was settled; test: the safe t-test on the log ratios, which assumes them normal \
             (checked by `secperf calibrate --test t`); its interval is an anytime-valid 95% \
             confidence sequence for their mean and its p-value anytime-valid, so stopping \
             early does not make them optimistic"
        } else if sequential && decision.test == SeqTest::Both {
            "pairs N/M: sequential, N pairs measured of a budget of M, stopped once the verdict \
             was settled; test: both the sign test and the safe t-test on the log ratios, their \
             e-values averaged (the t-test assumes them normal, the sign test only the coin \
             that orders each pair; checked by `secperf calibrate`); its interval is the \
             intersection of their anytime-valid confidence sequences at half the level (so at \
             95%, each at 97.5%) and its p-value anytime-valid, so stopping early does not make \
             them optimistic"
        } else if sequential {
            "pairs N/M: sequential, N pairs measured of a budget of M, stopped once the verdict \
             was settled; test: the sign test; its interval is an anytime-valid 95% confidence \
             sequence and its p-value anytime-valid, so stopping early does not make them \
             optimistic"
        } else {
            "test: the Wilcoxon signed-rank test on the log ratios; its interval is that test \
             inverted (from the Walsh averages), so it excludes 0 exactly where the p-value is \
             below its level"
        },
        marks_legend_in(&decision, metric)
    ));
    if let Some(a) = doc.comparisons.iter().find_map(|c| c.ci_alpha) {
        t.footer(format!(
            "Intervals are at {}, the level the verdicts were decided at ({}), not 95%: \
             an interval wholly outside the noise band is a {either} verdict, and \
             one that reaches into it is not. Each comparison's own 95% interval is in \
             --json (own_ci_low_pct, own_ci_high_pct).",
            level_label(a),
            match decision.error_rate {
                ErrorRate::Fwer =>
                    format!("alpha / {n} under Holm, Bonferroni's simultaneous level"),
                ErrorRate::Fdr => format!(
                    "alpha x R / {n} for the R {either} rows under e-BH, the e-BY \
                     intervals: their false coverage rate is at most alpha"
                ),
            }
        ));
    }
    if doc.comparisons.iter().any(|c| c.unfinished) {
        t.footer(
            "unfinished: the run stopped inside this comparison; its figures are from the \
             pairs finished before it stopped.",
        );
    }
    t
}

/// How a run's verdicts were reached, in one phrase for captions: the
/// correction and the test actually used, the interval against the noise
/// band, and the equivalence test.
pub fn verdict_method(doc: &RunDoc) -> String {
    let decision = doc.settings().decision.unwrap_or_default();
    let sequential = doc.comparisons.iter().any(|c| c.sequential.is_some());
    let test = match (sequential, decision.test) {
        (false, _) => "the Wilcoxon signed-rank test",
        (true, SeqTest::Sign) => "the sequential sign test",
        (true, SeqTest::T) => "the safe t-test",
        (true, SeqTest::Both) => "the sign test and the safe t-test together",
    };
    let correction = match decision.error_rate {
        ErrorRate::Fwer => "Holm-corrected (the family-wise error rate)",
        ErrorRate::Fdr => "e-BH-adjusted (the false discovery rate)",
    };
    format!(
        "the p-value of {test}, {correction} over the run's comparisons, against alpha {}; \
         the interval against the noise band; an equivalence test for negligible",
        decision.alpha
    )
}

pub fn comparisons(doc: &RunDoc, m: &mut dyn Markup) {
    if doc.comparisons.is_empty() {
        return;
    }
    m.table(&comparisons_table(doc));
}

/// CPU time per run of a command in each arm.
pub fn child_cpu(doc: &RunDoc, m: &mut dyn Markup) {
    let with_cpu: Vec<&Comparison> = doc
        .comparisons
        .iter()
        .filter(|c| c.child_cpu.is_some())
        .collect();
    if with_cpu.is_empty() {
        return;
    }
    let mut t = Table::new(
        "child_cpu",
        vec![
            Column::new("command", Align::Left, "workload"),
            Column::new("mechanism", Align::Left, "treatment"),
            Column::new("tasks", Align::Right, "tasks"),
            Column::with_fields(
                "user",
                Align::Right,
                &["baseline_user_ns_per_op", "treatment_user_ns_per_op"],
            ),
            Column::with_fields(
                "sys",
                Align::Right,
                &["baseline_sys_ns_per_op", "treatment_sys_ns_per_op"],
            ),
        ],
    );
    t.group = Some(1);
    for c in &with_cpu {
        let Some([b, tr]) = &c.child_cpu else {
            continue;
        };
        // 3 significant digits: a server's CPU time comes in clock ticks.
        let arrow = |x: f64, y: f64| {
            format!(
                "{} -> {}",
                crate::report::number::ns3(x),
                crate::report::number::ns3(y)
            )
        };
        t.row(vec![
            Cell::text(label::workload(&c.workload, &c.workload_params)),
            Cell::text(label::treatment(c)),
            Cell::value(c.tasks.to_string(), c.tasks),
            Cell::values(
                arrow(b.user_ns_per_op, tr.user_ns_per_op),
                vec![b.user_ns_per_op.into(), tr.user_ns_per_op.into()],
            ),
            Cell::values(
                arrow(b.sys_ns_per_op, tr.sys_ns_per_op),
                vec![b.sys_ns_per_op.into(), tr.sys_ns_per_op.into()],
            ),
        ]);
    }
    let servers = with_cpu
        .iter()
        .filter(|c| c.workload == crate::workloads::service::NAME)
        .count();
    let (footer, heading) = if servers == 0 {
        (
            "CPU time per run of the command (wait4's rusage), baseline -> treatment, each the \
             median over the halves of its arm.",
            "CPU time of the command's runs",
        )
    } else if servers == with_cpu.len() {
        (
            "The server's CPU time per client run (its threads and the children it reaped, from \
             /proc/PID/stat, in clock ticks), baseline -> treatment, each the median over the \
             halves of its arm.",
            "The server's CPU time per client run",
        )
    } else {
        (
            "CPU time per run of the command (wait4's rusage), or for a client against a \
             server the server's CPU time per client run (from /proc/PID/stat, in clock \
             ticks), baseline -> treatment, each the median over the halves of its arm.",
            "CPU time of the command's runs, or of the server per client run",
        )
    };
    t.footer(footer);
    m.heading(heading);
    m.table(&t);
}
