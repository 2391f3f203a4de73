//! The final verdicts of a table of comparisons (corrected p-values, the
//! noise band, equivalence, each shown at the table's level), and the
//! decided table stored. Apart from measuring because a table is decided
//! only once all of it is measured, and calibration and the boots'
//! sweeps decide comparisons that were measured elsewhere.

use anyhow::Result;

use super::summary::log_ratios;
use crate::model::{Comparison, Measure};
use crate::stats::decision::{DecisionOpts, Samples, Tested, decide_table};
use crate::stats::paired::{OverheadPct, PairedOpts};
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
///
/// Each measure beside the comparisons' own (a client's requests/s, time
/// beside counted instructions) is decided the same way, as a table of its
/// own: the figures of that measure across the comparisons that have it.
/// The comparison's verdict stays its own measure's.
pub fn decide_all(comparisons: &mut [Comparison], opts: &DecisionOpts) {
    let mut own: Vec<Decided> = comparisons
        .iter_mut()
        .map(|c| Decided {
            ratios: log_ratios(c),
            sequential: c.sequential.is_some(),
            change: &mut c.overhead_pct,
            ci_alpha: &mut c.ci_alpha,
            own_ci: Some((&mut c.own_ci_low_pct, &mut c.own_ci_high_pct)),
        })
        .collect();
    decide_measure(&mut own, opts);
    drop(own);
    let mut measures: Vec<Measure> = Vec::new();
    for m in comparisons.iter().flat_map(|c| &c.beside) {
        if !measures.contains(&m.measure) {
            measures.push(m.measure.clone());
        }
    }
    for measure in &measures {
        let mut rows: Vec<Decided> = Vec::new();
        for c in comparisons.iter_mut() {
            let sequential = c.sequential.is_some();
            for m in c.beside.iter_mut().filter(|m| &m.measure == measure) {
                rows.push(Decided {
                    ratios: beside_ratios(&c.pair_data, measure),
                    sequential,
                    change: &mut m.change_pct,
                    ci_alpha: &mut m.ci_alpha,
                    own_ci: None,
                });
            }
        }
        decide_measure(&mut rows, opts);
    }
}

/// The per-pair ln(treatment / baseline) of a measure beside a
/// comparison's own, from the pairs that have a positive figure of it.
fn beside_ratios(pairs: &[crate::model::PairData], measure: &Measure) -> Vec<f64> {
    pairs
        .iter()
        .filter_map(|p| p.beside_of(measure))
        .map(|(b, t)| (t / b).ln())
        .collect()
}

/// One figure of a measure, to be decided with the others of its table.
struct Decided<'a> {
    ratios: Vec<f64>,
    sequential: bool,
    change: &'a mut OverheadPct,
    ci_alpha: &'a mut Option<f64>,
    /// Where the figure's own interval is kept when the one shown is the
    /// table's; None: not kept (a measure beside the comparison's own).
    own_ci: Option<(&'a mut Option<f64>, &'a mut Option<f64>)>,
}

/// Decides the figures of one measure together (see [`decide_all`]).
fn decide_measure(rows: &mut [Decided], opts: &DecisionOpts) {
    use crate::stats::decision::{IntervalFn, paired_interval_at};
    let test = opts.test;
    let intervals: Vec<IntervalFn> = rows
        .iter()
        .map(|row| match row.sequential {
            true => {
                let r = &row.ratios;
                Box::new(move |a: f64| {
                    sequential::overhead_pct(r, a, test).map(|o| (o.ci_low, o.ci_high))
                }) as IntervalFn
            }
            false => paired_interval_at(&row.ratios),
        })
        .collect();
    let tested: Vec<Tested> = rows
        .iter()
        .zip(&intervals)
        .map(|(row, at)| Tested {
            // The fixed design's p from the very ratios its interval
            // inverts (the same as the one measured).
            p_value: match row.sequential {
                true => row.change.p_value,
                false => crate::stats::wilcoxon::wilcoxon_signed_rank(&row.ratios),
            },
            ci_low: row.change.ci_low,
            ci_high: row.change.ci_high,
            samples: if row.sequential {
                sequential::row_samples(&row.ratios, opts)
            } else {
                Samples::Paired(&row.ratios)
            },
            interval_at: Some(at.as_ref()),
        })
        .collect();
    let decisions = decide_table(&tested, opts);
    drop(tested);
    drop(intervals);
    for (row, d) in rows.iter_mut().zip(decisions) {
        row.change.p_value = d.p_value;
        row.change.verdict = d.verdict;
        let own_alpha = match row.sequential {
            true => opts.alpha,
            false => PairedOpts::default().alpha,
        };
        let own = match &row.own_ci {
            Some((low, high)) => (
                low.unwrap_or(row.change.ci_low),
                high.unwrap_or(row.change.ci_high),
            ),
            None => (row.change.ci_low, row.change.ci_high),
        };
        if d.alpha != own_alpha || (d.ci_low, d.ci_high) != own {
            // Decided again (a replay): the own interval stays the first.
            if let Some((low, high)) = row.own_ci.as_mut() {
                **low = Some(own.0);
                **high = Some(own.1);
            }
            *row.ci_alpha = Some(d.alpha);
            row.change.ci_low = d.ci_low;
            row.change.ci_high = d.ci_high;
        }
    }
}
