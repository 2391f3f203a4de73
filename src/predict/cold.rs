//! The cache-cold term. A model's probes are hot loops: one task calling
//! `getppid` back to back, so the mechanism's rules, filter and code stay
//! in L1. A busy program does its own work between calls (a server: the
//! network stack, its own code), which refills the caches, so each call
//! finds the mechanism's lines further away. Measured on redis under the
//! STIG rules, the hot probe priced a call at about 0.6 of what the A/B
//! found, and under Docker's seccomp profile at about half
//! (docs/findings.md, "Busy servers").
//!
//! The term adds to every call what the treatment costs `getppid` with
//! the kernel's page-fault path run before each call (the `getppid_cold`
//! workload: kernel code and data through the caches, as a server's
//! network stack, and no system call) less what it costs the hot loop.
//! One fault a call, when the target spends at least half a fault's time
//! per call (its CPU time over its calls): a fault is about 1.2-1.5 us of
//! kernel work here, near the kernel time a busy server spends between
//! calls (redis, nginx: 2.5-3 us of CPU a call, most of it system). More
//! faults did not fit better: with 2-4 (as many as the target's CPU time
//! per call) Docker's profile was predicted at 1.6-2 times its A/B for
//! redis and nginx, where the STIG rules barely moved (+207 ns [194, 220]
//! at 1 fault, +213 [163, 266] at 4); one is the setting that matched the
//! three servers' A/Bs here, a calibration on this machine. Reading data
//! instead (64 KiB before each call) evicted L1d only, and gave seccomp +4
//! ns where a fault gives +25. It assumes the target's work between calls
//! goes through the caches as the kernel's fault path does; a program
//! that does less between calls than half a fault gets no term (its calls
//! find the caches as the hot loop does).

use super::model::{CallCost, ColdTerm, ModelPlan, Probe};

/// The fewest and most pages faulted between calls (see the module's
/// header for why one).
pub const MIN_PAGES: u32 = 1;
pub const MAX_PAGES: u32 = 1;

/// The `fault_pages` whose faults take about `cpu_ns_per_call`, at
/// `ns_per_page`: the nearest whole number within [`MIN_PAGES`,
/// `MAX_PAGES`]; None when the target spends less than half a fault's
/// time per call (no term).
pub fn fault_pages_for(cpu_ns_per_call: f64, ns_per_page: f64) -> Option<u32> {
    if !(cpu_ns_per_call > 0.0 && ns_per_page > 0.0) {
        return None;
    }
    let pages = cpu_ns_per_call / ns_per_page;
    if pages < 0.5 {
        return None;
    }
    Some((pages.round() as u32).clamp(MIN_PAGES, MAX_PAGES))
}

/// The probe workload with `pages` faults before each call.
pub fn workload(pages: u32) -> String {
    format!(
        "{} fault_pages={pages}",
        crate::workloads::getppid_cold::NAME
    )
}

/// What adding the term has to say: a progress line (the probe chosen),
/// or a note for the prediction (why there is no term).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    Progress(String),
    Note(String),
}

/// `plan` with the cold term for a target that spends `cpu_ns_per_call`
/// of CPU per call, when it spends enough (timing a fault on this
/// machine first).
pub fn for_target(
    plan: ModelPlan,
    spec: &str,
    cpu_ns_per_call: f64,
) -> anyhow::Result<(ModelPlan, Said)> {
    let ns_per_page = crate::workloads::getppid_cold::fault_ns_per_page()?;
    Ok(match fault_pages_for(cpu_ns_per_call, ns_per_page) {
        Some(pages) => (
            with_cold_term(plan, spec, pages, cpu_ns_per_call),
            Said::Progress(format!(
                "spent {:.1} us of CPU per call: the cache-cold term's probe faults in {pages} \
                 page{} before each call ({:.1} us a fault here)",
                cpu_ns_per_call / 1000.0,
                if pages == 1 { "" } else { "s" },
                ns_per_page / 1000.0
            )),
        ),
        None => (
            plan,
            Said::Note(format!(
                "no cache-cold term: {:.0} ns of CPU per call is less than half a page fault's \
                 {:.0} ns here, so its calls find the caches about as the hot probes do",
                cpu_ns_per_call, ns_per_page
            )),
        ),
    })
}

/// `plan` with the cold term for treatment `spec`: the treatment's hot
/// `getppid` probe (reused when the model has it) and its cold one are
/// added, and every call is charged cold - hot.
pub fn with_cold_term(
    mut plan: ModelPlan,
    spec: &str,
    fault_pages: u32,
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
                role: format!("{}'s hot loop (the treatment on getppid)", ColdTerm::ROLE),
            });
            plan.probes.len() - 1
        }
    };
    plan.probes.push(Probe {
        spec: spec.to_string(),
        workload: workload(fault_pages),
        role: format!(
            "{}: the treatment on getppid with {fault_pages} page fault{} before each call \
             (the target's {:.1} us of CPU per call)",
            ColdTerm::ROLE,
            if fault_pages == 1 { "" } else { "s" },
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
        "{}; + cold caches: every call also pays what {spec} costs getppid with {fault_pages} \
         page fault(s) before each call, less what it costs the hot loop",
        plan.model
    );
    plan.cold = Some(ColdTerm {
        fault_pages,
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
    fn one_fault_when_the_target_spends_half_a_faults_time_or_more() {
        // 1.5 us a fault.
        assert_eq!(fault_pages_for(3300.0, 1500.0), Some(1));
        assert_eq!(fault_pages_for(1000.0, 1500.0), Some(1));
        assert_eq!(fault_pages_for(17_000.0, 1500.0), Some(MAX_PAGES));
        // Less than half a fault between calls: the hot loop's price.
        assert_eq!(fault_pages_for(600.0, 1500.0), None);
        assert_eq!(fault_pages_for(0.0, 1500.0), None);
        assert_eq!(fault_pages_for(f64::NAN, 1500.0), None);
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
        let plan = with_cold_term(base("t"), "t", 2, 2500.0);
        assert_eq!(plan.probes.len(), 3, "the hot probe is added");
        assert_eq!(plan.probes[2].workload, "getppid_cold fault_pages=2");
        let counts = BTreeMap::from([("read".to_string(), 1000u64)]);
        let figures = vec![
            figure("synthetic", "getppid", 30.0),
            figure("t", "getppid", 20.0),
            figure("t", "getppid_cold fault_pages=2", 50.0),
        ];
        let p = predict(&plan, figures, &counts, "x".into(), 1.0, 10_000_000);
        // 30 + (50 - 20) per call.
        assert!((p.per_syscall[0].ns_per_call - 60.0).abs() < 1e-9);
        assert!(p.per_syscall[0].class.ends_with("+ cold caches"));
        let cold = p.cold.expect("the term");
        assert!((cold.ns_per_call - 30.0).abs() < 1e-9);
        assert!(cold.low_ns < 30.0 && cold.high_ns > 30.0);
        assert_eq!(cold.fault_pages, 2);
        assert!((p.added_ns - 60_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_term_of_no_cost_is_not_a_warning() {
        // Landlock costs getppid nothing, hot or cold: its probes' intervals
        // include 0, rightly.
        let plan = with_cold_term(base("t"), "t", 1, 2500.0);
        let counts = BTreeMap::from([("read".to_string(), 1000u64)]);
        let figures = vec![
            figure("synthetic", "getppid", 30.0),
            figure("t", "getppid", 0.5),
            figure("t", "getppid_cold fault_pages=1", -0.5),
        ];
        let p = predict(&plan, figures, &counts, "x".into(), 1.0, 10_000_000);
        assert!(
            !p.notes.iter().any(|n| n.contains("includes no cost")),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn a_model_that_has_the_hot_probe_reuses_it() {
        let mut plan = base("t");
        plan.probes[0].spec = "t".into();
        let plan = with_cold_term(plan, "t", 1, 800.0);
        assert_eq!(plan.probes.len(), 2);
        let cost = (plan.classify)(0, "read");
        // The model's own weight on the hot probe, +1 cold, -1 hot.
        assert_eq!(cost.weights, vec![0.0, 1.0]);
    }
}
