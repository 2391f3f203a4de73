//! Where securityfs files are, and why one cannot be read.
//!
//! LSMs publish their state under /sys/kernel/security (securityfs). The
//! directory exists whenever the kernel has securityfs, but the filesystem
//! must be mounted there to see anything: an empty directory means "not
//! mounted", which is common in containers and minimal VMs. Every probe that
//! reads securityfs asks here first so the reason is the same everywhere.

use std::path::{Path, PathBuf};

use super::files;

/// The mount point, as an absolute path.
pub const MOUNT_POINT: &str = "/sys/kernel/security";

/// The path of `name` inside securityfs (under `root`), or why it is not
/// there: securityfs missing, not mounted, or this file absent (then
/// `absent_reason` explains what its absence means, e.g. "lockdown LSM not
/// built into this kernel").
pub fn file(root: &Path, name: &str, absent_reason: &str) -> Result<PathBuf, String> {
    mounted(root)?;
    let path = files::under(root, &format!("{MOUNT_POINT}/{name}"));
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("{absent_reason} (no {})", path.display()))
    }
}

/// Ok when securityfs is mounted under `root`, else the reason.
///
/// The `lsm` file exists in every securityfs since Linux 4.15, so its absence
/// in an existing directory means nothing is mounted there.
pub fn mounted(root: &Path) -> Result<(), String> {
    let dir = files::under(root, MOUNT_POINT);
    if !dir.is_dir() {
        return Err(format!(
            "kernel built without securityfs (no {})",
            dir.display()
        ));
    }
    if dir.join("lsm").exists() {
        return Ok(());
    }
    Err(format!(
        "securityfs not mounted at {} (mount -t securityfs securityfs {MOUNT_POINT})",
        dir.display()
    ))
}

/// Reads a securityfs file as text, trimmed, or gives the reason it cannot.
pub fn read(root: &Path, name: &str, absent_reason: &str) -> Result<String, String> {
    let path = file(root, name, absent_reason)?;
    std::fs::read(&path)
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .map_err(|e| files::read_error(&path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn empty_directory_is_not_mounted() {
        let err = mounted(&fixture("securityfs-unmounted")).unwrap_err();
        assert!(err.starts_with("securityfs not mounted at "), "{err}");
        assert!(err.contains("mount -t securityfs"), "{err}");
    }

    #[test]
    fn missing_directory_is_not_built() {
        let err = mounted(&fixture("selinux-absent")).unwrap_err();
        assert!(err.starts_with("kernel built without securityfs"), "{err}");
    }

    #[test]
    fn absent_file_gets_the_callers_reason() {
        let err = read(
            &fixture("securityfs-mounted"),
            "nothing-here",
            "no such LSM",
        )
        .unwrap_err();
        assert!(err.starts_with("no such LSM (no "), "{err}");
        assert_eq!(
            read(&fixture("securityfs-mounted"), "lsm", "x").unwrap(),
            "lockdown,capability,landlock,bpf"
        );
    }
}
