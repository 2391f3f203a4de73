//! seccomp: whether the kernel has it (prctl PR_GET_SECCOMP), which filter
//! actions it offers (/proc/sys/kernel/seccomp/actions_avail), and the mode
//! the probing process itself runs in (/proc/self/status `Seccomp:`).
//!
//! A process that already runs under a filter (a container runtime's
//! default profile, systemd's SystemCallFilter=) pays for it on every
//! syscall of every workload, so the probe records it next to the results.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Probed, files};

const ACTIONS: &str = "/proc/sys/kernel/seccomp/actions_avail";
const STATUS: &str = "/proc/self/status";

/// The seccomp mode of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeccompMode {
    /// 0: no seccomp.
    Disabled,
    /// 1: SECCOMP_MODE_STRICT (read, write, exit, sigreturn only).
    Strict,
    /// 2: SECCOMP_MODE_FILTER (BPF filters).
    Filter,
}

/// seccomp facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeccompInfo {
    /// The kernel has seccomp (PR_GET_SECCOMP does not fail with EINVAL).
    pub available: bool,
    /// Filter return actions the kernel supports, in its order ("kill_process
    /// kill_thread trap errno user_notif trace log allow").
    pub actions: Probed<Vec<String>>,
    /// The mode of the probing process.
    pub self_mode: Probed<SeccompMode>,
    /// Number of filters attached to the probing process (Linux 5.9+).
    pub self_filters: Option<u32>,
}

/// Reads seccomp state of the running kernel and process.
pub fn probe(root: &Path) -> SeccompInfo {
    let status = files::read(root, STATUS);
    let mode = status.clone().and_then(|s| parse_mode(&s));
    // PR_GET_SECCOMP in strict mode is fatal (SIGKILL); strict implies
    // available anyway. Only ask the kernel about the real root.
    let available = match mode {
        Ok(SeccompMode::Disabled | SeccompMode::Filter) if root == Path::new("/") => {
            prctl_available()
        }
        Ok(_) => true,
        Err(_) => root == Path::new("/") && prctl_available(),
    };
    collect(root, available, status)
}

/// Builds the record from `root` files and the already known `available`.
fn collect(root: &Path, available: bool, status: Result<String, String>) -> SeccompInfo {
    let actions = files::read(root, ACTIONS).map_err(|reason| {
        if available {
            format!("{reason} (kernel without CONFIG_SECCOMP_FILTER?)")
        } else {
            reason
        }
    });
    SeccompInfo {
        available,
        actions: actions
            .map(|s| s.split_whitespace().map(String::from).collect())
            .into(),
        self_mode: status
            .as_deref()
            .map_err(Clone::clone)
            .and_then(parse_mode)
            .into(),
        self_filters: status.ok().and_then(|s| {
            crate::sys::query::status_field(&s, "Seccomp_filters").and_then(|v| v.parse().ok())
        }),
    }
}

/// Whether prctl(PR_GET_SECCOMP) works (EINVAL: kernel without seccomp).
fn prctl_available() -> bool {
    crate::sys::query::seccomp_mode().is_ok()
}

/// The `Seccomp:` line of /proc/<pid>/status as a mode.
fn parse_mode(status: &str) -> Result<SeccompMode, String> {
    match crate::sys::query::status_field(status, "Seccomp") {
        Some("0") => Ok(SeccompMode::Disabled),
        Some("1") => Ok(SeccompMode::Strict),
        Some("2") => Ok(SeccompMode::Filter),
        Some(other) => Err(format!("{STATUS}: unknown Seccomp mode '{other}'")),
        None => Err(format!(
            "{STATUS} has no Seccomp line (kernel without CONFIG_SECCOMP)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn reads_actions_and_filter_mode() {
        let root = fixture("securityfs-mounted");
        let s = collect(&root, true, files::read(&root, STATUS));
        assert!(s.available);
        assert_eq!(
            s.actions.value().unwrap(),
            &[
                "kill_process",
                "kill_thread",
                "trap",
                "errno",
                "user_notif",
                "trace",
                "log",
                "allow"
            ]
        );
        assert_eq!(s.self_mode.value(), Some(&SeccompMode::Filter));
        assert_eq!(s.self_filters, Some(3));
    }

    #[test]
    fn fixture_root_never_calls_prctl_and_missing_files_have_reasons() {
        let s = probe(&fixture("selinux-absent"));
        assert!(!s.available);
        assert!(s.actions.reason().unwrap().contains("actions_avail"));
        assert!(s.self_mode.reason().unwrap().contains("status"));
        assert_eq!(s.self_filters, None);
    }

    #[test]
    fn parses_modes() {
        assert_eq!(
            parse_mode("Name:\tx\nSeccomp:\t0\n"),
            Ok(SeccompMode::Disabled)
        );
        assert_eq!(parse_mode("Seccomp:\t1\n"), Ok(SeccompMode::Strict));
        assert!(parse_mode("Seccomp:\t9\n").is_err());
        assert!(
            parse_mode("Name:\tx\n")
                .unwrap_err()
                .contains("no Seccomp line")
        );
    }

    #[test]
    fn this_process_has_a_mode() {
        let s = probe(Path::new("/"));
        if s.available {
            assert!(s.self_mode.value().is_some(), "{:?}", s.self_mode);
        }
    }
}
