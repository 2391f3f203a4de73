//! The real [`Booter`]: a guest per boot running `secperf guest`, told its
//! halves by its request, and what the host collects from each.

use anyhow::{Context, Result};

use super::guest::{BootHalf, HALVES_FILE, PROBE_FILE};
use super::guest_request::{BootHalves, CaseSpec, GuestTask, HalfSpec};
use super::pairs::{BootResult, Booter};
use super::vm::{BootSetup, boot};
use crate::engine::ab::counting::Counting;
use crate::engine::ab::measurer::HalfResult;
use crate::vm::arms::ArmRecord;

/// Boots of the real thing: a guest per boot running `secperf guest`,
/// told its halves by its request.
pub(super) struct GuestBooter<'a> {
    pub(super) setups: Vec<BootSetup<'a>>,
    /// The plan's cases, how a half is measured and counted, and the
    /// profile of a profiled boot: what every boot's request carries.
    pub(super) cases: Vec<CaseSpec>,
    pub(super) halves: HalfSpec,
    pub(super) counting: Counting,
    pub(super) profile: Option<crate::profile::ProfileOpts>,
    pub(super) records: &'a mut [ArmRecord],
    /// Boot a block's arms at once (counted instructions, CPUs enough).
    pub(super) together: bool,
}

impl GuestBooter<'_> {
    /// The request of a boot measuring `cases` (profiled or not).
    fn task_for(&self, cases: &[usize], profile: bool) -> GuestTask {
        GuestTask::BootHalves(BootHalves {
            cases: self.cases.clone(),
            measure: cases.to_vec(),
            halves: self.halves.clone(),
            counting: self.counting,
            profile: self.profile.filter(|_| profile),
        })
    }

    /// What a finished guest of `arm` measured of `cases`.
    fn collect(
        &mut self,
        arm: usize,
        cases: &[usize],
        guest: &super::vm::Guest,
    ) -> Result<Vec<BootResult>> {
        let setup = &self.setups[arm];
        self.records[arm].boots.push(setup.facts(guest));
        if self.records[arm].probe.is_none() {
            self.records[arm].probe = std::fs::read_to_string(guest.shared.path().join(PROBE_FILE))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        }
        let file = guest.shared.path().join(HALVES_FILE);
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading the guest's halves from {}", file.display()))?;
        let halves: Vec<BootHalf> = serde_json::from_str(&text)
            .with_context(|| format!("reading the guest's halves from {}", file.display()))?;
        cases
            .iter()
            .map(|c| {
                let h = halves
                    .iter()
                    .find(|h| h.case == *c)
                    .with_context(|| format!("the guest measured no half of case {c}"))?;
                Ok(BootResult {
                    half: Some(HalfResult {
                        child_cpu: h.child_cpu,
                        ..HalfResult::of(h.ns_per_op)
                    }),
                    profile: h.profile.clone(),
                    profile_note: h.profile_note.clone(),
                })
            })
            .collect()
    }
}

impl Booter for GuestBooter<'_> {
    fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>> {
        let task = self.task_for(cases, profile);
        let guest = boot(&self.setups[arm], &guest_argv(), &task)?;
        self.collect(arm, cases, &guest)
    }

    fn together(&self) -> bool {
        self.together
    }

    fn boot_together(
        &mut self,
        asks: &[(usize, Vec<usize>)],
        profile: bool,
    ) -> Vec<Result<Vec<BootResult>>> {
        let tasks: Vec<GuestTask> = asks
            .iter()
            .map(|(_, cases)| self.task_for(cases, profile))
            .collect();
        let setups = &self.setups;
        let argv = guest_argv();
        let guests: Vec<Result<super::vm::Guest>> = std::thread::scope(|scope| {
            let argv = &argv;
            let running: Vec<_> = asks
                .iter()
                .zip(&tasks)
                .map(|((arm, _), task)| scope.spawn(move || boot(&setups[*arm], argv, task)))
                .collect();
            running
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a boot's thread panicked")))
                })
                .collect()
        });
        asks.iter()
            .zip(guests)
            .map(|((arm, cases), guest)| self.collect(*arm, cases, &guest?))
            .collect()
    }
}

/// The command line of a kernel A/B's guest: `secperf guest`, which reads
/// its request.
fn guest_argv() -> Vec<String> {
    vec![super::guest_request::SUBCOMMAND.to_string()]
}
