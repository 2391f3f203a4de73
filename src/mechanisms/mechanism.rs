//! The contract every mechanism keeps: its scope (in each worker, or
//! system-wide through a journaled snapshot), its variants and
//! parameters, whether it can run here, and how it is applied and undone.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use super::Treatment;
use crate::model::Params;
use crate::params::ParamDef;
use crate::workloads::WorkloadDef;

/// Where a mechanism acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Inside each task only.
    Worker,
    /// The whole machine; journalled and restored.
    System,
}

/// Whether a mechanism can be applied on this machine, now, by this user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum Availability {
    Available,
    /// Why not, and how to fix it when it can be fixed: "needs root
    /// (CAP_AUDIT_CONTROL)", "SELinux is not active on this kernel",
    /// "unavailable: kernel refused BPF_PROG_LOAD (EPERM)".
    Unavailable(String),
}

/// A variant of a mechanism (`seccomp:args`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct VariantDef {
    pub name: &'static str,
    pub description: &'static str,
}

/// What a worker-scope mechanism knows inside the task applying it.
#[derive(Debug, Clone)]
pub struct WorkerEnv<'a> {
    pub workload: &'a WorkloadDef,
    /// The measurement's scratch directory (the task's files are below).
    pub scratch: &'a Path,
    /// Directory the workload's setup prepared (e.g. the walk tree).
    pub data_dir: Option<&'a Path>,
    pub task: usize,
}

/// Which half of an A/B pair is being set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    /// The reference: for most mechanisms "as the machine is"; system
    /// mechanisms whose comparison needs a defined reference set it (audit:
    /// disabled with no rules; SELinux: permissive).
    Baseline,
    Treatment,
}

/// What a system-scope mechanism knows in the parent.
#[derive(Debug, Clone)]
pub struct SystemEnv<'a> {
    pub workload: &'a WorkloadDef,
}

/// One security mechanism.
pub trait Mechanism: Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn scope(&self) -> Scope;
    /// Variants, the default first. At least one.
    fn variants(&self) -> &'static [VariantDef];
    /// Parameters (`filters=4`) with defaults; shared by all variants.
    fn params(&self) -> &'static [ParamDef] {
        &[]
    }
    /// Workloads the default `overhead` survey measures it on: the ones
    /// whose hooks it touches.
    fn survey_workloads(&self) -> &'static [&'static str];
    /// LSM hooks through which it adds work (for an LSM: the hooks it
    /// implements that the workloads reach; for a BPF LSM program: the hook
    /// it attaches to by default). Empty for mechanisms that act at syscall
    /// entry or exit (seccomp, audit) or on credentials.
    fn lsm_hooks(&self) -> &'static [&'static str] {
        &[]
    }
    /// Variants (with parameters) the default survey measures, e.g.
    /// `["", "args,filters=4"]`; each string is what follows `NAME:`.
    fn survey_variants(&self) -> &'static [&'static str] {
        &[""]
    }
    /// The LSM it needs in a kernel's `lsm=` list (`selinux`, `apparmor`,
    /// `bpf`), which a VM guest booted for it gets; None for the
    /// mechanisms every kernel runs without asking.
    fn boot_lsm(&self) -> Option<&'static str> {
        None
    }
    /// Whether it can be applied here. Never changes anything.
    fn probe(&self) -> Availability;

    /// The variant a parameter written in the variant's place selects:
    /// `seccomp:profile=PATH` means variant `profile` with `profile=PATH`.
    /// None (the default) makes `NAME:KEY=VALUE` a usage error.
    fn variant_of_param(&self, _key: &str) -> Option<&'static str> {
        None
    }

    /// Checks a parsed treatment's parameters before anything runs (a
    /// usage error names the valid range). Default: nothing to check.
    fn validate(&self, _t: &Treatment) -> Result<()> {
        Ok(())
    }

    /// What the user should know about a treatment before it is measured,
    /// one line per fact (a compiled profile's instruction count, rule-file
    /// lines accepted but not applied). Printed at the start and kept with
    /// the run's notes. Default: nothing.
    fn describe(&self, _t: &Treatment) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// The policy files a treatment measures, as (parameter, path): an
    /// OCI seccomp profile, an audit rules file. They are stored with the
    /// run as read. Default: none.
    fn policy_files(&self, _t: &Treatment) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Checks, before anything is measured, that the treatment lets the
    /// workload run at all (a seccomp profile that denies one of its
    /// syscalls is a usage error naming the syscall). Default: it does.
    fn check_workload(
        &self,
        _t: &Treatment,
        _workload: &WorkloadDef,
        _workload_params: &Params,
    ) -> Result<()> {
        Ok(())
    }

    /// Applies the treatment to the calling task (process or thread), in
    /// the treatment arm only, after the workload prepared and before the
    /// timed loop. Worker-scope mechanisms do their work here; a system
    /// mechanism may also need a step in the task (AppArmor's
    /// change_profile). Default: nothing.
    fn apply_in_worker(&self, _t: &Treatment, _env: &WorkerEnv) -> Result<()> {
        Ok(())
    }

    /// System scope: the current state, enough for [`Mechanism::restore`]
    /// to put it back exactly. Written to the journal before `apply`.
    fn snapshot(&self) -> Result<serde_json::Value> {
        anyhow::bail!("{} is not a system-scope mechanism", self.name())
    }
    /// System scope: sets the machine up for one arm of a pair. Called
    /// after [`Mechanism::snapshot`] was journalled; the framework calls
    /// [`Mechanism::restore`] afterwards whatever happens.
    fn apply_system(&self, _t: &Treatment, _arm: Arm, _env: &SystemEnv) -> Result<()> {
        anyhow::bail!("{} is not a system-scope mechanism", self.name())
    }
    /// System scope: restores a snapshot. Must be idempotent (it may run
    /// again from the journal after a crash halfway through).
    fn restore(&self, _snapshot: &serde_json::Value) -> Result<()> {
        anyhow::bail!("{} is not a system-scope mechanism", self.name())
    }
}
