//! OCI runtime-spec seccomp profiles (the JSON that Docker, Podman,
//! containerd and Kubernetes take) compiled to **one** classic-BPF filter,
//! so that `-m seccomp:profile=PATH` measures what a container with that
//! profile pays on every system call.
//!
//! # What is read
//!
//! The runtime spec's `linux.seccomp` object (`defaultAction`,
//! `defaultErrnoRet`, `architectures`, `flags`, `listenerPath`,
//! `syscalls[]` with `names`, `action`, `errnoRet`, `args[]`) plus
//! Docker's extensions on top: `archMap`, the legacy single `name`, and
//! `includes`/`excludes` (`arches`, `caps`, `minKernel`), which are
//! evaluated for this machine and process the way Docker's
//! `setupSeccomp` does: `arches` against Docker's spelling of the native
//! architecture (`amd64`, `arm64`), `caps` against this process's
//! effective capabilities (`CapEff`; Docker uses the container's bounding
//! set, which is what its tasks would hold), `minKernel` ("4.8") against
//! the running kernel's major.minor. Unknown fields are ignored (Docker
//! profiles carry `comment`s). Capabilities matter: run as root, Docker's
//! own profile allows `clone` unconditionally (its CAP_SYS_ADMIN entry),
//! where a container without that capability gets an argument-checking
//! rule; the summary and notes say which entries applied.
//!
//! # Semantics, where runtimes differ or the spec is silent
//!
//! secperf follows runc (with libseccomp), which is what Docker,
//! containerd and Kubernetes run by default:
//! - An entry whose action equals the default action is skipped (runc
//!   does: libseccomp refuses such rules).
//! - Several `args` of one entry are ANDed, except when two of them test
//!   the same argument index: libseccomp refuses that, and runc then adds
//!   each condition as a rule of its own, so they are ORed. A note says so.
//! - `SCMP_CMP_MASKED_EQ` is `(arg & value) == valueTwo`, with no masking
//!   of `valueTwo` (libseccomp's `chain.mask = datum_a, chain.datum =
//!   datum_b`): a `valueTwo` with bits outside `value` never matches, and
//!   the rule is left out with a note.
//! - When several entries match one call, the most restrictive action
//!   wins, in the kernel's order for stacked filters (KILL_PROCESS,
//!   KILL_THREAD, TRAP, ERRNO, TRACE, LOG, ALLOW; between two ERRNOs the
//!   smaller errno).
//! - Syscall names: a name this architecture lacks but another one has
//!   (`chown32`, `arm_fadvise64_64`: Docker's profile lists every
//!   architecture's names in one list) is skipped with a note, as runc and
//!   libseccomp do; a name that no architecture has (in the `syscalls`
//!   crate's tables of all 14 architectures) is a typo and a usage error.
//!   runc silently skips both; refusing typos is stricter, but a profile that names a call no kernel has cannot
//!   mean anything, while one that merely spans architectures must load.
//! - `SCMP_ACT_NOTIFY` needs a listener secperf does not have: a usage
//!   error. `flags` are accepted and not applied (a note says so).
//!
//! # The filter
//!
//! seccompiler builds a filter with a single match action, while a
//! profile has one action per entry. Stacking one filter per action
//! would make the kernel run several filters per call, more than the one
//! filter runc installs, and falsify the measurement. So one filter is
//! built: one seccompiler program per distinct action, most restrictive
//! first, each with a sentinel mismatch value that is then rewritten into
//! a `JA` (32-bit offset, so any distance) to the start of the next
//! program; the last program's mismatch is the default action. Each
//! seccompiler program starts with its own architecture check; those are
//! removed and one check is put in front:
//!
//! ```text
//! ld arch; jeq NATIVE ? next : ret KILL_PROCESS
//! (x86_64 only) ld nr; jge 0x40000000 ? (jeq 0xffffffff ? next : ret KILL_PROCESS) : next
//! program(KILL_PROCESS rules) ... program(ALLOW rules) -> default action
//! ```
//!
//! Only the native architecture is compiled. Calls of other ABIs (i386
//! `int 0x80` calls, x32 calls) are killed by that check instead of being
//! filtered by the profile's rules for them, where runc's filter would
//! have a section per listed architecture; secperf's workloads make
//! native calls only, so the path measured is the native one.
//!
//! Argument comparisons are 64-bit, as libseccomp's on 64-bit
//! architectures. A call whose rules are number-only and allow it is
//! what the kernel's action cache (Linux 5.11+) recognises, so such calls
//! skip the filter entirely, as they do under runc's filter (a test
//! emulates the kernel's `seccomp_is_const_allow` on every number).
//!
//! What still differs from runc's filter, for the calls that do run it
//! (denied ones, those with argument rules): seccompiler compares
//! numbers one after another, as libseccomp does by default, but spends
//! two instructions (`jeq`, `ja`) on each number that does not match
//! where libseccomp spends one, and each action's program reloads the
//! number. Docker's default profile compiles to about 1700 instructions
//! here (as root; 1500 without capabilities).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result};
use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};
use serde::Deserialize;

use crate::error::UsageError;
use crate::sys::bpf::{
    BPF_ABS, BPF_JA, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_MAXINSNS, BPF_RET, BPF_W, SockFilter,
    stmt,
};

#[cfg(test)]
mod tests;

/// `BPF_JMP | BPF_JGE` operation (not in the shared builder).
const BPF_JGE: u16 = 0x30;

/// x32 system calls carry this bit in their number (`__X32_SYSCALL_BIT`).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;

/// The largest errno the kernel returns from a filter (`MAX_ERRNO`).
pub const MAX_ERRNO: u64 = 4095;

/// The mismatch value of every program but the last: rewritten into a
/// jump to the next program. An ERRNO whose data no profile can produce
/// (errno values stop at [`MAX_ERRNO`]).
const SENTINEL_ERRNO: u32 = 0xfffe;
const SENTINEL: u32 = libc::SECCOMP_RET_ERRNO | SENTINEL_ERRNO;

/// What the filter does with a call (`SCMP_ACT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    KillProcess,
    /// `SCMP_ACT_KILL` and `SCMP_ACT_KILL_THREAD`.
    KillThread,
    Trap,
    Errno(u16),
    /// With the message for the tracer; without a tracer the call fails
    /// with ENOSYS.
    Trace(u16),
    Log,
    Allow,
}

impl Action {
    /// The filter's return value (`SECCOMP_RET_*`).
    pub fn ret(self) -> u32 {
        match self {
            Action::KillProcess => libc::SECCOMP_RET_KILL_PROCESS,
            Action::KillThread => libc::SECCOMP_RET_KILL_THREAD,
            Action::Trap => libc::SECCOMP_RET_TRAP,
            Action::Errno(e) => libc::SECCOMP_RET_ERRNO | u32::from(e),
            Action::Trace(m) => libc::SECCOMP_RET_TRACE | u32::from(m),
            Action::Log => libc::SECCOMP_RET_LOG,
            Action::Allow => libc::SECCOMP_RET_ALLOW,
        }
    }

    /// Whether the call runs (ALLOW, LOG).
    pub fn allows(self) -> bool {
        matches!(self, Action::Allow | Action::Log)
    }

    /// What happens to a task that makes the call, in words.
    pub fn effect(self) -> String {
        match self {
            Action::KillProcess => "the process is killed (SIGSYS)".into(),
            Action::KillThread => "the thread is killed (SIGSYS)".into(),
            Action::Trap => "SIGSYS is sent, which kills the task".into(),
            Action::Errno(e) => format!("the call fails with {}", errno_text(e)),
            Action::Trace(_) => "the call fails with ENOSYS (no tracer is attached)".into(),
            Action::Log => "the call runs and is logged".into(),
            Action::Allow => "the call runs".into(),
        }
    }

    fn to_seccompiler(self) -> SeccompAction {
        match self {
            Action::KillProcess => SeccompAction::KillProcess,
            Action::KillThread => SeccompAction::KillThread,
            Action::Trap => SeccompAction::Trap,
            Action::Errno(e) => SeccompAction::Errno(u32::from(e)),
            Action::Trace(m) => SeccompAction::Trace(u32::from(m)),
            Action::Log => SeccompAction::Log,
            Action::Allow => SeccompAction::Allow,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::KillProcess => f.write_str("SCMP_ACT_KILL_PROCESS"),
            Action::KillThread => f.write_str("SCMP_ACT_KILL_THREAD"),
            Action::Trap => f.write_str("SCMP_ACT_TRAP"),
            Action::Errno(e) => write!(f, "SCMP_ACT_ERRNO({})", errno_text(*e)),
            Action::Trace(m) => write!(f, "SCMP_ACT_TRACE({m})"),
            Action::Log => f.write_str("SCMP_ACT_LOG"),
            Action::Allow => f.write_str("SCMP_ACT_ALLOW"),
        }
    }
}

fn errno_text(e: u16) -> String {
    let name = crate::sys::errno_name(i32::from(e));
    if name.starts_with("errno") {
        name
    } else {
        format!("{name}={e}")
    }
}

/// An argument comparison operator (`SCMP_CMP_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Ne,
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
    /// `(arg & value) == value_two`.
    MaskedEq,
}

const OPS: &[(&str, CmpOp)] = &[
    ("SCMP_CMP_NE", CmpOp::Ne),
    ("SCMP_CMP_LT", CmpOp::Lt),
    ("SCMP_CMP_LE", CmpOp::Le),
    ("SCMP_CMP_EQ", CmpOp::Eq),
    ("SCMP_CMP_GE", CmpOp::Ge),
    ("SCMP_CMP_GT", CmpOp::Gt),
    ("SCMP_CMP_MASKED_EQ", CmpOp::MaskedEq),
];

/// One argument condition of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArgCmp {
    /// 0 to 5.
    pub index: u8,
    pub op: CmpOp,
    pub value: u64,
    pub value_two: u64,
}

/// Whether a condition holds for every argument, for none, or it depends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Truth {
    Always,
    Never,
    Depends,
}

impl ArgCmp {
    /// Whether the condition holds for `args`.
    pub fn holds(&self, args: &[u64; 6]) -> bool {
        let a = args[usize::from(self.index)];
        let v = self.value;
        match self.op {
            CmpOp::Ne => a != v,
            CmpOp::Lt => a < v,
            CmpOp::Le => a <= v,
            CmpOp::Eq => a == v,
            CmpOp::Ge => a >= v,
            CmpOp::Gt => a > v,
            CmpOp::MaskedEq => a & v == self.value_two,
        }
    }

    fn truth(&self) -> Truth {
        let v = self.value;
        match self.op {
            CmpOp::Ne | CmpOp::Eq => Truth::Depends,
            CmpOp::Lt if v == 0 => Truth::Never,
            CmpOp::Le if v == u64::MAX => Truth::Always,
            CmpOp::Ge if v == 0 => Truth::Always,
            CmpOp::Gt if v == u64::MAX => Truth::Never,
            CmpOp::Lt | CmpOp::Le | CmpOp::Ge | CmpOp::Gt => Truth::Depends,
            CmpOp::MaskedEq if self.value_two & !v != 0 => Truth::Never,
            CmpOp::MaskedEq if v == 0 => Truth::Always,
            CmpOp::MaskedEq => Truth::Depends,
        }
    }

    fn to_seccompiler(self) -> Result<SeccompCondition, BackendError> {
        let op = match self.op {
            CmpOp::Ne => SeccompCmpOp::Ne,
            CmpOp::Lt => SeccompCmpOp::Lt,
            CmpOp::Le => SeccompCmpOp::Le,
            CmpOp::Eq => SeccompCmpOp::Eq,
            CmpOp::Ge => SeccompCmpOp::Ge,
            CmpOp::Gt => SeccompCmpOp::Gt,
            // seccompiler compares (arg & mask) == (value & mask); rules
            // whose value_two has bits outside the mask never reach here.
            CmpOp::MaskedEq => SeccompCmpOp::MaskedEq(self.value),
        };
        let value = if self.op == CmpOp::MaskedEq {
            self.value_two
        } else {
            self.value
        };
        SeccompCondition::new(self.index, SeccompCmpArgLen::Qword, op, value)
    }
}

impl fmt::Display for ArgCmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (i, v) = (self.index, self.value);
        match self.op {
            CmpOp::Ne => write!(f, "args[{i}] != {v:#x}"),
            CmpOp::Lt => write!(f, "args[{i}] < {v:#x}"),
            CmpOp::Le => write!(f, "args[{i}] <= {v:#x}"),
            CmpOp::Eq => write!(f, "args[{i}] == {v:#x}"),
            CmpOp::Ge => write!(f, "args[{i}] >= {v:#x}"),
            CmpOp::Gt => write!(f, "args[{i}] > {v:#x}"),
            CmpOp::MaskedEq => write!(f, "(args[{i}] & {v:#x}) == {:#x}", self.value_two),
        }
    }
}

/// Docker's `includes`/`excludes`: when an entry applies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gate {
    /// Capability numbers (`CAP_SYS_ADMIN` = 21).
    pub caps: Vec<u8>,
    /// Docker's architecture spellings (`amd64`, `arm64`, `x86`, ...).
    pub arches: Vec<String>,
    /// (major, minor).
    pub min_kernel: Option<(u32, u32)>,
}

/// One `syscalls[]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub names: Vec<String>,
    pub action: Action,
    pub args: Vec<ArgCmp>,
    pub includes: Gate,
    pub excludes: Gate,
}

/// A parsed profile: every field checked, nothing evaluated yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Where it came from, for messages (the file's path).
    pub origin: String,
    pub default_action: Action,
    /// `SCMP_ARCH_*` names.
    pub architectures: Vec<String>,
    /// Docker's `archMap`: (architecture, sub-architectures).
    pub arch_map: Vec<(String, Vec<String>)>,
    pub flags: Vec<String>,
    /// `listenerPath`/`listenerMetadata`: only for SCMP_ACT_NOTIFY, which
    /// is refused, so they are ignored.
    pub listener_path: Option<String>,
    pub listener_metadata: Option<String>,
    pub entries: Vec<Entry>,
}

impl Profile {
    /// `syscalls[3] ("personality")`, for messages.
    pub fn entry_label(&self, i: usize) -> String {
        match self.entries.get(i).and_then(|e| e.names.first()) {
            Some(n) => format!("syscalls[{i}] (\"{n}\")"),
            None => format!("syscalls[{i}]"),
        }
    }
}

// ---------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawProfile {
    default_action: Option<String>,
    default_errno_ret: Option<u64>,
    architectures: Option<Vec<String>>,
    arch_map: Option<Vec<RawArchMap>>,
    flags: Option<Vec<String>>,
    listener_path: Option<String>,
    listener_metadata: Option<String>,
    syscalls: Option<Vec<RawSyscall>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawArchMap {
    architecture: String,
    sub_architectures: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSyscall {
    name: Option<String>,
    names: Option<Vec<String>>,
    action: Option<String>,
    errno_ret: Option<u64>,
    args: Option<Vec<RawArg>>,
    includes: Option<RawGate>,
    excludes: Option<RawGate>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawArg {
    index: u64,
    value: u64,
    value_two: Option<u64>,
    op: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawGate {
    caps: Option<Vec<String>>,
    arches: Option<Vec<String>>,
    min_kernel: Option<String>,
}

const ACTIONS: &[&str] = &[
    "SCMP_ACT_KILL",
    "SCMP_ACT_KILL_PROCESS",
    "SCMP_ACT_KILL_THREAD",
    "SCMP_ACT_TRAP",
    "SCMP_ACT_ERRNO",
    "SCMP_ACT_TRACE",
    "SCMP_ACT_ALLOW",
    "SCMP_ACT_LOG",
    "SCMP_ACT_NOTIFY",
];

/// libseccomp's architecture names, as the spec's `architectures` takes.
const SCMP_ARCHES: &[&str] = &[
    "SCMP_ARCH_X86",
    "SCMP_ARCH_X86_64",
    "SCMP_ARCH_X32",
    "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64",
    "SCMP_ARCH_MIPS",
    "SCMP_ARCH_MIPS64",
    "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",
    "SCMP_ARCH_MIPSEL64",
    "SCMP_ARCH_MIPSEL64N32",
    "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",
    "SCMP_ARCH_PPC64LE",
    "SCMP_ARCH_S390",
    "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",
    "SCMP_ARCH_PARISC64",
    "SCMP_ARCH_RISCV64",
    "SCMP_ARCH_LOONGARCH64",
    "SCMP_ARCH_M68K",
    "SCMP_ARCH_SH",
    "SCMP_ARCH_SHEB",
];

/// Docker's spellings in `includes.arches` (its `goToNative` values, the
/// `x32` its own profile uses), plus the kernel's names of the two
/// architectures secperf runs on.
const GATE_ARCHES: &[&str] = &[
    "x86",
    "amd64",
    "x32",
    "arm",
    "arm64",
    "loongarch64",
    "loong64",
    "mips",
    "mipsle",
    "mipsel",
    "mips64",
    "mips64n32",
    "mipsel64",
    "mips3l64n32",
    "mipsel64n32",
    "ppc",
    "ppc64",
    "ppc64le",
    "riscv64",
    "s390",
    "s390x",
    "x86_64",
    "aarch64",
];

const FLAGS: &[&str] = &[
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
];

/// Capability names by number (`<linux/capability.h>`).
pub const CAPS: &[&str] = &[
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
];

/// A capability's number from `CAP_SYS_ADMIN` (case-insensitive, the
/// `CAP_` prefix optional).
pub fn cap_number(name: &str) -> Option<u8> {
    let upper = name.trim().to_ascii_uppercase();
    let full = if upper.starts_with("CAP_") {
        upper
    } else {
        format!("CAP_{upper}")
    };
    CAPS.iter().position(|c| *c == full).map(|i| i as u8)
}

/// A usage error about `origin`.
fn bad(origin: &str, msg: impl fmt::Display) -> anyhow::Error {
    UsageError::new(format!("seccomp profile {origin}: {msg}")).into()
}

/// An action from its `SCMP_ACT_*` name and optional errno.
fn parse_action(origin: &str, what: &str, name: &str, errno: Option<u64>) -> Result<Action> {
    let errno_of = |default: u64| -> Result<u16> {
        let e = errno.unwrap_or(default);
        if e > MAX_ERRNO {
            return Err(bad(
                origin,
                format_args!(
                    "{what}: errno {e} is out of range (the kernel returns 0 to {MAX_ERRNO}); \
                     use an errno number such as 1 (EPERM) or 38 (ENOSYS)"
                ),
            ));
        }
        Ok(e as u16)
    };
    let action = match name {
        "SCMP_ACT_KILL" | "SCMP_ACT_KILL_THREAD" => Action::KillThread,
        "SCMP_ACT_KILL_PROCESS" => Action::KillProcess,
        "SCMP_ACT_TRAP" => Action::Trap,
        "SCMP_ACT_ERRNO" => Action::Errno(errno_of(libc::EPERM as u64)?),
        "SCMP_ACT_TRACE" => Action::Trace(errno_of(libc::EPERM as u64)?),
        "SCMP_ACT_ALLOW" => Action::Allow,
        "SCMP_ACT_LOG" => Action::Log,
        "SCMP_ACT_NOTIFY" => {
            return Err(bad(
                origin,
                format_args!(
                    "{what}: SCMP_ACT_NOTIFY hands the call to a user-space listener, and secperf \
                     has none to answer it; replace it with SCMP_ACT_ERRNO or SCMP_ACT_ALLOW \
                     (whichever your listener would answer) to measure the filter"
                ),
            ));
        }
        other => {
            return Err(bad(
                origin,
                format_args!(
                    "{what}: unknown action '{other}' (valid: {})",
                    ACTIONS.join(", ")
                ),
            ));
        }
    };
    if errno.is_some() && !matches!(action, Action::Errno(_) | Action::Trace(_)) {
        return Err(bad(
            origin,
            format_args!(
                "{what}: an errno is given for {name}, which takes none (only SCMP_ACT_ERRNO and \
                 SCMP_ACT_TRACE do); remove it"
            ),
        ));
    }
    Ok(action)
}

fn check_scmp_arch(origin: &str, what: &str, a: &str) -> Result<()> {
    if SCMP_ARCHES.contains(&a) {
        Ok(())
    } else {
        Err(bad(
            origin,
            format_args!(
                "{what}: unknown architecture '{a}' (valid: {})",
                SCMP_ARCHES.join(", ")
            ),
        ))
    }
}

fn parse_gate(origin: &str, what: &str, raw: Option<RawGate>) -> Result<Gate> {
    let Some(raw) = raw else {
        return Ok(Gate::default());
    };
    let mut gate = Gate::default();
    for c in raw.caps.unwrap_or_default() {
        match cap_number(&c) {
            Some(n) => gate.caps.push(n),
            None => {
                return Err(bad(
                    origin,
                    format_args!(
                        "{what}: unknown capability '{c}' (valid: CAP_CHOWN to \
                         CAP_CHECKPOINT_RESTORE, as in capabilities(7))"
                    ),
                ));
            }
        }
    }
    for a in raw.arches.unwrap_or_default() {
        if !GATE_ARCHES.contains(&a.as_str()) {
            return Err(bad(
                origin,
                format_args!(
                    "{what}: unknown architecture '{a}' (Docker spells them {})",
                    GATE_ARCHES.join(", ")
                ),
            ));
        }
        gate.arches.push(a);
    }
    if let Some(k) = raw.min_kernel.filter(|k| !k.is_empty()) {
        let parsed = k
            .split_once('.')
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
            .filter(|&v| v != (0, 0));
        match parsed {
            Some(v) => gate.min_kernel = Some(v),
            None => {
                return Err(bad(
                    origin,
                    format_args!("{what}: minKernel '{k}' is not MAJOR.MINOR (write e.g. \"4.8\")"),
                ));
            }
        }
    }
    Ok(gate)
}

/// Parses a profile's JSON text; `origin` names it in messages. Every
/// mistake is a usage error saying where and how to fix it (bad JSON:
/// with line and column).
pub fn parse(text: &str, origin: &str) -> Result<Profile> {
    // serde would also take a struct from an array: refuse anything but
    // an object first.
    let start = text.trim_start();
    if !start.starts_with('{') {
        let skipped = &text[..text.len() - start.len()];
        return Err(bad(
            origin,
            format_args!(
                "line {}: not a JSON object; an OCI seccomp profile is an object with \
                 defaultAction and syscalls, {{\"defaultAction\": \"SCMP_ACT_ERRNO\", \
                 \"syscalls\": [...]}}",
                skipped.matches('\n').count() + 1
            ),
        ));
    }
    let raw: RawProfile = serde_json::from_str(text).map_err(|e| {
        bad(
            origin,
            format_args!(
                "line {}, column {}: {} (an OCI seccomp profile is a JSON object with \
                 defaultAction and syscalls)",
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            ),
        )
    })?;
    let Some(default_name) = raw.default_action else {
        return Err(bad(
            origin,
            "no defaultAction; add one, e.g. \"defaultAction\": \"SCMP_ACT_ERRNO\"",
        ));
    };
    let default_action = parse_action(
        origin,
        "defaultAction",
        &default_name,
        raw.default_errno_ret,
    )?;

    let architectures = raw.architectures.unwrap_or_default();
    for a in &architectures {
        check_scmp_arch(origin, "architectures", a)?;
    }
    let mut arch_map = Vec::new();
    for m in raw.arch_map.unwrap_or_default() {
        check_scmp_arch(origin, "archMap", &m.architecture)?;
        let subs = m.sub_architectures.unwrap_or_default();
        for s in &subs {
            check_scmp_arch(origin, "archMap", s)?;
        }
        arch_map.push((m.architecture, subs));
    }
    if !architectures.is_empty() && !arch_map.is_empty() {
        return Err(bad(
            origin,
            "both 'architectures' and 'archMap' are given; use one of them (as Docker requires)",
        ));
    }
    let flags = raw.flags.unwrap_or_default();
    for f in &flags {
        if !FLAGS.contains(&f.as_str()) {
            return Err(bad(
                origin,
                format_args!("unknown flag '{f}' (valid: {})", FLAGS.join(", ")),
            ));
        }
    }

    let mut entries = Vec::new();
    for (i, s) in raw.syscalls.unwrap_or_default().into_iter().enumerate() {
        let names = match (s.name.filter(|n| !n.is_empty()), s.names) {
            (Some(_), Some(ns)) if !ns.is_empty() => {
                return Err(bad(
                    origin,
                    format_args!(
                        "syscalls[{i}]: both 'name' and 'names' are given; use 'names' only"
                    ),
                ));
            }
            (Some(n), _) => vec![n],
            (None, Some(ns)) => ns,
            (None, None) => Vec::new(),
        };
        let what = match names.first() {
            Some(n) => format!("syscalls[{i}] (\"{n}\")"),
            None => format!("syscalls[{i}]"),
        };
        if names.is_empty() {
            return Err(bad(
                origin,
                format_args!("{what}: names no system call; add \"names\": [\"...\"]"),
            ));
        }
        if let Some(empty) = names.iter().position(|n| n.trim().is_empty()) {
            return Err(bad(
                origin,
                format_args!("{what}: names[{empty}] is empty; remove it or name a system call"),
            ));
        }
        let Some(action_name) = s.action else {
            return Err(bad(
                origin,
                format_args!("{what}: no action; add e.g. \"action\": \"SCMP_ACT_ALLOW\""),
            ));
        };
        let action = parse_action(origin, &what, &action_name, s.errno_ret)?;
        let mut args = Vec::new();
        for (j, a) in s.args.unwrap_or_default().into_iter().enumerate() {
            if a.index > 5 {
                return Err(bad(
                    origin,
                    format_args!(
                        "{what}: args[{j}] has index {}, but system calls have arguments 0 to 5",
                        a.index
                    ),
                ));
            }
            let Some(&(_, op)) = OPS.iter().find(|(n, _)| *n == a.op) else {
                return Err(bad(
                    origin,
                    format_args!(
                        "{what}: args[{j}]: unknown op '{}' (valid: {})",
                        a.op,
                        OPS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            args.push(ArgCmp {
                index: a.index as u8,
                op,
                value: a.value,
                value_two: a.value_two.unwrap_or(0),
            });
        }
        let includes = parse_gate(origin, &format!("{what}: includes"), s.includes)?;
        let excludes = parse_gate(origin, &format!("{what}: excludes"), s.excludes)?;
        entries.push(Entry {
            names,
            action,
            args,
            includes,
            excludes,
        });
    }
    Ok(Profile {
        origin: origin.to_string(),
        default_action,
        architectures,
        arch_map,
        flags,
        listener_path: raw.listener_path.filter(|p| !p.is_empty()),
        listener_metadata: raw.listener_metadata.filter(|m| !m.is_empty()),
        entries,
    })
}

/// serde_json's message without its " at line L column C" suffix (the
/// caller says where).
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

// ---------------------------------------------------------------------
// The machine a profile is evaluated for
// ---------------------------------------------------------------------

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
    target: TargetArch,
    /// Whether x32 calls share the native audit architecture.
    x32_bit: bool,
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

fn native() -> Result<NativeArch> {
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
fn gate_reason(e: &Entry, arch: &NativeArch, ctx: &EvalContext) -> Option<String> {
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

// ---------------------------------------------------------------------
// Compiling
// ---------------------------------------------------------------------

/// One rule for one system call: an action, taken when every condition
/// holds (none: always).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    action: Action,
    conds: Vec<ArgCmp>,
}

impl Rule {
    fn truth(&self) -> Truth {
        let mut t = Truth::Always;
        for c in &self.conds {
            match c.truth() {
                Truth::Never => return Truth::Never,
                Truth::Depends => t = Truth::Depends,
                Truth::Always => {}
            }
        }
        t
    }
}

/// What a profile does with one system call whatever its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Runs, whatever the arguments (ALLOW or LOG).
    Allow,
    /// Never runs: the actions it may get, e.g. "SCMP_ACT_ERRNO(EPERM=1)".
    Deny(String),
    /// Depends on the arguments (conditional entries).
    Depends,
    /// Not a system call of this architecture.
    Unknown,
}

/// A profile compiled for this machine.
#[derive(Debug, Clone)]
pub struct CompiledProfile {
    /// The filter, ready for seccomp(2).
    pub program: Vec<SockFilter>,
    pub path: PathBuf,
    /// What the user should know: names skipped, entries left out, what
    /// is not compiled.
    pub notes: Vec<String>,
    pub default_action: Action,
    /// Entries in the profile, and those that apply on this machine.
    pub entries_total: usize,
    pub entries_applied: usize,
    /// Native number -> its rules, in profile order.
    rules: BTreeMap<u32, Vec<Rule>>,
    audit_arch: u32,
    x32_bit: bool,
}

impl CompiledProfile {
    /// Length of the filter in BPF instructions.
    pub fn instructions(&self) -> usize {
        self.program.len()
    }

    /// System calls (native numbers) with at least one rule.
    pub fn syscalls_with_rules(&self) -> usize {
        self.rules.len()
    }

    /// What the profile does with syscall `name` whatever its arguments.
    pub fn decision(&self, name: &str) -> Decision {
        match native_nr(name) {
            Some(nr) => self.decision_nr(nr),
            None => Decision::Unknown,
        }
    }

    /// [`CompiledProfile::decision`] by native number.
    pub fn decision_nr(&self, nr: u32) -> Decision {
        let rules = self.rules.get(&nr).map(Vec::as_slice).unwrap_or(&[]);
        // The outcomes some arguments may give (a superset: conditional
        // rules are assumed to match or not independently). With a rule
        // that always matches, the most restrictive such decides unless a
        // more restrictive conditional one matches too; with none, the
        // default applies when no conditional rule matches, and any of
        // them may.
        let always = rules
            .iter()
            .filter(|r| r.truth() == Truth::Always)
            .map(|r| r.action)
            .min();
        let base = always.unwrap_or(self.default_action);
        let mut outcomes: BTreeSet<Action> = BTreeSet::from([base]);
        outcomes.extend(
            rules
                .iter()
                .filter(|r| r.truth() == Truth::Depends)
                .filter(|r| always.is_none() || r.action < base)
                .map(|r| r.action),
        );
        if outcomes.iter().all(|a| a.allows()) {
            Decision::Allow
        } else if outcomes.iter().all(|a| !a.allows()) {
            Decision::Deny(
                outcomes
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" or "),
            )
        } else {
            Decision::Depends
        }
    }

    /// The action for native call `nr` with `args`, by the profile's rules
    /// (not the filter): the most restrictive matching rule, else the
    /// default.
    pub fn action_for(&self, nr: u32, args: &[u64; 6]) -> Action {
        self.rules
            .get(&nr)
            .into_iter()
            .flatten()
            .filter(|r| r.conds.iter().all(|c| c.holds(args)))
            .map(|r| r.action)
            .min()
            .unwrap_or(self.default_action)
    }

    /// What the filter must return for a call: [`CompiledProfile::action_for`]
    /// for native calls; KILL_PROCESS for other architectures and x32.
    pub fn expected_return(&self, arch: u32, nr: u32, args: &[u64; 6]) -> u32 {
        if arch != self.audit_arch || (self.x32_bit && nr >= X32_SYSCALL_BIT && nr != u32::MAX) {
            return libc::SECCOMP_RET_KILL_PROCESS;
        }
        self.action_for(nr, args).ret()
    }

    /// One line, e.g. (Docker's default profile, as root) "default.json:
    /// 333 syscalls in 21 of 28 entries (the others do not apply here),
    /// default SCMP_ACT_ERRNO(EPERM=1); one filter of 1706 BPF
    /// instructions".
    pub fn summary(&self) -> String {
        let file = self
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string());
        let entries = if self.entries_applied == self.entries_total {
            format!("{} entries", self.entries_total)
        } else {
            format!(
                "{} of {} entries (the others do not apply here)",
                self.entries_applied, self.entries_total
            )
        };
        format!(
            "{file}: {} syscalls in {entries}, default {}; one filter of {} BPF instructions",
            self.rules.len(),
            self.default_action,
            self.program.len()
        )
    }
}

/// Lists at most `max` items, then "and N more".
fn list_some(items: &[String], max: usize) -> String {
    if items.len() <= max {
        items.join(", ")
    } else {
        format!(
            "{}, and {} more",
            items[..max].join(", "),
            items.len() - max
        )
    }
}

/// Compiles `p` for this architecture, evaluating includes/excludes with
/// `ctx`. A profile too long for the kernel is a usage error.
pub fn compile(p: &Profile, ctx: &EvalContext) -> Result<CompiledProfile> {
    let arch = native()?;
    let origin = p.origin.as_str();
    let mut notes = Vec::new();

    // Architectures.
    let arches: Vec<String> = if p.arch_map.is_empty() {
        p.architectures.clone()
    } else {
        match p.arch_map.iter().find(|(a, _)| a == arch.scmp) {
            Some((a, subs)) => std::iter::once(a.clone())
                .chain(subs.iter().cloned())
                .collect(),
            None => {
                notes.push(format!(
                    "archMap has no entry for {}: Docker then lists no architecture, which means \
                     the native one only",
                    arch.scmp
                ));
                Vec::new()
            }
        }
    };
    if !arches.is_empty() && !arches.iter().any(|a| a == arch.scmp) {
        notes.push(format!(
            "the profile lists {} but not {}; runc adds the native architecture anyway, and so \
             does secperf",
            arches.join(", "),
            arch.scmp
        ));
    }
    let others: Vec<&str> = arches
        .iter()
        .map(String::as_str)
        .filter(|a| *a != arch.scmp)
        .collect();
    if !others.is_empty() {
        notes.push(format!(
            "only {} is compiled: calls of {} are killed (SECCOMP_RET_KILL_PROCESS) by the \
             filter's architecture check instead of being filtered by the profile; secperf's \
             workloads make {} calls only",
            arch.scmp,
            others.join(", "),
            arch.kernel
        ));
    }
    if !p.flags.is_empty() {
        notes.push(format!(
            "flags {} are not applied: secperf installs the filter with no flags, per thread",
            p.flags.join(", ")
        ));
    }
    if p.listener_path.is_some() || p.listener_metadata.is_some() {
        notes.push("listenerPath/listenerMetadata are ignored (no SCMP_ACT_NOTIFY entry)".into());
    }

    // Entries to rules.
    let mut rules: BTreeMap<u32, Vec<Rule>> = BTreeMap::new();
    let mut other_arch: BTreeMap<String, String> = BTreeMap::new();
    let mut gated = Vec::new();
    let mut as_default = Vec::new();
    let mut applied = 0;
    for (i, e) in p.entries.iter().enumerate() {
        let label = p.entry_label(i);
        // Names are checked in every entry, applying or not: a typo is a
        // typo on every machine.
        let mut nrs = Vec::new();
        let mut elsewhere = Vec::new();
        for name in &e.names {
            match (native_nr(name), arches_of(name)) {
                (Some(nr), _) => nrs.push(nr),
                (None, Some(where_)) => elsewhere.push((name.clone(), where_)),
                (None, None) => {
                    return Err(bad(
                        origin,
                        format_args!(
                            "{label}: '{name}' is not a system call on any Linux architecture; \
                             correct the name (as in syscalls(2)) or remove it"
                        ),
                    ));
                }
            }
        }
        if let Some(why) = gate_reason(e, &arch, ctx) {
            gated.push(format!("{label} ({why})"));
            continue;
        }
        applied += 1;
        other_arch.extend(elsewhere);
        if e.action == p.default_action {
            as_default.push(label);
            continue;
        }
        let mut seen = [0u8; 6];
        for c in &e.args {
            seen[usize::from(c.index)] += 1;
        }
        let cond_sets: Vec<Vec<ArgCmp>> = if seen.iter().any(|&n| n > 1) {
            notes.push(format!(
                "{label}: several conditions test one argument; libseccomp refuses that in one \
                 rule and runc then adds each condition as a rule of its own, so they are ORed, \
                 not ANDed (secperf does the same)"
            ));
            e.args.iter().map(|c| vec![*c]).collect()
        } else {
            vec![e.args.clone()]
        };
        for conds in cond_sets {
            let rule = Rule {
                action: e.action,
                conds,
            };
            if let Some(c) = rule
                .conds
                .iter()
                .find(|c| c.op == CmpOp::MaskedEq && c.truth() == Truth::Never)
            {
                notes.push(format!(
                    "{label}: {c} can never hold (valueTwo has bits outside the mask value), so \
                     that rule is left out"
                ));
                continue;
            }
            for &nr in &nrs {
                rules.entry(nr).or_default().push(rule.clone());
            }
        }
    }
    if !other_arch.is_empty() {
        let names: Vec<String> = other_arch.keys().cloned().collect();
        notes.push(format!(
            "{} names are system calls of other architectures only and are skipped, as runc \
             does: {}",
            names.len(),
            list_some(&names, 8)
        ));
    }
    if !gated.is_empty() {
        notes.push(format!(
            "{} entries do not apply on this machine (Docker's includes/excludes) and are left \
             out: {}",
            gated.len(),
            list_some(&gated, 8)
        ));
    }
    if !as_default.is_empty() {
        notes.push(format!(
            "{} entries repeat the default action and change nothing (runc skips them too): {}",
            as_default.len(),
            list_some(&as_default, 8)
        ));
    }

    let program = build_program(&arch, &rules, p.default_action).map_err(|e| match e {
        ProgramError::TooLong(n) => bad(
            origin,
            format_args!(
                "compiles to {n} BPF instructions, more than the {BPF_MAXINSNS} the kernel \
                 accepts in one filter; remove entries or conditions (number-only entries cost \
                 the least)"
            ),
        ),
        ProgramError::Backend(e) => anyhow::anyhow!("seccomp profile {origin}: compiling: {e}"),
        ProgramError::Layout(what) => {
            anyhow::anyhow!("seccomp profile {origin}: compiling: {what} (a seccompiler change?)")
        }
    })?;
    Ok(CompiledProfile {
        program,
        path: PathBuf::from(origin),
        notes,
        default_action: p.default_action,
        entries_total: p.entries.len(),
        entries_applied: applied,
        rules,
        audit_arch: arch.audit,
        x32_bit: arch.x32_bit,
    })
}

#[derive(Debug)]
enum ProgramError {
    TooLong(usize),
    Backend(BackendError),
    /// seccompiler's output is not laid out as this module expects.
    Layout(&'static str),
}

impl From<BackendError> for ProgramError {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::FilterTooLarge(n) => ProgramError::TooLong(n),
            e => ProgramError::Backend(e),
        }
    }
}

/// The filter: architecture check, then one seccompiler program per
/// action, most restrictive first, chained by rewriting each program's
/// sentinel mismatch into a jump to the next one.
fn build_program(
    arch: &NativeArch,
    rules: &BTreeMap<u32, Vec<Rule>>,
    default: Action,
) -> Result<Vec<SockFilter>, ProgramError> {
    // Action -> syscall -> rules; None = number-only.
    let mut groups: BTreeMap<Action, BTreeMap<i64, Option<Vec<SeccompRule>>>> = BTreeMap::new();
    for (&nr, rs) in rules {
        for r in rs {
            let slot = groups
                .entry(r.action)
                .or_default()
                .entry(i64::from(nr))
                .or_insert_with(|| Some(Vec::new()));
            if r.conds.is_empty() {
                *slot = None;
            } else if let Some(list) = slot {
                let conds = r
                    .conds
                    .iter()
                    .map(|c| c.to_seccompiler())
                    .collect::<Result<Vec<_>, _>>()?;
                list.push(SeccompRule::new(conds)?);
            }
        }
    }

    let mut prog = vec![
        stmt(BPF_LD | BPF_W | BPF_ABS, DATA_ARCH),
        SockFilter {
            code: BPF_JMP | BPF_JEQ | BPF_K,
            jt: 1,
            jf: 0,
            k: arch.audit,
        },
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    if arch.x32_bit {
        prog.extend([
            stmt(BPF_LD | BPF_W | BPF_ABS, DATA_NR),
            SockFilter {
                code: BPF_JMP | BPF_JGE | BPF_K,
                jt: 0,
                jf: 2,
                k: X32_SYSCALL_BIT,
            },
            SockFilter {
                code: BPF_JMP | BPF_JEQ | BPF_K,
                jt: 1,
                jf: 0,
                k: u32::MAX,
            },
            stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
        ]);
    }
    let arch_check = [
        stmt(BPF_LD | BPF_W | BPF_ABS, DATA_ARCH),
        SockFilter {
            code: BPF_JMP | BPF_JEQ | BPF_K,
            jt: 1,
            jf: 0,
            k: arch.audit,
        },
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    let n = groups.len();
    for (gi, (action, syscalls)) in groups.into_iter().enumerate() {
        let last = gi + 1 == n;
        let mismatch = if last {
            default.to_seccompiler()
        } else {
            SeccompAction::Errno(SENTINEL_ERRNO)
        };
        let map = syscalls
            .into_iter()
            .map(|(nr, rs)| (nr, rs.unwrap_or_default()))
            .collect();
        let filter = SeccompFilter::new(map, mismatch, action.to_seccompiler(), arch.target)?;
        let bpf: BpfProgram = filter.try_into()?;
        let body: Vec<SockFilter> = bpf
            .iter()
            .map(|i| SockFilter {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect();
        // Each seccompiler program starts with the architecture check,
        // already done above; nothing jumps into it.
        if body.get(..3) != Some(&arch_check[..]) {
            return Err(ProgramError::Layout(
                "seccompiler's program does not start with its architecture check",
            ));
        }
        let start = prog.len();
        prog.extend_from_slice(&body[3..]);
        if !last {
            let next = prog.len();
            for (at, insn) in prog.iter_mut().enumerate().skip(start) {
                if insn.code == BPF_RET | BPF_K && insn.k == SENTINEL {
                    *insn = stmt(BPF_JMP | BPF_JA, (next - at - 1) as u32);
                }
            }
        }
        if prog.len() > BPF_MAXINSNS {
            return Err(ProgramError::TooLong(prog.len()));
        }
    }
    if n == 0 {
        prog.push(stmt(BPF_RET | BPF_K, default.ret()));
    }
    debug_assert!(
        !prog
            .iter()
            .any(|i| i.code == BPF_RET | BPF_K && i.k == SENTINEL)
    );
    if prog.len() > BPF_MAXINSNS {
        return Err(ProgramError::TooLong(prog.len()));
    }
    Ok(prog)
}

/// Reads, parses and compiles the profile at `path` for this process.
/// A missing or unreadable file, bad JSON and every other mistake in the
/// profile are usage errors naming the path.
pub fn load(path: &Path) -> Result<CompiledProfile> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        bad(
            &origin,
            format_args!(
                "cannot read it: {e}; give the path of an OCI seccomp profile (JSON), e.g. \
                 -m seccomp:profile=/etc/containers/seccomp.json"
            ),
        )
    })?;
    let profile = parse(&text, &origin)?;
    let ctx = EvalContext::current()?;
    let mut compiled = compile(&profile, &ctx)?;
    compiled.path = path.to_path_buf();
    Ok(compiled)
}
