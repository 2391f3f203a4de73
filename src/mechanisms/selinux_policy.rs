//! An allow-all SELinux policy, for a kernel that runs SELinux with no
//! policy loaded (a fresh VM guest): until a policy is loaded SELinux
//! answers every hook without consulting its access vector cache, so
//! nothing about its cost could be measured.
//!
//! Like the kernel's `scripts/selinux/mdp` dummy policy, it has one user,
//! one role and one type for every subject and object, the object classes
//! the workloads reach with their permissions, and one rule per class
//! allowing everything; classes it does not list are allowed too
//! (`handleunknown allow`). So the AVC is consulted on every hook, and
//! nothing is denied in permissive or enforcing mode.
//!
//! It is written in CIL, compiled with `secilc` (Debian: `secilc`) and
//! loaded through selinuxfs. A loaded policy cannot be unloaded: secperf
//! does this only inside a VM guest it booted.

use std::path::Path;

use anyhow::{Context, Result};

/// Initial SIDs in the kernel's order (security/selinux/include/initial_sid_to_string.h).
const INITIAL_SIDS: &[&str] = &[
    "kernel",
    "security",
    "unlabeled",
    "fs",
    "file",
    "file_labels",
    "init",
    "any_socket",
    "port",
    "netif",
    "netmsg",
    "node",
    "igmp_packet",
    "icmp_socket",
    "tcp_socket",
    "sysctl_modprobe",
    "sysctl",
    "sysctl_fs",
    "sysctl_kernel",
    "sysctl_net",
    "sysctl_net_unix",
    "sysctl_vm",
    "sysctl_dev",
    "kmod",
    "policy",
    "scmp_packet",
    "devnull",
];

/// The permissions every file-like class shares (security/selinux/include/classmap.h).
const COMMON_FILE: &str = "ioctl read write create getattr setattr lock relabelfrom relabelto \
                           append map unlink link rename execute quotaon mounton audit_access \
                           open execmod watch watch_mount watch_sb watch_with_perm watch_reads";
const COMMON_SOCKET: &str = "ioctl read write create getattr setattr lock relabelfrom relabelto \
                             append map bind connect listen accept getopt setopt shutdown \
                             recvfrom sendto name_bind";
const COMMON_CAP: &str = "chown dac_override dac_read_search fowner fsetid kill setgid setuid \
                          setpcap linux_immutable net_bind_service net_broadcast net_admin \
                          net_raw ipc_lock ipc_owner sys_module sys_rawio sys_chroot sys_ptrace \
                          sys_pacct sys_admin sys_boot sys_nice sys_resource sys_time \
                          sys_tty_config mknod lease audit_write audit_control setfcap";

/// Classes: (name, common, own permissions).
const CLASSES: &[(&str, Option<&str>, &str)] = &[
    ("file", Some("file"), "execute_no_trans entrypoint"),
    (
        "dir",
        Some("file"),
        "add_name remove_name reparent search rmdir",
    ),
    ("lnk_file", Some("file"), ""),
    ("chr_file", Some("file"), ""),
    ("blk_file", Some("file"), ""),
    ("sock_file", Some("file"), ""),
    ("fifo_file", Some("file"), ""),
    ("anon_inode", Some("file"), ""),
    ("fd", None, "use"),
    (
        "process",
        None,
        "fork transition sigchld sigkill sigstop signull signal ptrace getsched setsched \
         getsession getpgid setpgid getcap setcap share getattr setexec setfscreate noatsecure \
         siginh setrlimit rlimitinh dyntransition setcurrent execmem execstack execheap \
         setkeycreate setsockcreate getrlimit",
    ),
    ("process2", None, "nnp_transition nosuid_transition"),
    (
        "filesystem",
        None,
        "mount remount unmount getattr relabelfrom relabelto associate quotamod quotaget \
         watch",
    ),
    (
        "security",
        None,
        "compute_av compute_create compute_member check_context load_policy compute_relabel \
         compute_user setenforce setbool setsecparam setcheckreqprot read_policy \
         validate_trans",
    ),
    (
        "system",
        None,
        "ipc_info syslog_read syslog_mod syslog_console module_request module_load",
    ),
    ("capability", Some("cap"), ""),
    ("unix_stream_socket", Some("socket"), "connectto"),
    ("unix_dgram_socket", Some("socket"), ""),
    ("tcp_socket", Some("socket"), "node_bind name_connect"),
    ("udp_socket", Some("socket"), "node_bind"),
    ("netlink_socket", Some("socket"), ""),
    (
        "bpf",
        None,
        "map_create map_read map_write prog_load prog_run",
    ),
];

/// The policy's names: user, role, type.
const USER: &str = "u";
const ROLE: &str = "r";
const TYPE: &str = "t";

/// The allow-all policy as CIL text.
pub fn cil() -> String {
    let mut s = String::from(
        "; secperf's allow-all SELinux policy: one user, role and type; everything allowed.\n\
         (handleunknown allow)\n(mls false)\n",
    );
    for (name, perms) in [
        ("file", COMMON_FILE),
        ("socket", COMMON_SOCKET),
        ("cap", COMMON_CAP),
    ] {
        s.push_str(&format!("(common {name} ({perms}))\n"));
    }
    for (name, common, perms) in CLASSES {
        s.push_str(&format!("(class {name} ({perms}))\n"));
        if let Some(c) = common {
            s.push_str(&format!("(classcommon {name} {c})\n"));
        }
    }
    let names: Vec<&str> = CLASSES.iter().map(|c| c.0).collect();
    s.push_str(&format!("(classorder ({}))\n", names.join(" ")));
    for sid in INITIAL_SIDS {
        s.push_str(&format!("(sid {sid})\n"));
    }
    s.push_str(&format!("(sidorder ({}))\n", INITIAL_SIDS.join(" ")));
    s.push_str(&format!(
        "(user {USER})\n(role {ROLE})\n(type {TYPE})\n(userrole {USER} {ROLE})\n\
         (roletype {ROLE} {TYPE})\n\
         (sensitivity s0)\n(sensitivityorder (s0))\n(category c0)\n(categoryorder (c0))\n\
         (sensitivitycategory s0 (c0))\n(userlevel {USER} (s0))\n(userrange {USER} ((s0) (s0)))\n"
    ));
    for sid in INITIAL_SIDS {
        s.push_str(&format!(
            "(sidcontext {sid} ({USER} {ROLE} {TYPE} ((s0) (s0))))\n"
        ));
    }
    for name in &names {
        s.push_str(&format!("(allow {TYPE} self ({name} (all)))\n"));
    }
    // Files of every file system, labelled or not, get the one type.
    for fs in [
        "ext4", "xfs", "btrfs", "tmpfs", "overlay", "9p", "virtiofs", "proc", "sysfs",
    ] {
        s.push_str(&format!(
            "(genfscon {fs} / ({USER} {ROLE} {TYPE} ((s0) (s0))))\n"
        ));
    }
    s
}

/// Compiles [`cil`] with `secilc` in `dir` and returns the binary policy.
pub fn compile(dir: &Path) -> Result<Vec<u8>> {
    let secilc = crate::sys::which("secilc").context(
        "no SELinux policy is loaded, and secilc (which compiles secperf's allow-all policy) is \
         not on PATH: install secilc (Debian: apt-get install secilc)",
    )?;
    let src = dir.join("secperf-allow-all.cil");
    let out = dir.join("secperf-allow-all.policy");
    std::fs::write(&src, cil()).with_context(|| format!("writing {}", src.display()))?;
    let run = std::process::Command::new(&secilc)
        // Version 31 loads into every kernel since 4.13.
        .args(["-c", "31", "-M", "false", "-f", "/dev/null", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .with_context(|| format!("running {}", secilc.display()))?;
    if !run.status.success() {
        anyhow::bail!(
            "secilc could not compile secperf's allow-all policy ({}): {}",
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        );
    }
    std::fs::read(&out).with_context(|| format!("reading {}", out.display()))
}

/// The selinuxfs mount point.
pub const SELINUXFS: &str = "/sys/fs/selinux";

/// Whether a policy is loaded: selinuxfs lists the policy's classes only
/// once one is.
pub fn policy_loaded(selinuxfs: &Path) -> bool {
    std::fs::read_dir(selinuxfs.join("class")).is_ok_and(|mut d| d.next().is_some())
}

/// Mounts selinuxfs at [`SELINUXFS`] unless it is mounted.
pub fn mount_selinuxfs() -> Result<()> {
    if Path::new(SELINUXFS).join("enforce").exists() {
        return Ok(());
    }
    let target = crate::sys::cstring(Path::new(SELINUXFS));
    let fstype = c"selinuxfs";
    // SAFETY: all pointers are NUL-terminated strings that outlive the
    // call; no data argument.
    let r = unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    crate::sys::check_int("mount selinuxfs", r).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// Loads a binary policy through selinuxfs.
pub fn load(policy: &[u8]) -> Result<()> {
    let path = Path::new(SELINUXFS).join("load");
    super::selinux::write_once(&path, policy).map_err(|e| {
        anyhow::anyhow!(
            "loading secperf's allow-all policy into {}: {e}",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_compiles_with_secilc() {
        if crate::sys::which("secilc").is_none() {
            crate::testing::skip_missing_tool(
                "the_policy_compiles_with_secilc",
                "secilc",
                "secilc is not on PATH",
            );
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let policy = compile(d.path()).unwrap();
        // A binary policy starts with the SELinux magic.
        assert_eq!(&policy[..4], &0xf97c_ff8c_u32.to_le_bytes());
        assert!(policy.len() > 1000);
    }

    #[test]
    fn every_class_is_allowed_everything() {
        let text = cil();
        for (name, _, _) in CLASSES {
            assert!(
                text.contains(&format!("(allow t self ({name} (all)))")),
                "{name}"
            );
        }
        assert!(text.contains("(handleunknown allow)"));
    }
}
