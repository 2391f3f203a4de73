//! `secperf overhead`: what each security mechanism costs on this machine,
//! now, measured as randomised A/B pairs in one run. The arguments become a
//! request; the engine plans it ([`crate::engine::plan`]), measures and
//! decides; this file renders the table or the chosen format.

use std::path::Path;

use anyhow::Result;
use clap::Args;

use super::args::{
    CommandArgs, DecisionArgs, PairArgs, ProfileArgs, ReportFormatArgs, TaskArgs, WaitArgs,
};
use crate::engine::ab::counting::Counting;
use crate::engine::plan::{OverheadPlan, OverheadRequest};
use crate::usage_bail;

#[derive(Debug, Args)]
pub struct OverheadArgs {
    /// Mechanisms to measure, repeatable: NAME[:VARIANT][,KEY=VALUE...]
    /// (e.g. seccomp:args,filters=4). Default: every available mechanism
    /// with its survey variants (see `secperf list`).
    #[arg(short, long = "mechanism", value_name = "SPEC",
          value_parser = super::args::Candidates::mechanism_specs(), hide_possible_values = true)]
    pub mechanisms: Vec<String>,

    /// Workloads, comma-separated, or "all". By default, the workloads each
    /// mechanism's hooks touch.
    #[arg(short, long, value_name = "NAME,...|all",
          value_parser = super::args::Candidates::workloads(), hide_possible_values = true)]
    pub workloads: Option<String>,

    #[command(flatten)]
    pub placement: TaskArgs,

    #[command(flatten)]
    pub design: PairArgs,

    /// Fast pass: shorter slices and halves (about 50 s here; at most 32
    /// pairs per comparison, fewer where a comparison settles).
    #[arg(long)]
    pub quick: bool,

    /// Leave out the negative control: without -w, each mechanism's first
    /// treatment is also measured on `stream` (no syscall in its loop, so
    /// no mechanism should change it).
    #[arg(long)]
    pub no_control: bool,

    /// Seed for the AB/BA coin and the bootstrap (default: from the clock;
    /// stored with the run, so a run can be replayed in the same order).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Precision wanted, percent (e.g. 1): a sequential comparison also
    /// stops once its 95% interval's half-width is at most this, and the
    /// budget (--max-pairs' default) is raised to what the last `secperf
    /// calibrate` of each workload on this machine predicts it needs.
    #[arg(long, value_name = "PCT", conflicts_with = "pairs")]
    pub precision: Option<f64>,

    /// Sweep one parameter, one comparison per value. A straight line is
    /// fitted to the per-pair differences (ns/op added = intercept + slope x
    /// value, each with a 95% interval, and a test of whether a line fits).
    /// KEY is a mechanism parameter (seccomp filters, landlock rules or
    /// layers, audit count) or WORKLOAD.KEY (open.depth). E.g. -m
    /// seccomp:args -w getppid --sweep filters=1,2,4,8.
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub sweep: Option<String>,

    #[command(flatten)]
    pub profile: ProfileArgs,

    #[command(flatten)]
    pub decision: DecisionArgs,

    #[command(flatten)]
    pub metric: super::args::MetricArgs,

    #[command(flatten)]
    pub sequential: super::args::SequentialArgs,

    #[command(flatten)]
    pub command: CommandArgs,

    #[command(flatten)]
    pub report: ReportFormatArgs,

    #[command(flatten)]
    pub wait: WaitArgs,

    #[command(flatten)]
    pub vm: super::vm::VmArgs,

    /// A kernel A/B across boots, given twice (the baseline first): each
    /// pair boots both kernels with virtme-ng in a seeded order, each boot
    /// measures one half of every workload, and halves are paired across
    /// boots. NAME names the arm in reports; two arms may share an image
    /// and differ in append= (audit=0 / audit=1, mitigations=off, lsm=).
    /// A directory is a kernel source tree to build (a git checkout or an
    /// unpacked tarball): rev= a git revision, patch= patches applied in
    /// order (repeatable), config= a fragment applied last; builds are
    /// cached under $XDG_CACHE_HOME/secperf/kernels (`secperf kernels`).
    /// With -m, that mechanism is on in every boot of both arms (a
    /// runtime setting the kernels share, e.g. -m audit:rules=FILE).
    /// --pairs and --max-pairs may go down to 3 here (a pair is two
    /// boots). --profile profiles a half of each workload in the first
    /// --profile-pairs pairs' boots, symbolised in the guest. The keys
    /// after NAME=IMAGE|SOURCE, comma-separated: rev=REV, patch=FILE
    /// (repeatable), config=FRAGMENT, cpus=N, memory=SIZE, append=ARGS.
    #[arg(long = "kernel",
          value_name = "NAME=KERNEL,...",
          conflicts_with_all = ["vm", "sweep"])]
    pub kernels: Vec<String>,

    /// Add an arm that measures code layout alone: with --kernel and a
    /// baseline built from source, a third arm, the
    /// baseline rebuilt with an inert change that moves code (a 32-byte
    /// function nothing calls, early in the link), compared with the
    /// baseline beside the real comparison: how much code layout alone
    /// moves each workload (docs/methodology.md).
    #[arg(long, requires = "kernels")]
    pub layout_control: bool,

    /// A config fragment for the arms built from source: with --kernel, for
    /// every arm without a config= of its own. It is applied last: after
    /// the architecture's defconfig, virtme-ng's fragment and the options
    /// secperf needs (audit, seccomp, the LSMs), so that its settings win.
    #[arg(long, value_name = "FRAGMENT", requires = "kernels")]
    pub kernel_config: Option<std::path::PathBuf>,

    /// Show the boot plan and exit without booting: with --kernel, its arms,
    /// boot order, workloads and time.
    #[arg(long, requires = "kernels")]
    pub dry_run: bool,

    /// (internal) The words an older secperf gave a kernel A/B's guests:
    /// refused, saying that guests are now told by their request.
    #[arg(long, hide = true, value_name = "CASES")]
    pub boot_half: Option<String>,
}

impl OverheadArgs {
    /// The request these arguments make, every value checked, counting
    /// as `counting`. With --kernel: the request of the kernel A/B's plan
    /// (no mechanism switched, no negative control).
    pub(super) fn boot_request(&self, counting: Counting) -> Result<OverheadRequest> {
        if self.decision.resolve_auto(counting.metric())?.1 {
            usage_bail!(
                "--equivalence auto sizes the margin from calibrations of this machine's \
                 workloads, not of boots: give a margin in percent with --kernel (e.g. \
                 --equivalence 2)"
            );
        }
        let mut r = self.request_with_min_pairs(3, true, counting)?;
        // Counting, each half is the least of its slices: one more slice
        // than elsewhere gives the least a spare.
        if counting.by_least_slice() && self.design.samples_per_half.is_none() {
            r.half.samples_per_half = crate::engine::plan::COUNTING_SAMPLES_PER_HALF;
        }
        // -m with --kernel: on in every boot of both arms.
        if self.mechanisms.is_empty() {
            r.mechanisms = vec!["none".to_string()];
        }
        r.no_control = true;
        Ok(r)
    }

    pub(super) fn request(&self, counting: Counting) -> Result<OverheadRequest> {
        self.request_with_min_pairs(10, false, counting)
    }

    /// `kernels`: the arms are kernels, so a command needs no mechanism
    /// (one given is on in every boot).
    fn request_with_min_pairs(
        &self,
        min_pairs: u32,
        kernels: bool,
        counting: Counting,
    ) -> Result<OverheadRequest> {
        if let Some(p) = self.precision.filter(|p| !(*p > 0.0 && *p < 100.0)) {
            usage_bail!("--precision {p}: give a percentage between 0 and 100 (e.g. 1)");
        }
        let mut workloads = self.workloads.clone();
        let mut params = self.placement.params.clone();
        if let Some((name, extra)) = self.command.workload(workloads.is_some())? {
            if self.mechanisms.is_empty() && !kernels {
                usage_bail!(
                    "a command needs the mechanisms to measure it under: -m SPEC [-m SPEC ...] \
                     -- CMD (see `secperf list`)"
                );
            }
            workloads = Some(name);
            params.extend(extra);
        }
        let (decision, equivalence_auto) = self.decision.resolve_auto(counting.metric())?;
        let placement = self.placement.resolve("1")?;
        if self.command.server.is_some() {
            crate::workloads::service::check_placement(&placement.tasks, self.placement.mode)?;
        }
        Ok(OverheadRequest {
            mechanisms: self.mechanisms.clone(),
            workloads,
            params,
            placement,
            mode: self.placement.mode,
            half: self.design.resolve_with_min(self.quick, min_pairs)?,
            quick: self.quick,
            no_control: self.no_control,
            seed: self.seed,
            decision: self
                .sequential
                .resolve(decision, self.design.pairs.is_some())?,
            equivalence_auto,
            precision: self.precision,
            profile: self.profile.resolve()?,
            sweep: self
                .sweep
                .as_deref()
                .map(crate::engine::sweep::parse)
                .transpose()?,
            counting,
        })
    }
}

pub fn overhead(args: OverheadArgs, db: Option<&Path>, json: bool) -> Result<()> {
    super::output::refuse_json_beside(json, args.report.format.as_ref())?;
    args.report.check_output()?;
    if let Some(cases) = &args.boot_half {
        usage_bail!(
            "--boot-half {cases}: an older secperf's words to a kernel A/B's guest; a guest is \
             now told what to measure by the request.json its host writes in the shared \
             directory (`secperf guest`), so the host and the guest must run the same secperf"
        );
    }
    args.metric
        .refuse_with(args.profile.profile, args.command.server.is_some())?;
    let counting = args
        .metric
        .counting(args.vm.vm.is_some() || !args.kernels.is_empty())?;
    if args.vm.vm.is_some() {
        let show = super::vm::Show::Run {
            json,
            report: Some(&args.report),
        };
        let relay = super::vm::Relay {
            mechanisms: &args.mechanisms,
            counting,
            tasks: args.placement.tasks.as_deref(),
        };
        return super::vm::relay_counted(&args.vm, &relay, db, args.wait.no_wait, show);
    }
    if !args.kernels.is_empty() {
        return kernel_ab(&args, db, json, counting);
    }
    args.vm.resolve(false)?;
    let measured =
        crate::engine::overhead::measure(&args.request(counting)?, db, args.wait.no_wait)?;
    super::output::show_measured(&measured.session, &measured.label, json, &args.report)
}

/// `overhead --kernel A=... --kernel B=...`: the kernel A/B across boots.
fn kernel_ab(args: &OverheadArgs, db: Option<&Path>, json: bool, counting: Counting) -> Result<()> {
    if args.dry_run {
        let (reqs, plan, _) = kernel_plan(args, counting)?;
        let design = plan.design_for(false);
        let builds = crate::engine::boots::kernels::plan(&reqs)?;
        return show_boot_plan(&reqs, &builds, &plan, &design, json);
    }
    let db_path = crate::store::resolve_db_path(db)?;
    let run_id = kernel_ab_stored(args, &db_path, counting)?;
    let store = crate::store::Store::open_read_only(&db_path)?;
    let doc = crate::read::document::load(&store, run_id)?;
    let shown = super::output::show_run(
        &doc,
        json,
        args.report.format,
        args.report.output.as_deref(),
        crate::report::sections::Parts::MEASURED,
    );
    super::output::then_stored(
        shown,
        &format!("stored as run {run_id} in {}", db_path.display()),
        run_id,
    )
}

/// The VM's accelerator and timeout.
type VmChoice = (crate::vm::accel::AccelChoice, crate::vm::process::Timeouts);

/// A kernel A/B's arms (the layout control's included), plan and VM
/// options, every build tool checked (once).
fn kernel_plan(
    args: &OverheadArgs,
    counting: Counting,
) -> Result<(crate::engine::boots::kernels::Arms, OverheadPlan, VmChoice)> {
    let reqs = crate::engine::boots::kernels::Arms::checked(super::kernel_arms::kernel_arms(
        &args.kernels,
        args.kernel_config.as_deref(),
        args.layout_control,
    )?)?;
    let vm = args.vm.resolve(true)?;
    Ok((reqs, OverheadPlan::new(&args.boot_request(counting)?)?, vm))
}

/// A kernel A/B: builds the arms, boots them paired (each guest told its
/// halves by its request), stores the run and returns its id.
fn kernel_ab_stored(args: &OverheadArgs, db_path: &Path, counting: Counting) -> Result<i64> {
    let (reqs, plan, (accel, timeout)) = kernel_plan(args, counting)?;
    crate::engine::boots::kernels::measure_stored(
        &reqs,
        &plan,
        &crate::engine::boots::kernels::Guests {
            accel,
            timeout,
            no_wait: args.wait.no_wait,
        },
        db_path,
    )
    .map_err(super::kernel_arms::worded)
}

/// `--dry-run` of a kernel A/B: the arms (and for a source, whether its
/// build is cached or how long it may take), the boot order, the
/// workloads each boot measures, and how long it may take.
fn show_boot_plan(
    arms: &[crate::vm::arms::ArmRequest],
    builds: &[(String, Option<crate::engine::boots::kernels::Planned>)],
    plan: &OverheadPlan,
    design: &crate::engine::ab::design::Design,
    json: bool,
) -> Result<()> {
    let order = crate::engine::boots::boot_order(design, arms.len());
    let names: Vec<&str> = arms.iter().map(|a| a.name.as_str()).collect();
    let cases: Vec<String> = plan
        .cases
        .iter()
        .map(|c| {
            format!(
                "{} tasks={}",
                crate::report::label::workload(c.workload.name, &c.workload_params),
                c.tasks
            )
        })
        .collect();
    let build_s: f64 = builds
        .iter()
        .filter_map(|b| b.1.as_ref())
        .map(|p| p.estimate_s)
        .sum();
    if json {
        return super::emit::print_json(&serde_json::json!({
            "arms": arms.iter().map(|a| serde_json::json!({
                "name": a.name,
                "vm": a.vm,
                "source": a.source,
            })).collect::<Vec<_>>(),
            "builds": builds.iter().map(|(n, p)| serde_json::json!({"arm": n, "build": p})).collect::<Vec<_>>(),
            "build_estimate_s": build_s,
            "pairs": design.pairs,
            "sequential": design.stop.is_some(),
            "boots": order.iter().flatten().map(|&a| names[a]).collect::<Vec<_>>(),
            "cases": cases,
            "seed": design.seed,
        }));
    }
    let mut text =
        String::from("Kernel A/B across boots (nothing is built or booted: --dry-run)\n");
    for (i, a) in arms.iter().enumerate() {
        let role = match i {
            0 => "baseline",
            1 => "treatment",
            _ => "layout control",
        };
        match (&a.source, builds.get(i).and_then(|b| b.1.as_ref())) {
            (Some(s), Some(p)) => {
                text.push_str(&format!("  {} ({role}): build {}\n", a.name, s.describe()));
                text.push_str(&format!(
                    "      source {} {}{}; {}\n",
                    p.identity.kind,
                    &p.identity.id[..p.identity.id.len().min(19)],
                    p.key
                        .as_deref()
                        .map(|k| format!(", cache key {k}"))
                        .unwrap_or_default(),
                    if p.cached {
                        p.note.clone()
                    } else {
                        format!(
                            "to build, about {:.0} min ({})",
                            (p.estimate_s / 60.0).ceil(),
                            p.note
                        )
                    }
                ));
                if !a.vm.append.is_empty() {
                    text.push_str(&format!("      append {}\n", a.vm.append));
                }
            }
            _ => text.push_str(&format!("  {} ({role}): --vm {}\n", a.name, a.vm.to_arg())),
        }
    }
    if builds.iter().any(|b| b.1.is_some()) {
        text.push_str(&format!(
            "Builds: about {:.0} min in all before the first boot.\n",
            (build_s / 60.0).ceil()
        ));
    }
    text.push_str(&format!(
        "Each boot measures one half of: {}\n",
        cases.join(", ")
    ));
    let stop = if design.stop.is_some() {
        "at most; a block stops being needed once every workload is settled"
    } else {
        "fixed"
    };
    text.push_str(&format!(
        "{} {} ({stop}), {} boots, in this order (seed {}):\n",
        design.pairs,
        if arms.len() == 2 {
            "pairs"
        } else {
            "blocks of one boot per arm"
        },
        arms.len() * design.pairs as usize,
        design.seed
    ));
    for (i, p) in order.iter().enumerate() {
        text.push_str(&format!(
            "  {} {:>2}: {}\n",
            if arms.len() == 2 { "pair" } else { "block" },
            i + 1,
            p.iter()
                .map(|&a| names[a])
                .collect::<Vec<_>>()
                .join(" then ")
        ));
    }
    let per_boot_s = 30.0
        + cases.len() as f64 * design.slices_per_half() as f64 * design.sample_ms as f64 / 1000.0;
    text.push_str(&format!(
        "At most about {per_boot_s:.0} s a boot under emulation (boot 10 to 30 s), so up to about {:.0} \
         min; with KVM a boot takes seconds.\n",
        per_boot_s * arms.len() as f64 * design.pairs as f64 / 60.0
    ));
    super::emit::emit(text.trim_end());
    Ok(())
}
