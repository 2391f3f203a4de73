//! `seccomp`: the cost of seccomp-BPF filters on every system call of a
//! task, as a container runtime or a systemd `SystemCallFilter=` imposes.
//!
//! In each task, after the workload prepared: `prctl(PR_SET_NO_NEW_PRIVS)`
//! (so no privilege is needed), then `filters=N` identical filters are
//! installed with `seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog)`; the kernel
//! stacks them and runs every one on every syscall of the task.
//!
//! Each filter first checks `seccomp_data.arch` (anything but the native
//! architecture is killed), loads the syscall number and compares it with
//! a deny list of administrative syscalls no workload makes (`reboot`,
//! `kexec_load`, `init_module`, ..., then numbers no kernel defines), each
//! match returning `EPERM`: `insns=K` sets the filter's length, so K is
//! roughly the instructions one unmatched syscall executes. Two variants:
//!
//! - `allow`: decides on the number only. Since Linux 5.11 the kernel
//!   emulates such a filter once per syscall number when it is attached
//!   (`seccomp_cache_prepare`) and marks every number whose outcome is a
//!   constant ALLOW in a bitmap; those syscalls then skip the filters
//!   entirely. This is the cost of a typical number-only allow list: the
//!   entry-path check of the bitmap.
//! - `args`: also loads `args[0]` (low 32 bits) and branches on it (both
//!   branches ALLOW). A filter that reads an argument cannot be proven
//!   constant, so the cache is empty and every filter runs on every
//!   syscall: the cost of argument-inspecting profiles.
//! - `profile` (`-m seccomp:profile=PATH`): the user's OCI seccomp profile
//!   (Docker, Podman, containerd, Kubernetes), compiled by
//!   [`crate::policy::oci_seccomp`] into one filter as runc would install
//!   it, with `filters=N` copies stacked. The profile is loaded and
//!   compiled when the treatment is parsed (every mistake in it is a
//!   usage error before anything runs), kept in a per-process cache that
//!   forked tasks inherit, and checked against the workload: a profile
//!   that denies one of the workload's calls, or one the task itself makes
//!   once the filter is installed ([`HARNESS_SYSCALLS`]), is refused.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{Context, Result};

use super::worker_util::bpf::{BuildError, Program, SockFilter, SockFprog, Target, fprog};
use super::worker_util::set_no_new_privs;
use super::{Availability, Mechanism, Scope, Treatment, VariantDef, WorkerEnv};
use crate::error::UsageError;
use crate::model::Params;
use crate::params::ParamDef;
use crate::policy::oci_seccomp::{self, CompiledProfile, Decision};
use crate::sys::SysError;
use crate::sys::seccomp::{DATA_ARCH, DATA_NR, data_arg_low};
use crate::workloads::WorkloadDef;

pub struct Seccomp;
pub static SECCOMP: Seccomp = Seccomp;

pub use crate::sys::audit::{AUDIT_ARCH_NATIVE, AUDIT_ARCH_X86_64};

/// The value `args[0]` is compared with in the `args` variant: any value,
/// since both outcomes allow; this one is unlikely to be a real argument.
const ARG_PROBE: u32 = 0x5ec0_ffee;

/// The kernel's limit on all filters of a task together: each filter
/// counts its length plus 4 (`MAX_INSNS_PER_PATH` in kernel/seccomp.c).
pub const MAX_INSNS_PER_PATH: usize = 32768;

/// Conditional jumps reach at most 255 instructions ahead, so the deny
/// comparisons come in chunks, each followed by its own `RET EPERM`.
const CHUNK: usize = 255;

/// First syscall number the padding uses once the deny list is exhausted:
/// far above every syscall table, so never a real call.
const SYNTHETIC_NR_BASE: u32 = 0x1000;

/// Administrative syscalls no workload (and no task of the runner) makes,
/// the kind a container profile denies. They are compared in this order.
const DENY_LIST: &[libc::c_long] = &[
    libc::SYS_delete_module,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_quotactl,
    libc::SYS_vhangup,
    libc::SYS_syslog,
    libc::SYS_open_by_handle_at,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_ptrace,
    libc::SYS_process_vm_writev,
    libc::SYS_perf_event_open,
    libc::SYS_bpf,
    libc::SYS_userfaultfd,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fspick,
];

/// Which filter to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// Decides on the syscall number only (cacheable).
    Allow,
    /// Also branches on `args[0]` (never cacheable).
    Args,
}

impl FilterKind {
    fn of_variant(variant: &str) -> FilterKind {
        if variant == "args" {
            FilterKind::Args
        } else {
            FilterKind::Allow
        }
    }

    /// Instructions of the filter without deny comparisons.
    pub fn minimal_len(self) -> usize {
        // Arch check (3) + number load (1) + tail.
        4 + match self {
            FilterKind::Allow => 1,
            FilterKind::Args => 4,
        }
    }
}

/// The syscall number of the `i`-th deny comparison.
fn deny_nr(i: usize) -> u32 {
    match DENY_LIST.get(i) {
        Some(&nr) => nr as u32,
        None => SYNTHETIC_NR_BASE + (i - DENY_LIST.len()) as u32,
    }
}

/// How many deny comparisons fit in `budget` instructions, counting the
/// `JA` + `RET` that close each chunk.
fn comparisons_for(budget: usize) -> usize {
    let cost = |n: usize| n + 2 * n.div_ceil(CHUNK);
    let mut n = 0;
    while cost(n + 1) <= budget {
        n += 1;
    }
    n
}

/// The filter: about `insns` instructions long (never shorter than
/// [`FilterKind::minimal_len`]), for the architecture `arch`.
pub fn build_filter(
    kind: FilterKind,
    arch: u32,
    insns: usize,
) -> Result<Vec<SockFilter>, BuildError> {
    let mut p = Program::new();
    let arch_ok = p.label();
    p.load_abs(DATA_ARCH);
    p.jeq(arch, Target::To(arch_ok), Target::Next);
    p.ret(libc::SECCOMP_RET_KILL_PROCESS);
    p.bind(arch_ok);
    p.load_abs(DATA_NR);
    let n = comparisons_for(insns.saturating_sub(kind.minimal_len()));
    let mut i = 0;
    while i < n {
        let chunk = (n - i).min(CHUNK);
        let deny = p.label();
        let after = p.label();
        for j in i..i + chunk {
            p.jeq(deny_nr(j), Target::To(deny), Target::Next);
        }
        p.ja(after);
        p.bind(deny);
        p.ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        p.bind(after);
        i += chunk;
    }
    match kind {
        FilterKind::Allow => p.ret(libc::SECCOMP_RET_ALLOW),
        FilterKind::Args => {
            let other = p.label();
            p.load_abs(data_arg_low(0));
            p.jeq(ARG_PROBE, Target::To(other), Target::Next);
            p.ret(libc::SECCOMP_RET_ALLOW);
            p.bind(other);
            p.ret(libc::SECCOMP_RET_ALLOW);
        }
    }
    p.assemble()
}

/// Installs one filter on the calling thread (no TSYNC: other threads of
/// the process are unaffected). Needs no_new_privs or CAP_SYS_ADMIN.
pub fn install(prog: &[SockFilter]) -> Result<(), SysError> {
    // fp points at `prog`, which outlives the call.
    let fp: SockFprog = fprog(prog);
    crate::sys::calls::seccomp_set_mode_filter(&fp)
}

/// System calls a task makes after its filter is installed, whatever the
/// workload, with why: found by tracing tasks of both modes (`strace -f`
/// on this module's tests: after `seccomp(2)` a process task makes the
/// workload's calls, `futex`, the workload's clean-up `fcntl` + `close`
/// and `exit_group`; a thread task also `sigaltstack`, `munmap`,
/// `rt_sigprocmask`, `madvise` and `exit` as the thread ends) and checked
/// by measuring workloads in both modes under default-KILL profiles that
/// allow only these and the workload's own calls. A profile denying one
/// of them is refused: in thread mode a killed task thread would leave
/// the measurement waiting for it, and a KILL_PROCESS would kill secperf.
pub const HARNESS_SYSCALLS: &[(&str, &str)] = &[
    (
        "prctl",
        "to check its parent-death signal after the mechanism (process tasks)",
    ),
    ("futex", "to wait for the common start"),
    ("close", "to close the workload's descriptors when it ends"),
    ("exit_group", "to exit (process tasks)"),
    ("exit", "to end (thread tasks)"),
    ("munmap", "to free its signal stack as a thread task ends"),
    ("madvise", "to release its stack as a thread task ends"),
    (
        "sigaltstack",
        "to remove its signal stack as a thread task ends",
    ),
    ("rt_sigprocmask", "to block signals as a thread task ends"),
    (
        "fcntl",
        "to check a descriptor before closing it, in debug builds",
    ),
];

/// Variant `profile`'s compiled profiles by path: compiled once per
/// process, when the treatment is validated in the parent; forked tasks
/// inherit the entries. The lock is only held to look up or insert, never
/// while compiling, and only tried: a forked child whose parent had it
/// held (another thread inserting at the instant of the fork) compiles
/// afresh instead of waiting on a lock no one will release.
static PROFILES: OnceLock<Mutex<HashMap<PathBuf, Arc<CompiledProfile>>>> = OnceLock::new();

/// The compiled profile at `path`, from the cache or loaded now.
pub fn compiled_profile(path: &Path) -> Result<Arc<CompiledProfile>> {
    let cache = PROFILES.get_or_init(Default::default);
    if let Some(p) = cache.try_lock().ok().and_then(|c| c.get(path).cloned()) {
        return Ok(p);
    }
    let p = Arc::new(oci_seccomp::load(path)?);
    if let Ok(mut c) = cache.try_lock() {
        c.entry(path.to_path_buf()).or_insert_with(|| p.clone());
    }
    Ok(p)
}

/// The profile of a `profile` treatment (None for the other variants).
pub fn profile_of(t: &Treatment) -> Result<Option<Arc<CompiledProfile>>> {
    let path = t.params.get("profile").map(String::as_str).unwrap_or("");
    match (t.variant == "profile", path.is_empty()) {
        (true, true) => Err(UsageError::new(
            "mechanism seccomp: variant profile needs the profile's path: \
             -m seccomp:profile=/path/to/profile.json",
        )
        .into()),
        (true, false) => compiled_profile(Path::new(path)).map(Some),
        (false, false) => Err(UsageError::new(format!(
            "mechanism seccomp: profile={path} is only for variant profile; write \
             -m seccomp:profile={path}"
        ))
        .into()),
        (false, true) => Ok(None),
    }
}

/// The filter a treatment asks for, with its count; parameters out of
/// range and bad profiles are usage errors.
pub fn plan(t: &Treatment) -> Result<(Vec<SockFilter>, u64)> {
    let Some(arch) = AUDIT_ARCH_NATIVE else {
        anyhow::bail!("seccomp filters are only built for x86_64 and aarch64");
    };
    let filters = t.param_in_range("filters", 1..=1024)?;
    let prog = match profile_of(t)? {
        Some(profile) => {
            if t.params.get("insns").is_some_and(|v| v != INSNS_DEFAULT) {
                crate::usage_bail!(
                    "mechanism seccomp: insns= pads the synthetic filters; a profile's filter is \
                     as long as the profile makes it ({} instructions): remove insns",
                    profile.instructions()
                );
            }
            profile.program.clone()
        }
        None => {
            let insns =
                t.param_in_range("insns", 1..=super::worker_util::bpf::BPF_MAXINSNS as u64)?;
            let kind = FilterKind::of_variant(t.variant);
            build_filter(kind, arch, insns as usize).context("building the seccomp filter")?
        }
    };
    let total = filters as usize * (prog.len() + 4);
    if total > MAX_INSNS_PER_PATH {
        return Err(UsageError::new(format!(
            "mechanism seccomp: filters={filters} x ({} instructions + 4) = {total} exceeds the \
             kernel's {MAX_INSNS_PER_PATH} per task; lower filters{}",
            prog.len(),
            if t.variant == "profile" {
                ""
            } else {
                " or insns"
            }
        ))
        .into());
    }
    Ok((prog, filters))
}

/// The default of `insns`.
const INSNS_DEFAULT: &str = "8";

impl Mechanism for Seccomp {
    fn name(&self) -> &'static str {
        "seccomp"
    }
    fn description(&self) -> &'static str {
        "seccomp-BPF filters installed in each task (no_new_privs, unprivileged)"
    }
    fn scope(&self) -> Scope {
        Scope::Worker
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[
            VariantDef {
                name: "allow",
                description: "allow-all on the syscall number only (the kernel's constant-action cache can skip it)",
            },
            VariantDef {
                name: "args",
                description: "inspects syscall arguments, so the action cache cannot skip it",
            },
            VariantDef {
                name: "profile",
                description: "your OCI seccomp profile (Docker/Podman/containerd/Kubernetes format), compiled to one filter: seccomp:profile=PATH",
            },
        ]
    }
    fn params(&self) -> &'static [ParamDef] {
        &[
            ParamDef {
                name: "filters",
                default: "1",
                help: "identical filters stacked in each task (each runs on every syscall it is not cached for)",
            },
            ParamDef {
                name: "insns",
                default: INSNS_DEFAULT,
                help: "instructions per filter, padded with deny-list comparisons (minimum 5 for allow, 8 for args; at most 4096; not for profile)",
            },
            ParamDef {
                name: "profile",
                default: "",
                help: "path of an OCI seccomp profile (JSON) for variant profile: seccomp:profile=PATH",
            },
        ]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["getppid", "eventfd"]
    }
    fn survey_variants(&self) -> &'static [&'static str] {
        &["", "args", "args,filters=4"]
    }
    fn probe(&self) -> Availability {
        if AUDIT_ARCH_NATIVE.is_none() {
            return Availability::Unavailable(
                "seccomp filters are only built for x86_64 and aarch64".into(),
            );
        }
        if std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
            .is_ok_and(|a| a.split_whitespace().any(|x| x == "allow"))
        {
            return Availability::Available;
        }
        match crate::sys::query::seccomp_mode() {
            Ok(_) => Availability::Available,
            Err(e) if e.errno == libc::EINVAL => {
                Availability::Unavailable("kernel built without seccomp (CONFIG_SECCOMP)".into())
            }
            Err(e) => Availability::Unavailable(format!("unavailable: {e}")),
        }
    }

    fn variant_of_param(&self, key: &str) -> Option<&'static str> {
        (key == "profile").then_some("profile")
    }

    fn validate(&self, t: &Treatment) -> Result<()> {
        plan(t).map(|_| ())
    }

    fn policy_files(&self, t: &Treatment) -> Vec<(&'static str, String)> {
        match t.params.get("profile") {
            Some(path) if t.variant == "profile" && !path.is_empty() => {
                vec![("profile", path.clone())]
            }
            _ => Vec::new(),
        }
    }

    fn describe(&self, t: &Treatment) -> Result<Vec<String>> {
        let Some(p) = profile_of(t)? else {
            return Ok(Vec::new());
        };
        Ok(std::iter::once(p.summary())
            .chain(p.notes.iter().cloned())
            .collect())
    }

    fn check_workload(
        &self,
        t: &Treatment,
        workload: &WorkloadDef,
        _workload_params: &Params,
    ) -> Result<()> {
        // For `command` these are the calls that start each run (fork,
        // execve, wait4); the program's own calls are unknown until it runs,
        // and a denial there stops the measurement with its exit status.
        let Some(p) = profile_of(t)? else {
            return Ok(());
        };
        let file = p.path.display();
        for name in workload.syscalls {
            if let Decision::Deny(action) = p.decision(name) {
                crate::usage_bail!(
                    "seccomp profile {file} denies {name} ({action}), which workload {} makes on \
                     every operation; allow it in the profile or choose another workload",
                    workload.name
                );
            }
        }
        for (name, why) in HARNESS_SYSCALLS {
            if let Decision::Deny(action) = p.decision(name) {
                crate::usage_bail!(
                    "seccomp profile {file} denies {name} ({action}), which secperf's task makes \
                     after the filter is installed ({why}); allow it in the profile"
                );
            }
        }
        Ok(())
    }

    fn apply_in_worker(&self, t: &Treatment, _env: &WorkerEnv) -> Result<()> {
        let (prog, filters) = plan(t)?;
        set_no_new_privs()?;
        for i in 0..filters {
            install(&prog)
                .with_context(|| format!("seccomp: installing filter {} of {filters}", i + 1))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::worker_util::bpf::{
        BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W, run,
    };
    use crate::mechanisms::worker_util::testing::{in_thread, measure_under};
    use crate::mechanisms::worker_util::{status_field, thread_status};
    use crate::model::Mode;

    /// A `struct seccomp_data` for syscall `nr` with `args[0] = arg0`.
    fn data(arch: u32, nr: u32, arg0: u64) -> [u8; 64] {
        let mut d = [0u8; 64];
        d[0..4].copy_from_slice(&nr.to_ne_bytes());
        d[4..8].copy_from_slice(&arch.to_ne_bytes());
        d[16..24].copy_from_slice(&arg0.to_ne_bytes());
        d
    }

    use crate::sys::bpf_emulate::const_allow;

    fn native() -> u32 {
        AUDIT_ARCH_NATIVE.unwrap()
    }

    #[test]
    fn constants_match_the_uapi() {
        assert_eq!(BPF_LD | BPF_W | BPF_ABS, 0x20);
        assert_eq!(BPF_JMP | BPF_JEQ | BPF_K, 0x15);
        assert_eq!(BPF_RET | BPF_K, 0x06);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(AUDIT_ARCH_NATIVE, Some(0xc000003e));
    }

    #[test]
    fn filters_behave_and_have_the_requested_length() {
        let getppid = libc::SYS_getppid as u32;
        let denied = libc::SYS_delete_module as u32;
        for kind in [FilterKind::Allow, FilterKind::Args] {
            for insns in [1, 5, 8, 9, 16, 100, 258, 259, 600, 4096] {
                let p = build_filter(kind, native(), insns).unwrap();
                let min = kind.minimal_len();
                assert!(p.len() <= insns.max(min), "{kind:?} {insns}: {}", p.len());
                assert!(
                    p.len() + 2 >= insns.max(min),
                    "{kind:?} {insns}: {}",
                    p.len()
                );
                // First instructions: the architecture check.
                assert_eq!((p[0].code, p[0].k), (0x20, DATA_ARCH));
                assert_eq!((p[1].code, p[1].k), (0x15, native()));
                assert_eq!(
                    p[2],
                    super::super::worker_util::bpf::stmt(0x06, libc::SECCOMP_RET_KILL_PROCESS)
                );
                let allow = Some(libc::SECCOMP_RET_ALLOW);
                for arg in [0, u64::from(ARG_PROBE), u64::MAX] {
                    assert_eq!(run(&p, &data(native(), getppid, arg)), allow);
                }
                assert_eq!(
                    run(&p, &data(AUDIT_ARCH_X86_64 ^ 0x1, getppid, 0)),
                    Some(libc::SECCOMP_RET_KILL_PROCESS)
                );
                let has_deny = insns >= min + 3;
                assert_eq!(
                    run(&p, &data(native(), denied, 0)),
                    if has_deny {
                        Some(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32)
                    } else {
                        allow
                    },
                    "{kind:?} {insns}"
                );
                // The cache: number-only filters are constant ALLOW for
                // every real syscall outside the deny list; argument
                // filters for none.
                for nr in 0..460u32 {
                    let in_deny =
                        (0..comparisons_for(insns.saturating_sub(min))).any(|i| deny_nr(i) == nr);
                    let expect = kind == FilterKind::Allow && !in_deny;
                    assert_eq!(
                        const_allow(&p, native(), nr),
                        expect,
                        "{kind:?} {insns} nr {nr}"
                    );
                }
            }
        }
        // A long filter compares against every deny-list number, then
        // numbers no kernel defines.
        let p = build_filter(FilterKind::Allow, native(), 4096).unwrap();
        for nr in DENY_LIST
            .iter()
            .map(|&n| n as u32)
            .chain([SYNTHETIC_NR_BASE + 3])
        {
            assert_eq!(
                run(&p, &data(native(), nr, 0)),
                Some(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32)
            );
        }
    }

    #[test]
    fn parameters_are_checked() {
        let t = Treatment::parse("seccomp").unwrap();
        let (p, n) = plan(&t).unwrap();
        assert_eq!((p.len(), n), (8, 1));
        let t = Treatment::parse("seccomp:args,filters=4,insns=64").unwrap();
        let (p, n) = plan(&t).unwrap();
        assert_eq!((p.len(), n), (64, 4));
        for bad in [
            "seccomp,filters=0",
            "seccomp,insns=5000",
            "seccomp,filters=9,insns=4096",
        ] {
            // Rejected when parsed, before any task starts.
            let e = Treatment::parse(bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}: {e:#}");
        }
    }

    #[test]
    fn survey_variants_parse() {
        for v in SECCOMP.survey_variants() {
            let spec = if v.is_empty() {
                "seccomp".to_string()
            } else {
                format!("seccomp:{v}")
            };
            Treatment::parse(&spec).unwrap();
        }
    }

    #[test]
    fn probe_finds_seccomp_here() {
        assert_eq!(SECCOMP.probe(), Availability::Available);
    }

    #[test]
    fn applied_filters_show_in_status_and_syscalls_still_work() {
        // (spec, filters, whether the filter is long enough to deny).
        for (spec, n, denies) in [
            ("seccomp", 1u32, true),
            ("seccomp:args,filters=4", 4, false),
            ("seccomp:args,insns=300", 1, true),
        ] {
            let (before, after, getppid, denied) = in_thread(move || {
                let before = thread_status().unwrap();
                let t = Treatment::parse(spec).unwrap();
                let def = crate::workloads::find("getppid").unwrap();
                let dir = std::env::temp_dir();
                SECCOMP
                    .apply_in_worker(
                        &t,
                        &WorkerEnv {
                            workload: def,
                            scratch: &dir,
                            data_dir: None,
                            task: 0,
                        },
                    )
                    .unwrap();
                let after = thread_status().unwrap();
                // SAFETY: getppid takes no arguments.
                let getppid = unsafe { libc::getppid() };
                // delete_module(NULL, 0): the filter answers EPERM before
                // the kernel would look at the (invalid) name.
                // SAFETY: a NULL name is never dereferenced: the filter
                // denies the call, or the kernel fails it with EFAULT.
                let r = unsafe {
                    libc::syscall(libc::SYS_delete_module, std::ptr::null::<libc::c_char>(), 0)
                };
                let denied = (r, std::io::Error::last_os_error().raw_os_error());
                (before, after, getppid, denied)
            });
            let filters = |s: &str| -> u32 {
                status_field(s, "Seccomp_filters").map_or(0, |v| v.parse().unwrap())
            };
            assert_eq!(status_field(&after, "Seccomp"), Some("2"), "{spec}");
            assert_eq!(filters(&after), filters(&before) + n, "{spec}");
            assert!(getppid > 0);
            if denies {
                assert_eq!(denied, (-1, Some(libc::EPERM)), "{spec}");
            }
        }
        // This thread is untouched.
        let own = thread_status().unwrap();
        assert_ne!(status_field(&own, "Seccomp_filters"), None);
    }

    #[test]
    fn workloads_run_under_filters() {
        for mode in [Mode::Process, Mode::Thread] {
            for (spec, w) in [
                ("seccomp:args,filters=4", "getppid"),
                ("seccomp", "getppid"),
                ("seccomp:args", "eventfd"),
            ] {
                let r = measure_under(spec, w, &[], mode)
                    .unwrap_or_else(|e| panic!("{spec} {w} {mode:?}: {e:#}"));
                assert!(r.ops_per_sec.median > 0.0);
            }
        }
    }

    fn fixture(name: &str) -> String {
        format!(
            "{}/tests/fixtures/seccomp/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    fn profile_spec(name: &str) -> String {
        format!("seccomp:profile={}", fixture(name))
    }

    #[test]
    fn profile_treatments_parse_describe_and_refuse_mistakes() {
        let t = Treatment::parse(&profile_spec("docker_like.json")).unwrap();
        assert_eq!(t.variant, "profile");
        assert_eq!(t.params["profile"], fixture("docker_like.json"));
        let lines = SECCOMP.describe(&t).unwrap();
        assert!(
            lines[0].starts_with("docker_like.json: ") && lines[0].contains("BPF instructions"),
            "{lines:?}"
        );
        assert!(lines.len() > 3, "{lines:?}");
        let (prog, n) = plan(&t).unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            prog,
            compiled_profile(Path::new(&fixture("docker_like.json")))
                .unwrap()
                .program
        );
        assert!(t.to_string().contains("profile="), "{t}");
        // Stacked copies are allowed, as for the other variants.
        let t4 = Treatment::parse(&format!("{},filters=4", profile_spec("docker_like.json")));
        assert_eq!(plan(&t4.unwrap()).unwrap().1, 4);
        // The synthetic variants describe nothing.
        assert!(
            SECCOMP
                .describe(&Treatment::parse("seccomp").unwrap())
                .unwrap()
                .is_empty()
        );

        for (spec, want) in [
            (profile_spec("no_such.json"), "cannot read it".to_string()),
            (profile_spec("broken_json.json"), "line 4, column 24".into()),
            (
                profile_spec("broken_unknown_syscall.json"),
                "getppidd".into(),
            ),
            (profile_spec("broken_notify.json"), "SCMP_ACT_NOTIFY".into()),
            ("seccomp:profile".into(), "needs the profile's path".into()),
            ("seccomp:profile=".into(), "needs the profile's path".into()),
            (
                format!("seccomp:args,profile={}", fixture("docker_like.json")),
                "only for variant profile".into(),
            ),
            (
                format!("{},insns=64", profile_spec("docker_like.json")),
                "remove insns".into(),
            ),
            (
                format!("{},filters=1024", profile_spec("docker_like.json")),
                "lower filters".into(),
            ),
        ] {
            let e = Treatment::parse(&spec).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{spec}: {e:#}");
            assert!(format!("{e:#}").contains(&want), "{spec}: {e:#}");
        }
    }

    #[test]
    fn profiles_that_break_the_workload_are_refused() {
        let w = |n: &str| crate::workloads::find(n).unwrap();
        let none = crate::model::Params::new();
        let deny = Treatment::parse(&profile_spec("deny_getppid.json")).unwrap();
        let e = SECCOMP
            .check_workload(&deny, w("getppid"), &none)
            .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let msg = e.to_string();
        assert!(
            msg.contains("deny_getppid.json denies getppid (SCMP_ACT_ERRNO(EPERM=1))")
                && msg.contains("which workload getppid makes"),
            "{msg}"
        );
        SECCOMP.check_workload(&deny, w("eventfd"), &none).unwrap();
        // The Docker-like profile lets every workload run (clone and
        // socket are conditional: allowed with nothing said).
        let docker = Treatment::parse(&profile_spec("docker_like.json")).unwrap();
        for def in crate::workloads::WORKLOADS {
            SECCOMP
                .check_workload(&docker, def, &none)
                .unwrap_or_else(|e| panic!("{}: {e:#}", def.name));
        }
        let kill = Treatment::parse(&profile_spec("kill_allowlist.json")).unwrap();
        SECCOMP.check_workload(&kill, w("getppid"), &none).unwrap();
        let e = SECCOMP
            .check_workload(&kill, w("eventfd"), &none)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("denies write (SCMP_ACT_KILL_THREAD)"),
            "{e}"
        );
        // The harness's own calls.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no_futex.json");
        std::fs::write(
            &path,
            r#"{"defaultAction": "SCMP_ACT_ALLOW",
                "syscalls": [{"names": ["futex"], "action": "SCMP_ACT_KILL_PROCESS"}]}"#,
        )
        .unwrap();
        let t = Treatment::parse(&format!("seccomp:profile={}", path.display())).unwrap();
        let e = SECCOMP.check_workload(&t, w("stream"), &none).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(
            e.to_string()
                .contains("denies futex (SCMP_ACT_KILL_PROCESS), which secperf's task makes"),
            "{e}"
        );
        // Other variants check nothing.
        SECCOMP
            .check_workload(&Treatment::parse("seccomp").unwrap(), w("getppid"), &none)
            .unwrap();
    }

    /// Writes, for `workload`, a default-KILL profile allowing only its
    /// own calls and [`HARNESS_SYSCALLS`]; returns its path.
    fn minimal_profile(dir: &Path, workload: &str) -> PathBuf {
        let def = crate::workloads::find(workload).unwrap();
        let names: Vec<&str> = def
            .syscalls
            .iter()
            .copied()
            .chain(HARNESS_SYSCALLS.iter().map(|(n, _)| *n))
            .collect();
        let path = dir.join(format!("{workload}.json"));
        let profile = serde_json::json!({
            "defaultAction": "SCMP_ACT_KILL",
            "syscalls": [{"names": names, "action": "SCMP_ACT_ALLOW"}],
        });
        std::fs::write(&path, profile.to_string()).unwrap();
        path
    }

    /// Run by [`tasks_need_only_their_calls_and_the_harness_list`] in a
    /// process of its own: a thread task killed by its filter would leave
    /// the measuring thread waiting forever.
    #[test]
    #[ignore]
    fn minimal_profiles_child() {
        if std::env::var_os("SECPERF_SECCOMP_CHILD").is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        for workload in ["getppid", "eventfd", "pipe", "open", "stream"] {
            let path = minimal_profile(dir.path(), workload);
            let spec = format!("seccomp:profile={}", path.display());
            let t = Treatment::parse(&spec).unwrap();
            SECCOMP
                .check_workload(
                    &t,
                    crate::workloads::find(workload).unwrap(),
                    &Params::new(),
                )
                .unwrap();
            for mode in [Mode::Process, Mode::Thread] {
                let r = measure_under(&spec, workload, &[], mode)
                    .unwrap_or_else(|e| panic!("{workload} {mode:?}: {e:#}"));
                assert!(r.ops_per_sec.median > 0.0, "{workload} {mode:?}");
                println!("ok: {workload} {mode:?} {:.0} ns/op", r.ns_per_op.median);
            }
        }
    }

    #[test]
    fn tasks_need_only_their_calls_and_the_harness_list() {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "mechanisms::seccomp::tests::minimal_profiles_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SECPERF_SECCOMP_CHILD", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A killed task thread leaves the child waiting forever: the limit
        // only stops that hang.
        let limit = std::time::Duration::from_secs(300);
        let deadline = std::time::Instant::now() + limit;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let out = child.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            status.is_some_and(|s| s.success()),
            "status {status:?} (None: the child never finished, gave up after {limit:?}; a \
             task thread was probably killed)\n{text}"
        );
        assert!(
            text.contains("1 passed") && text.contains("ok: stream Thread"),
            "{text}"
        );
    }

    #[test]
    fn workloads_run_under_a_docker_like_profile() {
        for (w, mode) in [
            ("getppid", Mode::Process),
            ("eventfd", Mode::Thread),
            ("open", Mode::Process),
        ] {
            let r = measure_under(&profile_spec("docker_like.json"), w, &[], mode)
                .unwrap_or_else(|e| panic!("{w} {mode:?}: {e:#}"));
            assert!(r.ops_per_sec.median > 0.0);
        }
    }

    /// Manual timing: `cargo test --release -- --ignored --nocapture
    /// seccomp::tests::timing`.
    #[test]
    #[ignore]
    fn timing_getppid() {
        crate::mechanisms::worker_util::testing::print_timings(
            "getppid",
            &[],
            &[
                "none",
                "seccomp",
                "seccomp,filters=4",
                "seccomp:args",
                "seccomp:args,filters=4",
                "seccomp:args,insns=64",
            ],
            5,
        );
    }

    /// The point of the two variants, measured: with 7 filters of 4096
    /// instructions, a cached number-only filter costs (nearly) nothing
    /// while the argument filter runs ~28k instructions per syscall.
    #[test]
    fn the_action_cache_skips_allow_filters_only() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut v = release
            .trim()
            .split(['.', '-'])
            .map(|x| x.parse::<u32>().unwrap_or(0));
        let (major, minor) = (v.next().unwrap_or(0), v.next().unwrap_or(0));
        if (major, minor) < (5, 11) {
            let test = "the_action_cache_skips_allow_filters_only";
            let reason = format!("kernel {release} predates the seccomp action cache (5.11)");
            crate::testing::skip_kernel_feature(test, "seccomp-action-cache", &reason);
            return;
        }
        let ns = |spec: &str| {
            measure_under(spec, "getppid", &[], Mode::Process)
                .unwrap_or_else(|e| panic!("{spec}: {e:#}"))
                .ns_per_op
                .median
        };
        let allow = ns("seccomp,filters=7,insns=4096");
        let args = ns("seccomp:args,filters=7,insns=4096");
        assert!(
            args > 4.0 * allow,
            "allow {allow:.0} ns/op, args {args:.0} ns/op"
        );
    }
}
