//! The sequential design: a comparison looks at its pairs after every pair
//! and stops as soon as its verdict is settled, with error control that
//! stays valid however often it looks and whenever it stops.
//!
//! The tool is an *anytime-valid confidence sequence* for the median of the
//! per-pair log ratios r = ln(treatment / baseline), from the sequential
//! sign test (Howard & Ramdas, "Sequential estimation of quantiles with
//! applications to A/B-testing and best-arm identification", Bernoulli
//! 28(3), 2022; the mixture idea is Robbins', 1970):
//!
//! * For a candidate median m, the indicators 1{r_i < m} are independent
//!   fair coins when m is the true median (pairs are independent, values
//!   continuous). Their likelihood ratio against a Bernoulli(p) alternative,
//!   mixed over p ~ Beta(1/2, 1/2) (Jeffreys), is
//!   E_t(m) = 2^t B(1/2 + k, 1/2 + t - k) / B(1/2, 1/2) after t pairs with
//!   k of them below m: a nonnegative martingale with mean 1 under the
//!   null. By Ville's inequality, P(E_t(m) >= 1/alpha at *any* t) <= alpha.
//! * The confidence sequence is every m with E_t(m) < 1/alpha: an interval
//!   between two order statistics of r, covering the median at every t at
//!   once with probability >= 1 - alpha. The p-value of "no difference" is
//!   1 / E_t(0), valid at any stopping time, so Holm's correction across a
//!   table still applies. "Negligible" is the equivalence test: every m
//!   outside +-margin rejected (two one-sided tests, each level alpha).
//!
//! Why this and not group-sequential alpha spending: alpha spending needs
//! the looks fixed in advance and a normal test statistic, while timings on
//! a noisy machine have heavy tails (a preempted half) that secperf's
//! median already ignores; the sign-based sequence makes no assumption on
//! the distribution beyond independent pairs, allows a look after every
//! pair, and is exact rather than asymptotic. The price is width: at the
//! same number of pairs its interval is wider than the fixed design's
//! (order statistics 14..35 of 48 instead of 17..32), which early stopping
//! more than pays back on clear effects.
//!
//! [`settled`] is the stopping rule: slower or faster (the p-value beats
//! alpha / comparisons, Bonferroni, so the verdict survives Holm, and the
//! interval lies outside the noise band), negligible, or an interval as
//! narrow as the precision asked for; and futility, when not even the most
//! favourable remaining pairs could get there within the budget.

use serde::{Deserialize, Serialize};

use super::decision::{DecisionOpts, ErrorRate, Samples, SeqTest, Verdict, decide};
use super::tdist::ln_beta;

/// The Beta(a, a) mixing prior's parameter: 1/2 is Jeffreys' prior (the
/// Krichevsky-Trofimov mixture), which puts enough weight near p = 0 and 1
/// that a clear effect is decided as early as the fixed design's exact
/// Wilcoxon test (12 pairs for a table of 29 at alpha 0.05).
pub const PRIOR: f64 = 0.5;

/// ln E_t after `t` pairs with `k` below the candidate (k may be a half
/// when a value equals the candidate).
pub fn ln_e_value(t: usize, k: f64) -> f64 {
    let t_f = t as f64;
    t_f * std::f64::consts::LN_2 + ln_beta(PRIOR + k, PRIOR + t_f - k) - ln_beta(PRIOR, PRIOR)
}

/// ln of the one-sided e-value after `t` pairs with `k` below the
/// candidate: the same mixture restricted to p > 1/2 (`upper`: evidence
/// that the candidate lies above the median) or p < 1/2, renormalised:
/// 2 E_t P(p on that side | data) under the Beta(1/2 + k, 1/2 + t - k)
/// posterior. For each p on that side the likelihood ratio is a
/// supermartingale whenever the true P(r < m) is on the other side or
/// 1/2, so this tests the one-sided null. The two-sided E_t is the mean
/// of the two.
pub fn ln_e_one_sided(t: usize, k: f64, upper: bool) -> f64 {
    let t_f = t as f64;
    let (a, b) = if upper {
        (PRIOR + t_f - k, PRIOR + k)
    } else {
        (PRIOR + k, PRIOR + t_f - k)
    };
    // P(p > 1/2) under Beta(k + 1/2, t - k + 1/2) is I_{1/2}(t - k + 1/2, k + 1/2).
    let side = super::tdist::reg_inc_beta(a, b, 0.5);
    ln_e_value(t, k) + (2.0 * side).ln()
}

/// Pairs below `m` in sorted `r`, a tie counting one half.
fn count_below(sorted: &[f64], m: f64) -> f64 {
    let below = sorted.partition_point(|v| *v < m);
    let at_or_below = sorted.partition_point(|v| *v <= m);
    below as f64 + (at_or_below - below) as f64 / 2.0
}

/// What the sequence says after the pairs so far, in log-ratio units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    pub pairs: usize,
    /// Median of r.
    pub median: f64,
    /// The (1 - alpha) confidence sequence at this look (infinite while too
    /// few pairs exclude anything).
    pub ci_low: f64,
    pub ci_high: f64,
    /// Anytime-valid p-value of "median 0" (no difference).
    pub p_value: f64,
    /// Anytime-valid p-value of "the median lies outside +-margin".
    pub equivalence_p: f64,
}

/// The look at log ratios `r` (any order; NaN-free) at level `alpha` with
/// an equivalence margin of `margin` (log units), by `test`. None for no
/// pairs.
pub fn look(r: &[f64], alpha: f64, margin: f64, test: SeqTest) -> Option<Look> {
    match test {
        SeqTest::Sign => look_sign(r, alpha, margin),
        SeqTest::T => look_t(r, alpha, margin),
        SeqTest::Both => look_both(r, alpha, margin),
    }
}

/// [`look`] by both tests: the e-value of "no difference" is the mean of
/// the sign test's and the t-test's (an e-process under the sign test's
/// null when the t-test's holds too), the interval the intersection of
/// their confidence sequences at alpha / 2 each (Bonferroni: it covers
/// with probability at least 1 - alpha), the estimate the median of the
/// log ratios (kept inside the interval), and equivalence shown when
/// either test shows it at alpha / 2.
fn look_both(r: &[f64], alpha: f64, margin: f64) -> Option<Look> {
    let s = look_sign(r, alpha / 2.0, margin)?;
    let t = look_t(r, alpha / 2.0, margin)?;
    let mut sorted = r.to_vec();
    sorted.sort_by(f64::total_cmp);
    let ln_e_sign = ln_e_value(sorted.len(), count_below(&sorted, 0.0));
    let ln_e_t = safe_t::ln_e_at(r, 0.0);
    let top = ln_e_sign.max(ln_e_t);
    let ln_mean = top + (((ln_e_sign - top).exp() + (ln_e_t - top).exp()) / 2.0).ln();
    let (mut ci_low, mut ci_high) = (s.ci_low.max(t.ci_low), s.ci_high.min(t.ci_high));
    if ci_low > ci_high {
        // Disjoint (a 1-in-alpha event): keep both, the union's hull.
        (ci_low, ci_high) = (s.ci_low.min(t.ci_low), s.ci_high.max(t.ci_high));
    }
    Some(Look {
        pairs: s.pairs,
        median: s.median.clamp(ci_low, ci_high),
        ci_low,
        ci_high,
        p_value: (-ln_mean).exp().min(1.0),
        equivalence_p: (2.0 * s.equivalence_p.min(t.equivalence_p)).min(1.0),
    })
}

/// [`look`] by the safe t-test: the mean of `r` as the estimate (the
/// `median` field), its confidence sequence, p = 1/E at 0, and
/// equivalence when the e-values at both +-margin reach 1/alpha with the
/// mean between them (the e-value grows with the distance from the mean,
/// so every m beyond them is rejected too).
fn look_t(r: &[f64], alpha: f64, margin: f64) -> Option<Look> {
    if r.is_empty() {
        return None;
    }
    let mean = r.iter().sum::<f64>() / r.len() as f64;
    let (ci_low, ci_high) = safe_t::interval(r, alpha);
    let p_at = |m: f64| (-safe_t::ln_e_at(r, m)).exp().min(1.0);
    let equivalence_p = if mean.abs() < margin {
        p_at(margin).max(p_at(-margin))
    } else {
        1.0
    };
    Some(Look {
        pairs: r.len(),
        median: mean,
        ci_low,
        ci_high,
        p_value: p_at(0.0),
        equivalence_p,
    })
}

/// [`look`] by the sign test.
fn look_sign(r: &[f64], alpha: f64, margin: f64) -> Option<Look> {
    let median = super::median(r)?;
    let mut s = r.to_vec();
    s.sort_by(f64::total_cmp);
    let t = s.len();
    let bar = (1.0 / alpha).ln();
    // Between the j-th and (j+1)-th order statistic k = j: keep the j whose
    // E stays below the bar (a run around t/2, since ln E is convex and
    // symmetric in k); the interval is their closure.
    let kept: Vec<usize> = (0..=t).filter(|&j| ln_e_value(t, j as f64) < bar).collect();
    let (ci_low, ci_high) = match (kept.first(), kept.last()) {
        (Some(&lo), Some(&hi)) => (
            if lo == 0 {
                f64::NEG_INFINITY
            } else {
                s[lo - 1]
            },
            if hi == t { f64::INFINITY } else { s[hi] },
        ),
        _ => (median, median),
    };
    let p_at = |k: f64| (-ln_e_value(t, k)).exp().min(1.0);
    // Equivalence is two one-sided tests, each at alpha: "the median is
    // at least +margin" is rejected by the one-sided e-value, which grows
    // with k, so its smallest over every m >= margin is at k(margin); and
    // likewise below -margin.
    let p_above = (-ln_e_one_sided(t, count_below(&s, margin), true))
        .exp()
        .min(1.0);
    let p_below = (-ln_e_one_sided(t, count_below(&s, -margin), false))
        .exp()
        .min(1.0);
    Some(Look {
        pairs: t,
        median,
        ci_low,
        ci_high,
        p_value: p_at(count_below(&s, 0.0)),
        equivalence_p: p_above.max(p_below),
    })
}

/// The fewest pairs at which the sequence at `alpha` can be finite (all
/// pairs on one side reach 1/alpha).
pub fn first_finite(alpha: f64) -> usize {
    let bar = (1.0 / alpha).ln();
    (1..10_000)
        .find(|&t| ln_e_value(t, 0.0) >= bar)
        .unwrap_or(10_000)
}

/// The fewest pairs at which a comparison in a table of `family` can be
/// slower or faster (all pairs on one side beat alpha / family).
pub fn min_pairs_to_decide(family: usize, alpha: f64) -> usize {
    first_finite(alpha / family.max(1) as f64)
}

/// [`first_finite`] for `test`.
pub fn first_finite_by(alpha: f64, test: SeqTest) -> usize {
    match test {
        SeqTest::Sign => first_finite(alpha),
        SeqTest::T => safe_t::first_finite(alpha),
        SeqTest::Both => first_finite(alpha / 2.0).min(safe_t::first_finite(alpha / 2.0)),
    }
}

/// [`min_pairs_to_decide`] for `test`.
pub fn min_pairs_to_decide_by(family: usize, alpha: f64, test: SeqTest) -> usize {
    first_finite_by(alpha / family.max(1) as f64, test)
}

/// Why a sequential comparison stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Slower beyond the noise band, significant even after Bonferroni.
    Slower,
    /// Faster beyond the noise band, likewise.
    Faster,
    /// Shown to lie within the equivalence margin.
    Negligible,
    /// The interval became as narrow as `--precision`.
    Precision,
    /// Unsettled at the per-comparison budget.
    MaxPairs,
    /// Stopped before the budget because not even the most favourable
    /// remaining pairs could settle it.
    Futile,
    /// The run stopped (Ctrl-C, a failing half) before the comparison
    /// ended; its figures are from the pairs finished before that.
    Interrupted,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Slower => "settled: slower",
            StopReason::Faster => "settled: faster",
            StopReason::Negligible => "settled: negligible",
            StopReason::Precision => "precision reached",
            StopReason::MaxPairs => "budget reached, unsettled",
            StopReason::Futile => "unsettled, and the budget could not settle it",
            StopReason::Interrupted => "the run stopped inside it (interrupted or failed)",
        }
    }
}

/// When a sequential comparison stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Pairs measured before the first look.
    pub min_pairs: u32,
    /// The per-comparison budget.
    pub max_pairs: u32,
    /// Comparisons in the table (Holm's family): a comparison stops as
    /// slower or faster only when its p-value beats alpha / family.
    pub family: u32,
    pub decision: DecisionOpts,
    /// Stop when the interval's half-width is at most this, percent.
    pub precision_pct: Option<f64>,
    /// Under the FDR (e-BH): the size of the table's rejection set this
    /// comparison would join if it settled now; its e-value then needs
    /// family / (alpha x rank). A table measured in rounds sets it after
    /// every round ([`rounds::settle_round`]: the discoveries already
    /// stopped plus the candidates stopping with it), which keeps every
    /// comparison stopped as slower or faster a discovery of the final
    /// e-BH. 1 under the FWER.
    #[serde(default = "first_rank")]
    pub rank: u32,
}

fn first_rank() -> u32 {
    1
}

fn pct(log: f64) -> f64 {
    log.exp_m1() * 100.0
}

/// The margin of the equivalence test in log units.
pub fn margin(equivalence_pct: f64) -> f64 {
    (equivalence_pct / 100.0).ln_1p()
}

/// Whether the comparison with log ratios `r` so far is settled under
/// `rule`; None to go on (also below `min_pairs`). At `max_pairs` the
/// answer is always Some.
pub fn settled(r: &[f64], rule: &StopRule) -> Option<StopReason> {
    if r.len() < rule.min_pairs as usize {
        return None;
    }
    if let Some(reason) = settled_now(r, rule) {
        return Some(reason);
    }
    if r.len() >= rule.max_pairs as usize {
        return Some(StopReason::MaxPairs);
    }
    // Futility: when not even the most favourable remaining pairs (all at
    // 0 for "negligible" and for the precision, all far on one side for
    // "slower" or "faster") could settle it within the budget, more pairs
    // only narrow a "no difference detected" bound. Stopping is always
    // allowed: the sequence is valid at any stopping time.
    (!reachable(r, rule)).then_some(StopReason::Futile)
}

/// Whether the most favourable remaining pairs could still settle `r`
/// within the budget ([`settled`]'s futility check).
fn reachable(r: &[f64], rule: &StopRule) -> bool {
    let left = rule.max_pairs as usize - r.len();
    let (lo, hi) = r
        .iter()
        .fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let far = 1.0 + (hi - lo);
    let fills: &[f64] = match rule.decision.test {
        SeqTest::Sign => &[0.0, hi + far, lo - far],
        // Far pairs always make a t statistic large: the t-test asks the
        // projection below instead.
        SeqTest::T => &[0.0],
        // Either test at alpha / 2 could settle it alone (the mean
        // e-value is at least half of each). The sign test's part is
        // projected, as the t-test's is: the extreme fills above would
        // keep every null going to the budget.
        SeqTest::Both => {
            let part = |test| {
                let mut p = *rule;
                p.decision.test = test;
                p.decision.alpha /= 2.0;
                p
            };
            return sign_projection_reachable(r, &part(SeqTest::Sign))
                || reachable(r, &part(SeqTest::T));
        }
    };
    fills.iter().any(|&fill| {
        let mut best = r.to_vec();
        best.extend(std::iter::repeat_n(fill, left));
        settled_now(&best, rule).is_some()
    }) || (rule.decision.test == SeqTest::T && t_verdict_reachable(r, rule))
}

/// The t-test's futility: whether a comparison whose mean log ratio were
/// [`FUTILITY_SE`] standard errors further from 0 than the pairs' mean so
/// far, with their spread, would be slower or faster at the budget (its
/// e-value beating the table's threshold and its interval clear of the
/// noise band). Not reachable even then, it stops as futile: an effect
/// that large is unlikely (about 2.5% one-sided, for normal log ratios),
/// and only power is at stake, never the error rate.
fn t_verdict_reachable(r: &[f64], rule: &StopRule) -> bool {
    let n = r.len();
    // Below FUTILITY_MIN_PAIRS the spread is too poorly known to give up
    // on (a negative control stopped at 3 pairs would bound nothing).
    if n < FUTILITY_MIN_PAIRS {
        return true;
    }
    let mean = r.iter().sum::<f64>() / n as f64;
    let sd = (r.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    if sd.is_nan() || sd <= 0.0 {
        return true;
    }
    let effect = mean.abs() + FUTILITY_SE * sd / (n as f64).sqrt();
    let budget = rule.max_pairs as usize;
    let t2 = effect * effect * budget as f64 / (sd * sd);
    let d = &rule.decision;
    let rank = match d.error_rate {
        ErrorRate::Fwer => 1,
        ErrorRate::Fdr => rule.rank.max(1),
    };
    let threshold = (rule.family.max(1) as f64 / (d.alpha * rank as f64)).ln();
    let Some(t_star) = safe_t::t_star(budget, d.alpha) else {
        return false;
    };
    let near_end = effect - t_star * sd / (budget as f64).sqrt();
    safe_t::ln_e(budget, t2) >= threshold && pct(near_end) > d.noise_pct
}

/// The sign test's futility under `--test both`: whether the comparison
/// could settle at the budget if the remaining pairs fell on the
/// favourable side of 0 (or inside the equivalence margin) in the share
/// seen so far plus [`FUTILITY_SE`] standard errors of that share. The
/// remaining pairs are placed far on their side (or at 0), so only their
/// side counts, as in the sign test. Like the t-test's projection, it
/// stops a comparison whose verdict the budget would reach only with
/// luck; it costs power, never the error rate.
fn sign_projection_reachable(r: &[f64], rule: &StopRule) -> bool {
    let n = r.len();
    if n < FUTILITY_MIN_PAIRS {
        return true;
    }
    let left = rule.max_pairs as usize - n;
    let (lo, hi) = r
        .iter()
        .fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let far = 1.0 + (hi - lo);
    let m = margin(rule.decision.equivalence_pct);
    // The share of pairs `hit` so far, smoothed, plus FUTILITY_SE errors.
    let share = |hit: &dyn Fn(f64) -> bool| {
        let k = r.iter().filter(|v| hit(**v)).count() as f64;
        let q = (k + 0.5) / (n as f64 + 1.0);
        (q + FUTILITY_SE * (q * (1.0 - q) / n as f64).sqrt()).min(1.0)
    };
    // `left` pairs: a share at `good`, the rest split between `far_a`
    // and `far_b`.
    let complete = |q: f64, good: f64, far_a: f64, far_b: f64| {
        let good_n = (q * left as f64).round() as usize;
        let mut best = r.to_vec();
        best.extend(std::iter::repeat_n(good, good_n));
        for i in 0..left - good_n {
            best.push(if i % 2 == 0 { far_a } else { far_b });
        }
        best
    };
    let slower = complete(share(&|v| v > 0.0), hi + far, lo - far, lo - far);
    let faster = complete(share(&|v| v < 0.0), lo - far, hi + far, hi + far);
    let negligible = complete(share(&|v| v.abs() < m), 0.0, hi + far, lo - far);
    [slower, faster, negligible]
        .iter()
        .any(|best| settled_now(best, rule).is_some())
}

/// How many standard errors beyond the mean so far the t-test's futility
/// rule allows the effect to be ([`settled`]).
pub const FUTILITY_SE: f64 = 2.0;
/// The fewest pairs at which the t-test's futility rule may stop a
/// comparison (the sign test's first look).
pub const FUTILITY_MIN_PAIRS: usize = 6;

/// Whether `r` settles the comparison now: a verdict, or the precision.
pub(crate) fn settled_now(r: &[f64], rule: &StopRule) -> Option<StopReason> {
    let d = &rule.decision;
    let look = look(r, d.alpha, margin(d.equivalence_pct), d.test)?;
    let rank = match d.error_rate {
        ErrorRate::Fwer => 1,
        ErrorRate::Fdr => rule.rank.max(1),
    };
    let bonferroni = (look.p_value * rule.family.max(1) as f64 / rank as f64).min(1.0);
    // Slower or faster is judged on the interval the table will show, at
    // alpha x rank / family (super::decision::shown_alpha): settled here,
    // the comparison stays so in the table's decision.
    let shown = d.alpha * rank as f64 / rule.family.max(1) as f64;
    let (lo, hi) = if shown < d.alpha {
        let at = look_at(r, shown, d.test)?;
        (at.0, at.1)
    } else {
        (look.ci_low, look.ci_high)
    };
    let verdict = decide(bonferroni, pct(lo), pct(hi), Some(look.equivalence_p), d);
    match verdict {
        Verdict::Slower => return Some(StopReason::Slower),
        Verdict::Faster => return Some(StopReason::Faster),
        Verdict::Negligible => return Some(StopReason::Negligible),
        Verdict::NoChange => {}
    }
    rule.precision_pct
        .filter(|p| (pct(look.ci_high) - pct(look.ci_low)) / 2.0 <= *p)
        .map(|_| StopReason::Precision)
}

/// The confidence sequence of `r` at `alpha` (log units).
fn look_at(r: &[f64], alpha: f64, test: SeqTest) -> Option<(f64, f64)> {
    look(r, alpha, 0.0, test).map(|l| (l.ci_low, l.ci_high))
}

/// The sequential comparison's overhead in percent (estimate, the
/// confidence sequence at `alpha`, the anytime p-value), verdict not yet
/// decided (the table decides, [`super::decision`]).
pub fn overhead_pct(r: &[f64], alpha: f64, test: SeqTest) -> Option<super::paired::OverheadPct> {
    let l = look(r, alpha, 0.0, test)?;
    Some(super::paired::OverheadPct {
        estimate: pct(l.median),
        ci_low: pct(l.ci_low),
        ci_high: pct(l.ci_high),
        p_value: l.p_value,
        verdict: Verdict::NoChange,
    })
}

/// A sequential comparison's log ratios `r` as a row of a table decided
/// with `opts` ([`super::decision::Samples::Sequential`]): its
/// anytime-valid p-value of equivalence (the median outside
/// +-equivalence) at the alpha, margin and test of `opts`, NaN for no
/// pairs, and the smallest p-value its pairs could reach (all on one side
/// of 0: 1 / E_t(0)).
pub fn row_samples(r: &[f64], opts: &DecisionOpts) -> Samples<'static> {
    Samples::Sequential {
        equivalence_p: look(r, opts.alpha, margin(opts.equivalence_pct), opts.test)
            .map_or(f64::NAN, |l| l.equivalence_p),
        smallest_p: (-ln_e_value(r.len(), 0.0)).exp(),
    }
}

/// Pairs the sequence needs for a half-width of `precision_pct` when the
/// log ratios are normal with standard deviation `sd` (the expected
/// positions of its order statistics), at least `min`; None beyond 100 000.
pub fn pairs_for_precision(sd: f64, precision_pct: f64, alpha: f64, min: u32) -> Option<u32> {
    if !(sd.is_finite() && sd > 0.0 && precision_pct > 0.0) {
        return None;
    }
    let want = margin(precision_pct);
    let mut t = min.max(2) as usize;
    while t <= 100_000 {
        // The run of kept k is symmetric about t/2: its upper end.
        if sign_half_width_z(t, alpha).is_some_and(|z| sd * z <= want) {
            return Some(t as u32);
        }
        t += (t / 8).max(1);
    }
    None
}

/// Pairs within which `--equivalence auto` lets a comparison with no
/// difference come out negligible (half the default budget).
pub const AUTO_MARGIN_PAIRS: usize = 16;

/// `--equivalence auto`'s margin in percent: the margin within which a
/// comparison with no difference shows itself, after `pairs` pairs, 4
/// times in 5 under `test`, when its pairs are like the A/A pairs `pool`
/// (per-pair log ratios of `secperf calibrate`'s A/A control, each
/// comparison's centred on its median). Found by resampling: 400 null
/// comparisons of `pairs` pairs drawn from `pool` with a random sign each
/// (the coin that orders a pair makes a null log ratio symmetric), each
/// one's smallest margin at which its look is negligible, and their 80th
/// percentile, rounded up to 0.1%. Outlier pairs in the pool come along.
/// None for a pool of fewer than 20 pairs; deterministic (`seed`).
pub fn auto_margin_pct(
    test: SeqTest,
    pool: &[f64],
    pairs: usize,
    alpha: f64,
    seed: u64,
) -> Option<f64> {
    if pool.len() < 20 || pool.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut rng = crate::stats::bootstrap::Rng::new(seed);
    let runs: usize = 400;
    let mut smallest: Vec<f64> = (0..runs)
        .map(|_| {
            let r: Vec<f64> = (0..pairs.max(2))
                .map(|_| {
                    let v = pool[rng.below(pool.len())];
                    if rng.below(2) == 0 { v } else { -v }
                })
                .collect();
            smallest_margin(&r, alpha, test)
        })
        .collect();
    smallest.sort_by(f64::total_cmp);
    let m = smallest[(runs * 4).div_ceil(5) - 1];
    m.is_finite().then(|| (pct(m) * 10.0).ceil() / 10.0)
}

/// The smallest margin (log units) at which `r` is shown negligible;
/// infinite when not even a 100% margin is.
fn smallest_margin(r: &[f64], alpha: f64, test: SeqTest) -> f64 {
    let shown = |m: f64| look(r, alpha, m, test).is_some_and(|l| l.equivalence_p < alpha);
    let mut hi = margin(99.0);
    if !shown(hi) {
        return f64::INFINITY;
    }
    let mut lo = 0.0;
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if shown(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The sign test's confidence sequence after `t` pairs reaches from the
/// median to about this many standard deviations of normal log ratios
/// (the expected position of its outer order statistic); None while it
/// is unbounded.
fn sign_half_width_z(t: usize, alpha: f64) -> Option<f64> {
    let bar = (1.0 / alpha).ln();
    let mut j = t / 2;
    while j < t && ln_e_value(t, (j + 1) as f64) < bar {
        j += 1;
    }
    (j < t).then(|| normal_quantile((j as f64 + 0.5) / (t as f64 + 1.0)))
}

/// Phi^-1(p) (Acklam's rational approximation, |error| < 1.2e-9).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

pub mod rounds;
pub mod safe_t;
#[cfg(test)]
mod tests;
