//! The safe t-test on a comparison's log ratios: an e-process that uses
//! their size, not only their signs (Grünwald, de Heide & Koolen, "Safe
//! testing", JRSS-B 2024; Pérez-Ortiz, Lardy, de Heide & Grünwald,
//! "E-statistics, group invariance and anytime-valid testing", Ann.
//! Statist. 2024).
//!
//! After n pairs with mean x̄, standard deviation s and t = x̄ √n / s, the
//! Bayes factor of "mean δσ, δ ~ N(0, g)" against "mean 0", both with the
//! right-Haar prior 1/σ on the scale, is
//!
//! E_n(g) = (1 + n g)^(-1/2) [(1 + t²/ν) / (1 + t²/(ν (1 + n g)))]^((ν+1)/2),
//! ν = n - 1
//!
//! (Rouder et al. 2009, eq. 1 with g fixed). With the right-Haar prior it
//! is a test martingale for the scale-invariant data under the null of
//! normal log ratios with mean 0 and any variance: Ville's inequality makes
//! P(E_n >= 1/alpha at any n) <= alpha, at whatever pair a comparison
//! stops. [`E_PRIOR_SCALES`] mixes g over effect sizes (an average of
//! e-processes is one).
//!
//! The assumption is normality: the coin that orders each pair makes the
//! log ratios symmetric about 0 under no difference, but not normal. A
//! symmetric null with heavier tails (a preempted half) inflates s and so
//! makes the test conservative rather than liberal (Efron, "Student's
//! t-test under symmetry conditions", JASA 1969, for the fixed-n test);
//! `secperf calibrate` checks the false-positive rate on this machine with
//! outlier halves injected.
//!
//! The sign test cannot go below p = 2^-(n-1) whatever the effect, which
//! makes 6 pairs the least for one comparison and 11 for a table of 29
//! under Bonferroni. The t e-value of n pairs grows like (1 + t²/ν)^(n/2):
//! a clear effect settles in 3 or 4.

/// The prior scales g of the standardised effect δ = mean / sd that the
/// e-value mixes, equally weighted: effects of about 1, 4 and 16 standard
/// deviations of a pair's log ratio (a 3% effect in 3% noise, 20% in 5%,
/// 50% in 3%).
pub const E_PRIOR_SCALES: [f64; 3] = [1.0, 16.0, 256.0];

/// ln E_n(g) for `n` pairs with squared t statistic `t2`; 0 below two
/// pairs (no scale yet: no evidence).
pub fn ln_e_fixed(n: usize, t2: f64, g: f64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let n_f = n as f64;
    let nu = n_f - 1.0;
    let big = 1.0 + n_f * g;
    -0.5 * big.ln() + (nu + 1.0) / 2.0 * ((t2 / nu).ln_1p() - (t2 / (nu * big)).ln_1p())
}

/// ln of the mixture e-value over [`E_PRIOR_SCALES`].
pub fn ln_e(n: usize, t2: f64) -> f64 {
    ln_mix(|g| ln_e_fixed(n, t2, g))
}

/// ln of the equal-weight average over [`E_PRIOR_SCALES`] of exp(ln_e(g)).
fn ln_mix(ln_e: impl Fn(f64) -> f64) -> f64 {
    let parts = E_PRIOR_SCALES.map(ln_e);
    let top = parts.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    top + (parts.iter().map(|p| (p - top).exp()).sum::<f64>() / parts.len() as f64).ln()
}

/// Mean, standard deviation (n - 1) and count of `x`; None below two
/// values.
fn mean_sd(x: &[f64]) -> Option<(f64, f64)> {
    let n = x.len();
    if n < 2 {
        return None;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, var.sqrt()))
}

/// The squared t statistic of "mean `mu`"; infinite when every value is
/// the same and differs from `mu`, 0 when it equals it.
fn t2_at(x: &[f64], mu: f64) -> f64 {
    let Some((mean, sd)) = mean_sd(x) else {
        return 0.0;
    };
    let d = mean - mu;
    if sd == 0.0 {
        return if d == 0.0 { 0.0 } else { f64::INFINITY };
    }
    d * d * x.len() as f64 / (sd * sd)
}

/// ln e-value of "the mean of `x` is `mu`" after all of `x`.
pub fn ln_e_at(x: &[f64], mu: f64) -> f64 {
    let t2 = t2_at(x, mu);
    if t2.is_infinite() {
        // The limit as t² grows: (1 + n g)^(ν/2) for each g.
        let n = x.len() as f64;
        return ln_mix(|g| (n - 1.0) / 2.0 * (1.0 + n * g).ln());
    }
    ln_e(x.len(), t2)
}

/// The fewest pairs at which the e-value can reach 1/alpha at all (its
/// limit as t grows, (1 + n g)^((n-1)/2) mixed, reaches it).
pub fn first_finite(alpha: f64) -> usize {
    let bar = (1.0 / alpha).ln();
    (2..10_000)
        .find(|&n| ln_e_at(&vec![1.0; n], 0.0) >= bar)
        .unwrap_or(10_000)
}

/// The (1 - alpha) confidence sequence for the mean of `x`: every mu whose
/// e-value stays below 1/alpha, x̄ ± t* s / √n; infinite while no t can
/// reach 1/alpha (too few pairs).
pub fn interval(x: &[f64], alpha: f64) -> (f64, f64) {
    let Some((mean, sd)) = mean_sd(x) else {
        return (f64::NEG_INFINITY, f64::INFINITY);
    };
    let n = x.len();
    let Some(t) = t_star(n, alpha) else {
        return (f64::NEG_INFINITY, f64::INFINITY);
    };
    let half = t * sd / (n as f64).sqrt();
    (mean - half, mean + half)
}

/// The |t| at which the e-value of `n` pairs reaches 1/alpha (the
/// confidence sequence is x̄ ± t* s / √n); None while no t reaches it.
pub fn t_star(n: usize, alpha: f64) -> Option<f64> {
    let bar = (1.0 / alpha).ln();
    let ln_e_t = |t: f64| ln_e(n, t * t);
    // The e-value grows with |t|; find t* where it reaches the bar.
    let mut hi = 1.0;
    while ln_e_t(hi) < bar {
        hi *= 2.0;
        if hi > 1e12 {
            return None;
        }
    }
    let mut lo = 0.0;
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if ln_e_t(mid) < bar {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_evidence_at_t_zero_or_one_pair() {
        for n in [2, 5, 50] {
            // At t = 0 the e-value is below 1 (evidence for the null).
            assert!(ln_e(n, 0.0) < 0.0, "n={n}");
        }
        assert_eq!(ln_e(1, 100.0), 0.0);
        assert_eq!(ln_e_fixed(0, 1.0, 1.0), 0.0);
    }

    #[test]
    fn a_clear_effect_settles_in_three_or_four_pairs() {
        // +20% in pairs with about 2% noise.
        let r: Vec<f64> = [0.18, 0.20, 0.17, 0.19, 0.18]
            .iter()
            .map(|v| f64::ln_1p(*v))
            .collect();
        let e = |n: usize| ln_e_at(&r[..n], 0.0).exp();
        // A table of one at alpha 0.05: 20; e-BH over 29 with 19 found:
        // about 31; Bonferroni over 29: 580.
        assert!(e(2) < 20.0, "{}", e(2));
        assert!(e(3) > 31.0, "{}", e(3));
        assert!(e(4) > 580.0, "{}", e(4));
        let (lo, hi) = interval(&r[..4], 0.05);
        assert!(lo > 0.1 && hi < 0.25, "[{lo}, {hi}]");
    }

    #[test]
    fn the_interval_is_where_the_e_value_stays_below_the_bar() {
        let x = [0.01, -0.02, 0.03, 0.0, 0.015, -0.01, 0.02];
        let (lo, hi) = interval(&x, 0.05);
        let bar = 20f64.ln();
        assert!((ln_e_at(&x, lo) - bar).abs() < 1e-6);
        assert!((ln_e_at(&x, hi) - bar).abs() < 1e-6);
        assert!(ln_e_at(&x, (lo + hi) / 2.0) < bar);
        assert!(ln_e_at(&x, hi + 0.01) > bar);
        // Two pairs cannot bound it at alpha 0.05 (their limit is below 20).
        let (lo, hi) = interval(&x[..2], 0.05);
        assert!(lo.is_infinite() && hi.is_infinite());
        assert_eq!(first_finite(0.05), 3);
        // Bonferroni over 29 comparisons: 4 pairs.
        assert_eq!(first_finite(0.05 / 29.0), 4);
    }

    /// Under the null (normal, mean 0) the e-process crosses 1/alpha at
    /// some n <= 100 in at most alpha of the runs (Ville), here checked
    /// on 2000 seeded runs.
    #[test]
    fn under_the_null_it_crosses_in_at_most_alpha_of_the_runs() {
        let mut rng = crate::stats::bootstrap::Rng::new(7);
        let mut normal = move || {
            // Box-Muller.
            let u1 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            (-2.0 * u1.max(1e-300).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        };
        let runs = 2000;
        let mut crossed = 0;
        for _ in 0..runs {
            let mut x = Vec::new();
            for _ in 0..100 {
                x.push(0.03 * normal());
                if ln_e_at(&x, 0.0) >= 20f64.ln() {
                    crossed += 1;
                    break;
                }
            }
        }
        let rate = crossed as f64 / runs as f64;
        assert!(rate <= 0.05, "crossed in {rate}");
    }
}

#[cfg(test)]
mod null_rates {
    use super::*;

    /// The crossing rate under a null of `draw`, over `runs` runs of up
    /// to `max_n` pairs.
    fn crossing_rate(mut draw: impl FnMut() -> f64, runs: usize, max_n: usize, bar: f64) -> f64 {
        let mut crossed = 0;
        for _ in 0..runs {
            let mut x = Vec::new();
            for _ in 0..max_n {
                x.push(draw());
                if ln_e_at(&x, 0.0) >= bar.ln() {
                    crossed += 1;
                    break;
                }
            }
        }
        crossed as f64 / runs as f64
    }

    /// Symmetric but far from normal: 10% of pairs carry a preempted half
    /// (a log ratio of +-0.5), the rest 3% noise. Still within alpha.
    #[test]
    fn a_symmetric_null_with_outlier_pairs_stays_within_alpha() {
        let mut rng = crate::stats::bootstrap::Rng::new(11);
        let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let draw = move || {
            let (u, v, w) = (uniform(), uniform(), uniform());
            let sign = if w < 0.5 { -1.0 } else { 1.0 };
            if u < 0.1 {
                sign * 0.5
            } else {
                // A uniform stand-in for noise, symmetric.
                sign * 0.03 * v
            }
        };
        let rate = crossing_rate(draw, 2000, 60, 20.0);
        eprintln!("crossing rate {rate}");
        assert!(rate <= 0.05, "crossed in {rate}");
    }
}
