//! The running kernel: release, version string, architecture (uname) and the
//! boot command line (/proc/cmdline).
//!
//! Release and command line decide most of what the other probes find
//! (`lsm=`, `lockdown=`, `mitigations=`, `audit=`), and the release is how
//! stored runs from different kernels are told apart.

use std::ffi::CStr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Probed;
use super::files;

/// What uname and /proc/cmdline say about the kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelInfo {
    /// `uname -r`, e.g. "6.18.4-arch1-1".
    pub release: String,
    /// `uname -v`, e.g. "#1 SMP PREEMPT_DYNAMIC Tue, 06 Jan 2026".
    pub version: String,
    /// `uname -m`, e.g. "x86_64".
    pub machine: String,
    /// The boot command line, as in /proc/cmdline.
    pub cmdline: Probed<String>,
}

/// A command line with virtme-ng's encoded guest script (`virtme.exec=`,
/// in a guest secperf booted: secperf's own command and temporary paths)
/// shortened to `virtme.exec=(secperf)`.
pub fn without_virtme_script(cmdline: &str) -> String {
    cmdline
        .split(' ')
        .map(|w| {
            if w.starts_with("virtme.exec=") {
                "virtme.exec=(secperf)"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads uname and `root`/proc/cmdline.
pub fn probe(root: &Path) -> Probed<KernelInfo> {
    let cmdline = files::read_trimmed(root, "/proc/cmdline")
        .map(|c| without_virtme_script(&c))
        .into();
    match uname() {
        Ok((release, version, machine)) => Probed::Ok(KernelInfo {
            release,
            version,
            machine,
            cmdline,
        }),
        Err(reason) => Probed::unavailable(reason),
    }
}

/// (release, version, machine) from uname(2).
fn uname() -> Result<(String, String, String), String> {
    // SAFETY: utsname is plain data (arrays of c_char), so all-zero is valid;
    // uname fills each field with a NUL-terminated string, and we read them
    // only after it succeeded.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return Err(crate::sys::SysError::last("uname").to_string());
        }
        let field = |f: &[libc::c_char]| CStr::from_ptr(f.as_ptr()).to_string_lossy().into_owned();
        Ok((field(&u.release), field(&u.version), field(&u.machine)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn reads_the_command_line_under_root() {
        let k = probe(&fixture("securityfs-mounted"));
        let k = k.value().unwrap();
        assert_eq!(
            k.cmdline.value().unwrap(),
            "BOOT_IMAGE=/vmlinuz root=/dev/sda1 lsm=lockdown,capability,landlock,bpf"
        );
        assert!(!k.release.is_empty());
        assert!(!k.machine.is_empty());
    }

    #[test]
    fn missing_command_line_has_a_reason() {
        let k = probe(&fixture("selinux-absent"));
        let reason = k.value().unwrap().cmdline.reason().unwrap().to_string();
        assert!(reason.contains("proc/cmdline"), "{reason}");
    }
}
