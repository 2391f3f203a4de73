//! What `bisect` and `track` parse alike: the options of every boot and
//! build of a series ([`RevisionArgs`], flattened into both, so that their
//! `--help` says them once and the same), the check of the source tree,
//! and the typed question of every test ([`SeriesSpec`]) that both hand to
//! the engine.
//!
//! Their other shared options (the workload or command, `-m`,
//! `--threshold`, `--alpha`, `--max-pairs`) stay in each command's struct:
//! their help says "step" for bisect and "test" for track, and the two
//! commands check them with their own words.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::engine::series::SeriesSpec;
use crate::usage_bail;

/// The options of every boot and build of a series.
#[derive(Debug, Args)]
pub struct RevisionArgs {
    /// The kernel command line of every boot, e.g. audit=1.
    #[arg(long, value_name = "ARGS", default_value = "")]
    pub append: String,

    /// A config fragment for every build. It is applied last: after the
    /// architecture's defconfig, virtme-ng's fragment and the options
    /// secperf needs (audit, seccomp, the LSMs), so that its settings win.
    #[arg(long, value_name = "FRAGMENT")]
    pub config: Option<PathBuf>,
}

/// What a series' command line measures, typed for the engine.
pub struct Measured<'a> {
    pub source: &'a Path,
    pub workload: &'a Option<String>,
    pub command: &'a [String],
    pub mechanisms: &'a [String],
    pub revision: &'a RevisionArgs,
    pub threshold: f64,
    pub max_pairs: u32,
    pub metric: &'a super::args::MetricArgs,
}

impl Measured<'_> {
    /// The question every test of the series asks.
    pub fn spec(&self) -> SeriesSpec {
        SeriesSpec {
            source: self.source.to_path_buf(),
            workload: self.workload.clone(),
            command: self.command.to_vec(),
            mechanisms: self.mechanisms.to_vec(),
            append: self.revision.append.clone(),
            config: self.revision.config.clone(),
            threshold: self.threshold,
            max_pairs: self.max_pairs,
            metric: self.metric.metric(),
        }
    }
}

/// The source must be a directory (the engine says when it is not a git
/// checkout); `who` is the command, as the message names it.
pub fn check_source(who: &str, source: &Path) -> Result<()> {
    if !source.is_dir() {
        usage_bail!(
            "{who}: {} is not a directory (give a git checkout of a kernel)",
            source.display()
        );
    }
    Ok(())
}

/// The command line as a series' record keeps it.
pub fn command_line() -> Vec<String> {
    std::env::args().skip(1).collect()
}
