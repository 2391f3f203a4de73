//! Counting an event per task beside the clock (`--metric instructions`
//! on a host): one `perf_event_open` counter per task, user and kernel,
//! inherited by what the task starts, read at every slice boundary with
//! the operation counters, so that each slice's figure is the event's
//! count per operation instead of its time per operation.
//!
//! The event is the PMU's retired instructions. Where no PMU exists (most
//! virtual machines, this project's development VM among them) the CLI
//! refuses `--metric instructions` before anything runs; the software
//! event `task-clock` (nanoseconds the task ran on a CPU) takes the same
//! path in the tests, so the plumbing is checked where instructions
//! cannot be counted: for a CPU-bound workload alone on its CPU, task-clock
//! per operation is its time per operation.

use anyhow::{Context, Result};
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, Counter};

/// What is counted per task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Retired instructions (the PMU), user and kernel.
    Instructions,
    /// Nanoseconds on a CPU (software): the tests' stand-in for a PMU.
    TaskClock,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Event::Instructions => "instructions",
            Event::TaskClock => "task-clock",
        }
    }
}

/// One counter per task, opened on the task's thread id.
pub struct Counters {
    event: Event,
    counters: Vec<Counter>,
}

impl Counters {
    /// Opens and enables a counter of `event` on each of `tids` (user and
    /// kernel, inherited by threads and processes started after this).
    pub fn open(event: Event, tids: &[i32]) -> Result<Counters> {
        let mut counters = Vec::with_capacity(tids.len());
        for &tid in tids {
            let mut b = match event {
                Event::Instructions => Builder::new(Hardware::INSTRUCTIONS),
                Event::TaskClock => Builder::new(Software::TASK_CLOCK),
            };
            b.observe_pid(tid)
                .any_cpu()
                .inherit(true)
                .include_kernel()
                .exclude_hv(true);
            let mut c = b.build().with_context(|| {
                format!(
                    "opening a counter of {} on task {tid} (perf_event_open)",
                    event.name()
                )
            })?;
            c.enable()
                .with_context(|| format!("enabling the {} counter", event.name()))?;
            counters.push(c);
        }
        Ok(Counters { event, counters })
    }

    /// Each task's count so far.
    pub fn read(&mut self) -> Result<Vec<u64>> {
        let name = self.event.name();
        self.counters
            .iter_mut()
            .map(|c| {
                c.read()
                    .with_context(|| format!("reading the {name} counter"))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tasks_clock_is_counted_and_grows() {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
        let mut c = match Counters::open(Event::TaskClock, &[tid]) {
            Ok(c) => c,
            // perf_event_paranoid may refuse even software counters to an
            // unprivileged user; the CLI's tests run as root in CI.
            Err(e) if !crate::sys::is_root() => {
                eprintln!("skipped: {e:#}");
                return;
            }
            Err(e) => panic!("{e:#}"),
        };
        // Spins for 20 ms of this thread's own CPU time, not of the wall
        // clock: on a loaded machine (CI's other tests) 20 ms of wall clock
        // may hold under half of that on a CPU.
        let cpu_ns = crate::sys::thread_cpu_ns;
        let a = c.read().unwrap()[0];
        let start = cpu_ns();
        while cpu_ns() - start < 20_000_000 {
            std::hint::black_box(0u64);
        }
        let b = c.read().unwrap()[0];
        assert!(
            b - a >= 15_000_000,
            "20 ms of spinning on the CPU counted {} ns",
            b - a
        );
    }
}
