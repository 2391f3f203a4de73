//! A table of unpaired comparisons decided in one step: each cell's own
//! test ([`compare_unpaired`]: change of the ratio of medians with its
//! bootstrap interval, Mann-Whitney p), then, column by column, Holm
//! across the cells tested and each cell's verdict ([`decide_table`]).
//! `compare` (one column per later run) and a suite's runs section (this
//! run against a baseline run) both decide here.

use super::decision::{Decision, DecisionOpts, Samples, Tested, decide_table};
use super::unpaired::{UnpairedChange, UnpairedOpts, compare_unpaired};

/// One cell's samples: the baseline's values, then the candidate's.
pub type UnpairedCell<'a> = (&'a [f64], &'a [f64]);

/// One cell after the decision.
#[derive(Debug, Clone, PartialEq)]
pub struct DecidedCell {
    /// The cell's own test: change and interval in percent, raw p-values.
    pub change: UnpairedChange,
    /// Holm-corrected p across the cell's column, and the verdict.
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
    let changes: Vec<Option<UnpairedChange>> = cells
        .iter()
        .map(|(a, b)| compare_unpaired(a, b, test).ok())
        .collect();
    let tested: Vec<Tested> = cells
        .iter()
        .zip(&changes)
        .filter_map(|(&(a, b), change)| {
            let c = change.as_ref()?;
            Some(Tested {
                p_value: c.p_value,
                ci_low: c.ci_low,
                ci_high: c.ci_high,
                samples: Samples::Unpaired(a, b),
                interval_at: None,
            })
        })
        .collect();
    let mut decisions = decide_table(&tested, decision).into_iter();
    changes
        .into_iter()
        .map(|change| {
            let change = change?;
            Some(DecidedCell {
                change,
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
        let by_hand = decide_table(
            &[Tested {
                p_value: raw.p_value,
                ci_low: raw.ci_low,
                ci_high: raw.ci_high,
                samples: Samples::Unpaired(&base, &slow),
                interval_at: None,
            }],
            &DecisionOpts::default(),
        );
        assert_eq!(slower.decision, by_hand[0]);
    }
}
