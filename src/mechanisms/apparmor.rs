//! `apparmor`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct AppArmor;
pub static APPARMOR: AppArmor = AppArmor;

impl Mechanism for AppArmor {
    fn name(&self) -> &'static str {
        "apparmor"
    }
    fn description(&self) -> &'static str {
        "the workload under an enforcing AppArmor profile vs unconfined (root; where AppArmor is active)"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "enforce",
            description: "tasks confined by a generated profile that allows the workload",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["open", "stat", "tree_walk"]
    }
    fn probe(&self) -> Availability {
        Availability::Unavailable("not implemented yet".into())
    }
}
