//! `selinux`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct Selinux;
pub static SELINUX: Selinux = Selinux;

impl Mechanism for Selinux {
    fn name(&self) -> &'static str {
        "selinux"
    }
    fn description(&self) -> &'static str {
        "SELinux enforcing vs permissive (root; where SELinux is active)"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "enforcing",
            description: "baseline permissive, treatment enforcing",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["open", "stat", "eventfd", "tree_walk"]
    }
    fn probe(&self) -> Availability {
        Availability::Unavailable("not implemented yet".into())
    }
}
