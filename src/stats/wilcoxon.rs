//! Wilcoxon signed-rank test, two-sided, matching `scipy.stats.wilcoxon`.
//!
//! Why this test: an A/B pair gives a log-ratio r = ln(B/A) per pair
//! (docs/methodology.md). Ratios of timings on a noisy machine are not
//! normal (skewed, heavy right tail from preemption and steal), so a paired
//! t-test would be misled by a few slow slices. The signed-rank test only
//! asks whether the r_i are symmetric about 0, using their signs and the
//! ranks of their magnitudes, so one outlier counts no more than any other
//! large difference. Testing the pairs (not two independent samples) is
//! what removes slow machine drift: both halves of a pair see the same
//! machine state.
//!
//! What exactly is computed: `scipy.stats.wilcoxon(x)` with its defaults,
//! `zero_method="wilcox"`, `correction=False`, `alternative="two-sided"`,
//! `method="auto"`, as implemented in SciPy 1.17 (`scipy/stats/_wilcoxon.py`;
//! the reference vectors in `tests/fixtures/stats/wilcoxon.json` were made
//! with SciPy 1.17.1 by `tests/fixtures/stats/make_vectors.py`):
//!
//! * Zero differences are dropped before ranking (but still count in the
//!   `n` that picks the method). Magnitudes are ranked with average ranks
//!   for ties; the statistic is T+ = the rank sum of the positive ones.
//! * `n <= 50` with no ties and no zeros: exact null distribution of T+
//!   (every sign assignment equally likely), p = 2 min(P(T+ <= t), P(T+ >= t)).
//! * `n <= 13` with ties or zeros: SciPy runs an exact permutation test over
//!   all 2^n sign flips; we compute the same distribution (of T+ with the
//!   tied average ranks) by counting, which gives the identical p-value.
//! * Otherwise the normal approximation: z = (T+ - m(m+1)/4) / sigma with
//!   sigma^2 = (m(m+1)(2m+1) - sum(t^3 - t)/2) / 24, m the number of non-zero
//!   differences and t the sizes of the tie groups (tie correction), and
//!   **no** continuity correction (SciPy's default `correction=False`);
//!   p = 2 P(Z >= |z|).
//!
//! One deliberate difference: when every difference is zero SciPy returns
//! NaN for n > 13 (0/0 in z) and 1 for n <= 13; we return 1 always, since
//! identical arms are exactly "no evidence of a difference".

/// Largest n for which the exact distribution is used when there are no
/// ties and no zeros (SciPy's `method="auto"` threshold).
const EXACT_MAX_N: usize = 50;
/// Largest n for which SciPy's `auto` runs an exhaustive permutation test
/// when there are ties or zeros (2^13 <= its default 9999 resamples).
const PERMUTATION_MAX_N: usize = 13;

/// Two-sided p-value of the Wilcoxon signed-rank test that the paired
/// differences `x` are symmetric about zero (see the module docs for the
/// exact method, which follows SciPy's defaults).
///
/// Returns NaN for an empty slice or when a value is NaN, and 1.0 when all
/// differences are zero.
pub fn wilcoxon_signed_rank(x: &[f64]) -> f64 {
    if x.is_empty() || x.iter().any(|v| v.is_nan()) {
        return f64::NAN;
    }
    let n = x.len();
    let nonzero: Vec<f64> = x.iter().copied().filter(|&v| v != 0.0).collect();
    if nonzero.is_empty() {
        return 1.0;
    }
    let ranked = rank_magnitudes(&nonzero);
    let r_plus: f64 = nonzero
        .iter()
        .zip(&ranked.ranks)
        .filter(|(v, _)| **v > 0.0)
        .map(|(_, r)| r)
        .sum();
    let has_zeros = nonzero.len() < n;
    let exact = (n <= EXACT_MAX_N && !ranked.has_ties && !has_zeros) || n <= PERMUTATION_MAX_N;
    if exact {
        exact_p(&ranked.ranks, r_plus)
    } else {
        normal_p(nonzero.len(), r_plus, ranked.tie_term)
    }
}

struct Ranked {
    /// Average rank (1-based) of |x_i| among all |x|, in input order.
    ranks: Vec<f64>,
    /// sum over tie groups of t^3 - t.
    tie_term: f64,
    has_ties: bool,
}

fn rank_magnitudes(x: &[f64]) -> Ranked {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].abs().total_cmp(&x[b].abs()));
    let mut ranks = vec![0.0; x.len()];
    let mut tie_term = 0.0;
    let mut has_ties = false;
    let mut start = 0;
    while start < order.len() {
        let value = x[order[start]].abs();
        let mut end = start + 1;
        while end < order.len() && x[order[end]].abs() == value {
            end += 1;
        }
        // Positions start..end (0-based) share ranks start+1..=end.
        let avg = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = avg;
        }
        let t = (end - start) as f64;
        if end - start > 1 {
            has_ties = true;
            tie_term += t * t * t - t;
        }
        start = end;
    }
    Ranked {
        ranks,
        tie_term,
        has_ties,
    }
}

/// Exact two-sided p from the distribution of T+ over all 2^m sign
/// assignments of the given ranks (integers or, with ties, half-integers;
/// counted on doubled ranks so everything stays in integers). Only called
/// with m <= 50, so the counts (at most 2^50) are exact in u64 and f64.
fn exact_p(ranks: &[f64], r_plus: f64) -> f64 {
    let doubled: Vec<usize> = ranks.iter().map(|r| (2.0 * r).round() as usize).collect();
    let total: usize = doubled.iter().sum();
    // counts[s] = number of subsets of the ranks whose doubled sum is s.
    let mut counts = vec![0u64; total + 1];
    counts[0] = 1;
    let mut reach = 0;
    for &d in &doubled {
        reach += d;
        for s in (d..=reach).rev() {
            counts[s] += counts[s - d];
        }
    }
    let observed = (2.0 * r_plus).round() as usize;
    let at_most: u64 = counts[..=observed].iter().sum();
    let at_least: u64 = counts[observed..].iter().sum();
    let all = (ranks.len() as f64).exp2();
    (2.0 * at_most.min(at_least) as f64 / all).min(1.0)
}

/// Normal approximation with tie correction, no continuity correction.
fn normal_p(m: usize, r_plus: f64, tie_term: f64) -> f64 {
    let m = m as f64;
    let mean = m * (m + 1.0) / 4.0;
    let var = (m * (m + 1.0) * (2.0 * m + 1.0) - tie_term / 2.0) / 24.0;
    let z = (r_plus - mean) / var.sqrt();
    (2.0 * normal_sf(z.abs())).min(1.0)
}

/// P(Z > z) for a standard normal Z, accurate to about 1e-14 relative over
/// the whole range (tiny p-values from n = 300 included).
pub(crate) fn normal_sf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    if z >= 0.0 {
        0.5 * erfc(z / std::f64::consts::SQRT_2)
    } else {
        1.0 - 0.5 * erfc(-z / std::f64::consts::SQRT_2)
    }
}

/// Complementary error function for x >= 0: 1 - erf(x) from erf's
/// all-positive series below 2 (where erfc >= 0.0047, so nothing cancels
/// badly), and the Laplace continued fraction above, evaluated with
/// Lentz's method.
fn erfc(x: f64) -> f64 {
    debug_assert!(x >= 0.0);
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    if x < 2.0 {
        // erf(x) = 2/sqrt(pi) e^{-x^2} sum_k (2x^2)^k x / (1*3*...*(2k+1))
        let x2 = x * x;
        let mut term = x;
        let mut sum = x;
        let mut k = 0.0;
        while term > sum * 1e-17 {
            k += 1.0;
            term *= 2.0 * x2 / (2.0 * k + 1.0);
            sum += term;
        }
        1.0 - two_over_sqrt_pi * (-x2).exp() * sum
    } else {
        // erfc(x) = e^{-x^2}/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
        let tiny = 1e-300;
        let mut f = x;
        let mut c = x;
        let mut d = 0.0;
        for k in 1..=500 {
            let a = f64::from(k) / 2.0;
            d = x + a * d;
            if d.abs() < tiny {
                d = tiny;
            }
            d = 1.0 / d;
            c = x + a / c;
            if c.abs() < tiny {
                c = tiny;
            }
            let delta = c * d;
            f *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        two_over_sqrt_pi / 2.0 * (-x * x).exp() / f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Fixture {
        versions: Versions,
        cases: Vec<Case>,
        normal_sf: Vec<NormalSf>,
    }
    #[derive(Deserialize)]
    struct Versions {
        scipy: String,
    }
    #[derive(Deserialize)]
    struct Case {
        name: String,
        method: String,
        x: Vec<f64>,
        p_value: f64,
    }
    #[derive(Deserialize)]
    struct NormalSf {
        z: f64,
        sf: f64,
    }

    fn fixture() -> Fixture {
        serde_json::from_str(include_str!("../../tests/fixtures/stats/wilcoxon.json")).unwrap()
    }

    fn rel_err(got: f64, want: f64) -> f64 {
        if got == want {
            0.0
        } else {
            (got - want).abs() / want.abs()
        }
    }

    #[test]
    fn matches_scipy_reference_vectors() {
        let f = fixture();
        assert!(
            f.versions.scipy.starts_with("1.17"),
            "regenerated with {}",
            f.versions.scipy
        );
        assert!(f.cases.len() >= 30);
        for c in &f.cases {
            let tol = match c.method.as_str() {
                "exact" | "permutation" => 1e-9,
                "asymptotic" => 1e-6,
                other => panic!("{}: unknown method {other}", c.name),
            };
            let p = wilcoxon_signed_rank(&c.x);
            assert!(
                rel_err(p, c.p_value) <= tol,
                "{} ({}): got {p:e}, scipy {:e}",
                c.name,
                c.method,
                c.p_value
            );
        }
    }

    #[test]
    fn fixture_covers_every_branch() {
        let f = fixture();
        for method in ["exact", "permutation", "asymptotic"] {
            assert!(
                f.cases.iter().filter(|c| c.method == method).count() >= 3,
                "{method}"
            );
        }
        assert!(f.cases.iter().any(|c| c.x.len() > 50));
        assert!(f.cases.iter().any(|c| c.x.contains(&0.0) && c.x.len() > 13));
    }

    #[test]
    fn normal_tail_matches_scipy() {
        for v in fixture().normal_sf {
            let got = normal_sf(v.z);
            assert!(
                rel_err(got, v.sf) < 1e-12,
                "sf({}) = {got:e}, scipy {:e}",
                v.z,
                v.sf
            );
            let lower = normal_sf(-v.z);
            assert!((lower - (1.0 - v.sf)).abs() < 1e-15, "sf(-{})", v.z);
        }
    }

    #[test]
    fn hand_computed_values() {
        // n = 5, all positive: T+ = 15, only 1 of 32 sign patterns reaches it.
        assert_eq!(wilcoxon_signed_rank(&[1.0, 2.0, 3.0, 4.0, 5.0]), 2.0 / 32.0);
        // n = 3: T+ = 1 (the -2 and -3 are negative): P(T+ <= 1) = 2/8.
        assert_eq!(wilcoxon_signed_rank(&[1.0, -2.0, -3.0]), 0.5);
        // A single difference can never be significant.
        assert_eq!(wilcoxon_signed_rank(&[7.0]), 1.0);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(wilcoxon_signed_rank(&[]).is_nan());
        assert!(wilcoxon_signed_rank(&[1.0, f64::NAN]).is_nan());
        assert_eq!(wilcoxon_signed_rank(&[0.0; 5]), 1.0);
        // SciPy gives NaN here (0/0); see the module docs.
        assert_eq!(wilcoxon_signed_rank(&[0.0; 80]), 1.0);
        assert_eq!(wilcoxon_signed_rank(&[-0.0, 0.0]), 1.0);
    }

    #[test]
    fn ranks_average_ties() {
        let r = rank_magnitudes(&[3.0, -1.0, 1.0, 2.0, -3.0, 3.0]);
        assert_eq!(r.ranks, vec![5.0, 1.5, 1.5, 3.0, 5.0, 5.0]);
        assert!(r.has_ties);
        assert_eq!(r.tie_term, 6.0 + 24.0);
    }

    #[test]
    fn exact_distribution_sums_to_one() {
        // All patterns counted: p at the centre of a symmetric distribution is 1.
        let ranks: Vec<f64> = (1..=50).map(f64::from).collect();
        assert_eq!(exact_p(&ranks, 1275.0 / 2.0 + 0.5), 1.0);
        // Extreme: only the all-positive pattern reaches T+ = 1275.
        assert_eq!(exact_p(&ranks, 1275.0), 2.0 / 2f64.powi(50));
    }

    proptest! {
        #[test]
        fn p_is_a_probability(x in proptest::collection::vec(-10f64..10.0, 1..120)) {
            let p = wilcoxon_signed_rank(&x);
            prop_assert!((0.0..=1.0).contains(&p), "{p}");
        }

        #[test]
        fn sign_flip_and_scale_invariant(
            x in proptest::collection::vec(-10f64..10.0, 1..120),
            e in -20i32..20,
        ) {
            let p = wilcoxon_signed_rank(&x);
            let neg: Vec<f64> = x.iter().map(|v| -v).collect();
            prop_assert_eq!(wilcoxon_signed_rank(&neg), p);
            let k = 2f64.powi(e);
            let scaled: Vec<f64> = x.iter().map(|v| v * k).collect();
            prop_assert_eq!(wilcoxon_signed_rank(&scaled), p);
        }

        #[test]
        fn order_does_not_matter(x in proptest::collection::vec(-10f64..10.0, 1..60)) {
            let mut rev = x.clone();
            rev.reverse();
            prop_assert_eq!(wilcoxon_signed_rank(&rev), wilcoxon_signed_rank(&x));
        }
    }
}
