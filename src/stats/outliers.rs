//! Outlier flags by the modified z-score (Iglewicz & Hoaglin 1993).
//!
//! Why: a preempted or throttled slice shows up as one very slow sample.
//! Like hyperfine (MAD-based warnings) and criterion (outliers reported,
//! never dropped), secperf flags such samples so the report can say how
//! many there were; the statistics themselves (medians, ranks) are already
//! robust to them, and dropping data would bias the answer. The modified
//! z-score M_i = 0.6745 |x_i - median| / MAD uses the median absolute
//! deviation, which the outliers themselves cannot inflate the way they
//! inflate a standard deviation; 0.6745 makes it comparable to a z-score
//! for normal data, and |M_i| > 3.5 is the threshold the authors recommend.

use super::median;

/// Indices of outliers by the modified z-score:
/// `0.6745 * |x - median| / MAD > threshold` (Iglewicz-Hoaglin; 3.5 typical). MAD = 0 => no outliers.
/// Never removes anything: callers report them.
///
/// Returns the indices in increasing order; empty for an empty slice or
/// when any value is NaN.
pub fn mad_outliers(x: &[f64], threshold: f64) -> Vec<usize> {
    let Some(m) = median(x) else {
        return Vec::new();
    };
    let dev: Vec<f64> = x.iter().map(|v| (v - m).abs()).collect();
    let Some(mad) = median(&dev) else {
        return Vec::new();
    };
    if mad <= 0.0 {
        return Vec::new();
    }
    dev.iter()
        .enumerate()
        .filter(|(_, d)| 0.6745 * **d / mad > threshold)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn flags_the_slow_slice() {
        let x = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 180.0, 100.1];
        assert_eq!(mad_outliers(&x, 3.5), vec![6]);
        // Both sides.
        let x = [10.0, 11.0, 9.0, 10.5, 9.5, 10.0, 1.0, 30.0];
        assert_eq!(mad_outliers(&x, 3.5), vec![6, 7]);
    }

    #[test]
    fn hand_computed_score() {
        // median 3, deviations 2,1,0,1,7 -> MAD 1; scores 1.349, .., 4.7215.
        let x = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(mad_outliers(&x, 3.5), vec![4]);
        assert_eq!(mad_outliers(&x, 4.8), Vec::<usize>::new());
        assert_eq!(mad_outliers(&x, 1.3), vec![0, 4]);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(mad_outliers(&[], 3.5).is_empty());
        assert!(mad_outliers(&[1.0, f64::NAN, 3.0], 3.5).is_empty());
        // More than half identical: MAD = 0, nothing flagged.
        assert!(mad_outliers(&[5.0, 5.0, 5.0, 5.0, 1000.0], 3.5).is_empty());
        assert!(mad_outliers(&[7.0], 3.5).is_empty());
    }

    proptest! {
        #[test]
        fn invariant_to_scaling_and_shifting(
            v in proptest::collection::vec(-1000i32..1000, 1..50),
            shift in -1_000_000i32..1_000_000,
            e in -20i32..20,
            threshold in 1.0f64..5.0,
        ) {
            // Integers, integer shifts and power-of-two scales keep every
            // step exact, so the flags must be identical.
            let x: Vec<f64> = v.iter().map(|&i| f64::from(i)).collect();
            let base = mad_outliers(&x, threshold);
            let shifted: Vec<f64> = x.iter().map(|v| v + f64::from(shift)).collect();
            prop_assert_eq!(&mad_outliers(&shifted, threshold), &base);
            let k = 2f64.powi(e);
            let scaled: Vec<f64> = x.iter().map(|v| v * k).collect();
            prop_assert_eq!(&mad_outliers(&scaled, threshold), &base);
            let negated: Vec<f64> = x.iter().map(|v| -v).collect();
            prop_assert_eq!(&mad_outliers(&negated, threshold), &base);
        }

        #[test]
        fn invariant_to_any_positive_scale_away_from_the_threshold(
            x in proptest::collection::vec(-1e3f64..1e3, 3..50),
            k in 1e-3f64..1e3,
        ) {
            // General scales round, so compare only points whose score is
            // clearly on one side of the threshold.
            let m = median(&x).unwrap();
            let dev: Vec<f64> = x.iter().map(|v| (v - m).abs()).collect();
            let mad = median(&dev).unwrap();
            prop_assume!(mad > 0.0);
            let scaled: Vec<f64> = x.iter().map(|v| v * k).collect();
            let a = mad_outliers(&x, 3.5);
            let b = mad_outliers(&scaled, 3.5);
            for (i, d) in dev.iter().enumerate() {
                let score = 0.6745 * d / mad;
                if (score - 3.5).abs() > 1e-9 {
                    prop_assert_eq!(a.contains(&i), b.contains(&i), "{}", i);
                }
            }
        }
    }
}
