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

use std::fmt;
use std::path::Path;

use anyhow::Result;

use crate::error::UsageError;

mod compile;
mod emit;
mod host;
mod parse;
mod types;

#[cfg(test)]
mod tests;

pub use compile::{CompiledProfile, Decision, compile};
pub use host::{EvalContext, NATIVE, NativeArch, arches_of, kernel_version, native_nr};
pub use parse::{CAPS, cap_number, parse};
pub use types::{Action, ArgCmp, CmpOp, Entry, Gate, Profile};

/// The largest errno a profile may give (`errnoRet`).
pub use crate::sys::seccomp::MAX_ERRNO;

/// A usage error about `origin`.
fn bad(origin: &str, msg: impl fmt::Display) -> anyhow::Error {
    UsageError::new(format!("seccomp profile {origin}: {msg}")).into()
}

/// Reads, parses and compiles the profile at `path` for this process.
/// A missing or unreadable file, bad JSON and every other mistake in the
/// profile are usage errors naming the path.
pub fn load(path: &Path) -> Result<CompiledProfile> {
    let origin = path.display().to_string();
    // Through policy::source: `rerun` may stand a stored copy in for it.
    let bytes = crate::policy::source::read(path).map_err(|e| {
        bad(
            &origin,
            format_args!(
                "cannot read it: {e}; give the path of an OCI seccomp profile (JSON), e.g. \
                 -m seccomp:profile=/etc/containers/seccomp.json"
            ),
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        bad(
            &origin,
            format_args!("it is not UTF-8 text ({e}); JSON must be"),
        )
    })?;
    let profile = parse(&text, &origin)?;
    let ctx = EvalContext::current()?;
    let mut compiled = compile(&profile, &ctx)?;
    compiled.path = path.to_path_buf();
    Ok(compiled)
}
