//! `none`: applies nothing, so both arms of every pair run the same code.
//! Its measured "overhead" is the A/A control: how far apart two identical
//! arms land through noise, drift and ordering alone. A difference other
//! mechanisms show is only meaningful where it exceeds what `none` shows on
//! the same workload and machine.

use anyhow::Result;

use super::{Availability, Mechanism, Scope, Treatment, VariantDef, WorkerEnv};

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
    fn apply_in_worker(&self, _t: &Treatment, _env: &WorkerEnv) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_and_applies_nothing() {
        assert_eq!(NONE.probe(), Availability::Available);
        let t = Treatment::parse("none").unwrap();
        assert_eq!(t.variant, "control");
        let def = crate::workloads::find("getppid").unwrap();
        let dir = std::env::temp_dir();
        let before = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        NONE.apply_in_worker(
            &t,
            &WorkerEnv {
                workload: def,
                scratch: &dir,
                data_dir: Option::None,
                task: 0,
            },
        )
        .unwrap();
        let after = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        for key in ["Seccomp:", "CapEff:", "NoNewPrivs:", "Uid:"] {
            let line = |s: &str| s.lines().find(|l| l.starts_with(key)).map(String::from);
            assert_eq!(line(&before), line(&after), "{key}");
        }
    }
}
