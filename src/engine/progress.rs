//! Progress on stderr while measuring: a bar on a terminal, one line per
//! finished measurement otherwise, so stdout stays clean for --json.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::runner::Tick;

pub struct Progress {
    bar: Option<ProgressBar>,
    /// The planned time of one slice (its length and the run of a
    /// command), from which the plan's line estimated the run; None: no
    /// estimate to check.
    planned_slice_ms: Option<f64>,
    total: u64,
    started: Instant,
    done: Cell<u64>,
    /// Slices planned but not needed.
    skipped: Cell<u64>,
    /// Whether the run was found slower than planned (said once).
    told: Cell<bool>,
}

/// When the pace is checked against the plan: after this long, and
/// again each slice after, until it is said once.
const PACE_AFTER: Duration = Duration::from_secs(5);

/// How much slower than planned is worth saying.
const PACE_FACTOR: f64 = 1.5;

/// The line saying a run goes slower than its plan said, or None: `done`
/// of `total` slices in `elapsed`, each planned at `slice_ms`.
pub fn pace_line(done: u64, total: u64, elapsed: Duration, slice_ms: f64) -> Option<String> {
    if done == 0 || total == 0 || slice_ms <= 0.0 {
        return None;
    }
    let planned_s = done as f64 * slice_ms / 1000.0;
    let took_s = elapsed.as_secs_f64();
    if took_s < PACE_FACTOR * planned_s {
        return None;
    }
    let left_s = took_s / done as f64 * total.saturating_sub(done) as f64;
    Some(format!(
        "this run is slower than planned, and will take at most about {left_s:.0} s more: its \
         first {done} slices (of {total}) took {took_s:.0} s, against {planned_s:.0} s of \
         measuring, because what each half does around its slices (starting tasks or a \
         server, switching mechanisms, an emulated guest) takes longer here"
    ))
}

impl Progress {
    /// A bar counting `total` slices.
    pub fn new(total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} slices, eta {eta}  {msg}",
                )
                .expect("valid progress template"),
            );
            b
        });
        Progress {
            bar,
            planned_slice_ms: None,
            total,
            started: Instant::now(),
            done: Cell::new(0),
            skipped: Cell::new(0),
            told: Cell::new(false),
        }
    }

    /// The time the plan counted for one slice, so that a run much slower
    /// than its plan says so once, with a better estimate.
    pub fn planned(&mut self, slice_ms: f64) {
        self.planned_slice_ms = Some(slice_ms);
        self.started = Instant::now();
    }

    /// A new measurement starts.
    pub fn start(&self, what: &str) {
        match &self.bar {
            Some(b) => b.set_message(what.to_string()),
            None => crate::say!("secperf: measuring {what}"),
        }
    }

    /// What is being measured now, on the bar only (rounds of pairs would
    /// print a line per pair otherwise).
    pub fn now(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    /// One slice done.
    pub fn tick(&self, t: Tick) {
        self.done.set(self.done.get() + 1);
        let elapsed = self.started.elapsed();
        if let Some(ms) = self.planned_slice_ms
            && !self.told.get()
            && elapsed >= PACE_AFTER
            && let Some(line) = pace_line(
                self.done.get(),
                self.total.saturating_sub(self.skipped.get()),
                elapsed,
                ms,
            )
        {
            self.told.set(true);
            self.line(&line);
        }
        if let Some(b) = &self.bar {
            b.inc(1);
            let msg = b.message();
            let base = msg.split("  ").next().unwrap_or("").to_string();
            b.set_message(format!(
                "{base}  {} ops/s",
                crate::report::si(t.ops_per_sec)
            ));
        }
    }

    /// `slices` planned but not needed (a sequential comparison settled
    /// before its budget): the bar moves on so its estimate stays honest.
    pub fn skip(&self, slices: u64) {
        self.skipped.set(self.skipped.get() + slices);
        if let Some(b) = &self.bar {
            b.inc(slices);
        }
    }

    /// A line that stays above the bar (a finished measurement).
    pub fn line(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(crate::sys::terminal::for_stderr(line)),
            None => crate::say!("secperf: {line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_much_slower_than_planned_says_so_with_a_new_estimate() {
        // 10 of 100 slices planned at 100 ms took 13 s instead of 1 s.
        let line = pace_line(10, 100, Duration::from_secs(13), 100.0).unwrap();
        // Issue 44: said first what it means for the user (the time
        // left), then why, each figure with what it counts.
        assert!(
            line.starts_with(
                "this run is slower than planned, and will take at most about 117 s more"
            ),
            "{line}"
        );
        assert!(
            line.contains("first 10 slices (of 100) took 13 s"),
            "{line}"
        );
        assert!(line.contains("against 1 s of measuring"), "{line}");
        // On plan, or a little slow: nothing to say.
        assert!(pace_line(10, 100, Duration::from_millis(1400), 100.0).is_none());
        assert!(pace_line(0, 100, Duration::from_secs(13), 100.0).is_none());
    }
}
