//! CPU vulnerability mitigations: every file of
//! /sys/devices/system/cpu/vulnerabilities, name to text.
//!
//! Mitigations such as retpolines, IBRS or page-table isolation add to the
//! cost of every syscall, often more than the security mechanism measured,
//! so a result is only comparable under the same mitigation state.

use std::collections::BTreeMap;
use std::path::Path;

use super::files;

const DIR: &str = "/sys/devices/system/cpu/vulnerabilities";

/// Vulnerability name ("spectre_v2") to the kernel's text ("Mitigation:
/// Retpolines; ..."), sorted by name.
pub type Mitigations = BTreeMap<String, String>;

/// Reads every file of the vulnerabilities directory under `root`.
/// Unreadable files keep their place with the reason as text.
pub fn probe(root: &Path) -> Result<Mitigations, String> {
    let dir = files::under(root, DIR);
    let entries = std::fs::read_dir(&dir).map_err(|e| files::read_error(&dir, &e))?;
    let mut out = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| files::read_error(&dir, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let text = match std::fs::read(entry.path()) {
            Ok(b) => String::from_utf8_lossy(&b).trim().to_string(),
            Err(e) => format!("unreadable: {}", files::read_error(&entry.path(), &e)),
        };
        out.insert(name, text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn reads_every_file_sorted() {
        let m = probe(&fixture("securityfs-mounted")).unwrap();
        let names: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "meltdown",
                "retbleed",
                "spec_store_bypass",
                "spectre_v1",
                "spectre_v2"
            ]
        );
        assert_eq!(m["meltdown"], "Not affected");
        assert!(m["spectre_v2"].starts_with("Mitigation: Retpolines"));
    }

    #[test]
    fn missing_directory_has_a_reason() {
        let reason = probe(&fixture("selinux-absent")).unwrap_err();
        assert!(reason.contains("vulnerabilities"), "{reason}");
    }

    #[test]
    fn this_machine_lists_some_or_says_why() {
        match probe(Path::new("/")) {
            Ok(m) => assert!(m.values().all(|v| !v.is_empty())),
            Err(reason) => assert!(!reason.is_empty()),
        }
    }
}
