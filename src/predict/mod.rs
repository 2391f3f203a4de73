//! `secperf predict`: what a policy would cost a program, without
//! switching it. The program's syscalls are counted by the kernel
//! ([`counts`], read-only: safe on a production host); a policy's cost
//! per syscall comes from a mechanism's cost model ([`model`]: a few A/B
//! measurements secperf makes or has stored, combined by what the policy
//! does with each call); the prediction is their product, summed, against
//! the program's CPU time.
//!
//! Its tables are drawn by `report::sections::prediction`; [`prometheus`]
//! writes the node exporter's text format.

pub mod audit;
pub mod cold;
pub mod counts;
pub mod filter_path;
pub mod landlock;
pub mod model;
pub mod prometheus;
pub mod seccomp;

use anyhow::Result;

use crate::mechanisms::Treatment;
pub use model::{ModelPlan, Prediction, ProbeFigure};

/// Builds a mechanism's model for a treatment and the target's ids.
type Build = fn(&Treatment, audit::Creds) -> Result<ModelPlan>;

/// The mechanisms with a cost model, and how each is built.
const MODELS: &[(&str, Build)] = &[
    ("seccomp", |t, _| seccomp::plan(t)),
    ("audit", audit::plan),
    ("landlock", |t, _| landlock::plan(t)),
];

/// The cost model of treatment `t` for a program with credentials `creds`;
/// a usage error for a mechanism without one.
pub fn plan_for(t: &Treatment, creds: audit::Creds) -> Result<ModelPlan> {
    let name = t.mechanism.name();
    match MODELS.iter().find(|(n, _)| *n == name) {
        Some((_, build)) => build(t, creds),
        None => crate::usage_bail!(
            "secperf predict has cost models for {} only; {name} changes costs that a syscall \
             count does not show: measure it with `secperf overhead -m {t} -- CMD`",
            MODELS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How long a stored probe is reused: the figure of an A/B on a machine
/// whose speed drifts, so not for ever.
pub const PROBE_MAX_AGE_DAYS: i64 = 7;

/// Whether a stored probe measured at `f.measured_at` is still reused at
/// `now`.
pub fn fresh(f: &ProbeFigure, now: chrono::DateTime<chrono::Utc>) -> bool {
    let age = now - f.measured_at;
    age >= chrono::Duration::zero() && age < chrono::Duration::days(PROBE_MAX_AGE_DAYS)
}

/// The key cost probes are stored under for this machine: the kernel
/// release, the CPU model and the online CPU count (a probe measured on
/// another kernel or CPU is not reused).
pub fn machine_key(info: &crate::probe::SystemInfo) -> String {
    format!(
        "{} | {} | {} cpus",
        info.kernel_release().unwrap_or("unknown kernel"),
        info.cpu.model.value().map_or("unknown cpu", String::as_str),
        info.cpu.online_count.value().copied().unwrap_or(0)
    )
}

/// sha256 of the policy files treatment `spec` reads (a profile, a rules
/// file, a sandbox), hex; empty when it reads none. A probe is reused only
/// while its files are unchanged.
pub fn policy_sha256(spec: &str) -> Result<String> {
    let t = Treatment::parse(spec)?;
    let files = t.mechanism.policy_files(&t);
    if files.is_empty() {
        return Ok(String::new());
    }
    let mut all = Vec::new();
    for (_, path) in files {
        let bytes = crate::policy::source::read(std::path::Path::new(&path))
            .map_err(|e| anyhow::anyhow!("reading policy file {path}: {e}"))?;
        all.extend(crate::policy::source::sha256_hex(&bytes).into_bytes());
    }
    Ok(crate::policy::source::sha256_hex(&all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mechanisms_without_a_model_are_usage_errors_naming_overhead() {
        let creds = audit::Creds {
            uid: [0; 4],
            gid: [0; 4],
            loginuid: u32::MAX,
        };
        let e = plan_for(&Treatment::parse("cred:caps").unwrap(), creds)
            .err()
            .unwrap();
        assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
        assert!(e.to_string().contains("overhead -m cred:caps"), "{e}");
        assert!(plan_for(&Treatment::parse("seccomp:allow").unwrap(), creds).is_ok());
    }

    #[test]
    fn probes_are_reused_for_a_week() {
        let now = chrono::Utc::now();
        let at = |days: i64| ProbeFigure {
            spec: "s".into(),
            workload: "getppid".into(),
            baseline_ns_per_op: 1.0,
            delta_ns_per_op: 1.0,
            delta_low_ns: 0.0,
            delta_high_ns: 2.0,
            pairs: 20,
            run_id: 1,
            measured_at: now - chrono::Duration::days(days),
        };
        assert!(fresh(&at(0), now));
        assert!(fresh(&at(6), now));
        assert!(!fresh(&at(7), now));
        assert!(!fresh(&at(-1), now), "from the future: a wrong clock");
    }

    #[test]
    fn policy_hashes_follow_the_file() {
        assert_eq!(policy_sha256("seccomp:allow").unwrap(), "");
        let dir = tempfile::tempdir().unwrap();
        let hash = |name: &str, rule: &str| {
            let path = dir.path().join(name);
            std::fs::write(
                &path,
                format!("-a always,exit -F arch=b64 -S {rule} -k x\n"),
            )
            .unwrap();
            policy_sha256(&format!("audit:rules={}", path.display())).unwrap()
        };
        let a = hash("a.rules", "unlinkat");
        assert_eq!(a.len(), 64);
        assert_ne!(a, hash("b.rules", "renameat"));
        assert_eq!(a, hash("c.rules", "unlinkat"));
    }
}
