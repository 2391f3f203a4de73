//! Intervals of a shift from inverting the rank tests that decide the
//! fixed-pairs and the unpaired designs, so that a row's interval and its
//! p-value say the same thing (issue 36).
//!
//! The interval at level alpha is the set of shifts d (log units) that the
//! row's own test does not reject: the Wilcoxon signed-rank test
//! ([`wilcoxon_signed_rank`]) of the log ratios minus d for pairs, the
//! Mann-Whitney test ([`mann_whitney_u`]) of ln(candidate) - d against
//! ln(baseline) for two samples (Hollander, Wolfe & Chicken,
//! *Nonparametric Statistical Methods*, 3rd ed., chapters 3 and 4;
//! Lehmann, *Nonparametrics*; docs/methodology.md section 4.3). The
//! statistic only changes
//! where d crosses a Walsh average (x_i + x_j) / 2 (pairs) or a difference
//! ln b_j - ln a_i (two samples), and between two consecutive ones it is
//! monotone in d, so the p-value is unimodal over those gaps: we find the
//! gap at the Hodges-Lehmann estimate (the median of those averages or
//! differences, where the statistic is at its centre), then bisect
//! outwards over the gaps for the last ones the test keeps, calling the
//! very p-value function that decides the row (same exact / normal switch,
//! same ties, same zero handling). The interval is the closure of the kept
//! gaps: from one Walsh average (or difference) to another, the classical
//! distribution-free interval of the Hodges-Lehmann estimate.
//!
//! Two rules are then enforced for every input, ties and zeros included:
//!
//! * **Duality at 0.** A shift is kept when p >= alpha and rejected when
//!   p < alpha (the strict rule the verdicts use). At 0 the p-value is the
//!   row's own p, computed on the data as given: when p(0) >= alpha, 0 is
//!   inside the interval (added if the gaps left it out); when p(0) <
//!   alpha, 0 is outside (the interval keeps the estimate's side of 0 and
//!   starts a hair, [`OFF_ZERO`], off it). At a Walsh average itself the
//!   test sees a zero or a tie and can disagree with the gaps on either
//!   side; this is the one place where it matters.
//! * **The estimate is inside.** The estimate shown is the Hodges-Lehmann
//!   estimate, and the interval always includes it. The one conflict: the
//!   estimate is exactly 0 while the test rejects 0 (possible with exact
//!   zeros in the data, which the signed-rank test drops, SciPy's
//!   `zero_method="wilcox"`). Then the estimate is moved [`OFF_ZERO`] to the
//!   side the data lean to; it still reads +0.0% in every table.

use super::median;
use super::unpaired::mann_whitney_u;
use super::wilcoxon::wilcoxon_signed_rank;

/// How far off 0 an estimate or an interval's end is put when the test
/// rejects 0 but the kept shifts reach it: the smallest normal double, which
/// stays above 0 in percent (100 (e^x - 1) of it is positive) and prints as
/// 0.0.
pub const OFF_ZERO: f64 = f64::MIN_POSITIVE;

/// A shift in log units, its Hodges-Lehmann estimate and the interval of
/// the shifts its rank test keeps at some level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShiftInterval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl ShiftInterval {
    /// The same in percent, 100 (e^x - 1) of each (order and sign kept;
    /// an unbounded end is -100% or +inf).
    pub fn pct(self) -> (f64, f64, f64) {
        let pct = |x: f64| x.exp_m1() * 100.0;
        (pct(self.estimate), pct(self.low), pct(self.high))
    }
}

/// The Hodges-Lehmann estimate of the log ratios `x` with the interval of
/// the shifts d that the signed-rank test of x - d keeps at `alpha` (see
/// the module docs). None for no values, a value that is not finite, or
/// alpha outside (0, 1).
pub fn signed_rank_interval(x: &[f64], alpha: f64) -> Option<ShiftInterval> {
    if x.is_empty() || x.iter().any(|v| !v.is_finite()) || !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let p_zero = wilcoxon_signed_rank(x);
    let mut walsh = walsh_averages(x);
    walsh.sort_by(f64::total_cmp);
    let centre = median(&walsh)?;
    let estimate = off_zero(centre, p_zero, || {
        // The side of 0 the statistic leans to: T+ - its null mean has the
        // sign of (positive - negative) Walsh averages of the non-zero
        // values (the test drops zeros).
        let nonzero: Vec<f64> = x.iter().copied().filter(|v| *v != 0.0).collect();
        lean(&walsh_averages(&nonzero))
    });
    walsh.dedup();
    let p_at = |d: f64| wilcoxon_signed_rank(&x.iter().map(|v| v - d).collect::<Vec<_>>());
    Some(invert(&walsh, centre, estimate, p_zero, alpha, &p_at))
}

/// The Hodges-Lehmann shift of ln(`b`) against ln(`a`) (positive values)
/// with the interval of the shifts d that Mann-Whitney of ln(b) - d
/// against ln(a) keeps at `alpha` (see the module docs); p(0) is
/// [`mann_whitney_u`]`(a, b)`, the p-value the row is decided on. None for
/// an empty side, a value that is not positive and finite, or alpha
/// outside (0, 1). Memory and time grow with len(a) x len(b) (every
/// difference is sorted once).
pub fn mann_whitney_interval(a: &[f64], b: &[f64], alpha: f64) -> Option<ShiftInterval> {
    let valid = |s: &[f64]| !s.is_empty() && s.iter().all(|v| v.is_finite() && *v > 0.0);
    if !(valid(a) && valid(b) && alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    let p_zero = mann_whitney_u(a, b);
    if p_zero.is_nan() {
        return None;
    }
    let mut diffs: Vec<f64> = lb
        .iter()
        .flat_map(|y| la.iter().map(move |x| y - x))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let centre = median(&diffs)?;
    let estimate = off_zero(centre, p_zero, || lean(&diffs));
    diffs.dedup();
    let p_at = |d: f64| mann_whitney_u(&la, &lb.iter().map(|v| v - d).collect::<Vec<_>>());
    Some(invert(&diffs, centre, estimate, p_zero, alpha, &p_at))
}

/// (x_i + x_j) / 2 for i <= j.
fn walsh_averages(x: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(x.len() * (x.len() + 1) / 2);
    for i in 0..x.len() {
        for j in i..x.len() {
            w.push((x[i] + x[j]) / 2.0);
        }
    }
    w
}

/// +1 when more of `v` are above 0 than below, else -1.
fn lean(v: &[f64]) -> f64 {
    let above = v.iter().filter(|d| **d > 0.0).count();
    let below = v.iter().filter(|d| **d < 0.0).count();
    if above >= below { 1.0 } else { -1.0 }
}

/// The estimate shown: the Hodges-Lehmann `centre`, moved [`OFF_ZERO`] to
/// the side `lean` gives when it is exactly 0 and the test's p at 0 is
/// below 1 (so that some level rejects 0 and the estimate must stay off
/// it). Independent of the level, so one estimate lies inside the
/// interval at every level.
fn off_zero(centre: f64, p_zero: f64, lean: impl FnOnce() -> f64) -> f64 {
    if centre == 0.0 && p_zero < 1.0 {
        lean() * OFF_ZERO
    } else {
        centre
    }
}

/// The interval of [`signed_rank_interval`] and [`mann_whitney_interval`]:
/// `breaks` are the sorted distinct points where the statistic changes,
/// `centre` the Hodges-Lehmann estimate (where the p-value over the gaps
/// peaks), `estimate` the one shown, `p_zero` the row's own p-value and
/// `p_at` the test at a shift.
fn invert(
    breaks: &[f64],
    centre: f64,
    estimate: f64,
    p_zero: f64,
    alpha: f64,
    p_at: &dyn Fn(f64) -> f64,
) -> ShiftInterval {
    let k = breaks.len();
    // Gap g (0..=k) lies between breaks[g - 1] and breaks[g], unbounded
    // below for g = 0 and above for g = k; `point` is a shift inside it.
    let point = |g: usize| -> f64 {
        if g == 0 {
            breaks[0] - (1.0 + breaks[0].abs())
        } else if g == k {
            breaks[k - 1] + (1.0 + breaks[k - 1].abs())
        } else {
            breaks[g - 1] + (breaks[g] - breaks[g - 1]) / 2.0
        }
    };
    let kept = |g: usize| p_at(point(g)) >= alpha;
    // The statistic crosses its null centre between the gaps on either
    // side of the Hodges-Lehmann estimate: one of them is the peak.
    let below = breaks.partition_point(|b| *b < centre);
    let above = if below < k && breaks[below] == centre {
        below + 1
    } else {
        below
    };
    let peak = if p_at(point(below)) >= p_at(point(above)) {
        below
    } else {
        above
    };
    let gaps = kept(peak).then(|| {
        // The p-value rises up to the peak and falls after it.
        let (mut lo, mut hi) = (0, peak);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if kept(mid) { hi = mid } else { lo = mid + 1 }
        }
        let first = lo;
        let (mut lo, mut hi) = (peak, k);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if kept(mid) { lo = mid } else { hi = mid - 1 }
        }
        let last = lo;
        (
            if first == 0 {
                f64::NEG_INFINITY
            } else {
                breaks[first - 1]
            },
            if last == k {
                f64::INFINITY
            } else {
                breaks[last]
            },
        )
    });
    let (mut low, mut high) = gaps.map_or((estimate, estimate), |(l, h)| {
        (l.min(estimate), h.max(estimate))
    });
    if p_zero >= alpha {
        low = low.min(0.0);
        high = high.max(0.0);
    } else if low <= 0.0 && 0.0 <= high {
        // p(0) < alpha < 1, so the estimate is off 0 (`off_zero`).
        if estimate > 0.0 {
            low = estimate.min(OFF_ZERO);
        } else {
            high = estimate.max(-OFF_ZERO);
        }
    }
    ShiftInterval {
        estimate,
        low,
        high,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired::hodges_lehmann;

    /// The textbook interval: for n = 10 pairs without ties, the exact
    /// signed-rank interval at alpha = 0.05 runs from the 9th to the 47th
    /// of the 55 sorted Walsh averages (the two-sided critical value of T+
    /// is 8: P(T+ <= 8) = 0.0244).
    #[test]
    fn signed_rank_interval_is_the_walsh_average_interval() {
        let x = [0.31, -0.12, 0.48, 0.05, 0.22, 0.67, -0.03, 0.15, 0.39, 0.91];
        let mut w = walsh_averages(&x);
        w.sort_by(f64::total_cmp);
        let s = signed_rank_interval(&x, 0.05).unwrap();
        assert_eq!(s.estimate, hodges_lehmann(&x));
        assert_eq!((s.low, s.high), (w[8], w[46]), "{s:?}");
        // The p-value just inside and just outside each end.
        let p = |d: f64| wilcoxon_signed_rank(&x.map(|v| v - d));
        let eps = 1e-9;
        assert!(p(s.low + eps) >= 0.05 && p(s.low - eps) < 0.05);
        assert!(p(s.high - eps) >= 0.05 && p(s.high + eps) < 0.05);
    }

    /// The textbook two-sample interval: without ties and with n1 = n2 =
    /// 6, the exact Mann-Whitney interval at 0.05 runs from the 6th to the
    /// 31st of the 36 sorted differences (P(U <= 5) = 0.0206).
    #[test]
    fn mann_whitney_interval_is_the_differences_interval() {
        let a: [f64; 6] = [1.00, 1.07, 0.96, 1.02, 1.11, 0.93];
        let b: [f64; 6] = [1.12, 1.05, 1.21, 1.16, 1.09, 1.27];
        let mut d: Vec<f64> = b
            .iter()
            .flat_map(|y| a.iter().map(move |x| y.ln() - x.ln()))
            .collect();
        d.sort_by(f64::total_cmp);
        let s = mann_whitney_interval(&a, &b, 0.05).unwrap();
        assert_eq!(s.estimate, median(&d).unwrap());
        assert_eq!((s.low, s.high), (d[5], d[30]), "{s:?}");
    }

    /// Too few pairs to reject anything: the interval is unbounded.
    #[test]
    fn few_pairs_give_an_unbounded_interval() {
        let s = signed_rank_interval(&[0.1, 0.2, 0.15, 0.12], 0.05).unwrap();
        assert_eq!((s.low, s.high), (f64::NEG_INFINITY, f64::INFINITY));
        let (e, lo, hi) = s.pct();
        assert_eq!((lo, hi), (-100.0, f64::INFINITY));
        assert!(lo <= e && e <= hi);
    }

    #[test]
    fn degenerate_inputs_give_none() {
        assert!(signed_rank_interval(&[], 0.05).is_none());
        assert!(signed_rank_interval(&[0.1, f64::NAN], 0.05).is_none());
        assert!(signed_rank_interval(&[0.1, 0.2], 1.0).is_none());
        assert!(mann_whitney_interval(&[1.0], &[], 0.05).is_none());
        assert!(mann_whitney_interval(&[1.0, -1.0], &[1.0], 0.05).is_none());
        assert!(mann_whitney_interval(&[1.0], &[1.0], 0.0).is_none());
    }

    /// Zeros at the estimate: 30 identical pairs and 9 pairs 1 apart. The
    /// Hodges-Lehmann estimate is 0 but the signed-rank test, which drops
    /// the zeros, rejects 0 (p = 0.0027): the estimate and the interval
    /// stay just above 0.
    #[test]
    fn a_rejected_zero_estimate_moves_off_zero() {
        let mut x = vec![0.0; 30];
        x.extend([1.0; 9]);
        assert_eq!(hodges_lehmann(&x), 0.0);
        let p0 = wilcoxon_signed_rank(&x);
        assert!(p0 < 0.01, "{p0}");
        let s = signed_rank_interval(&x, 0.05).unwrap();
        assert_eq!(s.estimate, OFF_ZERO);
        assert!(
            s.low > 0.0 && s.low <= s.estimate && s.estimate <= s.high,
            "{s:?}"
        );
        let (e, lo, _) = s.pct();
        assert!(lo > 0.0 && e > 0.0 && format!("{e:.1}") == "0.0");
        // At a level below p(0), 0 is kept and the estimate stays inside.
        let s = signed_rank_interval(&x, 0.001).unwrap();
        assert!(s.low <= 0.0 && s.estimate <= s.high, "{s:?}");
    }

    /// Over random samples with ties and zeros, at several levels: 0 is
    /// inside exactly when the row's p-value is at least the level, the
    /// estimate is inside, and a smaller level never gives a narrower
    /// interval.
    #[test]
    fn duality_at_zero_and_nesting_over_random_samples() {
        let mut rng = crate::stats::bootstrap::Rng::new(36);
        let mut uniform = || rng.next_u64() as f64 / u64::MAX as f64;
        let mut outside = 0;
        for case in 0..600 {
            let n = 1 + (uniform() * 30.0) as usize;
            let shift = [0.0, 0.01, 0.05, 0.2][case % 4];
            // Rounded to a grid so that ties and exact zeros are common.
            let grid = [1e-3, 1e-2, 0.05][case % 3];
            let x: Vec<f64> = (0..n)
                .map(|_| ((shift + 0.1 * (uniform() - 0.5)) / grid).round() * grid)
                .collect();
            let ratios: Vec<f64> = x.iter().map(|v| v.exp()).collect();
            let ones = vec![1.0; n];
            let m = 1 + (uniform() * 8.0) as usize;
            let a: Vec<f64> = (0..m)
                .map(|_| ((uniform() * 0.1 / grid).round() * grid).exp())
                .collect();
            let b: Vec<f64> = ratios.iter().map(|r| r * 1.02).collect();
            let mut last: Option<(f64, f64)> = None;
            for alpha in [0.2, 0.05, 0.01, 0.001] {
                for (s, p0, what) in [
                    (
                        signed_rank_interval(&x, alpha),
                        wilcoxon_signed_rank(&x),
                        "pairs",
                    ),
                    (
                        mann_whitney_interval(&ones, &ratios, alpha),
                        mann_whitney_u(&ones, &ratios),
                        "one-sided MW",
                    ),
                    (
                        mann_whitney_interval(&a, &b, alpha),
                        mann_whitney_u(&a, &b),
                        "MW",
                    ),
                ] {
                    let s = s.unwrap();
                    let inside = s.low <= 0.0 && 0.0 <= s.high;
                    assert_eq!(
                        inside,
                        p0 >= alpha,
                        "{what} {x:?} at {alpha}: {s:?}, p {p0}"
                    );
                    let (e, lo, hi) = s.pct();
                    assert_eq!(lo <= 0.0 && 0.0 <= hi, inside, "{what} {s:?}");
                    assert!(s.low <= s.estimate && s.estimate <= s.high, "{what} {s:?}");
                    assert!(lo <= e && e <= hi, "{what} {s:?}");
                    outside += usize::from(!inside);
                }
                let s = signed_rank_interval(&x, alpha).unwrap();
                if let Some((l, h)) = last {
                    assert!(s.low <= l && h <= s.high, "{x:?} at {alpha}: {s:?}");
                }
                last = Some((s.low, s.high));
            }
        }
        assert!(outside > 500, "{outside}");
    }
}
