//! Emitting the filter: one seccompiler program per action, most
//! restrictive first, chained into one classic-BPF program behind a
//! single architecture check (see the module header of
//! [`super`] for the layout and why). This is the only part that calls
//! seccompiler (host only names its target architecture) and writes
//! instructions.

use std::collections::BTreeMap;

use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule,
};

use super::host::NativeArch;
use super::types::{Action, ArgCmp, CmpOp, Rule};
use crate::sys::bpf::{
    BPF_ABS, BPF_JA, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_MAXINSNS, BPF_RET, BPF_W,
    SockFilter, stmt,
};
use crate::sys::seccomp::{DATA_ARCH, DATA_NR, X32_SYSCALL_BIT};

/// The mismatch value of every program but the last: rewritten into a
/// jump to the next program. An ERRNO whose data no profile can produce
/// (errno values stop at [`MAX_ERRNO`](crate::sys::seccomp::MAX_ERRNO)).
const SENTINEL_ERRNO: u32 = 0xfffe;
const SENTINEL: u32 = libc::SECCOMP_RET_ERRNO | SENTINEL_ERRNO;

impl Action {
    /// The action as seccompiler spells it.
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

impl ArgCmp {
    /// The condition as seccompiler spells it.
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

/// Why the filter could not be built.
#[derive(Debug)]
pub(super) enum ProgramError {
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

/// Action -> native number -> its conditional rules; None: number-only
/// (the call gets the action whatever its arguments).
type Groups = BTreeMap<Action, BTreeMap<i64, Option<Vec<SeccompRule>>>>;

/// The filter: architecture check, then one seccompiler program per
/// action, most restrictive first, chained by rewriting each program's
/// sentinel mismatch into a jump to the next one.
pub(super) fn build_program(
    arch: &NativeArch,
    rules: &BTreeMap<u32, Vec<Rule>>,
    default: Action,
) -> Result<Vec<SockFilter>, ProgramError> {
    let groups = group_rules(rules)?;
    let mut prog = arch_check(arch).to_vec();
    if arch.x32_bit {
        prog.extend(x32_guard());
    }
    let n = groups.len();
    for (gi, (action, syscalls)) in groups.into_iter().enumerate() {
        let last = gi + 1 == n;
        let mismatch = if last {
            default.to_seccompiler()
        } else {
            SeccompAction::Errno(SENTINEL_ERRNO)
        };
        let start = prog.len();
        prog.extend(action_program(arch, action, syscalls, mismatch)?);
        if !last {
            jump_to_end(&mut prog, start);
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

/// The rules grouped by action, as seccompiler takes them.
fn group_rules(rules: &BTreeMap<u32, Vec<Rule>>) -> Result<Groups, ProgramError> {
    let mut groups = Groups::new();
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
    Ok(groups)
}

/// `ld arch; jeq NATIVE ? next : ret KILL_PROCESS`, as seccompiler starts
/// each of its programs.
fn arch_check(arch: &NativeArch) -> [SockFilter; 3] {
    [
        stmt(BPF_LD | BPF_W | BPF_ABS, DATA_ARCH),
        SockFilter {
            code: BPF_JMP | BPF_JEQ | BPF_K,
            jt: 1,
            jf: 0,
            k: arch.audit,
        },
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
    ]
}

/// x32 calls share x86_64's audit architecture: kill numbers with the x32
/// bit, except -1 (which the kernel answers with ENOSYS).
fn x32_guard() -> [SockFilter; 4] {
    [
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
    ]
}

/// seccompiler's program for the calls that get `action`, returning
/// `mismatch` for the others, without its architecture check (done once
/// in front of all programs; nothing jumps into it).
fn action_program(
    arch: &NativeArch,
    action: Action,
    syscalls: BTreeMap<i64, Option<Vec<SeccompRule>>>,
    mismatch: SeccompAction,
) -> Result<Vec<SockFilter>, ProgramError> {
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
    if body.get(..3) != Some(&arch_check(arch)[..]) {
        return Err(ProgramError::Layout(
            "seccompiler's program does not start with its architecture check",
        ));
    }
    Ok(body[3..].to_vec())
}

/// Rewrites the sentinel returns of the program from `start` to the end
/// of `prog` into jumps to the instruction that will follow it.
fn jump_to_end(prog: &mut [SockFilter], start: usize) {
    let next = prog.len();
    for (at, insn) in prog.iter_mut().enumerate().skip(start) {
        if insn.code == BPF_RET | BPF_K && insn.k == SENTINEL {
            *insn = stmt(BPF_JMP | BPF_JA, (next - at - 1) as u32);
        }
    }
}
