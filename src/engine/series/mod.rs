//! What `bisect` and `track` share: a series of kernel revisions of one
//! git checkout, each tested by a [`RevisionAb`] of the same question
//! (the workload or command, the mechanisms, the command line and config
//! of every boot, the threshold, the pairs a test may take, the metric).
//! [`SeriesSpec`] is that question as the command line gave it; this
//! module turns it into the tests, checks the build tools once and names
//! a series by a key.

pub mod bisect;
pub mod revision_ab;
pub mod track;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use self::revision_ab::RevisionAb;
use crate::model::Metric;
use crate::vm::accel::AccelChoice;

/// The limit on each guest of a series, boot included, in seconds: the
/// default of `--vm-timeout`.
pub const GUEST_TIMEOUT_S: u64 = 7200;

/// What every test of a series measures, as given (paths not made
/// canonical: the keys of stored series were made from them as given).
#[derive(Debug, Clone)]
pub struct SeriesSpec {
    /// The kernel source, a git checkout.
    pub source: PathBuf,
    /// A workload (`-w`), or else the command measured.
    pub workload: Option<String>,
    pub command: Vec<String>,
    /// Mechanisms on in every boot.
    pub mechanisms: Vec<String>,
    /// The kernel command line of every boot.
    pub append: String,
    /// A config fragment for every build.
    pub config: Option<PathBuf>,
    /// The change that counts, %.
    pub threshold: f64,
    /// Pairs of boots a test may take.
    pub max_pairs: u32,
    pub metric: Metric,
}

impl SeriesSpec {
    /// The tests of the series over `source` (canonical), the guests'
    /// boot order seeded by `seed`, every run stored in `db`. How the
    /// guests count is decided here, once.
    pub fn tests(&self, source: &Path, seed: u64, db: &Path) -> Result<RevisionAb> {
        Ok(RevisionAb {
            spec: self.clone(),
            source: source.to_path_buf(),
            counting: crate::engine::ab::counting::decide(
                self.metric,
                crate::engine::ab::counting::Machine::Guests,
            )?,
            seed,
            accel: AccelChoice::Auto,
            timeout: crate::vm::process::Timeouts::total(Duration::from_secs(GUEST_TIMEOUT_S)),
            db: db.to_path_buf(),
        })
    }
}

/// A series' key: the first 16 hex digits of the SHA-256 of what
/// identifies it, so that the same question gets the same key.
pub fn key(text: &str) -> String {
    crate::kbuild::sha256_hex(text.as_bytes())[..16].to_string()
}

/// Checks that every tool a kernel build needs is installed (before
/// anything is built).
pub fn check_build_tools() -> Result<()> {
    crate::kbuild::tools::check()
}

/// The revisions of `commits` (commit, subject), in their order.
pub fn revisions(commits: Vec<(String, String)>) -> Vec<crate::model::bisect::Revision> {
    commits
        .into_iter()
        .map(|(commit, subject)| crate::model::bisect::Revision { commit, subject })
        .collect()
}
