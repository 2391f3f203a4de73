//! `landlock`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct Landlock;
pub static LANDLOCK: Landlock = Landlock;

impl Mechanism for Landlock {
    fn name(&self) -> &'static str {
        "landlock"
    }
    fn description(&self) -> &'static str {
        "a Landlock filesystem ruleset enforced in each task (unprivileged)"
    }
    fn scope(&self) -> Scope {
        Scope::Worker
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "fs",
            description: "handles every filesystem right of the running ABI; rules grant what the workload needs",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["open", "stat", "access1", "tree_walk"]
    }
    fn probe(&self) -> Availability {
        Availability::Unavailable("not implemented yet".into())
    }
}
