//! A table of A/B comparisons: measured (fixed ones one after the other,
//! sequential ones in rounds), each stored, then decided together. The
//! top of the A/B loop, what `overhead` and `suite` call.

use anyhow::Result;

use super::comparison::{Stopped, measure};
use super::decided::store_decided;
use super::design::{Case, Design};
use super::measurer::Measurer;
use super::rounds::measure_rounds;
use super::words::{describe_case, describe_measured, unmeasured_slices};
use crate::engine::progress::Progress;
use crate::model::Comparison;
use crate::stats::bootstrap::Rng;
use crate::stats::decision::DecisionOpts;
use crate::store::Store;

/// Measures a table of A/B comparisons (each with its own design), then
/// applies the table's final verdicts (Holm or e-BH, noise band,
/// equivalence) to all of them and stores those. Sequential comparisons
/// run in rounds ([`measure_rounds`]); fixed ones one after the other,
/// each stored as it finishes (a late failure loses nothing). `role` adds
/// to a comparison's progress line (" (negative control)").
#[allow(clippy::too_many_arguments)]
pub fn measure_comparisons<'a>(
    store: &mut Store,
    run_id: i64,
    cases: impl IntoIterator<Item = (&'a Case, Design, &'a str)>,
    measurer: &mut dyn Measurer,
    seed: u64,
    progress: &Progress,
    decision: &DecisionOpts,
) -> Result<Vec<Comparison>> {
    let cases: Vec<(&Case, Design, &str)> = cases.into_iter().collect();
    let mut rng = Rng::new(seed);
    if !cases.is_empty() && cases.iter().all(|(_, d, _)| d.stop.is_some()) {
        return measure_rounds(
            store, run_id, &cases, measurer, &mut rng, progress, decision,
        );
    }
    let mut comparisons = Vec::new();
    let mut ids = Vec::new();
    let mut stopped = None;
    for (case, design, role) in cases {
        let what = describe_case(case) + role;
        progress.start(&what);
        match measure(case, &design, measurer, &mut rng, &mut |t| progress.tick(t)) {
            Ok(c) => {
                ids.push(store.add_comparison(run_id, &c)?);
                progress.skip(unmeasured_slices(&design, &c));
                progress.line(&format!("{what}: {}", describe_measured(&c, &design)));
                comparisons.push(c);
            }
            Err(Stopped { partial, error }) => {
                if let Some(c) = partial {
                    ids.push(store.add_comparison(run_id, &c)?);
                    comparisons.push(*c);
                }
                stopped = Some(error);
                break;
            }
        }
    }
    // Decided together, also when the run stopped: what was measured is
    // stored with the verdicts of the comparisons it holds.
    store_decided(store, &mut comparisons, &ids, decision)?;
    match stopped {
        Some(error) => Err(error),
        None => Ok(comparisons),
    }
}
