//! `none`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct None;
pub static NONE: None = None;

impl Mechanism for None {
    fn name(&self) -> &'static str {
        "none"
    }
    fn description(&self) -> &'static str {
        "applies nothing: both arms identical, the A/A control"
    }
    fn scope(&self) -> Scope {
        Scope::Worker
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "control",
            description: "nothing applied in either arm",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["getppid", "open"]
    }
    fn probe(&self) -> Availability {
        Availability::Available
    }
}
