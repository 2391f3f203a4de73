//! `--vm` on the measuring commands: the options, and the relay that runs
//! the same command in a guest (`engine::boots::vm`) and shows the run it stored.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::engine::boots::vm::{VmRequest, measure_in_guest};
use crate::report::sections::Parts;
use crate::vm::accel::AccelChoice;
use crate::vm::process::Timeouts;

/// Where a measuring command runs (`run`, `overhead`, `suite`, `calibrate`).
#[derive(Debug, Args)]
pub struct VmArgs {
    /// Run in a VM guest of this kernel image: booted with virtme-ng (the
    /// host's filesystem read-only, copy-on-write; the same secperf
    /// binary), its run stored here. append= takes the rest of
    /// the value (commas included); --vm adds the lsm= that -m selinux,
    /// apparmor or bpf-lsm need. cpus: vCPUs [default: up to 2]; memory:
    /// QEMU's size syntax [default: 2G].
    #[arg(long, value_name = "IMAGE[,KEY=V...]")]
    pub vm: Option<String>,

    /// The guest's accelerator: kvm, emulated (QEMU's TCG; every figure is
    /// then marked as not real hardware's), or auto (KVM where the host
    /// can run a full guest, else emulated with a warning).
    /// [default: auto]
    #[arg(long, value_enum, value_name = "ACCEL")]
    pub vm_accel: Option<AccelChoice>,

    /// Stop a guest after SECONDS, boot included [default: 7200]. The
    /// command then fails.
    #[arg(long, value_name = "SECONDS")]
    pub vm_timeout: Option<u64>,

    /// Stop a guest silent this long while booting [default: 120]. That is
    /// a guest whose console prints nothing for SECONDS. A kernel prints within seconds of its start under emulation,
    /// so a silent guest is a file QEMU cannot boot or a kernel that hangs
    /// early; the error shows the console's last lines. Once secperf runs
    /// in the guest it prints a line at least every round, and the guest
    /// is stopped after 900 s of silence (or this, if longer). Seconds.
    #[arg(long, value_name = "SECONDS")]
    pub vm_silence: Option<u64>,
}

/// The default of --vm-timeout, seconds.
pub const DEFAULT_TIMEOUT_S: u64 = crate::engine::series::GUEST_TIMEOUT_S;

impl VmArgs {
    /// The accelerator and the per-guest limit, checked; `booting` says
    /// whether this command boots a guest (--vm, or `overhead --kernel`):
    /// the VM options mean nothing otherwise.
    pub fn resolve(&self, booting: bool) -> Result<(AccelChoice, Timeouts)> {
        if !booting
            && (self.vm_accel.is_some() || self.vm_timeout.is_some() || self.vm_silence.is_some())
        {
            crate::usage_bail!(
                "--vm-accel, --vm-timeout and --vm-silence apply to a guest: add --vm IMAGE (or, on \
                 overhead, --kernel NAME=IMAGE twice)"
            );
        }
        let timeout = self.vm_timeout.unwrap_or(DEFAULT_TIMEOUT_S);
        if timeout == 0 {
            crate::usage_bail!("--vm-timeout 0: give the seconds a guest may take (e.g. 3600)");
        }
        let silent_boot = match self.vm_silence {
            None => crate::vm::process::SILENT_BOOT,
            Some(0) => crate::usage_bail!(
                "--vm-silence 0: give the seconds a booting guest's console may stay silent (e.g. \
                 120)"
            ),
            Some(s) => Duration::from_secs(s),
        };
        Ok((
            self.vm_accel.unwrap_or(AccelChoice::Auto),
            Timeouts {
                total: Duration::from_secs(timeout),
                silent_boot,
            },
        ))
    }
}

/// Options of the host's command line that the guest does not get: the VM
/// options themselves, and (`render_on_host`) the database and the output
/// options, since the host shows the run it stored. `(name, takes a value)`.
const HOST_ONLY: &[(&str, bool)] = &[
    ("--vm", true),
    ("--kernel", true),
    ("--dry-run", false),
    ("--layout-control", false),
    ("--kernel-config", true),
    ("--vm-accel", true),
    ("--vm-timeout", true),
    ("--vm-silence", true),
    ("--db", true),
];
const OUTPUT: &[(&str, bool)] = &[
    ("--json", false),
    ("--format", true),
    ("--output", true),
    ("-o", true),
];

/// The guest's arguments: `argv` (argv[0] first) without the host-only
/// options, up to a `--` after which nothing is touched.
pub fn guest_args(argv: &[String], render_on_host: bool) -> Vec<String> {
    let drop: Vec<(&str, bool)> = HOST_ONLY
        .iter()
        .chain(if render_on_host { OUTPUT } else { &[] })
        .copied()
        .collect();
    let mut out = Vec::new();
    let mut words = argv.iter().skip(1);
    while let Some(w) = words.next() {
        if w == "--" {
            out.push(w.clone());
            out.extend(words.by_ref().cloned());
            break;
        }
        let hit = drop.iter().find(|(name, value)| {
            w == name
                || (*value && w.starts_with(&format!("{name}=")))
                || (*value && name.len() == 2 && w.starts_with(name) && w.len() > 2)
        });
        match hit {
            Some((name, true)) if w == name => {
                words.next();
            }
            Some(_) => {}
            None => out.push(w.clone()),
        }
    }
    out
}

/// How the host shows what the guest measured.
pub enum Show<'a> {
    /// The stored run, rendered here as the command would (`--json`,
    /// `--format`, `-o`).
    Run {
        json: bool,
        report: Option<&'a super::args::ReportFormatArgs>,
    },
    /// The guest's own stdout: `calibrate` (which stores a run) and
    /// `list` (which does not).
    GuestStdout { stores_run: bool, json: bool },
}

/// What a measuring command tells the relay besides its VM options.
pub struct Relay<'a> {
    /// The `-m` specs: their LSMs go into `lsm=`.
    pub mechanisms: &'a [String],
    /// How the run counts: instructions, the guest boots with QEMU's
    /// icount.
    pub counting: crate::engine::ab::counting::Counting,
    /// `-t`'s value: with instructions, the guest gets one vCPU per task
    /// (the most tasks asked) unless `cpus=` says otherwise.
    pub tasks: Option<&'a str>,
}

/// Runs the command of this process in the guest `vm.vm` names.
pub fn relay(
    vm: &VmArgs,
    mechanisms: &[String],
    db: Option<&Path>,
    no_wait: bool,
    show: Show,
) -> Result<()> {
    let r = Relay {
        mechanisms,
        counting: crate::engine::ab::counting::Counting::Clock,
        tasks: None,
    };
    relay_counted(vm, &r, db, no_wait, show)
}

/// vCPUs of a guest that counts instructions: one per task, the most of
/// `-t`'s ladder (`auto`: the usual default), 1 without `-t`.
pub fn icount_vcpus(tasks: Option<&str>) -> u32 {
    match tasks {
        None => 1,
        Some(t) if t.trim().eq_ignore_ascii_case("auto") => crate::vm::spec::DEFAULT_MAX_CPUS,
        Some(t) => t
            .split(',')
            .filter_map(|n| n.trim().parse::<u32>().ok())
            .max()
            .unwrap_or(1)
            .max(1),
    }
}

/// [`relay`] with the metric and the tasks of a measuring command.
pub fn relay_counted(
    vm: &VmArgs,
    relay: &Relay,
    db: Option<&Path>,
    no_wait: bool,
    show: Show,
) -> Result<()> {
    let mechanisms = relay.mechanisms;
    let mut spec = super::kernel_arms::vm_spec(vm.vm.as_deref().unwrap_or_default())?;
    if relay.counting.boots_with_icount() && spec.cpus.is_none() {
        // The instruction counter is the guest's: a vCPU more than the
        // tasks would add its own work to every figure.
        spec.cpus = Some(icount_vcpus(relay.tasks));
    }
    let (accel, timeout) = vm.resolve(true)?;
    let argv = crate::engine::session::argv();
    let request = VmRequest {
        spec,
        accel,
        timeout,
        guest_args: guest_args(&argv, matches!(show, Show::Run { .. })),
        mechanisms: mechanisms.to_vec(),
        stores_run: !matches!(
            show,
            Show::GuestStdout {
                stores_run: false,
                ..
            }
        ),
        counting: relay.counting,
    };
    let db_path = crate::store::resolve_db_path(db)?;
    let guest = measure_in_guest(&request, &db_path, &argv, no_wait)?;
    crate::say!("secperf: {}", guest.facts.line());
    if let Show::GuestStdout { json, .. } = show {
        // The guest's own output knows nothing of the VM: the warning of
        // an emulated guest goes first (on stderr beside JSON).
        if guest.facts.accel == crate::vm::Accel::Emulated {
            let warning = if guest.facts.icount.is_some() {
                crate::vm::ICOUNT_NOTE.to_string()
            } else {
                crate::vm::emulated_warning()
            };
            if json {
                crate::say!("secperf: {warning}");
            } else {
                super::emit::emit(&warning);
            }
        }
        super::emit::emit(guest.stdout.trim_end());
        if let Some(run_id) = guest.run_id {
            crate::say!("secperf: stored as run {run_id} in {}", db_path.display());
        }
        return Ok(());
    }
    let Some(run_id) = guest.run_id else {
        anyhow::bail!("the guest's secperf stored no run");
    };
    let shown = match show {
        Show::GuestStdout { .. } => Ok(()),
        Show::Run { json, report } => {
            let store = crate::store::Store::open_read_only(&db_path)?;
            let doc = crate::read::document::load(&store, run_id)?;
            super::output::show_run(
                &doc,
                json,
                report.and_then(|r| r.format),
                report.and_then(|r| r.output.as_deref()),
                Parts::MEASURED,
            )
        }
    };
    super::output::then_stored(
        shown,
        &format!("stored as run {run_id} in {}", db_path.display()),
        run_id,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shell_words::split(s).unwrap()
    }

    #[test]
    fn the_guest_gets_the_command_without_the_host_options() {
        let argv = words(
            "secperf --db /x.db --json overhead --vm /boot/vmlinuz,append=lsm=a,b \
             --vm-accel=emulated -m selinux -w open --format email -o out.txt --vm-timeout 60 \
             -- sh -c 'x --json' -o --vm",
        );
        assert_eq!(
            guest_args(&argv, true),
            words("overhead -m selinux -w open -- sh -c 'x --json' -o --vm")
        );
        // calibrate prints the guest's own output: its format options stay.
        assert_eq!(
            guest_args(
                &words("secperf calibrate --json --vm=/k -w getppid -oX"),
                false
            ),
            words("calibrate --json -w getppid -oX")
        );
    }
}
