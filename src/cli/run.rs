//! `secperf run`: measure workloads under the current configuration.
//!
//! Arguments become a [`RunPlan`] (every name, number and path checked)
//! before the store is opened or a task started; then each workload x task
//! count is measured, stored as soon as it finishes, and shown in a table.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use super::progress::Progress;
use crate::error::UsageError;
use crate::model::{Mode, Params, RunMeta, WorkloadResult};
use crate::runner::{self, MeasureOpts};
use crate::store::Store;
use crate::sys::cpus;
use crate::usage_bail;
use crate::workloads::{self, WorkloadDef};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workloads, comma-separated, or "all" (see `secperf list`).
    #[arg(short, long, value_name = "NAME,...|all", default_value = "all")]
    pub workloads: String,

    /// Task counts: a comma-separated ladder ("1,2,4") or "auto" (1, 2, 4, ...
    /// up to the online CPU count, which is always included).
    #[arg(short, long, value_name = "N,...|auto", default_value = "auto")]
    pub tasks: String,

    /// Tasks as forked processes or as threads of one process.
    #[arg(long, value_enum, default_value_t = Mode::Process)]
    pub mode: Mode,

    /// Samples kept per measurement [default: 10, 5 with --quick].
    #[arg(long, value_name = "N")]
    pub samples: Option<u32>,

    /// Length of one sample (a time slice), milliseconds [default: 500, 200 with --quick].
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<u64>,

    /// Slices run and discarded before the samples start [default: 1].
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,

    /// Do not pin task i to the i-th allowed CPU (allows more tasks than CPUs).
    #[arg(long)]
    pub no_pin: bool,

    /// Workload parameter, repeatable: WORKLOAD.KEY=VALUE, or KEY=VALUE for
    /// every selected workload that has KEY (e.g. open.depth=8).
    #[arg(short, long = "param", value_name = "[WORKLOAD.]KEY=VALUE")]
    pub params: Vec<String>,

    /// A label to find this run by later (`secperf results show LABEL`).
    #[arg(short, long, value_name = "TEXT")]
    pub label: Option<String>,

    /// Fast pass over the catalog: 5 samples of 200 ms each (under a minute
    /// on 2 CPUs); explicit --samples/--sample-ms still win.
    #[arg(long)]
    pub quick: bool,

    /// Directory for the files workloads create (choose the filesystem under
    /// test) [default: the system temporary directory].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// Everything `run` will do, validated.
#[derive(Debug, Clone, Serialize)]
pub struct RunPlan {
    #[serde(serialize_with = "ser_names")]
    pub workloads: Vec<&'static WorkloadDef>,
    pub tasks: Vec<usize>,
    pub mode: Mode,
    pub samples: u32,
    pub sample_ms: u64,
    pub warmup: u32,
    pub pin: bool,
    /// CPUs tasks are pinned to, in order.
    pub cpus: Vec<usize>,
    /// Effective parameters per workload (defaults filled in).
    pub params: std::collections::BTreeMap<String, Params>,
    pub label: String,
    pub scratch: PathBuf,
    pub quick: bool,
}

fn ser_names<S: serde::Serializer>(w: &[&'static WorkloadDef], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(w.iter().map(|d| d.name))
}

/// Parses `-w`.
pub fn parse_workloads(spec: &str) -> Result<Vec<&'static WorkloadDef>> {
    if spec.trim() == "all" {
        return Ok(workloads::WORKLOADS.iter().collect());
    }
    let mut out: Vec<&'static WorkloadDef> = Vec::new();
    for name in spec.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let Some(def) = workloads::find(name) else {
            usage_bail!(
                "unknown workload '{name}' (valid: {}, or all)",
                workloads::names()
            );
        };
        if !out.iter().any(|d| d.name == def.name) {
            out.push(def);
        }
    }
    if out.is_empty() {
        usage_bail!("no workload given (valid: {}, or all)", workloads::names());
    }
    Ok(out)
}

/// Parses `--tasks` against the number of online CPUs.
pub fn parse_tasks(spec: &str, online: usize) -> Result<Vec<usize>> {
    if spec.trim() == "auto" {
        let mut v = Vec::new();
        let mut n = 1;
        while n < online {
            v.push(n);
            n *= 2;
        }
        v.push(online.max(1));
        return Ok(v);
    }
    let mut v = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: usize = part.parse().map_err(|_| {
            UsageError::new(format!(
                "--tasks: '{part}' is not a number (give e.g. 1,2,4 or auto)"
            ))
        })?;
        if n == 0 {
            usage_bail!("--tasks: task counts start at 1 (give e.g. 1,2,4 or auto)");
        }
        if n > 4096 {
            usage_bail!("--tasks: {n} tasks is more than secperf supports (4096)");
        }
        if !v.contains(&n) {
            v.push(n);
        }
    }
    if v.is_empty() {
        usage_bail!("--tasks: no task count given (give e.g. 1,2,4 or auto)");
    }
    Ok(v)
}

/// Applies `--param` to the selected workloads' defaults.
pub fn resolve_params(
    selected: &[&'static WorkloadDef],
    raw: &[String],
) -> Result<std::collections::BTreeMap<String, Params>> {
    let mut given: std::collections::BTreeMap<&str, Params> = Default::default();
    for p in raw {
        let Some((key, value)) = p.split_once('=') else {
            usage_bail!("--param '{p}': expected [WORKLOAD.]KEY=VALUE, e.g. open.depth=8");
        };
        let (target, key) = match key.split_once('.') {
            Some((w, k)) => (Some(w), k),
            None => (None, key),
        };
        let mut matched = false;
        for def in selected {
            if target.is_some_and(|t| t != def.name) {
                continue;
            }
            if def.params.iter().any(|d| d.name == key) {
                given
                    .entry(def.name)
                    .or_default()
                    .insert(key.to_string(), value.to_string());
                matched = true;
            } else if target.is_some() {
                let valid: Vec<&str> = def.params.iter().map(|d| d.name).collect();
                usage_bail!(
                    "--param '{p}': workload {} has no parameter '{key}' (valid: {})",
                    def.name,
                    if valid.is_empty() {
                        "none".to_string()
                    } else {
                        valid.join(", ")
                    }
                );
            }
        }
        if !matched {
            match target {
                Some(t) if workloads::find(t).is_none() => {
                    usage_bail!(
                        "--param '{p}': unknown workload '{t}' (valid: {})",
                        workloads::names()
                    )
                }
                Some(t) => usage_bail!("--param '{p}': workload {t} is not selected with -w"),
                None => usage_bail!(
                    "--param '{p}': no selected workload has a parameter '{key}' (see `secperf list`)"
                ),
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    for def in selected {
        let params = def.params_with_defaults(given.get(def.name).unwrap_or(&Params::new()));
        for d in def.params {
            // Numeric defaults take numeric values.
            if d.default.parse::<u64>().is_ok() && params[d.name].parse::<u64>().is_err() {
                usage_bail!(
                    "--param {}.{}={}: expected a whole number",
                    def.name,
                    d.name,
                    params[d.name]
                );
            }
        }
        (def.validate)(&params)?;
        out.insert(def.name.to_string(), params);
    }
    Ok(out)
}

impl RunPlan {
    pub fn from_args(a: &RunArgs) -> Result<RunPlan> {
        let workloads = parse_workloads(&a.workloads)?;
        let allowed = cpus::allowed_cpus().context("reading this process's CPU affinity")?;
        let online = cpus::online_cpus().context("reading online CPUs")?.len();
        let tasks = parse_tasks(&a.tasks, online.min(allowed.len()))?;
        let samples = a.samples.unwrap_or(if a.quick { 5 } else { 10 });
        let sample_ms = a.sample_ms.unwrap_or(if a.quick { 200 } else { 500 });
        let warmup = a.warmup.unwrap_or(1);
        if samples == 0 {
            usage_bail!("--samples must be at least 1 (10 or more for a useful interval)");
        }
        if !(10..=600_000).contains(&sample_ms) {
            usage_bail!("--sample-ms must be between 10 and 600000 milliseconds");
        }
        let pin = !a.no_pin;
        let max_tasks = *tasks.iter().max().unwrap_or(&1);
        if pin && max_tasks > allowed.len() {
            usage_bail!(
                "--tasks {max_tasks}: only {} CPUs are available to pin tasks to; \
                 use at most {} tasks, or --no-pin to oversubscribe",
                allowed.len(),
                allowed.len()
            );
        }
        let scratch = a.scratch.clone().unwrap_or_else(std::env::temp_dir);
        if let Some(dir) = a.scratch.as_ref().filter(|d| !d.is_dir()) {
            usage_bail!("--scratch {}: not a directory", dir.display());
        }
        Ok(RunPlan {
            params: resolve_params(&workloads, &a.params)?,
            workloads,
            tasks,
            mode: a.mode,
            samples,
            sample_ms,
            warmup,
            pin,
            cpus: if pin { allowed } else { Vec::new() },
            label: a.label.clone().unwrap_or_default(),
            scratch,
            quick: a.quick,
        })
    }

    fn slices(&self) -> u64 {
        (self.workloads.len() * self.tasks.len()) as u64 * (self.samples + self.warmup) as u64
    }
}

#[derive(Serialize)]
struct RunOutput<'a> {
    run_id: i64,
    label: &'a str,
    db: &'a Path,
    system: &'a serde_json::Value,
    params: &'a RunPlan,
    results: &'a [WorkloadResult],
}

/// Where fixtures kept across runs live: $XDG_CACHE_HOME/secperf.
pub fn cache_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("secperf")
}

pub fn run(args: RunArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let plan = RunPlan::from_args(&args)?;
    let db_path = crate::store::resolve_db_path(db)?;
    let mut store = Store::open(&db_path)?;
    install_interrupt_handlers()?;

    let system = serde_json::to_value(crate::probe::probe())?;
    let meta = RunMeta {
        label: plan.label.clone(),
        kind: "run".into(),
        started_at: chrono::Utc::now(),
        host: crate::sys::hostname(),
        secperf_version: env!("CARGO_PKG_VERSION").into(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        params: serde_json::to_value(&plan)?,
        system: system.clone(),
    };
    let run_id = store.begin_run(&meta)?;
    let progress = Progress::new(plan.slices());
    let mut results = Vec::new();
    for def in &plan.workloads {
        for &tasks in &plan.tasks {
            let opts = MeasureOpts {
                tasks,
                mode: plan.mode,
                cpus: plan.cpus.clone(),
                warmup: plan.warmup,
                samples: plan.samples,
                sample_ms: plan.sample_ms,
                scratch_root: plan.scratch.clone(),
                cache_dir: cache_dir(),
                params: plan.params[def.name].clone(),
            };
            progress.start(&format!("{} tasks={tasks} ({})", def.name, plan.mode));
            let r = runner::measure(def, &opts, &mut |t| progress.tick(t)).with_context(|| {
                format!("run {run_id}: results measured so far are stored (`secperf results show {run_id}`)")
            });
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    progress.finish();
                    return Err(e);
                }
            };
            store.add_result(run_id, &r)?;
            progress.line(&format!(
                "{} tasks={}: {} ops/s, {} per op",
                r.workload,
                r.tasks,
                crate::report::si(r.ops_per_sec.median),
                crate::report::ns(r.ns_per_op.median)
            ));
            results.push(r);
        }
    }
    store.finish_run(run_id)?;
    progress.finish();
    if json {
        return super::print_json(&RunOutput {
            run_id,
            label: &plan.label,
            db: &db_path,
            system: &system,
            params: &plan,
            results: &results,
        });
    }
    super::emit_fmt!("{}", crate::report::table::results(&results));
    let label = if plan.label.is_empty() {
        String::new()
    } else {
        format!(" label '{}'", plan.label)
    };
    super::emit_fmt!("Stored as run {run_id}{label} in {}.", db_path.display());
    Ok(())
}

/// SIGINT/SIGTERM stop the measurement cleanly (tasks stopped, scratch
/// removed, results so far kept); a second SIGINT exits at once.
pub(super) fn install_interrupt_handlers() -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let f = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        flag::register_conditional_shutdown(sig, 130, f.clone())
            .context("installing signal handlers")?;
        flag::register(sig, f.clone()).context("installing signal handlers")?;
    }
    runner::set_interrupt_source(f);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_ladder_includes_cpu_count() {
        assert_eq!(parse_tasks("auto", 1).unwrap(), vec![1]);
        assert_eq!(parse_tasks("auto", 2).unwrap(), vec![1, 2]);
        assert_eq!(parse_tasks("auto", 6).unwrap(), vec![1, 2, 4, 6]);
        assert_eq!(parse_tasks("auto", 16).unwrap(), vec![1, 2, 4, 8, 16]);
    }

    #[test]
    fn explicit_ladder() {
        assert_eq!(parse_tasks("1, 2,4,2", 2).unwrap(), vec![1, 2, 4]);
        for bad in ["0", "abc", "", "1,-2"] {
            let e = parse_tasks(bad, 2).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
        }
    }

    #[test]
    fn workload_selection() {
        assert_eq!(
            parse_workloads("all").unwrap().len(),
            workloads::WORKLOADS.len()
        );
        let w = parse_workloads("open,getppid,open").unwrap();
        assert_eq!(
            w.iter().map(|d| d.name).collect::<Vec<_>>(),
            vec!["open", "getppid"]
        );
        let e = parse_workloads("getppid,nope").unwrap_err();
        assert!(e.to_string().contains("valid: getppid"), "{e}");
    }

    #[test]
    fn params_scoped_and_unscoped() {
        let sel = parse_workloads("open,stat,getppid").unwrap();
        let p = resolve_params(&sel, &["open.depth=8".into()]).unwrap();
        assert_eq!(p["open"]["depth"], "8");
        assert_eq!(p["stat"]["depth"], "4");
        let p = resolve_params(&sel, &["depth=2".into()]).unwrap();
        assert_eq!(
            (p["open"]["depth"].as_str(), p["stat"]["depth"].as_str()),
            ("2", "2")
        );
        for bad in [
            "depth",
            "open.nope=1",
            "nope.depth=1",
            "tree_walk.dirs=3",
            "colour=1",
            "open.depth=x",
        ] {
            let e = resolve_params(&sel, &[bad.into()]).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}: {e}");
        }
    }
}
