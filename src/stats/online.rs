//! Online false discovery rate control over an unbounded stream of tests:
//! e-LOND (Xu and Ramdas, "Online multiple testing with e-values",
//! AISTATS 2024). `secperf track` tests each new revision against the one
//! before it, one test after another with no end in sight; a fixed
//! correction (Bonferroni, e-BH) needs the number of tests in advance, and
//! testing each at a fixed level lets false alarms pile up with time.
//!
//! The rule: with a sequence γ_t ≥ 0 summing to at most 1, test t gets the
//! level α_t = α · γ_t · (R_{t-1} + 1), where R_{t-1} is the alarms so far,
//! and alarms when its e-value reaches 1/α_t. The false discovery rate (the
//! expected share of false alarms among the alarms) stays at most α at
//! every time, whatever the dependence between the tests: consecutive
//! revisions share a baseline, so their tests are dependent. Each test's
//! e-value is a sequential test's, stopped when it decides (a stopped
//! e-process is an e-value).
//!
//! γ is Javanmard and Montanari's default for LOND and LORD (2018, eq.
//! 31; the default of R's onlineFDR): γ_t = c · ln(max(t, 2)) / (t ·
//! e^√(ln t)), c = 0.0772..., which sums to 1 over all t. It spends slowly,
//! so that a track that runs for years still has level to spend: at α =
//! 0.05 the first test is at 0.0027 (an e-value of 374), the tenth at
//! 0.00019, the hundredth at 2.1e-5, each times one more than the alarms
//! so far. The price is that a small change needs more pairs to alarm
//! than one A/B at 5% would.
//!
//! A test that did not happen (a revision that failed to build or boot)
//! spends nothing: the stream's count moves on only for tests that ran to
//! a verdict, so an interrupted test gets the same level when it runs
//! again.

use serde::{Deserialize, Serialize};

/// Javanmard and Montanari's constant: their γ sums to 1 with it.
const JM_C: f64 = 0.077_208_38;

/// The share of the error budget of test `t` (from 1).
pub fn gamma(t: u64) -> f64 {
    let j = t.max(1) as f64;
    JM_C * j.max(2.0).ln() / (j * j.ln().sqrt().exp())
}

/// A stream's e-LOND state: what makes the next test's level. Stored with
/// the stream, so that the bound holds across restarts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ELond {
    /// The stream's false discovery rate.
    pub alpha: f64,
    /// Tests that ran to a verdict.
    pub tests: u64,
    /// Of those, the alarms.
    pub alarms: u64,
}

impl ELond {
    pub fn new(alpha: f64) -> ELond {
        ELond {
            alpha,
            tests: 0,
            alarms: 0,
        }
    }

    /// The level of the next test: α · γ_{t+1} · (alarms + 1), at most α.
    pub fn next_level(&self) -> f64 {
        (self.alpha * gamma(self.tests + 1) * (self.alarms + 1) as f64).min(self.alpha)
    }

    /// The e-value the next test must reach to alarm.
    pub fn next_bar(&self) -> f64 {
        1.0 / self.next_level()
    }

    /// Records the next test, decided at [`ELond::next_level`]: whether it
    /// alarmed. Returns the level it was tested at.
    pub fn record(&mut self, alarmed: bool) -> f64 {
        let level = self.next_level();
        self.tests += 1;
        if alarmed {
            self.alarms += 1;
        }
        level
    }

    /// Tests the next e-value: whether it alarms, recorded.
    pub fn test(&mut self, e_value: f64) -> bool {
        let alarmed = e_value >= self.next_bar();
        self.record(alarmed);
        alarmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::bootstrap::Rng;

    #[test]
    fn gamma_is_javanmard_and_montanaris() {
        // Values worked out with Python's math module.
        assert!((gamma(1) - 0.053_516_770_9).abs() < 1e-9);
        assert!((gamma(10) - 0.003_898_251_9).abs() < 1e-9);
        assert!((gamma(100) - 0.000_415_842_5).abs() < 1e-9);
        let partial: f64 = (1..=1_000_000).map(gamma).sum();
        assert!((partial - 0.521_742).abs() < 1e-5, "{partial}");
        // Decreasing from the second test on, and never negative.
        for t in 2..10_000 {
            assert!(gamma(t + 1) < gamma(t) && gamma(t) > 0.0, "{t}");
        }
    }

    #[test]
    fn each_alarm_raises_the_next_level() {
        let mut s = ELond::new(0.05);
        assert!((s.next_level() - 0.05 * gamma(1)).abs() < 1e-15);
        assert!((s.next_bar() - 373.7).abs() < 0.1, "{}", s.next_bar());
        assert!(!s.test(100.0));
        assert_eq!((s.tests, s.alarms), (1, 0));
        let level = s.next_level();
        assert!(s.test(1.0 / level));
        assert_eq!((s.tests, s.alarms), (2, 1));
        // Two alarms' worth of level at test 3.
        assert!((s.next_level() - 0.05 * gamma(3) * 2.0).abs() < 1e-15);
        // Never above α, however many alarms.
        let many = ELond {
            alpha: 0.05,
            tests: 3,
            alarms: 1000,
        };
        assert_eq!(many.next_level(), 0.05);
    }

    /// The bound itself: streams of 300 tests, 98% of them null, each
    /// test's e-value the likelihood ratio of a standard normal against a
    /// shift of λ = 2.15 (mean 1 under the null; the λ that lets the most
    /// nulls reach 10), the others shifted by 5. The false discovery
    /// proportion averaged over 3000 streams stays below α after 10, 50
    /// and 300 tests; the same streams tested each at α (no correction)
    /// exceed it, so the simulation can tell; and true changes are found.
    #[test]
    fn the_false_discovery_rate_stays_below_alpha_over_the_stream() {
        let alpha = 0.1;
        let lambda = 2.15;
        let mut rng = Rng::new(2024);
        let uniform = |rng: &mut Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let streams = 3000;
        let checks = [10usize, 50, 300];
        let (mut fdp, mut naive_fdp) = ([0.0; 3], 0.0);
        let (mut found, mut real) = (0u64, 0u64);
        for _ in 0..streams {
            let mut s = ELond::new(alpha);
            let (mut false_alarms, mut alarms) = (0u64, 0u64);
            let (mut naive_false, mut naive_alarms) = (0u64, 0u64);
            for t in 1..=300 {
                let null = rng.below(50) != 0;
                // Box-Muller.
                let (u1, u2) = (uniform(&mut rng).max(1e-300), uniform(&mut rng));
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let x = z + if null { 0.0 } else { 5.0 };
                let e = (lambda * x - lambda * lambda / 2.0).exp();
                let alarmed = s.test(e);
                alarms += alarmed as u64;
                false_alarms += (alarmed && null) as u64;
                if e >= 1.0 / alpha {
                    naive_alarms += 1;
                    naive_false += null as u64;
                }
                if !null {
                    real += 1;
                    found += alarmed as u64;
                }
                if let Some(i) = checks.iter().position(|&c| c == t) {
                    fdp[i] += false_alarms as f64 / alarms.max(1) as f64;
                }
            }
            naive_fdp += naive_false as f64 / naive_alarms.max(1) as f64;
        }
        for (i, c) in checks.iter().enumerate() {
            let fdr = fdp[i] / streams as f64;
            assert!(fdr <= alpha, "FDR {fdr} after {c} tests");
        }
        let naive = naive_fdp / streams as f64;
        assert!(naive > 2.0 * alpha, "uncorrected FDR {naive}");
        assert!(found * 20 > real, "found {found} of {real} true changes");
    }
}
