//! Progress on stderr while measuring: a bar on a terminal, one line per
//! finished measurement otherwise, so stdout stays clean for --json.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::runner::Tick;

pub struct Progress {
    bar: Option<ProgressBar>,
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
        Progress { bar }
    }

    /// A new measurement starts.
    pub fn start(&self, what: &str) {
        match &self.bar {
            Some(b) => b.set_message(what.to_string()),
            None => eprintln!("secperf: measuring {what}"),
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
        if let Some(b) = &self.bar {
            b.inc(slices);
        }
    }

    /// A line that stays above the bar (a finished measurement).
    pub fn line(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("secperf: {line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
