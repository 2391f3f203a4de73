//! Counted instructions in a guest (`--metric instructions` with `--vm`,
//! `--kernel` or `bisect`): QEMU's `-icount shift=0,sleep=off` under
//! emulation (TCG).
//!
//! With icount, QEMU's virtual clock is driven by the guest's instruction
//! counter: at `shift=0` it advances 2^0 = 1 ns for every instruction the
//! guest executes, and `sleep=off` makes an idle guest jump to its next
//! timer instead of waiting in real time. Everything the guest reads from
//! its clocks (the TSC, `clock_gettime`) is then a count of instructions,
//! the same run to run whatever the host is doing, and every figure the
//! guest's secperf takes in "ns" is a count of instructions. One vCPU per
//! task: the counter is the guest's, so a second vCPU's work would be
//! counted too.
//!
//! QEMU accepts icount only under TCG, and an older QEMU or an option that
//! was dropped on the way would leave the clock running in real time with
//! nothing said. So before measuring, the guest checks that its clock
//! counts instructions ([`read`], [`judge`]): two loops of known length per
//! iteration (4 and 9 instructions) must each read that many ns per
//! iteration, within [`TOLERANCE`]. Otherwise the run stops with exit
//! code 2 and the reason.

use std::time::Instant;

use anyhow::Result;
use serde::{Deserialize, Serialize};

/// The options secperf gives QEMU (through virtme-ng's `--qemu-opts`).
pub const QEMU_OPTS: &str = "-icount shift=0,sleep=off";

/// How far a loop's ns per iteration may be from its instruction count
/// (a relative tolerance). The guest's timer interrupts, counted too, add
/// about 0.1% to a loop of this length.
pub const TOLERANCE: f64 = 0.02;

/// Iterations of the shorter run of each loop (the longer runs twice as
/// many; the difference cancels what the clock reads cost).
const ITERATIONS: u64 = 1_000_000;

/// What a run records of the QEMU that counted its instructions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QemuFacts {
    /// `qemu-system-x86_64 --version`'s first line.
    pub version: String,
    /// The options secperf added ([`QEMU_OPTS`]).
    pub options: String,
}

impl QemuFacts {
    /// The host's QEMU and the icount options.
    pub fn host() -> QemuFacts {
        let version = std::process::Command::new("qemu-system-x86_64")
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .map(|l| l.trim().to_string())
            })
            .unwrap_or_else(|| "unknown (qemu-system-x86_64 --version failed)".into());
        QemuFacts {
            version,
            options: QEMU_OPTS.to_string(),
        }
    }
}

/// One loop's reading: its instructions per iteration and the ns per
/// iteration the clock gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub instructions: f64,
    pub ns_per_iteration: f64,
}

impl Reading {
    /// Whether the clock read the loop's instructions, within
    /// [`TOLERANCE`].
    pub fn counts(&self) -> bool {
        (self.ns_per_iteration / self.instructions - 1.0).abs() <= TOLERANCE
    }
}

/// Whether `readings` show a clock that counts instructions: Ok, or the
/// reason it does not, for the user.
pub fn judge(readings: &[Reading]) -> Result<(), String> {
    if readings.iter().all(Reading::counts) {
        return Ok(());
    }
    let seen = readings
        .iter()
        .map(|r| {
            format!(
                "a loop of {} instructions an iteration read {:.3} ns an iteration",
                r.instructions, r.ns_per_iteration
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    Err(format!(
        "the guest's clock is not counting instructions ({seen}; under icount each would read \
         its count within {:.0}%): QEMU did not apply `{QEMU_OPTS}` (an older QEMU, or \
         options dropped on the way to it). Check `qemu-system-x86_64 --version` (icount \
         needs TCG, which secperf asks for with --disable-kvm) and that virtme-ng passes \
         --qemu-opts, or measure time: leave out --metric instructions",
        TOLERANCE * 100.0
    ))
}

/// What a guest whose clock counts instructions records of the check:
/// "the clock counts instructions: loops of 4 and 9 instructions an
/// iteration read 4.001 and 9.002 ns an iteration".
pub fn checked_line(readings: &[Reading]) -> String {
    let list =
        |f: &dyn Fn(&Reading) -> String| readings.iter().map(f).collect::<Vec<_>>().join(" and ");
    format!(
        "the guest's clock counts instructions: loops of {} instructions an iteration read {} \
         ns an iteration",
        list(&|r| format!("{}", r.instructions)),
        list(&|r| format!("{:.3}", r.ns_per_iteration))
    )
}

/// Both loops' readings.
pub fn read() -> Result<Vec<Reading>> {
    if !cfg!(target_arch = "x86_64") {
        return Err(crate::error::UsageError::new(
            "--metric instructions in a guest checks its clock with x86-64 loops, and this \
             guest is not x86-64"
                .to_string(),
        )
        .into());
    }
    Ok(vec![
        Reading {
            instructions: 4.0,
            ns_per_iteration: slope(spin4)?,
        },
        Reading {
            instructions: 9.0,
            ns_per_iteration: slope(spin9)?,
        },
    ])
}

/// Tries of each run: the least of them is kept.
const TRIES: usize = 7;

/// ns per iteration of `spin`: the least time of 2N iterations less the
/// least time of N, over N. Under icount whatever else the one vCPU runs
/// meanwhile (a kernel thread, an interrupt) only adds instructions, so
/// the least of several tries is the loop's own count; a median of three
/// once read 11.5 for the 4-instruction loop in a guest just booted, two
/// of its three tries sharing the vCPU with 7 ms of other work.
fn slope(spin: fn(u64)) -> Result<f64> {
    let time = |n: u64| {
        let t = Instant::now();
        spin(n);
        t.elapsed().as_nanos() as f64
    };
    let (mut one, mut two) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..TRIES {
        one = one.min(time(ITERATIONS));
        two = two.min(time(2 * ITERATIONS));
    }
    if !(one.is_finite() && two.is_finite()) {
        anyhow::bail!("the clock gave no reading for the check's loops");
    }
    Ok((two - one) / ITERATIONS as f64)
}

/// `fn $name(n)`: `n` iterations of a loop of `$nops` nops, `dec` and
/// `jnz`, so of `$nops + 2` instructions.
macro_rules! spin_loop {
    ($name:ident, $($nop:literal),+) => {
        #[cfg(target_arch = "x86_64")]
        fn $name(n: u64) {
            if n == 0 {
                return;
            }
            // SAFETY: the loop only decrements a register it owns and
            // executes nops; it touches no memory and no stack.
            unsafe {
                std::arch::asm!(
                    "2:",
                    $($nop,)+
                    "dec {n}",
                    "jnz 2b",
                    n = inout(reg) n => _,
                    options(nomem, nostack),
                );
            }
        }

        #[cfg(not(target_arch = "x86_64"))]
        fn $name(_: u64) {
            unreachable!("checked in read")
        }
    };
}

spin_loop!(spin4, "nop", "nop");
spin_loop!(spin9, "nop", "nop", "nop", "nop", "nop", "nop", "nop");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_that_counts_passes_and_one_that_runs_in_time_is_explained() {
        let counting = [
            Reading {
                instructions: 4.0,
                ns_per_iteration: 4.004,
            },
            Reading {
                instructions: 9.0,
                ns_per_iteration: 9.01,
            },
        ];
        assert_eq!(judge(&counting), Ok(()));
        // The same loops on a host (or a TCG guest without icount): the
        // nops cost next to nothing, so both read about the same.
        let timed = [
            Reading {
                instructions: 4.0,
                ns_per_iteration: 1.1,
            },
            Reading {
                instructions: 9.0,
                ns_per_iteration: 1.3,
            },
        ];
        let why = judge(&timed).unwrap_err();
        assert!(
            why.contains("not counting instructions") && why.contains(QEMU_OPTS),
            "{why}"
        );
        assert!(why.contains("read 1.100 ns an iteration"), "{why}");
    }

    #[test]
    fn this_host_does_not_count_instructions_by_its_clock() {
        // Real time on real (or KVM) hardware: a 9-instruction loop of
        // nops does not take 2.25 times a 4-instruction one to 2%, and
        // neither reads 1 ns an instruction. Were it ever to, the guest's
        // check would pass a guest that was not counting.
        let r = read().unwrap();
        assert!(judge(&r).is_err(), "{r:?}");
    }
}
