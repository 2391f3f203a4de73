//! The seccomp cost model: a call the action cache allows costs the
//! cache's check; any other call runs the filter (every stacked copy), at
//! an entry cost plus a cost per instruction executed. The three costs
//! are properties of the machine, not of the policy, measured once on
//! `getppid` under synthetic filters: `seccomp:allow` (cached),
//! `seccomp:args` at two lengths (never cached; the instructions each
//! runs for getppid are counted by [`super::filter_path`]). The user's
//! filter enters only through [`super::filter_path`]: for each syscall
//! number the program made, cached or how many instructions.

use anyhow::Result;

use super::filter_path::{self, FilterPath};
use super::model::{CallCost, ModelPlan, Probe};
use crate::mechanisms::Treatment;
use crate::mechanisms::seccomp::{AUDIT_ARCH_NATIVE, FilterKind, build_filter};

/// The synthetic filters' lengths (`insns=`) for the two running probes.
const SHORT: usize = 32;
const LONG: usize = 1024;

pub fn plan(t: &Treatment) -> Result<ModelPlan> {
    let Some(arch) = AUDIT_ARCH_NATIVE else {
        anyhow::bail!("seccomp filters are only modelled on x86_64 and aarch64");
    };
    let (prog, filters) = crate::mechanisms::seccomp::plan(t)?;
    let getppid = libc::SYS_getppid as u32;
    let ran = |insns: usize| -> Result<usize> {
        let p = build_filter(FilterKind::Args, arch, insns)?;
        match filter_path::path(&p, arch, getppid) {
            Some(FilterPath::Runs { insns, .. }) => Ok(insns),
            other => anyhow::bail!("the synthetic args filter gave {other:?} for getppid"),
        }
    };
    let (short, long) = (ran(SHORT)? as f64, ran(LONG)? as f64);
    let spec = t.to_string();
    // When the user's filter caches getppid too, its cached calls are
    // priced by the filter itself on getppid (its own cached path, stacked
    // filters included: Docker's profile cost +19.7 ns there, the
    // synthetic allow-all filter +17.3), not the synthetic one.
    let own_cached = spec != "seccomp:allow"
        && matches!(
            filter_path::path(&prog, arch, getppid),
            Some(FilterPath::Cached)
        );
    let mut probes = vec![
        Probe {
            spec: "seccomp:allow".into(),
            workload: "getppid".into(),
            role: "a call the action cache allows".into(),
        },
        Probe {
            spec: format!("seccomp:args,insns={SHORT}"),
            workload: "getppid".into(),
            role: format!("a filter run of {short} instructions"),
        },
        Probe {
            spec: format!("seccomp:args,insns={LONG}"),
            workload: "getppid".into(),
            role: format!("a filter run of {long} instructions"),
        },
    ];
    if own_cached {
        probes.push(Probe {
            spec: spec.clone(),
            workload: "getppid".into(),
            role: "a call this filter's action cache allows".into(),
        });
    }
    let width = probes.len();
    let cached = if own_cached { 3 } else { 0 };
    let weights = move |w: [f64; 3]| -> Vec<f64> {
        let mut v = w.to_vec();
        v.resize(width, 0.0);
        v
    };
    let n = filters as f64;
    let stacked = if filters > 1 {
        format!(" x {filters} filters")
    } else {
        String::new()
    };
    let check = if own_cached {
        "the action cache's check (this filter on getppid, which it caches)"
    } else {
        "the action cache's check (seccomp:allow on getppid)"
    };
    let model = format!(
        "ns per call = {check} when the cache allows the call; else (entry + per instruction x \
         instructions run){stacked}, the line through two synthetic filters' runs of {short} \
         and {long} instructions on getppid"
    );
    let notes = vec![format!(
        "the filter ({} instructions{stacked}) was run on each syscall number with every \
         argument 0: a call whose path depends on its arguments may run a few more or fewer \
         instructions",
        prog.len()
    )];
    let classify = move |nr: u32, _name: &str| -> CallCost {
        match filter_path::path(&prog, arch, nr) {
            Some(FilterPath::Cached) => {
                let mut w = weights([0.0; 3]);
                w[cached] = 1.0;
                CallCost {
                    class: "cached allow".into(),
                    weights: w,
                    denied: false,
                }
            }
            Some(p @ FilterPath::Runs { insns, .. }) => {
                // Linear interpolation (or extrapolation) between the
                // two runs: entry + slope x insns, in the probes' terms.
                let i = insns as f64;
                let w_long = (i - short) / (long - short);
                CallCost {
                    class: format!("filter runs {insns} insns{stacked}"),
                    weights: weights([0.0, n * (1.0 - w_long), n * w_long]),
                    denied: !p.allows(),
                }
            }
            None => CallCost {
                class: "not run (unknown number)".into(),
                weights: weights([0.0; 3]),
                denied: false,
            },
        }
    };
    Ok(ModelPlan {
        spec,
        probes,
        model,
        notes,
        cold: None,
        classify: Box::new(classify),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_only_filter_is_all_cache_and_an_args_filter_interpolates() {
        // The synthetic allow-all filter prices its cached calls itself.
        let p = plan(&Treatment::parse("seccomp:allow").unwrap()).unwrap();
        assert_eq!(p.probes.len(), 3);
        let c = (p.classify)(libc::SYS_read as u32, "read");
        assert_eq!(c.weights, vec![1.0, 0.0, 0.0]);
        // Another filter that caches getppid: by its own getppid figure.
        let t = Treatment::parse("seccomp:allow,insns=64").unwrap();
        let p = plan(&t).unwrap();
        assert_eq!(p.probes[3].spec, t.to_string());
        let c = (p.classify)(libc::SYS_read as u32, "read");
        assert_eq!(c.weights, vec![0.0, 0.0, 0.0, 1.0]);
        assert!(!c.denied);
        let c = (p.classify)(libc::SYS_kexec_load as u32, "kexec_load");
        assert!(c.denied, "{c:?}");

        // The probe's own filter gives exactly that probe.
        let t = Treatment::parse(&format!("seccomp:args,insns={LONG}")).unwrap();
        let c = (plan(&t).unwrap().classify)(libc::SYS_getppid as u32, "getppid");
        assert!(
            (c.weights[2] - 1.0).abs() < 1e-9 && c.weights[1].abs() < 1e-9,
            "{c:?}"
        );
        let t = Treatment::parse(&format!("seccomp:args,insns={SHORT},filters=3")).unwrap();
        let c = (plan(&t).unwrap().classify)(libc::SYS_getppid as u32, "getppid");
        assert!(
            (c.weights[1] - 3.0).abs() < 1e-9 && c.weights[2].abs() < 1e-9,
            "{c:?}"
        );
        assert!(c.class.contains("x 3 filters"), "{}", c.class);
    }
}
