//! `landlock`: the cost of a Landlock filesystem sandbox on path-based
//! operations, as an unprivileged application or a service manager
//! (`systemd`'s and browsers' sandboxes) imposes it.
//!
//! In each task, after the workload prepared: a ruleset is created that
//! handles every filesystem access right of the running ABI (so every
//! right is denied unless a rule grants it), `PATH_BENEATH` rules grant
//! all of them beneath the directories the workload uses (its scratch
//! directory and, when it has one, its data directory, e.g. the
//! `tree_walk` tree), `prctl(PR_SET_NO_NEW_PRIVS)` is set, and
//! `landlock_restrict_self` enforces it on the calling thread.
//!
//! What it costs: every `open` (`file_open` hook), directory read and
//! path change is checked by walking from the file up through its parent
//! directories, looking each one up in the ruleset's rule tree, until every
//! layer granted the requested rights (`is_access_to_paths_allowed`). So
//! the cost grows with the path depth below the ruled directory (the
//! `open` workload's `depth`), with `layers=L` (`landlock_restrict_self`
//! called L times, at most 16 layers in all: every rule then carries one
//! access mask per layer, and a check is complete only when every layer
//! granted the access) and, logarithmically, with `rules=N` (N-1 rules
//! beyond the workload's own, on directories made under
//! `scratch/landlock-rules`, which make the rule tree bigger without
//! granting anything the workload uses). `stat`
//! and `access` are not access rights Landlock handles: there only the
//! domain's presence (the hooks' early checks) shows.
//!
//! Access rights by ABI (`include/uapi/linux/landlock.h`): ABI 1 has
//! EXECUTE .. MAKE_SYM (bits 0-12), ABI 2 adds REFER (13), ABI 3 TRUNCATE
//! (14), ABI 5 IOCTL_DEV (15); ABIs 4, 6 and 7 add network rights, scopes
//! and logging flags, no filesystem right. A newer ABI gets the highest
//! set known here.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::worker_util::set_no_new_privs;
use super::{Availability, Mechanism, Scope, Treatment, VariantDef, WorkerEnv};
use crate::params::ParamDef;
use crate::policy::landlock_sandbox::{ROUGHLY_READ, ROUGHLY_WRITE, Sandbox};
use crate::sys::landlock::{
    add_path_rule, add_port_rule, create_ruleset, create_ruleset_net, restrict_self,
};
use crate::sys::{SysError, check_int, cstring};

pub struct Landlock;
pub static LANDLOCK: Landlock = Landlock;

/// Layers a thread may have in all (`LANDLOCK_MAX_NUM_LAYERS`).
pub const MAX_LAYERS: u64 = 16;

pub const ACCESS_FS_EXECUTE: u64 = 1 << 0;
pub const ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
pub const ACCESS_FS_READ_FILE: u64 = 1 << 2;
pub const ACCESS_FS_READ_DIR: u64 = 1 << 3;
pub const ACCESS_FS_MAKE_SYM: u64 = 1 << 12;
pub const ACCESS_FS_REFER: u64 = 1 << 13;
pub const ACCESS_FS_TRUNCATE: u64 = 1 << 14;
pub const ACCESS_FS_IOCTL_DEV: u64 = 1 << 15;

/// Rights that apply to a file itself (the rest only to directories); a
/// rule on a non-directory may grant only these.
pub const ACCESS_FILE: u64 = ACCESS_FS_EXECUTE
    | ACCESS_FS_WRITE_FILE
    | ACCESS_FS_READ_FILE
    | ACCESS_FS_TRUNCATE
    | ACCESS_FS_IOCTL_DEV;

/// `LANDLOCK_ACCESS_NET_BIND_TCP`, `LANDLOCK_ACCESS_NET_CONNECT_TCP`.
pub const ACCESS_NET_BIND_TCP: u64 = 1 << 0;
pub const ACCESS_NET_CONNECT_TCP: u64 = 1 << 1;
/// The first ABI with network rights (Linux 6.7).
pub const NET_ABI: u32 = 4;

/// Every filesystem right ABI `abi` knows.
pub fn fs_rights(abi: u32) -> u64 {
    let mut r = (ACCESS_FS_MAKE_SYM << 1) - 1;
    if abi >= 2 {
        r |= ACCESS_FS_REFER;
    }
    if abi >= 3 {
        r |= ACCESS_FS_TRUNCATE;
    }
    if abi >= 5 {
        r |= ACCESS_FS_IOCTL_DEV;
    }
    r
}

pub use crate::sys::query::landlock_abi as abi_version;

/// Why Landlock cannot be used, from the errno of the version query.
fn unavailable_reason(e: SysError) -> String {
    match e.errno {
        libc::EOPNOTSUPP => "Landlock is built but disabled at boot (add landlock to lsm= on the \
                             kernel command line)"
            .into(),
        libc::ENOSYS => "kernel built without Landlock (CONFIG_SECURITY_LANDLOCK)".into(),
        _ => format!("unavailable: {e}"),
    }
}

/// The directories the rules name: the workload's own first (always
/// granted), then `extra` siblings created under `scratch/landlock-rules`.
pub fn rule_dirs(env: &WorkerEnv, extra: u64) -> Result<Vec<PathBuf>> {
    let mut dirs = vec![env.scratch.to_path_buf()];
    if let Some(d) = env.data_dir.filter(|d| !d.starts_with(env.scratch)) {
        dirs.push(d.to_path_buf());
    }
    let base = env.scratch.join("landlock-rules");
    for i in 1..=extra {
        let d = base.join(format!("r{i}"));
        // Tasks share the scratch directory: create_dir_all tolerates a
        // sibling task creating the same directory at the same time.
        std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        dirs.push(d);
    }
    Ok(dirs)
}

/// `open(path, O_PATH | O_CLOEXEC)`: a handle for a rule, not for I/O.
fn open_path(path: &Path) -> Result<OwnedFd> {
    let c = cstring(path);
    // SAFETY: c is a valid NUL-terminated path; the fd is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    let fd =
        check_int("open(O_PATH)", fd).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: fd was just returned by open and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether `fd` is a directory (a rule on anything else may grant only
/// [`ACCESS_FILE`]).
fn is_dir(fd: &OwnedFd) -> Result<bool, SysError> {
    // SAFETY: stat is plain data; fstat fills it for a valid fd (O_PATH
    // descriptors support fstat).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid out buffer and fd an open descriptor.
    check_int("fstat", unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

impl Mechanism for Landlock {
    fn name(&self) -> &'static str {
        "landlock"
    }
    fn description(&self) -> &'static str {
        "a Landlock filesystem ruleset enforced in each task (unprivileged)"
    }
    fn scope(&self) -> Scope {
        Scope::Worker
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[
            VariantDef {
                name: "fs",
                description: "handles every filesystem right of the running ABI; rules grant what the workload needs",
            },
            VariantDef {
                name: "sandbox",
                description: "your sandbox, as the kernel's sample sandboxer takes it: ro=PATHS,rw=PATHS (colon-separated), bind=PORTS, connect=PORTS",
            },
        ]
    }

    fn variant_of_param(&self, key: &str) -> Option<&'static str> {
        SANDBOX_KEYS.contains(&key).then_some("sandbox")
    }
    fn params(&self) -> &'static [ParamDef] {
        &[
            ParamDef {
                name: "rules",
                default: "1",
                help: "rules in the ruleset: the workload's directories plus N-1 rules on unrelated sibling directories",
            },
            ParamDef {
                name: "layers",
                default: "1",
                help: "identical rulesets stacked (landlock_restrict_self calls, 1..16)",
            },
            ParamDef {
                name: "ro",
                default: "",
                help: "sandbox: paths granted read and execute beneath them, colon-separated (LL_FS_RO)",
            },
            ParamDef {
                name: "rw",
                default: "",
                help: "sandbox: paths granted read and write beneath them, colon-separated (LL_FS_RW)",
            },
            ParamDef {
                name: "bind",
                default: "",
                help: "sandbox: the only TCP ports bind may use, colon-separated, or none (LL_TCP_BIND; ABI 4)",
            },
            ParamDef {
                name: "connect",
                default: "",
                help: "sandbox: the only TCP ports connect may use, colon-separated, or none (LL_TCP_CONNECT; ABI 4)",
            },
        ]
    }
    fn lsm_hooks(&self) -> &'static [&'static str] {
        &["file_open"]
    }

    fn survey_workloads(&self) -> &'static [&'static str] {
        // access(2) has no Landlock hook; measure it explicitly with -w access1.
        &["open", "stat", "tree_walk"]
    }
    fn survey_variants(&self) -> &'static [&'static str] {
        &["", "rules=8", "layers=4"]
    }
    fn probe(&self) -> Availability {
        match abi_version() {
            Ok(abi) if abi >= 1 => Availability::Available,
            Ok(abi) => Availability::Unavailable(format!("unexpected Landlock ABI version {abi}")),
            Err(e) => Availability::Unavailable(unavailable_reason(e)),
        }
    }

    fn validate(&self, t: &Treatment) -> Result<()> {
        let rules = t.param_in_range("rules", 1..=10_000)?;
        t.param_in_range("layers", 1..=MAX_LAYERS)?;
        if t.variant != "sandbox" {
            if let Some(k) = SANDBOX_KEYS.iter().find(|k| !param(t, k).is_empty()) {
                crate::usage_bail!(
                    "landlock:{}: {k}= belongs to the sandbox variant (write landlock:{k}=...)",
                    t.variant
                );
            }
            return Ok(());
        }
        if rules != 1 {
            crate::usage_bail!(
                "landlock:sandbox: rules= does not apply (the sandbox's own paths are its rules)"
            );
        }
        let s = sandbox_of(t)?;
        if s.handles_net() {
            let abi = abi_version().unwrap_or(0);
            if abi < NET_ABI {
                crate::usage_bail!(
                    "landlock:sandbox: bind=/connect= need Landlock ABI {NET_ABI} (Linux 6.7); \
                     this kernel has ABI {abi}"
                );
            }
        }
        Ok(())
    }

    fn describe(&self, t: &Treatment) -> Result<Vec<String>> {
        if t.variant != "sandbox" {
            return Ok(Vec::new());
        }
        Ok(vec![
            sandbox_of(t)?.summary(),
            "landlock sandbox: the workload's scratch and data directories are added read-write \
             (built-in workloads make their files there)"
                .to_string(),
        ])
    }

    fn apply_in_worker(&self, t: &Treatment, env: &WorkerEnv) -> Result<()> {
        if t.variant == "sandbox" {
            return apply_sandbox(t, env);
        }
        let rules = t.param_in_range("rules", 1..=10_000)?;
        let layers = t.param_in_range("layers", 1..=MAX_LAYERS)?;
        let abi =
            abi_version().map_err(|e| anyhow::anyhow!("landlock: {}", unavailable_reason(e)))?;
        let handled = fs_rights(abi);
        let ruleset = create_ruleset(handled).context("landlock: creating the ruleset")?;
        for dir in rule_dirs(env, rules - 1)? {
            let fd = open_path(&dir)?;
            let allowed = if is_dir(&fd)? {
                handled
            } else {
                handled & ACCESS_FILE
            };
            add_path_rule(&ruleset, &fd, allowed)
                .with_context(|| format!("landlock: adding a rule for {}", dir.display()))?;
        }
        set_no_new_privs()?;
        for i in 0..layers {
            restrict_self(&ruleset).with_context(|| {
                format!(
                    "landlock: enforcing layer {} of {layers} (E2BIG: the task already has \
                     {MAX_LAYERS} layers in all)",
                    i + 1
                )
            })?;
        }
        Ok(())
    }
}

/// The parameters of the sandbox variant.
const SANDBOX_KEYS: &[&str] = &["ro", "rw", "bind", "connect"];

fn param<'a>(t: &'a Treatment, key: &str) -> &'a str {
    t.params.get(key).map(String::as_str).unwrap_or("")
}

fn sandbox_of(t: &Treatment) -> Result<Sandbox> {
    crate::policy::landlock_sandbox::parse(
        param(t, "ro"),
        param(t, "rw"),
        param(t, "bind"),
        param(t, "connect"),
    )
}

/// The sandbox variant: the sandboxer's rights on the user's paths and
/// ports, plus read-write on the workload's own directories.
fn apply_sandbox(t: &Treatment, env: &WorkerEnv) -> Result<()> {
    let s = sandbox_of(t)?;
    let layers = t.param_in_range("layers", 1..=MAX_LAYERS)?;
    let abi = abi_version().map_err(|e| anyhow::anyhow!("landlock: {}", unavailable_reason(e)))?;
    let fs = fs_rights(abi);
    let mut net = 0;
    if s.bind.is_some() {
        net |= ACCESS_NET_BIND_TCP;
    }
    if s.connect.is_some() {
        net |= ACCESS_NET_CONNECT_TCP;
    }
    let ruleset = create_ruleset_net(fs, net).context("landlock: creating the sandbox ruleset")?;
    let read = ROUGHLY_READ & fs;
    let write = (ROUGHLY_READ | ROUGHLY_WRITE) & fs;
    let own = rule_dirs(env, 0)?;
    let rules =
        s.ro.iter()
            .map(|p| (p, read))
            .chain(s.rw.iter().map(|p| (p, write)))
            .chain(own.iter().map(|p| (p, write)));
    for (path, rights) in rules {
        let fd = open_path(path)?;
        let allowed = if is_dir(&fd)? {
            rights
        } else {
            rights & ACCESS_FILE
        };
        add_path_rule(&ruleset, &fd, allowed)
            .with_context(|| format!("landlock: adding a rule for {}", path.display()))?;
    }
    for (ports, right) in [
        (&s.bind, ACCESS_NET_BIND_TCP),
        (&s.connect, ACCESS_NET_CONNECT_TCP),
    ] {
        for &port in ports.iter().flatten() {
            add_port_rule(&ruleset, port, right)
                .with_context(|| format!("landlock: adding a rule for TCP port {port}"))?;
        }
    }
    set_no_new_privs()?;
    for i in 0..layers {
        restrict_self(&ruleset)
            .with_context(|| format!("landlock: enforcing sandbox layer {} of {layers}", i + 1))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::worker_util::testing::{in_thread, measure_under, measure_under_env};
    use crate::model::Mode;

    fn open_errno(path: &Path) -> Option<i32> {
        std::fs::File::open(path)
            .err()
            .map(|e| e.raw_os_error().unwrap())
    }

    #[test]
    fn rights_by_abi() {
        assert_eq!(fs_rights(1), 0x1fff);
        assert_eq!(fs_rights(2), 0x3fff);
        assert_eq!(fs_rights(3), 0x7fff);
        assert_eq!(fs_rights(4), 0x7fff);
        assert_eq!(fs_rights(5), 0xffff);
        assert_eq!(fs_rights(7), 0xffff);
        assert_eq!(fs_rights(99), 0xffff);
    }

    #[test]
    fn reasons_name_the_fix() {
        let r = unavailable_reason(SysError {
            call: "landlock_create_ruleset(VERSION)",
            errno: libc::EOPNOTSUPP,
        });
        assert!(r.contains("lsm="), "{r}");
        let r = unavailable_reason(SysError {
            call: "x",
            errno: libc::ENOSYS,
        });
        assert!(r.contains("without Landlock"), "{r}");
    }

    #[test]
    fn survey_variants_parse() {
        for v in LANDLOCK.survey_variants() {
            let t = if v.is_empty() {
                Treatment::parse("landlock")
            } else {
                Treatment::parse(&format!("landlock:{v}"))
                    .or_else(|_| Treatment::parse(&format!("landlock,{v}")))
            };
            t.unwrap();
        }
    }

    /// Whether Landlock works here; `test` is skipped if not.
    fn landlock_here(test: &str) -> bool {
        match LANDLOCK.probe() {
            Availability::Available => true,
            Availability::Unavailable(r) => {
                let reason = format!("Landlock unavailable: {r}");
                crate::testing::skip_kernel_feature(test, "landlock", &reason);
                false
            }
        }
    }

    #[test]
    fn sandbox_grants_its_lists_and_denies_the_rest() {
        if !landlock_here("sandbox_grants_its_lists_and_denies_the_rest") {
            return;
        }
        let scratch = tempfile::tempdir().unwrap();
        let ro = tempfile::tempdir().unwrap();
        let rw = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        for d in [ro.path(), rw.path(), outside.path()] {
            std::fs::write(d.join("f"), b"x").unwrap();
        }
        let (s, r, w, o) = (
            scratch.path().to_path_buf(),
            ro.path().to_path_buf(),
            rw.path().to_path_buf(),
            outside.path().to_path_buf(),
        );
        let abi = abi_version().unwrap_or(0);
        let spec = if abi >= NET_ABI {
            format!("landlock:ro={},rw={},connect=1", r.display(), w.display())
        } else {
            format!("landlock:ro={},rw={}", r.display(), w.display())
        };
        let got = in_thread(move || {
            let t = Treatment::parse(&spec).unwrap();
            assert_eq!(t.variant, "sandbox");
            let def = crate::workloads::find("open").unwrap();
            LANDLOCK
                .apply_in_worker(
                    &t,
                    &WorkerEnv {
                        workload: def,
                        scratch: &s,
                        data_dir: None,
                        task: 0,
                    },
                )
                .unwrap();
            let connect = (abi >= NET_ABI).then(|| {
                std::net::TcpStream::connect("127.0.0.1:9")
                    .err()
                    .and_then(|e| e.raw_os_error())
            });
            (
                open_errno(&r.join("f")),
                std::fs::write(r.join("g"), b"y")
                    .err()
                    .and_then(|e| e.raw_os_error()),
                std::fs::write(w.join("g"), b"y").err(),
                open_errno(&o.join("f")),
                std::fs::write(s.join("mine"), b"y").err(),
                connect,
            )
        });
        assert_eq!(got.0, None, "ro: reading is granted");
        assert_eq!(got.1, Some(libc::EACCES), "ro: writing is denied");
        assert!(got.2.is_none(), "rw: writing is granted: {:?}", got.2);
        assert_eq!(got.3, Some(libc::EACCES), "outside: denied");
        assert!(got.4.is_none(), "scratch: granted: {:?}", got.4);
        if let Some(c) = got.5 {
            // Port 9 is not in connect=1: Landlock refuses before any packet.
            assert_eq!(c, Some(libc::EACCES));
        }
    }

    #[test]
    fn sandbox_mistakes_are_usage_errors() {
        use crate::error::exit_code;
        for spec in [
            "landlock:ro=/nonexistent/secperf",
            "landlock:sandbox",
            "landlock:ro=/usr,rules=4",
            "landlock:fs,ro=/usr",
            "landlock:bind=http",
        ] {
            let e = Treatment::parse(spec).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{spec}: {e:#}");
        }
        let t = Treatment::parse("landlock:ro=/usr:/etc,rw=/tmp,layers=2").unwrap();
        assert_eq!(t.to_string(), "landlock:ro=/usr:/etc,layers=2,rw=/tmp");
        assert_eq!(Treatment::parse(&t.to_string()).unwrap().params, t.params);
        let d = LANDLOCK.describe(&t).unwrap();
        assert!(d[0].contains("read-only /usr:/etc"), "{d:?}");
    }

    #[test]
    fn grants_the_workload_dirs_and_denies_the_rest() {
        if !landlock_here("grants_the_workload_dirs_and_denies_the_rest") {
            return;
        }
        let scratch = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let inside = scratch.path().join("task0/d1/file");
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        std::fs::write(&inside, b"x").unwrap();
        std::fs::write(data.path().join("f"), b"x").unwrap();
        std::fs::write(outside.path().join("f"), b"x").unwrap();
        let (s, d, o) = (
            scratch.path().to_path_buf(),
            data.path().to_path_buf(),
            outside.path().to_path_buf(),
        );
        let (r_in, r_data, r_out, r_rule, r_write) = in_thread(move || {
            let t = Treatment::parse("landlock,rules=3,layers=2").unwrap();
            let def = crate::workloads::find("tree_walk").unwrap();
            LANDLOCK
                .apply_in_worker(
                    &t,
                    &WorkerEnv {
                        workload: def,
                        scratch: &s,
                        data_dir: Some(&d),
                        task: 0,
                    },
                )
                .unwrap();
            (
                open_errno(&s.join("task0/d1/file")),
                open_errno(&d.join("f")),
                open_errno(&o.join("f")),
                std::fs::read_dir(s.join("landlock-rules/r2")).err(),
                std::fs::write(s.join("task0/new"), b"y").err(),
            )
        });
        assert_eq!(r_in, None);
        assert_eq!(r_data, None);
        assert_eq!(r_out, Some(libc::EACCES));
        assert!(r_rule.is_none(), "{r_rule:?}");
        assert!(r_write.is_none(), "{r_write:?}");
        // The extra rule directories exist; this thread is unrestricted.
        assert!(scratch.path().join("landlock-rules/r2").is_dir());
        assert!(!scratch.path().join("landlock-rules/r3").exists());
        assert_eq!(open_errno(&outside.path().join("f")), None);
    }

    #[test]
    fn too_many_layers_fail_cleanly() {
        if !landlock_here("too_many_layers_fail_cleanly") {
            return;
        }
        let scratch = tempfile::tempdir().unwrap();
        let s = scratch.path().to_path_buf();
        let (first, second) = in_thread(move || {
            let def = crate::workloads::find("open").unwrap();
            let env = WorkerEnv {
                workload: def,
                scratch: &s,
                data_dir: None,
                task: 0,
            };
            let t = Treatment::parse("landlock,layers=16").unwrap();
            let first = LANDLOCK
                .apply_in_worker(&t, &env)
                .map_err(|e| format!("{e:#}"));
            let t = Treatment::parse("landlock").unwrap();
            let second = LANDLOCK
                .apply_in_worker(&t, &env)
                .map_err(|e| format!("{e:#}"));
            (first, second)
        });
        first.unwrap();
        let e = second.unwrap_err();
        assert!(
            e.contains("landlock_restrict_self: E2BIG") || e.contains("errno 7"),
            "{e}"
        );
        let e = LANDLOCK
            .apply_in_worker(
                &{
                    // Past parse-time validation, to reach the check in the task.
                    let mut t = Treatment::parse("landlock").unwrap();
                    t.params.insert("layers".into(), "17".into());
                    t
                },
                &WorkerEnv {
                    workload: crate::workloads::find("open").unwrap(),
                    scratch: scratch.path(),
                    data_dir: None,
                    task: 0,
                },
            )
            .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
    }

    #[test]
    fn workloads_run_under_landlock() {
        if !landlock_here("workloads_run_under_landlock") {
            return;
        }
        for mode in [Mode::Process, Mode::Thread] {
            for (spec, w, params) in [
                ("landlock", "open", &[][..]),
                ("landlock,rules=8,layers=4", "open", &[("depth", "6")][..]),
                ("landlock", "stat", &[][..]),
                ("landlock,layers=2", "access1", &[][..]),
                (
                    "landlock,rules=3",
                    "tree_walk",
                    &[("dirs", "5"), ("files", "50")][..],
                ),
            ] {
                let r = measure_under(spec, w, params, mode)
                    .unwrap_or_else(|e| panic!("{spec} {w} {mode:?}: {e:#}"));
                assert!(r.ops_per_sec.median > 0.0);
            }
        }
    }

    #[test]
    fn the_sandbox_is_enforced_in_the_runner_tasks() {
        if !landlock_here("the_sandbox_is_enforced_in_the_runner_tasks") {
            return;
        }
        // Without a rule for the tree, the walk is denied: proof that the
        // domain is in force in the task, in both modes.
        for mode in [Mode::Process, Mode::Thread] {
            let params = [("dirs", "5"), ("files", "50")];
            let e = measure_under_env("landlock", "tree_walk", &params, mode, false).unwrap_err();
            let msg = format!("{e:#}");
            assert!(msg.contains("EACCES"), "{mode:?}: {msg}");
        }
    }

    /// Manual timing: `cargo test --release -- --ignored --nocapture
    /// landlock::tests::timing`.
    #[test]
    #[ignore]
    fn timing_open() {
        crate::mechanisms::worker_util::testing::print_timings(
            "open",
            &[],
            &["none", "landlock", "landlock,rules=8", "landlock,layers=4"],
            5,
        );
    }
}
