//! A table of sequential comparisons measured in rounds: one pair of every
//! comparison still running per round, and after each round one joint
//! decision of which of them stop.
//!
//! Why rounds: under the FDR a comparison may stop as slower or faster once
//! its e-value would put it in the table's final e-BH rejection set. Run
//! one after the other, a comparison only knows the discoveries *before*
//! it, so the first clear effect of a table of 29 needs an e-value of
//! 29 / 0.05 = 580, the second 290, and so on; the clear effects early in a
//! survey paid for the ones after them. In rounds, the clear effects of the
//! whole table reach the e-BH threshold together: with 19 of 29 settling in
//! the same round, each needs 29 / (0.05 x 19), about 31.
//!
//! The rule after each round ([`settle_round`]), under the FDR: the
//! *candidates* are the running comparisons that would be slower or
//! faster at the most lenient threshold (their interval clear of the noise
//! band, their p-value at most alpha). e-BH runs over the candidates and
//! the discoveries already stopped (frozen at the e-values they stopped
//! with); the candidates in its rejection set stop, each as slower or
//! faster. Every comparison then keeps the e-value it stopped with, and
//! each stopped discovery's e-value is at least family / (alpha x R) where
//! R is the number of discoveries stopped by then: the rejection sets only
//! grow, so the final e-BH over the stopped e-values keeps every one of
//! them. The other running comparisons are asked [`super::settled`] as one
//! comparison alone, at the rank they would take (the discoveries stopped,
//! plus one): negligible, precision, budget, futility.
//!
//! Validity: e-BH holds under any dependence between the e-values, and a
//! comparison's e-process stays one when its stopping time depends on the
//! other comparisons' pairs, because each pair's AB/BA coin is fresh: under
//! the null the next log ratio is symmetric about 0 whatever was measured
//! before, in any comparison. Under the FWER the rank is always 1 (the
//! Bonferroni bound behind Holm) and rounds change only the order of
//! measurement.

use super::{StopReason, StopRule, look, settled, settled_now};
use crate::stats::decision::ErrorRate;

/// One comparison of a table between rounds.
#[derive(Debug, Clone, Copy)]
pub struct Lane<'a> {
    /// Its log ratios so far.
    pub r: &'a [f64],
    /// Its stopping rule (`family`: the table's size).
    pub rule: &'a StopRule,
    /// A stop that is never undone (negligible, precision, futile, the
    /// budget, interrupted); None while it runs or is paused as a
    /// discovery.
    pub hard: Option<StopReason>,
}

/// Whether `s` is a discovery (slower or faster).
pub fn is_discovery(s: Option<StopReason>) -> bool {
    matches!(s, Some(StopReason::Slower | StopReason::Faster))
}

/// The joint stopping rule of a table measured in rounds; it remembers
/// how optimistic it may still be.
#[derive(Debug, Clone)]
pub struct Rounds {
    /// The most discoveries the rule may still count on before they are
    /// there (lowered when a table ran out of running comparisons with
    /// fewer than counted on).
    cap: usize,
}

impl Rounds {
    pub fn new(lanes: usize) -> Rounds {
        Rounds { cap: lanes }
    }

    /// After a round: every lane's state. Some(slower or faster): paused
    /// as a discovery (resumed, None, should the table's discoveries fall
    /// below what it needs); Some(any other reason): stopped for good
    /// (the caller keeps it in [`Lane::hard`]); None: it needs another
    /// pair. The table is done when every lane is Some, and then every
    /// discovery is one of the final e-BH (or Holm) over the e-values the
    /// lanes stopped with.
    pub fn settle(&mut self, lanes: &[Lane]) -> Vec<Option<StopReason>> {
        let fdr = lanes
            .iter()
            .any(|l| l.rule.decision.error_rate == ErrorRate::Fdr);
        if !fdr {
            return lanes
                .iter()
                .map(|l| l.hard.or_else(|| settled(l.r, l.rule)))
                .collect();
        }
        let p: Vec<f64> = lanes
            .iter()
            .map(|l| {
                let d = &l.rule.decision;
                look(l.r, d.alpha, 0.0, d.test).map_or(1.0, |look| look.p_value)
            })
            .collect();
        let k_star = bh_size(&p, lanes);
        // The lanes significant alone, their interval clear of the noise
        // band: the discoveries the table may count on.
        let hopeful = lanes
            .iter()
            .filter(|l| {
                let lenient = StopRule {
                    rank: l.rule.family.max(1),
                    ..*l.rule
                };
                is_discovery(settled_now(l.r, &lenient))
            })
            .count();
        loop {
            let k = k_star.max(hopeful.min(self.cap)).max(1) as u32;
            let state: Vec<Option<StopReason>> = lanes
                .iter()
                .map(|l| {
                    let at = StopRule { rank: k, ..*l.rule };
                    l.hard.or_else(|| {
                        if l.r.len() < l.rule.min_pairs as usize {
                            return None;
                        }
                        settled_now(l.r, &at)
                            .filter(|s| is_discovery(Some(*s)))
                            .or_else(|| settled(l.r, &at))
                    })
                })
                .collect();
            let short = state.iter().zip(&p).zip(lanes).any(|((s, p), l)| {
                l.hard.is_none()
                    && is_discovery(*s)
                    && *p * l.rule.family.max(1) as f64 / k_star.max(1) as f64
                        > l.rule.decision.alpha
            });
            if state.iter().all(Option::is_some) && short && self.cap > k_star {
                // Every lane stopped, but fewer discoveries than counted
                // on: count on no more than there are, and go on.
                self.cap = k_star;
                continue;
            }
            return state;
        }
    }
}

/// The size of the e-BH rejection set of p-values `p` (1 / e-value),
/// every lane counted as `decide_table` counts it.
fn bh_size(p: &[f64], lanes: &[Lane]) -> usize {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    order
        .iter()
        .enumerate()
        .filter(|(k, i)| {
            let rule = lanes[**i].rule;
            p[**i] <= rule.decision.alpha * (k + 1) as f64 / rule.family.max(1) as f64
        })
        .map(|(k, _)| k + 1)
        .max()
        .unwrap_or(0)
}

/// Runs a table in rounds on log ratios known in advance (a replay, and
/// the tests): each lane's budget is its pairs. Returns each lane's pairs
/// used and why it stopped.
pub fn run_table(table: &[Vec<f64>], rule: &StopRule) -> Vec<(usize, StopReason)> {
    let mut n = vec![0usize; table.len()];
    let mut hard: Vec<Option<StopReason>> = vec![None; table.len()];
    let mut state: Vec<Option<StopReason>> = vec![None; table.len()];
    let mut rounds = Rounds::new(table.len());
    while state.iter().any(Option::is_none) {
        for (i, s) in state.iter().enumerate() {
            if s.is_none() {
                n[i] += 1;
            }
        }
        let lanes: Vec<Lane> = table
            .iter()
            .zip(&n)
            .zip(&hard)
            .map(|((r, &n), &h)| Lane {
                r: &r[..n],
                rule,
                hard: h,
            })
            .collect();
        state = rounds.settle(&lanes);
        for (i, s) in state.iter_mut().enumerate() {
            if s.is_none() && n[i] >= table[i].len() {
                *s = Some(StopReason::MaxPairs);
            }
            if s.is_some() && !is_discovery(*s) {
                hard[i] = *s;
            }
        }
    }
    n.into_iter()
        .zip(state.into_iter().map(|s| s.unwrap_or(StopReason::MaxPairs)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::decision::{DecisionOpts, SeqTest};

    fn rule(family: u32, error_rate: ErrorRate) -> StopRule {
        StopRule {
            min_pairs: 2,
            max_pairs: 32,
            family,
            decision: DecisionOpts {
                test: SeqTest::Both,
                error_rate,
                ..DecisionOpts::default()
            },
            precision_pct: None,
            rank: 1,
        }
    }

    /// `n` log ratios near `effect` (a fixed wobble of +-`noise`).
    fn pairs(effect: f64, noise: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| effect + noise * ((i * 7 % 5) as f64 - 2.0) / 2.0)
            .collect()
    }

    fn run(table: &[Vec<f64>], rule: &StopRule) -> Vec<(usize, StopReason)> {
        run_table(table, rule)
    }

    /// 19 clear effects and 10 nulls, as in the survey.
    fn survey() -> Vec<Vec<f64>> {
        let mut t: Vec<Vec<f64>> = (0..19).map(|_| pairs(0.25, 0.08, 32)).collect();
        t.extend((0..10).map(|i| {
            (0..32)
                .map(|j| if (i + j) % 2 == 0 { 0.04 } else { -0.05 })
                .collect()
        }));
        t
    }

    #[test]
    fn clear_effects_settle_together_under_the_fdr() {
        let table = survey();
        let fdr = run(&table, &rule(29, ErrorRate::Fdr));
        let fwer = run(&table, &rule(29, ErrorRate::Fwer));
        for (i, ((n_fdr, s_fdr), (n_fwer, s_fwer))) in fdr.iter().zip(&fwer).take(19).enumerate() {
            assert_eq!(*s_fdr, StopReason::Slower, "lane {i}");
            assert_eq!(*s_fwer, StopReason::Slower, "lane {i}");
            // All 19 in the same round, and sooner than at Bonferroni's
            // threshold.
            assert_eq!(*n_fdr, fdr[0].0, "lane {i}");
            assert!(n_fdr < n_fwer, "fdr {n_fdr} vs fwer {n_fwer}");
        }
        // 6: the interval judged is the one the table shows, at alpha x
        // 19 / 29 (e-BY), a pair later than at alpha (5).
        assert!(fdr[0].0 <= 6, "{fdr:?}");
        for (i, (_, s)) in fdr.iter().enumerate().skip(19) {
            assert!(
                !matches!(s, StopReason::Slower | StopReason::Faster),
                "null lane {i}: {s:?}"
            );
        }
    }

    #[test]
    fn every_stopped_discovery_survives_the_final_e_bh() {
        // Effects of every size: whatever stopped as a discovery must be
        // rejected by e-BH on the e-values the comparisons stopped with.
        let table: Vec<Vec<f64>> = (0..29).map(|i| pairs(0.01 * i as f64, 0.06, 32)).collect();
        let r = rule(29, ErrorRate::Fdr);
        let (result, ps, k_star) = final_e_bh(&table, &r);
        let stopped_discoveries = result
            .iter()
            .filter(|(_, s)| matches!(s, StopReason::Slower | StopReason::Faster))
            .count();
        assert!(stopped_discoveries > 5, "{result:?}");
        assert!(
            k_star >= stopped_discoveries,
            "{k_star} < {stopped_discoveries}"
        );
        for ((_, s), p) in result.iter().zip(&ps) {
            if matches!(s, StopReason::Slower | StopReason::Faster) {
                assert!(*p <= 0.05 * k_star as f64 / 29.0, "{p}");
            }
        }
    }

    #[test]
    fn a_lone_comparison_stops_as_settled_says() {
        let r = rule(1, ErrorRate::Fdr);
        let x = pairs(0.2, 0.05, 32);
        for n in 1..=32 {
            let state = Rounds::new(1).settle(&[Lane {
                r: &x[..n],
                rule: &r,
                hard: None,
            }]);
            let alone = if n < r.min_pairs as usize {
                None
            } else {
                settled(&x[..n], &r)
            };
            assert_eq!(state[0], alone, "n = {n}");
        }
    }

    #[test]
    fn hard_stops_stay_and_short_lanes_wait() {
        let r = rule(2, ErrorRate::Fdr);
        let x = pairs(0.0, 0.01, 3);
        let out = Rounds::new(2).settle(&[
            Lane {
                r: &x,
                rule: &r,
                hard: Some(StopReason::Futile),
            },
            Lane {
                r: &x[..1],
                rule: &r,
                hard: None,
            },
        ]);
        assert_eq!(out[0], Some(StopReason::Futile));
        assert_eq!(out[1], None, "below min_pairs");
    }

    /// (pairs, reason) per lane and the final e-BH size over the e-values
    /// the lanes stopped with.
    fn final_e_bh(table: &[Vec<f64>], r: &StopRule) -> (Vec<(usize, StopReason)>, Vec<f64>, usize) {
        let result = run(table, r);
        let ps: Vec<f64> = table
            .iter()
            .zip(&result)
            .map(|(t, (n, _))| look(&t[..*n], 0.05, 0.0, SeqTest::Both).unwrap().p_value)
            .collect();
        let mut sorted = ps.clone();
        sorted.sort_by(f64::total_cmp);
        let m = table.len();
        let k_star = (1..=m)
            .filter(|&k| sorted[k - 1] <= 0.05 * k as f64 / m as f64)
            .max()
            .unwrap_or(0);
        (result, ps, k_star)
    }

    #[test]
    fn lanes_counted_on_but_falling_short_are_resumed() {
        // Ten lanes start like clear effects and then turn into noise, so
        // the table counts on discoveries it will not get; two real ones.
        let mut table: Vec<Vec<f64>> = (0..10)
            .map(|i| {
                (0..32)
                    .map(|j| match j {
                        0..3 => 0.25 + 0.01 * i as f64,
                        _ if (i + j) % 2 == 0 => 0.3,
                        _ => -0.3,
                    })
                    .collect()
            })
            .collect();
        table.extend((0..2).map(|_| pairs(0.3, 0.05, 32)));
        let r = rule(12, ErrorRate::Fdr);
        let (result, ps, k_star) = final_e_bh(&table, &r);
        for ((n, s), p) in result.iter().zip(&ps) {
            if matches!(s, StopReason::Slower | StopReason::Faster) {
                assert!(
                    *p <= 0.05 * k_star as f64 / 12.0,
                    "{n} pairs, p {p}: {result:?}"
                );
            }
        }
        assert_eq!(result[10].1, StopReason::Slower, "{result:?}");
        assert_eq!(result[11].1, StopReason::Slower, "{result:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Whatever the effects and the noise, every lane that stops as a
        /// discovery is one of the final e-BH over the e-values the lanes
        /// stopped with.
        #[test]
        fn discoveries_are_those_of_the_final_e_bh(
            lanes in proptest::collection::vec((0usize..5, 0.02f64..0.3), 6..20),
            seed in 0u64..1000,
        ) {
            let mut rng = crate::stats::bootstrap::Rng::new(seed);
            let effects = [0.0, 0.02, 0.05, 0.1, 0.3];
            let table: Vec<Vec<f64>> = lanes
                .iter()
                .map(|&(e, sd)| {
                    (0..24)
                        .map(|_| {
                            // A sum of uniforms: roughly normal, sd `sd`.
                            let u: f64 = (0..12).map(|_| rng.below(10_000) as f64 / 10_000.0).sum();
                            effects[e] + sd * (u - 6.0)
                        })
                        .collect()
                })
                .collect();
            let mut r = rule(table.len() as u32, ErrorRate::Fdr);
            r.max_pairs = 24;
            let (result, ps, k_star) = final_e_bh(&table, &r);
            let m = table.len() as f64;
            for ((n, s), p) in result.iter().zip(&ps) {
                if matches!(s, StopReason::Slower | StopReason::Faster) {
                    proptest::prop_assert!(
                        *p <= 0.05 * k_star as f64 / m,
                        "{} pairs, p {}, k* {}: {:?}", n, p, k_star, result
                    );
                }
            }
        }
    }
}
