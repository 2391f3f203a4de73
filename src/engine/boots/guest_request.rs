//! What the host asks of a guest, as a typed document: `request.json` in
//! the directory the host shares with the guest, written before the guest
//! boots and read by the guest's secperf before anything runs.
//!
//! Every guest's request says whether the host booted it with QEMU's
//! icount (its clock then counts instructions, which it checks first). A
//! `--vm` guest runs the command on its command line, the host's own less
//! the host's options ([`GuestTask::Command`]). A boot of a kernel A/B is
//! told everything in types ([`GuestTask::BootHalves`]): the plan's cases,
//! which of them to measure, how each half is measured, how it counts and
//! whether it is profiled. The guest's command line is then only `secperf
//! guest`; nothing of the host's arguments is parsed again in the guest.
//!
//! A request another secperf wrote (another [`VERSION`], a task this one
//! does not know) is refused with a message saying so, never half read.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::engine::ab::counting::Counting;
use crate::engine::ab::design::{Case, Design};
use crate::mechanisms::Treatment;
use crate::model::{Mode, Params};
use crate::profile::ProfileOpts;

/// The request's file in the shared directory.
pub const FILE: &str = "request.json";
/// The request's form; a guest refuses any other.
pub const VERSION: u32 = 1;
/// The subcommand a guest of a kernel A/B runs (`secperf guest`).
pub const SUBCOMMAND: &str = "guest";

/// What the host asks of a guest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestRequest {
    /// [`VERSION`] of the secperf that wrote it.
    pub version: u32,
    /// Booted with QEMU's icount: the guest's clock counts instructions
    /// (the guest checks it before anything runs).
    pub icount: bool,
    pub task: GuestTask,
}

/// What the guest does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GuestTask {
    /// `--vm`: the command on the guest's command line, which stores its
    /// run in the shared directory's database.
    Command,
    /// A boot of a kernel A/B: one half of each case asked for.
    BootHalves(BootHalves),
}

/// One boot's halves of a kernel A/B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootHalves {
    /// Every case of the plan, in its order (a half is written with its
    /// index here).
    pub cases: Vec<CaseSpec>,
    /// The indexes of the cases this boot measures.
    pub measure: Vec<usize>,
    pub halves: HalfSpec,
    /// How the host decided the run counts (the guest counts so).
    pub counting: Counting,
    /// A profiled half of each case too, after its timed one.
    pub profile: Option<ProfileOpts>,
}

/// One case of the plan, by name: its workload and parameters, the
/// treatment on in every boot (`none` when no mechanism was given) and
/// its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    pub workload: String,
    pub workload_params: Params,
    pub mechanism: String,
    pub variant: String,
    pub mechanism_params: Params,
    pub tasks: usize,
}

/// How each half is measured; where its tasks are pinned and its files go
/// are the guest's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HalfSpec {
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
    pub mode: Mode,
    /// Task i pinned to the guest's i-th CPU.
    pub pin: bool,
    /// Where workloads create their files; None: the guest's temporary
    /// directory.
    pub scratch: Option<PathBuf>,
}

impl CaseSpec {
    pub fn of(case: &Case) -> CaseSpec {
        CaseSpec {
            workload: case.workload.name.to_string(),
            workload_params: case.workload_params.clone(),
            mechanism: case.treatment.mechanism.name().to_string(),
            variant: case.treatment.variant.to_string(),
            mechanism_params: case.treatment.params.clone(),
            tasks: case.tasks,
        }
    }

    /// The case again, every name found in this secperf's tables.
    pub fn case(&self) -> Result<Case> {
        let workload = crate::workloads::find(&self.workload)
            .with_context(|| format!("no workload '{}' in this secperf", self.workload))?;
        let mechanism = crate::mechanisms::find(&self.mechanism)
            .with_context(|| format!("no mechanism '{}' in this secperf", self.mechanism))?;
        let variant = mechanism
            .variants()
            .iter()
            .find(|v| v.name == self.variant)
            .with_context(|| {
                format!(
                    "mechanism {} has no variant '{}' in this secperf",
                    self.mechanism, self.variant
                )
            })?
            .name;
        Ok(Case {
            workload,
            workload_params: self.workload_params.clone(),
            treatment: Treatment {
                mechanism,
                variant,
                params: self.mechanism_params.clone(),
            },
            tasks: self.tasks,
        })
    }
}

impl HalfSpec {
    /// How `design` measures a half, for a guest (its pinning as a yes or
    /// no, its scratch directory when it is not the host's temporary one).
    pub fn of(design: &Design) -> HalfSpec {
        HalfSpec {
            sample_ms: design.sample_ms,
            samples_per_half: design.samples_per_half,
            warmup: design.warmup,
            mode: design.mode,
            pin: !design.cpus.is_empty(),
            scratch: (design.scratch_root != std::env::temp_dir())
                .then(|| design.scratch_root.clone()),
        }
    }

    /// The design of the guest's halves: tasks pinned to the guest's own
    /// CPUs (refused where a case has more tasks than it has CPUs).
    pub fn design(
        &self,
        cases: &[Case],
        counting: Counting,
        profile: Option<ProfileOpts>,
    ) -> Result<Design> {
        let cpus = if self.pin {
            let allowed =
                crate::sys::cpus::allowed_cpus().context("reading this guest's CPU affinity")?;
            let most = cases.iter().map(|c| c.tasks).max().unwrap_or(1);
            if most > allowed.len() {
                crate::usage_bail!(
                    "a case of {most} tasks in a guest of {} vCPUs: give the arms cpus={most} \
                     (or fewer tasks)",
                    allowed.len()
                );
            }
            allowed
        } else {
            Vec::new()
        };
        Ok(Design {
            pairs: 1,
            sample_ms: self.sample_ms,
            samples_per_half: self.samples_per_half,
            warmup: self.warmup,
            mode: self.mode,
            cpus,
            scratch_root: self.scratch.clone().unwrap_or_else(std::env::temp_dir),
            cache_dir: crate::engine::session::cache_dir(),
            seed: 0,
            profile,
            stop: None,
            counting,
        })
    }
}

impl GuestRequest {
    /// Writes it into `shared`, before the guest boots.
    pub fn write(&self, shared: &Path) -> Result<()> {
        let path = shared.join(FILE);
        std::fs::write(&path, serde_json::to_string_pretty(self)?)
            .with_context(|| format!("writing the guest's request {}", path.display()))
    }

    /// Reads the request in `shared`: a usage error for one this secperf
    /// cannot read.
    pub fn read(shared: &Path) -> Result<GuestRequest> {
        let path = shared.join(FILE);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "reading the host's request {} (a guest is started by the host's secperf, which \
                 writes it)",
                path.display()
            )
        })?;
        parse(&text).map_err(|why| {
            crate::error::UsageError::new(format!(
                "the host's request {}: {why}; the host and the guest must run the same secperf \
                 (a guest runs the host's binary, so a request from another build means a \
                 shared directory left by another secperf)",
                path.display()
            ))
            .into()
        })
    }
}

/// A request's text, its version checked before its shape.
fn parse(text: &str) -> std::result::Result<GuestRequest, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v == VERSION as u64 => {}
        Some(v) => {
            return Err(format!(
                "written in form {v}, and this secperf reads form {VERSION}"
            ));
        }
        None => return Err("no version: not a request secperf wrote".into()),
    }
    serde_json::from_value(value).map_err(|e| format!("not a request this secperf knows ({e})"))
}

/// The request of this process when it is a guest (read once); None
/// outside a guest. A guest whose request cannot be read is an error.
pub fn of_this_guest() -> Result<Option<&'static GuestRequest>> {
    static REQUEST: OnceLock<std::result::Result<Option<GuestRequest>, String>> = OnceLock::new();
    let read = REQUEST.get_or_init(|| match crate::vm::guest::shared_dir() {
        None => Ok(None),
        Some(dir) => GuestRequest::read(&dir)
            .map(Some)
            .map_err(|e| format!("{e:#}")),
    });
    match read {
        Ok(r) => Ok(r.as_ref()),
        Err(e) => Err(crate::error::UsageError::new(e.clone()).into()),
    }
}

/// Whether this process is a guest the host booted with icount.
pub fn booted_with_icount() -> bool {
    matches!(of_this_guest(), Ok(Some(r)) if r.icount)
}

/// The machine of this process, for [`crate::engine::ab::counting::decide`], for a
/// command that boots guests or not: a guest whose request says it was
/// booted with icount counts with its clock.
pub fn machine_of_this_process(booting: bool) -> crate::engine::ab::counting::Machine {
    use crate::engine::ab::counting::Machine;
    if booting {
        Machine::Guests
    } else if booted_with_icount() {
        Machine::IcountGuest
    } else {
        Machine::Here
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn halves() -> GuestRequest {
        let case = Case {
            workload: crate::workloads::find("open").unwrap(),
            workload_params: Params::from([("depth".to_string(), "8".to_string())]),
            treatment: Treatment::parse("seccomp:args,filters=4").unwrap(),
            tasks: 1,
        };
        let mut design = Design::for_tests(3, 1);
        design.counting = Counting::Icount;
        GuestRequest {
            version: VERSION,
            icount: true,
            task: GuestTask::BootHalves(BootHalves {
                cases: vec![CaseSpec::of(&case)],
                measure: vec![0],
                halves: HalfSpec::of(&design),
                counting: design.counting,
                profile: Some(ProfileOpts { hz: 4000, pairs: 2 }),
            }),
        }
    }

    #[test]
    fn a_request_reads_back_as_written_and_its_cases_are_the_plans() {
        let dir = tempfile::tempdir().unwrap();
        let r = halves();
        r.write(dir.path()).unwrap();
        let back = GuestRequest::read(dir.path()).unwrap();
        assert_eq!(back, r);
        let GuestTask::BootHalves(h) = back.task else {
            panic!("{back:?}")
        };
        let case = h.cases[0].case().unwrap();
        assert_eq!(case.treatment.to_string(), "seccomp:args,filters=4");
        assert_eq!(case.workload.name, "open");
        assert_eq!(case.workload_params["depth"], "8");
        assert!(h.halves.pin);
        assert_eq!(h.halves.scratch, None, "the host's temporary directory");
        let d = h
            .halves
            .design(&[case], h.counting, h.profile)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(d.counting, Counting::Icount);
        assert_eq!((d.sample_ms, d.samples_per_half, d.warmup), (60, 2, 1));
    }

    #[test]
    fn a_request_of_another_form_or_task_is_refused_saying_so() {
        let dir = tempfile::tempdir().unwrap();
        let text = serde_json::to_string(&halves()).unwrap();
        for (bad, says) in [
            (text.replace("\"version\":1", "\"version\":9"), "form 9"),
            (
                text.replace("\"boot_halves\"", "\"boot_thirds\""),
                "not a request this secperf knows",
            ),
            ("--boot-half 0,1".to_string(), "not JSON"),
            ("{\"icount\":true}".to_string(), "no version"),
        ] {
            std::fs::write(dir.path().join(FILE), &bad).unwrap();
            let e = GuestRequest::read(dir.path()).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
            let msg = format!("{e:#}");
            assert!(msg.contains(says), "{says}: {msg}");
            assert!(msg.contains("the same secperf"), "{msg}");
        }
        std::fs::remove_file(dir.path().join(FILE)).unwrap();
        let e = GuestRequest::read(dir.path()).unwrap_err();
        assert!(
            format!("{e:#}").contains("reading the host's request"),
            "{e:#}"
        );
    }

    #[test]
    fn a_case_of_a_name_this_secperf_lacks_is_an_error() {
        let GuestTask::BootHalves(mut h) = halves().task else {
            unreachable!()
        };
        h.cases[0].workload = "nope".into();
        assert!(h.cases[0].case().is_err());
        h.cases[0].workload = "open".into();
        h.cases[0].variant = "nope".into();
        let e = h.cases[0].case().unwrap_err();
        assert!(format!("{e:#}").contains("no variant 'nope'"), "{e:#}");
    }
}
