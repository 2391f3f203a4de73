//! The calibration's bookkeeping with made-up measurements: sizing,
//! schedule, counting false positives, detections and coverage, skipping.

use super::run::is_interrupt;
use super::*;
use crate::engine::ab::design::Design;
use crate::model::{Comparison, Mode, PairData, Params};
use crate::stats::bootstrap::Rng;
use crate::stats::paired::{OverheadPct, PairedOpts, compare_paired};

fn design(pairs: u32) -> Design {
    Design::for_tests(pairs, 7)
}

fn plan(counts: Counts, injected: &[&str]) -> Plan {
    Plan {
        workload: crate::workloads::find("getppid").unwrap(),
        workload_params: Params::new(),
        design: design(10),
        counts,
        injected: injected
            .iter()
            .map(|s| Injected::new(s, "getppid").unwrap())
            .collect(),
        injected_skipped: None,
        budget_s: 60.0,
        quick: false,
        decision: crate::stats::decision::DecisionOpts::default(),
        side_by_side: false,
    }
}

/// A comparison of `pairs` pairs with log-ratios `effect + noise * u`,
/// u uniform in [-0.5, 0.5).
fn fake(pairs: u32, effect: f64, noise: f64, rng: &mut Rng) -> Comparison {
    let u: Vec<f64> = (0..pairs)
        .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
        .collect();
    comparison(effect, noise, &u)
}

/// An A/A comparison that is exactly symmetric about 0 (never "slower"):
/// log-ratios noise * (i - (n-1)/2) / n.
fn fake_aa(pairs: u32, noise: f64) -> Comparison {
    let n = pairs as f64;
    let u: Vec<f64> = (0..pairs)
        .map(|i| (i as f64 - (n - 1.0) / 2.0) / n)
        .collect();
    comparison(0.0, noise, &u)
}

fn comparison(effect: f64, noise: f64, u: &[f64]) -> Comparison {
    let pairs = u.len() as u32;
    let pair_data: Vec<PairData> = u
        .iter()
        .zip(0..)
        .map(|(u, i)| PairData {
            index: i,
            order: "AB".into(),
            baseline_per_op: 100.0,
            treatment_per_op: 100.0 * (effect + noise * u).exp(),
            beside: Vec::new(),
        })
        .collect();
    let (b, t): (Vec<f64>, Vec<f64>) = pair_data
        .iter()
        .map(|p| (p.baseline_per_op, p.treatment_per_op))
        .unzip();
    let overhead_pct: OverheadPct = compare_paired(&b, &t, &PairedOpts::default()).unwrap();
    Comparison {
        workload: "getppid".into(),
        workload_params: Params::new(),
        mechanism: "x".into(),
        variant: "y".into(),
        params: Params::new(),
        mode: Mode::Process,
        tasks: 1,
        pairs,
        sample_ms: 60,
        samples_per_half: 2,
        measure: Default::default(),
        baseline_per_op: 100.0,
        treatment_per_op: 100.0,
        overhead_pct,
        hodges_lehmann_pct: crate::stats::paired::hodges_lehmann_pct(&b, &t),
        pair_data,
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
fn counts_follow_the_budget() {
    // 60 s budget, 3.7 s per comparison: k = 16.
    let c = counts(false, 60.0, 3.7, 10);
    assert_eq!(
        c,
        Counts {
            aa: 16,
            truth_comparisons: 3,
            truth_pairs: 30,
            injected: 7
        }
    );
    // Tiny budget: the minimums.
    let c = counts(false, 5.0, 3.7, 10);
    assert_eq!((c.aa, c.injected), (MIN_AA, MIN_INJECTED_COMPARISONS));
    // Huge budget: capped.
    let c = counts(false, 1e9, 1.0, 10);
    assert_eq!((c.aa, c.injected), (MAX_COMPARISONS, MAX_COMPARISONS - 9));
    // Quick ignores the budget.
    let c = counts(true, 1e9, 1.0, 10);
    assert_eq!((c.aa, c.injected), (QUICK_AA, QUICK_INJECTED_COMPARISONS));
}

#[test]
fn default_calibration_takes_about_three_budgets() {
    let d = design(10);
    let per = estimate_comparison_s(&d, 10);
    // 20 halves x (3 x 60 ms + 7 ms).
    assert!((per - 3.74).abs() < 1e-9, "{per}");
    let budget = 120.0;
    let mut p = plan(
        counts(false, budget, per, 10),
        &["seccomp:args,filters=1", "seccomp:args,filters=4"],
    );
    p.budget_s = budget;
    let ratio = p.estimate_s() / budget;
    assert!((2.5..=3.5).contains(&ratio), "{ratio}");
}

#[test]
fn truth_blocks_are_spread_among_short_comparisons() {
    let p = plan(
        Counts {
            aa: 2,
            truth_comparisons: 3,
            truth_pairs: 30,
            injected: 10,
        },
        &["seccomp:args,filters=4"],
    );
    let s: String = p
        .schedule()
        .iter()
        .map(|s| match s.role {
            Role::AaControl => 'A',
            Role::Truth(_) => 'T',
            Role::Short(_) => 'S',
        })
        .collect();
    assert_eq!(s, "AATSSSSTSSSTSSS");
    assert!(p.schedule().iter().all(|s| s.pairs
        == if matches!(s.role, Role::Truth(_)) {
            30
        } else {
            10
        }));
    // Slices: (2 x 10 + 3 x 30 + 10 x 10) pairs x 2 halves x 3 slices.
    assert_eq!(p.total_slices(), (20 + 90 + 100) * 2 * 3);
}

#[test]
fn report_counts_false_positives_detections_and_coverage() {
    let p = plan(
        Counts {
            aa: 12,
            truth_comparisons: 3,
            truth_pairs: 30,
            injected: 6,
        },
        &["seccomp:args,filters=4"],
    );
    let mut rng = Rng::new(3);
    let mut n = 0;
    let r = run(&p, &mut |step, case| {
        n += 1;
        Ok(match step.role {
            // One A/A comparison with a fake 10% "difference".
            Role::AaControl if n == 5 => {
                assert_eq!(case.treatment.mechanism.name(), "none");
                fake(step.pairs, 0.1, 0.01, &mut rng)
            }
            Role::AaControl => fake_aa(step.pairs, 0.02),
            _ => {
                assert_eq!(case.treatment.to_string(), "seccomp:args,filters=4");
                fake(step.pairs, 0.2, 0.02, &mut rng)
            }
        })
    })
    .unwrap();
    assert_eq!(r.aa.comparisons.len(), 12);
    assert_eq!(r.aa.false_positives.count, 1);
    assert_eq!(r.aa.false_positives.describe(), "1/12 = 8.3% [1.5, 35.4]");
    assert!(r.aa.target_met);
    let inj = &r.injected[0];
    let truth = inj.truth.as_ref().unwrap();
    assert_eq!(truth.pairs, 90);
    assert!((truth.pct - 22.14).abs() < 1.0, "{}", truth.pct);
    assert_eq!((inj.detected.count, inj.detected.total), (6, 6));
    assert_eq!(inj.covered.total, 6);
    assert!(inj.skipped.is_none());
    // 11 comparisons with log-ratios 0.002 * (i - 4.5): sd 0.0060553,
    // median absolute residual 0.005 (robust sd 0.0074); one (the shifted
    // one) with uniform noise of width 0.01.
    let me = &r.min_effect;
    assert!(
        (0.0055..0.0061).contains(&me.sd_log_ratio_classic),
        "{me:?}"
    );
    assert!((0.0065..0.0080).contains(&me.sd_log_ratio), "{me:?}");
    assert_eq!(me.sd_from_pairs, 120);
    assert!(me.ten_pairs_min_effect_pct > me.budget_min_effect_pct);
    assert!(
        (me.ten_pairs_min_effect_pct - min_detectable_effect_pct(me.sd_log_ratio, 10)).abs()
            < 1e-12
    );
    // The report round-trips through JSON (it is stored that way).
    let json = serde_json::to_string(&r).unwrap();
    let back: CalibrationReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.aa.false_positives, r.aa.false_positives);
}

#[test]
fn a_failing_injected_treatment_is_skipped_with_its_reason() {
    let p = plan(
        Counts {
            aa: 3,
            truth_comparisons: 3,
            truth_pairs: 30,
            injected: 5,
        },
        &["seccomp:args,filters=1", "seccomp:args,filters=4"],
    );
    let mut rng = Rng::new(1);
    let mut calls_of_first = 0;
    let r = run(&p, &mut |step, _| match step.role {
        Role::Truth(0) | Role::Short(0) => {
            calls_of_first += 1;
            anyhow::bail!("seccomp: EPERM")
        }
        _ => Ok(fake(step.pairs, 0.05, 0.01, &mut rng)),
    })
    .unwrap();
    assert_eq!(calls_of_first, 1, "no retries after the first failure");
    assert_eq!(r.injected[0].skipped.as_deref(), Some("seccomp: EPERM"));
    assert_eq!(r.injected[0].assessment, "not measured");
    assert!(r.injected[0].truth.is_none());
    assert_eq!(r.injected[1].comparisons.len(), 5);
    assert!(r.injected[1].skipped.is_none());
}

#[test]
fn interrupts_and_a_a_failures_end_the_calibration() {
    let p = plan(
        Counts {
            aa: 2,
            truth_comparisons: 1,
            truth_pairs: 30,
            injected: 5,
        },
        &["seccomp:args,filters=4"],
    );
    let mut rng = Rng::new(1);
    let e = run(&p, &mut |step, _| match step.role {
        Role::AaControl => Ok(fake(step.pairs, 0.0, 0.01, &mut rng)),
        _ => Err(anyhow::Error::new(crate::error::Interrupted)),
    })
    .unwrap_err();
    assert!(is_interrupt(&e));
    let e = run(&p, &mut |_, _| anyhow::bail!("fork failed")).unwrap_err();
    assert_eq!(e.to_string(), "fork failed");
}

/// The text of a calibration with one A/A false positive and one injected
/// slowdown, byte for byte as `calibrate::render` wrote it before it went
/// through `report::sections` (now `report::sections::calibration`).
#[test]
fn the_report_text_is_pinned() {
    let p = plan(
        Counts {
            aa: 12,
            truth_comparisons: 3,
            truth_pairs: 30,
            injected: 6,
        },
        &["seccomp:args,filters=4"],
    );
    let mut rng = Rng::new(3);
    let mut n = 0;
    let mut r = run(&p, &mut |step, _| {
        n += 1;
        Ok(match step.role {
            Role::AaControl if n == 5 => fake(step.pairs, 0.1, 0.01, &mut rng),
            Role::AaControl => fake_aa(step.pairs, 0.02),
            _ => fake(step.pairs, 0.2, 0.02, &mut rng),
        })
    })
    .unwrap();
    // What the clock gave, fixed.
    r.elapsed_s = 61.4;
    r.min_effect.pair_seconds = 0.5;
    r.min_effect.budget_pairs = 120;
    let out = crate::report::sections::calibration::text(&r);
    assert_eq!(out, PINNED_TEXT);
}

const PINNED_TEXT: &str = r##"Calibration of the A/B method on getppid (1 task, process; 10 pairs; halves of 2 x 60 ms, warmup 1), 61 s

A/A control (none against none, 12 comparisons):
  false positives: 1/12 = 8.3% [1.5, 35.4] (95% Wilson interval): consistent with the target of at most 5%
  intervals excluding 0 (noise band or not): 1/12 = 8.3% [1.5, 35.4]
  pairs per comparison: 10.0 on average

Injected slowdowns (truth: 3 pooled comparisons of 30 pairs; then short comparisons):
  seccomp:args,filters=4 on getppid
    truth            +22.1% [21.9, 22.4] (90 pairs)
    detected         6/6 = 100.0% [61.0, 100.0]
    CI covers truth  5/6 = 83.3% [43.6, 97.0]
    pairs            10.0 on average
    detected, and intervals consistent with 95% coverage

Smallest slowdown detectable with 80% power at alpha 0.05 (an approximation):
  sd of per-pair ln(B/A) 0.0074 (robust; classic 0.0058; from 120 A/A pairs); one pair takes 0.500 s
      10 pairs (  5.0 s): 0.8%
     120 pairs ( 60.0 s budget): 0.0%
  (normal approximation: exp((z_0.975 + z_0.8) * sd / sqrt(pairs) * sqrt(pi/2)) - 1, sd = 1.4826 x MAD of the A/A ln(B/A) centred per comparison, sqrt(pi/2) for the median's efficiency)"##;

/// A side-by-side replay with every kind of row: both tests and one,
/// outliers or not, a mixed table or none.
fn side_by_side_fixture() -> super::replay::SideBySide {
    use super::replay::{InjectedReplay, MixedReplay, SideBySide, TestReplay};
    use crate::stats::decision::SeqTest;
    let p = |count, total| Proportion::new(count, total);
    let row = |test, outliers, mixed: bool| TestReplay {
        test,
        outliers,
        aa_alone: p(1, 40),
        aa_mean_pairs: 23.25,
        aa_tables_fwer: p(2, 20),
        aa_tables_fdr: p(3, 20),
        injected: vec![InjectedReplay {
            treatment: "slowdown 2% on getppid".into(),
            detected: p(9, 10),
            covered: p(10, 10),
            mean_pairs: 31.5,
        }],
        mixed_fdr: mixed.then(|| MixedReplay {
            tables: 20,
            mean_fdp: 0.0123,
            any_false: p(1, 20),
            injected_detected: p(180, 200),
            injected_mean_pairs: 40.04,
        }),
    };
    SideBySide {
        budget_pairs: 200,
        table_size: 29,
        outlier_share: 0.05,
        outlier_factors: (1.2, 2.0),
        rows: vec![
            row(SeqTest::Sign, false, true),
            row(SeqTest::Both, true, false),
        ],
        method: "replayed from the stored pairs".into(),
    }
}

/// The other branches of the text, byte for byte as `calibrate::render`
/// wrote them (captured from it before it moved): sequential, a skipped injected
/// treatment without truth, the side-by-side replay; then every injected
/// slowdown skipped.
#[test]
fn the_other_report_texts_are_pinned() {
    let p = plan(
        Counts {
            aa: 12,
            truth_comparisons: 3,
            truth_pairs: 30,
            injected: 6,
        },
        &["seccomp:args,filters=4"],
    );
    let mut rng = Rng::new(3);
    let mut r = run(&p, &mut |_, _| Ok(fake(10, 0.2, 0.02, &mut rng))).unwrap();
    r.elapsed_s = 1.6;
    r.min_effect.pair_seconds = 0.25;
    r.min_effect.budget_pairs = 7;
    r.design.sequential = true;
    r.aa.excluding_zero = None;
    r.aa.mean_pairs = None;
    r.injected[0].truth = None;
    r.injected[0].mean_pairs = None;
    r.injected[0].skipped = Some("the treatment failed: no root".into());
    r.side_by_side = Some(side_by_side_fixture());
    let sbs = crate::report::sections::calibration::side_by_side(&side_by_side_fixture());
    let with_replay = crate::report::sections::calibration::text(&r);
    r.injected_skipped = Some("every injected treatment needs root".into());
    r.side_by_side = None;
    let skipped = crate::report::sections::calibration::text(&r);
    assert_eq!(sbs, PINNED_SIDE_BY_SIDE);
    assert_eq!(with_replay, PINNED_WITH_REPLAY);
    assert_eq!(skipped, PINNED_SKIPPED);
}

const PINNED_SIDE_BY_SIDE: &str = r##"Side by side: the sequential tests on the same pairs (replayed from the stored pairs):
  sign test, pairs as measured:
    A/A alone: false 1/40 = 2.5% [0.4, 12.9]; 23.2 pairs on average
    A/A tables of 29 with any false verdict: FWER (Holm) 2/20 = 10.0% [2.8, 30.1]; FDR (e-BH) 3/20 = 15.0% [5.2, 36.0]
    slowdown 2% on getppid: detected 9/10 = 90.0% [59.6, 98.2]; covered 10/10 = 100.0% [72.2, 100.0]; 31.5 pairs on average
    mixed tables of 29 (10 A/A, the rest injected), FDR (e-BH): false discovery proportion 1.2% on average over 20 tables; tables with any false discovery 1/20 = 5.0% [0.9, 23.6]; injected detected 180/200 = 90.0% [85.1, 93.4], 40.0 pairs on average
  both tests (sign and t, e-values averaged), 5% outlier pairs injected:
    A/A alone: false 1/40 = 2.5% [0.4, 12.9]; 23.2 pairs on average
    A/A tables of 29 with any false verdict: FWER (Holm) 2/20 = 10.0% [2.8, 30.1]; FDR (e-BH) 3/20 = 15.0% [5.2, 36.0]
    slowdown 2% on getppid: detected 9/10 = 90.0% [59.6, 98.2]; covered 10/10 = 100.0% [72.2, 100.0]; 31.5 pairs on average"##;

const PINNED_WITH_REPLAY: &str = r##"Calibration of the A/B method on getppid (1 task, process; sequential: each comparison stops once settled, at most 10 pairs; halves of 2 x 60 ms, warmup 1), 2 s

A/A control (none against none, 12 comparisons):
  false positives: 12/12 = 100.0% [75.8, 100.0] (95% Wilson interval): ABOVE the target of at most 5%: A/A differences are detected too often on this machine now; stop other load, or use longer --sample-ms / more --samples-per-half

Injected slowdowns (truth: 3 pooled comparisons of 30 pairs; then short comparisons):
  seccomp:args,filters=4 on getppid
    truth            not measured
    detected         6/6 = 100.0% [61.0, 100.0]
    CI covers truth  4/6 = 66.7% [30.0, 90.3]
    intervals cover the truth less often than 95%: they are too narrow here
    skipped: the treatment failed: no root

Smallest slowdown detectable with 80% power at alpha 0.05 (an approximation):
  sd of per-pair ln(B/A) 0.0056 (robust; classic 0.0054; from 120 A/A pairs); one pair takes 0.250 s
      10 pairs (  2.5 s): 0.6%
       7 pairs ( 60.0 s budget): 0.0%
  (normal approximation: exp((z_0.975 + z_0.8) * sd / sqrt(pairs) * sqrt(pi/2)) - 1, sd = 1.4826 x MAD of the A/A ln(B/A) centred per comparison, sqrt(pi/2) for the median's efficiency)

Side by side: the sequential tests on the same pairs (replayed from the stored pairs):
  sign test, pairs as measured:
    A/A alone: false 1/40 = 2.5% [0.4, 12.9]; 23.2 pairs on average
    A/A tables of 29 with any false verdict: FWER (Holm) 2/20 = 10.0% [2.8, 30.1]; FDR (e-BH) 3/20 = 15.0% [5.2, 36.0]
    slowdown 2% on getppid: detected 9/10 = 90.0% [59.6, 98.2]; covered 10/10 = 100.0% [72.2, 100.0]; 31.5 pairs on average
    mixed tables of 29 (10 A/A, the rest injected), FDR (e-BH): false discovery proportion 1.2% on average over 20 tables; tables with any false discovery 1/20 = 5.0% [0.9, 23.6]; injected detected 180/200 = 90.0% [85.1, 93.4], 40.0 pairs on average
  both tests (sign and t, e-values averaged), 5% outlier pairs injected:
    A/A alone: false 1/40 = 2.5% [0.4, 12.9]; 23.2 pairs on average
    A/A tables of 29 with any false verdict: FWER (Holm) 2/20 = 10.0% [2.8, 30.1]; FDR (e-BH) 3/20 = 15.0% [5.2, 36.0]
    slowdown 2% on getppid: detected 9/10 = 90.0% [59.6, 98.2]; covered 10/10 = 100.0% [72.2, 100.0]; 31.5 pairs on average"##;

const PINNED_SKIPPED: &str = r##"Calibration of the A/B method on getppid (1 task, process; sequential: each comparison stops once settled, at most 10 pairs; halves of 2 x 60 ms, warmup 1), 2 s

A/A control (none against none, 12 comparisons):
  false positives: 12/12 = 100.0% [75.8, 100.0] (95% Wilson interval): ABOVE the target of at most 5%: A/A differences are detected too often on this machine now; stop other load, or use longer --sample-ms / more --samples-per-half

Injected slowdowns: skipped: every injected treatment needs root

Smallest slowdown detectable with 80% power at alpha 0.05 (an approximation):
  sd of per-pair ln(B/A) 0.0056 (robust; classic 0.0054; from 120 A/A pairs); one pair takes 0.250 s
      10 pairs (  2.5 s): 0.6%
       7 pairs ( 60.0 s budget): 0.0%
  (normal approximation: exp((z_0.975 + z_0.8) * sd / sqrt(pairs) * sqrt(pi/2)) - 1, sd = 1.4826 x MAD of the A/A ln(B/A) centred per comparison, sqrt(pi/2) for the median's efficiency)"##;
