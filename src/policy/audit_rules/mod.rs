//! Rule files in `auditctl` syntax (`/etc/audit/rules.d/*.rules`, what
//! `auditctl -R FILE` loads), parsed the way auditctl 3.0.9 (Debian 12)
//! parses them and encoded as the `struct audit_rule_data` it would send,
//! byte for byte, so that `secperf overhead -m audit:rules=FILE` measures
//! the rules a machine really runs.
//!
//! What is mirrored from audit-userspace (src/auditctl.c `setopt`,
//! `fileopt`; lib/libaudit.c `audit_rule_fieldpair_data`,
//! `audit_rule_syscallbyname_data`, `audit_add_watch_dir`, ...):
//! - lines are split on spaces only (`\ ` is a space inside a value,
//!   `\\` a backslash); a line whose first word starts with `#` is a
//!   comment; options are read as getopt reads them (`-kKEY`, `-k KEY`,
//!   `--backlog_wait_time=N`, long-option prefixes) and act in the order
//!   given, with auditctl's ordering rules (`-F arch` before `-S`, a list
//!   before `-F`, a syscall, watch or exe before `-k`, ...);
//! - `-S` looks names up in the table of the rule's architecture (the
//!   native one until `-F arch=` says otherwise: `b64`, `b32`, `x86_64`,
//!   `i386`, ... or an `AUDIT_ARCH_*` number), takes numbers and `all`;
//!   a rule on any list but `task` with no syscall gets them all;
//! - `-w PATH` is the exit-list rule auditctl builds: every syscall, the
//!   path (`AUDIT_DIR` when PATH is a directory on this machine, as
//!   auditctl's `stat` decides, else `AUDIT_WATCH`), `perm=rwxa` unless
//!   `-p` says otherwise, then the key;
//! - keys (`-k`, `-F key=`) are joined with `\x01` and added last; user
//!   and group names are looked up on this machine (the [`Host`]);
//! - the checks auditctl makes against a kernel with every audit feature
//!   (as 6.x kernels have): which fields the exclude and filesystem lists
//!   take, `exe`, `sessionid`. The `io_uring` list is auditctl 4.x's
//!   (operations by name from its table, or by number); the rest is 3.0.9,
//!   which differs from 4.x in one way a rule file can see: 4.x adds the
//!   syscalls of a permission class to a `-F perm=` rule that has an arch,
//!   3.0.9 (and secperf) leave the rule as written.
//!
//! Where secperf is stricter than auditctl, each on purpose and named in
//! the error: a number with trailing garbage (`-F uid=10x`, which strtoul
//! reads as 10) or beyond 32 bits (which auditctl truncates), tabs and
//! other control characters (auditctl would keep them inside a value),
//! syscall numbers 2032-2047 (the kernel's syscall-class bits). Lines that
//! only configure the audit subsystem (`-D`, `-b`, `-f`, `-e`, `-r`,
//! `--backlog_wait_time`, `-i`, `-c`, `--loginuid-immutable`, ...) and
//! deletions (`-d`, `-W`) are parsed and kept as [`Control`]s, each with a
//! note saying why it is not applied: secperf changes only the rule list
//! and the enabled flag (and puts both back byte for byte).
//!
//! Field values that only the kernel can judge (an SELinux label without
//! SELinux, a watch whose parent directory is missing) are load-time
//! errors, reported by the `audit` mechanism with the line. Every bad line
//! of a file is reported at once (up to [`MAX_ERRORS_SHOWN`]) as one usage
//! error (exit code 2), each as `FILE:LINE: TEXT: why`.
//!
//! This file holds what a file parses into and the entry points; the work
//! is split by job, in the order a line goes through it:
//! - `host`: what depends on the machine (reading the file, [`Host`]
//!   lookups, the architectures and their syscall tables, `-F arch=`);
//! - `line`: one line to what it adds to the [`RuleFile`], or its
//!   `FILE:LINE: TEXT: why`;
//! - `getopt`: a line's words and options, as getopt_long hands them out;
//! - `setopt`: what each option does, in auditctl's order;
//! - `fields` (`-F`, `-C`) and `syscalls` (`-S`): what the rule holds;
//! - `kernel`: the `audit_rule_data` being built, and the kernel's side
//!   ([`kernel_refusal`], [`listing_order`]);
//! - `values` and `tables`: numbers and permissions as auditctl reads
//!   them, and its name tables.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::sys::audit::{self as au, RuleData};

mod fields;
mod getopt;
mod host;
pub(crate) mod kernel;
mod line;
mod setopt;
mod syscalls;
mod tables;
#[cfg(test)]
mod tests;
mod values;

pub use host::{Host, SystemHost};
pub use kernel::{kernel_refusal, listing_order};

/// auditctl reads a rule file with a line buffer of this many bytes.
pub const LINE_SIZE: usize = 6144;
/// The most bad lines one error lists.
pub const MAX_ERRORS_SHOWN: usize = 20;

// ---------------------------------------------------------------------------
// What a file parses into.
// ---------------------------------------------------------------------------

/// A parsed rule file: the rules to add, in file order, and the lines that
/// are not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFile {
    /// The file (as given), or the origin passed to [`parse`].
    pub path: PathBuf,
    /// The rules, in file order (each added as auditctl would add it).
    pub lines: Vec<RuleLine>,
    /// Lines that configure audit or delete rules: parsed, not applied.
    pub controls: Vec<ControlLine>,
    /// What the user should know: each control line and why it is not
    /// applied, lines auditctl would skip.
    pub notes: Vec<String>,
    /// What auditctl would warn about (a syscall rule without an arch,
    /// `..` in a watched path, `-f 2`).
    pub warnings: Vec<String>,
}

/// One rule of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleLine {
    /// 1-based line number.
    pub line: usize,
    /// The line as written.
    pub text: String,
    /// The rule auditctl would send (flags include
    /// [`au::AUDIT_FILTER_PREPEND`] for `-A`).
    pub rule: RuleData,
}

/// A line that is parsed but not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlLine {
    pub line: usize,
    pub text: String,
    /// What the line asks for (several when it has several options).
    pub controls: Vec<Control>,
}

/// What a non-rule line asks auditctl to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// `-D` (with `-k KEY`: only the rules with that key).
    DeleteAll { key: Option<String> },
    /// `-d ...` or `-W PATH`: delete this rule.
    Delete(Box<RuleData>),
    /// `-e 0|1|2`.
    Enabled(u32),
    /// `-f 0|1|2`.
    Failure(u32),
    /// `-b N`.
    Backlog(u32),
    /// `-r N`.
    Rate(u32),
    /// `--backlog_wait_time N`.
    BacklogWaitTime(u32),
    /// `--reset-lost`.
    ResetLost,
    /// `--reset_backlog_wait_time_actual`.
    ResetBacklogWaitTimeActual,
    /// `-i`: ignore errors in the rest of the file.
    IgnoreErrors,
    /// `-c`: continue after errors, fail at the end.
    ContinueOnError,
    /// `--loginuid-immutable`.
    LoginuidImmutable,
    /// Anything else auditctl does besides rules: `-s`, `-l`, `-v`, `-t`,
    /// `-q`, `-m`, `--signal` (the option as written).
    Other(String),
}

impl Control {
    /// Why secperf does not apply it, in a form that follows the line's
    /// text.
    pub fn why_not_applied(&self) -> String {
        match self {
            Control::DeleteAll { .. } => "(implied: the measured arm starts with no rules)".into(),
            Control::Delete(_) => {
                "(not applied: the measured arm starts with no rules, so there is nothing to \
                 delete)"
                    .into()
            }
            Control::Enabled(2) => "(never applied: it would lock audit until reboot)".into(),
            Control::Enabled(1) => "(implied: the measured arm enables audit)".into(),
            Control::Enabled(_) => "(ignored: the measured arm enables audit)".into(),
            Control::Failure(n) => format!(
                "(not applied: secperf changes only the rules and the enabled flag, so the \
                 failure mode stays as it is; the file asks for {n}, {})",
                match n {
                    0 => "silent",
                    1 => "printk",
                    _ => "panic",
                }
            ),
            Control::Backlog(_) => not_applied("the backlog limit"),
            Control::Rate(_) => not_applied("the rate limit"),
            Control::BacklogWaitTime(_) => not_applied("the backlog wait time"),
            Control::ResetLost | Control::ResetBacklogWaitTimeActual => {
                not_applied("the kernel's counters")
            }
            Control::IgnoreErrors | Control::ContinueOnError => {
                "(not applied: secperf stops at the first rule the kernel refuses and names it)"
                    .into()
            }
            Control::LoginuidImmutable => {
                "(never applied: loginuids would stay immutable until reboot)".into()
            }
            Control::Other(opt) => format!(
                "(not applied: `{opt}` is not a rule; secperf changes only the rules and the \
                 enabled flag)"
            ),
        }
    }
}

fn not_applied(what: &str) -> String {
    format!(
        "(not applied: secperf changes only the rules and the enabled flag, so {what} stays as \
         it is)"
    )
}

impl RuleFile {
    /// Rules that watch a path (`-w`, `-F path=`, `-F dir=`).
    pub fn watches(&self) -> usize {
        self.lines.iter().filter(|l| l.rule.is_watch()).count()
    }

    /// Each watch rule with the directory it goes with
    /// ([`RuleData::vanishes_with`]).
    pub fn watched_dirs(&self) -> Vec<(&RuleLine, PathBuf)> {
        self.lines
            .iter()
            .filter_map(|l| l.rule.vanishes_with().map(|d| (l, d)))
            .collect()
    }

    /// Watch rules whose directory lies in one that secperf makes and
    /// deletes while the rules are loaded: a scratch directory
    /// (named `prefix`*) under `scratch_root`. Each is `FILE:LINE: TEXT:
    /// why`.
    pub fn watches_in_scratch(&self, scratch_root: &Path, prefix: &str) -> Vec<String> {
        self.watched_dirs()
            .into_iter()
            .filter(|(_, dir)| {
                dir.strip_prefix(scratch_root)
                    .ok()
                    .and_then(|rest| rest.components().next())
                    .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with(prefix))
            })
            .map(|(l, dir)| {
                format!(
                    "{}:{}: {}: it watches {}, inside a scratch directory secperf deletes after \
                     each half; Linux would drop the rule then without uncounting it, and every \
                     syscall would pay for audit rules until reboot (phantom rules, \
                     docs/findings.md); watch a path outside --scratch {}",
                    self.path.display(),
                    l.line,
                    l.text,
                    dir.display(),
                    scratch_root.display()
                )
            })
            .collect()
    }

    /// Watch rules whose directory is under a temporary directory, which
    /// anything may delete while the rules are loaded: one warning each.
    pub fn temporary_watches(&self) -> Vec<String> {
        const TEMPORARY: &[&str] = &["/tmp", "/var/tmp", "/dev/shm", "/run/user"];
        let tmpdir = std::env::temp_dir();
        self.watched_dirs()
            .into_iter()
            .filter(|(_, dir)| {
                TEMPORARY.iter().any(|t| dir.starts_with(t)) || dir.starts_with(&tmpdir)
            })
            .map(|(l, dir)| {
                format!(
                    "line {}: the watch goes with {}, a temporary directory: if it is deleted, \
                     moved or unmounted while the rule is loaded, Linux drops the rule without \
                     uncounting it and every syscall pays for audit rules until reboot (phantom \
                     rules, docs/findings.md)",
                    l.line,
                    dir.display()
                )
            })
            .collect()
    }

    /// Rules on the syscall-exit list that watch no path.
    pub fn syscall_rules(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| l.rule.list() == au::AUDIT_FILTER_EXIT && !l.rule.is_watch())
            .count()
    }

    /// Whether any rule records (`always`): every match becomes a record.
    pub fn records(&self) -> bool {
        self.lines.iter().any(|l| l.rule.action == au::AUDIT_ALWAYS)
    }

    /// "FILE: N rules (M syscall rules, W watches[, O on other lists]),
    /// K control lines not applied".
    pub fn summary(&self) -> String {
        let n = self.lines.len();
        let (m, w) = (self.syscall_rules(), self.watches());
        let other = n - m - w;
        let k = self.controls.len();
        format!(
            "{}: {n} rule{} ({m} syscall rule{}, {w} watch{}{}), {k} control line{} not applied",
            self.path.display(),
            plural(n),
            plural(m),
            if w == 1 { "" } else { "es" },
            if other > 0 {
                format!(", {other} on other lists")
            } else {
                String::new()
            },
            plural(k),
        )
    }

    /// The rules as the kernel lists them once added in file order (see
    /// [`au::listing_after_adding`]).
    pub fn expected_listing(&self) -> Vec<Vec<u8>> {
        let rules: Vec<RuleData> = self.lines.iter().map(|l| l.rule.clone()).collect();
        au::listing_after_adding(&rules)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

// ---------------------------------------------------------------------------
// Reading and parsing.
// ---------------------------------------------------------------------------

/// Reads and parses a rule file, looking names and paths up on this
/// machine. A missing or unreadable file, and every bad line, is a usage
/// error (exit code 2).
pub fn load(path: &Path) -> Result<RuleFile> {
    let text = host::read_rules_text(path)?;
    parse_with(&text, path, &SystemHost)
}

/// Parses rule-file text, looking names and paths up on this machine
/// ([`SystemHost`]); `origin` names the file in messages.
pub fn parse(text: &str, origin: &str) -> Result<RuleFile> {
    parse_with(text, Path::new(origin), &SystemHost)
}

/// Parses rule-file text with `host` answering what auditctl would look up
/// on the machine. Every line is parsed; all bad lines are reported in one
/// usage error.
pub fn parse_with(text: &str, origin: &Path, host: &dyn Host) -> Result<RuleFile> {
    let mut file = RuleFile {
        path: origin.to_path_buf(),
        lines: Vec::new(),
        controls: Vec::new(),
        notes: Vec::new(),
        warnings: Vec::new(),
    };
    let mut errors = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        if let Err(e) = line::add_line(&mut file, i + 1, raw, host) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return Err(line::bad_lines(origin, &errors).into());
    }
    Ok(file)
}
