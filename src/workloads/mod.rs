//! The workload catalog: one file per workload, one table ([`WORKLOADS`])
//! that drives `secperf list`, `--help`, `-w all` and the runner.
//!
//! The contract is will-it-scale's: a workload prepares per-task state
//! outside the timed loop, then does one operation per call of
//! [`Workload::op`]. The harness, not the workload, counts and times. Every
//! operation checks every system call it makes: a failing call is fast and
//! would fake a figure, so it stops the measurement with the call and errno.

use anyhow::Result;

use crate::model::Params;

pub mod access1;
pub mod access2;
pub(crate) mod child;
pub mod command;
pub mod dbench;
pub mod eventfd;
pub mod exec;
pub mod file_copy;
pub mod getppid;
pub mod getppid_cold;
pub mod hackbench;
pub mod http;
pub mod mutex_yield;
pub mod open;
pub mod pipe;
pub mod pipe_ctx;
pub mod select;
pub mod service;
pub mod spawn;
pub mod stat;
pub mod stream;
pub mod task;
pub mod tree_walk;
pub mod unix_socket;
pub mod util;
mod workload;
pub mod write;

pub use crate::params::ParamDef;
pub use workload::{Setup, SetupCtx, TaskCtx, Workload, WorkloadDef, def};

/// The catalog, in the order `list` and `-w all` use.
pub static WORKLOADS: &[WorkloadDef] = &[
    def::<getppid::Getppid>(),
    def::<eventfd::Eventfd>(),
    def::<open::Open>(),
    def::<stat::Stat>(),
    def::<access1::Access1>(),
    def::<access2::Access2>(),
    def::<write::Write>(),
    def::<tree_walk::TreeWalk>(),
    def::<mutex_yield::MutexYield>(),
    def::<dbench::Dbench>(),
    def::<http::Http>(),
    def::<pipe::Pipe>(),
    def::<pipe_ctx::PipeCtx>(),
    def::<unix_socket::UnixSocket>(),
    def::<hackbench::Hackbench>(),
    def::<spawn::Spawn>(),
    def::<exec::Exec>(),
    def::<file_copy::FileCopy>(),
    def::<stream::Stream>(),
    def::<command::Command>(),
    def::<service::Service>(),
    def::<getppid_cold::GetppidCold>(),
];

/// Looks a workload up by name.
pub fn find(name: &str) -> Option<&'static WorkloadDef> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// The names, comma-separated, for error messages.
pub fn names() -> String {
    WORKLOADS
        .iter()
        .map(|w| w.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl WorkloadDef {
    /// The effective parameters: defaults overlaid with `given`. Unknown
    /// keys are the caller's error.
    pub fn params_with_defaults(&self, given: &Params) -> Params {
        crate::params::with_defaults(self.params, given)
    }
}

/// How tables name a measured workload: the command line for `command`
/// (`dd if=/dev/zero ...`), the client and its server for `service`, the
/// catalog name otherwise.
pub fn label(name: &str, params: &Params) -> String {
    if name == command::NAME
        && let Ok(argv) = command::argv_of(params)
    {
        return command::shown(&argv);
    }
    if name == service::NAME
        && let Some(l) = service::label(params)
    {
        return l;
    }
    name.to_string()
}

/// The parameters worth showing beside [`label`]: all of them, except a
/// command's or a service's own (its label already shows them).
pub fn shown_params(name: &str, params: &Params) -> Vec<String> {
    if name == command::NAME || name == service::NAME {
        return Vec::new();
    }
    params.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// Reads a numeric parameter, with an error naming the workload and key.
pub fn param_u64(params: &Params, workload: &str, key: &str) -> Result<u64> {
    crate::params::u64_of(params, &format!("workload {workload}"), key)
}

/// A usage error unless `params[key]` lies in `range`.
pub fn check_range(
    params: &Params,
    workload: &str,
    key: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<()> {
    crate::params::in_range(params, &format!("workload {workload}"), key, range).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_described() {
        let mut seen = std::collections::HashSet::new();
        for w in WORKLOADS {
            assert!(seen.insert(w.name), "duplicate workload {}", w.name);
            assert!(!w.description.is_empty(), "{} has no description", w.name);
            assert!(!w.hooks.is_empty(), "{} names no hooks", w.name);
            assert!(
                w.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            );
        }
    }

    #[test]
    fn catalog_has_the_first_nine() {
        for n in [
            "getppid",
            "eventfd",
            "open",
            "stat",
            "access1",
            "access2",
            "write",
            "tree_walk",
            "mutex_yield",
        ] {
            assert!(find(n).is_some(), "{n} missing");
        }
        assert!(find("nope").is_none());
    }

    #[test]
    fn defaults_fill_in() {
        let open = find("open").unwrap();
        let p = open.params_with_defaults(&Params::new());
        assert_eq!(p.get("depth").map(String::as_str), Some("4"));
        let mut given = Params::new();
        given.insert("depth".into(), "8".into());
        assert_eq!(open.params_with_defaults(&given)["depth"], "8");
    }
}
