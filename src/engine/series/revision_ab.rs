//! One kernel revision measured against another: a kernel A/B of two arms
//! built from the same git checkout at two commits, paired across boots,
//! decided at a given level and stored. What a `bisect` step and a `track`
//! test both are.
//!
//! The comparison is typed ([`RevisionAb::request`]: the plan the host
//! runs), and each guest is told its halves of it in types too (the
//! request of [`crate::engine::boots::guest_request`]).

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::engine::ab::counting::Counting;
use crate::engine::plan::{HalfDesign, OverheadPlan, OverheadRequest, Placement};
use crate::model::Metric;
use crate::model::bisect::{Revision, Tested};
use crate::stats::decision::DecisionOpts;
use crate::vm::accel::AccelChoice;

/// What every test of a series measures, and where it stores its runs.
#[derive(Debug, Clone)]
pub struct RevisionAb {
    /// The question, as given (its workload or command, mechanisms,
    /// command line, config fragment, threshold and budget).
    pub spec: super::SeriesSpec,
    /// The kernel tree, a git checkout (canonical).
    pub source: PathBuf,
    /// How the guests count (decided once, for the spec's `--metric`).
    pub counting: Counting,
    pub seed: u64,
    /// The guests' accelerator and the limit on each, boot included.
    pub accel: AccelChoice,
    pub timeout: crate::vm::process::Timeouts,
    /// The results file every test is stored in.
    pub db: PathBuf,
}

impl RevisionAb {
    /// The arm name of a revision.
    pub fn name(revision: &Revision) -> String {
        format!("r{}", revision.abbrev())
    }

    /// The arm `name` built at `commit`: the checkout at that revision,
    /// with the config fragment and the command line of every boot.
    pub fn arm(&self, name: &str, commit: &str) -> Result<crate::vm::arms::ArmRequest> {
        let mut source = crate::kbuild::SourceSpec::new(&self.source)
            .map_err(|e| e.context(format!("arm {name}")))?;
        source
            .take_key("rev", commit)
            .map_err(|e| e.context(format!("arm {name}")))?;
        if let Some(c) = &self.spec.config {
            source
                .take_key("config", &c.display().to_string())
                .map_err(|e| e.context(format!("arm {name}")))?;
        }
        Ok(crate::vm::arms::ArmRequest {
            name: name.to_string(),
            vm: crate::vm::VmSpec {
                image: self.source.clone(),
                append: self.spec.append.trim().to_string(),
                cpus: None,
                memory: None,
            },
            source: Some(source),
        })
    }

    /// The comparison's arms: the baseline (named `base_name`) and the
    /// revision, every build tool checked.
    pub fn arms(
        &self,
        base_name: &str,
        baseline: &Revision,
        revision: &Revision,
    ) -> Result<crate::engine::boots::kernels::Arms> {
        crate::engine::boots::kernels::Arms::checked(vec![
            self.arm(base_name, &baseline.commit)?,
            self.arm(&Self::name(revision), &revision.commit)?,
        ])
    }

    /// The decision: noise band and equivalence margin at half the
    /// threshold, the sequential design's test and error rate.
    fn decision(&self, alpha: f64) -> Result<DecisionOpts> {
        let half = self.spec.threshold / 2.0;
        Ok(DecisionOpts {
            test: crate::engine::plan::DEFAULT_TEST,
            error_rate: crate::engine::plan::DEFAULT_ERROR_RATE,
            ..DecisionOpts::validated(alpha, half, half)?
        })
    }

    /// The workload list and its parameters: `-w`, or the command.
    fn workload(&self) -> (String, Vec<String>) {
        match &self.spec.workload {
            Some(w) => (w.clone(), Vec::new()),
            None => {
                let name = crate::workloads::command::NAME;
                (
                    name.to_string(),
                    vec![format!(
                        "{name}.argv={}",
                        crate::workloads::command::argv_param(&self.spec.command)
                    )],
                )
            }
        }
    }

    /// The comparison at level `alpha`, typed: one task, pinned, the
    /// sequential design up to `max_pairs`, no added control (the arms
    /// are kernels), the mechanisms on in every boot.
    pub fn request(&self, alpha: f64) -> Result<OverheadRequest> {
        let (workload, params) = self.workload();
        Ok(OverheadRequest {
            mechanisms: if self.spec.mechanisms.is_empty() {
                vec!["none".to_string()]
            } else {
                self.spec.mechanisms.clone()
            },
            workloads: Some(workload),
            params,
            placement: Placement {
                tasks: vec![1],
                cpus: crate::sys::cpus::allowed_cpus()
                    .context("reading this process's CPU affinity")?,
                scratch: std::env::temp_dir(),
                label: String::new(),
            },
            mode: crate::model::Mode::Process,
            half: HalfDesign {
                pairs: None,
                max_pairs: Some(self.spec.max_pairs),
                sample_ms: crate::engine::plan::DEFAULT_SAMPLE_MS,
                samples_per_half: match self.counting.metric() {
                    Metric::Instructions => crate::engine::plan::COUNTING_SAMPLES_PER_HALF,
                    Metric::Time => crate::engine::plan::DEFAULT_SAMPLES_PER_HALF,
                },
                warmup: 0,
            },
            quick: false,
            no_control: true,
            seed: Some(self.seed),
            decision: self.decision(alpha)?,
            precision: None,
            profile: None,
            sweep: None,
            equivalence_auto: false,
            counting: self.counting,
        })
    }

    /// The comparison's arms and plan, every build tool checked: what
    /// [`RevisionAb::test`] runs, without building or booting anything.
    pub fn plan(
        &self,
        base_name: &str,
        baseline: &Revision,
        revision: &Revision,
        alpha: f64,
    ) -> Result<(crate::engine::boots::kernels::Arms, OverheadPlan)> {
        let reqs = self.arms(base_name, baseline, revision)?;
        let plan = OverheadPlan::new(&self.request(alpha)?)?;
        Ok((reqs, plan))
    }

    /// Checks a test (arms, mechanisms, workload or command, build tools)
    /// without building or booting anything.
    pub fn check(
        &self,
        base_name: &str,
        baseline: &Revision,
        revision: &Revision,
        alpha: f64,
    ) -> Result<()> {
        self.plan(base_name, baseline, revision, alpha).map(|_| ())
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
        let (reqs, plan) = self.plan(base_name, baseline, revision, alpha)?;
        let measured = crate::engine::boots::kernels::measure_stored(
            &reqs,
            &plan,
            &crate::engine::boots::kernels::Guests {
                accel: self.accel,
                timeout: self.timeout,
                no_wait: false,
            },
            &self.db,
        );
        match measured {
            Ok(run_id) => {
                let store = crate::store::Store::open_read_only(&self.db)?;
                let doc = crate::read::document::load(&store, run_id)?;
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
                crate::say!(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A source directory with a config fragment in it (what the arms
    /// need to exist); kept for the test's life.
    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("frag"), "CONFIG_AUDIT=y\n").unwrap();
        d
    }

    fn ab(metric: Metric, tree: &tempfile::TempDir) -> RevisionAb {
        let source = std::fs::canonicalize(tree.path()).unwrap();
        RevisionAb {
            spec: super::super::SeriesSpec {
                source: source.clone(),
                workload: Some("getppid".into()),
                command: Vec::new(),
                mechanisms: Vec::new(),
                append: "audit=1 quiet".into(),
                config: Some(source.join("frag")),
                threshold: 4.0,
                max_pairs: 16,
                metric,
            },
            source,
            counting: Counting::of_metric(metric),
            seed: 7,
            accel: AccelChoice::Auto,
            timeout: crate::vm::process::Timeouts::total(std::time::Duration::from_secs(7200)),
            db: "/tmp/r.db".into(),
        }
    }

    fn rev(c: &str) -> Revision {
        Revision {
            commit: c.repeat(40 / c.len()),
            subject: "s".into(),
        }
    }

    #[test]
    fn the_arms_are_the_checkout_at_two_commits_with_the_config_and_command_line() {
        let t = tree();
        let a = ab(Metric::Time, &t);
        let reqs = a.arms("good", &rev("a"), &rev("b")).unwrap();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].name, "good");
        assert_eq!(reqs[1].name, RevisionAb::name(&rev("b")));
        assert!(reqs.iter().all(|r| r.source.is_some()), "{reqs:?}");
        let arm = a.arm("x", "abc").unwrap();
        let source = arm.source.unwrap();
        assert_eq!(source.source, a.source);
        assert_eq!(source.rev.as_deref(), Some("abc"));
        assert_eq!(source.config, Some(a.source.join("frag")));
        assert!(source.patches.is_empty() && !source.layout);
        assert_eq!(arm.vm.image, a.source);
        assert_eq!(arm.vm.append, "audit=1 quiet");
    }

    #[test]
    fn the_typed_comparison_is_the_sequential_design_at_half_the_threshold() {
        let t = tree();
        let r = ab(Metric::Instructions, &t).request(0.001).unwrap();
        assert_eq!(r.mechanisms, vec!["none"]);
        assert_eq!(r.workloads.as_deref(), Some("getppid"));
        assert_eq!(r.placement.tasks, vec![1]);
        assert_eq!(r.half.max_pairs, Some(16));
        assert_eq!(r.half.pairs, None);
        assert_eq!(
            r.half.samples_per_half,
            crate::engine::plan::COUNTING_SAMPLES_PER_HALF
        );
        assert_eq!(
            (
                r.decision.alpha,
                r.decision.noise_pct,
                r.decision.equivalence_pct
            ),
            (0.001, 2.0, 2.0)
        );
        assert!(r.no_control);
        let timed = ab(Metric::Time, &t).request(0.05).unwrap();
        assert_eq!(
            timed.half.samples_per_half,
            crate::engine::plan::DEFAULT_SAMPLES_PER_HALF
        );
        // A command is the `command` workload with its argv.
        let mut c = ab(Metric::Time, &t);
        c.spec.workload = None;
        c.spec.command = vec!["true".into()];
        let r = c.request(0.05).unwrap();
        assert_eq!(
            r.workloads.as_deref(),
            Some(crate::workloads::command::NAME)
        );
        assert_eq!(r.params.len(), 1, "{:?}", r.params);
        assert_eq!(r.counting, Counting::Clock);
    }

    #[test]
    fn a_bad_level_or_an_unknown_mechanism_is_refused_before_anything_runs() {
        let t = tree();
        let a = ab(Metric::Time, &t);
        let e = a.request(1.5).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
        let mut m = ab(Metric::Time, &t);
        m.spec.mechanisms = vec!["nonesuch".into()];
        let e = OverheadPlan::new(&m.request(0.05).unwrap()).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
    }
}
