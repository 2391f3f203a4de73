//! The A/B loop: randomised interleaved pairs, measured through a
//! [`Measurer`], stored, then decided together. A table of sequential
//! comparisons runs in rounds (one pair of each running comparison per
//! round, [`crate::stats::sequential::rounds`]); a fixed one comparison
//! after comparison.
//!
//! For each pair a coin decides whether the baseline or the treatment runs
//! first (AB or BA); each half starts fresh tasks on the same CPUs (so
//! fork-time state such as an audit context is right), discards a warmup
//! slice and keeps `samples_per_half` slices of the same length in both
//! halves. A half's figure is the median ns/op of its slices. Per pair
//! r = ln(treatment / baseline); the statistics (median of r, bootstrap
//! interval over pairs, Wilcoxon signed-rank) live in
//! [`crate::stats::paired`], the verdicts of a whole table in
//! [`crate::stats::decision`]. Running A and B in alternation is what turns
//! slow machine drift into noise instead of a false difference.

use anyhow::{Context, Result};

use super::design::{Case, Design, order_label, pair_order, pair_orders};
use super::measurer::Measurer;
use super::progress::Progress;
use crate::mechanisms::Arm;
use crate::model::{
    Attribution, ChildCpu, Comparison, MetricChange, PairData, PairMetric, SequentialStop,
};
use crate::profile::attribute::{AttributeOpts, HalfProfile, ProfiledPair, attribute};
use crate::profile::{ProfileOpts, profile_half};
use crate::runner::{Tick, Unobserved};
use crate::stats::bootstrap::Rng;
use crate::stats::decision::{DecisionOpts, Samples, Tested, decide_table};
use crate::stats::paired::{PairedOpts, check_pairs, overhead_by_ranks};
use crate::stats::sequential::{self, StopReason, rounds, settled};
use crate::store::Store;

/// Measures one case as randomised pairs; `on_tick` is called after every
/// slice. The first failing half stops the comparison with an error naming
/// the case, the pair and the arm. With a stopping rule
/// ([`Design::stop`]) it looks after every pair and stops once settled, at
/// `design.pairs` at the latest; the comparison's interval and p-value are
/// then the anytime-valid ones of [`crate::stats::sequential`].
pub fn compare(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<Comparison> {
    measure(case, design, measurer, rng, on_tick).map_err(|s| s.error)
}

/// What a comparison that stopped before its end (Ctrl-C, a failing half)
/// leaves: the comparison of the pairs it finished, marked unfinished
/// (None before its first pair, or when they give no figure), and why it
/// stopped.
pub struct Stopped {
    pub partial: Option<Box<Comparison>>,
    pub error: anyhow::Error,
}

/// [`compare`], keeping the finished pairs of a comparison that stops.
pub fn measure(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    on_tick: &mut dyn FnMut(Tick),
) -> std::result::Result<Comparison, Stopped> {
    let mut pair_data = Vec::with_capacity(design.pairs as usize);
    let mut cpu: [Vec<ChildCpu>; 2] = Default::default();
    let mut ratios = Vec::with_capacity(design.pairs as usize);
    let mut stopped = None;
    for i in 0..design.pairs {
        let pair = match measure_pair(case, design, measurer, rng, on_tick, i) {
            Ok(pair) => pair,
            Err(error) => {
                let stop = design.stop.as_ref().map(|_| StopReason::Interrupted);
                return Err(Stopped {
                    partial: partial(case, design, &pair_data, &cpu, stop),
                    error,
                });
            }
        };
        let (data, [b, t]) = pair;
        cpu[0].extend(b);
        cpu[1].extend(t);
        let ratio = data.log_ratio();
        pair_data.push(data);
        if let Some(rule) = &design.stop {
            ratios.push(ratio);
            stopped = settled(&ratios, rule);
            if stopped.is_some() {
                break;
            }
        }
    }
    finish(case, design, measurer, on_tick, &pair_data, &cpu, stopped).map_err(|error| Stopped {
        partial: None,
        error,
    })
}

/// Pair `i` of a case: a coin orders its halves; each half measured in
/// fresh tasks. Its figures, and the child CPU time of its baseline and
/// treatment halves. A failing half fails the pair, naming the case, the
/// pair and the arm.
fn measure_pair(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    on_tick: &mut dyn FnMut(Tick),
    i: u32,
) -> Result<(PairData, [Vec<ChildCpu>; 2])> {
    let order = pair_order(rng);
    let mut ns = [0.0f64; 2];
    let mut cpu: [Vec<ChildCpu>; 2] = Default::default();
    let mut metrics: [Vec<crate::clients::ClientMetric>; 2] = Default::default();
    for arm in order {
        let half = measurer
            .half(case, design, arm, &mut Unobserved, on_tick)
            .with_context(|| {
                format!(
                    "{} on {}, pair {} of {}, {arm:?} half",
                    case.treatment,
                    case.workload.name,
                    i + 1,
                    design.pairs
                )
            })?;
        let side = (arm == Arm::Treatment) as usize;
        ns[side] = half.ns_per_op;
        cpu[side].extend(half.child_cpu);
        metrics[side] = half.client_metrics;
    }
    let mut figures = pair_metrics(&metrics[0], &metrics[1]);
    if case.workload.name == crate::workloads::service::NAME {
        figures.extend(server_cpu_metrics(&cpu[0], &cpu[1]));
    }
    let data = PairData {
        index: i,
        order: order_label(order),
        baseline_ns_per_op: ns[0],
        treatment_ns_per_op: ns[1],
        metrics: figures,
    };
    Ok((data, cpu))
}

/// The server's CPU time per client run of a pair's halves (a service's
/// process group: user, system and their sum, in ms), as figures of the
/// pair, so that they get the paired change and interval the client's
/// figures get: the target `predict` is checked against.
fn server_cpu_metrics(baseline: &[ChildCpu], treatment: &[ChildCpu]) -> Vec<PairMetric> {
    let median_ms = |halves: &[ChildCpu], f: fn(&ChildCpu) -> f64| {
        let v: Vec<f64> = halves.iter().map(|c| f(c) / 1e6).collect();
        crate::stats::median(&v)
    };
    type Of = fn(&ChildCpu) -> f64;
    let figures: [(&str, Of); 3] = [
        ("server.cpu_ms_per_run", ChildCpu::ns_per_op),
        ("server.user_ms_per_run", |c| c.user_ns_per_op),
        ("server.system_ms_per_run", |c| c.sys_ns_per_op),
    ];
    figures
        .iter()
        .filter_map(|&(name, f)| {
            Some(PairMetric {
                name: name.to_string(),
                higher_is_better: false,
                baseline: median_ms(baseline, f)?,
                treatment: median_ms(treatment, f)?,
            })
        })
        .collect()
}

/// A pair's client figures: those both halves reported, by name.
fn pair_metrics(
    baseline: &[crate::clients::ClientMetric],
    treatment: &[crate::clients::ClientMetric],
) -> Vec<PairMetric> {
    baseline
        .iter()
        .filter_map(|b| {
            let t = treatment.iter().find(|t| t.name == b.name)?;
            Some(PairMetric {
                name: b.name.clone(),
                higher_is_better: b.higher_is_better,
                baseline: b.value,
                treatment: t.value,
            })
        })
        .collect()
}

/// Each client figure's change over the pairs that reported it, with the
/// interval the run time's overhead gets (the sequence's when sequential,
/// else the fixed design's), at the comparison's own level.
fn metric_changes(design: &Design, pair_data: &[PairData]) -> Vec<MetricChange> {
    let mut names: Vec<(&str, bool)> = Vec::new();
    for m in pair_data.iter().flat_map(|p| &p.metrics) {
        if !names.iter().any(|(n, _)| *n == m.name) {
            names.push((&m.name, m.higher_is_better));
        }
    }
    names
        .into_iter()
        .filter_map(|(name, higher_is_better)| {
            let (b, t): (Vec<f64>, Vec<f64>) = pair_data
                .iter()
                .flat_map(|p| &p.metrics)
                .filter(|m| m.name == name && m.baseline > 0.0 && m.treatment > 0.0)
                .map(|m| (m.baseline, m.treatment))
                .unzip();
            let r: Vec<f64> = b.iter().zip(&t).map(|(b, t)| (t / b).ln()).collect();
            let change_pct = match &design.stop {
                Some(rule) => sequential::overhead_pct(&r, rule.decision.alpha, rule.decision.test),
                // The fixed design: the run time's method (the signed-rank
                // test inverted, about the Hodges-Lehmann estimate).
                None => overhead_by_ranks(&r, PairedOpts::default().alpha),
            }?;
            Some(MetricChange::new(
                name.to_string(),
                higher_is_better,
                crate::stats::median(&b)?,
                crate::stats::median(&t)?,
                crate::stats::paired::OverheadPct {
                    verdict: crate::stats::paired::Verdict::NoChange,
                    ..change_pct
                },
                b.len() as u32,
            ))
        })
        .collect()
}

/// The comparison of the pairs a stopped comparison finished, marked
/// unfinished (None before its first pair, or when they give no figure).
fn partial(
    case: &Case,
    design: &Design,
    pair_data: &[PairData],
    cpu: &[Vec<ChildCpu>; 2],
    stop: Option<StopReason>,
) -> Option<Box<Comparison>> {
    summarise(case, design, pair_data, cpu, stop, None)
        .ok()
        .map(|mut c| {
            c.unfinished = true;
            Box::new(c)
        })
}

/// A comparison whose timed pairs are done: its profiled pairs when asked
/// for, then its summary.
fn finish(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    on_tick: &mut dyn FnMut(Tick),
    pair_data: &[PairData],
    cpu: &[Vec<ChildCpu>; 2],
    stopped: Option<StopReason>,
) -> Result<Comparison> {
    let attribution = design.profile.map(|p| {
        // A workload whose processes are sampled (a server) is attributed
        // their CPU time per operation, not the task's wall time.
        let (baseline, treatment) = match case.workload.observed {
            Some(_) => (
                cpu_ns_per_op(&cpu[0]).unwrap_or(f64::NAN),
                cpu_ns_per_op(&cpu[1]).unwrap_or(f64::NAN),
            ),
            None => (
                arm_median(pair_data, |p| p.baseline_ns_per_op),
                arm_median(pair_data, |p| p.treatment_ns_per_op),
            ),
        };
        profile_pairs(case, design, &p, measurer, on_tick, baseline, treatment)
    });
    summarise(case, design, pair_data, cpu, stopped, attribution)
}

/// A comparison of the pairs measured: its overhead (the anytime-valid
/// sequence's with a stopping rule, else the fixed design's), the arms'
/// medians, child CPU time and how a sequential one stopped.
pub(super) fn summarise(
    case: &Case,
    design: &Design,
    pair_data: &[PairData],
    cpu: &[Vec<ChildCpu>; 2],
    stopped: Option<StopReason>,
    attribution: Option<Attribution>,
) -> Result<Comparison> {
    let baseline: Vec<f64> = pair_data.iter().map(|p| p.baseline_ns_per_op).collect();
    let treatment: Vec<f64> = pair_data.iter().map(|p| p.treatment_ns_per_op).collect();
    let overhead_pct = match &design.stop {
        Some(rule) => sequential::overhead_pct(
            &pair_log_ratios(pair_data),
            rule.decision.alpha,
            rule.decision.test,
        )
        .context("computing the overhead: no pairs")?,
        // The fixed design: the Hodges-Lehmann estimate with the interval
        // that inverts its Wilcoxon test, at the comparison's own level.
        None => {
            check_pairs(&baseline, &treatment).context("computing the overhead")?;
            overhead_by_ranks(&pair_log_ratios(pair_data), PairedOpts::default().alpha)
                .context("computing the overhead: a log ratio is not finite")?
        }
    };
    let t = &case.treatment;
    Ok(Comparison {
        workload: case.workload.name.to_string(),
        workload_params: case.workload_params.clone(),
        mechanism: t.mechanism.name().to_string(),
        variant: t.variant.to_string(),
        params: t.params.clone(),
        mode: design.mode,
        tasks: case.tasks as u32,
        pairs: pair_data.len() as u32,
        sample_ms: design.sample_ms,
        samples_per_half: design.samples_per_half,
        baseline_ns_per_op: arm_median(pair_data, |p| p.baseline_ns_per_op),
        treatment_ns_per_op: arm_median(pair_data, |p| p.treatment_ns_per_op),
        overhead_pct,
        hodges_lehmann_pct: crate::stats::paired::hodges_lehmann_pct(&baseline, &treatment),
        pair_data: pair_data.to_vec(),
        attribution,
        child_cpu: median_child_cpu(&cpu[0])
            .zip(median_child_cpu(&cpu[1]))
            .map(|(b, t)| [b, t]),
        client_metrics: metric_changes(design, pair_data),
        sequential: design.stop.as_ref().map(|rule| SequentialStop {
            max_pairs: design.pairs,
            family: rule.family,
            stopped: stopped.unwrap_or(StopReason::MaxPairs),
        }),
        unfinished: false,
        ci_alpha: None,
        own_ci_low_pct: None,
        own_ci_high_pct: None,
    })
}

/// Each figure's median over the halves of one arm (runs: their sum).
fn median_child_cpu(halves: &[ChildCpu]) -> Option<ChildCpu> {
    let of =
        |f: fn(&ChildCpu) -> f64| crate::stats::median(&halves.iter().map(f).collect::<Vec<_>>());
    Some(ChildCpu {
        runs: halves.iter().map(|c| c.runs).sum(),
        user_ns_per_op: of(|c| c.user_ns_per_op)?,
        sys_ns_per_op: of(|c| c.sys_ns_per_op)?,
    })
}

/// Median CPU time per operation (user + system) of an arm's halves.
fn cpu_ns_per_op(halves: &[ChildCpu]) -> Option<f64> {
    let v: Vec<f64> = halves.iter().map(ChildCpu::ns_per_op).collect();
    crate::stats::median(&v)
}

/// Seeds the profiled pairs' coin apart from the timed pairs', so that
/// `--profile` leaves the timed pairs' order (and estimate) as without it.
const PROFILE_SEED: u64 = 0x7072_6f66_696c_6564;

/// The profiled pairs of a comparison, after its timed pairs: the same
/// randomised AB/BA design, fresh tasks per half, each sampled. Sampling
/// that is refused or fails ends the profile with a note; it never fails
/// the comparison, whose figures come from the timed pairs.
fn profile_pairs(
    case: &Case,
    design: &Design,
    opts: &ProfileOpts,
    measurer: &mut dyn Measurer,
    on_tick: &mut dyn FnMut(Tick),
    timed_baseline_ns_per_op: f64,
    timed_treatment_ns_per_op: f64,
) -> Attribution {
    let attribute_opts = AttributeOpts {
        hz: opts.hz,
        timed_baseline_ns_per_op,
        timed_treatment_ns_per_op,
        top_symbols: crate::profile::TOP_SYMBOLS,
    };
    let (symbols, mut notes) = crate::profile::readiness(opts.hz);
    if case.workload.observed.is_some() && symbols.is_some() {
        notes.push(
            "the server's processes were sampled (every thread of its process group, on every \
             CPU, and what they forked), not secperf's task: time per operation is the server's \
             CPU time per client run, as server.cpu_ms_per_run"
                .to_string(),
        );
    }
    let mut pairs = Vec::new();
    if let Some(symbols) = &symbols {
        let mut rng = Rng::new(design.seed ^ PROFILE_SEED);
        'pairs: for (i, order) in pair_orders(opts.pairs, &mut rng).into_iter().enumerate() {
            let mut halves: [HalfProfile; 2] = Default::default();
            for arm in order {
                let half = profile_half(symbols, opts.hz, design.sample_ms, |observer| {
                    let h = measurer.half(case, design, arm, observer, on_tick)?;
                    match case.workload.observed {
                        Some(_) => h
                            .child_cpu
                            .map(|c| c.ns_per_op())
                            .context("the sampled processes' CPU time was not read"),
                        None => Ok(h.ns_per_op),
                    }
                });
                match half {
                    Ok(half) => halves[(arm == Arm::Treatment) as usize] = half,
                    Err(e) => {
                        notes.push(format!(
                            "profiled pair {} of {}, {arm:?} half failed: {e:#}",
                            i + 1,
                            opts.pairs
                        ));
                        break 'pairs;
                    }
                }
            }
            let [baseline, treatment] = halves;
            pairs.push(ProfiledPair {
                baseline,
                treatment,
            });
        }
    }
    let mut attribution = attribute(&pairs, &attribute_opts);
    if pairs.is_empty() {
        attribution
            .notes
            .retain(|n| !n.contains("no profiled pair"));
    }
    notes.append(&mut attribution.notes);
    attribution.notes = notes;
    attribution
}

/// Measures a table of A/B comparisons (each with its own design), then
/// applies the table's final verdicts (Holm or e-BH, noise band,
/// equivalence) to all of them and stores those. Sequential comparisons
/// run in rounds ([`measure_rounds`]); fixed ones one after the other,
/// each stored as it finishes (a late failure loses nothing). `role` adds
/// to a comparison's progress line (" (negative control)").
#[allow(clippy::too_many_arguments)]
pub fn measure_comparisons<'a>(
    store: &mut Store,
    run_id: i64,
    cases: impl IntoIterator<Item = (&'a Case, Design, &'a str)>,
    measurer: &mut dyn Measurer,
    seed: u64,
    progress: &Progress,
    decision: &DecisionOpts,
) -> Result<Vec<Comparison>> {
    let cases: Vec<(&Case, Design, &str)> = cases.into_iter().collect();
    let mut rng = Rng::new(seed);
    if !cases.is_empty() && cases.iter().all(|(_, d, _)| d.stop.is_some()) {
        return measure_rounds(
            store, run_id, &cases, measurer, &mut rng, progress, decision,
        );
    }
    let mut comparisons = Vec::new();
    let mut ids = Vec::new();
    let mut stopped = None;
    for (case, design, role) in cases {
        let what = describe_case(case) + role;
        progress.start(&what);
        match measure(case, &design, measurer, &mut rng, &mut |t| progress.tick(t)) {
            Ok(c) => {
                ids.push(store.add_comparison(run_id, &c)?);
                progress.skip(unmeasured_slices(&design, &c));
                progress.line(&format!("{what}: {}", describe_measured(&c)));
                comparisons.push(c);
            }
            Err(Stopped { partial, error }) => {
                if let Some(c) = partial {
                    ids.push(store.add_comparison(run_id, &c)?);
                    comparisons.push(*c);
                }
                stopped = Some(error);
                break;
            }
        }
    }
    // Decided together, also when the run stopped: what was measured is
    // stored with the verdicts of the comparisons it holds.
    store_decided(store, &mut comparisons, &ids, decision)?;
    match stopped {
        Some(error) => Err(error),
        None => Ok(comparisons),
    }
}

/// A case's name in progress lines.
fn describe_case(case: &Case) -> String {
    crate::report::label::case(
        &case.treatment.to_string(),
        &crate::report::label::workload(case.workload.name, &case.workload_params),
        case.tasks as u32,
    )
}

/// One comparison of a table measured in rounds.
#[derive(Default)]
struct Lane {
    pair_data: Vec<PairData>,
    cpu: [Vec<ChildCpu>; 2],
    ratios: Vec<f64>,
    /// A stop never undone ([`rounds::Lane::hard`]).
    hard: Option<StopReason>,
    /// Its state after the last round: None while it needs pairs.
    state: Option<StopReason>,
    /// Its unneeded slices were taken off the progress bar.
    skipped: bool,
}

/// Measures a table of sequential comparisons in rounds: each round
/// measures one pair of every comparison that needs one, in the table's
/// order, then decides together which of them stop
/// ([`crate::stats::sequential::rounds`]: under the FDR the clear effects
/// of the whole table reach the e-BH threshold together, instead of the
/// first ones paying for the rest; one paused as a discovery resumes
/// should the table's discoveries fall short). Once every comparison has
/// stopped, each is profiled (when asked for) and all are stored in the
/// table's order; at the first failure, what was measured is stored (the
/// comparisons still running marked unfinished). Then decided together.
#[allow(clippy::too_many_arguments)]
fn measure_rounds(
    store: &mut Store,
    run_id: i64,
    cases: &[(&Case, Design, &str)],
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    progress: &Progress,
    decision: &DecisionOpts,
) -> Result<Vec<Comparison>> {
    let mut lanes: Vec<Lane> = cases.iter().map(|_| Lane::default()).collect();
    let mut joint = rounds::Rounds::new(cases.len());
    let mut failure = None;
    let mut round = 0u32;
    let begun = std::time::Instant::now();
    'rounds: while lanes.iter().any(|l| l.state.is_none()) {
        round += 1;
        let running = lanes.iter().filter(|l| l.state.is_none()).count();
        progress.line(&format!(
            "round {round}: a pair of each of {running} comparisons still running"
        ));
        for ((case, design, role), lane) in cases.iter().zip(lanes.iter_mut()) {
            if lane.state.is_some() {
                continue;
            }
            progress.now(&(describe_case(case) + role));
            let i = lane.pair_data.len() as u32;
            match measure_pair(case, design, measurer, rng, &mut |t| progress.tick(t), i) {
                Ok((data, [b, t])) => {
                    lane.cpu[0].extend(b);
                    lane.cpu[1].extend(t);
                    lane.ratios.push(data.log_ratio());
                    lane.pair_data.push(data);
                }
                Err(error) => {
                    failure = Some(error);
                    break 'rounds;
                }
            }
        }
        let views: Vec<rounds::Lane> = cases
            .iter()
            .zip(&lanes)
            .map(|((_, design, _), lane)| rounds::Lane {
                r: &lane.ratios,
                rule: design.stop.as_ref().expect("rounds run sequential designs"),
                hard: lane.hard,
            })
            .collect();
        let states = joint.settle(&views);
        for (((case, design, role), lane), state) in cases.iter().zip(lanes.iter_mut()).zip(states)
        {
            let before = lane.state;
            lane.state = state;
            if state.is_some() && !rounds::is_discovery(state) {
                lane.hard = state;
            }
            let what = describe_case(case) + role;
            if before.is_none() && state.is_some() {
                let c = summarise(case, design, &lane.pair_data, &lane.cpu, state, None)?;
                if !lane.skipped {
                    progress.skip(unmeasured_slices(design, &c));
                    lane.skipped = true;
                }
                progress.line(&format!("{what}: {}", describe_measured(&c)));
            } else if before.is_some() && state.is_none() {
                progress.line(&format!(
                    "{what}: resumed (the table has fewer discoveries than its stop counted on)"
                ));
            } else if state.is_none()
                && lane.pair_data.len() >= 2
                && begun.elapsed() > std::time::Duration::from_secs(60)
            {
                // A long run says what each running comparison shows so
                // far (before the table's correction).
                let c = summarise(case, design, &lane.pair_data, &lane.cpu, None, None)?;
                let o = &c.overhead_pct;
                progress.line(&format!(
                    "{what}: so far {} after {} pairs, running",
                    crate::report::number::so_far(o.estimate, o.ci_low, o.ci_high),
                    lane.pair_data.len()
                ));
            }
        }
    }
    // Profiled, then stored in the table's order; after a failure the
    // running comparisons too, marked unfinished.
    let mut comparisons = Vec::new();
    let mut ids = Vec::new();
    for ((case, design, role), lane) in cases.iter().zip(lanes) {
        let c = match (lane.state, &failure) {
            (Some(stop), None) => {
                progress.now(&(describe_case(case) + role));
                match finish(
                    case,
                    design,
                    measurer,
                    &mut |t| progress.tick(t),
                    &lane.pair_data,
                    &lane.cpu,
                    Some(stop),
                ) {
                    Ok(c) => Some(c),
                    Err(error) => {
                        failure = Some(error);
                        None
                    }
                }
            }
            (state, _) => partial(
                case,
                design,
                &lane.pair_data,
                &lane.cpu,
                Some(state.unwrap_or(StopReason::Interrupted)),
            )
            .map(|c| *c),
        };
        if let Some(c) = c {
            ids.push(store.add_comparison(run_id, &c)?);
            comparisons.push(c);
        }
    }
    store_decided(store, &mut comparisons, &ids, decision)?;
    match failure {
        Some(error) => Err(error),
        None => Ok(comparisons),
    }
}

/// Slices of the budget a sequential comparison did not need (for the
/// progress bar).
pub fn unmeasured_slices(design: &Design, c: &Comparison) -> u64 {
    2 * design.pairs.saturating_sub(c.pairs) as u64 * design.slices_per_half()
}

/// A finished comparison's progress line: its estimate and interval
/// before the table's correction (so no verdict mark yet), and where a
/// sequential one stopped.
pub fn describe_measured(c: &Comparison) -> String {
    let o = &c.overhead_pct;
    let figure = format!("{:+.1}% [{:.1}, {:.1}]", o.estimate, o.ci_low, o.ci_high);
    match &c.sequential {
        Some(s) => format!(
            "{figure} ({} of at most {} pairs, {})",
            c.pairs,
            s.max_pairs,
            s.stopped.describe()
        ),
        None => format!("{figure} ({} pairs)", c.pairs),
    }
}

/// Decides `comparisons` together ([`decide_all`]) and stores each one's
/// corrected p-value and verdict under its id in `ids`.
pub(super) fn store_decided(
    store: &mut Store,
    comparisons: &mut [Comparison],
    ids: &[i64],
    decision: &DecisionOpts,
) -> Result<()> {
    decide_all(comparisons, decision);
    for (c, id) in comparisons.iter().zip(ids) {
        store.set_comparison_decision(*id, c)?;
    }
    Ok(())
}

/// Final verdicts of a report: corrected p-values across its comparisons
/// (stored as `p_value`), the noise band, and the equivalence test on each
/// comparison's log ratios for `negligible`, decided on each comparison's
/// interval at the table's level: a sequential comparison's confidence
/// sequence, or the fixed design's inverted signed-rank test
/// ([`crate::stats::decision::paired_interval_at`]). That interval is the
/// one shown; when it differs from the comparison's own (at its own
/// level: the decision's alpha for a sequential one, 0.05 for the fixed
/// design), the own one is kept in `own_ci_*_pct` and the level shown in
/// `ci_alpha`.
pub fn decide_all(comparisons: &mut [Comparison], opts: &DecisionOpts) {
    use crate::stats::decision::{IntervalFn, paired_interval_at};
    let ratios: Vec<Vec<f64>> = comparisons.iter().map(log_ratios).collect();
    let test = opts.test;
    let intervals: Vec<IntervalFn> = comparisons
        .iter()
        .zip(&ratios)
        .map(|(c, r)| match c.sequential {
            Some(_) => Box::new(move |a: f64| {
                sequential::overhead_pct(r, a, test).map(|o| (o.ci_low, o.ci_high))
            }) as IntervalFn,
            None => paired_interval_at(r),
        })
        .collect();
    let rows: Vec<Tested> = comparisons
        .iter()
        .zip(&ratios)
        .zip(&intervals)
        .map(|((c, r), at)| Tested {
            // The fixed design's p from the very ratios its interval
            // inverts (the same as the one measured).
            p_value: match c.sequential {
                Some(_) => c.overhead_pct.p_value,
                None => crate::stats::wilcoxon::wilcoxon_signed_rank(r),
            },
            ci_low: c.overhead_pct.ci_low,
            ci_high: c.overhead_pct.ci_high,
            samples: if c.sequential.is_some() {
                sequential::row_samples(r, opts)
            } else {
                Samples::Paired(r)
            },
            interval_at: Some(at.as_ref()),
        })
        .collect();
    let decisions = decide_table(&rows, opts);
    for (c, d) in comparisons.iter_mut().zip(decisions) {
        c.overhead_pct.p_value = d.p_value;
        c.overhead_pct.verdict = d.verdict;
        let own_alpha = match c.sequential {
            Some(_) => opts.alpha,
            None => PairedOpts::default().alpha,
        };
        let own = (
            c.own_ci_low_pct.unwrap_or(c.overhead_pct.ci_low),
            c.own_ci_high_pct.unwrap_or(c.overhead_pct.ci_high),
        );
        if d.alpha != own_alpha || (d.ci_low, d.ci_high) != own {
            // Decided again (a replay): the own interval stays the first.
            c.own_ci_low_pct = Some(own.0);
            c.own_ci_high_pct = Some(own.1);
            c.ci_alpha = Some(d.alpha);
            c.overhead_pct.ci_low = d.ci_low;
            c.overhead_pct.ci_high = d.ci_high;
        }
    }
}

/// The per-pair ln(treatment / baseline) of a comparison.
pub fn log_ratios(c: &Comparison) -> Vec<f64> {
    pair_log_ratios(&c.pair_data)
}

/// The per-pair ln(treatment / baseline) of measured pairs.
pub(super) fn pair_log_ratios(pairs: &[PairData]) -> Vec<f64> {
    pairs.iter().map(PairData::log_ratio).collect()
}

/// The median over pairs of one arm's ns/op (NaN without pairs).
pub(super) fn arm_median(pairs: &[PairData], arm: fn(&PairData) -> f64) -> f64 {
    crate::stats::median(&pairs.iter().map(arm).collect::<Vec<_>>()).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::super::measurer::testing::Scripted;
    use super::*;
    use crate::model::{Mode, Params};

    fn comparison(pairs: &[(f64, f64)], p_value: f64, ci: (f64, f64)) -> Comparison {
        use crate::stats::paired::{OverheadPct, Verdict};
        Comparison {
            workload: "getppid".into(),
            workload_params: Params::new(),
            mechanism: "none".into(),
            variant: "control".into(),
            params: Params::new(),
            mode: Mode::Process,
            tasks: 1,
            pairs: pairs.len() as u32,
            sample_ms: 10,
            samples_per_half: 1,
            baseline_ns_per_op: 1.0,
            treatment_ns_per_op: 1.0,
            overhead_pct: OverheadPct {
                estimate: 0.0,
                ci_low: ci.0,
                ci_high: ci.1,
                p_value,
                verdict: Verdict::NoChange,
            },
            hodges_lehmann_pct: f64::NAN,
            pair_data: pairs
                .iter()
                .enumerate()
                .map(|(i, &(b, t))| PairData {
                    index: i as u32,
                    order: "AB".into(),
                    baseline_ns_per_op: b,
                    treatment_ns_per_op: t,
                    metrics: Vec::new(),
                })
                .collect(),
            attribution: None,
            child_cpu: None,
            sequential: None,
            unfinished: false,
            ci_alpha: None,
            own_ci_low_pct: None,
            own_ci_high_pct: None,
            client_metrics: Vec::new(),
        }
    }

    #[test]
    fn final_verdicts_use_holm_noise_band_and_equivalence() {
        use crate::stats::decision::Verdict;
        let slow: Vec<(f64, f64)> = (0..12)
            .map(|i| (100.0, 110.0 + (i % 3) as f64 * 0.1))
            .collect();
        let same: Vec<(f64, f64)> = (0..12)
            .map(|i| (100.0, 100.0 + ((i % 5) as f64 - 2.0) * 0.05))
            .collect();
        let tiny: Vec<(f64, f64)> = (0..12)
            .map(|i| (100.0, 100.5 + (i % 3) as f64 * 0.01))
            .collect();
        let mut cs = vec![
            comparison(&slow, 0.0005, (9.9, 10.3)),
            comparison(&same, 0.9, (-0.2, 0.2)),
            comparison(&tiny, 0.0005, (0.49, 0.52)),
        ];
        decide_all(&mut cs, &DecisionOpts::default());
        // The fixed design's p is the signed-rank test of its pairs (the
        // test its interval inverts): 12 pairs all slower give 2 / 2^12,
        // and Holm multiplies the smallest by 3.
        assert!((cs[0].overhead_pct.p_value - 3.0 * 2.0 / 4096.0).abs() < 1e-12);
        assert_eq!(cs[0].overhead_pct.verdict, Verdict::Slower);
        // Inside +-1%: significant but inside the noise band, and shown to be within it.
        assert_eq!(cs[1].overhead_pct.verdict, Verdict::Negligible);
        assert_eq!(cs[2].overhead_pct.verdict, Verdict::Negligible);
        assert!(crate::report::number::overhead(&cs[2].overhead_pct).ends_with(" ="));
        // Shown: the signed-rank interval at alpha / 3, the own one kept.
        for (c, own) in cs.iter().zip([(9.9, 10.3), (-0.2, 0.2), (0.49, 0.52)]) {
            assert_eq!(c.ci_alpha, Some(0.05 / 3.0));
            assert_eq!(
                (c.own_ci_low_pct, c.own_ci_high_pct),
                (Some(own.0), Some(own.1))
            );
            let at = crate::stats::decision::paired_interval_at(&log_ratios(c))(0.05 / 3.0);
            assert_eq!(Some((c.overhead_pct.ci_low, c.overhead_pct.ci_high)), at);
        }
        assert!(cs[0].overhead_pct.ci_low > 9.9 && cs[0].overhead_pct.ci_high < 10.3);
    }

    /// A fixed comparison alone in its table, at the own level: its
    /// interval is its own (no table level to note), from the signed-rank
    /// test, with the Hodges-Lehmann estimate the pairs are summarised by.
    #[test]
    fn a_fixed_comparison_alone_shows_its_own_signed_rank_interval() {
        let design = Design::for_tests(10, 1);
        let pairs: Vec<PairData> = (0..10)
            .map(|i| PairData {
                index: i,
                order: "AB".into(),
                baseline_ns_per_op: 100.0,
                treatment_ns_per_op: 105.0 + f64::from(i % 4) * 0.3,
                metrics: Vec::new(),
            })
            .collect();
        let case = Case {
            workload: crate::workloads::find("getppid").unwrap(),
            workload_params: Params::new(),
            treatment: crate::mechanisms::Treatment::parse("none").unwrap(),
            tasks: 1,
        };
        let mut c = summarise(&case, &design, &pairs, &[vec![], vec![]], None, None).unwrap();
        let r = log_ratios(&c);
        let own = crate::stats::rank_interval::signed_rank_interval(&r, 0.05)
            .unwrap()
            .pct();
        let o = &c.overhead_pct;
        assert_eq!((o.estimate, o.ci_low, o.ci_high), own);
        assert_eq!(o.p_value, crate::stats::wilcoxon::wilcoxon_signed_rank(&r));
        decide_all(std::slice::from_mut(&mut c), &DecisionOpts::default());
        assert_eq!(c.ci_alpha, None);
        assert_eq!(
            (c.overhead_pct.ci_low, c.overhead_pct.ci_high),
            (own.1, own.2)
        );
        assert_eq!(
            c.overhead_pct.verdict,
            crate::stats::decision::Verdict::Slower
        );
    }

    #[test]
    fn orders_are_random_but_reproducible() {
        let a = pair_orders(200, &mut Rng::new(7));
        let b = pair_orders(200, &mut Rng::new(7));
        assert_eq!(a, b);
        let ab = a.iter().filter(|o| o[0] == Arm::Baseline).count();
        assert!((70..=130).contains(&ab), "{ab} of 200 pairs AB");
        assert!(a.iter().all(|o| o[0] != o[1]));
    }

    fn case(spec: &str) -> Case {
        Case {
            workload: crate::workloads::find("getppid").unwrap(),
            workload_params: Params::new(),
            treatment: crate::mechanisms::Treatment::parse(spec).unwrap(),
            tasks: 1,
        }
    }

    fn design(pairs: u32) -> Design {
        Design::for_tests(pairs, 1)
    }

    #[test]
    fn profiling_runs_after_the_timed_pairs_and_leaves_them_alone() {
        // Figures depend on the call number, so any change in the timed
        // halves' calls would change the estimate.
        let script = |_: &Case, arm: Arm, n: usize| {
            Ok(if arm == Arm::Treatment { 110.0 } else { 100.0 } + (n % 7) as f64)
        };
        let plain = compare(
            &case("none"),
            &design(12),
            &mut Scripted::new(script),
            &mut Rng::new(3),
            &mut |_| {},
        )
        .unwrap();
        let mut profiled_design = design(12);
        profiled_design.profile = Some(ProfileOpts { hz: 1000, pairs: 3 });
        let mut m = Scripted::new(script);
        let profiled = compare(
            &case("none"),
            &profiled_design,
            &mut m,
            &mut Rng::new(3),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(plain.pair_data, profiled.pair_data);
        assert_eq!(plain.overhead_pct, profiled.overhead_pct);
        assert!(plain.attribution.is_none());
        let a = profiled.attribution.expect("an attribution");
        if a.notes.iter().any(|n| n.starts_with("not profiled")) {
            eprintln!("profiling unavailable here: {:?}", a.notes);
            assert_eq!(m.calls.len(), 24);
        } else {
            // 3 profiled pairs after the 12 timed ones, both arms each.
            assert_eq!(m.calls.len(), 30);
            assert_eq!(a.pairs, 3);
        }
    }

    #[test]
    fn a_sequential_comparison_stops_once_settled_and_says_why() {
        use crate::stats::decision::Verdict;
        use crate::stats::sequential::StopRule;
        let rule = |family| StopRule {
            min_pairs: 7,
            max_pairs: 24,
            family,
            decision: DecisionOpts::default(),
            precision_pct: None,
            rank: 1,
        };
        let run = |family, effect: f64, noise: f64| {
            let mut d = design(24);
            d.stop = Some(rule(family));
            let mut m = Scripted::new(move |_, arm, n| {
                let wobble = noise * ((n * 7919 % 13) as f64 - 6.0) / 6.0;
                Ok(if arm == Arm::Treatment {
                    100.0 * (1.0 + effect)
                } else {
                    100.0
                } + wobble)
            });
            let mut c = compare(&case("none"), &d, &mut m, &mut Rng::new(9), &mut |_| {}).unwrap();
            assert_eq!(m.calls.len(), 2 * c.pairs as usize);
            decide_all(std::slice::from_mut(&mut c), &DecisionOpts::default());
            c
        };
        // +10%: settled at the first pair count that can decide.
        let c = run(1, 0.10, 0.5);
        let s = c.sequential.unwrap();
        assert_eq!(
            (c.pairs, s.max_pairs, s.stopped),
            (7, 24, StopReason::Slower)
        );
        assert_eq!(c.overhead_pct.verdict, Verdict::Slower);
        assert!(c.overhead_pct.ci_low > 1.0, "{:?}", c.overhead_pct);
        // In a table of 29 it needs 12.
        assert_eq!(run(29, 0.10, 0.5).pairs, 12);
        // Identical arms, 0.5% wobble: negligible at once.
        let c = run(1, 0.0, 0.5);
        assert_eq!(c.sequential.unwrap().stopped, StopReason::Negligible);
        assert_eq!(c.overhead_pct.verdict, Verdict::Negligible);
        // Identical arms, 5% wobble: no verdict; the budget, or earlier
        // once the budget could not settle it.
        let c = run(1, 0.0, 5.0);
        let stopped = c.sequential.unwrap().stopped;
        assert!(
            matches!(stopped, StopReason::MaxPairs | StopReason::Futile),
            "{stopped:?}"
        );
        assert_eq!(c.overhead_pct.verdict, Verdict::NoChange);
        assert!(describe_measured(&c).contains(&format!("{} of at most 24 pairs", c.pairs)));
    }

    #[test]
    fn halves_follow_the_seeded_order_and_land_in_their_arm() {
        // Baseline halves take 100 ns/op, treatment halves 110.
        let mut m =
            Scripted::new(|_, arm, _| Ok(if arm == Arm::Treatment { 110.0 } else { 100.0 }));
        let mut ticks = 0;
        let c = compare(
            &case("none"),
            &design(12),
            &mut m,
            &mut Rng::new(5),
            &mut |_| ticks += 1,
        )
        .unwrap();
        let expected = pair_orders(12, &mut Rng::new(5));
        let arms: Vec<Arm> = m.calls.iter().map(|(_, a)| *a).collect();
        assert_eq!(arms, expected.concat());
        assert_eq!(ticks, 24 * 3, "every slice of every half ticks");
        for (p, order) in c.pair_data.iter().zip(&expected) {
            assert_eq!(
                p.order,
                if order[0] == Arm::Baseline {
                    "AB"
                } else {
                    "BA"
                }
            );
            assert_eq!(
                (p.baseline_ns_per_op, p.treatment_ns_per_op),
                (100.0, 110.0)
            );
        }
        assert!((c.overhead_pct.estimate - 10.0).abs() < 1e-9);
        assert_eq!(
            (c.baseline_ns_per_op, c.treatment_ns_per_op),
            (100.0, 110.0)
        );
        assert_eq!(
            (c.mechanism.as_str(), c.variant.as_str()),
            ("none", "control")
        );
    }

    #[test]
    fn a_failing_half_names_the_case_pair_and_arm() {
        let mut m = Scripted::new(|_, _, n| {
            if n == 5 {
                anyhow::bail!("getppid: EPERM")
            }
            Ok(100.0)
        });
        let e = compare(
            &case("none"),
            &design(10),
            &mut m,
            &mut Rng::new(1),
            &mut |_| {},
        )
        .unwrap_err();
        let text = format!("{e:#}");
        assert!(
            text.contains("none:control on getppid, pair 3 of 10"),
            "{text}"
        );
        assert!(text.ends_with("getppid: EPERM"), "{text}");
        assert_eq!(m.calls.len(), 6, "nothing runs after the failure");
    }

    #[test]
    fn comparisons_are_stored_as_they_finish_then_decided_together() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db")).unwrap();
        let run_id = store
            .begin_run(&crate::model::testing::run(0, "t", "6.18", vec![]).meta)
            .unwrap();
        let cases = [case("none"), case("none"), case("none")];
        // The first comparison is 10% slower, the second unchanged, the
        // third fails in its first half.
        let mut m = Scripted::new(|_, arm, n| match n / 24 {
            0 => Ok(if arm == Arm::Treatment {
                110.0 + (n % 3) as f64 * 0.1
            } else {
                100.0
            }),
            1 => Ok(100.0 + ((n % 5) as f64 - 2.0) * 0.01),
            _ => anyhow::bail!("scripted failure"),
        });
        let progress = Progress::new(0);
        let e = measure_comparisons(
            &mut store,
            run_id,
            cases.iter().map(|c| (c, design(12), "")),
            &mut m,
            7,
            &progress,
            &DecisionOpts::default(),
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("scripted failure"));
        let stored = store.load_run(run_id).unwrap();
        assert_eq!(
            stored.comparisons.len(),
            2,
            "both finished comparisons kept"
        );

        let mut m = Scripted::new(|_, arm, n| match n / 24 {
            0 => Ok(if arm == Arm::Treatment {
                110.0 + (n % 3) as f64 * 0.1
            } else {
                100.0
            }),
            _ => Ok(100.0 + ((n % 5) as f64 - 2.0) * 0.01),
        });
        let decided = measure_comparisons(
            &mut store,
            run_id,
            cases[..2].iter().map(|c| (c, design(12), "")),
            &mut m,
            7,
            &progress,
            &DecisionOpts::default(),
        )
        .unwrap();
        assert_eq!(
            decided[0].overhead_pct.verdict,
            crate::stats::decision::Verdict::Slower
        );
        // Holm over the two: the stored p-values are the corrected ones.
        let stored = store.load_run(run_id).unwrap();
        assert_eq!(
            stored.comparisons[2].overhead_pct.p_value,
            decided[0].overhead_pct.p_value
        );
        assert_eq!(
            stored.comparisons[2].overhead_pct.verdict,
            decided[0].overhead_pct.verdict
        );
    }

    #[test]
    fn sequential_tables_run_in_rounds_and_are_stored_in_their_order() {
        use crate::stats::decision::{ErrorRate, SeqTest, Verdict};
        use crate::stats::sequential::StopRule;
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db")).unwrap();
        let run_id = store
            .begin_run(&crate::model::testing::run(0, "t", "6.18", vec![]).meta)
            .unwrap();
        // "seccomp" is 30% slower, "none" unchanged with 5% wobble.
        let cases = [case("none"), case("seccomp"), case("none"), case("seccomp")];
        let decision = DecisionOpts {
            test: SeqTest::Both,
            error_rate: ErrorRate::Fdr,
            ..DecisionOpts::default()
        };
        let sequential = |max_pairs| {
            let mut d = design(max_pairs);
            d.stop = Some(StopRule {
                min_pairs: 2,
                max_pairs,
                family: 4,
                decision,
                precision_pct: None,
                rank: 1,
            });
            d
        };
        let script = |c: &Case, arm: Arm, n: usize| {
            // A wobble of +-5 drawn afresh for every half.
            let wobble = 5.0 * (Rng::new(n as u64).below(1001) as f64 / 500.0 - 1.0);
            Ok(match (c.treatment.mechanism.name(), arm) {
                ("seccomp", Arm::Treatment) => 130.0 + wobble / 5.0,
                ("seccomp", Arm::Baseline) => 100.0 + wobble / 5.0,
                _ => 100.0 + wobble,
            })
        };
        let mut m = Scripted::new(script);
        let decided = measure_comparisons(
            &mut store,
            run_id,
            cases.iter().map(|c| (c, sequential(12), "")),
            &mut m,
            7,
            &Progress::new(0),
            &decision,
        )
        .unwrap();
        // Round 1 measures one pair of each case, in the table's order.
        let first: Vec<&str> = m.calls[..8]
            .chunks(2)
            .map(|pair| pair[0].0.split(':').next().unwrap())
            .collect();
        assert_eq!(first, ["none", "seccomp", "none", "seccomp"]);
        // Both effects settle in the same round.
        assert_eq!(decided[1].pairs, decided[3].pairs);
        assert!(decided[1].pairs <= 4, "{}", decided[1].pairs);
        for i in [1, 3] {
            assert_eq!(decided[i].overhead_pct.verdict, Verdict::Slower);
            assert_eq!(decided[i].sequential.unwrap().stopped, StopReason::Slower);
        }
        assert!(decided[0].pairs > decided[1].pairs);
        let stored = store.load_run(run_id).unwrap();
        let mechanisms: Vec<&str> = stored
            .comparisons
            .iter()
            .map(|c| c.mechanism.as_str())
            .collect();
        assert_eq!(mechanisms, ["none", "seccomp", "none", "seccomp"]);
        assert_eq!(stored.comparisons[1].pair_data, decided[1].pair_data);

        // A failing half stops the table: what was measured is stored,
        // the running comparisons marked unfinished.
        let mut m = Scripted::new(move |c, arm, n| {
            if n == 13 {
                anyhow::bail!("scripted failure")
            }
            script(c, arm, n)
        });
        let run_id = store
            .begin_run(&crate::model::testing::run(1, "t", "6.18", vec![]).meta)
            .unwrap();
        let e = measure_comparisons(
            &mut store,
            run_id,
            cases.iter().map(|c| (c, sequential(12), "")),
            &mut m,
            7,
            &Progress::new(0),
            &decision,
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("scripted failure"), "{e:#}");
        let stored = store.load_run(run_id).unwrap();
        assert_eq!(stored.comparisons.len(), 4);
        // Round 2 failed in its third case's second half: cases 1 and 2
        // have two pairs, 3 and 4 one.
        let pairs: Vec<u32> = stored.comparisons.iter().map(|c| c.pairs).collect();
        assert_eq!(pairs, [2, 2, 1, 1]);
        assert!(stored.comparisons.iter().all(|c| c.unfinished));
    }
}
