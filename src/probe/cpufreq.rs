//! CPU frequency scaling: the governor of each cpufreq policy
//! (/sys/devices/system/cpu/cpufreq/policy*/scaling_governor) and turbo
//! boost (/sys/devices/system/cpu/cpufreq/boost, or intel_pstate's
//! no_turbo).
//!
//! A power-saving governor or boost that comes and goes moves every figure
//! by more than most mechanisms cost. Virtual machines usually expose
//! neither (the host decides), which is recorded as "not exposed".

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Probed, files};

const CPUFREQ: &str = "/sys/devices/system/cpu/cpufreq";
const BOOST: &str = "/sys/devices/system/cpu/cpufreq/boost";
const NO_TURBO: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";

/// Governor and boost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFreqInfo {
    /// The governor, when every policy has the same one ("performance"),
    /// else each policy's ("policy0=performance policy2=powersave").
    pub governor: Probed<String>,
    /// "on" or "off".
    pub boost: Probed<String>,
}

impl Default for CpuFreqInfo {
    /// A snapshot from before this was probed.
    fn default() -> Self {
        CpuFreqInfo {
            governor: super::not_recorded(),
            boost: super::not_recorded(),
        }
    }
}

/// Reads the cpufreq tree under `root`.
pub fn probe(root: &Path) -> CpuFreqInfo {
    CpuFreqInfo {
        governor: governor(root).into(),
        boost: boost(root).into(),
    }
}

fn governor(root: &Path) -> Result<String, String> {
    let dir = files::under(root, CPUFREQ);
    let entries = std::fs::read_dir(&dir)
        .map_err(|_| format!("not exposed (no {CPUFREQ}; usual in virtual machines)"))?;
    let mut policies: Vec<(u32, String)> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(n) = name.strip_prefix("policy").and_then(|n| n.parse().ok()) else {
            continue;
        };
        let file = format!("{CPUFREQ}/{name}/scaling_governor");
        policies.push((n, files::read_trimmed(root, &file)?));
    }
    policies.sort();
    match policies.as_slice() {
        [] => Err(format!(
            "not exposed (no cpufreq policy in {CPUFREQ}; usual in virtual machines)"
        )),
        [(_, first), rest @ ..] if rest.iter().all(|(_, g)| g == first) => Ok(first.clone()),
        all => Ok(all
            .iter()
            .map(|(n, g)| format!("policy{n}={g}"))
            .collect::<Vec<_>>()
            .join(" ")),
    }
}

fn boost(root: &Path) -> Result<String, String> {
    let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
    if files::exists(root, BOOST) {
        return files::read_u32(root, BOOST).map(|v| on_off(v != 0));
    }
    if files::exists(root, NO_TURBO) {
        return files::read_u32(root, NO_TURBO).map(|v| on_off(v == 0));
    }
    Err(format!(
        "not exposed (neither {BOOST} nor {NO_TURBO}; usual in virtual machines)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::write_tree;

    const P0: &str = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor";
    const P2: &str = "/sys/devices/system/cpu/cpufreq/policy2/scaling_governor";
    const P10: &str = "/sys/devices/system/cpu/cpufreq/policy10/scaling_governor";

    #[test]
    fn one_governor_and_boost() {
        let root = write_tree(&[(P0, "performance\n"), (P2, "performance\n"), (BOOST, "1\n")]);
        let f = probe(root.path());
        assert_eq!(f.governor, Probed::Ok("performance".into()));
        assert_eq!(f.boost, Probed::Ok("on".into()));
    }

    #[test]
    fn mixed_governors_are_listed_per_policy_in_order() {
        let root = write_tree(&[
            (P10, "powersave\n"),
            (P2, "schedutil\n"),
            (P0, "schedutil\n"),
        ]);
        assert_eq!(
            probe(root.path()).governor,
            Probed::Ok("policy0=schedutil policy2=schedutil policy10=powersave".into())
        );
    }

    #[test]
    fn intel_pstate_no_turbo_is_inverted() {
        let root = write_tree(&[(P0, "powersave\n"), (NO_TURBO, "1\n")]);
        assert_eq!(probe(root.path()).boost, Probed::Ok("off".into()));
        let root = write_tree(&[(NO_TURBO, "0\n")]);
        assert_eq!(probe(root.path()).boost, Probed::Ok("on".into()));
    }

    #[test]
    fn a_vm_exposes_nothing() {
        // The directory without policies, as on a KVM guest; then none at all.
        let root = write_tree(&[("/sys/devices/system/cpu/cpufreq/.keep", "")]);
        let f = probe(root.path());
        assert!(
            f.governor.reason().unwrap().starts_with("not exposed"),
            "{f:?}"
        );
        assert!(
            f.boost.reason().unwrap().starts_with("not exposed"),
            "{f:?}"
        );
        let f = probe(write_tree(&[]).path());
        assert!(
            f.governor.reason().unwrap().starts_with("not exposed"),
            "{f:?}"
        );
    }
}
