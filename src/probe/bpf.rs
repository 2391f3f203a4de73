//! BPF LSM: whether "bpf" is among the active LSMs, whether the kernel has
//! BTF (/sys/kernel/btf/vmlinux, needed to load BPF LSM programs), and
//! /proc/sys/kernel/unprivileged_bpf_disabled.
//!
//! With the BPF LSM active every LSM hook goes through a (usually empty)
//! BPF trampoline slot; attached programs add their own cost on top. Both
//! decide how LSM-hook-heavy workloads compare across machines.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::lsm::LsmInfo;
use super::{Probed, files};

const BTF: &str = "/sys/kernel/btf/vmlinux";
const UNPRIVILEGED: &str = "/proc/sys/kernel/unprivileged_bpf_disabled";

/// BPF LSM facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BpfLsmInfo {
    /// "bpf" is in the active LSM list.
    pub active: Probed<bool>,
    /// /sys/kernel/btf/vmlinux exists (CONFIG_DEBUG_INFO_BTF).
    pub btf_vmlinux: bool,
    /// 0: unprivileged bpf() allowed, 1: disabled until reboot, 2: disabled
    /// (an admin may re-enable).
    pub unprivileged_bpf_disabled: Probed<u32>,
}

impl BpfLsmInfo {
    /// Human words for `unprivileged_bpf_disabled`.
    pub fn unprivileged_text(value: u32) -> &'static str {
        match value {
            0 => "allowed",
            1 => "disabled, locked",
            2 => "disabled",
            _ => "unknown",
        }
    }
}

/// Reads the BPF facts under `root`; `lsm` is the active LSM list probe.
pub fn probe(root: &Path, lsm: &Probed<LsmInfo>) -> BpfLsmInfo {
    BpfLsmInfo {
        active: match lsm {
            Probed::Ok(l) => Probed::Ok(l.has("bpf")),
            Probed::Unavailable { reason } => {
                Probed::unavailable(format!("active LSM list unknown: {reason}"))
            }
        },
        btf_vmlinux: files::exists(root, BTF),
        unprivileged_bpf_disabled: files::read_u32(root, UNPRIVILEGED).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;
    use crate::probe::lsm::LsmSource;

    #[test]
    fn reads_fixture() {
        let lsm = Probed::Ok(LsmInfo {
            modules: vec!["capability".into(), "bpf".into()],
            source: LsmSource::Securityfs,
        });
        let b = probe(&fixture("securityfs-mounted"), &lsm);
        assert_eq!(b.active, Probed::Ok(true));
        assert!(b.btf_vmlinux);
        assert_eq!(b.unprivileged_bpf_disabled, Probed::Ok(2));
    }

    #[test]
    fn unknown_list_and_missing_files() {
        let b = probe(
            &fixture("selinux-absent"),
            &Probed::unavailable("no securityfs"),
        );
        assert_eq!(
            b.active.reason(),
            Some("active LSM list unknown: no securityfs")
        );
        assert!(!b.btf_vmlinux);
        assert!(b.unprivileged_bpf_disabled.reason().is_some());
    }
}
