//! Student's t distribution function, for Welch's t-test and TOST.
//!
//! Why here and not a crate: the statistics module stays dependency-free
//! and checkable against SciPy. The t CDF reduces to the regularized
//! incomplete beta function, P(T <= t) = 1 - I_x(df/2, 1/2) / 2 for t > 0
//! with x = df / (df + t^2), and I_x(a, b) is evaluated with its classic
//! continued fraction (Numerical Recipes' `betacf`, DLMF 8.17.22) by the
//! modified Lentz method, after the symmetry I_x(a, b) = 1 - I_{1-x}(b, a)
//! that keeps the fraction in its fast-converging region. `ln Gamma` comes
//! from a Lanczos approximation (g = 7, 9 terms; about 1e-15 relative).
//!
//! Non-integer degrees of freedom are allowed (Welch's df is not an
//! integer). Tested against `scipy.stats.t.cdf` and
//! `scipy.special.betainc` in `tests/fixtures/stats/tdist.json` (made by
//! `tests/fixtures/stats/make_unpaired_vectors.py`).

use std::f64::consts::PI;

/// ln Gamma(x) for x > 0 (Lanczos, g = 7, n = 9; reflection below 0.5).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Gamma(x) Gamma(1 - x) = pi / sin(pi x); x > 0 here, so sin > 0.
        return (PI / (PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// ln B(a, b) = ln Gamma(a) + ln Gamma(b) - ln Gamma(a + b).
pub(crate) fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// Continued fraction for I_x(a, b) (without its prefactor), modified Lentz.
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-16;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        // Even step.
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        // Odd step.
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// I_x(a, b) given both x and y = 1 - x (so callers that know 1 - x more
/// accurately than by subtraction can pass it).
fn reg_inc_beta_xy(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if y <= 0.0 {
        return 1.0;
    }
    // x^a y^b / (a B(a, b)), in logs to stay finite.
    let front =
        |a: f64, b: f64, x: f64, y: f64| (a * x.ln() + b * y.ln() - ln_beta(a, b)).exp() / a;
    if x < (a + 1.0) / (a + b + 2.0) {
        front(a, b, x, y) * beta_cf(a, b, x)
    } else {
        1.0 - front(b, a, y, x) * beta_cf(b, a, y)
    }
}

/// The regularized incomplete beta function I_x(a, b) for a, b > 0 and
/// 0 <= x <= 1 (`scipy.special.betainc(a, b, x)`). NaN for arguments
/// outside that domain or NaN.
pub fn reg_inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && (0.0..=1.0).contains(&x)) || a.is_infinite() || b.is_infinite() {
        return f64::NAN;
    }
    reg_inc_beta_xy(a, b, x, 1.0 - x)
}

/// P(T <= t) for Student's t with `df` > 0 degrees of freedom (any real
/// df; infinite df gives the standard normal). NaN for NaN arguments or
/// df <= 0. Lower tails are accurate in relative terms far out (t = -50),
/// so `t_cdf(-|t|, df)` is the way to get a small one-sided p-value.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    if df.is_infinite() {
        return super::wilcoxon::normal_sf(-t);
    }
    let t2 = t * t;
    // x = df / (df + t^2) and 1 - x = t^2 / (df + t^2), each computed
    // directly so neither loses digits to cancellation.
    let (x, y) = if t2 > df {
        let r = df / t2;
        (r / (1.0 + r), 1.0 / (1.0 + r))
    } else {
        (df / (df + t2), t2 / (df + t2))
    };
    let tail = 0.5 * reg_inc_beta_xy(df / 2.0, 0.5, x, y); // P(T <= -|t|)
    if t < 0.0 { tail } else { 1.0 - tail }
}

/// The `p` quantile of Student's t with `df` degrees of freedom, for p in
/// (0.5, 1) (found by bisection on [`t_cdf`], to about 1e-12).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1000.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// P(F > f) for the F distribution with (`d1`, `d2`) degrees of freedom:
/// the regularized incomplete beta I_{d2/(d2 + d1 f)}(d2/2, d1/2).
pub fn f_sf(f: f64, d1: f64, d2: f64) -> f64 {
    if f.is_nan() || d1 <= 0.0 || d2 <= 0.0 {
        return f64::NAN;
    }
    if f <= 0.0 {
        return 1.0;
    }
    reg_inc_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Fixture {
        versions: Versions,
        t_cdf: Vec<TCdf>,
        betainc: Vec<BetaInc>,
    }
    #[derive(Deserialize)]
    struct Versions {
        scipy: String,
    }
    #[derive(Deserialize)]
    struct TCdf {
        t: f64,
        df: f64,
        cdf: f64,
    }
    #[derive(Deserialize)]
    struct BetaInc {
        a: f64,
        b: f64,
        x: f64,
        value: f64,
    }

    fn fixture() -> Fixture {
        serde_json::from_str(include_str!("../../tests/fixtures/stats/tdist.json")).unwrap()
    }

    /// Relative error 1e-8, or absolute 1e-12 for values below 1e-4 where
    /// the reference itself is the limiting factor.
    fn close(got: f64, want: f64) -> bool {
        got == want || (got - want).abs() <= 1e-8 * want.abs() || (got - want).abs() <= 1e-12
    }

    #[test]
    fn t_cdf_matches_scipy() {
        let f = fixture();
        assert!(f.versions.scipy.starts_with("1.17"), "{}", f.versions.scipy);
        assert!(f.t_cdf.len() > 150);
        for v in &f.t_cdf {
            let got = t_cdf(v.t, v.df);
            assert!(
                close(got, v.cdf),
                "t_cdf({}, {}) = {got:e}, scipy {:e}",
                v.t,
                v.df,
                v.cdf
            );
            // Tiny lower tails: relative accuracy, not just absolute.
            if v.t < 0.0 && v.cdf > 1e-300 {
                assert!(
                    (got - v.cdf).abs() <= 1e-8 * v.cdf,
                    "tail t_cdf({}, {}) = {got:e}, scipy {:e}",
                    v.t,
                    v.df,
                    v.cdf
                );
            }
        }
    }

    #[test]
    fn betainc_matches_scipy() {
        for v in fixture().betainc {
            let got = reg_inc_beta(v.a, v.b, v.x);
            assert!(
                close(got, v.value),
                "I_{}({}, {}) = {got:e}, scipy {:e}",
                v.x,
                v.a,
                v.b,
                v.value
            );
        }
    }

    #[test]
    fn special_values() {
        assert_eq!(t_cdf(0.0, 3.7), 0.5);
        assert_eq!(t_cdf(f64::INFINITY, 2.0), 1.0);
        assert_eq!(t_cdf(f64::NEG_INFINITY, 2.0), 0.0);
        assert!(t_cdf(1.0, 0.0).is_nan());
        assert!(t_cdf(f64::NAN, 3.0).is_nan());
        // df = 1 is the Cauchy distribution: 1/2 + atan(t)/pi.
        for t in [-30.0, -2.0, -0.5, 0.3, 1.0, 7.0] {
            let want = 0.5 + f64::atan(t) / PI;
            assert!((t_cdf(t, 1.0) - want).abs() < 1e-14, "{t}");
        }
        // df = 2: 1/2 + t / (2 sqrt(2 + t^2)).
        for t in [-5.0f64, -1.0, 0.25, 3.0] {
            let want = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!((t_cdf(t, 2.0) - want).abs() < 1e-14, "{t}");
        }
        // Infinite df is the normal: Phi(1.959963984540054) = 0.975.
        assert!((t_cdf(1.959_963_984_540_054, f64::INFINITY) - 0.975).abs() < 1e-14);
        assert!(reg_inc_beta(0.0, 1.0, 0.5).is_nan());
        assert!(reg_inc_beta(1.0, 1.0, 1.5).is_nan());
        assert_eq!(reg_inc_beta(2.0, 3.0, 0.0), 0.0);
        assert_eq!(reg_inc_beta(2.0, 3.0, 1.0), 1.0);
    }

    #[test]
    fn ln_gamma_known_values() {
        // ln(n-1)! and Gamma(1/2) = sqrt(pi).
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!(ln_gamma(2.0).abs() < 1e-14);
        assert!((ln_gamma(11.0) - 3_628_800f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - PI.sqrt().ln()).abs() < 1e-14);
        assert!((ln_gamma(0.1) - 2.252_712_651_734_206).abs() < 1e-13);
    }

    #[test]
    fn t_quantile_and_f_sf_match_closed_forms() {
        // Tables: t(0.975; 10) = 2.228139, t(0.975; 1) = tan(0.475 pi).
        assert!((t_quantile(0.975, 10.0) - 2.228139).abs() < 1e-6);
        let cauchy = (0.475 * std::f64::consts::PI).tan();
        assert!((t_quantile(0.975, 1.0) - cauchy).abs() < 1e-6);
        assert!((t_cdf(t_quantile(0.9, 7.0), 7.0) - 0.9).abs() < 1e-12);
        // F(2, d2): P(F > f) = (1 + 2f/d2)^(-d2/2).
        for (f, d2) in [(3.0f64, 20.0f64), (0.5, 4.0), (10.0, 3.0)] {
            let want = (1.0 + 2.0 * f / d2).powf(-d2 / 2.0);
            assert!((f_sf(f, 2.0, d2) - want).abs() < 1e-12, "{f} {d2}");
        }
        // F(1, d) is t(d) squared.
        let t: f64 = 2.5;
        let want = 2.0 * t_cdf(-t, 9.0);
        assert!((f_sf(t * t, 1.0, 9.0) - want).abs() < 1e-12);
        assert_eq!(f_sf(0.0, 2.0, 3.0), 1.0);
    }
}
