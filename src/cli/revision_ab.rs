//! The CLI's side of `engine::revision_ab`: a bisection step or a track
//! test is typed in the engine (and each guest is told its halves in
//! types); this fills in the guests' defaults.

use std::time::Duration;

use crate::engine::counting::Counting;
use crate::engine::revision_ab::RevisionAb;
use crate::vm::accel::AccelChoice;

/// A series' tests (bisect, track), with the guests' defaults of
/// `--vm-accel` and `--vm-timeout`.
#[allow(clippy::too_many_arguments)]
pub fn revision_ab(
    source: std::path::PathBuf,
    workload: Option<String>,
    command: Vec<String>,
    mechanisms: Vec<String>,
    append: String,
    config: Option<std::path::PathBuf>,
    threshold: f64,
    max_pairs: u32,
    counting: Counting,
    seed: u64,
    db: std::path::PathBuf,
) -> RevisionAb {
    RevisionAb {
        source,
        workload,
        command,
        mechanisms,
        append,
        config,
        threshold,
        max_pairs,
        counting,
        seed,
        accel: AccelChoice::Auto,
        timeout: crate::vm::process::Timeouts::total(Duration::from_secs(
            super::vm::DEFAULT_TIMEOUT_S,
        )),
        db,
    }
}
