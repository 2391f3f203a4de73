//! A suite's report sections: the post's tables filled from a stored run.
//! This module computes (which cells, which statistics, which verdicts)
//! into the one report model ([`PostSection`]: a [`Report`] whose rows
//! are each item at each task count and whose columns are the
//! configurations, with the post-shaped tables it is drawn as);
//! [`super::doc`] puts the sections into the run document, and
//! `report::sections::suite` draws them in the suite's layouts.
//!
//! Two sections. "This boot, A/B": the mechanisms switched on the live
//! kernel; the baseline column is the median of the baseline halves, each
//! mechanism's cell that baseline times its paired ratio (the median of
//! the per-pair ratios), with the run's Holm-corrected verdict. "Runs": the
//! current configuration as measured alone, and, with `--baseline`, a
//! stored run of the same suite beside it, compared unpaired (Mann-Whitney,
//! bootstrap interval of the ratio of medians, Holm across the cells), as
//! `secperf compare` does; each value is the median over samples. Either
//! way a cell's % follows from the values printed (within rounding).

use super::avc::AvcDelta;
use super::{Item, Layout, Metric, PctStyle, SuiteDef, SuitePlan};
use crate::mechanisms::Treatment;
use crate::model::{Comparison, StoredRun, WorkloadResult};
use crate::report::model::{Cell, DesignKind, PostSection, PostTable, Report, Row};
use crate::stats::decision::{DecisionOpts, Samples, Verdict, can_be_significant, smallest_p};
use crate::stats::unpaired::UnpairedOpts;
use crate::stats::unpaired_table::{UnpairedCell, decide_unpaired_table};

/// One cell while a section is built: a value and, against the table's
/// first column, a change.
#[derive(Debug, Clone)]
struct CellData {
    pub value: f64,
    /// Percent in the suite's [`PctStyle`], with its 95% interval.
    pub pct: Option<(f64, f64, f64)>,
    pub verdict: Option<Verdict>,
}

/// One configuration while a section is built: cells by (item index, task
/// count).
#[derive(Debug, Clone)]
struct Config {
    pub name: String,
    pub cells: Vec<((usize, u32), CellData)>,
}

impl Config {
    fn cell(&self, item: usize, tasks: u32) -> Option<&CellData> {
        self.cells
            .iter()
            .find(|(k, _)| *k == (item, tasks))
            .map(|(_, c)| c)
    }
}

/// The section of `configs` over `items`: one row per item and task count,
/// one column per configuration, tables in each item's layout (consecutive
/// [`Layout::ItemRows`] items share one table).
fn assemble(
    title: &str,
    design: DesignKind,
    items: &[Item],
    layout: Layout,
    configs: &[Config],
    warnings: Vec<String>,
) -> PostSection {
    let mut rows = Vec::new();
    let mut item_rows: Vec<Vec<usize>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let mut mine = Vec::new();
        for &n in &item.tasks {
            mine.push(rows.len());
            rows.push(Row {
                workload: item.name(),
                tasks: n as u32,
                label: String::new(),
                unit: Some(item.metric.unit().to_string()),
                cells: configs
                    .iter()
                    .map(|c| {
                        c.cell(i, n as u32).map(|d| {
                            let mut cell = Cell::of_value(d.value);
                            if let Some((e, lo, hi)) = d.pct {
                                cell.change_pct = Some(e);
                                cell.ci_low_pct = Some(lo);
                                cell.ci_high_pct = Some(hi);
                            }
                            cell.verdict = d.verdict;
                            cell
                        })
                    })
                    .collect(),
            });
        }
        item_rows.push(mine);
    }
    let layout_of = |item: &Item| item.layout.unwrap_or(layout);
    let mut tables: Vec<PostTable> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let joins = layout_of(item) == Layout::ItemRows
            && i > 0
            && layout_of(&items[i - 1]) == Layout::ItemRows;
        match tables.last_mut() {
            Some(t) if joins => t.rows.extend(&item_rows[i]),
            _ => tables.push(PostTable {
                layout: layout_of(item),
                rows: item_rows[i].clone(),
                per: item.per.to_string(),
            }),
        }
    }
    PostSection {
        report: Report {
            title: title.to_string(),
            design,
            unit: String::new(),
            sign_convention: "% change against the first column, in each table's style".into(),
            columns: configs.iter().map(|c| c.name.clone()).collect(),
            rows,
            summary: Vec::new(),
            warnings,
            machine: Vec::new(),
            command: String::new(),
        },
        tables,
    }
}

/// Whether a stored result is this item at `tasks`.
fn result_matches(r: &WorkloadResult, item: &Item, tasks: usize) -> bool {
    r.workload == item.workload
        && r.tasks as usize == tasks
        && r.mode == item.mode
        && r.params == item.full_params()
}

fn comparison_matches(c: &Comparison, item: &Item, tasks: usize, t: &Treatment) -> bool {
    c.workload == item.workload
        && c.tasks as usize == tasks
        && c.mode == item.mode
        && c.workload_params == item.full_params()
        && c.mechanism == t.mechanism.name()
        && c.variant == t.variant
        && c.params == t.params
}

/// The percent of a change of ns/op (estimate, low, high) in the metric
/// and style of the table.
fn styled_pct(metric: Metric, style: PctStyle, (e, lo, hi): (f64, f64, f64)) -> (f64, f64, f64) {
    let (e, a, b) = (
        metric.pct_from_time_pct(e),
        metric.pct_from_time_pct(lo),
        metric.pct_from_time_pct(hi),
    );
    let (lo, hi) = (a.min(b), a.max(b));
    match style {
        PctStyle::Change => (e, lo, hi),
    }
}

/// An item's value at the median of `ns_per_op` values: a monotone map,
/// so medians in ns/op and in the item's metric agree (for an odd count;
/// for an even one within the two middle values).
fn median_value(ns_per_op: &[f64], metric: Metric, tasks: u32, per_op: Option<u64>) -> Option<f64> {
    metric.from_ns(crate::stats::median(ns_per_op)?, tasks, per_op)
}

/// The ns/op of each sample of a result.
fn sample_ns(r: &WorkloadResult) -> Vec<f64> {
    r.sample_data.iter().map(|s| s.ns_per_op).collect()
}

fn result_per_op(r: &WorkloadResult) -> Option<u64> {
    r.unit_rate.as_ref().map(|u| u.per_op)
}

/// The units per operation of an item at `tasks`, from any result of the
/// run (A/B comparisons do not store them).
fn units_per_op(run: &StoredRun, item: &Item) -> Option<u64> {
    run.results
        .iter()
        .filter(|r| r.workload == item.workload && r.params == item.full_params())
        .find_map(|r| r.unit_rate.as_ref().map(|u| u.per_op))
}

/// The A/B section, or None when no comparison of the plan was measured.
///
/// The baseline column is the median ns/op of the baseline halves at each
/// cell, pooled over every treatment measured there; a treatment's cell is
/// that baseline times its paired ratio (exp of the median per-pair log
/// ratio), so each cell's % follows from the two values shown.
fn ab_section(plan: &SuitePlan, run: &StoredRun, layout: Layout) -> Option<PostSection> {
    let treatments: Vec<Treatment> = plan
        .treatments
        .iter()
        .filter_map(|t| Treatment::parse(t).ok())
        .collect();
    // Each treatment's comparison at each cell.
    let measured = |t: &Treatment, i: usize, n: usize| {
        run.comparisons
            .iter()
            .find(|c| comparison_matches(c, &plan.ab_items[i], n, t))
            .filter(|c| !c.pair_data.is_empty())
    };
    let cells = || {
        plan.ab_items
            .iter()
            .enumerate()
            .flat_map(|(i, item)| item.tasks.iter().map(move |&n| (i, n)))
    };
    // The baseline halves, pooled over the treatments measured at each cell.
    let mut baseline_ns: std::collections::BTreeMap<(usize, u32), f64> = Default::default();
    for (i, n) in cells() {
        let pooled: Vec<f64> = treatments
            .iter()
            .filter_map(|t| measured(t, i, n))
            .flat_map(|c| c.pair_data.iter().map(|p| p.baseline_per_op))
            .collect();
        if let Some(m) = crate::stats::median(&pooled) {
            baseline_ns.insert((i, n as u32), m);
        }
    }
    let value = |i: usize, n: usize, ns: f64| {
        let item = &plan.ab_items[i];
        item.metric.from_ns(ns, n as u32, units_per_op(run, item))
    };
    let mut configs: Vec<Config> = Vec::new();
    for t in &treatments {
        let mut config = Config {
            name: treatment_name(t),
            cells: Vec::new(),
        };
        for (i, n) in cells() {
            let (Some(c), Some(&base)) = (measured(t, i, n), baseline_ns.get(&(i, n as u32)))
            else {
                continue;
            };
            let o = &c.overhead_pct;
            let Some(v) = value(i, n, base * (1.0 + o.estimate / 100.0)) else {
                continue;
            };
            config.cells.push((
                (i, n as u32),
                CellData {
                    value: v,
                    pct: Some(styled_pct(
                        plan.ab_items[i].metric,
                        plan.pct_style,
                        (o.estimate, o.ci_low, o.ci_high),
                    )),
                    verdict: Some(o.verdict),
                },
            ));
        }
        if !config.cells.is_empty() {
            configs.push(config);
        }
    }
    if configs.is_empty() {
        return None;
    }
    let baseline = Config {
        name: plan.baseline_name.clone(),
        cells: baseline_ns
            .iter()
            .filter_map(|(&(i, n), &ns)| {
                let v = value(i, n as usize, ns)?;
                Some((
                    (i, n),
                    CellData {
                        value: v,
                        pct: None,
                        verdict: None,
                    },
                ))
            })
            .collect(),
    };
    configs.insert(0, baseline);
    Some(assemble(
        "This boot, A/B pairs on the live kernel",
        DesignKind::Paired,
        &plan.ab_items,
        layout,
        &configs,
        Vec::new(),
    ))
}

/// A treatment as a column title: "audit:enabled", "landlock".
fn treatment_name(t: &Treatment) -> String {
    if t.mechanism.name() == "none" {
        return "A/A control".into();
    }
    t.to_string()
}

/// The runs section: the baseline run (if any) and this run, unpaired.
fn runs_section(
    plan: &SuitePlan,
    run: &StoredRun,
    baseline: Option<&StoredRun>,
    decision: &DecisionOpts,
    layout: Layout,
) -> PostSection {
    let mut this = Config {
        name: run.name(),
        cells: Vec::new(),
    };
    let mut base = baseline.map(|b| Config {
        name: b.name(),
        cells: Vec::new(),
    });
    // Cells compared with the baseline: (cell index, metric, baseline
    // ns/op, this run's ns/op).
    let mut pending: Vec<(usize, Metric, Vec<f64>, Vec<f64>)> = Vec::new();
    for (i, item) in plan.current.iter().enumerate() {
        for &n in &item.tasks {
            let Some(r) = run.results.iter().find(|r| result_matches(r, item, n)) else {
                continue;
            };
            let b = sample_ns(r);
            let Some(value) = median_value(&b, item.metric, r.tasks, result_per_op(r)) else {
                continue;
            };
            let cell = CellData {
                value,
                pct: None,
                verdict: None,
            };
            let other = baseline
                .and_then(|b| b.results.iter().find(|r| result_matches(r, item, n)))
                .zip(base.as_mut());
            if let Some((br, bc)) = other {
                let a = sample_ns(br);
                if let Some(value) = median_value(&a, item.metric, br.tasks, result_per_op(br)) {
                    bc.cells.push((
                        (i, n as u32),
                        CellData {
                            value,
                            pct: None,
                            verdict: None,
                        },
                    ));
                }
                pending.push((this.cells.len(), item.metric, a, b));
            }
            this.cells.push(((i, n as u32), cell));
        }
    }
    // One decision across the cells compared, on ns/op.
    let column: Vec<UnpairedCell> = pending
        .iter()
        .map(|(_, _, a, b)| (a.as_slice(), b.as_slice()))
        .collect();
    let decided = decide_unpaired_table(
        std::slice::from_ref(&column),
        &UnpairedOpts::default(),
        decision,
    );
    let mut tested = Vec::new();
    for ((idx, metric, a, b), d) in pending.iter().zip(&decided[0]) {
        let Some(d) = d else { continue };
        // The Hodges-Lehmann shift and the interval the verdict was
        // decided on (stats::unpaired_table), which contains it.
        let cell = &mut this.cells[*idx].1;
        cell.pct = Some(styled_pct(
            *metric,
            plan.pct_style,
            (d.estimate_pct, d.decision.ci_low, d.decision.ci_high),
        ));
        cell.verdict = Some(d.decision.verdict);
        tested.push(Samples::Unpaired(a, b));
    }
    let mut warnings = Vec::new();
    if let Some(smallest) = tested.iter().map(|&t| smallest_p(t)).reduce(f64::min)
        && !can_be_significant(smallest, tested.len(), decision.alpha)
    {
        warnings.push(format!(
            "with this few samples per run no cell can be significant after Holm correction \
             over {} cells (the smallest possible p is {smallest:.4}); run both sides without \
             --quick",
            tested.len()
        ));
    }
    let mut configs: Vec<Config> = base.into_iter().collect();
    configs.push(this);
    let (title, design) = if baseline.is_some() {
        (
            "Runs: the baseline run and this one (unpaired)",
            DesignKind::Unpaired,
        )
    } else {
        ("This run, current configuration", DesignKind::Single)
    };
    assemble(title, design, &plan.current, layout, &configs, warnings)
}

/// What a suite run's report is computed from.
pub struct ReportParts<'a> {
    pub suite: &'static SuiteDef,
    pub plan: &'a SuitePlan,
    pub run: &'a StoredRun,
    pub baseline: Option<&'a StoredRun>,
    pub avc: Option<&'a [AvcDelta]>,
    pub decision: DecisionOpts,
}

/// The report's two sections: the A/B one (None when nothing was paired)
/// and the runs one.
pub fn sections(p: &ReportParts) -> (Option<PostSection>, PostSection) {
    let layout = p.suite.layout;
    (
        ab_section(p.plan, p.run, layout),
        runs_section(p.plan, p.run, p.baseline, &p.decision, layout),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{result, run};
    use crate::model::{Mode, PairData, Params};
    use crate::stats::paired::OverheadPct;

    /// Config `config`'s cell in row `row` of a section.
    fn cell(s: &PostSection, config: usize, row: usize) -> Option<&Cell> {
        s.report.rows[row].cells[config].as_ref()
    }

    trait Pct {
        fn pct(&self) -> (f64, f64, f64);
    }

    impl Pct for Cell {
        fn pct(&self) -> (f64, f64, f64) {
            (
                self.change_pct.unwrap(),
                self.ci_low_pct.unwrap(),
                self.ci_high_pct.unwrap(),
            )
        }
    }

    /// The section's tables as the suites print them by default.
    fn plain(s: &PostSection) -> String {
        let mut m = crate::report::markup::writer(crate::report::markup::Kind::Plain);
        for t in crate::report::sections::post::tables(s, "test") {
            m.table(&t);
        }
        m.finish()
    }

    fn plan() -> SuitePlan {
        (super::super::access_2023::SUITE.plan)(&super::super::PlanCtx {
            quick: true,
            cpus: 1,
        })
    }

    /// A cred:fsuid comparison on `workload` x1: baseline 1000 ns/op,
    /// treatment `treated` ns/op in every pair.
    fn comparison(workload: &str, treated: f64, verdict: Verdict) -> Comparison {
        let t = Treatment::parse("cred").unwrap();
        Comparison {
            workload: workload.into(),
            workload_params: Params::new(),
            mechanism: "cred".into(),
            variant: t.variant.into(),
            params: t.params.clone(),
            mode: Mode::Process,
            tasks: 1,
            pairs: 10,
            sample_ms: 30,
            samples_per_half: 1,
            measure: Default::default(),
            baseline_per_op: 1000.0,
            treatment_per_op: treated,
            overhead_pct: OverheadPct {
                estimate: (treated / 1000.0 - 1.0) * 100.0,
                ci_low: (treated / 1000.0 - 1.0) * 100.0 - 2.0,
                ci_high: (treated / 1000.0 - 1.0) * 100.0 + 2.0,
                p_value: 0.002,
                verdict,
            },
            hodges_lehmann_pct: f64::NAN,
            pair_data: (0..10)
                .map(|i| PairData {
                    index: i,
                    order: "AB".into(),
                    baseline_per_op: 1000.0,
                    treatment_per_op: treated,
                    beside: Vec::new(),
                })
                .collect(),
            attribution: None,
            child_cpu: None,
            sequential: None,
            unfinished: false,
            ci_alpha: None,
            own_ci_low_pct: None,
            own_ci_high_pct: None,
            beside: Vec::new(),
        }
    }

    #[test]
    fn ab_cells_are_rates_with_the_change_of_the_rate() {
        let mut r = run(1, "access-2023", "6.18", vec![]);
        r.comparisons = vec![
            comparison("access1", 2000.0, Verdict::Slower),
            comparison("access2", 1000.0, Verdict::Negligible),
        ];
        let s = ab_section(&plan(), &r, Layout::ItemRows).unwrap();
        let names: Vec<&str> = s.report.columns.iter().map(String::as_str).collect();
        assert_eq!(names, ["no override", "cred:fsuid"]);
        // 1000 ns/op = 1M ops/s; 2000 ns/op = 500k ops/s, i.e. -50%.
        let base = cell(&s, 0, 0).unwrap();
        assert!((base.value - 1e6).abs() < 1e-6);
        let treated = cell(&s, 1, 0).unwrap();
        assert!((treated.value - 5e5).abs() < 1e-6);
        let (e, lo, hi) = treated.pct();
        assert!((e + 50.0).abs() < 1e-9, "{e}");
        assert!(lo < e && e < hi, "{lo} {e} {hi}");
        let text = plain(&s);
        assert!(text.contains("access1 [ops/s]"), "{text}");
        assert!(text.contains("500000 (-50.00% ["), "{text}");
        assert!(text.contains(")*"), "{text}");
        assert!(text.contains("1000000 (+0.00% [-2.0, +2.0])="), "{text}");
    }

    #[test]
    fn ab_values_give_the_printed_percent() {
        // Skewed pairs: the mean of the treated arm is not the baseline
        // times the paired ratio, the printed values must be.
        let mut c = comparison("access1", 2000.0, Verdict::Slower);
        for (i, p) in c.pair_data.iter_mut().enumerate() {
            p.baseline_per_op = 1000.0 + i as f64 * 10.0;
            p.treatment_per_op = 1300.0 + (i * i) as f64 * 40.0;
        }
        c.overhead_pct.estimate = 37.5;
        let mut r = run(1, "access-2023", "6.18", vec![]);
        r.comparisons = vec![c];
        let s = ab_section(&plan(), &r, Layout::ItemRows).unwrap();
        let base = cell(&s, 0, 0).unwrap().value;
        // The median of the baseline halves: (1040 + 1050) / 2 ns/op.
        assert!((base - 1e9 / 1045.0).abs() < 1e-6, "{base}");
        let treated = cell(&s, 1, 0).unwrap();
        let (e, ..) = treated.pct();
        assert!(((treated.value / base - 1.0) * 100.0 - e).abs() < 1e-9);
        let text = plain(&s);
        assert!(text.contains("956938 "), "{text}");
        assert!(text.contains("695955 (-27.27% ["), "{text}");
    }

    #[test]
    fn no_comparison_no_ab_section() {
        assert!(ab_section(&plan(), &run(1, "x", "6.18", vec![]), Layout::ItemRows).is_none());
    }

    #[test]
    fn the_percent_is_the_change_of_the_value_shown() {
        let t = (10.0, 5.0, 20.0);
        assert_eq!(styled_pct(Metric::NsPerOp, PctStyle::Change, t), t);
        // A rate: +100% time is -50% ops/s.
        let (e, lo, hi) = styled_pct(Metric::OpsPerSec, PctStyle::Change, (100.0, 0.0, 300.0));
        assert!((e + 50.0).abs() < 1e-9 && (lo + 75.0).abs() < 1e-9 && hi.abs() < 1e-9);
    }

    /// Issue 44: audit-2017 printed "677.1 512.1 (-24.37%)*" for a row
    /// audit made slower: the value came from the sign-flipped percent.
    /// A slower row and a faster row now read the same way in value and
    /// sign, and the suite's note says so.
    #[test]
    fn audit_2017_rows_agree_in_value_and_sign_slower_or_faster() {
        let plan = (super::super::audit_2017::SUITE.plan)(&super::super::PlanCtx {
            quick: true,
            cpus: 1,
        });
        let mut r = run(1, "audit-2017", "6.18", vec![]);
        let mut slower = comparison("mutex_yield", 1200.0, Verdict::Slower);
        let mut faster = comparison("mutex_yield", 800.0, Verdict::Faster);
        for (c, spec) in [
            (&mut slower, "audit:enabled"),
            (&mut faster, "audit:unrelated-rule"),
        ] {
            let t = Treatment::parse(spec).unwrap();
            c.mechanism = t.mechanism.name().into();
            c.variant = t.variant.into();
            c.params = t.params.clone();
            c.workload_params = plan.ab_items[0].full_params();
            c.mode = plan.ab_items[0].mode;
        }
        r.comparisons = vec![slower, faster];
        let s = ab_section(&plan, &r, Layout::ItemRows).expect("the A/B table");
        let text = plain(&s);
        assert!(text.contains(" 1200 (+20.00%)*"), "{text}");
        assert!(text.contains(" 800.0 (-20.00%)*"), "{text}");
        let notes = plan.notes.join(" ");
        assert!(!notes.contains("negative = slower"), "{notes}");
        assert!(notes.contains("+ is slower"), "{notes}");
    }

    #[test]
    fn runs_against_a_baseline_get_unpaired_verdicts() {
        let noisy = |c: f64| -> Vec<f64> {
            (0..10)
                .map(|i| c * (1.0 + 0.002 * ((i * 7 % 11) as f64 - 5.0)))
                .collect()
        };
        let mut before = run(1, "before", "6.1", vec![result("access1", &noisy(1000.0))]);
        let mut after = run(2, "after", "6.2", vec![result("access1", &noisy(400.0))]);
        for r in [&mut before, &mut after] {
            r.results.push(result("access2", &noisy(1000.0)));
        }
        let s = runs_section(
            &plan(),
            &after,
            Some(&before),
            &DecisionOpts::default(),
            Layout::ItemRows,
        );
        assert_eq!(s.report.columns.len(), 2);
        assert_eq!(s.report.columns[1], "after (run 2)");
        // 2.5x the rate: +150% ops/s, significant; access2 unchanged.
        let c = cell(&s, 1, 0).unwrap();
        let (e, ..) = c.pct();
        assert!((e - 150.0).abs() < 1.0, "{e}");
        assert_eq!(c.verdict, Some(Verdict::Faster));
        let same = cell(&s, 1, 1).unwrap();
        assert_ne!(same.verdict, Some(Verdict::Faster));
        assert_ne!(same.verdict, Some(Verdict::Slower));
        // Without a baseline: one column, no %.
        let alone = runs_section(
            &plan(),
            &after,
            None,
            &DecisionOpts::default(),
            Layout::ItemRows,
        );
        assert_eq!(alone.report.columns.len(), 1);
        assert!(
            alone
                .report
                .rows
                .iter()
                .all(|r| r.cells[0].as_ref().is_none_or(|c| c.change_pct.is_none()))
        );
    }

    #[test]
    fn the_few_samples_warning() {
        let mut a = run(
            1,
            "a",
            "6.18",
            vec![result("access1", &[1000.0, 1001.0, 999.0])],
        );
        let b = run(
            2,
            "b",
            "6.18",
            vec![result("access1", &[500.0, 501.0, 499.0])],
        );
        let s = runs_section(
            &plan(),
            &b,
            Some(&a),
            &DecisionOpts::default(),
            Layout::ItemRows,
        );
        assert!(
            s.report.warnings[0].contains("no cell can be significant"),
            "{:?}",
            s.report.warnings
        );
        a.results[0] = result("access1", &[1000.0; 10]);
        let b = run(2, "b", "6.18", vec![result("access1", &[500.0; 10])]);
        let s = runs_section(
            &plan(),
            &b,
            Some(&a),
            &DecisionOpts::default(),
            Layout::ItemRows,
        );
        assert!(s.report.warnings.is_empty(), "{:?}", s.report.warnings);
    }
}
