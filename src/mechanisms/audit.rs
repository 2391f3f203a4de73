//! `audit`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct Audit;
pub static AUDIT: Audit = Audit;

impl Mechanism for Audit {
    fn name(&self) -> &'static str {
        "audit"
    }
    fn description(&self) -> &'static str {
        "the Linux audit subsystem, switched over the audit netlink socket (root)"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[
            VariantDef {
                name: "enabled",
                description: "audit on, no rules",
            },
            VariantDef {
                name: "unrelated-rule",
                description: "one always,exit rule on a syscall the workload never makes",
            },
            VariantDef {
                name: "matching-rule",
                description: "an always,exit rule with a key on the workload's own syscall",
            },
        ]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["getppid", "mutex_yield"]
    }
    fn probe(&self) -> Availability {
        Availability::Unavailable("not implemented yet".into())
    }
}
