//! The arms of a kernel A/B made bootable: an image is taken as it is; a
//! source is built (or taken from the cache) by `kbuild`; with
//! `--layout-control` a third arm is the baseline's source rebuilt with
//! an inert change that moves code.

use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

pub use crate::kbuild::build::Planned;
use crate::usage_bail;
use crate::vm::arms::{ArmRequest, KernelArm, check_arms};

/// The layout control arm's name.
pub const LAYOUT_ARM: &str = "layout";

/// The arms with the layout control's added: the baseline's source
/// rebuilt with an inert change that moves code (the baseline must be a
/// source; the command line says so first, with its flag).
pub fn with_layout_control(mut reqs: Vec<ArmRequest>) -> Result<Vec<ArmRequest>> {
    let base = &reqs[0];
    let Some(source) = &base.source else {
        usage_bail!(
            "the layout control rebuilds the baseline arm {} from source, and it is an image",
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
    Ok(reqs)
}

/// A kernel A/B's arms as typed, every build tool checked: once, when
/// they are made ([`Arms::checked`]); what builds and boots them takes
/// them so, and checks nothing again.
#[derive(Debug, Clone)]
pub struct Arms(Vec<ArmRequest>);

impl Arms {
    /// The arms, with every build tool named with its `apt-get install`
    /// line when any arm is built from source.
    pub fn checked(reqs: Vec<ArmRequest>) -> Result<Arms> {
        if reqs.iter().any(|r| r.source.is_some()) {
            crate::kbuild::tools::check()?;
        }
        Ok(Arms(reqs))
    }
}

impl std::ops::Deref for Arms {
    type Target = [ArmRequest];

    fn deref(&self) -> &[ArmRequest] {
        &self.0
    }
}

/// What the build step of a run came to.
#[derive(Debug, Clone, Serialize)]
pub struct BuildSummary {
    pub built: Vec<String>,
    pub cached: Vec<String>,
    pub seconds: f64,
}

/// [`build`] with the measurement lock held for the builds only (the
/// suites' sides, each of which then boots a guest of its own): it waits
/// for another secperf measuring on this machine, or with `no_wait` fails
/// at once naming it (exit 2).
pub fn resolve(
    reqs: &Arms,
    stop: &std::sync::atomic::AtomicBool,
    no_wait: bool,
) -> Result<(Vec<KernelArm>, BuildSummary)> {
    let measuring = match reqs.iter().any(|r| r.source.is_some()) {
        true => Some(crate::engine::session::measurement_lock(no_wait)?),
        false => None,
    };
    build(reqs, stop, measuring.as_ref())
}

/// Builds (or takes from the cache) every source arm, in order, and
/// returns the arms ready to boot. A build is the heaviest load secperf
/// makes, so it runs under the measurement lock as a measurement does
/// (`measuring`, held by the caller; None only where no arm builds).
pub fn build(
    reqs: &Arms,
    stop: &std::sync::atomic::AtomicBool,
    measuring: Option<&crate::safety::MeasureLock>,
) -> Result<(Vec<KernelArm>, BuildSummary)> {
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
    for r in reqs.iter() {
        if let Some(source) = &r.source {
            crate::kbuild::build::check(source, &root)
                .map_err(|e| e.context(format!("arm {}", r.name)))?;
        }
    }
    if measuring.is_none() && reqs.iter().any(|r| r.source.is_some()) {
        anyhow::bail!("internal error: a kernel build without the measurement lock");
    }
    let mut arms = Vec::new();
    for r in reqs.iter() {
        // An image arm was checked when it was parsed.
        let Some(source) = &r.source else {
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
pub fn plan(reqs: &Arms) -> Result<Vec<(String, Option<Planned>)>> {
    let root = crate::kbuild::cache_root();
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
    reqs: &Arms,
    plan: &crate::engine::plan::OverheadPlan,
    guests: &Guests,
    db_path: &std::path::Path,
) -> Result<i64> {
    for w in &plan.warnings {
        crate::say!("secperf: warning: {w}");
    }
    let design = plan.design_for(false);
    let stop = crate::engine::session::interrupt_flag()?;
    // One lock for the builds and the boots: nothing measures between.
    let measuring = crate::engine::session::measurement_lock(guests.no_wait)?;
    let (arms, _) = build(reqs, &stop, Some(&measuring))?;
    super::measure(
        &super::BootRequest {
            arms: &arms,
            accel: guests.accel,
            timeout: guests.timeout,
            counting: plan.counting,
        },
        &plan.cases,
        &design,
        &plan.decision,
        &plan.label,
        serde_json::to_value(plan)?,
        db_path,
        &measuring,
    )
}

/// A cached build (`secperf kernels list`).
pub use crate::kbuild::cache::Entry as CacheEntry;

/// Where kernels built from source are cached.
pub fn cache_root() -> std::path::PathBuf {
    crate::kbuild::cache_root()
}

/// The cached builds under `root`.
pub fn cache_list(root: &std::path::Path) -> Vec<CacheEntry> {
    crate::kbuild::cache::list(root)
}

/// The source copies and build trees under `root`.
pub fn tree_list(root: &std::path::Path) -> Vec<crate::kbuild::tree::Listed> {
    crate::kbuild::tree::list(root)
}

/// Removes the builds a killed build left unfinished; how many.
pub fn remove_stale(root: &std::path::Path) -> usize {
    crate::kbuild::cache::remove_stale(root)
}

/// What `secperf kernels prune` removes.
#[derive(Debug, Clone, PartialEq)]
pub enum Prune {
    /// Every build, every tree, and the source memo.
    All,
    /// The trees only.
    Trees,
    /// The builds made more than `days` ago and the trees last used
    /// before then (every tree with `trees`).
    OlderThan { days: f64, trees: bool },
    /// The builds of these keys (or unique prefixes), and with `trees`
    /// every tree.
    Keys { keys: Vec<String>, trees: bool },
}

/// What a prune removed.
#[derive(Debug, Clone)]
pub struct Pruned {
    /// The keys of the builds removed.
    pub removed: Vec<String>,
    /// Unfinished builds removed.
    pub stale: usize,
    pub trees_removed: Vec<std::path::PathBuf>,
}

/// Removes `what` from the cache at `root`.
pub fn prune(root: &std::path::Path, what: &Prune) -> Result<Pruned> {
    use crate::kbuild::cache;
    let stale = cache::remove_stale(root);
    let mut cutoff = None;
    let (keys, all, trees) = match what {
        Prune::All => (
            cache::list(root)
                .into_iter()
                .map(|e| e.record.key)
                .collect(),
            true,
            true,
        ),
        Prune::Trees => (Vec::new(), false, true),
        Prune::OlderThan { days, trees } => {
            let before = chrono::Utc::now() - chrono::Duration::seconds((days * 86400.0) as i64);
            cutoff = Some(before);
            let keys = cache::list(root)
                .into_iter()
                .filter(|e| {
                    chrono::DateTime::parse_from_rfc3339(&e.record.built_at)
                        .is_ok_and(|t| t < before)
                })
                .map(|e| e.record.key)
                .collect();
            (keys, false, *trees)
        }
        Prune::Keys { keys, trees } => (keys.clone(), false, *trees),
    };
    let removed = cache::remove(root, &keys)?;
    // The trees: all of them with --all or --trees (and the source memo
    // with --all); those last used before the cutoff with --older-than.
    let mut trees_removed: Vec<std::path::PathBuf> = Vec::new();
    for t in crate::kbuild::tree::list(root) {
        let old = cutoff.is_some_and(|c| t.used_at.is_some_and(|u| u < c));
        if all || trees || old {
            std::fs::remove_dir_all(&t.dir)
                .map_err(|e| anyhow::anyhow!("removing {}: {e}", t.dir.display()))?;
            trees_removed.push(t.dir);
        }
    }
    if all {
        let memo = root.join("memo");
        if memo.exists() {
            std::fs::remove_dir_all(&memo)
                .map_err(|e| anyhow::anyhow!("removing {}: {e}", memo.display()))?;
        }
    }
    Ok(Pruned {
        removed,
        stale,
        trees_removed,
    })
}
