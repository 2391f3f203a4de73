//! The A/B loop's unit tests: a scripted measurer stands in for the
//! machine, so they measure nothing; they check the order of halves, the
//! stopping rules, the rounds, what is stored and the final verdicts.

use super::design::{Case, Design, pair_orders};
use super::measurer::testing::Scripted;
use super::*;
use crate::engine::progress::Progress;
use crate::mechanisms::Arm;
use crate::model::{Comparison, Mode, PairData, Params};
use crate::profile::ProfileOpts;
use crate::stats::bootstrap::Rng;
use crate::stats::decision::DecisionOpts;
use crate::stats::sequential::StopReason;
use crate::store::Store;

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
        measure: Default::default(),
        baseline_per_op: 1.0,
        treatment_per_op: 1.0,
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
                baseline_per_op: b,
                treatment_per_op: t,
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
            baseline_per_op: 100.0,
            treatment_per_op: 105.0 + f64::from(i % 4) * 0.3,
            beside: Vec::new(),
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

/// The measures beside a comparison's own are figured and decided as its
/// own is: a client's requests/s that fell 8% in every pair is a verdict
/// of its own (lower, for the worse), while the comparison's time, which
/// did not move, stays no slower; and a run in counted instructions says
/// so in its measure.
#[test]
fn a_measure_beside_the_comparisons_own_gets_its_own_verdict() {
    use crate::model::{Measure, Metric, PairFigure};
    use crate::stats::decision::Verdict;
    let design = Design {
        counting: super::counting::Counting::Icount,
        ..Design::for_tests(12, 1)
    };
    let rps = Measure::per_run("requests_per_sec", true);
    let pairs: Vec<PairData> = (0..12)
        .map(|i| {
            let wobble = f64::from(i % 3) * 0.01;
            PairData {
                index: i,
                order: "AB".into(),
                baseline_per_op: 1000.0,
                treatment_per_op: 1000.0 + wobble - 0.01,
                beside: vec![PairFigure {
                    measure: rps.clone(),
                    baseline: 5000.0,
                    treatment: 4600.0 + wobble,
                }],
            }
        })
        .collect();
    let mut c = summarise(
        &case("none"),
        &design,
        &pairs,
        &[vec![], vec![]],
        None,
        None,
    )
    .unwrap();
    assert_eq!(c.measure, Measure::of(Metric::Instructions));
    assert_eq!(c.beside.len(), 1);
    decide_all(std::slice::from_mut(&mut c), &DecisionOpts::default());
    assert_ne!(c.overhead_pct.verdict, Verdict::Slower);
    let m = &c.beside[0];
    assert_eq!(m.measure, rps);
    assert_eq!(m.change_pct.verdict, Verdict::Faster, "{m:?}");
    assert!((m.change_pct.estimate + 8.0).abs() < 0.1, "{m:?}");
    assert!((m.treatment / m.baseline - 1.0) * 100.0 - m.change_pct.estimate < 1e-9);
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
    let line = describe_measured(&c, &design(24));
    assert!(line.contains(&format!("{} of at most 24 pairs", c.pairs)));
    // Issue 44: progress intervals said no level, and differed from the
    // table's: they say whose they are.
    assert!(
        line.contains("its own 95% interval; the table's, after correction, is wider"),
        "{line}"
    );
}

#[test]
fn halves_follow_the_seeded_order_and_land_in_their_arm() {
    // Baseline halves take 100 ns/op, treatment halves 110.
    let mut m = Scripted::new(|_, arm, _| Ok(if arm == Arm::Treatment { 110.0 } else { 100.0 }));
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
        assert_eq!((p.baseline_per_op, p.treatment_per_op), (100.0, 110.0));
    }
    assert!((c.overhead_pct.estimate - 10.0).abs() < 1e-9);
    assert_eq!((c.baseline_per_op, c.treatment_per_op), (100.0, 110.0));
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
    let calls = m.calls.len();

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

    // Issue 44: a failure in the table's last half, after both effects
    // had stopped as slower: only the comparison that was running is
    // unfinished; the stopped ones keep their stop and their verdict.
    let mut m = Scripted::new(move |c, arm, n| {
        if n + 1 == calls {
            anyhow::bail!("scripted failure")
        }
        script(c, arm, n)
    });
    let run_id = store
        .begin_run(&crate::model::testing::run(2, "t", "6.18", vec![]).meta)
        .unwrap();
    measure_comparisons(
        &mut store,
        run_id,
        cases.iter().map(|c| (c, sequential(12), "")),
        &mut m,
        7,
        &Progress::new(0),
        &decision,
    )
    .unwrap_err();
    let stored = store.load_run(run_id).unwrap();
    for i in [1, 3] {
        let c = &stored.comparisons[i];
        assert!(!c.unfinished, "{i}: stopped before the failure");
        assert_eq!(c.sequential.unwrap().stopped, StopReason::Slower);
        assert_eq!(c.overhead_pct.verdict, Verdict::Slower);
    }
    let unfinished: Vec<bool> = stored.comparisons.iter().map(|c| c.unfinished).collect();
    assert!(unfinished[0] || unfinished[2], "{unfinished:?}");
}
