//! The machine a rule file is parsed on: what auditctl looks up outside
//! the file, and reading the file itself.
//!
//! - [`Host`]: whether a watched path is a directory (`-w` becomes
//!   `AUDIT_DIR` or `AUDIT_WATCH`, as auditctl's `stat` decides) and user
//!   and group names (`-F uid=root`); [`SystemHost`] asks this machine, the
//!   tests give a fake one so that a parse does not depend on where it runs.
//! - [`Machine`]: the architectures auditctl knows (`lib/machinetab.h`),
//!   which one this is, what `-F arch=` names, and the syscall table `-S`
//!   looks names up in (this machine's, and i386's).
//! - [`read_rules_text`]: a rule file's text, or a usage error naming the
//!   file.

use std::path::Path;

use anyhow::Result;

use super::tables;
use super::values::{lookup, number_u32};
use crate::sys::audit as au;

/// A rule file's text. A missing or unreadable file, or one that is not
/// UTF-8, is a usage error (exit code 2) that names it.
pub(super) fn read_rules_text(path: &Path) -> Result<String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => crate::usage_bail!(
            "audit rules file {}: {e} (give the path of a file in auditctl syntax, as \
             /etc/audit/rules.d/*.rules are)",
            path.display()
        ),
    };
    match String::from_utf8(bytes) {
        Ok(t) => Ok(t),
        Err(e) => {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = good.iter().filter(|b| **b == b'\n').count() + 1;
            crate::usage_bail!(
                "{}:{line}: not valid UTF-8 (secperf reads rule files as UTF-8 text)",
                path.display()
            );
        }
    }
}

/// What auditctl looks up on the machine while parsing: whether a watched
/// path is a directory, and user and group names.
pub trait Host {
    /// Whether `path` is a directory (`stat`, following links).
    fn is_dir(&self, path: &str) -> bool;
    /// The uid of user `name` (`getpwnam`).
    fn user(&self, name: &str) -> Option<u32>;
    /// The gid of group `name` (`getgrnam`).
    fn group(&self, name: &str) -> Option<u32>;
}

/// This machine: `stat`, the passwd and group databases.
pub struct SystemHost;

impl Host for SystemHost {
    fn is_dir(&self, path: &str) -> bool {
        std::fs::metadata(path).is_ok_and(|m| m.is_dir())
    }

    fn user(&self, name: &str) -> Option<u32> {
        let name = std::ffi::CString::new(name).ok()?;
        let mut buf = vec![0 as libc::c_char; 16384];
        // SAFETY: an all-zero passwd is a valid value to be overwritten.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut out: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call: `name` is a
        // NUL-terminated string, `pwd` and `out` are live locals, and
        // `buf` is writable for the length given.
        let rc = unsafe {
            libc::getpwnam_r(
                name.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut out,
            )
        };
        (rc == 0 && !out.is_null()).then_some(pwd.pw_uid)
    }

    fn group(&self, name: &str) -> Option<u32> {
        let name = std::ffi::CString::new(name).ok()?;
        let mut buf = vec![0 as libc::c_char; 16384];
        // SAFETY: an all-zero group is a valid value to be overwritten.
        let mut grp: libc::group = unsafe { std::mem::zeroed() };
        let mut out: *mut libc::group = std::ptr::null_mut();
        // SAFETY: as in `user`: valid, live, correctly sized arguments.
        let rc = unsafe {
            libc::getgrnam_r(
                name.as_ptr(),
                &mut grp,
                buf.as_mut_ptr(),
                buf.len(),
                &mut out,
            )
        };
        (rc == 0 && !out.is_null()).then_some(grp.gr_gid)
    }
}

/// The machines auditctl knows (`lib/machinetab.h`), for `-F arch=` and
/// the syscall table `-S` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Machine {
    I386,
    X86_64,
    Ppc64,
    Ppc64le,
    Ppc,
    S390x,
    S390,
    Arm,
    Aarch64,
}

impl Machine {
    /// The machine this secperf runs on (auditctl asks `uname`).
    pub(super) fn native() -> Option<Machine> {
        if cfg!(target_arch = "x86_64") {
            Some(Machine::X86_64)
        } else if cfg!(target_arch = "x86") {
            Some(Machine::I386)
        } else if cfg!(target_arch = "aarch64") {
            Some(Machine::Aarch64)
        } else if cfg!(target_arch = "arm") {
            Some(Machine::Arm)
        } else if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
            Some(Machine::Ppc64le)
        } else if cfg!(target_arch = "powerpc64") {
            Some(Machine::Ppc64)
        } else if cfg!(target_arch = "powerpc") {
            Some(Machine::Ppc)
        } else if cfg!(target_arch = "s390x") {
            Some(Machine::S390x)
        } else {
            None
        }
    }

    const ALL: [Machine; 9] = [
        Machine::I386,
        Machine::X86_64,
        Machine::Ppc64,
        Machine::Ppc64le,
        Machine::Ppc,
        Machine::S390x,
        Machine::S390,
        Machine::Arm,
        Machine::Aarch64,
    ];

    /// Its `AUDIT_ARCH_*`.
    pub(super) fn elf(self) -> u32 {
        match self {
            Machine::I386 => au::AUDIT_ARCH_I386,
            Machine::X86_64 => au::AUDIT_ARCH_X86_64,
            Machine::Ppc64 => au::AUDIT_ARCH_PPC64,
            Machine::Ppc64le => au::AUDIT_ARCH_PPC64LE,
            Machine::Ppc => au::AUDIT_ARCH_PPC,
            Machine::S390x => au::AUDIT_ARCH_S390X,
            Machine::S390 => au::AUDIT_ARCH_S390,
            Machine::Arm => au::AUDIT_ARCH_ARM,
            Machine::Aarch64 => au::AUDIT_ARCH_AARCH64,
        }
    }

    /// The machine of an `AUDIT_ARCH_*`.
    pub(super) fn from_elf(elf: u32) -> Option<Machine> {
        Machine::ALL.into_iter().find(|m| m.elf() == elf)
    }

    /// By a name `uname -m` gives (case-insensitive), as machinetab.h.
    fn by_name(name: &str) -> Option<Machine> {
        let m = match name.to_ascii_lowercase().as_str() {
            "i386" | "i486" | "i586" | "i686" => Machine::I386,
            "x86_64" => Machine::X86_64,
            "ppc64" => Machine::Ppc64,
            "ppc64le" => Machine::Ppc64le,
            "ppc" => Machine::Ppc,
            "s390x" => Machine::S390x,
            "s390" => Machine::S390,
            "armeb" | "arm" | "armv5tejl" | "armv5tel" | "armv6l" | "armv7l" => Machine::Arm,
            "aarch64" | "armv8l" => Machine::Aarch64,
            _ => return None,
        };
        Some(m)
    }

    /// `uname -m` spelling.
    pub(super) fn name(self) -> &'static str {
        match self {
            Machine::I386 => "i386",
            Machine::X86_64 => "x86_64",
            Machine::Ppc64 => "ppc64",
            Machine::Ppc64le => "ppc64le",
            Machine::Ppc => "ppc",
            Machine::S390x => "s390x",
            Machine::S390 => "s390",
            Machine::Arm => "arm",
            Machine::Aarch64 => "aarch64",
        }
    }

    /// Whether secperf has this machine's syscall names.
    pub(super) fn has_table(self) -> bool {
        self == Machine::I386 || Some(self) == Machine::native()
    }

    /// A syscall's number by name (case-insensitive), in this machine's
    /// table: the native one from the `syscalls` crate (plus auditctl's own
    /// spellings), i386 from the crate's `x86` table (plus
    /// [`tables::I386_AUDITCTL_SPELLINGS`]).
    pub(super) fn syscall(self, name: &str) -> Option<u32> {
        let name = name.to_ascii_lowercase();
        if self == Machine::I386 {
            return lookup(tables::I386_AUDITCTL_SPELLINGS, &name).or_else(|| {
                use std::str::FromStr;
                syscalls::x86::Sysno::from_str(&name)
                    .ok()
                    .map(|s| s.id() as u32)
            });
        }
        if Some(self) != Machine::native() {
            return None;
        }
        // auditctl 3.0.9's x86_64 table says pread/pwrite for
        // pread64/pwrite64.
        if self == Machine::X86_64 {
            match name.as_str() {
                "pread" => return Some(17),
                "pwrite" => return Some(18),
                _ => {}
            }
        }
        name.parse::<syscalls::Sysno>().ok().map(|s| s.id() as u32)
    }
}

/// `-F arch=`: `b64`, `b32` (this machine's 64- or 32-bit ABI), a machine
/// name, or an `AUDIT_ARCH_*` number (decimal, 0x hex or 0 octal; a
/// machine name that is not one is read as hex, as auditctl does).
pub(super) fn arch_value(v: &str) -> Result<u32, String> {
    let unknown = || {
        format!(
            "unknown arch '{v}' (b64, b32, x86_64, i386, aarch64, ... or an AUDIT_ARCH_* number)"
        )
    };
    if v.starts_with(|c: char| c.is_ascii_digit()) {
        let elf = number_u32(v)?;
        return Machine::from_elf(elf).map(|_| elf).ok_or_else(unknown);
    }
    let bits64 = v.eq_ignore_ascii_case("b64");
    let bits32 = v.eq_ignore_ascii_case("b32");
    let machine = if bits64 || bits32 {
        Machine::native().ok_or_else(|| {
            format!("secperf does not know this machine's architecture: write the arch for '{v}'")
        })?
    } else {
        match Machine::by_name(v) {
            Some(m) => m,
            None => u32::from_str_radix(v, 16)
                .ok()
                .and_then(Machine::from_elf)
                .ok_or_else(unknown)?,
        }
    };
    let machine = if bits32 {
        match machine {
            Machine::X86_64 => Machine::I386,
            Machine::Ppc64 => Machine::Ppc,
            Machine::S390x => Machine::S390,
            Machine::Aarch64 => Machine::Arm,
            m => m,
        }
    } else {
        machine
    };
    let ok = match machine {
        Machine::I386 | Machine::Ppc | Machine::S390 | Machine::Arm => !bits64,
        Machine::Aarch64 | Machine::Ppc64le => !bits32,
        Machine::X86_64 | Machine::Ppc64 | Machine::S390x => true,
    };
    if !ok {
        return Err(format!(
            "arch '{v}': this bit width is not supported by {}",
            machine.name()
        ));
    }
    Ok(machine.elf())
}
