//! `cred`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct Cred;
pub static CRED: Cred = Cred;

impl Mechanism for Cred {
    fn name(&self) -> &'static str {
        "cred"
    }
    fn description(&self) -> &'static str {
        "tasks run with fsuid != uid, so access() must override credentials (experiment 003)"
    }
    fn scope(&self) -> Scope {
        Scope::Worker
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "fsuid",
            description: "fsuid differs from the real uid",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["access1", "access2"]
    }
    fn probe(&self) -> Availability {
        Availability::Unavailable("not implemented yet".into())
    }
}
