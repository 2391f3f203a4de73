//! `selinux`: what SELinux enforcing costs compared with permissive.
//!
//! Both modes run every SELinux hook, look up the access vector cache and
//! audit denials; enforcing additionally denies. Comparing the two on the
//! same policy isolates what enforcement adds (and shows that switching to
//! permissive saves little), on the workloads whose hooks SELinux mediates
//! (open, stat, eventfd, tree_walk).
//!
//! The switch is /sys/fs/selinux/enforce (what setenforce(8) writes):
//! baseline "0" (permissive), treatment "1" (enforcing). The snapshot is
//! the value found before; restore writes it back and reads it again to
//! verify. Every function here takes the root directory under which
//! /sys/fs/selinux lies (`/` for the machine, a temporary copy of
//! tests/fixtures/mechanisms/selinux in tests).
//!
//! The availability decision reads SELinux through the probe module
//! (`crate::probe::probe().selinux`); its per-file reader is private to that
//! module, so the enforce value read back here (for snapshot and
//! verification) is mapped onto the probe's own [`SelinuxState`].

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use super::{Arm, Availability, Mechanism, Scope, SystemEnv, Treatment, VariantDef};
use crate::probe::{Probed, SelinuxInfo, SelinuxState};
use crate::sys::SysError;

pub struct Selinux;
pub static SELINUX: Selinux = Selinux;

/// The mode switch.
pub const ENFORCE: &str = "/sys/fs/selinux/enforce";
/// A boolean that, when on, makes the policy deny setenforce until reboot.
pub const SECURE_MODE_POLICYLOAD: &str = "/sys/fs/selinux/booleans/secure_mode_policyload";

pub const NOT_ACTIVE: &str = "SELinux is not active on this kernel";
pub const NEEDS_ROOT: &str = "needs root (to write /sys/fs/selinux/enforce)";

/// `root` joined with an absolute path.
fn under(root: &Path, abs: &str) -> PathBuf {
    root.join(abs.trim_start_matches('/'))
}

/// The value setenforce writes for a mode.
fn enforce_value(state: SelinuxState) -> Option<&'static str> {
    match state {
        SelinuxState::Enforcing => Some("1"),
        SelinuxState::Permissive => Some("0"),
        SelinuxState::NotActive => None,
    }
}

/// The mode each arm runs in.
pub fn arm_state(arm: Arm) -> SelinuxState {
    match arm {
        Arm::Baseline => SelinuxState::Permissive,
        Arm::Treatment => SelinuxState::Enforcing,
    }
}

/// Writes `data` to an existing kernel file in one write(2) at offset 0,
/// without creating or truncating it (selinuxfs, securityfs and
/// /proc/<pid>/attr files take one whole write). Errors name the call.
pub(super) fn write_once(path: &Path, data: &[u8]) -> Result<(), SysError> {
    let errno = |e: &std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| SysError {
            call: "open",
            errno: errno(&e),
        })?;
    match file.write(data) {
        Ok(n) if n == data.len() => Ok(()),
        // A short write to these files means the kernel took a part only.
        Ok(_) => Err(SysError {
            call: "write",
            errno: libc::EIO,
        }),
        Err(e) => Err(SysError {
            call: "write",
            errno: errno(&e),
        }),
    }
}

/// The current mode from the enforce file under `root`.
pub fn read_mode(root: &Path) -> Result<SelinuxState> {
    let path = under(root, ENFORCE);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    match text.trim() {
        "1" => Ok(SelinuxState::Enforcing),
        "0" => Ok(SelinuxState::Permissive),
        other => anyhow::bail!("{}: unexpected value '{other}'", path.display()),
    }
}

/// Sets the mode under `root` and verifies it by reading it back.
pub fn set_mode(root: &Path, state: SelinuxState) -> Result<()> {
    let Some(value) = enforce_value(state) else {
        anyhow::bail!("cannot switch SELinux off at run time");
    };
    let path = under(root, ENFORCE);
    write_once(&path, value.as_bytes()).map_err(|e| {
        let hint = match e.errno {
            libc::EACCES => {
                " (the loaded policy denies setenforce: secure_mode_policyload on, or no \
                 security:setenforce permission)"
            }
            libc::EINVAL if e.call == "write" => {
                " (kernel built without CONFIG_SECURITY_SELINUX_DEVELOP: the mode cannot be \
                 switched at run time)"
            }
            _ => "",
        };
        anyhow::anyhow!("writing {value} to {}: {e}{hint}", path.display())
    })?;
    let now = read_mode(root)?;
    if now != state {
        anyhow::bail!(
            "wrote {value} to {} but it reads back as {now:?}",
            path.display()
        );
    }
    Ok(())
}

/// The snapshot: `{"enforce": 0|1}`.
pub fn snapshot_at(root: &Path) -> Result<serde_json::Value> {
    let state = read_mode(root)?;
    let value = if state == SelinuxState::Enforcing {
        1
    } else {
        0
    };
    Ok(json!({ "enforce": value }))
}

/// Writes the snapshot's mode back (idempotent).
pub fn restore_at(root: &Path, snapshot: &serde_json::Value) -> Result<()> {
    let state = match snapshot.get("enforce").and_then(|v| v.as_u64()) {
        Some(1) => SelinuxState::Enforcing,
        Some(0) => SelinuxState::Permissive,
        _ => anyhow::bail!("selinux snapshot without enforce 0 or 1: {snapshot}"),
    };
    set_mode(root, state)
}

/// Whether the mode can be switched under `root`, as far as can be told
/// without switching it: the enforce file opens for writing and the
/// secure_mode_policyload boolean is off.
pub fn switchable(root: &Path) -> Result<(), String> {
    let path = under(root, ENFORCE);
    if let Err(e) = std::fs::OpenOptions::new().write(true).open(&path) {
        return Err(format!(
            "{} is not writable: {}",
            path.display(),
            SysError {
                call: "open",
                errno: e.raw_os_error().unwrap_or(libc::EIO),
            }
        ));
    }
    // "current pending", e.g. "1 1"; absent in policies without it.
    let boolean = under(root, SECURE_MODE_POLICYLOAD);
    if let Ok(text) = std::fs::read_to_string(&boolean)
        && text.split_whitespace().next() == Some("1")
    {
        return Err(
            "SELinux boolean secure_mode_policyload is on: the policy denies setenforce \
             until reboot"
                .to_string(),
        );
    }
    Ok(())
}

/// The availability decision from the probe module's SELinux reading.
pub fn availability(
    info: &Probed<SelinuxInfo>,
    root_user: bool,
    switch: impl FnOnce() -> Result<(), String>,
) -> Availability {
    let info = match info {
        Probed::Ok(info) => info,
        Probed::Unavailable { reason } => return Availability::Unavailable(reason.clone()),
    };
    if info.state == SelinuxState::NotActive {
        return Availability::Unavailable(NOT_ACTIVE.to_string());
    }
    if !root_user {
        return Availability::Unavailable(NEEDS_ROOT.to_string());
    }
    match switch() {
        Ok(()) => Availability::Available,
        Err(reason) => Availability::Unavailable(reason),
    }
}

/// Applies one arm under `root`.
pub fn apply_at(root: &Path, arm: Arm) -> Result<()> {
    set_mode(root, arm_state(arm))
}

impl Mechanism for Selinux {
    fn name(&self) -> &'static str {
        "selinux"
    }
    fn description(&self) -> &'static str {
        "SELinux enforcing vs permissive (root; where SELinux is active)"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "enforcing",
            description: "baseline permissive, treatment enforcing",
        }]
    }
    fn lsm_hooks(&self) -> &'static [&'static str] {
        &[
            "file_open",
            "file_permission",
            "inode_permission",
            "inode_getattr",
        ]
    }

    fn survey_workloads(&self) -> &'static [&'static str] {
        &["open", "stat", "eventfd", "tree_walk"]
    }
    fn boot_lsm(&self) -> Option<&'static str> {
        Some("selinux")
    }
    fn probe(&self) -> Availability {
        let root = Path::new("/");
        availability(
            &crate::probe::probe().selinux,
            crate::sys::is_root(),
            || switchable(root),
        )
    }
    fn snapshot(&self) -> Result<serde_json::Value> {
        snapshot_at(Path::new("/")).context("selinux snapshot")
    }
    fn apply_system(&self, _t: &Treatment, arm: Arm, _env: &SystemEnv) -> Result<()> {
        apply_at(Path::new("/"), arm).context("selinux")
    }
    fn restore(&self, snapshot: &serde_json::Value) -> Result<()> {
        restore_at(Path::new("/"), snapshot).context("selinux restore")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_copy(name: &str) -> tempfile::TempDir {
        crate::mechanisms::test_fixtures::fixture_copy("selinux", name)
    }

    fn enforce_text(root: &Path) -> String {
        std::fs::read_to_string(under(root, ENFORCE)).unwrap()
    }

    #[test]
    fn baseline_treatment_restore_cycle() {
        let dir = fixture_copy("enforcing");
        let root = dir.path();
        assert_eq!(enforce_text(root).trim(), "1");
        let snap = snapshot_at(root).unwrap();
        assert_eq!(snap, json!({ "enforce": 1 }));
        apply_at(root, Arm::Baseline).unwrap();
        assert_eq!(enforce_text(root).trim(), "0");
        assert_eq!(read_mode(root).unwrap(), SelinuxState::Permissive);
        apply_at(root, Arm::Treatment).unwrap();
        assert_eq!(enforce_text(root).trim(), "1");
        apply_at(root, Arm::Baseline).unwrap();
        restore_at(root, &snap).unwrap();
        assert_eq!(enforce_text(root).trim(), "1");
        // Idempotent.
        restore_at(root, &snap).unwrap();
        assert_eq!(read_mode(root).unwrap(), SelinuxState::Enforcing);
    }

    #[test]
    fn restores_a_permissive_machine() {
        let dir = fixture_copy("permissive");
        let root = dir.path();
        let snap = snapshot_at(root).unwrap();
        assert_eq!(snap, json!({ "enforce": 0 }));
        apply_at(root, Arm::Treatment).unwrap();
        assert_eq!(enforce_text(root).trim(), "1");
        restore_at(root, &snap).unwrap();
        assert_eq!(enforce_text(root).trim(), "0");
    }

    #[test]
    fn bad_snapshots_and_values_are_errors() {
        let dir = fixture_copy("enforcing");
        let root = dir.path();
        assert!(restore_at(root, &json!({})).is_err());
        assert!(restore_at(root, &json!({ "enforce": 2 })).is_err());
        std::fs::write(under(root, ENFORCE), "7\n").unwrap();
        let err = read_mode(root).unwrap_err().to_string();
        assert!(err.ends_with("enforce: unexpected value '7'"), "{err}");
        let err = snapshot_at(Path::new("/nonexistent")).unwrap_err();
        assert!(
            format!("{err:#}").starts_with("reading /nonexistent/sys/fs/selinux/enforce"),
            "{err:#}"
        );
        let err = set_mode(Path::new("/nonexistent"), SelinuxState::Enforcing).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("writing 1 to /nonexistent/sys/fs/selinux/enforce: open: ENOENT"),
            "{err}"
        );
        assert!(set_mode(root, SelinuxState::NotActive).is_err());
    }

    #[test]
    fn switchable_checks_the_file_and_the_boolean() {
        let dir = fixture_copy("enforcing");
        assert_eq!(switchable(dir.path()), Ok(()));
        let locked = fixture_copy("locked");
        let reason = switchable(locked.path()).unwrap_err();
        assert!(reason.contains("secure_mode_policyload is on"), "{reason}");
        let reason = switchable(Path::new("/nonexistent")).unwrap_err();
        assert!(
            reason.starts_with("/nonexistent/sys/fs/selinux/enforce is not writable: open: ENOENT"),
            "{reason}"
        );
    }

    #[test]
    fn availability_reasons() {
        let info = |state| {
            Probed::Ok(SelinuxInfo {
                state,
                policy_version: None,
                policy_name: None,
                config_mode: None,
                mls: None,
            })
        };
        let ok = || Ok(());
        assert_eq!(
            availability(&info(SelinuxState::NotActive), true, ok),
            Availability::Unavailable(NOT_ACTIVE.into())
        );
        assert_eq!(
            availability(&info(SelinuxState::Enforcing), false, ok),
            Availability::Unavailable(NEEDS_ROOT.into())
        );
        assert!(NEEDS_ROOT.starts_with("needs root"));
        assert_eq!(
            availability(&info(SelinuxState::Permissive), true, ok),
            Availability::Available
        );
        assert_eq!(
            availability(
                &info(SelinuxState::Enforcing),
                true,
                || Err("locked".into())
            ),
            Availability::Unavailable("locked".into())
        );
        assert_eq!(
            availability(&Probed::unavailable("selinuxfs not mounted"), true, ok),
            Availability::Unavailable("selinuxfs not mounted".into())
        );
    }

    #[test]
    fn probe_on_this_machine() {
        let a = SELINUX.probe();
        if crate::probe::probe().selinux.value().map(|s| s.state) == Some(SelinuxState::NotActive) {
            assert_eq!(a, Availability::Unavailable(NOT_ACTIVE.into()));
        }
        eprintln!("selinux here: {a:?}");
    }
}
