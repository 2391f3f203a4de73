//! The sections of a run's report, each written once against the markup
//! interface ([`crate::report::markup`]) and so drawn alike by every
//! format: the run's facts, a summary of its comparisons (one line each,
//! for a glance), its results and profiles, the comparisons,
//! phantom audit rules under audit comparisons, child CPU time, the
//! negative control, sweeps, attributions, outlier
//! pairs, skipped mechanisms, treatment notes, the policy files measured,
//! problems, and the command that reproduces it. A suite run's report
//! ([`suite`], its post-shaped tables drawn by [`post`]) takes the place
//! of the results, comparisons, profiles and skipped mechanisms. A section
//! with nothing to say writes nothing.
//!
//! The other commands' outputs are written here too, each in a file of its
//! own: a prediction ([`prediction`]), a calibration ([`calibration`]) and
//! the machine's security configuration ([`probe`], also a stored run's).
//!
//! What a view includes is chosen by [`Parts`]: right after measuring, the
//! terminal shows the figures only (the user just typed the command); a
//! report for others (email, markdown) adds the facts and the command that
//! reproduces it; `results show` adds the policy files' content and the
//! security configuration (after the results: a reader comes for them).

pub mod attribution;
pub mod beside;
pub mod bisect;
pub mod calibration;
pub mod campaign;
mod clients;
mod comparisons;
pub mod control;
mod facts;
pub mod grid;
pub mod guest;
mod notes;
mod outliers;
pub mod phantom;
pub mod policies;
pub mod post;
pub mod prediction;
pub mod probe;
mod results;
mod revisions;
pub mod suite;
pub mod summary;
pub mod sweeps;
pub mod track;

use super::doc::RunDoc;
use super::markup::Markup;

pub use beside::beside_table;
pub use comparisons::{comparisons_table, verdict_method};
pub use outliers::OUTLIER_Z;

/// Which optional parts a view of a run includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// The run's title, start, host, machine and command.
    pub facts: bool,
    /// The whole security configuration of its probe snapshot.
    pub security: bool,
    /// The policy files' content (their path, size and digest are always
    /// listed).
    pub policy_content: bool,
    /// The command that reproduces the run, last.
    pub reproduce: bool,
    /// Every outlier pair by comparison (else one line counting them).
    pub outlier_pairs: bool,
}

impl Parts {
    /// Right after measuring, at a terminal: the figures only.
    pub const MEASURED: Parts = Parts {
        facts: false,
        security: false,
        policy_content: false,
        reproduce: false,
        outlier_pairs: false,
    };
    /// A report for others (email, markdown, csv): facts and the command.
    pub const REPORT: Parts = Parts {
        facts: true,
        security: false,
        policy_content: false,
        reproduce: true,
        outlier_pairs: false,
    };
    /// `results show`: everything stored.
    pub const STORED: Parts = Parts {
        facts: true,
        security: true,
        policy_content: true,
        reproduce: true,
        outlier_pairs: true,
    };
}

/// Writes every section of `doc` that has something to say.
pub fn run(doc: &RunDoc, parts: Parts, m: &mut dyn Markup) {
    if parts.facts {
        facts::facts(doc, m);
    }
    summary::summary(doc, m);
    guest::guest(doc, m);
    phantom::phantom(doc, m);
    if doc.suite.is_some() {
        // A suite's report says it all in the post's shape, skipped
        // mechanisms and profiles included.
        suite::suite(doc, m);
        beside::beside(doc, m);
    } else {
        results::results(doc, m);
        clients::result_metrics(doc, m);
        results::profiles(doc, m);
        comparisons::comparisons(doc, m);
        comparisons::child_cpu(doc, m);
        beside::beside(doc, m);
        control::negative_control(doc, m);
        sweeps::sweeps(doc, m);
        attribution::attributions(doc, m);
    }
    outliers::outlier_pairs(doc, parts.outlier_pairs, m);
    if doc.suite.is_none() {
        notes::skipped(doc, m);
    }
    notes::treatment_notes(doc, m);
    policies::policy_files(doc, parts.policy_content, m);
    notes::problems(doc, m);
    if parts.security {
        facts::security(doc, m);
    }
    if parts.reproduce {
        m.command("Reproduce", &doc.meta.command);
    }
}

/// The whole run in one format, ending in a newline.
pub fn render(doc: &RunDoc, parts: Parts, kind: super::markup::Kind) -> String {
    let mut m = super::markup::writer(kind);
    run(doc, parts, m.as_mut());
    m.finish()
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;
