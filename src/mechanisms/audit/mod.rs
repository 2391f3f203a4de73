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
//!   `-a always,exit -F arch=b64 -S <the workload's syscalls> -k secperf`,
//!   `rules` (`-m audit:rules=FILE`) the rules of a file in auditctl
//!   syntax, encoded as auditctl encodes them ([`crate::policy::audit_rules`])
//!   and added one by one in file order (`-A` lines go to the front of their
//!   list, as the kernel does it). The file is read and checked when the
//!   treatment is parsed (every bad line is a usage error before anything
//!   runs) and not again, so every arm loads the same rules. Its control
//!   lines (`-D`, `-b`, `-f`, `-e`, ...) are not applied: they are listed
//!   by `describe`. The first time a file is used, its rules are loaded
//!   once with audit disabled (whichever arm comes first), so a rule the
//!   kernel refuses (a watch whose parent directory does not exist, an LSM
//!   label without that LSM, a duplicate) stops the run before anything is
//!   measured, naming FILE:LINE, the line and the kernel's errno (a usage
//!   error: exit code 2), with the machine restored.
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
//! a lost record would panic the kernel; so is a rules file with any
//! `always` rule. The kernel lists the rules of a file list by list, a
//! prepended rule without its prepend flag and `-S all` without the
//! syscall-class bits; the check after applying compares the listing with
//! exactly that ([`crate::sys::audit::listing_after_adding`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::{Arm, Availability, Mechanism, Scope, SystemEnv, Treatment, VariantDef};
use crate::error::UsageError;
use crate::params::ParamDef;
use crate::policy::audit_rules::{self, RuleFile, RuleLine};
use crate::sys::audit::{AuditError, AuditSocket, AuditState, RuleData, from_hex, to_hex};

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

/// Rule files as parsed when their treatment was validated, by path: read
/// once per process, so every arm loads the same rules.
static RULE_FILES: Mutex<BTreeMap<PathBuf, Arc<RuleFile>>> = Mutex::new(BTreeMap::new());
/// The listing of the rules file this process loaded last (until the next
/// restore), to tell whether the kernel dropped a watch on its own.
static LOADED: Mutex<Option<Vec<Vec<u8>>>> = Mutex::new(None);
/// Rule files whose every rule this kernel has accepted in this process.
static CHECKED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// The rules file of a `rules` treatment (None for the other variants); a
/// missing path, or a path with another variant, is a usage error.
pub fn rule_file(t: &Treatment) -> Result<Option<Arc<RuleFile>>> {
    let path = t.params.get("rules").map(String::as_str).unwrap_or("");
    match (t.variant == "rules", path.is_empty()) {
        (true, true) => crate::usage_bail!(
            "mechanism audit: variant rules needs a rules file: -m audit:rules=PATH (a file in \
             auditctl syntax, as in /etc/audit/rules.d/)"
        ),
        (false, false) => crate::usage_bail!(
            "mechanism audit: rules={path} is only for variant rules; write -m audit:rules={path}"
        ),
        (false, true) => Ok(None),
        (true, false) => {
            let path = PathBuf::from(path);
            let mut files = RULE_FILES.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(f) = files.get(&path) {
                return Ok(Some(f.clone()));
            }
            let file = Arc::new(audit_rules::load(&path)?);
            files.insert(path, file.clone());
            Ok(Some(file))
        }
    }
}

/// Refuses a rules file that watches a path inside the scratch
/// directories secperf makes under `scratch_root` and deletes after each
/// half: the kernel would drop such a rule without uncounting it (phantom
/// rules). A usage error naming each line.
pub fn refuse_scratch_watches(t: &Treatment, scratch_root: &std::path::Path) -> Result<()> {
    if t.mechanism.name() != AUDIT.name() {
        return Ok(());
    }
    let Some(file) = rule_file(t)? else {
        return Ok(());
    };
    let bad = file.watches_in_scratch(scratch_root, crate::runner::SCRATCH_PREFIX);
    if !bad.is_empty() {
        crate::usage_bail!("{}", bad.join("\n"));
    }
    Ok(())
}

/// A rule the kernel refused while loading `file`: FILE:LINE, the line,
/// the errno and what it means. A refusal of the rule itself is the
/// user's to fix (a usage error); not being allowed to ask is not.
fn refused(file: &RuleFile, line: &RuleLine, e: AuditError) -> anyhow::Error {
    let at = format!("{}:{}: {}", file.path.display(), line.line, line.text);
    match e.errno {
        Some(errno)
            if !matches!(
                errno,
                libc::EPERM
                    | libc::EACCES
                    | libc::ECONNREFUSED
                    | libc::EAGAIN
                    | libc::EPROTONOSUPPORT
            ) =>
        {
            UsageError::new(format!(
                "{at}: {}; nothing was measured with this file",
                audit_rules::kernel_refusal(&line.rule, errno)
            ))
            .into()
        }
        _ => anyhow::Error::new(e).context(format!("{at}: loading the rule")),
    }
}

/// Deletes every rule, then adds `file`'s one by one in file order,
/// naming the line the kernel refuses.
fn load_rules(sock: &AuditSocket, file: &RuleFile) -> Result<()> {
    sock.replace_rules(&[])
        .context("audit: deleting the loaded rules before loading the file's")?;
    for line in &file.lines {
        sock.add_rule(&line.rule.encode())
            .map_err(|e| refused(file, line, e))?;
    }
    Ok(())
}

/// Refuses a file whose rules record while a lost record panics the kernel.
fn refuse_panic(status_failure: u32, file: &RuleFile) -> Result<()> {
    if status_failure == AUDIT_FAIL_PANIC && file.records() {
        bail!(
            "audit:rules: {} has rules that record (always), and the audit failure mode is panic \
             (failure=2), so a record lost under load would panic the kernel; set `auditctl -f \
             1` first or measure another file",
            file.path.display()
        );
    }
    Ok(())
}

/// The first time a file is used in this process: loads its rules with
/// audit disabled (no records), so a rule the kernel refuses stops the run
/// before anything is measured. Leaves audit disabled with the file's
/// rules; the caller sets its arm's state next.
fn check_once(sock: &AuditSocket, file: &RuleFile) -> Result<()> {
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    if checked.contains(&file.path) {
        return Ok(());
    }
    if sock.status()?.enabled != 0 {
        sock.set_enabled(0)?;
    }
    load_rules(sock, file)?;
    checked.insert(file.path.clone());
    Ok(())
}

/// Checks that the kernel lists exactly `file`'s rules (in its order, as
/// [`RuleFile::expected_listing`]) and audit enabled; names the first line
/// whose rule is listed otherwise.
fn verify_file(sock: &AuditSocket, file: &RuleFile) -> Result<()> {
    let want = AuditState {
        enabled: 1,
        rules: file.expected_listing(),
    };
    let now = sock.state()?;
    if now == want {
        return Ok(());
    }
    let order = audit_rules::listing_order(file);
    let first_bad = now
        .rules
        .iter()
        .zip(&want.rules)
        .position(|(a, b)| a != b)
        .and_then(|i| order.get(i))
        .map(|n| format!("; the first rule listed otherwise is line {n}"))
        .unwrap_or_default();
    bail!(
        "audit: after loading {}, the kernel reports enabled={} with {} rules, expected \
         enabled=1 with {} rules listed as secperf encoded them{first_bad}; check `auditctl -l`",
        file.path.display(),
        now.enabled,
        now.rules.len(),
        want.rules.len()
    )
}

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
    ("dup2", libc::SYS_dup2),
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
    ("prctl", libc::SYS_prctl),
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

/// The most rules `count=` asks for.
const MAX_COUNT: u64 = 1000;

/// [`treatment_rules`] with `count` unrelated rules: the first as always,
/// then copies keyed `secperf-2`, `secperf-3`, ... (the kernel refuses an
/// exact duplicate with EEXIST). Every one is checked at each syscall exit
/// and none matches, which is the cost per rule a sweep of `count` fits.
pub fn treatment_rules_n(variant: &str, syscalls: &[&str], count: usize) -> Result<Vec<RuleData>> {
    let mut rules = treatment_rules(variant, syscalls)?;
    if variant == "unrelated-rule" {
        let first = rules[0].clone();
        for i in 2..=count {
            rules.push(first.clone().with_key(&format!("{KEY}-{i}")));
        }
    }
    Ok(rules)
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

/// Watch rules of `loaded` that the kernel no longer lists (`now`): the
/// kernel dropped them itself, when the directory they go with was
/// deleted, moved or unmounted, and did not uncount them. One warning
/// each.
fn dropped_watches(loaded: &[Vec<u8>], now: &[Vec<u8>]) -> Vec<String> {
    loaded
        .iter()
        .filter(|r| !now.contains(r))
        .filter_map(|r| RuleData::decode(r).ok())
        .filter_map(|r| r.vanishes_with())
        .map(|dir| {
            format!(
                "the kernel dropped an audit watch on its own while it was loaded, as {} was \
                 deleted, moved or unmounted; Linux does not uncount such a rule, so from now \
                 until reboot every syscall pays for audit rules whenever audit is enabled \
                 (phantom rules; `secperf probe --active` checks, docs/findings.md)",
                dir.display()
            )
        })
        .collect()
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
            VariantDef {
                name: "rules",
                description: "your rules file in auditctl syntax (-m audit:rules=PATH)",
            },
        ]
    }
    fn params(&self) -> &'static [ParamDef] {
        &[
            ParamDef {
                name: "rules",
                default: "",
                help: "variant rules: a rules file in auditctl syntax, as in /etc/audit/rules.d/ \
                       (control lines such as -D, -b, -f, -e are listed, not applied)",
            },
            ParamDef {
                name: "count",
                default: "1",
                help: "variant unrelated-rule: how many such rules (1..1000; the second and \
                       later carry keys secperf-2, ... so the kernel takes them as distinct); \
                       sweep it for the cost per rule",
            },
        ]
    }

    fn variant_of_param(&self, key: &str) -> Option<&'static str> {
        (key == "rules").then_some("rules")
    }

    fn validate(&self, t: &Treatment) -> Result<()> {
        let count = match t.params.contains_key("count") {
            true => t.param_in_range("count", 1..=MAX_COUNT)?,
            false => 1,
        };
        if count != 1 && t.variant != "unrelated-rule" {
            crate::usage_bail!(
                "audit:{}: count= applies to the unrelated-rule variant only",
                t.variant
            );
        }
        rule_file(t).map(|_| ())
    }

    fn policy_files(&self, t: &Treatment) -> Vec<(&'static str, String)> {
        match t.params.get("rules") {
            Some(path) if t.variant == "rules" && !path.is_empty() => {
                vec![("rules", path.clone())]
            }
            _ => Vec::new(),
        }
    }

    fn describe(&self, t: &Treatment) -> Result<Vec<String>> {
        let Some(file) = rule_file(t)? else {
            return Ok(Vec::new());
        };
        let mut lines = vec![file.summary()];
        if file.records() {
            lines.push(
                "its always rules write a record for every match: to auditd when it runs, else \
                 to the kernel log (rate limited); that is part of what is measured"
                    .into(),
            );
        }
        lines.extend(file.notes.iter().cloned());
        lines.extend(file.warnings.iter().map(|w| format!("warning: {w}")));
        lines.extend(
            file.temporary_watches()
                .into_iter()
                .map(|w| format!("warning: {w}")),
        );
        Ok(lines)
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
        if let Some(file) = rule_file(t)? {
            refuse_panic(status.failure, &file)?;
            check_once(&sock, &file)?;
            if arm == Arm::Treatment {
                load_rules(&sock, &file)?;
                if sock.status()?.enabled != 1 {
                    sock.set_enabled(1)?;
                }
                verify_file(&sock, &file)?;
                *LOADED.lock().unwrap_or_else(|e| e.into_inner()) = Some(file.expected_listing());
                return Ok(());
            }
        }
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
                // A treatment built without defaults (tests, an older
                // journal) has no count: one rule.
                let count = match t.params.contains_key("count") {
                    true => t.param_in_range("count", 1..=MAX_COUNT)? as usize,
                    false => 1,
                };
                let rules = treatment_rules_n(t.variant, env.workload.syscalls, count)
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
        let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(loaded) = loaded {
            let now = sock.state()?.rules;
            for w in dropped_watches(&loaded, &now) {
                crate::say!("secperf: warning: {w}");
            }
        }
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
