//! The CPU: model name and hypervisor flag (/proc/cpuinfo), online CPUs
//! (/sys/devices/system/cpu/online).
//!
//! Mitigation costs depend on the CPU model, and a guest pays for some of
//! them differently (steal time, paravirtual flushes), so results are only
//! comparable with the CPU they were measured on.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Probed;
use super::files;
use crate::sys::cpus;

/// What the probe records about the CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuInfo {
    /// "model name" of the first processor in /proc/cpuinfo (or the
    /// architecture's equivalent line).
    pub model: Probed<String>,
    /// Number of online CPUs.
    pub online_count: Probed<usize>,
    /// Online CPUs in the kernel's list syntax, e.g. "0-3,8".
    pub online_list: Probed<String>,
    /// Whether the CPU flags include "hypervisor" (x86: running as a guest).
    pub hypervisor: Probed<bool>,
}

/// Reads the CPU facts under `root`.
pub fn probe(root: &Path) -> CpuInfo {
    let (model, hypervisor) = match files::read(root, "/proc/cpuinfo") {
        Ok(text) => (parse_model(&text).into(), parse_hypervisor(&text).into()),
        Err(reason) => (
            Probed::unavailable(reason.clone()),
            Probed::unavailable(reason),
        ),
    };
    let online = online(root);
    CpuInfo {
        model,
        online_count: online.as_ref().map(|c| c.len()),
        online_list: online.map(|c| format_cpu_list(&c)),
        hypervisor,
    }
}

/// The online CPUs under `root`; on the real machine with the fallback of
/// [`cpus::online_cpus`] (the CPUs this process may use).
fn online(root: &Path) -> Probed<Vec<usize>> {
    if root == Path::new("/") {
        return cpus::online_cpus()
            .map_err(|e| format!("listing online CPUs: {e:#}"))
            .into();
    }
    let path = "/sys/devices/system/cpu/online";
    files::read(root, path)
        .and_then(|s| cpus::parse_cpu_list(&s).map_err(|e| format!("parsing {path}: {e:#}")))
        .into()
}

/// The first model line of /proc/cpuinfo: "model name" on x86, "cpu model"
/// on MIPS, "cpu" on POWER, "Hardware" on older ARM.
fn parse_model(cpuinfo: &str) -> Result<String, String> {
    for key in ["model name", "cpu model", "cpu", "Hardware"] {
        if let Some(v) = field(cpuinfo, key) {
            return Ok(v.to_string());
        }
    }
    Err("no 'model name' line in /proc/cpuinfo".to_string())
}

/// Whether the first "flags" line lists "hypervisor" (x86 only).
fn parse_hypervisor(cpuinfo: &str) -> Result<bool, String> {
    match field(cpuinfo, "flags") {
        Some(flags) => Ok(flags.split_whitespace().any(|f| f == "hypervisor")),
        None => Err("no 'flags' line in /proc/cpuinfo (not x86)".to_string()),
    }
}

/// The value of the first `key : value` line whose key is exactly `key`.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// Formats CPU numbers in the kernel's list syntax: [0,1,2,5] -> "0-2,5".
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn reads_model_flags_and_online_list() {
        let c = probe(&fixture("securityfs-mounted"));
        assert_eq!(c.model.value().unwrap(), "AMD EPYC 7B13 64-Core Processor");
        assert_eq!(c.hypervisor.value(), Some(&true));
        assert_eq!(c.online_count.value(), Some(&6));
        assert_eq!(c.online_list.value().unwrap(), "0-3,8-9");
    }

    #[test]
    fn missing_files_have_reasons() {
        let c = probe(&fixture("selinux-absent"));
        assert!(c.model.reason().unwrap().contains("cpuinfo"));
        assert!(c.online_count.reason().unwrap().contains("cpu/online"));
    }

    #[test]
    fn cpu_list_round_trips_through_the_kernel_syntax() {
        for list in ["0", "0-1", "0-3,8-9", "1,3,5", "0-2,4,6-7"] {
            let cpus = cpus::parse_cpu_list(list).unwrap();
            assert_eq!(format_cpu_list(&cpus), list);
        }
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[3, 1, 2, 2]), "1-3");
    }

    #[test]
    fn model_falls_back_and_hypervisor_needs_flags() {
        assert_eq!(
            parse_model("processor : 0\ncpu : POWER9\n").unwrap(),
            "POWER9"
        );
        assert!(parse_model("processor : 0\n").is_err());
        assert!(parse_hypervisor("processor : 0\n").is_err());
        assert_eq!(parse_hypervisor("flags : fpu sse\n"), Ok(false));
    }
}
