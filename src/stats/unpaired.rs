//! Unpaired comparison of two independent samples: stored runs from
//! different boots or kernels, where no A/B pairs exist.
//!
//! Why (docs/methodology.md): without pairs the
//! drift between the two runs is not controlled, so the best we can do is
//! what benchstat and Google benchmark's compare.py do: a rank test that
//! assumes nothing about the shape of the timing distribution (Mann-Whitney
//! U), plus a ratio of medians with a bootstrap interval. Welch's t-test
//! is reported alongside for readers used to it; it is misled by the heavy
//! right tail of timings, so it never decides anything here. Callers must
//! say in their output that the design is unpaired.
//!
//! What exactly is computed:
//!
//! * [`mann_whitney_u`]: `scipy.stats.mannwhitneyu(a, b)` with its defaults
//!   (`use_continuity=True`, `alternative="two-sided"`, `method="auto"`), as
//!   implemented in SciPy 1.17 (`scipy/stats/_mannwhitneyu.py`). The rule
//!   SciPy's `auto` really applies (`_mwu_choose_method`) is: **asymptotic
//!   when both n1 > 8 and n2 > 8; otherwise asymptotic if the pooled sample
//!   has any tie; otherwise exact.** (So exact whenever the smaller sample
//!   has at most 8 values and there are no ties, however large the other.)
//!   - U1 = R1 - n1(n1+1)/2 from average ranks of the pooled sample,
//!     U = max(U1, n1 n2 - U1).
//!   - Exact: p = 2 P(U' >= U) under the null distribution of U (every
//!     split of the pooled ranks equally likely), clipped to 1. Counted
//!     exactly in 128-bit integers (the Gaussian binomial coefficient); if
//!     the count overflows (smaller side <= 8 and the other above ~10^5,
//!     never seen in practice) we fall back to the asymptotic formula,
//!     where SciPy switches to floating-point counts.
//!   - Asymptotic: z = (U - n1 n2 / 2 - 1/2) / s with the tie-corrected
//!     s = sqrt(n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1)))), p =
//!     2 P(Z > z), clipped to 1. When every value is tied s = 0; SciPy gets
//!     p = 1 there too (z = -inf, clipped).
//! * [`welch_t`]: `scipy.stats.ttest_ind(a, b, equal_var=False)`:
//!   Welch-Satterthwaite df, two-sided p from the t distribution
//!   ([`super::tdist`]).
//! * [`compare_unpaired`]: change of B against A in percent,
//!   (median(b) / median(a) - 1) * 100, with a percentile bootstrap interval
//!   of the ratio of medians (a and b resampled independently, one seeded
//!   generator, type-7 quantiles as in [`super::bootstrap::bootstrap_ci`]).
//!
//! Reference values: `tests/fixtures/stats/unpaired.json`, made with SciPy
//! 1.17.1 by `tests/fixtures/stats/make_unpaired_vectors.py`.

use anyhow::ensure;
use serde::{Deserialize, Serialize};

use super::bootstrap::Rng;
use super::median;
use super::tdist::t_cdf;
use super::wilcoxon::normal_sf;

/// SciPy's `auto` switches to the normal approximation only when both
/// samples are larger than this.
const EXACT_MAX_MIN_N: usize = 8;

/// Average ranks (1-based) of `x` and the tie term sum(t^3 - t).
fn average_ranks(x: &[f64]) -> (Vec<f64>, f64) {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut ranks = vec![0.0; x.len()];
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        // == rather than total_cmp so that -0.0 and 0.0 tie, as in SciPy.
        while end < order.len() && x[order[end]] == x[order[start]] {
            end += 1;
        }
        let avg = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = avg;
        }
        let t = (end - start) as f64;
        tie_term += t * t * t - t;
        start = end;
    }
    (ranks, tie_term)
}

/// Two-sided Mann-Whitney U p-value matching `scipy.stats.mannwhitneyu(a,
/// b)` with SciPy 1.17's defaults. The rule matched (see the module docs):
/// exact null distribution when min(n1, n2) <= 8 and the pooled sample has
/// no ties; otherwise the normal approximation with tie correction and
/// continuity correction.
///
/// Returns NaN when either sample is empty or contains NaN (SciPy raises).
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| v.is_nan()) {
        return f64::NAN;
    }
    let (n1, n2) = (a.len(), b.len());
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let (ranks, tie_term) = average_ranks(&pooled);
    let r1: f64 = ranks[..n1].iter().sum();
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let u = u1.max(n1f * n2f - u1);

    let exact = (n1 <= EXACT_MAX_MIN_N || n2 <= EXACT_MAX_MIN_N) && tie_term == 0.0;
    if exact {
        // Without ties U is an integer, U >= n1 n2 / 2.
        if let Some(p) = exact_p(n1, n2, u.round() as usize) {
            return p;
        }
    }
    let n = n1f + n2f;
    let s = (n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
    if s.is_nan() || s <= 0.0 {
        return 1.0;
    }
    let z = (u - n1f * n2f / 2.0 - 0.5) / s;
    (2.0 * normal_sf(z)).min(1.0)
}

/// 2 P(U >= u) for the exact null distribution (u >= n1 n2 / 2), by the
/// symmetry of U: 2 P(U <= n1 n2 - u). The number of rank splits with
/// U = k is the coefficient of q^k in the Gaussian binomial coefficient
/// [n1 + n2 choose m]_q = prod_{i=1..m} (1 - q^{M + i}) / (1 - q^i), with
/// m = min(n1, n2) and M = max(n1, n2), built factor by factor and
/// truncated at degree n1 n2 - u. Every intermediate count is at most
/// C(n1 + n2, m), so checking that total first rules out overflow (and
/// keeps us from allocating for a hopeless case). `None` if it does not
/// fit in an i128.
fn exact_p(n1: usize, n2: usize, u: usize) -> Option<f64> {
    let (m, big) = (n1.min(n2), n1.max(n2));
    let k = (n1 * n2).checked_sub(u)?;
    // Total C(n1 + n2, m); exact at each step (a product of i consecutive
    // integers is divisible by i!).
    let mut total: i128 = 1;
    for i in 1..=m {
        total = total.checked_mul((big + i) as i128)? / i as i128;
    }
    let mut c = vec![0i128; k + 1];
    c[0] = 1;
    for i in 1..=m {
        // Multiply by (1 - q^{big + i}): downward so c[j - d] is the old one.
        let d = big + i;
        for j in (d..=k).rev() {
            c[j] = c[j].checked_sub(c[j - d])?;
        }
        // Divide by (1 - q^i): c[j] += c[j - i], upward.
        for j in i..=k {
            c[j] = c[j].checked_add(c[j - i])?;
        }
    }
    let mut tail: i128 = 0;
    for v in &c {
        tail = tail.checked_add(*v)?;
    }
    Some((2.0 * tail as f64 / total as f64).min(1.0))
}

/// Welch's unequal-variance t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// (mean(a) - mean(b)) / sqrt(var(a)/n1 + var(b)/n2), sample variances.
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom (not an integer in general).
    pub df: f64,
    /// Two-sided p-value, 2 P(T_df >= |t|).
    pub p_value: f64,
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let ss: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    (mean, ss / (n - 1.0))
}

/// `scipy.stats.ttest_ind(a, b, equal_var=False)`: t (sign of
/// mean(a) - mean(b)), Welch df and the two-sided p-value.
///
/// All three are NaN when a side has fewer than 2 values or a NaN; like
/// SciPy, zero variance on both sides gives t = +-inf (or NaN for equal
/// means), df = NaN and p = NaN.
pub fn welch_t(a: &[f64], b: &[f64]) -> Welch {
    let nan = Welch {
        t: f64::NAN,
        df: f64::NAN,
        p_value: f64::NAN,
    };
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| v.is_nan()) {
        return nan;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (a.len() as f64 - 1.0) + sb * sb / (b.len() as f64 - 1.0));
    let p_value = if t.is_nan() || df.is_nan() {
        f64::NAN
    } else {
        (2.0 * t_cdf(-t.abs(), df)).min(1.0)
    };
    Welch { t, df, p_value }
}

/// Settings of [`compare_unpaired`].
#[derive(Debug, Clone, PartialEq)]
pub struct UnpairedOpts {
    /// Confidence level of the interval, strictly between 0 and 1.
    pub confidence: f64,
    /// Bootstrap resamples (at least 1).
    pub resamples: usize,
    /// Seed of the bootstrap's generator (reproducible reports).
    pub seed: u64,
}

impl Default for UnpairedOpts {
    /// 95% interval, 10 000 resamples, a fixed seed.
    fn default() -> Self {
        UnpairedOpts {
            confidence: 0.95,
            resamples: 10_000,
            seed: 0x5ec_9e4f,
        }
    }
}

/// The change of B against A from two independent samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnpairedChange {
    /// (median(b) / median(a) - 1) * 100: +10 means B takes 10% longer.
    pub estimate: f64,
    /// Lower bound of the bootstrap interval of the same quantity, percent.
    pub ci_low: f64,
    /// Upper bound of the bootstrap interval, percent.
    pub ci_high: f64,
    /// Two-sided Mann-Whitney U p-value (the one that decides).
    pub p_value: f64,
    /// Two-sided Welch t-test p-value, for information. When both samples
    /// are constant (zero variance, where SciPy gives NaN) it is 1 for
    /// equal means and 0 otherwise, so the struct never holds a NaN there.
    pub welch_p_value: f64,
}

/// Linear interpolation in sorted `v` at 0-based fractional position `pos`
/// (Hyndman & Fan type 7, as in `bootstrap.rs`).
fn quantile_at(v: &[f64], pos: f64) -> f64 {
    let pos = pos.clamp(0.0, (v.len() - 1) as f64);
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    if frac == 0.0 || i + 1 >= v.len() {
        v[i]
    } else {
        v[i] + frac * (v[i + 1] - v[i])
    }
}

/// Change of B against A in percent: (median(b)/median(a) - 1) * 100, with
/// a percentile bootstrap interval of the ratio of medians (a and b
/// resampled independently, with replacement, from one
/// [`Rng`]`::new(opts.seed)`: first a's n1 draws, then b's n2, per
/// resample), p = Mann-Whitney ([`mann_whitney_u`]), and Welch's p for
/// information.
///
/// Errors (not panics) for fewer than 2 values on either side, a value that
/// is not positive and finite, or options out of range.
pub fn compare_unpaired(
    a: &[f64],
    b: &[f64],
    opts: &UnpairedOpts,
) -> anyhow::Result<UnpairedChange> {
    for (side, values) in [("a", a), ("b", b)] {
        ensure!(
            values.len() >= 2,
            "unpaired comparison needs at least 2 values on each side, got {} in {side}",
            values.len()
        );
        if let Some((i, v)) = values
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v > 0.0))
        {
            anyhow::bail!("{side}[{i}] = {v}: values must be positive and finite");
        }
    }
    ensure!(
        opts.confidence > 0.0 && opts.confidence < 1.0,
        "confidence must be strictly between 0 and 1, got {}",
        opts.confidence
    );
    ensure!(opts.resamples >= 1, "resamples must be at least 1");

    let med = |s: &[f64]| median(s).unwrap_or(f64::NAN);
    let ratio = med(b) / med(a);

    let mut rng = Rng::new(opts.seed);
    let (mut ba, mut bb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut ratios: Vec<f64> = (0..opts.resamples)
        .map(|_| {
            for slot in ba.iter_mut() {
                *slot = a[rng.below(a.len())];
            }
            for slot in bb.iter_mut() {
                *slot = b[rng.below(b.len())];
            }
            med(&bb) / med(&ba)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let last = (opts.resamples - 1) as f64;
    let lo_pos = last * (1.0 - opts.confidence) / 2.0;
    let (lo, hi) = (
        quantile_at(&ratios, lo_pos),
        quantile_at(&ratios, last - lo_pos),
    );

    // The same monotone map for the estimate and the bounds, so an interval
    // that ends at the estimate still contains it after rounding.
    let pct = |r: f64| (r - 1.0) * 100.0;
    let w = welch_t(a, b);
    let welch_p_value = if w.p_value.is_nan() && mean_var(a).1 == 0.0 && mean_var(b).1 == 0.0 {
        if a[0] == b[0] { 1.0 } else { 0.0 }
    } else {
        w.p_value
    };
    Ok(UnpairedChange {
        estimate: pct(ratio),
        ci_low: pct(lo),
        ci_high: pct(hi),
        p_value: mann_whitney_u(a, b),
        welch_p_value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Fixture {
        versions: Versions,
        mann_whitney: Vec<MwuCase>,
        welch: Vec<WelchCase>,
        compare: Vec<CompareCase>,
    }
    #[derive(Deserialize)]
    struct Versions {
        scipy: String,
    }
    #[derive(Deserialize)]
    struct MwuCase {
        name: String,
        method: String,
        a: Vec<f64>,
        b: Vec<f64>,
        p_value: f64,
    }
    #[derive(Deserialize)]
    struct WelchCase {
        name: String,
        a: Vec<f64>,
        b: Vec<f64>,
        t: f64,
        df: f64,
        p_value: f64,
    }
    #[derive(Deserialize)]
    struct CompareCase {
        name: String,
        a: Vec<f64>,
        b: Vec<f64>,
        estimate_pct: f64,
        p_value: f64,
        welch_p_value: f64,
    }

    fn fixture() -> Fixture {
        serde_json::from_str(include_str!("../../tests/fixtures/stats/unpaired.json")).unwrap()
    }

    fn rel_err(got: f64, want: f64) -> f64 {
        if got == want {
            0.0
        } else {
            (got - want).abs() / want.abs()
        }
    }

    #[test]
    fn mann_whitney_matches_scipy() {
        let f = fixture();
        assert!(f.versions.scipy.starts_with("1.17"), "{}", f.versions.scipy);
        for method in ["exact", "asymptotic"] {
            assert!(
                f.mann_whitney.iter().filter(|c| c.method == method).count() >= 5,
                "{method}"
            );
        }
        for c in &f.mann_whitney {
            let tol = if c.method == "exact" { 1e-9 } else { 1e-8 };
            let p = mann_whitney_u(&c.a, &c.b);
            assert!(
                rel_err(p, c.p_value) <= tol,
                "{} ({}): got {p:e}, scipy {:e}",
                c.name,
                c.method,
                c.p_value
            );
            // Two-sided: symmetric in the samples.
            assert_eq!(mann_whitney_u(&c.b, &c.a), p, "{}", c.name);
        }
    }

    #[test]
    fn welch_matches_scipy() {
        for c in fixture().welch {
            let w = welch_t(&c.a, &c.b);
            assert!(
                rel_err(w.t, c.t) <= 1e-10,
                "{}: t {} vs {}",
                c.name,
                w.t,
                c.t
            );
            assert!(
                rel_err(w.df, c.df) <= 1e-10,
                "{}: df {} vs {}",
                c.name,
                w.df,
                c.df
            );
            assert!(
                rel_err(w.p_value, c.p_value) <= 1e-8,
                "{}: p {:e} vs {:e}",
                c.name,
                w.p_value,
                c.p_value
            );
        }
    }

    #[test]
    fn compare_matches_scipy() {
        for c in fixture().compare {
            let o = compare_unpaired(&c.a, &c.b, &UnpairedOpts::default()).unwrap();
            assert!(
                rel_err(o.estimate, c.estimate_pct) <= 1e-9,
                "{}: {} vs {}",
                c.name,
                o.estimate,
                c.estimate_pct
            );
            assert!(rel_err(o.p_value, c.p_value) <= 1e-8, "{}", c.name);
            assert!(
                rel_err(o.welch_p_value, c.welch_p_value) <= 1e-8,
                "{}",
                c.name
            );
            assert!(o.ci_low <= o.estimate && o.estimate <= o.ci_high, "{o:?}");
        }
    }

    #[test]
    fn exact_hand_values() {
        // 3 vs 3, fully separated: 1 split of C(6,3) = 20 per tail.
        assert_eq!(mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 0.1);
        assert_eq!(mann_whitney_u(&[1.0], &[2.0]), 1.0);
        // U distribution for 2 vs 2: counts 1,1,2,1,1 over U = 0..4.
        assert_eq!(exact_p(2, 2, 4), Some(2.0 / 6.0));
        assert_eq!(exact_p(2, 2, 3), Some(4.0 / 6.0));
        assert_eq!(exact_p(2, 2, 2), Some(1.0));
        // The whole distribution of C(16, 8) splits sums to the total.
        assert_eq!(exact_p(8, 8, 32), Some(1.0));
        // A huge other side: the counts overflow i128 and we say so.
        assert_eq!(exact_p(8, 10_000_000, 80_000_000), None);
    }

    #[test]
    fn huge_exact_side_falls_back_without_panicking() {
        let a: Vec<f64> = (0..8).map(|i| f64::from(i) + 0.5).collect();
        let b: Vec<f64> = (0..300_000).map(f64::from).collect();
        let p = mann_whitney_u(&a, &b);
        assert!((0.0..=1.0).contains(&p), "{p}");
    }

    #[test]
    fn degenerate_inputs() {
        assert!(mann_whitney_u(&[], &[1.0]).is_nan());
        assert!(mann_whitney_u(&[1.0, f64::NAN], &[1.0]).is_nan());
        assert_eq!(mann_whitney_u(&[3.0; 20], &[3.0; 20]), 1.0);
        assert!(welch_t(&[1.0], &[1.0, 2.0]).p_value.is_nan());
        let w = welch_t(&[1.0, 1.0], &[2.0, 2.0]);
        assert!(w.t.is_infinite() && w.df.is_nan() && w.p_value.is_nan());
    }

    #[test]
    fn constant_samples() {
        let o = compare_unpaired(&[5.0; 4], &[5.0; 3], &UnpairedOpts::default()).unwrap();
        assert_eq!((o.estimate, o.ci_low, o.ci_high), (0.0, 0.0, 0.0));
        assert_eq!((o.p_value, o.welch_p_value), (1.0, 1.0));
        let o = compare_unpaired(&[5.0; 4], &[10.0; 9], &UnpairedOpts::default()).unwrap();
        assert_eq!((o.estimate, o.ci_low, o.ci_high), (100.0, 100.0, 100.0));
        assert_eq!(o.welch_p_value, 0.0);
        let back: UnpairedChange =
            serde_json::from_str(&serde_json::to_string(&o).unwrap()).unwrap();
        assert_eq!(back, o);
    }

    #[test]
    fn clear_slowdown_is_detected() {
        let a: Vec<f64> = (0..15).map(|i| 1000.0 + f64::from(i % 5)).collect();
        let b: Vec<f64> = a.iter().map(|v| v * 1.1).collect();
        let o = compare_unpaired(&a, &b, &UnpairedOpts::default()).unwrap();
        assert!(o.p_value < 1e-5, "{o:?}");
        assert!(o.welch_p_value < 1e-10, "{o:?}");
        assert!((o.estimate - 10.0).abs() < 1e-9, "{o:?}");
        assert!(o.ci_low > 9.0 && o.ci_high < 11.0, "{o:?}");
    }

    #[test]
    fn rejects_bad_input() {
        let d = UnpairedOpts::default();
        let err = |a: &[f64], b: &[f64], o: &UnpairedOpts| {
            compare_unpaired(a, b, o).unwrap_err().to_string()
        };
        assert!(err(&[1.0], &[1.0, 2.0], &d).contains("at least 2"));
        assert!(err(&[1.0, 2.0], &[], &d).contains("got 0 in b"));
        assert!(err(&[1.0, 0.0], &[1.0, 2.0], &d).contains("a[1] = 0"));
        assert!(err(&[1.0, 2.0], &[-1.0, 2.0], &d).contains("b[0] = -1"));
        assert!(err(&[1.0, f64::NAN], &[1.0, 2.0], &d).contains("a[1] = NaN"));
        assert!(err(&[1.0, 2.0], &[1.0, f64::INFINITY], &d).contains("b[1] = inf"));
        let o = UnpairedOpts {
            confidence: 1.0,
            ..d.clone()
        };
        assert!(err(&[1.0, 2.0], &[1.0, 2.0], &o).contains("confidence"));
        let o = UnpairedOpts { resamples: 0, ..d };
        assert!(err(&[1.0, 2.0], &[1.0, 2.0], &o).contains("resamples"));
    }

    fn opts(seed: u64) -> UnpairedOpts {
        UnpairedOpts {
            resamples: 300,
            seed,
            ..UnpairedOpts::default()
        }
    }

    fn arb_sample() -> impl Strategy<Value = Vec<f64>> {
        proptest::collection::vec(1.0f64..1e5, 2..30)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn swapping_inverts_the_ratio(a in arb_sample(), b in arb_sample(), seed in any::<u64>()) {
            let ab = compare_unpaired(&a, &b, &opts(seed)).unwrap();
            let ba = compare_unpaired(&b, &a, &opts(seed)).unwrap();
            let prod = (1.0 + ab.estimate / 100.0) * (1.0 + ba.estimate / 100.0);
            prop_assert!((prod - 1.0).abs() < 1e-12, "{ab:?} {ba:?}");
            prop_assert_eq!(ab.p_value, ba.p_value);
            prop_assert!((ab.welch_p_value - ba.welch_p_value).abs() <= 1e-12);
        }

        #[test]
        fn scaling_both_sides_changes_nothing(
            a in arb_sample(),
            b in arb_sample(),
            k in 1e-3f64..1e3,
            e in -30i32..30,
        ) {
            let o = opts(5);
            let base = compare_unpaired(&a, &b, &o).unwrap();
            let scale = |x: &[f64], k: f64| x.iter().map(|v| v * k).collect::<Vec<_>>();
            let p2 = 2f64.powi(e);
            prop_assert_eq!(&compare_unpaired(&scale(&a, p2), &scale(&b, p2), &o).unwrap(), &base);
            let s = compare_unpaired(&scale(&a, k), &scale(&b, k), &o).unwrap();
            for (x, y) in [
                (s.estimate, base.estimate),
                (s.ci_low, base.ci_low),
                (s.ci_high, base.ci_high),
                (s.p_value, base.p_value),
                (s.welch_p_value, base.welch_p_value),
            ] {
                prop_assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{s:?} vs {base:?}");
            }
        }

        #[test]
        fn interval_contains_the_estimate(a in arb_sample(), b in arb_sample(), seed in any::<u64>()) {
            let o = compare_unpaired(&a, &b, &opts(seed)).unwrap();
            prop_assert!(o.ci_low <= o.estimate && o.estimate <= o.ci_high, "{o:?}");
            prop_assert!((0.0..=1.0).contains(&o.p_value));
            prop_assert!((0.0..=1.0).contains(&o.welch_p_value));
        }

        #[test]
        fn mann_whitney_is_a_probability(
            a in proptest::collection::vec(-5f64..5.0, 1..25),
            b in proptest::collection::vec(-5f64..5.0, 1..25),
        ) {
            let p = mann_whitney_u(&a, &b);
            prop_assert!((0.0..=1.0).contains(&p), "{p}");
        }
    }
}
