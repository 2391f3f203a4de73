//! What each option of a rule line does, as auditctl's `setopt` does it
//! with its per-line state (`add`, `del`, `action`, the `_audit_*added`
//! flags, the arch, the rule and key being built) and `handle_request`
//! then sends.
//!
//! Options act in the order given, with auditctl's ordering rules: a list
//! (`-a`, `-A`, `-d`, or `-w` which makes one) before `-F`, `-F arch=`
//! before `-S`, a syscall, watch, exe or file-system type before `-k`.
//! Some options end the line for auditctl (`-t`, `-m`, `-q`, ...: the rest
//! is ignored, with a warning) or end its option loop (`-i`, `-c`, `-s`,
//! `-l`, `-v`, `-D`, `--signal`: options after them are an error). Lines
//! that only configure audit are kept as [`Control`]s. What a line parses
//! into is a [`Parsed`]: the rule it sends, its controls, notes and
//! warnings. The fields of `-F` and `-C` are [`super::fields`]' job, `-S`
//! [`super::syscalls`]', and the `audit_rule_data` being built
//! [`super::kernel`]'s.

use super::getopt::{Opt, describe};
use super::kernel::{NAME_MAX, PATH_MAX};
use super::values::{count, number_u32, perm_bits};
use super::{Control, Host, kernel};
use crate::sys::audit::{self as au, RuleData};

/// "No list yet" in auditctl's `add`/`del`.
pub(super) const UNSET: u32 = 0x80;
/// The list part of `add`/`del` (`AUDIT_FILTER_MASK`).
const LIST_MASK: u32 = 0x07;

/// The rule a line sends.
#[derive(Debug)]
pub(super) enum Sent {
    Add(RuleData),
    Delete(RuleData),
}

/// What one line parses into.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub(super) rule: Option<Sent>,
    pub(super) controls: Vec<Control>,
    pub(super) notes: Vec<String>,
    pub(super) warnings: Vec<String>,
}

/// How far auditctl's option loop got.
pub(super) enum Ran {
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
pub(super) struct LineState<'h> {
    pub(super) host: &'h dyn Host,
    pub(super) add: u32,
    del: u32,
    action: Option<u32>,
    multiple: u32,
    pub(super) exclude: bool,
    pub(super) syscall_added: bool,
    pub(super) perm_added: bool,
    pub(super) exe_added: bool,
    pub(super) filterfs_added: bool,
    pub(super) elf: u32,
    pub(super) rule: RuleData,
    key: Vec<u8>,
    /// auditctl's `retval`: 0 nothing yet, 1 a rule to send, -2 done
    /// without a reply, -3 a deprecated line to skip.
    retval: i32,
    list_requested: bool,
    pub(super) out: Parsed,
}

impl<'h> LineState<'h> {
    pub(super) fn new(host: &'h dyn Host) -> Self {
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
    pub(super) fn on_list(&self, list: u32) -> bool {
        (self.add & (LIST_MASK | UNSET)) == list || (self.del & (LIST_MASK | UNSET)) == list
    }

    /// Whether the line has what a key needs before it: a syscall, a watch
    /// (or a `perm` field), an exe or a file-system type.
    pub(super) fn can_take_key(&self) -> bool {
        self.syscall_added || self.perm_added || self.exe_added || self.filterfs_added
    }

    /// Runs the options in order while auditctl's `retval` is not negative.
    pub(super) fn run(&mut self, opts: &[Opt]) -> Result<Ran, String> {
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
    pub(super) fn returned(mut self) -> Parsed {
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
            Opt::Short(c, _) if "aAdSFCwWkp".contains(*c) => self.rule_option(*c, &arg),
            _ => self.control_option(opt, &arg),
        }
    }

    /// An option that builds the rule (`-a`, `-A`, `-d`, `-S`, `-F`, `-C`,
    /// `-w`, `-W`, `-k`, `-p`); true as for [`Self::option`].
    fn rule_option(&mut self, c: char, arg: &str) -> Result<bool, String> {
        match c {
            'a' | 'A' => {
                if arg.contains("task") && self.syscall_added {
                    return Err("syscall auditing requested for the task list".into());
                }
                return self.list_action(arg, false, c == 'A');
            }
            'd' => return self.list_action(arg, true, false),
            'S' => self.syscall_option(arg)?,
            'F' => self.field_option(arg)?,
            'C' => {
                let flags = self.flags().unwrap_or(UNSET);
                self.compare_pair(arg, flags)?;
            }
            'w' | 'W' => self.watch_option(c == 'W', arg)?,
            'k' => {
                if !self.can_take_key() || (self.add == UNSET && self.del == UNSET) {
                    return Err(
                        "-k needs a watch (-w), a syscall (-S), a path or an exe before it".into(),
                    );
                }
                self.add_key(arg)?;
            }
            'p' => {
                if self.add == UNSET && self.del == UNSET {
                    return Err("-p needs a watch (-w PATH) before it".into());
                }
                self.perms(arg)?;
                self.retval = 1;
            }
            _ => return Err(format!("unknown option -{c}")),
        }
        Ok(false)
    }

    /// An option that is not part of a rule: kept as a [`Control`], after
    /// which auditctl may end its option loop or return; true as for
    /// [`Self::option`].
    fn control_option(&mut self, opt: &Opt, arg: &str) -> Result<bool, String> {
        match opt {
            Opt::Short('h', _) => Err("-h (help) is not a rule".into()),
            Opt::Short('i', _) => self.ends_loop(Control::IgnoreErrors),
            Opt::Short('c', _) => self.ends_loop(Control::ContinueOnError),
            Opt::Short(c @ ('s' | 'l' | 'v'), _) => {
                if *c == 'l' {
                    self.list_requested = true;
                }
                self.ends_loop(Control::Other(format!("-{c}")))
            }
            Opt::Short('D', _) => self.ends_loop(Control::DeleteAll { key: None }),
            Opt::Short('e', _) => self.keep(Control::Enabled(zero_to_two(arg, "-e")?)),
            Opt::Short('f', _) => self.keep(Control::Failure(zero_to_two(arg, "-f")?)),
            Opt::Short('r', _) => self.keep(Control::Rate(count(arg, "-r")?)),
            Opt::Short('b', _) => self.keep(Control::Backlog(count(arg, "-b")?)),
            Opt::Long("backlog_wait_time", _) => {
                self.keep(Control::BacklogWaitTime(count(arg, "--backlog_wait_time")?))
            }
            Opt::Short('t', _) => self.ends_line(Control::Other("-t".into())),
            Opt::Short('m', _) => self.ends_line(Control::Other(format!("-m {arg}"))),
            Opt::Short('R', _) => {
                Err("nested rule files (-R) are not supported, as in auditctl".into())
            }
            Opt::Short('q', _) => {
                if self.syscall_added {
                    return Err("-q (make equivalent) cannot be combined with syscalls".into());
                }
                match arg.split_once(',') {
                    Some((m, s)) if !m.is_empty() && !s.is_empty() && !s.contains(',') => {}
                    _ => return Err(format!("-q takes MOUNT,SUBTREE, not '{arg}'")),
                }
                self.ends_line(Control::Other(format!("-q {arg}")))
            }
            Opt::Long("loginuid-immutable", _) => self.ends_line(Control::LoginuidImmutable),
            Opt::Long("reset-lost", _) => self.ends_line(Control::ResetLost),
            Opt::Long("reset_backlog_wait_time_actual", _) => {
                self.ends_line(Control::ResetBacklogWaitTimeActual)
            }
            Opt::Long("signal", _) => {
                const SIGNALS: [&str; 5] = ["TERM", "HUP", "USR1", "USR2", "CONT"];
                if !SIGNALS.iter().any(|s| s.eq_ignore_ascii_case(arg)) {
                    return Err(format!(
                        "--signal takes TERM, HUP, USR1, USR2 or CONT, not '{arg}'"
                    ));
                }
                self.ends_loop(Control::Other(format!("--signal {arg}")))
            }
            other => Err(format!("unknown option {}", describe(other))),
        }
    }

    /// A control option after which the loop goes on.
    fn keep(&mut self, control: Control) -> Result<bool, String> {
        self.out.controls.push(control);
        Ok(false)
    }

    /// A control option that ends auditctl's option loop (`retval` -2:
    /// done without a reply), so that any option after it is an error.
    fn ends_loop(&mut self, control: Control) -> Result<bool, String> {
        self.out.controls.push(control);
        self.retval = -2;
        Ok(false)
    }

    /// A control option after which `setopt` returns: the rest of the
    /// line is ignored.
    fn ends_line(&mut self, control: Control) -> Result<bool, String> {
        self.out.controls.push(control);
        self.retval = -2;
        Ok(true)
    }

    /// `-F FIELD OP VALUE`, once the line has a list (a key is kept for
    /// the end, as auditctl keeps it).
    fn field_option(&mut self, arg: &str) -> Result<(), String> {
        let Some(flags) = self.flags() else {
            return Err(format!(
                "-F {arg} comes before the list: write -a LIST,ACTION (or -w) first"
            ));
        };
        if let Some(key) = arg.strip_prefix("key=") {
            return self.add_key(key);
        }
        self.field_pair(arg, flags)?;
        match self.rule.fields.last().map(|f| f.field) {
            Some(au::AUDIT_PERM) => self.perm_added = true,
            Some(au::AUDIT_EXE) => self.exe_added = true,
            _ => {}
        }
        Ok(())
    }

    /// `-w PATH`, or `-W PATH` (`delete`): an always,exit rule that watches
    /// PATH.
    fn watch_option(&mut self, delete: bool, path: &str) -> Result<(), String> {
        if delete {
            self.del = au::AUDIT_FILTER_EXIT;
        } else {
            if self.add != UNSET || self.del != UNSET {
                return Err("-w cannot be given with -a, -A or -d".into());
            }
            self.add = au::AUDIT_FILTER_EXIT;
        }
        self.action = Some(au::AUDIT_ALWAYS);
        self.syscall_added = true;
        self.watch(path)?;
        self.retval = 1;
        Ok(())
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
    pub(super) fn finish(mut self) -> Result<Parsed, String> {
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

/// `-e` or `-f` (`opt`): 0, 1 or 2.
fn zero_to_two(arg: &str, opt: &str) -> Result<u32, String> {
    match arg {
        "0" | "1" | "2" => number_u32(arg),
        _ => Err(format!("{opt} takes 0, 1 or 2, not '{arg}'")),
    }
}
