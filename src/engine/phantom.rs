//! The active check for phantom audit rules (what they are:
//! [`crate::probe::audit_phantom`]): a getppid loop profiled with audit
//! disabled, enabled with no rules, and enabled with one unrelated rule
//! (the positive control), in seeded random order over a few rounds.
//!
//! Every audit change goes through the state lock, journaled before it is
//! made and undone after each half, as every audit arm is: the check adds
//! no rule but the control's one syscall rule (`-S pivot_root`), which the
//! kernel deletes and uncounts correctly, and never a watch. The machine's
//! own rules are set aside only where the caller says so (an audit
//! measurement, whose arms set them aside anyway); `secperf probe
//! --active` leaves a machine with rules alone and says it cannot tell.
//!
//! Enabling audit once sets the kernel's "audit ever enabled" flag until
//! reboot, as any audit measurement does; the check says so when audit was
//! disabled.

use std::path::PathBuf;

use anyhow::{Context, Result};
use chrono::Utc;

use super::ab::design::{Case, Design};
use super::ab::measurer::{Live, Measurer};
use crate::mechanisms::{Arm, Availability, Mechanism, Treatment};
use crate::model::{Mode, Params};
use crate::probe::audit_phantom::{CheckArm, CheckHalf, PhantomCheck, count_rule_path, decide};
use crate::profile::profile_half;
use crate::runner::Tick;
use crate::safety::StateLock;
use crate::stats::bootstrap::Rng;
use crate::sys::audit::AuditSocket;

/// How the check measures.
#[derive(Debug, Clone)]
pub struct CheckOpts {
    /// Rounds of the three halves.
    pub rounds: u32,
    /// Slice length and kept slices of each half (one warmup slice more).
    pub sample_ms: u64,
    pub samples: u32,
    /// Sampling frequency, Hz.
    pub hz: u64,
    pub seed: u64,
    /// Whether the machine's own rules may be set aside for the check
    /// (restored after each half).
    pub set_aside_rules: bool,
    /// Where fixtures kept across runs live (the caller's
    /// [`super::session::cache_dir`]).
    pub cache_dir: PathBuf,
}

impl CheckOpts {
    /// Three rounds of 0.4 s halves: about 5 s on the development VM.
    pub fn standard(seed: u64, set_aside_rules: bool, cache_dir: PathBuf) -> CheckOpts {
        CheckOpts {
            rounds: 3,
            sample_ms: 100,
            samples: 3,
            hz: crate::profile::DEFAULT_HZ,
            seed,
            set_aside_rules,
            cache_dir,
        }
    }

    /// The check an audit run makes before measuring: one round (about
    /// 1.5 s here), enough to tell; `probe --active` takes three, for the
    /// cost it reports.
    pub fn in_run(seed: u64, cache_dir: PathBuf) -> CheckOpts {
        CheckOpts {
            rounds: 1,
            ..CheckOpts::standard(seed, true, cache_dir)
        }
    }

    /// Halves the check measures.
    pub fn halves(&self) -> u32 {
        self.rounds * 3
    }
}

/// The check's answer: phantom rules or not (None: cannot tell) and how
/// it was found. Errors of the measurement itself (a half that failed)
/// are an answer of "cannot tell" naming the error, so the check never
/// stops the run it belongs to; only the user's interrupt is an error.
pub fn check(
    lock: &StateLock,
    opts: &CheckOpts,
    on_half: &mut dyn FnMut(u32, CheckArm),
) -> Result<(Option<bool>, PhantomCheck)> {
    Ok(match preconditions(opts) {
        Err(reason) => (None, PhantomCheck::not_checked(reason)),
        Ok(symbols) => match measure(lock, opts, &symbols, on_half) {
            Ok(halves) => decide(halves, Utc::now()),
            Err(e) if e.chain().any(|c| c.is::<crate::error::Interrupted>()) => return Err(e),
            Err(e) => (
                None,
                PhantomCheck::not_checked(format!("cannot tell: the check failed: {e:#}")),
            ),
        },
    })
}

/// Why the check cannot run here, or the symbols to name samples with.
fn preconditions(
    opts: &CheckOpts,
) -> std::result::Result<crate::profile::symbols::Symbols, String> {
    let not = |why: String| Err(format!("not checked: {why}"));
    if let Availability::Unavailable(why) = crate::mechanisms::audit::AUDIT.probe() {
        return not(format!("audit cannot be switched here ({why})"));
    }
    let rules = AuditSocket::open()
        .and_then(|s| s.list_rules())
        .map(|r| r.len())
        .map_err(|e| format!("not checked: listing the audit rules: {}", e.reason))?;
    if rules > 0 && !opts.set_aside_rules {
        let loaded = if rules == 1 {
            "1 audit rule is loaded, and its filter takes".to_string()
        } else {
            format!("{rules} audit rules are loaded, and their filters take")
        };
        return not(format!(
            "{loaded} the same path as phantom rules; the check does not set a machine's rules aside (an audit measurement does, \
             and records the answer in its run: `secperf overhead -m audit:enabled -w getppid`)"
        ));
    }
    let (symbols, notes) = crate::profile::readiness(opts.hz);
    match symbols {
        Some(s) if !s.kernel_hidden => Ok(s),
        Some(_) => not(
            "kernel addresses are hidden (kernel.kptr_restrict, or lockdown's confidentiality \
             mode), so samples cannot be named"
                .into(),
        ),
        None => not(notes.join("; ")),
    }
}

/// The profiled halves, in the order they ran.
fn measure(
    lock: &StateLock,
    opts: &CheckOpts,
    symbols: &crate::profile::symbols::Symbols,
    on_half: &mut dyn FnMut(u32, CheckArm),
) -> Result<Vec<CheckHalf>> {
    let workload = crate::workloads::find("getppid").context("the getppid workload")?;
    let case = |spec: &str| -> Result<Case> {
        Ok(Case {
            workload,
            workload_params: Params::new(),
            treatment: Treatment::parse(spec)?,
            tasks: 1,
        })
    };
    let enabled = case("audit:enabled")?;
    let one_rule = case("audit:unrelated-rule")?;
    let design = Design {
        pairs: 1,
        sample_ms: opts.sample_ms,
        samples_per_half: opts.samples,
        warmup: 1,
        mode: Mode::Process,
        cpus: Vec::new(),
        scratch_root: std::env::temp_dir(),
        cache_dir: opts.cache_dir.clone(),
        seed: opts.seed,
        profile: None,
        stop: None,
        counting: crate::engine::ab::counting::Counting::Clock,
    };
    let mut rng = Rng::new(opts.seed);
    let mut measurer = Live { lock: Some(lock) };
    let mut halves = Vec::new();
    for _ in 0..opts.rounds {
        let mut order = [CheckArm::Disabled, CheckArm::Enabled, CheckArm::OneRule];
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for arm in order {
            on_half(halves.len() as u32, arm);
            let (c, a) = match arm {
                CheckArm::Disabled => (&enabled, Arm::Baseline),
                CheckArm::Enabled => (&enabled, Arm::Treatment),
                CheckArm::OneRule => (&one_rule, Arm::Treatment),
            };
            let half = profile_half(symbols, opts.hz, opts.sample_ms, |observer| {
                measurer
                    .half(c, &design, a, observer, &mut |_: Tick| {})
                    .map(|h| h.per_op)
            })
            .with_context(|| format!("getppid with {}", arm.describe()))?;
            let (samples, rule_path_samples) = count_rule_path(&half.stacks);
            halves.push(CheckHalf {
                arm,
                ns_per_op: half.ns_per_op,
                samples,
                rule_path_samples,
            });
        }
    }
    Ok(halves)
}

/// [`check`], saying on stderr what it does.
pub fn check_reporting(lock: &StateLock, opts: &CheckOpts) -> Result<(Option<bool>, PhantomCheck)> {
    let total = opts.halves();
    let mut started = false;
    let answer = check(lock, opts, &mut |i, arm| {
        if !started {
            started = true;
            crate::say!(
                "secperf: checking for phantom audit rules: {total} profiled getppid halves of \
                 about {:.1} s, audit switched (journaled, restored)",
                (opts.samples + 1) as f64 * opts.sample_ms as f64 / 1000.0
            );
        }
        crate::say!("secperf:   half {}/{total}: {}", i + 1, arm.describe());
    })?;
    crate::say!(
        "secperf: phantom audit rules: {}",
        match answer.0 {
            Some(true) => "YES",
            Some(false) => "none",
            None => "cannot tell",
        }
    );
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_halves_a_round() {
        assert_eq!(CheckOpts::standard(1, false, PathBuf::new()).halves(), 9);
    }
}
