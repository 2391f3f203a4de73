//! The machine a profile is evaluated for: the native architecture in
//! every spelling a profile uses, system call names against every
//! architecture's table, and the process's capabilities and kernel
//! version that Docker's includes/excludes are decided on. Kept apart
//! from compiling so the facts about the host are read in one place.

use std::str::FromStr;

use anyhow::{Context, Result};
use seccompiler::TargetArch;

use super::parse::CAPS;
use super::types::Entry;

/// The architecture secperf runs on, in every spelling a profile uses.
#[derive(Debug, Clone, Copy)]
pub struct NativeArch {
    /// `SCMP_ARCH_X86_64`.
    pub scmp: &'static str,
    /// Docker's spelling in `includes.arches` (`amd64`).
    pub docker: &'static str,
    /// The kernel's (`x86_64`), also accepted in `includes.arches`.
    pub kernel: &'static str,
    pub audit: u32,
    pub(super) target: TargetArch,
    /// Whether x32 calls share the native audit architecture.
    pub(super) x32_bit: bool,
}

#[cfg(target_arch = "x86_64")]
pub const NATIVE: Option<NativeArch> = Some(NativeArch {
    scmp: "SCMP_ARCH_X86_64",
    docker: "amd64",
    kernel: "x86_64",
    audit: crate::sys::audit::AUDIT_ARCH_X86_64,
    target: TargetArch::x86_64,
    x32_bit: true,
});
#[cfg(target_arch = "aarch64")]
pub const NATIVE: Option<NativeArch> = Some(NativeArch {
    scmp: "SCMP_ARCH_AARCH64",
    docker: "arm64",
    kernel: "aarch64",
    audit: crate::sys::audit::AUDIT_ARCH_AARCH64,
    target: TargetArch::aarch64,
    x32_bit: false,
});
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const NATIVE: Option<NativeArch> = None;

pub(super) fn native() -> Result<NativeArch> {
    NATIVE
        .ok_or_else(|| anyhow::anyhow!("seccomp profiles are only compiled for x86_64 and aarch64"))
}

/// The native number of a system call name, if this architecture has it.
pub fn native_nr(name: &str) -> Option<u32> {
    syscalls::Sysno::from_str(name).ok().map(|s| s.id() as u32)
}

/// ARM's private calls, which libseccomp names but no kernel table of the
/// `syscalls` crate lists.
const ARM_PRIVATE: &[&str] = &["breakpoint", "cacheflush", "set_tls", "usr26", "usr32"];

/// The architectures that have `name`, space-separated (from the
/// `syscalls` crate's tables of all 14 architectures), if any.
pub fn arches_of(name: &str) -> Option<String> {
    let mut found: Vec<&str> = Vec::new();
    macro_rules! look {
        ($($arch:ident),*) => {$(
            if syscalls::$arch::Sysno::from_str(name).is_ok() {
                found.push(stringify!($arch));
            }
        )*};
    }
    look!(
        aarch64,
        arm,
        loongarch64,
        mips,
        mips64,
        powerpc,
        powerpc64,
        riscv32,
        riscv64,
        s390x,
        sparc,
        sparc64,
        x86,
        x86_64
    );
    if ARM_PRIVATE.contains(&name) && !found.contains(&"arm") {
        found.push("arm");
    }
    (!found.is_empty()).then(|| found.join(" "))
}

/// What includes/excludes are evaluated against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalContext {
    /// Effective capabilities, bit N = capability N.
    pub caps_effective: u64,
    /// Running kernel (major, minor).
    pub kernel: (u32, u32),
}

impl EvalContext {
    /// This process: `CapEff` of `/proc/self/status`, the kernel release.
    pub fn current() -> Result<EvalContext> {
        let status = std::fs::read_to_string("/proc/self/status")
            .context("reading /proc/self/status for the capabilities")?;
        let cap_eff = crate::sys::query::status_field(&status, "CapEff")
            .context("/proc/self/status has no CapEff line")?;
        let caps_effective = u64::from_str_radix(cap_eff, 16)
            .with_context(|| format!("CapEff '{cap_eff}' in /proc/self/status is not hex"))?;
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .context("reading /proc/sys/kernel/osrelease")?;
        let kernel = kernel_version(&release)
            .with_context(|| format!("kernel release '{}' has no MAJOR.MINOR", release.trim()))?;
        Ok(EvalContext {
            caps_effective,
            kernel,
        })
    }

    fn has_cap(&self, cap: u8) -> bool {
        cap < 64 && self.caps_effective & (1u64 << cap) != 0
    }
}

/// (major, minor) of a release such as "6.18.4-arch1-1" (as Docker reads
/// it: "%d.%d").
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut it = release.trim().split(['.', '-']);
    let major = it.next()?.parse().ok()?;
    let minor_text = it.next()?;
    let digits: String = minor_text
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, digits.parse().ok()?))
}

/// Why an entry does not apply here, or None when it does (Docker's
/// `setupSeccomp`: excludes first, then includes; all includes.caps
/// needed, any excludes.caps excludes).
pub(super) fn gate_reason(e: &Entry, arch: &NativeArch, ctx: &EvalContext) -> Option<String> {
    let native_arch = |a: &String| a == arch.docker || a == arch.kernel;
    let x = &e.excludes;
    if let Some(a) = x.arches.iter().find(|a| native_arch(a)) {
        return Some(format!("excludes arches {a}"));
    }
    if let Some(&c) = x.caps.iter().find(|&&c| ctx.has_cap(c)) {
        return Some(format!(
            "excludes {}, which this process has",
            CAPS[usize::from(c)]
        ));
    }
    if let Some((a, b)) = x.min_kernel.filter(|&v| ctx.kernel >= v) {
        return Some(format!("excludes kernels from {a}.{b}"));
    }
    let i = &e.includes;
    if !i.arches.is_empty() && !i.arches.iter().any(native_arch) {
        return Some(format!("includes arches {} only", i.arches.join(", ")));
    }
    if let Some(&c) = i.caps.iter().find(|&&c| !ctx.has_cap(c)) {
        return Some(format!(
            "needs {}, which this process lacks",
            CAPS[usize::from(c)]
        ));
    }
    if let Some((a, b)) = i.min_kernel.filter(|&v| ctx.kernel < v) {
        return Some(format!("needs kernel {a}.{b} or later"));
    }
    None
}
