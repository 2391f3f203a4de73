//! Landlock's system calls (`include/uapi/linux/landlock.h`): a ruleset
//! created, rules added, the ruleset enforced on the calling thread. The
//! policy (which rights, beneath which paths) is `mechanisms::landlock`'s.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{SysError, check};

/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_long = 1;
/// `LANDLOCK_RULE_NET_PORT`.
const RULE_NET_PORT: libc::c_long = 2;
/// `struct landlock_ruleset_attr`, its first field only: the kernel takes
/// a shorter struct (size 8) as "no network rights, no scopes handled".
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}

/// `struct landlock_ruleset_attr` with network rights (ABI 4 and later).
#[repr(C)]
struct RulesetAttrNet {
    handled_access_fs: u64,
    handled_access_net: u64,
}

/// `struct landlock_net_port_attr`.
#[repr(C)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

/// `struct landlock_path_beneath_attr` (packed: 12 bytes).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Creates a ruleset handling `handled` filesystem rights.
pub fn create_ruleset(handled: u64) -> Result<OwnedFd, SysError> {
    let attr = RulesetAttr {
        handled_access_fs: handled,
    };
    // SAFETY: attr is a valid landlock_ruleset_attr prefix of the size
    // passed; the kernel copies it and returns a new descriptor.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    owned_ruleset(r)
}

/// Creates a ruleset handling `fs` filesystem and `net` network rights
/// (ABI 4 and later when `net` is not 0).
pub fn create_ruleset_net(fs: u64, net: u64) -> Result<OwnedFd, SysError> {
    if net == 0 {
        return create_ruleset(fs);
    }
    let attr = RulesetAttrNet {
        handled_access_fs: fs,
        handled_access_net: net,
    };
    // SAFETY: attr is a valid landlock_ruleset_attr of the size passed;
    // the kernel copies it and returns a new descriptor.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttrNet,
            std::mem::size_of::<RulesetAttrNet>(),
            0u32,
        )
    };
    owned_ruleset(r)
}

/// Adds a `NET_PORT` rule granting `allowed` on TCP `port`.
pub fn add_port_rule(ruleset: &OwnedFd, port: u16, allowed: u64) -> Result<(), SysError> {
    let attr = NetPortAttr {
        allowed_access: allowed,
        port: port as u64,
    };
    // SAFETY: attr is a valid landlock_net_port_attr that outlives the
    // call; the ruleset descriptor is open.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_NET_PORT,
            &attr as *const NetPortAttr,
            0u32,
        )
    };
    check("landlock_add_rule(NET_PORT)", r).map(|_| ())
}

fn owned_ruleset(r: libc::c_long) -> Result<OwnedFd, SysError> {
    let fd = check("landlock_create_ruleset", r)?;
    // SAFETY: the kernel returned a new descriptor that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Adds a `PATH_BENEATH` rule granting `allowed` beneath `parent`.
pub fn add_path_rule(ruleset: &OwnedFd, parent: &OwnedFd, allowed: u64) -> Result<(), SysError> {
    let attr = PathBeneathAttr {
        allowed_access: allowed,
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: attr is a valid packed landlock_path_beneath_attr that
    // outlives the call; both descriptors are open.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    check("landlock_add_rule", r).map(|_| ())
}

/// Enforces `ruleset` on the calling thread as one more layer.
pub fn restrict_self(ruleset: &OwnedFd) -> Result<(), SysError> {
    // SAFETY: integer arguments only; the ruleset descriptor is open.
    let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) };
    check("landlock_restrict_self", r).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attributes_have_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<PathBeneathAttr>(), 12);
        assert_eq!(std::mem::size_of::<RulesetAttr>(), 8);
        assert_eq!(std::mem::size_of::<RulesetAttrNet>(), 16);
        assert_eq!(std::mem::size_of::<NetPortAttr>(), 16);
    }
}
