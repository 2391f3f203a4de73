//! The BPF JIT: `net.core.bpf_jit_enable` and `net.core.bpf_jit_harden`
//! (/proc/sys/net/core/).
//!
//! Seccomp filters are classic BPF run on every syscall and the BPF LSM's
//! programs run on every hook: whether they are JIT-compiled, and whether
//! the JIT blinds constants (hardening, which costs instructions), changes
//! what both mechanisms cost. `bpf_jit_harden` is readable by root only.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Probed, files};

const ENABLE: &str = "/proc/sys/net/core/bpf_jit_enable";
const HARDEN: &str = "/proc/sys/net/core/bpf_jit_harden";

/// The two BPF JIT sysctls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BpfJitInfo {
    /// 0 interpreter, 1 JIT, 2 JIT with debug output.
    pub enable: Probed<u32>,
    /// 0 no constant blinding, 1 for unprivileged programs, 2 for all.
    pub harden: Probed<u32>,
}

impl Default for BpfJitInfo {
    /// A snapshot from before this was probed.
    fn default() -> Self {
        BpfJitInfo {
            enable: super::not_recorded(),
            harden: super::not_recorded(),
        }
    }
}

impl BpfJitInfo {
    /// Human words for a `bpf_jit_enable` value.
    pub fn enable_text(v: u32) -> &'static str {
        match v {
            0 => "off (interpreter)",
            1 => "on",
            2 => "on, debug output",
            _ => "unknown",
        }
    }

    /// Human words for a `bpf_jit_harden` value.
    pub fn harden_text(v: u32) -> &'static str {
        match v {
            0 => "off",
            1 => "unprivileged programs",
            2 => "all programs",
            _ => "unknown",
        }
    }
}

/// Reads both sysctls under `root`.
pub fn probe(root: &Path) -> BpfJitInfo {
    BpfJitInfo {
        enable: files::read_u32(root, ENABLE).into(),
        harden: files::read_u32(root, HARDEN).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::write_tree;

    #[test]
    fn reads_both_sysctls() {
        let root = write_tree(&[(ENABLE, "1\n"), (HARDEN, "2\n")]);
        let j = probe(root.path());
        assert_eq!(j.enable, Probed::Ok(1));
        assert_eq!(j.harden, Probed::Ok(2));
        assert_eq!(BpfJitInfo::harden_text(2), "all programs");
    }

    #[test]
    fn missing_or_garbled_files_have_reasons() {
        let root = write_tree(&[(ENABLE, "yes\n")]);
        let j = probe(root.path());
        assert!(j.enable.reason().unwrap().contains("expected a number"));
        assert!(j.harden.reason().unwrap().contains("bpf_jit_harden"));
    }
}
