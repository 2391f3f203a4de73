//! AppArmor state: enabled flag (/sys/module/apparmor/parameters/enabled)
//! and loaded profiles by mode (/sys/kernel/security/apparmor/profiles).
//!
//! Profiles in `enforce` or `kill` mode deny, `complain` only logs; a
//! confined process pays for path lookups against its profile on every
//! mediated call, so the counts hint at how much a workload may be confined.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Probed, files, securityfs};

const ENABLED: &str = "/sys/module/apparmor/parameters/enabled";

/// AppArmor facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppArmorInfo {
    /// The module parameter says "Y" (built in and selected at boot).
    pub enabled: bool,
    /// Loaded profiles; unavailable when AppArmor is off or securityfs is
    /// not mounted.
    pub profiles: Probed<ProfileCounts>,
}

/// How many profiles are loaded, in total and per mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileCounts {
    pub total: u32,
    /// Mode ("enforce", "complain", "kill", "unconfined", ...) to count.
    pub by_mode: BTreeMap<String, u32>,
}

/// Reads AppArmor state under `root`.
pub fn probe(root: &Path) -> Probed<AppArmorInfo> {
    if !files::exists(root, ENABLED) {
        return Probed::Ok(AppArmorInfo {
            enabled: false,
            profiles: Probed::unavailable(format!(
                "AppArmor not built into this kernel (no {})",
                files::under(root, ENABLED).display()
            )),
        });
    }
    let enabled = match files::read_trimmed(root, ENABLED) {
        Ok(v) => v == "Y",
        Err(reason) => return Probed::unavailable(reason),
    };
    let profiles = if enabled {
        securityfs::read(
            root,
            "apparmor/profiles",
            "securityfs has no AppArmor directory",
        )
        .map(|text| count_profiles(&text))
        .into()
    } else {
        Probed::unavailable("AppArmor is disabled (apparmor=0 or not in lsm=)")
    };
    Probed::Ok(AppArmorInfo { enabled, profiles })
}

/// Counts lines like "/usr/bin/man (enforce)" by the mode in parentheses.
fn count_profiles(text: &str) -> ProfileCounts {
    let mut by_mode = BTreeMap::new();
    let mut total = 0;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mode = line
            .rsplit_once(" (")
            .and_then(|(_, m)| m.strip_suffix(')'))
            .unwrap_or("unknown");
        *by_mode.entry(mode.to_string()).or_insert(0) += 1;
        total += 1;
    }
    ProfileCounts { total, by_mode }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn counts_profiles_by_mode() {
        let a = probe(&fixture("apparmor-mixed"));
        let a = a.value().unwrap();
        assert!(a.enabled);
        let p = a.profiles.value().unwrap();
        assert_eq!(p.total, 8);
        let counts: Vec<(&str, u32)> = p.by_mode.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            counts,
            [
                ("complain", 2),
                ("enforce", 3),
                ("kill", 1),
                ("unconfined", 1),
                ("unknown", 1)
            ]
        );
    }

    #[test]
    fn disabled_has_no_profiles() {
        let a = probe(&fixture("apparmor-disabled"));
        let a = a.value().unwrap();
        assert!(!a.enabled);
        assert!(a.profiles.reason().unwrap().contains("disabled"));
    }

    #[test]
    fn not_built_without_the_module_directory() {
        let a = probe(&fixture("selinux-absent"));
        let a = a.value().unwrap();
        assert!(!a.enabled);
        assert!(
            a.profiles
                .reason()
                .unwrap()
                .starts_with("AppArmor not built")
        );
    }

    #[test]
    fn enabled_without_securityfs_says_so() {
        let a = probe(&fixture("apparmor-unmounted"));
        let reason = a.value().unwrap().profiles.reason().unwrap().to_string();
        assert!(reason.starts_with("securityfs not mounted"), "{reason}");
    }
}
