//! The cells a tested revision's row has in both series' tables (a
//! bisection's steps, `report::sections::bisect`; a track's points,
//! `report::sections::track`): the revision itself, its change with the
//! interval at the test's level, the pairs and the stored run, or why it
//! was not measured. Each table keeps its own columns beside these (a
//! bisection's step order, class and seconds; a track's baseline, level
//! and alarm), since what they say differs.

use crate::model::bisect::Revision;
use crate::report::markup::{Align, Cell, Column, Raw, Tone};

/// The columns of a revision: its position, commit and subject.
pub fn revision_columns() -> [Column; 3] {
    [
        Column::new("#", Align::Right, "position"),
        Column::new("revision", Align::Left, "commit"),
        Column::new("subject", Align::Left, "subject"),
    ]
}

/// The cells of [`revision_columns`]: `position`, the abbreviated commit,
/// its subject.
pub fn revision_cells(position: usize, r: &Revision) -> [Cell; 3] {
    [
        Cell::value(position.to_string(), position as u64),
        Cell::text(r.abbrev()),
        Cell::text(r.subject.clone()),
    ]
}

/// The column of a change with its interval, headed `header` (its raw
/// fields: `field`, then the interval's bounds).
pub fn change_column(header: &str, field: &'static str) -> Column {
    Column::with_fields(header, Align::Right, &[field, "ci_low_pct", "ci_high_pct"])
}

/// A measured revision's cells: the change with its interval (in the
/// table's `tone`), the pairs, the stored run.
pub fn measured_cells(
    estimate: f64,
    ci_low: f64,
    ci_high: f64,
    pairs: u32,
    run_id: Option<i64>,
    tone: Tone,
) -> [Cell; 3] {
    [
        Cell::values(
            format!("{estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}]"),
            vec![estimate.into(), ci_low.into(), ci_high.into()],
        )
        .tone(tone),
        Cell::value(pairs.to_string(), pairs),
        run_id.map_or(empty(), |r| {
            Cell::value(r.to_string(), u64::try_from(r).unwrap_or(0))
        }),
    ]
}

/// A revision that was not measured: why (its first 60 characters) in the
/// change's cell.
pub fn failed_cell(why: &str) -> Cell {
    Cell::values(
        why.chars().take(60).collect::<String>(),
        vec![Raw::Empty, Raw::Empty, Raw::Empty],
    )
}

/// An empty cell.
pub fn empty() -> Cell {
    Cell::value("", Raw::Empty)
}
