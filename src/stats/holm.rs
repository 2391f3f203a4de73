//! Holm-Bonferroni adjustment of p-values across the workloads of one
//! report.
//!
//! Why (docs/methodology.md): a report compares many workloads at once;
//! at alpha = 0.05 one in twenty unaffected workloads would come out
//! "significant" by chance. Holm's step-down method (Holm 1979) controls
//! the family-wise error rate like Bonferroni but is uniformly more
//! powerful, and it needs no assumption about how the tests depend on each
//! other (workloads on one machine are not independent).
//!
//! Matches `statsmodels.stats.multitest.multipletests(p, method="holm")[1]`
//! (statsmodels 0.15; reference values in `tests/fixtures/stats/holm.json`
//! made by `tests/fixtures/stats/make_unpaired_vectors.py`): sort the m
//! p-values ascending, multiply the i-th smallest (0-based) by m - i, take
//! the running maximum, clip at 1, and put the results back in input order.

/// Holm-Bonferroni adjusted p-values, same order as input, matching
/// statsmodels.stats.multitest.multipletests(p, method='holm')[1].
///
/// Inputs should be probabilities; if any is NaN every output is NaN
/// (the ordering, and so every adjustment, is then undefined).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    if p.iter().any(|v| v.is_nan()) {
        return vec![f64::NAN; m];
    }
    let mut order: Vec<usize> = (0..m).collect();
    // Ties in p get the same adjusted value whatever their order.
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running = 0.0f64;
    for (i, &idx) in order.iter().enumerate() {
        running = running.max(p[idx] * (m - i) as f64);
        out[idx] = running.min(1.0);
    }
    out
}

/// Benjamini-Hochberg adjusted p-values (step-up), same order as input:
/// sort ascending, take m p_(i) / i, the running minimum from the largest
/// down, clip at 1. Applied to p = 1/e of e-values it is e-BH (Wang &
/// Ramdas 2022): rejecting where the adjusted value is below alpha
/// controls the false discovery rate at alpha under any dependence. NaN
/// in, NaN out, as [`holm`].
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    if p.iter().any(|v| v.is_nan()) {
        return vec![f64::NAN; m];
    }
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running = f64::INFINITY;
    for (i, &idx) in order.iter().enumerate().rev() {
        running = running.min(p[idx] * m as f64 / (i + 1) as f64);
        out[idx] = running.min(1.0);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn benjamini_hochberg_matches_the_step_up_rule() {
        // m p_(i) / i over the sorted p: 0.025, 0.025, 0.05, 0.05, 0.05.
        let p = [0.01, 0.04, 0.03, 0.005, 0.05];
        let bh = super::benjamini_hochberg(&p);
        for (got, want) in bh.iter().zip([0.025, 0.05, 0.05, 0.025, 0.05]) {
            assert!((got - want).abs() < 1e-12, "{bh:?}");
        }
        // e-BH on 29 e-values of which 19 are 40: all 19 rejected at 0.05
        // (threshold 29 / (0.05 x 19) = 30.5), the rest at e = 1 not.
        let mut p = vec![1.0 / 40.0; 19];
        p.extend(vec![1.0; 10]);
        let adj = super::benjamini_hochberg(&p);
        assert!(adj[..19].iter().all(|&a| a < 0.05), "{adj:?}");
        assert!(adj[19..].iter().all(|&a| a >= 0.05));
        assert!(super::benjamini_hochberg(&[f64::NAN, 0.1])[1].is_nan());
    }

    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Fixture {
        versions: Versions,
        cases: Vec<Case>,
    }
    #[derive(Deserialize)]
    struct Versions {
        statsmodels: String,
    }
    #[derive(Deserialize)]
    struct Case {
        name: String,
        p: Vec<f64>,
        adjusted: Vec<f64>,
    }

    #[test]
    fn matches_statsmodels() {
        let f: Fixture =
            serde_json::from_str(include_str!("../../tests/fixtures/stats/holm.json")).unwrap();
        assert!(!f.versions.statsmodels.is_empty());
        for c in &f.cases {
            let got = holm(&c.p);
            assert_eq!(got.len(), c.adjusted.len(), "{}", c.name);
            for (g, w) in got.iter().zip(&c.adjusted) {
                assert!(
                    g == w || (g - w).abs() <= 1e-12 * w.abs(),
                    "{}: {got:?} vs {:?}",
                    c.name,
                    c.adjusted
                );
            }
        }
    }

    #[test]
    fn hand_values() {
        assert_eq!(holm(&[]), Vec::<f64>::new());
        assert_eq!(holm(&[0.03]), vec![0.03]);
        // Sorted 0.01, 0.02, 0.04: 3*0.01, max(0.03, 2*0.02), max(0.04, 0.04).
        assert_eq!(holm(&[0.04, 0.01, 0.02]), vec![0.04, 0.03, 0.04]);
        assert!(holm(&[0.1, f64::NAN]).iter().all(|v| v.is_nan()));
    }

    proptest! {
        #[test]
        fn adjusted_is_bounded_and_monotone(p in proptest::collection::vec(0.0f64..=1.0, 0..40)) {
            let adj = holm(&p);
            prop_assert_eq!(adj.len(), p.len());
            for (a, q) in adj.iter().zip(&p) {
                prop_assert!(a >= q && *a <= 1.0, "{a} vs {q}");
            }
            let mut order: Vec<usize> = (0..p.len()).collect();
            order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
            for w in order.windows(2) {
                prop_assert!(adj[w[0]] <= adj[w[1]], "{p:?} -> {adj:?}");
            }
        }
    }
}
