//! `secperf bisect SOURCE --good REV --bad REV -w WORKLOAD`: the first
//! commit that made a workload slower, each step a paired A/B across
//! boots of the revision against `--good`, with a stated error rate
//! (`engine::bisect`). Each step is an `overhead --kernel` run, stored;
//! the steps done are kept, so the same command after Ctrl-C goes on.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::engine::bisect::{BisectOpts, Outcome, Revision, Step, StepTester, Tested};
use crate::usage_bail;

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// The kernel source: a git checkout. It is never touched: each
    /// revision is checked out into secperf's own build tree.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The older revision, without the slowdown.
    #[arg(long, value_name = "REV")]
    pub good: String,

    /// The newer revision, with the slowdown.
    #[arg(long, value_name = "REV")]
    pub bad: String,

    /// The workload every step measures (see `secperf list`).
    #[arg(short, long, value_name = "NAME",
          value_parser = super::args::Candidates::workloads(), hide_possible_values = true)]
    pub workload: String,

    /// The kernel command line of every boot, e.g. audit=1.
    #[arg(long, value_name = "ARGS", default_value = "")]
    pub append: String,

    /// A config fragment for every build, applied after secperf's.
    #[arg(long, value_name = "FRAGMENT")]
    pub config: Option<PathBuf>,

    /// The slowdown that counts, percent of the workload's ns/op: a
    /// revision is bad when it is slower than --good by more than half of
    /// it (its whole interval), good when its whole interval is below half
    /// of it.
    #[arg(long, default_value_t = 5.0, value_name = "PCT")]
    pub threshold: f64,

    /// The whole bisection's error rate: the probability that the named
    /// commit is wrong, split over the endpoint check and every step
    /// (Bonferroni, docs/methodology.md).
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub alpha: f64,

    /// Revisions not to test (they do not build or boot), as `git bisect
    /// skip`; repeatable. A revision that fails to build or boot is
    /// skipped by itself.
    #[arg(long, value_name = "REV")]
    pub skip: Vec<String>,

    /// Steps the error budget keeps for skips, beyond log2 of the
    /// revisions.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub extra_steps: usize,

    /// Pairs of boots a step may take before it is undecided.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub max_pairs: u32,

    /// The seed of every step's boot order (default: from the revisions).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Write the `git bisect log`-compatible log here (for `git bisect
    /// replay`).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Show the revisions, the error budget and what is cached, and stop.
    #[arg(long)]
    pub dry_run: bool,
}

/// A step: an `overhead --kernel` run of the revision against good.
struct OverheadSteps<'a> {
    args: &'a BisectArgs,
    source: PathBuf,
    good: String,
    db: PathBuf,
    seed: u64,
}

impl OverheadSteps<'_> {
    fn arm(&self, name: &str, commit: &str) -> String {
        let mut s = format!("{name}={},rev={commit}", self.source.display());
        if let Some(c) = &self.args.config {
            s.push_str(&format!(",config={}", c.display()));
        }
        if !self.args.append.is_empty() {
            s.push_str(&format!(",append={}", self.args.append));
        }
        s
    }
}

impl StepTester for OverheadSteps<'_> {
    fn test(&mut self, revision: &Revision, alpha: f64) -> Result<Tested> {
        let name = format!("r{}", &revision.commit[..12]);
        let half = format!("{}", self.args.threshold / 2.0);
        let argv: Vec<String> = [
            "secperf",
            "--db",
            &self.db.display().to_string(),
            "overhead",
            "-w",
            &self.args.workload,
            "--kernel",
            &self.arm("good", &self.good),
            "--kernel",
            &self.arm(&name, &revision.commit),
            "--alpha",
            &format!("{alpha}"),
            "--noise",
            &half,
            "--equivalence",
            &half,
            "--max-pairs",
            &self.args.max_pairs.to_string(),
            "--seed",
            &self.seed.to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let cli = super::parse_args(&argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        let super::Command::Overhead(o) = cli.command else {
            unreachable!("an overhead command line")
        };
        eprintln!("secperf: bisect: testing {}", revision.short());
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
                let skip = text.contains("the build of") || text.contains("the kernel A/B stopped");
                if !skip {
                    return Err(e);
                }
                eprintln!(
                    "secperf: bisect: {} is skipped: {}",
                    revision.short(),
                    first_line(&text)
                );
                Ok(Tested::Failed(first_line(&text)))
            }
        }
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(300).collect()
}

/// Where a bisection's finished steps are kept (resume).
fn state_file(args: &BisectArgs, source: &Path, good: &str, bad: &str) -> PathBuf {
    // Not --max-pairs: a step decided with fewer pairs stands, and an
    // undecided one is measured again (with the budget now given).
    let key = format!(
        "{}\n{good}\n{bad}\n{}\n{}\n{:?}\n{}\n{}\n{}",
        source.display(),
        args.workload,
        args.append,
        args.config,
        args.threshold,
        args.alpha,
        args.extra_steps,
    );
    crate::kbuild::cache_root().join("bisect").join(format!(
        "{}.json",
        &crate::kbuild::sha256_hex(key.as_bytes())[..16]
    ))
}

/// Every step a bisection measured before, undecided ones included.
fn load_steps(file: &Path) -> Vec<Step> {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The steps to take as they are (decided, or skipped), and how many
/// attempts ended undecided: those revisions are measured again, and each
/// earlier attempt keeps its share of the error budget.
fn split_steps(all: &[Step]) -> (Vec<Step>, usize) {
    let undecided = crate::engine::bisect::Class::Undecided;
    (
        all.iter()
            .filter(|s| s.class != undecided)
            .cloned()
            .collect(),
        all.iter().filter(|s| s.class == undecided).count(),
    )
}

fn save_steps(file: &Path, steps: &[Step]) -> Result<()> {
    if let Some(d) = file.parent() {
        std::fs::create_dir_all(d)?;
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string_pretty(steps)?)?;
    std::fs::rename(&tmp, file)?;
    Ok(())
}

pub fn bisect(args: BisectArgs, db: Option<&Path>, json: bool) -> Result<()> {
    if !(args.threshold > 0.0 && args.threshold < 1000.0) {
        usage_bail!(
            "--threshold {}: give a slowdown in percent above 0 (e.g. 5)",
            args.threshold
        );
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        usage_bail!(
            "--alpha {}: give an error rate between 0 and 1 (e.g. 0.05)",
            args.alpha
        );
    }
    if crate::workloads::find(&args.workload).is_none() {
        usage_bail!(
            "-w {}: unknown workload (see `secperf list`); bisect measures one workload",
            args.workload
        );
    }
    if args.max_pairs < 3 {
        usage_bail!(
            "--max-pairs {}: a step needs at least 3 pairs",
            args.max_pairs
        );
    }
    if !args.source.is_dir() {
        usage_bail!(
            "bisect: {} is not a directory (give a git checkout of a kernel)",
            args.source.display()
        );
    }
    let source = std::fs::canonicalize(&args.source)?;
    let ((good_commit, good_subject), series) =
        crate::kbuild::series::series(&source, &args.good, &args.bad)?;
    crate::kbuild::tools::check()?;
    let good = Revision {
        commit: good_commit.clone(),
        subject: good_subject,
    };
    let revisions: Vec<Revision> = series
        .into_iter()
        .map(|(commit, subject)| Revision { commit, subject })
        .collect();
    let k = crate::engine::bisect::decisions(revisions.len(), args.extra_steps);
    let file = state_file(
        &args,
        &source,
        &good.commit,
        &revisions.last().unwrap().commit,
    );
    let all_before = load_steps(&file);
    let (done, undecided_before) = split_steps(&all_before);
    let opts = BisectOpts {
        threshold_pct: args.threshold,
        alpha: args.alpha,
        extra: args.extra_steps,
        skip: args.skip.clone(),
        spent_before: undecided_before,
    };
    if args.dry_run {
        let text = format!(
            "Bisect {} revisions after {} up to {} on {} (nothing is built or booted: \
             --dry-run)\nError budget: {k} decisions (the endpoint check, {} steps, {} for \
             skips), each at alpha {:.4} (whole bisection: {})\nA revision is bad when its \
             slowdown's interval lies above {:.1}%, good when below; at most {} pairs a step.\n\
             Steps already done (resumed): {}\nRevisions:\n{}",
            revisions.len(),
            good.short(),
            revisions.last().unwrap().short(),
            args.workload,
            k - 1 - args.extra_steps,
            args.extra_steps,
            args.alpha / k as f64,
            args.alpha,
            args.threshold / 2.0,
            args.max_pairs,
            done.len(),
            revisions
                .iter()
                .map(|r| format!("  {}", r.short()))
                .collect::<Vec<_>>()
                .join("\n")
        );
        if json {
            return super::print_json(&serde_json::json!({
                "good": good, "revisions": revisions, "decisions": k,
                "step_alpha": args.alpha / k as f64, "done": done,
            }));
        }
        super::emit(&text);
        return Ok(());
    }
    if !all_before.is_empty() {
        eprintln!(
            "secperf: bisect: going on from {} finished step(s) in {}{}",
            done.len(),
            file.display(),
            if undecided_before > 0 {
                format!(
                    "; {undecided_before} undecided attempt(s) are measured again, each \
                     having spent a decision of the budget"
                )
            } else {
                String::new()
            }
        );
    }
    let db_path = crate::store::resolve_db_path(db)?;
    let seed = args
        .seed
        .unwrap_or_else(|| u64::from_str_radix(&good.commit[..15], 16).unwrap_or(1));
    let mut tester = OverheadSteps {
        args: &args,
        source: source.clone(),
        good: good.commit.clone(),
        db: db_path.clone(),
        seed,
    };
    let begun = std::time::Instant::now();
    // Kept whole, earlier undecided attempts included (they keep their
    // share of the budget when the bisection goes on again).
    let mut finished = all_before.clone();
    let outcome = crate::engine::bisect::bisect(
        &good,
        &revisions,
        &opts,
        &mut tester,
        &done,
        &mut |s, left| {
            finished.push(s.clone());
            save_steps(&file, &finished)?;
            eprintln!(
                "secperf: bisect: {} of at most {k}: {} is {}{} ({:.0} s building and \
                 booting; {:.0} s in all so far); {left} revision(s) left",
                if s.index + 1 == revisions.len() {
                    "the endpoint check, decision 1".to_string()
                } else {
                    format!("decision {}", finished.len())
                },
                s.revision.short(),
                s.class.word(),
                match &s.tested {
                    Tested::Measured {
                        estimate,
                        ci_low,
                        ci_high,
                        pairs,
                        ..
                    } =>
                        format!(": {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}] in {pairs} pairs"),
                    Tested::Failed(why) => format!(": {why}"),
                },
                s.seconds,
                begun.elapsed().as_secs_f64()
            );
            Ok(())
        },
    )?;
    if let Some(path) = &args.log {
        std::fs::write(path, outcome.log.join("\n") + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if json {
        return super::print_json(&outcome);
    }
    super::emit(&render(&outcome, args.threshold));
    Ok(())
}

/// The outcome as text: the verdict, each step, the log.
fn render(o: &Outcome, threshold: f64) -> String {
    let mut s = format!(
        "Bisect of {} revisions: {}.\nEach step at alpha {:.4} ({} decisions; the named commit is \
         wrong with probability at most {:.2} if a revision's slowdown is 0 before the culprit \
         and at least the threshold, {threshold}%, from it on).\n\n",
        o.revisions.len(),
        o.verdict,
        o.step_alpha,
        o.decisions,
        o.step_alpha * o.decisions as f64
    );
    for (i, st) in o.steps.iter().enumerate() {
        let what = match &st.tested {
            Tested::Measured {
                estimate,
                ci_low,
                ci_high,
                pairs,
                run_id,
            } => format!(
                "{estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}], {pairs} pairs{}",
                run_id.map(|r| format!(", run {r}")).unwrap_or_default()
            ),
            Tested::Failed(why) => why.clone(),
        };
        s.push_str(&format!(
            "  {} {:<10} {}: {} ({:.0} s)\n",
            if i == 0 { "endpoint" } else { "step    " },
            st.class.word(),
            st.revision.short(),
            what,
            st.seconds
        ));
    }
    if !o.candidates.is_empty() {
        s.push_str("\nCandidates for the first bad commit:\n");
        for c in &o.candidates {
            s.push_str(&format!("  {}\n", c.short()));
        }
    }
    s.push_str("\ngit bisect log (git bisect replay reads it):\n");
    for l in &o.log {
        s.push_str(&format!("  {l}\n"));
    }
    s.trim_end().to_string()
}
