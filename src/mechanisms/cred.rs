//! `cred`: the cost of `access()` when the kernel must really override
//! credentials, the reviewer's question on the access-2023 experiment.
//!
//! access(2) / faccessat(2) (`do_faccessat` in fs/open.c) check with the
//! real uid/gid, not the effective ones. Since Linux 6.3 (Mateusz Guzik,
//! "vfs: avoid duplicating creds in faccessat if possible") the kernel
//! first asks `access_need_override_creds()` whether the real-id
//! credentials would differ from the current ones, and only then takes
//! `access_override_creds()`: `prepare_creds()` (allocate and copy a
//! `struct cred`, take references on the user namespace, groups and keys,
//! and run every LSM's `cred_prepare` hook), `override_creds()`, and after
//! the lookup `revert_creds()` + `put_cred()` (`security_cred_free`, the
//! reference drops, the free). Experiment 003 measured access1 on the
//! skipping path, where that work is gone; it did not say what it costs
//! the tasks that still take it: setuid programs, file servers that switch
//! fsuid per request, root services running with a reduced effective
//! capability set.
//!
//! `access_need_override_creds()` returns true when fsuid != uid or
//! fsgid != gid; otherwise (unless SECURE_NO_SETUID_FIXUP is set) when a
//! non-root task has any effective capability, or when root's effective
//! set differs from its permitted set. Each variant forces exactly one of
//! these branches in the task, as root, and checks afterwards (from
//! /proc/thread-self/status) that the condition holds:
//!
//! - `fsuid` (default): `setfsuid(uid)` (param `uid`, default 65534), so
//!   fsuid != uid. Leaving fsuid 0 also drops the filesystem capabilities
//!   from the effective set (`cap_task_fix_setuid`); they are raised back
//!   (capset, effective = permitted) so that only the fsuid differs and the
//!   task can still open its own (root-owned, 0700) scratch files in any
//!   workload.
//! - `caps`: drops one capability no workload uses (CAP_SYS_BOOT, or the
//!   first present of a few others) from the effective set only, so
//!   root's effective set != permitted set.
//!
//! Both are per thread (raw setfsuid/capset, not glibc's process-wide
//! broadcast), so they work for task processes and task threads alike.
//! As non-root neither can be forced without also changing the baseline:
//! making fsuid differ needs CAP_SETUID, and an unprivileged task holding
//! any effective capability already takes the override path in both arms;
//! the probe reports this.

use anyhow::{Context, Result, bail};

use super::worker_util::{status_field, thread_status};
use super::{Availability, Mechanism, Scope, Treatment, VariantDef, WorkerEnv};
use crate::params::ParamDef;
use crate::sys::caps::{capget, capset, setfsuid};
use crate::sys::{SysError, check_int};

pub struct Cred;
pub static CRED: Cred = Cred;

/// `SECBIT_NO_SETUID_FIXUP` in the securebits.
const SECBIT_NO_SETUID_FIXUP: libc::c_int = 1 << 2;

/// Capabilities no workload needs, in the order `caps` tries to drop them:
/// CAP_SYS_BOOT, CAP_SYS_TTY_CONFIG, CAP_WAKE_ALARM, CAP_BLOCK_SUSPEND.
const DROP_CANDIDATES: &[u32] = &[22, 26, 35, 36];

/// The credentials `access_need_override_creds()` looks at, of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredState {
    /// Real, effective, saved and filesystem uid.
    pub uid: [u32; 4],
    pub gid: [u32; 4],
    pub cap_eff: u64,
    pub cap_prm: u64,
    pub no_setuid_fixup: bool,
}

impl CredState {
    /// Parses the `Uid:`, `Gid:`, `CapEff:` and `CapPrm:` lines of a
    /// status file.
    pub fn parse(status: &str, no_setuid_fixup: bool) -> Result<CredState> {
        let ids = |key: &str| -> Result<[u32; 4]> {
            let v = status_field(status, key).with_context(|| format!("no {key} line"))?;
            let n: Vec<u32> = v
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .with_context(|| format!("{key} {v:?}"))?;
            n.try_into()
                .map_err(|_| anyhow::anyhow!("{key} {v:?}: expected 4 ids"))
        };
        let caps = |key: &str| -> Result<u64> {
            let v = status_field(status, key).with_context(|| format!("no {key} line"))?;
            u64::from_str_radix(v, 16).with_context(|| format!("{key} {v:?}"))
        };
        Ok(CredState {
            uid: ids("Uid")?,
            gid: ids("Gid")?,
            cap_eff: caps("CapEff")?,
            cap_prm: caps("CapPrm")?,
            no_setuid_fixup,
        })
    }

    /// The calling thread's.
    pub fn current() -> Result<CredState> {
        // SAFETY: PR_GET_SECUREBITS takes no pointers and returns the bits.
        let bits = unsafe { libc::prctl(libc::PR_GET_SECUREBITS, 0, 0, 0, 0) };
        let bits = check_int("prctl(PR_GET_SECUREBITS)", bits)?;
        CredState::parse(&thread_status()?, bits & SECBIT_NO_SETUID_FIXUP != 0)
            .context("parsing /proc/thread-self/status")
    }

    /// fs/open.c `access_need_override_creds(0)`: whether access() takes
    /// the prepare/override/revert path. uid 0 is root of this namespace.
    pub fn access_overrides(&self) -> bool {
        if self.uid[3] != self.uid[0] || self.gid[3] != self.gid[0] {
            return true;
        }
        if self.no_setuid_fixup {
            return false;
        }
        if self.uid[0] != 0 {
            self.cap_eff != 0
        } else {
            self.cap_eff != self.cap_prm
        }
    }
}

/// Sets the calling thread's effective set to `eff` (within permitted).
fn set_effective(eff: u64) -> Result<(), SysError> {
    let mut data = capget()?;
    data[0].effective = eff as u32;
    data[1].effective = (eff >> 32) as u32;
    capset(&data)
}

/// The calling thread's fsuid: setfsuid(-1) changes nothing (an invalid
/// id) and returns the current value.
fn current_fsuid() -> u32 {
    setfsuid(u32::MAX)
}

/// The reason this task cannot run the treatment, if any (`None`: it can).
fn unavailable_reason(s: &CredState) -> Option<String> {
    if s.uid[0] != 0 {
        return Some(
            "needs root: as non-root, making fsuid differ from uid needs CAP_SETUID, and any \
             effective capability already makes access() override credentials in both arms"
                .into(),
        );
    }
    if s.access_overrides() {
        return Some(format!(
            "access() already overrides credentials here without the mechanism (uid {:?}, gid \
             {:?}, CapEff {:016x} vs CapPrm {:016x}): both arms would take the same path",
            s.uid, s.gid, s.cap_eff, s.cap_prm
        ));
    }
    None
}

fn apply_fsuid(t: &Treatment, before: &CredState) -> Result<()> {
    let target = t.param_in_range("uid", 1..=u64::from(u32::MAX - 1))? as u32;
    setfsuid(target);
    let now = current_fsuid();
    if now != target {
        bail!(
            "cred: setfsuid({target}) did not take effect (fsuid stays {now}): it needs \
             CAP_SETUID and a uid mapped in this user namespace; choose another with uid=N"
        );
    }
    // Leaving fsuid 0 cleared the filesystem capabilities from the
    // effective set; raise them back so only the fsuid differs.
    if !before.no_setuid_fixup {
        set_effective(before.cap_eff).context("cred: restoring the effective capabilities")?;
    }
    Ok(())
}

fn apply_caps(before: &CredState) -> Result<()> {
    if before.no_setuid_fixup {
        bail!(
            "cred:caps: SECURE_NO_SETUID_FIXUP is set, so access() ignores capabilities; use \
             cred:fsuid"
        );
    }
    let Some(cap) = DROP_CANDIDATES
        .iter()
        .copied()
        .chain(0..64)
        .find(|&c| before.cap_eff & (1u64 << c) != 0)
    else {
        bail!("cred:caps: the effective capability set is empty; nothing to drop");
    };
    set_effective(before.cap_eff & !(1u64 << cap))
        .with_context(|| format!("cred: dropping capability {cap} from the effective set"))?;
    Ok(())
}

impl Mechanism for Cred {
    fn name(&self) -> &'static str {
        "cred"
    }
    fn description(&self) -> &'static str {
        "tasks run with credentials access() must override (fsuid != uid, or root with a reduced effective set): the access-2023 experiment's slow path"
    }
    fn scope(&self) -> Scope {
        Scope::Worker
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[
            VariantDef {
                name: "fsuid",
                description: "fsuid differs from the real uid (setfsuid; effective capabilities kept)",
            },
            VariantDef {
                name: "caps",
                description: "root with one capability dropped from the effective set only",
            },
        ]
    }
    fn params(&self) -> &'static [ParamDef] {
        &[ParamDef {
            name: "uid",
            default: "65534",
            help: "the fsuid the fsuid variant switches to (must differ from the real uid 0)",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["access1", "access2"]
    }
    fn survey_variants(&self) -> &'static [&'static str] {
        &["", "caps"]
    }
    fn probe(&self) -> Availability {
        match CredState::current() {
            Ok(s) => match unavailable_reason(&s) {
                None => Availability::Available,
                Some(r) => Availability::Unavailable(r),
            },
            Err(e) => Availability::Unavailable(format!("unavailable: {e:#}")),
        }
    }

    fn validate(&self, t: &Treatment) -> Result<()> {
        t.param_in_range("uid", 1..=u64::from(u32::MAX - 1))
            .map(|_| ())
    }

    fn apply_in_worker(&self, t: &Treatment, _env: &WorkerEnv) -> Result<()> {
        let before = CredState::current()?;
        if let Some(r) = unavailable_reason(&before) {
            bail!("cred: {r}");
        }
        if t.variant == "caps" {
            apply_caps(&before)?;
        } else {
            apply_fsuid(t, &before)?;
        }
        let after = CredState::current()?;
        if !after.access_overrides() {
            bail!(
                "cred: credentials changed but access() would still skip the override: {after:?}"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::worker_util::testing::{in_thread, measure_under};
    use crate::model::Mode;

    const ROOT: &str = "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nCapPrm:\t000001ffffffffff\n\
                        CapEff:\t000001ffffffffff\n";

    #[test]
    fn mirrors_access_need_override_creds() {
        let root = CredState::parse(ROOT, false).unwrap();
        assert!(!root.access_overrides());
        assert_eq!(unavailable_reason(&root), None);
        let mut s = root;
        s.uid[3] = 65534;
        assert!(s.access_overrides());
        let mut s = root;
        s.gid[3] = 5;
        assert!(s.access_overrides());
        let mut s = root;
        s.cap_eff &= !(1 << 22);
        assert!(s.access_overrides());
        s.no_setuid_fixup = true;
        assert!(!s.access_overrides());
        let user = CredState::parse(
            "Uid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\nCapPrm:\t0\nCapEff:\t0\n",
            false,
        )
        .unwrap();
        assert!(!user.access_overrides());
        assert!(unavailable_reason(&user).unwrap().starts_with("needs root"));
        let mut s = user;
        s.cap_eff = 1 << 7;
        assert!(s.access_overrides());
        let mut s = root;
        s.cap_eff = 0;
        assert!(
            unavailable_reason(&s)
                .unwrap()
                .contains("already overrides")
        );
        assert!(CredState::parse("Uid:\t0\t0\n", false).is_err());
    }

    #[test]
    fn survey_variants_parse() {
        for v in CRED.survey_variants() {
            let spec = if v.is_empty() {
                "cred".into()
            } else {
                format!("cred:{v}")
            };
            Treatment::parse(&spec).unwrap();
        }
        assert_eq!(Treatment::parse("cred").unwrap().variant, "fsuid");
    }

    /// Whether `test` can change credentials here; skipped if not.
    fn root_here(test: &str) -> bool {
        if !crate::testing::root_or_skip(test, "overriding credentials") {
            return false;
        }
        if let Availability::Unavailable(r) = CRED.probe() {
            crate::testing::skip_kernel_feature(test, "cred", &r);
            return false;
        }
        true
    }

    #[test]
    fn variants_force_the_override_in_the_thread_only() {
        if !root_here("variants_force_the_override_in_the_thread_only") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        // Root-owned, unreadable to others: access(R_OK) checks the real
        // uid (root), open the fsuid (kept working by DAC_OVERRIDE).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        for spec in ["cred", "cred:caps", "cred:fsuid,uid=1234"] {
            let f = file.clone();
            let d = dir.path().to_path_buf();
            let (state, access, open) = in_thread(move || {
                let t = Treatment::parse(spec).unwrap();
                let def = crate::workloads::find("access1").unwrap();
                CRED.apply_in_worker(
                    &t,
                    &WorkerEnv {
                        workload: def,
                        scratch: &d,
                        data_dir: None,
                        task: 0,
                    },
                )
                .unwrap();
                let c = crate::sys::cstring(&f);
                // SAFETY: c is a valid NUL-terminated path.
                let access = unsafe { libc::access(c.as_ptr(), libc::R_OK) };
                (
                    CredState::current().unwrap(),
                    access,
                    std::fs::read(&f).is_ok(),
                )
            });
            assert!(state.access_overrides(), "{spec}: {state:?}");
            assert_eq!(access, 0, "{spec}");
            assert!(open, "{spec}");
            match spec {
                "cred" => {
                    assert_eq!(state.uid[3], 65534);
                    assert_eq!(state.cap_eff, state.cap_prm);
                }
                "cred:fsuid,uid=1234" => assert_eq!(state.uid[3], 1234),
                _ => {
                    assert_eq!(state.uid[3], 0);
                    assert_ne!(state.cap_eff, state.cap_prm);
                    assert_eq!(
                        state.cap_prm & !state.cap_eff,
                        1 << 22,
                        "CAP_SYS_BOOT dropped"
                    );
                }
            }
        }
        // This thread is untouched.
        assert!(!CredState::current().unwrap().access_overrides());
        let e = CRED
            .apply_in_worker(
                &{
                    // Past parse-time validation, to reach the check in the task.
                    let mut t = Treatment::parse("cred").unwrap();
                    t.params.insert("uid".into(), "0".into());
                    t
                },
                &WorkerEnv {
                    workload: crate::workloads::find("access1").unwrap(),
                    scratch: dir.path(),
                    data_dir: None,
                    task: 0,
                },
            )
            .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
    }

    #[test]
    fn workloads_run_with_overridden_credentials() {
        if !root_here("workloads_run_with_overridden_credentials") {
            return;
        }
        for mode in [Mode::Process, Mode::Thread] {
            for (spec, w) in [
                ("cred", "access1"),
                ("cred:caps", "access1"),
                ("cred", "access2"),
                ("cred", "open"),
            ] {
                let r = measure_under(spec, w, &[], mode)
                    .unwrap_or_else(|e| panic!("{spec} {w} {mode:?}: {e:#}"));
                assert!(r.ops_per_sec.median > 0.0);
            }
        }
    }

    /// Manual timing: `cargo test --release -- --ignored --nocapture
    /// cred::tests::timing`.
    #[test]
    #[ignore]
    fn timing_access1() {
        if !root_here("timing_access1") {
            return;
        }
        crate::mechanisms::worker_util::testing::print_timings(
            "access1",
            &[],
            &["none", "cred", "cred:caps"],
            5,
        );
    }
}
