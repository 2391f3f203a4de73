//! What `run` and `overhead` share: the task placement arguments and the
//! parsers of workload lists, task ladders and workload parameters.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::error::UsageError;
use crate::model::{Mode, Params};
use crate::stats::decision::DecisionOpts;
use crate::sys::cpus;
use crate::usage_bail;
use crate::workloads::{self, WorkloadDef};

/// Where and how tasks run, and what the run is called.
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// Task counts: a comma-separated ladder ("1,2,4") or "auto" (1, 2, 4, ...
    /// up to the online CPU count, which is always included) [default: auto
    /// for `run`, 1 for `overhead`].
    #[arg(short, long, value_name = "N,...|auto")]
    pub tasks: Option<String>,

    /// Tasks as forked processes or as threads of one process.
    #[arg(long, value_enum, default_value_t = Mode::Process)]
    pub mode: Mode,

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

    /// Directory for the files workloads create (choose the filesystem under
    /// test) [default: the system temporary directory].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// `--format` and `-o` of the commands that measure (`run`, `overhead`).
#[derive(Debug, Args)]
pub struct ReportFormatArgs {
    /// Output format instead of the default table: table, email (72-column
    /// ASCII for a mailing list), markdown, json (the report grid), csv,
    /// benchstat. `--json` still prints the full result document.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<crate::report::formats::Format>,

    /// With --format: write to this file (a directory for benchstat).
    #[arg(short, long, value_name = "PATH", requires = "format")]
    pub output: Option<PathBuf>,
}

/// The thresholds of the verdicts (`overhead`, `compare`), checked once
/// into [`DecisionOpts`].
#[derive(Debug, Args)]
pub struct DecisionArgs {
    /// Significance level, after Holm correction across the table's rows.
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub alpha: f64,

    /// Noise band, percent: a change is slower/faster only when its whole
    /// 95% interval lies outside +-noise.
    #[arg(long, default_value_t = 1.0, value_name = "PCT")]
    pub noise: f64,

    /// Equivalence margin, percent (above 0): "negligible" when a two
    /// one-sided test shows the change lies within +-margin.
    #[arg(long, default_value_t = 1.0, value_name = "PCT")]
    pub equivalence: f64,
}

impl DecisionArgs {
    pub fn resolve(&self) -> Result<DecisionOpts> {
        DecisionOpts::validated(self.alpha, self.noise, self.equivalence)
    }
}

/// How each A/B pair is measured (`overhead` and `calibrate`).
#[derive(Debug, Args)]
pub struct PairArgs {
    /// A/B pairs per comparison (at least 10) [default: overhead 12, or more
    /// when Holm correction needs them; calibrate 10].
    #[arg(long, value_name = "N")]
    pub pairs: Option<u32>,

    /// Length of one sample (time slice), milliseconds [default: 60, 30 with --quick].
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<u64>,

    /// Samples kept in each half of a pair [default: 2, 1 with --quick].
    #[arg(long, value_name = "N")]
    pub samples_per_half: Option<u32>,

    /// Slices discarded at the start of each half [default: 1, 0 with --quick].
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
}

/// [`PairArgs`] with defaults filled in and checked; `pairs` stays a
/// choice of the caller when not given.
#[derive(Debug, Clone, Copy)]
pub struct HalfDesign {
    pub pairs: Option<u32>,
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
}

impl PairArgs {
    pub fn resolve(&self, quick: bool) -> Result<HalfDesign> {
        if let Some(pairs) = self.pairs.filter(|&p| p < 10) {
            usage_bail!("--pairs {pairs}: at least 10 pairs are needed for a meaningful interval");
        }
        let sample_ms = self.sample_ms.unwrap_or(if quick { 30 } else { 60 });
        if !(5..=600_000).contains(&sample_ms) {
            usage_bail!("--sample-ms must be between 5 and 600000 milliseconds");
        }
        let samples_per_half = self.samples_per_half.unwrap_or(if quick { 1 } else { 2 });
        if samples_per_half == 0 {
            usage_bail!("--samples-per-half must be at least 1");
        }
        Ok(HalfDesign {
            pairs: self.pairs,
            sample_ms,
            samples_per_half,
            warmup: self.warmup.unwrap_or(if quick { 0 } else { 1 }),
        })
    }
}

/// [`TaskArgs`] checked against this machine.
#[derive(Debug, Clone)]
pub struct Placement {
    pub tasks: Vec<usize>,
    /// CPUs task i is pinned to (`cpus[i]`); empty without pinning.
    pub cpus: Vec<usize>,
    pub scratch: PathBuf,
    pub label: String,
}

impl TaskArgs {
    /// Validates the ladder against the CPUs this process may use.
    pub fn resolve(&self, default_tasks: &str) -> Result<Placement> {
        let allowed = cpus::allowed_cpus().context("reading this process's CPU affinity")?;
        let online = cpus::online_cpus().context("reading online CPUs")?.len();
        let tasks = parse_tasks(
            self.tasks.as_deref().unwrap_or(default_tasks),
            online.min(allowed.len()),
        )?;
        let max_tasks = *tasks.iter().max().unwrap_or(&1);
        if !self.no_pin && max_tasks > allowed.len() {
            usage_bail!(
                "--tasks {max_tasks}: only {} CPUs are available to pin tasks to; \
                 use at most {} tasks, or --no-pin to oversubscribe",
                allowed.len(),
                allowed.len()
            );
        }
        if let Some(dir) = self.scratch.as_ref().filter(|d| !d.is_dir()) {
            usage_bail!("--scratch {}: not a directory", dir.display());
        }
        Ok(Placement {
            tasks,
            cpus: if self.no_pin { Vec::new() } else { allowed },
            scratch: self.scratch.clone().unwrap_or_else(std::env::temp_dir),
            label: self.label.clone().unwrap_or_default(),
        })
    }
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

/// The command line as typed, for reproduction.
pub fn meta_command() -> String {
    // argv[0] may be a build path (./target/release/secperf): name the tool.
    std::iter::once("secperf".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The metadata of a run starting now on this machine: the probe
/// snapshot, host, version and the command line that reproduces it.
pub fn run_meta(
    kind: &str,
    label: &str,
    params: &impl serde::Serialize,
) -> Result<crate::model::RunMeta> {
    Ok(crate::model::RunMeta {
        label: label.to_string(),
        kind: kind.to_string(),
        started_at: chrono::Utc::now(),
        host: crate::sys::hostname(),
        secperf_version: env!("CARGO_PKG_VERSION").into(),
        command: meta_command(),
        params: serde_json::to_value(params)?,
        system: serde_json::to_value(crate::probe::probe())?,
    })
}

/// Measures A/B comparisons in order (each with its own design), stores
/// each as it finishes, then applies the report's final verdicts (Holm,
/// noise band, equivalence) to all of them and stores those. `role` adds
/// to a comparison's progress line (" (negative control)").
#[allow(clippy::too_many_arguments)]
pub fn measure_comparisons<'a>(
    store: &mut crate::store::Store,
    run_id: i64,
    cases: impl IntoIterator<Item = (&'a crate::overhead::Case, crate::overhead::Design, &'a str)>,
    lock: Option<&crate::safety::StateLock>,
    seed: u64,
    progress: &super::progress::Progress,
    decision: &crate::stats::decision::DecisionOpts,
) -> Result<Vec<crate::model::Comparison>> {
    let mut rng = crate::stats::bootstrap::Rng::new(seed);
    let mut comparisons = Vec::new();
    let mut ids = Vec::new();
    for (case, design, role) in cases {
        let what = format!(
            "{} on {} tasks={}{role}",
            case.treatment, case.workload.name, case.tasks
        );
        progress.start(&what);
        let c = crate::overhead::compare(case, &design, lock, &mut rng, &mut |t| progress.tick(t))?;
        ids.push(store.add_comparison(run_id, &c)?);
        progress.line(&format!("{what}: {}", c.overhead_pct.describe()));
        comparisons.push(c);
    }
    crate::overhead::decide_all(&mut comparisons, decision);
    for (c, id) in comparisons.iter().zip(&ids) {
        store.set_comparison_decision(*id, c.overhead_pct.p_value, c.overhead_pct.verdict)?;
    }
    Ok(comparisons)
}

/// Where fixtures kept across runs live: $XDG_CACHE_HOME/secperf.
pub fn cache_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("secperf")
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
