//! A straight line fitted by ordinary least squares, for parameter sweeps:
//! y = intercept + slope * x over every observation, each coefficient with
//! a 95% interval from Student's t with n - 2 degrees of freedom, and the
//! classical lack-of-fit F test, which needs replicates at each x (a
//! sweep has one difference per pair at each value): the scatter of the
//! point means about the line is compared with the scatter of the
//! observations about their point means. A small p says a straight line
//! does not describe how the cost grows, and the slope is then an average
//! over the values swept, not a cost per unit.

use super::estimate::{Estimate, LineFit};

/// The significance level below which the line is said not to fit.
pub const LACK_OF_FIT_ALPHA: f64 = 0.05;

/// Fits `y = a + b x` to the (x, y) observations. None with fewer than
/// three observations or fewer than two distinct x; non-finite
/// observations are skipped.
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    let obs: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let n = obs.len();
    let mut distinct: Vec<f64> = obs.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if n < 3 || distinct.len() < 2 {
        return None;
    }
    let nf = n as f64;
    let mean_x = obs.iter().map(|p| p.0).sum::<f64>() / nf;
    let mean_y = obs.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = obs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = obs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let syy: f64 = obs.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let sse: f64 = obs
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let df = nf - 2.0;
    let s2 = sse / df;
    let se_slope = (s2 / sxx).sqrt();
    let se_intercept = (s2 * (1.0 / nf + mean_x * mean_x / sxx)).sqrt();
    let t = super::tdist::t_quantile(0.975, df);
    let est = |v: f64, se: f64| Estimate {
        estimate: v,
        ci_low: v - t * se,
        ci_high: v + t * se,
    };
    let lack_of_fit_p = lack_of_fit(&obs, &distinct, sse);
    Some(LineFit {
        intercept: est(intercept, se_intercept),
        slope: est(slope, se_slope),
        n,
        r_squared: if syy > 0.0 { 1.0 - sse / syy } else { 1.0 },
        residual_sd: s2.sqrt(),
        lack_of_fit_p,
        straight: lack_of_fit_p.is_none_or(|p| p >= LACK_OF_FIT_ALPHA),
    })
}

/// The lack-of-fit F test's p-value: (SS_lack / (c - 2)) / (SS_pure /
/// (n - c)) with c distinct x. None without a third x or without
/// replicates (nothing to test against).
fn lack_of_fit(obs: &[(f64, f64)], distinct: &[f64], sse: f64) -> Option<f64> {
    let c = distinct.len();
    let n = obs.len();
    if c < 3 || n <= c {
        return None;
    }
    let pure: f64 = distinct
        .iter()
        .map(|&x| {
            let ys: Vec<f64> = obs.iter().filter(|p| p.0 == x).map(|p| p.1).collect();
            let m = ys.iter().sum::<f64>() / ys.len() as f64;
            ys.iter().map(|y| (y - m).powi(2)).sum::<f64>()
        })
        .sum();
    let lack = (sse - pure).max(0.0);
    let d1 = (c - 2) as f64;
    let d2 = (n - c) as f64;
    if pure <= 0.0 {
        // Exact replicates: any lack is infinitely significant.
        return Some(if lack > 0.0 { 0.0 } else { 1.0 });
    }
    Some(super::tdist::f_sf((lack / d1) / (pure / d2), d1, d2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// y = 40 + 15 x with alternating +-1 noise, 10 replicates per x.
    fn linear_data() -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        for x in [1.0, 2.0, 4.0, 8.0] {
            for i in 0..10 {
                let noise = if i % 2 == 0 { 1.0 } else { -1.0 } * (1.0 + i as f64 * 0.1);
                v.push((x, 40.0 + 15.0 * x + noise));
            }
        }
        v
    }

    #[test]
    fn recovers_a_line_with_intervals_around_it() {
        let f = fit_line(&linear_data()).unwrap();
        assert_eq!(f.n, 40);
        assert!((f.slope.estimate - 15.0).abs() < 0.2, "{f:?}");
        assert!((f.intercept.estimate - 40.0).abs() < 1.0, "{f:?}");
        assert!(f.slope.ci_low < 15.0 && 15.0 < f.slope.ci_high, "{f:?}");
        assert!(f.intercept.ci_low < 40.0 && 40.0 < f.intercept.ci_high);
        assert!(f.r_squared > 0.99);
        assert!(f.straight, "{f:?}");
        assert!(f.lack_of_fit_p.unwrap() > 0.05);
    }

    #[test]
    fn textbook_values() {
        // x = 1..5, y = 2, 4, 5, 4, 5: b = 0.6, a = 2.2, SSE = 2.4,
        // se(b) = sqrt(0.8 / 10), se(a) = sqrt(0.8 (1/5 + 9/10)).
        let pts: Vec<(f64, f64)> = [(1., 2.), (2., 4.), (3., 5.), (4., 4.), (5., 5.)].to_vec();
        let f = fit_line(&pts).unwrap();
        assert!((f.slope.estimate - 0.6).abs() < 1e-12);
        assert!((f.intercept.estimate - 2.2).abs() < 1e-12);
        let t = crate::stats::tdist::t_quantile(0.975, 3.0);
        let se_b = (0.8f64 / 10.0).sqrt();
        assert!((f.slope.ci_high - (0.6 + t * se_b)).abs() < 1e-9);
        let se_a = (0.8f64 * (0.2 + 0.9)).sqrt();
        assert!((f.intercept.ci_low - (2.2 - t * se_a)).abs() < 1e-9);
        assert!((f.r_squared - 0.6).abs() < 1e-12);
        // No replicates: the lack-of-fit test has nothing to compare with.
        assert_eq!(f.lack_of_fit_p, None);
        assert!(f.straight);
    }

    #[test]
    fn a_curve_is_not_called_straight() {
        // y = x^2 with small noise, replicated.
        let mut v = Vec::new();
        for x in [1.0f64, 2.0, 4.0, 8.0] {
            for i in 0..8 {
                v.push((x, x * x + (i as f64 - 3.5) * 0.1));
            }
        }
        let f = fit_line(&v).unwrap();
        assert!(!f.straight, "{f:?}");
        assert!(f.lack_of_fit_p.unwrap() < 1e-6);
    }

    #[test]
    fn too_little_data_gives_none() {
        assert!(fit_line(&[]).is_none());
        assert!(fit_line(&[(1.0, 2.0), (2.0, 3.0)]).is_none());
        assert!(fit_line(&[(1.0, 2.0), (1.0, 3.0), (1.0, 4.0)]).is_none());
        assert!(fit_line(&[(1.0, f64::NAN), (2.0, 3.0), (3.0, 4.0)]).is_none());
    }
}
