//! `bpf-lsm`: what one no-op BPF LSM program on a hook costs.
//!
//! With the bpf LSM active every LSM hook already has an empty BPF
//! trampoline slot; attaching a program makes each call of the hook jump
//! through the trampoline into it. The measured program is `r0 = 0; exit`
//! (allow), so the difference between the arms is the price of the BPF LSM
//! machinery itself on that hook, the floor under any real BPF policy (for
//! the default hook `file_permission`, what the lsm-hooks-2020 experiment saw on
//! eventfd_write).
//!
//! Built without clang or libbpf: [`btf`] finds the hook's BTF id in
//! /sys/kernel/btf/vmlinux, [`insn`] encodes the two instructions and
//! [`syscall`] loads and attaches them with bpf(2).
//!
//! Scope is system: `apply_system` in the treatment arm loads and attaches
//! the program in the parent and keeps the fds in [`ATTACHED`]; the program
//! stays attached while the link fd is open, so `restore` closes the fds.
//! A crashed process's fds close by themselves, so there is never state to
//! bring back from a journal: the snapshot is `{"attached": false}`.

pub mod btf;
pub mod insn;
pub mod syscall;

use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use anyhow::{Context, Result};
use serde_json::json;

use super::{Arm, Availability, Mechanism, Scope, SystemEnv, Treatment, VariantDef};
use crate::params::ParamDef;
use crate::probe::Probed;

use btf::{Btf, Kind};
use syscall::{CAP_BPF, CAP_SYS_ADMIN, LoadError};

pub struct BpfLsm;
pub static BPF_LSM: BpfLsm = BpfLsm;

/// The hook measured when none is given (the lsm-hooks-2020 experiment).
pub const DEFAULT_HOOK: &str = "file_permission";

/// Reasons [`Mechanism::probe`] gives (the CLI prefixes "unavailable: ").
pub const NOT_ACTIVE: &str =
    "the bpf LSM is not active (add bpf to lsm= on the kernel command line)";
pub const NEEDS_ROOT: &str = "needs root (CAP_BPF and CAP_SYS_ADMIN)";
pub const REFUSED_EPERM: &str = "kernel refused BPF_PROG_LOAD (EPERM)";

static PARAMS: &[ParamDef] = &[ParamDef {
    name: "hook",
    default: DEFAULT_HOOK,
    help: "LSM hook to attach to (the FUNC bpf_lsm_<hook> in vmlinux BTF)",
}];

/// The program attached by this process: closing `link` detaches it.
#[derive(Debug)]
pub struct Attached {
    pub hook: String,
    pub btf_id: u32,
    /// The bpf command that attached it (LINK_CREATE or the fallback).
    pub via: &'static str,
    link: OwnedFd,
    prog: OwnedFd,
}

/// What is attached now, if anything.
pub static ATTACHED: Mutex<Option<Attached>> = Mutex::new(None);

/// BTF ids already looked up, by hook (parsing vmlinux BTF takes a while).
static BTF_IDS: Mutex<Vec<(String, u32)>> = Mutex::new(Vec::new());

/// Locks a mutex; a panic elsewhere while holding it leaves valid data.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `hook` can be the name of an LSM hook (a C identifier part).
pub fn valid_hook(hook: &str) -> bool {
    !hook.is_empty()
        && hook.len() <= 64
        && hook
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The hook parameter of a treatment, checked.
fn hook_of(t: &Treatment) -> Result<String> {
    let hook = t
        .params
        .get("hook")
        .map(String::as_str)
        .unwrap_or(DEFAULT_HOOK);
    if !valid_hook(hook) {
        crate::usage_bail!(
            "mechanism bpf-lsm: hook={hook} is not an LSM hook name \
             (lower-case letters, digits and _, e.g. hook={DEFAULT_HOOK})"
        );
    }
    Ok(hook.to_string())
}

/// The BTF id of FUNC `bpf_lsm_<hook>` in the BTF file `path`.
pub fn hook_btf_id_in(path: &Path, hook: &str) -> Result<u32> {
    let btf = Btf::read(path)?;
    let func = format!("bpf_lsm_{hook}");
    match btf.find(Kind::Func, &func) {
        Some(t) => Ok(t.id),
        None => anyhow::bail!(
            "no LSM hook '{hook}': {func} is not a FUNC in {}",
            path.display()
        ),
    }
}

/// The BTF id of the hook in the running kernel (cached).
pub fn hook_btf_id(hook: &str) -> Result<u32> {
    if let Some((_, id)) = lock(&BTF_IDS).iter().find(|(h, _)| h == hook) {
        return Ok(*id);
    }
    let id = hook_btf_id_in(Path::new(btf::VMLINUX), hook)?;
    lock(&BTF_IDS).push((hook.to_string(), id));
    Ok(id)
}

/// Why a refused load makes the mechanism unavailable, in words.
pub fn load_reason(err: &LoadError) -> String {
    match err.sys.errno {
        libc::EPERM => format!("{REFUSED_EPERM}{}", eperm_hint()),
        libc::EINVAL => format!(
            "kernel rejected the program (BPF_PROG_LOAD: EINVAL): {}",
            err.last_log_line().unwrap_or("no verifier log")
        ),
        errno => format!(
            "BPF_PROG_LOAD failed: {} ({})",
            crate::sys::errno_name(errno),
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

/// Why a load refused with EPERM may have been, for the reason's tail:
/// with CAP_BPF and CAP_SYS_ADMIN in hand (as root) the kernel itself
/// forbids it, so the likely causes are named, and what to do instead.
fn eperm_hint() -> String {
    // CAP_SYS_ADMIN 21, CAP_BPF 39.
    let privileged = crate::sys::caps::has_effective(&[21, 39]).unwrap_or(false);
    if !privileged {
        return " (this process lacks CAP_BPF and CAP_SYS_ADMIN: run as root)".to_string();
    }
    let lockdown = std::fs::read_to_string("/sys/kernel/security/lockdown")
        .ok()
        .and_then(|l| {
            // "none [integrity] confidentiality": the mode in brackets.
            let mode = l.split('[').nth(1)?.split(']').next()?.trim().to_string();
            Some(mode)
        });
    let lockdown = match lockdown.as_deref() {
        Some("none") => String::new(),
        Some(mode) => format!("kernel lockdown ({mode}); "),
        None => "kernel lockdown (securityfs is not mounted, so its mode is unknown: mount -t \
                 securityfs securityfs /sys/kernel/security); "
            .to_string(),
    };
    format!(
        " although this process has CAP_BPF and CAP_SYS_ADMIN, so the kernel itself forbids \
         it; the likely causes: {lockdown}a BPF LSM or SELinux policy of this machine's own \
         that denies bpf() (the probe's LSM list says whether one is active), or a sandbox \
         around this machine (a container's or a VM platform's filter on bpf()); measure it \
         in a VM guest instead: --vm /boot/vmlinuz-* -m bpf-lsm"
    )
}

/// The checks before trying a load: bpf LSM active (`active`, from the
/// probe module's LSM list), kernel BTF present, privileges.
pub fn precheck(active: &Probed<bool>, btf_vmlinux: bool, privileged: bool) -> Option<String> {
    match active {
        Probed::Unavailable { reason } => return Some(reason.clone()),
        Probed::Ok(false) => return Some(NOT_ACTIVE.to_string()),
        Probed::Ok(true) => {}
    }
    if !btf_vmlinux {
        return Some(format!(
            "kernel has no BTF ({} missing: needs CONFIG_DEBUG_INFO_BTF)",
            btf::VMLINUX
        ));
    }
    if !privileged {
        return Some(NEEDS_ROOT.to_string());
    }
    None
}

/// Loads and at once closes the program for `hook`: Ok when the kernel
/// accepts it, else the reason.
fn try_load(hook: &str) -> Result<(), String> {
    let id = hook_btf_id(hook).map_err(|e| format!("{e:#}"))?;
    syscall::load_noop(id)
        .map(drop)
        .map_err(|e| load_reason(&e))
}

/// Whether the caller may load and attach LSM programs.
fn privileged() -> bool {
    crate::sys::is_root() && syscall::has_effective_caps(&[CAP_BPF, CAP_SYS_ADMIN]).unwrap_or(false)
}

/// Loads and attaches the program for `hook` unless that is attached
/// already; anything else attached is detached first.
pub fn attach(hook: &str) -> Result<()> {
    let mut slot = lock(&ATTACHED);
    if slot.as_ref().is_some_and(|a| a.hook == hook) {
        return Ok(());
    }
    *slot = None;
    let btf_id = hook_btf_id(hook)?;
    let prog = syscall::load_noop(btf_id).map_err(|e| {
        let log = e.log.trim();
        let mut msg = format!(
            "loading the no-op program for bpf_lsm_{hook} (BTF id {btf_id}): {}",
            load_reason(&e)
        );
        if !log.is_empty() {
            msg.push_str("\nverifier log:\n");
            msg.push_str(log);
        }
        anyhow::anyhow!(msg)
    })?;
    let (link, via) = syscall::attach(&prog)
        .with_context(|| format!("attaching the no-op program to bpf_lsm_{hook}"))?;
    *slot = Some(Attached {
        hook: hook.to_string(),
        btf_id,
        via,
        link,
        prog,
    });
    Ok(())
}

/// Closes the link and program fds, detaching the program. Idempotent;
/// returns whether something was attached.
pub fn detach() -> bool {
    let taken = lock(&ATTACHED).take();
    match taken {
        Some(a) => {
            drop(a.link);
            drop(a.prog);
            true
        }
        None => false,
    }
}

impl Mechanism for BpfLsm {
    fn name(&self) -> &'static str {
        "bpf-lsm"
    }
    fn description(&self) -> &'static str {
        "a no-op BPF LSM program attached to one hook (root; needs the bpf LSM active)"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "noop",
            description: "returns 0 (allow) on every call of the hook",
        }]
    }
    fn params(&self) -> &'static [ParamDef] {
        PARAMS
    }
    fn lsm_hooks(&self) -> &'static [&'static str] {
        &[DEFAULT_HOOK]
    }

    fn survey_workloads(&self) -> &'static [&'static str] {
        &["eventfd", "write"]
    }

    /// Checks the bpf LSM, BTF and privileges, then loads the program for
    /// the default hook and closes it at once (never attaches).
    fn boot_lsm(&self) -> Option<&'static str> {
        Some("bpf")
    }
    fn probe(&self) -> Availability {
        let info = crate::probe::probe();
        if let Some(reason) = precheck(&info.bpf_lsm.active, info.bpf_lsm.btf_vmlinux, privileged())
        {
            return Availability::Unavailable(reason);
        }
        match try_load(DEFAULT_HOOK) {
            Ok(()) => Availability::Available,
            Err(reason) => Availability::Unavailable(reason),
        }
    }

    fn snapshot(&self) -> Result<serde_json::Value> {
        Ok(json!({ "attached": false }))
    }

    fn apply_system(&self, t: &Treatment, arm: Arm, _env: &SystemEnv) -> Result<()> {
        match arm {
            Arm::Baseline => {
                detach();
                Ok(())
            }
            Arm::Treatment => attach(&hook_of(t)?).context("bpf-lsm"),
        }
    }

    fn restore(&self, _snapshot: &serde_json::Value) -> Result<()> {
        detach();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mechanisms")
            .join(rel)
    }

    #[test]
    fn hook_names_are_checked() {
        assert!(valid_hook("file_permission"));
        assert!(valid_hook("socket_create"));
        assert!(!valid_hook(""));
        assert!(!valid_hook("file-permission"));
        assert!(!valid_hook("../x"));
        assert!(!valid_hook(&"a".repeat(65)));
        let t = Treatment::parse("bpf-lsm:noop,hook=File").unwrap();
        let err = hook_of(&t).unwrap_err();
        assert_eq!(crate::error::exit_code(&err), 2, "{err}");
        let t = Treatment::parse("bpf-lsm").unwrap();
        assert_eq!(t.variant, "noop");
        assert_eq!(hook_of(&t).unwrap(), "file_permission");
        assert_eq!(t.to_string(), "bpf-lsm:noop");
        let t = Treatment::parse("bpf-lsm:noop,hook=file_open").unwrap();
        assert_eq!(hook_of(&t).unwrap(), "file_open");
        assert_eq!(t.to_string(), "bpf-lsm:noop,hook=file_open");
    }

    #[test]
    fn finds_hooks_in_the_fixture_blob() {
        let path = fixture("btf/every-kind.btf");
        assert_eq!(hook_btf_id_in(&path, "file_permission").unwrap(), 20);
        assert_eq!(hook_btf_id_in(&path, "file_open").unwrap(), 13);
        let err = hook_btf_id_in(&path, "inode_free").unwrap_err().to_string();
        assert!(
            err.starts_with("no LSM hook 'inode_free': bpf_lsm_inode_free is not a FUNC in "),
            "{err}"
        );
        let err = hook_btf_id_in(Path::new("/nonexistent/vmlinux"), "x")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("reading /nonexistent/vmlinux: "), "{err}");
    }

    #[test]
    fn prechecks_in_order() {
        let on = Probed::Ok(true);
        assert_eq!(precheck(&on, true, true), None);
        assert_eq!(
            precheck(&Probed::Ok(false), true, true).as_deref(),
            Some(NOT_ACTIVE)
        );
        assert_eq!(
            precheck(
                &Probed::unavailable("active LSM list unknown: x"),
                true,
                true
            )
            .as_deref(),
            Some("active LSM list unknown: x")
        );
        assert!(
            precheck(&on, false, true)
                .unwrap()
                .starts_with("kernel has no BTF (/sys/kernel/btf/vmlinux missing")
        );
        assert_eq!(precheck(&on, true, false).as_deref(), Some(NEEDS_ROOT));
    }

    #[test]
    fn load_errors_become_reasons() {
        let err = |errno, log: &str| LoadError {
            sys: crate::sys::SysError {
                call: "bpf(BPF_PROG_LOAD)",
                errno,
            },
            log: log.into(),
        };
        // Issue 53: as root, with the probe saying the BPF LSM is active,
        // the bare EPERM named no cause.
        let eperm = load_reason(&err(libc::EPERM, ""));
        assert!(
            eperm.starts_with("kernel refused BPF_PROG_LOAD (EPERM)"),
            "{eperm}"
        );
        if crate::sys::caps::has_effective(&[21, 39]).unwrap_or(false) {
            assert!(
                eperm.contains("the likely causes") && eperm.contains("--vm"),
                "{eperm}"
            );
        } else {
            assert!(eperm.contains("run as root"), "{eperm}");
        }
        assert_eq!(
            load_reason(&err(
                libc::EINVAL,
                "0: R1=ctx()\nBPF_LSM_MAC programs must be GPL compatible\n"
            )),
            "kernel rejected the program (BPF_PROG_LOAD: EINVAL): \
             BPF_LSM_MAC programs must be GPL compatible"
        );
        assert_eq!(
            load_reason(&err(libc::EINVAL, "")),
            "kernel rejected the program (BPF_PROG_LOAD: EINVAL): no verifier log"
        );
        assert!(
            load_reason(&err(libc::EACCES, ""))
                .starts_with("BPF_PROG_LOAD failed: EACCES (Permission denied")
        );
    }

    #[test]
    fn snapshot_restore_and_baseline_are_trivial_and_idempotent() {
        let m = &BPF_LSM;
        assert_eq!(m.snapshot().unwrap(), json!({ "attached": false }));
        m.restore(&json!({ "attached": false })).unwrap();
        m.restore(&json!({ "attached": false })).unwrap();
        assert!(!detach());
        assert!(lock(&ATTACHED).is_none());
        assert_eq!(m.params()[0].default, "file_permission");
        assert_eq!(m.scope(), Scope::System);
    }

    /// On this machine the whole chain runs: LSM list, BTF lookup, a real
    /// BPF_PROG_LOAD. Whatever the kernel answers must be one of the
    /// documented reasons (or available, where loading is allowed).
    #[test]
    fn probe_gives_a_documented_answer_here() {
        match BPF_LSM.probe() {
            Availability::Available => {
                // Then attach and detach work too, as root.
                let t = Treatment::parse("bpf-lsm").unwrap();
                let w = &crate::workloads::WORKLOADS[0];
                let env = SystemEnv { workload: w };
                BPF_LSM.apply_system(&t, Arm::Treatment, &env).unwrap();
                assert!(lock(&ATTACHED).is_some());
                BPF_LSM.restore(&json!({ "attached": false })).unwrap();
                assert!(lock(&ATTACHED).is_none());
            }
            Availability::Unavailable(reason) => {
                eprintln!("bpf-lsm here: unavailable: {reason}");
                if reason.starts_with(REFUSED_EPERM) {
                    // The treatment arm fails the same way and leaves
                    // nothing attached.
                    let t = Treatment::parse("bpf-lsm").unwrap();
                    let env = SystemEnv {
                        workload: &crate::workloads::WORKLOADS[0],
                    };
                    let err = BPF_LSM.apply_system(&t, Arm::Treatment, &env).unwrap_err();
                    let msg = format!("{err:#}");
                    assert!(
                        msg.starts_with(
                            "bpf-lsm: loading the no-op program for bpf_lsm_file_permission \
                             (BTF id "
                        ) && msg.contains("): kernel refused BPF_PROG_LOAD (EPERM)"),
                        "{msg}"
                    );
                    assert!(lock(&ATTACHED).is_none());
                    BPF_LSM.apply_system(&t, Arm::Baseline, &env).unwrap();
                }
                let known = [NOT_ACTIVE, NEEDS_ROOT].contains(&reason.as_str())
                    || reason.starts_with(REFUSED_EPERM)
                    || reason.starts_with("kernel rejected the program")
                    || reason.starts_with("BPF_PROG_LOAD failed: ")
                    || reason.starts_with("kernel has no BTF")
                    || reason.starts_with("active LSM list unknown");
                assert!(known, "{reason}");
            }
        }
    }
}
