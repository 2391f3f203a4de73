//! Reading a profile: the OCI runtime-spec JSON (with Docker's
//! extensions) into a checked [`Profile`]. Every mistake is a usage error
//! that says where it is and how to fix it, so this is where the names a
//! profile may use (actions, architectures, flags, capabilities,
//! comparison operators) are listed.

use anyhow::Result;
use serde::Deserialize;

use super::bad;
use super::types::{Action, ArgCmp, CmpOp, Entry, Gate, Profile};
use crate::sys::seccomp::MAX_ERRNO;

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

/// The comparison operators by their `SCMP_CMP_*` names.
pub(super) const OPS: &[(&str, CmpOp)] = &[
    ("SCMP_CMP_NE", CmpOp::Ne),
    ("SCMP_CMP_LT", CmpOp::Lt),
    ("SCMP_CMP_LE", CmpOp::Le),
    ("SCMP_CMP_EQ", CmpOp::Eq),
    ("SCMP_CMP_GE", CmpOp::Ge),
    ("SCMP_CMP_GT", CmpOp::Gt),
    ("SCMP_CMP_MASKED_EQ", CmpOp::MaskedEq),
];

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
    let raw = read_raw(text, origin)?;
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
    let arch_map = parse_arch_map(origin, raw.arch_map)?;
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
    let entries = raw
        .syscalls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, s)| parse_entry(origin, i, s))
        .collect::<Result<Vec<_>>>()?;
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

/// The JSON object, unchecked; anything but an object, and bad JSON, are
/// usage errors with the line (and column).
fn read_raw(text: &str, origin: &str) -> Result<RawProfile> {
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
    serde_json::from_str(text).map_err(|e| {
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
    })
}

/// Docker's `archMap`, every name checked.
fn parse_arch_map(
    origin: &str,
    arch_map: Option<Vec<RawArchMap>>,
) -> Result<Vec<(String, Vec<String>)>> {
    let mut map = Vec::new();
    for m in arch_map.unwrap_or_default() {
        check_scmp_arch(origin, "archMap", &m.architecture)?;
        let subs = m.sub_architectures.unwrap_or_default();
        for s in &subs {
            check_scmp_arch(origin, "archMap", s)?;
        }
        map.push((m.architecture, subs));
    }
    Ok(map)
}

/// `syscalls[i]`.
fn parse_entry(origin: &str, i: usize, s: RawSyscall) -> Result<Entry> {
    let names = entry_names(origin, i, s.name, s.names)?;
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
    let args = s
        .args
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(j, a)| parse_arg(origin, &what, j, a))
        .collect::<Result<Vec<_>>>()?;
    let includes = parse_gate(origin, &format!("{what}: includes"), s.includes)?;
    let excludes = parse_gate(origin, &format!("{what}: excludes"), s.excludes)?;
    Ok(Entry {
        names,
        action,
        args,
        includes,
        excludes,
    })
}

/// An entry's names: `names`, or Docker's legacy single `name`, not both.
fn entry_names(
    origin: &str,
    i: usize,
    name: Option<String>,
    names: Option<Vec<String>>,
) -> Result<Vec<String>> {
    match (name.filter(|n| !n.is_empty()), names) {
        (Some(_), Some(ns)) if !ns.is_empty() => Err(bad(
            origin,
            format_args!("syscalls[{i}]: both 'name' and 'names' are given; use 'names' only"),
        )),
        (Some(n), _) => Ok(vec![n]),
        (None, Some(ns)) => Ok(ns),
        (None, None) => Ok(Vec::new()),
    }
}

/// `args[j]` of the entry `what`.
fn parse_arg(origin: &str, what: &str, j: usize, a: RawArg) -> Result<ArgCmp> {
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
    Ok(ArgCmp {
        index: a.index as u8,
        op,
        value: a.value,
        value_two: a.value_two.unwrap_or(0),
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
