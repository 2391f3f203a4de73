//! `seccomp`: placeholder being written; probes as unavailable until then.

use super::{Availability, Mechanism, Scope, VariantDef};

pub struct Seccomp;
pub static SECCOMP: Seccomp = Seccomp;

impl Mechanism for Seccomp {
    fn name(&self) -> &'static str {
        "seccomp"
    }
    fn description(&self) -> &'static str {
        "seccomp-BPF filters installed in each task (no_new_privs, unprivileged)"
    }
    fn scope(&self) -> Scope {
        Scope::Worker
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[
            VariantDef {
                name: "allow",
                description: "allow-all on the syscall number only (the kernel's constant-action cache can skip it)",
            },
            VariantDef {
                name: "args",
                description: "inspects syscall arguments, so the action cache cannot skip it",
            },
        ]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &["getppid", "eventfd"]
    }
    fn probe(&self) -> Availability {
        Availability::Unavailable("not implemented yet".into())
    }
}
