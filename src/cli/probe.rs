//! `secperf probe`: the machine's security configuration; with `--active`,
//! also what only a measurement can tell (phantom audit rules).

use anyhow::Result;

/// `probe`'s options.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// Also check what reading files cannot tell: whether the kernel still
    /// charges every syscall for audit rules that are gone ("phantom
    /// rules", docs/findings.md), at audit.phantom_rules in --json (true,
    /// false, or null with the reason). Takes about 5 s: a getppid loop is
    /// profiled with audit disabled, enabled with no rules, and enabled
    /// with one unrelated rule; audit is switched for that time (root),
    /// journaled and restored as by any audit measurement. Enabling audit
    /// once leaves the kernel giving new processes an audit context until
    /// reboot, as any audit measurement does. A machine with audit rules
    /// loaded is left alone (the answer is null).
    #[arg(long)]
    pub active: bool,

    /// Rounds of --active's three profiled halves (1 to 20). One
    /// round tells in about 1.5 s; three give a steadier cost.
    #[arg(long, default_value_t = 3, value_name = "N", requires = "active")]
    pub rounds: u32,

    #[command(flatten)]
    pub vm: super::vm::VmArgs,
}

pub fn probe(args: ProbeArgs, db: Option<&std::path::Path>, json: bool) -> Result<()> {
    if args.vm.vm.is_some() {
        return super::vm::relay(
            &args.vm,
            &[],
            db,
            false,
            super::vm::Show::GuestStdout {
                stores_run: false,
                json,
            },
        );
    }
    args.vm.resolve(false)?;
    let mut info = serde_json::to_value(crate::probe::probe())?;
    if args.active {
        if !(1..=20).contains(&args.rounds) {
            crate::usage_bail!("--rounds {}: give 1 to 20 (e.g. --rounds 3)", args.rounds);
        }
        let (phantom, check) = crate::engine::session::check_phantom_now(args.rounds)?;
        crate::probe::audit_phantom::record(&mut info, phantom, &check);
    }
    if json {
        return super::emit::print_json(&info);
    }
    let info: crate::probe::SystemInfo = serde_json::from_value(info)?;
    super::emit::emit_fmt!(
        "{}",
        crate::report::sections::probe::render(&info).trim_end()
    );
    Ok(())
}
