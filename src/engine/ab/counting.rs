//! How a run counts, decided once: from what the request asks for (its
//! `--metric`) and the machine the halves run on, [`decide`] picks the
//! clock, this machine's PMU or a guest booted with QEMU's icount, and the
//! result, one [`Counting`], travels from there to the slice: in the
//! design of every comparison ([`super::design::Design::counting`]), in
//! the request a guest is given ([`crate::engine::boots::guest_request`]), and to the
//! runner as the event each task counts ([`Counting::event`]).
//!
//! Nothing else asks the environment or the PMU what a run measures. A
//! guest learns it from its request: the host writes whether it booted the
//! guest with icount, and a kernel A/B's halves carry the host's counting
//! itself.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::model::Metric;

/// How each half of a run counts its figure per operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counting {
    /// Time by the clock (ns per operation), nothing counted beside it.
    Clock,
    /// Time by the clock, with this machine's PMU counting retired
    /// instructions beside it (each comparison then carries both).
    ClockAndPmu,
    /// Instructions retired, counted per task by this machine's PMU (user
    /// and kernel, of each task and what it starts); the clock beside.
    Pmu,
    /// Instructions, in a guest booted with QEMU's `-icount shift=0`: the
    /// guest's clock counts one ns per instruction, so its time is the
    /// count. On a host, the guests it boots count so.
    Icount,
}

/// Where a run's halves are measured, as far as counting goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machine {
    /// This machine, measured directly (a host, or a guest whose clock is
    /// its own).
    Here,
    /// Guests that this command boots (`--vm`, `--kernel`, bisect, track):
    /// they count, the host only pairs what they give.
    Guests,
    /// A guest booted with icount (its request says so): its clock counts
    /// instructions.
    IcountGuest,
}

/// How a run asking for `metric` counts on `machine`: time by the clock
/// (with the PMU's instructions beside it where a PMU counts them);
/// instructions by icount in a guest, by the PMU on a host, which is
/// refused (a usage error saying what to do instead) where no PMU counts
/// them.
pub fn decide(metric: Metric, machine: Machine) -> Result<Counting> {
    decide_with(metric, machine, || {
        crate::sys::pmu::instructions_counter().map(|_| ())
    })
}

/// [`decide`] with the PMU's answer given (tests).
fn decide_with(
    metric: Metric,
    machine: Machine,
    pmu: impl Fn() -> std::result::Result<(), String>,
) -> Result<Counting> {
    Ok(match (metric, machine) {
        (Metric::Instructions, Machine::Guests | Machine::IcountGuest) => Counting::Icount,
        (Metric::Time, Machine::Guests) => Counting::Clock,
        (Metric::Time, Machine::IcountGuest) => crate::usage_bail!(
            "this guest was booted with icount, whose clock counts instructions, but was asked to \
             measure time: the host and the guest disagree (run the same secperf on both)"
        ),
        (Metric::Time, Machine::Here) => match pmu() {
            Ok(()) => Counting::ClockAndPmu,
            Err(_) => Counting::Clock,
        },
        (Metric::Instructions, Machine::Here) => match pmu() {
            Ok(()) => Counting::Pmu,
            Err(why) => crate::usage_bail!(
                "--metric instructions on this machine: {why}. Count them in an emulated guest \
                 instead, where QEMU's icount makes the guest's clock count instructions: add \
                 --vm IMAGE (e.g. --vm /boot/vmlinuz-$(uname -r)), or compare kernels with \
                 --kernel"
            ),
        },
    })
}

impl Counting {
    /// The measure of each half's figure.
    pub fn metric(self) -> Metric {
        match self {
            Counting::Clock | Counting::ClockAndPmu => Metric::Time,
            Counting::Pmu | Counting::Icount => Metric::Instructions,
        }
    }

    /// What each task counts beside the clock: the PMU's instructions
    /// (the figure with [`Counting::Pmu`], beside time with
    /// [`Counting::ClockAndPmu`]); nothing where the clock is all.
    pub fn event(self) -> Option<crate::runner::counted::Event> {
        match self {
            Counting::ClockAndPmu | Counting::Pmu => {
                Some(crate::runner::counted::Event::Instructions)
            }
            Counting::Clock | Counting::Icount => None,
        }
    }

    /// Whether each case first runs a discarded half
    /// ([`super::warmup`]): where the clock counts instructions, whose
    /// first half of a workload reads the kernel's cold caches too.
    pub fn warms_up(self) -> bool {
        self == Counting::Icount
    }

    /// Whether a half is the least of its slices, and slices that read
    /// apart are worth a line ([`super::measurer::spread_line`]): where the
    /// clock counts instructions.
    pub fn by_least_slice(self) -> bool {
        self == Counting::Icount
    }

    /// Whether guests are booted with QEMU's icount for it.
    pub fn boots_with_icount(self) -> bool {
        self == Counting::Icount
    }

    /// A test's counting for figures of `metric`: the clock for time,
    /// icount for instructions.
    #[cfg(test)]
    pub fn of_metric(metric: Metric) -> Counting {
        match metric {
            Metric::Time => Counting::Clock,
            Metric::Instructions => Counting::Icount,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_metric_on_each_machine_counts_one_way() {
        let pmu = || Ok(());
        let none = || Err("no PMU (perf_event_open: ENOENT)".to_string());
        let cases = [
            (
                Metric::Time,
                Machine::Here,
                true,
                Some(Counting::ClockAndPmu),
            ),
            (Metric::Time, Machine::Here, false, Some(Counting::Clock)),
            (
                Metric::Instructions,
                Machine::Here,
                true,
                Some(Counting::Pmu),
            ),
            (Metric::Instructions, Machine::Here, false, None),
            (Metric::Time, Machine::Guests, false, Some(Counting::Clock)),
            (
                Metric::Instructions,
                Machine::Guests,
                false,
                Some(Counting::Icount),
            ),
            (
                Metric::Instructions,
                Machine::IcountGuest,
                true,
                Some(Counting::Icount),
            ),
            (Metric::Time, Machine::IcountGuest, true, None),
        ];
        for (metric, machine, has_pmu, want) in cases {
            let got = if has_pmu {
                decide_with(metric, machine, pmu)
            } else {
                decide_with(metric, machine, none)
            };
            match (got, want) {
                (Ok(c), Some(w)) => {
                    assert_eq!(c, w, "{metric:?} on {machine:?}");
                    assert_eq!(c.metric(), metric);
                }
                (Err(e), None) => assert_eq!(crate::error::exit_code(&e), 2, "{e:#}"),
                (got, want) => panic!("{metric:?} on {machine:?}: {got:?}, wanted {want:?}"),
            }
        }
        let e = decide_with(Metric::Instructions, Machine::Here, none).unwrap_err();
        assert!(format!("{e:#}").contains("no PMU"), "{e:#}");
    }

    #[test]
    fn only_the_pmu_counts_an_event_and_only_icount_warms_up() {
        use crate::runner::counted::Event;
        assert_eq!(Counting::Clock.event(), None);
        assert_eq!(Counting::ClockAndPmu.event(), Some(Event::Instructions));
        assert_eq!(Counting::Pmu.event(), Some(Event::Instructions));
        assert_eq!(Counting::Icount.event(), None);
        for c in [Counting::Clock, Counting::ClockAndPmu, Counting::Pmu] {
            assert!(!c.warms_up() && !c.by_least_slice() && !c.boots_with_icount());
        }
        assert!(Counting::Icount.warms_up() && Counting::Icount.by_least_slice());
        let text = serde_json::to_string(&Counting::ClockAndPmu).unwrap();
        assert_eq!(text, "\"clock_and_pmu\"");
    }
}
