//! The profile as secperf understands it: actions, argument comparisons,
//! Docker's includes/excludes gates and entries, all checked but not yet
//! evaluated for a machine, and the per-syscall [`Rule`] they become.
//! [`super::parse`] builds these from the JSON, [`super::compile`] turns
//! them into rules for this machine and [`super::emit`] into the filter;
//! keeping the model apart lets them all (and the tests) share one
//! vocabulary.

use std::fmt;

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
pub(super) enum Truth {
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

    pub(super) fn truth(&self) -> Truth {
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

/// One rule for one system call: an action, taken when every condition
/// holds (none: always).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rule {
    pub(super) action: Action,
    pub(super) conds: Vec<ArgCmp>,
}

impl Rule {
    pub(super) fn truth(&self) -> Truth {
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
