//! `secperf bisect`'s decisions: which revision to test next, what a
//! step's interval says of it, and how sure the whole bisection is.
//!
//! The revisions are those after `--good` up to `--bad` (oldest first,
//! `--bad` last). Each step compares a revision with `--good` by paired
//! boots and classifies it from the step's interval of the slowdown (%),
//! split at half the threshold T:
//!
//! - **bad**: the whole interval above T/2 (slower than good);
//! - **good**: the whole interval below T/2 (no slower than good, within
//!   the threshold);
//! - **undecided**: the interval straddles T/2 after the step's budget of
//!   pairs. The bisection stops there and says so: it never guesses.
//!
//! A revision that does not build or boot, or that the user names with
//! `--skip`, is skipped, as `git bisect skip` does: the next candidate is
//! the untested one nearest the middle.
//!
//! **The error budget.** The endpoint check and every step spend one of
//! K = 1 + ceil(log2(N)) + extra decisions (N revisions, `extra` steps
//! for skips), each at level alpha / K. If every interval covers its true
//! value (probability at least 1 - alpha, by Bonferroni), and a revision's
//! true slowdown is either 0 (before the culprit) or at least T (from it
//! on), then no classification is wrong: a good verdict bounds the true
//! slowdown below T/2, so it is not the culprit's T; a bad verdict bounds
//! it above T/2, so it is not 0. So the named commit is wrong with
//! probability at most alpha. docs/methodology.md has the argument and
//! its assumption.
//!
//! [`run`] is the command's one call: the request in, the stored record
//! (or the dry run's plan) out.

use serde::{Deserialize, Serialize};

pub use crate::model::bisect::{Class, Outcome, Revision, Step, Tested};
pub use run::{BisectOutcome, BisectPlan, BisectRequest, run};

mod run;

/// Classifies a step's interval of the slowdown against good (%), with
/// threshold `t` (%).
pub fn classify(ci_low: f64, ci_high: f64, t: f64) -> Class {
    if !(ci_low.is_finite() && ci_high.is_finite()) {
        return Class::Undecided;
    }
    if ci_low > t / 2.0 {
        Class::Bad
    } else if ci_high < t / 2.0 {
        Class::Good
    } else {
        Class::Undecided
    }
}

/// The number of decisions the error budget is shared by: the endpoint
/// check, ceil(log2(n)) steps for n revisions, and `extra` for skips.
pub fn decisions(n: usize, extra: usize) -> usize {
    let steps = (usize::BITS - n.max(1).saturating_sub(1).leading_zeros()) as usize;
    1 + steps + extra
}

/// Each decision's level: alpha / K (Bonferroni).
pub fn step_alpha(alpha: f64, n: usize, extra: usize) -> f64 {
    alpha / decisions(n, extra) as f64
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Test the revision at this index.
    Test(usize),
    /// The first bad revision is at this index.
    Found(usize),
    /// The first bad revision is one of these indexes (skips left no
    /// untested revision between them).
    Among(Vec<usize>),
    /// A step was undecided: the first bad revision is one of these
    /// indexes, and the one at `at` could not be classified.
    Undecided { at: usize, range: Vec<usize> },
    /// The error budget is spent before the end: the first bad revision
    /// is one of these.
    BudgetSpent(Vec<usize>),
}

/// A bisection over `n` revisions (index n - 1 is `--bad`, known bad).
#[derive(Debug, Clone)]
pub struct Bisection {
    n: usize,
    classes: Vec<Option<Class>>,
    budget: usize,
    spent: usize,
}

impl Bisection {
    /// `budget`: the decisions left after the endpoint check
    /// ([`decisions`] less one).
    pub fn new(n: usize, budget: usize) -> Bisection {
        let mut classes = vec![None; n];
        if n > 0 {
            classes[n - 1] = Some(Class::Bad);
        }
        Bisection {
            n,
            classes,
            budget,
            spent: 0,
        }
    }

    /// The last known good index (-1: `--good` itself) and the first
    /// known bad one, given what was recorded.
    fn bounds(&self) -> (isize, usize) {
        let hi = (0..self.n)
            .find(|&i| self.classes[i] == Some(Class::Bad))
            .unwrap_or(self.n.saturating_sub(1));
        let lo = (0..hi)
            .rev()
            .find(|&i| self.classes[i] == Some(Class::Good))
            .map_or(-1, |i| i as isize);
        (lo, hi)
    }

    /// The revisions the first bad one may still be.
    fn range(&self) -> Vec<usize> {
        let (lo, hi) = self.bounds();
        ((lo + 1) as usize..=hi).collect()
    }

    pub fn next(&self) -> Next {
        let (lo, hi) = self.bounds();
        let lo1 = (lo + 1) as usize;
        if let Some(at) = (lo1..hi).find(|&i| self.classes[i] == Some(Class::Undecided)) {
            return Next::Undecided {
                at,
                range: self.range(),
            };
        }
        if lo1 == hi {
            return Next::Found(hi);
        }
        let open: Vec<usize> = (lo1..hi).filter(|&i| self.classes[i].is_none()).collect();
        if open.is_empty() {
            return Next::Among(self.range());
        }
        if self.spent >= self.budget {
            return Next::BudgetSpent(self.range());
        }
        // The untested revision nearest the middle (the lower on a tie).
        let mid2 = lo + hi as isize; // twice the middle
        let pick = *open
            .iter()
            .min_by_key(|&&i| ((2 * i as isize) - mid2).abs())
            .expect("open is not empty");
        Next::Test(pick)
    }

    /// Records a step's class of revision `i`. A skip spends no budget
    /// (nothing was decided); a measured step does.
    pub fn record(&mut self, i: usize, class: Class) {
        if i < self.n {
            self.classes[i] = Some(class);
            if class != Class::Skip {
                self.spent += 1;
            }
        }
    }

    pub fn spent(&self) -> usize {
        self.spent
    }
}

/// One line of a `git bisect log`-compatible log for a decided revision
/// (`git bisect replay` reads it back).
pub fn log_lines(class: Class, commit: &str, subject: &str) -> Vec<String> {
    let verb = match class {
        Class::Good => "good",
        Class::Bad => "bad",
        Class::Skip => "skip",
        Class::Undecided => return vec![format!("# undecided: [{commit}] {subject}")],
    };
    vec![
        format!("# {verb}: [{commit}] {subject}"),
        format!("git bisect {verb} {commit}"),
    ]
}

/// Tests a revision against `--good` at a level (builds and boots it).
pub trait StepTester {
    fn test(&mut self, revision: &Revision, alpha: f64) -> anyhow::Result<Tested>;
}

/// What the bisection was asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BisectOpts {
    /// The slowdown that counts, percent.
    pub threshold_pct: f64,
    /// The whole bisection's error rate.
    pub alpha: f64,
    /// Steps the budget keeps for skips.
    pub extra: usize,
    /// Revisions not to test (`--skip`).
    pub skip: Vec<String>,
    /// Decisions spent by earlier runs of this bisection on steps that
    /// ended undecided (measured again now): each attempt spends one.
    #[serde(default)]
    pub spent_before: usize,
}

/// The `git bisect log`-compatible log of `steps` after `good`, ending
/// with the first bad commit when found.
pub fn git_log(good: &Revision, steps: &[Step], first_bad: Option<&Revision>) -> Vec<String> {
    let mut log = vec![
        "git bisect start".to_string(),
        format!("# good: [{}] {}", good.commit, good.subject),
        format!("git bisect good {}", good.commit),
    ];
    for s in steps {
        log.extend(log_lines(s.class, &s.revision.commit, &s.revision.subject));
    }
    if let Some(f) = first_bad {
        log.push(format!("# first bad commit: [{}] {}", f.commit, f.subject));
    }
    log
}

/// Where a bisection stands while it runs: `steps` so far (in the order
/// measured) with `left` revisions the first bad one may still be.
pub fn in_progress(
    good: &Revision,
    revisions: &[Revision],
    opts: &BisectOpts,
    steps: &[Step],
    left: usize,
) -> Outcome {
    let k = decisions(revisions.len(), opts.extra);
    Outcome {
        good: good.clone(),
        revisions: revisions.to_vec(),
        decisions: k,
        step_alpha: step_alpha(opts.alpha, revisions.len(), opts.extra),
        steps: steps.to_vec(),
        first_bad: None,
        candidates: Vec::new(),
        verdict: format!(
            "{} step(s) done, the first bad commit is one of {left} revision(s)",
            steps.len()
        ),
        log: git_log(good, steps, None),
    }
}

/// Runs the bisection of `revisions` (after `good`, the bad endpoint
/// last): the endpoint check, then steps until the first bad revision is
/// found, an undecided step, or the budget is spent. `done` are steps
/// measured before (resume): they are taken as they are, not measured
/// again. `on_step` sees each step as it ends (to store it), with the
/// number of revisions the first bad one may still be. An endpoint
/// check that does not find bad slower than good by the threshold is a
/// usage error, before any step.
pub fn bisect(
    good: &Revision,
    revisions: &[Revision],
    opts: &BisectOpts,
    tester: &mut dyn StepTester,
    done: &[Step],
    on_step: &mut dyn FnMut(&Step, usize) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome> {
    let n = revisions.len();
    anyhow::ensure!(n > 0, "no revision between good and bad");
    let k = decisions(n, opts.extra);
    let alpha = step_alpha(opts.alpha, n, opts.extra);
    let mut steps: Vec<Step> = Vec::new();
    let mut run_step = |index: usize, steps: &mut Vec<Step>| -> anyhow::Result<Class> {
        let revision = &revisions[index];
        if let Some(s) = done.iter().find(|s| s.revision.commit == revision.commit) {
            steps.push(s.clone());
            return Ok(s.class);
        }
        let begun = std::time::Instant::now();
        let (class, tested) = if opts
            .skip
            .iter()
            .any(|r| revision.commit.starts_with(r.as_str()))
        {
            (Class::Skip, Tested::Failed("--skip".into()))
        } else {
            let tested = tester.test(revision, alpha)?;
            let class = match &tested {
                Tested::Measured {
                    ci_low, ci_high, ..
                } => classify(*ci_low, *ci_high, opts.threshold_pct),
                Tested::Failed(_) => Class::Skip,
            };
            (class, tested)
        };
        steps.push(Step {
            index,
            revision: revision.clone(),
            class,
            tested,
            seconds: begun.elapsed().as_secs_f64(),
        });
        Ok(class)
    };
    // The endpoints first: bad must be slower than good by the threshold.
    let measured_before = |steps: &Vec<Step>| {
        let last = steps.last().expect("a step was recorded");
        done.iter()
            .any(|d| d.revision.commit == last.revision.commit)
    };
    let endpoint = run_step(n - 1, &mut steps)?;
    if !measured_before(&steps) {
        on_step(&steps[0], n)?;
    }
    if endpoint != Class::Bad {
        let why = match &steps[0].tested {
            Tested::Measured {
                estimate,
                ci_low,
                ci_high,
                pairs,
                ..
            } => format!(
                "{} against {}: {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}] in {pairs} pairs, \
                 not wholly above half the threshold ({:.1}%)",
                revisions[n - 1].short(),
                good.short(),
                opts.threshold_pct / 2.0
            ),
            Tested::Failed(why) => {
                // Not an answer about the endpoints: the check itself
                // failed, and the same command tries it again.
                anyhow::bail!(
                    "the endpoint check could not measure {}: {why}. No commit is named; run \
                     the same command again to retry it",
                    revisions[n - 1].short()
                );
            }
        };
        if endpoint == Class::Undecided {
            crate::usage_bail!(
                "the endpoint check could not tell whether the endpoints differ by the threshold \
                 of {}%: {why}. No commit is named; give more --max-pairs (the same command \
                 goes on), or a larger --threshold",
                opts.threshold_pct
            );
        }
        crate::usage_bail!(
            "the endpoints do not differ by the threshold of {}%: {why}. No commit is named; \
             check --good and --bad, the workload, or a smaller --threshold",
            opts.threshold_pct
        );
    }
    let mut b = Bisection::new(n, (k - 1).saturating_sub(opts.spent_before));
    let end = loop {
        match b.next() {
            Next::Test(i) => {
                let class = run_step(i, &mut steps)?;
                b.record(i, class);
                if !measured_before(&steps) {
                    on_step(steps.last().expect("a step was recorded"), b.range().len())?;
                }
            }
            other => break other,
        }
    };
    let revs = |v: &[usize]| v.iter().map(|&i| revisions[i].clone()).collect::<Vec<_>>();
    let (first_bad, candidates, verdict) = match &end {
        Next::Found(i) => (
            Some(revisions[*i].clone()),
            Vec::new(),
            format!("the first bad commit is {}", revisions[*i].short()),
        ),
        Next::Among(r) => (
            None,
            revs(r),
            format!(
                "skipped revisions leave {} candidates for the first bad commit",
                r.len()
            ),
        ),
        Next::Undecided { at, range } => (
            None,
            revs(range),
            format!(
                "undecided at {}: its interval straddles half the threshold after its budget of \
                 pairs; the first bad commit is one of {} (more --max-pairs, or a larger \
                 --threshold, may decide it)",
                revisions[*at].short(),
                range.len()
            ),
        ),
        Next::BudgetSpent(r) => (
            None,
            revs(r),
            format!(
                "the error budget of {k} decisions is spent; the first bad commit is one of {}",
                r.len()
            ),
        ),
        Next::Test(_) => unreachable!("the loop ends on anything but Test"),
    };
    let log = git_log(good, &steps, first_bad.as_ref());
    Ok(Outcome {
        good: good.clone(),
        revisions: revisions.to_vec(),
        decisions: k,
        step_alpha: alpha,
        steps,
        first_bad,
        candidates,
        verdict,
        log,
    })
}

/// The steps to take as they are (decided, or skipped with `--skip`),
/// and how many attempts ended undecided: those revisions are measured
/// again, and each earlier attempt keeps its share of the error budget. A
/// revision that failed to build or boot is tried again (the failure may
/// have been the machine's; it spent no decision).
pub fn split_steps(all: &[Step]) -> (Vec<Step>, usize) {
    let undecided = Class::Undecided;
    let failed = |s: &Step| matches!(&s.tested, Tested::Failed(why) if why != "--skip");
    (
        all.iter()
            .filter(|s| s.class != undecided && !failed(s))
            .cloned()
            .collect(),
        all.iter().filter(|s| s.class == undecided).count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_split_at_half_the_threshold() {
        assert_eq!(classify(6.0, 20.0, 10.0), Class::Bad);
        assert_eq!(classify(-3.0, 4.0, 10.0), Class::Good);
        assert_eq!(classify(-30.0, 2.0, 10.0), Class::Good);
        assert_eq!(classify(2.0, 30.0, 10.0), Class::Undecided);
        assert_eq!(classify(f64::NAN, 3.0, 10.0), Class::Undecided);
    }

    #[test]
    fn the_budget_counts_log2_steps_the_endpoints_and_skips() {
        assert_eq!(decisions(8, 0), 4); // 3 steps + the endpoint check
        assert_eq!(decisions(9, 2), 1 + 4 + 2);
        assert_eq!(decisions(1, 0), 1);
        assert!((step_alpha(0.05, 8, 2) - 0.05 / 6.0).abs() < 1e-12);
    }

    /// Runs a bisection against a truth: revisions from `culprit` on are
    /// bad; `skips` do not build; `undecided` cannot be told.
    fn run(
        n: usize,
        culprit: usize,
        skips: &[usize],
        undecided: &[usize],
        extra: usize,
    ) -> (Next, Vec<usize>) {
        let mut b = Bisection::new(n, decisions(n, extra) - 1);
        let mut tested = Vec::new();
        loop {
            match b.next() {
                Next::Test(i) => {
                    tested.push(i);
                    let class = if skips.contains(&i) {
                        Class::Skip
                    } else if undecided.contains(&i) {
                        Class::Undecided
                    } else if i >= culprit {
                        Class::Bad
                    } else {
                        Class::Good
                    };
                    b.record(i, class);
                }
                other => return (other, tested),
            }
        }
    }

    #[test]
    fn eight_revisions_take_at_most_three_steps_whichever_is_the_culprit() {
        for culprit in 0..8 {
            let (end, tested) = run(8, culprit, &[], &[], 0);
            assert_eq!(end, Next::Found(culprit), "culprit {culprit}");
            assert!(tested.len() <= 3, "culprit {culprit}: {tested:?}");
        }
    }

    #[test]
    fn a_skipped_revision_is_stepped_around() {
        // The middle does not build: its neighbour is tested instead.
        let (end, tested) = run(8, 5, &[3], &[], 2);
        assert_eq!(end, Next::Found(5));
        assert_eq!(tested[0], 3);
        assert_ne!(tested[1], 3);
        // Every candidate between the bounds skipped: the range is said.
        let (end, _) = run(4, 2, &[1, 2], &[], 2);
        assert_eq!(end, Next::Among(vec![1, 2, 3]));
    }

    #[test]
    fn an_undecided_step_stops_the_bisection_and_says_where() {
        let (end, tested) = run(8, 5, &[], &[3], 2);
        assert_eq!(tested, [3]);
        assert_eq!(
            end,
            Next::Undecided {
                at: 3,
                range: (0..8).collect()
            }
        );
    }

    #[test]
    fn the_budget_ends_a_bisection_that_needs_more_steps() {
        // With no extra decisions, one skip-free path fits; forcing a
        // budget of one step leaves a range.
        let mut b = Bisection::new(8, 1);
        let Next::Test(i) = b.next() else {
            panic!("a test first")
        };
        b.record(i, Class::Good);
        assert!(matches!(b.next(), Next::BudgetSpent(r) if r.contains(&7)));
        assert_eq!(b.spent(), 1);
    }

    #[test]
    fn finished_steps_replayed_give_the_same_next_step() {
        // Resuming: recording the steps already done reaches the same
        // state as doing them.
        let mut a = Bisection::new(8, 5);
        let Next::Test(first) = a.next() else {
            panic!()
        };
        a.record(first, Class::Good);
        let mut b = Bisection::new(8, 5);
        b.record(first, Class::Good);
        assert_eq!(a.next(), b.next());
    }

    #[test]
    fn the_log_replays_with_git_bisect() {
        assert_eq!(
            log_lines(Class::Good, "abc", "one"),
            ["# good: [abc] one", "git bisect good abc"]
        );
        assert_eq!(log_lines(Class::Skip, "d", "x")[1], "git bisect skip d");
        assert_eq!(log_lines(Class::Undecided, "e", "y").len(), 1);
    }

    /// A tester whose truth is a step at `culprit`: revisions from it on
    /// are `slow`% slower; `broken` ones fail to build.
    struct Fake {
        culprit: usize,
        slow: f64,
        broken: Vec<usize>,
        revs: Vec<Revision>,
        asked: Vec<(String, f64)>,
    }

    impl StepTester for Fake {
        fn test(&mut self, r: &Revision, alpha: f64) -> anyhow::Result<Tested> {
            self.asked.push((r.commit.clone(), alpha));
            let i = self.revs.iter().position(|x| x == r).unwrap();
            if self.broken.contains(&i) {
                return Ok(Tested::Failed("make failed".into()));
            }
            let e = if i >= self.culprit { self.slow } else { 0.0 };
            Ok(Tested::Measured {
                estimate: e,
                ci_low: e - 3.0,
                ci_high: e + 3.0,
                pairs: 6,
                run_id: Some(i as i64),
            })
        }
    }

    impl Fake {
        fn new(culprit: usize, broken: Vec<usize>, revs: &[Revision]) -> Fake {
            Fake {
                culprit,
                slow: 40.0,
                broken,
                revs: revs.to_vec(),
                asked: Vec::new(),
            }
        }
    }

    fn good() -> Revision {
        Revision {
            commit: "g".repeat(40),
            subject: "base".into(),
        }
    }

    fn series(n: usize) -> Vec<Revision> {
        (0..n)
            .map(|i| Revision {
                commit: format!("{i:040x}"),
                subject: format!("commit {i}"),
            })
            .collect()
    }

    fn opts() -> BisectOpts {
        BisectOpts {
            threshold_pct: 10.0,
            alpha: 0.05,
            extra: 2,
            skip: Vec::new(),
            spent_before: 0,
        }
    }

    #[test]
    fn the_culprit_is_named_with_a_replayable_log_at_the_budgets_level() {
        let revs = series(8);
        let good = good();
        let mut t = Fake::new(5, vec![3], &revs);
        let mut seen = Vec::new();
        let out = bisect(&good, &revs, &opts(), &mut t, &[], &mut |s, left| {
            assert!(left <= 8);
            seen.push(s.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(out.first_bad.as_ref(), Some(&revs[5]));
        assert_eq!(out.decisions, 1 + 3 + 2);
        assert!(t.asked.iter().all(|(_, a)| (*a - 0.05 / 6.0).abs() < 1e-12));
        // The endpoint check first, then at most 3 steps and one skip.
        assert_eq!(t.asked[0].0, revs[7].commit);
        assert!(t.asked.len() <= 1 + 3 + 1, "{:?}", t.asked);
        assert_eq!(seen.len(), out.steps.len());
        assert!(out.steps.iter().any(|s| s.class == Class::Skip));
        assert_eq!(out.log[0], "git bisect start");
        assert!(out.log.iter().any(|l| l.starts_with("git bisect skip ")));
        assert_eq!(
            out.log.last().unwrap(),
            &format!("# first bad commit: [{}] commit 5", revs[5].commit)
        );
        // Resumed with the steps done: nothing is measured again.
        let mut again = Fake {
            asked: Vec::new(),
            ..t
        };
        let out2 = bisect(
            &good,
            &revs,
            &opts(),
            &mut again,
            &out.steps,
            &mut |_, _| Ok(()),
        )
        .unwrap();
        assert!(again.asked.is_empty(), "{:?}", again.asked);
        assert_eq!(out2.first_bad, out.first_bad);
    }

    #[test]
    fn endpoints_that_do_not_differ_name_no_commit() {
        let revs = series(8);
        let good = good();
        let mut t = Fake::new(99, Vec::new(), &revs);
        let e = bisect(&good, &revs, &opts(), &mut t, &[], &mut |_, _| Ok(())).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("the endpoints do not differ"), "{e}");
        assert_eq!(t.asked.len(), 1);
    }

    #[test]
    fn undecided_attempts_of_earlier_runs_keep_their_share_of_the_budget() {
        let revs = series(8);
        let good = good();
        let mut t = Fake::new(5, Vec::new(), &revs);
        // 6 decisions; 5 spent before on undecided attempts: only the
        // endpoint check is left, then the budget ends the bisection.
        let spent = BisectOpts {
            spent_before: 5,
            ..opts()
        };
        let out = bisect(&good, &revs, &spent, &mut t, &[], &mut |_, _| Ok(())).unwrap();
        assert!(out.first_bad.is_none());
        assert!(out.verdict.contains("error budget"), "{}", out.verdict);
        assert_eq!(t.asked.len(), 1);
    }
}
