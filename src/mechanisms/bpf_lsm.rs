//! `bpf-lsm`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct BpfLsm;
pub static BPF_LSM: BpfLsm = BpfLsm;

impl Mechanism for BpfLsm {
    fn name(&self) -> &'static str {
        "bpf-lsm"
    }
    fn description(&self) -> &'static str {
        "a no-op BPF LSM program attached to one hook (root; needs the bpf LSM active)"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "noop",
            description: "returns 0 (allow) on every call of the hook",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["eventfd", "write"]
    }
    fn probe(&self) -> Availability {
        Availability::Unavailable("not implemented yet".into())
    }
}
