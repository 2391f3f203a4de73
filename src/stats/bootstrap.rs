//! Seeded percentile bootstrap.
//!
//! The confidence interval of an A/B overhead comes from resampling the
//! pairs with replacement (docs/methodology.md:
//! "95% CI by bootstrap over pairs"). We use the plain percentile interval:
//! it is simple, needs no assumption about the shape of the distribution
//! of log-ratios (which is skewed and heavy-tailed on noisy machines), and
//! at the n >= 10 pairs we ask for its coverage is close enough to nominal
//! for a median (the tests simulate it). BCa or studentized intervals would
//! be more accurate at tiny n, at the price of code that is harder to check.
//!
//! Reports must be reproducible, so the resampling is driven by a small
//! seeded generator written here rather than a crate: xoshiro256** (Blackman
//! & Vigna, <https://prng.di.unimi.it/>) seeded from a u64 through
//! SplitMix64, exactly as the authors recommend. Both are checked against
//! the outputs of the reference C implementations.

/// A seeded pseudo-random generator: xoshiro256** with its 256-bit state
/// filled from the seed by SplitMix64. Not cryptographic; fast, with good
/// statistical quality, and identical output on every platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng([u64; 4]);

/// One SplitMix64 step (Steele, Lea & Flood 2014; `splitmix64.c`): advance
/// the state by the golden-ratio increment and mix it.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole output is determined by `seed`. The state is
    /// four consecutive SplitMix64 outputs, which are never all zero.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        Rng([
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ])
    }

    /// The next 64 random bits (`xoshiro256starstar.c`, `next()`).
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n`, without modulo bias (Lemire 2019,
    /// "Fast random integer generation in an interval": multiply, and
    /// reject the few low products that would favour some values).
    ///
    /// # Panics
    /// If `n == 0` (there is no integer in `0..0`).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "Rng::below(0): empty range");
        let n = n as u64;
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            // 2^64 mod n: the count of low products to reject.
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as usize
    }
}

/// Percentile bootstrap interval of `statistic` over `x`.
///
/// Draws `resamples` samples of `x.len()` values with replacement (indices
/// from [`Rng::new`]`(seed)`, so the same inputs give the same interval),
/// evaluates `statistic` on each, and returns the `(1 - confidence) / 2` and
/// `(1 + confidence) / 2` quantiles of those values, interpolated linearly
/// between order statistics (NumPy's default `"linear"` quantile, Hyndman &
/// Fan type 7). The two quantile positions are placed symmetrically, so a
/// statistic that is odd in the data (like the median) gives an interval
/// that negates, up to rounding, when the data are negated.
///
/// Returns `(NaN, NaN)` when `x` is empty, `resamples == 0` or
/// `confidence` is not strictly between 0 and 1. `statistic` should return
/// finite values; NaNs it returns sort above every number.
pub fn bootstrap_ci(
    x: &[f64],
    statistic: impl Fn(&[f64]) -> f64,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64) {
    if x.is_empty() || resamples == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = Rng::new(seed);
    let n = x.len();
    let mut buf = vec![0.0; n];
    let mut stats: Vec<f64> = (0..resamples)
        .map(|_| {
            for slot in buf.iter_mut() {
                *slot = x[rng.below(n)];
            }
            statistic(&buf)
        })
        .collect();
    stats.sort_by(f64::total_cmp);

    let last = (resamples - 1) as f64;
    let lo_pos = last * (1.0 - confidence) / 2.0;
    let hi_pos = last - lo_pos;
    (quantile_at(&stats, lo_pos), quantile_at(&stats, hi_pos))
}

/// Linear interpolation in sorted `v` at 0-based fractional position `pos`.
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

#[cfg(test)]
mod tests {
    use super::Rng; // not proptest::prelude::Rng
    use super::*;
    use crate::stats::median;
    use proptest::prelude::*;

    fn med(s: &[f64]) -> f64 {
        median(s).unwrap_or(f64::NAN)
    }

    #[test]
    fn splitmix64_matches_reference() {
        // First outputs of splitmix64.c (prng.di.unimi.it) for this seed, as
        // published in the rand_xoshiro crate's reference test.
        let mut s = 1_477_776_061_723_855_037u64;
        let expected = [
            1_985_237_415_132_408_290u64,
            2_979_275_885_539_914_483,
            13_511_426_838_097_143_398,
            8_488_337_342_461_049_707,
            15_141_737_807_933_549_159,
            17_093_170_987_380_407_015,
            16_389_528_042_912_955_399,
            13_177_319_091_862_933_652,
        ];
        for e in expected {
            assert_eq!(splitmix64(&mut s), e);
        }
    }

    #[test]
    fn xoshiro256starstar_matches_reference() {
        // xoshiro256starstar.c from state {1, 2, 3, 4}, as published in the
        // rand_xoshiro crate's reference test.
        let mut rng = Rng([1, 2, 3, 4]);
        let expected = [
            11_520u64,
            0,
            1_509_978_240,
            1_215_971_899_390_074_240,
            1_216_172_134_540_287_360,
            607_988_272_756_665_600,
            16_172_922_978_634_559_625,
            8_476_171_486_693_032_832,
            10_595_114_339_597_558_777,
            2_904_607_092_377_533_576,
        ];
        for e in expected {
            assert_eq!(rng.next_u64(), e);
        }
    }

    #[test]
    fn seeding_goes_through_splitmix64() {
        let mut sm = 7u64;
        let state = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        assert_eq!(Rng::new(7), Rng(state));
        assert_ne!(Rng::new(0).0, [0; 4]);
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    #[test]
    fn below_is_uniform() {
        // Chi-square over 7 buckets (7 does not divide 2^64), 70 000 draws;
        // the 0.9999 quantile of chi2(6) is 27.9.
        let mut rng = Rng::new(1);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[rng.below(7)] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - 10_000.0).powi(2) / 10_000.0)
            .sum();
        assert!(chi2 < 27.9, "chi2 = {chi2}, counts = {counts:?}");
        assert_eq!(rng.below(1), 0);
    }

    #[test]
    fn below_handles_huge_ranges() {
        let mut rng = Rng::new(3);
        let n = usize::MAX / 3 * 2;
        // With n ~ 2/3 of 2^64, a biased generator would put ~50% of draws
        // below n/2; an unbiased one puts 50%. Check range and rough balance.
        let low = (0..10_000).filter(|_| rng.below(n) < n / 2).count();
        assert!((4_700..5_300).contains(&low), "{low}");
    }

    #[test]
    #[should_panic(expected = "empty range")]
    fn below_zero_panics() {
        Rng::new(0).below(0);
    }

    #[test]
    fn degenerate_inputs_give_nan() {
        let (lo, hi) = bootstrap_ci(&[], med, 0.95, 100, 1);
        assert!(lo.is_nan() && hi.is_nan());
        let (lo, _) = bootstrap_ci(&[1.0], med, 0.95, 0, 1);
        assert!(lo.is_nan());
        let (lo, _) = bootstrap_ci(&[1.0], med, 1.0, 10, 1);
        assert!(lo.is_nan());
        let (lo, _) = bootstrap_ci(&[1.0], med, f64::NAN, 10, 1);
        assert!(lo.is_nan());
    }

    #[test]
    fn constant_data_give_a_point() {
        assert_eq!(bootstrap_ci(&[2.5; 9], med, 0.95, 500, 4), (2.5, 2.5));
    }

    #[test]
    fn percentile_interpolation() {
        let v: Vec<f64> = (0..=10).map(f64::from).collect();
        assert_eq!(quantile_at(&v, 0.25), 0.25);
        assert_eq!(quantile_at(&v, 10.0), 10.0);
        assert_eq!(quantile_at(&v, 3.0), 3.0);
    }

    #[test]
    fn ci_of_the_mean_is_about_right() {
        // 0..100: mean 49.5, sd 29.0, standard error 2.9; the percentile
        // interval should be close to 49.5 +- 1.96 * 2.9 = [43.8, 55.2].
        let x: Vec<f64> = (0..100).map(f64::from).collect();
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let (lo, hi) = bootstrap_ci(&x, mean, 0.95, 10_000, 11);
        assert!(
            (lo - 43.8).abs() < 0.6 && (hi - 55.2).abs() < 0.6,
            "[{lo}, {hi}]"
        );
    }

    /// A standard normal deviate (Box-Muller), for simulations.
    fn normal(rng: &mut Rng) -> f64 {
        let u1 = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    #[test]
    fn median_ci_coverage_is_near_nominal() {
        // 500 data sets of 20 draws from a log-normal (skewed, like ns/op
        // ratios) with true median e^0 = 1: the 95% percentile interval of
        // the median must cover 1 in 90-99% of them.
        let mut source = Rng::new(2024);
        let mut covered = 0;
        for k in 0..500u64 {
            let x: Vec<f64> = (0..20).map(|_| (0.5 * normal(&mut source)).exp()).collect();
            let (lo, hi) = bootstrap_ci(&x, med, 0.95, 1_000, k);
            if lo <= 1.0 && 1.0 <= hi {
                covered += 1;
            }
        }
        assert!((450..=495).contains(&covered), "covered {covered}/500");
    }

    proptest! {
        #[test]
        fn median_ci_contains_sample_median(
            x in proptest::collection::vec(-1e6f64..1e6, 2..40),
            seed in any::<u64>(),
        ) {
            let m = med(&x);
            let (lo, hi) = bootstrap_ci(&x, med, 0.95, 1_000, seed);
            prop_assert!(lo <= m && m <= hi, "{m} not in [{lo}, {hi}]");
        }

        #[test]
        fn reproducible_with_the_same_seed(
            x in proptest::collection::vec(-1e3f64..1e3, 1..30),
            seed in any::<u64>(),
        ) {
            let a = bootstrap_ci(&x, med, 0.9, 300, seed);
            let b = bootstrap_ci(&x, med, 0.9, 300, seed);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn below_stays_in_range(n in 1usize..1_000_000, seed in any::<u64>()) {
            let mut rng = Rng::new(seed);
            for _ in 0..50 {
                prop_assert!(rng.below(n) < n);
            }
        }
    }
}
