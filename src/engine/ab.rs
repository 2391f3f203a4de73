//! The A/B loop: randomised interleaved pairs, measured through a
//! [`Measurer`], stored as each comparison finishes, then decided together.
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

use super::design::{Case, Design, pair_order, pair_orders};
use super::measurer::Measurer;
use super::progress::Progress;
use crate::mechanisms::Arm;
use crate::model::{Attribution, ChildCpu, Comparison, PairData, SequentialStop};
use crate::profile::attribute::{AttributeOpts, HalfProfile, ProfiledPair, attribute};
use crate::profile::{ProfileOpts, profile_half};
use crate::runner::{Tick, Unobserved};
use crate::stats::bootstrap::Rng;
use crate::stats::decision::{DecisionOpts, Samples, Tested, decide_table};
use crate::stats::paired::{PairedOpts, compare_paired};
use crate::stats::sequential::{self, StopReason, settled};
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
        let order = pair_order(rng);
        let mut ns = [0.0f64; 2];
        let cpu_before = [cpu[0].len(), cpu[1].len()];
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
                });
            let v = match half {
                Ok(v) => v,
                Err(error) => {
                    // The pair in progress is left out, its CPU time too.
                    cpu[0].truncate(cpu_before[0]);
                    cpu[1].truncate(cpu_before[1]);
                    let stop = design.stop.as_ref().map(|_| StopReason::Interrupted);
                    let partial = summarise(case, design, &pair_data, &cpu, stop, None)
                        .ok()
                        .map(|mut c| {
                            c.unfinished = true;
                            Box::new(c)
                        });
                    return Err(Stopped { partial, error });
                }
            };
            let side = (arm == Arm::Treatment) as usize;
            ns[side] = v.ns_per_op;
            cpu[side].extend(v.child_cpu);
        }
        pair_data.push(PairData {
            index: i,
            order: if order[0] == Arm::Baseline {
                "AB"
            } else {
                "BA"
            }
            .to_string(),
            baseline_ns_per_op: ns[0],
            treatment_ns_per_op: ns[1],
        });
        if let Some(rule) = &design.stop {
            ratios.push((ns[1] / ns[0]).ln());
            stopped = settled(&ratios, rule);
            if stopped.is_some() {
                break;
            }
        }
    }
    let attribution = design.profile.map(|p| {
        profile_pairs(
            case,
            design,
            &p,
            measurer,
            on_tick,
            arm_median(&pair_data, |p| p.baseline_ns_per_op),
            arm_median(&pair_data, |p| p.treatment_ns_per_op),
        )
    });
    summarise(case, design, &pair_data, &cpu, stopped, attribution).map_err(|error| Stopped {
        partial: None,
        error,
    })
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
        None => compare_paired(
            &baseline,
            &treatment,
            &PairedOpts {
                seed: design.seed,
                ..Default::default()
            },
        )
        .context("computing the overhead")?,
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
        sequential: design.stop.as_ref().map(|rule| SequentialStop {
            max_pairs: design.pairs,
            family: rule.family,
            stopped: stopped.unwrap_or(StopReason::MaxPairs),
        }),
        unfinished: false,
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
    let mut pairs = Vec::new();
    if let Some(symbols) = &symbols {
        let mut rng = Rng::new(design.seed ^ PROFILE_SEED);
        'pairs: for (i, order) in pair_orders(opts.pairs, &mut rng).into_iter().enumerate() {
            let mut halves: [HalfProfile; 2] = Default::default();
            for arm in order {
                let half = profile_half(symbols, opts.hz, design.sample_ms, |observer| {
                    measurer
                        .half(case, design, arm, observer, on_tick)
                        .map(|h| h.ns_per_op)
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

/// Measures A/B comparisons in order (each with its own design), stores
/// each as it finishes (a late failure loses nothing), then applies the
/// table's final verdicts (Holm, noise band, equivalence) to all of them
/// and stores those. `role` adds to a comparison's progress line
/// (" (negative control)").
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
    let mut rng = Rng::new(seed);
    let mut comparisons = Vec::new();
    let mut ids = Vec::new();
    let mut stopped = None;
    for (case, mut design, role) in cases {
        // Under the FDR a comparison settles at the e-BH rank it would
        // take: the discoveries before it, plus one.
        if let Some(rule) = design.stop.as_mut() {
            rule.rank = 1 + comparisons
                .iter()
                .filter(|c: &&Comparison| {
                    c.sequential.is_some_and(|s| {
                        matches!(s.stopped, StopReason::Slower | StopReason::Faster)
                    })
                })
                .count() as u32;
        }
        let what = crate::report::label::case(
            &case.treatment.to_string(),
            &crate::report::label::workload(case.workload.name, &case.workload_params),
            case.tasks as u32,
        ) + role;
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
        store.set_comparison_decision(*id, c.overhead_pct.p_value, c.overhead_pct.verdict)?;
    }
    Ok(())
}

/// Final verdicts of a report: Holm-corrected p-values across its
/// comparisons (stored as `p_value`), the noise band, and the equivalence
/// test on each comparison's log ratios for `negligible`.
pub fn decide_all(comparisons: &mut [Comparison], opts: &DecisionOpts) {
    let ratios: Vec<Vec<f64>> = comparisons.iter().map(log_ratios).collect();
    let rows: Vec<Tested> = comparisons
        .iter()
        .zip(&ratios)
        .map(|(c, r)| Tested {
            p_value: c.overhead_pct.p_value,
            ci_low: c.overhead_pct.ci_low,
            ci_high: c.overhead_pct.ci_high,
            samples: if c.sequential.is_some() {
                Samples::Sequential(r)
            } else {
                Samples::Paired(r)
            },
        })
        .collect();
    for (c, d) in comparisons.iter_mut().zip(decide_table(&rows, opts)) {
        c.overhead_pct.p_value = d.p_value;
        c.overhead_pct.verdict = d.verdict;
    }
}

/// The per-pair ln(treatment / baseline) of a comparison.
pub fn log_ratios(c: &Comparison) -> Vec<f64> {
    pair_log_ratios(&c.pair_data)
}

/// The per-pair ln(treatment / baseline) of measured pairs.
pub(super) fn pair_log_ratios(pairs: &[PairData]) -> Vec<f64> {
    pairs
        .iter()
        .map(|p| (p.treatment_ns_per_op / p.baseline_ns_per_op).ln())
        .collect()
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
                })
                .collect(),
            attribution: None,
            child_cpu: None,
            sequential: None,
            unfinished: false,
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
        // Holm: the smallest p times 3, the next times 2.
        assert!((cs[0].overhead_pct.p_value - 0.0015).abs() < 1e-12);
        assert_eq!(cs[0].overhead_pct.verdict, Verdict::Slower);
        // Inside +-1%: significant but inside the noise band, and shown to be within it.
        assert_eq!(cs[1].overhead_pct.verdict, Verdict::Negligible);
        assert_eq!(cs[2].overhead_pct.verdict, Verdict::Negligible);
        assert!(crate::report::number::overhead(&cs[2].overhead_pct).ends_with(" ="));
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
}
