//! Kernel lockdown mode, from /sys/kernel/security/lockdown.
//!
//! The file lists the modes with the active one in brackets:
//! "none [integrity] confidentiality". Lockdown blocks interfaces (kprobes,
//! /dev/mem, some BPF helpers) that benchmarks and tracing tools rely on, so
//! the mode explains why some workloads cannot run.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::lsm::LsmInfo;
use super::{Probed, securityfs};

/// The lockdown state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lockdown {
    /// The active mode: "none", "integrity" or "confidentiality".
    pub mode: String,
    /// Every mode the file offers, in its order.
    pub modes: Vec<String>,
}

/// Reads the lockdown file under `root`. `lsm` (the active LSM list, if
/// known) turns "securityfs not mounted" into "not active" when lockdown is
/// not running anyway.
pub fn probe(root: &Path, lsm: Option<&LsmInfo>) -> Probed<Lockdown> {
    let read = securityfs::read(root, "lockdown", "lockdown LSM not built into this kernel");
    match read {
        Err(_) if lsm.is_some_and(|l| !l.has("lockdown")) => {
            Probed::unavailable("lockdown LSM not active (not in the LSM list)")
        }
        read => read.and_then(|text| parse(&text)).into(),
    }
}

/// Parses "none [integrity] confidentiality".
fn parse(text: &str) -> Result<Lockdown, String> {
    let mut mode = None;
    let mut modes = Vec::new();
    for word in text.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(active) => {
                mode = Some(active.to_string());
                modes.push(active.to_string());
            }
            None => modes.push(word.to_string()),
        }
    }
    match mode {
        Some(mode) => Ok(Lockdown { mode, modes }),
        None => Err(format!(
            "lockdown file has no [active] mode: '{}'",
            text.trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn reads_the_bracketed_mode() {
        let l = probe(&fixture("securityfs-mounted"), None);
        let l = l.value().unwrap();
        assert_eq!(l.mode, "integrity");
        assert_eq!(l.modes, ["none", "integrity", "confidentiality"]);
    }

    #[test]
    fn parses_each_position() {
        assert_eq!(
            parse("[none] integrity confidentiality").unwrap().mode,
            "none"
        );
        assert_eq!(
            parse("none integrity [confidentiality]\n").unwrap().mode,
            "confidentiality"
        );
        assert!(parse("none integrity").is_err());
    }

    #[test]
    fn unmounted_securityfs_is_the_reason() {
        let reason = probe(&fixture("securityfs-unmounted"), None)
            .reason()
            .unwrap()
            .to_string();
        assert!(reason.starts_with("securityfs not mounted"), "{reason}");
    }

    #[test]
    fn mounted_without_the_file_means_not_built() {
        let reason = probe(&fixture("apparmor-mixed"), None)
            .reason()
            .unwrap()
            .to_string();
        assert!(reason.starts_with("lockdown LSM not built"), "{reason}");
    }

    #[test]
    fn unread_and_not_in_the_lsm_list_is_not_active() {
        let lsm = LsmInfo {
            modules: vec!["capability".into()],
            source: crate::probe::lsm::LsmSource::Syscall,
        };
        let p = probe(&fixture("securityfs-unmounted"), Some(&lsm));
        assert_eq!(
            p.reason(),
            Some("lockdown LSM not active (not in the LSM list)")
        );
        // A readable file wins over the list.
        assert!(
            probe(&fixture("securityfs-mounted"), Some(&lsm))
                .value()
                .is_some()
        );
    }
}
