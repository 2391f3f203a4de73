//! One kernel revision measured against another: an `overhead --kernel`
//! run of two arms built from the same git checkout at two commits,
//! paired across boots, decided at a given level and stored. What a
//! `bisect` step and a `track` test both are.
//!
//! The run is described by its `overhead` command line, because that is
//! also what each guest is given to measure its half: the host and the
//! guests parse the same words, so they plan the same comparison.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::model::bisect::{Revision, Tested};

/// What every test of a series measures, and where it stores its runs.
#[derive(Debug, Clone)]
pub struct RevisionAb {
    /// The kernel tree, a git checkout (canonical).
    pub source: PathBuf,
    /// A workload (`-w`), or else the command measured.
    pub workload: Option<String>,
    pub command: Vec<String>,
    pub mechanisms: Vec<String>,
    /// The kernel command line of every boot.
    pub append: String,
    pub config: Option<PathBuf>,
    /// The change that counts, %: the noise band and the equivalence
    /// margin are half of it.
    pub threshold: f64,
    pub max_pairs: u32,
    pub metric: Option<crate::model::Metric>,
    pub seed: u64,
    pub db: PathBuf,
}

impl RevisionAb {
    /// The arm name of a revision.
    pub fn name(revision: &Revision) -> String {
        format!("r{}", revision.abbrev())
    }

    fn arm(&self, name: &str, commit: &str) -> String {
        let mut s = format!("{name}={},rev={commit}", self.source.display());
        if let Some(c) = &self.config {
            s.push_str(&format!(",config={}", c.display()));
        }
        if !self.append.is_empty() {
            s.push_str(&format!(",append={}", self.append));
        }
        s
    }

    /// The `overhead --kernel` command line of `revision` against
    /// `baseline` (its arm named `base_name`) at level `alpha`, and its
    /// arguments parsed.
    fn step(
        &self,
        base_name: &str,
        baseline: &Revision,
        revision: &Revision,
        alpha: f64,
    ) -> Result<(Vec<String>, super::overhead::OverheadArgs)> {
        let half = format!("{}", self.threshold / 2.0);
        let mut argv: Vec<String> = [
            "secperf",
            "--db",
            &self.db.display().to_string(),
            "overhead",
            "--kernel",
            &self.arm(base_name, &baseline.commit),
            "--kernel",
            &self.arm(&Self::name(revision), &revision.commit),
            "--alpha",
            &format!("{alpha}"),
            "--noise",
            &half,
            "--equivalence",
            &half,
            "--max-pairs",
            &self.max_pairs.to_string(),
            "--seed",
            &self.seed.to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Some(metric) = self.metric {
            argv.extend(["--metric".to_string(), metric.to_string()]);
        }
        for m in &self.mechanisms {
            argv.extend(["-m".to_string(), m.clone()]);
        }
        match &self.workload {
            Some(w) => argv.extend(["-w".to_string(), w.clone()]),
            None => {
                argv.push("--".to_string());
                argv.extend(self.command.iter().cloned());
            }
        }
        let cli = super::parse_args(&argv).map_err(|e| {
            crate::error::UsageError::new(format!(
                "a test's command line is not valid ({}): check -m, -w and the command",
                e.to_string().lines().next().unwrap_or("")
            ))
        })?;
        let super::Command::Overhead(o) = cli.command else {
            unreachable!("an overhead command line")
        };
        Ok((argv, *o))
    }

    /// Checks a test's command line (arms, mechanisms, workload or
    /// command) without building or booting anything.
    pub fn check(
        &self,
        base_name: &str,
        baseline: &Revision,
        revision: &Revision,
        alpha: f64,
    ) -> Result<()> {
        let (_, o) = self.step(base_name, baseline, revision, alpha)?;
        super::overhead::kernel_check(&o)
    }

    /// Builds both revisions (cached), boots them paired, stores the run
    /// and returns the change of `revision` against `baseline` at level
    /// `alpha`. A revision that does not build or boot is `Failed` (the
    /// series skips it); an interrupt or any other error is an error.
    /// `who` names the caller in the lines it prints.
    pub fn test(
        &mut self,
        base_name: &str,
        baseline: &Revision,
        revision: &Revision,
        alpha: f64,
        who: &str,
    ) -> Result<Tested> {
        let name = Self::name(revision);
        let (argv, o) = self.step(base_name, baseline, revision, alpha)?;
        match super::overhead::kernel_ab_stored(&o, &argv, &self.db) {
            Ok(run_id) => {
                let store = crate::store::Store::open_read_only(&self.db)?;
                let doc = crate::engine::document::load(&store, run_id)?;
                let c = doc
                    .comparisons
                    .iter()
                    .find(|c| c.variant == name)
                    .with_context(|| format!("run {run_id} has no comparison of {name}"))?;
                Ok(Tested::Measured {
                    estimate: c.overhead_pct.estimate,
                    ci_low: c.overhead_pct.ci_low,
                    ci_high: c.overhead_pct.ci_high,
                    pairs: c.pairs,
                    run_id: Some(run_id),
                })
            }
            Err(e) if crate::error::exit_code(&e) == 130 => Err(e),
            Err(e) => {
                let text = format!("{e:#}");
                // A revision's own failure: its build, or its guest. secperf's
                // own binary replaced under a running series (a rebuild, an
                // upgrade) is not the revision's: every guest after it would
                // fail to start, and every revision be skipped. It stops the
                // series, which resumes when started again.
                if exe_replaced() {
                    return Err(e.context(
                        "secperf's own executable was replaced while this ran (rebuilt or \
                         upgraded): start the same command again; it resumes where it stopped",
                    ));
                }
                let skip = text.contains("the build of") || text.contains("the kernel A/B stopped");
                if !skip {
                    return Err(e);
                }
                eprintln!(
                    "secperf: {who}: {} is skipped: {}",
                    revision.short(),
                    first_line(&text)
                );
                Ok(Tested::Failed(first_line(&text)))
            }
        }
    }
}

/// Whether the running executable's file has been replaced or removed
/// (Linux shows it as "PATH (deleted)").
fn exe_replaced() -> bool {
    std::fs::read_link("/proc/self/exe").is_ok_and(|p| p.to_string_lossy().ends_with(" (deleted)"))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(300).collect()
}
