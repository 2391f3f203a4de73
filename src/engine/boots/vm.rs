//! A measuring command run inside a VM guest (`--vm`): the host boots the
//! kernel with virtme-ng, the guest runs the same secperf binary with the
//! same arguments into a database in a directory shared with the host, and
//! the host copies the finished run into its own store with the VM's facts.
//!
//! The host holds its measurement lock while the guest runs (a guest is a
//! measurement on this machine). The guest changes only the guest: the
//! host's filesystem is read-only there, with copy-on-write overlays, and
//! the shared directory is a new temporary one.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, Result};

use super::guest_request::{GuestRequest, GuestTask};
use crate::engine::ab::counting::Counting;
use crate::error::{Interrupted, UsageError};
use crate::store::Store;
use crate::vm::accel::{self, AccelChoice};
use crate::vm::guest::{self, GuestFacts};
use crate::vm::process::{self, Limits, Stopped};
use crate::vm::{Accel, VmFacts, VmSpec, icount, lsm, vng};

/// The longest a guest may take to start secperf (emulated boots take
/// about 30 s here).
pub const BOOT_LIMIT: Duration = Duration::from_secs(300);

/// What to run in a guest.
#[derive(Debug, Clone)]
pub struct VmRequest {
    pub spec: VmSpec,
    pub accel: AccelChoice,
    /// Limits for the whole guest, boot included, and its console's silence.
    pub timeout: process::Timeouts,
    /// The guest's arguments after the binary (the host's, less the VM,
    /// database and output options).
    pub guest_args: Vec<String>,
    /// The `-m` specs asked for: their LSMs go into `lsm=`.
    pub mechanisms: Vec<String>,
    /// Whether the command stores a run (all but `list`).
    pub stores_run: bool,
    /// How the run counts: with instructions, the guest is booted with
    /// QEMU's icount.
    pub counting: Counting,
}

/// A run the guest measured, now in the host's store.
#[derive(Debug, Clone)]
pub struct GuestRun {
    /// None for a command that stores none (`list`).
    pub run_id: Option<i64>,
    pub facts: VmFacts,
    /// What the guest's secperf printed on stdout.
    pub stdout: String,
}

/// The LSMs the mechanisms of `specs` need at boot.
pub fn boot_lsms(specs: &[String]) -> Vec<&'static str> {
    let mut v = Vec::new();
    for spec in specs {
        let name = spec.split([':', ',']).next().unwrap_or("").trim();
        if let Some(l) = crate::mechanisms::find(name).and_then(|m| m.boot_lsm())
            && !v.contains(&l)
        {
            v.push(l);
        }
    }
    v
}

/// The words secperf adds to the guest's command line for `req`, and a
/// note saying why (None when nothing is added).
pub fn extra_append(req: &VmRequest) -> Result<(Vec<String>, Option<String>)> {
    let wanted = boot_lsms(&req.mechanisms);
    if wanted.is_empty() {
        return Ok((Vec::new(), None));
    }
    if req
        .spec
        .append
        .split_whitespace()
        .any(|w| w.starts_with("lsm="))
    {
        return Ok((
            Vec::new(),
            Some(format!(
                "{} need{} {} in lsm=: your append= sets lsm= itself, so secperf adds none",
                req.mechanisms.join(", "),
                if req.mechanisms.len() == 1 { "s" } else { "" },
                wanted.join(", ")
            )),
        ));
    }
    match lsm::for_image(&req.spec.image, &wanted)? {
        Some((word, from)) => Ok((
            vec![word.clone()],
            Some(format!(
                "booting with {word} (from {from}) for {}",
                wanted.join(", ")
            )),
        )),
        None => Ok((Vec::new(), None)),
    }
}

/// One guest that ran secperf to the end with exit code 0.
pub struct Guest {
    /// The directory it shared with the host (removed when dropped).
    pub shared: tempfile::TempDir,
    pub outcome: process::Outcome,
    /// What the guest's secperf printed on stdout.
    pub stdout: String,
}

/// How to boot: what [`boot`] needs besides the guest's arguments.
pub struct BootSetup<'a> {
    pub spec: &'a VmSpec,
    pub accel: Accel,
    /// Words secperf adds to the command line (`lsm=`).
    pub extra_append: Vec<String>,
    pub vng: &'a Path,
    pub timeout: process::Timeouts,
    /// Set by Ctrl-C.
    pub stop: &'a AtomicBool,
    /// Count instructions with QEMU's icount (`--metric instructions`).
    pub icount: bool,
}

impl BootSetup<'_> {
    /// The VM's facts for a run measured in `guest`.
    pub fn facts(&self, guest: &Guest) -> VmFacts {
        let spec = self.spec;
        VmFacts {
            accel: self.accel,
            vcpus: spec.vcpus(),
            memory: spec.memory(),
            image: std::path::absolute(&spec.image)
                .unwrap_or_else(|_| spec.image.clone())
                .display()
                .to_string(),
            image_sha256: sha256_of(&spec.image),
            append: self
                .extra_append
                .iter()
                .map(String::as_str)
                .chain((!spec.append.is_empty()).then_some(spec.append.as_str()))
                .collect::<Vec<_>>()
                .join(" "),
            boot_s: guest.outcome.boot_s,
            wall_s: guest.outcome.wall_s,
            guest: GuestFacts::load(guest.shared.path()).unwrap_or_default(),
            icount: self.icount.then(icount::QemuFacts::host),
            stamps: None,
        }
    }
}

/// How many times a boot is made again after the emulator itself failed
/// (see [`emulator_failure`]), before the boot is an error.
pub const EMULATOR_FAILURE_RETRIES: usize = 2;

/// Boots a guest that runs this secperf binary with `guest_args` and
/// `task` as its request ([`super::guest_request`], written to the shared
/// directory before it boots), its database and state in the guest
/// (`guest.db` in the shared directory), and waits for it. A guest that does not boot, or whose secperf fails,
/// is an error (exit code 2 for a boot that fails or a command the guest
/// refused, with the console's tail).
///
/// When QEMU itself fails (an assertion of its device models, which under
/// emulation is seen now and then early in a boot, depending on where
/// KASLR put the kernel), the guest measured nothing and nothing of it is
/// kept: the same boot is made again, up to [`EMULATOR_FAILURE_RETRIES`]
/// times, saying so.
pub fn boot(setup: &BootSetup, guest_args: &[String], task: &GuestTask) -> Result<Guest> {
    with_emulator_retries(
        || boot_once(setup, guest_args, task),
        |line, next| {
            crate::say!(
                "secperf: warning: QEMU itself failed during a boot ({line}): a fault of the \
                 emulator, not of the guest's kernel; nothing of that boot is kept; booting \
                 again (try {next} of {})",
                EMULATOR_FAILURE_RETRIES + 1
            )
        },
    )
}

/// A boot that ended because the emulator failed: its line, and the error
/// to give when no try is left.
pub struct EmulatorFailed {
    pub line: String,
    pub error: anyhow::Error,
}

/// Runs `attempt` until it does not end with the emulator failing, at most
/// [`EMULATOR_FAILURE_RETRIES`] times more; `warn(line, next_try)` before
/// each new try.
fn with_emulator_retries<T>(
    mut attempt: impl FnMut() -> Result<std::result::Result<T, EmulatorFailed>>,
    mut warn: impl FnMut(&str, usize),
) -> Result<T> {
    let mut tries = 1;
    loop {
        match attempt()? {
            Ok(v) => return Ok(v),
            Err(failed) if tries <= EMULATOR_FAILURE_RETRIES => {
                tries += 1;
                warn(&failed.line, tries);
            }
            Err(failed) => {
                return Err(failed.error.context(format!(
                    "QEMU itself failed in each of {tries} tries of this boot (the last: {}); \
                     a fault of the emulator, not of the guest's kernel: try a newer QEMU, or \
                     run again",
                    failed.line
                )));
            }
        }
    }
}

/// The console line saying that QEMU itself failed (an assertion or an
/// abort of the emulator process), if any. QEMU's warnings do not count.
pub fn emulator_failure(console_tail: &[String]) -> Option<&str> {
    console_tail.iter().map(|l| l.trim()).find(|l| {
        l.starts_with("qemu-system-")
            && ((l.contains("Assertion") && l.ends_with("failed."))
                || l.contains("Aborted")
                || l.contains("core dumped"))
    })
}

/// One boot (see [`boot`]); `Ok(Err(_))` when the emulator failed.
fn boot_once(
    setup: &BootSetup,
    guest_args: &[String],
    task: &GuestTask,
) -> Result<std::result::Result<Guest, EmulatorFailed>> {
    let shared = tempfile::Builder::new()
        .prefix("secperf-vm-")
        .tempdir()
        .context("creating the directory shared with the guest")?;
    // What the guest is to do, and whether its clock counts instructions
    // (it checks so before anything runs).
    GuestRequest {
        version: super::guest_request::VERSION,
        icount: setup.icount,
        task: task.clone(),
    }
    .write(shared.path())?;
    let me = std::env::current_exe().context("finding secperf's own binary for the guest")?;
    let argv: Vec<String> = std::iter::once(me.display().to_string())
        .chain(guest_args.iter().cloned())
        .collect();
    let shared_path = shared.path().display().to_string();
    let env = vec![
        (guest::GUEST_ENV.to_string(), shared_path.clone()),
        (
            crate::store::DB_ENV_VAR.to_string(),
            format!("{shared_path}/guest.db"),
        ),
        // The guest's lock and journal stay in the guest (its /tmp is a
        // copy-on-write overlay).
        (
            "SECPERF_STATE_DIR".to_string(),
            "/tmp/secperf-guest-state".to_string(),
        ),
        // Fixtures kept across runs (the walk tree) go where the guest
        // can write: $HOME may be read-only there.
        (
            "XDG_CACHE_HOME".to_string(),
            "/tmp/secperf-guest-cache".to_string(),
        ),
    ];
    let args = vng::args(&vng::Boot {
        spec: setup.spec,
        accel: setup.accel,
        extra_append: setup.extra_append.clone(),
        shared: shared.path(),
        argv,
        env,
        icount: setup.icount,
    });
    let limits = Limits {
        boot: BOOT_LIMIT.min(setup.timeout.total),
        total: setup.timeout.total,
        silent_boot: setup.timeout.silent_boot,
        silent: process::SILENT.max(setup.timeout.silent_boot),
    };
    let outcome = match process::run(setup.vng, &args, limits, setup.stop)? {
        Ok(o) => o,
        Err((why, tail)) => return Err(stopped_error(why, &tail, limits)),
    };
    let rc = std::fs::read_to_string(shared.path().join("rc"))
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let stdout = std::fs::read_to_string(shared.path().join("stdout")).unwrap_or_default();
    match rc {
        None => {
            let failed = emulator_failure(&outcome.console_tail).map(str::to_string);
            let error = UsageError::new(format!(
                "the guest did not run secperf: virtme-ng exited with code {} after {:.1} s ({}); \
                 its console ended with:\n{}",
                outcome.vng_code,
                outcome.wall_s,
                if failed.is_some() {
                    "QEMU itself failed"
                } else if outcome.console_tail.iter().any(|l| l.contains("busybox")) {
                    "virtme-ng found no busybox for its initramfs: `apt-get install busybox-static`"
                } else {
                    "check the image, and append= such as init= or root="
                },
                console(&outcome.console_tail)
            ))
            .into();
            match failed {
                Some(line) => Ok(Err(EmulatorFailed { line, error })),
                None => Err(error),
            }
        }
        Some(0) => Ok(Ok(Guest {
            shared,
            outcome,
            stdout,
        })),
        Some(130) => Err(anyhow::Error::new(Interrupted).context("the guest's secperf")),
        Some(2) => Err(UsageError::new(
            "the guest's secperf refused its arguments (its message is above)".to_string(),
        )
        .into()),
        Some(code) => Err(anyhow::anyhow!(
            "the guest's secperf failed with exit code {code} (its message is above)"
        )),
    }
}

/// The accelerator for `choice` and `counting` (with its warning printed)
/// and vng. Instructions are counted under emulation whatever the host
/// offers (QEMU's icount runs under TCG only); `--vm-accel kvm` with them
/// is a usage error.
pub fn resolve_engine(
    choice: AccelChoice,
    counting: Counting,
) -> Result<(Accel, std::path::PathBuf)> {
    let accel = match counting.boots_with_icount() {
        true => accel_for_instructions(choice)?,
        false => {
            let (accel, warning) = accel::resolve(choice, Path::new("/"))?;
            if let Some(w) = warning {
                crate::say!("secperf: warning: {w}");
            }
            accel
        }
    };
    Ok((accel, vng::find()?))
}

/// Emulation, for counting instructions; a usage error for `kvm`.
pub fn accel_for_instructions(choice: AccelChoice) -> Result<Accel> {
    if choice == AccelChoice::Kvm {
        crate::usage_bail!(
            "--metric instructions counts with QEMU's icount, which runs under emulation (TCG) \
             only, not KVM: leave out --vm-accel kvm, or measure time under KVM (leave out \
             --metric instructions)"
        );
    }
    crate::say!(
        "secperf: counting instructions: the guest runs under QEMU's emulation with `{}`, its \
         clock counting one ns per instruction; every figure is instructions per operation",
        icount::QEMU_OPTS
    );
    Ok(Accel::Emulated)
}

/// Boots the guest, runs the command in it, and copies its run into the
/// store at `db_path`. `host_argv` is the host's command line (stored with
/// the run, with the seed the guest chose).
pub fn measure_in_guest(
    req: &VmRequest,
    db_path: &Path,
    host_argv: &[String],
    no_wait: bool,
) -> Result<GuestRun> {
    let (accel, vng_path) = resolve_engine(req.accel, req.counting)?;
    let (extra, note) = extra_append(req)?;
    if let Some(n) = note {
        crate::say!("secperf: {n}");
    }
    let mut store = Store::open(db_path)?;
    let _measuring = crate::engine::session::measurement_lock(no_wait)?;
    // Ctrl-C stops the guest (the guard kills it); a second one exits at
    // once, and the guard does the same.
    let stop = crate::engine::session::interrupt_flag()?;
    let setup = BootSetup {
        spec: &req.spec,
        accel,
        extra_append: extra,
        vng: &vng_path,
        timeout: req.timeout,
        stop: &stop,
        icount: req.counting.boots_with_icount(),
    };
    crate::say!("secperf: {}", booting_line(&setup));
    let guest = boot(&setup, &req.guest_args, &GuestTask::Command)?;
    let facts = setup.facts(&guest);
    if !req.stores_run {
        return Ok(GuestRun {
            run_id: None,
            facts,
            stdout: guest.stdout,
        });
    }
    let guest_db = guest.shared.path().join("guest.db");
    let Some(&guest_run) = Store::runs_in(&guest_db)?.last() else {
        anyhow::bail!(
            "the guest's secperf stored no run in {}",
            guest_db.display()
        );
    };
    let guest_store = Store::open_read_only(&guest_db)?;
    let stored = guest_store.load_run(guest_run)?;
    drop(guest_store);
    // Every stored time is the host's: the guest's clock counts
    // instructions under icount, and runs ahead of the host's.
    let outcome = &guest.outcome;
    let host = crate::store::HostSpan {
        started_at: outcome.host_started_at,
        inner_from: outcome.host_started_at
            + chrono::Duration::nanoseconds((outcome.boot_s.unwrap_or(0.0) * 1e9) as i64),
        finished_at: outcome.host_finished_at,
    };
    let mut facts = facts;
    facts.stamps = Some(crate::vm::Stamps::Host {
        guest: Some(crate::vm::GuestClock {
            started_at: stored.meta.started_at,
            finished_at: stored.finished_at,
        }),
    });
    let mut system = stored.meta.system.clone();
    if let Some(o) = system.as_object_mut() {
        o.insert("vm".into(), serde_json::to_value(&facts)?);
    }
    let command = crate::engine::session::reproducible_command_line_of(
        host_argv.to_vec(),
        seed_of(&stored.meta.command),
    );
    let run_id = store.import_run(
        &guest_db,
        guest_run,
        Some(&command),
        Some(&system),
        Some(host),
    )?;
    Ok(GuestRun {
        run_id: Some(run_id),
        facts,
        stdout: guest.stdout,
    })
}

/// "booting IMAGE (emulated, 2 vCPUs, 2G)...".
pub fn booting_line(setup: &BootSetup) -> String {
    format!(
        "booting {} ({}{}, {} vCPUs, {}){}",
        setup.spec.image.display(),
        setup.accel,
        if setup.icount { " with icount" } else { "" },
        setup.spec.vcpus(),
        setup.spec.memory(),
        if setup.accel == Accel::Emulated {
            "; 10 to 30 s to boot under emulation"
        } else {
            ""
        }
    )
}

/// The `--seed N` of a stored command line.
fn seed_of(command: &str) -> Option<u64> {
    let words = shell_words::split(command).ok()?;
    let i = words.iter().position(|w| w == "--seed")?;
    words.get(i + 1)?.parse().ok()
}

fn sha256_of(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(crate::policy::source::sha256_hex(&bytes))
}

fn console(tail: &[String]) -> String {
    if tail.is_empty() {
        return "  (nothing)".into();
    }
    tail.iter()
        .map(|l| match l.char_indices().nth(240) {
            Some((i, _)) => format!("  | {}...", &l[..i]),
            None => format!("  | {l}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn stopped_error(why: Stopped, tail: &[String], limits: Limits) -> anyhow::Error {
    match why {
        Stopped::Interrupted => anyhow::Error::new(Interrupted)
            .context("stopped the guest (its QEMU is gone; nothing of it was stored)"),
        Stopped::BootTimeout => UsageError::new(format!(
            "the guest did not start secperf within {} s, and was stopped; its console ended \
             with:\n{}",
            limits.boot.as_secs(),
            console(tail)
        ))
        .into(),
        Stopped::Silent { for_s, booting } => UsageError::new(format!(
            "the guest's console printed nothing for {for_s} s {}, and the guest was stopped (its \
             QEMU is gone; nothing of it was stored); {}; its console ended with:\n{}",
            if booting {
                "while it booted"
            } else {
                "while secperf ran in it"
            },
            if booting {
                "a kernel prints within seconds of its start, so the image may not boot (check \
                 it with `file IMAGE`: a bzImage reads \"Linux kernel x86 boot executable\"), or \
                 the kernel hangs early (try append=earlyprintk=serial)"
            } else {
                "secperf in the guest prints a line at least every round, so it hangs"
            },
            console(tail)
        ))
        .into(),
        Stopped::Timeout => anyhow::anyhow!(
            "the guest ran past --vm-timeout ({} s) and was stopped; nothing of it was stored; \
             its console ended with:\n{}",
            limits.total.as_secs(),
            console(tail)
        ),
    }
}

/// In a guest, before the command runs: records the kernel's facts in the
/// shared directory and, where SELinux runs with no policy, loads the
/// allow-all policy so that its access vector cache is consulted. Does
/// nothing outside a guest.
pub fn prepare_guest() -> Result<()> {
    let Some(shared) = guest::shared_dir() else {
        return Ok(());
    };
    let mut facts = GuestFacts::read();
    let request = super::guest_request::of_this_guest()?;
    if request.is_some_and(|r| r.icount) {
        // Booted to count instructions: the clock must count them, or
        // every figure would be time labelled as instructions.
        let readings = icount::read()?;
        icount::judge(&readings).map_err(crate::error::UsageError::new)?;
        facts.prepared.push(icount::checked_line(&readings));
    }
    let lsms = std::fs::read_to_string("/sys/kernel/security/lsm").unwrap_or_default();
    if lsms.split(',').any(|l| l.trim() == "selinux") {
        use crate::mechanisms::selinux_policy as policy;
        policy::mount_selinuxfs()?;
        if !policy::policy_loaded(Path::new(policy::SELINUXFS)) {
            let dir = tempfile::tempdir().context("a directory for the SELinux policy")?;
            let bytes = policy::compile(dir.path())?;
            policy::load(&bytes)?;
            facts.prepared.push(
                "SELinux ran with no policy: secperf loaded its allow-all policy (one type, \
                 everything allowed; the access vector cache is consulted on every hook)"
                    .into(),
            );
        }
    }
    facts
        .write(&shared)
        .with_context(|| format!("writing {}", shared.join(guest::FACTS_FILE).display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSIX: &str = "qemu-system-x86_64: ../../hw/pci/msix.c:218: msix_table_mmio_write: \
                        Assertion `addr + size <= dev->msix_entries_nr * PCI_MSIX_ENTRY_SIZE' failed.";

    #[test]
    fn an_assertion_of_qemu_is_the_emulator_failing_and_its_warnings_are_not() {
        let tail = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        // The console of CI's failed boot (2026-12-03), its last lines.
        let seen = tail(&[
            "[    0.000000] printk: bootconsole [earlyser0] enabled",
            "Memory KASLR using RDRAND RDTSC...",
            "Poking KASLR using RDRAND RDTSC...",
            MSIX,
        ]);
        assert_eq!(emulator_failure(&seen), Some(MSIX));
        for not_one in [
            "qemu-system-x86_64: warning: host doesn't support requested feature",
            "[    1.2] kernel BUG at mm/slub.c:42! Assertion failed.",
            "Kernel panic - not syncing: VFS: Unable to mount root fs",
        ] {
            assert_eq!(emulator_failure(&tail(&[not_one])), None, "{not_one}");
        }
    }

    fn failed() -> EmulatorFailed {
        EmulatorFailed {
            line: MSIX.into(),
            error: UsageError::new("the guest did not run secperf".to_string()).into(),
        }
    }

    #[test]
    fn a_boot_is_made_again_after_the_emulator_failed_and_at_most_twice_more() {
        // Fails once, then boots: one warning, the boot's result.
        let mut calls = 0;
        let mut warned = Vec::new();
        let got = with_emulator_retries(
            || {
                calls += 1;
                Ok(if calls == 1 { Err(failed()) } else { Ok(calls) })
            },
            |line, next| warned.push((line.to_string(), next)),
        )
        .unwrap();
        assert_eq!(got, 2);
        assert_eq!(warned, vec![(MSIX.to_string(), 2)]);

        // Fails every time: three tries, then the last boot's error, still
        // a usage error (exit 2), saying what happened.
        let mut calls = 0;
        let mut warned = Vec::new();
        let err = with_emulator_retries::<()>(
            || {
                calls += 1;
                Ok(Err(failed()))
            },
            |_, next| warned.push(next),
        )
        .unwrap_err();
        assert_eq!(calls, EMULATOR_FAILURE_RETRIES + 1);
        assert_eq!(warned, vec![2, 3]);
        let text = format!("{err:#}");
        assert!(
            text.contains("QEMU itself failed in each of 3 tries"),
            "{text}"
        );
        assert!(text.contains("the guest did not run secperf"), "{text}");
        assert!(err.downcast_ref::<UsageError>().is_some());

        // Any other error is not retried.
        let mut calls = 0;
        let err = with_emulator_retries::<()>(
            || {
                calls += 1;
                Err(anyhow::anyhow!(
                    "the guest's secperf failed with exit code 1"
                ))
            },
            |_, _| panic!("no retry"),
        )
        .unwrap_err();
        assert_eq!(calls, 1);
        assert!(err.to_string().contains("exit code 1"));
    }
}
