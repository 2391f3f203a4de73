//! The final verdicts of a table of comparisons (corrected p-values, the
//! noise band, equivalence, each shown at the table's level), and the
//! decided table stored. Apart from measuring because a table is decided
//! only once all of it is measured, and calibration and the boots'
//! sweeps decide comparisons that were measured elsewhere.

use anyhow::Result;

use super::summary::log_ratios;
use crate::model::Comparison;
use crate::stats::decision::{DecisionOpts, Samples, Tested, decide_table};
use crate::stats::paired::PairedOpts;
use crate::stats::sequential;
use crate::store::Store;

/// Decides `comparisons` together ([`decide_all`]) and stores each one's
/// corrected p-value and verdict under its id in `ids`.
pub(in crate::engine) fn store_decided(
    store: &mut Store,
    comparisons: &mut [Comparison],
    ids: &[i64],
    decision: &DecisionOpts,
) -> Result<()> {
    decide_all(comparisons, decision);
    for (c, id) in comparisons.iter().zip(ids) {
        store.set_comparison_decision(*id, c)?;
    }
    Ok(())
}

/// Final verdicts of a report: corrected p-values across its comparisons
/// (stored as `p_value`), the noise band, and the equivalence test on each
/// comparison's log ratios for `negligible`, decided on each comparison's
/// interval at the table's level: a sequential comparison's confidence
/// sequence, or the fixed design's inverted signed-rank test
/// ([`crate::stats::decision::paired_interval_at`]). That interval is the
/// one shown; when it differs from the comparison's own (at its own
/// level: the decision's alpha for a sequential one, 0.05 for the fixed
/// design), the own one is kept in `own_ci_*_pct` and the level shown in
/// `ci_alpha`.
pub fn decide_all(comparisons: &mut [Comparison], opts: &DecisionOpts) {
    use crate::stats::decision::{IntervalFn, paired_interval_at};
    let ratios: Vec<Vec<f64>> = comparisons.iter().map(log_ratios).collect();
    let test = opts.test;
    let intervals: Vec<IntervalFn> = comparisons
        .iter()
        .zip(&ratios)
        .map(|(c, r)| match c.sequential {
            Some(_) => Box::new(move |a: f64| {
                sequential::overhead_pct(r, a, test).map(|o| (o.ci_low, o.ci_high))
            }) as IntervalFn,
            None => paired_interval_at(r),
        })
        .collect();
    let rows: Vec<Tested> = comparisons
        .iter()
        .zip(&ratios)
        .zip(&intervals)
        .map(|((c, r), at)| Tested {
            // The fixed design's p from the very ratios its interval
            // inverts (the same as the one measured).
            p_value: match c.sequential {
                Some(_) => c.overhead_pct.p_value,
                None => crate::stats::wilcoxon::wilcoxon_signed_rank(r),
            },
            ci_low: c.overhead_pct.ci_low,
            ci_high: c.overhead_pct.ci_high,
            samples: if c.sequential.is_some() {
                sequential::row_samples(r, opts)
            } else {
                Samples::Paired(r)
            },
            interval_at: Some(at.as_ref()),
        })
        .collect();
    let decisions = decide_table(&rows, opts);
    for (c, d) in comparisons.iter_mut().zip(decisions) {
        c.overhead_pct.p_value = d.p_value;
        c.overhead_pct.verdict = d.verdict;
        let own_alpha = match c.sequential {
            Some(_) => opts.alpha,
            None => PairedOpts::default().alpha,
        };
        let own = (
            c.own_ci_low_pct.unwrap_or(c.overhead_pct.ci_low),
            c.own_ci_high_pct.unwrap_or(c.overhead_pct.ci_high),
        );
        if d.alpha != own_alpha || (d.ci_low, d.ci_high) != own {
            // Decided again (a replay): the own interval stays the first.
            c.own_ci_low_pct = Some(own.0);
            c.own_ci_high_pct = Some(own.1);
            c.ci_alpha = Some(d.alpha);
            c.overhead_pct.ci_low = d.ci_low;
            c.overhead_pct.ci_high = d.ci_high;
        }
    }
}
