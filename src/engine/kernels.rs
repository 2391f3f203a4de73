//! The arms of a kernel A/B made bootable: an image is taken as it is; a
//! source is built (or taken from the cache) by `kbuild`; with
//! `--layout-control` a third arm is the baseline's source rebuilt with
//! an inert change that moves code.

use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use crate::kbuild::build::Planned;
use crate::usage_bail;
use crate::vm::arms::{ArmRequest, KernelArm, check_arms};

/// The layout control arm's name.
pub const LAYOUT_ARM: &str = "layout";

/// The requests, with the shared fragment (`--kernel-config`) given to
/// every source arm without its own `config=`, and the layout control's
/// arm added when asked for.
pub fn requests(
    values: &[String],
    shared_config: Option<&std::path::Path>,
    layout_control: bool,
) -> Result<Vec<ArmRequest>> {
    let mut reqs = crate::vm::arms::parse_requests(values)?;
    if let Some(f) = shared_config {
        if !reqs.iter().any(|r| r.source.is_some()) {
            usage_bail!(
                "--kernel-config {}: no arm is built from source (give an arm as NAME=SOURCE)",
                f.display()
            );
        }
        for r in reqs.iter_mut() {
            if let Some(s) = r.source.as_mut()
                && s.config.is_none()
            {
                s.take_key("config", &f.display().to_string(), "--kernel-config")?;
            }
        }
    }
    if layout_control {
        let base = &reqs[0];
        let Some(source) = &base.source else {
            usage_bail!(
                "--layout-control rebuilds the baseline with an inert change: give the baseline \
                 arm as a source tree (--kernel {}=SOURCE[,patch=...]), not an image",
                base.name
            );
        };
        let mut source = source.clone();
        source.layout = true;
        let name = if reqs.iter().any(|r| r.name == LAYOUT_ARM) {
            format!("{}-{LAYOUT_ARM}", base.name)
        } else {
            LAYOUT_ARM.to_string()
        };
        let vm = base.vm.clone();
        reqs.push(ArmRequest {
            name,
            vm,
            source: Some(source),
        });
    }
    Ok(reqs)
}

/// Every build tool, when any arm is built from source: named with its
/// `apt-get install` line before anything starts.
pub fn check_tools(reqs: &[ArmRequest]) -> Result<()> {
    if reqs.iter().any(|r| r.source.is_some()) {
        crate::kbuild::tools::check()?;
    }
    Ok(())
}

/// What the build step of a run came to.
#[derive(Debug, Clone, Serialize)]
pub struct BuildSummary {
    pub built: Vec<String>,
    pub cached: Vec<String>,
    pub seconds: f64,
}

/// Builds (or takes from the cache) every source arm, in order, and
/// returns the arms ready to boot. Every build tool is checked before
/// the first build starts. A build is the heaviest load secperf makes, so
/// it holds the measurement lock as a measurement does: it waits for
/// another secperf measuring on this machine, or with `no_wait` fails at
/// once naming it (exit 2).
pub fn resolve(
    reqs: &[ArmRequest],
    stop: &std::sync::atomic::AtomicBool,
    no_wait: bool,
) -> Result<(Vec<KernelArm>, BuildSummary)> {
    check_tools(reqs)?;
    // Images need no cache; a source arm's build goes there.
    let root = if reqs.iter().any(|r| r.source.is_some()) {
        crate::kbuild::writable_cache_root()?
    } else {
        crate::kbuild::cache_root()
    };
    let begun = Instant::now();
    let mut summary = BuildSummary {
        built: Vec::new(),
        cached: Vec::new(),
        seconds: 0.0,
    };
    // Every arm is checked before the first is built: a bad patch of the
    // second arm must not cost the first arm's build, nor leave a tree.
    for r in reqs {
        if let Some(source) = &r.source {
            crate::kbuild::build::check(source, &root)
                .map_err(|e| e.context(format!("arm {}", r.name)))?;
        }
    }
    let _measuring = match reqs.iter().any(|r| r.source.is_some()) {
        true => Some(super::session::measurement_lock(no_wait)?),
        false => None,
    };
    let mut arms = Vec::new();
    for r in reqs {
        let Some(source) = &r.source else {
            crate::vm::spec::check_image(&r.vm, "--kernel")?;
            arms.push(KernelArm {
                name: r.name.clone(),
                spec: r.vm.clone(),
                build: None,
            });
            continue;
        };
        crate::say!("secperf: arm {}: {}", r.name, source.describe());
        let built = crate::kbuild::ensure(source, &root, &r.name, stop)?;
        if built.record.cached {
            crate::say!(
                "secperf: arm {}: cached build {} (built {}, {:.0} s then); nothing to build",
                r.name,
                built.record.key,
                built.record.built_at,
                built.record.build_s
            );
            summary.cached.push(r.name.clone());
        } else {
            summary.built.push(r.name.clone());
        }
        let mut spec = r.vm.clone();
        spec.image = built.entry.image();
        arms.push(KernelArm {
            name: r.name.clone(),
            spec,
            build: Some(built.record),
        });
    }
    summary.seconds = begun.elapsed().as_secs_f64();
    check_arms(&arms)?;
    if !summary.cached.is_empty() || !summary.built.is_empty() {
        crate::say!("secperf: {}", summary_line(&summary));
    }
    Ok((arms, summary))
}

/// "build time 0 s: every arm from the cache (base, patched)".
pub fn summary_line(s: &BuildSummary) -> String {
    if s.built.is_empty() {
        format!(
            "build time {:.0} s: every arm from the cache ({})",
            s.seconds,
            s.cached.join(", ")
        )
    } else {
        format!(
            "build time {:.0} s: built {}{}",
            s.seconds,
            s.built.join(", "),
            if s.cached.is_empty() {
                String::new()
            } else {
                format!("; from the cache {}", s.cached.join(", "))
            }
        )
    }
}

/// The dry run's view of the source arms: what is cached, what will be
/// built and about how long. Builds nothing.
pub fn plan(reqs: &[ArmRequest]) -> Result<Vec<(String, Option<Planned>)>> {
    let root = crate::kbuild::cache_root();
    check_tools(reqs)?;
    let arms: Vec<(&str, Option<&crate::kbuild::SourceSpec>)> = reqs
        .iter()
        .map(|r| (r.name.as_str(), r.source.as_ref()))
        .collect();
    let plans = crate::kbuild::build::plan_all(&arms, &root)?;
    Ok(reqs.iter().map(|r| r.name.clone()).zip(plans).collect())
}

/// How a kernel A/B's guests are started and what each is told.
#[derive(Debug, Clone)]
pub struct Guests {
    pub accel: crate::vm::accel::AccelChoice,
    /// The limit on each guest, boot included.
    pub timeout: crate::vm::process::Timeouts,
    pub no_wait: bool,
}

/// A kernel A/B: builds the arms (or takes them from the cache), boots
/// them paired under `plan`, stores the run in `db_path` and returns its
/// id.
pub fn measure_stored(
    reqs: &[ArmRequest],
    plan: &super::plan::OverheadPlan,
    guests: &Guests,
    db_path: &std::path::Path,
) -> Result<i64> {
    for w in &plan.warnings {
        crate::say!("secperf: warning: {w}");
    }
    let design = plan.design_for(false);
    let stop = super::session::interrupt_flag()?;
    let (arms, _) = resolve(reqs, &stop, guests.no_wait)?;
    super::boots::measure(
        &super::boots::BootRequest {
            arms: &arms,
            accel: guests.accel,
            timeout: guests.timeout,
            no_wait: guests.no_wait,
            counting: plan.counting,
        },
        &plan.cases,
        &design,
        &plan.decision,
        &plan.label,
        serde_json::to_value(plan)?,
        db_path,
    )
}
