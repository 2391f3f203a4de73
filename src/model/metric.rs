//! What a run's halves measured per operation: time (the default) or
//! instructions (`--metric instructions`).
//!
//! Instructions are counted where time cannot be trusted: in an emulated
//! guest run under QEMU's `-icount shift=0,sleep=off`, the guest's clock
//! advances one nanosecond per instruction executed, so the figures the
//! guest's clock gives are counts of instructions, the same run to run
//! whatever the host's load. They miss what an instruction costs on
//! hardware (a cache miss, a serialising instruction, a TLB flush count
//! as one each): a second, exact view beside time, never a replacement
//! where time is real (docs/methodology.md).
//!
//! The metric is stored in the run's parameters (`params.metric`); a run
//! stored before it existed measured time.

use serde::{Deserialize, Serialize};

/// The metric of a run's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Metric {
    /// Nanoseconds of wall-clock time per operation.
    #[default]
    Time,
    /// Instructions executed per operation.
    Instructions,
}

/// The values `--metric` takes.
pub const NAMES: [&str; 2] = ["time", "instructions"];

impl Metric {
    /// `--metric`'s value, or what to write instead: a usage message with
    /// a did-you-mean where a value is close to one secperf knows, and the
    /// reason for the metrics it does not count.
    pub fn parse(value: &str) -> Result<Metric, String> {
        let v = value.trim().to_ascii_lowercase();
        match v.as_str() {
            "time" | "ns" | "wall" => return Ok(Metric::Time),
            "instructions" | "instruction" | "insns" | "instr" | "inst" => {
                return Ok(Metric::Instructions);
            }
            _ => {}
        }
        let why = match v.as_str() {
            "cycles" | "cpu-cycles" | "ref-cycles" => {
                " (cycles are not counted: QEMU's icount charges every instruction one \
                 nanosecond and models no cycles, and a host's cycles move with its \
                 frequency; use time for what hardware spends, instructions for an exact \
                 count)"
            }
            _ => "",
        };
        let near = NAMES
            .iter()
            .map(|n| (strsim::jaro_winkler(&v, n), *n))
            .filter(|(score, _)| *score > 0.7)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, n)| format!("; did you mean '{n}'?"))
            .unwrap_or_default();
        Err(format!(
            "'{value}' is not a metric{why}: give time (the default, ns per operation) or \
             instructions (instructions per operation: QEMU's icount in a guest, --vm or \
             --kernel; the PMU on a host){near}"
        ))
    }

    /// "ns per operation", "instructions per operation".
    pub fn per_op(self) -> &'static str {
        match self {
            Metric::Time => "ns per operation",
            Metric::Instructions => "instructions per operation",
        }
    }

    /// Axis and column units: "ns/op", "instructions/op".
    pub fn per_op_short(self) -> &'static str {
        match self {
            Metric::Time => "ns/op",
            Metric::Instructions => "instructions/op",
        }
    }

    /// The metric whose [`Metric::per_op_short`] is `unit` (time for any
    /// other unit): how a grid or a plot given a unit words its changes.
    pub fn of_per_op_unit(unit: &str) -> Metric {
        if unit == Metric::Instructions.per_op_short() {
            Metric::Instructions
        } else {
            Metric::Time
        }
    }

    /// One operation's figure, readable: "195.0 ns", "67.871 ms" for time;
    /// "336.1 insns", "12.35k insns" for instructions.
    pub fn format(self, x: f64) -> String {
        match self {
            Metric::Time => {
                let (div, unit, digits) = time_scale(x);
                format!("{:.digits$} {unit}", x / div)
            }
            Metric::Instructions => {
                let (v, suffix, digits) = match x.abs() {
                    a if a >= 1e9 => (x / 1e9, "G", 3),
                    a if a >= 1e6 => (x / 1e6, "M", 3),
                    a if a >= 1e4 => (x / 1e3, "k", 2),
                    _ => (x, "", 1),
                };
                format!("{v:.digits$}{suffix} insns")
            }
        }
    }

    /// The noise band's default, percent: a change is slower or faster
    /// only when its whole interval lies outside it. Time moves with the
    /// machine, so 1%; counted instructions repeat to about 0.2% (the
    /// guest's timer interrupts and kernel threads land in different
    /// places), so 0.5%, which still lets a change of 1% show.
    pub fn default_noise_pct(self) -> f64 {
        match self {
            Metric::Time => 1.0,
            Metric::Instructions => 0.5,
        }
    }

    /// The equivalence margin's default, percent (a change shown to lie
    /// within it is negligible), for the same reasons as the noise band.
    pub fn default_equivalence_pct(self) -> f64 {
        self.default_noise_pct()
    }
}

/// How a duration of about `x` ns is shown: (divisor, unit, decimals).
pub fn time_scale(x: f64) -> (f64, &'static str, usize) {
    match x.abs() {
        a if a >= 1e9 => (1e9, "s", 3),
        a if a >= 1e6 => (1e6, "ms", 3),
        a if a >= 1e4 => (1e3, "us", 2),
        _ => (1.0, "ns", 1),
    }
}

/// A run's metric, from its stored parameters (time when absent).
pub fn of_params(params: &serde_json::Value) -> Metric {
    params
        .get("metric")
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_others_say_what_to_give() {
        assert_eq!(Metric::parse("time"), Ok(Metric::Time));
        assert_eq!(Metric::parse("Instructions"), Ok(Metric::Instructions));
        let e = Metric::parse("instrutions").unwrap_err();
        assert!(e.contains("did you mean 'instructions'"), "{e}");
        let e = Metric::parse("cycles").unwrap_err();
        assert!(
            e.contains("cycles are not counted") && e.contains("give time"),
            "{e}"
        );
        let e = Metric::parse("zzz").unwrap_err();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn figures_name_their_unit() {
        assert_eq!(Metric::Time.format(195.04), "195.0 ns");
        assert_eq!(Metric::Time.format(67_871_000.0), "67.871 ms");
        assert_eq!(Metric::Instructions.format(336.13), "336.1 insns");
        assert_eq!(Metric::Instructions.format(12_345.0), "12.35k insns");
        assert_eq!(Metric::Instructions.per_op(), "instructions per operation");
    }

    #[test]
    fn a_run_stored_before_the_metric_measured_time() {
        assert_eq!(of_params(&serde_json::json!({})), Metric::Time);
        assert_eq!(
            of_params(&serde_json::json!({"metric": "instructions"})),
            Metric::Instructions
        );
    }
}
