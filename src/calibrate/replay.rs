//! Side by side: the sequential tests replayed on the same measured pairs.
//!
//! `calibrate --side-by-side` measures every A/A and injected comparison
//! to the full sequential budget, then replays each test's stopping rule on
//! the growing prefix of those pairs: pair n's look uses pairs 1..n only,
//! so a replay stops exactly where a sequential run on the same pairs
//! would have stopped. Both tests thus meet the same noise, the same drift
//! and the same outliers, and their figures differ only by the test.
//!
//! Each test is replayed twice: on the pairs as measured, and with outlier
//! halves injected. An injected outlier is a half slowed by a factor
//! between [`OUTLIER_MIN_FACTOR`] and [`OUTLIER_MAX_FACTOR`] (the pair
//! ratios a preempted half gives on this VM run up to about 2), in
//! [`OUTLIER_SHARE`] of the pairs; the slowed half is chosen by a fair
//! coin, as preemption does not know which arm runs, so a pair's log ratio
//! moves by +-ln(factor). The same pairs get the same outliers for every
//! test.
//!
//! The A/A comparisons are replayed alone (a table of one: the
//! per-comparison false-positive rate) and in tables of the survey's size,
//! [`SURVEY_TABLE`] comparisons, as `overhead` runs them: in rounds, one
//! pair of each running comparison per round, stopping jointly against
//! the table's threshold (under the FDR, the e-BH rejection set of the
//! candidates and the discoveries already stopped), then the
//! whole table decided by Holm or by e-BH. With every comparison null, a
//! table with any "slower" or "faster" is a false one, and the share of
//! such tables is both its family-wise error rate and its false discovery
//! rate.

use crate::stats::bootstrap::Rng;
use crate::stats::decision::{DecisionOpts, ErrorRate, SeqTest, Tested, Verdict, decide_table};
use crate::stats::power::Proportion;

pub use crate::model::calibration::{
    InjectedReplay, MIXED_NULLS, MixedReplay, SideBySide, TestReplay,
};
use crate::stats::sequential::rounds::run_table;
use crate::stats::sequential::{StopReason, StopRule, look, row_samples, settled};

/// Comparisons in a table of the survey's size (the default `overhead`
/// on this machine's kernel: 29).
pub const SURVEY_TABLE: usize = 29;
/// The tests a side-by-side replays, in its order.
pub const TESTS: [SeqTest; 3] = [SeqTest::Sign, SeqTest::T, SeqTest::Both];
/// Share of pairs given an outlier half.
pub const OUTLIER_SHARE: f64 = 0.05;
/// Range of the factor an outlier half is slowed by.
pub const OUTLIER_MIN_FACTOR: f64 = 1.2;
pub const OUTLIER_MAX_FACTOR: f64 = 2.0;

/// Adds outlier halves to the log ratios `r` (a copy): in a share
/// [`OUTLIER_SHARE`] of the pairs one half, chosen by a coin, is slowed by
/// a factor drawn uniformly from [`OUTLIER_MIN_FACTOR`]..[`OUTLIER_MAX_FACTOR`].
pub fn inject_outliers(r: &[f64], rng: &mut Rng) -> Vec<f64> {
    r.iter()
        .map(|&v| {
            if uniform(rng) >= OUTLIER_SHARE {
                return v;
            }
            let f = OUTLIER_MIN_FACTOR + (OUTLIER_MAX_FACTOR - OUTLIER_MIN_FACTOR) * uniform(rng);
            if rng.below(2) == 0 {
                v + f.ln()
            } else {
                v - f.ln()
            }
        })
        .collect()
}

/// A uniform draw in [0, 1).
fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Where a replayed sequential comparison stopped, and what its look said
/// there (before the table's correction).
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    pub pairs: usize,
    pub stopped: StopReason,
    /// The pairs up to the stop.
    pub r: Vec<f64>,
    /// Anytime-valid p-value of no difference, raw.
    pub p_value: f64,
    /// The confidence sequence at the stop, percent.
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
}

/// Replays `rule` on the log ratios `r`: the first prefix at which it
/// settles, or all of `r` (its budget) when none does.
pub fn replay(r: &[f64], rule: &StopRule) -> Replayed {
    let (pairs, stopped) = (1..=r.len())
        .find_map(|n| settled(&r[..n], rule).map(|s| (n, s)))
        .unwrap_or((r.len(), StopReason::MaxPairs));
    replayed(r, pairs, stopped, rule)
}

/// What the look at `r`'s first `pairs` pairs says, stopped for `stopped`.
fn replayed(r: &[f64], pairs: usize, stopped: StopReason, rule: &StopRule) -> Replayed {
    let d = &rule.decision;
    let l = look(&r[..pairs], d.alpha, 0.0, d.test);
    let pct = |v: f64| v.exp_m1() * 100.0;
    Replayed {
        pairs,
        stopped,
        r: r[..pairs].to_vec(),
        p_value: l.map_or(1.0, |l| l.p_value),
        ci_low_pct: l.map_or(f64::NEG_INFINITY, |l| pct(l.ci_low)),
        ci_high_pct: l.map_or(f64::INFINITY, |l| pct(l.ci_high)),
    }
}

/// Replays a table: the comparisons `rs` in rounds under `rule` (its
/// family set to the table's size), one pair of each running comparison
/// per round and the joint stopping decision after each
/// ([`crate::stats::sequential::rounds`]), then the table's verdicts by
/// Holm or e-BH, as `overhead` runs and decides them. Each comparison's
/// budget is its pairs.
pub fn replay_table(rs: &[Vec<f64>], rule: &StopRule) -> Vec<(Replayed, Verdict)> {
    let rule = StopRule {
        family: rs.len() as u32,
        ..*rule
    };
    let done: Vec<Replayed> = rs
        .iter()
        .zip(run_table(rs, &rule))
        .map(|(r, (n, s))| replayed(r, n, s, &rule))
        .collect();
    let verdicts = decide(&done, &rule.decision);
    done.into_iter().zip(verdicts).collect()
}

/// The table's verdicts of replayed comparisons.
fn decide(rows: &[Replayed], opts: &DecisionOpts) -> Vec<Verdict> {
    let test = opts.test;
    let intervals: Vec<crate::stats::decision::IntervalFn> = rows
        .iter()
        .map(|d| {
            Box::new(move |a: f64| {
                crate::stats::sequential::overhead_pct(&d.r, a, test).map(|o| (o.ci_low, o.ci_high))
            }) as crate::stats::decision::IntervalFn
        })
        .collect();
    let tested: Vec<Tested> = rows
        .iter()
        .zip(&intervals)
        .map(|(d, at)| Tested {
            p_value: d.p_value,
            ci_low: d.ci_low_pct,
            ci_high: d.ci_high_pct,
            samples: row_samples(&d.r, opts),
            interval_at: Some(at.as_ref()),
        })
        .collect();
    decide_table(&tested, opts)
        .into_iter()
        .map(|d| d.verdict)
        .collect()
}

/// What the side-by-side replay needs of one injected slowdown: its
/// label, its truth (percent) and its comparisons' log ratios.
pub struct InjectedPairs<'a> {
    pub treatment: &'a str,
    pub truth_pct: f64,
    pub comparisons: Vec<Vec<f64>>,
}

/// Replays `tests` on the A/A log ratios `aa` and the injected ones, with
/// `rule_for(test, family)` the stop rule `overhead` would use; outliers
/// drawn from `seed` (the same for every test).
pub fn side_by_side(
    tests: &[SeqTest],
    aa: &[Vec<f64>],
    injected: &[InjectedPairs],
    budget_pairs: u32,
    rule_for: &dyn Fn(SeqTest, usize, ErrorRate) -> StopRule,
    seed: u64,
) -> SideBySide {
    let mut rows = Vec::new();
    for outliers in [false, true] {
        let with = |cs: &[Vec<f64>], salt: u64| -> Vec<Vec<f64>> {
            let mut rng = Rng::new(seed ^ salt);
            cs.iter()
                .map(|r| {
                    if outliers {
                        inject_outliers(r, &mut rng)
                    } else {
                        r.clone()
                    }
                })
                .collect()
        };
        let aa = with(aa, 0x005e_edaa);
        let inj: Vec<Vec<Vec<f64>>> = injected
            .iter()
            .enumerate()
            .map(|(i, p)| with(&p.comparisons, 0x1_0000 + i as u64))
            .collect();
        for &test in tests {
            let alone = rule_for(test, 1, ErrorRate::Fwer);
            let aa_runs: Vec<Replayed> = aa.iter().map(|r| replay(r, &alone)).collect();
            let aa_false = aa_runs
                .iter()
                .filter(|d| is_discovery(decide(std::slice::from_ref(*d), &alone.decision)[0]))
                .count() as u32;
            let tables = |rate: ErrorRate| {
                let rule = rule_for(test, SURVEY_TABLE, rate);
                let chunks: Vec<&[Vec<f64>]> = aa
                    .chunks(SURVEY_TABLE)
                    .filter(|c| c.len() == SURVEY_TABLE)
                    .collect();
                let bad = chunks
                    .iter()
                    .filter(|c| replay_table(c, &rule).iter().any(|(_, v)| is_discovery(*v)))
                    .count() as u32;
                Proportion::new(bad, chunks.len() as u32)
            };
            let injected = injected
                .iter()
                .zip(&inj)
                .map(|(p, cs)| {
                    let runs: Vec<(Replayed, Verdict)> = cs
                        .iter()
                        .map(|r| {
                            let d = replay(r, &alone);
                            let v = decide(std::slice::from_ref(&d), &alone.decision)[0];
                            (d, v)
                        })
                        .collect();
                    let n = runs.len() as u32;
                    InjectedReplay {
                        treatment: p.treatment.to_string(),
                        detected: Proportion::new(
                            runs.iter().filter(|(_, v)| *v == Verdict::Slower).count() as u32,
                            n,
                        ),
                        covered: Proportion::new(
                            runs.iter()
                                .filter(|(d, _)| {
                                    d.ci_low_pct <= p.truth_pct && p.truth_pct <= d.ci_high_pct
                                })
                                .count() as u32,
                            n,
                        ),
                        mean_pairs: mean(runs.iter().map(|(d, _)| d.pairs as f64)),
                    }
                })
                .collect();
            let all_injected: Vec<Vec<f64>> = inj.iter().flatten().cloned().collect();
            rows.push(TestReplay {
                mixed_fdr: mixed_tables(
                    &aa,
                    &all_injected,
                    &rule_for(test, SURVEY_TABLE, ErrorRate::Fdr),
                ),
                test,
                outliers,
                aa_alone: Proportion::new(aa_false, aa.len() as u32),
                aa_mean_pairs: mean(aa_runs.iter().map(|d| d.pairs as f64)),
                aa_tables_fwer: tables(ErrorRate::Fwer),
                aa_tables_fdr: tables(ErrorRate::Fdr),
                injected,
            });
        }
    }
    SideBySide {
        budget_pairs,
        table_size: SURVEY_TABLE as u32,
        outlier_share: OUTLIER_SHARE,
        outlier_factors: (OUTLIER_MIN_FACTOR, OUTLIER_MAX_FACTOR),
        rows,
        method: format!(
            "every comparison measured to {budget_pairs} pairs, then each test's stopping rule \
             replayed on the growing prefix of the same pairs (a look at pair n uses pairs 1..n \
             only); A/A alone and in tables of {SURVEY_TABLE} run in rounds (Holm or e-BH at \
             the end), and in mixed tables of {MIXED_NULLS} A/A and {} injected comparisons \
             under e-BH; outliers: in {:.0}% of pairs one half, chosen by a coin, slowed by \
             x{OUTLIER_MIN_FACTOR}..x{OUTLIER_MAX_FACTOR}, the same for every test",
            SURVEY_TABLE - MIXED_NULLS,
            OUTLIER_SHARE * 100.0
        ),
    }
}

/// Replays mixed tables of [`SURVEY_TABLE`] under `rule`: each takes the
/// next [`MIXED_NULLS`] A/A comparisons (while they last) and the next
/// injected ones, cycling through them. None without injected
/// comparisons or with too few A/A ones for a table.
fn mixed_tables(aa: &[Vec<f64>], injected: &[Vec<f64>], rule: &StopRule) -> Option<MixedReplay> {
    let real = SURVEY_TABLE - MIXED_NULLS;
    let tables = aa.len() / MIXED_NULLS;
    if injected.is_empty() || tables == 0 {
        return None;
    }
    let (mut fdp_sum, mut any_false, mut detected, mut pairs) = (0.0, 0u32, 0u32, 0usize);
    for t in 0..tables {
        let mut table: Vec<Vec<f64>> = aa[t * MIXED_NULLS..(t + 1) * MIXED_NULLS].to_vec();
        table.extend((0..real).map(|j| injected[(t * real + j) % injected.len()].clone()));
        let out = replay_table(&table, rule);
        let false_found = out[..MIXED_NULLS]
            .iter()
            .filter(|(_, v)| is_discovery(*v))
            .count();
        let found = out.iter().filter(|(_, v)| is_discovery(*v)).count();
        fdp_sum += false_found as f64 / found.max(1) as f64;
        any_false += (false_found > 0) as u32;
        detected += out[MIXED_NULLS..]
            .iter()
            .filter(|(_, v)| *v == Verdict::Slower)
            .count() as u32;
        pairs += out[MIXED_NULLS..]
            .iter()
            .map(|(d, _)| d.pairs)
            .sum::<usize>();
    }
    Some(MixedReplay {
        tables: tables as u32,
        mean_fdp: fdp_sum / tables as f64,
        any_false: Proportion::new(any_false, tables as u32),
        injected_detected: Proportion::new(detected, (tables * real) as u32),
        injected_mean_pairs: pairs as f64 / (tables * real) as f64,
    })
}

fn is_discovery(v: Verdict) -> bool {
    matches!(v, Verdict::Slower | Verdict::Faster)
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { f64::NAN } else { s / n as f64 }
}

/// The pairs a stored calibration holds for a replay
/// (`calibrate --replay RUN`): the budget every comparison was measured
/// to, the seed, and each A/A and injected comparison's per-pair log
/// ratios.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPairs {
    pub budget_pairs: u32,
    pub seed: u64,
    pub aa: Vec<Vec<f64>>,
    /// Per injected slowdown: its label, its truth (percent) and its
    /// comparisons' log ratios; slowdowns without a truth are left out.
    pub injected: Vec<(String, f64, Vec<Vec<f64>>)>,
}

/// Reads [`StoredPairs`] from a stored calibration report, field by field
/// (a stored report may hold nulls where a figure was not finite). Fails,
/// saying what to run, when its comparisons were stopped by a sequential
/// rule: a replay needs every comparison measured to the same budget.
pub fn stored_pairs(json: &serde_json::Value) -> anyhow::Result<StoredPairs> {
    let design = &json["design"];
    if design["sequential"].as_bool() != Some(false) {
        anyhow::bail!(
            "its comparisons stopped when a sequential rule settled them, so a replay cannot \
             see the pairs a different rule would have needed; replay a calibration measured \
             to a fixed budget (`secperf calibrate --side-by-side`, or --pairs N)"
        );
    }
    let budget_pairs = design["pairs"]
        .as_u64()
        .and_then(|p| u32::try_from(p).ok())
        .filter(|&p| p > 0)
        .ok_or_else(|| anyhow::anyhow!("its design has no pair count"))?;
    let ratios = |cs: &serde_json::Value| -> Vec<Vec<f64>> {
        cs.as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                c["pair_data"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| {
                        let (b, t) = crate::model::PairData::arms_of_json(p)?;
                        let v = (t / b).ln();
                        v.is_finite().then_some(v)
                    })
                    .collect::<Vec<f64>>()
            })
            .filter(|r| !r.is_empty())
            .collect()
    };
    let aa = ratios(&json["aa"]["comparisons"]);
    if aa.is_empty() {
        anyhow::bail!("it holds no A/A comparison with pairs");
    }
    let injected = json["injected"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            Some((
                i["treatment"].as_str()?.to_string(),
                i["truth"]["pct"].as_f64()?,
                ratios(&i["comparisons"]),
            ))
        })
        .collect();
    Ok(StoredPairs {
        budget_pairs,
        seed: design["seed"].as_u64().unwrap_or(0),
        aa,
        injected,
    })
}

/// [`side_by_side`] of `tests` on stored pairs, each test with the stop
/// rule `overhead` would give it under `decision`'s thresholds.
pub fn side_by_side_stored(
    stored: &StoredPairs,
    tests: &[SeqTest],
    decision: &DecisionOpts,
) -> SideBySide {
    let injected: Vec<InjectedPairs> = stored
        .injected
        .iter()
        .map(|(label, truth, cs)| InjectedPairs {
            treatment: label,
            truth_pct: *truth,
            comparisons: cs.clone(),
        })
        .collect();
    let budget = stored.budget_pairs;
    side_by_side(
        tests,
        &stored.aa,
        &injected,
        budget,
        &|test, family, error_rate| {
            let d = DecisionOpts {
                test,
                error_rate,
                ..*decision
            };
            crate::engine::plan::stop_rule(family, Some(budget), &d, None)
        },
        stored.seed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::stop_rule;

    fn rule(test: SeqTest, family: usize, rate: ErrorRate) -> StopRule {
        let d = DecisionOpts {
            test,
            error_rate: rate,
            ..DecisionOpts::default()
        };
        stop_rule(family, Some(32), &d, None)
    }

    /// Normal-ish log ratios from the generator, mean `mu`, sd `sd`.
    fn series(rng: &mut Rng, n: usize, mu: f64, sd: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                // Irwin-Hall: a sum of 12 uniforms minus 6 is close to N(0, 1).
                let z: f64 = (0..12).map(|_| uniform(rng)).sum::<f64>() - 6.0;
                mu + sd * z
            })
            .collect()
    }

    #[test]
    fn replay_stops_where_the_sequential_rule_stops() {
        let r = vec![0.3; 32];
        let t = replay(&r, &rule(SeqTest::T, 1, ErrorRate::Fwer));
        let s = replay(&r, &rule(SeqTest::Sign, 1, ErrorRate::Fwer));
        assert_eq!(t.stopped, StopReason::Slower);
        assert_eq!(s.stopped, StopReason::Slower);
        // The t-test uses the size: fewer pairs than the coin allows.
        assert!(t.pairs < s.pairs, "{} vs {}", t.pairs, s.pairs);
        assert_eq!(s.pairs, 7);
        assert_eq!(t.r.len(), t.pairs);
    }

    #[test]
    fn replay_runs_to_the_budget_when_nothing_settles() {
        let mut rng = Rng::new(3);
        let r = series(&mut rng, 8, 0.0, 0.05);
        let mut rl = rule(SeqTest::Sign, 1, ErrorRate::Fwer);
        rl.max_pairs = 100;
        let d = replay(&r, &rl);
        assert_eq!(d.pairs, 8);
        assert_eq!(d.stopped, StopReason::MaxPairs);
    }

    #[test]
    fn outliers_hit_about_their_share_and_move_by_the_factor() {
        let mut rng = Rng::new(7);
        let r = vec![0.0; 20_000];
        let o = inject_outliers(&r, &mut rng);
        let hit: Vec<f64> = o.iter().copied().filter(|v| *v != 0.0).collect();
        let share = hit.len() as f64 / r.len() as f64;
        assert!((share - OUTLIER_SHARE).abs() < 0.01, "{share}");
        assert!(
            hit.iter()
                .all(|v| v.abs() >= OUTLIER_MIN_FACTOR.ln() && v.abs() <= OUTLIER_MAX_FACTOR.ln())
        );
        let up = hit.iter().filter(|v| **v > 0.0).count() as f64 / hit.len() as f64;
        assert!((up - 0.5).abs() < 0.08, "{up}");
    }

    #[test]
    fn side_by_side_finds_the_effect_and_keeps_the_null() {
        let mut rng = Rng::new(11);
        let aa: Vec<Vec<f64>> = (0..58).map(|_| series(&mut rng, 32, 0.0, 0.03)).collect();
        let eff: Vec<Vec<f64>> = (0..10).map(|_| series(&mut rng, 32, 0.2, 0.03)).collect();
        let truth = 0.2f64.exp_m1() * 100.0;
        let s = side_by_side(
            &[SeqTest::Sign, SeqTest::T],
            &aa,
            &[InjectedPairs {
                treatment: "x",
                truth_pct: truth,
                comparisons: eff,
            }],
            32,
            &rule,
            5,
        );
        assert_eq!(s.rows.len(), 4);
        for row in &s.rows {
            assert_eq!(row.aa_alone.total, 58);
            assert_eq!(row.aa_tables_fwer.total, 2);
            assert!(row.aa_alone.count <= 6, "{row:?}");
            let inj = &row.injected[0];
            assert_eq!(inj.detected.count, 10, "{row:?}");
            assert!(inj.covered.count >= 9, "{row:?}");
            // Mixed tables: 5 of 10 A/A and 19 injected, under e-BH.
            let m = row.mixed_fdr.as_ref().expect("mixed tables");
            assert_eq!(m.tables, 5);
            assert_eq!(m.injected_detected.total, 95);
            assert!(m.injected_detected.count >= 90, "{m:?}");
            assert!(m.mean_fdp <= 0.1, "{m:?}");
        }
        let pairs = |t: SeqTest| {
            s.rows
                .iter()
                .find(|r| r.test == t && !r.outliers)
                .unwrap()
                .injected[0]
                .mean_pairs
        };
        assert!(pairs(SeqTest::T) <= 4.0, "{}", pairs(SeqTest::T));
        assert_eq!(pairs(SeqTest::Sign), 7.0);
    }

    #[test]
    fn a_table_that_settles_everything_keeps_the_fdr_threshold_lower() {
        // 29 clear effects: under the FDR later comparisons stop at a
        // higher rank and so sooner than under the FWER.
        let rs: Vec<Vec<f64>> = (0..SURVEY_TABLE).map(|_| vec![0.3; 32]).collect();
        let fwer = replay_table(&rs, &rule(SeqTest::Sign, SURVEY_TABLE, ErrorRate::Fwer));
        let fdr = replay_table(&rs, &rule(SeqTest::Sign, SURVEY_TABLE, ErrorRate::Fdr));
        assert!(fwer.iter().all(|(_, v)| *v == Verdict::Slower));
        assert!(fdr.iter().all(|(_, v)| *v == Verdict::Slower));
        let total = |t: &[(Replayed, Verdict)]| t.iter().map(|(d, _)| d.pairs).sum::<usize>();
        assert!(
            total(&fdr) < total(&fwer),
            "{} vs {}",
            total(&fdr),
            total(&fwer)
        );
    }
}
