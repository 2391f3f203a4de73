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

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::error::UsageError;
use crate::sys::audit::{self as au, RuleData};

mod fields;
mod getopt;
mod host;
mod kernel;
mod syscalls;
mod tables;
#[cfg(test)]
mod tests;
mod values;

use fields::perm_bits;
use getopt::{Opt, describe, getopt, split_words};
use host::arch_value;
pub use host::{Host, SystemHost};
use kernel::{NAME_MAX, PATH_MAX};
pub use kernel::{kernel_refusal, listing_order};
use values::{count, number_u32};

/// auditctl reads a rule file with a line buffer of this many bytes.
pub const LINE_SIZE: usize = 6144;
/// The most bad lines one error lists.
pub const MAX_ERRORS_SHOWN: usize = 20;
/// "No list yet" in auditctl's `add`/`del`.
const UNSET: u32 = 0x80;
/// The list part of `add`/`del` (`AUDIT_FILTER_MASK`).
const LIST_MASK: u32 = 0x07;

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
    let o = origin.display();
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        let shown = raw.trim_end_matches('\r');
        match parse_line(raw, host) {
            Ok(parsed) => {
                let at = |msg: &str| format!("{o}:{n}: {shown}: {msg}");
                file.warnings.extend(parsed.warnings.iter().map(|w| at(w)));
                file.notes.extend(parsed.notes.iter().map(|w| at(w)));
                for c in &parsed.controls {
                    file.notes
                        .push(format!("{o}:{n}: {shown} {}", c.why_not_applied()));
                    if *c == Control::Failure(2) {
                        file.warnings.push(at(
                            "the file sets the failure mode to panic (-f 2); secperf leaves the \
                             machine's failure mode as it is, and refuses to load rules that \
                             record while it is panic",
                        ));
                    }
                }
                let mut controls = parsed.controls;
                match parsed.rule {
                    Some(Sent::Add(rule)) => file.lines.push(RuleLine {
                        line: n,
                        text: shown.to_string(),
                        rule,
                    }),
                    Some(Sent::Delete(rule)) => {
                        file.notes.push(format!(
                            "{o}:{n}: {shown} {}",
                            Control::Delete(Box::new(rule.clone())).why_not_applied()
                        ));
                        controls.push(Control::Delete(Box::new(rule)));
                    }
                    None => {}
                }
                if !controls.is_empty() {
                    file.controls.push(ControlLine {
                        line: n,
                        text: shown.to_string(),
                        controls,
                    });
                }
            }
            Err(why) => errors.push(format!("{o}:{n}: {shown}: {why}")),
        }
    }
    if !errors.is_empty() {
        let count = errors.len();
        let mut msg = format!(
            "{o}: {count} bad line{} (each as FILE:LINE: TEXT: why; auditctl(8) and \
             audit.rules(7) describe the syntax):",
            plural(count)
        );
        for e in errors.iter().take(MAX_ERRORS_SHOWN) {
            msg.push_str("\n  ");
            msg.push_str(e);
        }
        if count > MAX_ERRORS_SHOWN {
            msg.push_str(&format!("\n  ... and {} more", count - MAX_ERRORS_SHOWN));
        }
        return Err(UsageError::new(msg).into());
    }
    Ok(file)
}

/// The rule a line sends.
#[derive(Debug)]
enum Sent {
    Add(RuleData),
    Delete(RuleData),
}

/// What one line parses into.
#[derive(Debug, Default)]
struct Parsed {
    rule: Option<Sent>,
    controls: Vec<Control>,
    notes: Vec<String>,
    warnings: Vec<String>,
}

/// One line parsed, as auditctl's `setopt` and `handle_request` do it.
fn parse_line(raw: &str, host: &dyn Host) -> Result<Parsed, String> {
    if raw.len() >= LINE_SIZE {
        return Err(format!(
            "longer than auditctl's line buffer ({} bytes; auditctl would split it)",
            LINE_SIZE - 1
        ));
    }
    if let Some(c) = raw.chars().find(|c| c.is_control()) {
        let what = match c {
            '\t' => "a tab".to_string(),
            '\r' => "a carriage return (Windows line end)".to_string(),
            c => format!("the control character {:?}", c),
        };
        return Err(format!(
            "contains {what}; auditctl splits lines on spaces only and would keep it inside a \
             value: use spaces and Unix line ends"
        ));
    }
    let words = split_words(raw);
    if let Some(first @ ("-D" | "-l" | "-s")) = words.first().map(String::as_str) {
        // auditctl checks these by their word count: -D [-k KEY],
        // -l [-i | -k KEY], -s [-i].
        let rest: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        let control = match (first, rest.as_slice()) {
            ("-D", []) => Control::DeleteAll { key: None },
            ("-D", ["-k", key]) => Control::DeleteAll {
                key: Some(key.to_string()),
            },
            ("-D", _) => return Err("-D takes no other option but -k KEY".into()),
            ("-l", [] | ["-i"] | ["-k", _]) | ("-s", [] | ["-i"]) => {
                Control::Other(words.join(" "))
            }
            _ => {
                return Err(format!(
                    "{first} takes no other option here (see auditctl(8))"
                ));
            }
        };
        return Ok(Parsed {
            controls: vec![control],
            ..Parsed::default()
        });
    }
    let (opts, strays) = getopt(&words)?;
    if opts.is_empty() {
        return Err(format!(
            "'{}' is not an auditctl option (a rule line starts with -a, -A, -w, ...)",
            words.first().map_or("", |w| w.as_str())
        ));
    }
    let mut st = LineState::new(host);
    match st.run(&opts)? {
        Ran::Returned => return Ok(st.returned()),
        Ran::StoppedAt(at) => {
            return Err(format!(
                "auditctl stops reading the line after {at} and fails on what follows: put it \
                 on a line of its own"
            ));
        }
        Ran::All => {}
    }
    if let Some(stray) = strays.first() {
        let hint = if stray.starts_with('#') {
            " (comments must be on a line of their own)"
        } else {
            ""
        };
        return Err(format!(
            "'{stray}' is not an option's value (parameter passed without an option){hint}"
        ));
    }
    st.finish()
}

/// How far auditctl's option loop got.
enum Ran {
    /// Every option.
    All,
    /// `setopt` returned right after an option (the rest of the line is
    /// ignored, the key and the rule with it).
    Returned,
    /// The loop ended after this option (a negative `retval`) with options
    /// left: an error.
    StoppedAt(String),
}

/// auditctl's per-line globals (`add`, `del`, `action`, `_audit_*added`,
/// `_audit_elf`, the rule and the key being built).
struct LineState<'h> {
    host: &'h dyn Host,
    add: u32,
    del: u32,
    action: Option<u32>,
    multiple: u32,
    exclude: bool,
    syscall_added: bool,
    perm_added: bool,
    exe_added: bool,
    filterfs_added: bool,
    elf: u32,
    rule: RuleData,
    key: Vec<u8>,
    /// auditctl's `retval`: 0 nothing yet, 1 a rule to send, -2 done
    /// without a reply, -3 a deprecated line to skip.
    retval: i32,
    list_requested: bool,
    out: Parsed,
}

impl<'h> LineState<'h> {
    fn new(host: &'h dyn Host) -> Self {
        LineState {
            host,
            add: UNSET,
            del: UNSET,
            action: None,
            multiple: 0,
            exclude: false,
            syscall_added: false,
            perm_added: false,
            exe_added: false,
            filterfs_added: false,
            elf: 0,
            rule: RuleData::new(0, 0),
            key: Vec::new(),
            retval: 0,
            list_requested: false,
            out: Parsed::default(),
        }
    }

    /// The list of the rule being built: `add`'s, else `del`'s, else none.
    fn flags(&self) -> Option<u32> {
        if self.add != UNSET {
            Some(self.add & LIST_MASK)
        } else if self.del != UNSET {
            Some(self.del & LIST_MASK)
        } else {
            None
        }
    }

    /// Whether `add` or `del` names `list` (`(add & (MASK|UNSET)) == list`).
    fn on_list(&self, list: u32) -> bool {
        (self.add & (LIST_MASK | UNSET)) == list || (self.del & (LIST_MASK | UNSET)) == list
    }

    /// Whether the line has what a key needs before it: a syscall, a watch
    /// (or a `perm` field), an exe or a file-system type.
    fn can_take_key(&self) -> bool {
        self.syscall_added || self.perm_added || self.exe_added || self.filterfs_added
    }

    /// Runs the options in order while auditctl's `retval` is not negative.
    fn run(&mut self, opts: &[Opt]) -> Result<Ran, String> {
        for (i, opt) in opts.iter().enumerate() {
            if self.retval < 0 {
                return Ok(Ran::StoppedAt(describe(&opts[i - 1])));
            }
            if self.option(opt)? {
                if i + 1 < opts.len() {
                    self.out.warnings.push(format!(
                        "auditctl ignores everything after {} on this line",
                        describe(opt)
                    ));
                }
                return Ok(Ran::Returned);
            }
        }
        Ok(Ran::All)
    }

    /// What a line that `setopt` returned from early leaves: its controls
    /// and notes; no key is added and no rule is sent.
    fn returned(mut self) -> Parsed {
        if self.retval != -3 && (self.add != UNSET || self.del != UNSET) {
            self.out.warnings.push(NOT_SENT.into());
        }
        self.out
    }

    /// One option. Returns true when auditctl returns from `setopt` right
    /// after it (ignoring the rest of the line).
    fn option(&mut self, opt: &Opt) -> Result<bool, String> {
        let arg = match opt {
            Opt::Short(_, a) | Opt::Long(_, a) => a.clone().unwrap_or_default(),
        };
        match opt {
            Opt::Short('h', _) => return Err("-h (help) is not a rule".into()),
            Opt::Short('i', _) => {
                self.out.controls.push(Control::IgnoreErrors);
                self.retval = -2;
            }
            Opt::Short('c', _) => {
                self.out.controls.push(Control::ContinueOnError);
                self.retval = -2;
            }
            Opt::Short(c @ ('s' | 'l' | 'v'), _) => {
                self.out.controls.push(Control::Other(format!("-{c}")));
                if *c == 'l' {
                    self.list_requested = true;
                }
                self.retval = -2;
            }
            Opt::Short('t', _) => {
                self.out.controls.push(Control::Other("-t".into()));
                self.retval = -2;
                return Ok(true);
            }
            Opt::Short('e', _) => match arg.as_str() {
                "0" | "1" | "2" => self.out.controls.push(Control::Enabled(number_u32(&arg)?)),
                _ => return Err(format!("-e takes 0, 1 or 2, not '{arg}'")),
            },
            Opt::Short('f', _) => match arg.as_str() {
                "0" | "1" | "2" => self.out.controls.push(Control::Failure(number_u32(&arg)?)),
                _ => return Err(format!("-f takes 0, 1 or 2, not '{arg}'")),
            },
            Opt::Short('r', _) => self.out.controls.push(Control::Rate(count(&arg, "-r")?)),
            Opt::Short('b', _) => self.out.controls.push(Control::Backlog(count(&arg, "-b")?)),
            Opt::Long("backlog_wait_time", _) => self.out.controls.push(Control::BacklogWaitTime(
                count(&arg, "--backlog_wait_time")?,
            )),
            Opt::Short(c @ ('a' | 'A'), _) => {
                if arg.contains("task") && self.syscall_added {
                    return Err("syscall auditing requested for the task list".into());
                }
                if self.list_action(&arg, false, *c == 'A')? {
                    return Ok(true);
                }
            }
            Opt::Short('d', _) => {
                if self.list_action(&arg, true, false)? {
                    return Ok(true);
                }
            }
            Opt::Short('S', _) => self.syscall_option(&arg)?,
            Opt::Short('F', _) => {
                let Some(flags) = self.flags() else {
                    return Err(format!(
                        "-F {arg} comes before the list: write -a LIST,ACTION (or -w) first"
                    ));
                };
                if let Some(key) = arg.strip_prefix("key=") {
                    self.add_key(key)?;
                } else {
                    self.field_pair(&arg, flags)?;
                    match self.rule.fields.last().map(|f| f.field) {
                        Some(au::AUDIT_PERM) => self.perm_added = true,
                        Some(au::AUDIT_EXE) => self.exe_added = true,
                        _ => {}
                    }
                }
            }
            Opt::Short('C', _) => {
                let flags = self.flags().unwrap_or(UNSET);
                self.compare_pair(&arg, flags)?;
            }
            Opt::Short('m', _) => {
                self.out.controls.push(Control::Other(format!("-m {arg}")));
                self.retval = -2;
                return Ok(true);
            }
            Opt::Short('R', _) => {
                return Err("nested rule files (-R) are not supported, as in auditctl".into());
            }
            Opt::Short('D', _) => {
                self.out.controls.push(Control::DeleteAll { key: None });
                self.retval = -2;
            }
            Opt::Short('w', _) => {
                if self.add != UNSET || self.del != UNSET {
                    return Err("-w cannot be given with -a, -A or -d".into());
                }
                self.add = au::AUDIT_FILTER_EXIT;
                self.action = Some(au::AUDIT_ALWAYS);
                self.syscall_added = true;
                self.watch(&arg)?;
                self.retval = 1;
            }
            Opt::Short('W', _) => {
                self.del = au::AUDIT_FILTER_EXIT;
                self.action = Some(au::AUDIT_ALWAYS);
                self.syscall_added = true;
                self.watch(&arg)?;
                self.retval = 1;
            }
            Opt::Short('k', _) => {
                if !self.can_take_key() || (self.add == UNSET && self.del == UNSET) {
                    return Err(
                        "-k needs a watch (-w), a syscall (-S), a path or an exe before it".into(),
                    );
                }
                self.add_key(&arg)?;
            }
            Opt::Short('p', _) => {
                if self.add == UNSET && self.del == UNSET {
                    return Err("-p needs a watch (-w PATH) before it".into());
                }
                self.perms(&arg)?;
                self.retval = 1;
            }
            Opt::Short('q', _) => {
                if self.syscall_added {
                    return Err("-q (make equivalent) cannot be combined with syscalls".into());
                }
                match arg.split_once(',') {
                    Some((m, s)) if !m.is_empty() && !s.is_empty() && !s.contains(',') => {}
                    _ => return Err(format!("-q takes MOUNT,SUBTREE, not '{arg}'")),
                }
                self.out.controls.push(Control::Other(format!("-q {arg}")));
                self.retval = -2;
                return Ok(true);
            }
            Opt::Long("loginuid-immutable", _) => {
                self.out.controls.push(Control::LoginuidImmutable);
                self.retval = -2;
                return Ok(true);
            }
            Opt::Long("reset-lost", _) => {
                self.out.controls.push(Control::ResetLost);
                self.retval = -2;
                return Ok(true);
            }
            Opt::Long("reset_backlog_wait_time_actual", _) => {
                self.out.controls.push(Control::ResetBacklogWaitTimeActual);
                self.retval = -2;
                return Ok(true);
            }
            Opt::Long("signal", _) => {
                const SIGNALS: [&str; 5] = ["TERM", "HUP", "USR1", "USR2", "CONT"];
                if !SIGNALS.iter().any(|s| s.eq_ignore_ascii_case(&arg)) {
                    return Err(format!(
                        "--signal takes TERM, HUP, USR1, USR2 or CONT, not '{arg}'"
                    ));
                }
                self.out
                    .controls
                    .push(Control::Other(format!("--signal {arg}")));
                self.retval = -2;
            }
            other => return Err(format!("unknown option {}", describe(other))),
        }
        Ok(false)
    }

    /// `-a`/`-A` (`delete` false) or `-d` (true) with its list,action
    /// argument: sets the list and action; Ok(true) when the line is to be
    /// skipped (the deprecated action 'possible', as auditctl does).
    fn list_action(&mut self, arg: &str, delete: bool, prepend: bool) -> Result<bool, String> {
        let mut list = if delete { self.del } else { self.add };
        let mut action = self.action;
        match self.rule_setup(arg, &mut list, &mut action) {
            Setup::Ok => {
                if delete {
                    self.del = list;
                } else {
                    self.add = list;
                    if prepend {
                        self.add |= au::AUDIT_FILTER_PREPEND;
                    }
                }
                self.action = action;
                self.retval = 1;
                Ok(false)
            }
            Setup::Deprecated => {
                self.out.notes.push(
                    "skipped: the action 'possible' is deprecated and auditctl skips the line"
                        .into(),
                );
                self.retval = -3;
                Ok(true)
            }
            Setup::Multiple => Err("only one -a, -A or -d per line".into()),
            Setup::Bad => Err(bad_list_action(arg)),
        }
    }

    /// `audit_rule_setup`: `LIST,ACTION` or `ACTION,LIST` into `filter`
    /// and `act`.
    fn rule_setup(&mut self, opt: &str, filter: &mut u32, act: &mut Option<u32>) -> Setup {
        self.multiple += 1;
        if self.multiple != 1 {
            return Setup::Multiple;
        }
        let Some((first, second)) = opt.split_once(',') else {
            return Setup::Bad;
        };
        if second.contains(',') {
            return Setup::Bad;
        }
        match action_of(first) {
            ActionName::Action(a) => *act = Some(a),
            ActionName::Possible => *act = None,
            ActionName::Unknown => match self.filter_of(first) {
                Some(f) => *filter = f,
                None => return Setup::Bad,
            },
        }
        if *filter == UNSET {
            if let Some(f) = self.filter_of(second) {
                *filter = f;
            }
        } else {
            match action_of(second) {
                ActionName::Action(a) => *act = Some(a),
                ActionName::Possible => return Setup::Deprecated,
                ActionName::Unknown => return Setup::Bad,
            }
        }
        if *filter == UNSET || act.is_none() {
            return Setup::Bad;
        }
        Setup::Ok
    }

    /// `lookup_filter` (which also notes the exclude list).
    fn filter_of(&mut self, name: &str) -> Option<u32> {
        let f = match name {
            "exit" => au::AUDIT_FILTER_EXIT,
            "task" => au::AUDIT_FILTER_TASK,
            "user" => au::AUDIT_FILTER_USER,
            "exclude" => {
                self.exclude = true;
                au::AUDIT_FILTER_EXCLUDE
            }
            "filesystem" => au::AUDIT_FILTER_FS,
            "io_uring" => au::AUDIT_FILTER_URING_EXIT,
            _ => return None,
        };
        Some(f)
    }

    /// `-w PATH` / `-W PATH`: `audit_setup_watch_name`.
    fn watch(&mut self, path: &str) -> Result<(), String> {
        if path.len() >= PATH_MAX {
            return Err(format!(
                "the watched path is too long (at most {PATH_MAX} bytes)"
            ));
        }
        if !path.starts_with('/') {
            return Err(format!("the watched path '{path}' must start with '/'"));
        }
        let base = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        if base.len() > NAME_MAX {
            return Err(format!(
                "the last part of the watched path is longer than {NAME_MAX} bytes"
            ));
        }
        if path.contains("..") {
            self.out
                .warnings
                .push("relative path notation (..) is not supported in watches".into());
        }
        if path.contains('*') || path.contains('?') {
            self.out
                .warnings
                .push("wildcards are not supported in watches (matched literally)".into());
        }
        let mut path = path.to_string();
        if path.len() > 2 {
            while path.len() > 1 && path.ends_with('/') {
                path.pop();
            }
        }
        let kind = if self.host.is_dir(&path) {
            au::AUDIT_DIR
        } else {
            au::AUDIT_WATCH
        };
        if !self.rule.fields.is_empty() {
            return Err("-w must come before any -F or -C on its line".into());
        }
        self.rule = kernel::watch_rule(kind, &path);
        self.perm_added = true;
        Ok(())
    }

    /// `-p PERMS`: `audit_setup_perms` and `audit_update_watch_perms`.
    fn perms(&mut self, opt: &str) -> Result<(), String> {
        let val = perm_bits(opt)?;
        if self.rule.fields.is_empty() {
            return Err("-p needs a watch (-w PATH) or a path field before it".into());
        }
        kernel::set_perms(&mut self.rule, val)?;
        self.perm_added = true;
        Ok(())
    }

    /// `-k KEY` and `-F key=KEY`: keys are joined with `\x01`.
    fn add_key(&mut self, key: &str) -> Result<(), String> {
        let extra = usize::from(!self.key.is_empty());
        if key.len() + self.key.len() + extra > au::AUDIT_MAX_KEY_LEN {
            return Err(format!(
                "the key is too long: all keys of a rule together (joined by one byte each) are \
                 at most {} bytes",
                au::AUDIT_MAX_KEY_LEN
            ));
        }
        if !self.key.is_empty() {
            self.key.push(au::AUDIT_KEY_SEPARATOR);
        }
        self.key.extend_from_slice(key.as_bytes());
        Ok(())
    }

    /// After the options: the key, then what `handle_request` sends.
    fn finish(mut self) -> Result<Parsed, String> {
        if !self.key.is_empty() && !self.list_requested {
            let flags = self.flags().unwrap_or(0);
            let key = std::mem::take(&mut self.key);
            // Through audit_rule_fieldpair_data, as auditctl adds it.
            let key = String::from_utf8(key).map_err(|_| "the key is not UTF-8".to_string())?;
            self.field_pair(&format!("key={key}"), flags)?;
        }
        match self.retval {
            0 if self.syscall_added => {
                return Err("-S without a list: write -a always,exit (or another list) too".into());
            }
            r if r > 0 => {
                let (list, delete) = if self.add != UNSET {
                    (self.add, false)
                } else if self.del != UNSET {
                    (self.del, true)
                } else {
                    return Err("nothing to add: a rule needs -a LIST,ACTION or -w PATH".into());
                };
                if (list & LIST_MASK) != au::AUDIT_FILTER_TASK && !self.syscall_added {
                    self.rule.mask = [u32::MAX; au::AUDIT_BITMASK_SIZE];
                }
                self.rule.flags = list;
                self.rule.action = self.action.unwrap_or(au::AUDIT_ALWAYS);
                let rule = std::mem::replace(&mut self.rule, RuleData::new(0, 0));
                self.out.rule = Some(if delete {
                    Sent::Delete(rule)
                } else {
                    Sent::Add(rule)
                });
            }
            _ => {
                if self.add != UNSET || self.del != UNSET {
                    self.out.warnings.push(NOT_SENT.into());
                }
            }
        }
        Ok(self.out)
    }
}

/// Why a line with a rule sends none.
const NOT_SENT: &str = "auditctl sends no rule from this line (an option after the rule, such \
                        as -i, -c or --reset-lost, ends it), so secperf does not add it either; \
                        put that option on a line of its own";

/// `audit_rule_setup`'s outcome.
enum Setup {
    Ok,
    Deprecated,
    Multiple,
    Bad,
}

/// `lookup_action`.
enum ActionName {
    Action(u32),
    Possible,
    Unknown,
}

fn action_of(name: &str) -> ActionName {
    match name {
        "always" => ActionName::Action(au::AUDIT_ALWAYS),
        "never" => ActionName::Action(au::AUDIT_NEVER),
        "possible" => ActionName::Possible,
        _ => ActionName::Unknown,
    }
}

fn bad_list_action(arg: &str) -> String {
    format!(
        "'{arg}' is not LIST,ACTION (lists: exit, task, user, exclude, filesystem, io_uring; \
         actions: always, never)"
    )
}
