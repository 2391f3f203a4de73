//! The cache-cold term. A model's probes are hot loops: one task calling
//! `getppid` back to back, so the mechanism's rules, filter and code stay
//! in L1. A busy program does its own work between calls (a server: a
//! request's parsing, the network stack), which refills the caches, so
//! each call finds the mechanism's lines further away. Measured on redis
//! under the STIG rules, the hot probe priced a call at about 0.6 of what
//! the A/B found (docs/findings.md, "Busy servers").
//!
//! The term adds to every call what the treatment costs `getppid` with
//! the caches refilled between calls less what it costs the hot loop. The
//! refill is `getppid`'s `touch_kib`: KiB of a 16 MiB ring read before
//! each call, chosen so the reads take about the target's CPU time per
//! call (its CPU time over its calls), rounded to a power of two so that
//! probes are reused, and at most 64 KiB: more than L1d on today's CPUs
//! (48 KiB here), and short enough (about 1 us here) that the probe's
//! difference stays clear of its own noise (at 2 MiB, 26 us an operation,
//! the STIG rules' interval was +-700 ns). It assumes the target's work
//! between calls leaves the mechanism's lines out of L1 as the reads do; a
//! program that does less between calls than reading 16 KiB takes gets no
//! term (its calls find the caches as the hot loop does).

use super::model::{CallCost, ColdTerm, ModelPlan, Probe};

/// The fewest and most KiB read between calls (see the module's header
/// for why at most 64).
pub const MIN_KIB: u32 = 16;
pub const MAX_KIB: u32 = 64;

/// The `touch_kib` whose reads take about `cpu_ns_per_call`, at
/// `ns_per_kib`: the nearest power of two (in log) within
/// [`MIN_KIB`, `MAX_KIB`]; None below `MIN_KIB` (no term).
pub fn touch_kib_for(cpu_ns_per_call: f64, ns_per_kib: f64) -> Option<u32> {
    if !(cpu_ns_per_call > 0.0 && ns_per_kib > 0.0) {
        return None;
    }
    let kib = cpu_ns_per_call / ns_per_kib;
    if kib < MIN_KIB as f64 * std::f64::consts::FRAC_1_SQRT_2 {
        return None;
    }
    let pow = kib
        .log2()
        .round()
        .clamp(MIN_KIB.ilog2() as f64, MAX_KIB.ilog2() as f64);
    Some(1u32 << pow as u32)
}

/// The probe workload with `kib` KiB read before each call.
pub fn workload(kib: u32) -> String {
    format!("getppid touch_kib={kib}")
}

/// `plan` with the cold term for treatment `spec`: the treatment's hot
/// `getppid` probe (reused when the model has it) and its cold one are
/// added, and every call is charged cold - hot.
pub fn with_cold_term(
    mut plan: ModelPlan,
    spec: &str,
    touch_kib: u32,
    cpu_ns_per_call: f64,
) -> ModelPlan {
    let hot = match plan
        .probes
        .iter()
        .position(|p| p.spec == spec && p.workload == "getppid")
    {
        Some(i) => i,
        None => {
            plan.probes.push(Probe {
                spec: spec.to_string(),
                workload: "getppid".into(),
                role: "the cold term's hot loop (the treatment on getppid)".into(),
            });
            plan.probes.len() - 1
        }
    };
    plan.probes.push(Probe {
        spec: spec.to_string(),
        workload: workload(touch_kib),
        role: format!(
            "the cold term: the treatment on getppid with {touch_kib} KiB read before each call \
             (the target's {:.1} us of CPU per call)",
            cpu_ns_per_call / 1000.0
        ),
    });
    let cold = plan.probes.len() - 1;
    let n = plan.probes.len();
    let inner = plan.classify;
    plan.classify = Box::new(move |nr, name| {
        let CallCost {
            class,
            mut weights,
            denied,
        } = inner(nr, name);
        weights.resize(n, 0.0);
        weights[cold] += 1.0;
        weights[hot] -= 1.0;
        CallCost {
            class: format!("{class}; + cold caches"),
            weights,
            denied,
        }
    });
    plan.model = format!(
        "{}; + cold caches: every call also pays what {spec} costs getppid with {touch_kib} KiB \
         read before each call, less what it costs the hot loop",
        plan.model
    );
    plan.cold = Some(ColdTerm {
        touch_kib,
        cpu_ns_per_call,
        hot,
        cold,
    });
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::model::{ProbeFigure, predict};
    use std::collections::BTreeMap;

    #[test]
    fn the_read_matches_the_target_in_powers_of_two() {
        // 12.5 ns a KiB: 500 ns per call is 40 KiB, nearest 32; 2.5 us
        // would be 200 KiB, held at 64.
        assert_eq!(touch_kib_for(500.0, 12.5), Some(32));
        assert_eq!(touch_kib_for(700.0, 12.5), Some(64));
        assert_eq!(touch_kib_for(2500.0, 12.5), Some(MAX_KIB));
        assert_eq!(touch_kib_for(200.0, 12.5), Some(16));
        // Less than about 11 KiB between calls: the hot loop's price.
        assert_eq!(touch_kib_for(100.0, 12.5), None);
        assert_eq!(touch_kib_for(1e9, 12.5), Some(MAX_KIB));
        assert_eq!(touch_kib_for(0.0, 12.5), None);
        assert_eq!(touch_kib_for(f64::NAN, 12.5), None);
    }

    fn figure(spec: &str, workload: &str, delta: f64) -> ProbeFigure {
        ProbeFigure {
            spec: spec.into(),
            workload: workload.into(),
            baseline_ns_per_op: 200.0,
            delta_ns_per_op: delta,
            delta_low_ns: delta - 10.0,
            delta_high_ns: delta + 10.0,
            pairs: 10,
            run_id: 1,
            measured_at: chrono::Utc::now(),
        }
    }

    fn base(spec: &str) -> ModelPlan {
        ModelPlan {
            spec: spec.into(),
            probes: vec![Probe {
                spec: "synthetic".into(),
                workload: "getppid".into(),
                role: "r".into(),
            }],
            model: "m".into(),
            notes: vec![],
            cold: None,
            classify: Box::new(|_, _| CallCost {
                class: "c".into(),
                weights: vec![1.0],
                denied: false,
            }),
        }
    }

    #[test]
    fn every_call_pays_cold_less_hot_and_the_term_is_reported() {
        let plan = with_cold_term(base("t"), "t", 256, 2500.0);
        assert_eq!(plan.probes.len(), 3, "the hot probe is added");
        assert_eq!(plan.probes[2].workload, "getppid touch_kib=256");
        let counts = BTreeMap::from([("read".to_string(), 1000u64)]);
        let figures = vec![
            figure("synthetic", "getppid", 30.0),
            figure("t", "getppid", 20.0),
            figure("t", "getppid touch_kib=256", 50.0),
        ];
        let p = predict(&plan, figures, &counts, "x".into(), 1.0, 10_000_000);
        // 30 + (50 - 20) per call.
        assert!((p.per_syscall[0].ns_per_call - 60.0).abs() < 1e-9);
        assert!(p.per_syscall[0].class.ends_with("+ cold caches"));
        let cold = p.cold.expect("the term");
        assert!((cold.ns_per_call - 30.0).abs() < 1e-9);
        assert!(cold.low_ns < 30.0 && cold.high_ns > 30.0);
        assert_eq!(cold.touch_kib, 256);
        assert!((p.added_ns - 60_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_model_that_has_the_hot_probe_reuses_it() {
        let mut plan = base("t");
        plan.probes[0].spec = "t".into();
        let plan = with_cold_term(plan, "t", 64, 800.0);
        assert_eq!(plan.probes.len(), 2);
        let cost = (plan.classify)(0, "read");
        // The model's own weight on the hot probe, +1 cold, -1 hot.
        assert_eq!(cost.weights, vec![0.0, 1.0]);
    }
}
