//! The active Linux Security Modules, in the order the kernel calls them.
//!
//! Primary source: /sys/kernel/security/lsm ("lockdown,capability,..."),
//! which needs securityfs mounted. Fallback: the `lsm_list_modules` syscall
//! (Linux 6.8+), which works without securityfs and returns LSM ids that are
//! mapped to names here. The source used is recorded because the two can
//! differ in detail (the syscall lists only LSMs with an id).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Probed, securityfs};

/// Where the LSM list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LsmSource {
    /// /sys/kernel/security/lsm.
    Securityfs,
    /// The `lsm_list_modules` system call.
    Syscall,
}

/// The active LSMs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LsmInfo {
    /// Names in the kernel's order, e.g. ["lockdown", "capability", "bpf"].
    pub modules: Vec<String>,
    pub source: LsmSource,
}

impl LsmInfo {
    /// Whether an LSM of this name is active.
    pub fn has(&self, name: &str) -> bool {
        self.modules.iter().any(|m| m == name)
    }
}

/// Reads securityfs under `root`; when that fails and `root` is the real
/// root, asks the kernel with `lsm_list_modules`.
pub fn probe(root: &Path) -> Probed<LsmInfo> {
    let real = root == Path::new("/");
    choose(from_securityfs(root), || {
        if real {
            from_syscall()
        } else {
            Err("lsm_list_modules not tried for a fixture root".to_string())
        }
    })
}

/// The securityfs list if readable, else the syscall's, else both reasons.
fn choose(
    securityfs: Result<Vec<String>, String>,
    syscall: impl FnOnce() -> Result<Vec<String>, String>,
) -> Probed<LsmInfo> {
    let sfs_reason = match securityfs {
        Ok(modules) => {
            return Probed::Ok(LsmInfo {
                modules,
                source: LsmSource::Securityfs,
            });
        }
        Err(reason) => reason,
    };
    match syscall() {
        Ok(modules) => Probed::Ok(LsmInfo {
            modules,
            source: LsmSource::Syscall,
        }),
        Err(sys_reason) => Probed::unavailable(format!("{sfs_reason}; {sys_reason}")),
    }
}

/// The list from /sys/kernel/security/lsm.
fn from_securityfs(root: &Path) -> Result<Vec<String>, String> {
    let text = securityfs::read(root, "lsm", "securityfs has no lsm file")?;
    Ok(parse_list(&text))
}

/// Splits "lockdown,capability,landlock,bpf" into names.
fn parse_list(text: &str) -> Vec<String> {
    text.trim()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The list from the `lsm_list_modules` syscall, ids mapped to names.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "loongarch64",
    target_arch = "powerpc64",
    target_arch = "s390x"
))]
fn from_syscall() -> Result<Vec<String>, String> {
    // Room for 64 LSMs; the kernel has about 15. E2BIG would say otherwise.
    let mut ids = [0u64; 64];
    let count = crate::sys::calls::lsm_list_modules(&mut ids).map_err(|err| match err.errno {
        libc::ENOSYS => format!("{err}: kernel older than 6.8"),
        _ => err.to_string(),
    })?;
    Ok(ids[..count].iter().map(|&id| lsm_name(id)).collect())
}

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "loongarch64",
    target_arch = "powerpc64",
    target_arch = "s390x"
)))]
fn from_syscall() -> Result<Vec<String>, String> {
    Err("lsm_list_modules: syscall number unknown on this architecture".to_string())
}

/// The name of an LSM id (include/uapi/linux/lsm.h), or "lsm-<id>".
pub fn lsm_name(id: u64) -> String {
    let name = match id {
        100 => "capability",
        101 => "selinux",
        102 => "smack",
        103 => "tomoyo",
        104 => "apparmor",
        105 => "yama",
        106 => "loadpin",
        107 => "safesetid",
        108 => "lockdown",
        109 => "bpf",
        110 => "landlock",
        111 => "ima",
        112 => "evm",
        113 => "ipe",
        _ => return format!("lsm-{id}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture;

    #[test]
    fn reads_the_securityfs_list() {
        let info = probe(&fixture("securityfs-mounted"));
        let info = info.value().unwrap();
        assert_eq!(info.source, LsmSource::Securityfs);
        assert_eq!(info.modules, ["lockdown", "capability", "landlock", "bpf"]);
        assert!(info.has("bpf") && !info.has("selinux"));
    }

    #[test]
    fn falls_back_to_the_syscall() {
        let info = choose(Err("not mounted".into()), || Ok(vec!["capability".into()]));
        assert_eq!(info.value().unwrap().source, LsmSource::Syscall);
        let info = choose(Err("not mounted".into()), || Err("ENOSYS".into()));
        assert_eq!(info.reason(), Some("not mounted; ENOSYS"));
    }

    #[test]
    fn fixture_root_without_securityfs_gives_both_reasons() {
        let reason = probe(&fixture("securityfs-unmounted"))
            .reason()
            .unwrap()
            .to_string();
        assert!(reason.starts_with("securityfs not mounted"), "{reason}");
    }

    #[test]
    fn maps_ids_to_names() {
        assert_eq!(lsm_name(100), "capability");
        assert_eq!(lsm_name(110), "landlock");
        assert_eq!(lsm_name(113), "ipe");
        assert_eq!(lsm_name(999), "lsm-999");
        assert_eq!(
            parse_list("lockdown,capability,\n"),
            ["lockdown", "capability"]
        );
    }

    /// On Linux 6.8+ the syscall names the same LSMs securityfs would.
    #[test]
    fn syscall_lists_capability_on_this_kernel() {
        match from_syscall() {
            Ok(names) => assert!(names.iter().any(|n| n == "capability"), "{names:?}"),
            Err(reason) => assert!(reason.contains("ENOSYS"), "{reason}"),
        }
    }
}
