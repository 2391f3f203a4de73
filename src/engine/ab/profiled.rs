//! The end of a comparison whose timed pairs are done: its profiled pairs
//! when `--profile` asks for them (the same AB/BA design, each half
//! sampled, seeded apart so the timed pairs stay as without it), then its
//! summary. Apart from [`super::summary`] because profiling measures
//! again, through the [`Measurer`].

use anyhow::{Context, Result};

use super::design::{Case, Design, pair_orders};
use super::measurer::Measurer;
use super::summary::{arm_median, summarise};
use crate::mechanisms::Arm;
use crate::model::{Attribution, ChildCpu, Comparison, PairData};
use crate::profile::attribute::{AttributeOpts, HalfProfile, ProfiledPair, attribute};
use crate::profile::{ProfileOpts, profile_half};
use crate::runner::Tick;
use crate::stats::bootstrap::Rng;
use crate::stats::sequential::StopReason;

/// A comparison whose timed pairs are done: its profiled pairs when asked
/// for, then its summary.
pub(super) fn finish(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    on_tick: &mut dyn FnMut(Tick),
    pair_data: &[PairData],
    cpu: &[Vec<ChildCpu>; 2],
    stopped: Option<StopReason>,
) -> Result<Comparison> {
    let attribution = design.profile.map(|p| {
        // A workload whose processes are sampled (a server) is attributed
        // their CPU time per operation, not the task's wall time.
        let (baseline, treatment) = match case.workload.observed {
            Some(_) => (
                cpu_ns_per_op(&cpu[0]).unwrap_or(f64::NAN),
                cpu_ns_per_op(&cpu[1]).unwrap_or(f64::NAN),
            ),
            None => (
                arm_median(pair_data, |p| p.baseline_per_op),
                arm_median(pair_data, |p| p.treatment_per_op),
            ),
        };
        profile_pairs(case, design, &p, measurer, on_tick, baseline, treatment)
    });
    summarise(case, design, pair_data, cpu, stopped, attribution)
}

/// Median CPU time per operation (user + system) of an arm's halves.
fn cpu_ns_per_op(halves: &[ChildCpu]) -> Option<f64> {
    let v: Vec<f64> = halves.iter().map(ChildCpu::ns_per_op).collect();
    crate::stats::median(&v)
}

/// Seeds the profiled pairs' coin apart from the timed pairs', so that
/// `--profile` leaves the timed pairs' order (and estimate) as without it.
const PROFILE_SEED: u64 = 0x7072_6f66_696c_6564;

/// The profiled pairs of a comparison, after its timed pairs: the same
/// randomised AB/BA design, fresh tasks per half, each sampled. Sampling
/// that is refused or fails ends the profile with a note; it never fails
/// the comparison, whose figures come from the timed pairs.
fn profile_pairs(
    case: &Case,
    design: &Design,
    opts: &ProfileOpts,
    measurer: &mut dyn Measurer,
    on_tick: &mut dyn FnMut(Tick),
    timed_baseline_ns_per_op: f64,
    timed_treatment_ns_per_op: f64,
) -> Attribution {
    let attribute_opts = AttributeOpts {
        hz: opts.hz,
        timed_baseline_ns_per_op,
        timed_treatment_ns_per_op,
        top_symbols: crate::profile::TOP_SYMBOLS,
    };
    let (symbols, mut notes) = crate::profile::readiness(opts.hz);
    if case.workload.observed.is_some() && symbols.is_some() {
        notes.push(
            "the server's processes were sampled (every thread of its process group, on every \
             CPU, and what they forked), not secperf's task: time per operation is the server's \
             CPU time per client run, as server.cpu_ms_per_run"
                .to_string(),
        );
    }
    let mut pairs = Vec::new();
    if let Some(symbols) = &symbols {
        let mut rng = Rng::new(design.seed ^ PROFILE_SEED);
        'pairs: for (i, order) in pair_orders(opts.pairs, &mut rng).into_iter().enumerate() {
            let mut halves: [HalfProfile; 2] = Default::default();
            for arm in order {
                let half = profile_half(symbols, opts.hz, design.sample_ms, |observer| {
                    let h = measurer.half(case, design, arm, observer, on_tick)?;
                    match case.workload.observed {
                        Some(_) => h
                            .child_cpu
                            .map(|c| c.ns_per_op())
                            .context("the sampled processes' CPU time was not read"),
                        None => Ok(h.per_op),
                    }
                });
                match half {
                    Ok(half) => halves[(arm == Arm::Treatment) as usize] = half,
                    Err(e) => {
                        notes.push(format!(
                            "profiled pair {} of {}, {arm:?} half failed: {e:#}",
                            i + 1,
                            opts.pairs
                        ));
                        break 'pairs;
                    }
                }
            }
            let [baseline, treatment] = halves;
            pairs.push(ProfiledPair {
                baseline,
                treatment,
            });
        }
    }
    let mut attribution = attribute(&pairs, &attribute_opts);
    if pairs.is_empty() {
        attribution
            .notes
            .retain(|n| !n.contains("no profiled pair"));
    }
    notes.append(&mut attribution.notes);
    attribution.notes = notes;
    attribution
}
