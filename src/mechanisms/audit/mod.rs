//! `audit`: the Linux audit subsystem, switched over the audit netlink
//! socket (NETLINK_AUDIT, as `auditctl` does it), machine-wide; needs root
//! (CAP_AUDIT_CONTROL).
//!
//! The two arms of a pair:
//! - baseline: audit disabled (`enabled=0`) with no rules at all. That is
//!   the reference the comparison needs, so any rules the machine had are
//!   removed for the duration of the arm;
//! - treatment: audit enabled (`enabled=1`) with exactly the variant's
//!   rules (again without the machine's own): `enabled` none,
//!   `unrelated-rule` one `-a always,exit -F arch=b64 -S <syscall>` on a
//!   syscall the workload never makes (pivot_root), `matching-rule` one
//!   `-a always,exit -F arch=b64 -S <the workload's syscalls> -k secperf`.
//!
//! Everything is restored exactly after each arm (by the safety framework,
//! `safety`): the snapshot holds the enabled flag and every rule
//! as the kernel listed it (raw `struct audit_rule_data`, hex); restoring
//! deletes whatever rules are loaded, adds the saved ones back in their
//! order, sets the flag, and then checks that the kernel lists the same
//! rules byte for byte and the same flag, or fails loudly. Nothing else
//! (failure mode, rate and backlog limits, auditd) is touched. If audit is
//! locked (`enabled=2`, `auditctl -e 2`) nothing can change until reboot,
//! and the mechanism is unavailable.
//!
//! The kernel decides whether a task has an audit context when the task is
//! forked (audit_alloc, once audit has ever been enabled since boot), and
//! rules are matched against that context at each syscall exit; secperf
//! starts fresh worker processes after every switch, so every task measured
//! in an arm was born under that arm's configuration. (The kernel's
//! "audit ever enabled" flag stays set until reboot once any arm enabled
//! audit; the baseline therefore keeps the cheap per-syscall check of a
//! disabled audit, as any machine that ever ran auditd does.)
//!
//! With `matching-rule` every operation writes an audit record: to auditd
//! when one runs, else to the kernel log (rate limited), and a full backlog
//! makes tasks wait (backlog_wait_time); that is part of what it measures.
//! It is refused when the failure mode is "panic" (`auditctl -f 2`), where
//! a lost record would panic the kernel.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::{Arm, Availability, Mechanism, Scope, SystemEnv, Treatment, VariantDef};
use crate::sys::audit::{AuditSocket, AuditState, RuleData, from_hex, to_hex};

pub struct Audit;
pub static AUDIT: Audit = Audit;

/// Why nothing can be done while audit is locked.
pub const LOCKED: &str = "audit configuration is locked (enabled=2) until reboot";
/// The key of the matching rule's records (`ausearch -k secperf`).
pub const KEY: &str = "secperf";
/// Syscalls for the unrelated rule, the first the workload does not make.
const UNRELATED: &[&str] = &["pivot_root", "acct", "swapoff"];
/// `failure` mode in which a lost record panics the kernel.
const AUDIT_FAIL_PANIC: u32 = 2;

/// What the journal keeps: enough to put audit back exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Snapshot {
    /// 0 or 1 (2 is never snapshotted: nothing could change).
    enabled: u32,
    /// Each rule's raw `struct audit_rule_data` as listed, hex, in order.
    rules: Vec<String>,
}

impl Snapshot {
    fn from_state(s: &AuditState) -> Self {
        Snapshot {
            enabled: s.enabled,
            rules: s.rules.iter().map(|r| to_hex(r)).collect(),
        }
    }

    fn to_state(&self) -> Result<AuditState> {
        let rules = self
            .rules
            .iter()
            .enumerate()
            .map(|(i, h)| from_hex(h).map_err(|e| anyhow::anyhow!("rule {i}: {e}")))
            .collect::<Result<Vec<_>>>()?;
        Ok(AuditState {
            enabled: self.enabled,
            rules,
        })
    }
}

/// The x86_64 numbers of the syscalls workloads name (`libc::SYS_*`).
#[cfg(target_arch = "x86_64")]
const SYSCALL_NUMBERS: &[(&str, libc::c_long)] = &[
    ("accept4", libc::SYS_accept4),
    ("access", libc::SYS_access),
    ("acct", libc::SYS_acct),
    ("bind", libc::SYS_bind),
    ("clone", libc::SYS_clone),
    ("clone3", libc::SYS_clone3),
    ("close", libc::SYS_close),
    ("connect", libc::SYS_connect),
    ("eventfd", libc::SYS_eventfd),
    ("eventfd2", libc::SYS_eventfd2),
    ("execve", libc::SYS_execve),
    ("exit_group", libc::SYS_exit_group),
    ("faccessat", libc::SYS_faccessat),
    ("faccessat2", libc::SYS_faccessat2),
    ("fork", libc::SYS_fork),
    ("fstat", libc::SYS_fstat),
    ("ftruncate", libc::SYS_ftruncate),
    ("futex", libc::SYS_futex),
    ("getdents64", libc::SYS_getdents64),
    ("getpid", libc::SYS_getpid),
    ("getppid", libc::SYS_getppid),
    ("gettid", libc::SYS_gettid),
    ("listen", libc::SYS_listen),
    ("lseek", libc::SYS_lseek),
    ("lstat", libc::SYS_lstat),
    ("mmap", libc::SYS_mmap),
    ("munmap", libc::SYS_munmap),
    ("newfstatat", libc::SYS_newfstatat),
    ("open", libc::SYS_open),
    ("openat", libc::SYS_openat),
    ("pipe2", libc::SYS_pipe2),
    ("pivot_root", libc::SYS_pivot_root),
    ("pread64", libc::SYS_pread64),
    ("pwrite64", libc::SYS_pwrite64),
    ("read", libc::SYS_read),
    ("recvfrom", libc::SYS_recvfrom),
    ("renameat", libc::SYS_renameat),
    ("sched_yield", libc::SYS_sched_yield),
    ("sendto", libc::SYS_sendto),
    ("setsockopt", libc::SYS_setsockopt),
    ("socket", libc::SYS_socket),
    ("socketpair", libc::SYS_socketpair),
    ("stat", libc::SYS_stat),
    ("statx", libc::SYS_statx),
    ("swapoff", libc::SYS_swapoff),
    ("unlinkat", libc::SYS_unlinkat),
    ("vfork", libc::SYS_vfork),
    ("wait4", libc::SYS_wait4),
    ("write", libc::SYS_write),
];

/// The audit architecture of this build's syscall numbers.
#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: Option<u32> = Some(crate::sys::audit::AUDIT_ARCH_X86_64);
#[cfg(not(target_arch = "x86_64"))]
const NATIVE_ARCH: Option<u32> = None;
#[cfg(not(target_arch = "x86_64"))]
const SYSCALL_NUMBERS: &[(&str, libc::c_long)] = &[];

/// Why rules cannot be written on this architecture.
const NO_ARCH: &str = "audit rules are encoded for x86_64 only in this secperf build";

/// A syscall's number, by the name `man 2` and workloads use.
fn syscall_number(name: &str) -> Result<u32> {
    match SYSCALL_NUMBERS.iter().find(|(n, _)| *n == name) {
        Some((_, nr)) => Ok(*nr as u32),
        None => bail!(
            "audit: no syscall number known for '{name}' on this architecture (known: {}); \
             add it to SYSCALL_NUMBERS in src/mechanisms/audit/mod.rs",
            SYSCALL_NUMBERS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The rules of a treatment variant for a workload making `syscalls`.
pub fn treatment_rules(variant: &str, syscalls: &[&str]) -> Result<Vec<RuleData>> {
    let Some(arch) = NATIVE_ARCH else {
        bail!("{NO_ARCH}");
    };
    Ok(match variant {
        "enabled" => Vec::new(),
        "unrelated-rule" => {
            let Some(name) = UNRELATED.iter().find(|n| !syscalls.contains(n)) else {
                bail!("audit:unrelated-rule: the workload makes every candidate syscall");
            };
            vec![RuleData::always_exit(arch).with_syscall(syscall_number(name)?)]
        }
        "matching-rule" => {
            if syscalls.is_empty() {
                bail!("audit:matching-rule: the workload names no syscalls to match");
            }
            let mut rule = RuleData::always_exit(arch);
            for name in syscalls {
                rule = rule.with_syscall(syscall_number(name)?);
            }
            vec![rule.with_key(KEY)]
        }
        other => bail!("audit has no variant '{other}'"),
    })
}

/// Opens the audit socket and reads the status, refusing a locked audit.
fn open_unlocked() -> Result<(AuditSocket, netlink_packet_audit::StatusMessage)> {
    let sock = AuditSocket::open()?;
    let status = sock.status()?;
    if status.enabled == 2 {
        bail!("{LOCKED}");
    }
    Ok((sock, status))
}

/// Checks that the kernel's state is `want`, byte for byte.
fn verify(sock: &AuditSocket, want: &AuditState, when: &str) -> Result<()> {
    let now = sock.state()?;
    if now == *want {
        return Ok(());
    }
    let same = now
        .rules
        .iter()
        .zip(&want.rules)
        .take_while(|(a, b)| a == b)
        .count();
    bail!(
        "audit: {when}, the kernel reports enabled={} with {} rules, expected enabled={} with \
         {} rules (the first {same} rules agree); check `auditctl -s` and `auditctl -l`",
        now.enabled,
        now.rules.len(),
        want.enabled,
        want.rules.len()
    )
}

impl Mechanism for Audit {
    fn name(&self) -> &'static str {
        "audit"
    }
    fn description(&self) -> &'static str {
        "the Linux audit subsystem, switched over the audit netlink socket (root)"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[
            VariantDef {
                name: "enabled",
                description: "audit on, no rules",
            },
            VariantDef {
                name: "unrelated-rule",
                description: "one always,exit rule on a syscall the workload never makes",
            },
            VariantDef {
                name: "matching-rule",
                description: "an always,exit rule with a key on the workload's own syscall",
            },
        ]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["getppid", "mutex_yield"]
    }

    /// `matching-rule` is left to explicit requests: without auditd every
    /// matching syscall becomes a kernel log record.
    fn survey_variants(&self) -> &'static [&'static str] {
        &["enabled", "unrelated-rule"]
    }

    fn probe(&self) -> Availability {
        if NATIVE_ARCH.is_none() {
            return Availability::Unavailable(NO_ARCH.into());
        }
        if !crate::sys::is_root() {
            return Availability::Unavailable("needs root (CAP_AUDIT_CONTROL)".into());
        }
        let denied = |e: &crate::sys::audit::AuditError| {
            matches!(e.errno, Some(libc::EPERM) | Some(libc::EACCES))
        };
        let sock = match AuditSocket::open() {
            Ok(s) => s,
            Err(e) if e.errno == Some(libc::EPROTONOSUPPORT) => {
                return Availability::Unavailable(
                    "kernel built without audit (CONFIG_AUDIT)".into(),
                );
            }
            Err(e) => return Availability::Unavailable(e.reason),
        };
        match sock.status() {
            Ok(s) if s.enabled == 2 => Availability::Unavailable(LOCKED.into()),
            Ok(_) => Availability::Available,
            Err(e) if denied(&e) => {
                Availability::Unavailable("needs root (CAP_AUDIT_CONTROL)".into())
            }
            Err(e) => Availability::Unavailable(e.reason),
        }
    }

    fn snapshot(&self) -> Result<serde_json::Value> {
        let (sock, _) = open_unlocked()?;
        let state = sock.state()?;
        Ok(serde_json::to_value(Snapshot::from_state(&state))?)
    }

    fn apply_system(&self, t: &Treatment, arm: Arm, env: &SystemEnv) -> Result<()> {
        let (sock, status) = open_unlocked()?;
        let want = match arm {
            Arm::Baseline => AuditState {
                enabled: 0,
                rules: Vec::new(),
            },
            Arm::Treatment => {
                if t.variant == "matching-rule" && status.failure == AUDIT_FAIL_PANIC {
                    bail!(
                        "audit:matching-rule: the audit failure mode is panic (failure=2), so a \
                         record lost under load would panic the kernel; set `auditctl -f 1` \
                         first or measure another variant"
                    );
                }
                let rules = treatment_rules(t.variant, env.workload.syscalls)
                    .with_context(|| format!("audit:{} on {}", t.variant, env.workload.name))?;
                AuditState {
                    enabled: 1,
                    rules: rules.iter().map(RuleData::encode).collect(),
                }
            }
        };
        sock.set_state(&want).with_context(|| {
            format!(
                "audit: setting enabled={} with {} rules",
                want.enabled,
                want.rules.len()
            )
        })?;
        verify(&sock, &want, "after applying")
    }

    fn restore(&self, snapshot: &serde_json::Value) -> Result<()> {
        let snap: Snapshot = serde_json::from_value(snapshot.clone())
            .context("audit: the journalled snapshot is not an audit snapshot")?;
        let want = snap
            .to_state()
            .context("audit: the journalled snapshot has a malformed rule")?;
        let sock = AuditSocket::open()?;
        if sock.status()?.enabled == 2 {
            bail!(
                "audit was locked (enabled=2) after the snapshot was taken; it cannot be restored \
                 until reboot (the snapshot had enabled={} and {} rules)",
                want.enabled,
                want.rules.len()
            );
        }
        sock.set_state(&want).with_context(|| {
            format!(
                "audit: restoring enabled={} with {} rules",
                want.enabled,
                want.rules.len()
            )
        })?;
        verify(&sock, &want, "after restoring")
    }
}

#[cfg(test)]
mod tests;
