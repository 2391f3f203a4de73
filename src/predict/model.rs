//! A cost model: what a mechanism adds to each system call, as a linear
//! combination of a few A/B measurements ("probes": a treatment on a
//! workload, each giving ns added per operation with its interval), and
//! the prediction for a program: sum over its syscalls of count x cost.
//!
//! Every per-call cost is `sum_j weight_j(call) x delta_j`, so the total is
//! `sum_j W_j x delta_j` with `W_j` the calls' summed weights; its interval
//! combines the probes' intervals in quadrature (the probes are separate
//! comparisons, taken as independent), each side from its own side of
//! every probe's interval.

use std::collections::BTreeMap;

use serde::Serialize;

/// One A/B measurement a model needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// The treatment (`seccomp:args,insns=32`).
    pub spec: String,
    /// The workload it is measured on (`getppid`).
    pub workload: String,
    /// What it stands for in the model.
    pub role: String,
}

pub use crate::model::ProbeFigure;

/// What a mechanism does to one syscall: its class (said in words) and
/// its cost as weights on the model's probes, per call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallCost {
    pub class: String,
    pub weights: Vec<f64>,
    /// The policy would refuse this call (the program could not run as
    /// counted under it).
    pub denied: bool,
}

/// Prices syscall `(nr, name)` for a model.
pub type Classify = Box<dyn Fn(u32, &str) -> CallCost>;

/// A mechanism's model for one treatment.
pub struct ModelPlan {
    /// The treatment, as given.
    pub spec: String,
    pub probes: Vec<Probe>,
    /// The model in one sentence.
    pub model: String,
    pub notes: Vec<String>,
    /// The cache-cold term, when added ([`crate::predict::cold`]).
    pub cold: Option<ColdTerm>,
    /// Per-call cost of syscall `(nr, name)`.
    pub classify: Classify,
}

/// The cache-cold term of a model: every call also pays what the
/// treatment costs `getppid` with the caches refilled between calls
/// (probe `cold`) less what it costs the hot loop (probe `hot`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColdTerm {
    /// Pages faulted in before each call of the cold probe.
    pub fault_pages: u32,
    /// The target's CPU time per call, ns, that `fault_pages` matches.
    pub cpu_ns_per_call: f64,
    pub hot: usize,
    pub cold: usize,
}

impl ColdTerm {
    /// How the roles of the probes the term adds begin (the model leaves
    /// them out of its warning on probes that measured no cost).
    pub const ROLE: &str = "the cold term";
}

pub use crate::model::prediction::{ColdFigure, Prediction, SyscallLine};

/// The prediction from `counts` (syscall name -> calls) and the probes'
/// figures (same order as `plan.probes`).
pub fn predict(
    plan: &ModelPlan,
    figures: Vec<ProbeFigure>,
    counts: &BTreeMap<String, u64>,
    target: String,
    window_s: f64,
    cpu_ns: u64,
) -> Prediction {
    assert_eq!(figures.len(), plan.probes.len(), "one figure per probe");
    let mut totals = vec![0.0f64; figures.len()];
    let mut lines = Vec::new();
    for (name, &count) in counts {
        let nr = crate::predict::counts::number_of(name).unwrap_or(u32::MAX);
        let cost = (plan.classify)(nr, name);
        let ns_per_call: f64 = cost
            .weights
            .iter()
            .zip(&figures)
            .map(|(w, f)| w * f.delta_ns_per_op)
            .sum();
        for (t, w) in totals.iter_mut().zip(&cost.weights) {
            *t += w * count as f64;
        }
        lines.push(SyscallLine {
            name: name.clone(),
            nr,
            count,
            class: cost.class,
            ns_per_call,
            cost_ns: ns_per_call * count as f64,
            denied: cost.denied,
        });
    }
    lines.sort_by(|a, b| {
        b.cost_ns
            .abs()
            .total_cmp(&a.cost_ns.abs())
            .then(b.count.cmp(&a.count))
    });
    let (added, low, high) = combine(&totals, &figures);
    let pct = |ns: f64| {
        if cpu_ns == 0 {
            f64::NAN
        } else {
            ns / cpu_ns as f64 * 100.0
        }
    };
    let mut notes = plan.notes.clone();
    let denied: Vec<&str> = lines
        .iter()
        .filter(|l| l.denied)
        .map(|l| l.name.as_str())
        .collect();
    // A probe the prediction leans on whose interval includes no cost:
    // its calls are priced from a figure that may be noise.
    // The cold term's own probes are left out: their difference is
    // reported with its interval, and a mechanism that costs getppid
    // nothing (Landlock) rightly measures no cost on both.
    let cold_probe = |j: usize| plan.probes[j].role.starts_with(ColdTerm::ROLE);
    for (j, f) in figures.iter().enumerate() {
        if totals[j] != 0.0 && f.delta_low_ns <= 0.0 && f.delta_high_ns >= 0.0 && !cold_probe(j) {
            notes.push(format!(
                "warning: the probe for {} measured {:+.1} ns [{:+.1}, {:+.1}] per call, an \
                 interval that includes no cost; the calls priced from it may be priced from \
                 noise (`--remeasure` measures the probes again)",
                plan.probes[j].role, f.delta_ns_per_op, f.delta_low_ns, f.delta_high_ns
            ));
        }
    }
    if !denied.is_empty() {
        notes.push(format!(
            "the policy refuses {} of the calls this program made ({}): under it the program \
             would fail or take another path, so the prediction is for the calls as counted",
            denied.len(),
            denied.join(", ")
        ));
    }
    let cold = plan.cold.map(|c| {
        let mut w = vec![0.0; figures.len()];
        w[c.cold] += 1.0;
        w[c.hot] -= 1.0;
        let (ns, low, high) = combine(&w, &figures);
        ColdFigure {
            fault_pages: c.fault_pages,
            cpu_ns_per_call: c.cpu_ns_per_call,
            probe_ns_per_op: figures[c.cold].baseline_ns_per_op,
            ns_per_call: ns,
            low_ns: low,
            high_ns: high,
        }
    });
    Prediction {
        mechanism: plan.spec.clone(),
        target,
        window_s,
        cpu_ns,
        syscalls: counts.values().sum(),
        added_ns: added,
        added_low_ns: low,
        added_high_ns: high,
        overhead_pct: pct(added),
        overhead_low_pct: pct(low),
        overhead_high_pct: pct(high),
        model: plan.model.clone(),
        probes: figures,
        cold,
        notes,
        per_syscall: lines,
    }
}

/// `sum_j W_j x delta_j` and its interval: each probe's distance to its
/// own bound, scaled by `W_j` (a negative weight swaps the bounds),
/// combined in quadrature.
pub fn combine(weights: &[f64], figures: &[ProbeFigure]) -> (f64, f64, f64) {
    let mut total = 0.0;
    let (mut down, mut up) = (0.0f64, 0.0f64);
    for (w, f) in weights.iter().zip(figures) {
        let mid = w * f.delta_ns_per_op;
        let (a, b) = (w * f.delta_low_ns, w * f.delta_high_ns);
        let (lo, hi) = (a.min(b), a.max(b));
        total += mid;
        down += (mid - lo).powi(2);
        up += (hi - mid).powi(2);
    }
    (total, total - down.sqrt(), total + up.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(delta: f64, low: f64, high: f64) -> ProbeFigure {
        ProbeFigure {
            spec: "s".into(),
            workload: "getppid".into(),
            baseline_ns_per_op: 100.0,
            delta_ns_per_op: delta,
            delta_low_ns: low,
            delta_high_ns: high,
            pairs: 10,
            run_id: 1,
            measured_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn intervals_add_in_quadrature_and_negative_weights_swap_bounds() {
        let f = [figure(10.0, 7.0, 14.0), figure(4.0, 1.0, 5.0)];
        let (t, lo, hi) = combine(&[1.0, 0.0], &f);
        assert_eq!((t, lo, hi), (10.0, 7.0, 14.0));
        let (t, lo, hi) = combine(&[100.0, 0.0], &f);
        assert!(
            (t - 1000.0).abs() < 1e-9 && (lo - 700.0).abs() < 1e-9 && (hi - 1400.0).abs() < 1e-9
        );
        // 10 - 4 = 6; down: sqrt(3^2 + 1^2), up: sqrt(4^2 + 3^2) = 5.
        let (t, lo, hi) = combine(&[1.0, -1.0], &f);
        assert!((t - 6.0).abs() < 1e-9);
        assert!((lo - (6.0 - 10f64.sqrt())).abs() < 1e-9, "{lo}");
        assert!((hi - 11.0).abs() < 1e-9, "{hi}");
    }

    #[test]
    fn prediction_sums_count_times_cost_per_syscall_dearest_first() {
        let plan = ModelPlan {
            spec: "x".into(),
            probes: vec![
                Probe {
                    spec: "a".into(),
                    workload: "getppid".into(),
                    role: "r".into(),
                },
                Probe {
                    spec: "b".into(),
                    workload: "getppid".into(),
                    role: "r".into(),
                },
            ],
            model: "m".into(),
            notes: vec![],
            cold: None,
            classify: Box::new(|_nr, name| CallCost {
                class: name.into(),
                weights: if name == "read" {
                    vec![1.0, 0.0]
                } else {
                    vec![0.0, 2.0]
                },
                denied: name == "reboot",
            }),
        };
        let counts = BTreeMap::from([
            ("read".to_string(), 1000u64),
            ("write".to_string(), 10),
            ("reboot".to_string(), 1),
        ]);
        let p = predict(
            &plan,
            vec![figure(10.0, 8.0, 12.0), figure(4.0, 3.0, 5.0)],
            &counts,
            "t".into(),
            1.0,
            1_000_000,
        );
        assert_eq!(p.syscalls, 1011);
        assert_eq!(p.per_syscall[0].name, "read");
        assert_eq!(p.per_syscall[0].cost_ns, 10_000.0);
        assert_eq!(p.per_syscall[1].cost_ns, 80.0);
        assert!((p.added_ns - 10_088.0).abs() < 1e-9);
        assert!((p.overhead_pct - 1.0088).abs() < 1e-9);
        assert!(p.added_low_ns < p.added_ns && p.added_high_ns > p.added_ns);
        assert!(
            p.notes.iter().any(|n| n.contains("reboot")),
            "{:?}",
            p.notes
        );
        assert!(!p.notes.iter().any(|n| n.contains("includes no cost")));
        // A probe whose interval includes 0, that priced calls: a warning.
        let p = predict(
            &plan,
            vec![figure(10.0, -2.0, 12.0), figure(4.0, 3.0, 5.0)],
            &counts,
            "t".into(),
            1.0,
            1_000_000,
        );
        assert!(
            p.notes.iter().any(|n| n.contains("includes no cost")),
            "{:?}",
            p.notes
        );
    }
}
