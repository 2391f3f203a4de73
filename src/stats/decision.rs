//! One decision step for a table of comparisons, paired (A/B pairs of one
//! run) or unpaired (stored runs): Holm's correction across the table, the
//! noise band, the equivalence test and the verdict, and the smallest
//! p-value a design can reach, so a report can warn when nothing could be
//! significant. `overhead`, `suite` and `compare` all decide here, with one
//! set of thresholds ([`DecisionOpts`]) validated once.
//!
//! The rule (criterion's, with an equivalence test added): a change is
//! slower or faster only when its corrected p < alpha *and* its whole
//! interval at the table's level lies outside +-noise; it is negligible
//! when a two one-sided test (TOST) shows it lies within +-equivalence and
//! that interval lies within +-equivalence too; otherwise no difference
//! was detected, and the interval says how large one could hide. Every
//! design's interval is its own test's inverted ([`Tested::interval_at`]),
//! so the interval shown and the verdict agree.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::holm::{benjamini_hochberg, holm};
use super::tost::{tost_log_ratios, tost_unpaired_log};

/// What a comparison concludes about the treatment (or the later run).
/// Its one name ("slower", "faster", "no-change", "negligible") is the
/// same in JSON (serde), the store, CSV and every table (strum's
/// `Display`, `IntoStaticStr` and `FromStr`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Serialize,
    Deserialize,
    strum::Display,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Verdict {
    /// Significant (p < alpha) and the whole interval is above 0.
    Slower,
    /// Significant (p < alpha) and the whole interval is below 0.
    Faster,
    /// Anything else: not significant, or the interval straddles 0. Not
    /// "equal": the interval says how large a difference could hide.
    NoChange,
    /// An equivalence test (TOST) shows the change lies inside the
    /// equivalence margin, and the interval shown lies within it: there is
    /// a difference too small to matter, or none. Set by [`decide`], never
    /// by a single test alone.
    Negligible,
}

/// The test of a sequential comparison's log ratios
/// ([`super::sequential`]).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum SeqTest {
    /// The sequential sign test: only the coin that orders each pair is
    /// assumed; at least 6 pairs for one comparison.
    #[default]
    Sign,
    /// The safe t-test ([`super::sequential::safe_t`]): uses the size of
    /// each log ratio, assuming them normal; a clear effect settles in 3
    /// or 4 pairs.
    T,
    /// Both, their e-values averaged (an average of e-processes is one):
    /// about the t-test's pairs on a clear effect, and the sign test's
    /// power when outlier halves inflate the spread the t-test divides by.
    /// Its interval is the intersection of both tests' at alpha / 2.
    Both,
}

/// Which error rate a table's verdicts control.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum ErrorRate {
    /// The family-wise error rate: Holm across the table.
    #[default]
    Fwer,
    /// The false discovery rate: e-BH across the table (Wang & Ramdas,
    /// JRSS-B 2022), on the e-values 1/p of the sequential tests; valid
    /// under any dependence and whenever each comparison stopped.
    Fdr,
}

/// Thresholds of a table's verdicts (the rule in the module header).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecisionOpts {
    pub alpha: f64,
    /// Changes whose interval reaches no further than +-noise_pct from 0
    /// are never called slower or faster (criterion's noise threshold).
    pub noise_pct: f64,
    /// Margin of the equivalence test behind `Negligible`.
    pub equivalence_pct: f64,
    /// The sequential test (absent from plans stored before it existed:
    /// the sign test).
    #[serde(default)]
    pub test: SeqTest,
    /// The error rate the table controls (absent before: FWER).
    #[serde(default)]
    pub error_rate: ErrorRate,
    /// Whether `equivalence_pct` came from this machine's calibrations
    /// (`--equivalence auto`) rather than the command line.
    #[serde(default)]
    pub equivalence_auto: bool,
}

impl Default for DecisionOpts {
    fn default() -> Self {
        DecisionOpts {
            alpha: 0.05,
            noise_pct: 1.0,
            equivalence_pct: 1.0,
            test: SeqTest::Sign,
            error_rate: ErrorRate::Fwer,
            equivalence_auto: false,
        }
    }
}

/// The verdict from a (multiplicity-corrected) p-value, the interval in
/// percent and, when there are pairs, the equivalence test's p-value:
/// slower/faster when p < alpha and the interval lies wholly outside the
/// noise band; negligible when the TOST p < alpha *and* the interval lies
/// wholly within +-equivalence (so that the interval shown beside a
/// negligible verdict never reaches past the margin: at a table's level
/// alpha' this is a TOST at alpha' / 2 on the shown interval);
/// no-change otherwise.
pub fn decide(
    p_value: f64,
    ci_low: f64,
    ci_high: f64,
    tost_p: Option<f64>,
    opts: &DecisionOpts,
) -> Verdict {
    if p_value < opts.alpha && ci_low > opts.noise_pct {
        Verdict::Slower
    } else if p_value < opts.alpha && ci_high < -opts.noise_pct {
        Verdict::Faster
    } else if tost_p.is_some_and(|p| p < opts.alpha)
        && ci_low >= -opts.equivalence_pct
        && ci_high <= opts.equivalence_pct
    {
        Verdict::Negligible
    } else {
        Verdict::NoChange
    }
}

impl DecisionOpts {
    /// Thresholds from the command line, each checked: alpha in (0, 1),
    /// noise in [0, 100), equivalence in (0, 100) percent. Errors name the
    /// flag and say what to give.
    pub fn validated(alpha: f64, noise_pct: f64, equivalence_pct: f64) -> Result<DecisionOpts> {
        if !(alpha > 0.0 && alpha < 1.0) {
            crate::usage_bail!(
                "--alpha {alpha}: give a significance level between 0 and 1 (e.g. 0.05)"
            );
        }
        if !(0.0..100.0).contains(&noise_pct) {
            crate::usage_bail!(
                "--noise {noise_pct}: give a percentage from 0 to below 100 (e.g. 1)"
            );
        }
        if !(equivalence_pct > 0.0 && equivalence_pct < 100.0) {
            crate::usage_bail!(
                "--equivalence {equivalence_pct}: give a margin above 0 and below 100 percent (e.g. 1)"
            );
        }
        Ok(DecisionOpts {
            alpha,
            noise_pct,
            equivalence_pct,
            ..DecisionOpts::default()
        })
    }
}

/// The samples behind one row's equivalence test (and the smallest
/// p-value its design can reach, [`smallest_p`]); a sequential row brings
/// both figures from its confidence sequence instead.
#[derive(Debug, Clone, Copy)]
pub enum Samples<'a> {
    /// Per-pair log ratios ln(treatment / baseline).
    Paired(&'a [f64]),
    /// The two sides' values (baseline first), compared on logs by Welch.
    Unpaired(&'a [f64], &'a [f64]),
    /// A sequential comparison as its confidence sequence sees it, at the
    /// options the table is decided with
    /// ([`super::sequential::row_samples`]): its anytime-valid p-value of
    /// equivalence, and the smallest p-value its pairs could reach.
    Sequential { equivalence_p: f64, smallest_p: f64 },
}

/// A row's interval of the change (%) at another level alpha: the same
/// test's, so that it excludes 0 only where the test's p-value is below
/// that alpha (the sequential tests' confidence sequences and anytime
/// p-values come from one e-process each; the fixed pairs' and the
/// unpaired rows' intervals invert their rank tests, [`paired_interval_at`]
/// and [`unpaired_interval_at`]).
pub type IntervalAt<'a> = &'a dyn Fn(f64) -> Option<(f64, f64)>;

/// An owned [`IntervalAt`], for a table's rows to borrow.
pub type IntervalFn<'a> = Box<dyn Fn(f64) -> Option<(f64, f64)> + 'a>;

/// The interval at a level of fixed pairs' log ratios `r`: the shifts the
/// Wilcoxon signed-rank test keeps, in percent
/// ([`super::rank_interval::signed_rank_interval`]). Its p-value at 0 is
/// [`super::wilcoxon::wilcoxon_signed_rank`]`(r)`, the row's.
pub fn paired_interval_at(r: &[f64]) -> IntervalFn<'_> {
    Box::new(move |a: f64| {
        super::rank_interval::signed_rank_interval(r, a).map(|s| {
            let (_, lo, hi) = s.pct();
            (lo, hi)
        })
    })
}

/// The interval at a level of an unpaired row (baseline `a`, candidate
/// `b`): the shifts Mann-Whitney keeps, in percent
/// ([`super::rank_interval::mann_whitney_interval`]). Its p-value at 0 is
/// [`super::unpaired::mann_whitney_u`]`(a, b)`, the row's.
pub fn unpaired_interval_at<'a>(a: &'a [f64], b: &'a [f64]) -> IntervalFn<'a> {
    Box::new(move |level: f64| {
        super::rank_interval::mann_whitney_interval(a, b, level).map(|s| {
            let (_, lo, hi) = s.pct();
            (lo, hi)
        })
    })
}

/// One row of a table as its own test left it: the raw p-value and the
/// interval of the change, in percent, at the row's own level alpha.
#[derive(Clone, Copy)]
pub struct Tested<'a> {
    pub p_value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub samples: Samples<'a>,
    /// The row's interval at another level, from the same test as
    /// `p_value` (every design gives one: [`IntervalAt`]); None, or None
    /// from it, keeps the row's own interval.
    pub interval_at: Option<IntervalAt<'a>>,
}

/// A row's final decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// Corrected across the table (Holm, or e-BH).
    pub p_value: f64,
    pub verdict: Verdict,
    /// The interval the verdict was decided on and that is shown: at the
    /// table's level [`Decision::alpha`] where the row's test gives one,
    /// else the row's own.
    pub ci_low: f64,
    pub ci_high: f64,
    /// The level of that interval (1 - alpha its confidence): alpha / m
    /// under Holm, alpha x R / m under e-BH with R of the m rows found
    /// slower or faster by the correction (e-BY); the row's own alpha when
    /// it has no other.
    pub alpha: f64,
}

/// The level a table's intervals are shown at, for `m` rows of which
/// `selected` pass the correction: alpha / m under Holm (the simultaneous
/// level of Bonferroni, which Holm's rejections imply), alpha x
/// max(selected, 1) / m under e-BH (e-BY: the false coverage rate over
/// the selected rows is at most alpha). A row's interval at this level
/// excludes 0 only when its p-value is at most the level, which the
/// correction then passes; so an interval clear of the noise band is a
/// verdict, and a verdict's interval is clear of it.
pub fn shown_alpha(alpha: f64, m: usize, selected: usize, rate: ErrorRate) -> f64 {
    let m = m.max(1) as f64;
    match rate {
        ErrorRate::Fwer => alpha / m,
        ErrorRate::Fdr => alpha * selected.max(1) as f64 / m,
    }
}

/// Decides a table: Holm (FWER) or e-BH (FDR) across its rows, then each
/// row's verdict from the adjusted p, its interval at the table's level
/// ([`shown_alpha`]) and its equivalence test.
pub fn decide_table(rows: &[Tested], opts: &DecisionOpts) -> Vec<Decision> {
    let raw: Vec<f64> = rows.iter().map(|r| r.p_value).collect();
    let adjusted = match opts.error_rate {
        ErrorRate::Fwer => holm(&raw),
        // e-BH is Benjamini-Hochberg on p = 1/e.
        ErrorRate::Fdr => benjamini_hochberg(&raw),
    };
    let selected = adjusted.iter().filter(|p| **p < opts.alpha).count();
    let level = shown_alpha(opts.alpha, rows.len(), selected, opts.error_rate);
    rows.iter()
        .zip(adjusted)
        .map(|(r, p)| {
            let (ci_low, ci_high, alpha) = match r.interval_at.and_then(|f| f(level)) {
                Some((lo, hi)) => (lo, hi, level),
                None => (r.ci_low, r.ci_high, opts.alpha),
            };
            let tost = match r.samples {
                Samples::Paired(ratios) => tost_log_ratios(ratios, opts.equivalence_pct),
                Samples::Unpaired(a, b) => tost_unpaired_log(a, b, opts.equivalence_pct),
                Samples::Sequential { equivalence_p, .. } => equivalence_p,
            };
            Decision {
                p_value: p,
                verdict: decide(
                    p,
                    ci_low,
                    ci_high,
                    Some(tost).filter(|t| t.is_finite()),
                    opts,
                ),
                ci_low,
                ci_high,
                alpha,
            }
        })
        .collect()
}

/// The smallest two-sided p-value of the design: 2 / 2^n for the Wilcoxon
/// signed-rank test on n pairs, 2 / C(n1 + n2, n1) for Mann-Whitney on n1
/// and n2 values.
pub fn smallest_p(samples: Samples) -> f64 {
    match samples {
        Samples::Paired(r) => 2.0 / 2f64.powi(r.len().min(1023) as i32),
        Samples::Sequential { smallest_p, .. } => smallest_p,
        Samples::Unpaired(a, b) => 2.0 / binomial(a.len() + b.len(), a.len()),
    }
}

/// Whether any row of a table of `rows` rows whose smallest reachable
/// p-value is `smallest` can be significant after Holm at `alpha`.
pub fn can_be_significant(smallest: f64, rows: usize, alpha: f64) -> bool {
    smallest * (rows.max(1) as f64) < alpha
}

/// Pairs needed so that the smallest Wilcoxon p-value (2 / 2^n) survives
/// Holm correction over `rows` comparisons at `alpha`.
pub fn min_pairs_for(rows: usize, alpha: f64) -> u32 {
    let mut n = 1u32;
    while !can_be_significant(2.0 / 2f64.powi(n as i32), rows, alpha) && n < 64 {
        n += 1;
    }
    n
}

/// C(n, k) as a float (n is at most a few hundred samples).
fn binomial(n: usize, k: usize) -> f64 {
    (0..k.min(n - k)).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

    #[test]
    fn pairs_needed_for_holm() {
        // 2/2^n * m < alpha
        assert_eq!(min_pairs_for(1, 0.05), 6); // 2/64 = 0.031
        assert_eq!(min_pairs_for(28, 0.05), 11); // 28 * 2/2048 = 0.027
        assert_eq!(min_pairs_for(0, 0.05), 6);
    }

    #[test]
    fn smallest_reachable_p() {
        assert_eq!(binomial(10, 5), 252.0);
        assert_eq!(binomial(20, 10), 184_756.0);
        assert_eq!(smallest_p(Samples::Paired(&[0.0; 6])), 2.0 / 64.0);
        let three = [1.0; 3];
        assert_eq!(smallest_p(Samples::Unpaired(&three, &three)), 2.0 / 20.0);
        assert!(!can_be_significant(0.1, 1, 0.05));
        assert!(can_be_significant(0.01, 4, 0.05));
    }

    #[test]
    fn thresholds_are_checked_once_with_the_flag_named() {
        assert!(DecisionOpts::validated(0.05, 0.0, 1.0).is_ok());
        for (a, n, e, flag) in [
            (0.0, 1.0, 1.0, "--alpha"),
            (1.0, 1.0, 1.0, "--alpha"),
            (0.05, -1.0, 1.0, "--noise"),
            (0.05, 100.0, 1.0, "--noise"),
            (0.05, 1.0, 0.0, "--equivalence"),
            (0.05, 1.0, f64::NAN, "--equivalence"),
        ] {
            let err = DecisionOpts::validated(a, n, e).unwrap_err();
            assert_eq!(exit_code(&err), 2);
            assert!(err.to_string().starts_with(flag), "{err}");
        }
    }

    /// Over random tables of sequential comparisons, under both error
    /// rates and every test: a row's shown interval lies wholly outside
    /// the noise band exactly when its verdict is slower or faster, and a
    /// no-change row's interval overlaps the band.
    #[test]
    fn shown_intervals_agree_with_verdicts_over_random_tables() {
        use crate::stats::sequential::{look, overhead_pct, row_samples};
        let mut rng = crate::stats::bootstrap::Rng::new(20261128);
        let mut uniform = || rng.next_u64() as f64 / u64::MAX as f64;
        let mut checked = 0;
        let mut verdicts = [0usize; 2];
        for table in 0..300 {
            let m = 1 + table % 12;
            let rows: Vec<Vec<f64>> = (0..m)
                .map(|_| {
                    let n = 3 + (uniform() * 18.0) as usize;
                    let effect = [0.0, 0.0, 0.01, 0.05, 0.3][(uniform() * 5.0) as usize % 5];
                    let sd = [0.005, 0.02, 0.1][(uniform() * 3.0) as usize % 3];
                    (0..n)
                        .map(|_| {
                            // A sum of uniforms: roughly normal noise.
                            let z: f64 = (0..4).map(|_| uniform() - 0.5).sum::<f64>() * 1.7;
                            effect + sd * z
                        })
                        .collect()
                })
                .collect();
            for test in [SeqTest::Sign, SeqTest::T, SeqTest::Both] {
                for error_rate in [ErrorRate::Fwer, ErrorRate::Fdr] {
                    let opts = DecisionOpts {
                        test,
                        error_rate,
                        ..DecisionOpts::default()
                    };
                    let at: Vec<IntervalFn> = rows
                        .iter()
                        .map(|r| {
                            let r = r.clone();
                            Box::new(move |a: f64| {
                                overhead_pct(&r, a, test).map(|o| (o.ci_low, o.ci_high))
                            }) as IntervalFn
                        })
                        .collect();
                    let tested: Vec<Tested> = rows
                        .iter()
                        .zip(&at)
                        .map(|(r, f)| {
                            let l = look(r, opts.alpha, 0.0, test).unwrap();
                            Tested {
                                p_value: l.p_value,
                                ci_low: l.ci_low.exp_m1() * 100.0,
                                ci_high: l.ci_high.exp_m1() * 100.0,
                                samples: row_samples(r, &opts),
                                interval_at: Some(f.as_ref()),
                            }
                        })
                        .collect();
                    for d in decide_table(&tested, &opts) {
                        let clear = d.ci_low > opts.noise_pct || d.ci_high < -opts.noise_pct;
                        let called = matches!(d.verdict, Verdict::Slower | Verdict::Faster);
                        assert_eq!(
                            clear, called,
                            "table {table}, {test:?}, {error_rate:?}: {d:?}"
                        );
                        verdicts[usize::from(called)] += 1;
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
        assert!(
            verdicts[0] > 1000 && verdicts[1] > 1000,
            "both kinds of rows occur: {verdicts:?}"
        );
    }

    /// Over random tables mixing every kind of row (sequential, fixed
    /// pairs, unpaired), with ties and exact zeros in the data, under both
    /// error rates: a row's shown interval lies wholly outside the noise
    /// band exactly when its verdict is slower or faster, a negligible
    /// row's shown interval lies within the equivalence margin, and the
    /// estimate each design shows lies inside the shown interval.
    #[test]
    fn every_design_shows_intervals_that_agree_with_verdicts() {
        use crate::stats::paired::overhead_by_ranks;
        use crate::stats::rank_interval::mann_whitney_interval;
        use crate::stats::sequential::{look, overhead_pct, row_samples};
        enum Row {
            Sequential(Vec<f64>),
            Paired(Vec<f64>),
            Unpaired(Vec<f64>, Vec<f64>),
        }
        // A row as its design measures it: p, own interval, estimate
        // shown, samples, interval at a level.
        type Measured<'a> = (f64, (f64, f64), f64, Samples<'a>, IntervalFn<'a>);
        let mut rng = crate::stats::bootstrap::Rng::new(36);
        let mut uniform = || rng.next_u64() as f64 / u64::MAX as f64;
        let mut verdicts = std::collections::BTreeMap::new();
        let mut kinds = [0usize; 3];
        for table in 0..360 {
            let m = 1 + table % 12;
            let test = [SeqTest::Sign, SeqTest::T, SeqTest::Both][table % 3];
            let rows: Vec<Row> = (0..m)
                .map(|_| {
                    let effect =
                        [0.0, 0.0, 0.005, -0.02, 0.3, -0.3][(uniform() * 6.0) as usize % 6];
                    let sd = [0.002, 0.01, 0.05][(uniform() * 3.0) as usize % 3];
                    // Rounded to a grid: ties, and exact zeros when there
                    // is no effect.
                    let grid = [1e-4, 2e-3, 1e-2][(uniform() * 3.0) as usize % 3];
                    let n = 3 + (uniform() * 20.0) as usize;
                    let k = 2 + (uniform() * 12.0) as usize;
                    let kind = (uniform() * 3.0) as usize % 3;
                    let mut draw = |n: usize, centre: f64| -> Vec<f64> {
                        (0..n)
                            .map(|_| {
                                let z: f64 = (0..4).map(|_| uniform() - 0.5).sum::<f64>() * 1.7;
                                ((centre + sd * z) / grid).round() * grid
                            })
                            .collect()
                    };
                    match kind {
                        0 => Row::Sequential(draw(n, effect)),
                        1 => Row::Paired(draw(n, effect)),
                        _ => {
                            let exp = |v: Vec<f64>| v.into_iter().map(f64::exp).collect();
                            Row::Unpaired(exp(draw(n, 0.0)), exp(draw(k, effect)))
                        }
                    }
                })
                .collect();
            for error_rate in [ErrorRate::Fwer, ErrorRate::Fdr] {
                let opts = DecisionOpts {
                    test,
                    error_rate,
                    ..DecisionOpts::default()
                };
                let measured: Vec<Measured> = rows
                    .iter()
                    .map(|row| match row {
                        Row::Sequential(r) => {
                            let own = overhead_pct(r, opts.alpha, test).unwrap();
                            let l = look(r, opts.alpha, 0.0, test).unwrap();
                            let r2 = r.clone();
                            (
                                l.p_value,
                                (own.ci_low, own.ci_high),
                                own.estimate,
                                row_samples(r, &opts),
                                Box::new(move |a: f64| {
                                    overhead_pct(&r2, a, test).map(|o| (o.ci_low, o.ci_high))
                                }) as IntervalFn,
                            )
                        }
                        Row::Paired(r) => {
                            let own = overhead_by_ranks(r, 0.05).unwrap();
                            (
                                own.p_value,
                                (own.ci_low, own.ci_high),
                                own.estimate,
                                Samples::Paired(r),
                                paired_interval_at(r),
                            )
                        }
                        Row::Unpaired(a, b) => {
                            let (e, lo, hi) =
                                mann_whitney_interval(a, b, opts.alpha).unwrap().pct();
                            (
                                crate::stats::unpaired::mann_whitney_u(a, b),
                                (lo, hi),
                                e,
                                Samples::Unpaired(a, b),
                                unpaired_interval_at(a, b),
                            )
                        }
                    })
                    .collect();
                let tested: Vec<Tested> = measured
                    .iter()
                    .map(|(p, own, _, samples, at)| Tested {
                        p_value: *p,
                        ci_low: own.0,
                        ci_high: own.1,
                        samples: *samples,
                        interval_at: Some(at.as_ref()),
                    })
                    .collect();
                for ((d, (_, _, estimate, samples, _)), kind) in decide_table(&tested, &opts)
                    .into_iter()
                    .zip(&measured)
                    .zip(&rows)
                {
                    let what =
                        format!("table {table}, {test:?}, {error_rate:?}, {samples:?}: {d:?}");
                    let clear = d.ci_low > opts.noise_pct || d.ci_high < -opts.noise_pct;
                    let called = matches!(d.verdict, Verdict::Slower | Verdict::Faster);
                    assert_eq!(clear, called, "{what}");
                    if d.verdict == Verdict::Negligible {
                        assert!(
                            d.ci_low >= -opts.equivalence_pct && d.ci_high <= opts.equivalence_pct,
                            "{what}"
                        );
                    }
                    assert!(
                        d.ci_low <= *estimate && *estimate <= d.ci_high,
                        "{estimate}, {what}"
                    );
                    *verdicts.entry(d.verdict.to_string()).or_insert(0) += 1;
                    kinds[match kind {
                        Row::Sequential(_) => 0,
                        Row::Paired(_) => 1,
                        Row::Unpaired(..) => 2,
                    }] += 1;
                }
            }
        }
        assert!(kinds.iter().all(|&k| k > 500), "{kinds:?}");
        for v in ["slower", "faster", "negligible", "no-change"] {
            assert!(verdicts.get(v).is_some_and(|&n| n > 50), "{verdicts:?}");
        }
    }

    #[test]
    fn a_table_is_corrected_then_decided() {
        let slow: Vec<f64> = (0..12)
            .map(|i| (1.10 + (i % 3) as f64 * 0.001f64).ln())
            .collect();
        let same: Vec<f64> = (0..12)
            .map(|i| (1.0 + ((i % 5) as f64 - 2.0) * 0.0005f64).ln())
            .collect();
        let d = decide_table(
            &[
                Tested {
                    p_value: 0.0005,
                    ci_low: 9.9,
                    ci_high: 10.3,
                    samples: Samples::Paired(&slow),
                    interval_at: None,
                },
                Tested {
                    p_value: 0.9,
                    ci_low: -0.2,
                    ci_high: 0.2,
                    samples: Samples::Paired(&same),
                    interval_at: None,
                },
            ],
            &DecisionOpts::default(),
        );
        assert!((d[0].p_value - 0.001).abs() < 1e-12);
        assert_eq!(d[0].verdict, Verdict::Slower);
        assert_eq!(d[1].verdict, Verdict::Negligible);
    }
}
