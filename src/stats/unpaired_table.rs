//! A table of unpaired comparisons decided in one step: each cell's own
//! test ([`compare_unpaired`]: change of the ratio of medians with its
//! bootstrap interval, Mann-Whitney p), then, column by column, Holm
//! across the cells tested and each cell's verdict ([`decide_table`]),
//! on the interval shown: the Hodges-Lehmann shift interval that inverts
//! the same Mann-Whitney test at the column's level
//! ([`super::rank_interval::mann_whitney_interval`]), so that an interval
//! clear of the noise band is a verdict. The estimate shown with it is the
//! Hodges-Lehmann shift (which that interval always contains), not the
//! ratio of medians. `compare` (one column per later run) and a suite's
//! runs section (this run against a baseline run) both decide here.

use super::decision::{
    Decision, DecisionOpts, IntervalFn, Samples, Tested, decide_table, unpaired_interval_at,
};
use super::rank_interval::mann_whitney_interval;
use super::unpaired::{UnpairedChange, UnpairedOpts, compare_unpaired};

/// One cell's samples: the baseline's values, then the candidate's.
pub type UnpairedCell<'a> = (&'a [f64], &'a [f64]);

/// A cell's own test and its shift (estimate, interval) in percent.
type Measured = (UnpairedChange, (f64, f64, f64));

/// One cell after the decision.
#[derive(Debug, Clone, PartialEq)]
pub struct DecidedCell {
    /// The cell's own test: change of the ratio of medians and its
    /// bootstrap interval in percent, raw p-values.
    pub change: UnpairedChange,
    /// The change shown (%): the Hodges-Lehmann shift of the log values,
    /// inside `decision`'s interval at every level.
    pub estimate_pct: f64,
    /// The cell's own interval (%) at the decision's alpha (the
    /// Mann-Whitney inversion, as the one shown, before the column's
    /// correction); `decision` holds the one shown and its level.
    pub own_ci_pct: (f64, f64),
    /// Corrected p across the cell's column, the verdict, and the interval
    /// shown (at the column's level) that it was decided on.
    pub decision: Decision,
}

/// Decides every column of an unpaired table: for each cell of each
/// column, in order, its decided result, or None when the cell could not
/// be tested (fewer than 2 values a side, a value not positive and
/// finite); such cells take no part in their column's Holm correction.
pub fn decide_unpaired_table(
    columns: &[Vec<UnpairedCell>],
    test: &UnpairedOpts,
    decision: &DecisionOpts,
) -> Vec<Vec<Option<DecidedCell>>> {
    columns
        .iter()
        .map(|cells| decide_column(cells, test, decision))
        .collect()
}

fn decide_column(
    cells: &[UnpairedCell],
    test: &UnpairedOpts,
    decision: &DecisionOpts,
) -> Vec<Option<DecidedCell>> {
    // A cell is tested when its own test runs and its shift interval
    // exists (both need at least 2 positive, finite values a side).
    let changes: Vec<Option<Measured>> = cells
        .iter()
        .map(|(a, b)| {
            let change = compare_unpaired(a, b, test).ok()?;
            let own = mann_whitney_interval(a, b, decision.alpha)?.pct();
            Some((change, own))
        })
        .collect();
    let intervals: Vec<IntervalFn> = cells
        .iter()
        .map(|&(a, b)| unpaired_interval_at(a, b))
        .collect();
    let tested: Vec<Tested> = cells
        .iter()
        .zip(&changes)
        .zip(&intervals)
        .filter_map(|((&(a, b), change), at)| {
            let (c, (_, lo, hi)) = change.as_ref()?;
            Some(Tested {
                p_value: c.p_value,
                ci_low: *lo,
                ci_high: *hi,
                samples: Samples::Unpaired(a, b),
                interval_at: Some(at.as_ref()),
            })
        })
        .collect();
    let mut decisions = decide_table(&tested, decision).into_iter();
    changes
        .into_iter()
        .map(|change| {
            let (change, (estimate_pct, lo, hi)) = change?;
            Some(DecidedCell {
                change,
                estimate_pct,
                own_ci_pct: (lo, hi),
                decision: decisions.next()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::decision::Verdict;

    fn noisy(centre: f64) -> Vec<f64> {
        (0..10)
            .map(|i| centre * (1.0 + 0.002 * ((i * 7 % 11) as f64 - 5.0)))
            .collect()
    }

    #[test]
    fn each_column_is_corrected_on_its_own_and_untestable_cells_are_skipped() {
        let (base, slow, same) = (noisy(1000.0), noisy(1500.0), noisy(1000.0));
        let short = [1000.0];
        let columns = vec![
            vec![(&base[..], &slow[..]), (&base[..], &short[..])],
            vec![(&base[..], &same[..])],
        ];
        let opts = UnpairedOpts::default();
        let d = decide_unpaired_table(&columns, &opts, &DecisionOpts::default());
        assert_eq!(d.len(), 2);
        let slower = d[0][0].as_ref().unwrap();
        assert_eq!(slower.decision.verdict, Verdict::Slower);
        assert!(d[0][1].is_none(), "one value cannot be tested");
        // Alone in its column, the cell's p is not corrected.
        let alone = d[1][0].as_ref().unwrap();
        assert_eq!(alone.decision.p_value, alone.change.p_value);
        assert_ne!(alone.decision.verdict, Verdict::Slower);
        // The same as testing and deciding by hand.
        let raw = compare_unpaired(&base, &slow, &opts).unwrap();
        assert_eq!(slower.change, raw);
        let at = unpaired_interval_at(&base, &slow);
        let by_hand = decide_table(
            &[Tested {
                p_value: raw.p_value,
                ci_low: f64::NAN,
                ci_high: f64::NAN,
                samples: Samples::Unpaired(&base, &slow),
                interval_at: Some(at.as_ref()),
            }],
            &DecisionOpts::default(),
        );
        assert_eq!(slower.decision, by_hand[0]);
        // Shown: the Hodges-Lehmann shift (+50%) inside its interval.
        let (e, d) = (slower.estimate_pct, slower.decision);
        assert!(
            (e - 50.0).abs() < 0.5 && d.ci_low <= e && e <= d.ci_high,
            "{slower:?}"
        );
        assert_eq!(slower.own_ci_pct, (d.ci_low, d.ci_high), "alone: own level");
    }
}
