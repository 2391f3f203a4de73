//! SELinux state, from selinuxfs (/sys/fs/selinux) and /etc/selinux/config.
//!
//! `enforce` holds 1 (enforcing) or 0 (permissive); without selinuxfs SELinux
//! is not active. In permissive mode every access is still checked and
//! audited but never denied, so its cost differs from enforcing: the mode
//! must be known to read a measurement. `policyvers` is the highest policy
//! version the kernel supports, `mls` whether the loaded policy is MLS, and
//! the config file names the policy (`SELINUXTYPE=`) and the mode set for
//! the next boot (`SELINUX=`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::lsm::LsmInfo;
use super::{Probed, files};

const SELINUXFS: &str = "/sys/fs/selinux";

/// Whether SELinux checks, and whether it denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelinuxState {
    Enforcing,
    Permissive,
    /// No selinuxfs: SELinux is disabled or not built.
    NotActive,
}

/// SELinux facts; the optional ones are `None` when not readable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelinuxInfo {
    pub state: SelinuxState,
    /// Highest policy version the kernel supports (/sys/fs/selinux/policyvers).
    pub policy_version: Option<u32>,
    /// The policy loaded at boot, `SELINUXTYPE=` of /etc/selinux/config.
    pub policy_name: Option<String>,
    /// The mode configured for boot, `SELINUX=` of /etc/selinux/config.
    pub config_mode: Option<String>,
    /// Whether the loaded policy has MLS enabled (/sys/fs/selinux/mls).
    pub mls: Option<bool>,
}

/// Reads SELinux state under `root`. `lsm` (the active LSM list, if known)
/// tells an unmounted selinuxfs apart from SELinux not running.
pub fn probe(root: &Path, lsm: Option<&LsmInfo>) -> Probed<SelinuxInfo> {
    let config = files::read(root, "/etc/selinux/config").ok();
    let config_value = |key: &str| config.as_deref().and_then(|c| config_field(c, key));
    let enforce_path = format!("{SELINUXFS}/enforce");
    let state = if files::exists(root, &enforce_path) {
        match files::read_trimmed(root, &enforce_path) {
            Ok(v) if v == "1" => SelinuxState::Enforcing,
            Ok(v) if v == "0" => SelinuxState::Permissive,
            Ok(v) => return Probed::unavailable(format!("{enforce_path}: unexpected value '{v}'")),
            Err(reason) => return Probed::unavailable(reason),
        }
    } else if lsm.is_some_and(|l| l.has("selinux")) {
        return Probed::unavailable(format!(
            "SELinux is active but selinuxfs is not mounted at {SELINUXFS} \
             (mount -t selinuxfs selinuxfs {SELINUXFS})"
        ));
    } else {
        SelinuxState::NotActive
    };
    let active = state != SelinuxState::NotActive;
    Probed::Ok(SelinuxInfo {
        state,
        policy_version: active
            .then(|| files::read_u32(root, &format!("{SELINUXFS}/policyvers")).ok())
            .flatten(),
        policy_name: config_value("SELINUXTYPE"),
        config_mode: config_value("SELINUX"),
        mls: active
            .then(|| files::read_trimmed(root, &format!("{SELINUXFS}/mls")).ok())
            .flatten()
            .map(|v| v == "1"),
    })
}

/// The value of `KEY=value` in a shell-style config file (comments and
/// quotes allowed).
fn config_field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').trim_matches('\'').to_string())
        })
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;
    use crate::probe::lsm::LsmSource;

    #[test]
    fn enforcing() {
        let s = probe(&fixture("selinux-enforcing"), None);
        assert_eq!(
            s.value().unwrap(),
            &SelinuxInfo {
                state: SelinuxState::Enforcing,
                policy_version: Some(33),
                policy_name: Some("targeted".into()),
                config_mode: Some("enforcing".into()),
                mls: Some(false),
            }
        );
    }

    #[test]
    fn permissive() {
        let s = probe(&fixture("selinux-permissive"), None);
        let s = s.value().unwrap();
        assert_eq!(s.state, SelinuxState::Permissive);
        assert_eq!(s.policy_name.as_deref(), Some("mls"));
        assert_eq!(s.config_mode.as_deref(), Some("permissive"));
        assert_eq!(s.mls, Some(true));
        assert_eq!(s.policy_version, Some(31));
    }

    #[test]
    fn absent_is_not_active() {
        let s = probe(&fixture("selinux-absent"), None);
        let s = s.value().unwrap();
        assert_eq!(s.state, SelinuxState::NotActive);
        assert_eq!(s.policy_version, None);
        assert_eq!(s.mls, None);
    }

    #[test]
    fn active_but_unmounted_has_a_reason() {
        let lsm = LsmInfo {
            modules: vec!["capability".into(), "selinux".into()],
            source: LsmSource::Syscall,
        };
        let reason = probe(&fixture("selinux-absent"), Some(&lsm))
            .reason()
            .unwrap()
            .to_string();
        assert!(reason.contains("selinuxfs is not mounted"), "{reason}");
    }

    #[test]
    fn config_parsing_skips_comments_and_quotes() {
        let text = "# SELINUX=disabled\nSELINUX = \"enforcing\"\nSELINUXTYPE=\n";
        assert_eq!(config_field(text, "SELINUX").as_deref(), Some("enforcing"));
        assert_eq!(config_field(text, "SELINUXTYPE"), None);
    }
}
