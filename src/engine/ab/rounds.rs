//! A table of sequential comparisons measured in rounds: one pair of each
//! running comparison per round, then the table decides together which
//! of them stop ([`crate::stats::sequential::rounds`]). Apart from the
//! fixed table's loop because its comparisons are measured interleaved,
//! each one a [`Lane`], and stored only once all have stopped.

use anyhow::Result;

use super::decided::store_decided;
use super::design::{Case, Design};
use super::measurer::Measurer;
use super::pair::measure_pair;
use super::profiled::finish;
use super::summary::{partial, summarise};
use super::words::{describe_case, describe_measured, own_alpha, unmeasured_slices};
use crate::engine::progress::Progress;
use crate::model::{ChildCpu, Comparison, PairData};
use crate::stats::bootstrap::Rng;
use crate::stats::decision::DecisionOpts;
use crate::stats::sequential::{StopReason, rounds};
use crate::store::Store;

/// One comparison of a table measured in rounds.
#[derive(Default)]
struct Lane {
    pair_data: Vec<PairData>,
    cpu: [Vec<ChildCpu>; 2],
    ratios: Vec<f64>,
    /// A stop never undone ([`rounds::Lane::hard`]).
    hard: Option<StopReason>,
    /// Its state after the last round: None while it needs pairs.
    state: Option<StopReason>,
    /// Its unneeded slices were taken off the progress bar.
    skipped: bool,
}

/// Measures a table of sequential comparisons in rounds: each round
/// measures one pair of every comparison that needs one, in the table's
/// order, then decides together which of them stop
/// ([`crate::stats::sequential::rounds`]: under the FDR the clear effects
/// of the whole table reach the e-BH threshold together, instead of the
/// first ones paying for the rest; one paused as a discovery resumes
/// should the table's discoveries fall short). Once every comparison has
/// stopped, each is profiled (when asked for) and all are stored in the
/// table's order; at the first failure, what was measured is stored (the
/// comparisons still running marked unfinished). Then decided together.
#[allow(clippy::too_many_arguments)]
pub(super) fn measure_rounds(
    store: &mut Store,
    run_id: i64,
    cases: &[(&Case, Design, &str)],
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    progress: &Progress,
    decision: &DecisionOpts,
) -> Result<Vec<Comparison>> {
    let mut lanes: Vec<Lane> = cases.iter().map(|_| Lane::default()).collect();
    let mut joint = rounds::Rounds::new(cases.len());
    let mut failure = None;
    let mut round = 0u32;
    let begun = std::time::Instant::now();
    'rounds: while lanes.iter().any(|l| l.state.is_none()) {
        round += 1;
        let running = lanes.iter().filter(|l| l.state.is_none()).count();
        progress.line(&format!(
            "round {round}: a pair of each of {running} comparisons still running"
        ));
        for ((case, design, role), lane) in cases.iter().zip(lanes.iter_mut()) {
            if lane.state.is_some() {
                continue;
            }
            progress.now(&(describe_case(case) + role));
            let i = lane.pair_data.len() as u32;
            match measure_pair(case, design, measurer, rng, &mut |t| progress.tick(t), i) {
                Ok((data, [b, t])) => {
                    lane.cpu[0].extend(b);
                    lane.cpu[1].extend(t);
                    lane.ratios.push(data.log_ratio());
                    lane.pair_data.push(data);
                }
                Err(error) => {
                    failure = Some(error);
                    break 'rounds;
                }
            }
        }
        let views: Vec<rounds::Lane> = cases
            .iter()
            .zip(&lanes)
            .map(|((_, design, _), lane)| rounds::Lane {
                r: &lane.ratios,
                rule: design.stop.as_ref().expect("rounds run sequential designs"),
                hard: lane.hard,
            })
            .collect();
        let states = joint.settle(&views);
        for (((case, design, role), lane), state) in cases.iter().zip(lanes.iter_mut()).zip(states)
        {
            let before = lane.state;
            lane.state = state;
            if state.is_some() && !rounds::is_discovery(state) {
                lane.hard = state;
            }
            let what = describe_case(case) + role;
            if before.is_none() && state.is_some() {
                let c = summarise(case, design, &lane.pair_data, &lane.cpu, state, None)?;
                if !lane.skipped {
                    progress.skip(unmeasured_slices(design, &c));
                    lane.skipped = true;
                }
                progress.line(&format!("{what}: {}", describe_measured(&c, design)));
            } else if before.is_some() && state.is_none() {
                progress.line(&format!(
                    "{what}: resumed (the table has fewer discoveries than its stop counted on)"
                ));
            } else if state.is_none()
                && lane.pair_data.len() >= 2
                && begun.elapsed() > std::time::Duration::from_secs(60)
            {
                // A long run says what each running comparison shows so
                // far (before the table's correction).
                let c = summarise(case, design, &lane.pair_data, &lane.cpu, None, None)?;
                let o = &c.overhead_pct;
                progress.line(&format!(
                    "{what}: so far {} after {} pairs, running",
                    crate::report::number::so_far(
                        o.estimate,
                        o.ci_low,
                        o.ci_high,
                        own_alpha(design)
                    ),
                    lane.pair_data.len()
                ));
            }
        }
    }
    // Profiled, then stored in the table's order; after a failure the
    // running comparisons too, marked unfinished, and those that had
    // stopped as they stopped (not profiled: the table stopped first).
    let mut comparisons = Vec::new();
    let mut ids = Vec::new();
    for ((case, design, role), lane) in cases.iter().zip(lanes) {
        let c = match (lane.state, &failure) {
            (Some(stop), None) => {
                progress.now(&(describe_case(case) + role));
                match finish(
                    case,
                    design,
                    measurer,
                    &mut |t| progress.tick(t),
                    &lane.pair_data,
                    &lane.cpu,
                    Some(stop),
                ) {
                    Ok(c) => Some(c),
                    Err(error) => {
                        failure = Some(error);
                        None
                    }
                }
            }
            (Some(stop), Some(_)) => {
                summarise(case, design, &lane.pair_data, &lane.cpu, Some(stop), None).ok()
            }
            (None, _) => partial(
                case,
                design,
                &lane.pair_data,
                &lane.cpu,
                Some(StopReason::Interrupted),
            )
            .map(|c| *c),
        };
        if let Some(c) = c {
            ids.push(store.add_comparison(run_id, &c)?);
            comparisons.push(c);
        }
    }
    store_decided(store, &mut comparisons, &ids, decision)?;
    match failure {
        Some(error) => Err(error),
        None => Ok(comparisons),
    }
}
